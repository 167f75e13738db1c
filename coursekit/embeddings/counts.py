"""Type-based word embeddings from counts: vocabulary, co-occurrences → PPMI → SVD (notebook 01, §2–3).

Static word vectors (one vector per word *type*) of distributional semantics ("LSA"):

* :func:`build_vocab` and :func:`encode_sentences` turn token lists into id sentences (word2vec's
  convention: words below ``min_count`` are dropped from the corpus, no special tokens).
* A symmetric co-occurrence matrix ``C[w, c]`` (:func:`cooccurrence_matrix`), re-weighted by positive
  pointwise mutual information (:func:`ppmi`, Church & Hanks 1990; context-distribution smoothing α = 0.75
  from Levy, Goldberg & Dagan 2015) and compressed by a truncated SVD (:func:`svd_vectors`, Deerwester et
  al. 1990).

The predictive alternative, skip-gram with negative sampling, is :mod:`coursekit.embeddings.sgns`; evaluating the
vectors (neighbours, analogies, similarity) and the gensim baseline are :mod:`coursekit.embeddings.word_vectors`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
import torch

from coursekit.text import Vocab
from coursekit.validation import (
    check_choice,
    check_finite,
    check_positive_float,
    check_positive_int,
    check_tensor,
)

__all__ = [
    "build_vocab", "encode_sentences",
    "cooccurrence_matrix", "ppmi", "svd_vectors",
]


# --------------------------------------------------------------------------- vocabulary


def _check_finite_array(a: np.ndarray, name: str) -> None:
    """``check_finite`` for a numpy array (the same message, without a copy into torch)."""
    if a.dtype.kind == "f" and not np.isfinite(a).all():
        n_nan, n_inf = int(np.isnan(a).sum()), int(np.isinf(a).sum())
        raise ValueError(f"{name} must be finite, got {n_nan} NaN and {n_inf} infinite values")


def _check_sentences(sentences, name: str = "sentences") -> None:
    if isinstance(sentences, (str, bytes)) or not isinstance(sentences, Sequence):
        raise TypeError(f"{name} must be a list of token lists, got {type(sentences).__name__}")
    for s in sentences[:5]:
        if isinstance(s, str):
            raise TypeError(f"{name} must be a list of token lists, got a str inside it "
                            "(tokenise each sentence first)")


def build_vocab(sentences: Sequence[Sequence[str]], *, min_count: int = 5, max_size: int | None = None,
                ) -> tuple[Vocab, np.ndarray]:
    """Word types seen ≥ ``min_count`` times, most frequent first, and their counts.

    No special tokens: as in word2vec, rarer words are simply dropped from the corpus.
    Returns ``(vocab, counts)`` with ``counts[i]`` the corpus frequency of ``vocab.itos[i]``.
    """
    _check_sentences(sentences)
    check_positive_int(min_count, "min_count")
    vocab = Vocab.build(sentences, min_freq=min_count, max_size=max_size, specials=())
    if len(vocab) == 0:
        raise ValueError(f"no word occurs {min_count} times or more; lower min_count")
    counts = np.array([vocab.counts[t] for t in vocab.itos], dtype=np.int64)
    return vocab, counts


def encode_sentences(sentences: Sequence[Sequence[str]], vocab: Vocab) -> list[np.ndarray]:
    """Tokens → id arrays, *dropping* out-of-vocabulary words (word2vec's convention)."""
    _check_sentences(sentences)
    if not isinstance(vocab, Vocab):
        raise TypeError(f"vocab must be a coursekit.text.Vocab, got {type(vocab).__name__}")
    stoi = vocab.stoi
    return [np.array([stoi[t] for t in s if t in stoi], dtype=np.int64) for s in sentences]


def _flatten(id_sentences: Sequence[Sequence[int]], vocab_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate id sentences → (ids, sentence index of each id), checking id ranges."""
    if isinstance(id_sentences, (str, np.ndarray, torch.Tensor)) or not isinstance(id_sentences, Sequence):
        raise TypeError("expected a list of id sequences (one per sentence), "
                        f"got {type(id_sentences).__name__}")
    arrays = []
    for i, s in enumerate(id_sentences):
        a = np.asarray(s).reshape(-1)
        if a.size and a.dtype.kind not in "iu":         # floats are refused, never truncated to ids
            raise TypeError(f"id_sentences[{i}] must hold integer word ids, got {a.dtype}")
        arrays.append(a.astype(np.int64))
    ids = np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)
    if ids.size and (ids.min() < 0 or ids.max() >= vocab_size):
        raise ValueError(f"word ids must lie in [0, {vocab_size}), got values in [{ids.min()}, {ids.max()}]")
    sid = np.repeat(np.arange(len(arrays)), [a.size for a in arrays])
    return ids, sid


# --------------------------------------------------------------------------- count-based vectors


def cooccurrence_matrix(id_sentences: Sequence[Sequence[int]], vocab_size: int, *, window: int = 2,
                        weighting: str = "uniform") -> sp.csr_matrix:
    """Symmetric-window co-occurrence counts ``C[w, c]`` (V, V), never across sentence boundaries.

    Every pair of tokens at distance ``1 ≤ d ≤ window`` in the same sentence adds to both ``C[w, c]``
    and ``C[c, w]`` a weight 1 (``weighting="uniform"``) or ``1/d`` (``"harmonic"``, as GloVe does).
    """
    check_positive_int(vocab_size, "vocab_size")
    check_positive_int(window, "window")
    check_choice(weighting, "weighting", ["uniform", "harmonic"])
    ids, sid = _flatten(id_sentences, vocab_size)
    rows, cols, vals = [], [], []
    for d in range(1, window + 1):
        same = sid[:-d] == sid[d:]  # pairs (i, i + d) inside one sentence
        w, c = ids[:-d][same], ids[d:][same]
        weight = 1.0 if weighting == "uniform" else 1.0 / d
        rows += [w, c]
        cols += [c, w]
        vals.append(np.full(2 * w.size, weight))
    if not rows:
        return sp.csr_matrix((vocab_size, vocab_size))
    C = sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(vocab_size, vocab_size))
    return C.tocsr()  # duplicates are summed


def ppmi(C, *, alpha: float = 1.0):
    """Positive pointwise mutual information of a co-occurrence matrix.

    PPMI(w, c) = max(0, log P(w, c) / (P(w) P_α(c))) with P(w, c) = C[w, c] / Σ C,
    P(w) = Σ_c C[w, c] / Σ C and the smoothed context distribution
    P_α(c) = (Σ_w C[w, c])^α / Σ_c' (Σ_w C[w, c'])^α (Levy et al. 2015 use α = 0.75; α = 1 is plain PPMI).
    Cells with C = 0 get 0 (PMI → −∞ there, clipped).

    ``C`` is a dense ``torch.Tensor`` (V_w, V_c) — the result is a tensor — or a ``scipy.sparse``
    matrix, for which a ``csr_matrix`` of the same sparsity pattern is returned.
    """
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or not 0 < alpha <= 1:
        raise ValueError(f"alpha must be a number in (0, 1], got {alpha!r}")
    if not (sp.issparse(C) or isinstance(C, torch.Tensor)):
        raise TypeError(f"C must be a torch.Tensor or a scipy.sparse matrix, got {type(C).__name__}")
    if sp.issparse(C):
        C = sp.csr_matrix(C, dtype=np.float64)
        _check_finite_array(C.data, "C")
        if C.ndim != 2 or (C.data < 0).any():
            raise ValueError("C must be a 2-D matrix of non-negative counts")
        total = C.sum()
        if total <= 0:
            raise ValueError("C has no co-occurrences (all zero)")
        row = np.asarray(C.sum(axis=1)).ravel()
        col = np.asarray(C.sum(axis=0)).ravel() ** alpha
        p_w, p_c = row / total, col / col.sum()
        C = C.tocoo()
        pmi = np.log(C.data / total / (p_w[C.row] * p_c[C.col]))
        out = sp.csr_matrix((np.maximum(pmi, 0.0), (C.row, C.col)), shape=C.shape)
        out.eliminate_zeros()
        return out
    check_tensor(C, "C", ndim=2, floating=True)
    check_finite(C, "C")
    if (C < 0).any():
        raise ValueError("C must hold non-negative counts, found negative entries")
    total = C.sum()
    if total <= 0:
        raise ValueError("C has no co-occurrences (all zero)")
    p_wc = C / total                                  # (V_w, V_c)
    p_w = C.sum(dim=1, keepdim=True) / total          # (V_w, 1)
    col = C.sum(dim=0, keepdim=True) ** alpha
    p_c = col / col.sum()                             # (1, V_c)
    pmi = torch.log(p_wc / (p_w * p_c))               # −inf where C = 0 (nan where a whole row is 0)
    return torch.where(C > 0, pmi.clamp(min=0.0), torch.zeros_like(pmi))


def svd_vectors(M, dim: int, *, power: float = 0.5, seed: int = 0) -> np.ndarray:
    """Truncated SVD word vectors ``W = U_d Σ_d^power`` (LSA; Deerwester et al. 1990).

    ``power = 1`` is the textbook ``U Σ``; Levy et al. (2015) found ``power = 0.5`` (symmetric
    weighting) better on similarity tasks. Dimensions are sorted by decreasing singular value and
    each sign is fixed so that the largest-magnitude entry of every column of U is positive.
    """
    check_positive_int(dim, "dim")
    check_positive_float(power, "power", allow_zero=True)
    if isinstance(M, torch.Tensor):
        M = M.detach().cpu().double().numpy()
    if not (sp.issparse(M) or isinstance(M, np.ndarray)):
        raise TypeError(f"M must be a 2-D matrix (tensor, array or scipy.sparse), got {type(M).__name__}")
    if M.ndim != 2:
        raise ValueError(f"M must be a 2-D matrix, got shape {M.shape}")
    _check_finite_array(M.data if sp.issparse(M) else M, "M")
    if dim >= min(M.shape):
        raise ValueError(f"dim={dim} must be smaller than min(M.shape)={min(M.shape)}")
    from scipy.sparse.linalg import svds

    v0 = np.random.default_rng(seed).uniform(-1, 1, min(M.shape))
    U, s, _ = svds(sp.csr_matrix(M, dtype=np.float64), k=dim, v0=v0)
    order = np.argsort(-s)
    U, s = U[:, order], s[order]
    signs = np.sign(U[np.abs(U).argmax(axis=0), np.arange(dim)])
    return (U * signs) * s**power

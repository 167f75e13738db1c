"""Type-based word embeddings: counts → PPMI → SVD, and skip-gram with negative sampling.

Two families of static word vectors (one vector per word *type*), as in notebook 01:

* **Count-based** (distributional semantics, "LSA"): a symmetric co-occurrence matrix
  ``C[w, c]`` (:func:`cooccurrence_matrix`), re-weighted by positive pointwise mutual information
  (:func:`ppmi`, Church & Hanks 1990; context-distribution smoothing α = 0.75 from Levy, Goldberg &
  Dagan 2015) and compressed by a truncated SVD (:func:`svd_vectors`, Deerwester et al. 1990).
* **Predictive**: word2vec skip-gram with negative sampling (Mikolov et al. 2013, "Distributed
  Representations of Words and Phrases and their Compositionality", eq. 4), with subsampling of
  frequent words and the unigram^0.75 noise distribution (:class:`SkipGramNS`, :func:`train_sgns`).

Evaluation (:class:`WordVectors`): nearest neighbours by cosine, analogies by 3CosAdd
(Mikolov, Yih & Zweig 2013), word similarity by Spearman ρ against human scores (WordSim-353,
Finkelstein et al. 2002), always with the *coverage* (the share of questions in the vocabulary).
:func:`train_gensim_word2vec` trains gensim's Word2Vec on the same tokens as the baseline.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import torch
import torch.nn as nn
import torch.nn.functional as F

from coursekit.checks import (
    check_choice,
    check_finite,
    check_positive_float,
    check_positive_int,
    check_probability,
    check_size,
    check_tensor,
    check_token_ids,
)
from coursekit.text import Vocab

__all__ = [
    "build_vocab", "encode_sentences",
    "cooccurrence_matrix", "ppmi", "svd_vectors",
    "keep_probabilities", "noise_distribution", "skipgram_pairs", "sgns_loss", "SkipGramNS",
    "sgns_sgd_step", "SGNSHistory", "train_sgns",
    "WordVectors", "evaluate_similarity", "evaluate_analogies",
    "train_gensim_word2vec",
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


# --------------------------------------------------------------------------- skip-gram with negative sampling


def _check_counts(counts) -> np.ndarray:
    """Word counts: a 1-D array of finite, non-negative numbers with a positive sum."""
    counts = np.asarray(counts)
    if counts.dtype.kind not in "iuf":
        raise TypeError(f"counts must hold numbers, got {counts.dtype}")
    if counts.ndim != 1:
        raise ValueError(f"counts must be a 1-D array of word counts, got shape {counts.shape}")
    counts = counts.astype(np.float64)
    _check_finite_array(counts, "counts")
    if counts.size and counts.min() < 0:
        raise ValueError(f"counts must hold non-negative word counts, got min {counts.min():g}")
    if not counts.sum() > 0:
        raise ValueError("counts must have a positive sum (at least one word seen)")
    return counts


def keep_probabilities(counts, *, sample: float = 1e-3) -> np.ndarray:
    """Probability of *keeping* each occurrence of a word when subsampling frequent words.

    Mikolov et al. (2013, §2.3) discard a word of relative frequency f with probability
    1 − sqrt(t / f). The released word2vec code (and gensim) use the slightly different
    keep probability (sqrt(f / t) + 1) · t / f, which we follow (clipped to 1) so that our trainer
    and gensim see the same data. ``sample = 0`` disables subsampling.
    """
    counts = _check_counts(counts)
    check_positive_float(sample, "sample", allow_zero=True)
    if sample == 0:
        return np.ones_like(counts)
    f = counts / counts.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        keep = (np.sqrt(f / sample) + 1.0) * sample / f
    return np.where(counts > 0, np.minimum(keep, 1.0), 0.0)


def noise_distribution(counts, *, power: float = 0.75) -> torch.Tensor:
    """Noise distribution for negative samples: P_n(w) ∝ count(w)^0.75 (Mikolov et al. 2013, §2.2)."""
    counts = torch.from_numpy(_check_counts(counts))
    check_positive_float(power, "power", allow_zero=True)
    p = counts**power
    return p / p.sum()


def skipgram_pairs(id_sentences: Sequence[Sequence[int]], vocab_size: int, *, window: int = 5,
                   keep_prob: np.ndarray | None = None, dynamic_window: bool = True,
                   rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
    """All (center, context) pairs of one epoch, vectorised.

    1. Subsample: each token survives with probability ``keep_prob[token]`` (before the windows
       are formed, as in word2vec, so windows effectively widen).
    2. Dynamic window (word2vec): every center draws b ~ U{1, …, window} and pairs with the tokens
       at distance ≤ b on both sides, which weights near contexts more.
    Pairs never cross sentence boundaries. Returns two int64 arrays of equal length.
    """
    check_positive_int(vocab_size, "vocab_size")
    check_positive_int(window, "window")
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), got {type(rng).__name__}")
    rng = rng if rng is not None else np.random.default_rng(0)
    ids, sid = _flatten(id_sentences, vocab_size)
    if keep_prob is not None:
        keep_prob = np.asarray(keep_prob)
        if keep_prob.shape != (vocab_size,):
            raise ValueError(f"keep_prob must have shape ({vocab_size},), got {keep_prob.shape}")
        if not ((keep_prob >= 0) & (keep_prob <= 1)).all():               # NaN fails both tests
            raise ValueError("keep_prob must hold probabilities in [0, 1] (see keep_probabilities)")
        kept = rng.random(ids.size) < keep_prob[ids]
        ids, sid = ids[kept], sid[kept]
    b = rng.integers(1, window + 1, size=ids.size) if dynamic_window else np.full(ids.size, window)
    centers, contexts = [], []
    for d in range(1, window + 1):
        same = sid[:-d] == sid[d:]
        left, right = ids[:-d], ids[d:]
        fwd = same & (b[:-d] >= d)          # center i, context i + d
        bwd = same & (b[d:] >= d)           # center i + d, context i
        centers += [left[fwd], right[bwd]]
        contexts += [right[fwd], left[bwd]]
    return np.concatenate(centers), np.concatenate(contexts)


def sgns_loss(v_c: torch.Tensor, u_o: torch.Tensor, u_neg: torch.Tensor) -> torch.Tensor:
    """Negative-sampling loss per pair (Mikolov et al. 2013, eq. 4, negated):

        −log σ(u_o · v_c) − Σ_{k=1}^{K} log σ(−u_k · v_c)

    v_c: (B, d) center ("input") vectors; u_o: (B, d) context ("output") vectors;
    u_neg: (B, K, d) output vectors of the K noise words. Returns (B,).
    ``F.logsigmoid`` is the numerically stable log σ.
    """
    check_tensor(v_c, "v_c", ndim=2, floating=True)
    check_tensor(u_o, "u_o", ndim=2, floating=True)
    check_tensor(u_neg, "u_neg", ndim=3, floating=True)
    if u_o.shape != v_c.shape or u_neg.shape[0] != v_c.shape[0] or u_neg.shape[2] != v_c.shape[1]:
        raise ValueError(f"expected v_c (B, d), u_o (B, d), u_neg (B, K, d); got {tuple(v_c.shape)}, "
                         f"{tuple(u_o.shape)}, {tuple(u_neg.shape)}")
    pos = F.logsigmoid((u_o * v_c).sum(-1))                                    # (B,)
    neg = F.logsigmoid(-(u_neg * v_c.unsqueeze(1)).sum(-1))                    # (B, K)
    loss = -(pos + neg.sum(-1))
    if not bool(torch.isfinite(loss).all()):         # checking the (B,) result is cheaper than the inputs
        for name, t in (("v_c", v_c), ("u_o", u_o), ("u_neg", u_neg)):
            check_finite(t, name)
        raise ValueError("the SGNS loss overflowed: the scores u · v are too large to be finite")
    return loss


class SkipGramNS(nn.Module):
    """Skip-gram with negative sampling: two embedding tables, ``in_embed`` (V, d) for centers (the
    word vectors we keep) and ``out_embed`` (V, d) for contexts.

    Initialised like word2vec: ``in_embed`` ~ U(−0.5/d, 0.5/d), ``out_embed`` = 0. ``sparse=True``
    gives sparse gradients, so an optimiser step touches only the rows in the batch.
    """

    def __init__(self, vocab_size: int, dim: int, *, sparse: bool = True):
        super().__init__()
        check_positive_int(vocab_size, "vocab_size")
        check_positive_int(dim, "dim")
        self.vocab_size, self.dim = vocab_size, dim
        self.in_embed = nn.Embedding(vocab_size, dim, sparse=sparse)
        self.out_embed = nn.Embedding(vocab_size, dim, sparse=sparse)
        nn.init.uniform_(self.in_embed.weight, -0.5 / dim, 0.5 / dim)
        nn.init.zeros_(self.out_embed.weight)

    def forward(self, center: torch.Tensor, context: torch.Tensor, negatives: torch.Tensor) -> torch.Tensor:
        """center (B,), context (B,), negatives (B, K) word ids → per-pair loss (B,)."""
        check_token_ids(center, "center", self.vocab_size)
        check_token_ids(context, "context", self.vocab_size)
        check_token_ids(negatives, "negatives", self.vocab_size)
        if center.dim() != 1 or context.shape != center.shape or negatives.dim() != 2 \
                or negatives.shape[0] != center.shape[0]:
            raise ValueError(f"expected center (B,), context (B,), negatives (B, K); got "
                             f"{tuple(center.shape)}, {tuple(context.shape)}, {tuple(negatives.shape)}")
        return sgns_loss(self.in_embed(center), self.out_embed(context), self.out_embed(negatives))

    def vectors(self) -> np.ndarray:
        """The word vectors (the center/input embeddings), as a float32 array (V, d)."""
        return self.in_embed.weight.detach().cpu().float().numpy()


@dataclass
class SGNSHistory:
    """What :func:`train_sgns` measured: mean loss per logged chunk, pairs seen, seconds."""

    pairs_seen: list[int] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)
    epochs: int = 0
    seconds: float = 0.0

    @property
    def pairs_per_second(self) -> float:
        return (self.pairs_seen[-1] / self.seconds) if self.pairs_seen and self.seconds else 0.0


@torch.no_grad()
def sgns_sgd_step(model: SkipGramNS, center: torch.Tensor, targets: torch.Tensor, lr: float) -> float:
    """One SGD step on the *summed* SGNS loss of a batch, with the gradient written out by hand.

    center (B,) ids; targets (B, 1 + K) ids: the true context first, then K noise words.
    With s_j = u_j · v_c and label y_j (1 for the context, 0 for noise), the loss of eq. 4 is
    −Σ_j log σ((2y_j − 1) s_j), so ∂L/∂s_j = σ(s_j) − y_j, and
    ∂L/∂v_c = Σ_j (σ(s_j) − y_j) u_j,   ∂L/∂u_j = (σ(s_j) − y_j) v_c.
    Rows that occur several times in the batch receive the sum of their gradients (``index_add_``):
    exactly ``loss.sum().backward()`` followed by ``torch.optim.SGD`` (tested), without autograd's and
    sparse tensors' overhead. Returns the summed loss before the update.
    """
    if not isinstance(model, SkipGramNS):
        raise TypeError(f"model must be a SkipGramNS, got {type(model).__name__}")
    check_token_ids(center, "center", model.vocab_size)
    check_tensor(center, "center", ndim=1)
    check_token_ids(targets, "targets", model.vocab_size)
    check_tensor(targets, "targets", ndim=2)
    check_size(targets, "targets", 0, center.shape[0], "one row per center")
    check_positive_float(lr, "lr")
    W_in, W_out = model.in_embed.weight, model.out_embed.weight
    B, K1 = targets.shape
    flat = targets.reshape(-1)
    v = W_in.index_select(0, center)                                  # (B, d)
    u = W_out.index_select(0, flat).view(B, K1, -1)                   # (B, 1+K, d)
    s = (u * v.unsqueeze(1)).sum(-1)                                  # (B, 1+K) scores
    sign = torch.ones_like(s)
    sign[:, 1:] = -1.0
    loss = -F.logsigmoid(sign * s).sum()
    g = torch.sigmoid(s)
    g[:, 0] -= 1.0                                                    # σ(s) − y
    grad_v = (g.unsqueeze(-1) * u).sum(1)                             # (B, d)
    grad_u = g.unsqueeze(-1) * v.unsqueeze(1)                         # (B, 1+K, d)
    W_in.index_add_(0, center, grad_v, alpha=-lr)
    W_out.index_add_(0, flat, grad_u.view(B * K1, -1), alpha=-lr)
    return float(loss)


def train_sgns(id_sentences: Sequence[Sequence[int]], counts, *, dim: int = 100, window: int = 5,
               negative: int = 5, epochs: int = 5, lr: float = 0.025, min_lr: float = 1e-4,
               batch_size: int = 1024, sample: float = 1e-3, seed: int = 0, device=None,
               log_every: int = 100, progress: bool = False, cpu_threads: int | None = 1,
               ) -> tuple[SkipGramNS, SGNSHistory]:
    """Train :class:`SkipGramNS` on a corpus of id sentences, word2vec-style but in batches.

    Each epoch draws a fresh subsample and dynamic windows (:func:`skipgram_pairs`), shuffles the
    pairs and feeds them in mini-batches of ``batch_size`` with ``negative`` noise words per pair
    from :func:`noise_distribution`. Plain SGD on the *summed* batch loss (:func:`sgns_sgd_step`) with a
    learning rate decaying linearly from ``lr`` to ``lr · min_lr`` — per pair, the same update as
    word2vec's (Hogwild) SGD, only applied to a batch at once.

    ``cpu_threads``: on a CPU the per-batch kernels are small, and intra-op threads cost more than
    they give (on a busy shared machine, 10× more), so training runs on 1 thread by default; the
    previous setting is restored afterwards. ``None`` leaves torch's setting alone.
    """
    counts = _check_counts(counts)
    V = counts.shape[0]
    for name, value in (("dim", dim), ("window", window), ("negative", negative), ("epochs", epochs),
                        ("batch_size", batch_size), ("log_every", log_every)):
        check_positive_int(value, name)
    check_positive_float(lr, "lr")
    check_probability(min_lr, "min_lr")
    check_positive_float(sample, "sample", allow_zero=True)
    if cpu_threads is not None:
        check_positive_int(cpu_threads, "cpu_threads")
    device = torch.device(device) if device is not None else torch.device("cpu")
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    threads = torch.get_num_threads()
    if cpu_threads is not None and device.type == "cpu":
        torch.set_num_threads(cpu_threads)
    try:
        return _train_sgns(id_sentences, counts, V, dim=dim, window=window, negative=negative, epochs=epochs,
                           lr=lr, min_lr=min_lr, batch_size=batch_size, sample=sample, rng=rng, gen=gen,
                           device=device, log_every=log_every, progress=progress)
    finally:
        torch.set_num_threads(threads)


def _train_sgns(id_sentences, counts, V, *, dim, window, negative, epochs, lr, min_lr, batch_size, sample,
                rng, gen, device, log_every, progress):
    model = SkipGramNS(V, dim).to(device)                       # initialised on CPU, then moved
    keep = keep_probabilities(counts, sample=sample)
    noise = noise_distribution(counts).float()
    history = SGNSHistory()
    start = time.perf_counter()
    seen, total, running, n_run, step = 0, None, 0.0, 0, 0
    for epoch in range(epochs):
        centers, contexts = skipgram_pairs(id_sentences, V, window=window, keep_prob=keep, rng=rng)
        if total is None:  # the linear decay needs the number of pairs: estimate it from epoch 1
            if centers.size == 0:
                raise ValueError(f"the corpus gives no (center, context) pairs: every sentence has fewer than 2 "
                                 f"words left after subsampling (sample={sample}); give longer sentences")
            total = centers.size * epochs
        perm = rng.permutation(centers.size)
        centers = torch.from_numpy(centers[perm])
        contexts = torch.from_numpy(contexts[perm])
        # word2vec draws noise words from a big unigram^0.75 table; multinomial with replacement is the same
        negs = torch.multinomial(noise, centers.numel() * negative, replacement=True, generator=gen)
        targets = torch.cat([contexts.unsqueeze(1), negs.view(-1, negative)], dim=1)   # (N, 1 + K)
        batches = range(math.ceil(centers.numel() / batch_size))
        if progress:
            from tqdm.auto import tqdm
            batches = tqdm(batches, desc=f"SGNS epoch {epoch + 1}/{epochs}", leave=False)
        for b in batches:
            sl = slice(b * batch_size, (b + 1) * batch_size)
            c, t = centers[sl].to(device), targets[sl].to(device)
            step_lr = lr * max(1.0 - min(seen / total, 1.0), min_lr)
            loss_sum = sgns_sgd_step(model, c, t, step_lr)
            seen += c.numel()
            running += loss_sum
            n_run += c.numel()
            step += 1
            if step % log_every == 0:
                history.pairs_seen.append(seen)
                history.loss.append(running / n_run)
                running, n_run = 0.0, 0
    if n_run:
        history.pairs_seen.append(seen)
        history.loss.append(running / n_run)
    history.epochs = epochs
    history.seconds = time.perf_counter() - start
    return model, history


# --------------------------------------------------------------------------- evaluation


class WordVectors:
    """Word vectors with a vocabulary: cosine neighbours, 3CosAdd analogies, similarity scores.

    ``itos`` lists the words; ``vectors`` is (V, d). Lookups are case-sensitive; the evaluation
    functions lower-case the questions by default because our corpora are lower-cased.
    """

    def __init__(self, itos: Sequence[str], vectors):
        if isinstance(itos, str) or not isinstance(itos, Sequence):
            raise TypeError(f"itos must be a list of words, got {type(itos).__name__}")
        for w in itos:
            if not isinstance(w, str):
                raise TypeError(f"itos must hold str words, got {w!r} ({type(w).__name__})")
        if isinstance(vectors, torch.Tensor):
            vectors = vectors.detach().cpu().numpy()
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(itos):
            raise ValueError(f"vectors must have shape (len(itos)={len(itos)}, d), got {vectors.shape}")
        _check_finite_array(vectors, "vectors")
        if len(set(itos)) != len(itos):
            raise ValueError("itos must not contain duplicate words")
        self.itos = list(itos)
        self.stoi = {w: i for i, w in enumerate(self.itos)}
        self.vectors = vectors
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        self.unit = vectors / np.maximum(norms, 1e-12)       # (V, d), rows of length 1

    def __len__(self) -> int:
        return len(self.itos)

    @property
    def dim(self) -> int:
        return self.vectors.shape[1]

    def __contains__(self, word: str) -> bool:
        return word in self.stoi

    def index(self, word: str) -> int:
        if word not in self.stoi:
            raise KeyError(f"{word!r} is out of vocabulary (OOV): these vectors know {len(self)} words")
        return self.stoi[word]

    def __getitem__(self, word: str) -> np.ndarray:
        return self.vectors[self.index(word)]

    def similarity(self, w1: str, w2: str) -> float:
        """Cosine similarity of two in-vocabulary words."""
        return float(self.unit[self.index(w1)] @ self.unit[self.index(w2)])

    def nearest(self, query, k: int = 10, *, exclude: Iterable[str] = ()) -> list[tuple[str, float]]:
        """The ``k`` words with the highest cosine to ``query`` (a word — itself excluded — or a vector).

        ``k`` may not exceed the number of candidate words (the vocabulary less the excluded words).
        """
        check_positive_int(k, "k")
        if isinstance(exclude, str):
            raise TypeError(f"exclude must be a list of words, got str ({exclude!r}; write [{exclude!r}])")
        excluded = {self.index(w) for w in exclude}
        if isinstance(query, str):
            excluded.add(self.index(query))
            q = self.unit[self.index(query)]
        else:
            q = np.asarray(query, dtype=np.float32).reshape(-1)
            if q.shape[0] != self.dim:
                raise ValueError(f"query vector must have {self.dim} dimensions, got {q.shape[0]}")
            if not np.isfinite(q).all():
                raise ValueError("query vector must be finite, got NaN or infinite values")
            q = q / max(np.linalg.norm(q), 1e-12)
        if k > len(self) - len(excluded):
            raise ValueError(f"k={k} is more than the {len(self) - len(excluded)} candidate words "
                             f"({len(self)} words, {len(excluded)} excluded)")
        sims = self.unit @ q                                  # (V,)
        sims[list(excluded)] = -np.inf
        top = np.argsort(-sims)[:k]
        return [(self.itos[i], float(sims[i])) for i in top]

    def analogy(self, a: str, b: str, c: str, k: int = 1) -> list[tuple[str, float]]:
        """3CosAdd: a is to b as c is to ? → argmax_d cos(d, b − a + c), excluding a, b, c."""
        ua, ub, uc = (self.unit[self.index(w)] for w in (a, b, c))
        return self.nearest(ub - ua + uc, k, exclude=(a, b, c))

    def save(self, path) -> None:
        """Write ``<path>.safetensors`` (float16 vectors) and ``<path>.vocab.json`` (the words)."""
        import json
        from pathlib import Path

        from safetensors.torch import save_file

        from coursekit.train import stamp_content_hash

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        vocab = json.dumps(self.itos, ensure_ascii=False)
        save_file({"vectors": torch.from_numpy(self.vectors).half()}, str(path.with_suffix(".safetensors")),
                  metadata={"words": str(len(self)), "dim": str(self.dim)})
        stamp_content_hash(path.with_suffix(".safetensors"), vocab_sha256=_sha256_text(vocab))
        path.with_suffix(".vocab.json").write_text(vocab)

    @classmethod
    def load(cls, path) -> WordVectors:
        """Read what :meth:`save` wrote; a missing file is a ``FileNotFoundError`` naming it."""
        import json
        from pathlib import Path

        from safetensors.torch import load_file

        path = Path(path)
        st, vocab = path.with_suffix(".safetensors"), path.with_suffix(".vocab.json")
        for f in (st, vocab):
            if not f.exists():
                raise FileNotFoundError(f"no saved word vectors at {f} (notebook 01 writes them)")
        from coursekit.train import verify_checkpoint

        meta = verify_checkpoint(st)
        text = vocab.read_text()
        if "vocab_sha256" in meta and meta["vocab_sha256"] != _sha256_text(text):
            raise ValueError(f"{vocab} does not belong to {st} (its hash differs from the one the vectors recorded)")
        tensors = load_file(str(st))
        if "vectors" not in tensors:
            raise ValueError(f"{st} holds no 'vectors' tensor: not word vectors saved by WordVectors.save "
                             f"(it holds {sorted(tensors)})")
        try:
            itos = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{vocab} is not a JSON list of words ({exc}); re-run notebook 01") from None
        return cls(itos, tensors["vectors"].float())


def _sha256_text(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _check_word_vectors(wv) -> None:
    if not isinstance(wv, WordVectors):
        raise TypeError(f"wv must be a WordVectors, got {type(wv).__name__}")


def _check_question(item, i: int, size: int, name: str, shape: str) -> tuple:
    """One evaluation item: a tuple of ``size`` entries whose words (all but a similarity score) are str."""
    item = tuple(item) if not isinstance(item, str) else (item,)
    if len(item) != size:
        raise ValueError(f"{name} must yield {shape}, got {item!r} at position {i}")
    n_words = 2 if size == 3 else size
    for w in item[:n_words]:
        if not isinstance(w, str):
            raise TypeError(f"{name} must hold words (str), got {w!r} ({type(w).__name__}) at position {i}")
    return item


def evaluate_similarity(wv: WordVectors, pairs: Iterable[tuple[str, str, float]], *,
                        lowercase: bool = True) -> dict[str, float]:
    """Spearman ρ between cosine similarities and human scores over the in-vocabulary pairs.

    ``pairs`` yields ``(word1, word2, score)``. Returns ``spearman``, ``n`` (pairs used),
    ``total`` and ``coverage = n / total``. Pairs with an OOV word are skipped, never guessed; with fewer
    than 3 pairs covered, ``spearman`` is NaN (a rank correlation needs 3 points) — read it with ``n``.
    """
    from scipy.stats import spearmanr

    _check_word_vectors(wv)
    model, human, total = [], [], 0
    for i, pair in enumerate(pairs):
        w1, w2, score = _check_question(pair, i, 3, "pairs", "(word1, word2, score)")
        if isinstance(score, bool) or not isinstance(score, numbers.Real) or not math.isfinite(score):
            error = ValueError if isinstance(score, numbers.Real) else TypeError
            raise error(f"pair {i} {tuple(pair)!r} has a score that is not a finite number")
        total += 1
        if lowercase:
            w1, w2 = w1.lower(), w2.lower()
        if w1 in wv and w2 in wv:
            model.append(wv.similarity(w1, w2))
            human.append(float(score))
    if total == 0:
        raise ValueError("no word pairs given")
    rho = float(spearmanr(model, human).statistic) if len(model) >= 3 else float("nan")
    return {"spearman": rho, "n": len(model), "total": total, "coverage": len(model) / total}


def evaluate_analogies(wv: WordVectors, questions: Iterable[tuple[str, str, str, str]], *,
                       lowercase: bool = True, batch_size: int = 512) -> dict[str, float]:
    """3CosAdd accuracy over the questions whose four words are all in the vocabulary.

    ``questions`` yields ``(a, b, c, d)`` meaning a : b :: c : d. The prediction is
    argmax_w cos(w, b − a + c) with a, b, c excluded (as word2vec's ``compute-accuracy`` does).
    Returns ``accuracy``, ``correct``, ``n`` (questions answered), ``total``, ``coverage``;
    ``accuracy`` is NaN when no question is covered (``n == 0``).
    """
    _check_word_vectors(wv)
    check_positive_int(batch_size, "batch_size")
    idx, total = [], 0
    for i, q in enumerate(questions):
        q = _check_question(q, i, 4, "questions", "(a, b, c, d)")
        total += 1
        words = [w.lower() for w in q] if lowercase else list(q)
        if all(w in wv for w in words):
            idx.append([wv.stoi[w] for w in words])
    if total == 0:
        raise ValueError("no analogy questions given")
    correct = 0
    idx = np.array(idx, dtype=np.int64).reshape(-1, 4)
    for start in range(0, len(idx), batch_size):
        block = idx[start:start + batch_size]                                       # (Q, 4)
        a, b, c, d = (block[:, j] for j in range(4))
        target = wv.unit[b] - wv.unit[a] + wv.unit[c]                               # (Q, d)
        sims = target @ wv.unit.T                                                   # (Q, V)
        rows = np.arange(len(block))
        for j in (a, b, c):
            sims[rows, j] = -np.inf
        correct += int((sims.argmax(axis=1) == d).sum())
    n = len(idx)
    return {"accuracy": correct / n if n else float("nan"), "correct": correct, "n": n, "total": total,
            "coverage": n / total}


# --------------------------------------------------------------------------- gensim baseline


def train_gensim_word2vec(sentences: Sequence[Sequence[str]], *, dim: int = 100, window: int = 5,
                          negative: int = 5, epochs: int = 5, min_count: int = 5, sample: float = 1e-3,
                          lr: float = 0.025, seed: int = 0, workers: int = 1) -> WordVectors:
    """gensim's skip-gram with negative sampling (Řehůřek & Sojka 2010) on the same tokens: the baseline.

    Same hyper-parameters as :func:`train_sgns` (gensim's defaults: α = 0.025 decaying to 1e-4,
    sample = 1e-3, 5 noise words, unigram^0.75). ``workers=1`` keeps it reproducible.
    """
    from collections import Counter

    _check_sentences(sentences)
    for name, value in (("dim", dim), ("window", window), ("negative", negative), ("epochs", epochs),
                        ("min_count", min_count), ("workers", workers)):
        check_positive_int(value, name)
    check_positive_float(lr, "lr")
    check_positive_float(sample, "sample", allow_zero=True)
    counts = Counter(t for s in sentences for t in s)
    if not any(c >= min_count for c in counts.values()):
        raise ValueError(f"no word occurs {min_count} times or more; lower min_count")
    from gensim.models import Word2Vec

    model = Word2Vec(sentences=[list(s) for s in sentences], vector_size=dim, window=window, min_count=min_count,
                     sg=1, hs=0, negative=negative, ns_exponent=0.75, sample=sample, alpha=lr,
                     min_alpha=lr * 1e-4, epochs=epochs, seed=seed, workers=workers)
    kv = model.wv
    return WordVectors(list(kv.index_to_key), kv.vectors)

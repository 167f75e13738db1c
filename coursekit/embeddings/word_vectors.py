"""Evaluating static word vectors, and gensim's word2vec as the baseline (notebook 01, §5, 6 and 8).

:class:`WordVectors` holds a vocabulary and its vectors: nearest neighbours by cosine, analogies by 3CosAdd
(Mikolov, Yih & Zweig 2013, :func:`evaluate_analogies`), word similarity by Spearman ρ against human scores
(WordSim-353, Finkelstein et al. 2002, :func:`evaluate_similarity`), always with the *coverage* (the share
of questions in the vocabulary); it saves to and loads from safetensors (notebook 02 reads notebook 01's).
:func:`train_gensim_word2vec` trains gensim's Word2Vec (Řehůřek & Sojka 2010) on the same tokens as
:func:`coursekit.embeddings.sgns.train_sgns`, as the baseline.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence

import numpy as np
import torch

from coursekit.embeddings.counts import _check_finite_array, _check_sentences
from coursekit.training.loop import stamp_content_hash, verify_checkpoint
from coursekit.validation import check_positive_float, check_positive_int

__all__ = ["WordVectors", "evaluate_similarity", "evaluate_analogies", "train_gensim_word2vec"]


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

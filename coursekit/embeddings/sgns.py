"""Skip-gram with negative sampling (SGNS): word2vec's predictive word vectors (notebook 01, §4).

Mikolov et al. 2013, "Distributed Representations of Words and Phrases and their Compositionality":
the per-pair loss of eq. 4 (:func:`sgns_loss`), subsampling of frequent words (§2.3,
:func:`keep_probabilities`), the unigram^0.75 noise distribution (§2.2, :func:`noise_distribution`),
dynamic windows (:func:`skipgram_pairs`), the two-table model (:class:`SkipGramNS`) and a batched SGD
trainer with a hand-written gradient (:func:`sgns_sgd_step`, :func:`train_sgns`). The vocabulary and id
sentences come from :mod:`coursekit.embeddings.counts`; :mod:`coursekit.embeddings.word_vectors` evaluates the result.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from coursekit.embeddings.counts import _check_finite_array, _flatten
from coursekit.validation import (
    check_finite,
    check_positive_float,
    check_positive_int,
    check_probability,
    check_size,
    check_tensor,
    check_token_ids,
)

__all__ = [
    "keep_probabilities", "noise_distribution", "skipgram_pairs", "sgns_loss", "SkipGramNS",
    "sgns_sgd_step", "SGNSHistory", "train_sgns",
]


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

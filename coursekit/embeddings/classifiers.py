"""Neural sentence classifiers over word embeddings (notebook 02).

From the simplest to the most expressive, each maps padded token ids ``(B, T)`` and a padding mask
``(B, T)`` (True at real tokens) to class logits ``(B, C)``:

* :class:`BOW` — every word has one score per class; the scores are summed (a linear bag of words).
* :class:`CBOW` — sum or average of d-dimensional word embeddings, then a linear layer.
* :class:`DAN` — Deep CBOW / Deep Averaging Network (Iyyer et al. 2015, eq. 1–3): average the
  embeddings, then an MLP, whose hidden layers learn *combination features*; word dropout (§3.2).
* :class:`KimCNN` — a 1-D convolution over words with several filter widths (n-gram detectors),
  max-over-time pooling and dropout (Kim 2014, eq. 1–4).

Padding never changes an output: every pooling is masked (tested). :func:`init_embeddings` copies
pretrained word vectors (notebook 01's SGNS) into a model's embedding table.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn as nn

from coursekit.validation import (
    check_bool_mask,
    check_choice,
    check_finite,
    check_int_sequence,
    check_positive_int,
    check_probability,
    check_tensor,
    check_token_ids,
)

__all__ = ["masked_mean", "masked_max", "word_dropout", "BOW", "CBOW", "DAN", "KimCNN",
           "init_embeddings", "classifier"]


# --------------------------------------------------------------------------- masked pooling


def _check_batch(ids: torch.Tensor, mask: torch.Tensor, vocab_size: int) -> None:
    check_token_ids(ids, "ids", vocab_size)
    check_tensor(ids, "ids", ndim=2)
    check_tensor(mask, "mask", ndim=2, dtype=torch.bool)
    if mask.shape != ids.shape:
        raise ValueError(f"mask must have the shape of ids {tuple(ids.shape)}, got {tuple(mask.shape)}")
    if ids.shape[0] and not mask.any(dim=1).all():
        empty = torch.nonzero(~mask.any(dim=1)).flatten().tolist()
        raise ValueError(f"every sentence needs at least one token; rows {empty[:5]} are all padding")


def _check_pooling(x: torch.Tensor, mask: torch.Tensor) -> None:
    check_tensor(x, "x", ndim=3, floating=True)
    check_bool_mask(mask, "mask", x.shape[:2])


def _check_pad_id(pad_id: int, vocab_size: int) -> None:
    if isinstance(pad_id, bool) or not isinstance(pad_id, int):
        raise TypeError(f"pad_id must be an int, got {type(pad_id).__name__}")
    if not 0 <= pad_id < vocab_size:
        raise ValueError(f"pad_id must lie in [0, {vocab_size}), got {pad_id}")


def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Average of ``x`` (B, T, d) over the real positions of ``mask`` (B, T) → (B, d).

    A row without any real position averages nothing and gives zeros.
    """
    _check_pooling(x, mask)
    m = mask.unsqueeze(-1).to(x.dtype)                                 # (B, T, 1)
    return (x * m).sum(1) / m.sum(1).clamp(min=1.0)


def masked_max(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Max over time of ``x`` (B, T, d) at the real positions of ``mask`` (B, T) → (B, d).

    Padding is filled with −∞ before the max, so it can never win (Kim 2014's max-over-time pooling).
    Every row needs at least one real position (its max would be −∞).
    """
    _check_pooling(x, mask)
    empty = ~mask.any(dim=1)
    if empty.any():
        rows = torch.nonzero(empty).flatten().tolist()
        raise ValueError(f"mask rows {rows[:5]} have no real position: their max would be -inf")
    return x.masked_fill(~mask.unsqueeze(-1), float("-inf")).max(dim=1).values


def word_dropout(mask: torch.Tensor, p: float, generator: torch.Generator | None = None) -> torch.Tensor:
    """Drop each real token with probability ``p`` (Iyyer et al. 2015, §3.2: word dropout).

    Returns a new mask (B, T). A sentence that would lose every token keeps its original mask.
    """
    check_bool_mask(mask, "mask")
    check_tensor(mask, "mask", ndim=2)
    check_probability(p, "p", inclusive_high=False)
    if p == 0.0:
        return mask
    keep = torch.rand(mask.shape, generator=generator, device="cpu").to(mask.device) >= p
    new = mask & keep
    emptied = ~new.any(dim=1, keepdim=True)                              # (B, 1)
    return torch.where(emptied, mask, new)


# --------------------------------------------------------------------------- models


class BOW(nn.Module):
    """Bag of words: logits = Σ_t score(w_t) + b, with one learned score per word and class."""

    def __init__(self, vocab_size: int, n_classes: int = 2, *, pad_id: int = 0):
        super().__init__()
        check_positive_int(vocab_size, "vocab_size")
        check_positive_int(n_classes, "n_classes")
        _check_pad_id(pad_id, vocab_size)
        self.vocab_size = vocab_size
        self.embed = nn.Embedding(vocab_size, n_classes, padding_idx=pad_id)   # (V, C) word → class scores
        nn.init.zeros_(self.embed.weight)
        self.bias = nn.Parameter(torch.zeros(n_classes))

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        _check_batch(ids, mask, self.vocab_size)
        scores = self.embed(ids) * mask.unsqueeze(-1)                   # (B, T, C)
        return scores.sum(1) + self.bias                                # (B, C)


class CBOW(nn.Module):
    """Continuous bag of words: h = Σ_t or mean_t e(w_t), logits = W h + b."""

    def __init__(self, vocab_size: int, embed_dim: int = 100, n_classes: int = 2, *, pooling: str = "mean",
                 pad_id: int = 0):
        super().__init__()
        check_positive_int(vocab_size, "vocab_size")
        check_positive_int(embed_dim, "embed_dim")
        check_positive_int(n_classes, "n_classes")
        check_choice(pooling, "pooling", ["mean", "sum"])
        _check_pad_id(pad_id, vocab_size)
        self.vocab_size, self.pooling = vocab_size, pooling
        self.embed = nn.Embedding(vocab_size, embed_dim, padding_idx=pad_id)
        self.out = nn.Linear(embed_dim, n_classes)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        _check_batch(ids, mask, self.vocab_size)
        e = self.embed(ids)                                             # (B, T, d)
        h = masked_mean(e, mask) if self.pooling == "mean" else (e * mask.unsqueeze(-1)).sum(1)   # (B, d)
        return self.out(h)                                              # (B, C)


class DAN(nn.Module):
    """Deep Averaging Network / Deep CBOW (Iyyer et al. 2015).

    z_0 = mean_t e(w_t) over the tokens that survive word dropout (eq. 1, §3.2);
    z_i = g(W_i z_{i−1} + b_i) for i = 1…n_layers (eq. 2, g = ReLU here, tanh in the paper);
    logits = W_s z_n + b_s (eq. 3). Dropout before every layer.
    """

    def __init__(self, vocab_size: int, embed_dim: int = 100, n_classes: int = 2, *, hidden: int = 100,
                 n_layers: int = 2, dropout: float = 0.2, word_dropout: float = 0.3, activation: str = "relu",
                 pad_id: int = 0):
        super().__init__()
        check_positive_int(vocab_size, "vocab_size")
        check_positive_int(embed_dim, "embed_dim")
        check_positive_int(n_classes, "n_classes")
        check_positive_int(hidden, "hidden")
        check_positive_int(n_layers, "n_layers")
        check_probability(dropout, "dropout", inclusive_high=False)
        check_probability(word_dropout, "word_dropout", inclusive_high=False)
        acts = {"relu": nn.ReLU, "tanh": nn.Tanh}
        check_choice(activation, "activation", sorted(acts))
        _check_pad_id(pad_id, vocab_size)
        self.vocab_size, self.word_dropout = vocab_size, word_dropout
        self.embed = nn.Embedding(vocab_size, embed_dim, padding_idx=pad_id)
        layers: list[nn.Module] = []
        width = embed_dim
        for _ in range(n_layers):
            layers += [nn.Dropout(dropout), nn.Linear(width, hidden), acts[activation]()]
            width = hidden
        self.mlp = nn.Sequential(*layers)
        self.out = nn.Sequential(nn.Dropout(dropout), nn.Linear(width, n_classes))

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        _check_batch(ids, mask, self.vocab_size)
        if self.training:
            mask = word_dropout(mask, self.word_dropout)
        z0 = masked_mean(self.embed(ids), mask)                         # (B, d)
        return self.out(self.mlp(z0))                                   # (B, C)


class KimCNN(nn.Module):
    """1-D CNN over words (Kim 2014).

    For each width h, ``n_filters`` filters slide over the embedded sentence:
    c_i = ReLU(w · x_{i:i+h−1} + b) (eq. 2), then ĉ = max_i c_i (max-over-time pooling, eq. 3);
    the pooled features of all widths are concatenated, dropped out and fed to a linear layer.
    We use the *wide* convolution (zero padding h−1 on both sides) so that a sentence shorter than h
    still yields features, and mask the positions that lie entirely in the padding.
    """

    def __init__(self, vocab_size: int, embed_dim: int = 100, n_classes: int = 2, *,
                 widths: Sequence[int] = (3, 4, 5), n_filters: int = 100, dropout: float = 0.5, pad_id: int = 0):
        super().__init__()
        check_positive_int(vocab_size, "vocab_size")
        check_positive_int(embed_dim, "embed_dim")
        check_positive_int(n_classes, "n_classes")
        check_positive_int(n_filters, "n_filters")
        widths = check_int_sequence(widths, "widths")
        if not widths:
            raise ValueError("widths must not be empty: give at least one filter width, e.g. (3, 4, 5)")
        if min(widths) < 1:
            raise ValueError(f"widths must be positive, got {tuple(widths)}")
        check_probability(dropout, "dropout", inclusive_high=False)
        _check_pad_id(pad_id, vocab_size)
        self.vocab_size, self.widths = vocab_size, tuple(widths)
        self.embed = nn.Embedding(vocab_size, embed_dim, padding_idx=pad_id)
        self.convs = nn.ModuleList(nn.Conv1d(embed_dim, n_filters, h, padding=h - 1) for h in self.widths)
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(n_filters * len(self.widths), n_classes)

    def features(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The max-pooled n-gram features (B, n_filters · len(widths)) before dropout."""
        _check_batch(ids, mask, self.vocab_size)
        x = (self.embed(ids) * mask.unsqueeze(-1)).transpose(1, 2)      # (B, d, T), padding is exactly 0
        lengths = mask.sum(1)                                           # (B,)
        pooled = []
        for h, conv in zip(self.widths, self.convs):
            c = torch.relu(conv(x)).transpose(1, 2)                     # (B, T + h − 1, F)
            # output i covers inputs i−h+1 … i: it touches a real token iff i < length + h − 1
            valid = torch.arange(c.shape[1], device=ids.device)[None, :] < (lengths[:, None] + h - 1)
            pooled.append(masked_max(c, valid))                         # (B, F)
        return torch.cat(pooled, dim=1)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.out(self.dropout(self.features(ids, mask)))         # (B, C)


# --------------------------------------------------------------------------- construction helpers


def init_embeddings(embedding: nn.Embedding, itos: Sequence[str], word_vectors, *, freeze: bool = False,
                    match_scale: bool = True, seed: int = 0) -> float:
    """Copy pretrained vectors into ``embedding`` for every word of ``itos`` that they know.

    ``word_vectors`` is a :class:`coursekit.embeddings.word_vectors.WordVectors` (or anything with ``stoi`` and
    ``vectors``) of the same dimension. With ``match_scale`` the words they do not know are
    re-initialised from N(0, σ²), σ the standard deviation of the pretrained vectors — a normal variant of
    Kim (2014, §3.1), who draws them from U[−a, a] with a chosen to give the same variance — so that random
    rows (``nn.Embedding``'s N(0, 1)) do not dwarf the pretrained ones in an average. The padding row stays
    zero. Returns the coverage: the share of ``itos`` found.
    """
    if not isinstance(embedding, nn.Embedding):
        raise TypeError(f"embedding must be an nn.Embedding, got {type(embedding).__name__}")
    if isinstance(itos, str) or not isinstance(itos, Sequence):
        raise TypeError(f"itos must be a list of words, got {type(itos).__name__}")
    if len(itos) != embedding.num_embeddings:
        raise ValueError(f"itos has {len(itos)} words but the embedding has {embedding.num_embeddings} rows")
    if not (hasattr(word_vectors, "stoi") and hasattr(word_vectors, "vectors")):
        raise TypeError(f"word_vectors must have .stoi and .vectors (e.g. a "
                        f"coursekit.embeddings.word_vectors.WordVectors), got {type(word_vectors).__name__}")
    vectors = torch.as_tensor(word_vectors.vectors, dtype=embedding.weight.dtype)
    check_tensor(vectors, "word_vectors.vectors", ndim=2)
    check_finite(vectors, "word_vectors.vectors")
    if len(word_vectors.stoi) != vectors.shape[0]:
        raise ValueError(f"word_vectors has {len(word_vectors.stoi)} words but {vectors.shape[0]} vectors")
    if vectors.shape[1] != embedding.embedding_dim:
        raise ValueError(f"pretrained vectors have dimension {vectors.shape[1]}, the embedding "
                         f"{embedding.embedding_dim}; build the model with embed_dim={vectors.shape[1]}")
    rows, src = [], []
    for i, w in enumerate(itos):
        j = word_vectors.stoi.get(w)
        if j is not None and i != embedding.padding_idx:
            rows.append(i)
            src.append(j)
    with torch.no_grad():
        if match_scale:
            g = torch.Generator().manual_seed(seed)
            sigma = vectors.std().item()
            fresh = torch.randn(embedding.weight.shape, generator=g, dtype=embedding.weight.dtype) * sigma
            embedding.weight.copy_(fresh.to(embedding.weight.device))
        if rows:
            embedding.weight[torch.tensor(rows)] = vectors[torch.tensor(src)].to(embedding.weight.device)
        if embedding.padding_idx is not None:
            embedding.weight[embedding.padding_idx].zero_()
    embedding.weight.requires_grad_(not freeze)
    return len(rows) / len(itos)


def classifier(kind: str, vocab_size: int, *, embed_dim: int = 100, n_classes: int = 2, pad_id: int = 0,
               **kwargs) -> nn.Module:
    """Build one of the four models by name: ``"bow"``, ``"cbow"``, ``"dan"``, ``"cnn"``."""
    kinds = {"bow": BOW, "cbow": CBOW, "dan": DAN, "cnn": KimCNN}
    check_choice(kind, "kind", sorted(kinds))
    if kind == "bow":
        return BOW(vocab_size, n_classes, pad_id=pad_id, **kwargs)
    return kinds[kind](vocab_size, embed_dim, n_classes, pad_id=pad_id, **kwargs)

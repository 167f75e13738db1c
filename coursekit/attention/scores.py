"""Alignment score functions and the attention layer of a recurrent decoder (notebook 06).

A decoder state ``h`` (the *query*) looks at every encoder state ``s_k`` (the *keys*, which double
as *values*): each key gets a score, the softmax of the scores is the alignment ``a``, and the
context vector is their weighted average (Bahdanau et al. 2015, Eq. 5–6; Luong et al. 2015, Eq. 7):

    a_k = softmax_k(score(h, s_k)),    c = Σ_k a_k s_k

Score functions (Luong et al. 2015, §3.1 and Eq. 8; Graves et al. 2014 for the cosine):

=============  ==============================  ===========================================
``dot``          hᵀ s                           no parameters, needs d_h = d_s
``scaled_dot``   hᵀ s / √d                      Vaswani et al. 2017 (keeps the variance at 1)
``general``      hᵀ W s                         bilinear, W ∈ R^{d_h × d_s}
``additive``     vᵀ tanh(W [h; s])              Bahdanau's MLP = vᵀ tanh(W_h h + W_s s)
``cosine``       β · cos(h, s)                  β a learnable "key strength" (NTM)
``location``     (W h)_k                        position k only: a = softmax(W h), no keys
=============  ==============================  ===========================================

Every score module maps ``query (..., T_q, d_q)`` and ``keys (..., T_k, d_k)`` to scores
``(..., T_q, T_k)``. Masks are boolean, **True = keep**; a query whose keys are all masked gets
all-zero weights (not NaN) and so a zero context vector: a convention, documented in
:func:`masked_softmax`.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from coursekit.validation import (
    check_bool_mask,
    check_finite,
    check_positive_float,
    check_positive_int,
    check_same_dtype,
    check_tensor,
)

__all__ = [
    "SCORE_FUNCTIONS",
    "DotScore",
    "ScaledDotScore",
    "GeneralScore",
    "AdditiveScore",
    "CosineScore",
    "LocationScore",
    "make_score",
    "masked_softmax",
    "RecurrentAttention",
    "LuongOutput",
    "local_window_mask",
]

SCORE_FUNCTIONS = ("dot", "scaled_dot", "general", "additive", "cosine", "location")


def _check_query_keys(query: torch.Tensor, keys: torch.Tensor, same_dim: bool) -> None:
    check_tensor(query, "query", floating=True)
    check_tensor(keys, "keys", floating=True)
    if query.dim() < 2 or keys.dim() < 2:
        raise ValueError("query and keys must have shape (..., T, d), "
                         f"got {tuple(query.shape)} and {tuple(keys.shape)}")
    if query.dtype != keys.dtype:
        raise TypeError(f"query and keys must share a dtype, got {query.dtype} and {keys.dtype}")
    if same_dim and query.shape[-1] != keys.shape[-1]:
        raise ValueError(f"this score needs query and keys of the same width, got query {tuple(query.shape)} "
                         f"and keys {tuple(keys.shape)} (use 'general' or 'additive' for different widths)")
    try:
        torch.broadcast_shapes(query.shape[:-2], keys.shape[:-2])
    except RuntimeError:
        raise ValueError(f"the batch dims of query {tuple(query.shape)} and keys {tuple(keys.shape)} "
                         "do not broadcast") from None


class DotScore(nn.Module):
    """score(h, s) = hᵀ s (Luong et al. 2015, Eq. 8, "dot")."""

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        _check_query_keys(query, keys, same_dim=True)
        return query @ keys.transpose(-2, -1)  # (..., T_q, T_k)


class ScaledDotScore(nn.Module):
    """score(h, s) = hᵀ s / √d (Vaswani et al. 2017, Eq. 1)."""

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        _check_query_keys(query, keys, same_dim=True)
        return query @ keys.transpose(-2, -1) / math.sqrt(query.shape[-1])  # (..., T_q, T_k)


class GeneralScore(nn.Module):
    """score(h, s) = hᵀ W s, a bilinear form (Luong et al. 2015, Eq. 8, "general")."""

    def __init__(self, d_query: int, d_key: int):
        super().__init__()
        self.W = nn.Linear(check_positive_int(d_key, "d_key"), check_positive_int(d_query, "d_query"), bias=False)

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        _check_query_keys(query, keys, same_dim=False)
        if keys.shape[-1] != self.W.in_features or query.shape[-1] != self.W.out_features:
            raise ValueError(f"GeneralScore expects query width {self.W.out_features} and key width "
                             f"{self.W.in_features}, got {query.shape[-1]} and {keys.shape[-1]}")
        check_same_dtype(query, "query", self.W.weight)
        return query @ self.W(keys).transpose(-2, -1)  # (..., T_q, d_q) @ (..., d_q, T_k)


class AdditiveScore(nn.Module):
    """score(h, s) = vᵀ tanh(W [h; s]) = vᵀ tanh(W_h h + W_s s) (Bahdanau et al. 2015, Eq. 6 / App. A).

    Splitting W into the blocks acting on h and on s lets us project the T_q queries and T_k keys
    once each and broadcast the sum to (T_q, T_k), instead of concatenating every pair.
    """

    def __init__(self, d_query: int, d_key: int, d_attn: int | None = None):
        super().__init__()
        d_attn = d_query if d_attn is None else check_positive_int(d_attn, "d_attn")
        self.W_h = nn.Linear(check_positive_int(d_query, "d_query"), d_attn, bias=False)
        self.W_s = nn.Linear(check_positive_int(d_key, "d_key"), d_attn, bias=True)
        self.v = nn.Linear(d_attn, 1, bias=False)

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        _check_query_keys(query, keys, same_dim=False)
        if query.shape[-1] != self.W_h.in_features or keys.shape[-1] != self.W_s.in_features:
            raise ValueError(f"AdditiveScore expects query width {self.W_h.in_features} and key width "
                             f"{self.W_s.in_features}, got {query.shape[-1]} and {keys.shape[-1]}")
        check_same_dtype(query, "query", self.W_h.weight)
        hidden = torch.tanh(self.W_h(query).unsqueeze(-2) + self.W_s(keys).unsqueeze(-3))  # (..., T_q, T_k, A)
        return self.v(hidden).squeeze(-1)  # (..., T_q, T_k)


class CosineScore(nn.Module):
    """score(h, s) = β cos(h, s) (content-based addressing of Graves et al. 2014, Eq. 5–6).

    A cosine lies in [−1, 1], so its softmax is nearly uniform unless it is sharpened by the key
    strength β (learnable when ``learnable=True``).
    """

    def __init__(self, scale: float = 10.0, learnable: bool = True, eps: float = 1e-8):
        super().__init__()
        scale_t = torch.tensor(check_positive_float(scale, "scale"))
        self.scale = nn.Parameter(scale_t) if learnable else scale_t
        self.eps = check_positive_float(eps, "eps")

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        _check_query_keys(query, keys, same_dim=True)
        q = query / query.norm(dim=-1, keepdim=True).clamp(min=self.eps)
        k = keys / keys.norm(dim=-1, keepdim=True).clamp(min=self.eps)
        return self.scale * (q @ k.transpose(-2, -1))  # (..., T_q, T_k)


class LocationScore(nn.Module):
    """score_k = (W_a h)_k: the alignment depends on the query and the position only (Luong et al. 2015, Eq. 9).

    The keys only tell how many positions there are (``T_k ≤ max_len``).
    """

    def __init__(self, d_query: int, max_len: int):
        super().__init__()
        self.max_len = check_positive_int(max_len, "max_len")
        self.W_a = nn.Linear(check_positive_int(d_query, "d_query"), max_len)

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        _check_query_keys(query, keys, same_dim=False)
        T_k = keys.shape[-2]
        if T_k > self.max_len:
            raise ValueError(f"LocationScore was built for at most {self.max_len} source positions, got T_k = {T_k}")
        if query.shape[-1] != self.W_a.in_features:
            raise ValueError(f"LocationScore expects query width {self.W_a.in_features}, got {query.shape[-1]}")
        check_same_dtype(query, "query", self.W_a.weight)
        scores = self.W_a(query)[..., :T_k]  # (..., T_q, T_k)
        batch = torch.broadcast_shapes(query.shape[:-2], keys.shape[:-2])
        return scores.expand(*batch, query.shape[-2], T_k)


def make_score(name: str, d_query: int, d_key: int, *, d_attn: int | None = None,
               max_len: int | None = None) -> nn.Module:
    """Build a score module by name (one of :data:`SCORE_FUNCTIONS`)."""
    if name not in SCORE_FUNCTIONS:
        raise ValueError(f"unknown score function {name!r}; expected one of {', '.join(SCORE_FUNCTIONS)}")
    check_positive_int(d_query, "d_query")
    check_positive_int(d_key, "d_key")
    if name in ("dot", "scaled_dot", "cosine") and d_query != d_key:
        raise ValueError(f"the {name!r} score needs d_query == d_key, got {d_query} and {d_key}")
    if name == "dot":
        return DotScore()
    if name == "scaled_dot":
        return ScaledDotScore()
    if name == "general":
        return GeneralScore(d_query, d_key)
    if name == "additive":
        return AdditiveScore(d_query, d_key, d_attn)
    if name == "cosine":
        return CosineScore()
    if max_len is None:
        raise ValueError("the 'location' score needs max_len, the longest source it will see")
    return LocationScore(d_query, max_len)


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Softmax over the last axis, with masked positions (mask False) at weight 0.

    ``mask`` (bool, True = keep) broadcasts to ``scores`` (it may not make them larger).

    Convention: a row with no kept position has no distribution; it gets all-zero weights (not NaN).
    ``-inf`` scores are allowed (weight 0); NaN or ``+inf`` scores have no softmax and are an error.
    """
    check_tensor(scores, "scores", floating=True)
    if (scores.isnan() | scores.isposinf()).any():    # one reduction (one device sync) on every call
        raise ValueError("scores contain NaN or +inf: their softmax would be NaN (a diverged model, or a score "
                         "function that overflowed); -inf is allowed and means weight 0")
    if mask is None:
        return torch.softmax(scores, dim=-1)
    check_bool_mask(mask, "mask")
    try:
        shape = torch.broadcast_shapes(mask.shape, scores.shape)
    except RuntimeError:
        shape = None
    if shape != scores.shape:
        raise ValueError(f"mask of shape {tuple(mask.shape)} does not broadcast to "
                         f"scores {tuple(scores.shape)}")
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    return weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)  # all-masked rows: 0, not NaN


class RecurrentAttention(nn.Module):
    """Attention of a recurrent decoder: ``a = softmax(score(h, s) | mask)``, ``c = Σ_k a_k v_k``.

    ``query`` (B, d_q) for one decoder step or (B, T_q, d_q) for several; ``keys`` (B, T_k, d_k);
    ``values`` (B, T_k, d_v), by default the keys (the encoder states); ``mask`` (B, T_k) — e.g. the
    source mask of :func:`coursekit.text.pad_batch` — or broadcastable to (B, T_q, T_k), True = keep.
    Returns ``(context (B, [T_q,] d_v), weights (B, [T_q,] T_k))``.
    """

    def __init__(self, score: nn.Module | str, d_query: int | None = None, d_key: int | None = None, **kwargs):
        super().__init__()
        if isinstance(score, str):
            if d_query is None or d_key is None:
                raise ValueError("building a score by name needs d_query and d_key")
            score = make_score(score, d_query, d_key, **kwargs)
        if not isinstance(score, nn.Module):
            raise TypeError(f"score must be a score module or a name, got {type(score).__name__}")
        self.score = score

    def forward(self, query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor | None = None,
                mask: torch.Tensor | None = None):
        check_tensor(query, "query", ndim=(2, 3), floating=True)
        check_tensor(keys, "keys", ndim=3, floating=True)
        values = keys if values is None else check_tensor(values, "values", ndim=3, floating=True)
        if keys.shape[1] == 0:
            raise ValueError(f"keys must hold at least one position, got shape {tuple(keys.shape)}")
        if values.shape[:2] != keys.shape[:2]:
            raise ValueError(f"values must have shape (B, T_k, d_v) with (B, T_k) = {tuple(keys.shape[:2])}, "
                             f"got {tuple(values.shape)}")
        if query.shape[0] != keys.shape[0]:
            raise ValueError(f"query and keys must have the same batch size, got {tuple(query.shape)} and "
                             f"{tuple(keys.shape)}")
        single = query.dim() == 2
        q = query.unsqueeze(1) if single else query                     # (B, T_q, d_q)
        if mask is not None:
            check_bool_mask(mask, "mask")
        if mask is not None and mask.dim() == 2:
            if mask.shape != keys.shape[:2]:
                raise ValueError(f"a (B, T_k) mask must have shape {tuple(keys.shape[:2])}, got {tuple(mask.shape)}")
            mask = mask.unsqueeze(1)                                    # (B, 1, T_k)
        weights = masked_softmax(self.score(q, keys), mask)             # (B, T_q, T_k)
        context = weights @ values                                      # (B, T_q, d_v)
        return (context.squeeze(1), weights.squeeze(1)) if single else (context, weights)


class LuongOutput(nn.Module):
    """Attentional output of Luong et al. (2015), Eq. 5–6: h̃ = tanh(W_c [c; h]), p(y) = softmax(W_s h̃).

    Returns ``(logits, h_tilde)``; ``h_tilde`` is what *input feeding* passes to the next step.
    """

    def __init__(self, d_context: int, d_hidden: int, vocab_size: int, d_out: int | None = None):
        super().__init__()
        self.d_context = check_positive_int(d_context, "d_context")
        self.d_hidden = check_positive_int(d_hidden, "d_hidden")
        d_out = d_hidden if d_out is None else check_positive_int(d_out, "d_out")
        self.W_c = nn.Linear(d_context + d_hidden, d_out, bias=False)
        self.W_s = nn.Linear(d_out, check_positive_int(vocab_size, "vocab_size"))

    def forward(self, context: torch.Tensor, hidden: torch.Tensor):
        check_tensor(context, "context", floating=True)
        check_tensor(hidden, "hidden", floating=True)
        for name, t, width in (("context", context, self.d_context), ("hidden", hidden, self.d_hidden)):
            if t.dim() == 0 or t.shape[-1] != width:
                raise ValueError(f"{name} must have last dim d_{name}={width}, got {tuple(t.shape)}")
            check_same_dtype(t, name, self.W_c.weight)
        if context.shape[:-1] != hidden.shape[:-1]:
            raise ValueError(f"context {tuple(context.shape)} and hidden {tuple(hidden.shape)} must agree "
                             "in every dim but the last")
        h_tilde = torch.tanh(self.W_c(torch.cat([context, hidden], dim=-1)))  # (..., d_out)
        return self.W_s(h_tilde), h_tilde


def local_window_mask(centers: torch.Tensor, T_k: int, half_width: int) -> torch.Tensor:
    """Keep-mask of *local* attention (Luong et al. 2015, §3.2): only keys with |k − p| ≤ D.

    ``centers`` p: (B,) or (B, T_q) positions (e.g. the target step t for monotonic alignment, or
    a predicted p_t); returns a bool mask (B, [T_q,] T_k). Combine it with the padding mask by ``&``.
    """
    check_tensor(centers, "centers", ndim=(1, 2))
    if centers.dtype == torch.bool or centers.is_complex():
        raise TypeError(f"centers must be a numeric tensor of positions, got {centers.dtype}")
    check_finite(centers, "centers")
    check_positive_int(T_k, "T_k")
    if isinstance(half_width, bool) or not isinstance(half_width, int) or half_width < 0:
        raise ValueError(f"half_width must be a non-negative int, got {half_width!r}")
    k = torch.arange(T_k, device=centers.device)
    return (k - centers.unsqueeze(-1).round().long()).abs() <= half_width

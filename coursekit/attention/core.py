"""Scaled dot-product attention, sliding-window attention and multi-head attention (notebook 07).

Vaswani et al. (2017), *Attention Is All You Need*, §3.2:

* Eq. (1)  Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V
* §3.2.2   MultiHead(Q, K, V) = Concat(head_1, …, head_h) W^O,
           head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)

Masks are boolean with **True = may attend** (the convention of
``torch.nn.functional.scaled_dot_product_attention``; :mod:`coursekit.attention.masks` builds
them); masked scores become −∞ before the softmax. A query row whose keys are *all* masked has no
distribution to speak of: we return zeros for it (weights and output), never NaN.

A mask has either 2 dims ``(T_q, T_k)`` (shared by the whole batch) or one dim per dim of the
scores ``(..., T_q, T_k)`` (size 1 where it is shared): a 3-D ``(B, T_q, T_k)`` mask next to 4-D
``(B, H, T_q, T_k)`` scores would silently land on the head axis, so it is refused. A 2-D mask
whose first dim equals the batch size and ``T_q`` could be a ``(B, T_k)`` padding mask as well as a
``(T_q, T_k)`` one: that is refused too, with the two explicit ways to write it.

Shapes: ``B`` batch, ``H`` heads, ``T_q``/``T_k`` query/key lengths, ``C = d_model``,
``D = C / H`` the per-head width.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from coursekit.attention.masks import causal_mask, combine_masks
from coursekit.validation import (
    check_positive_int,
    check_probability,
    check_row_index,
    check_same_dtype,
    check_tensor,
)

__all__ = [
    "KVCache",
    "MultiHeadAttention",
    "check_qkv",
    "merge_heads",
    "scaled_dot_product_attention",
    "sliding_window_attention",
    "split_heads",
]


# ----------------------------------------------------------------------------------------------
# Checks: a mask against the scores, an input's dtype against the weights
# ----------------------------------------------------------------------------------------------

def _check_mask(mask: torch.Tensor, batch: torch.Size, T_q: int, T_k: int) -> torch.Tensor:
    """Validate a boolean mask for scores ``(*batch, T_q, T_k)`` and return it.

    The mask is ``(T_q, T_k)`` or has one dim per dim of the scores (see the module docstring).
    """
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"mask must be a bool tensor, got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        raise TypeError(f"mask must be a bool tensor with True = may attend, got {mask.dtype} "
                        "(convert an additive float mask with `mask == 0`)")
    target = (*batch, T_q, T_k)
    if mask.dim() not in (2, len(target)):
        raise ValueError(f"mask of shape {tuple(mask.shape)} is not broadcastable to (..., T_q, T_k) = {target}: "
                         f"it must have 2 dims (T_q, T_k) or {len(target)}, one per dim of the scores "
                         "(e.g. mask[:, None] for a (B, T_q, T_k) mask and (B, H, T_q, T_k) scores)")
    try:
        shape = torch.broadcast_shapes(mask.shape, target)
    except RuntimeError:
        shape = None
    if shape != torch.Size(target):
        raise ValueError(f"mask of shape {tuple(mask.shape)} is not broadcastable to (..., T_q, T_k) = {target}")
    if mask.dim() == 2 and len(batch) and mask.shape[0] == batch[0] > 1:
        raise ValueError(f"a 2-D mask of shape {tuple(mask.shape)} is ambiguous for scores {target}: the batch "
                         f"size equals T_q = {T_q}, so it could be (T_q, T_k) or a (B, T_k) padding mask. "
                         "Write the dims out: mask[None, None] for a (T_q, T_k) mask, padding_mask(keep) "
                         "(B, 1, 1, T_k) for a padding mask")
    return mask


# ----------------------------------------------------------------------------------------------
# Scaled dot-product attention, Eq. (1)
# ----------------------------------------------------------------------------------------------

def check_qkv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
    """The checks every attention over (..., T, d) queries, keys and values makes: floating tensors of at least
    two dims and one position, one dtype, ``d_k`` shared by q and k, ``T_k`` shared by k and v."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        check_tensor(t, name, floating=True)
        if t.dim() < 2:
            raise ValueError(f"{name} must have shape (..., T, d), got {tuple(t.shape)}")
        if t.shape[-2] == 0:
            raise ValueError(f"{name} must hold at least one position, got shape {tuple(t.shape)}")
    if not (q.dtype == k.dtype == v.dtype):
        raise TypeError(f"q, k, v must share a dtype, got {q.dtype}, {k.dtype}, {v.dtype}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must have the same last dim d_k, got q {tuple(q.shape)} and k {tuple(k.shape)}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v must have the same length T_k, got k {tuple(k.shape)} and v {tuple(v.shape)}")


def scaled_dot_product_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                                 mask: torch.Tensor | None = None, *, causal: bool = False,
                                 dropout_p: float = 0.0, need_weights: bool = True):
    """softmax(Q Kᵀ / √d_k) V — Vaswani et al. (2017), Eq. (1).

    q ``(..., T_q, d_k)``, k ``(..., T_k, d_k)``, v ``(..., T_k, d_v)``; ``mask`` bool, True = may attend,
    either ``(T_q, T_k)`` or with one dim per dim of the scores, broadcastable to ``(..., T_q, T_k)``
    (see the module docstring); ``causal=True`` adds :func:`causal_mask` (so it needs ``T_q <= T_k``).

    Returns ``(out (..., T_q, d_v), weights (..., T_q, T_k))``. The weights are the softmax before
    dropout. With ``need_weights=False`` the computation goes through PyTorch's fused
    ``F.scaled_dot_product_attention`` and ``weights`` is ``None``.

    Convention: a query row whose keys are *all* masked gets zero weights and a zero output (not NaN,
    and not a uniform average), with either path.
    """
    check_qkv(q, k, v)
    try:
        batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except RuntimeError:
        raise ValueError(f"the leading (batch/head) dims of q {tuple(q.shape)}, k {tuple(k.shape)} and "
                         f"v {tuple(v.shape)} do not broadcast") from None
    check_probability(dropout_p, "dropout_p", inclusive_high=False)
    T_q, T_k, d_k = q.shape[-2], k.shape[-2], q.shape[-1]
    if mask is not None:
        mask = _check_mask(mask, batch, T_q, T_k)
    if causal and mask is None and T_q == T_k and not need_weights:
        # the plain triangle: the kernel's own causal path, no (T, T) mask tensor (torch's is_causal is
        # top-left aligned, which equals causal_mask only when T_q == T_k)
        return _fused_attention(q, k, v, None, batch, dropout_p, is_causal=True), None
    if causal:
        mask = combine_masks(mask, causal_mask(T_q, T_k, device=q.device))

    if not need_weights:
        return _fused_attention(q, k, v, mask, batch, dropout_p), None

    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (..., T_q, T_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)  # (..., T_q, T_k), rows sum to 1
    if mask is not None:  # a row with every key masked is softmax(-inf, …) = NaN: make it zeros
        weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
    attn = F.dropout(weights, p=dropout_p) if dropout_p > 0 else weights
    return attn @ v, weights  # (..., T_q, d_v)


def _fused_attention(q, k, v, mask, batch, dropout_p, is_causal=False):
    """The same computation through ``F.scaled_dot_product_attention`` (flash / memory-efficient kernels)."""
    q = q.expand(*batch, *q.shape[-2:])
    k = k.expand(*batch, *k.shape[-2:])
    v = v.expand(*batch, *v.shape[-2:])
    if mask is None:
        return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=is_causal)
    # A query row with every key masked is a softmax over nothing. Older torch (2.4) returns NaN there,
    # whose gradient then poisons q, k and v even after the row is zeroed; let such a row attend
    # everywhere inside the kernel and zero it afterwards, so no NaN ever exists, on any version.
    empty = ~mask.any(dim=-1, keepdim=True)                                   # (..., T_q, 1)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | empty, dropout_p=dropout_p)
    return out.masked_fill(empty, 0.0)


def sliding_window_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, window: int, *,
                             causal: bool = False) -> torch.Tensor:
    """Scaled dot-product attention restricted to ``|i - j| <= window``, in O(T·window) time and memory.

    Equal to ``scaled_dot_product_attention(q, k, v, window_mask(T, window, causal=causal))`` without
    ever forming the ``T × T`` scores (Beltagy et al. 2020, *Longformer*, §3.1, chunked form): the
    queries are cut into blocks of ``b = max(window, 1)`` positions; block ``n`` can only see keys in
    blocks ``n - 1, n, n + 1``, so its scores are a ``b × 3b`` matrix, ``3·T·b`` numbers in all.
    q, k, v ``(..., T, d)`` of one sequence length; returns ``(..., T, d_v)``.
    """
    for name, t in (("q", q), ("k", k), ("v", v)):
        check_tensor(t, name, floating=True)
        if t.dim() < 2:
            raise ValueError(f"{name} must have shape (..., T, d), got {tuple(t.shape)}")
    if not (q.shape[:-1] == k.shape[:-1] == v.shape[:-1]) or q.shape[-1] != k.shape[-1]:
        raise ValueError(f"sliding-window self-attention needs q, k, v with the same (..., T) and q, k the same d; "
                         f"got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    if q.shape[-2] == 0:
        raise ValueError(f"q, k, v must hold at least one position, got shape {tuple(q.shape)}")
    if not (q.dtype == k.dtype == v.dtype):
        raise TypeError(f"q, k, v must share a dtype, got {q.dtype}, {k.dtype}, {v.dtype}")
    if isinstance(window, bool) or not isinstance(window, int) or window < 0:
        raise ValueError(f"window must be an int ≥ 0, got {window!r}")
    T, d_k, lead = q.shape[-2], q.shape[-1], q.shape[:-2]
    b = max(window, 1)                                       # block size
    n = -(-T // b)                                           # number of blocks
    extra = n * b - T                                        # padding at the end
    q_blocks = F.pad(q, (0, 0, 0, extra)).reshape(*lead, n, b, d_k)                  # (..., n, b, d_k)
    k_blocks = F.pad(k, (0, 0, b, b + extra)).unfold(-2, 3 * b, b).transpose(-1, -2)  # (..., n, 3b, d_k)
    v_blocks = F.pad(v, (0, 0, b, b + extra)).unfold(-2, 3 * b, b).transpose(-1, -2)  # (..., n, 3b, d_v)
    scores = q_blocks @ k_blocks.transpose(-1, -2) / math.sqrt(d_k)                   # (..., n, b, 3b)
    i = torch.arange(n * b, device=q.device).view(n, b, 1)                            # query positions
    j = (torch.arange(n, device=q.device) * b - b).view(n, 1, 1) + torch.arange(3 * b, device=q.device)
    keep = ((j - i).abs() <= window) & (j >= 0) & (j < T)                             # (n, b, 3b)
    if causal:
        keep &= j <= i
    weights = torch.softmax(scores.masked_fill(~keep, float("-inf")), dim=-1)
    weights = weights.masked_fill(~keep.any(-1, keepdim=True), 0.0)  # padded query rows past T
    out = weights @ v_blocks                                                           # (..., n, b, d_v)
    return out.reshape(*lead, n * b, v.shape[-1])[..., :T, :]                          # (..., T, d_v)


# ----------------------------------------------------------------------------------------------
# Heads
# ----------------------------------------------------------------------------------------------

def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """``(B, T, C) -> (B, H, T, C/H)``: each head sees its own slice of the model dimension."""
    check_tensor(x, "x", ndim=3)
    check_positive_int(n_heads, "n_heads")
    B, T, C = x.shape
    if C % n_heads:
        raise ValueError(f"the model dim {C} is not divisible by n_heads={n_heads}")
    return x.view(B, T, n_heads, C // n_heads).transpose(1, 2)  # (B, H, T, D)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """``(B, H, T, D) -> (B, T, H*D)``: the "Concat(head_1, …, head_h)" of §3.2.2."""
    check_tensor(x, "x", ndim=4)
    B, H, T, D = x.shape
    return x.transpose(1, 2).reshape(B, T, H * D)  # (B, T, C)


class KVCache:
    """Keys and values of the positions seen so far, for one attention layer.

    Autoregressive decoding feeds one token at a time; its query attends to the keys and values
    of *all* earlier tokens, which do not change — so we keep them instead of recomputing them.
    ``append(k, v)`` concatenates along the time axis (``-2``) and returns everything so far.

    ``static=True`` marks a cache for cross-attention: it is filled once (the encoder's keys and
    values) and :class:`MultiHeadAttention` then reuses it without projecting the memory again.
    """

    def __init__(self, static: bool = False) -> None:
        if not isinstance(static, bool):
            raise TypeError(f"static must be a bool, got {type(static).__name__}")
        self.static = static
        self.k: torch.Tensor | None = None
        self.v: torch.Tensor | None = None

    @property
    def length(self) -> int:
        return 0 if self.k is None else self.k.shape[-2]

    def append(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        check_tensor(k, "k", floating=True)
        check_tensor(v, "v", floating=True)
        if k.dim() < 2 or k.shape[:-1] != v.shape[:-1]:
            raise ValueError(f"k and v must have shapes (..., T, d) with the same (..., T), "
                             f"got {tuple(k.shape)} and {tuple(v.shape)}")
        if self.k is None:
            self.k, self.v = k, v
        else:
            if k.shape[:-2] != self.k.shape[:-2] or k.shape[-1] != self.k.shape[-1] \
                    or v.shape[-1] != self.v.shape[-1]:
                raise ValueError(f"cannot append k {tuple(k.shape)} / v {tuple(v.shape)} to a cache holding "
                                 f"k {tuple(self.k.shape)} / v {tuple(self.v.shape)}")
            if k.dtype != self.k.dtype or v.dtype != self.v.dtype:
                raise TypeError(f"cannot append {k.dtype} keys / {v.dtype} values to a cache holding "
                                f"{self.k.dtype} / {self.v.dtype}")
            self.k = torch.cat([self.k, k], dim=-2)
            self.v = torch.cat([self.v, v], dim=-2)
        return self.k, self.v

    def reorder(self, index: torch.Tensor) -> None:
        """Keep batch rows ``index`` (beam search re-ranks its hypotheses every step)."""
        index = check_row_index(index, None if self.k is None else self.k.shape[0])
        self._select(index)

    def _select(self, index: torch.Tensor) -> None:
        """:meth:`reorder` with an index already checked by :func:`_row_index`."""
        if self.k is not None:
            index = index.to(device=self.k.device, dtype=torch.long)
            self.k = self.k.index_select(0, index)
            self.v = self.v.index_select(0, index)

    def reset(self) -> None:
        self.k = self.v = None

    def __repr__(self) -> str:
        return f"KVCache(length={self.length}, static={self.static})"


# ----------------------------------------------------------------------------------------------
# Multi-head attention, §3.2.2
# ----------------------------------------------------------------------------------------------

class MultiHeadAttention(nn.Module):
    """Multi-head attention with separate W^Q, W^K, W^V, W^O projections (batch first).

    ``forward(query, key=None, value=None)``: self-attention when ``key``/``value`` are omitted,
    cross-attention otherwise (queries from the decoder, keys/values from the encoder memory).

    ``mask`` is bool, True = may attend, broadcastable to ``(B, H, T_q, T_k)``: ``(T_q, T_k)``,
    ``(B, 1, 1, T_k)`` (see :func:`padding_mask`), ``(B, 1, T_q, T_k)`` or ``(B, H, T_q, T_k)``;
    a 3-D mask is read as ``(B, T_q, T_k)`` (shared by the heads). A ``(B, T)`` keep-mask is not a
    mask here: turn it into ``padding_mask(keep)`` (when ``B == T_q`` it would read as ``(T_q, T_k)``,
    so that shape is refused). A query with every key masked gets zero weights (its output is then
    the output projection's bias).
    """

    def __init__(self, d_model: int, n_heads: int, *, dropout: float = 0.0, bias: bool = True,
                 kdim: int | None = None, vdim: int | None = None) -> None:
        super().__init__()
        check_positive_int(d_model, "d_model")
        check_positive_int(n_heads, "n_heads")
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads}")
        check_probability(dropout, "dropout", inclusive_high=False)
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.kdim = d_model if kdim is None else check_positive_int(kdim, "kdim")
        self.vdim = d_model if vdim is None else check_positive_int(vdim, "vdim")
        self.dropout = dropout
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)    # W^Q (all heads stacked)
        self.k_proj = nn.Linear(self.kdim, d_model, bias=bias)  # W^K
        self.v_proj = nn.Linear(self.vdim, d_model, bias=bias)  # W^V
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)  # W^O

    def forward(self, query: torch.Tensor, key: torch.Tensor | None = None, value: torch.Tensor | None = None,
                *, mask: torch.Tensor | None = None, causal: bool = False, need_weights: bool = False,
                cache: KVCache | None = None):
        """Return ``(out (B, T_q, d_model), weights (B, H, T_q, T_k) or None)``.

        With a :class:`KVCache`, the new keys/values are appended to it and the queries attend to
        everything cached (``causal=True`` then aligns the triangle to the end, see :func:`causal_mask`).
        """
        check_tensor(query, "query", ndim=3, floating=True)
        key = query if key is None else key
        value = key if value is None else value
        check_tensor(key, "key", ndim=3, floating=True)
        check_tensor(value, "value", ndim=3, floating=True)
        if query.shape[-1] != self.d_model:
            raise ValueError(f"query must have last dim d_model={self.d_model}, got {tuple(query.shape)}")
        if key.shape[-1] != self.kdim or value.shape[-1] != self.vdim:
            raise ValueError(f"key/value must have last dims {self.kdim}/{self.vdim}, "
                             f"got {tuple(key.shape)} and {tuple(value.shape)}")
        if not key.shape[0] == value.shape[0] == query.shape[0]:
            raise ValueError(f"query, key and value must share the batch size, got query {tuple(query.shape)}, "
                             f"key {tuple(key.shape)} and value {tuple(value.shape)}")
        if key.shape[1] != value.shape[1]:
            raise ValueError(f"key and value must have the same length T_k, got key {tuple(key.shape)} "
                             f"and value {tuple(value.shape)}")
        for name, t in (("query", query), ("key", key), ("value", value)):
            check_same_dtype(t, name, self.q_proj.weight)
        if cache is not None and not isinstance(cache, KVCache):
            raise TypeError(f"cache must be a KVCache, got {type(cache).__name__}")

        q = split_heads(self.q_proj(query), self.n_heads)  # (B, H, T_q, D)
        if cache is not None and cache.static and cache.length:
            k, v = cache.k, cache.v  # cross-attention: the memory was projected on the first step
        else:
            k = split_heads(self.k_proj(key), self.n_heads)    # (B, H, T_k, D)
            v = split_heads(self.v_proj(value), self.n_heads)  # (B, H, T_k, D)
            if cache is not None:
                k, v = cache.append(k, v)
        if mask is not None:
            if isinstance(mask, torch.Tensor) and mask.dim() == 3:
                mask = mask.unsqueeze(1)  # (B, T_q, T_k) -> (B, 1, T_q, T_k)
            B, H, T_q, T_k = q.shape[0], self.n_heads, q.shape[-2], k.shape[-2]
            _check_mask(mask, torch.Size((B, H)), T_q, T_k)
        out, weights = scaled_dot_product_attention(
            q, k, v, mask, causal=causal, dropout_p=self.dropout if self.training else 0.0,
            need_weights=need_weights)  # (B, H, T_q, D)
        return self.out_proj(merge_heads(out)), weights  # (B, T_q, C)

    @classmethod
    def from_torch(cls, mha: nn.MultiheadAttention) -> MultiHeadAttention:
        """A copy of ``nn.MultiheadAttention``'s weights (its stacked ``in_proj`` is split into W^Q, W^K, W^V)."""
        if not isinstance(mha, nn.MultiheadAttention):
            raise TypeError(f"expected nn.MultiheadAttention, got {type(mha).__name__}")
        if mha.bias_k is not None or mha.add_zero_attn:
            raise ValueError("add_bias_kv / add_zero_attn are not supported by MultiHeadAttention")
        has_bias = mha.out_proj.bias is not None
        ref = mha.out_proj.weight
        new = cls(mha.embed_dim, mha.num_heads, dropout=mha.dropout, bias=has_bias,
                  kdim=mha.kdim, vdim=mha.vdim).to(device=ref.device, dtype=ref.dtype)
        C = mha.embed_dim
        with torch.no_grad():
            if mha._qkv_same_embed_dim:
                wq, wk, wv = mha.in_proj_weight.split(C, dim=0)
            else:
                wq, wk, wv = mha.q_proj_weight, mha.k_proj_weight, mha.v_proj_weight
            new.q_proj.weight.copy_(wq)
            new.k_proj.weight.copy_(wk)
            new.v_proj.weight.copy_(wv)
            new.out_proj.weight.copy_(mha.out_proj.weight)
            if has_bias:
                bq, bk, bv = mha.in_proj_bias.split(C, dim=0)
                new.q_proj.bias.copy_(bq)
                new.k_proj.bias.copy_(bk)
                new.v_proj.bias.copy_(bv)
                new.out_proj.bias.copy_(mha.out_proj.bias)
        new.train(mha.training)
        return new

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, n_heads={self.n_heads}, dropout={self.dropout}"

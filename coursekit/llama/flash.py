"""FlashAttention's idea, written out plainly: exact attention, one tile of keys at a time (notebook 13).

Dao et al. (2022), *FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness*, Algorithm 1,
built on the online softmax of Milakov & Gimelshein (2018), *Online normalizer calculation for softmax*.

Attention softmax(S) V with S = Q Kᵀ / √d needs, for each query row, the max m and the normaliser
l = Σ_j exp(S_j − m) over *all* keys — which seems to require the whole T_q × T_k matrix S. It does not: visit the
keys in tiles and keep, per query row, the running max m, the running denominator l and the running (unnormalised)
output acc. When a tile raises the max from m_old to m_new, everything accumulated so far was scaled by
exp(−m_old) and must be rescaled by exp(m_old − m_new):

    m_new = max(m_old, rowmax(S_tile))
    P     = exp(S_tile − m_new)
    l_new = exp(m_old − m_new) · l_old + rowsum(P)
    acc   = exp(m_old − m_new) · acc   + P V_tile

and at the end  out = acc / l. The result is *exact* (not an approximation); only a tile of S ever exists, so
memory is O(T · block) instead of O(T_q · T_k). Algorithm 1 keeps the output normalised at every step (it divides
by l each time); dividing once at the end, as here, is the same arithmetic rearranged (FlashAttention-2, Dao
2023, does it this way). The real speed comes from doing this inside one GPU kernel that keeps a tile in on-chip
SRAM; these Python loops show the *arithmetic*, not the speed.

Shapes: ``q`` (..., T_q, d), ``k`` (..., T_k, d), ``v`` (..., T_k, d_v) with the same leading dims.
"""

from __future__ import annotations

import math

import torch

from coursekit.attention.core import check_qkv
from coursekit.validation import check_positive_int, check_tensor

__all__ = ["naive_attention", "online_softmax_update", "tiled_attention"]


def _check_qkv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> None:
    check_qkv(q, k, v)
    if not (q.shape[:-2] == k.shape[:-2] == v.shape[:-2]):                 # no broadcasting over tiles
        raise ValueError(f"q, k, v must have the same leading (batch, head) dims, got q {tuple(q.shape)}, "
                         f"k {tuple(k.shape)}, v {tuple(v.shape)}")
    if not isinstance(causal, bool):
        raise TypeError(f"causal must be a bool, got {type(causal).__name__}")
    if causal and q.shape[-2] != k.shape[-2]:
        raise ValueError(f"causal=True needs as many queries as keys (T_q == T_k, the triangle of "
                         f"F.scaled_dot_product_attention's is_causal), got T_q={q.shape[-2]}, T_k={k.shape[-2]}")


def naive_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
    """softmax(Q Kᵀ / √d) V with the whole (..., T_q, T_k) score matrix in memory — the baseline FlashAttention
    avoids (Vaswani et al. 2017, Eq. 1). ``causal`` needs T_q == T_k."""
    _check_qkv(q, k, v, causal)
    S = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])                          # (..., T_q, T_k)
    if causal:
        T = q.shape[-2]
        future = torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1)      # key j > query i
        S = S.masked_fill(future, float("-inf"))
    return torch.softmax(S, dim=-1) @ v                                           # (..., T_q, d_v)


def online_softmax_update(m: torch.Tensor, l: torch.Tensor, acc: torch.Tensor,  # noqa: E741 - l: the paper's ℓ
                          scores_tile: torch.Tensor, v_tile: torch.Tensor,
                          ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One step of the online softmax: fold a tile of keys into the running (m, l, acc) of each query row.

    ``m`` (..., T_q, 1) the running max (start at −∞), ``l`` (..., T_q, 1) the running denominator (start at 0),
    ``acc`` (..., T_q, d_v) the running unnormalised output Σ_j exp(S_j − m) v_j (start at 0); ``scores_tile``
    (..., T_q, b) the scaled scores of this tile (−∞ where masked), ``v_tile`` (..., b, d_v). Returns the new
    ``(m, l, acc)``; after the last tile the attention output is ``acc / l``.

    A row whose keys have all been masked so far keeps m = −∞; we subtract 0 instead of −∞ there, so
    exp(−∞ − (−∞)) never makes a NaN (its l and acc simply stay 0).
    """
    for name, t in (("m", m), ("l", l), ("acc", acc), ("scores_tile", scores_tile), ("v_tile", v_tile)):
        check_tensor(t, name, floating=True)
        if t.dim() < 2:
            raise ValueError(f"{name} must have shape (..., rows, columns), got {tuple(t.shape)}")
    if len({t.dtype for t in (m, l, acc, scores_tile, v_tile)}) > 1:
        raise TypeError(f"m, l, acc, scores_tile, v_tile must share a dtype, got {m.dtype}, {l.dtype}, {acc.dtype}, "
                        f"{scores_tile.dtype}, {v_tile.dtype}")
    rows, d_v = acc.shape[-2], acc.shape[-1]
    if m.shape != l.shape or m.shape[-1] != 1 or m.shape[:-1] != acc.shape[:-1]:
        raise ValueError(f"m and l must both have shape (..., T_q, 1) with acc (..., T_q, d_v) = {tuple(acc.shape)}, "
                         f"got m {tuple(m.shape)} and l {tuple(l.shape)}")
    if scores_tile.shape[:-1] != acc.shape[:-1] or scores_tile.shape[-1] == 0:
        raise ValueError(f"scores_tile must have shape (..., T_q={rows}, b ≥ 1) like acc's (..., T_q), got "
                         f"{tuple(scores_tile.shape)} and acc {tuple(acc.shape)}")
    if v_tile.shape[:-2] != acc.shape[:-2] or v_tile.shape[-2:] != (scores_tile.shape[-1], d_v):
        raise ValueError(f"v_tile must have shape (..., b={scores_tile.shape[-1]}, d_v={d_v}), got "
                         f"{tuple(v_tile.shape)}")
    m_new = torch.maximum(m, scores_tile.amax(dim=-1, keepdim=True))              # (..., T_q, 1)
    m_safe = m_new.masked_fill(m_new == float("-inf"), 0.0)
    P = torch.exp(scores_tile - m_safe)                                           # (..., T_q, b)
    rescale = torch.exp(m - m_safe)                                               # exp(m_old − m_new) ≤ 1
    l_new = rescale * l + P.sum(dim=-1, keepdim=True)                             # (..., T_q, 1)
    acc_new = rescale * acc + P @ v_tile                                          # (..., T_q, d_v)
    return m_new, l_new, acc_new


def tiled_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, causal: bool = False,
                    block_size: int = 64) -> torch.Tensor:
    """Exact attention softmax(Q Kᵀ / √d) V computed tile by tile with the online softmax (Dao et al. 2022,
    Algorithm 1), equal to ``F.scaled_dot_product_attention(q, k, v, is_causal=causal)``.

    The queries are cut into tiles of ``block_size`` rows and, for each, the keys/values into tiles of
    ``block_size``; only a ``block_size × block_size`` tile of scores exists at any time. With ``causal`` (needs
    T_q == T_k) a key tile entirely in a query tile's future is skipped — about half the work — and the diagonal
    tile is masked. T need not be a multiple of ``block_size`` (the last tile is shorter).
    """
    _check_qkv(q, k, v, causal)
    check_positive_int(block_size, "block_size")
    T_q, T_k, d = q.shape[-2], k.shape[-2], q.shape[-1]
    scale = 1.0 / math.sqrt(d)
    out = q.new_empty(*q.shape[:-1], v.shape[-1])                                  # (..., T_q, d_v)
    for i in range(0, T_q, block_size):                                           # a tile of queries …
        q_tile = q[..., i:i + block_size, :] * scale                              # (..., b_q, d)
        rows = q_tile.shape[-2]
        m = q.new_full((*q.shape[:-2], rows, 1), float("-inf"))                   # running max
        l = q.new_zeros((*q.shape[:-2], rows, 1))  # noqa: E741 - running denominator, the paper's ℓ
        acc = q.new_zeros((*q.shape[:-2], rows, v.shape[-1]))                     # running output
        for j in range(0, T_k, block_size):                                       # … meets every tile of keys
            if causal and j > i + rows - 1:
                break                                                             # the rest lies in the future
            S = q_tile @ k[..., j:j + block_size, :].transpose(-2, -1)            # (..., b_q, b_k)
            if causal and j + S.shape[-1] - 1 > i:                                # the tile crosses the diagonal
                query_pos = torch.arange(i, i + rows, device=q.device)[:, None]
                key_pos = torch.arange(j, j + S.shape[-1], device=q.device)[None, :]
                S = S.masked_fill(key_pos > query_pos, float("-inf"))
            m, l, acc = online_softmax_update(m, l, acc, S, v[..., j:j + block_size, :])  # noqa: E741
        out[..., i:i + rows, :] = acc / l
    return out

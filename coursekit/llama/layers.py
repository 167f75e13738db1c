"""The three layers a Llama block changes from GPT-2's (notebook 13): RMSNorm, SwiGLU, grouped-query attention.

* :class:`RMSNorm` — Zhang & Sennrich (2019), *Root Mean Square Layer Normalization*, Eq. (4):
  ā_i = a_i / RMS(a) · g_i,  RMS(a) = √(1/n Σ a_i² + ε): LayerNorm without the mean and without the bias.
* :class:`SwiGLU` — Shazeer (2020), *GLU Variants Improve Transformer*, Eq. (6):
  FFN_SwiGLU(x) = (Swish₁(x W) ⊙ x V) W₂, a gated feed-forward block (Swish₁ = SiLU) with three matrices.
* :func:`repeat_kv` and :class:`GroupedQueryAttention` — Ainslie et al. (2023), *GQA: Training Generalized
  Multi-Query Transformer Models from Multi-Head Checkpoints*: the H query heads are split into H_kv groups
  and each group shares one key/value head. H_kv = H is multi-head attention (Vaswani et al. 2017), H_kv = 1
  is multi-query attention (Shazeer 2019, *Fast Transformer Decoding: One Write-Head is All You Need*).
  The KV cache keeps only the H_kv key/value heads — H / H_kv times less memory per token than multi-head
  attention, the whole point of GQA; they are repeated for the H query heads at attention time.

Queries and keys are rotated to their positions with RoPE (:mod:`coursekit.llama.rope`) before the cache.
The projections have no bias (Llama's choice). Names follow Hugging Face's ``LlamaMLP``/``LlamaAttention``
(``gate_proj``, ``up_proj``, ``down_proj``, ``q_proj`` …), so its weights copy over one to one.

Shapes: ``B`` batch, ``T`` new positions, ``T_k`` positions attended to (cached + new), ``C = d_model``,
``H`` query heads, ``H_kv`` key/value heads, ``d = C / H`` the per-head width.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from coursekit.attention import KVCache, causal_mask, merge_heads, split_heads
from coursekit.llama.rope import apply_rope
from coursekit.validation import check_positive_float, check_positive_int, check_same_dtype, check_tensor

__all__ = ["GroupedQueryAttention", "RMSNorm", "SwiGLU", "repeat_kv"]


class RMSNorm(nn.Module):
    """ā = a / √(mean(a²) + ε) · g — Zhang & Sennrich (2019), Eq. (4), over the last dim.

    ε sits inside the square root and the statistic is computed in (at least) float32, then cast back to the
    input's dtype before the gain g multiplies it — the order of Hugging Face's ``LlamaRMSNorm``, so a bfloat16
    model rounds where it rounds. (HF casts float64 down to float32 too; here float64 stays float64.)
    """

    def __init__(self, d_model: int, eps: float = 1e-6) -> None:
        super().__init__()
        check_positive_int(d_model, "d_model")
        self.eps = check_positive_float(eps, "eps")
        self.weight = nn.Parameter(torch.ones(d_model))                          # the gain g

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_tensor(x, "x", floating=True)
        if x.dim() == 0 or x.shape[-1] != self.weight.shape[0]:
            raise ValueError(f"x must have last dim d_model={self.weight.shape[0]}, got shape {tuple(x.shape)}")
        a = x.to(torch.promote_types(x.dtype, torch.float32))
        inv_rms = torch.rsqrt(a.pow(2).mean(dim=-1, keepdim=True) + self.eps)    # 1 / RMS(a)
        return self.weight * (a * inv_rms).to(x.dtype)

    def extra_repr(self) -> str:
        return f"{self.weight.shape[0]}, eps={self.eps}"


class SwiGLU(nn.Module):
    """FFN_SwiGLU(x) = (SiLU(x W) ⊙ x V) W₂ — Shazeer (2020), Eq. (6).

    ``gate_proj`` is W (Meta's ``w1``), ``up_proj`` is V (``w3``), ``down_proj`` is W₂ (``w2``); no biases.
    Three matrices instead of two, so Llama shrinks the hidden width to about ⅔ · 4C to keep the parameter count.
    """

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        check_positive_int(d_model, "d_model")
        check_positive_int(d_ff, "d_ff")
        self.gate_proj = nn.Linear(d_model, d_ff, bias=False)    # W
        self.up_proj = nn.Linear(d_model, d_ff, bias=False)      # V
        self.down_proj = nn.Linear(d_ff, d_model, bias=False)    # W₂

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_tensor(x, "x", floating=True)
        if x.dim() == 0 or x.shape[-1] != self.gate_proj.in_features:
            raise ValueError(f"x must have last dim d_model={self.gate_proj.in_features}, got shape {tuple(x.shape)}")
        check_same_dtype(x, "x", self.gate_proj.weight)
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))   # (..., d_ff) → (..., C)


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    """(B, H_kv, T, d) → (B, H_kv · n_rep, T, d): key/value head g serves query heads g·n_rep … (g+1)·n_rep − 1.

    Each head is repeated ``n_rep`` times in a row (``torch.repeat_interleave(x, n_rep, dim=1)``), the grouping
    of Ainslie et al. (2023) and of Hugging Face's ``repeat_kv``. A view when ``n_rep == 1``.
    """
    check_tensor(x, "x", ndim=4)
    check_positive_int(n_rep, "n_rep")
    if n_rep == 1:
        return x
    B, H_kv, T, d = x.shape
    return x[:, :, None].expand(B, H_kv, n_rep, T, d).reshape(B, H_kv * n_rep, T, d)


class GroupedQueryAttention(nn.Module):
    """Causal self-attention with H query heads and H_kv ≤ H shared key/value heads (Ainslie et al. 2023).

    ``forward(x, cos, sin, cache=None)``: ``x`` (B, T, C); ``cos``/``sin`` the RoPE tables of
    :func:`coursekit.llama.rope.rope_angles` (the model holds them once for all layers). With a
    :class:`coursekit.attention.KVCache`, the new tokens sit at positions ``cache.length …`` and their rotated
    keys/values — H_kv heads, not H — are appended to it. The scores are computed by
    ``F.scaled_dot_product_attention``.
    """

    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        check_positive_int(d_model, "d_model")
        check_positive_int(n_heads, "n_heads")
        check_positive_int(n_kv_heads, "n_kv_heads")
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads}")
        if n_heads % n_kv_heads:
            raise ValueError(f"n_heads={n_heads} must be divisible by n_kv_heads={n_kv_heads} "
                             f"(each key/value head serves a whole group of query heads)")
        self.d_model, self.n_heads, self.n_kv_heads = d_model, n_heads, n_kv_heads
        self.d_head = d = d_model // n_heads
        self.q_proj = nn.Linear(d_model, n_heads * d, bias=False)       # W^Q, H heads
        self.k_proj = nn.Linear(d_model, n_kv_heads * d, bias=False)    # W^K, H_kv heads
        self.v_proj = nn.Linear(d_model, n_kv_heads * d, bias=False)    # W^V, H_kv heads
        self.o_proj = nn.Linear(n_heads * d, d_model, bias=False)       # W^O

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                cache: KVCache | None = None) -> torch.Tensor:
        check_tensor(x, "x", ndim=3, floating=True)
        if x.shape[-1] != self.d_model:
            raise ValueError(f"x must have last dim d_model={self.d_model}, got shape {tuple(x.shape)}")
        check_same_dtype(x, "x", self.q_proj.weight)
        if cache is not None and not isinstance(cache, KVCache):
            raise TypeError(f"cache must be a coursekit.attention.KVCache or None, got {type(cache).__name__}")
        T = x.shape[1]
        offset = cache.length if cache is not None else 0
        positions = torch.arange(offset, offset + T)          # (T,), on the CPU: checking it costs no device sync

        q = split_heads(self.q_proj(x), self.n_heads)                                # (B, H, T, d)
        k = split_heads(self.k_proj(x), self.n_kv_heads)                             # (B, H_kv, T, d)
        v = split_heads(self.v_proj(x), self.n_kv_heads)                             # (B, H_kv, T, d)
        q = apply_rope(q, cos, sin, positions)                                       # rotate to positions m
        k = apply_rope(k, cos, sin, positions)
        if cache is not None:
            k, v = cache.append(k, v)                                                # (B, H_kv, T_k, d)
        n_rep = self.n_heads // self.n_kv_heads
        k, v = repeat_kv(k, n_rep), repeat_kv(v, n_rep)                              # (B, H, T_k, d)

        T_k = k.shape[-2]
        if T == T_k:                                   # no cache (or an empty one): the plain triangle
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        elif T == 1:                                   # one new token: it may see every cached one
            out = F.scaled_dot_product_attention(q, k, v)
        else:                                          # T new tokens after a cache: the triangle aligned to the end
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=causal_mask(T, T_k, device=q.device))
        return self.o_proj(merge_heads(out))                                         # (B, T, C)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, n_heads={self.n_heads}, n_kv_heads={self.n_kv_heads}"

"""Rotary position embeddings, RoPE (notebook 13).

Su et al. (2021), *RoFormer: Enhanced Transformer with Rotary Position Embedding*, §3.2–3.4:

* Eq. (13)  f(x_m, m) = R_{Θ,m} x_m — rotate each pair of dimensions of a query or key at position m by the
  angle m·θ_i, with θ_i = base^(−2i/d), i = 0 … d/2 − 1 (base = 10,000);
* Eq. (14)  q_mᵀ k_n = (R_{Θ,m} W_q x_m)ᵀ (R_{Θ,n} W_k x_n) = x_mᵀ W_q R_{Θ,n−m} W_k x_n: since R_mᵀ R_n = R_{n−m},
  the score depends on the positions only through their offset n − m (relative position, for free);
* Eq. (34)  the efficient form  R x = x ⊙ cos(mθ) + rotate(x) ⊙ sin(mθ)  (no d × d matrix is ever built).

**Two layouts of the pairs.** The paper (and Meta's original Llama code, with complex numbers) rotates the
*interleaved* pairs (x_{2i}, x_{2i+1}). Hugging Face's Llama (after GPT-NeoX) rotates the *half-split* pairs
(x_i, x_{i+d/2}) with ``rotate_half``. Both turn pair i by the same angle m·θ_i; they differ only in which two
coordinates form pair i — a fixed permutation of the query/key dimensions (:func:`half_split_permutation`).
Because a score q·k is unchanged when q and k are permuted the same way, the two are the same model once
W_q and W_k are permuted (that is what HF's ``convert_llama_weights_to_hf.py`` does to Meta's weights).
We use the half-split form so that Hugging Face checkpoints import without any permutation;
:func:`rope_interleaved` is the paper's form, to show the two agree.

Shapes: ``B`` batch, ``H`` heads, ``T`` positions, ``d`` = ``d_head`` (even).
"""

from __future__ import annotations

import torch

from coursekit.validation import check_positive_float, check_positive_int, check_tensor

__all__ = ["apply_rope", "half_split_permutation", "rope_angles", "rope_interleaved", "rotate_half"]


def _check_d_head(d_head, name: str = "d_head") -> int:
    check_positive_int(d_head, name)
    if d_head % 2:
        raise ValueError(f"{name} must be even (RoPE rotates pairs of dimensions), got {d_head}")
    return d_head


def _frequencies(d_head: int, base: float, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """θ_i = base^(−2i/d), i = 0 … d/2 − 1 (Su et al. 2021, §3.2.2), computed as Hugging Face computes it."""
    return 1.0 / (base ** (torch.arange(0, d_head, 2, dtype=dtype) / d_head))          # (d/2,)


def rope_angles(d_head: int, max_len: int, base: float = 10000.0) -> tuple[torch.Tensor, torch.Tensor]:
    """The tables ``(cos, sin)``, each ``(max_len, d_head)``: row m holds cos/sin of m·θ_i in the half-split layout
    ``[θ_0 … θ_{d/2−1}, θ_0 … θ_{d/2−1}]`` (pair i is dims i and i + d/2).

    Computed in float32 exactly as Hugging Face's ``LlamaRotaryEmbedding`` does (same products, same rounding),
    so imported models agree with it to the last bits; :func:`apply_rope` casts them to the activations' dtype.
    """
    _check_d_head(d_head)
    check_positive_int(max_len, "max_len")
    base = check_positive_float(base, "base")
    theta = _frequencies(d_head, base)                                                    # (d/2,)
    angles = torch.arange(max_len, dtype=torch.float32)[:, None] * theta[None, :]         # (max_len, d/2): m·θ_i
    angles = torch.cat([angles, angles], dim=-1)                                          # (max_len, d)
    return angles.cos(), angles.sin()


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """``[x_1, x_2] → [−x_2, x_1]`` on the last dim: the 90° turn of every half-split pair (x_i, x_{i+d/2})."""
    check_tensor(x, "x")
    if x.dim() == 0:
        raise ValueError("x must have at least one dimension (..., d_head), got a scalar")
    _check_d_head(x.shape[-1], "the last dim of x (d_head)")
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
               positions: torch.Tensor | None = None) -> torch.Tensor:
    """Rotate queries or keys ``x`` (B, H, T, d) to their positions — Su et al. (2021), Eq. (34), half-split form:

        RoPE(x)_m = x_m ⊙ cos(m·θ) + rotate_half(x_m) ⊙ sin(m·θ)

    ``cos``/``sin`` are the ``(max_len, d)`` tables of :func:`rope_angles`; ``positions`` (T,) are the positions of
    the T rows (default ``0 … T−1``; a decoder with a KV cache passes ``offset … offset+T−1``). A position at or
    beyond ``max_len`` is refused: the tables stop there (and the model was never trained beyond it).
    """
    check_tensor(x, "x", ndim=4, floating=True)
    for name, t in (("cos", cos), ("sin", sin)):
        check_tensor(t, name, ndim=2, floating=True)
    if cos.shape != sin.shape:
        raise ValueError(f"cos and sin must have the same shape (max_len, d_head), got {tuple(cos.shape)} "
                         f"and {tuple(sin.shape)}")
    max_len, d = cos.shape
    if x.shape[-1] != d:
        raise ValueError(f"x must have last dim d_head={d} (that of the cos/sin tables), got shape {tuple(x.shape)}")
    _check_d_head(d, "the last dim of x (d_head)")
    T = x.shape[-2]
    if positions is None:
        if T > max_len:
            raise ValueError(f"x has {T} positions but the RoPE tables stop at max_len={max_len}")
        cos_m, sin_m = cos[:T], sin[:T]                                                   # (T, d)
    else:
        check_tensor(positions, "positions", ndim=1, dtype=(torch.int64, torch.int32))
        if positions.shape[0] != T:
            raise ValueError(f"positions must hold one position per row of x (T={T}), got shape "
                             f"{tuple(positions.shape)}")
        if T and (int(positions.min()) < 0 or int(positions.max()) >= max_len):
            raise ValueError(f"positions must lie in [0, max_len={max_len}), got values in "
                             f"[{int(positions.min())}, {int(positions.max())}]")
        positions = positions.to(cos.device)
        cos_m, sin_m = cos[positions], sin[positions]                                     # (T, d)
    cos_m = cos_m.to(device=x.device, dtype=x.dtype)
    sin_m = sin_m.to(device=x.device, dtype=x.dtype)
    return x * cos_m + rotate_half(x) * sin_m                                             # (B, H, T, d)


def rope_interleaved(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """The paper's RoPE (Su et al. 2021, Eq. 13 and §3.4.2): the interleaved pairs (x_{2i}, x_{2i+1}), read as the
    complex number z_i = x_{2i} + i·x_{2i+1}, are multiplied by e^{i·m·θ_i} — a rotation by m·θ_i.

    ``x`` (..., T, d) with d even, ``positions`` (T,). Equal to :func:`apply_rope` up to the permutation of the
    dimensions of :func:`half_split_permutation`: ``apply_rope(x[..., p]) == rope_interleaved(x)[..., p]``.
    Angles are computed in x's dtype (float32 or float64).
    """
    check_tensor(x, "x", floating=True)
    if x.dim() < 2:
        raise ValueError(f"x must have shape (..., T, d_head), got {tuple(x.shape)}")
    if x.dtype not in (torch.float32, torch.float64):
        raise TypeError(f"x must be float32 or float64 (complex arithmetic), got {x.dtype}")
    d = _check_d_head(x.shape[-1], "the last dim of x (d_head)")
    check_tensor(positions, "positions", ndim=1, dtype=(torch.int64, torch.int32))
    if positions.shape[0] != x.shape[-2]:
        raise ValueError(f"positions must hold one position per row of x (T={x.shape[-2]}), got shape "
                         f"{tuple(positions.shape)}")
    base = check_positive_float(base, "base")
    theta = _frequencies(d, base, x.dtype).to(x.device)                                  # (d/2,)
    angles = positions.to(device=x.device, dtype=x.dtype)[:, None] * theta[None, :]      # (T, d/2)
    z = torch.view_as_complex(x.reshape(*x.shape[:-1], d // 2, 2).contiguous())          # (..., T, d/2) complex
    rotated = z * torch.polar(torch.ones_like(angles), angles)                           # z · e^{i m θ}
    return torch.view_as_real(rotated).reshape(x.shape)                                  # (..., T, d)


def half_split_permutation(d_head: int) -> torch.Tensor:
    """The permutation p with ``x_half = x_interleaved[..., p]``: ``[0, 2, 4, …, d−2, 1, 3, …, d−1]``.

    Interleaved pair i is dims (2i, 2i+1); half-split pair i is dims (i, i + d/2). Taking the even dims first and
    the odd dims second puts 2i at i and 2i+1 at i + d/2. Applied to the rows of each head of W_q and W_k, it
    turns a model written for one layout into the same model for the other.
    """
    _check_d_head(d_head)
    return torch.cat([torch.arange(0, d_head, 2), torch.arange(1, d_head, 2)])

"""Exercise checks for notebook 13 (from GPT-2 to today's decoders): RoPE, attention with RoPE, RMSNorm, one
online-softmax step (FlashAttention's inner loop) and repeating key/value heads for grouped-query attention.

What the student writes:

* ``rope(x, positions)`` — rotate queries or keys ``x (B, H, T, d)`` to their ``positions (T,)`` with rotary
  position embeddings (Su et al. 2021) in the half-split layout of Hugging Face's Llama: pair i is dims
  (i, i + d/2), turned by the angle m·θ_i with θ_i = 10000^(−2i/d).
* ``rope_attention(q, k, v)`` — causal self-attention whose queries and keys (not values) are rotated to their
  positions 0 … T−1 first; ``q, k, v (B, H, T, d)`` → ``(B, H, T, d)``.
* ``rms_norm(x, weight, eps)`` — x / √(mean(x²) + ε) · g over the last dim (Zhang & Sennrich 2019, Eq. 4).
* ``online_softmax_step(m, l, acc, scores_tile, v_tile)`` — fold one tile of keys into the running max ``m``,
  denominator ``l`` and unnormalised output ``acc`` of each query row (Dao et al. 2022, Algorithm 1; Milakov &
  Gimelshein 2018); returns the new ``(m, l, acc)``.
* ``repeat_kv(x, n_rep)`` — ``(B, H_kv, T, d)`` → ``(B, H_kv·n_rep, T, d)``, key/value head g serving query heads
  g·n_rep … (g+1)·n_rep − 1 (Ainslie et al. 2023).

The references are :mod:`coursekit.llama`, computed on the check's own copies of the inputs before the student's
function runs (it gets clones). The cases vary the sizes (d other than 4, H = T where angles lined up with the wrong
axis give wrong values rather than wrong shapes, positions that do not start at 0, a large ε with small inputs, rows
with means far from 0, a tile that raises the running max, a row masked so far); every mismatch is compared with
the typical mistakes so that the message can name the one made (interleaved pairs, the wrong sign or frequency,
rotated values, LayerNorm's mean, ε outside the square root, a running sum or output not rescaled, ``repeat``
instead of ``repeat_interleave``, …).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from coursekit.exercises.core import (
    CheckFailed,
    case_generator,
    describe,
    exercise_check,
    expect_close,
    mistake_value,
    require_function,
    run_student,
)
from coursekit.llama.flash import online_softmax_update
from coursekit.llama.layers import RMSNorm, repeat_kv
from coursekit.llama.rope import apply_rope, rope_angles, rope_interleaved

__all__ = ["check_online_softmax_step", "check_repeat_kv", "check_rms_norm", "check_rope", "check_rope_attention"]

BASE = 10000.0



def _float_tensor(got: Any, shape: tuple[int, ...], case: str, what: str) -> torch.Tensor:
    """``got`` must be a floating tensor of ``shape`` (a specific message otherwise)."""
    if not isinstance(got, torch.Tensor) or not got.is_floating_point() or tuple(got.shape) != shape:
        raise CheckFailed(f"on {case}, expected {what} as a floating-point tensor of shape {shape}, "
                          f"got {describe(got)}")
    return got


# ----------------------------------------------------------------------------------------------
# RoPE on one tensor
# ----------------------------------------------------------------------------------------------

def _rope_reference(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    cos, sin = rope_angles(x.shape[-1], int(positions.max()) + 1, BASE)
    return apply_rope(x, cos.to(x.dtype), sin.to(x.dtype), positions)


def _rotate(x: torch.Tensor, angles: torch.Tensor, *, interleaved: bool = False, sign: float = 1.0,
            swap_cos_sin: bool = False, rotate_sign: float = 1.0) -> torch.Tensor:
    """x rotated by ``angles`` (T, d/2) pair by pair, with a switch for each typical mistake."""
    cos, sin = angles.cos().to(x.dtype), (sign * angles).sin().to(x.dtype)          # (T, d/2)
    if swap_cos_sin:
        cos, sin = sin, cos
    if interleaved:
        a, b = x[..., 0::2], x[..., 1::2]                                           # pairs (2i, 2i+1)
    else:
        a, b = x.chunk(2, dim=-1)                                                   # pairs (i, i + d/2)
    first = a * cos - rotate_sign * b * sin
    second = b * cos + rotate_sign * a * sin
    if interleaved:
        return torch.stack([first, second], dim=-1).flatten(-2)
    return torch.cat([first, second], dim=-1)


def _angles(positions: torch.Tensor, d: int, exponent: str = "2i/d") -> torch.Tensor:
    """m·θ_i for each position m and pair i, (T, d/2) — or, with a typical mistake, other frequencies."""
    i = torch.arange(d // 2, dtype=torch.float64)
    theta = {"2i/d": BASE ** (-2 * i / d), "i/d": BASE ** (-i / d), "2i": BASE ** (-2 * i)}[exponent]
    return positions.to(torch.float64)[:, None] * theta[None, :]                      # (T, d/2)


def _one_angle_per_dim(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """The table built with torch.arange(d) instead of torch.arange(0, d, 2): every dim its own angle."""
    d = x.shape[-1]
    angles = positions.to(torch.float64)[:, None] * BASE ** (-torch.arange(d, dtype=torch.float64) / d)[None, :]
    x1, x2 = x.chunk(2, dim=-1)
    return x * angles.cos().to(x.dtype) + torch.cat([-x2, x1], dim=-1) * angles.sin().to(x.dtype)


def _rope_mistakes(x: torch.Tensor, positions: torch.Tensor) -> dict[str, Any]:
    d, T = x.shape[-1], x.shape[-2]
    angles = _angles(positions, d)
    zero_based = torch.arange(T)
    mistakes = {
        "you rotated the interleaved pairs (x_2i, x_2i+1) — the paper's layout; this exercise (and Hugging Face's "
        "Llama) pairs dim i with dim i + d/2 (the two halves of the last dim)":
            mistake_value(rope_interleaved, x.double(), positions),
        "the rotation goes the wrong way (by −m·θ): the rotated pair is (a·cos − b·sin, b·cos + a·sin), "
        "i.e. x·cos + rotate_half(x)·sin with rotate_half(x) = [−x2, x1]": _rotate(x, angles, sign=-1.0),
        "cos and sin are swapped: x·cos(mθ) + rotate_half(x)·sin(mθ)": _rotate(x, angles, swap_cos_sin=True),
        "the frequencies are θ_i = 10000^(−i/d); the exponent is −2i/d (i = 0 … d/2 − 1)":
            _rotate(x, _angles(positions, d, "i/d")),
        "the frequencies are θ_i = 10000^(−2i); the exponent is −2i/d (divide by d)":
            _rotate(x, _angles(positions, d, "2i")),
        "every dim got its own angle (a table built from torch.arange(d)): the two dims of pair i (i and i + d/2) "
        "share ONE angle m·θ_i — build θ from torch.arange(0, d, 2) / d and repeat it for both halves":
            _one_angle_per_dim(x, positions),
        "the positions were ignored (0 … T−1 used): rotate row t by positions[t]·θ, the rows may not start at 0":
            _rotate(x, _angles(zero_based, d)) if not torch.equal(positions, zero_based) else None,
        "nothing was rotated: x came back unchanged": x,
    }
    if x.shape[1] == T:     # H = T: positions applied along the head axis instead of time
        cos = angles.cos().to(x.dtype)[:, None, :]                                  # (H=T, 1, d/2)
        sin = angles.sin().to(x.dtype)[:, None, :]
        a, b = x.chunk(2, dim=-1)
        mistakes["the rows were rotated by their index along the wrong axis: the positions index the time axis "
                 "(dim −2), not the heads"] = torch.cat([a * cos - b * sin, b * cos + a * sin], dim=-1)
    return mistakes


def _rope_cases():
    g = case_generator(0)
    yield ("x (1, 1, 3, 4) at positions [0, 1, 2]", torch.randn(1, 1, 3, 4, generator=g), torch.arange(3))
    yield ("x (2, 3, 5, 8) at positions [7 … 11] (after 7 cached tokens)",
           torch.randn(2, 3, 5, 8, generator=g), torch.arange(7, 12))
    yield ("x (1, 4, 4, 16) (H = T) at positions [0 … 3]", torch.randn(1, 4, 4, 16, generator=g), torch.arange(4))
    yield ("x (2, 2, 6, 6) (d = 6, three pairs) at positions [100 … 105]",
           torch.randn(2, 2, 6, 6, generator=g), torch.arange(100, 106))
    yield ("x (1, 2, 4, 32) at positions [3, 9, 0, 60] (any order)",
           torch.randn(1, 2, 4, 32, generator=g), torch.tensor([3, 9, 0, 60]))
    yield ("x (1, 1, 2, 8) in float64 at positions [5, 6]",
           torch.randn(1, 1, 2, 8, generator=g, dtype=torch.float64), torch.tensor([5, 6]))


@exercise_check("RoPE: rotate queries or keys to their positions", reimplements=(
    "coursekit.llama.rope.apply_rope", "coursekit.llama.rope.rope_interleaved", "coursekit.llama.rope.rotate_half",
    "coursekit.llama.rope.rope_angles"))
def check_rope(student_fn: Callable) -> None:
    """``student_fn(x (B, H, T, d), positions (T,))`` → x rotated, half-split pairs, θ_i = 10000^(−2i/d)."""
    require_function(student_fn, "rope")
    for case, x, positions in _rope_cases():
        want = _rope_reference(x.clone(), positions.clone())
        mistakes = _rope_mistakes(x.clone(), positions.clone())
        got = run_student(student_fn, case, x.clone(), positions.clone())
        B, H, T, d = x.shape
        if isinstance(got, torch.Tensor) and got.dim() == 4 and got.shape != x.shape and got.shape[1] == T != H:
            raise CheckFailed(f"on {case}, expected the rotated tensor of shape {tuple(x.shape)}, got {describe(got)}. "
                              "It looks like the angles were lined up with the head axis: the rows were rotated by "
                              "their index along the wrong axis — the positions index the time axis (dim −2), so a "
                              "(T, d) table of cos/sin broadcasts over (B, H, T, d) as it is.")
        _float_tensor(got, tuple(x.shape), case, "the rotated tensor (B, H, T, d)")
        # atol 1e-4: the angles m·θ may be computed in float32 (as Hugging Face does) or in float64
        expect_close(got, want, case=case, what="the rotated tensor", atol=1e-4, rtol=1e-4, mistakes=mistakes)


# ----------------------------------------------------------------------------------------------
# attention with RoPE
# ----------------------------------------------------------------------------------------------

def _rope_attention_variant(q, k, v, *, rotate=("q", "k"), causal=True, interleaved=False, scale=True,
                            softmax_dim=-1):
    T = q.shape[-2]
    positions = torch.arange(T)
    if interleaved:
        def rot(t):
            return rope_interleaved(t, positions)
    else:
        cos, sin = rope_angles(q.shape[-1], T, BASE)

        def rot(t):
            return apply_rope(t, cos.to(t.dtype), sin.to(t.dtype), positions)
    q = rot(q) if "q" in rotate else q
    k = rot(k) if "k" in rotate else k
    v = rot(v) if "v" in rotate else v
    if softmax_dim != -1:                                    # a mistake: written out, normalised over other axis
        scores = (q @ k.transpose(-2, -1)) / (q.shape[-1] ** 0.5 if scale else 1.0)        # (B, H, T, T)
        if causal:
            scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        return torch.softmax(scores, dim=softmax_dim) @ v
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=None if scale else 1.0)


def _rope_attention_mistakes(q, k, v) -> dict[str, Any]:
    def m(**kw):
        return mistake_value(lambda: _rope_attention_variant(q, k, v, **kw))

    return {
        "the values were rotated too: RoPE turns queries and keys only (the score q·k is what must depend on the "
        "offset); the values are mixed as they are": m(rotate=("q", "k", "v")),
        "only the queries were rotated: rotate the keys too (q_m·k_n then depends on m − n only)": m(rotate=("q",)),
        "only the keys were rotated: rotate the queries too": m(rotate=("k",)),
        "the queries and keys were not rotated at all (plain causal attention)": m(rotate=()),
        "the causal mask is missing: a position must not attend to later ones": m(causal=False),
        "the scores are not divided by √d": m(scale=False),
        "you rotated the interleaved pairs (x_2i, x_2i+1); pair dim i with dim i + d/2 (the two halves)":
            m(interleaved=True),
        "the softmax is taken over the wrong axis (over the queries, dim=-2): each query's weights over the keys "
        "must sum to 1, so normalise over the last axis (dim=-1)": m(softmax_dim=-2),
    }


def _rope_attention_cases():
    g = case_generator(1)
    for B, H, T, d, scale in ((1, 1, 4, 8, 1.0), (2, 3, 6, 16, 1.0), (2, 2, 5, 4, 2.0), (1, 4, 7, 32, 1.0)):
        q, k, v = (scale * torch.randn(B, H, T, d, generator=g) for _ in range(3))
        yield f"q, k, v of shape {(B, H, T, d)}", q, k, v


@exercise_check("attention with RoPE", reimplements=(
    "coursekit.llama.rope.apply_rope", "coursekit.llama.rope.rope_interleaved", "coursekit.llama.rope.rotate_half",
    "coursekit.llama.rope.rope_angles", "coursekit.llama.layers.GroupedQueryAttention"))
def check_rope_attention(student_fn: Callable) -> None:
    """``student_fn(q, k, v (B, H, T, d))`` → causal attention of the rotated queries and keys, ``(B, H, T, d)``."""
    require_function(student_fn, "rope_attention")
    for case, q, k, v in _rope_attention_cases():
        want = _rope_attention_variant(q.clone(), k.clone(), v.clone())
        mistakes = _rope_attention_mistakes(q.clone(), k.clone(), v.clone())
        got = run_student(student_fn, case, q.clone(), k.clone(), v.clone())
        _float_tensor(got, tuple(q.shape), case, "the attention output (B, H, T, d)")
        expect_close(got, want, case=case, what="the attention output", atol=1e-5, rtol=1e-4, mistakes=mistakes)


# ----------------------------------------------------------------------------------------------
# RMSNorm
# ----------------------------------------------------------------------------------------------

def _rms_reference(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    norm = RMSNorm(x.shape[-1], eps).to(x.dtype)
    with torch.no_grad():
        norm.weight.copy_(weight)
        return norm(x)


def _rms_mistakes(x: torch.Tensor, weight: torch.Tensor, eps: float) -> dict[str, Any]:
    ms = x.pow(2).mean(-1, keepdim=True)
    centred = x - x.mean(-1, keepdim=True)
    mistakes = {
        "you subtracted the mean first: that is LayerNorm (without its bias). RMSNorm divides x itself by "
        "√(mean(x²) + ε) — no centring": centred / torch.sqrt(centred.pow(2).mean(-1, keepdim=True) + eps) * weight,
        "ε was added outside the square root: divide by √(mean(x²) + ε), not √(mean(x²)) + ε":
            x / (ms.sqrt() + eps) * weight,
        "ε is missing: divide by √(mean(x²) + ε)": x / ms.sqrt() * weight,
        "the square root is missing: divide by √(mean(x²) + ε), the ROOT mean square": x / (ms + eps) * weight,
        "the gain (weight) is missing: multiply the normalised x by weight": x / torch.sqrt(ms + eps),
        "you used the sum of squares instead of the mean (x / ‖x‖): divide by the number of features":
            x / torch.sqrt(x.pow(2).sum(-1, keepdim=True) + eps) * weight,
        "you divided by the standard deviation (x.std(), which subtracts the mean): RMSNorm uses the root mean "
        "square √(mean(x²))": x / torch.sqrt(x.var(-1, keepdim=True) + eps) * weight,
        "the mean of the squares runs over the wrong dimension: use the last one (dim=-1, the features)":
            x / torch.sqrt(x.pow(2).mean(0, keepdim=True) + eps) * weight if x.dim() > 1 else None,
        "the mean runs over the whole tensor: each vector (the last dim) has its own RMS":
            x / torch.sqrt(x.pow(2).mean() + eps) * weight,
        "the gain was added instead of multiplied": x / torch.sqrt(ms + eps) + weight,
    }
    if x.dim() > 1 and x.shape[-2] == x.shape[-1]:
        mistakes["the mean ran over dim=-2: use dim=-1 (the features of each vector)"] = (
            x / torch.sqrt(x.pow(2).mean(-2, keepdim=True) + eps) * weight)
    return mistakes


def _rms_cases():
    g = case_generator(2)
    yield "x (2, 3, 8), gains near 1, eps = 1e-6", torch.randn(2, 3, 8, generator=g), \
        1 + 0.3 * torch.randn(8, generator=g), 1e-6
    yield "x (4, 4) (rows = features), eps = 1e-5", torch.randn(4, 4, generator=g), \
        torch.rand(4, generator=g) + 0.5, 1e-5
    small = 0.1 * torch.randn(3, 6, generator=g)
    yield "x (3, 6) with small values (RMS ≈ 0.1) and a large eps = 0.01", small, \
        torch.rand(6, generator=g) + 0.5, 0.01
    shifted = torch.randn(2, 5, generator=g) + torch.tensor([[4.0], [-3.0]])
    yield "x (2, 5) whose rows have means far from 0 (+4 and −3), eps = 1e-6", shifted, \
        torch.rand(5, generator=g) + 0.5, 1e-6
    yield "one vector x (10,) on a large scale (×50), eps = 0.5", 50 * torch.randn(10, generator=g), \
        torch.rand(10, generator=g) + 0.5, 0.5
    yield "x (1, 2, 7) in float64, eps = 1e-6", torch.randn(1, 2, 7, generator=g, dtype=torch.float64), \
        torch.rand(7, generator=g, dtype=torch.float64) + 0.5, 1e-6


@exercise_check("RMSNorm", reimplements=(
    "coursekit.llama.layers.RMSNorm", "torch.nn.RMSNorm", "torch.nn.functional.rms_norm"))
def check_rms_norm(student_fn: Callable) -> None:
    """``student_fn(x (..., C), weight (C,), eps)`` → x / √(mean(x²) + ε) · weight over the last dim."""
    require_function(student_fn, "rms_norm")
    for case, x, weight, eps in _rms_cases():
        want = _rms_reference(x.clone(), weight.clone(), eps)
        mistakes = _rms_mistakes(x.clone(), weight.clone(), eps)
        got = run_student(student_fn, case, x.clone(), weight.clone(), eps)
        _float_tensor(got, tuple(x.shape), case, "the normalised x")
        expect_close(got, want, case=case, what="the normalised x", atol=1e-5, rtol=1e-4, mistakes=mistakes)


# ----------------------------------------------------------------------------------------------
# one online-softmax step
# ----------------------------------------------------------------------------------------------

def _online_mistakes(m, l, acc, S, v) -> dict[str, Any]:  # noqa: E741 - l: the paper's ℓ
    m_new = torch.maximum(m, S.amax(-1, keepdim=True))
    P = torch.exp(S - m_new)
    alpha = torch.exp(m - m_new)
    P_old = torch.exp(S - m)
    return {
        "the running sum l was not rescaled: l_new = exp(m_old − m_new)·l + rowsum(P) — everything summed so far "
        "was computed with the old max": ("l", l + P.sum(-1, keepdim=True)),
        "the running output acc was not rescaled: acc_new = exp(m_old − m_new)·acc + P @ v_tile":
            ("acc", acc + P @ v),
        "the rescaling factor is upside down: multiply the old l and acc by exp(m_old − m_new) ≤ 1, "
        "not exp(m_new − m_old)": ("l", torch.exp(m_new - m) * l + P.sum(-1, keepdim=True)),
        "the tile's exponentials use the OLD max: P = exp(S_tile − m_new), with m_new = max(m_old, rowmax(S_tile))":
            ("l", alpha * l + P_old.sum(-1, keepdim=True)),
        "the tile's exponentials use the OLD max (P = exp(S_tile − m_old)); use m_new = max(m_old, rowmax)":
            ("acc", alpha * acc + P_old @ v),
        "the new max is the tile's own max: m_new = max(m_old, rowmax(S_tile)) keeps the larger of the two":
            ("m", S.amax(-1, keepdim=True)),
        "acc was normalised (divided by l): keep it unnormalised, Σ exp(S − m)·v; the division by l happens once, "
        "after the last tile": ("acc", (alpha * acc + P @ v) / (alpha * l + P.sum(-1, keepdim=True))),
        "the tile's values were not used: acc adds P @ v_tile": ("acc", alpha * acc + P.sum(-1, keepdim=True)),
    }


def _online_cases():
    g = case_generator(3)
    # the start: m = −∞, l = 0, acc = 0
    S = torch.randn(2, 3, 4, generator=g)
    v = torch.randn(2, 4, 5, generator=g)
    yield ("the first tile (m = −∞, l = 0, acc = 0), scores (2, 3, 4), v_tile (2, 4, 5)",
           torch.full((2, 3, 1), float("-inf")), torch.zeros(2, 3, 1), torch.zeros(2, 3, 5), S, v)
    # a running state after one tile, where the new tile raises the max of some rows and not of others
    for shape, (rows, b, dv), scale in (((1, 2), (3, 3, 4), 2.0), ((2,), (4, 2, 6), 3.0), ((1,), (2, 5, 3), 1.0)):
        m = torch.randn(*shape, rows, 1, generator=g)
        l = 1 + torch.rand(*shape, rows, 1, generator=g)  # noqa: E741
        acc = torch.randn(*shape, rows, dv, generator=g)
        S = scale * torch.randn(*shape, rows, b, generator=g)
        v = torch.randn(*shape, b, dv, generator=g)
        yield (f"a running state (rows {rows}, d_v {dv}, batch dims {shape}) and a tile of {b} keys (scores ×{scale})",
               m, l, acc, S, v)
    # every row's max rises by a lot: an un-rescaled l or acc is off by a factor e^10
    m = torch.zeros(1, 3, 1)
    yield ("a tile whose scores exceed the running max by ≈ 10 in every row", m, torch.ones(1, 3, 1),
           torch.randn(1, 3, 2, generator=g), 10 + torch.randn(1, 3, 4, generator=g), torch.randn(1, 4, 2, generator=g))
    # a row with everything masked so far meets a fully masked tile: no NaN
    S = torch.randn(1, 2, 3, generator=g)
    S[0, 1] = float("-inf")
    m = torch.tensor([[[0.5], [float("-inf")]]])
    l = torch.tensor([[[1.5], [0.0]]])  # noqa: E741
    acc = torch.cat([torch.randn(1, 1, 4, generator=g), torch.zeros(1, 1, 4)], dim=1)
    yield ("a state whose row 1 is masked so far (m = −∞, l = 0) and whose tile is fully masked in that row "
           "(all scores −∞)", m, l, acc, S, torch.randn(1, 3, 4, generator=g))


@exercise_check("one online-softmax step", reimplements=(
    "coursekit.llama.flash.online_softmax_update", "coursekit.llama.flash.tiled_attention"))
def check_online_softmax_step(student_fn: Callable) -> None:
    """``student_fn(m, l, acc, scores_tile, v_tile)`` → the new ``(m, l, acc)`` of the online softmax."""
    require_function(student_fn, "online_softmax_step")
    for case, *inputs in _online_cases():
        m_want, l_want, acc_want = online_softmax_update(*(t.clone() for t in inputs))
        mistakes = _online_mistakes(*(t.clone() for t in inputs))
        result = run_student(student_fn, case, *(t.clone() for t in inputs))
        if not isinstance(result, (tuple, list)) or len(result) != 3:
            raise CheckFailed(f"on {case}, return the new state (m, l, acc); got {describe(result)}")
        names = ("m", "l", "acc")
        for name, got, want in zip(names, result, (m_want, l_want, acc_want)):
            hint = ""
            if isinstance(got, torch.Tensor) and got.dim() == want.dim() - 1 and name in ("m", "l"):
                hint = f" (keep the last dim: {name} is (…, T_q, 1) — use keepdim=True)"
            if not isinstance(got, torch.Tensor) or not got.is_floating_point() or got.shape != want.shape:
                raise CheckFailed(f"on {case}, expected {name} as a floating-point tensor of shape "
                                  f"{tuple(want.shape)}, got {describe(got)}{hint}")
        masked_rows = (m_want == float("-inf"))                                       # (…, T_q, 1)
        for name, got, want in zip(names, result, (m_want, l_want, acc_want)):
            nan = torch.isnan(got)
            if nan.any() and not torch.isnan(want).any() and bool(masked_rows.expand_as(nan)[nan].all()):
                raise CheckFailed(
                    f"on {case}, {name} contains NaN in a row masked so far (m = −∞) that meets a fully masked tile: "
                    "exp(S − m_new) and exp(m_old − m_new) are exp(−∞ − (−∞)) = exp(NaN) there. Subtract 0 instead "
                    "of −∞ in such rows (m_safe = m_new.masked_fill(m_new == float('-inf'), 0)), so that their l "
                    "and acc stay 0 and m stays −∞")
            expect_close(got, want, case=case, what=name, atol=1e-5, rtol=1e-4,
                         mistakes={hint: value for hint, (which, value) in mistakes.items() if which == name})


# ----------------------------------------------------------------------------------------------
# repeat_kv
# ----------------------------------------------------------------------------------------------

def _repeat_mistakes(x: torch.Tensor, n_rep: int) -> dict[str, Any]:
    B, H_kv, T, d = x.shape
    return {
        "the heads were repeated as a block (x.repeat(1, n_rep, 1, 1), or a new axis expanded in FRONT of the heads: "
        "heads 0, 1, …, 0, 1, …); each key/value head must serve n_rep NEIGHBOURING query heads (0, 0, …, 1, 1, …): "
        "torch.repeat_interleave(x, n_rep, dim=1), or x[:, :, None].expand(…) then reshape":
            x.repeat(1, n_rep, 1, 1),
        "the repetition ran along the time axis and was reshaped into heads: repeat each head along dim=1":
            x.repeat_interleave(n_rep, dim=2).reshape(B, H_kv * n_rep, T, d),
    }


def _repeat_cases():
    g = case_generator(4)
    yield "x (1, 2, 3, 4) with n_rep = 2 (4 query heads)", torch.randn(1, 2, 3, 4, generator=g), 2
    yield "x (2, 3, 5, 8) with n_rep = 4", torch.randn(2, 3, 5, 8, generator=g), 4
    yield "x (1, 2, 2, 2) (H_kv = T = d) with n_rep = 2", torch.randn(1, 2, 2, 2, generator=g), 2
    yield "x (3, 4, 2, 6) with n_rep = 3", torch.randn(3, 4, 2, 6, generator=g), 3
    yield "x (2, 1, 4, 6) with n_rep = 8 (multi-query: one key/value head)", torch.randn(2, 1, 4, 6, generator=g), 8
    yield "x (2, 4, 3, 5) with n_rep = 1 (multi-head: nothing to repeat)", torch.randn(2, 4, 3, 5, generator=g), 1


@exercise_check("repeat key/value heads for GQA", reimplements=("coursekit.llama.layers.repeat_kv",))
def check_repeat_kv(student_fn: Callable) -> None:
    """``student_fn(x (B, H_kv, T, d), n_rep)`` → ``(B, H_kv·n_rep, T, d)``, head g at g·n_rep … (g+1)·n_rep − 1."""
    require_function(student_fn, "repeat_kv")
    for case, x, n_rep in _repeat_cases():
        want = repeat_kv(x.clone(), n_rep)
        B, H_kv, T, d = x.shape
        got = run_student(student_fn, case, x.clone(), n_rep)
        if isinstance(got, torch.Tensor) and got.shape != want.shape:
            hint = ""
            if tuple(got.shape) == (B, H_kv, n_rep, T, d):
                hint = " It looks like the new axis was not merged into the heads: reshape to (B, H_kv·n_rep, T, d)."
            elif tuple(got.shape) == (B * n_rep, H_kv, T, d):
                hint = " It looks like the batch axis (dim=0) was repeated; repeat the heads (dim=1)."
            elif tuple(got.shape) in ((B, H_kv, T * n_rep, d), (B, H_kv, T, d * n_rep)):
                hint = " It looks like the wrong axis was repeated; repeat the heads (dim=1)."
            raise CheckFailed(f"on {case}, expected a float tensor of shape {tuple(want.shape)}, got "
                              f"{describe(got)}.{hint}")
        _float_tensor(got, tuple(want.shape), case, "the repeated keys/values")
        expect_close(got, want, case=case, what="the repeated tensor", atol=0.0, rtol=0.0,
                     mistakes=_repeat_mistakes(x.clone(), n_rep))


"""Exercise checks for notebook 07 (self-attention).

What the student writes:

* ``attention(q, k, v, mask=None)`` — softmax(q kᵀ / √d_k) v with q ``(..., T_q, d_k)``, k
  ``(..., T_k, d_k)``, v ``(..., T_k, d_v)`` and an optional bool ``mask`` (True = may attend),
  broadcastable to ``(..., T_q, T_k)``. It may return the output or ``(output, weights)``.
* ``causal_mask(T)`` — the ``(T, T)`` bool mask, True where query ``i`` may attend to key ``j``.
* ``split_heads(x, n_heads)`` ``(B, T, C) -> (B, H, T, C/H)`` and ``merge_heads(x)`` back.
* ``multi_head_attention(x, W_q, W_k, W_v, W_o, n_heads)`` — self-attention of ``x (B, T, C)``
  with ``(C, C)`` projection matrices applied as ``x @ W``.

The references are :mod:`coursekit.attention`; every mismatch is compared with the typical mistakes
(softmax over the wrong axis, missing 1/√d_k, mask after the softmax, causal mask off by one, heads
split without the transpose, …) so the message can name the one that was made.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from coursekit.attention import causal_mask, merge_heads, scaled_dot_product_attention, split_heads
from coursekit.exercises.core import (
    CheckFailed,
    describe,
    exercise_check,
    expect_close,
    mistake_value,
    require_function,
    run_student,
)

__all__ = [
    "check_causal_mask",
    "check_merge_heads",
    "check_multi_head_attention",
    "check_scaled_dot_product_attention",
    "check_split_heads",
]


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _output(result: Any) -> Any:
    """Accept ``out`` or ``(out, weights)``."""
    return result[0] if isinstance(result, (tuple, list)) and len(result) == 2 else result


# ----------------------------------------------------------------------------------------------
# scaled dot-product attention
# ----------------------------------------------------------------------------------------------

def _sdpa_cases():
    g = _gen(0)
    pad = torch.tensor([[True] * 5, [True] * 3 + [False] * 2]).view(2, 1, 5)   # (B, 1, T_k)
    yield "q, k, v of shape (2, 4, 8) (square, no mask)", [torch.randn(2, 4, 8, generator=g) for _ in range(3)], None
    q, k, v = torch.randn(2, 3, 6, generator=g), torch.randn(2, 5, 6, generator=g), torch.randn(2, 5, 4, generator=g)
    yield "q (2, 3, 6), k (2, 5, 6), v (2, 5, 4) (T_q != T_k, d_v != d_k)", [q, k, v], None
    q, k, v = (torch.randn(2, 5, 16, generator=g) for _ in range(3))
    yield "q, k, v (2, 5, 16) with a padding mask (the second sequence has 3 real keys)", [q, k, v], pad
    q, k, v = (torch.randn(1, 2, 6, 4, generator=g) for _ in range(3))
    yield "q, k, v (1, 2, 6, 4) (batch, heads) with a causal mask", [q, k, v], causal_mask(6)


def _sdpa_mistakes(q, k, v, mask) -> dict[str, Any]:
    d_k = q.shape[-1]
    scores = q @ k.transpose(-2, -1)
    neg = float("-inf")

    def finish(s, dim=-1):
        if mask is not None:
            s = s.masked_fill(~mask, neg)
        return torch.softmax(s, dim=dim) @ v

    out = {
        "the softmax is over the wrong axis: normalise over the keys (dim=-1), so each query's weights sum to 1":
            mistake_value(lambda: finish(scores / math.sqrt(d_k), dim=-2)),
        "the 1/sqrt(d_k) scaling is missing (divide the scores q·k by sqrt(d_k) before the softmax)":
            mistake_value(lambda: finish(scores)),
        "the scores were divided by d_k instead of sqrt(d_k)": mistake_value(lambda: finish(scores / d_k)),
        "the scores were divided by sqrt(d_v) (the value width); the scale is sqrt(d_k) = sqrt(q.shape[-1])":
            mistake_value(lambda: finish(scores / math.sqrt(v.shape[-1]))) if v.shape[-1] != d_k else None,
        "the output is the attention weights: multiply the weights by v":
            mistake_value(lambda: torch.softmax((scores / math.sqrt(d_k)).masked_fill(~mask, neg)
                                           if mask is not None else scores / math.sqrt(d_k), -1)),
    }
    if mask is not None:
        w = torch.softmax(scores / math.sqrt(d_k), dim=-1)
        out.update({
            "the mask is applied after the softmax (zeroing weights there leaves rows that no longer sum to 1): "
            "fill masked scores with -inf *before* the softmax":
                mistake_value(lambda: (w * mask) @ v),
            "the mask is ignored": mistake_value(lambda: w @ v),
            "the mask is inverted: True means 'may attend', so fill the positions where mask is False":
                mistake_value(lambda: _inverted(scores / math.sqrt(d_k), mask, v)),
            "masked scores were set to 0 instead of -inf (exp(0) = 1 still gives them weight)":
                mistake_value(lambda: torch.softmax((scores / math.sqrt(d_k)).masked_fill(~mask, 0.0), -1) @ v),
        })
    return out


def _inverted(scaled: torch.Tensor, mask: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return torch.softmax(scaled.masked_fill(mask, float("-inf")), -1) @ v


@exercise_check("scaled dot-product attention",
                reimplements=("coursekit.attention.scaled_dot_product_attention",
                              "coursekit.attention.core.scaled_dot_product_attention",
                              "torch.nn.functional.scaled_dot_product_attention"))
def check_scaled_dot_product_attention(attention: Callable) -> None:
    """``attention(q, k, v, mask=None)`` against :func:`coursekit.attention.scaled_dot_product_attention`."""
    require_function(attention, "attention")
    for case, (q, k, v), mask in _sdpa_cases():
        want, _ = scaled_dot_product_attention(q, k, v, mask)
        args = (q.clone(), k.clone(), v.clone()) + ((mask.clone(),) if mask is not None else ())
        got = _output(run_student(attention, case, *args))
        expect_close(got, want, case=case, mistakes=_sdpa_mistakes(q, k, v, mask))


# ----------------------------------------------------------------------------------------------
# causal mask
# ----------------------------------------------------------------------------------------------

@exercise_check("causal mask", reimplements=("coursekit.attention.causal_mask",
                                              "coursekit.attention.core.causal_mask"))
def check_causal_mask(make_mask: Callable[[int], torch.Tensor]) -> None:
    """``make_mask(T) -> (T, T)`` bool, True where query ``i`` may attend to key ``j`` (``j <= i``)."""
    require_function(make_mask, "causal mask")
    for T in (4, 7, 1):
        case = f"T={T}"
        got = run_student(make_mask, case, T)
        want = causal_mask(T)
        if not isinstance(got, torch.Tensor):
            raise CheckFailed(f"on {case}, the mask should be a bool tensor of shape {(T, T)}, got {describe(got)}")
        if got.dtype != torch.bool:
            if got.shape == want.shape and torch.equal(got != 0, want):
                raise CheckFailed(f"on {case}, the pattern is right but the dtype is {got.dtype}: return a bool "
                                  "tensor (e.g. `.bool()`), which masked_fill and F.scaled_dot_product_attention "
                                  "read as True = may attend")
            if got.shape == want.shape and torch.equal(got == 0, want):
                raise CheckFailed(f"on {case}, this looks like an additive float mask (0 / -inf): the course's "
                                  "masks are bool with True = may attend")
            got = got != 0
        ones = torch.ones(T, T, dtype=torch.bool)
        expect_close(got, want, case=case, what="the mask", mistakes={
            "the mask is off by one: a position may attend to itself (keep the diagonal, j <= i, torch.tril(…, 0))":
                torch.tril(ones, diagonal=-1),
            "the mask is off by one the other way: it lets position i see i + 1 (use diagonal=0)":
                torch.tril(ones, diagonal=1),
            "the mask is transposed: queries are rows, so row i must be True for keys j <= i (lower triangle)":
                torch.triu(ones),
            "the mask is inverted (True where attention is forbidden); here True = may attend":
                ~torch.tril(ones),
        })


# ----------------------------------------------------------------------------------------------
# split / merge heads
# ----------------------------------------------------------------------------------------------

def _head_cases():
    for seed, (B, T, C, H) in enumerate([(2, 3, 8, 4), (1, 5, 6, 2), (3, 4, 12, 3)]):
        yield f"x of shape {(B, T, C)} with n_heads={H}", torch.randn(B, T, C, generator=_gen(seed)), H


@exercise_check("split heads", reimplements=("coursekit.attention.split_heads",
                                              "coursekit.attention.core.split_heads"))
def check_split_heads(split: Callable[[torch.Tensor, int], torch.Tensor]) -> None:
    """``split(x (B, T, C), n_heads) -> (B, H, T, C/H)``; head h holds features ``h*D … (h+1)*D - 1``."""
    require_function(split, "split_heads")
    for case, x, H in _head_cases():
        B, T, C = x.shape
        got = run_student(split, case, x.clone(), H)
        expect_close(got, split_heads(x, H), case=case, mistakes={
            "the tensor was viewed straight as (B, H, T, D): view as (B, T, H, D) first, then transpose(1, 2)":
                x.reshape(B, H, T, C // H),
            "the features were split as (D, H) instead of (H, D), which interleaves the heads: "
            "view as (B, T, H, D)": x.view(B, T, C // H, H).permute(0, 3, 1, 2),
        })


@exercise_check("merge heads", reimplements=("coursekit.attention.merge_heads",
                                              "coursekit.attention.core.merge_heads"))
def check_merge_heads(merge: Callable[[torch.Tensor], torch.Tensor]) -> None:
    """``merge(x (B, H, T, D)) -> (B, T, H*D)``, the inverse of split_heads."""
    require_function(merge, "merge_heads")
    for case, x, H in _head_cases():
        h = split_heads(x, H).contiguous()  # as attention outputs (w @ v) are
        B, _, T, D = h.shape
        case = f"heads of shape {tuple(h.shape)}"
        got = run_student(merge, case, h.clone())
        expect_close(got, merge_heads(h), case=case, mistakes={
            "the heads were reshaped to (B, T, H*D) without transposing back first: transpose(1, 2), then reshape":
                h.reshape(B, T, H * D),
            "the head axis ended up last (D, H order) — the concatenation must be head after head":
                h.permute(0, 2, 3, 1).reshape(B, T, H * D),
        })
        if not torch.equal(got, x):
            raise CheckFailed(f"on {case}, merge(split(x)) does not give x back")


# ----------------------------------------------------------------------------------------------
# multi-head self-attention from weight matrices
# ----------------------------------------------------------------------------------------------

def _mha_reference(x, W_q, W_k, W_v, W_o, H, *, scale_by=None, no_out=False, one_head=False):
    q, k, v = x @ W_q, x @ W_k, x @ W_v                       # (B, T, C)
    if one_head:
        H = 1
    q, k, v = (split_heads(t, H) for t in (q, k, v))          # (B, H, T, D)
    d = q.shape[-1] if scale_by is None else scale_by
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d), dim=-1)
    out = merge_heads(w @ v)                                  # (B, T, C)
    return out if no_out else out @ W_o


@exercise_check("multi-head self-attention",
                reimplements=("coursekit.attention.MultiHeadAttention", "torch.nn.MultiheadAttention",
                              "torch.nn.functional.multi_head_attention_forward"))
def check_multi_head_attention(mha: Callable) -> None:
    """``mha(x (B, T, C), W_q, W_k, W_v, W_o (C, C), n_heads) -> (B, T, C)`` (projections as ``x @ W``)."""
    require_function(mha, "multi_head_attention")
    for seed, (B, T, C, H) in enumerate([(2, 4, 8, 2), (1, 5, 12, 3)]):
        g = _gen(10 + seed)
        x = torch.randn(B, T, C, generator=g)
        Ws = [torch.randn(C, C, generator=g) / math.sqrt(C) for _ in range(4)]
        case = f"x of shape {(B, T, C)} with n_heads={H}"
        got = run_student(mha, case, x.clone(), *[w.clone() for w in Ws], H)
        expect_close(got, _mha_reference(x, *Ws, H), case=case, mistakes={
            "the scores were scaled by sqrt(d_model); each head uses its own width d_k = d_model / n_heads":
                _mha_reference(x, *Ws, H, scale_by=C),
            "the output projection W_o is missing": _mha_reference(x, *Ws, H, no_out=True),
            "all features attend as one head: split into n_heads heads before the softmax":
                _mha_reference(x, *Ws, H, one_head=True),
        })

"""Exercise checks for notebook 07 (self-attention): attention heads.

What the student writes:

* ``split_heads(x, n_heads)`` ``(B, T, C) -> (B, H, T, C/H)`` and ``merge_heads(x)`` back.
* ``multi_head_attention(x, W_q, W_k, W_v, W_o, n_heads)`` — self-attention of ``x (B, T, C)``
  with ``(C, C)`` projection matrices applied as ``x @ W``.

The references are :mod:`coursekit.attention`, computed on the check's own copies of the inputs; the
student's function gets clones. The inputs are seeded and vary between cases (sizes, number of heads,
T = H = C/H where mixed-up axes give wrong values instead of wrong shapes, batch rows on very different
scales). Every mismatch is compared with the typical mistakes (heads split without the transpose, merged
without transposing back, the wrong scale, a missing output projection, the hand-written softmax mistakes
of :mod:`coursekit.exercises.checks.attention`, …) so the message can name the one made.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from coursekit.attention import causal_mask, merge_heads, split_heads
from coursekit.exercises.checks.attention import NEG_INF, _float_tensor, _softmax, _softmax_mistakes
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

__all__ = [
    "check_merge_heads",
    "check_multi_head_attention",
    "check_split_heads",
]

# ----------------------------------------------------------------------------------------------
# split / merge heads
# ----------------------------------------------------------------------------------------------

# (B, T, C, H); T = H = C/H first, where the usual mix-ups of axes give wrong values instead of wrong shapes
HEAD_SIZES = [(2, 3, 9, 3), (2, 3, 8, 4), (1, 5, 6, 2), (3, 4, 12, 3), (2, 1, 6, 6), (2, 3, 10, 1)]


def _head_cases():
    for seed, (B, T, C, H) in enumerate(HEAD_SIZES):
        yield f"x of shape {(B, T, C)} with n_heads={H}", torch.randn(B, T, C, generator=case_generator(seed)), H


def _split_mistakes(x: torch.Tensor, H: int) -> dict[str, Any]:
    B, T, C = x.shape
    D = C // H

    def m(fn):
        return mistake_value(fn)

    return {
        "the tensor was viewed straight as (B, H, T, D): view as (B, T, H, D) first, then transpose(1, 2)":
            m(lambda: x.reshape(B, H, T, D)),
        "the features were split as (D, H) instead of (H, D), which interleaves the heads: "
        "view as (B, T, H, D)": m(lambda: x.view(B, T, D, H).permute(0, 3, 1, 2)),
        "the time and feature axes got mixed up (x transposed before the view, or the axes permuted to "
        "(B, H, D, T)): view as (B, T, H, D), then transpose(1, 2)": m(lambda: x.transpose(1, 2).reshape(B, H, T, D)),
    }


@exercise_check("split heads", reimplements=("coursekit.attention.split_heads",
                                              "coursekit.attention.core.split_heads"))
def check_split_heads(split: Callable[[torch.Tensor, int], torch.Tensor]) -> None:
    """``split(x (B, T, C), n_heads) -> (B, H, T, C/H)``; head h holds features ``h*D … (h+1)*D - 1``."""
    require_function(split, "split_heads")
    for case, x, H in _head_cases():
        want = split_heads(x.clone(), H)
        got = run_student(split, case, x.clone(), H)
        B, T, C = x.shape
        D = C // H
        if isinstance(got, torch.Tensor) and tuple(got.shape) != (B, H, T, D):
            for shape, hint in (((B, D, T, H), "the features were cut into chunks of n_heads features; it must be "
                                 "n_heads chunks of C / n_heads features (x.split(C // n_heads, -1))"),
                                ((B, H, D, T), "the time and feature axes are swapped: after the view (B, T, H, D), "
                                 "transpose(1, 2) gives (B, H, T, D)"),
                                ((B, T, H, D), "the heads are not moved in front of the time axis: transpose(1, 2)")):
                if tuple(got.shape) == shape:
                    raise CheckFailed(f"on {case}, expected the heads, a float tensor of shape {(B, H, T, D)}, got "
                                      f"{describe(got)}. It looks like {hint}.")
        got = _float_tensor(got, tuple(want.shape), case, "the heads (B, H, T, C/H)")
        expect_close(got, want, case=case, mistakes=_split_mistakes(x, H))


def _merge_mistakes(h: torch.Tensor) -> dict[str, Any]:
    B, H, T, D = h.shape
    return {
        "the heads were reshaped to (B, T, H*D) without transposing back first: transpose(1, 2), then reshape":
            mistake_value(lambda: h.reshape(B, T, H * D)),
        "the head axis ended up last (D, H order) — the concatenation must be head after head":
            mistake_value(lambda: h.permute(0, 2, 3, 1).reshape(B, T, H * D)),
        "the wrong pair of axes was transposed: swap the head and time axes, transpose(1, 2)":
            mistake_value(lambda: h.transpose(2, 3).reshape(B, T, H * D)),
    }


@exercise_check("merge heads", reimplements=("coursekit.attention.merge_heads",
                                              "coursekit.attention.core.merge_heads"))
def check_merge_heads(merge: Callable[[torch.Tensor], torch.Tensor]) -> None:
    """``merge(x (B, H, T, D)) -> (B, T, H*D)``, the inverse of split_heads."""
    require_function(merge, "merge_heads")
    for _, x, H in _head_cases():
        h = split_heads(x, H).contiguous()  # as attention outputs (w @ v) are
        B, _, T, D = h.shape
        case = f"heads of shape {tuple(h.shape)}"
        want = merge_heads(h.clone())
        got = run_student(merge, case, h.clone())
        if isinstance(got, torch.Tensor) and tuple(got.shape) == (B, T, D) and H > 1:
            raise CheckFailed(f"on {case}, expected a float tensor of shape {(B, T, H * D)}, got {describe(got)}: "
                              "it looks like the heads were summed or averaged; concatenate them instead")
        got = _float_tensor(got, tuple(want.shape), case, "the merged heads (B, T, H*D)")
        expect_close(got, want, case=case, mistakes=_merge_mistakes(h))
        if not torch.equal(got.to(x.dtype), x):
            raise CheckFailed(f"on {case}, merge(split(x)) does not give x back")


# ----------------------------------------------------------------------------------------------
# multi-head self-attention from weight matrices
# ----------------------------------------------------------------------------------------------

def _mha_variant(x, W_q, W_k, W_v, W_o, H, *, scale_by=None, no_out=False, one_head=False, transposed=False,
                 split="view", merge="transpose", dim=-1, causal=False, softmax="torch", no_value=False):
    proj = (lambda W: x @ W.T) if transposed else (lambda W: x @ W)
    q, k, v = proj(W_q), proj(W_k), x if no_value else proj(W_v)          # (B, T, C)
    B, T, C = x.shape
    if one_head:
        H = 1
    if split == "straight":
        q, k, v = (t.reshape(B, H, T, C // H) for t in (q, k, v))
    else:
        q, k, v = (split_heads(t, H) for t in (q, k, v))                  # (B, H, T, D)
    d = q.shape[-1] if scale_by is None else scale_by
    s = q @ k.transpose(-2, -1) / math.sqrt(d)
    if causal:
        s = s.masked_fill(~causal_mask(T), NEG_INF)
    w = _softmax(s, softmax, dim)
    out = w @ v
    out = out.reshape(B, T, C) if merge == "straight" else merge_heads(out)   # (B, T, C)
    return out if no_out else out @ W_o


def _mha_cases():
    for seed, (B, T, C, H) in enumerate([(2, 4, 8, 2), (1, 5, 12, 3), (3, 6, 10, 5), (2, 1, 6, 3)]):
        g = case_generator(10 + seed)
        x = torch.randn(B, T, C, generator=g)
        Ws = [torch.randn(C, C, generator=g) / math.sqrt(C) for _ in range(4)]
        yield f"x of shape {(B, T, C)} with n_heads={H}", x, Ws, H, 1e-5
    g = case_generator(20)
    x = torch.randn(3, 5, 8, generator=g) * torch.tensor([1.0, 12.0, 0.05])[:, None, None]
    Ws = [torch.randn(8, 8, generator=g) / math.sqrt(8) for _ in range(4)]
    yield ("x of shape (3, 5, 8) with n_heads=4, its batch rows on very different scales (x1, x12, x0.05)",
           x, Ws, 4, 1e-4)


def _mha_mistakes(x: torch.Tensor, Ws: list, H: int) -> dict[str, Any]:
    C = x.shape[-1]

    def m(**kw):
        return mistake_value(lambda: _mha_variant(x, *Ws, H, **kw))

    mistakes = {
        "the scores were scaled by sqrt(d_model); each head uses its own width d_k = d_model / n_heads":
            m(scale_by=C),
        "the scores were scaled by sqrt(n_heads); the scale is sqrt(d_k) with d_k = d_model / n_heads":
            m(scale_by=H),
        "the 1/sqrt(d_k) scaling is missing": m(scale_by=1),
        "the output projection W_o is missing": m(no_out=True),
        "all features attend as one head: split into n_heads heads before the softmax": m(one_head=True),
        "the projections were applied as x @ W.T (nn.Linear's convention); this exercise applies x @ W":
            m(transposed=True),
        "the projected tensors were viewed straight as (B, H, T, D): view as (B, T, H, D), then transpose(1, 2)":
            m(split="straight"),
        "the heads were reshaped back to (B, T, C) without transposing first: transpose(1, 2), then reshape":
            m(merge="straight"),
        "the softmax is over the wrong axis: normalise over the keys (dim=-1)": m(dim=-2),
        "the softmax is over dim=1, the head axis: normalise over the keys (dim=-1)": m(dim=1),
        "a causal mask was applied: this exercise is plain (unmasked) self-attention": m(causal=True),
        "the values are x itself: project them with W_v too (v = x @ W_v)": m(no_value=True),
    }
    mistakes.update(_softmax_mistakes(lambda how: _mha_variant(x, *Ws, H, softmax=how)))
    return mistakes


@exercise_check("multi-head self-attention",
                reimplements=("coursekit.attention.MultiHeadAttention", "torch.nn.MultiheadAttention",
                              "torch.nn.functional.multi_head_attention_forward"))
def check_multi_head_attention(mha: Callable) -> None:
    """``mha(x (B, T, C), W_q, W_k, W_v, W_o (C, C), n_heads) -> (B, T, C)`` (projections as ``x @ W``)."""
    require_function(mha, "multi_head_attention")
    for case, x, Ws, H, atol in _mha_cases():
        B, T, C = x.shape
        want = _mha_variant(x.clone(), *[w.clone() for w in Ws], H)
        got = run_student(mha, case, x.clone(), *[w.clone() for w in Ws], H)
        got = _float_tensor(got, (B, T, C), case, "the output (B, T, C)")

        expect_close(got, want, case=case, atol=atol, mistakes=_mha_mistakes(x, Ws, H))

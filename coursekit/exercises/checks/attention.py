"""Exercise checks for notebook 07 (self-attention): scaled dot-product attention and masks.

What the student writes:

* ``attention(q, k, v, mask=None)`` — softmax(q kᵀ / √d_k) v with q ``(..., T_q, d_k)``, k
  ``(..., T_k, d_k)``, v ``(..., T_k, d_v)`` and an optional bool ``mask`` (True = may attend),
  broadcastable to ``(..., T_q, T_k)``. It may return the output or ``(output, weights)``.
* ``causal_mask(T)`` — the ``(T, T)`` bool mask, True where query ``i`` may attend to key ``j``.

The heads (split/merge, multi-head attention) are in :mod:`coursekit.exercises.checks.multihead`, which
shares this module's helpers (the hand-written softmax variants among them).

The references are :mod:`coursekit.attention`, computed on the check's own copies of the inputs; the
student's function gets clones. The inputs are seeded and vary between cases (sizes, d_k, number of
heads, masks whose pattern differs from one batch row and one query row to the next, left padding and
holes, batch size 1, one query, query rows whose scores live on scales 10,000 times apart — where a
hand-written softmax that subtracts the global instead of the per-row max gives NaN). Every mismatch is
compared with the typical mistakes (softmax over the wrong axis, missing 1/√d_k, mask after the softmax,
causal mask off by one, …) so the message can name the one made.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from coursekit.attention import causal_mask, scaled_dot_product_attention
from coursekit.exercises.core import (
    CheckFailed,
    case_generator,
    describe,
    exercise_check,
    expect_close,
    hidden_sizes,
    mistake_value,
    require_function,
    run_student,
)

__all__ = [
    "check_causal_mask",
    "check_scaled_dot_product_attention",
]

NEG_INF = float("-inf")



def _float_tensor(got: Any, shape: tuple, case: str, what: str) -> torch.Tensor:
    """``got`` must be a floating-point tensor of ``shape``; else a message naming the case."""
    if not isinstance(got, torch.Tensor):
        raise CheckFailed(f"on {case}, expected {what}, a float tensor of shape {shape}, got {describe(got)}")
    if not got.is_floating_point():
        raise CheckFailed(f"on {case}, expected {what}, a float tensor of shape {shape}, got {describe(got)}: "
                          "integer or bool values cannot be attention outputs (a cast or an integer division?)")
    if tuple(got.shape) != shape:
        raise CheckFailed(f"on {case}, expected {what}, a float tensor of shape {shape}, got {describe(got)}")
    return got


# ----------------------------------------------------------------------------------------------
# softmax variants: the hand-written softmaxes students write, right and wrong
# ----------------------------------------------------------------------------------------------

def _softmax(s: torch.Tensor, how: str = "torch", dim: int = -1) -> torch.Tensor:
    if how == "torch":
        return torch.softmax(s, dim=dim)
    if how == "global max":            # exp(s - s.max()): one max for the whole tensor
        e = torch.exp(s - s.max())
    elif how == "matrix max":          # one max per (batch, head) score matrix
        e = torch.exp(s - s.amax(dim=(-2, -1), keepdim=True))
    elif how == "no max":              # exp(s) straight: overflows for large scores
        e = torch.exp(s)
    elif how == "max no keepdim":      # s - s.amax(-1): (…, T_q, T_k) - (…, T_q) lines queries up with keys
        e = torch.exp(s - s.amax(dim=-1))
    else:
        e = torch.exp(s - s.amax(dim=-1, keepdim=True))
    if how == "global sum":
        return e / e.sum()
    if how == "sum no keepdim":
        return e / e.sum(dim=-1)
    return e / e.sum(dim=dim, keepdim=True)


SOFTMAX_HINTS = {
    "global max": "the softmax subtracts the max of the whole tensor (scores.max()) instead of each row's "
                  "max: rows whose scores are far below the global max underflow to 0/0 = NaN. Subtract "
                  "scores.amax(dim=-1, keepdim=True)",
    "matrix max": "the softmax subtracts one max per score matrix instead of each row's max: a row far "
                  "below it underflows to 0/0 = NaN. Subtract scores.amax(dim=-1, keepdim=True)",
    "no max": "the hand-written softmax does not subtract the row max: exp of a large score overflows "
              "to inf and inf/inf = NaN. Subtract scores.amax(dim=-1, keepdim=True) first",
    "max no keepdim": "the row max was taken without keepdim=True: (…, T_q, T_k) - (…, T_q) subtracts the "
                      "max of row j from column j. Use amax(dim=-1, keepdim=True)",
    "global sum": "the exponentials are divided by the sum over the whole tensor; each query's weights "
                  "must sum to 1: divide by e.sum(dim=-1, keepdim=True)",
    "sum no keepdim": "the exponentials are divided by e.sum(dim=-1) without keepdim=True, which lines the "
                      "row sums up with the keys: use e.sum(dim=-1, keepdim=True)",
}


def _softmax_mistakes(compute: Callable[[str], Any]) -> dict[str, Any]:
    """{hint: value} for every hand-written softmax mistake; ``compute(how)`` is the result with it."""
    return {hint: mistake_value(compute, how) for how, hint in SOFTMAX_HINTS.items()}


# ----------------------------------------------------------------------------------------------
# scaled dot-product attention
# ----------------------------------------------------------------------------------------------

def _random_mask(g: torch.Generator, *shape: int) -> torch.Tensor:
    """A bool mask whose pattern differs from row to row; every row keeps at least one key."""
    mask = torch.rand(*shape, generator=g) < 0.5
    rows = mask.reshape(-1, shape[-1])
    keep = torch.randint(shape[-1], (rows.shape[0],), generator=g)
    rows[torch.arange(rows.shape[0]), keep] = True
    return rows.reshape(shape)


def _sdpa_cases():
    g = case_generator(0)
    q, k, v = (torch.randn(2, 4, 8, generator=g) for _ in range(3))
    yield "q, k, v of shape (2, 4, 8) (square, no mask)", [q, k, v], None, 1e-5
    q, k, v = torch.randn(2, 3, 6, generator=g), torch.randn(2, 5, 6, generator=g), torch.randn(2, 5, 4, generator=g)
    yield "q (2, 3, 6), k (2, 5, 6), v (2, 5, 4) (T_q != T_k, d_v != d_k)", [q, k, v], None, 1e-5

    # padding (B, 1, T_k): a full row, right padding, left padding; padded keys and values large, not zero
    q, k, v = (torch.randn(3, 5, 16, generator=g) for _ in range(3))
    pad = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [0, 0, 1, 1, 1]], dtype=torch.bool).view(3, 1, 5)
    k = torch.where(pad.transpose(1, 2), k, 4 * k)
    v = torch.where(pad.transpose(1, 2), v, 10 + v)
    yield ("q, k, v (3, 5, 16) with a (3, 1, 5) padding mask (row 0: 5 real keys; row 1: the last 2 padded; "
           "row 2: the first 2 padded)"), [q, k, v], pad, 1e-5

    q, k, v = (torch.randn(1, 2, 6, 4, generator=g) for _ in range(3))
    yield "q, k, v (1, 2, 6, 4) (batch, heads) with a (6, 6) causal mask", [q, k, v], causal_mask(6), 1e-5

    q, k, v = torch.randn(3, 4, 5, generator=g), torch.randn(3, 6, 5, generator=g), torch.randn(3, 6, 3, generator=g)
    yield ("q (3, 4, 5), k (3, 6, 5), v (3, 6, 3) with a (3, 4, 6) mask whose pattern differs in every "
           "batch row and query row"), [q, k, v], _random_mask(g, 3, 4, 6), 1e-5

    q, k, v = torch.randn(3, 4, 8, generator=g), torch.randn(3, 6, 8, generator=g), torch.randn(3, 6, 7, generator=g)
    scale = torch.tensor([[1.0, 300.0, 0.01, 1.0], [200.0, 1.0, 0.5, 3.0], [1.0, 2.0, 1.0, 0.1]])
    yield ("q (3, 4, 8), k (3, 6, 8), v (3, 6, 7) whose query rows are on very different scales "
           "(scores from about ±0.01 to about ±1000)"), [q * scale[..., None], k, v], None, 1e-4

    q, k, v = torch.randn(1, 1, 3, generator=g), torch.randn(1, 4, 3, generator=g), torch.randn(1, 4, 2, generator=g)
    yield "q (1, 1, 3), k (1, 4, 3), v (1, 4, 2) (batch size 1, a single query)", [q, k, v], None, 1e-5


def _attend(q, k, v, mask, *, scale=None, softmax="torch", dim=-1, mask_how="fill", weights_only=False):
    """Attention with one typical mistake (``mask_how``: fill / inverted / zero / after / ignore / transposed)."""
    s = q @ k.transpose(-2, -1) / (math.sqrt(q.shape[-1]) if scale is None else scale)
    if mask is not None:
        if mask_how == "fill":
            s = s.masked_fill(~mask, NEG_INF)
        elif mask_how == "inverted":
            s = s.masked_fill(mask, NEG_INF)
        elif mask_how == "zero":
            s = s.masked_fill(~mask, 0.0)
        elif mask_how == "transposed":
            s = s.masked_fill(~mask.transpose(-2, -1), NEG_INF)
    w = _softmax(s, softmax, dim)
    if mask is not None and mask_how == "after":
        w = w * mask
    return w if weights_only else w @ v


def _sdpa_mistakes(q, k, v, mask) -> dict[str, Any]:
    d_k, T_k = q.shape[-1], k.shape[-2]

    def m(**kw):
        return mistake_value(lambda: _attend(q, k, v, mask, **kw))

    out = {
        "the softmax is over the wrong axis: normalise over the keys (dim=-1), so each query's weights sum to 1":
            m(dim=-2),
        "the softmax is over dim=1, which for 4-D (batch, heads, T_q, T_k) scores is the head axis: "
        "use dim=-1 (the keys) whatever the number of leading dims": m(dim=1) if q.dim() == 4 else None,
        "the 1/sqrt(d_k) scaling is missing (divide the scores q·k by sqrt(d_k) before the softmax)": m(scale=1.0),
        "the scores were divided by d_k instead of sqrt(d_k)": m(scale=d_k),
        "the scores were divided by sqrt(d_v) (the value width); the scale is sqrt(d_k) = sqrt(q.shape[-1])":
            m(scale=math.sqrt(v.shape[-1])) if v.shape[-1] != d_k else None,
        "the scores were divided by sqrt(T_k) (the number of keys); the scale is sqrt(d_k) = sqrt(q.shape[-1])":
            m(scale=math.sqrt(T_k)) if T_k != d_k else None,
        "the output is the attention weights: multiply the weights by v": m(weights_only=True),
    }
    out.update(_softmax_mistakes(lambda how: _attend(q, k, v, mask, softmax=how)))
    if mask is not None:
        out.update({
            "the mask is applied after the softmax (zeroing weights there leaves rows that no longer sum to 1): "
            "fill masked scores with -inf *before* the softmax": m(mask_how="after"),
            "the mask is ignored": m(mask_how="ignore"),
            "the mask is inverted: True means 'may attend', so fill the positions where mask is False":
                m(mask_how="inverted"),
            "masked scores were set to 0 instead of -inf (exp(0) = 1 still gives them weight)": m(mask_how="zero"),
            "the mask is transposed: its last axis is the keys (…, T_q, T_k), its rows the queries":
                m(mask_how="transposed"),
        })
    return out


def _sdpa_output(result: Any, want: torch.Tensor, case: str) -> torch.Tensor:
    """The output from ``out`` or ``(out, weights)``, with a specific message for anything else."""
    shape = tuple(want.shape)
    if isinstance(result, (tuple, list)):
        if len(result) != 2:
            raise CheckFailed(f"on {case}, return the output (or the pair (output, weights)), got {describe(result)}")
        out, weights = result
        if (isinstance(weights, torch.Tensor) and tuple(weights.shape) == shape
                and not (isinstance(out, torch.Tensor) and tuple(out.shape) == shape)):
            raise CheckFailed(f"on {case}, the pair is in the wrong order: return (output, weights), got "
                              f"({describe(out)}, {describe(weights)})")
        result = out
    return _float_tensor(result, shape, case, "the attention output")


@exercise_check("scaled dot-product attention",
                reimplements=("coursekit.attention.scaled_dot_product_attention",
                              "coursekit.attention.core.scaled_dot_product_attention",
                              "torch.nn.functional.scaled_dot_product_attention"))
def check_scaled_dot_product_attention(attention: Callable) -> None:
    """``attention(q, k, v, mask=None)`` against :func:`coursekit.attention.scaled_dot_product_attention`."""
    require_function(attention, "attention")
    for case, (q, k, v), mask, atol in _sdpa_cases():
        want, _ = scaled_dot_product_attention(q.clone(), k.clone(), v.clone(),
                                               None if mask is None else mask.clone())
        args = (q.clone(), k.clone(), v.clone()) + ((mask.clone(),) if mask is not None else ())
        got = _sdpa_output(run_student(attention, case, *args), want, case)
        expect_close(got, want, case=case, atol=atol, mistakes=_sdpa_mistakes(q, k, v, mask))


# ----------------------------------------------------------------------------------------------
# causal mask
# ----------------------------------------------------------------------------------------------

@exercise_check("causal mask", reimplements=("coursekit.attention.causal_mask",
                                              "coursekit.attention.masks.causal_mask"))
def check_causal_mask(make_mask: Callable[[int], torch.Tensor]) -> None:
    """``make_mask(T) -> (T, T)`` bool, True where query ``i`` may attend to key ``j`` (``j <= i``)."""
    require_function(make_mask, "causal mask")
    for T in hidden_sizes((4, 7, 1, 12), 2, 40):
        case = f"T={T}"
        want = causal_mask(T)
        got = run_student(make_mask, case, T)
        if not isinstance(got, torch.Tensor):
            raise CheckFailed(f"on {case}, the mask should be a bool tensor of shape {(T, T)}, got {describe(got)}")
        if tuple(got.shape) != (T, T):
            extra = (" (a leading batch dim? return the plain (T, T) mask; it broadcasts by itself)"
                     if got.numel() == T * T else "")
            raise CheckFailed(f"on {case}, the mask should be a bool tensor of shape {(T, T)}, "
                              f"got {describe(got)}{extra}")
        if got.dtype != torch.bool:
            if torch.equal(got != 0, want):
                raise CheckFailed(f"on {case}, the pattern is right but the dtype is {got.dtype}: return a bool "
                                  "tensor (e.g. `.bool()`), which masked_fill and F.scaled_dot_product_attention "
                                  "read as True = may attend")
            if got.is_floating_point() and torch.equal(got == 0, want):
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
            "the mask is all True: nothing is masked, every position sees the future": ones,
            "only the diagonal is True: each position must see itself *and every earlier* position": torch.eye(
                T, dtype=torch.bool),
        })

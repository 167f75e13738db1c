"""Exercise checks for notebook 07 (self-attention).

What the student writes:

* ``attention(q, k, v, mask=None)`` — softmax(q kᵀ / √d_k) v with q ``(..., T_q, d_k)``, k
  ``(..., T_k, d_k)``, v ``(..., T_k, d_v)`` and an optional bool ``mask`` (True = may attend),
  broadcastable to ``(..., T_q, T_k)``. It may return the output or ``(output, weights)``.
* ``causal_mask(T)`` — the ``(T, T)`` bool mask, True where query ``i`` may attend to key ``j``.
* ``split_heads(x, n_heads)`` ``(B, T, C) -> (B, H, T, C/H)`` and ``merge_heads(x)`` back.
* ``multi_head_attention(x, W_q, W_k, W_v, W_o, n_heads)`` — self-attention of ``x (B, T, C)``
  with ``(C, C)`` projection matrices applied as ``x @ W``.

The references are :mod:`coursekit.attention`, computed on the check's own copies of the inputs; the
student's function gets clones. The inputs are seeded and vary between cases (sizes, d_k, number of
heads, masks whose pattern differs from one batch row and one query row to the next, left padding and
holes, batch size 1, one query, query rows whose scores live on scales 10,000 times apart — where a
hand-written softmax that subtracts the global instead of the per-row max gives NaN). Every mismatch is
compared with the typical mistakes (softmax over the wrong axis, missing 1/√d_k, mask after the softmax,
causal mask off by one, heads split without the transpose, …) so the message can name the one made.
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

NEG_INF = float("-inf")


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


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
    g = _gen(0)
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
    for T in (4, 7, 1, 12):
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


# ----------------------------------------------------------------------------------------------
# split / merge heads
# ----------------------------------------------------------------------------------------------

# (B, T, C, H); T = H = C/H first, where the usual mix-ups of axes give wrong values instead of wrong shapes
HEAD_SIZES = [(2, 3, 9, 3), (2, 3, 8, 4), (1, 5, 6, 2), (3, 4, 12, 3), (2, 1, 6, 6), (2, 3, 10, 1)]


def _head_cases():
    for seed, (B, T, C, H) in enumerate(HEAD_SIZES):
        yield f"x of shape {(B, T, C)} with n_heads={H}", torch.randn(B, T, C, generator=_gen(seed)), H


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
        g = _gen(10 + seed)
        x = torch.randn(B, T, C, generator=g)
        Ws = [torch.randn(C, C, generator=g) / math.sqrt(C) for _ in range(4)]
        yield f"x of shape {(B, T, C)} with n_heads={H}", x, Ws, H, 1e-5
    g = _gen(20)
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

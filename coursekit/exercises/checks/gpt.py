"""Exercise checks for notebook 10 (GPT): temperature, nucleus (top-p) filtering, one KV-cache step.

What the student writes:

* ``softmax_with_temperature(logits, T)`` — probabilities softmax(z / T) over the last dim.
* ``top_p_probs(logits, p)`` — the nucleus distribution of Holtzman et al. (2020): keep the
  smallest set of most likely tokens whose probability sum is ≥ p, renormalise over it, zeros
  elsewhere. ``logits (B, V)`` → probabilities ``(B, V)``.
* ``kv_cache_step(q, k_new, v_new, k_past, v_past)`` — one decoding step of causal self-attention
  with a cache: the new token's query ``q (B, H, 1, D)`` attends to the cached keys/values
  ``(B, H, t, D)`` *and* its own ``k_new``/``v_new`` ``(B, H, 1, D)``. Returns
  ``(out (B, H, 1, D), k_all (B, H, t+1, D), v_all (B, H, t+1, D))``.

Every case varies the sizes (vectors, (B, V) and (B, T, V) logits, a square (B = V) batch, rows on very
different scales, an empty cache, D other than 4), and every reference is computed on the check's own copy
of the inputs before the student's function runs. The references are :mod:`coursekit.decoding.sampling` and
:mod:`coursekit.attention`; each mismatch is compared with typical mistakes so the message can name the one
that was made.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from coursekit.attention import scaled_dot_product_attention
from coursekit.decoding.sampling import top_p_filter
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

__all__ = ["check_kv_cache_step", "check_temperature", "check_top_p_filter"]



def _float_tensor(got: Any, shape: tuple[int, ...], case: str, what: str) -> None:
    """``got`` must be a floating tensor of ``shape`` (a specific message otherwise)."""
    if not isinstance(got, torch.Tensor) or not got.is_floating_point() or tuple(got.shape) != shape:
        raise CheckFailed(f"on {case}, expected {what} as a floating-point tensor of shape {shape}, "
                          f"got {describe(got)}")


# ----------------------------------------------------------------------------------------------
# temperature
# ----------------------------------------------------------------------------------------------

def _temperature_cases():
    g = case_generator(0)
    yield "logits [[2, 1, 0]] at T = 0.5", torch.tensor([[2.0, 1.0, 0.0]]), 0.5
    wide, vector = torch.randn(4, 10, generator=g), 3 * torch.randn(7, generator=g)
    square = torch.randn(4, 4, generator=g)
    yield "square logits (4, 4) (batch size = vocabulary size) at T = 1.5", 2 * square, 1.5
    yield "logits (4, 10) at T = 2", wide, 2.0
    yield "logits (2, 3, 9) (batch, time, vocabulary) at T = 0.3", torch.randn(2, 3, 9, generator=g), 0.3
    yield "a single vector of 7 logits (shape (7,)) at T = 0.7", vector, 0.7
    big = torch.stack([80 + 5 * torch.randn(6, generator=g), -80 + 5 * torch.randn(6, generator=g)])
    yield "two rows on very different scales (logits near +80 and near -80) at T = 0.25", big, 0.25
    yield "one row of 5 logits at T = 1 (no change)", torch.randn(1, 5, generator=g), 1.0


def _temperature_mistakes(z: torch.Tensor, T: float) -> dict[str, Any]:
    s = z / T

    def naive(x):                                      # exp without subtracting the max
        e = x.exp()
        return e / e.sum(-1, keepdim=True)

    def global_max(x):                                 # one max for the whole batch
        e = (x - x.max()).exp()
        return e / e.sum(-1, keepdim=True)

    def no_keepdim(x):
        e = (x - x.max(-1, keepdim=True).values).exp()
        return e / e.sum(-1)

    return {
        "you multiplied the logits by T; divide them by T (T < 1 sharpens, T > 1 flattens)":
            torch.softmax(z * T, dim=-1),
        "you divided the probabilities by T after the softmax; divide the logits before it":
            torch.softmax(z, dim=-1) / T,
        "the softmax runs over the wrong dimension (use dim=-1, the vocabulary)":
            torch.softmax(s, dim=0) if z.dim() > 1 else None,
        "the softmax runs over dim=1, which is the vocabulary only for (B, V) logits; use dim=-1 (the last)":
            torch.softmax(s, dim=1) if z.dim() > 2 else None,
        "you forgot the temperature": torch.softmax(z, dim=-1) if T != 1 else None,
        "you returned log-probabilities (log_softmax); the exercise asks for probabilities":
            torch.log_softmax(s, dim=-1),
        "you normalised over the whole tensor instead of each row (sum over dim=-1 only)":
            torch.softmax(s.flatten(), dim=0).view_as(s),
        "the row sums were taken without keepdim=True, so each row was divided by another row's sum "
        "(use .sum(-1, keepdim=True))": mistake_value(no_keepdim, s) if z.dim() == 2 else None,
        "exp overflowed: large logits / T give exp(...) = inf and inf / inf = NaN; subtract each row's "
        "max before exp (or use torch.softmax)": naive(s),
        "you subtracted ONE max over the whole batch; a row far below it underflows to 0 / 0 = NaN. "
        "Subtract each row's own max (max(dim=-1, keepdim=True))": global_max(s),
    }


@exercise_check("softmax with temperature", reimplements=(
    "coursekit.decoding.apply_temperature", "coursekit.decoding.sampling.apply_temperature",
    "coursekit.decoding.filter_logits", "coursekit.decoding.sampling.filter_logits"))
def check_temperature(student_fn: Callable) -> None:
    """``student_fn(logits, T)`` must return softmax(logits / T) over the last dim."""
    require_function(student_fn, "softmax_with_temperature")
    for case, z, T in _temperature_cases():
        want = torch.softmax(z / T, dim=-1)
        mistakes = _temperature_mistakes(z.clone(), T)
        got = run_student(student_fn, case, z.clone(), T)
        _float_tensor(got, tuple(z.shape), case, "the probabilities")
        expect_close(got, want, case=case, what="the probabilities", mistakes=mistakes)


# ----------------------------------------------------------------------------------------------
# nucleus (top-p)
# ----------------------------------------------------------------------------------------------

def _top_p_reference(z: torch.Tensor, p: float) -> torch.Tensor:
    return torch.softmax(top_p_filter(z, p), dim=-1)


def _renorm(kept: torch.Tensor) -> torch.Tensor:
    return kept / kept.sum(-1, keepdim=True)


def _top_p_mistakes(z: torch.Tensor, p: float) -> dict[str, Any]:
    probs = torch.softmax(z, dim=-1)
    sorted_p, order = probs.sort(dim=-1, descending=True)
    inclusive = sorted_p.cumsum(-1)
    keep_sorted = (inclusive - sorted_p) < p

    def unsort(mask_sorted):
        return torch.zeros_like(mask_sorted).scatter(-1, order, mask_sorted)

    # off by one: drop a token as soon as the cumulative sum *including it* exceeds p (the token
    # that crosses p is lost; the set may even be empty)
    drop_crossing = unsort(inclusive > p)
    # not sorting: cumulative sum in vocabulary order
    unsorted_drop = (probs.cumsum(-1) - probs) >= p
    keep_ref = torch.isfinite(top_p_filter(z, p))
    batch_cum = sorted_p.cumsum(0) - sorted_p                     # cumulative sum down the batch (B > 1)
    k = max(1, int(p * z.shape[-1]))
    top_k = unsort(torch.arange(z.shape[-1]).expand_as(sorted_p) < k)

    return {
        "the cumulative sum is off by one: the token whose probability crosses p must be kept "
        "(remove a token only when the mass *before* it is already ≥ p)": _renorm(probs * ~drop_crossing),
        "the probabilities were not sorted before the cumulative sum (sort descending first)":
            _renorm(probs * ~unsorted_drop),
        "the kept probabilities were not renormalised (divide by their sum so they add up to 1)":
            probs * keep_ref,
        "you kept the tokens *outside* the nucleus": _renorm(probs * ~keep_ref),
        "the result is still in sorted order: scatter the kept probabilities back to their vocabulary "
        "positions (the `order` returned by sort)": _renorm(sorted_p * keep_sorted),
        "the cumulative sum ran over the batch (dim=0); it must run along the vocabulary of each row (dim=-1)":
            _renorm(probs * unsort(batch_cum < p)) if z.shape[0] > 1 else None,
        "the kept probabilities were renormalised over the whole batch; divide each row by its own sum "
        "(sum(dim=-1, keepdim=True))": (probs * keep_ref) / (probs * keep_ref).sum(),
        "you returned the filtered logits (with -inf); the exercise asks for probabilities (softmax them)":
            top_p_filter(z, p),
        "p bounds the CUMULATIVE probability of the kept set, not each token's own probability":
            _renorm(probs * (probs >= p)),
        "you kept a fixed number of tokens (top-k with k = p·V); the nucleus size depends on the "
        "probabilities": _renorm(probs * top_k),
        "nothing was removed (this is the plain softmax): keep only the nucleus, dropping the tokens whose "
        "mass before them is already ≥ p in DESCENDING order (sorted ascending, the mass before the most likely "
        "token is large and nothing is dropped)": probs,
    }


def _top_p_cases():
    g = case_generator(1)
    yield "logits (3, 12) with p = 0.9", 2 * torch.randn(3, 12, generator=g), 0.9
    yield "probabilities [0.5, 0.3, 0.15, 0.05] with p = 0.6", torch.tensor([[0.5, 0.3, 0.15, 0.05]]).log(), 0.6
    yield "probabilities [0.05, 0.3, 0.15, 0.5] (unsorted) with p = 0.7", \
        torch.tensor([[0.05, 0.3, 0.15, 0.5]]).log(), 0.7
    yield "logits (2, 8) with p = 0.3", 3 * torch.randn(2, 8, generator=g), 0.3
    peaked_flat = torch.stack([torch.tensor([6.0, 1, 0.5, 0, -1, -2, 0.2, -0.5, 0.1, 0.3]),
                               0.1 * torch.randn(10, generator=g)])
    yield "a peaked row (top probability 0.96) and an almost flat row, p = 0.9", peaked_flat, 0.9
    yield "one row of 10 logits with p = 0.05 (below the top probability: only the top token stays)", \
        torch.randn(1, 10, generator=g), 0.05
    yield "logits (2, 6) with p = 1 (everything is kept)", torch.randn(2, 6, generator=g), 1.0
    yield "one row of 50 logits with p = 0.75", 1.5 * torch.randn(1, 50, generator=g), 0.75


@exercise_check("nucleus (top-p) filtering", reimplements=(
    "coursekit.decoding.top_p_filter", "coursekit.decoding.sampling.top_p_filter",
    "coursekit.decoding.filter_logits", "coursekit.decoding.sampling.filter_logits"))
def check_top_p_filter(student_fn: Callable) -> None:
    """``student_fn(logits, p)`` must return the renormalised nucleus distribution (B, V)."""
    require_function(student_fn, "top_p_probs")
    for case, z, p in _top_p_cases():
        want = _top_p_reference(z.clone(), p)
        mistakes = _top_p_mistakes(z.clone(), p)
        got = run_student(student_fn, case, z.clone(), p)
        _float_tensor(got, tuple(z.shape), case, "the nucleus probabilities")
        expect_close(got, want, case=case, what="the nucleus probabilities", mistakes=mistakes)


# ----------------------------------------------------------------------------------------------
# one KV-cache step
# ----------------------------------------------------------------------------------------------

_KV_SIZES = (  # (B, H, t, D, scale of q): t + 1 never equals D, so √(t+1) and √D differ
    (2, 2, 1, 16, 1.0), (1, 1, 2, 4, 1.0), (2, 4, 5, 8, 1.0), (3, 2, 0, 6, 1.0), (1, 3, 7, 5, 3.0))


def _kv_cases():
    g = case_generator(2)
    for B, H, t, D, scale in _KV_SIZES:
        q = scale * torch.randn(B, H, 1, D, generator=g)
        k_new, v_new = torch.randn(B, H, 1, D, generator=g), torch.randn(B, H, 1, D, generator=g)
        k_past, v_past = torch.randn(B, H, t, D, generator=g), torch.randn(B, H, t, D, generator=g)
        what = "an EMPTY cache (the first step)" if t == 0 else f"{t} cached position{'s' * (t > 1)}"
        yield f"B={B}, H={H}, {what}, D={D}", q, k_new, v_new, k_past, v_past


def _softmax_attend(q, k, v, divisor=None, dim=-1):
    scores = q @ k.transpose(-2, -1) / (math.sqrt(q.shape[-1]) if divisor is None else divisor)
    return torch.softmax(scores, dim=dim) @ v


def _kv_mistakes(q, k_new, v_new, k_past, v_past) -> dict[str, Any]:
    k_all, v_all = torch.cat([k_past, k_new], dim=-2), torch.cat([v_past, v_new], dim=-2)
    t = k_past.shape[-2]
    square_mask = torch.zeros(1, t + 1, dtype=torch.bool)
    square_mask[0, 0] = True                                     # tril(ones(1, t+1)): only key 0
    only_cache = "the new token attends only to the cache; it must also attend to its own key/value"
    square = ("a square causal mask tril(ones(1, T)) keeps only the first key; the newest query may attend "
              "to every cached position (align the triangle to the end, or use no mask for one query)")
    if t == 1:   # with one cached key both mistakes give the same output: name both
        only_cache = f"{only_cache} (or {square})"
    return {
        only_cache: mistake_value(_softmax_attend, q, k_past, v_past) if t else None,
        "the new token attends only to itself; it must attend to the cached keys/values too (k_all, v_all)":
            v_new if t else None,
        square: scaled_dot_product_attention(q, k_all, v_all, square_mask)[0] if t > 1 else None,
        "the scores are not divided by √d_k": _softmax_attend(q, k_all, v_all, 1.0),
        "the scores are divided by d_k; divide by its square root √d_k": _softmax_attend(q, k_all, v_all, q.shape[-1]),
        "the scores are divided by √(number of keys); the scale is √d_k, d_k = q.shape[-1]":
            _softmax_attend(q, k_all, v_all, math.sqrt(t + 1)),
        "the softmax runs over the wrong axis: normalise over the keys (dim=-1), not over the one query":
            _softmax_attend(q, k_all, v_all, dim=-2),
    }


def _check_kv_shapes(result: Any, shapes: tuple, case: str) -> tuple:
    if not isinstance(result, (tuple, list)) or len(result) != 3:
        raise CheckFailed(f"on {case}, return (out, k_all, v_all); got {describe(result)}")
    for value, shape, name in zip(result, shapes, ("out", "k_all", "v_all")):
        if isinstance(value, torch.Tensor) and value.is_floating_point() and tuple(value.shape) != shape:
            hint = ""
            if name != "out" and tuple(value.shape) == (*shape[:-2], shape[-2] - 1, shape[-1]):
                hint = " It looks like the new key/value was not appended (torch.cat along dim=-2, time)."
            elif name != "out" and value.dim() == len(shape):
                hint = " It looks like the cache was concatenated along the wrong dimension (use dim=-2, time)."
            raise CheckFailed(f"on {case}, expected {name} of shape {shape}, got {describe(value)}.{hint}")
        _float_tensor(value, shape, case, name)
    return tuple(result)


@exercise_check("one KV-cache decoding step",
                reimplements=("coursekit.attention.KVCache", "coursekit.attention.core.KVCache"))
def check_kv_cache_step(student_fn: Callable) -> None:
    """``student_fn(q, k_new, v_new, k_past, v_past)`` → ``(out, k_all, v_all)``."""
    require_function(student_fn, "kv_cache_step")
    for case, *inputs in _kv_cases():
        q, k_new, v_new, k_past, v_past = (x.clone() for x in inputs)     # the check's own copies
        B, H, t, D = k_past.shape
        k_want, v_want = torch.cat([k_past, k_new], dim=-2), torch.cat([v_past, v_new], dim=-2)
        want, _ = scaled_dot_product_attention(q, k_want, v_want)   # one query, last position: no mask needed
        mistakes = _kv_mistakes(q, k_new, v_new, k_past, v_past)
        result = run_student(student_fn, case, *(x.clone() for x in inputs))
        out, k_all, v_all = _check_kv_shapes(result, ((B, H, 1, D), (B, H, t + 1, D), (B, H, t + 1, D)), case)
        front = "the new {} went in front of the cache; append it at the end (dim=-2, time)"
        expect_close(k_all, k_want, case=case, what="k_all", mistakes={
            front.format("key"): torch.cat([k_new, k_past], dim=-2) if t else None})
        expect_close(v_all, v_want, case=case, what="v_all", mistakes={
            front.format("value"): torch.cat([v_new, v_past], dim=-2) if t else None})
        expect_close(out, want, case=case, what="the attention output", mistakes=mistakes)

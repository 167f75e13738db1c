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

The references are :mod:`coursekit.decoding.sampling` and :mod:`coursekit.attention`; each
mismatch is compared with typical mistakes so the message can name the one that was made.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from coursekit.attention import scaled_dot_product_attention
from coursekit.decoding.sampling import top_p_filter
from coursekit.exercises.core import CheckFailed, describe, exercise_check, expect_close, require_function, run_student

__all__ = ["check_kv_cache_step", "check_temperature", "check_top_p_filter"]


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# ----------------------------------------------------------------------------------------------
# temperature
# ----------------------------------------------------------------------------------------------

def _temperature_cases():
    g = _gen(0)
    yield "logits [2, 1, 0] at T = 0.5", torch.tensor([[2.0, 1.0, 0.0]]), 0.5
    yield "logits (4, 10) at T = 2", torch.randn(4, 10, generator=g), 2.0
    yield "logits (3, 7) at T = 0.7", 3 * torch.randn(3, 7, generator=g), 0.7


@exercise_check("softmax with temperature", reimplements=(
    "coursekit.decoding.apply_temperature", "coursekit.decoding.sampling.apply_temperature",
    "coursekit.decoding.filter_logits", "coursekit.decoding.sampling.filter_logits"))
def check_temperature(student_fn: Callable) -> None:
    """``student_fn(logits, T)`` must return softmax(logits / T) over the last dim."""
    require_function(student_fn, "softmax_with_temperature")
    for case, z, T in _temperature_cases():
        got = run_student(student_fn, case, z.clone(), T)
        expect_close(got, torch.softmax(z / T, dim=-1), case=case, what="the probabilities", mistakes={
            "you multiplied the logits by T; divide them by T (T < 1 sharpens, T > 1 flattens)":
                torch.softmax(z * T, dim=-1),
            "you divided the probabilities by T after the softmax; divide the logits before it":
                torch.softmax(z, dim=-1) / T,
            "the softmax runs over the wrong dimension (use dim=-1, the vocabulary)": torch.softmax(z / T, dim=0),
            "you forgot the temperature": torch.softmax(z, dim=-1),
        })


# ----------------------------------------------------------------------------------------------
# nucleus (top-p)
# ----------------------------------------------------------------------------------------------

def _top_p_reference(z: torch.Tensor, p: float) -> torch.Tensor:
    return torch.softmax(top_p_filter(z, p), dim=-1)


def _top_p_mistakes(z: torch.Tensor, p: float) -> dict[str, torch.Tensor]:
    probs = torch.softmax(z, dim=-1)
    sorted_p, order = probs.sort(dim=-1, descending=True)
    inclusive = sorted_p.cumsum(-1)
    # off by one: drop a token as soon as the cumulative sum *including it* exceeds p (the token
    # that crosses p is lost; the set may even be empty)
    drop_crossing = torch.zeros_like(probs).scatter(-1, order, (inclusive > p).float()).bool()
    # not sorting: cumulative sum in vocabulary order
    unsorted_drop = (probs.cumsum(-1) - probs) >= p
    keep_ref = torch.isfinite(top_p_filter(z, p))

    def renorm(keep: torch.Tensor) -> torch.Tensor:
        kept = probs * keep
        return kept / kept.sum(-1, keepdim=True)

    return {
        "the cumulative sum is off by one: the token whose probability crosses p must be kept "
        "(remove a token only when the mass *before* it is already ≥ p)": renorm(~drop_crossing),
        "the probabilities were not sorted before the cumulative sum (sort descending first)":
            renorm(~unsorted_drop),
        "the kept probabilities were not renormalised (divide by their sum so they add up to 1)":
            probs * keep_ref,
        "you kept the tokens *outside* the nucleus": renorm(~keep_ref),
    }


def _top_p_cases():
    g = _gen(1)
    yield "probabilities [0.5, 0.3, 0.15, 0.05] with p = 0.6", torch.tensor([[0.5, 0.3, 0.15, 0.05]]).log(), 0.6
    yield "probabilities [0.05, 0.3, 0.15, 0.5] (unsorted) with p = 0.7", \
        torch.tensor([[0.05, 0.3, 0.15, 0.5]]).log(), 0.7
    yield "logits (3, 12) with p = 0.9", 2 * torch.randn(3, 12, generator=g), 0.9
    yield "logits (2, 8) with p = 0.3", 3 * torch.randn(2, 8, generator=g), 0.3


@exercise_check("nucleus (top-p) filtering", reimplements=(
    "coursekit.decoding.top_p_filter", "coursekit.decoding.sampling.top_p_filter",
    "coursekit.decoding.filter_logits", "coursekit.decoding.sampling.filter_logits"))
def check_top_p_filter(student_fn: Callable) -> None:
    """``student_fn(logits, p)`` must return the renormalised nucleus distribution (B, V)."""
    require_function(student_fn, "top_p_probs")
    for case, z, p in _top_p_cases():
        got = run_student(student_fn, case, z.clone(), p)
        expect_close(got, _top_p_reference(z, p), case=case, what="the nucleus probabilities",
                     mistakes=_top_p_mistakes(z, p))


# ----------------------------------------------------------------------------------------------
# one KV-cache step
# ----------------------------------------------------------------------------------------------

def _kv_cases():
    g = _gen(2)
    for B, H, t, D in ((1, 1, 3, 4), (2, 4, 5, 8), (2, 2, 1, 16)):
        q, k_new, v_new = (torch.randn(B, H, 1, D, generator=g) for _ in range(3))
        k_past, v_past = torch.randn(B, H, t, D, generator=g), torch.randn(B, H, t, D, generator=g)
        yield f"B={B}, H={H}, {t} cached positions, D={D}", q, k_new, v_new, k_past, v_past


def _softmax_attend(q, k, v, scale=True):
    scores = q @ k.transpose(-2, -1) / (math.sqrt(q.shape[-1]) if scale else 1.0)
    return torch.softmax(scores, dim=-1) @ v


@exercise_check("one KV-cache decoding step",
                reimplements=("coursekit.attention.KVCache", "coursekit.attention.core.KVCache"))
def check_kv_cache_step(student_fn: Callable) -> None:
    """``student_fn(q, k_new, v_new, k_past, v_past)`` → ``(out, k_all, v_all)``."""
    require_function(student_fn, "kv_cache_step")
    for case, q, k_new, v_new, k_past, v_past in _kv_cases():
        result = run_student(student_fn, case, q, k_new, v_new, k_past.clone(), v_past.clone())
        if not isinstance(result, (tuple, list)) or len(result) != 3:
            raise CheckFailed(f"on {case}, return (out, k_all, v_all); got {describe(result)}")
        out, k_all, v_all = result
        k_want, v_want = torch.cat([k_past, k_new], dim=-2), torch.cat([v_past, v_new], dim=-2)
        expect_close(k_all, k_want, case=case, what="k_all", mistakes={
            "the new key went in front of the cache; append it at the end (dim=-2, time)":
                torch.cat([k_new, k_past], dim=-2)})
        expect_close(v_all, v_want, case=case, what="v_all")
        want, _ = scaled_dot_product_attention(q, k_want, v_want)   # one query, last position: no mask needed
        t = k_past.shape[-2]
        square_mask = torch.zeros(1, t + 1, dtype=torch.bool)
        square_mask[0, 0] = True                                     # tril(ones(1, t+1)): only key 0
        expect_close(out, want, case=case, what="the attention output", mistakes={
            "the new token attends only to the cache; it must also attend to its own key/value":
                _softmax_attend(q, k_past, v_past),
            "a square causal mask tril(ones(1, T)) keeps only the first key; the newest query may attend "
            "to every cached position (align the triangle to the end, or use no mask for one query)":
                scaled_dot_product_attention(q, k_want, v_want, square_mask)[0],
            "the scores are not divided by √d_k": _softmax_attend(q, k_want, v_want, scale=False),
        })

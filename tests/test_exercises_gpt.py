"""Checks of notebook 10: the reference passes, a stub is "not attempted", typical mistakes get their hint."""

from __future__ import annotations

import math

import pytest
import torch
from exercise_helpers import fails_with, refuses_delegation, stub

from coursekit import decoding, exercises
from coursekit.attention import KVCache
from coursekit.exercises.checks import gpt


def _status(check, fn):
    return check(fn, verbose=False)


def test_checks_exported_and_stubs_not_attempted():
    for name in gpt.__all__:
        assert getattr(exercises, name) is getattr(gpt, name)
        assert getattr(gpt, name)(stub, verbose=False).status == "not attempted", name


# ---------------------------------------------------------------- temperature

def test_temperature():
    assert _status(gpt.check_temperature, lambda z, T: torch.softmax(z / T, dim=-1)).passed
    fails_with(gpt.check_temperature, lambda z, T: torch.softmax(z * T, dim=-1), "multiplied the logits by T")
    fails_with(gpt.check_temperature, lambda z, T: torch.softmax(z, dim=-1) / T, "after the softmax")
    fails_with(gpt.check_temperature, lambda z, T: torch.softmax(z / T, dim=0), "wrong dimension")
    fails_with(gpt.check_temperature, lambda z, T: z / T, "is wrong")


# ---------------------------------------------------------------- top-p

def _top_p(z, p, *, sort=True, inclusive=False, renormalise=True):
    probs = torch.softmax(z, dim=-1)
    if sort:
        sorted_p, order = probs.sort(dim=-1, descending=True)
    else:
        sorted_p, order = probs, torch.arange(probs.shape[-1]).expand_as(probs)
    cum = sorted_p.cumsum(-1)
    drop_sorted = cum > p if inclusive else (cum - sorted_p) >= p
    drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
    kept = probs.masked_fill(drop, 0.0)
    return kept / kept.sum(-1, keepdim=True) if renormalise else kept


def test_top_p():
    assert _status(gpt.check_top_p_filter, _top_p).passed
    fails_with(gpt.check_top_p_filter, lambda z, p: _top_p(z, p, inclusive=True), "off by one")
    fails_with(gpt.check_top_p_filter, lambda z, p: _top_p(z, p, sort=False), "not sorted")
    fails_with(gpt.check_top_p_filter, lambda z, p: _top_p(z, p, renormalise=False), "not renormalised")


# ---------------------------------------------------------------- KV cache

def _kv_step(q, k_new, v_new, k_past, v_past, *, own=True, front=False, square_mask=False, scale=True):
    k_all = torch.cat([k_new, k_past] if front else [k_past, k_new], dim=-2)
    v_all = torch.cat([v_new, v_past] if front else [v_past, v_new], dim=-2)
    k_use, v_use = (k_all, v_all) if own else (k_past, v_past)
    s = q @ k_use.transpose(-2, -1) / (math.sqrt(q.shape[-1]) if scale else 1.0)   # (B, H, 1, T)
    if square_mask:
        s = s.masked_fill(~torch.ones(1, s.shape[-1]).tril().bool(), float("-inf"))
    return torch.softmax(s, -1) @ v_use, k_all, v_all


@pytest.mark.parametrize("kwargs, hint", [
    (dict(own=False), "its own key"),
    (dict(square_mask=True), "square causal mask"),
    (dict(scale=False), "√d_k"),
    (dict(front=True), "in front of the cache"),
])
def test_kv_cache_step_mistakes(kwargs, hint):
    fails_with(gpt.check_kv_cache_step, lambda *a: _kv_step(*a, **kwargs), hint)


def test_kv_cache_step_reference_and_bad_return():
    assert _status(gpt.check_kv_cache_step, _kv_step).passed
    fails_with(gpt.check_kv_cache_step, lambda *a: _kv_step(*a)[0], "return (out, k_all, v_all)")
    fails_with(gpt.check_kv_cache_step, 3, "function itself")


# ---------------------------------------------------------------- calling the library is refused

def _kv_by_cache(q, k_new, v_new, k_past, v_past):
    cache = KVCache()
    cache.append(k_past, v_past)
    k_all, v_all = cache.append(k_new, v_new)
    return _kv_step(q, k_new, v_new, k_past, v_past)[0], k_all, v_all


@pytest.mark.parametrize("check, delegating, dotted, correct", [
    (gpt.check_temperature, lambda z, T: torch.softmax(decoding.apply_temperature(z, T), -1),
     "coursekit.decoding.apply_temperature", True),
    (gpt.check_temperature, lambda z, T: torch.softmax(decoding.filter_logits(z, temperature=T), -1),
     "coursekit.decoding.filter_logits", True),
    (gpt.check_top_p_filter, lambda z, p: torch.softmax(decoding.top_p_filter(z, p), -1),
     "coursekit.decoding.top_p_filter", True),
    (gpt.check_top_p_filter, lambda z, p: torch.softmax(decoding.sampling.top_p_filter(z, p), -1),
     "coursekit.decoding.sampling.top_p_filter", True),
    (gpt.check_top_p_filter, lambda z, p: torch.softmax(decoding.filter_logits(z, top_p=p), -1),
     "coursekit.decoding.filter_logits", True),
    (gpt.check_kv_cache_step, _kv_by_cache, "coursekit.attention.KVCache", True),
])
def test_calling_the_library_is_refused(check, delegating, dotted, correct):
    refuses_delegation(check, delegating, dotted, correct=correct)


def test_reference_solutions_still_pass():
    # softmax itself is not what these exercises re-create: the notebook's solutions use torch.softmax
    assert _status(gpt.check_temperature, lambda z, T: torch.softmax(z / T, dim=-1)).passed
    assert _status(gpt.check_top_p_filter, _top_p).passed
    assert _status(gpt.check_kv_cache_step, _kv_step).passed

"""Checks of notebook 10: the reference passes, a stub is "not attempted", typical mistakes get their hint."""

from __future__ import annotations

import math

import pytest
import torch
from helpers.exercises import fails_with, notebook_solutions, passes, refuses_delegation, stub

from coursekit import decoding, exercises
from coursekit.attention import KVCache
from coursekit.exercises.checks import gpt


def _status(check, fn):
    return check(fn, verbose=False)


def test_checks_exported_and_stubs_not_attempted():
    for name in gpt.__all__:
        assert getattr(exercises, name) is getattr(gpt, name)
        assert getattr(gpt, name)(stub, verbose=False).status == "not attempted", name


# ---------------------------------------------------------------- the notebook's solutions

NB10 = notebook_solutions("10_gpt")
softmax_with_temperature, top_p_probs = NB10["softmax_with_temperature"], NB10["top_p_probs"]
kv_cache_step = NB10["kv_cache_step"]


@pytest.mark.parametrize("check, solution", [
    (gpt.check_temperature, softmax_with_temperature), (gpt.check_top_p_filter, top_p_probs),
    (gpt.check_kv_cache_step, kv_cache_step),
])
def test_the_notebook_solutions_pass(check, solution):
    passes(check, solution)


# ---------------------------------------------------------------- temperature

def test_temperature():
    assert _status(gpt.check_temperature, lambda z, T: torch.softmax(z / T, dim=-1)).passed
    fails_with(gpt.check_temperature, lambda z, T: torch.softmax(z * T, dim=-1), "multiplied the logits by T")
    fails_with(gpt.check_temperature, lambda z, T: torch.softmax(z, dim=-1) / T, "after the softmax")
    fails_with(gpt.check_temperature, lambda z, T: torch.softmax(z / T, dim=0), "wrong dimension")
    fails_with(gpt.check_temperature, lambda z, T: z / T, "is wrong")


def _exp_normalise(x, *, row_max=True, global_max=False, keepdim=True):
    if global_max:
        x = x - x.max()
    elif row_max:
        x = x - x.max(-1, keepdim=True).values
    e = x.exp()
    return e / e.sum(-1, keepdim=keepdim)


def _in_place_temperature(z, T):
    z /= T
    return torch.softmax(z, dim=-1)


TEMPERATURE_WRONG = {   # name -> (student function, a word of the hint or None)
    "softmax over dim=1": (lambda z, T: torch.softmax(z / T, dim=1), None),
    "log_softmax": (lambda z, T: torch.log_softmax(z / T, dim=-1), "log-probabilities"),
    "exp without the max (overflow)": (lambda z, T: _exp_normalise(z / T, row_max=False), "overflowed"),
    "one max for the whole batch": (lambda z, T: _exp_normalise(z / T, global_max=True), "ONE max"),
    "sum without keepdim": (lambda z, T: _exp_normalise(z / T, keepdim=False), None),
    "normalised over the whole tensor": (lambda z, T: (z / T).exp() / (z / T).exp().sum(), "whole tensor"),
    "in-place division of the logits": (_in_place_temperature, "in place"),
    "returns a list": (lambda z, T: torch.softmax(z / T, dim=-1).tolist(), "floating-point tensor"),
    "probabilities to the power T": (lambda z, T: _renorm(torch.softmax(z, -1) ** T), "multiplied the logits"),
    "temperature subtracted": (lambda z, T: torch.softmax(z - T, dim=-1), "forgot the temperature"),
    "T hard-coded to 0.5": (lambda z, T: torch.softmax(z / 0.5, dim=-1), None),
}


def _renorm(p):
    return p / p.sum(-1, keepdim=True)


@pytest.mark.parametrize("name", sorted(TEMPERATURE_WRONG))
def test_temperature_wrong_solutions_fail(name):
    fn, hint = TEMPERATURE_WRONG[name]
    fails_with(gpt.check_temperature, fn, "on ", *([hint] if hint else []))


def test_temperature_messages_name_the_case_and_hints():
    r = fails_with(gpt.check_temperature, lambda z, T: torch.softmax(z / T, dim=1), "dim=1")
    assert "(2, 3, 9)" in r.message
    r = fails_with(gpt.check_temperature, lambda z, T: _exp_normalise(z / T, keepdim=False), "keepdim")
    assert "square" in r.message


# ---------------------------------------------------------------- top-p

def _top_p(z, p, *, sort=True, inclusive=False, renormalise=True, descending=True, scatter=True, dim=-1,
           batch_norm=False):
    probs = torch.softmax(z, dim=-1)
    if sort:
        sorted_p, order = probs.sort(dim=-1, descending=descending)
    else:
        sorted_p, order = probs, torch.arange(probs.shape[-1]).expand_as(probs)
    cum = sorted_p.cumsum(dim)
    drop_sorted = cum > p if inclusive else (cum - sorted_p) >= p
    if not scatter:
        kept = sorted_p.masked_fill(drop_sorted, 0.0)
        return kept / kept.sum(-1, keepdim=True)
    drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
    kept = probs.masked_fill(drop, 0.0)
    if batch_norm:
        return kept / kept.sum()
    return kept / kept.sum(-1, keepdim=True) if renormalise else kept


def test_top_p():
    assert _status(gpt.check_top_p_filter, _top_p).passed
    fails_with(gpt.check_top_p_filter, lambda z, p: _top_p(z, p, inclusive=True), "off by one")
    fails_with(gpt.check_top_p_filter, lambda z, p: _top_p(z, p, sort=False), "not sorted")
    fails_with(gpt.check_top_p_filter, lambda z, p: _top_p(z, p, renormalise=False), "not renormalised")


def _filtered_logits(z, p):
    probs = torch.softmax(z, dim=-1)
    sorted_p, order = probs.sort(dim=-1, descending=True)
    drop = torch.zeros_like(probs, dtype=torch.bool).scatter(-1, order, (sorted_p.cumsum(-1) - sorted_p) >= p)
    return z.masked_fill(drop, float("-inf"))


def _in_place_top_p(z, p):
    probs = torch.softmax(z, dim=-1)
    sorted_p, order = probs.sort(dim=-1, descending=True)
    drop = torch.zeros_like(probs, dtype=torch.bool).scatter(-1, order, (sorted_p.cumsum(-1) - sorted_p) >= p)
    z.masked_fill_(drop, float("-inf"))
    return torch.softmax(z, dim=-1)


def _threshold(z, p):
    probs = torch.softmax(z, dim=-1)
    kept = probs * (probs >= p)
    return kept / kept.sum(-1, keepdim=True)


def _top_k_share(z, p):
    probs = torch.softmax(z, dim=-1)
    k = max(1, int(p * z.shape[-1]))
    values, idx = probs.topk(k, dim=-1)
    kept = torch.zeros_like(probs).scatter(-1, idx, values)
    return kept / kept.sum(-1, keepdim=True)


TOP_P_WRONG = {
    "left in sorted order": (lambda z, p: _top_p(z, p, scatter=False), "sorted order"),
    "cumsum down the batch": (lambda z, p: _top_p(z, p, dim=0), "over the batch"),
    "renormalised over the batch": (lambda z, p: _top_p(z, p, batch_norm=True), "whole batch"),
    "returns the filtered logits": (_filtered_logits, "filtered logits"),
    "p as a per-token threshold": (_threshold, "CUMULATIVE"),
    "top-k with k = p * V": (_top_k_share, "fixed number"),
    "in-place masking of the logits": (_in_place_top_p, "in place"),
    "sorted ascending": (lambda z, p: _top_p(z, p, descending=False), "DESCENDING"),
    "nothing filtered": (lambda z, p: torch.softmax(z, dim=-1), "nothing was removed"),
    "strict cumulative < p keeps": (lambda z, p: _top_p(z, p, inclusive=True), "off by one"),
    "p hard-coded to 0.9": (lambda z, p: _top_p(z, 0.9), None),
    "returns a numpy array": (lambda z, p: _top_p(z, p).numpy(), "floating-point tensor"),
}


@pytest.mark.parametrize("name", sorted(TOP_P_WRONG))
def test_top_p_wrong_solutions_fail(name):
    fn, hint = TOP_P_WRONG[name]
    fails_with(gpt.check_top_p_filter, fn, "on ", *([hint] if hint else []))


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


def _kv_divisor(divisor, dim=-1):
    def step(q, k_new, v_new, k_past, v_past):
        k_all, v_all = torch.cat([k_past, k_new], -2), torch.cat([v_past, v_new], -2)
        d = divisor(q, k_all)
        return torch.softmax(q @ k_all.transpose(-2, -1) / d, dim=dim) @ v_all, k_all, v_all
    return step


def _kv_in_place_scaling(q, k_new, v_new, k_past, v_past):
    q /= math.sqrt(q.shape[-1])                          # the caller's query is now scaled too
    k_all, v_all = torch.cat([k_past, k_new], -2), torch.cat([v_past, v_new], -2)
    return torch.softmax(q @ k_all.transpose(-2, -1), dim=-1) @ v_all, k_all, v_all


def _kv_only_itself(q, k_new, v_new, k_past, v_past):
    k_all, v_all = torch.cat([k_past, k_new], -2), torch.cat([v_past, v_new], -2)
    return _kv_step(q, k_new, v_new, k_past[..., :0, :], v_past[..., :0, :])[0], k_all, v_all


def _kv_cat_last_dim(q, k_new, v_new, k_past, v_past):
    out, _, _ = _kv_step(q, k_new, v_new, k_past, v_past)
    return out, torch.cat([k_past, k_new], -1), torch.cat([v_past, v_new], -1)


def _kv_value_in_front(q, k_new, v_new, k_past, v_past):
    out, k_all, _ = _kv_step(q, k_new, v_new, k_past, v_past)
    return out, k_all, torch.cat([v_new, v_past], -2)


KV_WRONG = {
    "divided by d_k": (_kv_divisor(lambda q, k: q.shape[-1]), "divided by d_k"),
    "divided by sqrt(number of keys)": (_kv_divisor(lambda q, k: math.sqrt(k.shape[-2])), "number of keys"),
    "softmax over the query axis": (_kv_divisor(lambda q, k: math.sqrt(q.shape[-1]), dim=-2), "wrong axis"),
    "sqrt(d_k) hard-coded for d_k = 4": (_kv_divisor(lambda q, k: 2.0), None),
    "attends only to itself": (_kv_only_itself, "only to itself"),
    "cache not appended": (lambda q, kn, vn, kp, vp: (_kv_step(q, kn, vn, kp, vp)[0], kp, vp), "not appended"),
    "concatenated along the features": (_kv_cat_last_dim, "wrong dimension"),
    "new value in front of the cache": (_kv_value_in_front, "new value went in front"),
    "out squeezed to (B, H, D)": (lambda *a: (_kv_step(*a)[0].squeeze(-2), *_kv_step(*a)[1:]), "shape"),
    "query scaled in place (the issue's case)": (_kv_in_place_scaling, "in place"),
    "returns (out, k_all) only": (lambda *a: _kv_step(*a)[:2], "return (out, k_all, v_all)"),
    "returns a dict": (lambda *a: dict(zip("okv", _kv_step(*a))), "return (out, k_all, v_all)"),
}


@pytest.mark.parametrize("name", sorted(KV_WRONG))
def test_kv_cache_wrong_solutions_fail(name):
    fn, hint = KV_WRONG[name]
    fails_with(gpt.check_kv_cache_step, fn, "on ", *([hint] if hint else []))


def test_kv_cache_in_place_scaling_is_not_blamed_on_the_formula():
    # the issue: the reference used to be computed on the student's (now scaled) query and the message said
    # "not divided by √d_k" to a student who did divide
    r = fails_with(gpt.check_kv_cache_step, _kv_in_place_scaling, "in place")
    assert "√d_k" not in r.message


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

"""Checks of notebook 06: the reference passes, a stub is "not attempted", typical mistakes get their hint."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from exercise_helpers import fails_with, passes, refuses_delegation, stub

from coursekit import attention as A
from coursekit import exercises
from coursekit.exercises.checks import attention_scores as sc


def test_checks_are_exported_and_stubs_not_attempted():
    for name in sc.__all__:
        assert getattr(exercises, name) is getattr(sc, name)
        assert getattr(sc, name)(stub, verbose=False).status == "not attempted", name


def _additive(h, s, W_h, W_s, v, *, act=torch.tanh, outside=False, no_query=False):
    pre = (s @ W_s.T) + (0 if no_query else (h @ W_h.T)[:, None, :])          # (B, S, A)
    return act(pre @ v) if outside else act(pre) @ v


def test_additive_score():
    passes(sc.check_additive_score, _additive)
    fails_with(sc.check_additive_score, lambda *a: _additive(*a, act=lambda x: x), "tanh is missing")
    fails_with(sc.check_additive_score, lambda *a: _additive(*a, outside=True), "after v")
    fails_with(sc.check_additive_score, lambda *a: _additive(*a, act=torch.sigmoid), "sigmoid")
    fails_with(sc.check_additive_score, lambda *a: _additive(*a, no_query=True), "W_h h is missing")


def test_general_score():
    passes(sc.check_general_score, lambda h, s, W: torch.einsum("bi,ij,bsj->bs", h, W, s))
    fails_with(sc.check_general_score, lambda h, s, W: torch.einsum("bj,ij,bsi->bs", h, W, s), "transposed")
    fails_with(sc.check_general_score, lambda h, s, W: torch.einsum("bi,bsi->bs", h, s), "ignores W")


def _context(scores, values, mask, *, dim=-1, use_mask=True, after=False, zero=False, raw=False):
    s = scores
    if use_mask and not after:
        s = s.masked_fill(~mask, 0.0 if zero else float("-inf"))
    w = torch.softmax(s, dim=dim).nan_to_num(0.0)
    if after:
        w = w * mask
    return torch.einsum("bs,bsd->bd", scores if raw else w, values), w


def test_attention_context():
    passes(sc.check_attention_context, _context)
    fails_with(sc.check_attention_context, lambda *a: _context(*a, dim=0), "batch axis")
    fails_with(sc.check_attention_context, lambda *a: _context(*a, use_mask=False), "mask is ignored")
    fails_with(sc.check_attention_context, lambda *a: _context(*a, after=True), "after the softmax")
    fails_with(sc.check_attention_context, lambda *a: _context(*a, zero=True), "instead of -inf")
    fails_with(sc.check_attention_context, lambda *a: _context(*a, raw=True), "raw scores")
    fails_with(sc.check_attention_context, lambda s, v, m: _context(s, v, m)[0], "pair")


# ---------------------------------------------------------------- calling the library is refused

def _additive_by_module(h, s, W_h, W_s, v, *, by_name=False):
    A_, d_h, d_s = W_h.shape[0], W_h.shape[1], W_s.shape[1]
    score = A.make_score("additive", d_h, d_s, d_attn=A_) if by_name else A.AdditiveScore(d_h, d_s, A_)
    with torch.no_grad():
        score.W_h.weight.copy_(W_h)
        score.W_s.weight.copy_(W_s)
        score.W_s.bias.zero_()
        score.v.weight.copy_(v[None])
        return score(h[:, None], s)[:, 0]


def _general_by_module(h, s, W):
    score = A.GeneralScore(W.shape[0], W.shape[1])
    with torch.no_grad():
        score.W.weight.copy_(W)
        return score(h[:, None], s)[:, 0]


def _general_by_bilinear(h, s, W, *, bilinear=F.bilinear):
    return bilinear(h[:, None, :].expand(-1, s.shape[1], -1).contiguous(), s.contiguous(), W[None])[..., 0]


def _context_by_library(scores, values, mask):
    weights = A.masked_softmax(scores, mask)
    return torch.einsum("bs,bsd->bd", weights, values), weights


@pytest.mark.parametrize("check, delegating, dotted, correct", [
    (sc.check_additive_score, _additive_by_module, "coursekit.attention.AdditiveScore", True),
    (sc.check_additive_score, lambda *a: _additive_by_module(*a, by_name=True), "coursekit.attention.make_score",
     True),
    (sc.check_general_score, _general_by_module, "coursekit.attention.GeneralScore", True),
    (sc.check_general_score, lambda h, s, W: A.make_score("general", *W.shape), "coursekit.attention.make_score",
     False),
    (sc.check_general_score, lambda h, s, W: _general_by_bilinear(h, s, W, bilinear=F.bilinear),
     "torch.nn.functional.bilinear", True),
    (sc.check_general_score, lambda h, s, W: _general_by_bilinear(h, s, W, bilinear=torch.bilinear),
     "torch.bilinear", True),
    (sc.check_general_score, lambda h, s, W: torch.nn.Bilinear(W.shape[0], W.shape[1], 1), "torch.nn.Bilinear",
     False),
    (sc.check_attention_context, _context_by_library, "coursekit.attention.masked_softmax", True),
    (sc.check_attention_context, lambda s, v, m: A.RecurrentAttention("dot", v.shape[-1], v.shape[-1]),
     "coursekit.attention.RecurrentAttention", False),
])
def test_calling_the_library_is_refused(check, delegating, dotted, correct):
    refuses_delegation(check, delegating, dotted, correct=correct)


def test_reference_solutions_still_pass():
    passes(sc.check_additive_score, _additive)
    passes(sc.check_general_score, lambda h, s, W: (s @ W.T @ h[:, :, None])[..., 0])   # notebook 06's solution
    passes(sc.check_attention_context, _context)

"""Checks of notebook 06: the reference passes, a stub is "not attempted", typical mistakes get their hint."""

from __future__ import annotations

import torch
from exercise_helpers import fails_with, passes, stub

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

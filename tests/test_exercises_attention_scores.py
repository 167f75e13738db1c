"""Checks of notebook 06: the reference passes, a stub is "not attempted", typical mistakes get their hint."""

from __future__ import annotations

import torch

from coursekit import exercises
from coursekit.exercises.checks import attention_scores as sc


def _passes(check, fn):
    result = check(fn, verbose=False)
    assert result.passed, result


def _fails_with(check, fn, hint_words):
    result = check(fn, verbose=False)
    assert result.status == "failed", result
    assert hint_words in result.message, result.message


def _stub(*args, **kwargs):
    raise NotImplementedError("exercise")


def test_checks_are_exported_and_stubs_not_attempted():
    for name in sc.__all__:
        assert getattr(exercises, name) is getattr(sc, name)
        assert getattr(sc, name)(_stub, verbose=False).status == "not attempted", name


def _additive(h, s, W_h, W_s, v, *, act=torch.tanh, outside=False, no_query=False):
    pre = (s @ W_s.T) + (0 if no_query else (h @ W_h.T)[:, None, :])          # (B, S, A)
    return act(pre @ v) if outside else act(pre) @ v


def test_additive_score():
    _passes(sc.check_additive_score, _additive)
    _fails_with(sc.check_additive_score, lambda *a: _additive(*a, act=lambda x: x), "tanh is missing")
    _fails_with(sc.check_additive_score, lambda *a: _additive(*a, outside=True), "after v")
    _fails_with(sc.check_additive_score, lambda *a: _additive(*a, act=torch.sigmoid), "sigmoid")
    _fails_with(sc.check_additive_score, lambda *a: _additive(*a, no_query=True), "W_h h is missing")


def test_general_score():
    _passes(sc.check_general_score, lambda h, s, W: torch.einsum("bi,ij,bsj->bs", h, W, s))
    _fails_with(sc.check_general_score, lambda h, s, W: torch.einsum("bj,ij,bsi->bs", h, W, s), "transposed")
    _fails_with(sc.check_general_score, lambda h, s, W: torch.einsum("bi,bsi->bs", h, s), "ignores W")


def _context(scores, values, mask, *, dim=-1, use_mask=True, after=False, zero=False, raw=False):
    s = scores
    if use_mask and not after:
        s = s.masked_fill(~mask, 0.0 if zero else float("-inf"))
    w = torch.softmax(s, dim=dim).nan_to_num(0.0)
    if after:
        w = w * mask
    return torch.einsum("bs,bsd->bd", scores if raw else w, values), w


def test_attention_context():
    _passes(sc.check_attention_context, _context)
    _fails_with(sc.check_attention_context, lambda *a: _context(*a, dim=0), "batch axis")
    _fails_with(sc.check_attention_context, lambda *a: _context(*a, use_mask=False), "mask is ignored")
    _fails_with(sc.check_attention_context, lambda *a: _context(*a, after=True), "after the softmax")
    _fails_with(sc.check_attention_context, lambda *a: _context(*a, zero=True), "instead of -inf")
    _fails_with(sc.check_attention_context, lambda *a: _context(*a, raw=True), "raw scores")
    _fails_with(sc.check_attention_context, lambda s, v, m: _context(s, v, m)[0], "pair")

"""Checks of notebook 06: the reference passes, a stub is "not attempted", typical mistakes get their hint."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from helpers.exercises import fails_with, notebook_solutions, passes, refuses_delegation, stub

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
    passes(sc.check_general_score, nb_general_score)   # notebook 06's solution
    passes(sc.check_attention_context, _context)


# ---------------------------------------------------------------- notebook 06's own solutions

NB06 = notebook_solutions("06_attention")
nb_additive_score = NB06["additive_score"]
nb_general_score = NB06["general_score"]
nb_attention_context = NB06["attention_context"]


def _manual_softmax(s, how):
    if how == "global max":
        e = torch.exp(s - s.max())
    elif how == "no max":
        e = torch.exp(s)
    else:
        e = torch.exp(s - s.amax(-1, keepdim=True))
    return e / (e.sum(-1) if how == "no keepdim" else e.sum(-1, keepdim=True))


@pytest.mark.parametrize("check, solution", [
    (sc.check_additive_score, nb_additive_score),
    (sc.check_general_score, nb_general_score),
    (sc.check_attention_context, nb_attention_context),
    # other correct spellings
    (sc.check_additive_score, lambda h, s, W_h, W_s, v: torch.einsum(
        "bsa,a->bs", torch.tanh(torch.einsum("ad,bd->ba", W_h, h)[:, None] + torch.einsum("ad,bsd->bsa", W_s, s)), v)),
    (sc.check_general_score, lambda h, s, W: torch.bmm(s, (h @ W).unsqueeze(-1)).squeeze(-1)),
    (sc.check_attention_context, lambda s, v, m: (
        torch.einsum("bs,bsd->bd", w := _manual_softmax(s.masked_fill(~m, -1e9), "per row"), v), w)),
])
def test_correct_solutions_pass(check, solution):
    passes(check, solution)


# ---------------------------------------------------------------- realistic wrong solutions
# name -> (function, words its failure message must contain besides "on ")

ADDITIVE_WRONG = {
    "W_h h without a sequence axis": (
        lambda h, s, W_h, W_s, v: torch.tanh(h @ W_h.T + s @ W_s.T) @ v, "without a sequence axis"),
    "projections not transposed": (
        lambda h, s, W_h, W_s, v: torch.tanh((h @ W_h)[:, None, :] + s @ W_s) @ v, "not transposed"),
    "W_h and W_s swapped": (
        lambda h, s, W_h, W_s, v: torch.tanh((h @ W_s.T)[:, None, :] + s @ W_h.T) @ v, "swapped"),
    "sum instead of v": (
        lambda h, s, W_h, W_s, v: torch.tanh((h @ W_h.T)[:, None, :] + s @ W_s.T).sum(-1), "summed"),
    "mean instead of v": (
        lambda h, s, W_h, W_s, v: torch.tanh((h @ W_h.T)[:, None, :] + s @ W_s.T).mean(-1), "averaged"),
    "v as a column, (B, S, 1) returned": (
        lambda h, s, W_h, W_s, v: torch.tanh((h @ W_h.T)[:, None, :] + s @ W_s.T) @ v[:, None], "size-1 axis"),
    "relu instead of tanh": (
        lambda h, s, W_h, W_s, v: torch.relu((h @ W_h.T)[:, None, :] + s @ W_s.T) @ v, "scores is wrong"),
    "h.unsqueeze_ on the caller's h": (
        lambda h, s, W_h, W_s, v: torch.tanh(h.unsqueeze_(1) @ W_h.T + s @ W_s.T) @ v, "changed its input"),
    "a list of scores": (
        lambda h, s, W_h, W_s, v: (torch.tanh((h @ W_h.T)[:, None, :] + s @ W_s.T) @ v).tolist(), "got list"),
}

GENERAL_WRONG = {
    "h without a sequence axis": (lambda h, s, W: (s @ W.T * h).sum(-1), "without a sequence axis"),
    "summed over the source positions": (lambda h, s, W: (s @ W.T * h[:, None, :]).sum(1), "dim=1"),
    "scaled like dot-product attention": (lambda h, s, W: (s @ W.T @ h[:, :, None])[..., 0] / h.shape[-1] ** 0.5,
                                          "no scaling"),
    "softmax-normalised": (lambda h, s, W: torch.softmax((s @ W.T @ h[:, :, None])[..., 0], -1), "softmax"),
    "bmm left (B, S, 1)": (lambda h, s, W: torch.bmm(s, (h @ W).unsqueeze(-1)), "size-1 axis"),
    "h W sᵀ without batching": (lambda h, s, W: (h @ W) @ s.transpose(1, 2), "on "),
    "int scores": (lambda h, s, W: (s @ W.T @ h[:, :, None])[..., 0].long(), "integer dtype"),
}


def _ctx(weights, values):
    return (weights[:, :, None] * values).sum(1), weights


CONTEXT_WRONG = {
    "hand-written softmax, global max": (
        lambda s, v, m: _ctx(_manual_softmax(s.masked_fill(~m, float("-inf")), "global max"), v), "whole tensor"),
    "hand-written softmax, no max": (
        lambda s, v, m: _ctx(_manual_softmax(s.masked_fill(~m, float("-inf")), "no max"), v), "does not subtract"),
    "hand-written softmax, sum without keepdim": (
        lambda s, v, m: _ctx(_manual_softmax(s.masked_fill(~m, float("-inf")), "no keepdim"), v), "keepdim"),
    "the first row's mask for every row": (
        lambda s, v, m: _ctx(torch.softmax(s.masked_fill(~m[0], float("-inf")), -1), v), "first row's mask"),
    "padding assumed at the end": (
        lambda s, v, m: _ctx(torch.softmax(s.masked_fill(
            torch.arange(s.shape[1]) >= m.sum(1, keepdim=True), float("-inf")), -1), v), "at the end"),
    "mask inverted": (lambda s, v, m: _ctx(torch.softmax(s.masked_fill(m, float("-inf")), -1), v), "inverted"),
    "(weights, context) order": (lambda s, v, m: nb_attention_context(s, v, m)[::-1], "wrong order"),
    "weights kept as a column (B, S, 1)": (
        lambda s, v, m: (lambda c, w: (c, w[:, :, None]))(*nb_attention_context(s, v, m)), "size-1 axis"),
    "weights broadcast on the feature axis": (
        lambda s, v, m: (((w := nb_attention_context(s, v, m)[1])[:, None, :] * v).sum(1), w), "feature axis"),
    "summed over the features": (
        lambda s, v, m: (((w := nb_attention_context(s, v, m)[1])[:, :, None] * v).sum(-1), w), "over the features"),
    "context from the unmasked weights": (
        lambda s, v, m: (torch.einsum("bs,bsd->bd", torch.softmax(s, -1), v), nb_attention_context(s, v, m)[1]),
        "before masking"),
    "bmm left (B, 1, d)": (
        lambda s, v, m: ((w := nb_attention_context(s, v, m)[1])[:, None, :] @ v, w), "size-1 axis"),
    "masked_fill_ on the caller's scores": (
        lambda s, v, m: _ctx(torch.softmax(s.masked_fill_(~m, float("-inf")), -1), v), "changed its input"),
    "a dict": (lambda s, v, m: dict(zip(("context", "weights"), nb_attention_context(s, v, m))), "pair"),
}

WRONG = [(sc.check_additive_score, name, *spec) for name, spec in ADDITIVE_WRONG.items()] + \
        [(sc.check_general_score, name, *spec) for name, spec in GENERAL_WRONG.items()] + \
        [(sc.check_attention_context, name, *spec) for name, spec in CONTEXT_WRONG.items()]


@pytest.mark.parametrize("check, name, fn, words", WRONG, ids=[f"{c.__name__}: {n}" for c, n, *_ in WRONG])
def test_realistic_wrong_solutions_fail_naming_the_input(check, name, fn, words):
    fails_with(check, fn, "on ", words)


def test_inputs_are_deterministic():
    for check in (sc.check_additive_score, sc.check_general_score, sc.check_attention_context):
        first = check(lambda *a: torch.zeros(1), verbose=False).message
        assert check(lambda *a: torch.zeros(1), verbose=False).message == first


def test_the_reference_is_not_computed_on_the_students_copies():
    # a function that scrambles its inputs and then crashes is reported as crashing, not as a wrong formula
    def scramble_then_fail(scores, values, mask):
        values.zero_()
        raise ValueError("boom")

    fails_with(sc.check_attention_context, scramble_then_fail, "raised ValueError")

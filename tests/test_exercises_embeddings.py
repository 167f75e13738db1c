"""Checks of notebooks 01/02: the reference passes, a stub is "not attempted", typical mistakes get their hint."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from exercise_helpers import fails_with, refuses_delegation, stub

from coursekit import classifiers as CL
from coursekit import embeddings as E
from coursekit import exercises
from coursekit.exercises.checks import classifiers as cls_checks
from coursekit.exercises.checks import embeddings as emb_checks


def test_checks_are_exported():
    for module in (emb_checks, cls_checks):
        for name in module.__all__:
            assert getattr(exercises, name) is getattr(module, name)


# ---------------------------------------------------------------- PPMI
def ppmi_ok(C):
    total = C.sum()
    p_wc = C / total
    p_w = C.sum(1, keepdim=True) / total
    p_c = C.sum(0, keepdim=True) / total
    pmi = torch.log(p_wc / (p_w * p_c))
    return torch.where(C > 0, pmi.clamp(min=0), torch.zeros_like(C))


def test_ppmi():
    assert emb_checks.check_ppmi(ppmi_ok, verbose=False).passed
    assert emb_checks.check_ppmi(stub, verbose=False).status == "not attempted"

    def no_clip(C):
        total = C.sum()
        pmi = torch.log(C * total / (C.sum(1, keepdim=True) * C.sum(0, keepdim=True)))
        return torch.where(C > 0, pmi, torch.zeros_like(C))

    fails_with(emb_checks.check_ppmi, no_clip, "max(0, PMI)")
    fails_with(emb_checks.check_ppmi, lambda C: ppmi_ok(C) / math.log(2), "log base 2")

    def counts(C):
        pmi = torch.log(C / (C.sum(1, keepdim=True) * C.sum(0, keepdim=True)))
        return torch.where(C > 0, pmi.clamp(min=0), torch.zeros_like(C))

    fails_with(emb_checks.check_ppmi, counts, "instead of probabilities")

    def minus_inf(C):
        total = C.sum()
        return torch.log(C * total / (C.sum(1, keepdim=True) * C.sum(0, keepdim=True))).clamp(max=1e9)

    fails_with(emb_checks.check_ppmi, minus_inf, "-inf")


# ---------------------------------------------------------------- SGNS loss
def sgns_ok(v_c, u_o, u_neg):
    pos = F.logsigmoid((u_o * v_c).sum(-1))
    neg = F.logsigmoid(-torch.einsum("bkd,bd->bk", u_neg, v_c)).sum(-1)
    return -(pos + neg)


def test_sgns_loss():
    check = emb_checks.check_sgns_loss
    assert check(sgns_ok, verbose=False).passed
    assert check(stub, verbose=False).status == "not attempted"
    fails_with(check, lambda v, u, n: -(F.logsigmoid((u * v).sum(-1))
                                        + F.logsigmoid(torch.einsum("bkd,bd->bk", n, v)).sum(-1)), "wrong sign")
    fails_with(check, lambda v, u, n: -(F.logsigmoid((u * v).sum(-1))
                                        + F.logsigmoid(-torch.einsum("bkd,bd->bk", n, v)).mean(-1)), "averaged")
    fails_with(check, lambda v, u, n: -sgns_ok(v, u, n), "log-likelihood")
    fails_with(check, lambda v, u, n: sgns_ok(v, u, n).mean(), "not a scalar")

    def unstable(v, u, n):
        pos = torch.log(torch.sigmoid((u * v).sum(-1)))
        neg = torch.log(torch.sigmoid(-torch.einsum("bkd,bd->bk", n, v))).sum(-1)
        return -(pos + neg)

    fails_with(check, unstable, "logsigmoid")


# ---------------------------------------------------------------- 3CosAdd
def analogy_ok(W, a, b, c):
    U = F.normalize(W, dim=1)
    sims = U @ (U[b] - U[a] + U[c])
    sims[[a, b, c]] = -float("inf")
    return int(sims.argmax())


def test_analogy():
    check = emb_checks.check_analogy
    assert check(analogy_ok, verbose=False).passed
    assert check(stub, verbose=False).status == "not attempted"

    def no_exclude(W, a, b, c):
        U = F.normalize(W, dim=1)
        return int((U @ (U[b] - U[a] + U[c])).argmax())

    def dot(W, a, b, c):
        sims = W @ (W[b] - W[a] + W[c])
        sims[[a, b, c]] = -float("inf")
        return int(sims.argmax())

    fails_with(check, no_exclude, "not excluded")
    fails_with(check, dot, "raw dot products")
    fails_with(check, lambda W, a, b, c: "queen", "as an int")


# ---------------------------------------------------------------- BOW logits
def bow_ok(ids, mask, scores, bias):
    return (scores[ids] * mask.unsqueeze(-1)).sum(1) + bias


def test_bow_logits():
    check = cls_checks.check_bow_logits
    assert check(bow_ok, verbose=False).passed
    assert check(stub, verbose=False).status == "not attempted"
    fails_with(check, lambda ids, mask, s, b: s[ids].sum(1) + b, "padding positions were counted")
    fails_with(check, lambda ids, mask, s, b: (s[ids] * mask.unsqueeze(-1)).sum(1), "bias is missing")
    fails_with(check, lambda ids, mask, s, b: (s[ids] * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True) + b,
                "averaged")


# ---------------------------------------------------------------- DAN forward
def dan_ok(emb, mask, W1, b1, W2, b2):
    m = mask.unsqueeze(-1).float()
    z = (emb * m).sum(1) / m.sum(1)
    return torch.relu(z @ W1.T + b1) @ W2.T + b2


def test_dan_forward():
    check = cls_checks.check_dan_forward
    assert check(dan_ok, verbose=False).passed
    assert check(stub, verbose=False).status == "not attempted"
    fails_with(check, lambda e, m, W1, b1, W2, b2: torch.relu(e.mean(1) @ W1.T + b1) @ W2.T + b2,
                "includes the padding")
    fails_with(check, lambda e, m, W1, b1, W2, b2: (dan_ok(e, m, W1, b1, W2, b2) - b2 - 0) * 0
                + ((e * m.unsqueeze(-1)).sum(1) / m.sum(1, keepdim=True) @ W1.T + b1) @ W2.T + b2, "ReLU is missing")
    fails_with(check, lambda e, m, W1, b1, W2, b2: torch.relu(dan_ok(e, m, W1, b1, W2, b2)), "output layer")
    fails_with(check, lambda e, m, W1, b1, W2, b2: dan_ok(e, m, W1.T, b1, W2, b2), "raised")


# ---------------------------------------------------------------- max over time
def pool_ok(x, mask):
    return x.masked_fill(~mask.unsqueeze(-1), float("-inf")).max(dim=1).values


def test_max_over_time():
    check = cls_checks.check_max_over_time
    assert check(pool_ok, verbose=False).passed
    assert check(stub, verbose=False).status == "not attempted"
    fails_with(check, lambda x, mask: x.max(dim=1).values, "mask was ignored")
    fails_with(check, lambda x, mask: (x * mask.unsqueeze(-1)).max(dim=1).values, "instead of −inf")
    fails_with(check, lambda x, mask: (x * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True), "mean pooling")
    fails_with(check, lambda x, mask: pool_ok(x, mask).T, "shape")


# ---------------------------------------------------------------- calling the library is refused

def _word_vectors(W):
    return E.WordVectors([str(i) for i in range(len(W))], W)


def _analogy_by_library(W, a, b, c):
    return int(_word_vectors(W).analogy(str(a), str(b), str(c))[0][0])


def _analogy_by_nearest(W, a, b, c):
    wv = _word_vectors(W)
    target = wv.unit[b] - wv.unit[a] + wv.unit[c]
    return int(wv.nearest(target, 1, exclude=(str(a), str(b), str(c)))[0][0])


def _dan_by_library_mean(emb, mask, W1, b1, W2, b2):
    return torch.relu(CL.masked_mean(emb, mask) @ W1.T + b1) @ W2.T + b2


@pytest.mark.parametrize("check, delegating, dotted, correct", [
    (emb_checks.check_ppmi, lambda C: E.ppmi(C), "coursekit.embeddings.ppmi", True),
    (emb_checks.check_sgns_loss, lambda v, u, n: E.sgns_loss(v, u, n), "coursekit.embeddings.sgns_loss", True),
    (emb_checks.check_analogy, _analogy_by_library, "coursekit.embeddings.WordVectors.analogy", True),
    (emb_checks.check_analogy, _analogy_by_nearest, "coursekit.embeddings.WordVectors.nearest", True),
    (emb_checks.check_analogy, lambda W, a, b, c: E.evaluate_analogies(_word_vectors(W), []),
     "coursekit.embeddings.evaluate_analogies", False),
    (cls_checks.check_bow_logits, lambda ids, mask, s, b: CL.BOW(s.shape[0], s.shape[1]),
     "coursekit.classifiers.BOW", False),
    (cls_checks.check_dan_forward, _dan_by_library_mean, "coursekit.classifiers.masked_mean", True),
    (cls_checks.check_dan_forward, lambda e, m, W1, b1, W2, b2: CL.DAN(10, e.shape[-1]),
     "coursekit.classifiers.DAN", False),
    (cls_checks.check_max_over_time, lambda x, mask: CL.masked_max(x, mask), "coursekit.classifiers.masked_max",
     True),
])
def test_calling_the_library_is_refused(check, delegating, dotted, correct):
    refuses_delegation(check, delegating, dotted, correct=correct)


@pytest.mark.parametrize("check, solution", [
    (emb_checks.check_ppmi, ppmi_ok), (emb_checks.check_sgns_loss, sgns_ok), (emb_checks.check_analogy, analogy_ok),
    (cls_checks.check_bow_logits, bow_ok), (cls_checks.check_dan_forward, dan_ok),
    (cls_checks.check_max_over_time, pool_ok),
])
def test_reference_solutions_still_pass(check, solution):
    assert check(solution, verbose=False).passed

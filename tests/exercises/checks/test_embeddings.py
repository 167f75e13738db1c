"""Checks of notebooks 01/02: the reference passes, a stub is "not attempted", typical mistakes get their hint."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from helpers.exercises import fails_with, notebook_solutions, refuses_delegation, stub

from coursekit import exercises
from coursekit.embeddings import classifiers as CL
from coursekit.embeddings import counts as E
from coursekit.embeddings import sgns as SG
from coursekit.embeddings import word_vectors as WV
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
    fails_with(check, lambda e, m, W1, b1, W2, b2: dan_ok(e, m, W1.T, b1, W2, b2), "W1 was not transposed")


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
    return WV.WordVectors([str(i) for i in range(len(W))], W)


def _analogy_by_library(W, a, b, c):
    return int(_word_vectors(W).analogy(str(a), str(b), str(c))[0][0])


def _analogy_by_nearest(W, a, b, c):
    wv = _word_vectors(W)
    target = wv.unit[b] - wv.unit[a] + wv.unit[c]
    return int(wv.nearest(target, 1, exclude=(str(a), str(b), str(c)))[0][0])


def _dan_by_library_mean(emb, mask, W1, b1, W2, b2):
    return torch.relu(CL.masked_mean(emb, mask) @ W1.T + b1) @ W2.T + b2


@pytest.mark.parametrize("check, delegating, dotted, correct", [
    (emb_checks.check_ppmi, lambda C: E.ppmi(C), "coursekit.embeddings.counts.ppmi", True),
    (emb_checks.check_sgns_loss, lambda v, u, n: SG.sgns_loss(v, u, n), "coursekit.embeddings.sgns.sgns_loss", True),
    (emb_checks.check_analogy, _analogy_by_library, "coursekit.embeddings.word_vectors.WordVectors.analogy", True),
    (emb_checks.check_analogy, _analogy_by_nearest, "coursekit.embeddings.word_vectors.WordVectors.nearest", True),
    (emb_checks.check_analogy, lambda W, a, b, c: WV.evaluate_analogies(_word_vectors(W), []),
     "coursekit.embeddings.word_vectors.evaluate_analogies", False),
    (cls_checks.check_bow_logits, lambda ids, mask, s, b: CL.BOW(s.shape[0], s.shape[1]),
     "coursekit.embeddings.classifiers.BOW", False),
    (cls_checks.check_dan_forward, _dan_by_library_mean, "coursekit.embeddings.classifiers.masked_mean", True),
    (cls_checks.check_dan_forward, lambda e, m, W1, b1, W2, b2: CL.DAN(10, e.shape[-1]),
     "coursekit.embeddings.classifiers.DAN", False),
    (cls_checks.check_max_over_time, lambda x, mask: CL.masked_max(x, mask),
     "coursekit.embeddings.classifiers.masked_max", True),
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


# ================================================================ realistic wrong solutions, per check
# Every check: its notebook's reference solution passes (notebooks 01/02, read from them below), and each wrong
# solution of its list fails naming the input ("on <case>, …") and, where the check has one, with the hint
# written for it. A realistic mistake the check cannot catch goes to the KNOWN_UNCAUGHT list with the reason.


NB01, NB02 = notebook_solutions("01_word_embeddings"), notebook_solutions("02_text_classifiers")
my_ppmi = NB01["my_ppmi"]                    # notebook 01, exercise 1
my_sgns_loss = NB01["my_sgns_loss"]          # notebook 01, exercise 2
my_analogy = NB01["my_analogy"]              # notebook 01, exercise 3
my_bow_logits = NB02["my_bow_logits"]        # notebook 02, exercise 1
my_dan_forward = NB02["my_dan_forward"]      # notebook 02, exercise 2
my_max_over_time = NB02["my_max_over_time"]  # notebook 02, exercise 3


@pytest.mark.parametrize("check, solution", [
    (emb_checks.check_ppmi, my_ppmi), (emb_checks.check_sgns_loss, my_sgns_loss),
    (emb_checks.check_analogy, my_analogy), (cls_checks.check_bow_logits, my_bow_logits),
    (cls_checks.check_dan_forward, my_dan_forward), (cls_checks.check_max_over_time, my_max_over_time),
])
def test_the_notebook_solutions_pass(check, solution):
    assert check(solution, verbose=False).passed


def test_equivalent_correct_solutions_pass():
    def ppmi_logs(C):
        total = C.sum()
        pmi = C.log() + total.log() - C.sum(1, keepdim=True).log() - C.sum(0, keepdim=True).log()
        out = torch.zeros_like(C)
        out[C > 0] = pmi[C > 0].clamp(min=0)
        return out

    def analogy_cosine(W, a, b, c):
        U = W / W.norm(dim=1, keepdim=True)
        sims = F.cosine_similarity(W, (U[b] - U[a] + U[c])[None], dim=1)
        sims[[a, b, c]] = -1e9
        return sims.argmax()                                  # a 0-d int64 tensor is an id too

    def analogy_numpy(W, a, b, c):
        U = (W / W.norm(dim=1, keepdim=True)).numpy()
        sims = U @ (U[b] - U[a] + U[c])
        sims[[a, b, c]] = -np.inf
        return sims.argmax()                                  # a numpy integer

    for check, fn in [
        (emb_checks.check_ppmi, ppmi_logs),
        (emb_checks.check_sgns_loss, lambda v, u, n: -F.logsigmoid((u * v).sum(-1))
         - F.logsigmoid(-torch.bmm(n, v.unsqueeze(2)).squeeze(2)).sum(-1)),
        (emb_checks.check_analogy, analogy_cosine), (emb_checks.check_analogy, analogy_numpy),
        (cls_checks.check_bow_logits, lambda ids, m, s, b: torch.einsum("btc,bt->bc", s[ids], m.float()) + b),
        (cls_checks.check_dan_forward, lambda e, m, W1, b1, W2, b2: F.linear(torch.relu(F.linear(
            (e * m[..., None]).sum(1) / m.sum(1, keepdim=True), W1, b1)), W2, b2)),
        (cls_checks.check_max_over_time, lambda x, m: torch.where(m[..., None], x, -1e30).amax(1)),
    ]:
        assert check(fn, verbose=False).passed, fn


def test_inputs_are_deterministic_and_vary():
    for cases in (emb_checks._ppmi_cases, emb_checks._sgns_cases, emb_checks._analogy_cases,
                  cls_checks._bow_cases, cls_checks._dan_cases, cls_checks._pool_cases):
        for one, two in zip(cases(), cases()):
            assert one[0] == two[0]
            for x, y in zip(one[1:], two[1:]):
                assert torch.equal(x, y) if isinstance(x, torch.Tensor) else x == y
    bow = cls_checks._bow_cases()
    assert len({(s.shape, ids.shape) for _, ids, _, s, _ in bow}) == len(bow) >= 5
    pads = {int(ids[~m][0]) for _, ids, m, _, _ in bow if (~m).any()}
    assert {0, 3} <= pads and any(len(set(ids[~m].tolist())) > 1 for _, ids, m, _, _ in bow)
    for _, ids, mask, scores, _ in bow:
        assert ids.dtype == torch.int64 and mask.dtype == torch.bool and (scores.abs() > 0).all()
    dan = cls_checks._dan_cases()
    assert len({(e.shape, W1.shape, W2.shape) for _, e, _, W1, _, W2, _ in dan}) == len(dan) >= 4
    for _, emb, mask, *_ in dan:
        assert (emb[~mask].abs() > 1).all()                   # the padding vectors are far from zero
    assert any(m.sum(1).min() == 1 for _, _, m, *_ in dan) and any(len(e) == 1 for _, e, *_ in dan)
    assert len({x.shape for _, x, _ in cls_checks._pool_cases()}) >= 5
    assert {C.dtype for _, C in emb_checks._ppmi_cases()} == {torch.float32, torch.float64}
    assert any((C.sum(0) == 0).any() and (C.sum(1) == 0).any() for _, C in emb_checks._ppmi_cases())
    assert len({(v.shape, n.shape) for _, v, _, n in emb_checks._sgns_cases()}) >= 5


def test_analogy_cases_separate_every_mistake_with_a_margin():
    cases = emb_checks._analogy_cases()
    for case, W, (a, b, c) in cases:
        U = F.normalize(W, dim=1)
        sims = U @ (U[b] - U[a] + U[c])
        sims[[a, b, c]] = -float("inf")
        top = sims.topk(2).values
        assert top[0] - top[1] > 0.03, case                  # no near-tie decides the grade
    hints = emb_checks._analogy_mistakes(*cases[0][1:2], *cases[0][2])
    for hint in hints:
        assert any(emb_checks._analogy_mistakes(W, *q)[hint] != emb_checks._analogy_ref(W, *q)
                   for _, W, q in cases), hint


# ---------------------------------------------------------------- PPMI


def _ppmi_from(C, p_w, p_c, clip=True):
    pmi = torch.log(C / C.sum() / (p_w * p_c))
    return torch.where(C > 0, pmi.clamp(min=0) if clip else pmi, torch.zeros_like(C))


def _ppmi_in_place(C):
    C /= C.sum()
    return _ppmi_from(C, C.sum(1, keepdim=True), C.sum(0, keepdim=True))


def _ppmi_mask_negative(C):
    total = C.sum()
    pmi = torch.log(C * total / (C.sum(1, keepdim=True) * C.sum(0, keepdim=True)))
    pmi[pmi < 0] = 0
    return pmi


PPMI_WRONG = {
    "P(c) from the row sums": (lambda C: _ppmi_from(C, C.sum(1, keepdim=True) / C.sum(), C.sum(1, keepdim=True).T
                                                    / C.sum()), ["row sums"]),
    "row and column sums swapped": (lambda C: _ppmi_from(C, C.sum(0, keepdim=True).T / C.sum(),
                                                         C.sum(1, keepdim=True).T / C.sum()), ["swapped"]),
    "sums without keepdim": (lambda C: _ppmi_from(C, C.sum(1) / C.sum(), C.sum(0) / C.sum()), ["keepdim"]),
    "clamp after the log, no where": (lambda C: torch.log(C * C.sum() / (C.sum(1, keepdim=True)
                                                                        * C.sum(0, keepdim=True))).clamp(min=0),
                                      ["all-zero row", "NaN"]),
    "pmi[pmi < 0] = 0": (_ppmi_mask_negative, ["all-zero row", "NaN"]),
    "context smoothing α = 0.75": (lambda C: _ppmi_from(C, C.sum(1, keepdim=True) / C.sum(),
                                                        C.sum(0, keepdim=True) ** 0.75
                                                        / (C.sum(0) ** 0.75).sum()), ["α = 0.75"]),
    "add-one smoothing": (lambda C: my_ppmi(C + 1), ["add-one"]),
    "log base 10": (lambda C: my_ppmi(C) / math.log(10), ["log base 10"]),
    "returns a numpy array": (lambda C: my_ppmi(C).numpy(), ["float tensor", "ndarray"]),
    "in-place normalisation of C": (_ppmi_in_place, ["changed its input", "in place"]),
    "square V × V result hard-coded": (lambda C: torch.zeros(C.shape[0], C.shape[0], dtype=C.dtype)
                                       + my_ppmi(C)[:, :C.shape[0]] if C.shape[0] <= C.shape[1] else my_ppmi(C),
                                       ["non-square"]),
    "where(C >= 1) for integer counts": (lambda C: torch.where(C >= 1, my_ppmi(C), torch.zeros_like(C)),
                                         ["fractional counts", "not C >= 1"]),
    "zero where C > 0 (inverted where)": (lambda C: torch.where(C == 0, my_ppmi(C), torch.zeros_like(C)),
                                          ["the PPMI matrix is wrong", "keeps the wrong cells"]),
}
KNOWN_UNCAUGHT_PPMI: dict = {}


@pytest.mark.parametrize("name", sorted(PPMI_WRONG))
def test_ppmi_wrong_solutions_fail(name):
    fn, words = PPMI_WRONG[name]
    fails_with(emb_checks.check_ppmi, fn, "on ", *words)


# ---------------------------------------------------------------- SGNS loss


def _sgns(v, u, n, *, neg_with=None, eps=None):
    pos = (u * v).sum(-1)
    neg = (n * (v if neg_with is None else neg_with).unsqueeze(1)).sum(-1)
    if eps is not None:
        return -(torch.log(torch.sigmoid(pos) + eps) + torch.log(torch.sigmoid(-neg) + eps).sum(-1))
    return -(F.logsigmoid(pos) + F.logsigmoid(-neg).sum(-1))


def _sgns_squeeze_all(v, u, n):
    neg = torch.bmm(n, v.unsqueeze(2)).squeeze()              # (B, K), but (B,) when K = 1 and (K,) when B = 1
    return -(F.logsigmoid((u * v).sum(-1)) + F.logsigmoid(-neg).sum(-1))


def _sgns_in_place(v, u, n):
    n.neg_()
    return -(F.logsigmoid((u * v).sum(-1)) + F.logsigmoid((n * v.unsqueeze(1)).sum(-1)).sum(-1))


SGNS_WRONG = {
    "noise dotted with u_o": (lambda v, u, n: _sgns(v, u, n, neg_with=u), ["context vector u_o"]),
    "sum over k inside log σ": (lambda v, u, n: -(F.logsigmoid((u * v).sum(-1))
                                                 + F.logsigmoid(-(n * v.unsqueeze(1)).sum(-1).sum(-1))),
                                ["inside the log σ"]),
    "u_neg @ v_c.T": (lambda v, u, n: -(F.logsigmoid((u * v).sum(-1)) + F.logsigmoid(-(n @ v.T)).sum((-1, -2))),
                      ["every centre vector"]),
    "epsilon inside the log": (lambda v, u, n: _sgns(v, u, n, eps=1e-8), ["epsilon inside the log"]),
    "keepdim=True: (B, 1)": (lambda v, u, n: my_sgns_loss(v, u, n)[:, None], ["trailing axis"]),
    "positive term missing": (lambda v, u, n: -F.logsigmoid(-(n * v.unsqueeze(1)).sum(-1)).sum(-1),
                              ["positive term is missing"]),
    "squeeze() without a dim": (_sgns_squeeze_all, ["one noise word", "squeeze() without a dim"]),
    "log(1 - sigmoid) for the noise": (lambda v, u, n: -(F.logsigmoid((u * v).sum(-1)) + torch.log(
        1 - torch.sigmoid((n * v.unsqueeze(1)).sum(-1))).sum(-1)), ["large scores", "logsigmoid"]),
    "K = 5 hard-coded": (lambda v, u, n: -(F.logsigmoid((u * v).sum(-1)) + F.logsigmoid(
        -(n.reshape(-1, 5, v.shape[1]) * v.unsqueeze(1)).sum(-1)).sum(-1)), ["on one pair", "raised"]),
    "noise negated in place": (_sgns_in_place, ["changed its input (argument 3", "in place"]),
    "returns a list": (lambda v, u, n: my_sgns_loss(v, u, n).tolist(), ["float tensor", "list"]),
    "sigmoid without the log": (lambda v, u, n: -(torch.sigmoid((u * v).sum(-1))
                                                  + torch.sigmoid(-(n * v.unsqueeze(1)).sum(-1)).sum(-1)),
                                ["the loss is wrong"]),
}
KNOWN_UNCAUGHT_SGNS: dict = {}


@pytest.mark.parametrize("name", sorted(SGNS_WRONG))
def test_sgns_wrong_solutions_fail(name):
    fn, words = SGNS_WRONG[name]
    fails_with(emb_checks.check_sgns_loss, fn, "on ", *words)


# ---------------------------------------------------------------- 3CosAdd


def _analogy(W, a, b, c, *, offset_from=None, candidates=None, dim=1, excluded="abc", fill=-float("inf")):
    U = F.normalize(W, dim=dim)
    src = U if offset_from is None else offset_from
    sims = (U if candidates is None else candidates) @ (src[b] - src[a] + src[c])
    ids = {"a": a, "b": b, "c": c}
    sims[[ids[w] for w in excluded]] = fill
    return int(sims.argmax())


def _analogy_in_place(W, a, b, c):
    W /= W.norm(dim=1, keepdim=True)
    return _analogy(W, a, b, c)


ANALOGY_WRONG = {
    "offset from the raw vectors": (lambda W, a, b, c: _analogy(W, a, b, c, offset_from=W), ["raw vectors"]),
    "candidates not normalised": (lambda W, a, b, c: _analogy(W, a, b, c, candidates=W), ["candidate vectors"]),
    "normalised the columns": (lambda W, a, b, c: _analogy(W, a, b, c, dim=0), ["columns were normalised"]),
    "excluded words set to 0": (lambda W, a, b, c: _analogy(W, a, b, c, fill=0.0), ["score 0"]),
    "only b and c excluded": (lambda W, a, b, c: _analogy(W, a, b, c, excluded="bc"), ["a was not excluded"]),
    "only c excluded": (lambda W, a, b, c: _analogy(W, a, b, c, excluded="c"), ["a and b were not excluded"]),
    "only a and b excluded": (lambda W, a, b, c: _analogy(W, a, b, c, excluded="ab"), ["c was not excluded"]),
    "offset b + a − c": (lambda W, a, b, c: _analogy(W, c, b, a), ["wrong signs (b + a − c)"]),
    "returns the best score": (lambda W, a, b, c: F.normalize(W, dim=1)[my_analogy(W, a, b, c)]
                               @ F.normalize(W, dim=1)[b], ["similarity score"]),
    "returns topk": (lambda W, a, b, c: torch.tensor([1.0, 2.0]).topk(1), ["as an int"]),
    "normalises W in place": (_analogy_in_place, ["changed its input (argument 1", "in place"]),
    "argmin": (lambda W, a, b, c: int((F.normalize(W, dim=1) @ W[b]).argmin()), ["the answer should be word"]),
    "one global norm (W / W.norm())": (lambda W, a, b, c: _analogy(W / W.norm(), a, b, c, candidates=W / W.norm(),
                                                                   offset_from=W / W.norm()), ["raw dot products"]),
    "an id one past the vocabulary": (lambda W, a, b, c: len(W), ["not a word id"]),
}
KNOWN_UNCAUGHT_ANALOGY: dict = {}


@pytest.mark.parametrize("name", sorted(ANALOGY_WRONG))
def test_analogy_wrong_solutions_fail(name):
    fn, words = ANALOGY_WRONG[name]
    fails_with(emb_checks.check_analogy, fn, "on ", *words)


# ---------------------------------------------------------------- BOW logits


def _bow_zero_pad_row(ids, mask, scores, bias):
    scores[0] = 0.0                                           # "the padding word scores nothing"
    return scores[ids].sum(1) + bias


BOW_WRONG = {
    "padding found as ids != 0": (lambda ids, m, s, b: (s[ids] * (ids != 0).unsqueeze(-1)).sum(1) + b,
                                  ["pad id 5", "comparing the ids with 0"]),
    "inverted mask": (lambda ids, m, s, b: (s[ids] * ~m.unsqueeze(-1)).sum(1) + b, ["mask was inverted"]),
    "bias added per token": (lambda ids, m, s, b: ((s[ids] + b) * m.unsqueeze(-1)).sum(1),
                             ["added to every token"]),
    "mask without unsqueeze": (lambda ids, m, s, b: (s[ids] * m).sum(1) + b, ["T = C", "trailing axis"]),
    "sum over the batch axis": (lambda ids, m, s, b: (s[ids] * m.unsqueeze(-1)).sum(0) + b, ["should have shape"]),
    "one-hot with V = 12 hard-coded": (lambda ids, m, s, b: (F.one_hot(ids, 12).float() * m.unsqueeze(-1)).sum(1)
                                       @ s + b, ["V=8", "raised"]),
    "zeroes the padding row of the scores in place": (_bow_zero_pad_row, ["changed its input (argument 3"]),
    "subtracts the pad row's scores": (lambda ids, m, s, b: s[ids].sum(1) - (~m).sum(1, keepdim=True) * s[0] + b,
                                       ["the matrix of logits is wrong"]),
    "ids * mask (padding mapped to id 0)": (lambda ids, m, s, b: s[ids * m].sum(1) + b,
                                            ["the matrix of logits is wrong"]),
    "returns long logits": (lambda ids, m, s, b: my_bow_logits(ids, m, s, b).long(), ["float tensor"]),
    "scores indexed with the mask": (lambda ids, m, s, b: s[ids[m]].sum(0, keepdim=True).expand(len(ids), -1) + b,
                                     ["the matrix of logits is wrong"]),
}
KNOWN_UNCAUGHT_BOW: dict = {}


@pytest.mark.parametrize("name", sorted(BOW_WRONG))
def test_bow_logits_wrong_solutions_fail(name):
    fn, words = BOW_WRONG[name]
    fails_with(cls_checks.check_bow_logits, fn, "on ", *words)


# ---------------------------------------------------------------- DAN forward


def _dan(emb, mask, W1, b1, W2, b2, *, z=None, act=torch.relu, out=lambda x: x):
    if z is None:
        m = mask.unsqueeze(-1).float()
        z = (emb * m).sum(1) / m.sum(1)
    return out(act(z @ W1.T + b1) @ W2.T + b2)


def _summed(e, m):
    return (e * m.unsqueeze(-1)).sum(1)


DAN_WRONG = {
    "padding summed, divided by the lengths": (lambda e, m, *w: _dan(e, m, *w, z=e.sum(1) / m.sum(1, keepdim=True)),
                                               ["padding vectors were summed"]),
    "masked sum divided by T": (lambda e, m, *w: _dan(e, m, *w, z=_summed(e, m) / e.shape[1]), ["divided by T"]),
    "divided by mask.sum()": (lambda e, m, *w: _dan(e, m, *w, z=_summed(e, m) / m.sum()), ["whole batch"]),
    "mask.sum(1) without keepdim": (lambda e, m, *w: _dan(e, m, *w, z=_summed(e, m) / m.sum(1)),
                                    ["B = T = d", "lacks keepdim"]),
    "inverted mask": (lambda e, m, *w: _dan(e, ~m, *w), ["mask was inverted"]),
    "mask without unsqueeze": (lambda e, m, *w: _dan(e, m, *w, z=(e * m).sum(1) / m.sum(1, keepdim=True)),
                               ["trailing axis"]),
    "tanh": (lambda e, m, *w: _dan(e, m, *w, act=torch.tanh), ["tanh"]),
    "W1 not transposed": (lambda e, m, W1, b1, W2, b2: _dan(e, m, W1.T, b1, W2, b2), ["W1 was not transposed"]),
    "W2 not transposed": (lambda e, m, W1, b1, W2, b2: _dan(e, m, W1, b1, W2.T, b2), ["W2 was not transposed"]),
    "b1 missing": (lambda e, m, W1, b1, W2, b2: _dan(e, m, W1, 0 * b1, W2, b2), ["hidden bias b1 is missing"]),
    "b2 missing": (lambda e, m, W1, b1, W2, b2: _dan(e, m, W1, b1, W2, 0 * b2), ["output bias b2 is missing"]),
    "softmax on the output": (lambda e, m, *w: _dan(e, m, *w, out=lambda x: torch.softmax(x, -1)), ["softmax"]),
    "dropout left on": (lambda e, m, *w: _dan(e, m, *w, z=F.dropout(_summed(e, m) / m.sum(1, keepdim=True), 0.5)),
                        ["the matrix of logits is wrong"]),
    "hidden layer pooled instead of the embeddings": (
        lambda e, m, W1, b1, W2, b2: ((torch.relu(e @ W1.T + b1) * m.unsqueeze(-1)).sum(1)
                                      / m.sum(1, keepdim=True)) @ W2.T + b2, ["the matrix of logits is wrong"]),
}
KNOWN_UNCAUGHT_DAN: dict = {}


@pytest.mark.parametrize("name", sorted(DAN_WRONG))
def test_dan_forward_wrong_solutions_fail(name):
    fn, words = DAN_WRONG[name]
    fails_with(cls_checks.check_dan_forward, fn, "on ", *words)


# ---------------------------------------------------------------- max over time


def _pool_fill(x, mask, value):
    return x.masked_fill(~mask.unsqueeze(-1), value).max(dim=1).values


def _pool_in_place(x, mask):
    x.masked_fill_(~mask.unsqueeze(-1), float("-inf"))
    return x.max(dim=1).values


POOL_WRONG = {
    "inverted mask": (lambda x, m: x.masked_fill(m.unsqueeze(-1), float("-inf")).max(dim=1).values,
                      ["mask was inverted"]),
    "max over the features": (lambda x, m: x.masked_fill(~m.unsqueeze(-1), float("-inf")).max(dim=-1).values,
                              ["T = F", "over the features"]),
    "first sentence's length for every row": (lambda x, m: x[:, :int(m[0].sum())].max(dim=1).values,
                                               ["first sentence's length"]),
    "longest length for every row": (lambda x, m: x[:, :int(m.sum(1).max())].max(dim=1).values, ["longest length"]),
    "padding filled with -1e4": (lambda x, m: _pool_fill(x, m, -1e4), ["below -10⁶", "padding position won"]),
    "x * mask - 1e4 * ~mask": (lambda x, m: (x * m.unsqueeze(-1) - 1e4 * ~m.unsqueeze(-1)).max(dim=1).values,
                               ["padding position won"]),
    "returns (values, indices)": (lambda x, m: x.masked_fill(~m.unsqueeze(-1), float("-inf")).max(dim=1),
                                  ["(values, indices)"]),
    "keepdim=True": (lambda x, m: x.masked_fill(~m.unsqueeze(-1), float("-inf")).amax(dim=1, keepdim=True),
                     ["reduced axis was kept"]),
    "returns the positions": (lambda x, m: x.masked_fill(~m.unsqueeze(-1), float("-inf")).argmax(dim=1),
                              ["look like positions"]),
    "masked_fill_ in place": (_pool_in_place, ["changed its input (argument 1", "in place"]),
    "masked values then max over all (B·T)": (lambda x, m: x[m].max(0).values, ["should have shape"]),
}
# A finite fill far below any feature a network produces is accepted on purpose: it differs from -inf only
# for features below the fill value, which is not a mistake worth failing (-1e4 is caught: see above).
KNOWN_UNCAUGHT_POOL = {
    "padding filled with -1e9": lambda x, m: _pool_fill(x, m, -1e9),
    "padding filled with torch.finfo(x.dtype).min": lambda x, m: _pool_fill(x, m, torch.finfo(x.dtype).min),
}


@pytest.mark.parametrize("name", sorted(KNOWN_UNCAUGHT_POOL))
def test_max_over_time_known_uncaught_still_pass(name):
    assert cls_checks.check_max_over_time(KNOWN_UNCAUGHT_POOL[name], verbose=False).passed


@pytest.mark.parametrize("name", sorted(POOL_WRONG))
def test_max_over_time_wrong_solutions_fail(name):
    fn, words = POOL_WRONG[name]
    fails_with(cls_checks.check_max_over_time, fn, "on ", *words)


@pytest.mark.parametrize("check, solution", [
    (emb_checks.check_ppmi, my_ppmi), (emb_checks.check_sgns_loss, my_sgns_loss),
    (cls_checks.check_bow_logits, my_bow_logits), (cls_checks.check_dan_forward, my_dan_forward),
    (cls_checks.check_max_over_time, my_max_over_time),
])
def test_a_solution_that_mutates_after_computing_is_blamed_for_the_mutation(check, solution):
    def mutates(*args):
        out = solution(*args)
        args[0].add_(1)
        return out

    result = fails_with(check, mutates, "on ", "changed its input (argument 1")
    assert "is wrong" not in result.message

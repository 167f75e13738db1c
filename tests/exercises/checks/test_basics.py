"""Checks of notebook 00 (softmax, cross-entropy, accuracy) against the wrong solutions students write.

tests/exercises/test_core.py holds the first tests of these checks (one per hint); here every check gets
its notebook's reference solution and a list of further realistic wrong solutions, each of which must fail
naming the input ("on <case>, …") and, where the check has one, with the hint written for it.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from helpers.exercises import fails_with, notebook_solutions, passes

from coursekit.exercises.checks import basics
from coursekit.exercises.checks.basics import _accuracy_cases, _cross_entropy_cases, _softmax_cases

# ----------------------------------------------------------------------------- reference solutions (notebook 00)


NB00 = notebook_solutions("00_setup")
my_softmax, my_cross_entropy, my_accuracy = NB00["my_softmax"], NB00["my_cross_entropy"], NB00["my_accuracy"]


@pytest.mark.parametrize("check, solution", [
    (basics.check_softmax, my_softmax),
    (basics.check_cross_entropy, my_cross_entropy),
    (basics.check_accuracy, my_accuracy),
])
def test_the_notebook_solution_passes(check, solution):
    passes(check, solution)


def test_equivalent_correct_solutions_pass():
    passes(basics.check_softmax, lambda z: (z - z.max(-1, keepdim=True).values).exp()
           / (z - z.max(-1, keepdim=True).values).exp().sum(-1, keepdim=True))
    passes(basics.check_softmax, lambda z: torch.exp(z - torch.logsumexp(z, -1, keepdim=True)))
    passes(basics.check_cross_entropy, lambda x, t: -(x[torch.arange(len(t)), t] - x.logsumexp(-1)).mean())
    passes(basics.check_cross_entropy, lambda x, t: -(torch.log_softmax(x, -1) * F.one_hot(t, x.shape[1])).sum(1)
           .mean())
    passes(basics.check_accuracy, lambda x, t: (x.argmax(1) == t).sum().item() / len(t))
    passes(basics.check_accuracy, lambda x, t: float(np.mean(x.argmax(-1).numpy() == t.numpy())))
    passes(basics.check_accuracy, lambda x, t: torch.mean((torch.max(x, dim=1).indices == t).float()))


# ----------------------------------------------------------------------------- the inputs


def test_inputs_are_deterministic_and_varied():
    for cases in (_softmax_cases, _cross_entropy_cases, _accuracy_cases):
        first, second = cases(), cases()
        for one, two in zip(first, second):
            assert one[0] == two[0] and all(torch.equal(x, y) for x, y in zip(one[1:], two[1:]))
    assert len({c[1].shape for c in _softmax_cases()}) >= 8
    assert {c[1].dtype for c in _softmax_cases()} == {torch.float32, torch.float64}
    assert {c[1].shape[1] for c in _cross_entropy_cases()} >= {2, 3, 4, 5, 6, 7}
    assert {len(c[2]) for c in _cross_entropy_cases()} >= {1, 3, 8}
    for _, logits, targets in _cross_entropy_cases() + _accuracy_cases():
        assert targets.dtype == torch.int64 and targets.shape == logits.shape[:1]
        assert 0 <= int(targets.min()) and int(targets.max()) < logits.shape[1]
    for _, logits, _ in _accuracy_cases():           # no ties: the arg-max is unambiguous
        top = logits.topk(min(2, logits.shape[1]), dim=-1).values
        assert (top[:, 0] > top[:, -1]).all()
    fractions = {round((x.argmax(-1) == t).float().mean().item(), 3) for _, x, t in _accuracy_cases()}
    assert {0.0, 1.0} <= fractions and len(fractions) >= 6


# ----------------------------------------------------------------------------- softmax: wrong solutions


def _rows(e: torch.Tensor) -> torch.Tensor:
    return e / e.sum(-1, keepdim=True)


def _softmax_in_place(z):
    z -= z.amax(-1, keepdim=True)
    return _rows(z.exp())


SOFTMAX_WRONG = {
    "global max (x.max())": (lambda z: _rows((z - z.max()).exp()), ["whole tensor"]),
    "max without keepdim": (lambda z: _rows((z - z.max(dim=-1).values).exp()) if z.dim() > 1 else my_softmax(z),
                            ["max lacks keepdim"]),
    "divided by the sum of the whole tensor": (lambda z: (z - z.amax(-1, keepdim=True)).exp()
                                               / (z - z.amax(-1, keepdim=True)).exp().sum(), ["each row's sum"]),
    "dim=1 hard-coded": (lambda z: my_softmax(z, dim=1), ["on a vector of 5 logits", "raised"]),
    "subtracts the mean, not the max": (lambda z: _rows((z - z.mean(-1, keepdim=True)).exp()),
                                        ["-inf entries", "NaN", "mean or min was subtracted"]),
    "subtracts the min, not the max": (lambda z: _rows((z - z.amin(-1, keepdim=True)).exp()),
                                       ["-inf entries", "NaN", "mean or min was subtracted"]),
    "returns a list": (lambda z: my_softmax(z).tolist(), ["should be a tensor"]),
    "returns integer percentages": (lambda z: (100 * my_softmax(z)).long(), ["float tensor"]),
    "in-place max subtraction": (_softmax_in_place, ["changed its input", "in place"]),
    "no max, per-row sum, float64 cast": (lambda z: _rows(z.double().exp()), ["large logits", "NaN"]),
    "naive exp over the whole tensor": (lambda z: z.exp() / z.exp().sum(), ["a square batch"]),
    "softmax over dim 0 for 2-d inputs only": (lambda z: my_softmax(z, dim=0 if z.dim() == 2 else -1),
                                               ["wrong axis"]),
}
KNOWN_UNCAUGHT_SOFTMAX: dict = {}   # every listed mistake is caught


@pytest.mark.parametrize("name", sorted(SOFTMAX_WRONG))
def test_softmax_wrong_solutions_fail(name):
    fn, words = SOFTMAX_WRONG[name]
    fails_with(basics.check_softmax, fn, "on ", *words)


# ----------------------------------------------------------------------------- cross-entropy: wrong solutions


def _pick(log_p, t):
    return log_p[torch.arange(len(t)), t]


def _naive_lse(x, t):
    return -(_pick(x, t) - x.exp().sum(-1).log()).mean()


def _global_max(x, t):
    z = x - x.max()
    return -(_pick(z, t) - z.exp().sum(-1).log()).mean()


def _ce_in_place(x, t):
    x -= x.logsumexp(-1, keepdim=True)
    return -_pick(x, t).mean()


CROSS_ENTROPY_WRONG = {
    "logsumexp without the max": (_naive_lse, ["[[0, 100, 50]]", "without subtracting the row's max"]),
    "max over the whole batch": (_global_max, ["very different scales", "whole batch"]),
    "log_probs[:, targets]": (lambda x, t: -torch.log_softmax(x, -1)[:, t].mean(), ["(B, B) block"]),
    "one-hot mean over B×C": (lambda x, t: -(torch.log_softmax(x, -1) * F.one_hot(t, x.shape[1])).mean(),
                              ["all B×C entries"]),
    "per-example losses": (lambda x, t: -_pick(torch.log_softmax(x, -1), t), ["per-example losses"]),
    "one_hot with 5 classes hard-coded": (lambda x, t: -(torch.log_softmax(x, -1) * F.one_hot(t, 5)).sum(1).mean(),
                                          ["on a batch of size 1", "raised"]),
    "gather without target[:, None]": (lambda x, t: -torch.log_softmax(x, -1).gather(1, t).mean(), ["raised"]),
    "minus sign missing": (lambda x, t: _pick(torch.log_softmax(x, -1), t).mean(), ["minus sign"]),
    "logsumexp over the batch axis": (lambda x, t: -_pick(x - x.logsumexp(0, keepdim=True), t).mean(),
                                      ["wrong axis"]),
    "mean(0) of the gathered (B, 1)": (lambda x, t: -torch.log_softmax(x, -1).gather(1, t[:, None]).mean(0),
                                       ["should have shape ()"]),
    "floor division by the batch size": (lambda x, t: -_pick(torch.log_softmax(x, -1), t).sum() // len(t),
                                         ["the loss is wrong"]),
    "integer loss": (lambda x, t: my_cross_entropy(x, t).round().long(), ["0-d float tensor"]),
    "in-place log-softmax of the logits": (_ce_in_place, ["changed its input", "in place"]),
    "epsilon inside the log": (lambda x, t: -torch.log(_pick(torch.softmax(x, -1), t) + 1e-9).mean(),
                               ["large logits", "epsilon inside the log"]),
    "targets as float weights": (lambda x, t: -(torch.log_softmax(x, -1) * t.float()[:, None]).sum(1).mean(),
                                 ["the loss is wrong"]),
}
KNOWN_UNCAUGHT_CROSS_ENTROPY: dict = {}


@pytest.mark.parametrize("name", sorted(CROSS_ENTROPY_WRONG))
def test_cross_entropy_wrong_solutions_fail(name):
    fn, words = CROSS_ENTROPY_WRONG[name]
    fails_with(basics.check_cross_entropy, fn, "on ", *words)


# ----------------------------------------------------------------------------- accuracy: wrong solutions


def _right(x, t):
    return x.argmax(-1) == t


ACCURACY_WRONG = {
    "divided by the number of classes": (lambda x, t: _right(x, t).sum().item() / x.shape[1], ["number of classes"]),
    "arg-max of the flattened logits": (lambda x, t: (x.argmax() == t).float().mean().item(), ["flattened"]),
    "compares the max values": (lambda x, t: (x.max(-1).values == t).float().mean().item(), ["*values*"]),
    "argmax with keepdim=True": (lambda x, t: (x.argmax(-1, keepdim=True) == t).float().mean().item(),
                                 ["keepdim=True"]),
    "error rate": (lambda x, t: (x.argmax(-1) != t).float().mean().item(), ["error rate"]),
    "all rows right?": (lambda x, t: _right(x, t).all(), ["fraction in [0, 1]"]),
    "all rows right? as a Python bool": (lambda x, t: bool(_right(x, t).all()), ["should be a number, got bool"]),
    "mean of a bool tensor": (lambda x, t: _right(x, t).mean(), ["raised"]),
    "divided by the sum of the targets": (lambda x, t: _right(x, t).sum().item() / max(int(t.sum()), 1),
                                          ["the accuracy is wrong"]),
    "divided by B × C": (lambda x, t: _right(x, t).sum().item() / x.numel(), ["the accuracy is wrong"]),
    "per-row matches as a list": (lambda x, t: _right(x, t).tolist(), ["should be a number, got list"]),
    "argmin": (lambda x, t: (x.argmin(-1) == t).float().mean().item(), ["the accuracy is wrong"]),
    "the first row's match only": (lambda x, t: float(x[0].argmax() == t[0]), ["the accuracy is wrong"]),
}
KNOWN_UNCAUGHT_ACCURACY: dict = {}


@pytest.mark.parametrize("name", sorted(ACCURACY_WRONG))
def test_accuracy_wrong_solutions_fail(name):
    fn, words = ACCURACY_WRONG[name]
    fails_with(basics.check_accuracy, fn, "on ", *words)


# ----------------------------------------------------------------------------- the reference is the check's own


@pytest.mark.parametrize("check, solution, arity", [
    (basics.check_softmax, my_softmax, 1),
    (basics.check_cross_entropy, my_cross_entropy, 2),
    (basics.check_accuracy, my_accuracy, 2),
])
def test_a_mutating_solution_is_blamed_for_the_mutation_not_the_formula(check, solution, arity):
    def mutates_after_computing(*args):
        out = solution(*args)
        args[0].mul_(0.0).add_(7.0)
        return out

    result = fails_with(check, mutates_after_computing, "on ", "changed its input (argument 1")
    assert "is wrong" not in result.message

"""The exercise-check machinery (coursekit.exercises.core) and the warm-up checks of notebook 00
(coursekit.exercises.checks.basics): the reference passes, a stub is "not attempted", and typical
mistakes fail with the hint written for them."""

from __future__ import annotations

import re

import pytest
import torch
import torch.nn.functional as F
from helpers import ROOT
from helpers.exercises import DELEGATED, fails_with, notebook_solutions, refuses_delegation, stub
from torch import nn

from coursekit import exercises, metrics
from coursekit.exercises.checks import basics
from coursekit.exercises.core import (
    FAILED,
    NOT_ATTEMPTED,
    PASSED,
    CheckFailed,
    CheckResult,
    _resolve,
    describe,
    exercise_check,
    expect_close,
    run_student,
)

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.py"))

# ----------------------------------------------------------------------------- core: results


@exercise_check("toy", success="well done.")
def check_toy(fn):
    """Passes when fn(2) == 4."""
    expect_close(run_student(fn, "the input 2", 2), 4, case="the input 2",
                 mistakes={"you added instead of multiplying": 4.0 + 1.0})


def test_three_outcomes():
    ok = check_toy(lambda x: x * 2, verbose=False)
    assert (ok.check, ok.status, ok.message, ok.passed, bool(ok)) == ("toy", PASSED, "well done.", True, True)
    bad = check_toy(lambda x: x + 1 + 2, verbose=False)
    assert bad.status == FAILED and not bad
    assert bad.message == ("on the input 2, the output is wrong: expected 4, got 5. "
                           "It looks like you added instead of multiplying.")
    untouched = check_toy(stub, verbose=False)
    assert untouched.status == NOT_ATTEMPTED and "NotImplementedError" in untouched.message


def test_student_errors_become_feedback_naming_the_input():
    result = check_toy(lambda x: x.shape, verbose=False)
    assert result.status == FAILED
    assert result.message == ("on the input 2, your function raised AttributeError: "
                              "'int' object has no attribute 'shape'")
    with pytest.raises(NotImplementedError):
        run_student(stub, "any case")


def test_printing_and_metadata(capsys):
    check_toy(lambda x: 2 * x)
    assert capsys.readouterr().out == "✅ toy: well done.\n"
    check_toy(stub)
    assert capsys.readouterr().out.startswith("⏳ toy: not attempted")
    check_toy(lambda x: 0, verbose=False)
    assert capsys.readouterr().out == ""
    assert check_toy.title == "toy" and check_toy.__name__ == "check_toy" and "fn(2) == 4" in check_toy.__doc__
    assert str(CheckResult("c", FAILED, "why")) == "❌ c: why"


def test_no_check_writes_a_file(tmp_path, monkeypatch):
    """Nothing a check does in a notebook is read by the grader: it writes no log, whatever the environment says."""
    monkeypatch.setenv("COURSEKIT_GRADING_LOG", str(tmp_path / "log.jsonl"))
    monkeypatch.chdir(tmp_path)
    check_toy(lambda x: 2 * x, verbose=False)
    assert list(tmp_path.iterdir()) == []


def test_case_variants_change_the_inputs_not_the_visible_ones():
    from coursekit.exercises.core import active_variant, case_generator, case_seed, case_variant, hidden_ids

    visible = torch.randn(3, generator=case_generator(4))
    assert torch.equal(visible, torch.randn(3, generator=case_generator(4))) and active_variant() == 0
    with case_variant(2):
        assert active_variant() == 2 and case_seed(4) != 4
        assert not torch.equal(visible, torch.randn(3, generator=case_generator(4)))
        assert hidden_ids([0, 5, 2], keep={0, 2}) != [0, 5, 2] and hidden_ids([0, 5, 2], keep={0, 2})[::2] == [0, 2]
    assert active_variant() == 0 and hidden_ids([0, 5], keep=set()) == [0, 5]
    with pytest.raises(ValueError, match="variant must be an int >= 0"):
        with case_variant(-1):
            pass


def test_a_stub_of_an_earlier_exercise_is_named():
    def rope(x):
        raise NotImplementedError("Exercise 1: RoPE")

    def rope_attention(x):
        return rope(x)

    result = check_toy(rope_attention, verbose=False)
    assert result.status == NOT_ATTEMPTED
    assert "calls `rope`, which is still the stub of Exercise 1 (RoPE): do that exercise first" in result.message
    assert "replace the `raise NotImplementedError`" in check_toy(rope, verbose=False).message


# ----------------------------------------------------------------------------- core: expect_close


def test_expect_close_messages():
    want = torch.tensor([[0.0, 1.0], [2.0, 3.0]])
    expect_close(want + 1e-7, want, case="c")
    with pytest.raises(CheckFailed, match=r"on c, the output should have shape \(2, 2\), got \(4,\)"):
        expect_close(want.flatten(), want, case="c")
    with pytest.raises(CheckFailed, match=r"should be a tensor of shape \(2, 2\), got list of length 2"):
        expect_close([0, 1], want, case="c")
    with pytest.raises(CheckFailed, match=r"largest difference 0\.5 at index \(1, 0\): expected 2, got 2\.5\.$"):
        expect_close(want + torch.tensor([[0.0, 0.0], [0.5, 0.0]]), want, case="c")
    with pytest.raises(CheckFailed, match=r"the weights is wrong: .* It looks like you transposed it\.$"):
        expect_close(want.T, want, case="c", what="the weights",
                     mistakes={"it raised": None, "you doubled it": 2 * want, "you transposed it": want.T})


def test_expect_close_nan_with_and_without_a_known_mistake():
    want = torch.tensor([0.5, 0.5])
    got = torch.tensor([float("nan"), 0.5])
    with pytest.raises(CheckFailed, match=r"contains NaN where the reference has none \(a fully masked row"):
        expect_close(got, want, case="c")
    with pytest.raises(CheckFailed, match=r"NaN .*It looks like you divided by zero\.$"):
        expect_close(got, want, case="c", mistakes={"you divided by zero": got.clone()})


def test_describe():
    assert describe(torch.zeros(2, 3)) == "tensor of shape (2, 3) (torch.float32)"
    assert describe((1, 2, 3)) == "tuple of length 3"
    assert describe(None) == "NoneType None"


# ----------------------------------------------------------------------------- basics: softmax


NB00 = notebook_solutions("00_setup")
ref_softmax = NB00["my_softmax"]  # the solution in notebook 00


def test_checks_are_exported_and_stubs_not_attempted():
    for name in basics.__all__:
        check = getattr(basics, name)
        assert getattr(exercises, name) is check and exercises.all_checks()[name] is check
        assert check(stub, verbose=False).status == NOT_ATTEMPTED


def test_softmax_reference_passes():
    assert basics.check_softmax(ref_softmax, verbose=False).passed

    def in_place(x):  # right values, but the caller's logits are overwritten with exponentials
        x -= x.amax(-1, keepdim=True)
        x.exp_()
        return x / x.sum(-1, keepdim=True)

    fails_with(basics.check_softmax, in_place, "a vector of 5 logits", "changed its input (argument 1", "in place")


def test_softmax_mistakes():
    fails_with(basics.check_softmax, lambda x: ref_softmax(x, dim=0), "square batch", "wrong axis")
    fails_with(basics.check_softmax, lambda x: x.exp() / x.exp().sum(-1, keepdim=True),
                "large logits", "NaN", "max was not subtracted")
    fails_with(basics.check_softmax, lambda x: (x - x.amax(-1, keepdim=True)).exp(), "were not normalised")
    fails_with(basics.check_softmax, lambda x: x.exp(), "were not normalised")

    def no_keepdim(x):
        e = (x - x.amax(-1, keepdim=True)).exp()
        return e / e.sum(-1)

    fails_with(basics.check_softmax, no_keepdim, "lacks keepdim=True")
    fails_with(basics.check_softmax, lambda x: ref_softmax(x)[..., :-1], "should have shape")
    fails_with(basics.check_softmax, "my_softmax", "pass your softmax function itself")


@pytest.mark.parametrize("delegating, dotted", [
    (lambda x: torch.softmax(x, dim=-1), "torch.softmax"),
    (lambda x: F.softmax(x, dim=-1), "torch.nn.functional.softmax"),
    (lambda x: x.softmax(-1), "torch.Tensor.softmax"),
    (lambda x: torch.special.softmax(x, -1), "torch.special.softmax"),
    (lambda x: nn.Softmax(dim=-1)(x), "torch.nn.Softmax"),
])
def test_softmax_refuses_the_library_softmax(delegating, dotted):
    refuses_delegation(basics.check_softmax, delegating, dotted)
    assert basics.check_softmax(ref_softmax, verbose=False).passed


# ----------------------------------------------------------------------------- basics: cross-entropy


ref_cross_entropy = NB00["my_cross_entropy"]  # the solution in notebook 00


def _ce(logits, targets, *, log=torch.log_softmax, reduce=torch.mean, shift=0):
    return -reduce(log(logits, -1)[torch.arange(len(targets)), targets + shift])


def test_cross_entropy_reference_passes():
    assert basics.check_cross_entropy(ref_cross_entropy, verbose=False).passed
    assert basics.check_cross_entropy(_ce, verbose=False).passed


@pytest.mark.parametrize("delegating, dotted", [
    (lambda x, t: F.cross_entropy(x, t), "torch.nn.functional.cross_entropy"),
    (lambda x, t: nn.CrossEntropyLoss()(x, t), "torch.nn.CrossEntropyLoss"),
    (lambda x, t: F.nll_loss(torch.log_softmax(x, -1), t), "torch.nn.functional.nll_loss"),
    (lambda x, t: nn.NLLLoss()(torch.log_softmax(x, -1), t), "torch.nn.NLLLoss"),
])
def test_cross_entropy_refuses_the_library_loss(delegating, dotted):
    refuses_delegation(basics.check_cross_entropy, delegating, dotted)
    assert basics.check_cross_entropy(ref_cross_entropy, verbose=False).passed


def test_cross_entropy_mistakes():
    fails_with(basics.check_cross_entropy, lambda x, t: _ce(x, t, reduce=torch.sum), "summed, not averaged")
    fails_with(basics.check_cross_entropy, lambda x, t: _ce(x, t, log=lambda z, d: z),
                "logits were used as log-probabilities")
    fails_with(basics.check_cross_entropy, lambda x, t: _ce(x, t, log=lambda z, d: z.log()),
                "NaN", "log was taken of the logits")
    fails_with(basics.check_cross_entropy, lambda x, t: _ce(x, t, shift=-1), "off by one (targets[b] - 1)")
    fails_with(basics.check_cross_entropy, lambda x, t: _ce(x, t, shift=1), "off by one (targets[b] + 1)")
    fails_with(basics.check_cross_entropy, lambda x, t: _ce(x, t, log=lambda z, d: torch.softmax(z, d).log()),
                "large logits", "got inf", "underflows to log(0)")
    fails_with(basics.check_cross_entropy, lambda x, t: ref_cross_entropy(torch.softmax(x, -1), t),
                "softmax was applied twice")
    fails_with(basics.check_cross_entropy, lambda x, t: ref_cross_entropy(x, t).item(),
                "the loss should be a tensor of shape ()")


# ----------------------------------------------------------------------------- basics: accuracy


ref_accuracy = NB00["my_accuracy"]  # the solution in notebook 00


def test_accuracy_reference_passes():
    assert basics.check_accuracy(ref_accuracy, verbose=False).passed
    assert basics.check_accuracy(lambda x, t: (x.argmax(-1) == t).float().mean(), verbose=False).passed  # 0-d


def test_accuracy_refuses_the_library_accuracy():
    refuses_delegation(basics.check_accuracy, lambda x, t: metrics.accuracy(x, t), "coursekit.metrics.accuracy")


def test_accuracy_mistakes():
    right = lambda x, t: x.argmax(-1) == t
    fails_with(basics.check_accuracy, lambda x, t: (x.argmax(0) == t).float().mean(), "wrong axis")
    fails_with(basics.check_accuracy, lambda x, t: right(x, t).sum(), "expected 0.25, got 1", "not the fraction")
    fails_with(basics.check_accuracy, lambda x, t: 100 * right(x, t).float().mean(), "percentage")
    fails_with(basics.check_accuracy, lambda x, t: right(x, t).sum().item() // len(t), "integer division")
    fails_with(basics.check_accuracy, lambda x, t: right(x, t).float(), "should be one number")
    fails_with(basics.check_accuracy, lambda x, t: "0.25", "should be a number, got str")


# ----------------------------------------------------------------------------- core: re-created references


def test_every_reimplemented_reference_resolves_to_a_callable():
    for name, check in exercises.all_checks().items():
        assert len(set(check.reimplements)) == len(check.reimplements), name
        for dotted in check.reimplements:
            assert callable(_resolve(dotted)[2]), (name, dotted)


def _raises(*args, **kwargs):
    raise ValueError("a student bug")


@pytest.mark.parametrize("name", sorted(exercises.all_checks()))
def test_references_are_restored_after_every_check(name):
    check = exercises.all_checks()[name]
    before = {dotted: _resolve(dotted)[2] for dotted in check.reimplements}
    for fn in (stub, _raises):
        check(fn, verbose=False)
        assert {dotted: _resolve(dotted)[2] for dotted in check.reimplements} == before, name
        assert all(_resolve(d)[2] is before[d] for d in before), name


def test_a_reference_bound_in_the_students_namespace_is_refused_then_restored():
    namespace: dict = {}
    exec("from coursekit.metrics import accuracy as acc\n"     # noqa: S102 - a notebook's globals, in small
         "def my_accuracy(logits, target):\n"
         "    return acc(logits, target)\n", namespace)
    original = namespace["acc"]
    result = basics.check_accuracy(namespace["my_accuracy"], verbose=False)
    assert result.status == FAILED and DELEGATED in result.message and "`accuracy`" in result.message
    assert namespace["acc"] is original is metrics.accuracy


def test_the_check_itself_may_still_use_the_reference():
    # check_softmax computes its expected values with torch.softmax while torch.softmax is forbidden to the student
    assert basics.check_softmax(ref_softmax, verbose=False).passed
    assert torch.softmax is _resolve("torch.softmax")[2]


# ----------------------------------------------------------------------------- every notebook's own solutions


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_reference_solutions_pass_their_checks(notebook):
    """The solution in every exercise cell passes its check, with the check's forbidden references in force
    (a solution may use what the exercise does not re-create, e.g. split_heads in multi-head attention)."""
    source = notebook.read_text(encoding="utf-8")
    calls = re.findall(r"^(check_\w+)\((\w+)\)", source, flags=re.M)     # check_x(my_x) lines of the exercises
    if "# EXERCISE" not in source:
        assert not calls, notebook.name
        return
    assert calls, notebook.name
    solutions = notebook_solutions(notebook.stem)
    for check, solution in calls:
        result = getattr(exercises, check)(solutions[solution], verbose=False)
        assert result.passed, (notebook.name, result)

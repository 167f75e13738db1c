"""Checks for the warm-up exercises of notebook 00: softmax, cross-entropy, accuracy.

What the student writes (the exercise cells of notebook 00 define these signatures):

* ``softmax(x)`` — the softmax over the **last** axis of a float tensor of any shape:
  ``softmax(x)_i = exp(x_i - max_j x_j) / sum_k exp(x_k - max_j x_j)``; returns a float tensor of the
  shape of ``x``.
* ``cross_entropy(logits, targets)`` — ``logits`` (B, C) float, ``targets`` (B,) int64 class indices in
  ``[0, C)``; returns the **mean** over the batch of ``-log softmax(logits)[b, targets[b]]`` as a
  0-d float tensor (what ``torch.nn.functional.cross_entropy`` returns).
* ``accuracy(logits, targets)`` — the fraction (in [0, 1]) of rows whose arg-max equals the target,
  as a Python number or a 0-d tensor.

Each check runs the student's function on several inputs — batch size 1, odd sizes and class counts,
square inputs that expose a wrong axis, a last axis of length 1, large logits that expose overflow, rows
on very different scales that expose a max taken over the whole tensor instead of per row, float64 —
computes the reference on its own copy of each input before the student's call, and names the typical
mistake whose output the student's matches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from coursekit.exercises.core import (
    CheckFailed,
    case_generator,
    describe,
    exercise_check,
    expect_close,
    mistake_value,
    require_function,
    run_student,
)

__all__ = ["check_softmax", "check_cross_entropy", "check_accuracy"]



def _expect_float_tensor(got: Any, shape: tuple[int, ...], *, case: str, what: str, hint: str = "") -> None:
    """A float tensor of ``shape``, or a message naming the case and what was returned instead."""
    if not isinstance(got, torch.Tensor):
        raise CheckFailed(f"on {case}, {what} should be a tensor of shape {shape}, got {describe(got)}"
                          + (f" ({hint})" if hint else ""))
    if not got.is_floating_point():
        raise CheckFailed(f"on {case}, expected {what} as a float tensor of shape {shape}, got {describe(got)}"
                          + (f" ({hint})" if hint else ""))


# ----------------------------------------------------------------------------- softmax


def _softmax_cases() -> list[tuple[str, torch.Tensor]]:
    g = case_generator(0)
    scales = torch.tensor([[1000.0], [-1000.0]])
    masked = torch.randn(3, 4, generator=g)
    masked[0, 1] = masked[1, 0] = masked[1, 3] = masked[2, 2] = float("-inf")
    return [
        ("a vector of 5 logits", torch.randn(5, generator=g)),
        ("a square batch of shape (4, 4)", torch.randn(4, 4, generator=g)),
        ("a batch of shape (3, 5)", torch.randn(3, 5, generator=g)),
        ("a batch of size 1, shape (1, 7)", torch.randn(1, 7, generator=g)),
        ("a 3-d input of shape (2, 3, 5)", torch.randn(2, 3, 5, generator=g)),
        ("large logits (around 1000) of shape (2, 4)", 1000.0 + 10.0 * torch.randn(2, 4, generator=g)),
        ("rows on very different scales (around +1000 and -1000), shape (2, 6)",
         scales + 3.0 * torch.randn(2, 6, generator=g)),
        ("a last axis of length 1, shape (3, 1)", torch.randn(3, 1, generator=g)),
        ("a (3, 4) batch with -inf entries (masked positions)", masked),
        ("a float64 3-d input of shape (3, 2, 6)", torch.randn(3, 2, 6, generator=g, dtype=torch.float64)),
    ]


def _normalised(e: torch.Tensor) -> torch.Tensor:
    return e / e.sum(-1, keepdim=True)


def _softmax_mistakes(x: torch.Tensor) -> dict[str, Any]:
    e = (x - x.amax(-1, keepdim=True)).exp()
    return {
        "the softmax is taken over the wrong axis (normalise over the last axis, dim=-1)":
            mistake_value(lambda: torch.softmax(x, dim=0)),
        "the max was not subtracted before exp(), so exp() overflows to inf and inf/inf = NaN "
        "(subtract x.max(dim=-1, keepdim=True) first; softmax does not change)":
            mistake_value(lambda: x.exp() / x.exp().sum(-1, keepdim=True)),
        "the max was taken over the whole tensor (x.max()), not per row: a row far below the overall maximum "
        "underflows to exp() = 0 and 0/0 = NaN (use x.amax(dim=-1, keepdim=True))":
            mistake_value(lambda: _normalised((x - x.max()).exp())),
        "the row's mean or min was subtracted, not its max: in a row with -inf entries that is -inf, and "
        "-inf − (−inf) = NaN (subtract x.amax(dim=-1, keepdim=True))":
            mistake_value(lambda: _normalised((x - x.mean(-1, keepdim=True)).exp())),
        "the exponentials were not normalised (divide by their sum over the last axis)":
            mistake_value(lambda: x.exp()),
        "the exponentials (after subtracting the max) were not normalised "
        "(divide by their sum over the last axis)": e,
        "the sum lacks keepdim=True, so the division broadcasts along the wrong axis":
            mistake_value(lambda: e / e.sum(-1)),
        "the max lacks keepdim=True (x.max(dim=-1).values has one axis less), so the subtraction broadcasts "
        "along the wrong axis":
            mistake_value(lambda: _normalised((x - x.amax(-1)).exp())) if x.dim() > 1 else None,
        "the exponentials were divided by the sum of the whole tensor, not by each row's sum":
            mistake_value(lambda: e / e.sum()) if x.dim() > 1 else None,
    }


@exercise_check("softmax", reimplements=(
    "torch.softmax", "torch.nn.functional.softmax", "torch.Tensor.softmax", "torch.special.softmax",
    "torch.nn.Softmax"))
def check_softmax(softmax: Callable[[torch.Tensor], torch.Tensor]) -> None:
    """Check ``softmax(x)`` over the last axis against ``torch.softmax(x, dim=-1)``."""
    require_function(softmax, "softmax")
    for case, x in _softmax_cases():
        want = torch.softmax(x, dim=-1)            # on the check's own copy, before the student's call
        mistakes = _softmax_mistakes(x)
        got = run_student(softmax, case, x.clone())
        _expect_float_tensor(got, tuple(x.shape), case=case, what="the probabilities")
        expect_close(got, want, case=case, mistakes=mistakes)


# ----------------------------------------------------------------------------- cross-entropy


def _cross_entropy_cases() -> list[tuple[str, torch.Tensor, torch.Tensor]]:
    g = case_generator(0)
    big = torch.tensor([[0.0, 200.0, -100.0], [150.0, -150.0, 0.0]])
    scales = torch.tensor([[1000.0], [-1000.0], [0.0]]) + 3.0 * torch.randn(3, 4, generator=case_generator(3))
    return [
        ("logits (4, 5) with targets [0, 3, 1, 2]", torch.randn(4, 5, generator=g), torch.tensor([0, 3, 1, 2])),
        ("a batch of size 1 (1, 3), target [1]", torch.randn(1, 3, generator=g), torch.tensor([1])),
        ("square logits (3, 3) with targets [1, 0, 1]", torch.randn(3, 3, generator=g), torch.tensor([1, 0, 1])),
        ("logits (6, 7) with targets [6, 0, 2, 5, 1, 4]", torch.randn(6, 7, generator=g),
         torch.tensor([6, 0, 2, 5, 1, 4])),
        ("large logits [[0, 100, 50]] with target [1] (the largest logit)", torch.tensor([[0.0, 100.0, 50.0]]),
         torch.tensor([1])),
        ("large logits [[0, 200, -100], [150, -150, 0]] with targets [2, 1]", big, torch.tensor([2, 1])),
        ("two classes, logits (5, 2) with targets [1, 1, 0, 1, 0]", torch.randn(5, 2, generator=g),
         torch.tensor([1, 1, 0, 1, 0])),
        ("a batch of 8 with 3 classes, targets [2, 2, 0, 1, 2, 0, 0, 1]", torch.randn(8, 3, generator=g),
         torch.tensor([2, 2, 0, 1, 2, 0, 0, 1])),
        ("rows on very different scales (around +1000, -1000 and 0), logits (3, 4) with targets [3, 0, 2]",
         scales, torch.tensor([3, 0, 2])),
        ("float64 logits (3, 6) with targets [5, 5, 0]", torch.randn(3, 6, generator=g, dtype=torch.float64),
         torch.tensor([5, 5, 0])),
    ]


def _pick(log_probs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return log_probs[torch.arange(len(targets)), targets]  # (B,)


def _cross_entropy_mistakes(logits: torch.Tensor, targets: torch.Tensor) -> dict[str, Any]:
    log_p = torch.log_softmax(logits, dim=-1)
    B, C = logits.shape
    shifted = logits - logits.max()
    return {
        "the batch was summed, not averaged (cross-entropy is the mean over the examples)":
            -_pick(log_p, targets).sum(),
        "the minus sign is missing: the loss is −log p, a positive number":
            _pick(log_p, targets).mean(),
        "the logits were used as log-probabilities (apply log_softmax to the logits first)":
            -_pick(logits, targets).mean(),
        "the log was taken of the logits as if they were probabilities (apply log_softmax instead)":
            mistake_value(lambda: -_pick(logits.log(), targets).mean()),
        "softmax was applied twice (log_softmax of probabilities): pass the raw logits":
            -_pick(torch.log_softmax(torch.softmax(logits, -1), -1), targets).mean(),
        "log(softmax(x)) in two steps underflows to log(0) = -inf for large logits "
        "(use torch.log_softmax, or subtract the logsumexp)":
            -_pick(torch.log(torch.softmax(logits, -1)), targets).mean(),
        "the logsumexp was computed as log(exp(x).sum()) without subtracting the row's max first, so exp() "
        "overflows to inf for large logits (use x.logsumexp(dim=-1), or subtract the max)":
            -(_pick(logits, targets) - logits.exp().sum(-1).log()).mean(),
        "the max was subtracted over the whole batch (x.max()), not per row: a row far below the overall maximum "
        "underflows to log(0) = -inf (subtract x.amax(dim=-1, keepdim=True))":
            -(_pick(shifted, targets) - shifted.exp().sum(-1).log()).mean(),
        **{f"an epsilon inside the log (log(p + {eps:g})) caps the loss of a probability that underflows to 0: "
           "use log_softmax (logits minus their logsumexp)":
           -torch.log(_pick(torch.softmax(logits, -1), targets) + eps).mean()
           for eps in (1e-6, 1e-8, 1e-9, 1e-10, 1e-12)},
        "log_softmax over the wrong axis (normalise over the classes, dim=-1)":
            -_pick(torch.log_softmax(logits, dim=0), targets).mean(),
        "the target index is off by one (targets[b] - 1); targets are 0-based class indices":
            -_pick(log_p, targets - 1).mean(),
        "the target index is off by one (targets[b] + 1); targets are 0-based class indices":
            -_pick(log_p, targets + 1).mean() if int(targets.max()) + 1 < C else None,
        "log_probs[:, targets] picks a (B, B) block, every row at every target; pick one entry per row with "
        "log_probs[torch.arange(B), targets] or gather":
            -log_p[:, targets].mean(),
        "the mean was taken over all B×C entries (of a one-hot product), not over the B examples: "
        "sum over the classes, then average over the batch":
            -_pick(log_p, targets).sum() / (B * C),
    }


@exercise_check("cross-entropy", reimplements=(
    "torch.nn.functional.cross_entropy", "torch.nn.CrossEntropyLoss", "torch.nn.functional.nll_loss",
    "torch.nn.NLLLoss"))
def check_cross_entropy(cross_entropy: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> None:
    """Check ``cross_entropy(logits, targets)`` against ``torch.nn.functional.cross_entropy``."""
    require_function(cross_entropy, "cross_entropy")
    for case, logits, targets in _cross_entropy_cases():
        want = F.cross_entropy(logits, targets)  # on the check's own copies, before the student's call
        mistakes = _cross_entropy_mistakes(logits, targets)
        got = run_student(cross_entropy, case, logits.clone(), targets.clone())
        if isinstance(got, torch.Tensor) and got.dim() > 0 and got.numel() == len(targets) and len(targets) > 1:
            raise CheckFailed(f"on {case}, the loss should be one number (a 0-d tensor), got {describe(got)}: "
                              "these look like the per-example losses; return their mean over the batch")
        if isinstance(got, torch.Tensor) and got.dim() == 0 and not got.is_floating_point():
            raise CheckFailed(f"on {case}, the loss should be a 0-d float tensor, got {describe(got)} "
                              "(integer arithmetic truncates the log-probabilities)")
        expect_close(got, want, case=case, mistakes=mistakes, what="the loss")


# ----------------------------------------------------------------------------- accuracy


def _with_n_right(logits: torch.Tensor, n_right: int, g: torch.Generator) -> torch.Tensor:
    """Targets (B,) int64: the arg-max class on the first ``n_right`` rows, another class on the others."""
    B, C = logits.shape
    pred = logits.argmax(-1)
    wrong = (pred + 1 + torch.randint(0, C - 1, (B,), generator=g)) % C  # any class but pred
    return torch.where(torch.arange(B) < n_right, pred, wrong)


def _accuracy_cases() -> list[tuple[str, torch.Tensor, torch.Tensor]]:
    # A square case whose column-wise arg-max gets a different count right (exposes a wrong axis).
    square = torch.tensor([[3.0, 0.0, 0.0, 0.0], [2.0, 1.0, 0.0, 0.0],
                           [0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 2.0, 0.5]])
    cases = [("square logits (4, 4) with 1 of 4 right", square, torch.tensor([0, 1, 1, 1]))]
    g = case_generator(0)
    for shape, n_right in [((8, 3), 5), ((1, 5), 1), ((5, 6), 0), ((6, 4), 6), ((1, 3), 0), ((10, 2), 7)]:
        B, C = shape
        logits = torch.randn(B, C, generator=g)
        cases.append((f"logits {shape} with {n_right} of {B} right", logits, _with_n_right(logits, n_right, g)))
    # Integer-valued logits: comparing the max *values* with the targets would sometimes match by chance.
    logits = torch.tensor([[0.0, 2.0, 1.0], [2.0, 0.0, 1.0], [1.0, 0.0, 2.0], [0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])
    cases.append(("integer-valued logits (5, 3) with 3 of 5 right", logits, torch.tensor([1, 0, 2, 0, 1])))
    negative = -10.0 - torch.rand(7, 4, generator=g)
    cases.append(("negative logits (7, 4) with 4 of 7 right", negative, _with_n_right(negative, 4, g)))
    return cases


def _accuracy_mistakes(logits: torch.Tensor, targets: torch.Tensor) -> dict[str, Any]:
    right = logits.argmax(-1) == targets
    n, C = logits.shape
    return {
        "the arg-max is taken over the wrong axis (take it over the classes, dim=-1)":
            mistake_value(lambda: (logits.argmax(0) == targets).float().mean().item()),
        "this is the number of correct rows, not the fraction (divide by the batch size)":
            int(right.sum()),
        "this is a percentage; return the fraction in [0, 1]": 100.0 * right.sum().item() / n,
        "integer division rounds the fraction down to 0 (convert to float before dividing)":
            int(right.sum()) // n,
        "the count was divided by the number of classes (logits.shape[1]), not the batch size (logits.shape[0])":
            right.sum().item() / C,
        "the arg-max was taken over the flattened logits (no dim): pass dim=-1 to get one class per row":
            (logits.argmax() == targets).float().mean().item(),
        "the largest logit *values* were compared with the targets, not their positions "
        "(use argmax(dim=-1), or .max(dim=-1).indices)":
            (logits.max(-1).values == targets).float().mean().item(),
        "argmax(dim=-1, keepdim=True) gives (B, 1) predictions, which broadcast against the (B,) targets to a "
        "(B, B) comparison (drop keepdim)":
            (logits.argmax(-1, keepdim=True) == targets).float().mean().item(),
        "this is the error rate (1 - accuracy): count the rows whose arg-max *equals* the target":
            1.0 - right.float().mean().item(),
    }


def _as_number(got: Any, case: str) -> float:
    if isinstance(got, torch.Tensor):
        if got.numel() != 1:
            raise CheckFailed(f"on {case}, the accuracy should be one number, got {describe(got)} "
                              f"(average the matches with .float().mean())")
        if got.dtype == torch.bool:
            raise CheckFailed(f"on {case}, the accuracy should be a fraction in [0, 1], got {describe(got)} "
                              "(a yes/no answer; average the matches with .float().mean())")
        return got.item()
    if isinstance(got, bool) or not isinstance(got, (int, float)):
        raise CheckFailed(f"on {case}, the accuracy should be a number, got {describe(got)}")
    return got


@exercise_check("accuracy", reimplements=("coursekit.metrics.accuracy",))
def check_accuracy(accuracy: Callable[[torch.Tensor, torch.Tensor], Any]) -> None:
    """Check ``accuracy(logits, targets)``: the fraction of rows whose arg-max is the target."""
    require_function(accuracy, "accuracy")
    # One number per case: several mistakes often give the same wrong number on one input (0.0, say), so the
    # student's function runs on every case first, and the hint is a mistake that matches on all of them
    # (none when no mistake does: a hint that fits one case by chance would mislead).
    results: list[tuple[str, float, float, dict[str, Any]]] = []
    failure: CheckFailed | None = None
    for case, logits, targets in _accuracy_cases():
        want = (logits.argmax(-1) == targets).float().mean().item()  # on the check's own copies
        mistakes = _accuracy_mistakes(logits, targets)
        try:
            got = _as_number(run_student(accuracy, case, logits.clone(), targets.clone()), case)
        except CheckFailed as exc:          # report a wrong number on an earlier case first
            failure = exc
            break
        results.append((case, got, want, mistakes))
    for case, got, want, mistakes in results:
        if not abs(got - want) <= 1e-6:     # NaN is wrong too
            everywhere = [h for h in mistakes if all(m.get(h) is not None and abs(g - m[h]) <= 1e-6 + 1e-4 * abs(m[h])
                                                     for _, g, _, m in results)]     # expect_close's tolerance
            expect_close(got, want, case=case, atol=1e-6, mistakes={h: mistakes[h] for h in everywhere},
                         what="the accuracy")
    if failure is not None:
        raise failure

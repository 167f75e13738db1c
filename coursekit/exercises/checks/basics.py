"""Checks for the warm-up exercises of notebook 00: softmax, cross-entropy, accuracy.

What the student writes (the exercise cells of notebook 00 define these signatures):

* ``softmax(x)`` — the softmax over the **last** axis of a float tensor of any shape:
  ``softmax(x)_i = exp(x_i - max_j x_j) / sum_k exp(x_k - max_j x_j)``.
* ``cross_entropy(logits, targets)`` — ``logits`` (B, C) float, ``targets`` (B,) class indices in
  ``[0, C)``; returns the **mean** over the batch of ``-log softmax(logits)[b, targets[b]]`` as a
  0-d tensor (what ``torch.nn.functional.cross_entropy`` returns).
* ``accuracy(logits, targets)`` — the fraction (in [0, 1]) of rows whose arg-max equals the target,
  as a Python number or a 0-d tensor.

Each check runs the student's function on several inputs (batch size 1, odd sizes, square inputs
that expose a wrong axis, large logits that expose overflow) and names the typical mistake
whose output the student's matches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from coursekit.exercises.core import (
    CheckFailed,
    describe,
    exercise_check,
    expect_close,
    mistake_value,
    require_function,
    run_student,
)

__all__ = ["check_softmax", "check_cross_entropy", "check_accuracy"]


def _generator() -> torch.Generator:
    return torch.Generator().manual_seed(0)


# ----------------------------------------------------------------------------- softmax


def _softmax_cases() -> list[tuple[str, torch.Tensor]]:
    g = _generator()
    return [
        ("a vector of 5 logits", torch.randn(5, generator=g)),
        ("a square batch of shape (4, 4)", torch.randn(4, 4, generator=g)),
        ("a batch of shape (3, 5)", torch.randn(3, 5, generator=g)),
        ("a batch of size 1, shape (1, 7)", torch.randn(1, 7, generator=g)),
        ("a 3-d input of shape (2, 3, 5)", torch.randn(2, 3, 5, generator=g)),
        ("large logits (around 1000) of shape (2, 4)", 1000.0 + 10.0 * torch.randn(2, 4, generator=g)),
    ]


def _softmax_mistakes(x: torch.Tensor) -> dict[str, Any]:
    e = (x - x.amax(-1, keepdim=True)).exp()
    return {
        "the softmax is taken over the wrong axis (normalise over the last axis, dim=-1)":
            mistake_value(lambda: torch.softmax(x, dim=0)),
        "the max was not subtracted before exp(), so exp() overflows to inf and inf/inf = NaN "
        "(subtract x.max(dim=-1, keepdim=True) first; softmax does not change)":
            mistake_value(lambda: x.exp() / x.exp().sum(-1, keepdim=True)),
        "the exponentials were not normalised (divide by their sum over the last axis)":
            mistake_value(lambda: x.exp()),
        "the exponentials (after subtracting the max) were not normalised "
        "(divide by their sum over the last axis)": e,
        "the sum lacks keepdim=True, so the division broadcasts along the wrong axis":
            mistake_value(lambda: e / e.sum(-1)),
    }


@exercise_check("softmax", reimplements=(
    "torch.softmax", "torch.nn.functional.softmax", "torch.Tensor.softmax", "torch.special.softmax",
    "torch.nn.Softmax"))
def check_softmax(softmax: Callable[[torch.Tensor], torch.Tensor]) -> None:
    """Check ``softmax(x)`` over the last axis against ``torch.softmax(x, dim=-1)``."""
    require_function(softmax, "softmax")
    for case, x in _softmax_cases():
        want = torch.softmax(x, dim=-1)
        got = run_student(softmax, case, x.clone())
        expect_close(got, want, case=case, mistakes=_softmax_mistakes(x))


# ----------------------------------------------------------------------------- cross-entropy


def _cross_entropy_cases() -> list[tuple[str, torch.Tensor, torch.Tensor]]:
    g = _generator()
    big = torch.tensor([[0.0, 200.0, -100.0], [150.0, -150.0, 0.0]])
    return [
        ("logits (4, 5) with targets [0, 3, 1, 2]", torch.randn(4, 5, generator=g), torch.tensor([0, 3, 1, 2])),
        ("a batch of size 1 (1, 3), target [1]", torch.randn(1, 3, generator=g), torch.tensor([1])),
        ("square logits (3, 3) with targets [1, 0, 1]", torch.randn(3, 3, generator=g), torch.tensor([1, 0, 1])),
        ("logits (6, 7) with targets [6, 0, 2, 5, 1, 4]", torch.randn(6, 7, generator=g),
         torch.tensor([6, 0, 2, 5, 1, 4])),
        ("large logits [[0, 200, -100], [150, -150, 0]] with targets [2, 1]", big, torch.tensor([2, 1])),
    ]


def _pick(log_probs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return log_probs[torch.arange(len(targets)), targets]  # (B,)


def _cross_entropy_mistakes(logits: torch.Tensor, targets: torch.Tensor) -> dict[str, Any]:
    log_p = torch.log_softmax(logits, dim=-1)
    C = logits.shape[-1]
    return {
        "the batch was summed, not averaged (cross-entropy is the mean over the examples)":
            -_pick(log_p, targets).sum(),
        "the logits were used as log-probabilities (apply log_softmax to the logits first)":
            -_pick(logits, targets).mean(),
        "the log was taken of the logits as if they were probabilities (apply log_softmax instead)":
            mistake_value(lambda: -_pick(logits.log(), targets).mean()),
        "softmax was applied twice (log_softmax of probabilities): pass the raw logits":
            -_pick(torch.log_softmax(torch.softmax(logits, -1), -1), targets).mean(),
        "log(softmax(x)) in two steps underflows to log(0) = -inf for large logits "
        "(use torch.log_softmax, or subtract the logsumexp)":
            -_pick(torch.log(torch.softmax(logits, -1)), targets).mean(),
        "log_softmax over the wrong axis (normalise over the classes, dim=-1)":
            -_pick(torch.log_softmax(logits, dim=0), targets).mean(),
        "the target index is off by one (targets[b] - 1); targets are 0-based class indices":
            -_pick(log_p, targets - 1).mean(),
        "the target index is off by one (targets[b] + 1); targets are 0-based class indices":
            -_pick(log_p, targets + 1).mean() if int(targets.max()) + 1 < C else None,
    }


@exercise_check("cross-entropy", reimplements=(
    "torch.nn.functional.cross_entropy", "torch.nn.CrossEntropyLoss", "torch.nn.functional.nll_loss",
    "torch.nn.NLLLoss"))
def check_cross_entropy(cross_entropy: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> None:
    """Check ``cross_entropy(logits, targets)`` against ``torch.nn.functional.cross_entropy``."""
    require_function(cross_entropy, "cross_entropy")
    for case, logits, targets in _cross_entropy_cases():
        want = F.cross_entropy(logits, targets)
        got = run_student(cross_entropy, case, logits.clone(), targets.clone())
        expect_close(got, want, case=case, mistakes=_cross_entropy_mistakes(logits, targets),
                     what="the loss")


# ----------------------------------------------------------------------------- accuracy


def _accuracy_cases() -> list[tuple[str, torch.Tensor, torch.Tensor]]:
    # A square case whose column-wise arg-max gets a different count right (exposes a wrong axis).
    square = torch.tensor([[3.0, 0.0, 0.0, 0.0], [2.0, 1.0, 0.0, 0.0],
                           [0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 2.0, 0.5]])
    cases = [("square logits (4, 4) with 1 of 4 right", square, torch.tensor([0, 1, 1, 1]))]
    g = _generator()
    for shape, n_right in [((8, 3), 5), ((1, 5), 1), ((5, 6), 0)]:
        B, C = shape
        logits = torch.randn(B, C, generator=g)
        pred = logits.argmax(-1)
        wrong = (pred + 1 + torch.randint(0, C - 1, (B,), generator=g)) % C  # any class but pred
        targets = torch.where(torch.arange(B) < n_right, pred, wrong)
        cases.append((f"logits {shape} with {n_right} of {B} right", logits, targets))
    return cases


def _accuracy_mistakes(logits: torch.Tensor, targets: torch.Tensor) -> dict[str, Any]:
    right = logits.argmax(-1) == targets
    n = len(targets)
    return {
        "the arg-max is taken over the wrong axis (take it over the classes, dim=-1)":
            mistake_value(lambda: (logits.argmax(0) == targets).float().mean().item()),
        "this is the number of correct rows, not the fraction (divide by the batch size)":
            int(right.sum()),
        "this is a percentage; return the fraction in [0, 1]": 100.0 * right.sum().item() / n,
        "integer division rounds the fraction down to 0 (convert to float before dividing)":
            int(right.sum()) // n,
    }


def _as_number(got: Any, case: str) -> float:
    if isinstance(got, torch.Tensor):
        if got.numel() != 1:
            raise CheckFailed(f"on {case}, the accuracy should be one number, got {describe(got)} "
                              f"(average the matches with .float().mean())")
        return got.item()
    if isinstance(got, bool) or not isinstance(got, (int, float)):
        raise CheckFailed(f"on {case}, the accuracy should be a number, got {describe(got)}")
    return got


@exercise_check("accuracy", reimplements=("coursekit.metrics.accuracy",))
def check_accuracy(accuracy: Callable[[torch.Tensor, torch.Tensor], Any]) -> None:
    """Check ``accuracy(logits, targets)``: the fraction of rows whose arg-max is the target."""
    require_function(accuracy, "accuracy")
    for case, logits, targets in _accuracy_cases():
        want = (logits.argmax(-1) == targets).float().mean().item()
        got = _as_number(run_student(accuracy, case, logits.clone(), targets.clone()), case)
        expect_close(got, want, case=case, atol=1e-6, mistakes=_accuracy_mistakes(logits, targets),
                     what="the accuracy")

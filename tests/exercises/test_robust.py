"""Every check gives feedback, never a traceback, whatever the student's function returns or does."""

from __future__ import annotations

import pytest
import torch

from coursekit import exercises
from coursekit.exercises.core import FAILED

CHECKS = exercises.all_checks()

ODD_RETURNS = {
    "None": lambda *a, **k: None,
    "a string": lambda *a, **k: "answer",
    "a tuple of two tensors": lambda *a, **k: (torch.zeros(2), torch.zeros(2)),
    "a one-element list": lambda *a, **k: [0],
    "an empty tensor": lambda *a, **k: torch.empty(0),
    "a NaN scalar": lambda *a, **k: torch.tensor(float("nan")),
    "a (1, 5) int tensor": lambda *a, **k: torch.zeros(1, 5, dtype=torch.long),
    "a dict": lambda *a, **k: {"x": 1},
    "a float": lambda *a, **k: 0.5,
    "a generator": lambda *a, **k: (i for i in range(3)),
}


@pytest.mark.parametrize("name", sorted(CHECKS))
@pytest.mark.parametrize("kind", sorted(ODD_RETURNS))
def test_any_return_value_gets_feedback_not_a_crash(name, kind):
    result = CHECKS[name](ODD_RETURNS[kind], verbose=False)
    assert result.status == FAILED, result
    assert result.message and "on " in result.message, result.message


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_a_function_that_crashes_is_reported_with_its_input(name):
    def crashes(*args, **kwargs):
        raise IndexError("index 7 is out of bounds")

    result = CHECKS[name](crashes, verbose=False)
    assert result.status == FAILED and "raised IndexError" in result.message, result


def test_a_check_bug_is_not_blamed_on_the_student():
    from coursekit.exercises.core import exercise_check

    @exercise_check("buggy")
    def check_buggy(fn):
        raise KeyError("the check's own bug")

    with pytest.raises(KeyError):
        check_buggy(lambda: 1, verbose=False)

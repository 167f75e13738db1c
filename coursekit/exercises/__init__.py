"""Exercises: checks with feedback, student versions of the notebooks, grading.

Checks for each topic live in ``coursekit/exercises/checks/<topic>.py`` and are re-exported here,
so a notebook writes ``from coursekit.exercises import check_scaled_dot_product_attention``.
"""

from coursekit.exercises.core import CheckFailed, CheckResult, exercise_check, expect_close, run_student

__all__ = ["CheckFailed", "CheckResult", "exercise_check", "expect_close", "run_student"]

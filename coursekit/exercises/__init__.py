"""Exercises: checks with feedback, student versions of the notebooks, grading.

Checks for each topic live in ``coursekit/exercises/checks/<topic>.py``. Every public
``check_*`` function there is re-exported here, so a notebook writes
``from coursekit.exercises import check_scaled_dot_product_attention``.
"""

import importlib
import pkgutil

from coursekit.exercises import checks as _checks
from coursekit.exercises.core import CheckFailed, CheckResult, exercise_check, expect_close, run_student

__all__ = ["CheckFailed", "CheckResult", "exercise_check", "expect_close", "run_student", "all_checks"]


def _collect() -> dict:
    found = {}
    for info in pkgutil.iter_modules(_checks.__path__):
        module = importlib.import_module(f"{_checks.__name__}.{info.name}")
        for name in dir(module):
            if name.startswith("check_") and callable(getattr(module, name)):
                if name in found and found[name] is not getattr(module, name):
                    raise ImportError(f"two exercise modules define {name}")
                found[name] = getattr(module, name)
    return found


_ALL = _collect()
globals().update(_ALL)
__all__ += sorted(_ALL)


def all_checks() -> dict:
    """Every check function by name (the tests iterate over these)."""
    return dict(_ALL)

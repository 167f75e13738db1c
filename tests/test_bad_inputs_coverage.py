"""Every public function and class of coursekit has rows in the bad-input sweep, or a stated reason why not.

A new public function without a row fails this test with its name: add rows to the table of its folder,
``tests/<package>/test_bad_inputs.py`` (``tests/test_bad_inputs.py`` for the top-level modules), or, if it
takes nothing that can be wrong, a reason in that table's ``EXEMPT``.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from helpers import TESTS, load_test_module

import coursekit

TABLES = sorted(TESTS.rglob("test_bad_inputs.py"))      # tests/test_bad_inputs.py and one a folder

# Whole modules outside the sweep, with the reason.
SKIPPED_MODULES = {
    "coursekit.exercises.checks": "the exercise checks are fed wrong solutions in tests/exercises/checks/",
    "coursekit.nbtools.execution": "the maintainers' notebook runner; its arguments come from the argparse CLI",
    "coursekit.nbtools.__main__": "a CLI: argparse validates its arguments",
    "coursekit.translation.__main__": "a CLI: argparse validates its arguments",
    "coursekit.exercises.__main__": "a CLI: argparse validates its arguments",
    "coursekit.data.__main__": "a CLI: argparse validates its arguments (tests/data/test_data.py runs it)",
    "coursekit.bert.__main__": "a CLI: argparse validates its arguments",
    "coursekit.gpt.__main__": "a CLI: argparse validates its arguments",
    "coursekit.bart.__main__": "a CLI: argparse validates its arguments",
    "coursekit.bench.__main__": "a CLI: argparse validates its arguments (--threads is checked before use)",
}

# Public names with nothing a caller can get wrong, with the reason; each table adds its own ``EXEMPT``.
EXEMPT: dict[str, str] = {
    "coursekit.exercises.all_checks": "takes no argument: it lists the registered exercise checks",
}


def public_api() -> dict[str, object]:
    """``{"module.name": object}`` for the public functions and classes defined in each coursekit module."""
    found = {}
    for info in pkgutil.walk_packages(coursekit.__path__, "coursekit."):
        if any(info.name == m or info.name.startswith(m + ".") for m in SKIPPED_MODULES):
            continue
        module = importlib.import_module(info.name)
        names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
        for name in names:
            obj = getattr(module, name)
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and getattr(obj, "__module__", None) == info.name:
                found[f"{info.name}.{name}"] = obj
    return found


def test_every_public_function_has_bad_calls_or_a_reason():
    exempt, rows = dict(EXEMPT), []
    for path in TABLES:
        table = load_test_module(path)
        exempt |= getattr(table, "EXEMPT", {})
        rows += table.ROWS
    assert all(isinstance(reason, str) and len(reason) > 10 for reason in exempt.values()), "give each reason"
    covered = {id(row.target) for row in rows}
    for row in rows:                                        # a method's row covers its class
        owner = getattr(row.target, "__qualname__", "").split(".")[0]
        module = importlib.import_module(row.target.__module__) if hasattr(row.target, "__module__") else None
        if module is not None and hasattr(module, owner):
            covered.add(id(getattr(module, owner)))
    missing = sorted(name for name, obj in public_api().items() if id(obj) not in covered and name not in exempt)
    assert not missing, f"{len(missing)} public names have no bad-input rows and no exemption: {missing}"

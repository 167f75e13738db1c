"""What the tests share: paths, the bad-input machinery, tiny models, the exercise and browser helpers.

``tests/`` is on ``sys.path`` (pyproject's ``pythonpath = ["tests"]``), so a test imports these as
``from helpers import ROOT`` or ``from helpers.bad_inputs import Bad``. Test modules do not import one another
(pytest imports them with ``--import-mode=importlib``): what two test files need lives here.

* ``bad_inputs`` — ``Bad`` rows, ``check_bad_call``, ``bad_call_test`` and the small builders the tables use;
* ``tiny_models`` — tiny BERT/BART worlds and word vectors that more than one family's table builds;
* ``exercises`` — ``notebook_solutions`` and the assertions the exercise-check tests make;
* ``browser`` — finding Chromium for the browser tests;
* ``bert`` — the tiny pre-training corpus the BERT recipe tests share;
* ``figures`` — a course-like matplotlib figure and its full-colour PNG, for the palette tests;
* here: ``ROOT`` (the repository), ``require_mirror`` and ``load_test_module``.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]          # the repository
TESTS = ROOT / "tests"
SHARED_DATA = ROOT.parent / "shared" / "data"       # the offline data mirror beside the repository (.ci/run's)
MIRROR = Path(os.environ.get("COURSEKIT_DATA_MIRROR", SHARED_DATA))


def require_mirror(corpus: str) -> Path:
    """The data mirror, once it is known to hold ``corpus`` (else the calling test is skipped); the data layer
    reads it from then on ($COURSEKIT_DATA_MIRROR, set if it was not)."""
    if not (MIRROR / corpus).exists():
        pytest.skip(f"{corpus} mirror not found under {MIRROR}")
    os.environ.setdefault("COURSEKIT_DATA_MIRROR", str(MIRROR))
    return MIRROR


def load_test_module(path: Path) -> ModuleType:
    """The test module of ``path``: the one pytest already imported, or the file loaded now (once)."""
    path = Path(path).resolve()
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if file and Path(file).resolve() == path:
            return module
    name = "tests." + ".".join(path.relative_to(TESTS).with_suffix("").parts)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module

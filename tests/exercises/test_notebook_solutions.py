"""notebook_solutions (tests/helpers/exercises.py): the tests' way to the notebooks' own exercise solutions."""

from __future__ import annotations

import inspect
import re

import pytest
from helpers.exercises import ROOT, notebook_solutions

WITH_EXERCISES = sorted(p for p in (ROOT / "notebooks").glob("*.py") if "# EXERCISE" in p.read_text(encoding="utf-8"))


def test_there_are_notebooks_with_exercises():
    assert len(WITH_EXERCISES) >= 10, WITH_EXERCISES


@pytest.mark.parametrize("path", WITH_EXERCISES, ids=[p.stem for p in WITH_EXERCISES])
def test_every_exercise_function_is_found(path):
    source = path.read_text(encoding="utf-8")
    found = notebook_solutions(path.stem)
    assert found and all(callable(fn) for fn in found.values()), found
    assert set(found) == set(re.findall(r"^check_\w+\((\w+)\)", source, flags=re.M))  # what the checks are given
    assert len(found) == source.count("### BEGIN SOLUTION")                            # one solution block each
    for fn in found.values():
        assert inspect.getsource(fn).count("### BEGIN SOLUTION") == 1, fn   # read from the notebook, at its line
    assert notebook_solutions(path.stem) is found                                     # cached


FAKE = '''# %% [markdown]
# # A notebook

# %%
import math
from collections import Counter

TABLE = {"a": 1}  # defined outside the import statements: never run

# %%
print("a heavy cell that must not run")
raise SystemExit

# %%
# EXERCISE 1: fine
def my_first(x):
    ### BEGIN SOLUTION
    return math.sqrt(x) + len(Counter("ab")) + my_second(x)
    ### END SOLUTION


def my_second(x):
    ### BEGIN SOLUTION
    return torch.tensor(x).item()
    ### END SOLUTION


check_first(my_first)
print(my_first(4))

# %% [markdown]
# Between the exercises.

# %%
# EXERCISE 2: reads the notebook's TABLE
def my_lookup(key):
    ### BEGIN SOLUTION
    return TABLE[key]
    ### END SOLUTION


check_lookup(my_lookup)
'''


def _fake(tmp_path, source):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "99_fake.py").write_text(source, encoding="utf-8")
    return tmp_path


def test_runs_only_imports_and_exercise_definitions(tmp_path):
    root = _fake(tmp_path, FAKE.split("# %%\n# EXERCISE 2")[0])
    found = notebook_solutions("99_fake", root)
    assert sorted(found) == ["my_first", "my_second"]
    assert found["my_first"](4) == 2 + 2 + 4 and "TABLE" not in found["my_first"].__globals__


def test_a_name_defined_elsewhere_in_the_notebook_is_a_clear_error(tmp_path):
    root = _fake(tmp_path, FAKE)
    with pytest.raises(NameError, match=r"notebooks/99_fake\.py, line \d+ \(EXERCISE 2: reads the notebook's "
                                        r"TABLE\): uses TABLE, which neither the notebook's imports nor"):
        notebook_solutions("99_fake", root)

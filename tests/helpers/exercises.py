"""Assertions shared by the tests of every exercise check (tests/exercises/checks/), and the notebooks'
own exercise solutions (:func:`notebook_solutions`)."""

import ast
import builtins
import functools
import math
import symtable
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from coursekit.exercises.core import FAILED, _resolve
from helpers import ROOT


def passes(check, fn):
    """The check accepts ``fn``; return its result."""
    result = check(fn, verbose=False)
    assert result.passed, result
    return result


def fails_with(check, fn, *hint_words):
    """The check rejects ``fn`` with a message containing every one of ``hint_words``."""
    result = check(fn, verbose=False)
    assert result.status == FAILED, result
    for words in hint_words:
        assert words in result.message, result.message
    return result


def stub(*args, **kwargs):
    """What the student version of an exercise holds before the student writes anything."""
    raise NotImplementedError("Exercise 1: …")


DELEGATED = "asks you to write this yourself"


def refuses_delegation(check, fn, dotted=None, *, correct=False):
    """The check rejects ``fn``, which calls a reference the exercise asks the student to re-create
    (``check.reimplements``), saying so — and naming ``dotted`` when given; afterwards every one of those
    references is back in its place. ``correct=True``: ``fn`` computes the right answer, so the check
    without its forbidden references (``check.__wrapped__``) accepts it — only the delegation fails it."""
    before = {name: _resolve(name)[2] for name in check.reimplements}
    result = fails_with(check, fn, DELEGATED, *([f"calls {dotted} "] if dotted else []))
    moved = [name for name, original in before.items() if _resolve(name)[2] is not original]
    assert not moved, f"not restored after the check: {moved}"
    if correct:
        check.__wrapped__(fn)  # raises CheckFailed if fn were wrong anyway
    return result


def wrong_solution_table():
    """``(WRONG, wrong)``: a table ``WRONG[(check name, mistake)] = (function, words)`` and a decorator
    ``@wrong(check, *words)`` that adds the function under its own name; ``words`` are what the failure
    message must hold besides the failing input's name."""
    table: dict[tuple[str, str], tuple] = {}

    def wrong(check, *words):
        def register(fn):
            table[(check, fn.__name__)] = (fn, words)
            return fn
        return register

    return table, wrong


# ----------------------------------------------------------------------------- the notebooks' own solutions

_IMPORTS = (ast.Import, ast.ImportFrom)
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _code_cells(path: Path):
    """``(first line, its line number in the file, parsed statements)`` of each code cell of a jupytext
    percent-format file; line numbers are the file's, for tracebacks and inspect.getsource."""
    lines = path.read_text(encoding="utf-8").splitlines()
    heads = [i for i, line in enumerate(lines) if line.startswith("# %%")] + [len(lines)]
    for head, end in zip(heads, heads[1:]):
        if "[markdown]" not in lines[head] and "[raw]" not in lines[head]:
            tree = ast.increment_lineno(ast.parse("\n".join(lines[head + 1:end]), str(path)), head + 1)
            first = next((i for i in range(head + 1, end) if lines[i].strip()), head)
            yield lines[first], first + 1, tree


def _unbound_globals(tree: ast.Module) -> set[str]:
    """The global names the code reads but does not bind itself."""
    top = symtable.symtable(ast.unparse(tree), "cell", "exec")
    names, tables = set(), [top]
    while tables:
        table = tables.pop()
        names |= {s.get_name() for s in table.get_symbols() if s.is_referenced() and s.is_global()}
        tables += table.get_children()
    return names - {s.get_name() for s in top.get_symbols() if s.is_local()}


@functools.cache
def notebook_solutions(notebook: str, root: Path = ROOT) -> dict[str, Callable]:
    """The functions (and classes) the exercise cells of ``root/notebooks/<notebook>.py`` define, by name, with
    their solutions in place — so that the tests exercise the notebooks' own solutions, not copies of them in
    the test files, which could drift from what the notebooks hold.

    Runs, in one namespace and in order: math, torch, nn and F; the import statements of the code cells before
    the exercises (nothing else of them, so nothing heavy runs); the definitions and imports of every exercise
    cell (a code cell whose first line is ``# EXERCISE …``), not its check call nor a demo of the solution.
    An exercise that reads a name the notebook defines elsewhere raises NameError naming it.
    """
    path = root / "notebooks" / f"{notebook}.py"
    namespace = {"__name__": f"notebooks.{notebook}", "math": math, "torch": torch, "nn": nn, "F": F}
    found: dict[str, Callable] = {}
    in_exercises = False
    for first_line, line_number, tree in _code_cells(path):
        is_exercise = first_line.startswith("# EXERCISE")
        in_exercises = in_exercises or is_exercise
        if in_exercises and not is_exercise:
            continue  # a code cell after the exercises began that is no exercise
        tree.body = [node for node in tree.body if isinstance(node, _IMPORTS + (_DEFINITIONS if is_exercise else ()))]
        missing = _unbound_globals(tree) - namespace.keys() - vars(builtins).keys()
        if missing:
            raise NameError(f"notebooks/{notebook}.py, line {line_number} ({first_line[2:]}): uses "
                            f"{', '.join(sorted(missing))}, which neither the notebook's imports nor its exercise "
                            "cells define; notebook_solutions runs only those, so import the name in the "
                            "notebook's first cell or define it in the exercise cell")
        exec(compile(tree, str(path), "exec"), namespace)  # noqa: S102 - the notebook's own code
        found |= {node.name: namespace[node.name] for node in tree.body if isinstance(node, _DEFINITIONS)}
    return found

"""Student versions teach without giving answers away (issue 49, item 4): no lesson cell of a notebook — the
cells its student version keeps as they are — holds the solution of one of its exercises.

Two tests, because "the same code up to names" can hide either way:

- **by text**: each simple statement of an exercise's solution, with its variable names replaced by
  placeholders in order of appearance and ``torch.f(x, …)`` written as ``x.f(…)``, is looked up among the
  statements of each lesson cell; a cell holding statements that make up half of the solution (counted in
  syntax-tree nodes) gives it away;
- **by behaviour**: every function a lesson cell defines is handed to every check of its notebook whose
  exercise takes as many arguments; none may pass one.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import inspect
import io
import math
import re
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from helpers.exercises import ROOT, _code_cells, _unbound_globals, notebook_solutions
from torch import nn

from coursekit.exercises import all_checks
from coursekit.exercises.core import PASSED
from coursekit.exercises.student import SOLUTION_BEGIN, SOLUTION_END

NOTEBOOKS = sorted(p for p in (ROOT / "notebooks").glob("*.py") if "# EXERCISE" in p.read_text(encoding="utf-8"))
CHECKS = all_checks()
KEPT_NAMES = {"torch", "F", "nn", "math", "np"} | set(vars(builtins))   # modules and builtins are not renamed
SHARE = 0.5                                                            # of a solution's nodes: a give-away


class _Canonical(ast.NodeTransformer):
    """Names → placeholders in order of first appearance; ``torch.f(x, …)`` / ``F.f(x, …)`` → ``x.f(…)`` when
    tensors have a method ``f``; numbers → one placeholder (a 10000 and a ``base`` read the same)."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def _placeholder(self, name: str) -> str:
        return name if name in KEPT_NAMES else self.names.setdefault(name, f"v{len(self.names)}")

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.copy_location(ast.Name(id=self._placeholder(node.id), ctx=node.ctx), node)

    def visit_arg(self, node: ast.arg) -> ast.AST:
        return ast.copy_location(ast.arg(arg=self._placeholder(node.arg)), node)

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return ast.copy_location(ast.Name(id="NUMBER", ctx=ast.Load()), node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        func = node.func
        if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("torch", "F")
                and node.args and hasattr(torch.Tensor, func.attr)):
            node = ast.Call(func=ast.Attribute(value=node.args[0], attr=func.attr, ctx=ast.Load()),
                            args=node.args[1:], keywords=node.keywords)
        return self.generic_visit(node)


def canonical(statement: ast.stmt) -> str:
    return ast.dump(_Canonical().visit(ast.parse(ast.unparse(statement)).body[0]), annotate_fields=False)


def simple_statements(nodes: list[ast.stmt]) -> list[ast.stmt]:
    """Every statement that holds no other statement (the bodies of defs, loops and ifs are walked into)."""
    found = []
    for node in nodes:
        inner = [child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt)]
        found += simple_statements(inner) if inner else [node]
    return found


def size(statement: ast.stmt) -> int:
    return sum(1 for _ in ast.walk(statement))


def _cells(path: Path):
    """``(is_exercise, first line, line number, tree)`` of each code cell before the first non-exercise cell
    that follows the exercises (there are none today)."""
    for first_line, line_number, tree in _code_cells(path):
        yield first_line.startswith("# EXERCISE"), first_line, line_number, tree


def solutions(path: Path) -> list[tuple[str, list[ast.stmt]]]:
    """``(exercise header, its solution's simple statements)``: the statements between the solution markers."""
    lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    begins = [n for n, line in enumerate(lines, start=1) if line == SOLUTION_BEGIN]
    ends = [n for n, line in enumerate(lines, start=1) if line == SOLUTION_END]
    regions = list(zip(begins, ends))
    found = []
    for is_exercise, first_line, _, tree in _cells(path):
        if not is_exercise:
            continue
        inside = [s for s in simple_statements(tree.body) if any(a < s.lineno < b for a, b in regions)]
        if inside:
            found.append((first_line[2:], inside))
    return found


def lesson_cells(path: Path) -> list[tuple[int, ast.Module]]:
    return [(line_number, tree) for is_exercise, _, line_number, tree in _cells(path) if not is_exercise]


def shared_share(solution: list[ast.stmt], cell: ast.Module) -> float:
    """The share of the solution's nodes in statements that the cell holds too, up to names."""
    held = {canonical(s) for s in simple_statements(cell.body)}
    return sum(size(s) for s in solution if canonical(s) in held) / sum(size(s) for s in solution)


# ----------------------------------------------------------------------------- the measure itself


def test_the_text_measure_sees_a_renamed_copy_and_not_a_different_function():
    solution = simple_statements(ast.parse("def f(x, w, eps):\n    d = x.shape[-1]\n"
                                           "    return x / torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * w"
                                           ).body)
    renamed = ast.parse("def g(h, gain):\n    return h / (h.pow(2).mean(dim=-1, keepdim=True) + 1e-6).sqrt() * gain")
    assert shared_share(solution, renamed) == 0           # a different expression is not a copy …
    copied = ast.parse("def rms(h, gain, e=1e-6):\n    return h / torch.sqrt(h.pow(2).mean(dim=-1, keepdim=True) + e) "
                       "* gain")
    assert shared_share(solution, copied) > SHARE        # … the same one under other names is
    method_form = ast.parse("y = torch.repeat_interleave(x, 2, dim=1)")
    assert canonical(method_form.body[0]) == canonical(ast.parse("z = k.repeat_interleave(4, dim=1)").body[0])


# ----------------------------------------------------------------------------- the notebooks


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_lesson_cell_holds_an_exercise_solution_by_text(path):
    found = solutions(path)
    assert found, f"{path.name}: no solution found between the markers"
    leaks = [f"{path.name}, lesson cell at line {line}: {share:.0%} of the solution of {header}"
             for header, solution in found for line, cell in lesson_cells(path)
             if (share := shared_share(solution, cell)) >= SHARE]
    assert not leaks, "\n".join(leaks)


def _lesson_functions(path: Path) -> dict[str, object]:
    """The functions the lesson cells define that can run on their own: the notebook's imports, then each
    top-level def whose free names those imports (or earlier such defs) bind."""
    namespace = {"__name__": f"lesson.{path.stem}", "math": math, "torch": torch, "nn": nn, "F": F}
    found = {}
    for _, tree in lesson_cells(path):
        imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        exec(compile(ast.Module(body=imports, type_ignores=[]), str(path), "exec"), namespace)  # noqa: S102
    for _, tree in lesson_cells(path):
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef):
                continue
            module = ast.Module(body=[node], type_ignores=[])
            if _unbound_globals(module) - namespace.keys() - vars(builtins).keys():
                continue                                   # reads the notebook's state: the text test covers it
            exec(compile(module, str(path), "exec"), namespace)  # noqa: S102 - the notebook's own code
            found[node.name] = namespace[node.name]
    return found


def _arity(fn) -> tuple[int, int]:
    params = [p for p in inspect.signature(fn).parameters.values() if p.kind in (p.POSITIONAL_ONLY,
                                                                                 p.POSITIONAL_OR_KEYWORD)]
    return sum(p.default is p.empty for p in params), len(params)


def _calls(path: Path) -> list[tuple[str, str]]:
    return re.findall(r"^(check_\w+)\((\w+)\)", path.read_text(encoding="utf-8"), flags=re.M)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_lesson_function_passes_an_exercise_check(path):
    exercises = notebook_solutions(path.stem)
    passing = []
    for name, fn in _lesson_functions(path).items():
        low, high = _arity(fn)
        for check, exercise_fn in _calls(path):
            wanted = _arity(exercises[exercise_fn])[1]
            if not low <= wanted <= high:
                continue
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                try:
                    result = CHECKS[check](fn, verbose=False)
                except Exception:  # noqa: BLE001 - a lesson function that does not fit the check at all
                    continue
            if result.status == PASSED:
                passing.append(f"{path.name}: the lesson's {name} passes {check}")
    assert not passing, "\n".join(passing)

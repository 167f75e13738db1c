"""The package's layout rules (docs/CONVENTIONS.md, "The map"): imports only go down, and the lint is clean.

The import graph is read from the source with :mod:`ast` (every ``import coursekit…`` and ``from coursekit…
import …``, wherever it stands), so a cycle hidden behind a function-local or ``TYPE_CHECKING`` import counts
as much as one at the top of a module. The tests fail on:

* an import cycle between modules, or between folders (the message prints it);
* a ``coursekit`` import inside a function (the usual way to dodge a cycle) or under ``TYPE_CHECKING``;
* a ``_private`` name imported across a package boundary (``coursekit.bert`` from ``coursekit.attention``);
* more than 21 entries at the top of ``coursekit/``;
* any ruff finding in the package, the tests or the notebooks' ``.py`` twins.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

PACKAGE = ROOT / "coursekit"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def resolve(name: str) -> str:
    """The module an imported dotted name lives in (``coursekit.bert.model.Bert`` → ``coursekit.bert.model``)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def imports(path: Path) -> list[tuple[ast.stmt, str, list[str]]]:
    """``(node, target module, imported names)`` for every coursekit import of a file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "coursekit":
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                found.append((node, resolve(full if full in MODULES else node.module), [alias.name]))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "coursekit":
                    found.append((node, resolve(alias.name), []))
    return found


def graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {name: set() for name in MODULES}
    for name, path in MODULES.items():
        for _, target, _ in imports(path):
            if target and target != name:
                edges[name].add(target)
    # a package's __init__ runs before any of its modules: importing coursekit.a.b imports coursekit.a
    for name in MODULES:
        parent = name.rpartition(".")[0]
        if parent in MODULES and parent != "coursekit" and name not in edges[parent]:
            edges[name].add(parent)
    return edges


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a list of modules (first = last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node] = 2
        stack.pop()
        return None

    for node in sorted(edges):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_import_graph_has_no_cycle():
    cycle = find_cycle(graph())
    assert cycle is None, "import cycle: " + " → ".join(cycle)


def folder_graph() -> dict[str, set[str]]:
    """The import graph with every module replaced by its folder (``coursekit.rnn.seq2seq`` → ``rnn``; a
    top-level module such as ``coursekit.text`` is its own folder)."""
    def folder(module: str) -> str:
        return module.split(".")[1] if "." in module else module

    edges: dict[str, set[str]] = {}
    for name, targets in graph().items():
        edges.setdefault(folder(name), set()).update(folder(t) for t in targets if folder(t) != folder(name))
    return edges


def test_the_folder_graph_has_no_cycle():
    """A folder imports only folders below it: no arrow runs back up (the model families once imported the
    translation task for their ``.translator()`` methods while the task imports the models; what several
    folders share — decoding, training schedules — lives below them)."""
    edges = folder_graph()
    assert {"rnn", "transformer", "translation", "decoding", "training"} <= set(edges)
    cycle = find_cycle(edges)
    assert cycle is None, "folders import each other: " + " → ".join(cycle)


def test_find_cycle_sees_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_coursekit_import_inside_a_function_or_under_type_checking():
    wrong = []
    for path in MODULES.values():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            hidden = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or (
                isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test))
            if hidden:
                for inner in ast.walk(node):
                    if isinstance(inner, (ast.Import, ast.ImportFrom)) and "coursekit" in ast.unparse(inner):
                        wrong.append(f"{path.relative_to(ROOT)}:{inner.lineno}: {ast.unparse(inner)}")
    assert not wrong, "imports of coursekit belong at the top of the module:\n" + "\n".join(wrong)


def package_of(module: str) -> str:
    """``coursekit.bert.model`` → ``coursekit.bert``; a top-level module is its own package."""
    return ".".join(module.split(".")[:2])


def test_no_private_name_crosses_a_package_boundary():
    wrong = []
    for name, path in MODULES.items():
        for _, target, names in imports(path):
            for imported in names:
                if imported.startswith("_") and package_of(target) != package_of(name):
                    wrong.append(f"{name} imports {imported} from {target}")
    assert not wrong, "make these public (and documented) or move them:\n" + "\n".join(wrong)


def test_at_most_21_entries_at_the_top_of_the_package():
    entries = sorted(p.name for p in PACKAGE.iterdir() if p.name != "__pycache__")
    assert len(entries) <= 21, entries


def test_every_subpackage_is_a_package_with_a_docstring():
    for folder in (p for p in PACKAGE.rglob("*") if p.is_dir() and p.name != "__pycache__"):
        init = folder / "__init__.py"
        assert init.exists(), f"{folder.relative_to(ROOT)} has no __init__.py"
        assert ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))), f"{init} says nothing of its folder"


@pytest.mark.skipif(shutil.which("ruff") is None and not (Path(sys.executable).parent / "ruff").exists(),
                    reason="ruff is not installed (pip install -e '.[dev]')")
def test_ruff_is_clean():
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    done = subprocess.run([ruff, "check", "coursekit", "tests", "notebooks"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]

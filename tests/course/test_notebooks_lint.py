"""Structural checks of every committed notebook (they are cheap: no execution)."""

import json
import re
from pathlib import Path

import nbformat
import pytest

from coursekit.nbtools import execution as nbtools

NOTEBOOKS = sorted(nbtools.NOTEBOOKS.glob("*.ipynb"))
MAX_BYTES = 3 * 1024 * 1024
ASSERT_RE = re.compile(r"^\s*assert\b", re.MULTILINE)


def _load(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(str(path), as_version=4)


def test_there_are_notebooks_and_names_are_ordered():
    assert NOTEBOOKS, "no notebooks found"
    numbers = []
    for p in NOTEBOOKS:
        m = re.fullmatch(r"(\d\d)_[a-z0-9_]+\.ipynb", p.name)
        assert m, f"{p.name} should be named NN_topic.ipynb"
        numbers.append(int(m.group(1)))
    assert numbers == sorted(set(numbers)), f"notebook numbers must be unique and ordered: {numbers}"
    assert numbers[0] == 0, "the course starts with 00_setup.ipynb"


def test_py_twins_in_sync():
    assert nbtools.sync_problems() == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_structure(path):
    assert path.stat().st_size < MAX_BYTES, f"{path.name} is {path.stat().st_size / 1e6:.1f} MB"
    nb = _load(path)
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith(f"# {path.stem[:2]} — "), \
        "the first cell is the title '# NN — Title'"
    for heading in ("Learning goals", "Summary", "Exercises"):
        assert heading in markdown, f"missing a '{heading}' section"
    n_check = sum(c.source.lstrip().startswith("# NBVAL_CHECK_OUTPUT") for c in code_cells)
    assert n_check >= 3, f"only {n_check} NBVAL_CHECK_OUTPUT cells (need ≥ 3)"
    n_assert = sum(len(ASSERT_RE.findall(c.source)) for c in code_cells
                   if not c.source.lstrip().startswith("# EXERCISE"))
    assert n_assert >= 3, f"only {n_assert} asserts outside exercises (need ≥ 3)"
    n_ex = sum(c.source.lstrip().startswith("# EXERCISE") for c in code_cells)
    assert n_ex >= 3, f"only {n_ex} exercise cells (need ≥ 3)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_executed_in_order_without_errors_in_class_profile(path):
    nb = _load(path)
    counts = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        assert not any(o.output_type == "error" for o in cell.outputs), f"cell {i} has a stored error"
        if cell.execution_count is None:
            assert not cell.outputs, f"cell {i} has outputs but was not run"
        else:
            counts.append(cell.execution_count)
    n_code = sum(c.cell_type == "code" for c in nb.cells)
    assert counts == list(range(1, n_code + 1)), "cells must be executed once, top to bottom, in one fresh run"
    meta = nb.metadata.get("coursekit", {})
    assert meta.get("profile") == "class", "stored outputs must come from the class profile (nbtools run)"
    for key in ("device", "wall_time_s", "versions", "executed_at"):
        assert key in meta, f"metadata.coursekit lacks {key}"


def test_readme_runtime_table_is_current():
    readme = (nbtools.ROOT / "README.md").read_text()
    assert nbtools.runtime_table() in readme, "README runtime table is stale: run `python -m coursekit.nbtools table`"


def test_timings_file_is_valid():
    timings = json.loads(nbtools.TIMINGS.read_text())
    for name, per_profile in timings.items():
        assert set(per_profile) <= {"quick", "class", "full"}, name


STORED_OUTPUT_PROBLEMS = {
    "a warning": re.compile(r"\b\w*Warning\b"),
    "an absolute path of the machine that ran it":
        re.compile(r"(?<![\w.])/(?:work|home|root|tmp|usr|opt)/|site-packages"),
    "a progress bar": re.compile(r"\d+%\|[^\n]*\||\b\d+/\d+ \[\d+:\d+"),
    "float noise": re.compile(r"\d\.\d*(?:0{9,}|9{9,})\d"),
}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_outputs_are_for_readers(path):
    """No warnings, machine paths, library progress bars or 0.30000000000000004 in what a reader sees."""
    found = []
    for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        for out in cell.get("outputs", []):
            texts = ["".join(out["text"])] if out.get("output_type") == "stream" else []
            texts += ["".join(v) for k, v in out.get("data", {}).items() if k in ("text/plain", "text/html")]
            for text in texts:
                for problem, pattern in STORED_OUTPUT_PROBLEMS.items():
                    if m := pattern.search(text):
                        found.append(f"cell {i}: {problem}: …{text[max(0, m.start() - 40):m.end() + 20]!r}…")
    assert not found, "\n".join(found)


def test_every_notebook_reads_its_sizes_in_one_cell():
    """00's promise: every notebook reads its sizes through one `S = runtime.sizes(...)` cell, so an instructor
    changes the profile (an environment variable), never the code."""
    for path in sorted(nbtools.NOTEBOOKS.glob("[0-9][0-9]_*.py")):
        source = path.read_text(encoding="utf-8")
        assert len(re.findall(r"^S = runtime\.sizes\(", source, flags=re.M)) == 1, path.name


GENERIC_PLURAL = re.compile(r"\b[a-z]+\(s\)(?!\))")          # not a call such as "encode(s))"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_generic_plurals(path):
    """No "1 thread(s)" in the prose or the stored outputs: the notebooks print counts with
    ``coursekit.viz.wording.counted``. (Code is not searched: ``len(s)`` is no plural.)"""
    found = []
    for i, cell in enumerate(_load(path).cells):
        texts = [cell.source] if cell.cell_type == "markdown" else [
            "".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
            + "".join(o.get("data", {}).get("text/html", "")) for o in cell.get("outputs", [])]
        found += [f"cell {i}: {m.group()}" for text in texts for m in GENERIC_PLURAL.finditer(text)]
    assert not found, found

"""Student versions of the notebooks: solutions out, stubs in, everything else intact.

The markers are those of nbgrader, so a notebook written for this course also works there:

* In a **code cell** whose first line is ``# EXERCISE N: title``, the lines between
  ``### BEGIN SOLUTION`` and ``### END SOLUTION`` (markers included) become one line,
  ``raise NotImplementedError("Exercise N: title")``, at the indentation of the BEGIN marker.
  The outputs and execution count of every exercise cell are cleared (they could show the answer).
* In a **markdown cell**, the lines between ``=== BEGIN MARK SCHEME ===`` and
  ``=== END MARK SCHEME ===`` (markers included) become ``_Your answer here._``.

Every other cell, output and piece of metadata is copied unchanged. The transformation is
idempotent: the student version of a student version is the same notebook, byte for byte.

Command line (see ``python -m coursekit.exercises student --help``)::

    python -m coursekit.exercises student notebooks/ --out student/
    python -m coursekit.exercises student notebooks/07_self_attention.ipynb --out student/
"""

from __future__ import annotations

import copy
import json
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import nbformat

from coursekit.validation import check_choice

__all__ = [
    "SOLUTION_BEGIN", "SOLUTION_END", "MARK_SCHEME_BEGIN", "MARK_SCHEME_END", "ANSWER_STUB",
    "MarkerError", "Exercise", "exercise_header", "solution_regions", "student_source",
    "student_notebook", "exercises_of", "notebooks_in", "student_paths", "write_student_versions",
]

SOLUTION_BEGIN, SOLUTION_END = "### BEGIN SOLUTION", "### END SOLUTION"
MARK_SCHEME_BEGIN, MARK_SCHEME_END = "=== BEGIN MARK SCHEME ===", "=== END MARK SCHEME ==="
ANSWER_STUB = "_Your answer here._"

EXERCISE_PREFIX = "# EXERCISE"
_EXERCISE_RE = re.compile(r"^# EXERCISE (?P<number>\d+[a-z]?): (?P<title>\S.*?)\s*$")

# Which markers apply to which kind of cell; markers of the other kind are left alone there
# (a markdown cell may well *show* an exercise cell inside a code fence).
_MARKERS = {"code": (SOLUTION_BEGIN, SOLUTION_END), "markdown": (MARK_SCHEME_BEGIN, MARK_SCHEME_END)}


def _check_str(value, name: str) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")


def _check_notebook(nb, name: str = "nb") -> None:
    if not isinstance(nb, nbformat.NotebookNode):
        raise TypeError(f"{name} must be a notebook (nbformat.NotebookNode, e.g. from nbformat.read), "
                        f"got {type(nb).__name__}")


class MarkerError(ValueError):
    """A notebook's solution markers or exercise headers are malformed (names notebook and cell)."""


@dataclass(frozen=True)
class Exercise:
    """An exercise cell: its number and title (from ``# EXERCISE N: title``) and its cell index."""

    number: str
    title: str
    cell_index: int

    @property
    def label(self) -> str:
        return f"Exercise {self.number}: {self.title}"


def _where(notebook: str, cell_index: int, source: str) -> str:
    first = source.splitlines()[0] if source.strip() else ""
    shown = f" ({first[:60]!r})" if first else ""
    return f"{notebook}, cell {cell_index + 1}{shown}"


def exercise_header(source: str, *, where: str = "<cell>") -> tuple[str, str] | None:
    """``(number, title)`` if the cell's first line is ``# EXERCISE N: title``, else ``None``.

    A first line that starts with ``# EXERCISE`` but is not of that form is a :class:`MarkerError`,
    so that a typo never silently turns an exercise into an ordinary cell.
    """
    _check_str(source, "source")
    first = source.split("\n", 1)[0].rstrip()
    if not first.startswith(EXERCISE_PREFIX):
        return None
    match = _EXERCISE_RE.match(first)
    if match is None:
        raise MarkerError(f"{where}: malformed exercise header {first!r}; "
                          f"expected '# EXERCISE N: short title' (e.g. '# EXERCISE 2: causal mask')")
    return match["number"], match["title"]


def solution_regions(lines: list[str], begin: str, end: str, *, where: str = "<cell>") -> list[tuple[int, int]]:
    """Line index pairs ``(i_begin, i_end)`` of each marked region (a marker line is one whose
    stripped text equals the marker). Unbalanced or nested markers raise :class:`MarkerError`."""
    if isinstance(lines, str) or not isinstance(lines, (list, tuple)):
        raise TypeError(f"lines must be a list of str lines (source.split('\\n')), got {type(lines).__name__}")
    regions, open_at = [], None
    for i, line in enumerate(lines):
        text = line.strip()
        if text == begin:
            if open_at is not None:
                raise MarkerError(f"{where}: nested markers: {begin!r} on line {i + 1} while the one "
                                  f"on line {open_at + 1} is still open (add {end!r} before it)")
            open_at = i
        elif text == end:
            if open_at is None:
                raise MarkerError(f"{where}: {end!r} on line {i + 1} has no {begin!r} before it")
            regions.append((open_at, i))
            open_at = None
    if open_at is not None:
        raise MarkerError(f"{where}: {begin!r} on line {open_at + 1} is never closed by {end!r}")
    return regions


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def student_source(source: str, cell_type: str, *, stub: str, where: str = "<cell>") -> tuple[str, int]:
    """Replace every marked region of one cell's source by ``stub`` (at the marker's indentation).

    Returns the new source and the number of regions replaced.
    """
    _check_str(source, "source")
    check_choice(cell_type, "cell_type", ["code", "markdown", "raw"])
    _check_str(stub, "stub")
    if cell_type not in _MARKERS:
        return source, 0
    lines = source.split("\n")
    regions = solution_regions(lines, *_MARKERS[cell_type], where=where)
    for i_begin, i_end in reversed(regions):  # from the bottom, so earlier indices stay valid
        lines[i_begin: i_end + 1] = [_indent(lines[i_begin]) + stub]
    return "\n".join(lines), len(regions)


def _exercise_stub(number: str, title: str) -> str:
    # json.dumps writes a double-quoted literal that Python reads back unchanged.
    return f"raise NotImplementedError({json.dumps(f'Exercise {number}: {title}', ensure_ascii=False)})"


def _clear_outputs(cell) -> None:
    cell.outputs = []
    cell.execution_count = None


def student_notebook(nb: nbformat.NotebookNode,
                     name: str = "<notebook>") -> tuple[nbformat.NotebookNode, list[Exercise]]:
    """The student version of ``nb`` (a new notebook; ``nb`` is not modified) and its exercises.

    ``name`` is used in error messages, which name the notebook and the cell (counted from 1).
    """
    _check_notebook(nb)
    student = copy.deepcopy(nb)
    exercises: list[Exercise] = []
    for index, cell in enumerate(student.cells):
        where = _where(name, index, cell.source)
        header = exercise_header(cell.source, where=where) if cell.cell_type == "code" else None
        if header is not None:
            exercise = Exercise(*header, cell_index=index)
            _check_unique(exercise, exercises, name)
            exercises.append(exercise)
            before = cell.source
            cell.source, _ = student_source(before, "code", stub=_exercise_stub(*header), where=where)
            _check_still_python(before, cell.source, where)
            _clear_outputs(cell)
        elif cell.cell_type == "code":
            if solution_regions(cell.source.split("\n"), SOLUTION_BEGIN, SOLUTION_END, where=where):
                raise MarkerError(f"{where}: solution markers outside an exercise cell; the cell's first "
                                  f"line must be '# EXERCISE N: short title'")
        elif cell.cell_type == "markdown":
            cell.source, _ = student_source(cell.source, "markdown", stub=ANSWER_STUB, where=where)
    return student, exercises


def _check_still_python(before: str, after: str, where: str) -> None:
    """A cell that compiled with its solution must compile with the stub (markers indented wrongly)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. SyntaxWarning for escapes: not ours to report
        try:
            compile(before, where, "exec")
        except SyntaxError:
            return  # IPython magics or the like: nothing to compare with
        try:
            compile(after, where, "exec")
        except SyntaxError as exc:
            raise MarkerError(f"{where}: with the stub in place the cell is no longer valid Python "
                              f"({exc.msg}, line {exc.lineno}); indent the solution markers like the "
                              f"solution code they enclose") from None


def _check_unique(exercise: Exercise, seen: list[Exercise], name: str) -> None:
    for other in seen:
        if other.number == exercise.number:
            raise MarkerError(f"{name}, cell {exercise.cell_index + 1}: exercise number {exercise.number} "
                              f"is already used by cell {other.cell_index + 1} ({other.label!r})")


def exercises_of(nb: nbformat.NotebookNode, name: str = "<notebook>") -> list[Exercise]:
    """The exercise cells of a notebook, in order (validates headers and markers)."""
    return student_notebook(nb, name)[1]


# --------------------------------------------------------------------------- files


def _has_solution_markers(path: Path) -> bool:
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception:  # noqa: BLE001 - unreadable: treat as precious, do not overwrite
        return True
    return any(line.strip() == _MARKERS[cell.cell_type][0]
               for cell in nb.cells if cell.cell_type in _MARKERS
               for line in cell.source.split("\n"))


def student_paths(sources: list[Path], out: Path) -> list[tuple[Path, Path]]:
    """Pair each source notebook with the path of its student version, refusing unsafe targets.

    ``out`` is a directory, or a ``.ipynb`` file when there is exactly one source. Raises
    ``ValueError`` when a target is a source notebook, lies in a source directory, or is an existing
    notebook that still has solution markers (an instructor's version, which must never be lost).
    """
    if not isinstance(sources, (list, tuple)):
        raise TypeError(f"sources must be a list of notebook paths, got {type(sources).__name__}")
    if not isinstance(out, (str, Path)):
        raise TypeError(f"out must be a folder or notebook path (str or Path), got {type(out).__name__}")
    sources, out = [Path(src) for src in sources], Path(out)
    if out.suffix == ".ipynb":
        if len(sources) != 1:
            raise ValueError(f"--out {out} is a notebook file, but {len(sources)} notebooks were given; "
                             f"pass a directory instead")
        pairs = [(sources[0], out)]
    else:
        pairs = [(src, out / src.name) for src in sources]
    source_dirs = {src.resolve().parent for src in sources}
    source_files = {src.resolve() for src in sources}
    for _, dst in pairs:
        if dst.resolve() in source_files or dst.resolve().parent in source_dirs:
            raise ValueError(f"refusing to write {dst}: it is in the source directory "
                             f"{dst.resolve().parent}; choose another --out (e.g. student/)")
        if dst.exists() and _has_solution_markers(dst):
            raise ValueError(f"refusing to overwrite {dst}: it contains solution markers, so it looks "
                             f"like a source notebook, not a student version")
    return pairs


def notebooks_in(path: Path) -> list[Path]:
    """``path`` itself if it is a notebook, else the ``*.ipynb`` directly inside the directory."""
    if not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a notebook or folder path (str or Path), got {type(path).__name__}")
    path = Path(path)
    if path.is_dir():
        found = sorted(p for p in path.glob("*.ipynb") if p.is_file())
        if not found:
            raise ValueError(f"no .ipynb notebooks in {path}")
        return found
    if path.suffix != ".ipynb":
        hint = " (build the .ipynb first: python -m coursekit.nbtools run ...)" if path.suffix == ".py" else ""
        raise ValueError(f"expected a .ipynb notebook or a directory of them, got {path}{hint}")
    if not path.is_file():
        raise FileNotFoundError(f"no such notebook: {path}")
    return [path]


def write_student_versions(sources: list[Path] | Path, out: Path) -> list[tuple[Path, list[Exercise]]]:
    """Write the student version of each source notebook (a file or a directory) under ``out``.

    Every notebook is converted before anything is written, so a marker error in one notebook
    leaves no half-written output. Returns ``(written path, exercises)`` per notebook.
    """
    if isinstance(sources, (str, Path)):
        sources = notebooks_in(Path(sources))
    elif not isinstance(sources, (list, tuple)):
        raise TypeError(f"sources must be a notebook path, a folder or a list of them, got {type(sources).__name__}")
    else:
        sources = [p for src in sources for p in notebooks_in(Path(src))]
    pairs = student_paths(sources, Path(out))
    converted = []
    for src, dst in pairs:
        nb = nbformat.read(src, as_version=4)
        converted.append((dst, *student_notebook(nb, name=str(src))))
    written = []
    for dst, student, exercises in converted:
        nbformat.validate(student)
        dst.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(student, dst)
        written.append((dst, exercises))
    return written

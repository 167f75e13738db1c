"""Grade a submitted notebook: run it in a fresh kernel and collect what every check reported.

``python -m coursekit.exercises grade submission.ipynb [--timeout 120] [--json]``

The notebook runs top to bottom in a fresh kernel (errors do not stop it; each cell has a time
limit) with

* ``COURSEKIT_HEADLESS=1`` (widgets render their static examples),
* ``COURSEKIT_PROFILE=quick`` unless the variable is already set,
* ``COURSEKIT_GRADING_LOG=<a temporary file>``: every check appends its
  :class:`~coursekit.exercises.core.CheckResult` there as one JSON line.

Each exercise (a code cell whose first line is ``# EXERCISE N: title``) owns the cells from its own
cell up to the next exercise cell, and the check results logged while they ran. It is

* **passed** when its checks reported and all passed;
* **failed** when a check failed (its message is shown) or one of its cells raised an error;
* **not attempted** when its cell still raises ``NotImplementedError`` or no check reported.

A lesson cell (one before the first exercise) that raises is listed under ``lesson_errors`` with its
cell number and message: the exercises after it may then fail for a reason that is not the student's
(a missing model file, a name the crashed cell should have defined).

Student code is executed as is: grade submissions in a sandbox you trust (a container, a CI job).
"""

from __future__ import annotations

import json
import os
import tempfile
import textwrap
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError

from coursekit.exercises.core import FAILED, GRADING_LOG_ENV, NOT_ATTEMPTED, PASSED, CheckResult
from coursekit.exercises.student import Exercise, MarkerError, exercise_header, exercises_of

__all__ = ["DEFAULT_TIMEOUT", "ExerciseGrade", "GradeReport", "grade", "grading_env"]

DEFAULT_TIMEOUT = 120  # seconds per cell


@dataclass
class CellRun:
    """What happened when one code cell ran: its error (if any) and the checks it reported."""

    error: tuple[str, str] | None = None  # (exception name, message)
    results: list[CheckResult] = field(default_factory=list)


@dataclass
class ExerciseGrade:
    """One row of the grading table."""

    number: str
    title: str
    status: str  # "passed" | "failed" | "not attempted"
    message: str
    checks: list[CheckResult] = field(default_factory=list)


@dataclass
class GradeReport:
    """The grade of one notebook: a row per exercise, plus notes about the run itself."""

    notebook: str
    profile: str
    seconds: float
    exercises: list[ExerciseGrade]
    notes: list[str] = field(default_factory=list)
    lesson_errors: list[dict] = field(default_factory=list)  # {"cell", "error", "message"} per crashed lesson cell

    @property
    def passed(self) -> int:
        return sum(e.status == PASSED for e in self.exercises)

    @property
    def total(self) -> int:
        return len(self.exercises)

    def counts(self) -> dict[str, int]:
        return {s: sum(e.status == s for e in self.exercises) for s in (PASSED, FAILED, NOT_ATTEMPTED)}

    def to_dict(self) -> dict:
        """Plain data for autograders (what ``--json`` prints)."""
        return {"notebook": self.notebook, "profile": self.profile, "seconds": round(self.seconds, 2),
                "passed": self.passed, "total": self.total, "counts": self.counts(), "notes": self.notes,
                "lesson_errors": self.lesson_errors,
                "exercises": [{**asdict(e), "checks": [asdict(c) for c in e.checks]} for e in self.exercises]}

    def table(self, width: int = 100) -> str:
        """The per-exercise table and the total, as text."""
        head = f"Grading {self.notebook} (profile {self.profile}, {self.total} exercises, {self.seconds:.1f} s)"
        titles = [f"{e.number}. {e.title}" for e in self.exercises]
        w_title = max([len("exercise")] + [len(t) for t in titles])
        w_status = len(NOT_ATTEMPTED)
        indent = " " * (w_title + w_status + 4)
        lines = [head, "", f"{'exercise':<{w_title}}  {'status':<{w_status}}  message"]
        for title, e in zip(titles, self.exercises):
            wrapped = textwrap.wrap(e.message, max(30, width - len(indent))) or [""]
            lines.append(f"{title:<{w_title}}  {e.status:<{w_status}}  {wrapped[0]}")
            lines += [indent + more for more in wrapped[1:]]
        lines += [f"note: {note}" for note in self.notes]
        if self.lesson_errors:
            lines += ["", f"{len(self.lesson_errors)} lesson cell(s) crashed (exercises after them may fail "
                          "for that reason):"]
            lines += [f"  cell {e['cell']}: {e['error']}: {textwrap.shorten(e['message'], width - 20)}"
                      for e in self.lesson_errors]
        c = self.counts()
        lines += ["", f"Total: {self.passed} / {self.total} passed "
                      f"({c[FAILED]} failed, {c[NOT_ATTEMPTED]} not attempted)"]
        return "\n".join(lines)


def grading_env(log_path: Path) -> dict[str, str]:
    """The kernel's environment: ours, headless, quick profile unless set, and the grading log."""
    env = dict(os.environ)
    env["COURSEKIT_HEADLESS"] = "1"
    env.setdefault("COURSEKIT_PROFILE", "quick")
    env[GRADING_LOG_ENV] = str(log_path)
    return env


class _LogReader:
    """Reads the check results appended to the grading log since the last call."""

    def __init__(self, path: Path):
        self.path, self.offset = path, 0

    def new_results(self) -> list[CheckResult]:
        if not self.path.exists():
            return []
        with open(self.path, encoding="utf-8") as fh:
            fh.seek(self.offset)
            text = fh.read()
            self.offset = fh.tell()
        return [CheckResult(**json.loads(line)) for line in text.splitlines() if line.strip()]


def _cell_error(cell, seconds: float, timeout: int) -> tuple[str, str] | None:
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            if out.get("ename") == "KeyboardInterrupt" and seconds >= timeout:
                return ("Timeout", f"the cell did not finish within {timeout} s (an endless loop? "
                                   f"too large a size?)")
            return (out.get("ename", "Error"), out.get("evalue", ""))
    return None


def _execute(nb, *, cwd: Path, env: dict, timeout: int, kernel: str, log: _LogReader,
             notes: list[str]) -> dict[int, CellRun]:
    """Run every code cell of ``nb`` in order (in place); return what each one did, by cell index."""
    client = NotebookClient(nb, timeout=timeout, kernel_name=kernel, allow_errors=True,
                            interrupt_on_timeout=True, resources={"metadata": {"path": str(cwd)}},
                            extra_arguments=["--IPKernelApp.log_level=ERROR"])  # no start-up chatter
    runs: dict[int, CellRun] = {}
    count = 0
    with client.setup_kernel(env=env):
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            count += 1
            start = time.monotonic()
            try:
                client.execute_cell(cell, index, execution_count=count)
            except (DeadKernelError, CellTimeoutError) as exc:
                runs[index] = CellRun(("KernelDied", f"the kernel stopped while running this cell ({exc})"),
                                      log.new_results())
                notes.append(f"the kernel stopped in cell {index + 1}; later cells did not run")
                break
            runs[index] = CellRun(_cell_error(cell, time.monotonic() - start, timeout), log.new_results())
    return runs


def _aggregate(results: list[CheckResult]) -> tuple[str, str]:
    """One status and message from the results of an exercise's checks."""
    failed = [r for r in results if r.status == FAILED]
    waiting = [r for r in results if r.status == NOT_ATTEMPTED]
    if failed:
        return FAILED, "; ".join(f"{r.check}: {r.message}" if len(results) > 1 else r.message for r in failed)
    if not waiting:
        return PASSED, "; ".join(dict.fromkeys(r.message for r in results))
    if len(waiting) < len(results):
        return FAILED, "partly done; not attempted yet: " + ", ".join(r.check for r in waiting)
    return NOT_ATTEMPTED, waiting[0].message


def _grade_exercise(exercise: Exercise, span: list[int], runs: dict[int, CellRun]) -> ExerciseGrade:
    """Grade one exercise from the runs of the cells it owns (its own cell first)."""
    row = dict(number=exercise.number, title=exercise.title)
    own = runs.get(exercise.cell_index)
    if own is None:
        return ExerciseGrade(**row, status=FAILED, message="not run: the notebook stopped before this cell")
    results = [r for i in span if i in runs for r in runs[i].results]
    errors = [(i, runs[i].error) for i in span if i in runs and runs[i].error]
    if own.error and own.error[0] == "NotImplementedError":
        return ExerciseGrade(**row, status=NOT_ATTEMPTED, checks=results,
                             message="not attempted yet: the cell still raises NotImplementedError")
    if errors:
        i, (name, msg) = errors[0]
        if name == "NotImplementedError" and not results:
            return ExerciseGrade(**row, status=NOT_ATTEMPTED, checks=results,
                                 message=f"not attempted yet: cell {i + 1} still raises NotImplementedError")
        where = "your cell" if i == exercise.cell_index else f"cell {i + 1}"
        return ExerciseGrade(**row, status=FAILED, checks=results, message=f"{where} raised {name}: {msg}")
    if not results:
        return ExerciseGrade(**row, status=NOT_ATTEMPTED, checks=results,
                             message="no check reported a result (was the check called?)")
    return ExerciseGrade(**row, checks=results, **dict(zip(("status", "message"), _aggregate(results))))


def _find_exercises(nb, notes: list[str]) -> list[Exercise]:
    """The exercise cells of a submission. Lenient: a header the student broke is noted, not fatal."""
    found = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        try:
            header = exercise_header(cell.source, where=f"cell {index + 1}")
        except MarkerError as exc:
            notes.append(f"{exc} (not graded as an exercise)")
            continue
        if header is not None:
            found.append(Exercise(*header, cell_index=index))
    return found


_RANK = {PASSED: 0, FAILED: 1, NOT_ATTEMPTED: 2}


def _match_reference(rows: list[ExerciseGrade], expected: list[Exercise], notes: list[str]) -> list[ExerciseGrade]:
    """One row per exercise of the reference notebook, in its order: a missing exercise is not
    attempted, a duplicated one counts with its best row, one the reference lacks is left out."""
    by_number: dict[str, list[ExerciseGrade]] = {}
    for row in rows:
        by_number.setdefault(row.number, []).append(row)
    matched = []
    for e in expected:
        candidates = sorted(by_number.pop(e.number, []), key=lambda r: _RANK[r.status])
        if len(candidates) > 1:
            notes.append(f"exercise {e.number} appears {len(candidates)} times; its best result counts")
        matched.append(candidates[0] if candidates else ExerciseGrade(
            e.number, e.title, NOT_ATTEMPTED,
            f"the exercise cell is missing (its first line must stay '# EXERCISE {e.number}: {e.title}')"))
    notes += [f"exercise {n} is not in the reference notebook; not counted" for n in by_number]
    return matched


def _spans(exercises: list[Exercise], n_cells: int) -> list[list[int]]:
    """The cell indices each exercise owns: from its cell up to the next exercise cell."""
    starts = [e.cell_index for e in exercises] + [n_cells]
    return [list(range(a, b)) for a, b in zip(starts, starts[1:])]


def grade(path: str | Path, *, timeout: int = DEFAULT_TIMEOUT, kernel: str = "python3",
          reference: str | Path | None = None, save_executed: str | Path | None = None) -> GradeReport:
    """Execute the notebook at ``path`` in a fresh kernel and grade each of its exercises.

    ``timeout`` is the limit per cell in seconds. ``reference`` (the instructor's or the student
    version of the notebook) fixes the list of exercises, so one whose cell the student deleted or
    renamed still counts as not attempted. ``save_executed`` writes the executed notebook (with the
    student's outputs) there, for the instructor to read.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such notebook: {path}")
    if not isinstance(timeout, int) or isinstance(timeout, bool) or timeout <= 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    _require_kernel(kernel)
    expected = None
    if reference is not None:
        if not Path(reference).is_file():
            raise FileNotFoundError(f"no such reference notebook: {reference}")
        expected = exercises_of(nbformat.read(reference, as_version=4), name=str(reference))
    nb = nbformat.read(path, as_version=4)
    notes: list[str] = []
    exercises = _find_exercises(nb, notes)
    with tempfile.TemporaryDirectory(prefix="coursekit-grade-") as tmp:
        log = _LogReader(Path(tmp) / "checks.jsonl")
        env = grading_env(log.path)
        start = time.monotonic()
        runs = _execute(nb, cwd=path.resolve().parent, env=env, timeout=timeout, kernel=kernel,
                        log=log, notes=notes)
        seconds = time.monotonic() - start
    if save_executed:
        nbformat.write(nb, save_executed)
    rows = [_grade_exercise(e, span, runs) for e, span in zip(exercises, _spans(exercises, len(nb.cells)))]
    if expected is not None:
        rows = _match_reference(rows, expected, notes)
    first = exercises[0].cell_index if exercises else len(nb.cells)
    lesson_errors = [{"cell": i + 1, "error": run.error[0], "message": run.error[1]}
                     for i, run in sorted(runs.items()) if i < first and run.error]
    return GradeReport(str(path), env["COURSEKIT_PROFILE"], seconds, rows, notes, lesson_errors)


def _require_kernel(name: str) -> None:
    from jupyter_client.kernelspec import KernelSpecManager

    installed = KernelSpecManager().find_kernel_specs()
    if name not in installed:
        raise ValueError(f"no Jupyter kernel named {name!r}; installed: {', '.join(sorted(installed)) or 'none'} "
                         f"(python -m ipykernel install --user installs one)")

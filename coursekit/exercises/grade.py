"""Grade a submitted notebook: run it in a fresh kernel and collect what every check reported.

``python -m coursekit.exercises grade submission.ipynb [--reference instructor.ipynb] [--timeout 120] [--json]``

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

A check is trusted with nothing: a result line it logged that cannot be read, or an unknown status,
is a failed check with a message saying so; a check that raises makes its cell raise, i.e. a failed row.

**Written exercises** — markdown answers with a mark scheme or a header ``**Exercise N (written).**``,
found by :mod:`coursekit.exercises.written` — are listed too, as **to be marked by hand**, with the
mark scheme when the reference notebook (the instructor's) has one. They are not part of the
passed / total count.

A lesson cell (one before the first exercise) that raises is listed under ``lesson_errors`` with its
cell number and message: the exercises after it may then fail for a reason that is not the student's
(a missing model file, a name the crashed cell should have defined).

Student code is executed as is: grade submissions in a sandbox you trust (a container, a CI job).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import textwrap
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError

from coursekit.exercises.core import FAILED, GRADING_LOG_ENV, NOT_ATTEMPTED, PASSED, CheckResult
from coursekit.exercises.student import ANSWER_STUB, Exercise, MarkerError, exercise_header, exercises_of
from coursekit.exercises.written import WrittenExercise, written_exercises

__all__ = ["DEFAULT_TIMEOUT", "MARK_BY_HAND", "ExerciseGrade", "GradeReport", "grade", "grading_env"]

DEFAULT_TIMEOUT = 120  # seconds per cell
MARK_BY_HAND = "to be marked by hand"  # the status of a written exercise
STATUSES = (PASSED, FAILED, NOT_ATTEMPTED)  # what a check may report


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
    status: str  # "passed" | "failed" | "not attempted" | "to be marked by hand" (written exercises)
    message: str
    checks: list[CheckResult] = field(default_factory=list)
    kind: str = "code"  # "code" (graded by its checks) | "written" (marked by hand)
    mark_scheme: str | None = None  # written exercises: the reference's model answer, when known
    answer: str | None = None  # written exercises: the student's markdown cell, as submitted

    @property
    def auto_graded(self) -> bool:
        return self.kind == "code"


@dataclass
class GradeReport:
    """The grade of one notebook: a row per exercise, plus notes about the run itself.

    ``exercises`` are the code exercises, graded by their checks (``passed`` / ``total`` count them);
    ``written`` the written ones, listed with the status "to be marked by hand".
    """

    notebook: str
    profile: str
    seconds: float
    exercises: list[ExerciseGrade]
    notes: list[str] = field(default_factory=list)
    lesson_errors: list[dict] = field(default_factory=list)  # {"cell", "error", "message"} per crashed lesson cell
    written: list[ExerciseGrade] = field(default_factory=list)

    @property
    def passed(self) -> int:
        return sum(e.status == PASSED for e in self.exercises)

    @property
    def total(self) -> int:
        """The number of auto-graded (code) exercises."""
        return len(self.exercises)

    def counts(self) -> dict[str, int]:
        counts = {s: sum(e.status == s for e in self.exercises) for s in STATUSES}
        return {**counts, MARK_BY_HAND: len(self.written)}

    def rows(self) -> list[ExerciseGrade]:
        """Every exercise, in order: the code exercises as graded, each written one before the first
        code exercise with a higher number (unnumbered written exercises last)."""
        rows = list(self.exercises)
        for w in self.written:
            later = (i for i, r in enumerate(rows) if r.auto_graded and _number_key(r) > _number_key(w))
            rows.insert(next(later, len(rows)), w)
        return rows

    def to_dict(self) -> dict:
        """Plain data for autograders (what ``--json`` prints)."""
        return {"notebook": self.notebook, "profile": self.profile, "seconds": round(self.seconds, 2),
                "passed": self.passed, "total": self.total, "counts": self.counts(), "notes": self.notes,
                "lesson_errors": self.lesson_errors,
                "exercises": [_row_dict(e) for e in self.exercises],
                "written_exercises": [_row_dict(e) for e in self.written]}

    def table(self, width: int = 100) -> str:
        """The per-exercise table and the total, as text."""
        n_written = len(self.written)
        written = f" + {n_written} written" if n_written else ""
        head = (f"Grading {self.notebook} (profile {self.profile}, {self.total} exercises{written}, "
                f"{self.seconds:.1f} s)")
        rows = self.rows()
        titles = [f"{e.number}. {e.title}" if e.number else e.title for e in rows]
        w_title = max([len("exercise")] + [len(t) for t in titles])
        w_status = max([len(NOT_ATTEMPTED)] + [len(e.status) for e in rows])
        indent = " " * (w_title + w_status + 4)
        lines = [head, "", f"{'exercise':<{w_title}}  {'status':<{w_status}}  message"]
        for title, e in zip(titles, rows):
            wrapped = textwrap.wrap(e.message, max(44, width - len(indent)), break_long_words=False,
                                    break_on_hyphens=False) or [""]
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
                      f"({c[FAILED]} failed, {c[NOT_ATTEMPTED]} not attempted)"
                  + (f"; {n_written} written exercise(s) {MARK_BY_HAND}" if n_written else "")]
        return "\n".join(lines)


def _written_message(exercise: WrittenExercise | None, mark_scheme: str | None, reference_given: bool) -> str:
    """What the table says about a written exercise: is there an answer, and how to mark it."""
    if exercise is None:
        said = "the exercise's markdown cell is missing from the submission"
    elif not exercise.answered:
        said = f"no answer yet (the cell still says {ANSWER_STUB})"
    else:
        said = "the answer is in the notebook"
    if mark_scheme:
        return f"{said}; mark scheme: " + " ".join(mark_scheme.split())
    if reference_given:
        return (f"{said}; the reference notebook has no mark scheme for it (pass the instructor's notebook as "
                "--reference to see it here)")
    return f"{said}; the mark scheme is in the instructor's notebook (grade with --reference INSTRUCTOR.ipynb)"


def _written_rows(submitted: list[WrittenExercise], expected: list[WrittenExercise] | None,
                  notes: list[str]) -> list[ExerciseGrade]:
    """One row per written exercise: those of the reference when there is one, else the submission's."""
    def row(listed: WrittenExercise, answer: WrittenExercise | None, scheme: str | None) -> ExerciseGrade:
        return ExerciseGrade(listed.number, listed.title, MARK_BY_HAND,
                             _written_message(answer, scheme, expected is not None), kind="written",
                             mark_scheme=scheme, answer=answer.source if answer else None)

    if expected is None:
        return [row(w, w, w.mark_scheme) for w in submitted]
    # matched by number; an unnumbered one (a mark scheme without a header) by its cell
    by_key = {w.number or f"cell {w.cell_index}": w for w in submitted}
    rows = [row(w, by_key.pop(w.number or f"cell {w.cell_index}", None), w.mark_scheme) for w in expected]
    notes += [f"written exercise {n} is not in the reference notebook; not listed" for n in by_key if n[0].isdigit()]
    return rows


def _row_dict(e: ExerciseGrade) -> dict:
    """One row as plain data: a code exercise with its checks, a written one with its mark scheme and answer."""
    row = asdict(e)
    if e.auto_graded:
        del row["mark_scheme"], row["answer"]
    else:
        del row["checks"]
    return row


def grading_env(log_path: Path) -> dict[str, str]:
    """The kernel's environment: ours, headless, quick profile unless set, and the grading log."""
    if not isinstance(log_path, (str, Path)):
        raise TypeError(f"log_path must be a file path (str or Path), got {type(log_path).__name__}")
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
        with open(self.path, encoding="utf-8", errors="replace") as fh:
            fh.seek(self.offset)
            text = fh.read()
            self.offset = fh.tell()
        return [_parse_result(line) for line in text.splitlines() if line.strip()]


def _parse_result(line: str) -> CheckResult:
    """One logged check result. Whatever a check wrote, this returns a result: a line that is not a
    result (not JSON, not an object, an unknown status) is a *failed* check that says what was wrong."""
    try:
        data = json.loads(line)
    except ValueError as exc:
        return CheckResult("unreadable check result", FAILED,
                           f"a check logged something that is not a result ({exc}): {line[:200]!r}")
    if not isinstance(data, dict):
        return CheckResult("unreadable check result", FAILED,
                           f"a check logged {type(data).__name__} instead of a result: {line[:200]!r}")
    name = _text(data.get("check")) or "unnamed check"
    status, message = data.get("status"), _text(data.get("message"))
    if status not in STATUSES:
        return CheckResult(name, FAILED, f"the check reported the unknown status {status!r}"
                                         + (f": {message}" if message else ""))
    return CheckResult(name, status, message)


def _text(value) -> str:
    """A message for the table: ``None`` is empty, anything else its ``str``."""
    return "" if value is None else str(value)


def _cell_error(cell, seconds: float, timeout: int) -> tuple[str, str] | None:
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            if out.get("ename") == "KeyboardInterrupt" and seconds >= timeout:
                return ("Timeout", f"the cell did not finish within {timeout} s (an endless loop? "
                                   f"too large a size?)")
            return (_text(out.get("ename")) or "Error", _text(out.get("evalue")))
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
            except Exception as exc:  # noqa: BLE001 - whatever the kernel does, grade what ran so far
                runs[index] = CellRun((type(exc).__name__, f"the grader could not run this cell ({exc})"),
                                      log.new_results())
                notes.append(f"the grader could not run cell {index + 1} ({type(exc).__name__}); "
                             "later cells did not run")
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
        candidates = sorted(by_number.pop(e.number, []), key=lambda r: _RANK.get(r.status, len(_RANK)))
        if len(candidates) > 1:
            notes.append(f"exercise {e.number} appears {len(candidates)} times; its best result counts")
        matched.append(candidates[0] if candidates else ExerciseGrade(
            e.number, e.title, NOT_ATTEMPTED,
            f"the exercise cell is missing (its first line must stay '# EXERCISE {e.number}: {e.title}')"))
    notes += [f"exercise {n} is not in the reference notebook; not counted" for n in by_number]
    return matched


def _number_key(row: ExerciseGrade) -> tuple:
    """Exercise order (numbers such as 3, 3b, 10), unnumbered ones last."""
    match = re.match(r"(\d+)(.*)", row.number)
    return (0, int(match[1]), match[2]) if match else (1, 0, row.number)


def _spans(exercises: list[Exercise], n_cells: int) -> list[list[int]]:
    """The cell indices each exercise owns: from its cell up to the next exercise cell."""
    starts = [e.cell_index for e in exercises] + [n_cells]
    return [list(range(a, b)) for a, b in zip(starts, starts[1:])]


def grade(path: str | Path, *, timeout: int = DEFAULT_TIMEOUT, kernel: str = "python3",
          reference: str | Path | None = None, save_executed: str | Path | None = None) -> GradeReport:
    """Execute the notebook at ``path`` in a fresh kernel and grade each of its exercises.

    ``timeout`` is the limit per cell in seconds. ``reference`` (the instructor's or the student
    version of the notebook) fixes the list of exercises, so one whose cell the student deleted or
    renamed still counts as not attempted; the instructor's version also gives the mark schemes of
    the written exercises, which are listed as to be marked by hand. ``save_executed`` writes the
    executed notebook (with the student's outputs) there, for the instructor to read.
    """
    nb = _read_notebook(path, "path", "notebook")
    path = Path(path)
    if not isinstance(timeout, int) or isinstance(timeout, bool) or timeout <= 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    if save_executed is not None and not isinstance(save_executed, (str, Path)):
        raise TypeError(f"save_executed must be a notebook path (str or Path) or None, got "
                        f"{type(save_executed).__name__}")
    reference_nb = _read_notebook(reference, "reference", "reference notebook") if reference is not None else None
    _require_kernel(kernel)
    notes: list[str] = []
    expected = expected_written = None
    if reference is not None:
        expected = exercises_of(reference_nb, name=str(reference))
        expected_written = written_exercises(reference_nb, code_numbers={e.number for e in expected},
                                             name=str(reference), notes=notes)
    exercises = _find_exercises(nb, notes)
    code_numbers = {e.number for e in (expected if expected is not None else exercises)}
    written = written_exercises(nb, code_numbers=code_numbers, name=str(path), notes=notes)
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
    return GradeReport(str(path), env["COURSEKIT_PROFILE"], seconds, rows, notes, lesson_errors,
                       _written_rows(written, expected_written, notes))


def _read_notebook(path, name: str, what: str):
    """The notebook at ``path`` (a ``.ipynb`` file that nbformat can read), or a clear error."""
    if not isinstance(path, (str, Path)):
        raise TypeError(f"{name} must be a notebook path (str or Path), got {type(path).__name__}")
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such {what}: {path}")
    if path.suffix != ".ipynb" or not path.is_file():
        raise ValueError(f"expected a .ipynb notebook, got {path}")
    try:
        return nbformat.read(path, as_version=4)
    except Exception as exc:  # noqa: BLE001 - nbformat raises several kinds on a damaged file
        raise ValueError(f"{path} is not a readable notebook ({type(exc).__name__}: {exc})") from None


def _require_kernel(name: str) -> None:
    from jupyter_client.kernelspec import KernelSpecManager

    installed = KernelSpecManager().find_kernel_specs()
    if name not in installed:
        raise ValueError(f"no Jupyter kernel named {name!r}; installed: {', '.join(sorted(installed)) or 'none'} "
                         f"(python -m ipykernel install --user installs one)")

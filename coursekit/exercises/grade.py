"""Grade a submitted notebook: run it in a boxed kernel, then grade each exercise from the grader's own process.

``python -m coursekit.exercises grade submission.ipynb [--reference instructor.ipynb]`` (one notebook; a folder
or a zip of a whole class is :mod:`coursekit.exercises.gradebook`).

**What decides a verdict.** Nothing the submission's kernel says about itself: no log, no printed "passed", no
object it hands back. The grader

1. reads the exercises, and which ``check_*`` grades which of the student's functions, from a notebook it
   trusts — the reference (``--reference``: the instructor's notebook or the handed-out student version) or
   else the course's own notebook with the same exercises — never from the submission;
2. runs the submission top to bottom in a fresh kernel inside :mod:`coursekit.exercises.sandbox` (its own
   folder holding only its own file; its own user when the grader runs as root; a memory limit; a time limit
   per cell and for the whole submission), with ``COURSEKIT_HEADLESS=1`` and the ``quick`` profile unless
   ``COURSEKIT_PROFILE`` is set; the notebook's own checks run too, as the student saw them, and are ignored;
3. right after the cells of each exercise have run, runs that exercise's check functions *in the grader's
   process* (:func:`coursekit.exercises.remote.grade_check`): the check makes each case's inputs and computes the
   reference itself, only the student's function is called in the kernel, and only plain values come back
   (:mod:`coursekit.exercises.wire`). The visible cases come first, then hidden variants (other random inputs,
   other sizes); a failure there is reported without the hidden case.

A code exercise is **passed** when every one of its checks passes on every variant, **not attempted** when its
function is still the stub (or calls an earlier exercise's stub — the message names it), else **failed**.
Points: each exercise is worth ``points[number]`` (default 1), split evenly over its checks (07's Exercise 3
has two). A cell that raised is listed with the exercise whose cells hold it, or under ``lesson_errors``
when it comes before the first exercise; it does not decide a verdict by itself (a function that works
passes), but explains one (a function never defined).

**Written exercises** — markdown answers found by :mod:`coursekit.exercises.written` — are listed as **to be
marked by hand**, with the mark scheme when the reference is the instructor's notebook.

**Flags.** A submission that names the grader's machinery (``coursekit.exercises.harness``, ``…core``, the reply's
MIME type, IPython's display publisher) has every code exercise voided and is flagged: the kernel could answer the
grader's calls with the course's own functions. A submission whose exercise cells name the library function an
exercise re-creates (``torch.softmax`` in the softmax exercise) is flagged for the instructor. In the kernel
such a call is refused while the grader calls the function, so a plain call fails; an obfuscated one could
compute the right answer, which is a copied answer, like a copied published solution: out of scope, said in
docs/INSTRUCTORS.md.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import sys
import tempfile
import textwrap
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError

from coursekit.exercises import all_checks
from coursekit.exercises.core import FAILED, NOT_ATTEMPTED, PASSED, CheckResult
from coursekit.exercises.remote import CallTimeout, KernelGone, RemoteFunction, grade_check
from coursekit.exercises.sandbox import kill_user, sandbox_command, sandbox_uid
from coursekit.exercises.student import _EXERCISE_RE, ANSWER_STUB, Exercise, exercises_of
from coursekit.exercises.written import WrittenExercise, written_exercises
from coursekit.viz.wording import counted, noun

__all__ = ["DEFAULT_TIMEOUT", "MARK_BY_HAND", "ExerciseGrade", "GradeReport", "GradingPlan", "PlannedExercise",
           "course_reference", "grade", "grading_env", "grading_plan", "read_submission"]

DEFAULT_TIMEOUT = 120           # seconds per cell
DEFAULT_SUBMISSION_TIMEOUT = 900  # seconds for the whole submission (cells and graded calls)
DEFAULT_MEMORY_MB = 6144        # address space of the kernel (torch alone maps about 1.5 GB)
CALL_TIMEOUT = 60               # seconds for one call of a student's function by the grader
MAX_SUBMISSION_BYTES = 20 * 2**20  # a notebook larger than this is refused unread
MAX_OUTPUT_BYTES = 2 * 2**20    # what one cell may print or display; the rest is dropped
MARK_BY_HAND = "to be marked by hand"  # the status of a written exercise
STATUSES = (PASSED, FAILED, NOT_ATTEMPTED)
ROOT = Path(__file__).resolve().parents[2]   # the course's repository (its notebooks/ are the default reference)

# code that reaches into the grader's machinery: a submission that names it has its verdicts voided and flagged
_TAMPERING = re.compile(r"coursekit\.exercises\.(core|harness|remote|wire|grade|gradebook|sandbox)\b"
                        r"|exercises\.harness|vnd\.coursekit|REPLY_MIME|display_pub|\bserve\s*=|_last_return")
_HEADER_LINE = re.compile(_EXERCISE_RE.pattern, re.M)   # the student versions' header, on any line of a cell
_OUT_OF_TIME = "not graded: the submission ran out of its time limit before this exercise"


# ----------------------------------------------------------------------------------------------
# the report
# ----------------------------------------------------------------------------------------------

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
    points: float = 0.0       # earned
    max_points: float = 0.0   # possible (written exercises: 0, marked by hand)
    cell_errors: list[str] = field(default_factory=list)  # "cell N: Error: message" for its cells that raised

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
    flags: list[str] = field(default_factory=list)   # for the instructor's eyes (library calls)
    isolation: str = ""                               # how the kernel was boxed
    timings: dict = field(default_factory=dict)       # seconds: kernel start, the notebook's cells, graded calls

    @property
    def passed(self) -> int:
        return sum(e.status == PASSED for e in self.exercises)

    @property
    def total(self) -> int:
        """The number of auto-graded (code) exercises."""
        return len(self.exercises)

    @property
    def points(self) -> float:
        return round(sum(e.points for e in self.exercises), 6)

    @property
    def max_points(self) -> float:
        return round(sum(e.max_points for e in self.exercises), 6)

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
                "passed": self.passed, "total": self.total, "points": self.points, "max_points": self.max_points,
                "counts": self.counts(), "notes": self.notes, "flags": self.flags, "isolation": self.isolation,
                "timings": {k: round(v, 3) for k, v in self.timings.items()},
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
            text = e.message + "".join(f" [{err}]" for err in e.cell_errors)
            wrapped = textwrap.wrap(text, max(44, width - len(indent)), break_long_words=False,
                                    break_on_hyphens=False) or [""]
            lines.append(f"{title:<{w_title}}  {e.status:<{w_status}}  {wrapped[0]}")
            lines += [indent + more for more in wrapped[1:]]
        lines += [f"note: {note}" for note in self.notes]
        lines += [f"flag: {flag}" for flag in self.flags]
        if self.lesson_errors:
            lines += ["", f"{counted(len(self.lesson_errors), 'lesson cell')} crashed (exercises after them may fail "
                          "for that reason):"]
            lines += [f"  cell {e['cell']}: {e['error']}: {textwrap.shorten(e['message'], width - 20)}"
                      for e in self.lesson_errors]
        c = self.counts()
        lines += ["", f"Total: {self.passed} / {self.total} passed "
                      f"({c[FAILED]} failed, {c[NOT_ATTEMPTED]} not attempted), "
                      f"{_fmt(self.points)} / {_fmt(self.max_points)} points"
                  + (f"; {counted(n_written, 'written exercise')} {MARK_BY_HAND}" if n_written else "")]
        return "\n".join(lines)


def _fmt(x: float) -> str:
    return f"{x:g}"


def _row_dict(e: ExerciseGrade) -> dict:
    """One row as plain data: a code exercise with its checks, a written one with its mark scheme and answer."""
    row = asdict(e)
    for check in row.get("checks", []):
        check.pop("hint", None)
    if e.auto_graded:
        del row["mark_scheme"], row["answer"]
    else:
        del row["checks"]
    return row


def _number_key(row) -> tuple:
    """Exercise order (numbers such as 3, 3b, 10), unnumbered ones last."""
    match = re.match(r"(\d+)(.*)", row.number)
    return (0, int(match[1]), match[2]) if match else (1, 0, row.number)


# ----------------------------------------------------------------------------------------------
# written exercises
# ----------------------------------------------------------------------------------------------

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


def _written_rows(submitted: list[WrittenExercise], expected: list[WrittenExercise],
                  notes: list[str], reference_given: bool) -> list[ExerciseGrade]:
    """One row per written exercise of the reference, with the submission's answer."""
    def row(listed: WrittenExercise, answer: WrittenExercise | None, scheme: str | None) -> ExerciseGrade:
        return ExerciseGrade(listed.number, listed.title, MARK_BY_HAND,
                             _written_message(answer, scheme, reference_given), kind="written",
                             mark_scheme=scheme, answer=answer.source if answer else None)

    by_key = {w.number or f"cell {w.cell_index}": w for w in submitted}
    rows = [row(w, by_key.pop(w.number or f"cell {w.cell_index}", None), w.mark_scheme) for w in expected]
    notes += [f"written exercise {n} is not in the reference notebook; not listed" for n in by_key if n[0].isdigit()]
    return rows


# ----------------------------------------------------------------------------------------------
# the plan: which check grades which function, read from a notebook the grader trusts
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PlannedExercise:
    """A code exercise of the reference: its checks, each with the name of the student's function it grades."""

    number: str
    title: str
    calls: tuple[tuple[str, str], ...]   # (check name, the student's function name)
    points: float = 1.0


@dataclass(frozen=True)
class GradingPlan:
    """What the grader grades: the reference's code exercises and written exercises."""

    reference: str
    exercises: tuple[PlannedExercise, ...]
    written: tuple[WrittenExercise, ...]
    reference_given: bool


def _check_calls(source: str, where: str) -> tuple[tuple[str, str], ...]:
    """The ``check_x(fn)`` statements of an exercise cell (top level, one plain name as argument)."""
    checks = all_checks()
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise ValueError(f"{where}: the reference's exercise cell is not valid Python ({exc.msg})") from None
    calls = []
    for node in tree.body:
        call = node.value if isinstance(node, ast.Expr) else None
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id.startswith("check_")):
            if call.func.id not in checks:
                raise ValueError(f"{where}: {call.func.id} is not one of the course's checks")
            if len(call.args) != 1 or not isinstance(call.args[0], ast.Name):
                raise ValueError(f"{where}: {call.func.id} must be called with the student's function's name")
            calls.append((call.func.id, call.args[0].id))
    return tuple(calls)


def grading_plan(reference: nbformat.NotebookNode, name: str = "<reference>", *, points: dict | None = None,
                 reference_given: bool = True) -> GradingPlan:
    """The plan read from ``reference`` (the instructor's notebook or its student version). ``points`` maps an
    exercise number to its points (default 1 each); a number the reference lacks is an error."""
    if not isinstance(reference, nbformat.NotebookNode):
        raise TypeError(f"reference must be a notebook (nbformat.NotebookNode), got {type(reference).__name__}")
    points = dict(points or {})
    for number, value in points.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
            raise ValueError(f"points for exercise {number} must be a number >= 0, got {value!r}")
    expected = exercises_of(reference, name=name)
    planned = []
    for e in expected:
        calls = _check_calls(reference.cells[e.cell_index].source, f"{name}, cell {e.cell_index + 1}")
        if not calls:
            raise ValueError(f"{name}, cell {e.cell_index + 1} ({e.label}) calls no check_*(function): "
                             "the grader cannot tell what to grade")
        planned.append(PlannedExercise(e.number, e.title, calls, float(points.pop(e.number, 1.0))))
    if points:
        raise ValueError(f"points given for {noun(len(points), 'exercise')} "
                         f"{', '.join(sorted(points))}, which {name} does not have "
                         f"(its exercises: {', '.join(e.number for e in expected)})")
    notes: list[str] = []
    written = written_exercises(reference, code_numbers={e.number for e in expected}, name=name, notes=notes)
    return GradingPlan(name, tuple(planned), tuple(written), reference_given)


def _titles(nb) -> list[str]:
    return [m["title"] for cell in nb.cells if cell.cell_type == "code"
            for m in _HEADER_LINE.finditer(cell.source)]


def course_reference(submission: nbformat.NotebookNode, notebooks: Path | None = None) -> Path:
    """The course notebook whose exercises the submission has (most titles in common; a name match breaks ties)."""
    notebooks = Path(notebooks) if notebooks is not None else ROOT / "notebooks"
    titles = set(_titles(submission))
    best, best_score = None, 0
    for path in sorted(notebooks.glob("*.ipynb")):
        score = len(titles & set(_titles(nbformat.read(path, as_version=4))))
        if score > best_score:
            best, best_score = path, score
    if best is None:
        raise ValueError("the submission has none of the course notebooks' exercises; grade it with "
                         "--reference (the notebook the exercises were handed out in)")
    return best


# ----------------------------------------------------------------------------------------------
# reading a submission
# ----------------------------------------------------------------------------------------------

def read_submission(path, name: str = "path", what: str = "notebook") -> nbformat.NotebookNode:
    """The notebook at ``path``, or a ``ValueError`` that says why it cannot be graded (not a notebook, empty,
    damaged, too large)."""
    if not isinstance(path, (str, Path)):
        raise TypeError(f"{name} must be a notebook path (str or Path), got {type(path).__name__}")
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such {what}: {path}")
    if path.suffix != ".ipynb" or not path.is_file():
        raise ValueError(f"expected a .ipynb notebook, got {path.name}")
    size = path.stat().st_size
    if size == 0:
        raise ValueError(f"{path.name} is empty (0 bytes)")
    if size > MAX_SUBMISSION_BYTES:
        raise ValueError(f"{path.name} is {size / 2**20:.1f} MB, more than the {MAX_SUBMISSION_BYTES // 2**20} MB a "
                         "notebook may have (clear its outputs: Kernel → Restart & Clear Output, then save)")
    try:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
    except Exception as exc:  # noqa: BLE001 - nbformat raises several kinds on a damaged file
        raise ValueError(f"{path.name} is not a readable notebook ({type(exc).__name__}: "
                         f"{textwrap.shorten(str(exc), 200)})") from None
    return nb


def _clean(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The submission as it will run: outputs cleared (stored outputs decide nothing and may be large)."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb


def _headers(nb) -> list[Exercise]:
    """The exercise cells of a submission: a header line anywhere in a code cell (a line the student put above
    it does not move the cell out of its exercise); the first header of a cell counts."""
    found, seen = [], set()
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        match = _HEADER_LINE.search(cell.source)
        if match and match["number"] not in seen:
            seen.add(match["number"])
            found.append(Exercise(match["number"], match["title"], cell_index=index))
    return found


# ----------------------------------------------------------------------------------------------
# the boxed kernel
# ----------------------------------------------------------------------------------------------

def grading_env(home: Path) -> dict[str, str]:
    """The kernel's environment: ours without secrets' usual names, headless, the quick profile unless set, and
    ``home`` (the submission's own folder) as its home and caches."""
    if not isinstance(home, (str, Path)):
        raise TypeError(f"home must be a folder path (str or Path), got {type(home).__name__}")
    env = {k: v for k, v in os.environ.items()
           if not re.search(r"TOKEN|SECRET|PASSWORD|KEY|CREDENTIAL", k, re.I)}
    env["COURSEKIT_HEADLESS"] = "1"
    env.setdefault("COURSEKIT_PROFILE", "quick")
    env.setdefault("MPLBACKEND", "Agg")
    for var in ("HOME", "IPYTHONDIR", "MPLCONFIGDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "JUPYTER_RUNTIME_DIR",
                "TMPDIR"):
        env[var] = str(home)
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    env.pop("COURSEKIT_GRADING_LOG", None)
    return env


class _Client(NotebookClient):
    """nbclient, with a cap on what one cell may output (a cell printing in a loop must not fill the grader)."""

    def output(self, outs, msg, display_id, cell_index):
        size = sum(len(json.dumps(o)) for o in outs) if outs else 0
        if size > MAX_OUTPUT_BYTES:
            if not any(o.get("name") == "coursekit" for o in outs):
                outs.append(nbformat.v4.new_output("stream", name="coursekit",
                                                   text="[output cut: the cell printed more than the grader keeps]"))
            return None
        return super().output(outs, msg, display_id, cell_index)


class _KernelSession:
    """Runs code in the submission's kernel for :class:`~coursekit.exercises.remote.RemoteFunction`."""

    def __init__(self, client: _Client, nb, deadline: float):
        self.client, self.nb, self.alive, self.deadline = client, nb, True, deadline

    def run(self, code: str, timeout: float) -> list[dict]:
        if not self.alive:
            raise KernelGone("it stopped earlier")
        timeout = min(timeout, self.deadline - time.monotonic())
        if timeout < 1:
            raise CallTimeout()
        cell = nbformat.v4.new_code_cell(code)
        self.nb.cells.append(cell)
        old, self.client.timeout = self.client.timeout, max(1, int(timeout))
        start = time.monotonic()
        try:
            cell = self.client.execute_cell(cell, len(self.nb.cells) - 1, store_history=False)
        except DeadKernelError:
            self.alive = False
            raise KernelGone(KERNEL_DIED) from None
        except CellTimeoutError:
            self.alive = False
            raise CallTimeout() from None
        finally:
            self.client.timeout = old
            self.nb.cells.pop()
        if _cell_error(cell, time.monotonic() - start, timeout) and time.monotonic() - start >= timeout:
            raise CallTimeout()
        return list(cell.outputs)


KERNEL_DIED = "the kernel died: out of memory, os._exit, a crash in native code, or a signal"


def _cell_error(cell, seconds: float, timeout: float) -> tuple[str, str] | None:
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            if out.get("ename") == "KeyboardInterrupt" and seconds >= timeout:
                return ("Timeout", f"the cell did not finish within {timeout:g} s (an endless loop? "
                                   f"too large a size?)")
            return (str(out.get("ename") or "Error")[:100], str(out.get("evalue") or "")[:500])
    return None


def _kernel_manager(box: Path, memory_mb: int, uid: int | None, kernel_argv: list[str] | None) -> AsyncKernelManager:
    """A kernel manager whose kernel starts inside the sandbox, its connection file in the box."""
    specs = box / ".kernelspec"
    (specs / "coursekit-box").mkdir(parents=True)
    connection = box / "kernel-connection.json"
    argv = kernel_argv or [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    command = sandbox_command(argv, memory_mb=memory_mb, uid=uid, home=box if uid is not None else None,
                              own=[str(connection)] if uid is not None else [])
    (specs / "coursekit-box" / "kernel.json").write_text(json.dumps(
        {"argv": command, "display_name": "coursekit sandbox", "language": "python"}))
    ksm = KernelSpecManager(kernel_dirs=[str(specs)])
    return AsyncKernelManager(kernel_name="coursekit-box", kernel_spec_manager=ksm, connection_file=str(connection))


def isolation_of(uid: int | None) -> str:
    if uid is None:
        return ("the grader's own user (not root): resource limits and its own folder only; run the grader as "
                "root (e.g. in a container) to give each kernel its own user")
    return f"its own user (uid {uid}), its own folder, resource limits"


# ----------------------------------------------------------------------------------------------
# grading
# ----------------------------------------------------------------------------------------------

def _combine(exercise: PlannedExercise, outcomes: list[tuple[str, CheckResult]]) -> ExerciseGrade:
    results = [r for _, r in outcomes]
    share = exercise.points / len(results)
    earned = share * sum(r.status == PASSED for r in results)
    row = dict(number=exercise.number, title=exercise.title, checks=results, points=round(earned, 6),
               max_points=exercise.points)
    failed = [r for r in results if r.status == FAILED]
    waiting = [r for r in results if r.status == NOT_ATTEMPTED]
    if failed:
        msg = "; ".join(f"{r.check}: {r.message}" if len(results) > 1 else r.message for r in failed)
        return ExerciseGrade(**row, status=FAILED, message=msg)
    if waiting and len(waiting) < len(results):
        return ExerciseGrade(**row, status=FAILED, message="partly done; not attempted yet: "
                             + ", ".join(f"{r.check} ({r.message})" for r in waiting))
    if waiting:
        return ExerciseGrade(**row, status=NOT_ATTEMPTED, message=waiting[0].message)
    return ExerciseGrade(**row, status=PASSED, message="; ".join(dict.fromkeys(r.message for r in results)))


def _grade_exercise(exercise: PlannedExercise, session: _KernelSession, present: bool) -> ExerciseGrade:
    checks = all_checks()
    outcomes = []
    for check_name, fn_name in exercise.calls:
        check = checks[check_name]
        remote = RemoteFunction(session, fn_name, references=check.reimplements,
                                exercise=f"This exercise ({check.title})", timeout=CALL_TIMEOUT)
        outcomes.append((fn_name, grade_check(check, remote).result))
    row = _combine(exercise, outcomes)
    if not present and row.status != PASSED:
        return ExerciseGrade(exercise.number, exercise.title, NOT_ATTEMPTED,
                             f"the exercise cell is missing (its first line must stay '# EXERCISE {exercise.number}: "
                             f"{exercise.title}')", checks=row.checks, max_points=exercise.points)
    return row


def _not_graded(exercise: PlannedExercise, why: str) -> ExerciseGrade:
    return ExerciseGrade(exercise.number, exercise.title, FAILED, why, max_points=exercise.points)


def _library_flags(nb, plan: GradingPlan, spans: dict[str, list[int]]) -> list[str]:
    """Exercises whose cells name the library function they re-create (for the instructor to look at)."""
    checks, flags = all_checks(), []
    for planned in plan.exercises:
        names = set()
        for i in spans.get(planned.number, []):
            if nb.cells[i].cell_type != "code":
                continue
            try:
                tree = ast.parse(nb.cells[i].source)
            except SyntaxError:
                continue
            names |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
            names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
            names |= {a.name.rsplit(".", 1)[-1] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                      for a in n.names}
        own = {fn for _, fn in planned.calls}
        for check_name, _ in planned.calls:
            for dotted in checks[check_name].reimplements:
                short = dotted.rsplit(".", 1)[-1]
                if short in names and short not in own:
                    flags.append(f"Exercise {planned.number} names {dotted}, the function it asks the student to "
                                 "write (refused while graded; look at the code)")
    return list(dict.fromkeys(flags))


def _spans(headers: list[Exercise], n_cells: int) -> dict[str, list[int]]:
    """The cell indices each exercise owns, by number: from its cell up to the next exercise cell."""
    starts = [e.cell_index for e in headers] + [n_cells]
    return {e.number: list(range(a, b)) for e, a, b in zip(headers, starts, starts[1:])}


def grade(path: str | Path, *, timeout: int = DEFAULT_TIMEOUT, reference: str | Path | None = None,
          save_executed: str | Path | None = None, points: dict | None = None,
          submission_timeout: int = DEFAULT_SUBMISSION_TIMEOUT, memory_mb: int = DEFAULT_MEMORY_MB,
          uid: int | None | str = "auto", kernel_argv: list[str] | None = None) -> GradeReport:
    """Run the notebook at ``path`` in a boxed kernel and grade each of its exercises (module docstring).

    ``timeout``: seconds per cell; ``submission_timeout``: seconds for everything; ``memory_mb``: the kernel's
    address space. ``reference``: the notebook whose exercises are graded (default: the course's notebook with
    the submission's exercises). ``points``: {exercise number: points}. ``uid``: the user the kernel runs as —
    ``"auto"`` a user of its own (:func:`~coursekit.exercises.sandbox.sandbox_uid`) when the grader is root, else
    the grader's; ``None`` the grader's. ``save_executed`` writes the executed notebook there.
    """
    nb = read_submission(path)
    path = Path(path)
    for value, name in ((timeout, "timeout"), (submission_timeout, "submission_timeout"), (memory_mb, "memory_mb")):
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if save_executed is not None and not isinstance(save_executed, (str, Path)):
        raise TypeError(f"save_executed must be a notebook path (str or Path) or None, got "
                        f"{type(save_executed).__name__}")
    if uid == "auto":
        uid = _uid_of_this_run() if os.geteuid() == 0 else None
    elif uid is not None and (not isinstance(uid, int) or isinstance(uid, bool) or uid <= 0):
        raise ValueError(f"uid must be 'auto', None or a positive uid, got {uid!r}")
    if uid is not None and os.geteuid() != 0:
        raise ValueError(f"uid={uid} needs a grader running as root")
    reference_given = reference is not None
    ref_path = Path(reference) if reference_given else course_reference(nb)
    ref_nb = read_submission(ref_path, "reference", "reference notebook")
    plan = grading_plan(ref_nb, str(ref_path), points=points, reference_given=reference_given)

    notes: list[str] = [] if reference_given else [f"graded against the course's {ref_path.name}"]
    headers = _headers(nb)
    spans = _spans(headers, len(nb.cells))
    planned_numbers = {e.number for e in plan.exercises}
    notes += [f"exercise {h.number} is not in the reference notebook; not counted"
              for h in headers if h.number not in planned_numbers]
    submitted_written = written_exercises(nb, code_numbers=planned_numbers, name=path.name, notes=notes)
    written = _written_rows(submitted_written, list(plan.written), notes, plan.reference_given)

    rows: dict[str, ExerciseGrade] = {}
    lesson_errors: list[dict] = []
    timings = {"kernel_start": 0.0, "cells": 0.0, "grading": 0.0}
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="coursekit-grade-") as tmp:
        os.chmod(tmp, 0o711)                # the sandbox user may pass through to its box, not list what is here
        box = Path(tmp) / "box"
        box.mkdir(mode=0o700)
        shutil.copyfile(path, box / "submission.ipynb")
        try:
            _run(_clean(nb), box, plan, spans, rows, lesson_errors, notes, timings, timeout=timeout,
                 deadline=start + submission_timeout, memory_mb=memory_mb, uid=uid, kernel_argv=kernel_argv)
        finally:
            if uid is not None:
                kill_user(uid)
    seconds = time.monotonic() - start
    if save_executed:
        nbformat.write(nb, save_executed)
    graded = [rows.get(e.number) or _not_graded(e, "not graded: the notebook stopped before it")
              for e in plan.exercises]
    flags = _library_flags(nb, plan, spans)
    tampering = sorted({m[0] for cell in nb.cells if cell.cell_type == "code"
                        for m in _TAMPERING.finditer(cell.source)})
    if tampering:
        flags.append(f"the submission reaches into the grader ({', '.join(tampering)}): every code exercise is "
                     "voided; look at the code")
        graded = [_not_graded(e, "void: the submission reaches into the grader's machinery (see the flags)")
                  for e in plan.exercises]
    return GradeReport(path.name, _profile(), seconds, graded, notes, lesson_errors, written, flags,
                       isolation_of(uid), timings)


def _uid_of_this_run() -> int:
    return sandbox_uid(0)


def _profile() -> str:
    return os.environ.get("COURSEKIT_PROFILE", "quick")


def _run(nb, box: Path, plan: GradingPlan, spans: dict[str, list[int]], rows: dict, lesson_errors: list, notes: list,
         timings: dict, *, timeout: int, deadline: float, memory_mb: int, uid: int | None, kernel_argv) -> None:
    """Execute the cells, grading each exercise right after its last cell (its rows land in ``rows``)."""
    km = _kernel_manager(box, memory_mb, uid, kernel_argv)
    client = _Client(nb, km=km, timeout=timeout, allow_errors=True, interrupt_on_timeout=True,
                     resources={"metadata": {"path": str(box)}}, shutdown_kernel="immediate",
                     extra_arguments=["--IPKernelApp.log_level=ERROR"])
    session = _KernelSession(client, nb, deadline)
    owner = {i: number for number, span in spans.items() for i in span}   # cell index → its exercise
    last_cell = {number: span[-1] for number, span in spans.items()}
    due = {}                                     # cell index → the planned exercises graded after it
    for e in plan.exercises:
        due.setdefault(last_cell.get(e.number, len(nb.cells) - 1), []).append(e)
    errors: dict[str, list[str]] = {}
    present = set(last_cell)
    stopped = None
    clock = time.monotonic()
    with client.setup_kernel(env=grading_env(box)):
        timings["kernel_start"] = time.monotonic() - clock
        count = 0
        for index, cell in enumerate(list(nb.cells)):
            if stopped is None and cell.cell_type == "code":
                count += 1
                left = deadline - time.monotonic()
                if left <= 1:
                    stopped = _OUT_OF_TIME
                else:
                    client.timeout = max(1, int(min(timeout, left)))
                    clock = time.monotonic()
                    error = _execute_cell(client, cell, index, count, session)
                    timings["cells"] += time.monotonic() - clock
                    if error:
                        text = f"cell {index + 1} raised {error[0]}: {error[1]}"
                        if index in owner:
                            errors.setdefault(owner[index], []).append(text)
                        else:
                            lesson_errors.append({"cell": index + 1, "error": error[0], "message": error[1]})
                        if not session.alive:
                            stopped = (f"not graded: the kernel stopped in cell {index + 1} ({error[1]}); "
                                       "later cells did not run")
                            notes.append(f"the kernel stopped in cell {index + 1}; later cells did not run")
            for e in due.get(index, []):
                if stopped is not None:
                    rows[e.number] = _not_graded(e, stopped)
                    continue
                clock = time.monotonic()
                rows[e.number] = _grade_exercise(e, session, e.number in present)
                timings["grading"] += time.monotonic() - clock
                if time.monotonic() > deadline:
                    stopped = _OUT_OF_TIME
    for number, texts in errors.items():
        if number in rows:
            rows[number].cell_errors = texts


def _execute_cell(client: _Client, cell, index: int, count: int, session: _KernelSession) -> tuple | None:
    start = time.monotonic()
    try:
        client.execute_cell(cell, index, execution_count=count)
    except DeadKernelError:
        session.alive = False
        return ("KernelDied", KERNEL_DIED)
    except CellTimeoutError:
        session.alive = False
        return ("Timeout", f"the cell did not finish within {client.timeout} s and could not be interrupted")
    except Exception as exc:  # noqa: BLE001 - whatever the kernel does, grade what ran so far
        session.alive = False
        return (type(exc).__name__, f"the grader could not run this cell ({textwrap.shorten(str(exc), 200)})")
    return _cell_error(cell, time.monotonic() - start, client.timeout)

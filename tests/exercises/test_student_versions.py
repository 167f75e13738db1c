"""Student versions of the notebooks (coursekit.exercises.student) and grading (coursekit.exercises.grade).

(a) unit tests of the generator on small synthetic notebooks;
(b) the student version of every notebook in notebooks/ is valid, has no solution text, and runs
    top to bottom under the grader from a folder outside the repository (quick profile, headless);
(c) grading a synthetic submission gives passed / failed / not attempted per exercise.
"""

from __future__ import annotations

import ast
import copy
import json
import os
from pathlib import Path

import nbformat
import pytest
from helpers import ROOT
from helpers.exercises import _unbound_globals
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from coursekit.exercises.__main__ import main
from coursekit.exercises.student import (
    ANSWER_STUB,
    MarkerError,
    exercises_of,
    student_notebook,
    write_student_versions,
)

REPO = ROOT
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))

SOFTMAX_EXERCISE = '''# EXERCISE 1: softmax
def my_softmax(x):
    ### BEGIN SOLUTION
    e = (x - x.amax(-1, keepdim=True)).exp()
    return e / e.sum(-1, keepdim=True)
    ### END SOLUTION

check_softmax(my_softmax)'''


def _notebook(*cells) -> nbformat.NotebookNode:
    nb = new_notebook(cells=list(cells))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["coursekit"] = {"profile": "class"}
    return nb


def _sample() -> nbformat.NotebookNode:
    return _notebook(
        new_markdown_cell("# 99 — Sample\n\n**Learning goals**"),
        new_code_cell("x = 41 + 1\nprint(x)", execution_count=1,
                      outputs=[new_output("stream", name="stdout", text="42\n")]),
        new_code_cell(SOFTMAX_EXERCISE, execution_count=2,
                      outputs=[new_output("stream", name="stdout", text="✅ softmax: all cases match\n")]),
        new_markdown_cell("Why subtract the max?\n\n=== BEGIN MARK SCHEME ===\nexp overflows.\n"
                          "=== END MARK SCHEME ===\n\nThe end."),
    )


def _write(nb, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


# ----------------------------------------------------------------------------- (a) the generator


def test_solution_becomes_stub_at_marker_indentation():
    student, exercises = student_notebook(_sample(), "sample.ipynb")
    assert student.cells[2].source == ('# EXERCISE 1: softmax\ndef my_softmax(x):\n'
                                       '    raise NotImplementedError("Exercise 1: softmax")\n\n'
                                       'check_softmax(my_softmax)')
    assert [(e.number, e.title, e.cell_index) for e in exercises] == [("1", "softmax", 2)]


def test_every_indentation_and_several_regions_in_one_cell():
    source = ("# EXERCISE 2: two parts\n### BEGIN SOLUTION\nk = 3\n### END SOLUTION\n"
              "class A:\n    def f(self):\n        if True:\n            ### BEGIN SOLUTION\n"
              "            return 1\n            ### END SOLUTION\n        return 0\n")
    student, _ = student_notebook(_notebook(new_code_cell(source)))
    stub = 'raise NotImplementedError("Exercise 2: two parts")'
    assert student.cells[0].source.split("\n") == [
        "# EXERCISE 2: two parts", stub, "class A:", "    def f(self):", "        if True:",
        "            " + stub, "        return 0", ""]
    compile(student.cells[0].source, "<cell>", "exec")  # still valid Python


def test_title_with_quotes_gives_valid_python():
    nb = _notebook(new_code_cell('# EXERCISE 3: the "causal" mask\\ trick\n### BEGIN SOLUTION\npass\n'
                                 '### END SOLUTION'))
    source = student_notebook(nb)[0].cells[0].source
    namespace: dict = {}
    with pytest.raises(NotImplementedError, match=r'Exercise 3: the "causal" mask\\ trick'):
        exec(compile(source, "<cell>", "exec"), namespace)


def test_exercise_outputs_cleared_everything_else_intact():
    source = _sample()
    student, _ = student_notebook(source)
    assert student.cells[2].outputs == [] and student.cells[2].execution_count is None
    assert student.cells[1] == source.cells[1]  # ordinary cell: source, outputs, count unchanged
    assert student.cells[0] == source.cells[0]
    assert student.metadata == source.metadata
    assert source.cells[2].outputs and "BEGIN SOLUTION" in source.cells[2].source  # input untouched


def test_mark_scheme_replaced_in_markdown():
    student, _ = student_notebook(_sample())
    assert student.cells[3].source == f"Why subtract the max?\n\n{ANSWER_STUB}\n\nThe end."
    indented = _notebook(new_markdown_cell("1. Explain:\n   === BEGIN MARK SCHEME ===\n   secret\n"
                                           "   === END MARK SCHEME ==="))
    assert student_notebook(indented)[0].cells[0].source == f"1. Explain:\n   {ANSWER_STUB}"


def test_markers_of_the_other_cell_kind_are_left_alone():
    doc = "An exercise cell looks like\n```python\n### BEGIN SOLUTION\n...\n### END SOLUTION\n```"
    nb = _notebook(new_markdown_cell(doc), new_code_cell("s = '=== BEGIN MARK SCHEME ==='"))
    student, exercises = student_notebook(nb)
    assert student.cells[0].source == doc and student.cells[1].source == nb.cells[1].source
    assert exercises == []


def test_idempotent_byte_for_byte(tmp_path):
    src = _write(_sample(), tmp_path / "src" / "99_sample.ipynb")
    first = write_student_versions(src, tmp_path / "student")[0][0]
    second = write_student_versions(first, tmp_path / "student2")[0][0]
    assert first.read_bytes() == second.read_bytes()
    again = write_student_versions(src, tmp_path / "student")[0][0]  # rewriting a student version is fine
    assert again.read_bytes() == first.read_bytes()
    student = nbformat.read(first, as_version=4)
    assert student_notebook(student)[0] == student


def test_refuses_to_write_into_the_source_directory(tmp_path):
    src = _write(_sample(), tmp_path / "notebooks" / "99_sample.ipynb")
    before = src.read_bytes()
    for out in (tmp_path / "notebooks", tmp_path / "notebooks" / "99_sample.ipynb",
                tmp_path / "notebooks" / "other.ipynb"):
        with pytest.raises(ValueError, match="source directory"):
            write_student_versions(src, out)
    assert src.read_bytes() == before


def test_refuses_to_overwrite_a_notebook_with_solutions(tmp_path):
    src = _write(_sample(), tmp_path / "notebooks" / "99_sample.ipynb")
    precious = _write(_sample(), tmp_path / "elsewhere" / "99_sample.ipynb")
    before = precious.read_bytes()
    with pytest.raises(ValueError, match="contains solution markers"):
        write_student_versions(src, tmp_path / "elsewhere")
    assert precious.read_bytes() == before


@pytest.mark.parametrize("source, problem", [
    ("# EXERCISE 1: a\ndef f():\n    ### BEGIN SOLUTION\n    return 1\n", "line 3 is never closed"),
    ("# EXERCISE 1: a\ndef f():\n    return 1\n    ### END SOLUTION\n", "line 4 has no"),
    ("# EXERCISE 1: a\n### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION\n### END SOLUTION",
     "nested markers"),
])
def test_unbalanced_markers_name_notebook_and_cell(tmp_path, source, problem):
    nb = _notebook(new_markdown_cell("intro"), new_code_cell("x = 1"), new_code_cell(source))
    src = _write(nb, tmp_path / "src" / "03_broken.ipynb")
    with pytest.raises(MarkerError, match=problem) as info:
        write_student_versions(src, tmp_path / "out")
    assert "03_broken.ipynb, cell 3" in str(info.value)
    assert not (tmp_path / "out").exists()


def test_unbalanced_mark_scheme(tmp_path):
    nb = _notebook(new_markdown_cell("Q?\n=== BEGIN MARK SCHEME ===\nanswer"))
    with pytest.raises(MarkerError, match=r"nb\.ipynb, cell 1.*never closed"):
        student_notebook(nb, "nb.ipynb")


@pytest.mark.parametrize("source, problem", [
    ("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION", "outside an exercise cell"),
    ("# EXERCISE one: softmax\npass", "malformed exercise header"),
    ("# EXERCISE 2 softmax\npass", "malformed exercise header"),
    ("# EXERCISE 3: x\ndef f(x):\n### BEGIN SOLUTION\n    return x\n### END SOLUTION\n", "no longer valid Python"),
])
def test_malformed_exercises_are_errors(source, problem):
    with pytest.raises(MarkerError, match=problem):
        student_notebook(_notebook(new_code_cell(source)), "nb.ipynb")


def test_duplicate_exercise_numbers_are_an_error():
    nb = _notebook(new_code_cell("# EXERCISE 1: a\npass"), new_code_cell("# EXERCISE 1: b\npass"))
    with pytest.raises(MarkerError, match="cell 2: exercise number 1 is already used by cell 1"):
        student_notebook(nb, "nb.ipynb")


def test_cli_directory_single_file_and_errors(tmp_path, capsys):
    src_dir = tmp_path / "notebooks"
    _write(_sample(), src_dir / "98_a.ipynb")
    _write(_sample(), src_dir / "99_b.ipynb")
    assert main(["student", str(src_dir), "--out", str(tmp_path / "student")]) == 0
    assert sorted(p.name for p in (tmp_path / "student").iterdir()) == ["98_a.ipynb", "99_b.ipynb"]
    assert "1 exercise" in capsys.readouterr().out
    assert main(["student", str(src_dir / "98_a.ipynb"), "--out", str(tmp_path / "one" / "hw.ipynb")]) == 0
    assert (tmp_path / "one" / "hw.ipynb").is_file()
    assert main(["student", str(src_dir), "--out", str(src_dir)]) == 2
    assert "refusing to write" in capsys.readouterr().err
    (src_dir / "00_x.py").write_text("# %%\n")
    assert main(["student", str(src_dir / "00_x.py"), "--out", str(tmp_path / "s")]) == 2
    assert "expected a .ipynb notebook" in capsys.readouterr().err


# ----------------------------------------------------------------------------- (b) every notebook


def _marked_lines(nb) -> dict[int, set[str]]:
    """Per cell index: the stripped non-empty lines strictly between markers (an independent scan),
    minus lines that also occur outside the markers in that cell (e.g. a shared `return out`)."""
    markers = {"code": ("### BEGIN SOLUTION", "### END SOLUTION"),
               "markdown": ("=== BEGIN MARK SCHEME ===", "=== END MARK SCHEME ===")}
    found = {}
    for index, cell in enumerate(nb.cells):
        if cell.cell_type not in markers:
            continue
        begin, end = markers[cell.cell_type]
        inside, outside, depth = set(), set(), 0
        for line in cell.source.splitlines():
            text = line.strip()
            if text == begin:
                depth += 1
            elif text == end:
                depth -= 1
            elif text:
                (inside if depth else outside).add(text)
        if inside - outside:
            found[index] = inside - outside
    return found


def _first_exercise(nb) -> int:
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and cell.source.startswith("# EXERCISE"):
            return index
    return len(nb.cells)


def test_leak_scan_finds_solution_lines():
    """The scan used below is not vacuous: it sees the solution lines of the sample notebook."""
    secret = _marked_lines(_sample())
    assert secret == {2: {"e = (x - x.amax(-1, keepdim=True)).exp()", "return e / e.sum(-1, keepdim=True)"},
                      3: {"exp overflows."}}
    student, _ = student_notebook(_sample())
    assert all(not (lines & set(student.cells[i].source.splitlines())) for i, lines in secret.items())


@pytest.mark.parametrize("source", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_student_version_of_every_notebook(source, tmp_path):
    original = nbformat.read(source, as_version=4)
    (written, _), = write_student_versions(source, tmp_path)
    student = nbformat.read(written, as_version=4)
    nbformat.validate(student)
    assert len(student.cells) == len(original.cells)

    for index, secret in _marked_lines(original).items():
        leaked = secret & {line.strip() for line in student.cells[index].source.splitlines()}
        assert not leaked, f"{source.name}, cell {index + 1}: solution text left in: {sorted(leaked)}"
    first = _first_exercise(student)
    for cell in student.cells[first:]:
        if cell.cell_type == "code" and cell.source.startswith("# EXERCISE"):
            assert cell.outputs == [] and cell.execution_count is None
            assert "raise NotImplementedError" in cell.source or "BEGIN SOLUTION" not in cell.source


@pytest.mark.parametrize("source", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_lesson_cell_reads_what_only_an_exercise_defines(source):
    """The static half of "the student version runs": a stub leaves its exercise's names unbound (or raising), so
    no lesson cell may read a name that only exercise cells bind."""
    assert _lesson_reads_of_exercise_names(nbformat.read(source, as_version=4)) == [], source.name


def test_the_exercise_dependency_scan_sees_a_lesson_cell_using_an_exercise():
    nb = _notebook(new_code_cell("import torch"),
                   new_code_cell('# EXERCISE 1: softmax\ndef my_softmax(x):\n    raise NotImplementedError("x")'),
                   new_code_cell("probs = [my_softmax(torch.ones(3)) for _ in range(2)]"),
                   new_code_cell("def uses_its_own(my_softmax):\n    return my_softmax"))
    assert _lesson_reads_of_exercise_names(nb) == ["cell 2 reads ['my_softmax']"]


def _lesson_reads_of_exercise_names(nb) -> list[str]:
    code = [(i, c.source) for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    exercise = [(i, src) for i, src in code if src.startswith("# EXERCISE")]
    lesson = [(i, src) for i, src in code if not src.startswith("# EXERCISE")]
    only_exercises = set().union(set(), *(_bound_names(src) for _, src in exercise)) - set().union(
        set(), *(_bound_names(src) for _, src in lesson))
    return [f"cell {index} reads {sorted(read)}" for index, src in lesson
            if (read := _read_names(src) & only_exercises)]


def _bound_names(source: str) -> set[str]:
    tree = ast.parse(_strip_magics(source))
    return {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))} | {
        t.id for node in ast.walk(tree) if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For))
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        for t in ast.walk(target) if isinstance(t, ast.Name)}


def _read_names(source: str) -> set[str]:
    """The global names the cell reads without binding them itself (comprehension and function locals are not)."""
    return _unbound_globals(ast.parse(_strip_magics(source)))


def _strip_magics(source: str) -> str:
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())


# Running a student version under the grader costs as much as its notebook (13 minutes of CI for all 14); CI
# runs three (the setup notebook, the shortest lesson and the one with the most exercises) and
# COURSEKIT_STUDENT_RUNS=all runs every one (before a release, after changing a notebook's lesson cells).
STUDENT_RUNS = ("00_setup", "07_self_attention", "13_modern_decoders")
RUN = [p for p in NOTEBOOKS if os.environ.get("COURSEKIT_STUDENT_RUNS") == "all" or p.stem in STUDENT_RUNS]


@pytest.mark.parametrize("source", RUN, ids=[p.stem for p in RUN])
def test_student_version_runs_under_the_grader(source, tmp_path):
    """Run the whole student version under the grader, from a folder outside the repository (as a student who
    copied the handed-out notebook elsewhere would): no lesson cell may crash, and every exercise must come out
    "not attempted" (its stub raises NotImplementedError), none failed."""
    from coursekit.exercises.grade import grade

    (written, _), = write_student_versions(source, tmp_path)
    assert not written.resolve().is_relative_to(ROOT)
    report = grade(written, timeout=300)
    assert report.lesson_errors == [], f"{source.name}: lesson cells crashed: {report.lesson_errors}"
    assert report.total == len(exercises_of(nbformat.read(source, as_version=4))) > 0
    statuses = {e.number: (e.status, e.message) for e in report.exercises}
    assert all(st == "not attempted" for st, _ in statuses.values()), f"{source.name}: {statuses}"


def test_no_notebook_resolves_files_from_the_current_directory():
    """Committed files are found from the package (coursekit.data.model_dir), never from Path.cwd(): a
    student version in student/ or anywhere else must read the same models."""
    for source in NOTEBOOKS:
        text = source.with_suffix(".py").read_text(encoding="utf-8")
        assert "Path.cwd()" not in text and "os.getcwd()" not in text, f"{source.name} resolves paths from the cwd"


def test_grader_reports_crashed_lesson_cells(tmp_path):
    from coursekit.exercises.grade import grade

    nb = _notebook(new_markdown_cell("# Homework"),
                   new_code_cell("x = 1"),
                   new_code_cell("open('/no/such/model.safetensors')"),
                   new_code_cell('# EXERCISE 1: softmax\ndef my_softmax(x):\n'
                                 '    raise NotImplementedError("Exercise 1: softmax")\n\nmy_softmax(1)'))
    written = _write(nb, tmp_path / "crash.ipynb")
    nb.cells[3].source += "\ncheck_softmax(my_softmax)"           # the trusted reference says what grades it
    report = grade(written, timeout=60, reference=_write(nb, tmp_path / "reference.ipynb"))
    assert report.lesson_errors == [{"cell": 3, "error": "FileNotFoundError",
                                     "message": "[Errno 2] No such file or directory: '/no/such/model.safetensors'"}]
    assert "1 lesson cell crashed" in report.table() and "cell 3: FileNotFoundError" in report.table()
    assert report.to_dict()["lesson_errors"] == report.lesson_errors
    assert [e.status for e in report.exercises] == ["not attempted"]


# ----------------------------------------------------------------------------- (c) grading


def _submission() -> nbformat.NotebookNode:
    return _notebook(
        new_markdown_cell("# Homework"),
        new_code_cell("import torch\nfrom coursekit.exercises import check_softmax, check_cross_entropy, "
                      "check_accuracy\ncheck_softmax(torch.softmax)  # a demo before the exercises: not graded"),
        new_code_cell("# EXERCISE 1: softmax\ndef my_softmax(x):\n    e = (x - x.amax(-1, keepdim=True)).exp()\n"
                      "    return e / e.sum(-1, keepdim=True)\n\ncheck_softmax(my_softmax)"),
        new_code_cell("# EXERCISE 2: cross-entropy\ndef my_ce(logits, targets):\n"
                      "    log_p = torch.log_softmax(logits, -1)\n"
                      "    return -log_p[torch.arange(len(targets)), targets].sum()\n\ncheck_cross_entropy(my_ce)"),
        new_code_cell('# EXERCISE 3: accuracy\ndef my_accuracy(logits, targets):\n'
                      '    raise NotImplementedError("Exercise 3: accuracy")\n\ncheck_accuracy(my_accuracy)'),
    )


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    from coursekit.exercises.grade import grade

    path = _write(_submission(), tmp_path_factory.mktemp("grade") / "submission.ipynb")
    return grade(path, timeout=120, reference=path)   # the submission's own check calls, trusted in this test


def test_grade_table_passed_failed_not_attempted(graded):
    assert [(e.number, e.title, e.status) for e in graded.exercises] == [
        ("1", "softmax", "passed"), ("2", "cross-entropy", "failed"), ("3", "accuracy", "not attempted")]
    assert "summed, not averaged" in graded.exercises[1].message
    assert (graded.passed, graded.total, graded.profile) == (1, 3, "quick")
    table = graded.table()
    assert "Total: 1 / 3 passed (1 failed, 1 not attempted)" in table
    for row in ("1. softmax", "passed", "2. cross-entropy", "failed", "3. accuracy", "not attempted"):
        assert row in table
    data = graded.to_dict()
    json.dumps(data)
    assert [e["status"] for e in data["exercises"]] == ["passed", "failed", "not attempted"]
    assert data["exercises"][0]["checks"][0]["check"] == "softmax"


def test_a_crash_above_an_exercise_header_is_charged_to_that_exercise(tmp_path):
    """A line placed above ``# EXERCISE 2`` in Exercise 2's cell crashes: Exercise 2 fails naming the error,
    Exercise 1 keeps its pass, Exercise 3 is still graded, and no lesson cell is blamed."""
    from coursekit.exercises.grade import grade

    nb = _submission()
    nb.cells[3].source = "undefined_helper()\n" + nb.cells[3].source
    path = _write(nb, tmp_path / "crash_above.ipynb")
    report = grade(path, timeout=120, reference=_write(_submission(), tmp_path / "reference.ipynb"))
    assert [(e.number, e.status) for e in report.exercises] == [
        ("1", "passed"), ("2", "failed"), ("3", "not attempted")]
    one, two, _ = report.exercises
    assert two.cell_errors == ["cell 4 raised NameError: name 'undefined_helper' is not defined"]
    assert "crash before the def?" in two.message and one.cell_errors == [] and report.lesson_errors == []


# ----------------------------------------------------------------------------- (c) written exercises, odd checks

WRITTEN_QUESTION = "**Exercise 2 (written).** Why does caching not help training? Explain."


ONE = ("# EXERCISE 1: one\ndef one(x):\n{begin}    e = (x - x.amax(-1, keepdim=True)).exp()\n"
       "    return e / e.sum(-1, keepdim=True){end}\n\ncheck_softmax(one)")


def _instructor() -> nbformat.NotebookNode:
    """A code exercise (introduced by a markdown cell) and two written ones, with their mark schemes."""
    return _notebook(
        new_code_cell("from coursekit.exercises import check_softmax"),
        new_markdown_cell("**Exercise 1 (code).** Write `one` and check it."),      # introduces exercise 1
        new_code_cell(ONE.format(begin="    ### BEGIN SOLUTION\n", end="\n    ### END SOLUTION")),
        new_markdown_cell(f"{WRITTEN_QUESTION}\n\n=== BEGIN MARK SCHEME ===\nEvery key is computed once."
                          "\n=== END MARK SCHEME ==="),
        new_markdown_cell("**Exercise 3 (experiment).** Re-run with pre-LN.\n\n=== BEGIN MARK SCHEME ===\n"
                          "Pre-LN trains\nwithout warm-up.\n=== END MARK SCHEME ==="),
    )


def _answered_submission(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(instructor's notebook, student version, a submission answering exercise 2 but not 3)."""
    instructor = _write(_instructor(), tmp_path / "instructor" / "hw.ipynb")
    student, _ = student_notebook(_instructor(), "hw.ipynb")
    handed_out = _write(student, tmp_path / "student" / "hw.ipynb")
    submission = copy.deepcopy(student)
    submission.cells[2].source = ONE.format(begin="", end="")
    submission.cells[3].source = f"{WRITTEN_QUESTION}\n\nThe whole window is processed in one pass."
    return instructor, handed_out, _write(submission, tmp_path / "sub.ipynb")


def test_grade_lists_written_exercises_to_be_marked_by_hand(tmp_path, capsys):
    from coursekit.exercises.grade import MARK_BY_HAND, grade

    instructor, handed_out, submission = _answered_submission(tmp_path)
    report = grade(submission, timeout=30, reference=instructor)
    assert [(e.number, e.kind, e.status) for e in report.exercises] == [("1", "code", "passed")]
    assert [(e.number, e.kind, e.status) for e in report.written] == [
        ("2", "written", MARK_BY_HAND), ("3", "written", MARK_BY_HAND)]
    two, three = report.written
    assert two.title == "written: Why does caching not help training?"
    assert two.mark_scheme == "Every key is computed once." and "in one pass" in two.answer
    assert two.message == "the answer is in the notebook; mark scheme: Every key is computed once."
    assert three.message.startswith("no answer yet (the cell still says _Your answer here._)")
    assert three.message.endswith("; mark scheme: Pre-LN trains without warm-up.")
    assert (report.passed, report.total) == (1, 1)       # written exercises are not counted
    assert report.counts() == {"passed": 1, "failed": 0, "not attempted": 0, MARK_BY_HAND: 2}
    assert [e.number for e in report.rows()] == ["1", "2", "3"]
    table = report.table()
    assert "(profile quick, 1 exercises + 2 written," in table
    assert "2. written: Why does caching not help training?  to be marked by hand" in table
    assert table.endswith("Total: 1 / 1 passed (0 failed, 0 not attempted), 1 / 1 points; "
                          "2 written exercises to be marked by hand")

    assert main(["grade", str(submission), "--timeout", "30", "--json", "--reference", str(instructor)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["passed"], data["total"], data["counts"][MARK_BY_HAND]) == (1, 1, 2)
    assert [(e["number"], e["status"], "mark_scheme" in e) for e in data["exercises"]] == [("1", "passed", False)]
    assert [(e["number"], e["kind"], e["status"], e["mark_scheme"]) for e in data["written_exercises"]] == [
        ("2", "written", MARK_BY_HAND, "Every key is computed once."),
        ("3", "written", MARK_BY_HAND, "Pre-LN trains\nwithout warm-up.")]
    assert "in one pass" in data["written_exercises"][0]["answer"]


def test_grade_without_the_instructors_notebook_says_where_the_mark_scheme_is(tmp_path):
    from coursekit.exercises.grade import grade

    _, handed_out, submission = _answered_submission(tmp_path)
    against_student_version = grade(submission, timeout=30, reference=handed_out)
    assert [e.number for e in against_student_version.rows()] == ["1", "2", "3"]
    assert "the reference notebook has no mark scheme for it" in against_student_version.written[0].message


def test_written_exercise_missing_from_the_submission_is_still_listed(tmp_path):
    from coursekit.exercises.grade import grade

    instructor, _, submission = _answered_submission(tmp_path)
    nb = nbformat.read(submission, as_version=4)
    del nb.cells[4]                                             # the student deleted exercise 3's cell
    report = grade(_write(nb, tmp_path / "short.ipynb"), timeout=30, reference=instructor)
    assert [e.number for e in report.written] == ["2", "3"]
    assert report.written[1].message.startswith("the exercise's markdown cell is missing from the submission")
    assert report.written[1].answer is None


def test_written_exercises_are_found_in_every_version():
    from coursekit.exercises.written import written_exercises

    instructor = written_exercises(_instructor(), code_numbers={"1"})
    assert [(w.number, w.mark_scheme, w.answered) for w in instructor] == [
        ("2", "Every key is computed once.", True), ("3", "Pre-LN trains\nwithout warm-up.", True)]
    student, _ = student_notebook(_instructor())
    assert [(w.number, w.mark_scheme, w.answered) for w in written_exercises(student, code_numbers={"1"})] == [
        ("2", None, False), ("3", None, False)]
    # without the code exercises' numbers, the markdown that introduces exercise 1 looks like a written one
    assert [w.number for w in written_exercises(student)] == ["1", "2", "3"]
    notes: list[str] = []
    broken = _notebook(new_markdown_cell("**Exercise 7 (open).** Why?\n=== BEGIN MARK SCHEME ===\nno end"))
    assert [(w.number, w.mark_scheme) for w in written_exercises(broken, notes=notes)] == [("7", None)]
    assert "never closed" in notes[0]

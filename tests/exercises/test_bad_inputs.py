"""Bad calls to the exercise machinery (coursekit.exercises: the checks' core, grading, student versions,
written exercises): each must give a clear error.

One row per thing that can go wrong (see ``tests/helpers/bad_inputs.py``): the error type, a regex its
message must match (the argument's name, what was expected, what arrived), raised by coursekit itself.
Notebooks are written in a temporary folder, never in ``notebooks/``.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import torch
from helpers.bad_inputs import NAN, Bad, bad_call_test, text_file, tmp
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from coursekit.exercises import core as ex_core
from coursekit.exercises import grade as ex_grade
from coursekit.exercises import gradebook as ex_book
from coursekit.exercises import remote as ex_remote
from coursekit.exercises import sandbox as ex_sandbox
from coursekit.exercises import student as ex_student
from coursekit.exercises import wire as ex_wire
from coursekit.exercises import written as ex_written

EXEMPT = {
    "coursekit.exercises.core.CheckFailed": "an exception class raised by the checks",
    "coursekit.exercises.core.Delegated": "an exception class raised by forbid_references",
    "coursekit.exercises.core.describe": "describes any value for a message: there is no wrong argument",
    "coursekit.exercises.grade.ExerciseGrade": "a plain result container filled by grade",
    "coursekit.exercises.grade.GradeReport": "a plain result container filled by grade",
    "coursekit.exercises.written.WrittenExercise": "a plain result container filled by written_exercises",
    "coursekit.exercises.student.MarkerError": "an exception class raised on malformed markers",
    "coursekit.exercises.student.Exercise": "a plain record filled by student_notebook and exercises_of",
    "coursekit.exercises.core.StudentRaised": "an exception class raised by the grader's remote call",
    "coursekit.exercises.core.InputChanged": "an exception class raised by the grader's remote call",
    "coursekit.exercises.core.active_variant": "takes no argument: the variant the checks draw for",
    "coursekit.exercises.wire.WireError": "an exception class raised by decode",
    "coursekit.exercises.wire.encode": "encodes any value: what is not plain data becomes a description",
    "coursekit.exercises.remote.KernelGone": "an exception class raised by a session",
    "coursekit.exercises.remote.CallTimeout": "an exception class raised by a session",
    "coursekit.exercises.remote.Session": "a Protocol: the interface a kernel session offers",
    "coursekit.exercises.remote.CheckOutcome": "a plain result container filled by grade_check",
    "coursekit.exercises.harness.serve": "runs in the student's kernel on the grader's own request",
    "coursekit.exercises.harness.state_of": "describes any value's state: there is no wrong argument",
    "coursekit.exercises.grade.GradingPlan": "a plain record filled by grading_plan",
    "coursekit.exercises.grade.PlannedExercise": "a plain record filled by grading_plan",
    "coursekit.exercises.gradebook.Submission": "a plain record filled by collect",
    "coursekit.exercises.sandbox.main": "the sandbox's command line, called with the argv sandbox_command wrote",
}


# ==============================================================================================
# coursekit.exercises — check results, the grader, student versions (notebooks in a temporary folder)
# ==============================================================================================

EXERCISE = "# EXERCISE 1: double\n### BEGIN SOLUTION\ny = 2\n### END SOLUTION"


def notebook(*sources: str, markdown: tuple[str, ...] = ()):
    return new_notebook(cells=[new_code_cell(s) for s in sources] + [new_markdown_cell(m) for m in markdown])


def checked_notebook():
    """An instructor's notebook whose one exercise calls a real check."""
    return new_notebook(cells=[new_code_cell("from coursekit.exercises import check_softmax"), new_code_cell(
        "# EXERCISE 1: softmax\ndef f(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n\n"
        "check_softmax(f)")])


def notebook_file(nb=None, name="hw.ipynb", folder=None) -> Path:
    path = (folder or tmp()) / name
    nbformat.write(nb if nb is not None else notebook(EXERCISE), path)
    return path


def ignore(*args):
    return None


def forbid(references, student=ignore):
    with ex_core.forbid_references(student, references, "this exercise"):
        pass


EXERCISES = [
    Bad("unknown status", ex_core.CheckResult, lambda: ex_core.CheckResult("c", "done", "ok"), ValueError,
        r"status must be one of \['passed', 'failed', 'not attempted'\], got 'done'"),
    Bad("a number for the check name", ex_core.CheckResult, lambda: ex_core.CheckResult(5, "passed", "ok"), TypeError,
        r"check must be a str, got int"),
    Bad("None for the message", ex_core.CheckResult, lambda: ex_core.CheckResult("c", "passed", None), TypeError,
        r"message must be a str, got NoneType"),
    Bad("a result instead of the function", ex_core.require_function,
        lambda: ex_core.require_function(5, "softmax"), ex_core.CheckFailed,
        r"pass your softmax function itself \(e.g. check\(my_softmax\)\), got int 5"),
    Bad("a number for the mistake", ex_core.mistake_value, lambda: ex_core.mistake_value(5, 1), TypeError,
        r"fn must be a function \(the typical mistake\), got int"),
    Bad("a result instead of the student's function", ex_core.run_student,
        lambda: ex_core.run_student(5, "the input 2", 2), ex_core.CheckFailed,
        r"on the input 2, expected your function itself, got int 5"),
    Bad("one dotted name, not a tuple", ex_core.forbid_references, lambda: forbid("torch.softmax"), TypeError,
        r"references must be a tuple of dotted names, got str"),
    Bad("an attribute that does not exist", ex_core.forbid_references,
        lambda: forbid(("torch.nn.functional.no_such_function",)), ValueError,
        r"cannot resolve 'torch.nn.functional.no_such_function'"),
    Bad("a module that does not exist", ex_core.forbid_references, lambda: forbid(("no_such_module.f",)), ValueError,
        r"cannot resolve 'no_such_module.f'"),
    Bad("negative atol", ex_core.expect_close, lambda: ex_core.expect_close(1.0, 1.0, case="c", atol=-1e-5),
        ValueError, r"atol must be (an int )?≥ 0 and finite, got -1e-05"),
    Bad("NaN rtol", ex_core.expect_close, lambda: ex_core.expect_close(1.0, 1.0, case="c", rtol=NAN), ValueError,
        r"rtol must be (an int )?≥ 0 and finite, got nan"),
    Bad("a list of mistakes", ex_core.expect_close,
        lambda: ex_core.expect_close(1.0, 2.0, case="c", mistakes=[("hint", 1.0)]), TypeError,
        r"mistakes must be a dict \{hint: wrong value\} or None, got list"),
    Bad("another shape (the student's mistake: a failed check)", ex_core.expect_close,
        lambda: ex_core.expect_close(torch.ones(2), torch.ones(3), case="c"), ex_core.CheckFailed,
        r"on c, the output should have shape \(3,\), got \(2,\)"),
    Bad("a number for the title", ex_core.exercise_check, lambda: ex_core.exercise_check(5), TypeError,
        r"title must be a str, got int"),
    Bad("one dotted name, not a tuple", ex_core.exercise_check,
        lambda: ex_core.exercise_check("t", reimplements="torch.softmax"), TypeError,
        r"reimplements must be a tuple of dotted names, got str"),
    Bad("None for the success message", ex_core.exercise_check, lambda: ex_core.exercise_check("t", success=None),
        TypeError, r"success must be a str, got NoneType"),

    Bad("a missing notebook", ex_grade.grade, lambda: ex_grade.grade(tmp() / "hw.ipynb"), FileNotFoundError,
        r"no such notebook: .*hw.ipynb"),
    Bad("a number for the path", ex_grade.grade, lambda: ex_grade.grade(5), TypeError,
        r"path must be a notebook path \(str or Path\), got int"),
    Bad("a Python file", ex_grade.grade, lambda: ex_grade.grade(text_file("hw.py", "x = 1\n")), ValueError,
        r"expected a .ipynb notebook, got .*hw.py"),
    Bad("a folder", ex_grade.grade, lambda: ex_grade.grade(tmp()), ValueError, r"expected a .ipynb notebook, got"),
    Bad("a damaged notebook", ex_grade.grade, lambda: ex_grade.grade(text_file("hw.ipynb", "{not json")), ValueError,
        r"hw.ipynb is not a readable notebook"),
    Bad("zero timeout", ex_grade.grade, lambda: ex_grade.grade(notebook_file(), timeout=0), ValueError,
        r"timeout must be a positive int, got 0"),
    Bad("float timeout", ex_grade.grade, lambda: ex_grade.grade(notebook_file(), timeout=1.5), (ValueError, TypeError),
        r"timeout must be a positive int, got 1.5"),
    Bad("an empty notebook file", ex_grade.grade, lambda: ex_grade.grade(text_file("hw.ipynb", "")), ValueError,
        r"hw.ipynb is empty \(0 bytes\)"),
    Bad("a uid for a grader that is not root", ex_grade.grade, lambda: ex_grade.grade(notebook_file(), uid="me"),
        ValueError, r"uid must be 'auto', None or a positive uid, got 'me'"),
    Bad("a missing reference", ex_grade.grade, lambda: ex_grade.grade(notebook_file(), reference=tmp() / "ref.ipynb"),
        FileNotFoundError, r"no such reference notebook: .*ref.ipynb"),
    Bad("a damaged reference", ex_grade.grade,
        lambda: ex_grade.grade(notebook_file(), reference=text_file("ref.ipynb", "[]")), ValueError,
        r"ref.ipynb is not a readable notebook"),
    Bad("a number for save_executed", ex_grade.grade, lambda: ex_grade.grade(notebook_file(), save_executed=5),
        TypeError, r"save_executed must be a notebook path \(str or Path\) or None, got int"),
    Bad("a number for the home", ex_grade.grading_env, lambda: ex_grade.grading_env(5), TypeError,
        r"home must be a folder path \(str or Path\), got int"),
    Bad("a path for the reference", ex_grade.grading_plan, lambda: ex_grade.grading_plan("ref.ipynb"), TypeError,
        r"reference must be a notebook \(nbformat.NotebookNode\), got str"),
    Bad("points for an exercise the reference lacks", ex_grade.grading_plan,
        lambda: ex_grade.grading_plan(checked_notebook(), points={"7": 2}), ValueError,
        r"points given for exercise 7, which .* does not have"),
    Bad("negative points", ex_grade.grading_plan, lambda: ex_grade.grading_plan(checked_notebook(), points={"1": -1}),
        ValueError, r"points for exercise 1 must be a number >= 0, got -1"),
    Bad("an exercise cell without a check", ex_grade.grading_plan, lambda: ex_grade.grading_plan(notebook(EXERCISE)),
        ValueError, r"calls no check_\*\(function\)"),
    Bad("a submission with no course exercise", ex_grade.course_reference,
        lambda: ex_grade.course_reference(new_notebook(cells=[new_code_cell("x = 1")])), ValueError,
        r"has none of the course notebooks' exercises; grade it with --reference"),
    Bad("a number for the submission", ex_grade.read_submission, lambda: ex_grade.read_submission(3), TypeError,
        r"path must be a notebook path \(str or Path\), got int"),
    Bad("a missing class folder", ex_book.grade_class, lambda: ex_book.grade_class(tmp() / "nope", tmp() / "out"),
        FileNotFoundError, r"no such folder or zip: .*nope"),
    Bad("zero jobs", ex_book.grade_class, lambda: ex_book.grade_class(tmp(), tmp() / "out", jobs=0), ValueError,
        r"jobs must be an int from 1 to 64, got 0"),
    Bad("a missing reference for the class", ex_book.grade_class,
        lambda: ex_book.grade_class(tmp(), tmp() / "out", reference=tmp() / "r.ipynb"), FileNotFoundError,
        r"no such reference notebook: .*r.ipynb"),
    Bad("a text file as the class", ex_book.collect, lambda: ex_book.collect(text_file("class.txt", "x"), tmp()),
        ValueError, r"expected a folder of submissions, a .zip of them or one .ipynb, got class.txt"),
    Bad("a pickle from the kernel", ex_wire.decode, lambda: ex_wire.decode({"pickle": "gASV"}), ex_wire.WireError,
        r"unknown kind of value 'pickle'"),
    Bad("tensor bytes that do not fit the shape", ex_wire.decode,
        lambda: ex_wire.decode({"tensor": {"dtype": "float32", "shape": [2], "data": "AAAA"}}), ex_wire.WireError,
        r"tensor data has 3 bytes; shape \(2,\) of float32 needs 8"),
    Bad("an unknown dtype", ex_wire.decode,
        lambda: ex_wire.decode({"tensor": {"dtype": "object", "shape": [], "data": ""}}), ex_wire.WireError,
        r"unknown tensor dtype 'object'"),
    Bad("a special float that is not one", ex_wire.decode, lambda: ex_wire.decode({"float": "1e999"}),
        ex_wire.WireError, r"a special float must be 'nan', 'inf' or '-inf', got '1e999'"),
    Bad("a huge tensor", ex_wire.decode,
        lambda: ex_wire.decode({"tensor": {"dtype": "float64", "shape": [2**40], "data": ""}}), ex_wire.WireError,
        r"larger than the grader accepts"),
    Bad("a function name that is code", ex_remote.RemoteFunction,
        lambda: ex_remote.RemoteFunction(object(), "f(); import os"), ValueError,
        r"name must be a Python identifier \(the student's function\), got 'f\(\); import os'"),
    Bad("no session", ex_remote.RemoteFunction, lambda: ex_remote.RemoteFunction(None, "f"), TypeError,
        r"session must have a run\(code, timeout\) method, got NoneType"),
    Bad("a plain function for a check", ex_remote.grade_check, lambda: ex_remote.grade_check(print, print), TypeError,
        r"check must be an exercise check \(a check_\* function\), got builtin_function_or_method"),
    Bad("a number for a failure", ex_remote.hidden_message, lambda: ex_remote.hidden_message(3), TypeError,
        r"result must be a CheckResult, got int"),
    Bad("a tiny memory limit", ex_sandbox.sandbox_command, lambda: ex_sandbox.sandbox_command(["python"], memory_mb=1),
        ValueError, r"memory_mb must be an int >= 256 \(megabytes\), got 1"),
    Bad("root as the sandbox user", ex_sandbox.sandbox_command,
        lambda: ex_sandbox.sandbox_command(["python"], memory_mb=512, uid=0), ValueError,
        r"uid must be a positive int \(not root\), got 0"),
    Bad("the grader's own user to kill", ex_sandbox.kill_user, lambda: ex_sandbox.kill_user(0), ValueError,
        r"uid must be a sandbox user's id"),
    Bad("a slot out of range", ex_sandbox.sandbox_uid, lambda: ex_sandbox.sandbox_uid(64), ValueError,
        r"slot must be an int in \[0, 64\), got 64"),
    Bad("a variant below 0", ex_core.case_variant, lambda: ex_core.case_variant(-1).__enter__(), ValueError,
        r"variant must be an int >= 0, got -1"),
    Bad("a float seed", ex_core.case_seed, lambda: ex_core.case_seed(1.5), TypeError,
        r"seed must be an int, got float"),
    Bad("a float seed for the generator", ex_core.case_generator, lambda: ex_core.case_generator(1.5), TypeError,
        r"seed must be an int, got float"),
    Bad("a float seed for the sizes", ex_core.hidden_sizes, lambda: ex_core.hidden_sizes((2,), 1, 3, seed=0.5),
        TypeError, r"seed must be an int, got float"),
    Bad("a float seed for the ids", ex_core.hidden_ids,
        lambda: ex_core.hidden_ids([1], set(), seed=0.5), TypeError, r"seed must be an int, got float"),
    Bad("a ValueError for a stub", ex_core.stub_message, lambda: ex_core.stub_message(ValueError("x"), "f"),
        TypeError, r"exc must be a NotImplementedError, got ValueError"),
    Bad("a path instead of a notebook", ex_written.written_exercises,
        lambda: ex_written.written_exercises(str(notebook_file())), TypeError,
        r"nb must be a notebook \(nbformat.NotebookNode, e.g. from nbformat.read\), got str"),
    Bad("a plain dict", ex_written.written_exercises, lambda: ex_written.written_exercises({"cells": []}), TypeError,
        r"nb must be a notebook \(nbformat.NotebookNode, e.g. from nbformat.read\), got dict"),
    Bad("a string of numbers ('1' in '12')", ex_written.written_exercises,
        lambda: ex_written.written_exercises(notebook(), code_numbers="12"), TypeError,
        r"code_numbers must be a set of exercise numbers \(str\), got str"),
    Bad("int exercise numbers (never equal to '1')", ex_written.written_exercises,
        lambda: ex_written.written_exercises(notebook(), code_numbers={1}), TypeError,
        r"code_numbers must hold str exercise numbers such as '3' or '3b', got 1 \(int\)"),
    Bad("a tuple for the notes", ex_written.written_exercises,
        lambda: ex_written.written_exercises(notebook(), notes=()), TypeError,
        r"notes must be a list \(messages are appended to it\) or None, got tuple"),

    Bad("a number for the source", ex_student.exercise_header, lambda: ex_student.exercise_header(5), TypeError,
        r"source must be a str, got int"),
    Bad("a list of lines", ex_student.exercise_header, lambda: ex_student.exercise_header(["# EXERCISE 1: a"]),
        TypeError, r"source must be a str, got list"),
    Bad("a header without its colon", ex_student.exercise_header,
        lambda: ex_student.exercise_header("# EXERCISE 1 double"), ex_student.MarkerError,
        r"malformed exercise header '# EXERCISE 1 double'; expected '# EXERCISE N: short title'"),
    Bad("a string instead of lines (read per character)", ex_student.solution_regions,
        lambda: ex_student.solution_regions(EXERCISE, ex_student.SOLUTION_BEGIN, ex_student.SOLUTION_END), TypeError,
        r"lines must be a list of str lines \(source.split\('\\n'\)\), got str"),
    Bad("a region never closed", ex_student.solution_regions,
        lambda: ex_student.solution_regions(["### BEGIN SOLUTION", "x"], ex_student.SOLUTION_BEGIN,
                                            ex_student.SOLUTION_END), ex_student.MarkerError,
        r"'### BEGIN SOLUTION' on line 1 is never closed by '### END SOLUTION'"),
    Bad("an end without a begin", ex_student.solution_regions,
        lambda: ex_student.solution_regions(["x", "### END SOLUTION"], ex_student.SOLUTION_BEGIN,
                                            ex_student.SOLUTION_END), ex_student.MarkerError,
        r"'### END SOLUTION' on line 2 has no '### BEGIN SOLUTION' before it"),
    Bad("nested regions", ex_student.solution_regions,
        lambda: ex_student.solution_regions(["### BEGIN SOLUTION"] * 2, ex_student.SOLUTION_BEGIN,
                                            ex_student.SOLUTION_END), ex_student.MarkerError,
        r"nested markers: '### BEGIN SOLUTION' on line 2 while the one on line 1 is still open"),
    Bad("an unknown cell type (left unchanged before)", ex_student.student_source,
        lambda: ex_student.student_source(EXERCISE, "Code", stub="raise NotImplementedError"), ValueError,
        r"cell_type must be one of \['code', 'markdown', 'raw'\], got 'Code'"),
    Bad("a number for the stub", ex_student.student_source, lambda: ex_student.student_source(EXERCISE, "code", stub=5),
        TypeError, r"stub must be a str, got int"),
    Bad("None for the source", ex_student.student_source, lambda: ex_student.student_source(None, "code", stub="s"),
        TypeError, r"source must be a str, got NoneType"),
    Bad("a plain dict", ex_student.student_notebook, lambda: ex_student.student_notebook({"cells": []}), TypeError,
        r"nb must be a notebook \(nbformat.NotebookNode, e.g. from nbformat.read\), got dict"),
    Bad("an exercise number used twice", ex_student.student_notebook,
        lambda: ex_student.student_notebook(notebook(EXERCISE, EXERCISE)), ex_student.MarkerError,
        r"exercise number 1 is already used by cell 1"),
    Bad("solution markers outside an exercise", ex_student.student_notebook,
        lambda: ex_student.student_notebook(notebook("### BEGIN SOLUTION\ny = 2\n### END SOLUTION")),
        ex_student.MarkerError, r"solution markers outside an exercise cell"),
    Bad("a path instead of a notebook", ex_student.exercises_of, lambda: ex_student.exercises_of("hw.ipynb"), TypeError,
        r"nb must be a notebook \(nbformat.NotebookNode, e.g. from nbformat.read\), got str"),
    Bad("a number for the path", ex_student.notebooks_in, lambda: ex_student.notebooks_in(5), TypeError,
        r"path must be a notebook or folder path \(str or Path\), got int"),
    Bad("a Python file, given as a string", ex_student.notebooks_in, lambda: ex_student.notebooks_in("hw.py"),
        ValueError, r"expected a .ipynb notebook or a directory of them, got hw.py \(build the .ipynb first"),
    Bad("a missing notebook", ex_student.notebooks_in, lambda: ex_student.notebooks_in(tmp() / "hw.ipynb"),
        FileNotFoundError, r"no such notebook: .*hw.ipynb"),
    Bad("an empty folder", ex_student.notebooks_in, lambda: ex_student.notebooks_in(tmp()), ValueError,
        r"no .ipynb notebooks in"),
    Bad("one path, not a list", ex_student.student_paths,
        lambda: ex_student.student_paths(notebook_file(), tmp()), TypeError,
        r"sources must be a list of notebook paths, got PosixPath"),
    Bad("a number for the output", ex_student.student_paths, lambda: ex_student.student_paths([notebook_file()], 5),
        TypeError, r"out must be a folder or notebook path \(str or Path\), got int"),
    Bad("writing into the source folder", ex_student.student_paths,
        lambda: (lambda src: ex_student.student_paths([src], src.parent))(notebook_file()), ValueError,
        r"refusing to write .*hw.ipynb: it is in the source directory"),
    Bad("two notebooks into one file", ex_student.student_paths,
        lambda: ex_student.student_paths([notebook_file(), notebook_file(name="b.ipynb")], tmp() / "out.ipynb"),
        ValueError, r"out.ipynb is a notebook file, but 2 notebooks were given"),
    Bad("overwriting an instructor's notebook", ex_student.student_paths,
        lambda: (lambda out: ex_student.student_paths([notebook_file()], out))(notebook_file().parent), ValueError,
        r"refusing to overwrite .*hw.ipynb: it contains solution markers"),
    Bad("a missing source", ex_student.write_student_versions,
        lambda: ex_student.write_student_versions(tmp() / "hw.ipynb", tmp()), FileNotFoundError,
        r"no such notebook: .*hw.ipynb"),
    Bad("a number for the sources", ex_student.write_student_versions,
        lambda: ex_student.write_student_versions(5, tmp()), TypeError,
        r"sources must be a notebook path, a folder or a list of them, got int"),
    Bad("a malformed notebook writes nothing", ex_student.write_student_versions,
        lambda: ex_student.write_student_versions([notebook_file(notebook("# EXERCISE 1 no colon"))], tmp()),
        ex_student.MarkerError, r"malformed exercise header"),
]


ROWS = EXERCISES

test_bad_call = bad_call_test(ROWS)

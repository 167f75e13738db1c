"""Command line of the exercises: ``python -m coursekit.exercises {student,grade} ...``.

    python -m coursekit.exercises student notebooks/ --out student/
    python -m coursekit.exercises grade submission.ipynb [--reference instructor.ipynb] [--timeout 120] [--json]
    python -m coursekit.exercises grade submissions/ --out graded/ [--jobs 2] [--reference instructor.ipynb]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from coursekit.exercises.grade import DEFAULT_MEMORY_MB, DEFAULT_SUBMISSION_TIMEOUT, DEFAULT_TIMEOUT, grade
from coursekit.exercises.gradebook import grade_class
from coursekit.exercises.student import write_student_versions
from coursekit.viz.wording import counted


def _student(args: argparse.Namespace) -> int:
    written = write_student_versions([Path(p) for p in args.notebooks], Path(args.out))
    for path, exercises in written:
        print(f"wrote {path} ({len(exercises)} exercise{'s' * (len(exercises) != 1)})")
    return 0


def _points(pairs: list[str]) -> dict[str, float]:
    points = {}
    for pair in pairs:
        number, sep, value = pair.partition("=")
        try:
            points[number.strip()] = float(value)
        except ValueError:
            raise ValueError(f"--points takes EXERCISE=POINTS (e.g. --points 2=1.5), got {pair!r}") from None
        if not sep or not number.strip():
            raise ValueError(f"--points takes EXERCISE=POINTS (e.g. --points 2=1.5), got {pair!r}")
    return points


def _grade(args: argparse.Namespace) -> int:
    points = _points(args.points)
    if args.out is not None or not args.notebook.endswith(".ipynb"):
        if args.out is None:
            raise ValueError(f"{args.notebook} is a folder or a zip: say where the gradebook goes with --out DIR")
        rows = grade_class(args.notebook, args.out, jobs=args.jobs, reference=args.reference, points=points,
                           regrade=args.regrade, timeout=args.timeout, submission_timeout=args.submission_timeout,
                           memory_mb=args.memory_mb)
        print(f"{counted(len(rows), 'submission')} graded: {Path(args.out) / 'grades.csv'}, feedback/, gradescope/")
        return 0
    report = grade(args.notebook, timeout=args.timeout, reference=args.reference, points=points,
                   save_executed=args.save_executed, submission_timeout=args.submission_timeout,
                   memory_mb=args.memory_mb)
    print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False) if args.json else report.table())
    return 0  # a graded notebook is a success, whatever its score


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m coursekit.exercises",
                                     description="Student versions of the notebooks, and grading.")
    sub = parser.add_subparsers(dest="command", required=True)

    student = sub.add_parser("student", help="write student versions (solutions replaced by stubs)")
    student.add_argument("notebooks", nargs="+", help="a .ipynb notebook or a directory of them")
    student.add_argument("--out", required=True,
                         help="output directory (or a .ipynb path for one notebook); never the source directory")
    student.set_defaults(run=_student)

    grader = sub.add_parser("grade", help="grade a submission, or a whole class (a folder or an LMS zip)")
    grader.add_argument("notebook", help="the student's .ipynb, or a folder / .zip of submissions (needs --out)")
    grader.add_argument("--out", help="the gradebook's folder: grades.csv, feedback/, gradescope/, reports/")
    grader.add_argument("--jobs", type=int, default=1, help="submissions graded at once (default 1)")
    grader.add_argument("--points", action="append", default=[], metavar="N=P",
                        help="points of exercise N (default 1 each; repeat for several)")
    grader.add_argument("--regrade", action="store_true",
                        help="grade every submission again, even those whose file and settings are unchanged")
    grader.add_argument("--submission-timeout", type=int, default=DEFAULT_SUBMISSION_TIMEOUT,
                        help=f"time limit of one submission in seconds (default {DEFAULT_SUBMISSION_TIMEOUT})")
    grader.add_argument("--memory-mb", type=int, default=DEFAULT_MEMORY_MB,
                        help=f"memory (address space) of a kernel in MB (default {DEFAULT_MEMORY_MB})")
    grader.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT,
                        help=f"time limit per cell in seconds (default {DEFAULT_TIMEOUT})")
    grader.add_argument("--json", action="store_true", help="print the result as JSON (for autograders)")
    grader.add_argument("--reference", metavar="NOTEBOOK",
                        help="the instructor's notebook (or the one handed out): its exercises, and which check "
                             "grades which function, are the ones graded (default: the course's notebook with "
                             "the submission's exercises); the instructor's also gives the mark schemes")
    grader.add_argument("--save-executed", metavar="PATH", help="also write the executed notebook here")
    grader.set_defaults(run=_grade)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (ValueError, FileNotFoundError) as exc:  # MarkerError is a ValueError
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

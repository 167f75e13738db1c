"""Command line of the exercises: ``python -m coursekit.exercises {student,grade} ...``.

    python -m coursekit.exercises student notebooks/ --out student/
    python -m coursekit.exercises grade submission.ipynb [--reference instructor.ipynb] [--timeout 120] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from coursekit.exercises.grade import DEFAULT_TIMEOUT, grade
from coursekit.exercises.student import write_student_versions


def _student(args: argparse.Namespace) -> int:
    written = write_student_versions([Path(p) for p in args.notebooks], Path(args.out))
    for path, exercises in written:
        print(f"wrote {path} ({len(exercises)} exercise{'s' * (len(exercises) != 1)})")
    return 0


def _grade(args: argparse.Namespace) -> int:
    report = grade(args.notebook, timeout=args.timeout, kernel=args.kernel, reference=args.reference,
                   save_executed=args.save_executed)
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

    grader = sub.add_parser("grade", help="execute a submission and report each exercise")
    grader.add_argument("notebook", help="the student's .ipynb")
    grader.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT,
                        help=f"time limit per cell in seconds (default {DEFAULT_TIMEOUT})")
    grader.add_argument("--json", action="store_true", help="print the result as JSON (for autograders)")
    grader.add_argument("--reference", metavar="NOTEBOOK",
                        help="the instructor's notebook (or the one handed out): its exercises are the ones "
                             "graded (a deleted one counts as not attempted); the instructor's also gives the "
                             "mark schemes of the written exercises, listed as to be marked by hand")
    grader.add_argument("--kernel", default="python3", help="Jupyter kernel to run it in (default python3)")
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

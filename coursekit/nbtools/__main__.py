"""Command line of the notebook tools.

    python -m coursekit.nbtools run notebooks/07_self_attention.py --profile class
    python -m coursekit.nbtools run notebooks/07_self_attention.py --profile quick --no-save
    python -m coursekit.nbtools table          # rewrite the runtime table in README.md
    python -m coursekit.nbtools sync-check     # every .py and .ipynb pair has the same cells
    python -m coursekit.nbtools prose notebooks/07_self_attention.py   # prose-only edits: markdown into the .ipynb
    python -m coursekit.nbtools claims [NB.ipynb ...]   # every number of the prose shown by the notebook
    python -m coursekit.nbtools compact-figures NB.ipynb ...   # stored PNGs with a 256-colour palette
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from coursekit.nbtools.claims import claim_problems
from coursekit.nbtools.execution import NOTEBOOKS, run, runtime_table, sync_problems, sync_prose, write_table
from coursekit.nbtools.figures import compact_file
from coursekit.viz.wording import counted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m coursekit.nbtools", description="The course's notebook tools.")
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser("run", help="build, execute and record notebooks")
    p_run.add_argument("paths", nargs="+", type=Path)
    p_run.add_argument("--profile", default="class", choices=["quick", "class", "full"])
    p_run.add_argument("--no-save", action="store_true", help="only time the run; leave the .ipynb as it is")
    p_run.add_argument("--timeout", type=int, default=900, help="per-cell timeout in seconds")
    sub.add_parser("table", help="rewrite the runtime table in README.md")
    sub.add_parser("sync-check", help="check that every .py/.ipynb pair has the same cells")
    p_prose = sub.add_parser("prose", help="copy edited markdown cells into the executed .ipynb (code unchanged)")
    p_prose.add_argument("paths", nargs="+", type=Path)
    p_claims = sub.add_parser("claims", help="check that every number of the prose is shown by its notebook")
    p_claims.add_argument("paths", nargs="*", type=Path, help="executed notebooks (default: all of notebooks/)")
    p_compact = sub.add_parser("compact-figures", help="re-encode stored PNG outputs with a 256-colour palette")
    p_compact.add_argument("paths", nargs="+", type=Path)
    args = parser.parse_args(argv)
    if args.command == "compact-figures":
        for p in args.paths:
            print(f"{p.name}: {compact_file(p) / 2**10:,.0f} KiB saved")
        return 0
    if args.command == "run":
        for p in args.paths:
            meta = run(p, args.profile, save=not args.no_save, timeout=args.timeout)
            print(f"{p.stem}: {meta['profile']} profile, {meta['wall_time_s']:.1f} s on {meta['device']}")
        return 0
    if args.command == "prose":
        for p in args.paths:
            print(f"{p.stem}: {counted(sync_prose(p), 'markdown cell')} updated, outputs kept")
        return 0
    if args.command == "table":
        write_table()
        print(runtime_table())
        return 0
    if args.command == "claims":
        found = 0
        for path in args.paths or sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
            for problem in claim_problems(path):
                print(f"{path.name}: {problem}", file=sys.stderr)
                found += 1
        return 1 if found else 0
    problems = sync_problems()
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Grade a whole class: a folder or an LMS zip of submissions in, a gradebook and feedback out.

    python -m coursekit.exercises grade submissions/ --out graded/ [--jobs 2] [--reference instructor.ipynb]
                                                     [--points 1=2 --points 3=0.5] [--regrade]

Every submission is graded by :func:`coursekit.exercises.grade.grade` in a process of its own (a *worker*, forked
from a server that has imported the grader), with its own temporary folder holding only its own file and a kernel
boxed by :mod:`coursekit.exercises.sandbox` (its own user per job slot when the grader runs as root, so that no
kernel can reach a worker, another submission or the gradebook). The worker hands its report back to this process;
the gradebook is written here, from those reports alone, when all are in.

``OUT/`` receives

* ``grades.csv`` — one row per submission: its name, a status per exercise, ``passed``, ``total``, ``points``,
  ``max_points``, lesson-cell errors, seconds, flags, and the reason when it could not be graded;
* ``feedback/<name>.md`` — each exercise's message (hidden cases are described, never shown; written exercises
  are "to be marked by hand", without the mark scheme);
* ``gradescope/<name>/results.json`` — Gradescope's autograder format (one test per exercise);
* ``reports/<name>.json`` — the whole report, and the content hash of the submission and of the grading
  settings: a second run re-grades only the submissions whose hash changed (``--regrade``: all of them).

A file that is not a notebook, an empty or damaged one, one too large, one that loops, exits its kernel, forks
or exhausts memory gets its own row with the reason; the batch goes on and no other row changes.
"""

from __future__ import annotations

import csv
import hashlib
import json
import multiprocessing
import os
import re
import tempfile
import time
import zipfile
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout
from dataclasses import dataclass
from pathlib import Path

from coursekit.exercises.grade import (
    DEFAULT_MEMORY_MB,
    DEFAULT_SUBMISSION_TIMEOUT,
    DEFAULT_TIMEOUT,
    MARK_BY_HAND,
    grade,
)
from coursekit.exercises.sandbox import MAX_SLOTS, sandbox_uid
from coursekit.viz.wording import counted

__all__ = ["Submission", "collect", "grade_class"]

MAX_ZIP_BYTES = 2 * 2**30        # uncompressed size of an LMS download we are willing to unpack
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class Submission:
    """One file handed in: ``name`` (the gradebook's key, from the file name) and where it lies."""

    name: str
    path: Path


def _safe_name(raw: str, taken: set[str]) -> str:
    stem = _SAFE.sub("_", Path(raw).stem).strip("._") or "submission"
    name, n = stem[:80], 2
    while name in taken:
        name, n = f"{stem[:76]}_{n}", n + 1
    taken.add(name)
    return name


def collect(source: Path, unpack_to: Path) -> list[Submission]:
    """The submissions in a folder (every file directly inside, notebook or not: each gets a row) or a zip
    (unpacked into ``unpack_to``: only plain files, no paths outside it, at most ``MAX_ZIP_BYTES``)."""
    source = Path(source)
    if not source.exists():
        raise FileNotFoundError(f"no such folder or zip: {source}")
    taken: set[str] = set()
    if source.is_dir():
        files = sorted(p for p in source.iterdir() if p.is_file() and not p.name.startswith("."))
        return [Submission(_safe_name(p.name, taken), p) for p in files]
    if source.suffix == ".ipynb":
        return [Submission(_safe_name(source.name, taken), source)]
    if not zipfile.is_zipfile(source):
        raise ValueError(f"expected a folder of submissions, a .zip of them or one .ipynb, got {source.name}")
    with zipfile.ZipFile(source) as archive:
        members = [m for m in archive.infolist() if not m.is_dir() and not Path(m.filename).name.startswith(".")
                   and "__MACOSX" not in m.filename]
        if sum(m.file_size for m in members) > MAX_ZIP_BYTES:
            raise ValueError(f"{source.name} unpacks to more than {MAX_ZIP_BYTES // 2**30} GB; refusing it")
        found = []
        for m in sorted(members, key=lambda m: m.filename):
            name = _safe_name(Path(m.filename).name, taken)
            target = Path(unpack_to) / f"{name}{Path(m.filename).suffix[:10]}"
            with archive.open(m) as src, open(target, "wb") as dst:
                dst.write(src.read(MAX_ZIP_BYTES))
            found.append(Submission(name, target))
        return found


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(2**20), b""):
            h.update(block)
    return h.hexdigest()


# ----------------------------------------------------------------------------------------------
# the worker: one submission, in a process of its own
# ----------------------------------------------------------------------------------------------

def _grade_one(settings: dict) -> dict:
    """Grade one submission (in a worker process): its report as plain data, or why it could not be graded."""
    start = time.monotonic()
    if settings.get("kernel_threads"):        # the kernels of the jobs running side by side share the cores
        os.environ["OMP_NUM_THREADS"] = str(settings["kernel_threads"])
    try:
        report = grade(settings["path"], timeout=settings["timeout"], reference=settings["reference"],
                       points=settings["points"], submission_timeout=settings["submission_timeout"],
                       memory_mb=settings["memory_mb"], uid=settings["uid"])
        result = {"report": report.to_dict()}
    except (ValueError, FileNotFoundError) as exc:
        result = {"error": str(exc)}
    result["seconds"] = time.monotonic() - start
    return result


def _pool(jobs: int) -> ProcessPoolExecutor:
    """Worker processes forked from a server that has already imported the grader (a worker costs a fork, not
    seconds of imports), one per submission (nothing of one submission's worker outlives it)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["coursekit.exercises.grade"])
    return ProcessPoolExecutor(max_workers=jobs, mp_context=context, max_tasks_per_child=1)


def _run_worker(pool: ProcessPoolExecutor, submission: Submission, settings: dict, slot: int) -> dict:
    """Grade one submission in a worker process; whatever happens to it, return a result. (The worker's grade()
    copies the file into a box of its own; nothing else of the class is handed to it.)"""
    mine = dict(settings, path=str(submission.path))
    if settings["uid"] == "slots":
        mine["uid"] = sandbox_uid(slot)
    start = time.monotonic()
    limit = settings["submission_timeout"] + 120
    try:
        return pool.submit(_grade_one, mine).result(timeout=limit)
    except FuturesTimeout:
        return {"error": f"the grader gave up on it after {limit} s", "seconds": time.monotonic() - start}
    except Exception as exc:  # noqa: BLE001 - a worker that died is this submission's row, not the batch's end
        return {"error": f"the grader's worker failed ({type(exc).__name__}: {str(exc)[:200]})",
                "seconds": time.monotonic() - start}


# ----------------------------------------------------------------------------------------------
# the gradebook
# ----------------------------------------------------------------------------------------------

def _settings(reference, points, timeout, submission_timeout, memory_mb, uid) -> dict:
    return {"reference": str(Path(reference).resolve()) if reference else None, "points": points or {},
            "timeout": timeout, "submission_timeout": submission_timeout, "memory_mb": memory_mb, "uid": uid,
            "profile": os.environ.get("COURSEKIT_PROFILE", "quick")}


def _settings_hash(settings: dict, reference) -> str:
    key = {k: v for k, v in settings.items() if k not in ("uid", "kernel_threads")}
    key["reference_sha256"] = _sha256(Path(reference)) if reference else None
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()


def grade_class(source, out, *, jobs: int = 1, reference=None, points: dict | None = None,
                regrade: bool = False, timeout: int = DEFAULT_TIMEOUT,
                submission_timeout: int = DEFAULT_SUBMISSION_TIMEOUT, memory_mb: int = DEFAULT_MEMORY_MB,
                log=print) -> list[dict]:
    """Grade every submission in ``source`` (a folder, a zip or one notebook) into ``out`` (module docstring);
    returns the gradebook's rows."""
    if not isinstance(jobs, int) or isinstance(jobs, bool) or not 1 <= jobs <= MAX_SLOTS:
        raise ValueError(f"jobs must be an int from 1 to {MAX_SLOTS}, got {jobs!r}")
    if not isinstance(out, (str, Path)):
        raise TypeError(f"out must be a folder path (str or Path), got {type(out).__name__}")
    out = Path(out)
    if reference is not None and not Path(reference).is_file():
        raise FileNotFoundError(f"no such reference notebook: {reference}")
    for sub in ("feedback", "gradescope", "reports"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    uid = "slots" if os.geteuid() == 0 else None
    settings = _settings(reference, points, timeout, submission_timeout, memory_mb, uid)
    if "OMP_NUM_THREADS" not in os.environ:   # torch in each kernel: the cores divided among the jobs
        settings["kernel_threads"] = max(1, (os.cpu_count() or 1) // jobs)
    settings_hash = _settings_hash(settings, reference)
    with tempfile.TemporaryDirectory(prefix="coursekit-class-") as unpacked:
        submissions = collect(Path(source), Path(unpacked))
        if not submissions:
            raise ValueError(f"no submissions in {source}")
        results: dict[str, dict] = {}
        todo = []
        for s in submissions:
            digest = _sha256(s.path)
            cached = _cached(out / "reports" / f"{s.name}.json", digest, settings_hash)
            if cached is not None and not regrade:
                results[s.name] = cached
                log(f"{s.name}: unchanged, kept")
            else:
                todo.append((s, digest))
        slots = list(range(jobs))

        def run(item):
            s, digest = item
            slot = slots.pop()
            try:
                result = _run_worker(workers, s, settings, slot)
            finally:
                slots.append(slot)
            result.update(sha256=digest, settings_sha256=settings_hash, file=s.path.name)
            (out / "reports" / f"{s.name}.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
            log(f"{s.name}: {_summary(result)}")
            return s.name, result

        with _pool(jobs) as workers, ThreadPoolExecutor(max_workers=jobs) as threads:
            results.update(dict(threads.map(run, todo)))
    rows = _write_gradebook(out, submissions, results, settings)
    return rows


def _cached(path: Path, digest: str, settings_hash: str) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if data.get("sha256") == digest and data.get("settings_sha256") == settings_hash:
        return data
    return None


def _summary(result: dict) -> str:
    if "report" in result:
        r = result["report"]
        return f"{r['passed']} / {r['total']} passed, {r['points']:g} / {r['max_points']:g} points " \
               f"({result['seconds']:.1f} s)"
    return f"not graded: {result.get('error')}"


def _write_gradebook(out: Path, submissions: list[Submission], results: dict, settings: dict) -> list[dict]:
    numbers: list[str] = []
    for s in submissions:
        report = results[s.name].get("report")
        for e in (report or {}).get("exercises", []):
            if e["number"] not in numbers:
                numbers.append(e["number"])
    columns = (["submission"] + [f"exercise {n}" for n in numbers]
               + ["passed", "total", "points", "max_points", "lesson_errors", "seconds", "flags", "error"])
    rows = []
    for s in submissions:
        result = results[s.name]
        report = result.get("report")
        row = {"submission": s.name, "seconds": f"{result.get('seconds', 0):.1f}"}
        if report:
            for e in report["exercises"]:
                row[f"exercise {e['number']}"] = e["status"]
            row.update(passed=report["passed"], total=report["total"], points=f"{report['points']:g}",
                       max_points=f"{report['max_points']:g}", lesson_errors=len(report["lesson_errors"]),
                       flags=" | ".join(report["flags"]), error="")
        else:
            row.update(passed=0, total="", points=0, max_points="", lesson_errors="", flags="",
                       error=result.get("error", "not graded"))
        rows.append(row)
        (out / "feedback" / f"{s.name}.md").write_text(_feedback(s.name, result), encoding="utf-8")
        gs = out / "gradescope" / s.name
        gs.mkdir(parents=True, exist_ok=True)
        (gs / "results.json").write_text(json.dumps(_gradescope(result), indent=1), encoding="utf-8")
    with open(out / "grades.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, restval="")
        writer.writeheader()
        writer.writerows(rows)
    return rows


def _feedback(name: str, result: dict) -> str:
    """What the student reads: each exercise's message; no hidden case, no mark scheme, no reference code."""
    report = result.get("report")
    if not report:
        return f"# Feedback: {name}\n\nYour submission could not be graded: {result.get('error')}\n"
    lines = [f"# Feedback: {name}", "",
             f"**{report['passed']} / {report['total']}** code exercises passed, "
             f"**{report['points']:g} / {report['max_points']:g}** points "
             f"(profile {report['profile']}, {result.get('seconds', 0):.0f} s).", ""]
    for e in report["exercises"]:
        lines += [f"## Exercise {e['number']}: {e['title']} — {e['status']}", "", e["message"], ""]
        lines += [f"- {err}" for err in e.get("cell_errors", [])] + ([""] if e.get("cell_errors") else [])
    for w in report["written_exercises"]:
        lines += [f"## Exercise {w['number'] or '(written)'}: {w['title']} — {MARK_BY_HAND}", ""]
    if report["lesson_errors"]:
        lines += ["## Lesson cells that raised", ""]
        lines += [f"- cell {e['cell']}: {e['error']}: {e['message']}" for e in report["lesson_errors"]] + [""]
    lines += [f"Note: {n}" for n in report["notes"]]
    return "\n".join(lines).rstrip() + "\n"


def _gradescope(result: dict) -> dict:
    """Gradescope's autograder results.json: one test per code exercise, its score and message."""
    report = result.get("report")
    if not report:
        return {"score": 0, "output": f"Your submission could not be graded: {result.get('error')}", "tests": []}
    tests = [{"name": f"Exercise {e['number']}: {e['title']}", "score": e["points"], "max_score": e["max_points"],
              "status": "passed" if e["status"] == "passed" else "failed", "output": e["message"]}
             for e in report["exercises"]]
    return {"score": report["points"], "execution_time": round(result.get("seconds", 0), 1), "tests": tests,
            "output": f"{report['passed']} / {report['total']} code exercises passed"
                      + (f"; {counted(len(report['written_exercises']), 'written exercise')} {MARK_BY_HAND}"
                         if report["written_exercises"] else "")}


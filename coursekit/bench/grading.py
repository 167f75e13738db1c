"""How fast a class is graded: ``python -m coursekit.bench grading [--n 30] [--jobs 2] [--out FILE]``.

A class of ``n`` submissions of a two-exercise homework (softmax and cross-entropy, the checks of notebook 00:
right, wrong, stub and crashing answers in turn) is graded by :func:`coursekit.exercises.gradebook.grade_class`
once with one job and once with ``jobs``. Reported: the wall time of each, the speed-up, and the grader's own
overhead per submission — its time minus the kernel's start and the notebook's cells (the part any runner of the
notebook pays): reading, planning, the graded calls of every check on the visible and hidden cases, the box.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from coursekit.exercises.gradebook import grade_class
from coursekit.validation import check_positive_int
from coursekit.viz.wording import counted

__all__ = ["ANSWERS", "grading_bench", "homework"]

_IMPORTS = "import torch\nfrom coursekit.exercises import check_softmax, check_cross_entropy"
ANSWERS = {   # kind → (softmax body, cross-entropy body)
    "right": ("    e = (x - x.amax(-1, keepdim=True)).exp()\n    return e / e.sum(-1, keepdim=True)",
              "    return -torch.log_softmax(logits, -1)[torch.arange(len(targets)), targets].mean()"),
    "wrong": ("    return x.exp() / x.exp().sum()",
              "    return -torch.log_softmax(logits, -1)[torch.arange(len(targets)), targets].sum()"),
    "stub": ('    raise NotImplementedError("Exercise 1: softmax")',
             '    raise NotImplementedError("Exercise 2: cross-entropy")'),
    "crash": ("    return x[10**6]", "    return logits.foo"),
}


def homework(softmax_body: str, ce_body: str, *, solution_markers: bool = False) -> nbformat.NotebookNode:
    """The two-exercise notebook with these function bodies (with solution markers: the instructor's version)."""
    def body(code: str) -> str:
        return f"    ### BEGIN SOLUTION\n{code}\n    ### END SOLUTION" if solution_markers else code

    return new_notebook(cells=[
        new_markdown_cell("# Homework: softmax and cross-entropy"), new_code_cell(_IMPORTS),
        new_code_cell(f"# EXERCISE 1: softmax\ndef my_softmax(x):\n{body(softmax_body)}\n\ncheck_softmax(my_softmax)"),
        new_code_cell(f"# EXERCISE 2: cross-entropy\ndef my_ce(logits, targets):\n{body(ce_body)}\n\n"
                      "check_cross_entropy(my_ce)")])


def grading_bench(n: int = 30, jobs: int = 2, log=print) -> dict:
    """Grade a class of ``n`` with 1 and with ``jobs`` jobs (module docstring); the figures as a dict."""
    check_positive_int(n, "n")
    check_positive_int(jobs, "jobs")
    kinds = list(ANSWERS)
    with tempfile.TemporaryDirectory(prefix="coursekit-bench-") as tmp:
        tmp = Path(tmp)
        (tmp / "class").mkdir()
        nbformat.write(homework(*ANSWERS["right"], solution_markers=True), tmp / "reference.ipynb")
        for i in range(n):
            nbformat.write(homework(*ANSWERS[kinds[i % len(kinds)]]), tmp / "class" / f"student{i:03d}.ipynb")
        result = {"n": n, "jobs": jobs, "cpus": os.cpu_count(), "load_average_before": os.getloadavg()[0]}
        for j in (1, jobs):
            start = time.monotonic()
            rows = grade_class(tmp / "class", tmp / f"out{j}", jobs=j, reference=tmp / "reference.ipynb",
                               regrade=True, log=lambda *_: None)
            result[f"seconds_jobs_{j}"] = time.monotonic() - start
            log(f"{counted(n, 'submission')}, {counted(j, 'job')}: {result[f'seconds_jobs_{j}']:.1f} s")
            if j == 1:
                import json

                reports = [json.loads(p.read_text()) for p in sorted((tmp / "out1" / "reports").glob("*.json"))]
                reports = [r for r in reports if "report" in r]
                overhead = [r["seconds"] - r["report"]["timings"]["kernel_start"] - r["report"]["timings"]["cells"]
                            for r in reports]
                result["overhead_seconds_mean"] = statistics.mean(overhead)
                result["overhead_seconds_max"] = max(overhead)
                result["graded_calls_seconds_mean"] = statistics.mean(r["report"]["timings"]["grading"]
                                                                      for r in reports)
                result["scores"] = sorted({(row["submission"][-3:], row["points"]) for row in rows})[:4]
        result["speedup"] = result["seconds_jobs_1"] / result[f"seconds_jobs_{jobs}"]
        result["load_average_after"] = os.getloadavg()[0]
    log(f"speed-up with {jobs} jobs: {result['speedup']:.2f}x; grader's own overhead per submission "
        f"{result['overhead_seconds_mean']:.2f} s (max {result['overhead_seconds_max']:.2f} s)")
    return result

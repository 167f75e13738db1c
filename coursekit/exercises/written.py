"""Written exercises: the markdown answers of a notebook, marked by hand against their mark schemes.

A markdown cell holds a written exercise when it has a mark scheme (``=== BEGIN MARK SCHEME ===`` …
``=== END MARK SCHEME ===``, which the student version turns into ``_Your answer here._``), still
holds that answer stub, or has a header ``**Exercise N (written).**`` (any word in the parentheses)
whose number is not a code exercise's. :func:`written_exercises` finds them in any version of a
notebook; the grader (:mod:`coursekit.exercises.grade`, which imports this module) lists them as
**to be marked by hand**, with the mark scheme when the reference notebook (the instructor's) has one.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

from coursekit.exercises.student import (
    ANSWER_STUB,
    MARK_SCHEME_BEGIN,
    MARK_SCHEME_END,
    MarkerError,
    _check_notebook,
    solution_regions,
)

__all__ = ["WrittenExercise", "written_exercises"]

# "**Exercise 5 (written).** The question…": number, kind (written, experiment, open, …), the question's line
_WRITTEN_HEADER = re.compile(r"\*\*Exercise (?P<number>\d+[a-z]?) \((?P<kind>[^)\n]+)\)\.?\*\*\.?"
                             r"[ \t]*(?P<text>[^\n]*)")


_TITLE_WIDTH = 45  # a written exercise's title is the start of its question


@dataclass(frozen=True)
class WrittenExercise:
    """A written exercise: a markdown answer, marked by hand against its mark scheme."""

    number: str  # from its header "**Exercise N (kind).**"; "" when the cell has only a mark scheme
    title: str
    cell_index: int
    mark_scheme: str | None  # the text between the markers; None where the cell has none (a student version)
    answered: bool  # False while the cell still holds the answer stub
    source: str  # the whole markdown cell


def _title(header: re.Match | None, source: str) -> str:
    """``"written: Why does the KV cache not help during training?"`` (shortened)."""
    if header is None:
        first = next((line.strip() for line in source.splitlines() if line.strip()), "")
        return textwrap.shorten(f"written: {first}", _TITLE_WIDTH, placeholder="…")
    question = re.split(r"(?<=[.?!])\s", header["text"].strip(), maxsplit=1)[0]
    return textwrap.shorten(f"{header['kind']}: {question}", _TITLE_WIDTH, placeholder="…")


def _mark_schemes(lines: list[str], where: str, notes: list[str]) -> list[tuple[int, str]]:
    """``(line index, text)`` of each mark scheme in a markdown cell; a broken marker is noted, not fatal."""
    try:
        regions = solution_regions(lines, MARK_SCHEME_BEGIN, MARK_SCHEME_END, where=where)
    except MarkerError as exc:
        notes.append(f"{exc} (its mark scheme is not shown)")
        return []
    return [(b, "\n".join(lines[b + 1:e]).strip()) for b, e in regions]


def written_exercises(nb, *, code_numbers: set[str] = frozenset(), name: str = "<notebook>",
                      notes: list[str] | None = None) -> list[WrittenExercise]:
    """The written exercises of a notebook (an instructor's, a student version or a submission).

    A markdown cell holds one when it has a mark scheme, still holds the answer stub, or has a header
    ``**Exercise N (kind).**`` whose number is not one of ``code_numbers`` (in the course, the
    markdown that introduces a code exercise writes ``**Exercise N — title.**``). A mark scheme
    belongs to the header above it.
    """
    _check_notebook(nb)
    if isinstance(code_numbers, str) or not isinstance(code_numbers, (set, frozenset, list, tuple)):
        raise TypeError(f"code_numbers must be a set of exercise numbers (str), got {type(code_numbers).__name__}")
    bad = next((n for n in code_numbers if not isinstance(n, str)), None)
    if bad is not None:
        raise TypeError(f"code_numbers must hold str exercise numbers such as '3' or '3b', got {bad!r} "
                        f"({type(bad).__name__})")
    if notes is not None and not isinstance(notes, list):
        raise TypeError(f"notes must be a list (messages are appended to it) or None, got {type(notes).__name__}")
    notes = [] if notes is None else notes
    found = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        source = cell.source
        lines = source.split("\n")
        schemes = _mark_schemes(lines, f"{name}, cell {index + 1}", notes)
        headers = [h for h in _WRITTEN_HEADER.finditer(source) if h["number"] not in code_numbers]
        stub = any(line.strip() == ANSWER_STUB for line in lines)
        if not (headers or schemes or stub):
            continue
        starts = [source.count("\n", 0, h.start()) for h in headers] or [0]
        for k, header in enumerate(headers or [None]):
            end = starts[k + 1] if k + 1 < len(starts) else len(lines)
            own = [text for at, text in schemes if (k == 0 or at >= starts[k]) and at < end]
            found.append(WrittenExercise(header["number"] if header else "", _title(header, source), index,
                                         "\n\n".join(own) if own else None, not stub, source))
    return found

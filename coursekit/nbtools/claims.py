"""The claims check: every number a notebook's prose states is shown by that notebook.

Markdown says what the outputs show ("the Transformer reaches 43.9 BLEU"). When code or a committed model
changes, the outputs are re-executed and the prose is not — that is how a course starts to contradict itself.
:func:`claim_problems` reads an *executed* notebook and lists:

* **unbacked numbers** — every decimal number (``43.9``, ``0.749``, ``1.5e-4``), every number written with
  thousands separators (``133,694``) or a size suffix (``1.6M``, ``600k``), every percentage (``86 %``) and
  every duration (``70 s``, ``57 min``) in a markdown cell must be found, at the precision the prose prints
  it, among the numbers of the notebook's outputs, of its code (a setting the prose restates: "dropout
  0.1"), or of a committed report it reads (a JSON file in ``data/<name>/`` whose folder name the code
  quotes or imports, e.g. ``model_dir("bert")`` or ``from coursekit.bert import …``). A percentage may
  also be a printed fraction (86 % ↔ 0.862), a duration in minutes a printed number of seconds.
* **hidden headings** — a comment line in a code cell that reads like a markdown heading
  (``# ## 6. Which noise?``): the ``.py`` twin lacks its ``# %% [markdown]`` marker, so the heading and its
  introduction are shown to readers as code comments.
* **empty markdown cells**.
* **literal verdicts** — a ``print`` whose string itself says ``: True`` or ``= False`` ("reloaded model gives
  identical outputs: True"): the output then shows a sentence, not a result; print the computed value.
* **blank outputs** — a code cell whose printed text starts with an empty line or is only whitespace (a stray
  ``print()``, a library's progress bar ending in bare newlines).
* **universal words without an assert** — a sentence saying "always", "never", "beats" or "every … than" (a
  comparison over all cases) in a markdown cell whose section (heading to heading) and neighbouring code cells
  hold no ``assert``: such a sentence says more than one output shows unless the code checks it. A summary
  sentence names where its claim is checked ("asserted in §5"); the learning goals (cell 0) are not claims.

Not claims, so not checked: bounds and targets (a number right after ``≤ ≥ < >``, "at most", "at least",
"under", "within": a budget such as "quick ≤ 45 s" is a promise the tests time, not a measurement); numbers
right after ``§``, ``Figure``, ``Fig.``, ``Table``, ``Eq.``, ``Section``,
``Algorithm`` or ``Ex`` (references); numbers in a sentence that cites a source (``et al.``, a year such as
2017, or the words "paper", "published") — figures quoted from the literature; the Exercises section
a written exercise (a cell that starts with ``**Exercise``) and mark schemes (questions and model answers,
not results); and any markdown cell holding
``<!-- claims: cited -->`` — the explicit mark for a quoted figure that the rules above miss (a table copied
from a paper). Each problem names the cell, the number and its context, so a stale sentence is found at once.
"""

from __future__ import annotations

import ast
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

from coursekit.validation import check_count

__all__ = ["Claim", "CITED_MARK", "prose_numbers", "printed_numbers", "claim_problems"]

CITED_MARK = "<!-- claims: cited -->"

_SUFFIX = {"k": 1e3, "M": 1e6, "B": 1e9}
# One number of prose: sci notation | thousands separators | decimal; then an optional size suffix, percent or
# duration unit. A number glued to letters or to a dot before it (v1.2, §3.1 handled below) is not taken.
_PROSE = re.compile(
    r"(?<![\w.,/^-])(?P<num>\d+(?:\.\d+)?e[-+]?\d+|\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+|\d+)"
    r"(?:(?P<suffix>\s?[kMB])(?![\w])|(?P<pct>\s?%)|(?P<unit>\s(?:s|min|seconds|minutes)\b))?"
    r"(?![\w.]\d)(?![\w])")
_REFERENCE_BEFORE = re.compile(r"(?:§|[≤≥<>]\s?|\b(?:at most|at least|under|over|within|Figure|Fig\.|Table|"
                               r"Eq\.|Eqs\.|Section|Algorithm|Ex|Exercise|cell|notebook|Notebook|Chapter)\s?)$")
_CITES = re.compile(r"et al\.|\b(?:19|20)\d\d\b|\bpaper'?s?\b|\bpublished\b")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[A-Z(*_\"'])|\n\s*\n|\n(?=\s*[-*|#]|\s*\d+\.)")
_PRINTED = re.compile(r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e[-+]?\d+)?")
_HIDDEN_HEADING = re.compile(r"^#[ \t]*#{1,4}[ \t]+\S", re.MULTILINE)
_LITERAL_VERDICT = re.compile(r"[:=]\s*(?:True|False)\b")
_UNIVERSAL = re.compile(r"\b(?:always|never|beats?|every\b[^.;]*\bthan)\b", re.IGNORECASE)
_CODE_SPAN = re.compile(r"`[^`]*`|\$[^$]*\$")
_MARK_SCHEME = re.compile(r"=== BEGIN MARK SCHEME.*?(?:=== END MARK SCHEME ===|\Z)", re.DOTALL)


@dataclass(frozen=True)
class Claim:
    """A number of the prose: its text, value, printed decimals, kind and where it stands."""

    text: str           # as written, e.g. "43.9", "133,694", "86 %", "1.6M"
    value: float        # the number itself (86 % → 86, 1.6M → 1.6e6, 70 s → 70)
    decimals: int       # how precisely the prose prints it (in its own unit)
    kind: str           # "number", "percent", "minutes", "seconds", "scaled", "sci"
    cell: int
    context: str
    scale: float = 1.0  # 1e6 for "1.6M": the unit the decimals count in


def _decimals(num: str) -> int:
    mantissa = num.split("e")[0]
    return len(mantissa.split(".")[1]) if "." in mantissa else 0


def prose_numbers(text: str, cell: int = 0) -> list[Claim]:
    """The checkable numbers of a markdown text (see the module doc for what counts and what is exempt)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    check_count(cell, "cell")
    text = _MARK_SCHEME.sub(" ", text)
    claims = []
    start = 0
    for sentence_end in [m.end() for m in _SENTENCE_END.finditer(text)] + [len(text)]:
        sentence = text[start:sentence_end]
        offset, start = start, sentence_end
        if _CITES.search(sentence):
            continue
        for m in _PROSE.finditer(sentence):
            num = m.group("num")
            if _REFERENCE_BEFORE.search(sentence[:m.start()]):
                continue
            if "e" in num:
                kind = "sci"
            elif m.group("pct"):
                kind = "percent"
            elif m.group("unit"):
                kind = "minutes" if m.group("unit").strip().startswith("min") else "seconds"
            elif m.group("suffix"):
                kind = "scaled"
            elif "," in num or "." in num:
                kind = "number"
            else:
                continue                          # a bare small integer ("3 layers") is not checked
            scale = _SUFFIX[m.group("suffix").strip()] if kind == "scaled" else 1.0
            context = text[max(0, offset + m.start() - 60):offset + m.end() + 40].replace("\n", " ")
            claims.append(Claim(m.group(0).strip(), float(num.replace(",", "")) * scale, _decimals(num), kind, cell,
                                context.strip(), scale))
    return claims


def printed_numbers(text: str) -> list[float]:
    """Every number printed in ``text`` (outputs, code, a JSON report), thousands separators removed."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    values = []
    for m in _PRINTED.finditer(text):
        try:
            values.append(float(m.group(0).replace(",", "")))
        except ValueError:                                # pragma: no cover - the pattern only matches numbers
            continue
    return values


def _same(x: float, claim: Claim) -> bool:
    """Whether the printed ``x`` is the claim's number at the precision the prose prints it."""
    if not math.isfinite(x):
        return False
    if claim.kind == "sci":
        return math.isclose(x, claim.value, rel_tol=1e-9)
    candidates = [x, abs(x)]                         # "falls by 0.157" ↔ a printed difference of -0.157
    if claim.kind == "percent":
        candidates.append(100 * x)                   # 86 % ↔ a printed fraction 0.862
    if claim.kind == "minutes":
        candidates.append(x / 60)                    # 57 min ↔ printed seconds
    if claim.kind == "scaled":
        candidates.append(x * claim.scale)           # 1.6M ↔ a printed "1.6" (M) as well as 1,612,345
    want = round(claim.value / claim.scale, claim.decimals)
    return any(round(c / claim.scale, claim.decimals) == want for c in candidates)


def _output_text(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            parts.append(out.get("text", ""))
        for key in ("text/plain", "text/markdown", "text/html", "text/latex"):
            value = out.get("data", {}).get(key)
            if value:
                parts.append(value if isinstance(value, str) else "".join(value))
    return "\n".join(parts)


def _reports(code: str, data_dir: Path) -> str:
    """The committed JSON reports in the folders of ``data_dir`` (at any depth) whose name the code quotes or
    imports as a ``coursekit`` package (``coursekit.bert`` reads ``data/bert/``)."""
    texts = []
    if data_dir.is_dir():
        for folder in sorted(p for p in data_dir.rglob("*") if p.is_dir()):
            name = re.escape(folder.name)
            if re.search(rf"[\"'/]{name}[\"'/]|\bcoursekit\.{name}\b|from coursekit import [^\n]*\b{name}\b", code):
                texts += [p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.json"))]
    return "\n".join(texts)


def _exercise_cells(nb) -> set[int]:
    """Markdown cells of the Exercises section (from its heading to the next heading of its level or above)."""
    inside, level, cells = False, 0, set()
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        heading = re.match(r"(#{1,6})\s+(.*)", cell.source.lstrip())
        if heading:
            if "Exercise" in heading.group(2) and len(heading.group(1)) <= 3:
                inside, level = True, len(heading.group(1))
            elif inside and len(heading.group(1)) <= level:
                inside = False
        if inside:
            cells.add(i)
    return cells


def _literal_verdicts(source: str) -> list[str]:
    """The string pieces of ``print(...)`` calls that spell a verdict themselves (``"…: True"``)."""
    try:
        tree = ast.parse("\n".join("" if line.lstrip().startswith(("%", "!")) else line
                                    for line in source.splitlines()))
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            for arg in node.args:
                pieces = arg.values if isinstance(arg, ast.JoinedStr) else [arg]
                found += [p.value for p in pieces if isinstance(p, ast.Constant) and isinstance(p.value, str)
                          and _LITERAL_VERDICT.search(p.value)]
    return found


def _stream_text(cell) -> str:
    return "".join(out.get("text", "") for out in cell.get("outputs", []) if out.get("output_type") == "stream")


def _universal_sentences(markdown: str) -> list[str]:
    text = _CODE_SPAN.sub("", _MARK_SCHEME.sub("", markdown))
    return [s.strip() for s in _SENTENCE_END.split(text)
            if _UNIVERSAL.search(s) and not _CITES.search(s) and not re.search(r"\b(?:asserted|checked)\b", s)]


def _asserts_around(nb, index: int) -> bool:
    """Whether a code cell of markdown cell ``index``'s section (from the heading above it to the next one), or
    the code cell just before or after it, holds an ``assert``."""
    def heading(i: int) -> bool:
        return nb.cells[i].cell_type == "markdown" and bool(re.match(r"\s*#{1,6}\s", nb.cells[i].source))

    start = next((i for i in range(index, -1, -1) if heading(i)), 0)
    end = next((i for i in range(index + 1, len(nb.cells)) if heading(i)), len(nb.cells))
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    near = {i for i in code if start <= i < end} | set([i for i in code if i < index][-1:]) | set(
        [i for i in code if i > index][:1])
    return any(re.search(r"^\s*assert\b", nb.cells[i].source, re.MULTILINE) for i in near)


def claim_problems(notebook: str | Path | nbformat.NotebookNode, *, data_dir: str | Path | None = None) -> list[str]:
    """Every unbacked number, hidden heading and empty markdown cell of an executed notebook (empty = clean).

    ``notebook``: an ``.ipynb`` path or a notebook object; ``data_dir``: where the committed reports live
    (default: the ``data/`` folder of the repository the notebook sits in, if any).
    """
    if data_dir is not None and not isinstance(data_dir, (str, Path)):
        raise TypeError(f"data_dir must be a folder path (str or Path) or None, got {type(data_dir).__name__}")
    if isinstance(notebook, (str, Path)):
        path = Path(notebook)
        if path.suffix != ".ipynb":
            raise ValueError(f"the claims check reads an executed .ipynb (its outputs back the prose), got {path}")
        if not path.is_file():
            raise FileNotFoundError(f"no notebook at {path}")
        try:
            nb = nbformat.read(str(path), as_version=4)
        except (ValueError, UnicodeDecodeError) as exc:             # nbformat's NotJSONError is a ValueError
            raise ValueError(f"{path} is not a readable notebook ({exc})") from None
        data_dir = Path(data_dir) if data_dir is not None else path.resolve().parent.parent / "data"
    elif isinstance(notebook, nbformat.NotebookNode):
        nb = notebook
        data_dir = Path(data_dir) if data_dir is not None else Path("/nonexistent")
    else:
        raise TypeError(f"notebook must be an .ipynb path or an nbformat notebook, got {type(notebook).__name__}")
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    shown = printed_numbers("\n".join(_output_text(c) for c in nb.cells if c.cell_type == "code"))
    shown += printed_numbers(code) + printed_numbers(_reports(code, data_dir))
    exercises = _exercise_cells(nb)
    problems = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            for m in _HIDDEN_HEADING.finditer(cell.source):
                line = cell.source[m.start():].split("\n", 1)[0]
                problems.append(f"cell {i}: a heading hidden in a code cell: {line!r} (make it a markdown cell)")
            for text in _literal_verdicts(cell.source):
                problems.append(f"cell {i}: prints a verdict written into its string, {text!r}: print the computed "
                                "value instead")
            printed = _stream_text(cell)
            if printed and (not printed.strip() or printed.startswith("\n")):
                problems.append(f"cell {i}: its printed output starts with an empty line or is only whitespace")
            continue
        if cell.cell_type != "markdown":
            continue
        if not cell.source.strip():
            problems.append(f"cell {i}: an empty markdown cell")
            continue
        if i in exercises or CITED_MARK in cell.source or cell.source.lstrip().startswith("**Exercise"):
            continue
        if i > 0 and not _asserts_around(nb, i):      # cell 0: the title and learning goals
            for sentence in _universal_sentences(cell.source):
                problems.append(f"cell {i}: a universal claim with no assert in the code cells around it: "
                                f"{sentence[:160]!r}")
        for claim in prose_numbers(cell.source, i):
            if not any(_same(x, claim) for x in shown):
                problems.append(f"cell {i}: {claim.text!r} is in no output, code or report of this notebook: "
                                f"…{claim.context}…")
    return problems


def report_json(problems_by_notebook: dict[str, list[str]]) -> str:
    """The problems of several notebooks as one JSON object (for CI logs)."""
    if not isinstance(problems_by_notebook, dict):
        raise TypeError(f"problems_by_notebook must be a dict of notebook name -> list of problems, got "
                        f"{type(problems_by_notebook).__name__}")
    return json.dumps(problems_by_notebook, indent=1, ensure_ascii=False)

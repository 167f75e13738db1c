"""docs/TEACHING.md says what the repository says.

* Every runtime the guide states equals the README's runtime table (written by
  ``python -m coursekit.nbtools table``): the guide's runtime table row by row, its totals as the sums,
  and each notebook section's "class N s, quick M s".
* Every notebook 00–12, and every notebook that exists, has a section ``### NN — title``.
* Every exercise a section lists carries its title exactly as the notebook's ``.py`` twin writes it
  (``# EXERCISE N: title`` or ``**Exercise N (kind).**``), every exercise of the notebook is listed, and
  every written or open one has a mark scheme in the guide.
* Every section cited as §N “title” (› “subsection”) exists under that number and title.
"""

from __future__ import annotations

import re

import pytest
from helpers import ROOT

from coursekit.nbtools.execution import TABLE_END, TABLE_START

REPO = ROOT
GUIDE = REPO / "docs" / "TEACHING.md"
README = REPO / "README.md"
NOTEBOOKS = REPO / "notebooks"

GUIDE_TABLE = "<!-- runtimes:"                                     # the comment above the guide's runtime table
SECTION = re.compile(r"^### (\d\d) — (.+)$", re.M)
HEADING = re.compile(r"^#{1,3} ", re.M)                             # where a section of the guide ends
INLINE_RUNTIME = re.compile(r"\b(class|quick) (\d[\d,]*) s\b")
PROFILE_RUNTIME = re.compile(r"\b(\d[\d,]*) s (?:in|with) the (class|quick) profile\b")
SECTION_REF = re.compile(r"(?:\b(\d\d) )?§(\d+) “([^”]+)”(?: › “([^”]+)”)?")
CODE_EXERCISE = re.compile(r"^# EXERCISE (\d+): (.+?)\s*$", re.M)
WRITTEN_EXERCISE = re.compile(r"\*\*(Exercise (\d+) \([^)\n]+\))\.\*\*")


def _seconds(cell: str) -> int | None:
    """``"1,234 s"`` → 1234, ``"—"`` → None."""
    cell = cell.strip()
    if cell in ("—", "-", ""):
        return None
    match = re.fullmatch(r"(\d[\d,]*) s", cell)
    assert match, f"not a runtime: {cell!r}"
    return int(match[1].replace(",", ""))


def _shown(seconds: int | None) -> str:
    return "—" if seconds is None else f"{seconds:,} s"


def _cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def readme_runtimes() -> dict[str, dict[str, int | None]]:
    """{"09": {"class": 248, "quick": 25}, …} from the README's runtime table: the class column is
    "class (latest timing)", the one the README says to plan a lesson with."""
    text = README.read_text(encoding="utf-8")
    assert TABLE_START in text and TABLE_END in text, "README.md has no runtime table markers"
    lines = [line for line in text.split(TABLE_START, 1)[1].split(TABLE_END, 1)[0].splitlines() if line.strip()]
    header = _cells(lines[0])
    quick, klass = header.index("quick"), header.index("class (latest timing)")
    runtimes = {}
    for line in lines[2:]:
        cells = _cells(line)
        number = re.fullmatch(r"`(\d\d)_\w+\.ipynb`", cells[0])
        assert number, f"unexpected row in the README runtime table: {line}"
        runtimes[number[1]] = {"class": _seconds(cells[klass]), "quick": _seconds(cells[quick])}
    return runtimes


def guide_text() -> str:
    return GUIDE.read_text(encoding="utf-8")


def guide_sections(text: str) -> dict[str, tuple[str, int, int]]:
    """{"07": (title, start, end)}: each ``### NN — title`` section, up to the next heading of level ≤ 3."""
    sections = {}
    for match in SECTION.finditer(text):
        following = HEADING.search(text, match.end())
        sections[match[1]] = (match[2].strip(), match.start(), following.start() if following else len(text))
    return sections


def notebook_source(number: str) -> str:
    paths = sorted(NOTEBOOKS.glob(f"{number}_*.py"))
    assert len(paths) == 1, f"expected one notebooks/{number}_*.py, found {[p.name for p in paths]}"
    return paths[0].read_text(encoding="utf-8")


def exercise_rows(section: str) -> list[tuple[str, str]]:
    """(number, title) of each row of the section's exercise table (header ``| # | title …``)."""
    rows, in_table = [], False
    for line in section.splitlines():
        if line.startswith("| # | title"):
            in_table = True
            continue
        if in_table:
            if not line.startswith("|"):
                break
            cells = _cells(line)
            if set(cells[0]) <= set("-: "):
                continue
            rows.append((cells[0], cells[1].replace("\\|", "|")))
    return rows


def test_the_guides_runtime_table_is_the_readmes():
    readme = readme_runtimes()
    text = guide_text()
    assert GUIDE_TABLE in text, f"the runtime table of {GUIDE.name} must follow a comment starting {GUIDE_TABLE!r}"
    lines = text.split(GUIDE_TABLE, 1)[1].splitlines()[1:]
    table = []
    for line in lines:
        if not line.startswith("|"):
            break
        table.append(_cells(line))
    header = table[0]
    klass, quick = header.index("class"), header.index("quick")
    rows, totals = {}, None
    for cells in table[2:]:
        if cells[0] == "total":
            totals = cells
        else:
            rows[cells[0]] = cells
    wrong = [f"{nb}: guide says class {cells[klass]}, quick {cells[quick]}; the README says class "
             f"{_shown(readme[nb]['class'])}, quick {_shown(readme[nb]['quick'])}"
             for nb, cells in rows.items() if nb in readme
             and (_seconds(cells[klass]), _seconds(cells[quick])) != (readme[nb]["class"], readme[nb]["quick"])]
    assert not wrong, "runtimes in docs/TEACHING.md differ from the README's runtime table:\n" + "\n".join(wrong)
    missing = [f"| {nb} | … | {_shown(readme[nb]['class'])} | {_shown(readme[nb]['quick'])} |"
               for nb in sorted(set(readme) - set(rows))]
    assert set(rows) == set(readme), (f"the guide's runtime table lists {sorted(rows)}, the README's "
                                      f"{sorted(readme)}; rows to add: {missing or 'none'}")
    assert totals is not None, "the guide's runtime table needs a 'total' row"
    for profile, column in (("class", klass), ("quick", quick)):
        want = sum(r[profile] or 0 for r in readme.values())
        assert _seconds(totals[column]) == want, (f"the guide's total for {profile} is {totals[column]}; the "
                                                  f"rows add up to {_shown(want)}")


def test_every_runtime_in_the_guide_is_the_readmes():
    readme = readme_runtimes()
    text = guide_text()
    sections = guide_sections(text)

    def section_at(pos: int) -> str | None:
        return next((nb for nb, (_, start, end) in sections.items() if start <= pos < end), None)

    wrong = []
    mentions = [(m.start(), m[1], m[2], m[0]) for m in INLINE_RUNTIME.finditer(text)]
    mentions += [(m.start(), m[2], m[1], m[0]) for m in PROFILE_RUNTIME.finditer(text)]
    for pos, profile, seconds, said in mentions:
        nb = section_at(pos)
        line = text.count("\n", 0, pos) + 1
        if nb is None:
            wrong.append(f"line {line}: {said!r} is outside a notebook section: state runtimes only in the "
                         "runtime table or in a notebook's section")
        elif nb not in readme:
            wrong.append(f"line {line}: {said!r} in the section of {nb}, which the README table does not time")
        elif int(seconds.replace(",", "")) != readme[nb][profile]:
            wrong.append(f"line {line}: {said!r} in the section of {nb}; the README says "
                         f"{profile} {_shown(readme[nb][profile])}")
    assert not wrong, "\n".join(wrong)


def test_every_notebook_has_a_section():
    sections = guide_sections(guide_text())
    present = {p.name[:2] for p in NOTEBOOKS.glob("[0-9][0-9]_*.py")}
    missing = sorted(({f"{i:02d}" for i in range(13)} | present) - set(sections))
    assert not missing, f"docs/TEACHING.md has no '### NN — title' section for notebooks {missing}"


NUMBERS = sorted({f"{i:02d}" for i in range(13)} | {p.name[:2] for p in NOTEBOOKS.glob("[0-9][0-9]_*.py")})


@pytest.mark.parametrize("number", NUMBERS)
def test_each_section_matches_its_notebook(number):
    text = guide_text()
    sections = guide_sections(text)
    if number not in sections:
        pytest.skip(f"no section for {number} (test_every_notebook_has_a_section reports it)")
    title, start, end = sections[number]
    section = text[start:end]
    rows = exercise_rows(section)
    if not rows:                                   # a placeholder: its guide lands with the notebook
        assert "lands with the notebook" in section, (f"the section of {number} lists no exercises; "
                                                      "a placeholder must say its guide lands with the notebook")
        return
    source = notebook_source(number)
    h1 = re.search(r"^# # (\d\d) — (.+)$", source, re.M)
    assert h1 and h1[2].strip() == title, f"section '### {number} — {title}' vs the notebook's title {h1 and h1[0]!r}"

    readme = readme_runtimes()
    if number in readme:
        for profile in ("class", "quick"):
            assert f"{profile} {_shown(readme[number][profile])}" in section, (
                f"the section of {number} must state its runtime as in the README: "
                f"class {_shown(readme[number]['class'])}, quick {_shown(readme[number]['quick'])}")

    code = {n: t for n, t in CODE_EXERCISE.findall(source)}
    written = {n: label for label, n in WRITTEN_EXERCISE.findall(source) if n not in code}
    wrong = []
    for n, listed in rows:
        if listed.startswith("Exercise "):
            if written.get(n) != listed:
                wrong.append(f"Ex {n}: {listed!r}, but the notebook's written exercise {n} is {written.get(n)!r}")
        elif code.get(n) != listed:
            wrong.append(f"Ex {n}: {listed!r}, but the notebook's title is {code.get(n)!r}")
    assert not wrong, f"exercise titles in the section of {number} differ from the notebook:\n" + "\n".join(wrong)
    assert sorted((n for n, _ in rows), key=int) == sorted([*code, *written], key=int), (
        f"the section of {number} lists exercises {[n for n, _ in rows]}; the notebook has code exercises "
        f"{sorted(code)} and written ones {sorted(written)}")
    missing = [label for label in written.values() if f"**Mark scheme: {label}.**" not in section]
    assert not missing, f"the section of {number} has no '**Mark scheme: …**' paragraph for {missing}"


def test_cited_sections_exist():
    text = guide_text()
    sections = guide_sections(text)
    wrong = []
    for match in SECTION_REF.finditer(text):
        number = match[1] or next((nb for nb, (_, start, end) in sections.items() if start <= match.start() < end),
                                  None)
        line = text.count("\n", 0, match.start()) + 1
        if number is None:
            wrong.append(f"line {line}: {match[0]!r} names no notebook (write 'NN §N “title”' outside a section)")
            continue
        source = notebook_source(number)
        title, sub = (" ".join(t.split()) if t else t for t in (match[3], match[4]))     # a title may wrap a line
        heading = re.search(rf"^# ## {match[2]}\. {re.escape(title)}$", source, re.M)
        if heading is None:
            found = re.search(rf"^# ## {match[2]}\. .*$", source, re.M)
            wrong.append(f"line {line}: notebook {number} has no '## {match[2]}. {title}' "
                         f"(its §{match[2]} is {found[0][4:] if found else 'missing'!r})")
        elif sub:
            following = re.search(r"^# ## ", source[heading.end():], re.M)
            body = source[heading.end():(heading.end() + following.start()) if following else len(source)]
            if not re.search(rf"^# ### {re.escape(sub)}$", body, re.M):
                wrong.append(f"line {line}: notebook {number} §{match[2]} has no subsection '### {sub}'")
    assert not wrong, "sections cited in docs/TEACHING.md that the notebooks do not have:\n" + "\n".join(wrong)

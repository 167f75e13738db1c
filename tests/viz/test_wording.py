"""coursekit.viz.wording.counted: the noun agrees with the count, with thousands separators; and no string of the
package leaves the plural to the reader."""

from __future__ import annotations

import re
import tokenize
from pathlib import Path

import pytest

import coursekit
from coursekit.viz.wording import counted, noun


@pytest.mark.parametrize(("n", "word", "plural", "expected"), [
    (0, "file", None, "0 files"),
    (1, "thread", None, "1 thread"),
    (2, "thread", None, "2 threads"),
    (1500, "pair", None, "1,500 pairs"),
    (1, "child", "children", "1 child"),
    (3, "child", "children", "3 children"),
    (2, "CUDA device", None, "2 CUDA devices"),
])
def test_counted(n, word, plural, expected):
    assert counted(n, word, plural) == expected
    assert noun(n, word, plural) == expected.split(" ", 1)[1]          # the same noun, without the count


def test_no_generic_plurals_in_the_package():
    """A message such as "1 thread" + "(s)" leaves the grammar to the reader: the package says it with ``counted``.
    Only the text of string literals is searched (an f-string's ``{…}`` fields and ``…`` code spans are code)."""
    offenders = []
    for path in sorted(Path(coursekit.__file__).parent.rglob("*.py")):
        with open(path, "rb") as f:
            for token in tokenize.tokenize(f.readline):
                if token.type != tokenize.STRING:
                    continue
                text = re.sub(r"``[^`]*``", "", re.sub(r"\{[^{}]*\}", "", token.string))
                if re.search(r"[a-z]\(s\)", text):
                    offenders.append(f"{path.name}:{token.start[0]}: {token.string[:80]}")
    assert not offenders, offenders

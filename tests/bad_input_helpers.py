"""The bad-input sweep's machinery: a table row per bad call, and what every row must show.

A row names the public function or class it calls (``target``), the call itself (a lambda) and the error
it must give: the exception type and a regex the message must match — the message has to name what was
expected and what arrived. The error must be *raised by coursekit* (the innermost frame of its traceback
in the package), not by torch or Python deep inside: that is what "no raw error" means here. A row
with ``returns=`` instead checks a documented convention (e.g. a fully masked attention row gives zeros).

``tests/test_bad_inputs_*.py`` hold the tables; ``tests/test_bad_inputs_coverage.py`` checks that every
public function and class of the package has at least one row or a stated reason why it has none.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE_DIR = Path(__file__).resolve().parents[1] / "coursekit"


@dataclass
class Bad:
    label: str                                   # what is wrong, e.g. "float ids"
    target: object                               # the public function/class called
    call: Callable[[], object]
    error: type[BaseException] | tuple = (ValueError, TypeError)
    match: str = ""                              # regex the message must match
    returns: Callable[[object], bool] | None = None   # a convention instead of an error

    @property
    def id(self) -> str:
        name = getattr(self.target, "__qualname__", repr(self.target))
        return f"{name}: {self.label}"


def ids(rows: list[Bad]) -> list[str]:
    return [r.id for r in rows]


def check_bad_call(row: Bad) -> None:
    """The call raises ``row.error`` from inside coursekit with a message matching ``row.match``."""
    if row.returns is not None:
        value = row.call()
        assert row.returns(value), f"{row.id}: the documented convention does not hold, got {value!r}"
        return
    with pytest.raises(row.error) as info:
        row.call()
    message = str(info.value)
    assert re.search(row.match, message, flags=re.S), f"{row.id}: message {message!r} does not match {row.match!r}"
    frames = traceback.extract_tb(info.value.__traceback__)
    innermost = Path(frames[-1].filename).resolve()
    assert PACKAGE_DIR in innermost.parents, (
        f"{row.id}: {type(info.value).__name__} raised in {innermost.name}:{frames[-1].lineno}, not by coursekit "
        f"(a raw error from inside a library): {message[:200]}")


# every table module registers its rows here so that the coverage test can see them
REGISTRY: list[Bad] = []


def register(rows: list[Bad]) -> list[Bad]:
    REGISTRY.extend(rows)
    return rows

"""The bad-input sweep's machinery: a table row per bad call, what every row must show, and the small
builders the tables share.

A row names the public function or class it calls (``target``), the call itself (a lambda) and the error
it must give: the exception type and a regex the message must match — the message has to name what was
expected and what arrived. The error must be *raised by coursekit* (the innermost frame of its traceback
in the package), not by torch or Python deep inside: that is what "no raw error" means here. A row
with ``returns=`` instead checks a documented convention (e.g. a fully masked attention row gives zeros).

Each folder of ``tests/`` holds the table of its part of the package in ``test_bad_inputs.py`` (the
top-level modules' table is ``tests/test_bad_inputs.py``): a list ``ROWS``, an optional ``EXEMPT`` dict
(public names with nothing to get wrong, and why) and ``test_bad_call = bad_call_test(ROWS)``.
``tests/test_bad_inputs_coverage.py`` checks that every public function and class of the package has at
least one row or a stated reason why it has none.
"""

from __future__ import annotations

import os
import re
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import pytest
import torch

from helpers import ROOT

PACKAGE_DIR = ROOT / "coursekit"


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


def bad_call_test(rows: list[Bad]):
    """A table's test: ``test_bad_call = bad_call_test(ROWS)`` runs :func:`check_bad_call` once per row."""

    @pytest.mark.parametrize("row", rows, ids=ids(rows))
    def test_bad_call(row):
        check_bad_call(row)

    return test_bad_call


# ---------------------------------------------------------------------------------------- shared builders

f16, f32, f64, i64 = torch.float16, torch.float32, torch.float64, torch.long
NAN = float("nan")
_TMP = tempfile.TemporaryDirectory(prefix="coursekit-bad-inputs-")


def tmp() -> Path:
    """A fresh empty folder (removed when the test session ends)."""
    return Path(tempfile.mkdtemp(dir=_TMP.name))


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def randn(*shape, dtype=f32):
    return torch.randn(*shape, dtype=dtype)


def ones_bool(*shape):
    return torch.ones(*shape, dtype=torch.bool)


def with_env(call, **env):
    """Run ``call()`` with environment variables set (restored afterwards)."""
    with mock.patch.dict(os.environ, env):
        return call()


def text_file(name: str, content: str) -> Path:
    path = tmp() / name
    path.write_text(content)
    return path


def cut(path: Path, n: int = 5) -> None:
    """Truncate a file by its last ``n`` bytes."""
    path.write_bytes(path.read_bytes()[:-n])

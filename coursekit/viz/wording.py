"""Counts in words, for what the course prints: "1 thread", "2 threads", "1,000 pairs".

A printed "1 thread" followed by "(s)" leaves the grammar to the reader; :func:`counted` does it once, with
the thousands separators the notebooks use elsewhere. It knows no irregular plurals: pass ``plural`` for those.
"""

from __future__ import annotations

import numbers


def noun(n: int, singular: str, plural: str | None = None) -> str:
    """The noun in the number that ``n`` asks for, without the count: ``noun(1, "split")`` → "split",
    ``noun(2, "split")`` → "splits"; ``plural`` overrides the default ``singular + "s"``."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"n must be an int (a count), got {type(n).__name__} {n!r}")
    if n < 0:
        raise ValueError(f"n must be a count (≥ 0), got {n}")
    for name, word in (("singular", singular), ("plural", plural if plural is not None else singular)):
        if not isinstance(word, str) or not word.strip():
            raise TypeError(f"{name} must be a non-empty str (the noun), got {type(word).__name__} {word!r}")
    return singular if n == 1 else (plural or singular + "s")


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """``n`` and the noun in the right number: ``counted(1, "thread")`` → "1 thread", ``counted(2, "thread")``
    → "2 threads", ``counted(1500, "pair")`` → "1,500 pairs"; ``plural`` overrides the default ``singular + "s"``."""
    word = noun(n, singular, plural)                  # checks the arguments
    return f"{int(n):,} {word}"

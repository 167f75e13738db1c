"""Assertions shared by the tests of every exercise check (tests/test_exercises_*.py)."""

from coursekit.exercises.core import FAILED


def passes(check, fn):
    """The check accepts ``fn``; return its result."""
    result = check(fn, verbose=False)
    assert result.passed, result
    return result


def fails_with(check, fn, *hint_words):
    """The check rejects ``fn`` with a message containing every one of ``hint_words``."""
    result = check(fn, verbose=False)
    assert result.status == FAILED, result
    for words in hint_words:
        assert words in result.message, result.message
    return result


def stub(*args, **kwargs):
    """What the student version of an exercise holds before the student writes anything."""
    raise NotImplementedError("Exercise 1: …")

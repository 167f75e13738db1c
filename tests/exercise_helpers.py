"""Assertions shared by the tests of every exercise check (tests/test_exercises_*.py)."""

from coursekit.exercises.core import FAILED, _resolve


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


DELEGATED = "asks you to write this yourself"


def refuses_delegation(check, fn, dotted=None, *, correct=False):
    """The check rejects ``fn``, which calls a reference the exercise asks the student to re-create
    (``check.reimplements``), saying so — and naming ``dotted`` when given; afterwards every one of those
    references is back in its place. ``correct=True``: ``fn`` computes the right answer, so the check
    without its forbidden references (``check.__wrapped__``) accepts it — only the delegation fails it."""
    before = {name: _resolve(name)[2] for name in check.reimplements}
    result = fails_with(check, fn, DELEGATED, *([f"calls {dotted} "] if dotted else []))
    moved = [name for name, original in before.items() if _resolve(name)[2] is not original]
    assert not moved, f"not restored after the check: {moved}"
    if correct:
        check.__wrapped__(fn)  # raises CheckFailed if fn were wrong anyway
    return result


def wrong_solution_table():
    """``(WRONG, wrong)``: a table ``WRONG[(check name, mistake)] = (function, words)`` and a decorator
    ``@wrong(check, *words)`` that adds the function under its own name; ``words`` are what the failure
    message must hold besides the failing input's name."""
    table: dict[tuple[str, str], tuple] = {}

    def wrong(check, *words):
        def register(fn):
            table[(check, fn.__name__)] = (fn, words)
            return fn
        return register

    return table, wrong

"""The machinery behind every exercise check: results, failures, hints for typical mistakes.

A check is written as a plain function that raises :class:`CheckFailed` with a specific message,
decorated with :func:`exercise_check`::

    @exercise_check("scaled dot-product attention")
    def check_scaled_dot_product_attention(student_fn):
        for case, (q, k, v, mask) in cases():
            got = run_student(student_fn, case, q, k, v, mask)
            want = reference(q, k, v, mask)
            expect_close(got, want, case=case, mistakes={
                "softmax over the wrong axis (use dim=-1, over the keys)": wrong_axis(q, k, v, mask),
                "missing the 1/sqrt(d_k) scaling": unscaled(q, k, v, mask),
            })

The decorator turns the outcome into a :class:`CheckResult` (passed / failed / not attempted) and
prints a friendly message: the student's immediate (formative) feedback. Nothing a check says inside a
notebook is ever read by the grader: ``python -m coursekit.exercises grade`` runs the same check
functions in its own process, on the visible cases and on hidden variants of them (:func:`case_variant`),
calling the student's function in the notebook's kernel through :mod:`coursekit.exercises.remote`.
"""

from __future__ import annotations

import contextlib
import functools
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

from coursekit.validation import check_choice, check_positive_float

PASSED, FAILED, NOT_ATTEMPTED = "passed", "failed", "not attempted"


@dataclass(frozen=True)
class CheckResult:
    """Outcome of one check: what an autograder collects."""

    check: str
    status: str  # "passed" | "failed" | "not attempted"
    message: str
    hint: str | None = field(default=None, compare=False, repr=False)  # the typical mistake recognised, if any

    def __post_init__(self) -> None:
        for name in ("check", "message"):
            _check_str(getattr(self, name), name)
        check_choice(self.status, "status", [PASSED, FAILED, NOT_ATTEMPTED])

    @property
    def passed(self) -> bool:
        return self.status == PASSED

    def __bool__(self) -> bool:
        return self.passed

    def _ipython_display_(self) -> None:
        """Show nothing when a notebook cell ends with a check: the check has already printed its message."""

    def __str__(self) -> str:
        icon = {PASSED: "✅", FAILED: "❌", NOT_ATTEMPTED: "⏳"}[self.status]
        return f"{icon} {self.check}: {self.message}"


def _check_str(value, name: str) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")


def _check_dotted_names(names, name: str) -> None:
    """A tuple/list of dotted names such as ``"torch.softmax"`` (one str would be read per character)."""
    if isinstance(names, str) or not isinstance(names, (tuple, list)):
        raise TypeError(f"{name} must be a tuple of dotted names, got {type(names).__name__}")
    for dotted in names:
        _check_str(dotted, f"each of {name}")


class CheckFailed(Exception):
    """Raised inside a check with the message the student should read.

    ``case`` and ``hint`` (the typical mistake recognised, in words) are kept apart from the message so that
    the grader can report a failure on a hidden case without showing its values."""

    def __init__(self, message: str, *, case: str | None = None, hint: str | None = None):
        super().__init__(message)
        self.case, self.hint = case, hint


# ----------------------------------------------------------------------------------------------
# case variants: the visible cases (variant 0) and the grader's hidden ones
# ----------------------------------------------------------------------------------------------

_variant = [0]   # the active variant; a list so that the context manager can change it in place


@contextlib.contextmanager
def case_variant(variant: int):
    """Within the block, every check draws its inputs for ``variant``: 0 is what the notebook's check shows;
    the grader also runs 1, 2, … (other random inputs, and other sizes where a check lists them)."""
    if not isinstance(variant, int) or isinstance(variant, bool) or variant < 0:
        raise ValueError(f"variant must be an int >= 0, got {variant!r}")
    before, _variant[0] = _variant[0], variant
    try:
        yield
    finally:
        _variant[0] = before


def active_variant() -> int:
    """The variant the checks are drawing their cases for (0 = the visible cases)."""
    return _variant[0]


def case_seed(seed: int) -> int:
    """The seed a check uses for ``seed`` under the active variant (``seed`` itself for the visible cases)."""
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    return seed + 1_000_003 * _variant[0]


def case_generator(seed: int) -> torch.Generator:
    """A CPU generator seeded with :func:`case_seed` (``seed``): the checks draw their random inputs from it."""
    return torch.Generator().manual_seed(case_seed(seed))


def hidden_ids(ids: list, keep: set, seed: int = 0) -> list:
    """``ids`` as a check shows them (variant 0), or, under a hidden variant, with every id not in ``keep`` (the
    special and mask ids) moved to another word id above 1000 by one bijection: the same case, other tokens."""
    case_seed(seed)
    if not _variant[0]:
        return list(ids)
    shift = 1000 + int(torch.randint(0, 5000, (1,), generator=case_generator(seed)))
    return [x if x in keep or not isinstance(x, int) else x + shift for x in ids]


def hidden_sizes(visible: tuple[int, ...], low: int, high: int, count: int = 2, seed: int = 0) -> tuple[int, ...]:
    """The sizes a check loops over: ``visible`` for variant 0; under a hidden variant, ``count`` other sizes
    drawn from [low, high] as well (so that a function special-cased to the visible sizes fails)."""
    case_seed(seed)
    if not _variant[0]:
        return tuple(visible)
    g = case_generator(seed)
    drawn = [int(x) for x in torch.randint(low, high + 1, (count,), generator=g)]
    return tuple(visible) + tuple(drawn)


def describe(x: Any) -> str:
    """Short description of a value for messages: shape and dtype for tensors."""
    if isinstance(x, torch.Tensor):
        return f"tensor of shape {tuple(x.shape)} ({x.dtype})"
    if isinstance(x, (list, tuple)):
        return f"{type(x).__name__} of length {len(x)}"
    return f"{type(x).__name__} {x!r}"[:120]


def require_function(fn: Any, what: str) -> None:
    """A check needs the student's function itself, not its result or its name."""
    if not callable(fn):
        raise CheckFailed(f"pass your {what} function itself (e.g. check(my_{what})), got {describe(fn)}")


def mistake_value(fn: Callable, *args) -> Any:
    """The value a typical mistake produces on this input (for ``expect_close(mistakes=…)``),
    or ``None`` if that mistake would raise here."""
    if not callable(fn):
        raise TypeError(f"fn must be a function (the typical mistake), got {type(fn).__name__}")
    try:
        with torch.no_grad():
            return fn(*args)
    except (RuntimeError, IndexError, ValueError):
        return None


class Delegated(Exception):
    """Raised when the student's code calls the reference its exercise asks them to write."""


class StudentRaised(Exception):
    """The student's function raised ``type_name`` in their kernel (the grader sees only its name and message)."""

    def __init__(self, type_name: str, message: str):
        super().__init__(message)
        self.type_name = type_name


class InputChanged(Exception):
    """The student's function changed one of its tensor inputs in place (``label``: which one)."""

    def __init__(self, label: str, described: str = ""):
        super().__init__(label)
        self.label, self.described = label, described


def _changed_message(case: str, exc: InputChanged) -> str:
    what = f"{exc.label}, {exc.described}" if exc.described else exc.label
    return (f"on {case}, your function changed its input ({what}) in place; "
            "the caller's tensor is now corrupted. Work on a copy (x.clone()) or use "
            "out-of-place operations (masked_fill, not masked_fill_; x = x + 1, not x += 1).")


def _tensors_in(value: Any, where: str, depth: int = 0):
    """(label, tensor) for every plain tensor in an argument: itself, or inside a list/tuple/dict.

    Parameters of a module are left out: an exercise that initialises a layer edits them on purpose."""
    if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter):
        yield where, value
    elif depth < 2 and isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _tensors_in(item, f"{where}[{i}]", depth + 1)
    elif depth < 2 and isinstance(value, dict):
        for key, item in value.items():
            yield from _tensors_in(item, f"{where}[{key!r}]", depth + 1)


def _same(before: torch.Tensor, after: torch.Tensor) -> bool:
    if before.shape != after.shape or before.dtype != after.dtype:
        return False
    if before.is_floating_point() or before.is_complex():
        return bool(((before == after) | (before.isnan() & after.isnan())).all())
    return torch.equal(before, after)


def _input_snapshots(args: tuple, kwargs: dict) -> list[tuple[str, torch.Tensor, torch.Tensor]]:
    """``(label, tensor, copy)`` for every plain tensor among a call's arguments (see :func:`_tensors_in`), taken
    before the student's function runs so that :func:`_changed_input` can tell one it changed in place."""
    named = [(f"argument {i + 1}", a) for i, a in enumerate(args)] + [(f"argument {k!r}", a) for k, a in kwargs.items()]
    return [(label, t, t.detach().clone()) for name, a in named for label, t in _tensors_in(a, name)]


def _changed_input(snapshots: list[tuple[str, torch.Tensor, torch.Tensor]]) -> InputChanged | None:
    """The first argument of :func:`_input_snapshots` whose tensor no longer equals its copy, or ``None``."""
    for label, tensor, before in snapshots:
        if not _same(before, tensor.detach()):
            return InputChanged(label, describe(before))
    return None


_last_return: dict[str, Any] = {}   # the case and value of the student's latest return, for crash reports


def run_student(fn: Callable, case: str, *args, **kwargs) -> Any:
    """Call the student's function; turn its exceptions into a message naming the input.

    ``NotImplementedError`` propagates unchanged: it means "not attempted". A function that changes one of
    its tensor inputs in place fails: the caller's batch, labels or mask would be corrupted silently
    (``labels[labels == -100] = pad`` inside a helper, a masked copy that is not a copy).
    """
    if not callable(fn):
        raise CheckFailed(f"on {case}, expected your function itself, got {describe(fn)}")
    snapshots = _input_snapshots(args, kwargs)
    _last_return.clear()
    try:
        result = fn(*args, **kwargs)
    except NotImplementedError:
        raise
    except Delegated as exc:
        raise CheckFailed(str(exc)) from None
    except CheckFailed as exc:
        raise CheckFailed(f"on {case}, {exc}", case=case) from None   # the grader's call could not finish
    except InputChanged as exc:                                        # reported by the student's kernel
        raise CheckFailed(_changed_message(case, exc), case=case) from None
    except Exception as exc:  # noqa: BLE001 - any error in student code becomes feedback
        name = exc.type_name if isinstance(exc, StudentRaised) else type(exc).__name__
        raise CheckFailed(f"on {case}, your function raised {name}: {exc}", case=case) from exc
    changed = _changed_input(snapshots)
    if changed is not None:
        raise CheckFailed(_changed_message(case, changed), case=case)
    _last_return.update(case=case, value=result)
    return result


def _resolve(dotted: str) -> tuple[Any, str, Any]:
    """``"torch.nn.functional.softmax"`` → (the module or class that holds it, attribute name, the object)."""
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            owner = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:-1]:
                owner = getattr(owner, attr)
            return owner, parts[-1], getattr(owner, parts[-1])
        except AttributeError:
            break
    raise ValueError(f"cannot resolve {dotted!r}")


def _course_modules_binding(name: str, original: Any, owner: Any) -> list:
    """The loaded ``coursekit`` modules other than ``owner`` that bind ``original`` as ``name`` (a module that
    imports the function it uses from where it is defined), so that ``module.name`` is refused too."""
    return [m for key, m in list(sys.modules.items())
            if (key == "coursekit" or key.startswith("coursekit.")) and m is not owner and m is not None
            and vars(m).get(name) is original]


def _refusing(original: Callable, dotted: str, student_globals: dict, exercise: str) -> Callable:
    """A stand-in for ``original`` that refuses calls from code whose globals are ``student_globals``."""
    short = dotted.rsplit(".", 1)[-1]

    def stand_in(*args, **kwargs):
        if sys._getframe(1).f_globals is student_globals:
            raise Delegated(f"{exercise} asks you to write this yourself: your code calls {dotted} (`{short}`), the "
                            "function the exercise re-creates. Use basic tensor operations instead.")
        return original(*args, **kwargs)

    return stand_in


@contextlib.contextmanager
def forbid_references(student_fn: Callable, references: tuple[str, ...], exercise: str):
    """Within the block, a call of any of ``references`` *from the student's code* raises :class:`Delegated`.

    Each reference is replaced, where it is defined, in every loaded ``coursekit`` module that imports it and
    wherever the student's namespace binds it, by a stand-in that looks at its caller: code whose globals
    are the student's (the notebook) is refused; everything else — the check's own reference computation,
    library internals — gets the original.
    """
    _check_dotted_names(references, "references")
    originals = [_resolve(dotted)[2] for dotted in references]
    if any(student_fn is original for original in originals):
        raise Delegated(f"{exercise} asks you to write this yourself: you handed in the library's own "
                        f"{getattr(student_fn, '__qualname__', student_fn)!s}, not your function.")
    student_globals = getattr(student_fn, "__globals__", None)
    if student_globals is None or not references:
        yield
        return
    patches: list[tuple[Any, str, Any]] = []   # (where, name, original)
    stand_ins: list[Callable] = []
    try:
        for dotted in references:
            owner, name, original = _resolve(dotted)
            if any(original is s for s in stand_ins):   # another name of a reference patched above
                continue
            named_here = _refusing(original, dotted, student_globals, exercise)
            # the modules that import it (coursekit.bart.model uses bart_batches.shift_tokens_right) refuse it too
            places = [(owner, named_here)] + [
                (m, _refusing(original, f"{m.__name__}.{name}", student_globals, exercise))
                for m in _course_modules_binding(name, original, owner)]
            for where, stand_in in places:
                stand_ins.append(stand_in)
                patches.append((where, name, original))
                setattr(where, name, stand_in)
            for key, value in list(student_globals.items()):
                if value is original:
                    patches.append((student_globals, key, original))
                    student_globals[key] = named_here
        yield
    finally:
        for where, name, original in reversed(patches):
            if isinstance(where, dict):
                where[name] = original
            else:
                setattr(where, name, original)


def _close(a: Any, b: Any, atol: float, rtol: float) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.shape != b.shape:
            return False
        return torch.allclose(a.double(), b.double(), atol=atol, rtol=rtol, equal_nan=True)
    for x in (a, b):  # a multi-element tensor is never equal to a number (and `==` would be ambiguous)
        if isinstance(x, torch.Tensor) and x.numel() != 1:
            return False
    try:
        return abs(float(a) - float(b)) <= atol + rtol * abs(float(b))
    except (TypeError, ValueError):
        return bool(a == b)


def expect_close(got: Any, want: Any, *, case: str, atol: float = 1e-5, rtol: float = 1e-4,
                 mistakes: Mapping[str, Any] | None = None, what: str = "the output") -> None:
    """Compare the student's value with the reference; on a mismatch, say how it differs.

    ``mistakes`` maps a hint (a typical mistake, in words) to the value that mistake produces on this
    input. If the student's value equals one of them, the hint is given: "it looks like …".
    """
    check_positive_float(atol, "atol", allow_zero=True)
    check_positive_float(rtol, "rtol", allow_zero=True)
    if mistakes is not None and not isinstance(mistakes, Mapping):
        raise TypeError(f"mistakes must be a dict {{hint: wrong value}} or None, got {type(mistakes).__name__}")
    if isinstance(want, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            raise CheckFailed(f"on {case}, {what} should be a tensor of shape {tuple(want.shape)}, "
                              f"got {describe(got)}")
        if got.shape != want.shape:
            raise CheckFailed(f"on {case}, {what} should have shape {tuple(want.shape)}, got {tuple(got.shape)}")
        if torch.isnan(got).any() and not torch.isnan(want).any():
            hint = _matching_mistake(got, mistakes, atol, rtol)
            raise CheckFailed(f"on {case}, {what} contains NaN where the reference has none"
                              + (f". It looks like {hint}." if hint else
                                 " (a fully masked row? -inf minus -inf? a division by zero?)"), case=case, hint=hint)
    if _close(got, want, atol, rtol):
        return
    hint = _matching_mistake(got, mistakes, atol, rtol)
    if isinstance(want, torch.Tensor):
        err = (got.double() - want.double()).abs()
        where = tuple(int(i) for i in torch.nonzero(err == err.max())[0])
        at = f" at index {where}" if where else ""
        detail = (f"largest difference {err.max().item():.3g}{at}: "
                  f"expected {want[where].item():.6g}, got {got[where].item():.6g}")
    else:
        detail = f"expected {want!r}, got {got!r}"
    msg = f"on {case}, {what} is wrong: {detail}."
    if hint:
        msg += f" It looks like {hint}."
    raise CheckFailed(msg, case=case, hint=hint)


def _matching_mistake(got: Any, mistakes: Mapping[str, Any] | None, atol: float, rtol: float) -> str | None:
    for hint, wrong in (mistakes or {}).items():
        if wrong is not None and _close(got, wrong, atol, rtol):
            return hint
    return None


def exercise_check(title: str, *, success: str = "all cases match the reference.",
                   reimplements: tuple[str, ...] = ()) -> Callable:
    """Decorate a check function: catch failures, print feedback, return a :class:`CheckResult`.

    ``reimplements``: dotted names of the library / torch functions the exercise asks the student to
    re-create (e.g. ``"torch.nn.functional.scaled_dot_product_attention"``). While the check runs, a
    call of one of them from the student's code fails the check with a message that says so.
    """
    _check_str(title, "title")
    _check_str(success, "success")
    _check_dotted_names(reimplements, "reimplements")

    def decorate(check_fn: Callable[..., None]) -> Callable[..., CheckResult]:
        @functools.wraps(check_fn)
        def wrapper(*args, verbose: bool = True, **kwargs) -> CheckResult:
            student = args[0] if args and callable(args[0]) else None
            try:
                with forbid_references(student, reimplements, f"This exercise ({title})"):
                    check_fn(*args, **kwargs)
                result = CheckResult(title, PASSED, success)
            except NotImplementedError as exc:
                result = CheckResult(title, NOT_ATTEMPTED, stub_message(exc, getattr(student, "__name__", None)))
            except (CheckFailed, Delegated) as failure:
                result = CheckResult(title, FAILED, str(failure), hint=getattr(failure, "hint", None))
            except Exception as exc:  # noqa: BLE001 - the check choked on what the student returned
                if not _last_return:
                    raise          # no student value was involved: a bug in the check itself
                result = CheckResult(title, FAILED, _unusable(_last_return, exc))
            finally:
                _last_return.clear()
            if verbose:
                print(result)
            return result

        wrapper.title = title  # type: ignore[attr-defined]
        wrapper.reimplements = reimplements  # type: ignore[attr-defined]
        return wrapper

    return decorate


def _unusable(last: dict, exc: Exception) -> str:
    return (f"on {last['case']}, your function returned {describe(last['value'])}, which is not what the exercise "
            f"asks for: the check could not use it ({type(exc).__name__}: {str(exc)[:200]}). Check the type, shape "
            "and dtype the exercise asks you to return.")


_STUB_RE = re.compile(r"^Exercise (?P<number>\d+[a-z]?): (?P<title>.+)$")


def stub_message(exc: NotImplementedError, student_name: str | None) -> str:
    """What "not attempted" says: the student's own stub, or an earlier exercise's stub that their function calls.

    The stub of Exercise N raises ``NotImplementedError("Exercise N: title")``; the function that raised it is the
    innermost frame of the traceback (or ``exc.raised_in`` when the grader's kernel reported it)."""
    if not isinstance(exc, NotImplementedError):
        raise TypeError(f"exc must be a NotImplementedError, got {type(exc).__name__}")
    raised_in = getattr(exc, "raised_in", None)
    if raised_in is None and exc.__traceback__ is not None:
        tb = exc.__traceback__
        while tb.tb_next is not None:
            tb = tb.tb_next
        raised_in = tb.tb_frame.f_code.co_name
    stub = _STUB_RE.match(str(exc))
    if stub and raised_in and student_name and raised_in != student_name:
        return (f"not attempted yet: your function calls `{raised_in}`, which is still the stub of Exercise "
                f"{stub['number']} ({stub['title']}): do that exercise first.")
    return "not attempted yet: replace the `raise NotImplementedError` with your code."

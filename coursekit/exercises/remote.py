"""The grader's side of a graded call: the student's function as a local callable that runs in their kernel.

:class:`RemoteFunction` is what the grader hands to a check instead of the student's function. The check — its
cases, its reference, its diagnosis of the mistake — runs in the grader's process, exactly as it runs in the
notebook; only the student's function runs in the kernel. Each call pickles the case's inputs (the grader's
own objects), has :func:`coursekit.exercises.harness.serve` call the function there, and reads back the reply
as plain data (:mod:`coursekit.exercises.wire`). Models and objects the function was meant to change come
back as their parameters, gradients and plain attributes and are copied into the grader's own arguments.

:func:`grade_check` runs one check on the visible cases (variant 0) and then on hidden variants: a function
that passes what the notebook shows but not other random inputs and sizes fails, and the message says so
without showing a hidden input or the reference's values.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import cloudpickle
import torch

from coursekit.exercises.core import (
    FAILED,
    PASSED,
    CheckFailed,
    CheckResult,
    Delegated,
    InputChanged,
    StudentRaised,
    case_variant,
)
from coursekit.exercises.harness import REPLY_MIME
from coursekit.exercises.wire import WireError, decode

__all__ = ["HIDDEN_VARIANTS", "CallTimeout", "CheckOutcome", "KernelGone", "RemoteFunction", "Session", "grade_check",
           "hidden_message"]

HIDDEN_VARIANTS = (1, 2)   # the variants graded after the visible one


class KernelGone(Exception):
    """The kernel died (``os._exit``, out of memory) or can no longer be reached."""


class CallTimeout(Exception):
    """A call did not finish within its time limit (the kernel was interrupted)."""


class Session(Protocol):
    """A running kernel: ``run(code, timeout)`` executes code there and returns the outputs it displayed
    (nbformat output dicts); it raises :class:`CallTimeout` or :class:`KernelGone`."""

    def run(self, code: str, timeout: float) -> list[dict]: ...


_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,99}$")


def _reply(outputs: list[dict]) -> dict:
    """The one reply among a call's outputs, checked to be a dict with a known status."""
    replies = [o.get("data", {}).get(REPLY_MIME) for o in outputs
               if isinstance(o, dict) and o.get("output_type") == "display_data"
               and isinstance(o.get("data"), dict) and REPLY_MIME in o["data"]]
    if len(replies) != 1:
        raise CheckFailed(f"the kernel gave {len(replies)} replies to one call instead of 1 (does your code "
                          "replace the course's harness or display output of its own?)")
    try:
        reply = json.loads(json.dumps(replies[0]))     # plain dicts and lists, whatever held the message
    except (TypeError, ValueError):
        raise CheckFailed("the kernel's reply is not JSON") from None
    if not isinstance(reply, dict) or not isinstance(reply.get("status"), str):
        raise CheckFailed("the kernel's reply is not one the grader can read")
    return reply


def _text(value: Any, limit: int = 1000) -> str:
    return value[:limit] if isinstance(value, str) else ""


class RemoteFunction:
    """The student's function ``name``, called in the kernel of ``session`` (see the module docstring).

    ``references`` are the dotted names of the library functions the exercise re-creates (refused in the kernel
    while the call runs), ``exercise`` the words used when one is refused, ``timeout`` the seconds one call may
    take."""

    def __init__(self, session: Session, name: str, *, references: tuple[str, ...] = (),
                 exercise: str = "This exercise", timeout: float = 60.0):
        if not isinstance(name, str) or not _IDENTIFIER.match(name):
            raise ValueError(f"name must be a Python identifier (the student's function), got {name!r}")
        if not hasattr(session, "run"):
            raise TypeError(f"session must have a run(code, timeout) method, got {type(session).__name__}")
        if isinstance(references, str) or not isinstance(references, (tuple, list)):
            raise TypeError(f"references must be a tuple of dotted names, got {type(references).__name__}")
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.session, self.name, self.references = session, name, tuple(references)
        self.exercise, self.timeout = exercise, float(timeout)
        self.__name__ = self.__qualname__ = name

    def __repr__(self) -> str:
        return f"<the student's function {self.name}, in their kernel>"

    def __call__(self, *args, **kwargs):
        request = {"function": self.name, "args": args, "kwargs": kwargs, "references": self.references,
                   "exercise": self.exercise}
        payload = base64.b64encode(cloudpickle.dumps(request)).decode("ascii")
        code = f'__import__("coursekit.exercises.harness").exercises.harness.serve("{payload}")'
        try:
            outputs = self.session.run(code, self.timeout)
        except CallTimeout:
            raise CheckFailed(f"your function `{self.name}` did not return within {self.timeout:g} s "
                              "(an endless loop? too large a size?)") from None
        except KernelGone as exc:
            raise CheckFailed(f"the kernel died while running your function `{self.name}` ({exc})") from None
        reply = _reply(outputs)
        status = reply["status"]
        if status == "missing":
            raise CheckFailed(f"there is no `{self.name}` in your notebook: the exercise cell defines it (was the "
                              "cell deleted, renamed, or did it crash before the def?)")
        if status == "not callable":
            raise CheckFailed(f"`{self.name}` in your notebook is a {_text(reply.get('message'), 100)}, "
                              "not a function")
        if status == "stub":
            exc = NotImplementedError(_text(reply.get("message"), 500))
            raised_in = reply.get("raised_in")
            exc.raised_in = raised_in if isinstance(raised_in, str) and _IDENTIFIER.match(raised_in) else None
            raise exc
        if status == "delegated":
            raise Delegated(_text(reply.get("message")))
        if status == "raised":
            raise StudentRaised(_text(reply.get("type"), 100) or "Exception", _text(reply.get("message")))
        if status != "ok":
            raise CheckFailed(f"the kernel's reply has the unknown status {status[:40]!r}")
        try:
            value = decode(reply.get("value"))
            changed = reply.get("changed", [])
            if not isinstance(changed, list):
                raise WireError("the list of changed inputs is not a list")
            if changed:
                raise InputChanged(_text(changed[0], 100))
            _apply_states(args, reply.get("state"), kwargs, reply.get("kwstate"))
        except WireError as exc:
            raise CheckFailed(f"your function `{self.name}` returned something the grader cannot read ({exc})") \
                from None
        return value


# ----------------------------------------------------------------------------------------------
# the state of arguments the function changed
# ----------------------------------------------------------------------------------------------

def _apply_states(args: tuple, states: Any, kwargs: dict, kwstates: Any) -> None:
    if not isinstance(states, list) or len(states) != len(args):
        raise WireError("the reply does not give one state per argument")
    if not isinstance(kwstates, dict):
        raise WireError("the reply's keyword states are not a dict")
    for arg, state in zip(args, states):
        _apply_state(arg, state)
    for key, arg in kwargs.items():
        _apply_state(arg, kwstates.get(key))


def _copy_into(local: torch.Tensor, value: Any, what: str) -> None:
    if not isinstance(value, torch.Tensor) or value.shape != local.shape:
        raise WireError(f"{what} came back as {value!r:.80}, not a tensor of shape {tuple(local.shape)}")
    with torch.no_grad():
        local.copy_(value.to(local.dtype))


def _apply_state(arg: Any, state: Any) -> None:
    """Copy what the function did to an argument (in the kernel) into the grader's own argument."""
    if getattr(arg, "__self__", None) is not None and callable(arg):
        arg = arg.__self__
    if state is None:
        return
    if not isinstance(state, dict) or len(state) != 1:
        raise WireError("an argument's state is not {module: …} or {attrs: …}")
    if isinstance(arg, torch.nn.Module) and "module" in state:
        module = state["module"]
        if not isinstance(module, dict):
            raise WireError("a module's state is not a dict")
        params, grads = module.get("params", {}), module.get("grads", {})
        requires, buffers = module.get("requires_grad", {}), module.get("buffers", {})
        for name, p in arg.named_parameters():
            _copy_into(p, decode(params.get(name)), f"parameter {name}")
            grad = decode(grads.get(name))
            if grad is None:
                p.grad = None
            else:
                if not isinstance(grad, torch.Tensor) or grad.shape != p.shape:
                    raise WireError(f"the gradient of {name} is not a tensor of shape {tuple(p.shape)}")
                p.grad = grad.to(p.dtype)
            flag = requires.get(name)
            if not isinstance(flag, bool):
                raise WireError(f"requires_grad of {name} is not a bool")
            p.requires_grad_(flag)
        for name, b in arg.named_buffers():
            if name in buffers:
                _copy_into(b, decode(buffers[name]), f"buffer {name}")
        return
    if "attrs" in state and isinstance(state["attrs"], dict) and not isinstance(arg, torch.nn.Module):
        for key, raw in state["attrs"].items():
            here = getattr(arg, key, None) if isinstance(key, str) and not key.startswith("__") else None
            if here is None or isinstance(here, Callable):
                continue
            value = decode(raw)
            if isinstance(here, torch.Tensor) and isinstance(value, torch.Tensor) and value.shape == here.shape:
                setattr(arg, key, value.to(here.dtype))
            elif type(value) is type(here) and isinstance(here, (bool, int, float, str)):
                setattr(arg, key, value)
        return
    raise WireError(f"a state for an argument of type {type(arg).__name__} that has none")


# ----------------------------------------------------------------------------------------------
# one check, on the visible and the hidden cases
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CheckOutcome:
    """The grader's verdict on one check: its result and the variant it was decided on (0 = visible)."""

    result: CheckResult
    variant: int


_RAISED = re.compile(r"your function raised (\w+)")


def hidden_message(result: CheckResult) -> str:
    """What a failure on a hidden case may say: the mistake recognised, or the kind of error — never the case,
    its values or the reference's."""
    if not isinstance(result, CheckResult):
        raise TypeError(f"result must be a CheckResult, got {type(result).__name__}")
    said = "passes the cases the notebook's check shows, but not the grader's hidden cases of the same kind " \
           "(other random inputs and sizes)"
    raised = _RAISED.search(result.message)
    if result.hint:
        return f"{said}: it looks like {result.hint}."
    if raised:
        return f"{said}: on one of them your function raised {raised[1]}."
    return said + ". Is your function special-cased to the visible inputs, or does it assume their sizes?"


def grade_check(check: Callable[..., CheckResult], student: Callable, variants: tuple[int, ...] = (0,) +
                HIDDEN_VARIANTS) -> CheckOutcome:
    """Run ``check`` on ``student`` for each variant in turn; the first that does not pass decides."""
    if not callable(check) or not hasattr(check, "title"):
        raise TypeError(f"check must be an exercise check (a check_* function), got {type(check).__name__}")
    for variant in variants:
        with case_variant(variant):
            result = check(student, verbose=False)
        if result.status != PASSED:
            if variant and result.status == FAILED:
                result = CheckResult(result.check, FAILED, hidden_message(result), hint=result.hint)
            return CheckOutcome(result, variant)
    return CheckOutcome(result, variants[-1])

"""The kernel's side of a graded call: run the student's function on the grader's inputs, send back plain data.

The grader (:mod:`coursekit.exercises.remote`) executes, in the student's kernel, one line per case::

    __import__("coursekit.exercises.harness").exercises.harness.serve("<base64 request>")

:func:`serve` unpickles the request (the grader made it; the kernel trusts the grader, never the reverse), looks
up the student's function by name in the notebook's namespace, calls it while the library function the exercise
re-creates is refused (:func:`~coursekit.exercises.core.forbid_references`), and displays the reply as one
``application/vnd.coursekit.reply+json`` output: the return value in the wire format
(:func:`~coursekit.exercises.wire.encode`), or the error's type and message, and the state of any model or
object argument the function was meant to change (an LSTM's bias, a model's gradients, a counter).

Nothing here decides a grade. A submission may replace this function, print a reply of its own, or return the
right answer by any means it finds; the grader reads only values and compares them with its own reference.
"""

from __future__ import annotations

import base64
import sys
from typing import Any

import cloudpickle
import torch

from coursekit.exercises.core import Delegated, _changed_input, _input_snapshots, forbid_references
from coursekit.exercises.wire import encode

__all__ = ["REPLY_MIME", "serve", "state_of"]

REPLY_MIME = "application/vnd.coursekit.reply+json"


def _innermost_function(exc: BaseException) -> str | None:
    tb = exc.__traceback__
    if tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_name


def state_of(value: Any) -> Any:
    """What the grader needs to see of an argument after the call: a module's parameters, gradients and buffers,
    an object's plain attributes (a bound method: its object's), ``None`` for a value that carries no state."""
    if getattr(value, "__self__", None) is not None and callable(value):
        value = value.__self__
    if isinstance(value, torch.nn.Module):
        params = dict(value.named_parameters())
        return {"module": {
            "params": {n: encode(p.detach()) for n, p in params.items()},
            "grads": {n: None if p.grad is None else encode(p.grad) for n, p in params.items()},
            "requires_grad": {n: bool(p.requires_grad) for n, p in params.items()},
            "buffers": {n: encode(b) for n, b in value.named_buffers()}}}
    if isinstance(value, (torch.Tensor, str, bytes, int, float, list, tuple, dict, set)) or value is None:
        return None
    attrs = getattr(value, "__dict__", None)
    if not isinstance(attrs, dict):
        return None
    plain = {k: encode(v) for k, v in attrs.items()
             if isinstance(k, str) and isinstance(v, (bool, int, float, str, torch.Tensor))}
    return {"attrs": plain}


def _call(namespace: dict, request: dict) -> dict:
    name, args, kwargs = request["function"], request["args"], request["kwargs"]
    fn = namespace.get(name)
    if fn is None:
        return {"status": "missing"}
    if not callable(fn):
        return {"status": "not callable", "message": f"{type(fn).__name__}"}
    snapshots = _input_snapshots(args, kwargs)
    try:
        with forbid_references(fn, tuple(request["references"]), request["exercise"]):
            result = fn(*args, **kwargs)
    except NotImplementedError as exc:
        return {"status": "stub", "message": str(exc)[:500], "raised_in": _innermost_function(exc)}
    except Delegated as exc:
        return {"status": "delegated", "message": str(exc)[:1000]}
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - any error of the student's code is a reply
        return {"status": "raised", "type": type(exc).__name__[:100], "message": str(exc)[:1000]}
    changed = _changed_input(snapshots)
    return {"status": "ok", "value": encode(result), "changed": [changed.label] if changed else [],
            "state": [state_of(a) for a in args], "kwstate": {k: state_of(v) for k, v in kwargs.items()}}


def serve(payload: str) -> None:
    """Answer one request of the grader (see the module docstring) with a display output."""
    from IPython import get_ipython
    from IPython.display import display

    request = cloudpickle.loads(base64.b64decode(payload))
    shell = get_ipython()
    namespace = shell.user_ns if shell is not None else vars(sys.modules["__main__"])
    display({REPLY_MIME: _call(namespace, request)}, raw=True)

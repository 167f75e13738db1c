"""The wire format of values that come back from a student's kernel: plain data only, read strictly.

The grader never unpickles anything a submission produced. What the student's function returned is written
in the kernel as JSON: numbers, strings, lists, tuples, dicts with string keys, and tensors as
``{"tensor": {"dtype": "float32", "shape": [2, 3], "data": <base64 of the raw bytes>}}``. The grader reads it
back with :func:`decode`, which builds fresh plain objects (a ``torch.Tensor`` from the bytes, never a subclass;
a ``float`` from a number) and refuses anything else with :class:`WireError`. An object whose ``__eq__`` is
always True, a tensor subclass whose ``__torch_function__`` answers comparisons, a pickle: none of them can
cross, because only their values do.

Values going the other way (the inputs of each case, made by the grader) are the grader's own and may be
pickled; see :mod:`coursekit.exercises.harness`.
"""

from __future__ import annotations

import base64
import math
import numbers
from typing import Any

import numpy as np
import torch

__all__ = ["MAX_BYTES", "WireError", "decode", "encode"]

MAX_BYTES = 64 * 2**20    # the largest value the grader accepts back from one call
MAX_DEPTH = 8             # nesting of lists / tuples / dicts
MAX_ITEMS = 100_000       # elements of one list / tuple / dict, characters of one string (in thousands: 100 MB)

# dtypes that may cross, with their numpy twin (bfloat16 travels as its raw 16 bits)
_DTYPES = {
    "float64": (torch.float64, np.float64), "float32": (torch.float32, np.float32),
    "float16": (torch.float16, np.float16), "bfloat16": (torch.bfloat16, np.uint16),
    "int64": (torch.int64, np.int64), "int32": (torch.int32, np.int32), "int16": (torch.int16, np.int16),
    "int8": (torch.int8, np.int8), "uint8": (torch.uint8, np.uint8), "bool": (torch.bool, np.bool_),
}
_TORCH_NAMES = {torch_dtype: name for name, (torch_dtype, _) in _DTYPES.items()}


class WireError(ValueError):
    """A value from the kernel that is not plain data of the wire format (what was expected, what arrived)."""


# ----------------------------------------------------------------------------------------------
# encode: in the student's kernel
# ----------------------------------------------------------------------------------------------

def _float(x: float) -> Any:
    return x if math.isfinite(x) else {"float": repr(x)}          # JSON has no nan / inf


def encode(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON-ready plain data; anything else (a model, a generator, an object) as a description
    ``{"other": "<type name>: <repr>"}`` that the grader reads as "not the kind of value asked for"."""
    if depth > MAX_DEPTH:
        return {"other": "nested too deeply"}
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return _float(float(value))
    if isinstance(value, torch.Tensor):
        t = value.detach().cpu()
        if t.dtype not in _TORCH_NAMES:
            return {"other": f"tensor of dtype {t.dtype}"}
        t = t.contiguous()
        raw = (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy().tobytes()
        return {"tensor": {"dtype": _TORCH_NAMES[t.dtype], "shape": list(t.shape),
                           "data": base64.b64encode(raw).decode("ascii")}}
    if isinstance(value, np.ndarray):
        return {"other": f"numpy array of shape {value.shape} ({value.dtype})"}
    if isinstance(value, tuple):
        return {"tuple": [encode(v, depth + 1) for v in value]}
    if isinstance(value, list):
        return [encode(v, depth + 1) for v in value]
    if isinstance(value, (set, frozenset)):
        return {"set": [encode(v, depth + 1) for v in value]}
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {"dict": {k: encode(v, depth + 1) for k, v in value.items()}}
        return {"dict_items": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    try:
        shown = repr(value)[:100]
    except Exception:  # noqa: BLE001 - a hostile __repr__
        shown = "?"
    return {"other": f"{type(value).__name__}: {shown}"}


# ----------------------------------------------------------------------------------------------
# decode: in the grader
# ----------------------------------------------------------------------------------------------

class Unusable:
    """What the student's function returned when it is not plain data (a description, for messages)."""

    def __init__(self, description: str):
        self.description = description

    def __repr__(self) -> str:
        return f"<{self.description}>"


def _tensor(spec: Any) -> torch.Tensor:
    if not isinstance(spec, dict) or set(spec) != {"dtype", "shape", "data"}:
        raise WireError(f"a tensor must be {{dtype, shape, data}}, got {str(spec)[:100]}")
    dtype, shape, data = spec["dtype"], spec["shape"], spec["data"]
    if dtype not in _DTYPES:
        raise WireError(f"unknown tensor dtype {dtype!r}; expected one of {sorted(_DTYPES)}")
    if (not isinstance(shape, list) or len(shape) > 8
            or not all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n for n in shape)):
        raise WireError(f"a tensor shape must be a list of at most 8 sizes >= 0, got {str(shape)[:100]}")
    if not isinstance(data, str):
        raise WireError(f"tensor data must be a base64 string, got {type(data).__name__}")
    torch_dtype, np_dtype = _DTYPES[dtype]
    count = math.prod(shape)
    if count * np.dtype(np_dtype).itemsize > MAX_BYTES:
        raise WireError(f"a tensor of shape {tuple(shape)} is larger than the grader accepts ({MAX_BYTES} bytes)")
    try:
        raw = base64.b64decode(data, validate=True)
    except ValueError as exc:
        raise WireError(f"tensor data is not valid base64 ({exc})") from None
    if len(raw) != count * np.dtype(np_dtype).itemsize:
        raise WireError(f"tensor data has {len(raw)} bytes; shape {tuple(shape)} of {dtype} needs "
                        f"{count * np.dtype(np_dtype).itemsize}")
    array = np.frombuffer(raw, dtype=np_dtype).reshape(shape).copy()
    if dtype == "bool":
        array = array.view(np.uint8)
        if array.size and array.max() > 1:
            raise WireError("a bool tensor holds bytes other than 0 and 1")
        array = array.astype(np.bool_)
    t = torch.from_numpy(array)
    return t.view(torch.bfloat16) if dtype == "bfloat16" else t.to(torch_dtype)


def decode(data: Any, depth: int = 0) -> Any:
    """Plain Python and torch values from :func:`encode`'s output (already parsed from JSON); a
    :class:`WireError` for anything that is not exactly that. Every object returned is built here."""
    if depth > MAX_DEPTH + 1:
        raise WireError(f"values nested deeper than {MAX_DEPTH}")
    if data is None or type(data) in (bool, int, str):
        if type(data) is str and len(data) > 1000 * MAX_ITEMS:
            raise WireError("a string longer than the grader accepts")
        return data
    if type(data) is float:
        return data
    if type(data) is list:
        if len(data) > MAX_ITEMS:
            raise WireError(f"a list of {len(data)} items (at most {MAX_ITEMS})")
        return [decode(v, depth + 1) for v in data]
    if type(data) is not dict or len(data) != 1:
        raise WireError(f"expected a value of the wire format, got {type(data).__name__}: {str(data)[:100]}")
    (kind, inner), = data.items()
    if kind == "tensor":
        return _tensor(inner)
    if kind == "float":
        if inner not in ("nan", "inf", "-inf"):
            raise WireError(f"a special float must be 'nan', 'inf' or '-inf', got {str(inner)[:40]!r}")
        return float(inner)
    if kind in ("tuple", "set"):
        if type(inner) is not list or len(inner) > MAX_ITEMS:
            raise WireError(f"a {kind} must be a list of at most {MAX_ITEMS} items")
        items = [decode(v, depth + 1) for v in inner]
        if kind == "tuple":
            return tuple(items)
        try:
            return set(items)
        except TypeError:
            raise WireError("a set of unhashable items") from None
    if kind == "dict":
        if type(inner) is not dict or len(inner) > MAX_ITEMS:
            raise WireError(f"a dict must map at most {MAX_ITEMS} strings to values")
        return {str(k): decode(v, depth + 1) for k, v in inner.items()}
    if kind == "dict_items":
        if type(inner) is not list or len(inner) > MAX_ITEMS or not all(type(p) is list and len(p) == 2
                                                                         for p in inner):
            raise WireError("dict items must be a list of [key, value] pairs")
        try:
            return {decode(k, depth + 1): decode(v, depth + 1) for k, v in inner}
        except TypeError:
            raise WireError("a dict with unhashable keys") from None
    if kind == "other":
        return Unusable(str(inner)[:200])
    raise WireError(f"unknown kind of value {kind!r}")

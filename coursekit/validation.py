"""Input validation helpers: clear ``ValueError``/``TypeError`` messages instead of deep torch errors.

Every public function of the package checks what it is given with these, so that a bad call names the
argument, what was expected and what arrived — never a raw torch error from deep inside, never a silently
truncated, broadcast or coerced value. The ``test_bad_inputs.py`` tables of ``tests/`` (one a folder) sweep bad
calls over the public API.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


def check_tensor(x, name: str, *, ndim: int | Sequence[int] | None = None,
                 dtype: torch.dtype | Sequence[torch.dtype] | None = None,
                 floating: bool = False) -> torch.Tensor:
    """Check that ``x`` is a tensor with the expected number of dims and dtype; return it."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if x.dim() not in allowed:
            want = " or ".join(str(a) for a in allowed)
            raise ValueError(f"{name} must have {want} dimensions, got shape {tuple(x.shape)}")
    if floating and not x.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got {x.dtype}")
    if dtype is not None:
        allowed_dt = (dtype,) if isinstance(dtype, torch.dtype) else tuple(dtype)
        if x.dtype not in allowed_dt:
            raise TypeError(f"{name} must have dtype {' or '.join(map(str, allowed_dt))}, got {x.dtype}")
    return x


def check_size(x: torch.Tensor, name: str, dim: int, expected: int, what: str = "") -> None:
    """Check ``x.shape[dim] == expected``."""
    if x.shape[dim] != expected:
        label = f" ({what})" if what else ""
        raise ValueError(f"{name} must have size {expected} in dim {dim}{label}, got shape {tuple(x.shape)}")


ID_DTYPES = (torch.int64, torch.int32)   # what nn.Embedding and F.cross_entropy accept as indices


def check_token_ids(ids: torch.Tensor, name: str, vocab_size: int) -> torch.Tensor:
    """Check an int64/int32 id tensor (what ``nn.Embedding`` accepts) whose values lie in ``[0, vocab_size)``."""
    check_tensor(ids, name)
    if ids.dtype not in ID_DTYPES:
        raise TypeError(f"{name} must be an integer (int64 or int32) tensor of token ids, got {ids.dtype}")
    if ids.numel():
        lo, hi = int(ids.min()), int(ids.max())
        if lo < 0 or hi >= vocab_size:
            raise ValueError(f"{name} must hold ids in [0, {vocab_size}), got values in [{lo}, {hi}]")
    return ids


def received(value) -> str:
    """What arrived, for an error message: its type and a short repr (``float 2.5``, ``str '[MASK]'``)."""
    shown = repr(value)
    return f"{type(value).__name__} {shown if len(shown) <= 60 else shown[:57] + '...'}"


def check_positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {received(value)}")
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")
    return value


def check_count(value, name: str) -> int:
    """An int ≥ 0 (a number of steps, of new tokens, a seed offset); floats and bools are refused
    (:func:`check_positive_int` also refuses 0)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {received(value)}")
    if value < 0:
        raise ValueError(f"{name} must be an int ≥ 0, got {value}")
    return value


def check_int(value, name: str) -> int:
    """Any int (a seed, an id); floats and bools are refused."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {received(value)}")
    return value


def check_generator(generator) -> None:
    """``None`` or a ``torch.Generator`` (the random source of a sampling function)."""
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator or None, got {type(generator).__name__}")


def check_probability(value, name: str, *, inclusive_high: bool = True) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    ok = 0.0 <= value <= 1.0 if inclusive_high else 0.0 <= value < 1.0
    if not ok:
        raise ValueError(f"{name} must lie in [0, 1{']' if inclusive_high else ')'}, got {value}")
    return float(value)


def check_labels(labels: torch.Tensor, name: str, n_classes: int, *, ignore_index: int | None = None) -> torch.Tensor:
    """Check class targets for cross-entropy: an int64/int32 tensor with values in ``[0, n_classes)``
    or equal to ``ignore_index`` (e.g. -100 for positions without a target)."""
    check_tensor(labels, name)
    if labels.dtype not in ID_DTYPES:
        raise TypeError(f"{name} must be an integer (int64 or int32) tensor of class ids, got {labels.dtype}")
    real = labels if ignore_index is None else labels[labels != ignore_index]
    if real.numel():
        lo, hi = int(real.min()), int(real.max())
        if lo < 0 or hi >= n_classes:
            extra = f" (or {ignore_index} to ignore a position)" if ignore_index is not None else ""
            raise ValueError(f"{name} must hold class ids in [0, {n_classes}){extra}, got values in [{lo}, {hi}]")
    return labels


def check_bool_mask(mask: torch.Tensor, name: str, shape: Sequence[int] | None = None) -> torch.Tensor:
    """Check a boolean keep-mask (True = attend/keep). A float mask is refused rather than cast: an additive
    mask (0 / -inf) cast with ``.bool()`` would be read the wrong way round."""
    check_tensor(mask, name)
    if mask.dtype != torch.bool:
        raise TypeError(f"{name} must be a bool tensor (True = keep), got {mask.dtype}; an additive float mask "
                        f"(0 / -inf) must be converted explicitly, e.g. mask == 0")
    if shape is not None and tuple(mask.shape) != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {tuple(mask.shape)}")
    return mask


def check_finite(x: torch.Tensor, name: str) -> torch.Tensor:
    """Check that a float tensor holds no NaN or infinity."""
    if x.is_floating_point() and not bool(torch.isfinite(x).all()):
        n_nan, n_inf = int(torch.isnan(x).sum()), int(torch.isinf(x).sum())
        raise ValueError(f"{name} must be finite, got {n_nan} NaN and {n_inf} infinite values")
    return x


def check_positive_float(value, name: str, *, allow_zero: bool = False) -> float:
    """A real number > 0 (≥ 0 with ``allow_zero``); bools, NaN and infinity are refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    if value != value or value in (float("inf"), float("-inf")) or value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'≥ 0' if allow_zero else 'positive'} and finite, got {value}")
    return float(value)


def check_choice(value, name: str, choices: Sequence) -> object:
    """``value`` must be one of ``choices`` (instead of a bare ``KeyError`` from a dict lookup)."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value


def check_int_sequence(values, name: str) -> list[int]:
    """A list/tuple/1-D integer tensor of ints → ``list[int]``; floats are refused, not truncated."""
    if isinstance(values, torch.Tensor):
        if values.dim() != 1 or values.is_floating_point() or values.dtype == torch.bool:
            raise TypeError(f"{name} must be a 1-D integer tensor or a list of ints, got {values.dtype} "
                            f"of shape {tuple(values.shape)}")
        return values.tolist()
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise TypeError(f"{name} must be a sequence of ints, got {type(values).__name__}")
    bad = [v for v in values if isinstance(v, bool) or not isinstance(v, int)]
    if bad:
        raise TypeError(f"{name} must hold ints, got {bad[:3]!r} ({type(bad[0]).__name__})")
    return list(values)


def check_non_empty(values, name: str):
    """A sequence or tensor with at least one element."""
    if len(values) == 0:
        raise ValueError(f"{name} must not be empty")
    return values


def check_same_dtype(x: torch.Tensor, name: str, weight: torch.Tensor) -> None:
    """``x`` must have the dtype of the layer's weights (else a matrix product fails deep inside torch).

    Under ``torch.autocast`` mixed dtypes are expected (autocast casts them), so nothing is checked there.
    """
    if x.dtype != weight.dtype and not torch.is_autocast_enabled(x.device.type):
        raise TypeError(f"{name} has dtype {x.dtype} but the layer's weights are {weight.dtype}; "
                        f"convert one of them, e.g. {name}.to({weight.dtype})")


def check_row_index(index: torch.Tensor, n_rows: int | None, device=None) -> torch.Tensor:
    """A checked 1-D integer index into ``n_rows`` batch rows (any number when None), moved to ``device``."""
    if not isinstance(index, torch.Tensor):
        raise TypeError(f"index must be a 1-D integer tensor of batch rows, got {type(index).__name__}")
    if index.dim() != 1 or index.dtype.is_floating_point or index.dtype == torch.bool:
        raise TypeError(f"index must be a 1-D integer tensor of batch rows, got {index.dtype} {tuple(index.shape)}")
    if n_rows is not None and index.numel() and (int(index.min()) < 0 or int(index.max()) >= n_rows):
        raise ValueError(f"index values must lie in [0, {n_rows}) (there are {n_rows} batch rows), "
                         f"got min {int(index.min())}, max {int(index.max())}")
    return index.to(device=device, dtype=torch.long)

"""Input validation helpers: clear ``ValueError``/``TypeError`` messages instead of deep torch errors."""

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


def check_token_ids(ids: torch.Tensor, name: str, vocab_size: int) -> torch.Tensor:
    """Check an integer id tensor whose values lie in ``[0, vocab_size)``."""
    check_tensor(ids, name)
    if ids.dtype not in (torch.int64, torch.int32, torch.int16, torch.uint8):
        raise TypeError(f"{name} must be an integer tensor of token ids, got {ids.dtype}")
    if ids.numel():
        lo, hi = int(ids.min()), int(ids.max())
        if lo < 0 or hi >= vocab_size:
            raise ValueError(f"{name} must hold ids in [0, {vocab_size}), got values in [{lo}, {hi}]")
    return ids


def check_positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")
    return value


def check_probability(value, name: str, *, inclusive_high: bool = True) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    ok = 0.0 <= value <= 1.0 if inclusive_high else 0.0 <= value < 1.0
    if not ok:
        raise ValueError(f"{name} must lie in [0, 1{']' if inclusive_high else ')'}, got {value}")
    return float(value)

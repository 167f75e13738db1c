"""Attention masks (notebook 07): causal, key-padding and sliding-window masks, and their conjunction.

Masks are boolean with **True = may attend** (the convention of
``torch.nn.functional.scaled_dot_product_attention``). :func:`causal_mask` is ``(T_q, T_k)``,
:func:`padding_mask` is ``(B, 1, 1, T)`` (it broadcasts over heads and queries), :func:`window_mask`
is ``(T, T)``; :func:`combine_masks` ANDs any that broadcast together. How a mask must be shaped
next to the scores is in :mod:`coursekit.attention.core`.

Shapes: ``B`` batch, ``T_q``/``T_k`` query/key lengths, ``T`` one sequence length.
"""

from __future__ import annotations

import torch

from coursekit.validation import check_positive_int, check_tensor

__all__ = [
    "causal_mask",
    "combine_masks",
    "padding_mask",
    "window_mask",
]


def causal_mask(T_q: int, T_k: int | None = None, *, device=None) -> torch.Tensor:
    """Lower-triangular mask ``(T_q, T_k)``: query ``i`` may attend to key ``j`` iff ``j <= i + T_k - T_q``.

    With ``T_q == T_k`` this is the usual "no peeking at the future" triangle. With ``T_q < T_k``
    the queries are the *last* ``T_q`` positions of a sequence of length ``T_k`` (a decoder that
    feeds one new token and attends to a KV cache of everything before it). ``T_q > T_k`` is refused:
    the first queries would have no key at all.
    """
    check_positive_int(T_q, "T_q")
    T_k = T_q if T_k is None else check_positive_int(T_k, "T_k")
    if T_q > T_k:
        raise ValueError(f"a causal mask needs T_q <= T_k (the queries are the last T_q of T_k positions), "
                         f"got T_q={T_q}, T_k={T_k}: the first queries would have no key to attend to")
    i = torch.arange(T_q, device=device).unsqueeze(1)  # (T_q, 1)
    j = torch.arange(T_k, device=device).unsqueeze(0)  # (1, T_k)
    return j <= i + (T_k - T_q)  # (T_q, T_k)


def padding_mask(lengths_or_keep: torch.Tensor, T: int | None = None) -> torch.Tensor:
    """Key-padding mask ``(B, 1, 1, T)``, True at real tokens, ready to broadcast over heads and queries.

    ``lengths_or_keep`` is either the lengths ``(B,)`` (integers; ``T`` defaults to the longest) or
    a boolean keep-mask ``(B, T)`` such as the one ``coursekit.text.pad_batch`` returns.
    """
    x = check_tensor(lengths_or_keep, "lengths_or_keep", ndim=(1, 2))
    if x.numel() == 0:
        raise ValueError(f"lengths_or_keep must not be empty, got shape {tuple(x.shape)}")
    if x.dim() == 2:
        if x.dtype != torch.bool:
            raise TypeError(f"a (B, T) keep-mask must be bool (True = real token), got {x.dtype}")
        if T is not None and x.shape[1] != T:
            raise ValueError(f"keep-mask has length {x.shape[1]} but T={T} was given")
        keep = x
    else:
        if x.dtype == torch.bool or x.is_floating_point():
            raise TypeError(f"lengths must be an integer tensor of shape (B,), got {x.dtype}")
        if int(x.min()) < 0:
            raise ValueError(f"lengths must be >= 0, got min {int(x.min())}")
        longest = int(x.max())
        if T is None and longest == 0:
            raise ValueError("every length is 0, so T cannot be read from them: pass T")
        T = longest if T is None else check_positive_int(T, "T")
        if longest > T:
            raise ValueError(f"a length ({longest}) exceeds T={T}")
        keep = torch.arange(T, device=x.device).unsqueeze(0) < x.unsqueeze(1)  # (B, T)
    return keep[:, None, None, :]  # (B, 1, 1, T)


def window_mask(T: int, window: int, *, causal: bool = False, device=None) -> torch.Tensor:
    """Local attention (Longformer's sliding window): ``(T, T)``, True where ``|i - j| <= window``.

    With ``causal=True`` only the ``window`` previous positions (and itself) are visible.
    """
    check_positive_int(T, "T")
    if isinstance(window, bool) or not isinstance(window, int) or window < 0:
        raise ValueError(f"window must be an int ≥ 0, got {window!r}")
    i = torch.arange(T, device=device).unsqueeze(1)  # (T, 1)
    j = torch.arange(T, device=device).unsqueeze(0)  # (1, T)
    keep = (j - i).abs() <= window
    return keep & (j <= i) if causal else keep  # (T, T)


def combine_masks(*masks: torch.Tensor | None) -> torch.Tensor | None:
    """Logical AND of boolean masks (``None`` entries are skipped): e.g. padding ∧ causal."""
    out = None
    for m in masks:
        if m is None:
            continue
        if not isinstance(m, torch.Tensor) or m.dtype != torch.bool:
            raise TypeError(f"masks must be bool tensors (True = attend), got "
                            f"{m.dtype if isinstance(m, torch.Tensor) else type(m).__name__}")
        if out is not None:
            try:
                torch.broadcast_shapes(out.shape, m.shape)
            except RuntimeError:
                raise ValueError(f"masks of shapes {tuple(out.shape)} and {tuple(m.shape)} do not broadcast "
                                 "together") from None
        out = m if out is None else out & m
    return out

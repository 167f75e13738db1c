"""Compact storage of committed weights: int8 matrices with one scale per output channel.

A committed model travels with every clone of the course (and with every command sent to a GPU machine),
so its file should hold what the lessons need and no more. Symmetric per-channel int8 quantisation keeps
every weight matrix in a quarter of its fp32 size (half of fp16):

    s_i = max_j |W_ij| / 127,     Q_ij = round(W_ij / s_i) ∈ [-127, 127],     Ŵ_ij = s_i · Q_ij

with one scale ``s_i`` per row — per output channel of an ``nn.Linear`` (its weight is (out, in)), per
token of an embedding table (V, d). The error of an entry is at most ``s_i / 2``: half a step of its own
row, so a row of small weights is not crushed by another row's large ones (Jacob et al. 2018; the
"weight-only int8" of LLM.int8() and of llama.cpp's Q8_0 is the same idea with smaller groups).
Vectors (biases, normalisation gains) are a sliver of the bytes and stay fp16.

The weights are only *stored* this way: :func:`expand_state` gives back fp32 tensors and the model computes
in fp32 as before. Every figure of a committed model is measured on the weights as loaded from its file.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["STORAGE", "quantize_int8", "dequantize_int8", "compact_state", "expand_state"]

#: The name a compact checkpoint carries in its metadata (``storage``).
STORAGE = "int8-rowwise"

_SCALE = ":scale"  # suffix of a matrix's scales; ':' cannot occur in a PyTorch parameter name


def quantize_int8(weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(Q, s)``: ``Q`` int8 of ``weight``'s shape, ``s`` fp32 of shape (rows,), with ``weight ≈ s[:, None] · Q``.

    Rows are the first dimension; a matrix of more than two dimensions is quantised as (shape[0], -1).
    An all-zero row gets scale 1 (its entries are exactly 0 either way).
    """
    if not isinstance(weight, torch.Tensor):
        raise TypeError(f"weight must be a torch.Tensor, got {type(weight).__name__}")
    if not weight.is_floating_point() or weight.dim() < 2:
        raise ValueError(f"weight must be a floating matrix (2 or more dims), got {weight.dtype} of shape "
                         f"{tuple(weight.shape)}")
    if weight.numel() == 0 and weight.shape[0] > 0:
        raise ValueError(f"weight must have at least one entry per row, got shape {tuple(weight.shape)}")
    if not torch.isfinite(weight).all():
        raise ValueError("weight holds NaN or ±inf: a trained model's weights must be finite to be stored")
    rows = weight.detach().float().reshape(weight.shape[0], -1)
    scale = rows.abs().amax(dim=1) / 127.0                              # (rows,)
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))
    q = torch.round(rows / scale[:, None]).clamp_(-127, 127).to(torch.int8)
    return q.reshape(weight.shape), scale


def dequantize_int8(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """fp32 ``scale[:, None] · q`` in ``q``'s shape (the inverse of :func:`quantize_int8`, up to rounding)."""
    if not isinstance(q, torch.Tensor) or q.dtype != torch.int8:
        raise TypeError(f"q must be an int8 tensor, got {getattr(q, 'dtype', type(q).__name__)}")
    if q.dim() == 0:
        raise ValueError("q must have at least one dimension (rows first), got a scalar")
    if not isinstance(scale, torch.Tensor) or scale.shape != (q.shape[0],):
        raise ValueError(f"scale must have one entry per row of q ({q.shape[0]}), got "
                         f"{tuple(scale.shape) if isinstance(scale, torch.Tensor) else type(scale).__name__}")
    return (q.float().reshape(q.shape[0], -1) * scale.float()[:, None]).reshape(q.shape)


def compact_state(model: nn.Module) -> dict[str, torch.Tensor]:
    """The tensors to store for ``model``: int8 matrices + their ``name:scale``, fp16 vectors.

    A tensor shared by several names (tied embeddings) is stored once, under its first name in
    ``model.state_dict()``; :func:`load_compact` gives it back to all of them.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    out: dict[str, torch.Tensor] = {}
    seen: set[tuple[int, int]] = set()
    for name, tensor in model.state_dict().items():
        key = (tensor.untyped_storage().data_ptr(), tensor.storage_offset())
        if key in seen:
            continue
        seen.add(key)
        if tensor.is_floating_point() and tensor.dim() >= 2:
            out[name], out[name + _SCALE] = quantize_int8(tensor)
        elif tensor.is_floating_point():
            out[name] = tensor.detach().half().contiguous()
        else:
            out[name] = tensor.detach().contiguous()                     # integer buffers as they are
    return out


def expand_state(tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """fp32 tensors by name from what :func:`compact_state` stored (int8 matrices dequantised)."""
    if not isinstance(tensors, dict):
        raise TypeError(f"tensors must be a dict of name -> tensor, got {type(tensors).__name__}")
    out = {}
    for name, tensor in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"tensors must map names (str) to tensors, got the key {name!r} ({type(name).__name__})")
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"tensors must map names to tensors, got {type(tensor).__name__} for {name!r}")
        if name.endswith(_SCALE):
            if name[:-len(_SCALE)] not in tensors:
                raise ValueError(f"{name!r} has no matrix {name[:-len(_SCALE)]!r} to scale: a damaged checkpoint")
            continue
        if tensor.dtype == torch.int8:
            if name + _SCALE not in tensors:
                raise ValueError(f"the int8 matrix {name!r} has no scales ({name + _SCALE!r}): a damaged checkpoint")
            out[name] = dequantize_int8(tensor, tensors[name + _SCALE])
        elif tensor.is_floating_point():
            out[name] = tensor.float()
        else:
            out[name] = tensor
    return out

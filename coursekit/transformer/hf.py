"""Reading Hugging Face checkpoints: the one entry point ``Bert.from_hf`` and ``Bart.from_hf`` share.

A checkpoint is either a ``transformers`` model object or a local directory holding ``config.json``
and ``model.safetensors`` (or the older ``pytorch_model.bin``, read with ``weights_only=True``).
Nothing is downloaded: the course never loads weights from a hub at run time. A damaged directory
(a truncated weights file, a ``config.json`` that is not JSON) is a ``ValueError`` that says so.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import torch
from torch import nn

__all__ = ["read_checkpoint"]

_RESTORE = "restore the checkpoint directory (copy or download it again)"


def read_checkpoint(source) -> tuple[dict, dict[str, torch.Tensor]]:
    """(config dict, state dict) of a ``transformers`` model object or a local checkpoint directory."""
    if isinstance(source, nn.Module) and hasattr(source, "config"):
        return source.config.to_dict(), {k: v.detach() for k, v in source.state_dict().items()}
    if not isinstance(source, (str, Path)):
        raise TypeError(f"source must be a transformers model or a checkpoint directory, got {type(source).__name__}")
    folder = Path(source)
    if not folder.is_dir():
        raise FileNotFoundError(f"no checkpoint directory at {folder}: expected a folder holding config.json and the "
                                f"weights (model.safetensors or pytorch_model.bin)")
    if not (folder / "config.json").is_file():
        raise ValueError(f"{folder} is not a Hugging Face checkpoint directory: no config.json there")
    config = _read_config(folder / "config.json")
    if (folder / "model.safetensors").is_file():
        state = _read_safetensors(folder / "model.safetensors")
    elif (folder / "pytorch_model.bin").is_file():
        state = _read_bin(folder / "pytorch_model.bin")
    else:
        raise ValueError(f"{folder} has config.json but neither model.safetensors nor pytorch_model.bin")
    return config, state


def _read_config(path: Path) -> dict:
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not valid JSON ({exc}); {_RESTORE}") from None
    if not isinstance(config, dict):
        raise ValueError(f"{path} must hold a JSON object (a dict of settings), got {type(config).__name__}")
    return config


def _read_safetensors(path: Path) -> dict[str, torch.Tensor]:
    """The tensors of a safetensors file; a truncated or damaged file is a ``ValueError`` (safetensors
    itself checks that the header and the tensor bytes agree, so this costs nothing extra)."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    try:
        return load_file(str(path))
    except SafetensorError as exc:
        raise ValueError(f"{path} is truncated or not a safetensors file ({exc}); {_RESTORE}") from None


def _read_bin(path: Path) -> dict[str, torch.Tensor]:
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except (RuntimeError, OSError, EOFError, pickle.UnpicklingError) as exc:   # a cut zip archive, junk
        raise ValueError(f"{path} is truncated or not a PyTorch state dict ({type(exc).__name__}); "
                         f"{_RESTORE}") from None
    if not isinstance(state, dict):
        raise ValueError(f"{path} is truncated or not a PyTorch state dict: it holds a {type(state).__name__}")
    return state


def check_float_dtype(dtype) -> torch.dtype | None:
    """``dtype`` of ``from_hf(..., dtype=...)``: ``None`` or a floating-point ``torch.dtype``."""
    if dtype is not None and not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
        raise TypeError(f"dtype must be a floating-point torch.dtype (e.g. torch.float64), got {dtype!r}")
    return dtype

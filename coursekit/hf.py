"""Reading Hugging Face checkpoints: the one entry point ``Bert.from_hf`` and ``Bart.from_hf`` share.

A checkpoint is either a ``transformers`` model object or a local directory holding ``config.json``
and ``model.safetensors`` (or the older ``pytorch_model.bin``, read with ``weights_only=True``).
Nothing is downloaded: the course never loads weights from a hub at run time.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from torch import nn


def read_checkpoint(source) -> tuple[dict, dict[str, torch.Tensor]]:
    """(config dict, state dict) of a ``transformers`` model object or a local checkpoint directory."""
    if isinstance(source, nn.Module) and hasattr(source, "config"):
        return source.config.to_dict(), {k: v.detach() for k, v in source.state_dict().items()}
    if not isinstance(source, (str, Path)):
        raise TypeError(f"source must be a transformers model or a checkpoint directory, got {type(source).__name__}")
    folder = Path(source)
    if not folder.is_dir():
        raise FileNotFoundError(f"no checkpoint directory at {folder}")
    if not (folder / "config.json").is_file():
        raise ValueError(f"{folder} is not a Hugging Face checkpoint directory: no config.json there")
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    if (folder / "model.safetensors").is_file():
        from safetensors.torch import load_file

        state = load_file(str(folder / "model.safetensors"))
    elif (folder / "pytorch_model.bin").is_file():
        state = torch.load(folder / "pytorch_model.bin", map_location="cpu", weights_only=True)
    else:
        raise ValueError(f"{folder} has config.json but neither model.safetensors nor pytorch_model.bin")
    return config, state

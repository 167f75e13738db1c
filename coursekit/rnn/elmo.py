"""ELMo's scalar mix: a learned, softmax-weighted sum of a frozen biLM's layers (notebook 04).

==============================  =====================================  =================
this module                     equation                               PyTorch reference
==============================  =====================================  =================
:class:`ScalarMix`              ELMo: γ Σ_j softmax(w)_j h^{(j)}       —
==============================  =====================================  =================

Notebook 04 trains a small character-level biLM (a forward and a backward LM of two LSTM layers each)
and learns one scalar mix of its frozen layers per probing task (§7); the notebook's exercise re-implements
it (``check_scalar_mix``). ``tests/rnn/test_rnn.py`` tests it.

References
----------
* M. Peters et al. (2018), *Deep contextualized word representations* (ELMo), eq. (1) — scalar mix.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from coursekit.validation import check_positive_int, check_tensor

__all__ = ["ScalarMix"]


class ScalarMix(nn.Module):
    """ELMo's task-specific combination of layers (Peters et al. 2018, eq. 1)::

        ELMo_k = γ · Σ_j s_j h_k^{(j)},   s = softmax(w)

    ``w`` (one scalar per layer, initialised to 0 → equal weights) and ``γ`` (initialised to 1)
    are learned with the downstream task; the biLM underneath stays frozen.
    """

    def __init__(self, num_layers: int):
        super().__init__()
        self.num_layers = check_positive_int(num_layers, "num_layers")
        self.scalar_parameters = nn.Parameter(torch.zeros(num_layers))  # w
        self.gamma = nn.Parameter(torch.ones(()))                        # γ

    @property
    def weights(self) -> torch.Tensor:
        """The normalised layer weights s = softmax(w), ``(num_layers,)``."""
        return torch.softmax(self.scalar_parameters, dim=0)

    def forward(self, layers: Sequence[torch.Tensor] | torch.Tensor) -> torch.Tensor:
        """``layers``: a list of ``num_layers`` tensors of one shape (or one tensor ``(L, ...)``)."""
        if isinstance(layers, torch.Tensor):
            if layers.dim() == 0:
                raise ValueError("layers must be a list of tensors or a tensor (L, ...), got a 0-d tensor")
            layers = list(layers.unbind(0))
        if not isinstance(layers, (list, tuple)):
            raise TypeError(f"layers must be a list of tensors or a tensor (L, ...), got {type(layers).__name__}")
        if len(layers) != self.num_layers:
            raise ValueError(f"ScalarMix was built for {self.num_layers} layers, got {len(layers)}")
        for j, h in enumerate(layers):
            check_tensor(h, f"layers[{j}]", floating=True)
            if h.shape != layers[0].shape:
                raise ValueError(f"every layer must have the same shape; layers[0] is {tuple(layers[0].shape)}, "
                                 f"layers[{j}] is {tuple(h.shape)}")
            if h.dtype != layers[0].dtype:
                raise TypeError(f"every layer must have the same dtype; layers[{j}] has dtype {h.dtype} but "
                                f"layers[0] has {layers[0].dtype}")
        stacked = torch.stack(list(layers))                                # (L, ...)
        s = self.weights.view(-1, *([1] * (stacked.dim() - 1)))            # (L, 1, ..., 1)
        return self.gamma * (s * stacked).sum(0)


"""LoRA: low-rank adaptation of frozen linear layers (Hu et al. 2021).

A pre-trained weight matrix ``W₀ (d × k)`` stays frozen; the update learned by fine-tuning is constrained to a
low rank ``r ≪ min(d, k)`` (Eq. 3)::

    h = W₀ x + (α / r) · B A x,     A ∈ R^{r × k},  B ∈ R^{d × r}

``A`` starts random and ``B`` at zero, so the adapted model starts *exactly* at the base model and only the
``r · (d + k)`` numbers of ``A`` and ``B`` are trained. The scaling ``α / r`` keeps the size of the update about
the same when ``r`` changes, so a learning rate tuned for one rank works for another (§4.1). After training,
``W = W₀ + (α / r) B A`` is one matrix again: the merged model costs nothing extra at inference
(:func:`merge_lora`), and what is stored per task is only ``A`` and ``B`` (:func:`lora_state_dict`).

Names and initialisation follow Hugging Face ``peft`` (``lora_A`` Kaiming-uniform as ``nn.Linear``'s own weight,
``lora_B`` zeros, scaling ``lora_alpha / r``), so the same numbers give the same outputs there
(``tests/training/test_lora.py`` checks it).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from coursekit.training.loop import _check_module
from coursekit.validation import check_positive_float, check_positive_int, check_probability, received

__all__ = ["LoRALinear", "add_lora", "merge_lora", "lora_state_dict", "load_lora_state_dict"]


class LoRALinear(nn.Module):
    """``base(x) + (α / r) · B A dropout(x)`` around a frozen ``nn.Linear`` (Hu et al. 2021, Eq. 3)."""

    def __init__(self, base: nn.Linear, r: int, alpha: float, dropout: float = 0.0) -> None:
        super().__init__()
        if not isinstance(base, nn.Linear):
            raise TypeError(f"base must be an nn.Linear, got {type(base).__name__}")
        check_positive_int(r, "r")
        check_positive_float(alpha, "alpha")
        check_probability(dropout, "dropout", inclusive_high=False)
        if r > min(base.in_features, base.out_features):
            raise ValueError(f"r={r} is above the rank of a {base.out_features} × {base.in_features} matrix: a "
                             f"low-rank update needs r ≤ {min(base.in_features, base.out_features)}")
        self.base = base.requires_grad_(False)                                     # W₀ (and its bias) frozen
        self.r, self.alpha, self.scaling = r, float(alpha), alpha / r
        factory = {"device": base.weight.device, "dtype": base.weight.dtype}
        self.lora_A = nn.Parameter(torch.empty(r, base.in_features, **factory))   # (r, k)
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r, **factory))  # (d, r): zero, so ΔW = 0 at start
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        self.dropout = nn.Dropout(dropout)

    # The wrapped layer still answers like the linear layer it replaces (code that reads q_proj.weight.dtype).
    @property
    def weight(self) -> torch.Tensor:
        return self.base.weight

    @property
    def bias(self) -> torch.Tensor | None:
        return self.base.bias

    @property
    def in_features(self) -> int:
        return self.base.in_features

    @property
    def out_features(self) -> int:
        return self.base.out_features

    def delta_weight(self) -> torch.Tensor:
        """``ΔW = (α / r) · B A``, shape ``(d, k)`` like ``base.weight``."""
        return self.scaling * self.lora_B @ self.lora_A

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        update = self.dropout(x) @ self.lora_A.T @ self.lora_B.T                  # (…, k) → (…, r) → (…, d)
        return self.base(x) + self.scaling * update

    def merged(self) -> nn.Linear:
        """A plain ``nn.Linear`` holding ``W₀ + ΔW`` (and the base bias): the same outputs, no extra cost."""
        merged = nn.Linear(self.base.in_features, self.base.out_features, bias=self.base.bias is not None,
                           device=self.base.weight.device, dtype=self.base.weight.dtype)
        with torch.no_grad():
            merged.weight.copy_(self.base.weight + self.delta_weight())
            if self.base.bias is not None:
                merged.bias.copy_(self.base.bias)
        return merged

    def extra_repr(self) -> str:
        return f"r={self.r}, alpha={self.alpha:g}"


def _replace(model: nn.Module, name: str, module: nn.Module) -> None:
    """Put ``module`` where ``model``'s submodule ``name`` ("encoder.layers.0.self_attn.q_proj") is."""
    parent_name, _, child = name.rpartition(".")
    setattr(model.get_submodule(parent_name) if parent_name else model, child, module)


def _adapters(model: nn.Module) -> dict[str, nn.Parameter]:
    """The adapters' lora_A / lora_B parameters, by their names in ``model``."""
    return {name: p for name, p in model.named_parameters() if name.rsplit(".", 1)[-1] in ("lora_A", "lora_B")}


def add_lora(model: nn.Module, targets: tuple[str, ...] | list[str], *, r: int, alpha: float,
             dropout: float = 0.0) -> list[str]:
    """Wrap every ``nn.Linear`` of ``model`` whose name ends with one of ``targets`` (``"q_proj"``,
    ``"self_attn.v_proj"``) in a :class:`LoRALinear`, and freeze every other parameter. Returns the wrapped
    names; a target that matches no linear layer is an error (a typo would otherwise train nothing)."""
    _check_module(model)
    if isinstance(targets, str) or not isinstance(targets, (tuple, list)) or not targets:
        raise TypeError(f"targets must be a non-empty list of module-name suffixes, got {received(targets)}")
    if not all(isinstance(t, str) and t for t in targets):
        raise TypeError(f"targets must hold non-empty strings, got {targets!r}")
    if any(isinstance(m, LoRALinear) for m in model.modules()):
        raise ValueError("model already holds LoRA adapters: merge_lora(model) first, or train the ones it has")
    chosen = [name for name, m in model.named_modules() if isinstance(m, nn.Linear)
              and any(name == t or name.endswith("." + t) for t in targets)]
    unmatched = [t for t in targets if not any(n == t or n.endswith("." + t) for n in chosen)]
    if unmatched:
        raise ValueError(f"no nn.Linear of the model is named like {unmatched}; its linear layers are e.g. "
                         f"{[n for n, m in model.named_modules() if isinstance(m, nn.Linear)][:6]}")
    model.requires_grad_(False)
    for name in chosen:
        _replace(model, name, LoRALinear(model.get_submodule(name), r, alpha, dropout))
    return chosen


def merge_lora(model: nn.Module) -> int:
    """Replace every :class:`LoRALinear` of ``model`` by its merged ``nn.Linear``, in place; returns how many."""
    _check_module(model)
    found = [(name, m) for name, m in model.named_modules() if isinstance(m, LoRALinear)]
    for name, module in found:
        _replace(model, name, module.merged())
    return len(found)


def lora_state_dict(model: nn.Module) -> dict[str, torch.Tensor]:
    """Only the adapters' ``lora_A`` / ``lora_B`` tensors, by their names in ``model``: what a task stores."""
    _check_module(model)
    found = {name: p.detach().clone() for name, p in _adapters(model).items()}
    if not found:
        raise ValueError("model holds no LoRA adapters (add_lora adds them)")
    return found


def load_lora_state_dict(model: nn.Module, state: dict[str, torch.Tensor]) -> None:
    """Copy adapters saved by :func:`lora_state_dict` into a model prepared with the same :func:`add_lora` call.
    Every adapter of the model must be in ``state`` and every tensor of ``state`` must fit one: no partial load."""
    _check_module(model)
    if not isinstance(state, dict):
        raise TypeError(f"state must be a dict of name → tensor, got {type(state).__name__}")
    own = _adapters(model)
    if not own:
        raise ValueError("model holds no LoRA adapters: call add_lora with the same targets, r and alpha first")
    missing, unexpected = sorted(set(own) - set(state)), sorted(set(state) - set(own))
    if missing or unexpected:
        raise ValueError(f"the adapters do not match the model: missing {missing[:4]}, unexpected {unexpected[:4]}")
    for name, p in own.items():
        given = state[name]
        if not isinstance(given, torch.Tensor) or given.shape != p.shape:
            shown = tuple(given.shape) if isinstance(given, torch.Tensor) else received(given)
            raise ValueError(f"{name}: expected a tensor of shape {tuple(p.shape)}, got {shown}")
    with torch.no_grad():
        for name, p in own.items():
            p.copy_(state[name])

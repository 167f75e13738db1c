"""Recurrent cells from scratch: one Elman step, one LSTM step, the LSTM's forget-gate bias.

Each cell mirrors a PyTorch module so that the parity tests can copy weights across and compare
outputs *and* gradients to 1e-5 (``tests/rnn/test_rnn.py``): :class:`RNNCell` is ``nn.RNNCell``
(h_t = tanh(W x_t + V h_{t-1} + b)), :class:`LSTMCell` is ``nn.LSTMCell`` (the four gate equations
below). :func:`init_forget_gate_bias` sets the forget-gate bias of any LSTM, ours or PyTorch's.
The layers that unroll these cells over time — stacked, bidirectional, with lengths — are in
:mod:`coursekit.rnn.layers`.

References
----------
* J. L. Elman (1990), *Finding structure in time*, Cognitive Science 14 — the simple recurrent network.
* S. Hochreiter, J. Schmidhuber (1997), *Long short-term memory*; F. Gers, J. Schmidhuber,
  F. Cummins (2000), *Learning to forget* — the forget gate.
* R. Jozefowicz, W. Zaremba, I. Sutskever (2015), *An empirical exploration of recurrent network
  architectures* — initialise the forget-gate bias to 1.

Weight layout (the same as PyTorch, so ``from_torch`` is a plain copy)
----------------------------------------------------------------------
PyTorch keeps *two* bias vectors, ``bias_ih`` and ``bias_hh``; the Elman ``b`` is their sum.
For the LSTM the four gates are stacked along the first axis of every weight, in the order
**i, f, g, o** (input gate, forget gate, candidate, output gate)::

    weight_ih (4H, I) = [W_i; W_f; W_g; W_o]     weight_hh (4H, H) = [V_i; V_f; V_g; V_o]

    i_t = σ(W_i x_t + V_i h_{t-1} + b_i)          f_t = σ(W_f x_t + V_f h_{t-1} + b_f)
    g_t = tanh(W_g x_t + V_g h_{t-1} + b_g)       o_t = σ(W_o x_t + V_o h_{t-1} + b_o)
    c_t = f_t ⊙ c_{t-1} + i_t ⊙ g_t               h_t = o_t ⊙ tanh(c_t)
"""

from __future__ import annotations

import math

import torch
from torch import nn

from coursekit.validation import check_positive_int, check_same_dtype, check_tensor

__all__ = [
    "GATE_ORDER",
    "LSTMCell",
    "RNNCell",
    "init_forget_gate_bias",
]

#: The order in which PyTorch (and this module) stacks the LSTM gates in every weight matrix.
GATE_ORDER = ("i", "f", "g", "o")

_NONLINEARITIES = {"tanh": torch.tanh, "relu": torch.relu}


def _check_real(value, name: str) -> float:
    """A finite real number (negative allowed): bools, strings, NaN and infinity are refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value}")
    return float(value)


def _check_pair(state, name: str, what: str) -> None:
    """An LSTM state: a tuple (or list) of exactly two tensors."""
    if not isinstance(state, (tuple, list)):
        raise TypeError(f"{name} must be a tuple {what}, got {type(state).__name__}")
    if len(state) != 2:
        raise TypeError(f"{name} must be a tuple {what}, got a {type(state).__name__} of {len(state)}")


# ----------------------------------------------------------------------------------------------
# Cells: one time step
# ----------------------------------------------------------------------------------------------
class _Cell(nn.Module):
    """Parameters shared by both cells: ``weight_ih (G*H, I)``, ``weight_hh (G*H, H)``, two biases."""

    n_gates = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True):
        super().__init__()
        self.input_size = check_positive_int(input_size, "input_size")
        self.hidden_size = check_positive_int(hidden_size, "hidden_size")
        G, H = self.n_gates, hidden_size
        self.weight_ih = nn.Parameter(torch.empty(G * H, input_size))   # W
        self.weight_hh = nn.Parameter(torch.empty(G * H, H))            # V
        if bias:
            self.bias_ih = nn.Parameter(torch.empty(G * H))
            self.bias_hh = nn.Parameter(torch.empty(G * H))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's initialisation: every weight and bias ~ U(-1/√H, 1/√H)."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    def _pre_activation(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """W x + V h + b for the whole batch: ``(B, G*H)``."""
        a = x @ self.weight_ih.T + h @ self.weight_hh.T
        if self.bias_ih is not None:
            a = a + self.bias_ih + self.bias_hh
        return a

    def _check_step_input(self, x, state_shapes: dict[str, torch.Tensor | None]) -> None:
        check_tensor(x, "x", ndim=2, floating=True)
        if x.shape[1] != self.input_size:
            raise ValueError(f"x must have shape (B, input_size={self.input_size}), got {tuple(x.shape)}")
        check_same_dtype(x, "x", self.weight_ih)
        want = (x.shape[0], self.hidden_size)
        for name, s in state_shapes.items():
            if s is None:
                continue
            check_tensor(s, name, floating=True)
            check_same_dtype(s, name, self.weight_ih)
            if tuple(s.shape) != want:
                raise ValueError(f"{name} must have shape (B, hidden_size) = {want} to match x of shape "
                                 f"{tuple(x.shape)}, got {tuple(s.shape)}")

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}, bias={self.bias_ih is not None}"


class RNNCell(_Cell):
    """One Elman step (Elman 1990): ``h_t = tanh(W x_t + V h_{t-1} + b)``.

    ``W = weight_ih``, ``V = weight_hh``, ``b = bias_ih + bias_hh``; same parameters as
    ``nn.RNNCell``. ``nonlinearity`` is ``"tanh"`` (Elman) or ``"relu"``.
    """

    n_gates = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh"):
        if nonlinearity not in _NONLINEARITIES:
            raise ValueError(f"nonlinearity must be one of {sorted(_NONLINEARITIES)}, got {nonlinearity!r}")
        super().__init__(input_size, hidden_size, bias)
        self.nonlinearity = nonlinearity

    def forward(self, x: torch.Tensor, h: torch.Tensor | None = None) -> torch.Tensor:
        """``x (B, I)``, ``h (B, H)`` (zeros if None) → ``h_t (B, H)``."""
        self._check_step_input(x, {"h": h})
        if h is None:
            h = x.new_zeros(x.shape[0], self.hidden_size)
        return _NONLINEARITIES[self.nonlinearity](self._pre_activation(x, h))

    @classmethod
    def from_torch(cls, cell: nn.RNNCell) -> RNNCell:
        """A copy of ``nn.RNNCell`` (same weights, dtype and device)."""
        if not isinstance(cell, nn.RNNCell):
            raise TypeError(f"expected an nn.RNNCell, got {type(cell).__name__}")
        ours = cls(cell.input_size, cell.hidden_size, bias=cell.bias, nonlinearity=cell.nonlinearity)
        return _copy_params(ours, cell, {n: n for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")})


class LSTMCell(_Cell):
    """One LSTM step (Hochreiter & Schmidhuber 1997, with the forget gate of Gers et al. 2000).

    The four gate equations (gates stacked i, f, g, o in every weight, as in ``nn.LSTMCell``)::

        i = σ(W_i x + V_i h + b_i)     input gate: how much of the candidate to write
        f = σ(W_f x + V_f h + b_f)     forget gate: how much of the old cell to keep
        g = tanh(W_g x + V_g h + b_g)  candidate cell content
        o = σ(W_o x + V_o h + b_o)     output gate: how much of the cell to show
        c' = f ⊙ c + i ⊙ g             additive update: the "gradient highway"
        h' = o ⊙ tanh(c')

    ``forget_bias`` (e.g. 1.0, Jozefowicz et al. 2015) sets b_f to that value at initialisation.
    """

    n_gates = 4

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, forget_bias: float | None = None):
        if forget_bias is not None:
            _check_real(forget_bias, "forget_bias")
        super().__init__(input_size, hidden_size, bias)
        if forget_bias is not None:
            init_forget_gate_bias(self, forget_bias)

    def gates(self, x: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]) -> dict[str, torch.Tensor]:
        """The activations of the four gates, each ``(B, H)``: ``{"i", "f", "g", "o"}``."""
        _check_pair(state, "state", "(h, c)")
        self._check_step_input(x, {"h": state[0], "c": state[1]})
        return self._gates(x, state)

    def _gates(self, x: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]) -> dict[str, torch.Tensor]:
        """:meth:`gates` without the checks (:meth:`forward` has made them)."""
        h, _ = state
        a_i, a_f, a_g, a_o = self._pre_activation(x, h).chunk(4, dim=-1)   # 4 × (B, H)
        return {"i": torch.sigmoid(a_i), "f": torch.sigmoid(a_f), "g": torch.tanh(a_g), "o": torch.sigmoid(a_o)}

    def forward(self, x: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor] | None = None,
                *, return_gates: bool = False):
        """``x (B, I)``, ``state = (h, c)`` each ``(B, H)`` (zeros if None) → ``(h', c')``.

        With ``return_gates=True`` also returns the gate dict of :meth:`gates`.
        """
        if state is not None:
            _check_pair(state, "state", "(h, c)")
        h, c = state if state is not None else (None, None)
        self._check_step_input(x, {"h": h, "c": c})
        if state is None:
            h = c = x.new_zeros(x.shape[0], self.hidden_size)
        g = self._gates(x, (h, c))
        c_new = g["f"] * c + g["i"] * g["g"]         # (B, H)
        h_new = g["o"] * torch.tanh(c_new)           # (B, H)
        return ((h_new, c_new), g) if return_gates else (h_new, c_new)

    @classmethod
    def from_torch(cls, cell: nn.LSTMCell) -> LSTMCell:
        """A copy of ``nn.LSTMCell`` (same weights, dtype and device)."""
        if not isinstance(cell, nn.LSTMCell):
            raise TypeError(f"expected an nn.LSTMCell, got {type(cell).__name__}")
        ours = cls(cell.input_size, cell.hidden_size, bias=cell.bias)
        return _copy_params(ours, cell, {n: n for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")})


def init_forget_gate_bias(module: nn.Module, value: float = 1.0) -> nn.Module:
    """Set the LSTM forget-gate bias to ``value`` (Jozefowicz et al. 2015 recommend 1).

    Works on this module's :class:`LSTMCell` / :class:`LSTM`, on ``nn.LSTM`` / ``nn.LSTMCell``, and on any
    module holding some of them (only their biases are touched). PyTorch has two bias vectors; the total
    b_f = bias_ih[f] + bias_hh[f] is set to ``value`` by writing it into ``bias_ih`` and zeroing
    ``bias_hh`` in the f block (rows H..2H).
    """
    if not isinstance(module, nn.Module):
        raise TypeError(f"module must be an nn.Module, got {type(module).__name__}")
    value = _check_real(value, "value")
    lstms = [m for m in module.modules() if isinstance(m, (LSTMCell, nn.LSTM, nn.LSTMCell))]
    if not lstms:
        raise ValueError(f"{type(module).__name__} holds no LSTM (LSTM, LSTMCell, nn.LSTM or nn.LSTMCell): only "
                         "an LSTM has a forget gate, the second of the 4*H rows of its biases")
    found = False
    with torch.no_grad():
        for lstm in lstms:
            for name, p in lstm.named_parameters(recurse=False):
                if name.startswith(("bias_ih", "bias_hh")):
                    H = p.shape[0] // 4
                    p[H:2 * H] = value if name.startswith("bias_ih") else 0.0
                    found = True
    if not found:
        raise ValueError(f"{type(module).__name__} has no LSTM biases to set (it was built with bias=False)")
    return module


# ----------------------------------------------------------------------------------------------
# Weights from PyTorch (also used by the layers of coursekit.rnn.layers)
# ----------------------------------------------------------------------------------------------
def _copy_params(ours: nn.Module, theirs: nn.Module, names: dict[str, str]) -> nn.Module:
    """Copy ``theirs.<names[k]>`` into ``ours.<k>``; move ``ours`` to their dtype and device."""
    src = dict(theirs.named_parameters())
    ref = next(iter(src.values()))
    ours = ours.to(dtype=ref.dtype, device=ref.device)
    dst = dict(ours.named_parameters())
    names = {mine: theirs_name for mine, theirs_name in names.items() if mine in dst}  # bias=False
    if set(dst) != set(names):
        raise ValueError(f"parameter names do not line up: ours {sorted(dst)} vs mapping {sorted(names)}")
    with torch.no_grad():
        for mine, theirs_name in names.items():
            if dst[mine] is None or theirs_name not in src:
                raise ValueError(f"cannot copy {theirs_name!r} into {mine!r}")
            dst[mine].copy_(src[theirs_name])
    return ours

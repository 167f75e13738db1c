"""Recurrent networks from scratch: Elman RNN and LSTM layers — stacks, bidirectionality, lengths.

Everything here mirrors a PyTorch module so that the parity tests can copy weights across and
compare outputs *and* gradients to 1e-5 (``tests/rnn/test_rnn.py``):

==============================  =====================================  =================
this module                     equation                               PyTorch reference
==============================  =====================================  =================
:class:`RNN`, :class:`LSTM`     cells unrolled over time, stacked,     ``nn.RNN``, ``nn.LSTM``
                                optionally bidirectional, with lengths (also packed input)
==============================  =====================================  =================

:func:`from_torch` turns any of ``nn.RNN``, ``nn.LSTM``, ``nn.RNNCell``, ``nn.LSTMCell`` into its
from-scratch twin, weights copied. The cells the layers unroll — :class:`~coursekit.rnn.cells.RNNCell`
(h_t = tanh(W x_t + V h_{t-1} + b)) and :class:`~coursekit.rnn.cells.LSTMCell` — with their weight
layout, the LSTM gate equations and :func:`~coursekit.rnn.cells.init_forget_gate_bias`, are in
:mod:`coursekit.rnn.cells`.

Built on these layers elsewhere: :mod:`coursekit.rnn.bptt` (the Elman network with its read-out and
backpropagation through time by hand), :mod:`coursekit.rnn.char_lm` (the character-level language
models of notebooks 03/04) and :mod:`coursekit.rnn.elmo` (ELMo's scalar mix).

Shapes follow PyTorch: a sequence is ``(T, B, I)`` (``(B, T, I)`` with ``batch_first=True``) and
states are ``(num_layers * num_directions, B, H)`` with layer ``l``, direction ``d`` at index
``l * num_directions + d``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from coursekit.rnn.cells import (
    _NONLINEARITIES,
    LSTMCell,
    RNNCell,
    _Cell,
    _check_pair,
    _check_real,
    _copy_params,
    init_forget_gate_bias,
)
from coursekit.validation import check_positive_int, check_probability, check_same_dtype, check_tensor

__all__ = [
    "LSTM",
    "RNN",
    "from_torch",
    "lengths_to_mask",
]


# ----------------------------------------------------------------------------------------------
# Sequences: cells unrolled over time, stacked and bidirectional, with lengths
# ----------------------------------------------------------------------------------------------
def lengths_to_mask(lengths: torch.Tensor, T: int) -> torch.Tensor:
    """``(B,)`` integer lengths in ``[0, T]`` → bool mask ``(T, B)``, True at real time steps (``t < length``)."""
    check_tensor(lengths, "lengths", ndim=1)
    if lengths.is_floating_point() or lengths.is_complex() or lengths.dtype == torch.bool:
        raise TypeError(f"lengths must be an integer tensor, got {lengths.dtype}")
    check_positive_int(T, "T")
    if lengths.numel():
        lo, hi = int(lengths.min()), int(lengths.max())
        if lo < 0 or hi > T:
            raise ValueError(f"lengths must lie in [0, {T}], got values in [{lo}, {hi}]")
    return _lengths_mask(lengths, T)


def _lengths_mask(lengths: torch.Tensor, T: int) -> torch.Tensor:
    """:func:`lengths_to_mask` for lengths already checked."""
    return torch.arange(T, device=lengths.device)[:, None] < lengths[None, :]


class _Recurrent(nn.Module):
    """Shared driver of :class:`RNN` and :class:`LSTM`: unrolls ``cells[l * D + d]`` over time."""

    n_state = 1  # tensors in the recurrent state: 1 (h) for the RNN, 2 (h, c) for the LSTM

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False):
        super().__init__()
        self.input_size = check_positive_int(input_size, "input_size")
        self.hidden_size = check_positive_int(hidden_size, "hidden_size")
        self.num_layers = check_positive_int(num_layers, "num_layers")
        check_probability(dropout, "dropout", inclusive_high=False)
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional = bidirectional
        self.num_directions = 2 if bidirectional else 1
        D = self.num_directions
        self.cells = nn.ModuleList(
            self._make_cell(input_size if layer == 0 else D * hidden_size, hidden_size)
            for layer in range(num_layers) for _ in range(D)
        )

    def _make_cell(self, input_size: int, hidden_size: int) -> _Cell:
        raise NotImplementedError

    def _step(self, cell: _Cell, x: torch.Tensor, state: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
        raise NotImplementedError

    # -- validation -----------------------------------------------------------------------------
    def _check_inputs(self, x, state, lengths):
        check_tensor(x, "input", ndim=3, floating=True)
        if x.shape[-1] != self.input_size:
            layout = "(B, T, input_size)" if self.batch_first else "(T, B, input_size)"
            raise ValueError(f"input must have shape {layout} with input_size={self.input_size}, "
                             f"got {tuple(x.shape)}")
        T, B = (x.shape[1], x.shape[0]) if self.batch_first else (x.shape[0], x.shape[1])
        if T == 0:
            raise ValueError(f"input has zero time steps, got shape {tuple(x.shape)}")
        if B == 0:
            raise ValueError(f"input has an empty batch, got shape {tuple(x.shape)}")
        weight = self.cells[0].weight_ih
        check_same_dtype(x, "input", weight)
        want = (self.num_layers * self.num_directions, B, self.hidden_size)
        if state is not None:
            names = ("h0",) if self.n_state == 1 else ("h0", "c0")
            tensors = (state,) if self.n_state == 1 else state
            if self.n_state == 2:
                _check_pair(state, "state", "(h0, c0)")
            for name, s in zip(names, tensors):
                check_tensor(s, name, floating=True)
                check_same_dtype(s, name, weight)
                if tuple(s.shape) != want:
                    raise ValueError(f"{name} must have shape (num_layers*num_directions, B, hidden_size) = "
                                     f"{want} for input of shape {tuple(x.shape)}, got {tuple(s.shape)}")
        if lengths is not None:
            if isinstance(lengths, (list, tuple)):
                lengths = torch.tensor(lengths)
            check_tensor(lengths, "lengths", ndim=1)
            if lengths.is_floating_point() or lengths.dtype == torch.bool:
                raise TypeError(f"lengths must be an integer tensor, got {lengths.dtype}")
            if lengths.shape[0] != B:
                raise ValueError(f"lengths must have one entry per sequence (B={B}), got {lengths.shape[0]}")
            lo, hi = int(lengths.min()), int(lengths.max())
            if hi > T:
                raise ValueError(f"lengths must be at most the sequence length T={T}, got a length of {hi}")
            if lo < 1:
                raise ValueError(f"lengths must be at least 1, got {lo}")
            lengths = lengths.to(device=x.device, dtype=torch.long)
        return T, B, lengths

    # -- the unrolled computation -------------------------------------------------------------------
    def _run_direction(self, cell, x, state, mask, reverse: bool):
        """Run one cell over ``x (T, B, I)``; steps where ``mask`` is False keep the state, output 0.

        Freezing the state past each sequence's length gives the final state at the true length
        (forward direction); for the backward direction the state stays at its initial value until
        ``t = length - 1`` — exactly what ``nn.LSTM`` does on a ``PackedSequence``.
        """
        T = x.shape[0]
        outputs = [None] * T
        for t in (reversed(range(T)) if reverse else range(T)):
            new = self._step(cell, x[t], state)
            if mask is not None:
                keep = mask[t][:, None]                                        # (B, 1)
                new = tuple(torch.where(keep, n, s) for n, s in zip(new, state))
                outputs[t] = torch.where(keep, new[0], torch.zeros_like(new[0]))
            else:
                outputs[t] = new[0]
            state = new
        return torch.stack(outputs), state                                     # (T, B, H)

    def forward_layers(self, x: torch.Tensor, state=None, lengths=None):
        """Like :meth:`forward` but returns the outputs of *every* layer: ``([out_1, …, out_L], state_n)``.

        Each ``out_l`` has the layout of the input, width ``num_directions * hidden_size`` (ELMo
        mixes these with :class:`ScalarMix`).
        """
        T, B, lengths = self._check_inputs(x, state, lengths)
        if self.batch_first:
            x = x.transpose(0, 1)                                              # (T, B, I)
        L, D, H = self.num_layers, self.num_directions, self.hidden_size
        if state is None:
            zeros = x.new_zeros(L * D, B, H)
            state = tuple(zeros for _ in range(self.n_state))
        elif self.n_state == 1:
            state = (state,)
        mask = None if lengths is None else _lengths_mask(lengths, T)          # (T, B)
        layer_outputs, finals = [], [[] for _ in range(self.n_state)]
        inp = x
        for layer in range(L):
            outs = []
            for d in range(D):
                k = layer * D + d
                out, final = self._run_direction(self.cells[k], inp, tuple(s[k] for s in state), mask,
                                                 reverse=d == 1)
                outs.append(out)
                for store, s in zip(finals, final):
                    store.append(s)
            out = torch.cat(outs, dim=-1)                                      # (T, B, D*H)
            layer_outputs.append(out.transpose(0, 1) if self.batch_first else out)
            inp = out
            if self.dropout and self.training and layer < L - 1:
                inp = F.dropout(inp, self.dropout, training=True)
        final_state = tuple(torch.stack(store) for store in finals)            # each (L*D, B, H)
        return layer_outputs, (final_state[0] if self.n_state == 1 else final_state)

    def forward(self, x: torch.Tensor, state=None, lengths=None):
        """``x (T, B, I)`` (or ``(B, T, I)``) → ``(output, final_state)`` like the PyTorch module.

        ``lengths (B,)``: true lengths of a right-padded batch; outputs past each length are 0 and
        the final states are taken at the true length (same as feeding a ``PackedSequence``).
        """
        layers, final = self.forward_layers(x, state, lengths)
        return layers[-1], final

    def extra_repr(self) -> str:
        return (f"{self.input_size}, {self.hidden_size}, num_layers={self.num_layers}, "
                f"batch_first={self.batch_first}, bidirectional={self.bidirectional}")

    # -- weights from PyTorch -------------------------------------------------------------------------
    @classmethod
    def _torch_kwargs(cls, module) -> dict:
        if getattr(module, "proj_size", 0):
            raise ValueError("nn.LSTM with proj_size > 0 is not supported")
        return {"input_size": module.input_size, "hidden_size": module.hidden_size,
                    "num_layers": module.num_layers, "bias": module.bias, "batch_first": module.batch_first,
                    "dropout": module.dropout, "bidirectional": module.bidirectional}

    @classmethod
    def _from_torch(cls, module, **extra):
        ours = cls(**cls._torch_kwargs(module), **extra)
        D = ours.num_directions
        names = {}
        for layer in range(ours.num_layers):
            for d in range(D):
                suffix = f"_l{layer}" + ("_reverse" if d == 1 else "")
                for p in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                    names[f"cells.{layer * D + d}.{p}"] = p + suffix
        return _copy_params(ours, module, names)


class RNN(_Recurrent):
    """Multi-layer, optionally bidirectional Elman RNN; same interface and weights as ``nn.RNN``.

    ``forward(x, h0=None, lengths=None) -> (output, h_n)`` with ``output (T, B, D*H)`` and
    ``h_n (L*D, B, H)``.
    """

    n_state = 1

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False):
        if nonlinearity not in _NONLINEARITIES:
            raise ValueError(f"nonlinearity must be one of {sorted(_NONLINEARITIES)}, got {nonlinearity!r}")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional)

    def _make_cell(self, input_size, hidden_size):
        return RNNCell(input_size, hidden_size, bias=self.bias, nonlinearity=self.nonlinearity)

    def _step(self, cell, x, state):
        return (cell(x, state[0]),)

    @classmethod
    def from_torch(cls, rnn: nn.RNN) -> RNN:
        """A copy of ``nn.RNN`` (same configuration, weights, dtype and device)."""
        if not isinstance(rnn, nn.RNN):
            raise TypeError(f"expected an nn.RNN, got {type(rnn).__name__}")
        nonlinearity = "tanh" if rnn.mode == "RNN_TANH" else "relu"
        return cls._from_torch(rnn, nonlinearity=nonlinearity)


class LSTM(_Recurrent):
    """Multi-layer, optionally bidirectional LSTM; same interface and weights as ``nn.LSTM``.

    ``forward(x, (h0, c0)=None, lengths=None) -> (output, (h_n, c_n))`` with ``output (T, B, D*H)``
    (top layer, both directions concatenated) and ``h_n, c_n (L*D, B, H)`` (every layer's final state).
    """

    n_state = 2

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 forget_bias: float | None = None):
        if forget_bias is not None:
            _check_real(forget_bias, "forget_bias")
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional)
        if forget_bias is not None:
            init_forget_gate_bias(self, forget_bias)

    def _make_cell(self, input_size, hidden_size):
        return LSTMCell(input_size, hidden_size, bias=self.bias)

    def _step(self, cell, x, state):
        return cell(x, state)

    @classmethod
    def from_torch(cls, lstm: nn.LSTM) -> LSTM:
        """A copy of ``nn.LSTM`` (same configuration, weights, dtype and device)."""
        if not isinstance(lstm, nn.LSTM):
            raise TypeError(f"expected an nn.LSTM, got {type(lstm).__name__}")
        return cls._from_torch(lstm)


def from_torch(module: nn.Module) -> nn.Module:
    """The from-scratch twin of ``nn.RNN`` / ``nn.LSTM`` / ``nn.RNNCell`` / ``nn.LSTMCell``, weights copied."""
    for torch_cls, ours in ((nn.LSTM, LSTM), (nn.RNN, RNN), (nn.LSTMCell, LSTMCell), (nn.RNNCell, RNNCell)):
        if isinstance(module, torch_cls):
            return ours.from_torch(module)
    raise TypeError(f"from_torch expects nn.RNN, nn.LSTM, nn.RNNCell or nn.LSTMCell, got {type(module).__name__}")

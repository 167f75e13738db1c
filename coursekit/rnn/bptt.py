"""Backpropagation through time by hand, on Elman's simple recurrent network (notebook 03).

==============================  =====================================  =================
this module                     equation                               PyTorch reference
==============================  =====================================  =================
:class:`ElmanNetwork`           h_t = tanh(W x_t + V h_{t-1} + b),     ``nn.RNN`` + ``nn.Linear``
                                y_t = U h_t
:func:`elman_bptt`              backprop through time by hand          ``torch.autograd``
==============================  =====================================  =================

Notebook 03 checks :func:`elman_bptt` against autograd on every parameter (its ``dh``, ∂L/∂h_t along all
paths, is the product of Jacobians that vanishes or explodes) and runs :class:`ElmanNetwork` on padded
sequences and in truncated BPTT; the exercise checks of notebook 03 use both as references. The recurrent
layer itself is :class:`coursekit.rnn.layers.RNN`; ``tests/rnn/test_rnn.py`` holds the tests.

References
----------
* J. L. Elman (1990), *Finding structure in time*, Cognitive Science 14 — the simple recurrent network.
* P. Werbos (1990), *Backpropagation through time: what it does and how to do it*, Proc. IEEE 78.
* R. Pascanu, T. Mikolov, Y. Bengio (2013), *On the difficulty of training recurrent neural
  networks* — vanishing/exploding gradients, gradient clipping.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from coursekit.rnn.layers import RNN
from coursekit.validation import check_labels, check_positive_int, check_tensor

__all__ = ["ElmanNetwork", "elman_bptt"]


class ElmanNetwork(nn.Module):
    """Elman's simple recurrent network with a read-out: ``h_t = tanh(W x_t + V h_{t-1} + b)``,
    ``y_t = U h_t`` — a *transducer* (one ``y_t`` per step). Used as an *acceptor* by reading only
    the final state ``h_T``.

    ``forward(x (B, T, I), h0=None, lengths=None) -> (y (B, T, O), h_T (1, B, H))`` (batch first).
    """

    def __init__(self, input_size: int, hidden_size: int, output_size: int, nonlinearity: str = "tanh"):
        super().__init__()
        self.rnn = RNN(input_size, hidden_size, nonlinearity=nonlinearity, batch_first=True)
        self.U = nn.Linear(hidden_size, check_positive_int(output_size, "output_size"), bias=False)

    def forward(self, x, h0=None, lengths=None):
        h, h_T = self.rnn(x, h0, lengths)          # (B, T, H), (1, B, H)
        return self.U(h), h_T                      # (B, T, O)



def elman_bptt(x: torch.Tensor, targets: torch.Tensor, W: torch.Tensor, V: torch.Tensor, b: torch.Tensor,
               U: torch.Tensor, h0: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
    """Forward pass and manual BPTT for a tiny Elman transducer on one sequence.

    ``h_t = tanh(a_t)``, ``a_t = W x_t + V h_{t-1} + b``, ``y_t = U h_t``,
    ``L = Σ_t CE(y_t, targets_t)`` (cross-entropy of every step, summed).

    The backward pass is written with the explicit Jacobians of the unrolled graph:
    ``∂h_t/∂h_{t-1} = J_t = diag(1 - h_t²) V``, so the gradient reaching ``h_t`` is

        δh_t = U^T (softmax(y_t) - onehot(targets_t))  +  J_{t+1}^T δh_{t+1}

    i.e. the gradient of a late loss on an early state is a *product* of Jacobians (which is why it
    vanishes or explodes). Shared weights collect one term per step: ``∂L/∂V = Σ_t δa_t h_{t-1}^T``.

    Shapes: ``x (T, I)``, ``targets (T,)`` int, ``W (H, I)``, ``V (H, H)``, ``b (H,)``, ``U (O, H)``,
    ``h0 (H,)``. Returns ``loss``, the states ``h (T, H)``, ``dh (T, H)`` (∂L/∂h_t, all paths), and the
    gradients ``dW, dV, db, dU, dh0``.
    """
    check_tensor(x, "x", ndim=2, floating=True)
    if x.shape[0] == 0:
        raise ValueError(f"x must hold at least one time step, got shape {tuple(x.shape)}")
    check_tensor(V, "V", ndim=2, floating=True)
    check_tensor(U, "U", ndim=2, floating=True)
    T, I = x.shape  # noqa: E741 - I, O: input/output sizes as in the equations
    H, O = V.shape[0], U.shape[0]  # noqa: E741
    named = [("W", W, (H, I)), ("V", V, (H, H)), ("b", b, (H,)), ("U", U, (O, H))]
    if h0 is not None:
        named.append(("h0", h0, (H,)))
    for name, t, shape in named:
        check_tensor(t, name, floating=True)
        if tuple(t.shape) != shape:
            raise ValueError(f"{name} must have shape {shape}, got {tuple(t.shape)}")
        if t.dtype != x.dtype:
            raise TypeError(f"{name} has dtype {t.dtype} but x has {x.dtype}; give them one dtype")
    check_tensor(targets, "targets", ndim=1)
    if targets.shape[0] != T:
        raise ValueError(f"targets must have one class per step (T={T}), got {targets.shape[0]}")
    check_labels(targets, "targets", O)     # no ignore index: the hand-written gradient has none
    h_prev = x.new_zeros(H) if h0 is None else h0
    # forward, keeping every state
    hs, ys = [], []
    for t in range(T):
        h_prev = torch.tanh(W @ x[t] + V @ h_prev + b)        # (H,)
        hs.append(h_prev)
        ys.append(U @ h_prev)                                 # (O,)
    h, y = torch.stack(hs), torch.stack(ys)                   # (T, H), (T, O)
    loss = F.cross_entropy(y, targets, reduction="sum")
    # backward: dL/dy_t = softmax(y_t) - onehot
    dy = torch.softmax(y, dim=-1) - F.one_hot(targets, y.shape[-1]).to(y.dtype)   # (T, O)
    h_before = torch.cat([(x.new_zeros(H) if h0 is None else h0)[None], h[:-1]])  # h_{t-1}, (T, H)
    dW, dV, db, dU = torch.zeros_like(W), torch.zeros_like(V), torch.zeros_like(b), dy.T @ h
    dh = torch.zeros_like(h)
    carry = torch.zeros(H, dtype=x.dtype, device=x.device)    # J_{t+1}^T δh_{t+1}
    for t in reversed(range(T)):
        dh[t] = U.T @ dy[t] + carry                           # δh_t
        J_t = torch.diag(1 - h[t] ** 2) @ V                   # ∂h_t/∂h_{t-1}, (H, H)
        da = (1 - h[t] ** 2) * dh[t]                          # δa_t
        dW += torch.outer(da, x[t])
        dV += torch.outer(da, h_before[t])
        db += da
        carry = J_t.T @ dh[t]
    return {"loss": loss, "h": h, "dh": dh, "dW": dW, "dV": dV, "db": db, "dU": dU, "dh0": carry}


"""Exercise checks for notebooks 03 (RNNs, BPTT) and 04 (LSTM internals).

Each check runs the student's function on a few seeded inputs, compares with the reference in
:mod:`coursekit.rnn` (or a few lines of PyTorch), and, on a mismatch, names the typical mistake the
wrong value matches (gate order, a forgotten forget gate, a missing detach, a missing softmax …).
"""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import nn

from coursekit import rnn
from coursekit.exercises.core import CheckFailed, describe, exercise_check, expect_close, run_student

__all__ = [
    "check_elman_step",
    "check_state_gradients",
    "check_truncated_bptt",
    "check_lstm_step",
    "check_forget_gate_bias",
    "check_scalar_mix",
]


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# ----------------------------------------------------------------------------------------------
# 03 — Elman step
# ----------------------------------------------------------------------------------------------
def _elman_cases():
    for seed, (B, I, H) in enumerate([(2, 3, 4), (1, 5, 5), (3, 2, 6)]):  # noqa: E741 - I, O: input/output sizes as in the equations
        g = _gen(seed)
        x, h = torch.randn(B, I, generator=g), torch.randn(B, H, generator=g)
        W, V, b = torch.randn(H, I, generator=g), torch.randn(H, H, generator=g) * 0.5, torch.randn(H, generator=g)
        yield f"x of shape {(B, I)}, h of shape {(B, H)}", (x, h, W, V, b)


@exercise_check("one Elman RNN step", reimplements=(
    "coursekit.rnn.RNNCell", "coursekit.rnn.RNN", "torch.nn.RNNCell", "torch.nn.RNN", "torch.rnn_tanh_cell"))
def check_elman_step(student_fn):
    """``student_fn(x (B, I), h (B, H), W (H, I), V (H, H), b (H,)) -> h_t (B, H)``,
    ``h_t = tanh(W x_t + V h_{t-1} + b)`` for a batch of row vectors."""
    for case, (x, h, W, V, b) in _elman_cases():
        got = run_student(student_fn, case, x, h, W, V, b)
        a = x @ W.T + h @ V.T + b
        expect_close(got, torch.tanh(a), case=case, mistakes={
            "the tanh is missing (h_t = tanh(W x + V h + b))": a,
            "a sigmoid was used where the Elman network uses tanh": torch.sigmoid(a),
            "the recurrent term V h_{t-1} is missing": torch.tanh(x @ W.T + b),
            "the bias b is missing": torch.tanh(x @ W.T + h @ V.T),
            "V is used untransposed (h @ V instead of h @ V.T)": torch.tanh(x @ W.T + h @ V + b),
        })


# ----------------------------------------------------------------------------------------------
# 03 — gradients through time as a product of Jacobians
# ----------------------------------------------------------------------------------------------
def _state_gradients(h: torch.Tensor, V: torch.Tensor, dL_dhT: torch.Tensor, *, derivative=True,
                     transpose=True) -> torch.Tensor:
    """∂L/∂h_t for a loss on h_T only: δ_T = dL_dhT, δ_{t-1} = J_t^T δ_t, J_t = diag(1 - h_t²) V."""
    T = h.shape[0]
    out = [None] * T
    delta = dL_dhT
    for t in reversed(range(T)):
        out[t] = delta
        scale = (1 - h[t] ** 2) if derivative else torch.ones_like(h[t])
        J = scale[:, None] * V                                    # diag(1 - h_t²) V
        delta = (J.T if transpose else J) @ delta
    return torch.stack(out)


def _state_gradient_cases():
    for seed, (T, H) in enumerate([(5, 3), (8, 4), (2, 6)]):
        g = _gen(10 + seed)
        h = torch.tanh(torch.randn(T, H, generator=g, dtype=torch.float64))
        V = torch.randn(H, H, generator=g, dtype=torch.float64)
        yield f"T={T}, H={H}", (h, V, torch.randn(H, generator=g, dtype=torch.float64))


@exercise_check("gradients through time as Jacobian products", reimplements=(
    # the exercise is backpropagation by hand: autograd (and the library's manual BPTT) would do it for you
    "coursekit.rnn.elman_bptt", "torch.autograd.grad", "torch.autograd.backward", "torch.Tensor.backward",
    "torch.autograd.functional.jacobian", "torch.autograd.functional.vjp", "torch.func.vjp", "torch.func.jacrev"))
def check_state_gradients(student_fn):
    """``student_fn(h (T, H), V (H, H), dL_dhT (H,)) -> (T, H)``: row t is ∂L/∂h_t for a loss that
    depends on the last state only, with h_t = tanh(W x_t + V h_{t-1} + b)."""
    for case, (h, V, d) in _state_gradient_cases():
        got = run_student(student_fn, case, h, V, d)
        expect_close(got, _state_gradients(h, V, d), case=case, atol=1e-8, rtol=1e-6, mistakes={
            "the tanh derivative diag(1 - h_t²) is missing from each Jacobian": _state_gradients(h, V, d,
                                                                                                derivative=False),
            "the Jacobian is not transposed (use J_t^T δ_t when going backwards)": _state_gradients(h, V, d,
                                                                                                  transpose=False),
            "the rows are in reverse order (row t must be ∂L/∂h_t, row T-1 is dL_dhT itself)":
                _state_gradients(h, V, d).flip(0),
        })


# ----------------------------------------------------------------------------------------------
# 03 — truncated BPTT
# ----------------------------------------------------------------------------------------------
def reference_truncated_bptt(model: nn.Module, x: torch.Tensor, targets: torch.Tensor, k: int) -> list[float]:
    """Truncated BPTT every ``k`` steps: carry the state over, but detach it at each chunk boundary."""
    h, losses = None, []
    for start in range(0, x.shape[1], k):
        y, h = model(x[:, start:start + k], h)                     # (B, k, O), (1, B, H)
        loss = F.mse_loss(y, targets[:, start:start + k])
        loss.backward()
        h = h.detach()                                             # keep the value, cut the graph
        losses.append(loss.item())
    return losses


def _window_bptt(model, x, targets, k):
    losses = []
    for start in range(0, x.shape[1], k):
        y, _ = model(x[:, start:start + k], None)
        loss = F.mse_loss(y, targets[:, start:start + k])
        loss.backward()
        losses.append(loss.item())
    return losses


def _undetached_bptt(model, x, targets, k):
    h, losses = None, []
    for start in range(0, x.shape[1], k):
        y, h = model(x[:, start:start + k], h)
        loss = F.mse_loss(y, targets[:, start:start + k])
        loss.backward(retain_graph=True)
        losses.append(loss.item())
    return losses


def _run_on_copy(fn, model, x, targets, k, case):
    m = copy.deepcopy(model)
    m.zero_grad(set_to_none=True)
    try:
        losses = fn(m, x, targets, k)
    except NotImplementedError:
        raise
    except RuntimeError as exc:
        if "backward through the graph a second time" in str(exc):
            raise CheckFailed(f"on {case}, backward() went through the previous chunk's graph a second time. "
                              "It looks like you forgot to detach the hidden state between chunks "
                              "(h = h.detach() after each backward).") from exc
        raise CheckFailed(f"on {case}, your function raised RuntimeError: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - student code
        raise CheckFailed(f"on {case}, your function raised {type(exc).__name__}: {exc}") from exc
    V = m.rnn.cells[0].weight_hh.grad
    return losses, (torch.zeros_like(m.rnn.cells[0].weight_hh) if V is None else V)


@exercise_check("truncated backpropagation through time")
def check_truncated_bptt(student_fn):
    """``student_fn(model, x (B, T, I), targets (B, T, O), k) -> list of chunk losses``: split the
    sequence into chunks of ``k`` steps; for each chunk run ``y, h = model(chunk, h)``, compute
    ``F.mse_loss(y, targets_chunk)``, call ``backward()`` (gradients accumulate) and carry ``h`` to the
    next chunk *detached*. ``model`` is a :class:`coursekit.rnn.ElmanNetwork`."""
    for seed, (B, T, k) in enumerate([(2, 12, 4), (3, 10, 3)]):
        torch.manual_seed(20 + seed)
        model = rnn.ElmanNetwork(3, 5, 2)
        g = _gen(30 + seed)
        x, targets = torch.randn(B, T, 3, generator=g), torch.randn(B, T, 2, generator=g)
        case = f"B={B}, T={T}, k={k}"
        losses, dV = _run_on_copy(student_fn, model, x, targets, k, case)
        want_losses, want_dV = _run_on_copy(reference_truncated_bptt, model, x, targets, k, case)
        if not isinstance(losses, (list, tuple)) or len(losses) != len(want_losses):
            raise CheckFailed(f"on {case}, expected a list of {len(want_losses)} chunk losses "
                              f"(one per chunk of {k} steps), got {describe(losses)}")
        expect_close(torch.tensor([float(v) for v in losses]), torch.tensor(want_losses), case=case,
                     what="the list of chunk losses", mistakes={
                         "the hidden state is reset at every chunk: that is a window of k steps, not "
                         "truncated BPTT (carry h over, detached)":
                             torch.tensor(_run_on_copy(_window_bptt, model, x, targets, k, case)[0]),
                     })
        expect_close(dV, want_dV, case=case, what="the accumulated gradient of V (rnn.cells[0].weight_hh)",
                     mistakes={
                         "the state is not detached (retain_graph=True lets gradients flow into earlier "
                         "chunks again): detach h between chunks":
                             _run_on_copy(_undetached_bptt, model, x, targets, k, case)[1],
                         "the hidden state is reset at every chunk: that is a window of k steps, not "
                         "truncated BPTT (carry h over, detached)":
                             _run_on_copy(_window_bptt, model, x, targets, k, case)[1],
                     })


# ----------------------------------------------------------------------------------------------
# 04 — one LSTM step
# ----------------------------------------------------------------------------------------------
def _lstm_variants(x, h, c, W_ih, W_hh, b):
    """The reference step and typical wrong ones: name -> (h', c')."""
    a = x @ W_ih.T + h @ W_hh.T + b                                      # (B, 4H)
    a_i, a_f, a_g, a_o = a.chunk(4, dim=-1)
    i, f, g, o = torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)

    def out(c_new, h_new=None):
        return (o * torch.tanh(c_new) if h_new is None else h_new), c_new

    # TensorFlow/Keras-style order i, f, o, g  or  i, g, f, o (the "j" gate second)
    tf_i, tf_g, tf_f, tf_o = torch.sigmoid(a_i), torch.tanh(a_f), torch.sigmoid(a_g), torch.sigmoid(a_o)
    return {
        "reference": out(f * c + i * g),
        "the gates are read in the wrong order (PyTorch stacks them i, f, g, o)":
            (tf_o * torch.tanh(tf_f * c + tf_i * tf_g), tf_f * c + tf_i * tf_g),
        "the forget gate is missing (c_t = f ⊙ c_{t-1} + i ⊙ g, not c_{t-1} + i ⊙ g)": out(c + i * g),
        "the old cell is dropped (c_t = f ⊙ c_{t-1} + i ⊙ g, not i ⊙ g)": out(i * g),
        "a sigmoid was used on the candidate g (it is a tanh)": out(f * c + i * torch.sigmoid(a_g)),
        "the tanh on the cell is missing in h_t = o ⊙ tanh(c_t)": out(f * c + i * g, o * (f * c + i * g)),
    }


@exercise_check("one LSTM step", reimplements=(
    "coursekit.rnn.LSTMCell", "coursekit.rnn.LSTM", "torch.nn.LSTMCell", "torch.nn.LSTM", "torch.lstm_cell"))
def check_lstm_step(student_fn):
    """``student_fn(x (B, I), h (B, H), c (B, H), W_ih (4H, I), W_hh (4H, H), b (4H,)) -> (h_t, c_t)``
    with PyTorch's gate layout i, f, g, o (``b`` is the total bias ``bias_ih + bias_hh``)."""
    for seed, (B, I, H) in enumerate([(2, 3, 4), (1, 4, 2), (3, 5, 5)]):  # noqa: E741 - I, O: input/output sizes as in the equations
        g = _gen(40 + seed)
        args = (torch.randn(B, I, generator=g), torch.randn(B, H, generator=g), torch.randn(B, H, generator=g),
                torch.randn(4 * H, I, generator=g), torch.randn(4 * H, H, generator=g), torch.randn(4 * H, generator=g))
        case = f"x {(B, I)}, h and c {(B, H)}"
        got = run_student(student_fn, case, *args)
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise CheckFailed(f"on {case}, return the pair (h_t, c_t); got {describe(got)}")
        variants = _lstm_variants(*args)
        want_h, want_c = variants.pop("reference")
        expect_close(got[1], want_c, case=case, what="c_t", mistakes={k: v[1] for k, v in variants.items()})
        expect_close(got[0], want_h, case=case, what="h_t", mistakes={k: v[0] for k, v in variants.items()})


# ----------------------------------------------------------------------------------------------
# 04 — forget-gate bias
# ----------------------------------------------------------------------------------------------
@exercise_check("forget-gate bias initialisation", reimplements=("coursekit.rnn.init_forget_gate_bias",))
def check_forget_gate_bias(student_fn):
    """``student_fn(lstm: nn.LSTM, value: float) -> None`` sets the *total* forget-gate bias
    ``bias_ih[f] + bias_hh[f]`` of every layer and direction to ``value``, leaving the other gates alone."""
    for seed, (layers, bidir, value) in enumerate([(1, False, 1.0), (2, True, 2.0)]):
        torch.manual_seed(50 + seed)
        lstm = nn.LSTM(3, 4, num_layers=layers, bidirectional=bidir)
        before = {n: p.detach().clone() for n, p in lstm.named_parameters()}
        case = f"nn.LSTM(3, 4, num_layers={layers}, bidirectional={bidir}), value={value}"
        run_student(student_fn, case, lstm, value)
        H = 4
        for name, p in lstm.named_parameters():
            if not name.startswith("weight"):
                continue
            if not torch.equal(p, before[name]):
                raise CheckFailed(f"on {case}, {name} changed: only the biases should be touched")
        for suffix in sorted({n.split("bias_ih")[1] for n in before if n.startswith("bias_ih")}):
            b_ih, b_hh = lstm.get_parameter("bias_ih" + suffix), lstm.get_parameter("bias_hh" + suffix)
            total = (b_ih + b_hh).detach()
            old = before["bias_ih" + suffix] + before["bias_hh" + suffix]
            want = old.clone()
            want[H:2 * H] = value
            wrong_block = old.clone()
            wrong_block[:H] = value
            both = old.clone()
            both[H:2 * H] = 2 * value
            expect_close(total, want, case=f"{case}, layer{suffix}", what="bias_ih + bias_hh", mistakes={
                "the input gate block was set (rows 0..H); the forget gate is the second block, rows H..2H":
                    wrong_block,
                "both bias_ih and bias_hh were set to the value, so the total is twice it "
                "(zero one of them in the f block)": both,
            })


# ----------------------------------------------------------------------------------------------
# 04 — ELMo's scalar mix
# ----------------------------------------------------------------------------------------------
@exercise_check("ELMo scalar mix", reimplements=("coursekit.rnn.ScalarMix",))
def check_scalar_mix(student_fn):
    """``student_fn(layers (L, B, T, D), w (L,), gamma (scalar tensor)) -> (B, T, D)``:
    ``γ Σ_j softmax(w)_j layers[j]`` (Peters et al. 2018, eq. 1)."""
    for seed, (L, B, T, D) in enumerate([(3, 2, 4, 5), (2, 1, 3, 4)]):
        g = _gen(60 + seed)
        layers = torch.randn(L, B, T, D, generator=g)
        w = torch.randn(L, generator=g)
        gamma = torch.tensor(1.5 + seed)
        case = f"layers of shape {(L, B, T, D)}"
        got = run_student(student_fn, case, layers, w, gamma)
        mix = rnn.ScalarMix(L)
        with torch.no_grad():
            mix.scalar_parameters.copy_(w)
            mix.gamma.copy_(gamma)
        want = mix(layers).detach()
        s = torch.softmax(w, 0).view(L, 1, 1, 1)
        expect_close(got, want, case=case, mistakes={
            "the softmax over the layer weights is missing (s = softmax(w))":
                gamma * (w.view(L, 1, 1, 1) * layers).sum(0),
            "γ (gamma) is missing": (s * layers).sum(0),
            "the layers are averaged, ignoring w": gamma * layers.mean(0),
        })

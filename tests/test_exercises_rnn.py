"""Checks of notebooks 03/04: the reference passes, a stub is "not attempted", typical mistakes get their hint."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from exercise_helpers import fails_with, refuses_delegation, stub

from coursekit import exercises, rnn
from coursekit.exercises.checks import rnn as checks


def _status(check, fn):
    return check(fn, verbose=False)


def test_checks_are_exported():
    for name in checks.__all__:
        assert getattr(exercises, name) is getattr(checks, name)


# ---------------------------------------------------------------- Elman step
def elman_ok(x, h, W, V, b):
    return torch.tanh(x @ W.T + h @ V.T + b)


def test_elman_step():
    assert _status(checks.check_elman_step, elman_ok).passed
    assert _status(checks.check_elman_step, stub).status == "not attempted"
    fails_with(checks.check_elman_step, lambda x, h, W, V, b: torch.sigmoid(x @ W.T + h @ V.T + b), "sigmoid")
    fails_with(checks.check_elman_step, lambda x, h, W, V, b: torch.tanh(x @ W.T + b), "recurrent term")
    fails_with(checks.check_elman_step, lambda x, h, W, V, b: x @ W.T + h @ V.T + b, "tanh is missing")
    fails_with(checks.check_elman_step, lambda x, h, W, V, b: torch.tanh(x @ W + h @ V.T + b), "raised")


# ---------------------------------------------------------------- state gradients
def grads_ok(h, V, d):
    out = [d]
    for t in range(h.shape[0] - 1, 0, -1):
        d = (torch.diag(1 - h[t] ** 2) @ V).T @ d
        out.append(d)
    return torch.stack(out[::-1])


def test_state_gradients_match_autograd_and_hints():
    assert _status(checks.check_state_gradients, grads_ok).passed
    # the reference is what autograd says
    g = torch.Generator().manual_seed(0)
    T, H = 5, 3
    V = torch.randn(H, H, generator=g, dtype=torch.float64)
    W = torch.randn(H, 2, generator=g, dtype=torch.float64)
    xs = torch.randn(T, 2, generator=g, dtype=torch.float64)
    h, hs = torch.zeros(H, dtype=torch.float64, requires_grad=True), []
    for t in range(T):
        h = torch.tanh(W @ xs[t] + V @ h)
        h.retain_grad()
        hs.append(h)
    d = torch.randn(H, generator=g, dtype=torch.float64)
    (hs[-1] @ d).backward()
    torch.testing.assert_close(checks._state_gradients(torch.stack(hs).detach(), V, d),
                               torch.stack([s.grad for s in hs]))
    assert _status(checks.check_state_gradients, stub).status == "not attempted"

    def no_derivative(h, V, d):
        out = [d]
        for _ in range(h.shape[0] - 1):
            d = V.T @ d
            out.append(d)
        return torch.stack(out[::-1])

    def no_transpose(h, V, d):
        out = [d]
        for t in range(h.shape[0] - 1, 0, -1):
            d = (torch.diag(1 - h[t] ** 2) @ V) @ d
            out.append(d)
        return torch.stack(out[::-1])

    fails_with(checks.check_state_gradients, no_derivative, "tanh derivative")
    fails_with(checks.check_state_gradients, no_transpose, "not transposed")
    fails_with(checks.check_state_gradients, lambda h, V, d: grads_ok(h, V, d).flip(0), "reverse order")


# ---------------------------------------------------------------- truncated BPTT
def test_truncated_bptt():
    assert _status(checks.check_truncated_bptt, checks.reference_truncated_bptt).passed
    assert _status(checks.check_truncated_bptt, stub).status == "not attempted"

    def no_detach(model, x, targets, k):
        h, losses = None, []
        for s in range(0, x.shape[1], k):
            y, h = model(x[:, s:s + k], h)
            loss = F.mse_loss(y, targets[:, s:s + k])
            loss.backward()
            losses.append(loss.item())
        return losses

    def no_detach_retain(model, x, targets, k):
        h, losses = None, []
        for s in range(0, x.shape[1], k):
            y, h = model(x[:, s:s + k], h)
            loss = F.mse_loss(y, targets[:, s:s + k])
            loss.backward(retain_graph=True)
            losses.append(loss.item())
        return losses

    def window(model, x, targets, k):
        losses = []
        for s in range(0, x.shape[1], k):
            y, _ = model(x[:, s:s + k])
            loss = F.mse_loss(y, targets[:, s:s + k])
            loss.backward()
            losses.append(loss.item())
        return losses

    fails_with(checks.check_truncated_bptt, no_detach, "forgot to detach")
    fails_with(checks.check_truncated_bptt, no_detach_retain, "not detached")
    fails_with(checks.check_truncated_bptt, window, "window of k steps")


# ---------------------------------------------------------------- LSTM step
def lstm_ok(x, h, c, W_ih, W_hh, b):
    i, f, g, o = (x @ W_ih.T + h @ W_hh.T + b).chunk(4, dim=-1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


def test_lstm_step_reference_equals_torch():
    cell = torch.nn.LSTMCell(3, 4)
    x, h, c = torch.randn(2, 3), torch.randn(2, 4), torch.randn(2, 4)
    want = cell(x, (h, c))
    got = lstm_ok(x, h, c, cell.weight_ih, cell.weight_hh, cell.bias_ih + cell.bias_hh)
    torch.testing.assert_close(got[0], want[0])
    torch.testing.assert_close(got[1], want[1])


def test_lstm_step():
    assert _status(checks.check_lstm_step, lstm_ok).passed
    assert _status(checks.check_lstm_step, stub).status == "not attempted"

    def wrong_order(x, h, c, W_ih, W_hh, b):          # reads i, g, f, o
        i, g, f, o = (x @ W_ih.T + h @ W_hh.T + b).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c

    def no_forget(x, h, c, W_ih, W_hh, b):
        i, f, g, o = (x @ W_ih.T + h @ W_hh.T + b).chunk(4, dim=-1)
        c = c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c

    def sigmoid_candidate(x, h, c, W_ih, W_hh, b):
        i, f, g, o = (x @ W_ih.T + h @ W_hh.T + b).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.sigmoid(g)
        return torch.sigmoid(o) * torch.tanh(c), c

    def no_cell_tanh(x, h, c, W_ih, W_hh, b):
        i, f, g, o = (x @ W_ih.T + h @ W_hh.T + b).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * c, c

    fails_with(checks.check_lstm_step, wrong_order, "wrong order")
    fails_with(checks.check_lstm_step, no_forget, "forget gate is missing")
    fails_with(checks.check_lstm_step, sigmoid_candidate, "sigmoid was used on the candidate")
    fails_with(checks.check_lstm_step, no_cell_tanh, "tanh on the cell")
    fails_with(checks.check_lstm_step, lambda *a: lstm_ok(*a)[0], "return the pair")


# ---------------------------------------------------------------- forget-gate bias
def forget_ok(lstm, value):
    H = lstm.hidden_size
    with torch.no_grad():
        for name, p in lstm.named_parameters():
            if name.startswith("bias_ih"):
                p[H:2 * H] = value
            elif name.startswith("bias_hh"):
                p[H:2 * H] = 0.0


def test_forget_gate_bias():
    assert _status(checks.check_forget_gate_bias, forget_ok).passed
    from coursekit.rnn import init_forget_gate_bias
    handed_in = _status(checks.check_forget_gate_bias, init_forget_gate_bias)   # the library function itself
    assert not handed_in.passed and "library's own" in handed_in.message
    assert _status(checks.check_forget_gate_bias, stub).status == "not attempted"

    def input_block(lstm, value):
        H = lstm.hidden_size
        with torch.no_grad():
            for name, p in lstm.named_parameters():
                if name.startswith("bias_ih"):
                    p[:H] = value
                elif name.startswith("bias_hh"):
                    p[:H] = 0.0

    def both(lstm, value):
        H = lstm.hidden_size
        with torch.no_grad():
            for name, p in lstm.named_parameters():
                if name.startswith("bias"):
                    p[H:2 * H] = value

    def touches_weights(lstm, value):
        forget_ok(lstm, value)
        with torch.no_grad():
            lstm.weight_hh_l0.zero_()

    fails_with(checks.check_forget_gate_bias, input_block, "input gate block")
    fails_with(checks.check_forget_gate_bias, both, "twice")
    fails_with(checks.check_forget_gate_bias, touches_weights, "only the biases")


# ---------------------------------------------------------------- scalar mix
def mix_ok(layers, w, gamma):
    s = torch.softmax(w, dim=0)
    return gamma * torch.einsum("l,l...->...", s, layers)


def test_scalar_mix():
    assert _status(checks.check_scalar_mix, mix_ok).passed
    assert _status(checks.check_scalar_mix, stub).status == "not attempted"
    fails_with(checks.check_scalar_mix, lambda layers, w, gamma: gamma * torch.einsum("l,l...->...", w, layers),
                "softmax")
    fails_with(checks.check_scalar_mix, lambda layers, w, gamma: mix_ok(layers, w, 1.0), "gamma")
    fails_with(checks.check_scalar_mix, lambda layers, w, gamma: gamma * layers.mean(0), "averaged")
    fails_with(checks.check_scalar_mix, lambda layers, w, gamma: mix_ok(layers, w, gamma)[0], "shape")


# ---------------------------------------------------------------- calling the library is refused

def _step_by_cell(make_cell, x, state, W_ih, W_hh, b):
    """One step of a library cell (coursekit's or torch's) holding the given weights."""
    cell = make_cell(W_ih.shape[1], W_hh.shape[1])
    with torch.no_grad():
        cell.weight_ih.copy_(W_ih)
        cell.weight_hh.copy_(W_hh)
        cell.bias_ih.copy_(b)
        cell.bias_hh.zero_()
        return cell(x, state)


def _grads_by_autograd(h, V, d, *, how="grad"):
    """∂L/∂h_t by autograd: h_t = tanh(c_t + V h_{t-1}) with the rest of the pre-activation c_t held fixed."""
    out = [d]
    for t in range(h.shape[0] - 1, 0, -1):
        rest = torch.atanh(h[t]) - V @ h[t - 1]
        prev = h[t - 1].clone().requires_grad_()
        if how == "grad":
            (d,) = torch.autograd.grad(torch.tanh(rest + V @ prev), prev, d)
        elif how == "backward":
            torch.tanh(rest + V @ prev).backward(d)
            d = prev.grad
        else:
            d = torch.autograd.functional.jacobian(lambda p, rest=rest: torch.tanh(rest + V @ p), h[t - 1]).T @ d
        out.append(d)
    return torch.stack(out[::-1])


def _mix_by_module(layers, w, gamma):
    mix = rnn.ScalarMix(len(w))
    with torch.no_grad():
        mix.scalar_parameters.copy_(w)
        mix.gamma.copy_(gamma)
        return mix(layers)


@pytest.mark.parametrize("check, delegating, dotted, correct", [
    (checks.check_elman_step, lambda x, h, W, V, b: _step_by_cell(rnn.RNNCell, x, h, W, V, b),
     "coursekit.rnn.RNNCell", True),
    (checks.check_elman_step, lambda x, h, W, V, b: _step_by_cell(torch.nn.RNNCell, x, h, W, V, b),
     "torch.nn.RNNCell", True),
    (checks.check_elman_step, lambda x, h, W, V, b: torch.rnn_tanh_cell(x, h, W, V, b, torch.zeros_like(b)),
     "torch.rnn_tanh_cell", True),
    (checks.check_elman_step, lambda x, h, W, V, b: torch.nn.RNN(W.shape[1], W.shape[0]), "torch.nn.RNN", False),
    (checks.check_elman_step, lambda x, h, W, V, b: rnn.RNN(W.shape[1], W.shape[0]), "coursekit.rnn.RNN", False),
    (checks.check_state_gradients, _grads_by_autograd, "torch.autograd.grad", True),
    (checks.check_state_gradients, lambda h, V, d: _grads_by_autograd(h, V, d, how="backward"),
     "torch.Tensor.backward", True),
    (checks.check_state_gradients, lambda h, V, d: _grads_by_autograd(h, V, d, how="jacobian"),
     "torch.autograd.functional.jacobian", True),
    (checks.check_state_gradients, lambda h, V, d: rnn.elman_bptt(h, h, V, V, d, V), "coursekit.rnn.elman_bptt",
     False),
    (checks.check_state_gradients, lambda h, V, d: torch.func.vjp(torch.tanh, h), "torch.func.vjp", False),
    (checks.check_lstm_step, lambda x, h, c, *w: _step_by_cell(rnn.LSTMCell, x, (h, c), *w),
     "coursekit.rnn.LSTMCell", True),
    (checks.check_lstm_step, lambda x, h, c, *w: _step_by_cell(torch.nn.LSTMCell, x, (h, c), *w),
     "torch.nn.LSTMCell", True),
    (checks.check_lstm_step, lambda x, h, c, W_ih, W_hh, b: torch.lstm_cell(x, (h, c), W_ih, W_hh, b,
                                                                            torch.zeros_like(b)),
     "torch.lstm_cell", True),
    (checks.check_lstm_step, lambda x, h, c, W_ih, W_hh, b: torch.nn.LSTM(W_ih.shape[1], h.shape[1]),
     "torch.nn.LSTM", False),
    (checks.check_lstm_step, lambda x, h, c, W_ih, W_hh, b: rnn.LSTM(W_ih.shape[1], h.shape[1]),
     "coursekit.rnn.LSTM", False),
    (checks.check_forget_gate_bias, lambda lstm, value: rnn.init_forget_gate_bias(lstm, value),
     "coursekit.rnn.init_forget_gate_bias", True),
    (checks.check_scalar_mix, _mix_by_module, "coursekit.rnn.ScalarMix", True),
])
def test_calling_the_library_is_refused(check, delegating, dotted, correct):
    refuses_delegation(check, delegating, dotted, correct=correct)


def test_truncated_bptt_re_creates_no_library_function():
    # a loop over chunks with detach(): neither coursekit nor torch has it; the solution uses F.mse_loss and
    # backward() as it should
    assert checks.check_truncated_bptt.reimplements == ()


@pytest.mark.parametrize("check, solution", [
    (checks.check_elman_step, elman_ok), (checks.check_state_gradients, grads_ok),
    (checks.check_lstm_step, lstm_ok), (checks.check_forget_gate_bias, forget_ok), (checks.check_scalar_mix, mix_ok),
])
def test_reference_solutions_still_pass(check, solution):
    assert _status(check, solution).passed

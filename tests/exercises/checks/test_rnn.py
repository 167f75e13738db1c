"""Checks of notebooks 03/04: the reference passes, a stub is "not attempted", typical mistakes get their hint."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from helpers.exercises import fails_with, notebook_solutions, passes, refuses_delegation, stub, wrong_solution_table

from coursekit import exercises
from coursekit.exercises.checks import lstm as lstm_checks
from coursekit.exercises.checks import rnn as checks
from coursekit.rnn import bptt, elmo
from coursekit.rnn import cells as rnn_cells
from coursekit.rnn import layers as rnn

CHECKS = {name: getattr(module, name) for module in (checks, lstm_checks) for name in module.__all__}


def _status(check, fn):
    return check(fn, verbose=False)


def test_checks_are_exported():
    for name, check in CHECKS.items():
        assert getattr(exercises, name) is check


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
    assert _status(lstm_checks.check_lstm_step, lstm_ok).passed
    assert _status(lstm_checks.check_lstm_step, stub).status == "not attempted"

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

    fails_with(lstm_checks.check_lstm_step, wrong_order, "wrong order")
    fails_with(lstm_checks.check_lstm_step, no_forget, "forget gate is missing")
    fails_with(lstm_checks.check_lstm_step, sigmoid_candidate, "sigmoid was used on the candidate")
    fails_with(lstm_checks.check_lstm_step, no_cell_tanh, "tanh on the cell")
    fails_with(lstm_checks.check_lstm_step, lambda *a: lstm_ok(*a)[0], "return the pair")


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
    assert _status(lstm_checks.check_forget_gate_bias, forget_ok).passed
    from coursekit.rnn.cells import init_forget_gate_bias
    handed_in = _status(lstm_checks.check_forget_gate_bias, init_forget_gate_bias)   # the library function itself
    assert not handed_in.passed and "library's own" in handed_in.message
    assert _status(lstm_checks.check_forget_gate_bias, stub).status == "not attempted"

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

    fails_with(lstm_checks.check_forget_gate_bias, input_block, "input gate block")
    fails_with(lstm_checks.check_forget_gate_bias, both, "twice")
    fails_with(lstm_checks.check_forget_gate_bias, touches_weights, "only the biases")


# ---------------------------------------------------------------- scalar mix
def mix_ok(layers, w, gamma):
    s = torch.softmax(w, dim=0)
    return gamma * torch.einsum("l,l...->...", s, layers)


def test_scalar_mix():
    assert _status(lstm_checks.check_scalar_mix, mix_ok).passed
    assert _status(lstm_checks.check_scalar_mix, stub).status == "not attempted"
    fails_with(lstm_checks.check_scalar_mix, lambda layers, w, gamma: gamma * torch.einsum("l,l...->...", w, layers),
                "softmax")
    fails_with(lstm_checks.check_scalar_mix, lambda layers, w, gamma: mix_ok(layers, w, 1.0), "gamma")
    fails_with(lstm_checks.check_scalar_mix, lambda layers, w, gamma: gamma * layers.mean(0), "averaged")
    fails_with(lstm_checks.check_scalar_mix, lambda layers, w, gamma: mix_ok(layers, w, gamma)[0], "shape")


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
    mix = elmo.ScalarMix(len(w))
    with torch.no_grad():
        mix.scalar_parameters.copy_(w)
        mix.gamma.copy_(gamma)
        return mix(layers)


@pytest.mark.parametrize("check, delegating, dotted, correct", [
    (checks.check_elman_step, lambda x, h, W, V, b: _step_by_cell(rnn_cells.RNNCell, x, h, W, V, b),
     "coursekit.rnn.cells.RNNCell", True),
    (checks.check_elman_step, lambda x, h, W, V, b: _step_by_cell(torch.nn.RNNCell, x, h, W, V, b),
     "torch.nn.RNNCell", True),
    (checks.check_elman_step, lambda x, h, W, V, b: torch.rnn_tanh_cell(x, h, W, V, b, torch.zeros_like(b)),
     "torch.rnn_tanh_cell", True),
    (checks.check_elman_step, lambda x, h, W, V, b: torch.nn.RNN(W.shape[1], W.shape[0]), "torch.nn.RNN", False),
    (checks.check_elman_step, lambda x, h, W, V, b: rnn.RNN(W.shape[1], W.shape[0]), "coursekit.rnn.layers.RNN", False),
    (checks.check_state_gradients, _grads_by_autograd, "torch.autograd.grad", True),
    (checks.check_state_gradients, lambda h, V, d: _grads_by_autograd(h, V, d, how="backward"),
     "torch.Tensor.backward", True),
    (checks.check_state_gradients, lambda h, V, d: _grads_by_autograd(h, V, d, how="jacobian"),
     "torch.autograd.functional.jacobian", True),
    (checks.check_state_gradients, lambda h, V, d: bptt.elman_bptt(h, h, V, V, d, V), "coursekit.rnn.bptt.elman_bptt",
     False),
    (checks.check_state_gradients, lambda h, V, d: torch.func.vjp(torch.tanh, h), "torch.func.vjp", False),
    (lstm_checks.check_lstm_step, lambda x, h, c, *w: _step_by_cell(rnn_cells.LSTMCell, x, (h, c), *w),
     "coursekit.rnn.cells.LSTMCell", True),
    (lstm_checks.check_lstm_step, lambda x, h, c, *w: _step_by_cell(torch.nn.LSTMCell, x, (h, c), *w),
     "torch.nn.LSTMCell", True),
    (lstm_checks.check_lstm_step, lambda x, h, c, W_ih, W_hh, b: torch.lstm_cell(x, (h, c), W_ih, W_hh, b,
                                                                            torch.zeros_like(b)),
     "torch.lstm_cell", True),
    (lstm_checks.check_lstm_step, lambda x, h, c, W_ih, W_hh, b: torch.nn.LSTM(W_ih.shape[1], h.shape[1]),
     "torch.nn.LSTM", False),
    (lstm_checks.check_lstm_step, lambda x, h, c, W_ih, W_hh, b: rnn.LSTM(W_ih.shape[1], h.shape[1]),
     "coursekit.rnn.layers.LSTM", False),
    (lstm_checks.check_forget_gate_bias, lambda lstm, value: rnn_cells.init_forget_gate_bias(lstm, value),
     "coursekit.rnn.cells.init_forget_gate_bias", True),
    # coursekit.rnn.layers imports the cells' functions it uses: reaching them through it is refused too
    (lstm_checks.check_forget_gate_bias, lambda lstm, value: rnn.init_forget_gate_bias(lstm, value),
     "coursekit.rnn.layers.init_forget_gate_bias", True),
    (lstm_checks.check_scalar_mix, _mix_by_module, "coursekit.rnn.elmo.ScalarMix", True),
])
def test_calling_the_library_is_refused(check, delegating, dotted, correct):
    refuses_delegation(check, delegating, dotted, correct=correct)


def test_truncated_bptt_re_creates_no_library_function():
    # a loop over chunks with detach(): neither coursekit nor torch has it; the solution uses F.mse_loss and
    # backward() as it should
    assert checks.check_truncated_bptt.reimplements == ()


@pytest.mark.parametrize("check, solution", [
    (checks.check_elman_step, elman_ok), (checks.check_state_gradients, grads_ok),
    (lstm_checks.check_lstm_step, lstm_ok), (lstm_checks.check_forget_gate_bias, forget_ok),
    (lstm_checks.check_scalar_mix, mix_ok),
])
def test_reference_solutions_still_pass(check, solution):
    assert _status(check, solution).passed


# ================================================================ the notebooks' own solutions
# (notebooks/03_rnns_bptt.py and notebooks/04_lstm.py, the ### BEGIN/END SOLUTION blocks)
NB03, NB04 = notebook_solutions("03_rnns_bptt"), notebook_solutions("04_lstm")
nb_elman_step = NB03["elman_step"]
nb_state_gradients = NB03["state_gradients"]
nb_truncated_bptt = NB03["truncated_bptt"]
nb_lstm_step = NB04["my_lstm_step"]
nb_set_forget_bias = NB04["set_forget_bias"]
nb_scalar_mix = NB04["scalar_mix"]

NOTEBOOK_SOLUTIONS = {
    "check_elman_step": nb_elman_step, "check_state_gradients": nb_state_gradients,
    "check_truncated_bptt": nb_truncated_bptt, "check_lstm_step": nb_lstm_step,
    "check_forget_gate_bias": nb_set_forget_bias, "check_scalar_mix": nb_scalar_mix,
}


@pytest.mark.parametrize("name", sorted(NOTEBOOK_SOLUTIONS))
def test_the_notebook_solution_passes(name):
    passes(CHECKS[name], NOTEBOOK_SOLUTIONS[name])


def test_every_check_has_a_notebook_solution_and_wrong_solutions():
    assert set(NOTEBOOK_SOLUTIONS) == set(CHECKS) == {check for check, _ in WRONG}
    for check in CHECKS:
        assert sum(c == check for c, _ in WRONG) >= 5, check


# ================================================================ realistic wrong solutions
# WRONG[(check, name)] = (function, words the failure message must hold besides "on ")
WRONG, wrong = wrong_solution_table()


# ---------------------------------------------------------------- Elman step
@wrong("check_elman_step", "ReLU")
def elman_relu(x, h, W, V, b):
    return torch.relu(x @ W.T + h @ V.T + b)


@wrong("check_elman_step", "twice")
def elman_bias_twice(x, h, W, V, b):           # "one bias for the input, one for the state"
    return torch.tanh(x @ W.T + b + h @ V.T + b)


@wrong("check_elman_step", "input term")
def elman_no_input(x, h, W, V, b):
    return torch.tanh(h @ V.T + b)


@wrong("check_elman_step", "part of the sum")
def elman_tanh_on_input_only(x, h, W, V, b):
    return torch.tanh(x @ W.T + b) + h @ V.T


@wrong("check_elman_step", "added after the tanh")
def elman_residual(x, h, W, V, b):
    return h + torch.tanh(x @ W.T + h @ V.T + b)


@wrong("check_elman_step", "raised")
def elman_w_untransposed(x, h, W, V, b):        # raises where I != H (the first case); silently wrong where I == H
    return torch.tanh(x @ W + h @ V.T + b)


@wrong("check_elman_step", "raised")
def elman_swapped(x, h, W, V, b):
    return torch.tanh(x @ V.T + h @ W.T + b)


@wrong("check_elman_step", "in place")
def elman_updates_h_in_place(x, h, W, V, b):
    h.copy_(torch.tanh(x @ W.T + h @ V.T + b))
    return h


@wrong("check_elman_step", "transposed")
def elman_column_vectors(x, h, W, V, b):        # the column-vector formula applied to row vectors
    return torch.tanh(W @ x.T + V @ h.T + b[:, None])


@wrong("check_elman_step", "shape")
def elman_first_row_only(x, h, W, V, b):
    return torch.tanh(W @ x[0] + V @ h[0] + b)


@wrong("check_elman_step", "torch.stack")
def elman_list_of_rows(x, h, W, V, b):
    return [torch.tanh(W @ x[i] + V @ h[i] + b) for i in range(x.shape[0])]


@wrong("check_elman_step", "raised")
def elman_hard_coded_hidden_size(x, h, W, V, b):
    return torch.tanh(x @ W.T + h @ V.T + b.reshape(1, 4))


# ---------------------------------------------------------------- state gradients
def _deltas(h, V, d, step):
    out = [d]
    for t in range(h.shape[0] - 1, 0, -1):
        d = step(t, d)
        out.append(d)
    return torch.stack(out[::-1])


@wrong("check_state_gradients", "previous state")
def grads_prev_state(h, V, d):
    return _deltas(h, V, d, lambda t, d: (torch.diag(1 - h[t - 1] ** 2) @ V).T @ d)


@wrong("check_state_gradients", "tanh was applied to h_t again")
def grads_tanh_again(h, V, d):
    return _deltas(h, V, d, lambda t, d: (torch.diag(1 - torch.tanh(h[t]) ** 2) @ V).T @ d)


@wrong("check_state_gradients", "not 1 - h_t²")
def grads_no_square(h, V, d):
    return _deltas(h, V, d, lambda t, d: (torch.diag(1 - h[t]) @ V).T @ d)


@wrong("check_state_gradients", "applied after V^T")
def grads_derivative_after(h, V, d):
    return _deltas(h, V, d, lambda t, d: (1 - h[t] ** 2) * (V.T @ d))


@wrong("check_state_gradients", "on ")
def grads_v_untransposed_derivative_inside(h, V, d):
    return _deltas(h, V, d, lambda t, d: V @ ((1 - h[t] ** 2) * d))


@wrong("check_state_gradients", "One row too many")
def grads_one_step_too_far(h, V, d):
    out = [d]
    for t in range(h.shape[0] - 1, -1, -1):
        d = (torch.diag(1 - h[t] ** 2) @ V).T @ d
        out.append(d)
    return torch.stack(out[::-1])


@wrong("check_state_gradients", "One row short")
def grads_without_the_last_row(h, V, d):
    return nb_state_gradients(h, V, d)[:-1]


@wrong("check_state_gradients", "float64")
def grads_float32_buffer(h, V, d):
    T, H = h.shape
    out = torch.zeros(T, H)                     # float32 by default
    out[T - 1] = d
    for t in range(T - 1, 0, -1):
        out[t - 1] = (torch.diag(1 - h[t] ** 2) @ V).T @ out[t].double()
    return out


@wrong("check_state_gradients", "torch.stack")
def grads_list(h, V, d):
    return list(nb_state_gradients(h, V, d))


@wrong("check_state_gradients", "in place")
def grads_scales_dL_dhT_in_place(h, V, d):
    out = [d.clone()]
    delta = d
    for t in range(h.shape[0] - 1, 0, -1):
        delta *= 1 - h[t] ** 2                  # the caller's dL_dhT is scaled too
        delta = V.T @ delta
        out.append(delta)
    return torch.stack(out[::-1])


# ---------------------------------------------------------------- truncated BPTT
def _bptt(model, x, targets, k, *, chunk_range=None, loss_fn=F.mse_loss, before_backward=None,
          after_backward=None, item=True, detach=True):
    h, losses = None, []
    for start in (chunk_range or range(0, x.shape[1], k)):
        y, h = model(x[:, start:start + k], h)
        loss = loss_fn(y, targets[:, start:start + k])
        if before_backward:
            before_backward(model)
        loss.backward()
        if after_backward:
            after_backward(model)
        if detach:
            h = h.detach()
        else:
            h.detach()                           # result thrown away: h is not detached
        losses.append(loss.item() if item else loss)
    return losses


@wrong("check_truncated_bptt", "zero_grad")
def bptt_zero_grad_each_chunk(model, x, targets, k):
    return _bptt(model, x, targets, k, before_backward=lambda m: m.zero_grad())


@wrong("check_truncated_bptt", "summed")
def bptt_sum_of_squares(model, x, targets, k):
    return _bptt(model, x, targets, k, loss_fn=lambda y, t: ((y - t) ** 2).sum())


@wrong("check_truncated_bptt", "last, shorter chunk")
def bptt_drops_the_last_chunk(model, x, targets, k):
    return _bptt(model, x, targets, k, chunk_range=range(0, x.shape[1] - k + 1, k))


@wrong("check_truncated_bptt", "loss.item()")
def bptt_loss_tensors(model, x, targets, k):
    return _bptt(model, x, targets, k, item=False)


@wrong("check_truncated_bptt", "backward() was never called")
def bptt_no_backward(model, x, targets, k):
    h, losses = None, []
    for start in range(0, x.shape[1], k):
        y, h = model(x[:, start:start + k], h)
        losses.append(F.mse_loss(y, targets[:, start:start + k]).item())
    return losses


@wrong("check_truncated_bptt", "number of chunks")
def bptt_averaged_over_chunks(model, x, targets, k):
    n = -(-x.shape[1] // k)
    h, losses = None, []
    for start in range(0, x.shape[1], k):
        y, h = model(x[:, start:start + k], h)
        loss = F.mse_loss(y, targets[:, start:start + k])
        (loss / n).backward()
        h = h.detach()
        losses.append(loss.item())
    return losses


@wrong("check_truncated_bptt", "optimizer step")
def bptt_with_an_optimizer_step(model, x, targets, k):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    return _bptt(model, x, targets, k, after_backward=lambda m: opt.step())


@wrong("check_truncated_bptt", "forgot to detach")
def bptt_detach_result_discarded(model, x, targets, k):
    return _bptt(model, x, targets, k, detach=False)


@wrong("check_truncated_bptt", "chunks of 4 steps: use the k argument")
def bptt_hard_coded_chunk_of_4(model, x, targets, k):
    return _bptt(model, x, targets, 4, chunk_range=range(0, x.shape[1], 4))


# ---------------------------------------------------------------- LSTM step
def _gates(x, h, W_ih, W_hh, b):
    return (x @ W_ih.T + h @ W_hh.T + b).chunk(4, dim=-1)


@wrong("check_lstm_step", "wrong order i, f, o, g")
def lstm_keras_order(x, h, c, W_ih, W_hh, b):
    i, f, o, g = _gates(x, h, W_ih, W_hh, b)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


@wrong("check_lstm_step", "swapped")
def lstm_returns_c_then_h(x, h, c, W_ih, W_hh, b):
    h_t, c_t = nb_lstm_step(x, h, c, W_ih, W_hh, b)
    return c_t, h_t


@wrong("check_lstm_step", "old cell")
def lstm_h_from_old_cell(x, h, c, W_ih, W_hh, b):
    i, f, g, o = _gates(x, h, W_ih, W_hh, b)
    c_t = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c_t


@wrong("check_lstm_step", "tanh was used on the output gate")
def lstm_tanh_output_gate(x, h, c, W_ih, W_hh, b):
    i, f, g, o = _gates(x, h, W_ih, W_hh, b)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.tanh(o) * torch.tanh(c), c


@wrong("check_lstm_step", "twice")
def lstm_bias_twice(x, h, c, W_ih, W_hh, b):
    return nb_lstm_step(x, h, c, W_ih, W_hh, 2 * b)


@wrong("check_lstm_step", "recurrent term")
def lstm_no_recurrence(x, h, c, W_ih, W_hh, b):
    return nb_lstm_step(x, torch.zeros_like(h), c, W_ih, W_hh, b)


@wrong("check_lstm_step", "in place")
def lstm_updates_c_in_place(x, h, c, W_ih, W_hh, b):
    i, f, g, o = _gates(x, h, W_ih, W_hh, b)
    c.mul_(torch.sigmoid(f)).add_(torch.sigmoid(i) * torch.tanh(g))
    return torch.sigmoid(o) * torch.tanh(c), c


@wrong("check_lstm_step", "on ")
def lstm_hard_coded_hidden_size(x, h, c, W_ih, W_hh, b):
    a = x @ W_ih.T + h @ W_hh.T + b
    i, f, g, o = a[:, :4], a[:, 4:8], a[:, 8:12], a[:, 12:16]
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


@wrong("check_lstm_step", "raised")
def lstm_w_ih_untransposed(x, h, c, W_ih, W_hh, b):     # raises where I != 4H; silently wrong where I == 4H
    a_i, a_f, a_g, a_o = (x @ W_ih + h @ W_hh.T + b).chunk(4, dim=-1)
    c_t = torch.sigmoid(a_f) * c + torch.sigmoid(a_i) * torch.tanh(a_g)
    return torch.sigmoid(a_o) * torch.tanh(c_t), c_t


# ---------------------------------------------------------------- forget-gate bias
def _set_biases(lstm, ih, hh):
    with torch.no_grad():
        for name, p in lstm.named_parameters():
            if name.startswith("bias_ih"):
                ih(p)
            elif name.startswith("bias_hh"):
                hh(p)


@wrong("check_forget_gate_bias", "left unchanged")
def forget_first_layer_only(lstm, value):
    H = lstm.hidden_size
    with torch.no_grad():
        lstm.bias_ih_l0[H:2 * H] = value
        lstm.bias_hh_l0[H:2 * H] = 0.0


@wrong("check_forget_gate_bias", "only one of the two")
def forget_bias_hh_not_zeroed(lstm, value):
    H = lstm.hidden_size
    _set_biases(lstm, lambda p: p[H:2 * H].fill_(value), lambda p: None)


@wrong("check_forget_gate_bias", "added")
def forget_value_added(lstm, value):
    H = lstm.hidden_size
    _set_biases(lstm, lambda p: p[H:2 * H].add_(value), lambda p: None)


@wrong("check_forget_gate_bias", "hidden size 4 is hard-coded")
def forget_hard_coded_hidden_size(lstm, value):
    _set_biases(lstm, lambda p: p[4:8].fill_(value), lambda p: p[4:8].zero_())


@wrong("check_forget_gate_bias", "value 1 is hard-coded")
def forget_hard_coded_value(lstm, value):
    H = lstm.hidden_size
    _set_biases(lstm, lambda p: p[H:2 * H].fill_(1.0), lambda p: p[H:2 * H].zero_())


@wrong("check_forget_gate_bias", "every gate's bias")
def forget_whole_bias(lstm, value):
    _set_biases(lstm, lambda p: p.fill_(value), lambda p: p.zero_())


@wrong("check_forget_gate_bias", "torch.no_grad()")
def forget_without_no_grad(lstm, value):
    H = lstm.hidden_size
    for name, p in lstm.named_parameters():
        if name.startswith("bias_ih"):
            p[H:2 * H] = value
        elif name.startswith("bias_hh"):
            p[H:2 * H] = 0.0


@wrong("check_forget_gate_bias", "candidate block")
def forget_third_block(lstm, value):
    H = lstm.hidden_size
    _set_biases(lstm, lambda p: p[2 * H:3 * H].fill_(value), lambda p: p[2 * H:3 * H].zero_())


@wrong("check_forget_gate_bias", "on ")
def forget_hidden_size_from_weight_ih(lstm, value):
    H = lstm.weight_ih_l0.shape[1]              # that is the input size
    _set_biases(lstm, lambda p: p[H:2 * H].fill_(value), lambda p: p[H:2 * H].zero_())


@wrong("check_forget_gate_bias", "no longer requires grad")
def forget_freezes_the_biases(lstm, value):
    H = lstm.hidden_size
    for name, p in lstm.named_parameters():
        if name.startswith("bias"):
            p.requires_grad_(False)
            p[H:2 * H] = value if name.startswith("bias_ih") else 0.0


@wrong("check_forget_gate_bias", "the input gate i")
def forget_compensated_elsewhere(lstm, value):  # right total, but the other gates' vectors are rewritten
    H = lstm.hidden_size
    _set_biases(lstm, lambda p: (p[H:2 * H].fill_(value), p[:H].add_(1.0)), lambda p: (p[H:2 * H].zero_(),
                                                                                       p[:H].sub_(1.0)))


# ---------------------------------------------------------------- scalar mix
@wrong("check_scalar_mix", "normalised by its sum")
def mix_sum_normalised(layers, w, gamma):
    return gamma * ((w / w.sum()).view(-1, 1, 1, 1) * layers).sum(0)


@wrong("check_scalar_mix", "top layer")
def mix_top_layer(layers, w, gamma):
    return gamma * layers[-1]


@wrong("check_scalar_mix", "added, not multiplied")
def mix_gamma_added(layers, w, gamma):
    return gamma + (torch.softmax(w, 0).view(-1, 1, 1, 1) * layers).sum(0)


@wrong("check_scalar_mix", "extra leading dimension")
def mix_keepdim(layers, w, gamma):
    return gamma * (torch.softmax(w, 0).view(-1, 1, 1, 1) * layers).sum(0, keepdim=True)


@wrong("check_scalar_mix", "on ")
def mix_missing_axis(layers, w, gamma):         # (L, 1, 1): broadcasts along the batch, or raises
    return gamma * (torch.softmax(w, 0)[:, None, None] * layers).sum(0)


@wrong("check_scalar_mix", "in place")
def mix_scales_layers_in_place(layers, w, gamma):
    layers *= torch.softmax(w, 0).view(-1, 1, 1, 1)
    return gamma * layers.sum(0)


@wrong("check_scalar_mix", "on ")
def mix_hard_coded_three_layers(layers, w, gamma):
    return gamma * (torch.softmax(w, 0).view(3, 1, 1, 1) * layers).sum(0)


@wrong("check_scalar_mix", "on ")
def mix_sigmoid_weights(layers, w, gamma):
    return gamma * (torch.sigmoid(w).view(-1, 1, 1, 1) * layers).sum(0)


@pytest.mark.parametrize("check, name", sorted(WRONG))
def test_realistic_wrong_solutions_fail_naming_the_input(check, name):
    fn, words = WRONG[(check, name)]
    fails_with(CHECKS[check], fn, "on ", *words)


def _only_where(condition, wrong_fn, right_fn):
    """``wrong_fn`` on the cases where it runs without an error (``condition``), the right answer elsewhere:
    the hint of a mistake that raises on most inputs, on the input where it is silently wrong."""
    return lambda *args: (wrong_fn if condition(*args) else right_fn)(*args)


@pytest.mark.parametrize("check, fn, words", [
    ("check_elman_step", _only_where(lambda x, h, W, V, b: W.shape[0] == W.shape[1], elman_w_untransposed,
                                     nb_elman_step), "W is used untransposed"),
    ("check_elman_step", _only_where(lambda x, h, W, V, b: W.shape[0] == W.shape[1], elman_swapped, nb_elman_step),
     "W and V are swapped"),
    ("check_lstm_step", _only_where(lambda x, h, c, W_ih, *_: W_ih.shape[0] == W_ih.shape[1], lstm_w_ih_untransposed,
                                    nb_lstm_step), "W_ih is used untransposed"),
    ("check_scalar_mix", _only_where(lambda layers, w, g: layers.shape[0] == layers.shape[1], mix_missing_axis,
                                     nb_scalar_mix), "along the batch axis"),
])
def test_a_mistake_that_usually_raises_gets_its_hint_where_it_runs_silently(check, fn, words):
    fails_with(CHECKS[check], fn, "on ", words)


def test_the_cases_vary_sizes_and_special_values():
    assert len({tuple(a[0].shape) for _, a in checks._elman_cases()}) >= 4
    assert {a[0].shape[0] for _, a in checks._state_gradient_cases()} >= {1, 2}
    assert {c[4] for c in checks._bptt_cases()} >= {1, 3, 4}
    assert {c[2] for c in lstm_checks._forget_cases()} >= {2, 3, 4, 5}
    assert {a[1].shape[1] for _, a in lstm_checks._lstm_cases()} >= {1, 2, 4, 5}
    assert {c[1].shape[0] for c in lstm_checks._mix_cases()} >= {1, 2, 3, 4}

"""Exercise checks for notebook 03 (RNNs, BPTT).

Each check runs the student's function on several seeded inputs whose sizes vary from case to case (batch
size 1, a first step with zero state, all-zero rows, saturated states, rows on very different scales), checks
the type, dtype and shape of what comes back, compares it with a reference computed on the check's own copy
of the inputs (:mod:`coursekit.rnn.layers`, :mod:`coursekit.rnn.bptt` or a few lines of PyTorch) and, on a mismatch,
names the typical mistake the wrong value matches (a missing tanh, an untransposed Jacobian, a missing
detach …). The helpers ``_clones`` and ``_expect_tensor`` are shared with the notebook-04 checks
in :mod:`coursekit.exercises.checks.lstm`.
"""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import nn

from coursekit.exercises.core import (
    CheckFailed,
    case_generator,
    case_seed,
    describe,
    exercise_check,
    expect_close,
    run_student,
)
from coursekit.rnn import bptt

__all__ = [
    "check_elman_step",
    "check_state_gradients",
    "check_truncated_bptt",
]



def _clones(*tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """The check's own copies of the inputs: the reference never sees what the student's function did."""
    return tuple(t.detach().clone() for t in tensors)


def _shape_hint(got: tuple[int, ...], want: tuple[int, ...]) -> str:
    if len(got) == len(want) == 2 and got == want[::-1] and got != want:
        return " It looks transposed."
    if [d for d in got if d != 1] == [d for d in want if d != 1]:
        return " It has an extra or a missing dimension of size 1 (keepdim? squeeze? a [None]?)."
    return ""


def _expect_tensor(got, shape, *, case: str, what: str, dtype: torch.dtype | None = None,
                   hints: dict | None = None) -> torch.Tensor:
    """``got`` must be a floating-point tensor (of exactly ``dtype`` when given) of shape ``shape``."""
    shape = tuple(shape)
    kind = str(dtype).replace("torch.", "") if dtype is not None else "floating-point"
    expected = f"on {case}, expected {what} as a {kind} tensor of shape {shape}, got {describe(got)}"
    if not isinstance(got, torch.Tensor):
        extra = " (stack the rows into one tensor: torch.stack)" if isinstance(got, (list, tuple)) else ""
        raise CheckFailed(expected + extra)
    if tuple(got.shape) != shape:
        hint = (hints or {}).get(tuple(got.shape)) or _shape_hint(tuple(got.shape), shape)
        raise CheckFailed(expected + "." + hint)
    if not got.is_floating_point():
        raise CheckFailed(expected + ". The values are real numbers: compute in floating point.")
    if dtype is not None and got.dtype != dtype:
        raise CheckFailed(expected + f". The inputs are {kind}; a tensor created with torch.zeros(...) or "
                                     "torch.tensor(...) is float32 by default: use torch.zeros_like / torch.stack, "
                                     "or pass dtype=.")
    return got


# ----------------------------------------------------------------------------------------------
# 03 — Elman step
# ----------------------------------------------------------------------------------------------
def _elman_cases():
    """(case, (x, h, W, V, b)): sizes vary; I == H once, so that an untransposed W does not raise."""
    specs = [(2, 3, 4, "", ""), (1, 5, 5, "", "batch size 1, I == H"),
             (3, 2, 6, "first", "h all zeros (the first step), the second input row all zeros"),
             (4, 7, 3, "scales", "input rows on very different scales (×0.01 … ×10)")]
    for seed, (B, I, H, tweak, what) in enumerate(specs):  # noqa: E741 - I: the input size, as in the equations
        g = case_generator(seed)
        x, h = torch.randn(B, I, generator=g), torch.randn(B, H, generator=g)
        W, V, b = torch.randn(H, I, generator=g), torch.randn(H, H, generator=g) * 0.5, torch.randn(H, generator=g)
        if tweak == "first":
            h, x[1] = torch.zeros(B, H), 0.0
        elif tweak == "scales":
            x = x * torch.tensor([0.01, 1.0, 10.0, 0.1])[:, None]
        case = f"x of shape {(B, I)}, h of shape {(B, H)}" + (f" ({what})" if what else "")
        yield case, (x, h, W, V, b)


def _elman_mistakes(x, h, W, V, b) -> dict:
    a = x @ W.T + h @ V.T + b
    square = W.shape[0] == W.shape[1]
    return {
        "the tanh is missing (h_t = tanh(W x + V h + b))": a,
        "a sigmoid was used where the Elman network uses tanh": torch.sigmoid(a),
        "a ReLU was used where the Elman network uses tanh": torch.relu(a),
        "the recurrent term V h_{t-1} is missing": torch.tanh(x @ W.T + b),
        "the input term W x_t is missing": torch.tanh(h @ V.T + b),
        "the bias b is missing": torch.tanh(x @ W.T + h @ V.T),
        "the bias b was added twice": torch.tanh(a + b),
        "V is used untransposed (h @ V instead of h @ V.T)": torch.tanh(x @ W.T + h @ V + b),
        "W is used untransposed (x @ W instead of x @ W.T)": torch.tanh(x @ W + h @ V.T + b) if square else None,
        "W and V are swapped (W multiplies the input x_t, V the previous state h_{t-1})":
            torch.tanh(x @ V.T + h @ W.T + b) if square else None,
        "the tanh was applied to part of the sum only (everything goes inside: tanh(W x + V h + b))":
            torch.tanh(x @ W.T + b) + h @ V.T,
        "the previous state was added after the tanh (h_{t-1} + tanh(…)): an Elman step replaces the state":
            h + torch.tanh(a),
    }


@exercise_check("one Elman RNN step", reimplements=(
    "coursekit.rnn.cells.RNNCell", "coursekit.rnn.layers.RNN", "torch.nn.RNNCell", "torch.nn.RNN",
    "torch.rnn_tanh_cell"))
def check_elman_step(student_fn):
    """``student_fn(x (B, I), h (B, H), W (H, I), V (H, H), b (H,)) -> h_t (B, H)``,
    ``h_t = tanh(W x_t + V h_{t-1} + b)`` for a batch of row vectors."""
    for case, args in _elman_cases():
        x, h, W, V, b = _clones(*args)
        want, mistakes = torch.tanh(x @ W.T + h @ V.T + b), _elman_mistakes(x, h, W, V, b)
        got = run_student(student_fn, case, *args)
        _expect_tensor(got, want.shape, case=case, what="h_t")
        expect_close(got, want, case=case, what="h_t", mistakes=mistakes)


# ----------------------------------------------------------------------------------------------
# 03 — gradients through time as a product of Jacobians
# ----------------------------------------------------------------------------------------------
def _state_gradients(h: torch.Tensor, V: torch.Tensor, dL_dhT: torch.Tensor, *, derivative="1 - h_t²",
                     transpose=True, after=False) -> torch.Tensor:
    """∂L/∂h_t for a loss on h_T only: δ_T = dL_dhT, δ_{t-1} = J_t^T δ_t, J_t = diag(1 - h_t²) V.

    The keywords produce the typical mistakes: another ``derivative`` ("1", "1 - h_{t-1}²", "1 - tanh(h_t)²",
    "1 - h_t"), an untransposed Jacobian, or the derivative applied *after* V^T (diag(1 - h²) V^T δ)."""
    T = h.shape[0]
    out = [None] * T
    delta = dL_dhT
    for t in reversed(range(T)):
        out[t] = delta
        if derivative == "1 - h_t²":
            scale = 1 - h[t] ** 2
        elif derivative == "1":
            scale = torch.ones_like(h[t])
        elif derivative == "1 - h_{t-1}²":
            scale = 1 - h[max(t - 1, 0)] ** 2
        elif derivative == "1 - tanh(h_t)²":
            scale = 1 - torch.tanh(h[t]) ** 2
        else:
            scale = 1 - h[t]
        if after:
            delta = scale * (V.T @ delta)
        else:
            J = scale[:, None] * V                                    # diag(1 - h_t²) V
            delta = (J.T if transpose else J) @ delta
    return torch.stack(out)


def _state_gradient_cases():
    specs = [(5, 3, ""), (8, 4, ""), (2, 6, ""), (1, 5, "T=1: the only state is the last one"),
             (6, 7, "saturated states (|h_t| close to 1) and a large V")]
    for seed, (T, H, what) in enumerate(specs):
        g = case_generator(10 + seed)
        scale = 3.0 if "saturated" in what else 1.0
        h = torch.tanh(scale * torch.randn(T, H, generator=g, dtype=torch.float64))
        V = scale * torch.randn(H, H, generator=g, dtype=torch.float64)
        case = f"T={T}, H={H}" + (f" ({what})" if what else "")
        yield case, (h, V, torch.randn(H, generator=g, dtype=torch.float64))


@exercise_check("gradients through time as Jacobian products", reimplements=(
    # the exercise is backpropagation by hand: autograd (and the library's manual BPTT) would do it for you
    "coursekit.rnn.bptt.elman_bptt", "torch.autograd.grad", "torch.autograd.backward", "torch.Tensor.backward",
    "torch.autograd.functional.jacobian", "torch.autograd.functional.vjp", "torch.func.vjp", "torch.func.jacrev"))
def check_state_gradients(student_fn):
    """``student_fn(h (T, H), V (H, H), dL_dhT (H,)) -> (T, H)``: row t is ∂L/∂h_t for a loss that
    depends on the last state only, with h_t = tanh(W x_t + V h_{t-1} + b)."""
    for case, args in _state_gradient_cases():
        h, V, d = _clones(*args)
        T, H = h.shape
        want = _state_gradients(h, V, d)
        mistakes = {
            "the tanh derivative diag(1 - h_t²) is missing from each Jacobian":
                _state_gradients(h, V, d, derivative="1"),
            "the Jacobian is not transposed (use J_t^T δ_t when going backwards)":
                _state_gradients(h, V, d, transpose=False),
            "the rows are in reverse order (row t must be ∂L/∂h_t, row T-1 is dL_dhT itself)": want.flip(0),
            "the derivative uses the previous state h_{t-1}: J_t = diag(1 - h_t²) V takes the state of step t":
                _state_gradients(h, V, d, derivative="1 - h_{t-1}²"),
            "tanh was applied to h_t again: h_t is already tanh(a_t), so tanh'(a_t) = 1 - h_t²":
                _state_gradients(h, V, d, derivative="1 - tanh(h_t)²"),
            "the derivative is 1 - h_t, not 1 - h_t²": _state_gradients(h, V, d, derivative="1 - h_t"),
            "the derivative was applied after V^T (diag(1 - h_t²) V^T δ); J_t^T δ = V^T (diag(1 - h_t²) δ)":
                _state_gradients(h, V, d, after=True),
        }
        got = run_student(student_fn, case, *args)
        _expect_tensor(got, (T, H), case=case, what="the stacked gradients ∂L/∂h_t", dtype=h.dtype, hints={
            (T + 1, H): " One row too many: there are T states h_0 … h_{T-1}; row 0 is ∂L/∂h_0, nothing comes "
                        "after it.",
            (T - 1, H): " One row short: row T-1 is dL_dhT itself and row 0 is ∂L/∂h_0, T rows in all.",
        })
        expect_close(got, want, case=case, atol=1e-8, rtol=1e-6, what="the (T, H) output", mistakes=mistakes)


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


def _bptt_variant(model, x, targets, k, *, reset=False, detach=True, zero_grad=False, reduction="mean",
                  backward=True, scale_by_chunks=False):
    """The reference with one typical mistake switched on (for the hints)."""
    h, losses, n = None, [], -(-x.shape[1] // k)
    for start in range(0, x.shape[1], k):
        y, h = model(x[:, start:start + k], None if reset else h)
        loss = F.mse_loss(y, targets[:, start:start + k], reduction=reduction)
        if zero_grad:
            model.zero_grad()
        if backward:
            (loss / n if scale_by_chunks else loss).backward(retain_graph=not detach)
        if detach:
            h = h.detach()
        losses.append(loss.item())
    return losses


_BPTT_MISTAKES = {
    "the hidden state is reset at every chunk: that is a window of k steps, not truncated BPTT "
    "(carry h over, detached)": dict(reset=True),
    "the state is not detached (retain_graph=True lets gradients flow into earlier chunks again): "
    "detach h between chunks": dict(detach=False),
    "the gradients of the earlier chunks were zeroed (zero_grad() inside the loop): let backward() "
    "accumulate them over the chunks": dict(zero_grad=True),
    "the squared errors were summed (reduction='sum'): F.mse_loss averages them": dict(reduction="sum"),
    "backward() was never called: call loss.backward() for every chunk": dict(backward=False),
    "each chunk loss was divided by the number of chunks before backward(): backpropagate the chunk loss "
    "itself": dict(scale_by_chunks=True),
}


def _fresh_copy(model: nn.Module) -> nn.Module:
    m = copy.deepcopy(model)
    m.zero_grad(set_to_none=True)
    return m


def _grads(m: nn.Module) -> dict[str, torch.Tensor]:
    return {name: (torch.zeros_like(p) if p.grad is None else p.grad.detach().clone())
            for name, p in m.named_parameters()}


def _bptt_cases():
    # (B, T, k, I, H, O): T not a multiple of k, k = 1, a single chunk (k > T), batch size 1
    specs = [(2, 12, 4, 3, 5, 2, ""), (3, 10, 3, 2, 4, 3, "T not a multiple of k"), (1, 7, 1, 4, 3, 1, "k=1"),
             (2, 5, 8, 3, 6, 2, "k > T: a single chunk")]
    for seed, (B, T, k, I, H, O, what) in enumerate(specs):  # noqa: E741 - I: the input size
        torch.manual_seed(case_seed(20 + seed))
        model = bptt.ElmanNetwork(I, H, O)
        g = case_generator(30 + seed)
        x, targets = torch.randn(B, T, I, generator=g), torch.randn(B, T, O, generator=g)
        case = f"B={B}, T={T}, k={k}, an ElmanNetwork({I}, {H}, {O})" + (f" ({what})" if what else "")
        yield case, model, x, targets, k


def _run_student_bptt(student_fn, case, model, x, targets, k):
    m = _fresh_copy(model)
    try:
        losses = run_student(student_fn, case, m, x, targets, k)
    except CheckFailed as exc:
        if "backward through the graph a second time" in str(exc):
            raise CheckFailed(f"on {case}, backward() went through the previous chunk's graph a second time. "
                              "It looks like you forgot to detach the hidden state between chunks "
                              "(h = h.detach() after each backward).") from exc
        raise
    return m, losses


def _check_loss_list(losses, n: int, *, case: str, T: int, k: int, want: torch.Tensor, losses_for_k) -> torch.Tensor:
    """The student's losses as a float64 tensor, after checking it is a list of ``n`` Python floats.

    ``losses_for_k(k2)``: the reference losses with chunks of ``k2`` steps (to recognise a hard-coded k)."""
    expected = f"on {case}, expected a list of {n} chunk losses (Python floats, one per chunk of {k} steps)"
    if not isinstance(losses, (list, tuple)):
        raise CheckFailed(f"{expected}, got {describe(losses)}")
    for v in losses:
        if isinstance(v, torch.Tensor):
            raise CheckFailed(f"{expected}, got a list holding a {describe(v)}: append loss.item(), a Python float "
                              "(a list of loss tensors keeps every chunk's graph alive).")
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise CheckFailed(f"{expected}, got a list holding {describe(v)}")
    got = torch.tensor([float(v) for v in losses], dtype=torch.float64)
    if len(losses) != n:
        hint = ""
        if len(losses) == n - 1 and T % k and torch.allclose(got, want[:-1], atol=1e-5, rtol=1e-4):
            steps = f"{T % k} step" + ("s" if T % k > 1 else "")
            hint = (f" The last, shorter chunk ({steps}) is missing: loop over range(0, T, k), a slice past the end "
                    "is simply shorter.")
        else:
            for k2 in range(1, T + 1):
                if k2 != k and len(losses) == -(-T // k2) and torch.allclose(got, losses_for_k(k2), atol=1e-5,
                                                                             rtol=1e-4):
                    hint = (f" These are the losses of chunks of {k2} step" + ("s" if k2 > 1 else "")
                            + ": use the k argument." + (" (one loss per chunk, not per time step)" if k2 == 1 else ""))
                    break
        raise CheckFailed(f"{expected}, got {describe(losses)}.{hint}")
    return got


@exercise_check("truncated backpropagation through time")
def check_truncated_bptt(student_fn):
    """``student_fn(model, x (B, T, I), targets (B, T, O), k) -> list of chunk losses``: split the
    sequence into chunks of ``k`` steps; for each chunk run ``y, h = model(chunk, h)``, compute
    ``F.mse_loss(y, targets_chunk)``, call ``backward()`` (gradients accumulate) and carry ``h`` to the
    next chunk *detached*. ``model`` is a :class:`coursekit.rnn.bptt.ElmanNetwork`."""
    for case, model, x, targets, k in _bptt_cases():
        T, n = x.shape[1], -(-x.shape[1] // k)
        ref = _fresh_copy(model)
        want_losses = torch.tensor(reference_truncated_bptt(ref, *_clones(x, targets), k), dtype=torch.float64)
        want_grads = _grads(ref)
        wrong = {}
        for hint, kwargs in _BPTT_MISTAKES.items():
            m = _fresh_copy(model)
            wrong[hint] = (torch.tensor(_bptt_variant(m, *_clones(x, targets), k, **kwargs), dtype=torch.float64),
                           _grads(m))
        before = {name: p.detach().clone() for name, p in model.named_parameters()}

        m, losses = _run_student_bptt(student_fn, case, model, x, targets, k)
        got_losses = _check_loss_list(
            losses, n, case=case, T=T, k=k, want=want_losses,
            losses_for_k=lambda k2, model=model, x=x, targets=targets: torch.tensor(
                reference_truncated_bptt(_fresh_copy(model), *_clones(x, targets), k2), dtype=torch.float64))
        for name, p in m.named_parameters():
            if not torch.equal(p.detach(), before[name]):
                raise CheckFailed(f"on {case}, the model's parameter {name} changed: only backpropagate (no "
                                  "optimizer step); the gradients stay in .grad")
        expect_close(got_losses, want_losses, case=case, what="the list of chunk losses",
                     mistakes={hint: v[0] for hint, v in wrong.items()})
        got_grads = _grads(m)
        for name, want in want_grads.items():
            expect_close(got_grads[name], want, case=case, what=f"the accumulated gradient of {name}",
                         mistakes={hint: v[1][name] for hint, v in wrong.items()})

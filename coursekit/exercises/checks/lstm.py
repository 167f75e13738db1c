"""Exercise checks for notebook 04 (LSTM internals, the forget-gate bias, ELMo's scalar mix).

Each check runs the student's function on several seeded inputs whose sizes vary from case to case (batch
size 1, a first step with zero state, H = 1, a single layer, layers on very different scales), checks the
type, dtype and shape of what comes back, compares it with a reference computed on the check's own copy of
the inputs (:mod:`coursekit.rnn.elmo` or a few lines of PyTorch) and, on a mismatch, names the typical mistake the
wrong value matches (gate order, a forgotten forget gate, a bias set twice, a missing softmax …). The
notebook-03 checks (Elman step, BPTT) are in :mod:`coursekit.exercises.checks.rnn`.
"""

from __future__ import annotations

import itertools

import torch
from torch import nn

from coursekit.exercises.checks.rnn import _clones, _expect_tensor
from coursekit.exercises.core import (
    CheckFailed,
    case_generator,
    case_seed,
    describe,
    exercise_check,
    expect_close,
    run_student,
)
from coursekit.rnn import elmo

__all__ = [
    "check_lstm_step",
    "check_forget_gate_bias",
    "check_scalar_mix",
]


# ----------------------------------------------------------------------------------------------
# 04 — one LSTM step
# ----------------------------------------------------------------------------------------------
def _lstm_from(a: torch.Tensor, c: torch.Tensor, order: str = "ifgo") -> tuple[torch.Tensor, torch.Tensor]:
    """(h_t, c_t) from the pre-activations ``a`` (B, 4H) when the four blocks are read as the gates ``order``."""
    blocks = dict(zip(order, a.chunk(4, dim=-1)))
    i, f, o = (torch.sigmoid(blocks[name]) for name in "ifo")
    g = torch.tanh(blocks["g"])
    c_t = f * c + i * g
    return o * torch.tanh(c_t), c_t


def _lstm_variants(x, h, c, W_ih, W_hh, b):
    """The reference step and typical wrong ones: name -> (h', c')."""
    a = x @ W_ih.T + h @ W_hh.T + b                                      # (B, 4H)
    a_i, a_f, a_g, a_o = a.chunk(4, dim=-1)
    i, f, g, o = torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)
    c_t = f * c + i * g

    def out(c_new, h_new=None):
        return (o * torch.tanh(c_new) if h_new is None else h_new), c_new

    variants = {"reference": out(c_t)}
    # any other order of the four blocks: TensorFlow/Keras's i, f, o, g or i, g, f, o (the "j" gate second) …
    for perm in itertools.permutations("ifgo"):
        order = "".join(perm)
        if order != "ifgo":
            variants[f"the gates are read in the wrong order {', '.join(order)} (PyTorch stacks them i, f, g, o)"] = \
                _lstm_from(a, c, order)
    square = W_ih.shape[0] == W_ih.shape[1]
    variants.update({
        "the forget gate is missing (c_t = f ⊙ c_{t-1} + i ⊙ g, not c_{t-1} + i ⊙ g)": out(c + i * g),
        "the old cell is dropped (c_t = f ⊙ c_{t-1} + i ⊙ g, not i ⊙ g)": out(i * g),
        "a sigmoid was used on the candidate g (it is a tanh)": out(f * c + i * torch.sigmoid(a_g)),
        "the tanh on the cell is missing in h_t = o ⊙ tanh(c_t)": out(c_t, o * c_t),
        "h_t uses the old cell (h_t = o ⊙ tanh(c_t), with the new c_t)": out(c_t, o * torch.tanh(c)),
        "a tanh was used on the output gate o (it is a sigmoid)": out(c_t, torch.tanh(a_o) * torch.tanh(c_t)),
        "the bias b was added twice (b is already the total bias_ih + bias_hh)": _lstm_from(a + b, c),
        "the recurrent term W_hh h_{t-1} is missing": _lstm_from(x @ W_ih.T + b, c),
        "W_ih is used untransposed (x @ W_ih instead of x @ W_ih.T)":
            _lstm_from(x @ W_ih + h @ W_hh.T + b, c) if square else (None, None),
    })
    return variants


def _lstm_cases():
    # (B, I, H): H = 1, batch size 1, I = 4H (then an untransposed W_ih does not raise)
    specs = [(2, 3, 4, ""), (1, 4, 2, "batch size 1, h and c all zeros (the first step)"), (3, 5, 5, ""),
             (2, 8, 2, "I = 4H"), (4, 3, 1, "H=1, cell values on a large scale (×5)")]
    for seed, (B, I, H, what) in enumerate(specs):  # noqa: E741 - I: the input size, as in the equations
        g = case_generator(40 + seed)
        x, h, c = torch.randn(B, I, generator=g), torch.randn(B, H, generator=g), torch.randn(B, H, generator=g)
        W_ih, W_hh, b = (torch.randn(4 * H, I, generator=g), torch.randn(4 * H, H, generator=g),
                         torch.randn(4 * H, generator=g))
        if "first step" in what:
            h, c = torch.zeros(B, H), torch.zeros(B, H)
        if "large scale" in what:
            c = 5 * c
        case = f"x of shape {(B, I)}, h and c of shape {(B, H)}" + (f" ({what})" if what else "")
        yield case, (x, h, c, W_ih, W_hh, b)


@exercise_check("one LSTM step", reimplements=(
    "coursekit.rnn.cells.LSTMCell", "coursekit.rnn.layers.LSTM", "torch.nn.LSTMCell", "torch.nn.LSTM",
    "torch.lstm_cell"))
def check_lstm_step(student_fn):
    """``student_fn(x (B, I), h (B, H), c (B, H), W_ih (4H, I), W_hh (4H, H), b (4H,)) -> (h_t, c_t)``
    with PyTorch's gate layout i, f, g, o (``b`` is the total bias ``bias_ih + bias_hh``)."""
    for case, args in _lstm_cases():
        variants = _lstm_variants(*_clones(*args))
        want_h, want_c = variants.pop("reference")
        got = run_student(student_fn, case, *args)
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise CheckFailed(f"on {case}, return the pair (h_t, c_t) of two {tuple(want_h.shape)} tensors; "
                              f"got {describe(got)}")
        got_h, got_c = got
        _expect_tensor(got_h, want_h.shape, case=case, what="h_t (the first of the pair)")
        _expect_tensor(got_c, want_c.shape, case=case, what="c_t (the second of the pair)")
        if (not torch.allclose(got_h, want_h, atol=1e-5, rtol=1e-4)
                and torch.allclose(got_h, want_c, atol=1e-5, rtol=1e-4)
                and torch.allclose(got_c, want_h, atol=1e-5, rtol=1e-4)):
            raise CheckFailed(f"on {case}, h_t and c_t are swapped: return the pair (h_t, c_t), in that order")
        expect_close(got_c, want_c, case=case, what="c_t", mistakes={k: v[1] for k, v in variants.items()})
        expect_close(got_h, want_h, case=case, what="h_t", mistakes={k: v[0] for k, v in variants.items()})


# ----------------------------------------------------------------------------------------------
# 04 — forget-gate bias
# ----------------------------------------------------------------------------------------------
def _forget_cases():
    # (input size, H, layers, bidirectional, value): H other than 4, 3 layers, a negative value, value 0
    specs = [(3, 4, 1, False, 1.0), (5, 3, 2, True, 2.0), (2, 5, 3, False, -0.5), (4, 2, 1, True, 0.0)]
    for seed, (I, H, layers, bidir, value) in enumerate(specs):  # noqa: E741 - I: the input size
        torch.manual_seed(case_seed(50 + seed))
        lstm = nn.LSTM(I, H, num_layers=layers, bidirectional=bidir)
        yield f"nn.LSTM({I}, {H}, num_layers={layers}, bidirectional={bidir}), value={value}", lstm, H, value


def _forget_mistakes(old_ih: torch.Tensor, old_hh: torch.Tensor, H: int, value: float) -> dict:
    old = old_ih + old_hh

    def with_block(lo, hi, new):
        t = old.clone()
        t[lo:hi] = new
        return t

    f = slice(H, 2 * H)
    out = {
        "the input gate block was set (rows 0..H); the forget gate is the second block, rows H..2H":
            with_block(0, H, value),
        "the candidate block g was set (rows 2H..3H); the forget gate is the second block, rows H..2H (i, f, g, o)":
            with_block(2 * H, 3 * H, value),
        "the output gate block was set (rows 3H..4H); the forget gate is the second block, rows H..2H (i, f, g, o)":
            with_block(3 * H, 4 * H, value),
        "both bias_ih and bias_hh were set to the value, so the total is twice it "
        "(zero one of them in the f block)": with_block(H, 2 * H, 2 * value),
        "only one of the two bias vectors was set: the total is bias_ih + bias_hh, so set one of them to value "
        "and zero the other in the f block": with_block(H, 2 * H, value + old_hh[f]),
        "only one of the two bias vectors was set (bias_hh): the total is bias_ih + bias_hh, so set one of them to "
        "value and zero the other in the f block": with_block(H, 2 * H, value + old_ih[f]),
        "the value was added to the bias, not set": with_block(H, 2 * H, old[f] + value),
        "every gate's bias was set, not only the forget gate's block (rows H..2H)": torch.full_like(old, value),
        "the value 1 is hard-coded: use the value argument": with_block(H, 2 * H, 1.0) if value != 1 else None,
        "the hidden size 4 is hard-coded: use lstm.hidden_size": (with_block(4, 8, value)
                                                                 if H != 4 and 4 * H >= 8 else None),
        "this layer/direction was left unchanged: set the biases of every layer and direction "
        "(every bias_ih_l{k}[_reverse] / bias_hh_l{k}[_reverse] in lstm.named_parameters())":
            old if value != 0 or not torch.equal(old[f], torch.zeros(H)) else None,
    }
    return out


@exercise_check("forget-gate bias initialisation", reimplements=("coursekit.rnn.cells.init_forget_gate_bias",))
def check_forget_gate_bias(student_fn):
    """``student_fn(lstm: nn.LSTM, value: float) -> None`` sets the *total* forget-gate bias
    ``bias_ih[f] + bias_hh[f]`` of every layer and direction to ``value``, leaving the other gates alone."""
    for case, lstm, H, value in _forget_cases():
        before = {n: p.detach().clone() for n, p in lstm.named_parameters()}
        try:
            run_student(student_fn, case, lstm, value)
        except CheckFailed as exc:
            if "leaf Variable that requires grad" in str(exc):
                raise CheckFailed(f"{str(exc).rstrip('.')}. Parameters require grad: make the assignment inside "
                                  "`with torch.no_grad():`.") from exc
            raise
        after = dict(lstm.named_parameters())
        for name, old in before.items():
            p = after.get(name)
            if not isinstance(p, nn.Parameter) or p.shape != old.shape:
                raise CheckFailed(f"on {case}, after your function lstm.{name} is {describe(p)}, no longer an "
                                  f"nn.Parameter of shape {tuple(old.shape)}: change its values in place "
                                  "(inside torch.no_grad()), do not replace it")
            if not p.requires_grad:
                raise CheckFailed(f"on {case}, after your function lstm.{name} no longer requires grad: it would "
                                  "not be trained (use torch.no_grad() around the assignment, not "
                                  "requires_grad_(False))")
            if name.startswith("weight") and not torch.equal(p.detach(), old):
                raise CheckFailed(f"on {case}, {name} changed: only the biases should be touched")
        for suffix in sorted({n.split("bias_ih")[1] for n in before if n.startswith("bias_ih")}):
            old_ih, old_hh = before["bias_ih" + suffix], before["bias_hh" + suffix]
            total = (after["bias_ih" + suffix] + after["bias_hh" + suffix]).detach()
            want = old_ih + old_hh
            want[H:2 * H] = value
            where = f"{case}, layer{suffix}"
            expect_close(total, want, case=where, what="bias_ih + bias_hh",
                         mistakes=_forget_mistakes(old_ih, old_hh, H, value))
            for name in ("bias_ih" + suffix, "bias_hh" + suffix):
                new = after[name].detach()
                for lo, gate in ((0, "input gate i"), (2 * H, "candidate g"), (3 * H, "output gate o")):
                    if not torch.equal(new[lo:lo + H], before[name][lo:lo + H]):
                        raise CheckFailed(f"on {where}, {name}[{lo}:{lo + H}] (the {gate}) changed: only the "
                                          f"forget gate's block, rows {H}..{2 * H}, may change")


# ----------------------------------------------------------------------------------------------
# 04 — ELMo's scalar mix
# ----------------------------------------------------------------------------------------------
def _mix_cases():
    # (L, B, T, D, gamma): a single layer, B == L (weights broadcast along the batch silently), layers on very
    # different scales, large layer weights
    specs = [(3, 2, 4, 5, 1.5, ""), (2, 1, 3, 4, 2.5, "batch size 1"), (1, 2, 3, 2, 0.5, "a single layer"),
             (4, 4, 2, 3, 0.8, "layers on very different scales (×0.01 … ×100), large layer weights w")]
    for seed, (L, B, T, D, gamma, what) in enumerate(specs):
        g = case_generator(60 + seed)
        layers = torch.randn(L, B, T, D, generator=g)
        w = torch.randn(L, generator=g)
        if "scales" in what:
            layers = layers * torch.tensor([0.01, 1.0, 100.0, 10.0])[:, None, None, None]
            w = 4 * w
        case = f"layers of shape {(L, B, T, D)}, gamma={gamma}" + (f" ({what})" if what else "")
        yield case, layers, w, torch.tensor(gamma)


@exercise_check("ELMo scalar mix", reimplements=("coursekit.rnn.elmo.ScalarMix",))
def check_scalar_mix(student_fn):
    """``student_fn(layers (L, B, T, D), w (L,), gamma (scalar tensor)) -> (B, T, D)``:
    ``γ Σ_j softmax(w)_j layers[j]`` (Peters et al. 2018, eq. 1)."""
    for case, *args in _mix_cases():
        layers, w, gamma = _clones(*args)
        L, B = layers.shape[:2]
        mix = elmo.ScalarMix(L)
        with torch.no_grad():
            mix.scalar_parameters.copy_(w)
            mix.gamma.copy_(gamma)
            want = mix(layers).detach()
        s = torch.softmax(w, 0).view(L, 1, 1, 1)
        mistakes = {
            "the softmax over the layer weights is missing (s = softmax(w))":
                gamma * (w.view(L, 1, 1, 1) * layers).sum(0),
            "w was normalised by its sum (w / w.sum()); ELMo normalises with a softmax, s = softmax(w)":
                gamma * ((w / w.sum()).view(L, 1, 1, 1) * layers).sum(0),
            "γ (gamma) is missing": (s * layers).sum(0),
            "γ (gamma) was added, not multiplied": gamma + (s * layers).sum(0),
            "the layers are averaged, ignoring w": gamma * layers.mean(0),
            "only the top layer was used: ELMo mixes all L layers": gamma * layers[-1],
            "the layer weights were broadcast along the batch axis: view s as (L, 1, 1, 1) so that s_j weighs "
            "layers[j]": gamma * (s.view(1, L, 1, 1) * layers).sum(0) if B == L else None,
        }
        got = run_student(student_fn, case, *args)
        _expect_tensor(got, want.shape, case=case, what="the mix", hints={
            (1, *want.shape): " It has an extra leading dimension: sum over the layer axis without keepdim."})
        expect_close(got, want, case=case, mistakes=mistakes)

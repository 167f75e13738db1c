"""Checks of notebook 13: the reference passes, a stub is "not attempted", typical mistakes get their hint, and
handing in (or calling) the coursekit.llama function the exercise re-creates is refused."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from helpers.exercises import fails_with, notebook_solutions, passes, refuses_delegation, stub

from coursekit import exercises
from coursekit.exercises.checks import llama
from coursekit.llama import flash, layers
from coursekit.llama import rope as rope_lib

# ---------------------------------------------------------------- exported, stubs, the notebook's solutions


def test_checks_exported_and_stubs_not_attempted():
    for name in llama.__all__:
        assert getattr(exercises, name) is getattr(llama, name)
        assert getattr(llama, name)(stub, verbose=False).status == "not attempted", name


NB13 = notebook_solutions("13_modern_decoders")


@pytest.mark.parametrize("check, solution", [
    (llama.check_rope, "rope"), (llama.check_rope_attention, "rope_attention"), (llama.check_rms_norm, "rms_norm"),
    (llama.check_online_softmax_step, "online_softmax_step"), (llama.check_repeat_kv, "repeat_kv"),
])
def test_the_notebook_solutions_pass(check, solution):
    passes(check, NB13[solution])


# ---------------------------------------------------------------- RoPE on one tensor

def _rope(x, positions, *, interleaved=False, sign=1.0, swap=False, exponent=2.0, per_dim=False, zero_based=False,
          base=10000.0, time_axis=True):
    d, T = x.shape[-1], x.shape[-2]
    if zero_based:
        positions = torch.arange(T)
    if per_dim:
        theta = base ** (-torch.arange(d, dtype=torch.float32) / d)
        angles = positions.float()[:, None] * theta
        x1, x2 = x.chunk(2, dim=-1)
        return x * angles.cos() + torch.cat([-x2, x1], dim=-1) * angles.sin()
    i = torch.arange(d // 2, dtype=torch.float32)
    theta = base ** (-exponent * i / d) if exponent else base ** (-2 * i)
    angles = positions.float()[:, None] * theta                       # (T, d/2)
    cos, sin = angles.cos(), (sign * angles).sin()
    if swap:
        cos, sin = sin, cos
    if not time_axis:                                                 # (T, 1, d/2): lines up with the heads
        cos, sin = cos[:, None], sin[:, None]
    a, b = (x[..., 0::2], x[..., 1::2]) if interleaved else x.chunk(2, dim=-1)
    first, second = a * cos - b * sin, b * cos + a * sin
    if interleaved:
        return torch.stack([first, second], dim=-1).flatten(-2)
    return torch.cat([first, second], dim=-1)


def _rope_in_place(x, positions):
    d = x.shape[-1]
    out = _rope(x, positions)
    x[..., : d // 2] = out[..., : d // 2]                            # the caller's queries are changed
    x[..., d // 2:] = out[..., d // 2:]
    return x


def test_rope_reference_and_the_main_mistakes():
    passes(llama.check_rope, _rope)
    fails_with(llama.check_rope, lambda x, p: _rope(x, p, interleaved=True), "interleaved pairs")
    fails_with(llama.check_rope, lambda x, p: _rope(x, p, sign=-1.0), "wrong way")


ROPE_WRONG = {   # name -> (student function, words of the hint or None)
    "interleaved pairs (the paper's layout)": (lambda x, p: _rope(x, p, interleaved=True), "interleaved"),
    "rotated by −m·θ": (lambda x, p: _rope(x, p, sign=-1.0), "wrong way"),
    "cos and sin swapped": (lambda x, p: _rope(x, p, swap=True), "swapped"),
    "θ_i = 10000^(−i/d)": (lambda x, p: _rope(x, p, exponent=1.0), "10000^(−i/d)"),
    "θ_i = 10000^(−2i)": (lambda x, p: _rope(x, p, exponent=0), "divide by d"),
    "one angle per dim (torch.arange(d))": (lambda x, p: _rope(x, p, per_dim=True), "own angle"),
    "positions ignored": (lambda x, p: _rope(x, p, zero_based=True), "positions were ignored"),
    "positions along the heads": (lambda x, p: _rope(x, p, time_axis=False), "wrong axis"),
    "not rotated": (lambda x, p: x.clone(), "unchanged"),
    "rotated in place": (_rope_in_place, "in place"),
    "only the first half returned": (lambda x, p: _rope(x, p)[..., : x.shape[-1] // 2], "shape"),
    "base 1000": (lambda x, p: _rope(x, p, base=1000.0), None),
}


@pytest.mark.parametrize("name", sorted(ROPE_WRONG))
def test_rope_wrong_solutions_fail(name):
    fn, hint = ROPE_WRONG[name]
    fails_with(llama.check_rope, fn, "on ", *([hint] if hint else []))


def test_rope_messages_name_the_case():
    r = fails_with(llama.check_rope, lambda x, p: _rope(x, p, zero_based=True), "positions were ignored")
    assert "[7 … 11]" in r.message


# ---------------------------------------------------------------- attention with RoPE

def _rope_attention(q, k, v, *, rotate="qk", causal=True, scale=True, interleaved=False, softmax_dim=-1):
    positions = torch.arange(q.shape[-2])

    def rot(t):
        return _rope(t, positions, interleaved=interleaved)

    q = rot(q) if "q" in rotate else q
    k = rot(k) if "k" in rotate else k
    v = rot(v) if "v" in rotate else v
    s = q @ k.transpose(-2, -1) / (math.sqrt(q.shape[-1]) if scale else 1.0)
    if causal:
        T = q.shape[-2]
        s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(s, dim=softmax_dim) @ v


ROPE_ATTENTION_WRONG = {
    "values rotated too": (lambda q, k, v: _rope_attention(q, k, v, rotate="qkv"), "values were rotated"),
    "only the queries rotated": (lambda q, k, v: _rope_attention(q, k, v, rotate="q"), "only the queries"),
    "only the keys rotated": (lambda q, k, v: _rope_attention(q, k, v, rotate="k"), "only the keys"),
    "nothing rotated": (lambda q, k, v: _rope_attention(q, k, v, rotate=""), "not rotated at all"),
    "no causal mask": (lambda q, k, v: _rope_attention(q, k, v, causal=False), "causal mask"),
    "no 1/√d": (lambda q, k, v: _rope_attention(q, k, v, scale=False), "√d"),
    "interleaved pairs": (lambda q, k, v: _rope_attention(q, k, v, interleaved=True), "interleaved"),
    "softmax over the queries": (lambda q, k, v: _rope_attention(q, k, v, softmax_dim=-2), "wrong axis"),
    "returns the weights": (lambda q, k, v: torch.softmax(q @ k.transpose(-2, -1), -1), "shape"),
}


def test_rope_attention_reference_passes_and_values_are_caught():
    passes(llama.check_rope_attention, _rope_attention)
    fails_with(llama.check_rope_attention, lambda q, k, v: _rope_attention(q, k, v, rotate="qkv"), "values")


@pytest.mark.parametrize("name", sorted(ROPE_ATTENTION_WRONG))
def test_rope_attention_wrong_solutions_fail(name):
    fn, hint = ROPE_ATTENTION_WRONG[name]
    fails_with(llama.check_rope_attention, fn, "on ", *([hint] if hint else []))


# ---------------------------------------------------------------- RMSNorm

def _rms(x, w, eps):
    return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


RMS_NORM_WRONG = {
    "LayerNorm (mean subtracted)": (lambda x, w, eps: F.layer_norm(x, x.shape[-1:], eps=eps) * w, "LayerNorm"),
    "ε outside the square root": (lambda x, w, eps: x / (x.pow(2).mean(-1, keepdim=True).sqrt() + eps) * w,
                                  "outside the square root"),
    "ε missing": (lambda x, w, eps: x / x.pow(2).mean(-1, keepdim=True).sqrt() * w, "ε is missing"),
    "no square root": (lambda x, w, eps: x / (x.pow(2).mean(-1, keepdim=True) + eps) * w, "square root"),
    "no gain": (lambda x, w, eps: x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps), "gain"),
    "sum of squares (x / ‖x‖)": (lambda x, w, eps: x / torch.sqrt(x.pow(2).sum(-1, keepdim=True) + eps) * w,
                                 "sum of squares"),
    "divided by the standard deviation": (lambda x, w, eps: x / torch.sqrt(x.var(-1, keepdim=True) + eps) * w,
                                          "standard deviation"),
    "mean over dim=0": (lambda x, w, eps: x / torch.sqrt(x.pow(2).mean(0, keepdim=True) + eps) * w,
                        "wrong dimension"),
    "gain added": (lambda x, w, eps: x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps) + w, "added"),
    "mean without keepdim": (lambda x, w, eps: x / torch.sqrt(x.pow(2).mean(-1) + eps) * w, None),
    "eps hard-coded to 1e-6": (lambda x, w, eps: _rms(x, w, 1e-6), None),
}


def test_rms_norm_reference_and_the_two_named_mistakes():
    passes(llama.check_rms_norm, _rms)
    r = fails_with(llama.check_rms_norm, RMS_NORM_WRONG["LayerNorm (mean subtracted)"][0], "LayerNorm")
    assert "means far from 0" in r.message or "(2, 3, 8)" in r.message
    fails_with(llama.check_rms_norm, RMS_NORM_WRONG["ε outside the square root"][0], "large eps")


@pytest.mark.parametrize("name", sorted(RMS_NORM_WRONG))
def test_rms_norm_wrong_solutions_fail(name):
    fn, hint = RMS_NORM_WRONG[name]
    fails_with(llama.check_rms_norm, fn, "on ", *([hint] if hint else []))


# ---------------------------------------------------------------- one online-softmax step

def _step(m, l, acc, S, v, *, rescale_l=True, rescale_acc=True, inverted=False, old_max=False, tile_max=False,  # noqa: E741
          normalise=False, safe=True, values=True):
    m_new = S.amax(-1, keepdim=True) if tile_max else torch.maximum(m, S.amax(-1, keepdim=True))
    m_sub = m_new.masked_fill(m_new == float("-inf"), 0.0) if safe else m_new
    P = torch.exp(S - (m if old_max else m_sub))
    alpha = torch.exp(m_sub - m) if inverted else torch.exp(m - m_sub)
    l_new = (alpha * l if rescale_l else l) + P.sum(-1, keepdim=True)
    acc_new = (alpha * acc if rescale_acc else acc) + (P @ v if values else P.sum(-1, keepdim=True))
    if normalise:
        acc_new = acc_new / l_new
    return m_new, l_new, acc_new


ONLINE_SOFTMAX_STEP_WRONG = {
    "running sum not rescaled": (lambda *a: _step(*a, rescale_l=False), "running sum l was not rescaled"),
    "running output not rescaled": (lambda *a: _step(*a, rescale_acc=False), "running output acc was not rescaled"),
    "neither rescaled": (lambda *a: _step(*a, rescale_l=False, rescale_acc=False), "not rescaled"),
    "rescaled by exp(m_new − m_old)": (lambda *a: _step(*a, inverted=True), "upside down"),
    "exp against the old max": (lambda *a: _step(*a, old_max=True), "OLD max"),
    "new max = the tile's max": (lambda *a: _step(*a, tile_max=True), "tile's own max"),
    "acc normalised at every step": (lambda *a: _step(*a, normalise=True), "unnormalised"),
    "NaN on a fully masked row": (lambda *a: _step(*a, safe=False), "masked so far"),
    "values forgotten": (lambda *a: _step(*a, values=False), None),
    "returns (m, l) only": (lambda *a: _step(*a)[:2], "return the new state (m, l, acc)"),
    "m and l without keepdim": (lambda *a: tuple(t.squeeze(-1) if i < 2 else t for i, t in enumerate(_step(*a))),
                                "keepdim=True"),
    "returns acc / l": (lambda *a: (lambda m, l, acc: acc / l)(*_step(*a)), "return the new state"),  # noqa: E741
}


def test_online_softmax_step_reference_and_the_named_mistakes():
    passes(llama.check_online_softmax_step, _step)
    fails_with(llama.check_online_softmax_step, lambda *a: _step(*a, rescale_l=False), "l was not rescaled")
    fails_with(llama.check_online_softmax_step, lambda *a: _step(*a, rescale_acc=False), "acc was not rescaled")


@pytest.mark.parametrize("name", sorted(ONLINE_SOFTMAX_STEP_WRONG))
def test_online_softmax_step_wrong_solutions_fail(name):
    fn, hint = ONLINE_SOFTMAX_STEP_WRONG[name]
    fails_with(llama.check_online_softmax_step, fn, "on ", *([hint] if hint else []))


def test_online_steps_make_exact_attention():
    # the reference of the check, folded over tiles, is attention: what the exercise is for
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 7, 4, generator=g) for _ in range(3))
    S = q @ k.transpose(-2, -1) / 2.0
    m, l, acc = torch.full((2, 7, 1), float("-inf")), torch.zeros(2, 7, 1), torch.zeros(2, 7, 4)  # noqa: E741
    for j in range(0, 7, 3):
        m, l, acc = _step(m, l, acc, S[..., j:j + 3], v[:, j:j + 3])  # noqa: E741
    torch.testing.assert_close(acc / l, F.scaled_dot_product_attention(q, k, v))


# ---------------------------------------------------------------- repeat_kv

REPEAT_KV_WRONG = {
    "x.repeat (block order)": (lambda x, n: x.repeat(1, n, 1, 1), "as a block"),
    "a new axis in front of the heads": (
        lambda x, n: x[:, None].expand(x.shape[0], n, *x.shape[1:]).reshape(x.shape[0], -1, *x.shape[2:]),
        "as a block"),
    "repeat_interleave along time, reshaped": (
        lambda x, n: x.repeat_interleave(n, dim=2).reshape(x.shape[0], -1, *x.shape[2:]), "time axis"),
    "no reshape (B, H_kv, n_rep, T, d)": (lambda x, n: x[:, :, None].expand(-1, -1, n, -1, -1), "not merged"),
    "the batch repeated": (lambda x, n: x.repeat_interleave(n, dim=0), "batch axis"),
    "the time axis repeated": (lambda x, n: x.repeat_interleave(n, dim=2), "wrong axis"),
    "returns a list of heads": (lambda x, n: list(x.repeat_interleave(n, dim=1).unbind(1)), "shape"),
    "n_rep hard-coded to 2": (lambda x, n: x.repeat_interleave(2, dim=1), None),
}


def test_repeat_kv_reference_and_the_block_order():
    passes(llama.check_repeat_kv, lambda x, n: torch.repeat_interleave(x, n, dim=1))
    passes(llama.check_repeat_kv, lambda x, n: x[:, :, None].expand(-1, -1, n, -1, -1).flatten(1, 2))
    fails_with(llama.check_repeat_kv, lambda x, n: x.repeat(1, n, 1, 1), "repeat_interleave")


@pytest.mark.parametrize("name", sorted(REPEAT_KV_WRONG))
def test_repeat_kv_wrong_solutions_fail(name):
    fn, hint = REPEAT_KV_WRONG[name]
    fails_with(llama.check_repeat_kv, fn, "on ", *([hint] if hint else []))


# ---------------------------------------------------------------- handing in or calling the library is refused

def _rope_by_library(x, positions):
    cos, sin = rope_lib.rope_angles(x.shape[-1], int(positions.max()) + 1)
    return rope_lib.apply_rope(x, cos, sin, positions)


def _rope_by_library_rotate_half(x, positions):
    d = x.shape[-1]
    angles = positions.float()[:, None] * 10000.0 ** (-torch.arange(0, d, 2).float() / d)
    angles = torch.cat([angles, angles], dim=-1)
    return x * angles.cos() + rope_lib.rotate_half(x) * angles.sin()


def _rope_attention_by_library(q, k, v):
    cos, sin = rope_lib.rope_angles(q.shape[-1], q.shape[-2])
    return F.scaled_dot_product_attention(rope_lib.apply_rope(q, cos, sin), rope_lib.apply_rope(k, cos, sin), v,
                                          is_causal=True)


def _rms_by_module(x, w, eps):
    norm = layers.RMSNorm(x.shape[-1], eps).to(x.dtype)
    with torch.no_grad():
        norm.weight.copy_(w)
    return norm(x).detach()


@pytest.mark.parametrize("check, delegating, dotted, correct", [
    (llama.check_rope, _rope_by_library, "coursekit.llama.rope.rope_angles", True),
    (llama.check_rope, _rope_by_library_rotate_half, "coursekit.llama.rope.rotate_half", True),
    (llama.check_rope_attention, _rope_attention_by_library, "coursekit.llama.rope.rope_angles", True),
    (llama.check_rms_norm, lambda x, w, eps: F.rms_norm(x, x.shape[-1:], w, eps), "torch.nn.functional.rms_norm",
     True),
    (llama.check_rms_norm, _rms_by_module, "coursekit.llama.layers.RMSNorm", True),
    (llama.check_online_softmax_step, flash.online_softmax_update, None, True),
    (llama.check_online_softmax_step, lambda *a: flash.online_softmax_update(*a),
     "coursekit.llama.flash.online_softmax_update", True),
    (llama.check_repeat_kv, lambda x, n: layers.repeat_kv(x, n), "coursekit.llama.layers.repeat_kv", True),
    (llama.check_repeat_kv, layers.repeat_kv, None, True),
])
def test_calling_the_library_is_refused(check, delegating, dotted, correct):
    refuses_delegation(check, delegating, dotted, correct=correct)


def test_the_checks_still_use_the_library_themselves():
    # the references are computed with the very functions the student may not call
    assert llama.check_rope(_rope, verbose=False).passed
    assert rope_lib.apply_rope is llama.apply_rope and layers.repeat_kv is llama.repeat_kv

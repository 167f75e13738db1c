"""Checks of notebooks 07/08: the reference passes, a stub is "not attempted", typical mistakes get their hint."""

from __future__ import annotations

import math

import torch
from exercise_helpers import fails_with, passes, refuses_delegation, stub

from coursekit import exercises, transformer
from coursekit.exercises.checks import attention as att
from coursekit.exercises.checks import transformer as tr


def test_checks_are_exported():
    for module in (att, tr):
        for name in module.__all__:
            assert getattr(exercises, name) is getattr(module, name)


def test_every_check_reports_a_stub_as_not_attempted():
    for module in (att, tr):
        for name in module.__all__:
            assert getattr(module, name)(stub, verbose=False).status == "not attempted", name


# ---------------------------------------------------------------- scaled dot-product attention

def _attention(q, k, v, mask=None, *, dim=-1, scale=None, after=False, inverted=False, zero_fill=False):
    d_k = q.shape[-1]
    s = q @ k.transpose(-2, -1) / (math.sqrt(d_k) if scale is None else scale)
    if mask is not None and not after:
        s = s.masked_fill(mask if inverted else ~mask, 0.0 if zero_fill else float("-inf"))
    w = torch.softmax(s, dim=dim)
    if mask is not None and after:
        w = w * mask
    return w @ v


def test_sdpa_reference_passes_also_returning_weights():
    passes(att.check_scaled_dot_product_attention, _attention)
    passes(att.check_scaled_dot_product_attention, lambda q, k, v, mask=None: (_attention(q, k, v, mask), None))


def test_sdpa_mistakes_get_their_hints():
    check = att.check_scaled_dot_product_attention
    fails_with(check, lambda q, k, v, mask=None: _attention(q, k, v, mask, dim=-2), "wrong axis")
    fails_with(check, lambda q, k, v, mask=None: _attention(q, k, v, mask, scale=1.0), "1/sqrt(d_k)")
    fails_with(check, lambda q, k, v, mask=None: _attention(q, k, v, mask, scale=q.shape[-1]), "instead of sqrt")
    fails_with(check, lambda q, k, v, mask=None: _attention(q, k, v, mask, after=True), "after the softmax")
    fails_with(check, lambda q, k, v, mask=None: _attention(q, k, v, mask, inverted=True), "inverted")
    fails_with(check, lambda q, k, v, mask=None: _attention(q, k, v, mask, zero_fill=True), "instead of -inf")
    fails_with(check, lambda q, k, v, mask=None: _attention(q, k, v), "mask is ignored")
    fails_with(check, lambda q, k, v, mask=None: q @ k.transpose(-2, -1), "shape")
    fails_with(check, lambda q, k, v: _attention(q, k, v), "raised TypeError")


# ---------------------------------------------------------------- causal mask

def test_causal_mask_check():
    check = att.check_causal_mask
    passes(check, lambda T: torch.tril(torch.ones(T, T, dtype=torch.bool)))
    passes(check, lambda T: torch.arange(T)[None, :] <= torch.arange(T)[:, None])
    fails_with(check, lambda T: torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1), "off by one")
    fails_with(check, lambda T: torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=1), "off by one")
    fails_with(check, lambda T: torch.triu(torch.ones(T, T, dtype=torch.bool)), "transposed")
    fails_with(check, lambda T: ~torch.tril(torch.ones(T, T, dtype=torch.bool)), "inverted")
    fails_with(check, lambda T: torch.tril(torch.ones(T, T)), "dtype")
    fails_with(check, lambda T: torch.triu(torch.full((T, T), float("-inf")), 1), "additive float mask")
    fails_with(check, lambda T: [[True]], "bool tensor")


# ---------------------------------------------------------------- heads

def test_split_heads_check():
    check = att.check_split_heads
    passes(check, lambda x, h: x.view(x.shape[0], x.shape[1], h, -1).transpose(1, 2))
    fails_with(check, lambda x, h: x.reshape(x.shape[0], h, x.shape[1], -1), "viewed straight")
    fails_with(check, lambda x, h: x.view(x.shape[0], x.shape[1], -1, h).permute(0, 3, 1, 2), "interleaves")
    fails_with(check, lambda x, h: x.view(x.shape[0], x.shape[1], h, -1), "shape")


def test_merge_heads_check():
    check = att.check_merge_heads
    passes(check, lambda x: x.transpose(1, 2).reshape(x.shape[0], x.shape[2], -1))
    fails_with(check, lambda x: x.reshape(x.shape[0], x.shape[2], -1), "without transposing")
    fails_with(check, lambda x: x.permute(0, 2, 3, 1).reshape(x.shape[0], x.shape[2], -1), "head after head")
    fails_with(check, lambda x: x.transpose(1, 2).view(x.shape[0], x.shape[2], -1), "raised")


def _mha(x, Wq, Wk, Wv, Wo, H, *, scale_full=False, no_out=False):
    B, T, C = x.shape
    D = C // H
    q, k, v = ((x @ W).view(B, T, H, D).transpose(1, 2) for W in (Wq, Wk, Wv))
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(C if scale_full else D), dim=-1)
    out = (w @ v).transpose(1, 2).reshape(B, T, C)
    return out if no_out else out @ Wo


def test_multi_head_attention_check():
    check = att.check_multi_head_attention
    passes(check, _mha)
    fails_with(check, lambda *a: _mha(*a, scale_full=True), "sqrt(d_model)")
    fails_with(check, lambda *a: _mha(*a, no_out=True), "W_o is missing")
    fails_with(check, lambda x, Wq, Wk, Wv, Wo, H: _mha(x, Wq, Wk, Wv, Wo, 1), "one head")


# ---------------------------------------------------------------- transformer: positional encoding

def _pe(T, d, *, swap=False, halves=False, pair_index=False):
    pos = torch.arange(T, dtype=torch.float32)[:, None]
    i = torch.arange(d // 2, dtype=torch.float32)
    angle = pos / 10000 ** ((i if pair_index else 2 * i) / d)
    a, b = (torch.cos(angle), torch.sin(angle)) if swap else (torch.sin(angle), torch.cos(angle))
    if halves:
        return torch.cat([a, b], 1)
    return torch.stack([a, b], dim=-1).reshape(T, d)


def test_positional_encoding_check():
    check = tr.check_positional_encoding
    passes(check, _pe)
    fails_with(check, lambda T, d: _pe(T, d, swap=True), "swapped")
    fails_with(check, lambda T, d: _pe(T, d, halves=True), "interleaved")
    fails_with(check, lambda T, d: _pe(T, d, pair_index=True), "pair index")
    fails_with(check, lambda T, d: _pe(T + 1, d), "shape")


# ---------------------------------------------------------------- transformer: residual sublayer

def test_residual_sublayer_check():
    check = tr.check_residual_sublayer
    passes(check, lambda x, f, norm, first: x + f(norm(x)) if first else norm(x + f(x)))
    fails_with(check, lambda x, f, norm, first: norm(x + f(x)) if first else x + f(norm(x)), "swapped")
    fails_with(check, lambda x, f, norm, first: f(norm(x)) if first else norm(f(x)), "residual connection")
    fails_with(check, lambda x, f, norm, first: norm(x) + f(norm(x)) if first else norm(x + f(x)), "raw x")


# ---------------------------------------------------------------- transformer: warm-up schedule

def test_noam_schedule_check():
    check = tr.check_noam_schedule
    passes(check, lambda s, d, w: d ** -0.5 * min(s ** -0.5, s * w ** -1.5))
    passes(check, lambda s, d, w: torch.tensor(d ** -0.5 * min(s ** -0.5, s * w ** -1.5), dtype=torch.float64))
    fails_with(check, lambda s, d, w: min(s ** -0.5, s * w ** -1.5), "d_model^-0.5 is missing")
    fails_with(check, lambda s, d, w: d ** -0.5 * min(s ** -0.5, s * w ** -1.0), "warmup^-1 instead")
    fails_with(check, lambda s, d, w: d ** -0.5 * max(s ** -0.5, s * w ** -1.5), "max instead of min")


# ---------------------------------------------------------------- transformer: calling the library is refused

def test_positional_encoding_refuses_the_library_table():
    check = tr.check_positional_encoding
    refuses_delegation(check, lambda T, d: transformer.sinusoidal_positions(T, d),
                       "coursekit.transformer.sinusoidal_positions", correct=True)
    refuses_delegation(check, lambda T, d: transformer.SinusoidalPositions(d, T),
                       "coursekit.transformer.SinusoidalPositions")
    passes(check, _pe)


def test_noam_schedule_refuses_the_recipes_schedule():
    from coursekit.translation import recipes

    check = tr.check_noam_schedule
    refuses_delegation(check, lambda s, d, w: d ** -0.5 * w ** -0.5 * recipes.inverse_sqrt(w)(s - 1),
                       "coursekit.translation.recipes.inverse_sqrt", correct=True)
    passes(check, lambda s, d, w: d ** -0.5 * min(s ** -0.5, s * w ** -1.5))


def test_residual_sublayer_re_creates_no_library_function():
    # composing the given f and norm with a residual: no library function takes them
    assert tr.check_residual_sublayer.reimplements == ()

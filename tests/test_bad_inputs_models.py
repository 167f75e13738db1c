"""Bad calls to the attention, Transformer, decoding, seq2seq and RNN modules: each must give a clear error.

One row per thing that can go wrong (see ``tests/bad_input_helpers.py``): the error type, a regex its
message must match (the argument's name, what was expected, what arrived), raised by coursekit itself.
A ``returns=`` row checks a documented convention instead (a fully masked attention row gives zeros).
"""

from __future__ import annotations

import pytest
import torch
from bad_input_helpers import Bad, check_bad_call, ids, register
from torch import nn

from coursekit.attention import core, masks, scores
from coursekit.decoding import sampling, search
from coursekit.rnn import bptt, char_lm, elmo, seq2seq
from coursekit.rnn import cells as rnn_cells
from coursekit.rnn import layers as rnn
from coursekit.transformer import layers as transformer_layers
from coursekit.transformer import model as transformer
from coursekit.translation import TranslationBatch

EXEMPT = {
    "coursekit.decoding.search.SearchResult": "a plain result container filled by the search functions",
}

f32, f64, i64 = torch.float32, torch.float64, torch.long
NEG_INF = float("-inf")


def randn(*shape, dtype=f32):
    return torch.randn(*shape, dtype=dtype)


def ones_bool(*shape):
    return torch.ones(*shape, dtype=torch.bool)


# ==============================================================================================
# coursekit.attention.core and coursekit.attention.masks
# ==============================================================================================

def qkv(B=2, H=3, T_q=4, T_k=5, d=4):
    return randn(B, H, T_q, d), randn(B, H, T_k, d), randn(B, H, T_k, d)


def sdpa(mask=None, q_shape=(2, 3, 4, 4), k_shape=(2, 3, 5, 4), v_shape=None, **kw):
    q, k = randn(*q_shape), randn(*k_shape)
    v = randn(*(v_shape or k_shape))
    return core.scaled_dot_product_attention(q, k, v, mask, **kw)


def masked_row_sdpa(need_weights):
    mask = ones_bool(4, 5)
    mask[1] = False                                        # query 1 may attend to nothing
    out, w = sdpa(mask, need_weights=need_weights)
    return out[:, :, 1], (w[:, :, 1] if need_weights else None)


def filled_cache(B=2):
    cache = core.KVCache()
    cache.append(randn(B, 2, 3, 4), randn(B, 2, 3, 4))
    return cache


def mha(**kw):
    return core.MultiHeadAttention(8, 2, **kw)


def mha_masked_row_weights():
    mask = ones_bool(2, 1, 3, 3)
    mask[0, 0, 1] = False                                  # batch 0, query 1 may attend to nothing
    _, w = mha()(randn(2, 3, 8), mask=mask, need_weights=True)
    return w[0, :, 1]


CORE = [
    Bad("zero length", masks.causal_mask, lambda: masks.causal_mask(0), ValueError, r"T_q must be positive, got 0"),
    Bad("float length", masks.causal_mask, lambda: masks.causal_mask(2.5), TypeError, r"T_q must be an int, got float"),
    Bad("negative T_k", masks.causal_mask, lambda: masks.causal_mask(3, -1), ValueError, r"T_k must be positive"),
    Bad("more queries than keys", masks.causal_mask, lambda: masks.causal_mask(5, 3), ValueError,
        r"T_q <= T_k.*T_q=5.*T_k=3"),

    Bad("list of lengths", masks.padding_mask, lambda: masks.padding_mask([3, 1]), TypeError,
        r"lengths_or_keep must be a torch.Tensor, got list"),
    Bad("float lengths", masks.padding_mask, lambda: masks.padding_mask(torch.tensor([3.0, 1.0])), TypeError,
        r"lengths.*integer.*torch.float32"),
    Bad("float keep-mask", masks.padding_mask, lambda: masks.padding_mask(torch.ones(2, 3)), TypeError,
        r"keep-mask must be bool.*torch.float32"),
    Bad("negative length", masks.padding_mask, lambda: masks.padding_mask(torch.tensor([2, -1])), ValueError,
        r"lengths must be >= 0, got min -1"),
    Bad("length above T", masks.padding_mask, lambda: masks.padding_mask(torch.tensor([3, 1]), T=2), ValueError,
        r"length \(3\) exceeds T=2"),
    Bad("3-D input", masks.padding_mask, lambda: masks.padding_mask(ones_bool(2, 3, 4)), ValueError,
        r"lengths_or_keep must have 1 or 2 dimensions, got shape \(2, 3, 4\)"),
    Bad("empty batch of lengths", masks.padding_mask, lambda: masks.padding_mask(torch.tensor([], dtype=i64)),
        ValueError, r"lengths_or_keep must not be empty"),
    Bad("empty keep-mask", masks.padding_mask, lambda: masks.padding_mask(ones_bool(2, 0)), ValueError,
        r"lengths_or_keep must not be empty.*\(2, 0\)"),
    Bad("all lengths 0 and no T", masks.padding_mask, lambda: masks.padding_mask(torch.tensor([0, 0])), ValueError,
        r"every length is 0.*pass T"),
    Bad("float T", masks.padding_mask, lambda: masks.padding_mask(torch.tensor([1, 2]), T=3.0), TypeError,
        r"T must be an int, got float"),
    Bad("keep-mask length differs from T", masks.padding_mask, lambda: masks.padding_mask(ones_bool(2, 3), T=4),
        ValueError, r"keep-mask has length 3 but T=4"),

    Bad("zero length", masks.window_mask, lambda: masks.window_mask(0, 1), ValueError, r"T must be positive, got 0"),
    Bad("negative window", masks.window_mask, lambda: masks.window_mask(4, -1), ValueError,
        r"window must be an int ≥ 0, got -1"),
    Bad("float window", masks.window_mask, lambda: masks.window_mask(4, 1.5), (ValueError, TypeError),
        r"window must be an int ≥ 0, got 1.5"),

    Bad("additive float mask", masks.combine_masks, lambda: masks.combine_masks(torch.zeros(3, 3)), TypeError,
        r"masks must be bool tensors.*torch.float32"),
    Bad("list mask", masks.combine_masks, lambda: masks.combine_masks([[True]]), TypeError,
        r"masks must be bool tensors.*list"),
    Bad("shapes that do not broadcast", masks.combine_masks,
        lambda: masks.combine_masks(ones_bool(2, 1, 1, 5), ones_bool(4, 4)), ValueError,
        r"masks of shapes \(2, 1, 1, 5\) and \(4, 4\) do not broadcast"),

    Bad("list q", core.scaled_dot_product_attention,
        lambda: core.scaled_dot_product_attention([[1.0]], randn(1, 1), randn(1, 1)), TypeError,
        r"q must be a torch.Tensor, got list"),
    Bad("integer q", core.scaled_dot_product_attention,
        lambda: core.scaled_dot_product_attention(torch.ones(2, 3, 4, dtype=i64), randn(2, 3, 4), randn(2, 3, 4)),
        TypeError, r"q must be a floating-point tensor, got torch.int64"),
    Bad("1-D q", core.scaled_dot_product_attention,
        lambda: core.scaled_dot_product_attention(randn(4), randn(3, 4), randn(3, 4)), ValueError,
        r"q must have shape \(\.\.\., T, d\), got \(4,\)"),
    Bad("mixed dtypes", core.scaled_dot_product_attention,
        lambda: core.scaled_dot_product_attention(randn(2, 3, 4), randn(2, 5, 4, dtype=f64), randn(2, 5, 4)),
        TypeError, r"q, k, v must share a dtype.*float32.*float64"),
    Bad("k and v of different lengths", core.check_qkv,
        lambda: core.check_qkv(randn(2, 3, 4), randn(2, 5, 4), randn(2, 4, 4)), ValueError,
        r"k and v must have the same length T_k, got k \(2, 5, 4\) and v \(2, 4, 4\)"),
    Bad("q and k widths differ", core.scaled_dot_product_attention, lambda: sdpa(k_shape=(2, 3, 5, 3)),
        ValueError, r"same last dim d_k.*\(2, 3, 4, 4\).*\(2, 3, 5, 3\)"),
    Bad("k and v lengths differ", core.scaled_dot_product_attention, lambda: sdpa(v_shape=(2, 3, 6, 4)),
        ValueError, r"same length T_k.*\(2, 3, 5, 4\).*\(2, 3, 6, 4\)"),
    Bad("batch dims do not broadcast", core.scaled_dot_product_attention, lambda: sdpa(k_shape=(3, 3, 5, 4)),
        ValueError, r"leading \(batch/head\) dims.*do not broadcast"),
    Bad("additive float mask (0 / -10000)", core.scaled_dot_product_attention,
        lambda: sdpa(torch.zeros(4, 5).masked_fill(torch.rand(4, 5) > 0.5, -10000.0)), TypeError,
        r"mask must be a bool tensor.*torch.float32"),
    Bad("list mask", core.scaled_dot_product_attention, lambda: sdpa([[True] * 5] * 4), TypeError,
        r"mask must be a bool tensor, got list"),
    Bad("3-D per-batch mask with 4-D q (would land on the head axis)", core.scaled_dot_product_attention,
        lambda: sdpa(ones_bool(3, 4, 5), q_shape=(3, 3, 4, 4), k_shape=(3, 3, 5, 4)), ValueError,
        r"mask of shape \(3, 4, 5\).*2 dims \(T_q, T_k\) or 4"),
    Bad("(B, T_k) padding mask with B == T_q (read as (T_q, T_k))", core.scaled_dot_product_attention,
        lambda: sdpa(ones_bool(4, 5), q_shape=(4, 3, 4, 4), k_shape=(4, 3, 5, 4)), ValueError,
        r"2-D mask of shape \(4, 5\) is ambiguous.*padding_mask"),
    Bad("mask for another key length", core.scaled_dot_product_attention, lambda: sdpa(ones_bool(4, 6)), ValueError,
        r"mask of shape \(4, 6\) is not broadcastable to .*\(2, 3, 4, 5\)"),
    Bad("1-D mask", core.scaled_dot_product_attention, lambda: sdpa(ones_bool(5)), ValueError,
        r"mask of shape \(5,\)"),
    Bad("dropout_p = 1", core.scaled_dot_product_attention, lambda: sdpa(dropout_p=1.0), ValueError,
        r"dropout_p must lie in \[0, 1\), got 1.0"),
    Bad("dropout_p as a string", core.scaled_dot_product_attention, lambda: sdpa(dropout_p="0.1"), TypeError,
        r"dropout_p must be a number, got str"),
    Bad("causal with more queries than keys", core.scaled_dot_product_attention,
        lambda: sdpa(q_shape=(2, 3, 6, 4), causal=True), ValueError, r"T_q <= T_k.*T_q=6.*T_k=5"),
    Bad("zero-length keys", core.scaled_dot_product_attention, lambda: sdpa(k_shape=(2, 3, 0, 4)), ValueError,
        r"k must hold at least one position.*\(2, 3, 0, 4\)"),
    Bad("zero-length queries", core.scaled_dot_product_attention, lambda: sdpa(q_shape=(2, 3, 0, 4)), ValueError,
        r"q must hold at least one position.*\(2, 3, 0, 4\)"),
    Bad("fully masked row gives zeros (weights)", core.scaled_dot_product_attention,
        lambda: masked_row_sdpa(True), returns=lambda r: bool((r[0] == 0).all() and (r[1] == 0).all())),
    Bad("fully masked row gives zeros (fused)", core.scaled_dot_product_attention,
        lambda: masked_row_sdpa(False), returns=lambda r: bool((r[0] == 0).all())),

    Bad("q and k lengths differ", core.sliding_window_attention,
        lambda: core.sliding_window_attention(*qkv(T_q=4, T_k=6), 2), ValueError,
        r"same \(\.\.\., T\).*\(2, 3, 4, 4\), \(2, 3, 6, 4\)"),
    Bad("negative window", core.sliding_window_attention,
        lambda: core.sliding_window_attention(*qkv(T_q=4, T_k=4), -2), ValueError, r"window must be an int ≥ 0"),
    Bad("float window", core.sliding_window_attention,
        lambda: core.sliding_window_attention(*qkv(T_q=4, T_k=4), 2.0), (ValueError, TypeError),
        r"window must be an int ≥ 0, got 2.0"),
    Bad("list q", core.sliding_window_attention,
        lambda: core.sliding_window_attention([[0.0]], randn(1, 1), randn(1, 1), 1), TypeError,
        r"q must be a torch.Tensor, got list"),
    Bad("mixed dtypes", core.sliding_window_attention,
        lambda: core.sliding_window_attention(randn(1, 4, 2), randn(1, 4, 2, dtype=f64), randn(1, 4, 2), 1),
        TypeError, r"q, k, v must share a dtype.*float32.*float64"),
    Bad("zero-length sequence", core.sliding_window_attention,
        lambda: core.sliding_window_attention(*qkv(T_q=0, T_k=0), 1), ValueError,
        r"at least one position.*\(2, 3, 0, 4\)"),

    Bad("list", core.split_heads, lambda: core.split_heads([[[0.0]]], 1), TypeError,
        r"x must be a torch.Tensor, got list"),
    Bad("2-D x", core.split_heads, lambda: core.split_heads(randn(3, 8), 2), ValueError,
        r"x must have 3 dimensions, got shape \(3, 8\)"),
    Bad("heads do not divide the width", core.split_heads, lambda: core.split_heads(randn(2, 3, 8), 3), ValueError,
        r"model dim 8 is not divisible by n_heads=3"),
    Bad("zero heads", core.split_heads, lambda: core.split_heads(randn(2, 3, 8), 0), ValueError,
        r"n_heads must be positive, got 0"),
    Bad("float heads", core.split_heads, lambda: core.split_heads(randn(2, 3, 8), 2.0), TypeError,
        r"n_heads must be an int, got float"),

    Bad("3-D x", core.merge_heads, lambda: core.merge_heads(randn(2, 3, 8)), ValueError,
        r"x must have 4 dimensions, got shape \(2, 3, 8\)"),
    Bad("list", core.merge_heads, lambda: core.merge_heads([0.0]), TypeError, r"x must be a torch.Tensor, got list"),

    Bad("static not a bool", core.KVCache, lambda: core.KVCache(static="yes"), TypeError,
        r"static must be a bool, got str"),
    Bad("list k", core.KVCache.append, lambda: core.KVCache().append([0.0], randn(1, 1)), TypeError,
        r"k must be a torch.Tensor, got list"),
    Bad("integer k", core.KVCache.append, lambda: core.KVCache().append(torch.ones(1, 2, 4, dtype=i64),
                                                                     randn(1, 2, 4)), TypeError,
        r"k must be a floating-point tensor, got torch.int64"),
    Bad("k and v lengths differ", core.KVCache.append, lambda: core.KVCache().append(randn(2, 1, 2, 4),
                                                                                  randn(2, 1, 3, 4)), ValueError,
        r"same \(\.\.\., T\).*\(2, 1, 2, 4\).*\(2, 1, 3, 4\)"),
    Bad("another batch size", core.KVCache.append, lambda: filled_cache().append(randn(3, 2, 1, 4), randn(3, 2, 1, 4)),
        ValueError, r"cannot append k \(3, 2, 1, 4\).*holding k \(2, 2, 3, 4\)"),
    Bad("another dtype", core.KVCache.append,
        lambda: filled_cache().append(randn(2, 2, 1, 4, dtype=f64), randn(2, 2, 1, 4, dtype=f64)), TypeError,
        r"cannot append torch.float64.*torch.float32"),
    Bad("float index", core.KVCache.reorder, lambda: filled_cache().reorder(torch.tensor([0.0, 1.0])), TypeError,
        r"index must be a 1-D integer tensor.*torch.float32"),
    Bad("2-D index", core.KVCache.reorder, lambda: filled_cache().reorder(torch.tensor([[0, 1]])), TypeError,
        r"index must be a 1-D integer tensor.*\(1, 2\)"),
    Bad("index past the batch", core.KVCache.reorder, lambda: filled_cache().reorder(torch.tensor([0, 2])),
        ValueError, r"index values must lie in \[0, 2\).*max 2"),
    Bad("negative index", core.KVCache.reorder, lambda: filled_cache().reorder(torch.tensor([-1, 0])), ValueError,
        r"index values must lie in \[0, 2\).*min -1"),
    Bad("list index", core.KVCache.reorder, lambda: filled_cache().reorder([0, 1]), TypeError,
        r"index must be a 1-D integer tensor.*got list"),
    Bad("bool index", core.KVCache.reorder, lambda: filled_cache().reorder(torch.tensor([True, False])), TypeError,
        r"index must be a 1-D integer tensor.*torch.bool"),
    Bad("float index on an empty cache", core.KVCache.reorder, lambda: core.KVCache().reorder(torch.tensor([0.5])),
        TypeError, r"index must be a 1-D integer tensor.*torch.float32"),

    Bad("zero width", core.MultiHeadAttention, lambda: core.MultiHeadAttention(0, 1), ValueError,
        r"d_model must be positive, got 0"),
    Bad("heads do not divide the width", core.MultiHeadAttention, lambda: core.MultiHeadAttention(8, 3), ValueError,
        r"d_model=8 must be divisible by n_heads=3"),
    Bad("float heads", core.MultiHeadAttention, lambda: core.MultiHeadAttention(8, 2.0), TypeError,
        r"n_heads must be an int, got float"),
    Bad("dropout > 1", core.MultiHeadAttention, lambda: mha(dropout=1.5), ValueError,
        r"dropout must lie in \[0, 1\), got 1.5"),
    Bad("negative dropout", core.MultiHeadAttention, lambda: mha(dropout=-0.1), ValueError,
        r"dropout must lie in \[0, 1\), got -0.1"),
    Bad("dropout as a string", core.MultiHeadAttention, lambda: mha(dropout="0.1"), TypeError,
        r"dropout must be a number, got str"),
    Bad("zero kdim", core.MultiHeadAttention, lambda: mha(kdim=0), ValueError, r"kdim must be positive, got 0"),
    Bad("list query", core.MultiHeadAttention.forward, lambda: mha()([[[0.0] * 8]]), TypeError,
        r"query must be a torch.Tensor, got list"),
    Bad("integer query", core.MultiHeadAttention.forward, lambda: mha()(torch.ones(2, 3, 8, dtype=i64)), TypeError,
        r"query must be a floating-point tensor, got torch.int64"),
    Bad("2-D query", core.MultiHeadAttention.forward, lambda: mha()(randn(3, 8)), ValueError,
        r"query must have 3 dimensions, got shape \(3, 8\)"),
    Bad("wrong width", core.MultiHeadAttention.forward, lambda: mha()(randn(2, 3, 6)), ValueError,
        r"query must have last dim d_model=8, got \(2, 3, 6\)"),
    Bad("float64 query into a float32 layer", core.MultiHeadAttention.forward,
        lambda: mha()(randn(2, 3, 8, dtype=f64)), TypeError, r"query has dtype torch.float64.*torch.float32"),
    Bad("key from another batch", core.MultiHeadAttention.forward, lambda: mha()(randn(2, 3, 8), randn(3, 3, 8)),
        ValueError, r"share the batch size.*\(2, 3, 8\).*\(3, 3, 8\)"),
    Bad("key and value lengths differ", core.MultiHeadAttention.forward,
        lambda: mha()(randn(2, 3, 8), randn(2, 4, 8), randn(2, 5, 8)), ValueError,
        r"key and value must have the same length T_k, got key \(2, 4, 8\) and value \(2, 5, 8\)"),
    Bad("additive float mask", core.MultiHeadAttention.forward,
        lambda: mha()(randn(2, 3, 8), mask=torch.zeros(2, 1, 1, 3)), TypeError,
        r"mask must be a bool tensor.*torch.float32"),
    Bad("(B, T) keep-mask with B == T (read as (T_q, T_k))", core.MultiHeadAttention.forward,
        lambda: mha()(randn(3, 3, 8), mask=ones_bool(3, 3)), ValueError,
        r"2-D mask of shape \(3, 3\) is ambiguous.*padding_mask"),
    Bad("(B, T) keep-mask with B != T", core.MultiHeadAttention.forward,
        lambda: mha()(randn(2, 3, 8), mask=ones_bool(2, 3)), ValueError,
        r"mask of shape \(2, 3\) is not broadcastable to .*\(2, 2, 3, 3\)"),
    Bad("3-D mask for another batch", core.MultiHeadAttention.forward,
        lambda: mha()(randn(2, 3, 8), mask=ones_bool(3, 3, 3)), ValueError, r"mask of shape \(3, 1, 3, 3\)"),
    Bad("1-D mask", core.MultiHeadAttention.forward, lambda: mha()(randn(2, 3, 8), mask=ones_bool(3)), ValueError,
        r"mask of shape \(3,\)"),
    Bad("mask for another key length", core.MultiHeadAttention.forward,
        lambda: mha()(randn(2, 3, 8), mask=ones_bool(2, 1, 1, 4)), ValueError,
        r"mask of shape \(2, 1, 1, 4\) is not broadcastable"),
    Bad("cache not a KVCache", core.MultiHeadAttention.forward, lambda: mha()(randn(2, 3, 8), cache={}), TypeError,
        r"cache must be a KVCache, got dict"),
    Bad("fully masked row gives zero weights", core.MultiHeadAttention.forward, mha_masked_row_weights,
        returns=lambda w: bool((w == 0).all())),
    Bad("not an nn.MultiheadAttention", core.MultiHeadAttention.from_torch,
        lambda: core.MultiHeadAttention.from_torch(nn.Linear(2, 2)), TypeError,
        r"expected nn.MultiheadAttention, got Linear"),
    Bad("add_bias_kv", core.MultiHeadAttention.from_torch,
        lambda: core.MultiHeadAttention.from_torch(nn.MultiheadAttention(8, 2, add_bias_kv=True)), ValueError,
        r"add_bias_kv / add_zero_attn are not supported"),
]


# ==============================================================================================
# coursekit.attention.scores
# ==============================================================================================

def masked_softmax_empty_row():
    mask = ones_bool(2, 3, 4)
    mask[1, 2] = False
    return scores.masked_softmax(randn(2, 3, 4), mask)[1, 2]


def recurrent(score="dot", d=6, **kw):
    return scores.RecurrentAttention(score, d, d, **kw)


SCORES = [
    Bad("list query", scores.DotScore.forward, lambda: scores.DotScore()([[0.0]], randn(1, 2, 1)), TypeError,
        r"query must be a torch.Tensor, got list"),
    Bad("integer keys", scores.DotScore.forward,
        lambda: scores.DotScore()(randn(2, 3, 4), torch.ones(2, 5, 4, dtype=i64)), TypeError,
        r"keys must be a floating-point tensor, got torch.int64"),
    Bad("widths differ", scores.DotScore.forward, lambda: scores.DotScore()(randn(2, 3, 4), randn(2, 5, 6)),
        ValueError, r"same width.*\(2, 3, 4\).*\(2, 5, 6\)"),
    Bad("1-D query", scores.DotScore.forward, lambda: scores.DotScore()(randn(4), randn(2, 5, 4)), ValueError,
        r"shape \(\.\.\., T, d\).*\(4,\)"),
    Bad("batches differ", scores.DotScore.forward, lambda: scores.DotScore()(randn(2, 3, 4), randn(3, 5, 4)),
        ValueError, r"batch dims.*\(2, 3, 4\).*\(3, 5, 4\).*do not broadcast"),
    Bad("widths differ", scores.ScaledDotScore.forward,
        lambda: scores.ScaledDotScore()(randn(2, 3, 4), randn(2, 5, 6)), ValueError, r"same width"),
    Bad("mixed dtypes", scores.ScaledDotScore.forward,
        lambda: scores.ScaledDotScore()(randn(2, 3, 4), randn(2, 5, 4, dtype=f64)), TypeError,
        r"query and keys must share a dtype.*float32.*float64"),

    Bad("zero query width", scores.GeneralScore, lambda: scores.GeneralScore(0, 4), ValueError,
        r"d_query must be positive, got 0"),
    Bad("float key width", scores.GeneralScore, lambda: scores.GeneralScore(4, 4.0), TypeError,
        r"d_key must be an int, got float"),
    Bad("wrong key width", scores.GeneralScore.forward, lambda: scores.GeneralScore(4, 6)(randn(2, 3, 4),
                                                                                       randn(2, 5, 4)), ValueError,
        r"query width 4 and key width 6, got 4 and 4"),
    Bad("float64 inputs into a float32 layer", scores.GeneralScore.forward,
        lambda: scores.GeneralScore(4, 4)(randn(2, 3, 4, dtype=f64), randn(2, 5, 4, dtype=f64)), TypeError,
        r"query has dtype torch.float64.*torch.float32"),

    Bad("zero attention width", scores.AdditiveScore, lambda: scores.AdditiveScore(4, 4, 0), ValueError,
        r"d_attn must be positive, got 0"),
    Bad("negative attention width", scores.AdditiveScore, lambda: scores.AdditiveScore(4, 4, -3), ValueError,
        r"d_attn must be positive, got -3"),
    Bad("wrong query width", scores.AdditiveScore.forward,
        lambda: scores.AdditiveScore(4, 6)(randn(2, 3, 5), randn(2, 5, 6)), ValueError,
        r"query width 4 and key width 6, got 5 and 6"),

    Bad("negative eps", scores.CosineScore, lambda: scores.CosineScore(eps=-1e-8), ValueError,
        r"eps must be positive and finite, got -1e-08"),
    Bad("scale as a string", scores.CosineScore, lambda: scores.CosineScore(scale="big"), TypeError,
        r"scale must be a number, got str"),
    Bad("NaN scale", scores.CosineScore, lambda: scores.CosineScore(scale=float("nan")), ValueError,
        r"scale must be positive and finite, got nan"),
    Bad("widths differ", scores.CosineScore.forward, lambda: scores.CosineScore()(randn(2, 3, 4), randn(2, 5, 6)),
        ValueError, r"same width"),

    Bad("zero max_len", scores.LocationScore, lambda: scores.LocationScore(4, 0), ValueError,
        r"max_len must be positive, got 0"),
    Bad("source longer than max_len", scores.LocationScore.forward,
        lambda: scores.LocationScore(4, 3)(randn(2, 1, 4), randn(2, 5, 4)), ValueError,
        r"at most 3 source positions, got T_k = 5"),
    Bad("wrong query width", scores.LocationScore.forward,
        lambda: scores.LocationScore(4, 8)(randn(2, 1, 6), randn(2, 5, 6)), ValueError,
        r"query width 4, got 6"),

    Bad("unknown name", scores.make_score, lambda: scores.make_score("bilinear", 4, 4), ValueError,
        r"unknown score function 'bilinear'; expected one of dot"),
    Bad("name None", scores.make_score, lambda: scores.make_score(None, 4, 4), ValueError,
        r"unknown score function None"),
    Bad("dot with different widths", scores.make_score, lambda: scores.make_score("dot", 4, 6), ValueError,
        r"'dot' score needs d_query == d_key, got 4 and 6"),
    Bad("location without max_len", scores.make_score, lambda: scores.make_score("location", 4, 4), ValueError,
        r"'location' score needs max_len"),
    Bad("zero width", scores.make_score, lambda: scores.make_score("dot", 0, 0), ValueError,
        r"d_query must be positive, got 0"),

    Bad("list scores", scores.masked_softmax, lambda: scores.masked_softmax([1.0, 2.0]), TypeError,
        r"scores must be a torch.Tensor, got list"),
    Bad("a +inf score (its softmax is NaN)", scores.masked_softmax,
        lambda: scores.masked_softmax(torch.tensor([[1.0, float("inf"), 0.0]]), torch.tensor([[True, True, False]])),
        ValueError, r"scores contain NaN or \+inf.*-inf is allowed"),
    Bad("a NaN score", scores.masked_softmax, lambda: scores.masked_softmax(torch.tensor([[1.0, float("nan")]])),
        ValueError, r"scores contain NaN or \+inf"),
    Bad("-inf scores are weight 0 (a convention)", scores.masked_softmax,
        lambda: scores.masked_softmax(torch.tensor([[0.0, float("-inf")]])),
        returns=lambda w: torch.equal(w, torch.tensor([[1.0, 0.0]]))),
    Bad("integer scores", scores.masked_softmax, lambda: scores.masked_softmax(torch.ones(2, 3, dtype=i64)),
        TypeError, r"scores must be a floating-point tensor, got torch.int64"),
    Bad("additive float mask", scores.masked_softmax, lambda: scores.masked_softmax(randn(2, 3), torch.zeros(2, 3)),
        TypeError, r"mask must be a bool tensor.*torch.float32"),
    Bad("mask does not broadcast", scores.masked_softmax, lambda: scores.masked_softmax(randn(2, 3), ones_bool(2, 4)),
        ValueError, r"mask of shape \(2, 4\).*scores \(2, 3\)"),
    Bad("mask larger than the scores (silent broadcast)", scores.masked_softmax,
        lambda: scores.masked_softmax(randn(3, 4), ones_bool(2, 3, 4)), ValueError,
        r"mask of shape \(2, 3, 4\).*scores \(3, 4\)"),
    Bad("fully masked row gives zeros", scores.masked_softmax, masked_softmax_empty_row,
        returns=lambda w: bool((w == 0).all())),

    Bad("unknown score name", scores.RecurrentAttention, lambda: recurrent("bilinear"), ValueError,
        r"unknown score function 'bilinear'"),
    Bad("score not a module", scores.RecurrentAttention, lambda: scores.RecurrentAttention(3), TypeError,
        r"score must be a score module or a name, got int"),
    Bad("name without widths", scores.RecurrentAttention, lambda: scores.RecurrentAttention("general"), ValueError,
        r"needs d_query and d_key"),
    Bad("list query", scores.RecurrentAttention.forward, lambda: recurrent()([[0.0] * 6], randn(1, 4, 6)), TypeError,
        r"query must be a torch.Tensor, got list"),
    Bad("4-D query", scores.RecurrentAttention.forward, lambda: recurrent()(randn(2, 1, 3, 6), randn(2, 4, 6)),
        ValueError, r"query must have 2 or 3 dimensions, got shape \(2, 1, 3, 6\)"),
    Bad("2-D keys", scores.RecurrentAttention.forward, lambda: recurrent()(randn(2, 6), randn(4, 6)), ValueError,
        r"keys must have 3 dimensions, got shape \(4, 6\)"),
    Bad("values of another length", scores.RecurrentAttention.forward,
        lambda: recurrent()(randn(2, 6), randn(2, 4, 6), randn(2, 5, 6)), ValueError,
        r"values must have shape \(B, T_k, d_v\) with \(B, T_k\) = \(2, 4\), got \(2, 5, 6\)"),
    Bad("one query for a batch of keys (silent broadcast)", scores.RecurrentAttention.forward,
        lambda: recurrent()(randn(1, 6), randn(3, 4, 6)), ValueError,
        r"query and keys must have the same batch size, got \(1, 6\) and \(3, 4, 6\)"),
    Bad("(B, T_k) mask of the wrong shape", scores.RecurrentAttention.forward,
        lambda: recurrent()(randn(2, 6), randn(2, 4, 6), mask=ones_bool(2, 5)), ValueError,
        r"\(B, T_k\) mask must have shape \(2, 4\), got \(2, 5\)"),
    Bad("float mask", scores.RecurrentAttention.forward,
        lambda: recurrent()(randn(2, 6), randn(2, 4, 6), mask=torch.ones(2, 4)), TypeError,
        r"mask must be a bool tensor.*torch.float32"),
    Bad("list mask", scores.RecurrentAttention.forward,
        lambda: recurrent()(randn(2, 6), randn(2, 4, 6), mask=[[True] * 4] * 2), TypeError,
        r"mask must be a torch.Tensor, got list"),
    Bad("zero-length keys", scores.RecurrentAttention.forward, lambda: recurrent()(randn(2, 6), randn(2, 0, 6)),
        ValueError, r"keys must hold at least one position.*\(2, 0, 6\)"),

    Bad("zero vocabulary", scores.LuongOutput, lambda: scores.LuongOutput(4, 4, 0), ValueError,
        r"vocab_size must be positive, got 0"),
    Bad("zero output width", scores.LuongOutput, lambda: scores.LuongOutput(4, 4, 10, d_out=0), ValueError,
        r"d_out must be positive, got 0"),
    Bad("wrong context width", scores.LuongOutput.forward, lambda: scores.LuongOutput(4, 6, 10)(randn(2, 5),
                                                                                             randn(2, 6)),
        ValueError, r"context must have last dim d_context=4, got \(2, 5\)"),
    Bad("wrong hidden width", scores.LuongOutput.forward, lambda: scores.LuongOutput(4, 6, 10)(randn(2, 4),
                                                                                            randn(2, 5)),
        ValueError, r"hidden must have last dim d_hidden=6, got \(2, 5\)"),
    Bad("list context", scores.LuongOutput.forward, lambda: scores.LuongOutput(4, 6, 10)([0.0] * 4, randn(6)),
        TypeError, r"context must be a torch.Tensor, got list"),
    Bad("batches differ", scores.LuongOutput.forward, lambda: scores.LuongOutput(4, 6, 10)(randn(2, 4), randn(3, 6)),
        ValueError, r"context \(2, 4\) and hidden \(3, 6\) must agree"),

    Bad("list centers", scores.local_window_mask, lambda: scores.local_window_mask([1, 2], 5, 1), TypeError,
        r"centers must be a torch.Tensor, got list"),
    Bad("3-D centers", scores.local_window_mask, lambda: scores.local_window_mask(torch.zeros(2, 2, 2), 5, 1),
        ValueError, r"centers must have 1 or 2 dimensions"),
    Bad("zero T_k", scores.local_window_mask, lambda: scores.local_window_mask(torch.tensor([1]), 0, 1), ValueError,
        r"T_k must be positive, got 0"),
    Bad("negative half width", scores.local_window_mask, lambda: scores.local_window_mask(torch.tensor([1]), 5, -1),
        ValueError, r"half_width must be a non-negative int, got -1"),
    Bad("bool centers", scores.local_window_mask, lambda: scores.local_window_mask(torch.tensor([True]), 5, 1),
        TypeError, r"centers must be a numeric tensor of positions, got torch.bool"),
    Bad("NaN centers", scores.local_window_mask, lambda: scores.local_window_mask(torch.tensor([float("nan")]), 5, 1),
        ValueError, r"centers must be finite, got 1 NaN"),
]


# ==============================================================================================
# coursekit.transformer.model and coursekit.transformer.layers
# ==============================================================================================

def cfg(**kw):
    base = dict(src_vocab_size=11, tgt_vocab_size=13, d_model=8, n_heads=2, n_encoder_layers=1,
                n_decoder_layers=1, d_ff=16, dropout=0.0, max_len=16)
    return transformer.TransformerConfig(**(base | kw))


def tf(**kw):
    torch.manual_seed(0)
    return transformer.Transformer(cfg(**kw)).eval()


def src_tgt(B=2, S=5, T=4):
    src = torch.randint(4, 11, (B, S))
    tgt = torch.randint(4, 13, (B, T))
    return src, tgt


def tbatch(tgt_out=None, B=2, S=5, T=4):
    src, tgt_in = src_tgt(B, S, T)
    tgt_out = torch.randint(4, 13, (B, T)) if tgt_out is None else tgt_out
    return TranslationBatch(src, ones_bool(B, S), torch.full((B,), S), tgt_in, tgt_out, ones_bool(B, T),
                            torch.arange(B))


def state(B=2):
    return tf().start(src_tgt(B)[0])


def stepped_state(B=2):
    model = tf()
    st = model.start(src_tgt(B)[0])
    model.step(torch.full((B,), 2), st)                     # the caches now hold B rows
    return st


def enc_layer(**kw):
    return transformer_layers.EncoderLayer(8, 2, 16, **kw)


def dec_layer(**kw):
    return transformer_layers.DecoderLayer(8, 2, 16, **kw)


TRANSFORMER = [
    Bad("zero length", transformer_layers.sinusoidal_positions,
        lambda: transformer_layers.sinusoidal_positions(0, 8), ValueError,
        r"T must be positive, got 0"),
    Bad("zero width", transformer_layers.sinusoidal_positions,
        lambda: transformer_layers.sinusoidal_positions(4, 0), ValueError,
        r"d must be positive, got 0"),
    Bad("float length", transformer_layers.sinusoidal_positions,
        lambda: transformer_layers.sinusoidal_positions(4.0, 8), TypeError,
        r"T must be an int, got float"),
    Bad("zero base", transformer_layers.sinusoidal_positions,
        lambda: transformer_layers.sinusoidal_positions(4, 8, base=0.0),
        ValueError, r"base must be positive and finite, got 0.0"),
    Bad("NaN base", transformer_layers.sinusoidal_positions,
        lambda: transformer_layers.sinusoidal_positions(4, 8, base=float("nan")), ValueError,
        r"base must be positive and finite, got nan"),

    Bad("zero max_len", transformer_layers.SinusoidalPositions,
        lambda: transformer_layers.SinusoidalPositions(0, 8), ValueError,
        r"max_len must be positive, got 0"),
    Bad("past max_len", transformer_layers.SinusoidalPositions.forward,
        lambda: transformer_layers.SinusoidalPositions(8, 4)(6, offset=4), ValueError,
        r"positions 4\.\.9 exceed the model's context of max_len=8"),
    Bad("negative offset", transformer_layers.SinusoidalPositions.forward,
        lambda: transformer_layers.SinusoidalPositions(8, 4)(3, offset=-2), ValueError,
        r"offset must be a non-negative int, got -2"),
    Bad("float T", transformer_layers.SinusoidalPositions.forward,
        lambda: transformer_layers.SinusoidalPositions(8, 4)(3.0),
        TypeError, r"T must be an int, got float"),
    Bad("zero T", transformer_layers.SinusoidalPositions.forward,
        lambda: transformer_layers.SinusoidalPositions(8, 4)(0),
        ValueError, r"T must be positive, got 0"),
    Bad("zero max_len", transformer_layers.LearnedPositions,
        lambda: transformer_layers.LearnedPositions(0, 8), ValueError,
        r"max_len must be positive, got 0"),
    Bad("negative offset", transformer_layers.LearnedPositions.forward,
        lambda: transformer_layers.LearnedPositions(8, 4)(3, offset=-1), ValueError,
        r"offset must be a non-negative int, got -1"),
    Bad("past max_len", transformer_layers.LearnedPositions.forward,
        lambda: transformer_layers.LearnedPositions(8, 4)(9),
        ValueError, r"positions 0\.\.8 exceed the model's context of max_len=8"),

    Bad("zero inner width", transformer_layers.FeedForward, lambda: transformer_layers.FeedForward(8, 0), ValueError,
        r"d_ff must be positive, got 0"),
    Bad("negative width", transformer_layers.FeedForward, lambda: transformer_layers.FeedForward(-8, 16), ValueError,
        r"d_model must be positive, got -8"),
    Bad("dropout > 1", transformer_layers.FeedForward,
        lambda: transformer_layers.FeedForward(8, 16, dropout=1.5), ValueError,
        r"dropout must lie in \[0, 1\), got 1.5"),
    Bad("unknown activation", transformer_layers.FeedForward,
        lambda: transformer_layers.FeedForward(8, 16, "swish"), ValueError,
        r"activation must be one of \['gelu', 'gelu_tanh', 'relu'\], got 'swish'"),
    Bad("list x", transformer_layers.FeedForward.forward,
        lambda: transformer_layers.FeedForward(8, 16)([[0.0] * 8]), TypeError,
        r"x must be a torch.Tensor, got list"),
    Bad("wrong width", transformer_layers.FeedForward.forward,
        lambda: transformer_layers.FeedForward(8, 16)(randn(2, 3, 6)),
        ValueError, r"x must have last dim d_model=8, got \(2, 3, 6\)"),
    Bad("float64 x into a float32 layer", transformer_layers.FeedForward.forward,
        lambda: transformer_layers.FeedForward(8, 16)(randn(2, 3, 8, dtype=f64)), TypeError,
        r"x has dtype torch.float64.*torch.float32"),

    Bad("heads do not divide the width", transformer_layers.EncoderLayer,
        lambda: transformer_layers.EncoderLayer(8, 3, 16),
        ValueError, r"d_model=8 must be divisible by n_heads=3"),
    Bad("negative eps", transformer_layers.EncoderLayer, lambda: enc_layer(layer_norm_eps=-1e-5), ValueError,
        r"layer_norm_eps must be positive and finite, got -1e-05"),
    Bad("dropout > 1", transformer_layers.EncoderLayer, lambda: enc_layer(dropout=1.5), ValueError,
        r"dropout must lie in \[0, 1\), got 1.5"),
    Bad("list x", transformer_layers.EncoderLayer.forward, lambda: enc_layer()([[[0.0] * 8]]), TypeError,
        r"x must be a torch.Tensor, got list"),
    Bad("2-D x", transformer_layers.EncoderLayer.forward, lambda: enc_layer()(randn(3, 8)), ValueError,
        r"x must have 3 dimensions, got shape \(3, 8\)"),
    Bad("additive float mask", transformer_layers.EncoderLayer.forward,
        lambda: enc_layer()(randn(2, 3, 8), torch.zeros(2, 1, 1, 3)), TypeError, r"mask must be a bool tensor"),
    Bad("(B, T) keep-mask with B == T", transformer_layers.EncoderLayer.forward,
        lambda: enc_layer()(randn(3, 3, 8), ones_bool(3, 3)), ValueError, r"ambiguous.*padding_mask"),
    Bad("not an nn.TransformerEncoderLayer", transformer_layers.EncoderLayer.from_torch,
        lambda: transformer_layers.EncoderLayer.from_torch(nn.Linear(2, 2)), TypeError,
        r"expected nn.TransformerEncoderLayer, got Linear"),

    Bad("zero inner width", transformer_layers.DecoderLayer,
        lambda: transformer_layers.DecoderLayer(8, 2, 0), ValueError,
        r"d_ff must be positive, got 0"),
    Bad("negative eps", transformer_layers.DecoderLayer, lambda: dec_layer(layer_norm_eps=-1.0), ValueError,
        r"layer_norm_eps must be positive and finite, got -1.0"),
    Bad("memory missing", transformer_layers.DecoderLayer.forward, lambda: dec_layer()(randn(2, 3, 8)), ValueError,
        r"pass the encoder output as memory"),
    Bad("memory without cross-attention", transformer_layers.DecoderLayer.forward,
        lambda: dec_layer(cross_attention=False)(randn(2, 3, 8), randn(2, 5, 8)), ValueError,
        r"no cross-attention.*memory must be None"),
    Bad("memory of another batch", transformer_layers.DecoderLayer.forward,
        lambda: dec_layer()(randn(2, 3, 8), randn(3, 5, 8)), ValueError, r"share the batch size"),
    Bad("memory of another width", transformer_layers.DecoderLayer.forward,
        lambda: dec_layer()(randn(2, 3, 8), randn(2, 5, 6)), ValueError, r"key/value must have last dims 8/8"),
    Bad("list x", transformer_layers.DecoderLayer.forward,
        lambda: dec_layer()([[[0.0] * 8]], randn(1, 5, 8)), TypeError,
        r"x must be a torch.Tensor, got list"),
    Bad("self_cache not a KVCache", transformer_layers.DecoderLayer.forward,
        lambda: dec_layer()(randn(2, 1, 8), randn(2, 5, 8), self_cache=[]), TypeError,
        r"cache must be a KVCache, got list"),
    Bad("float memory mask", transformer_layers.DecoderLayer.forward,
        lambda: dec_layer()(randn(2, 3, 8), randn(2, 5, 8), memory_mask=torch.ones(2, 1, 1, 5)), TypeError,
        r"mask must be a bool tensor"),
    Bad("not an nn.TransformerDecoderLayer", transformer_layers.DecoderLayer.from_torch,
        lambda: transformer_layers.DecoderLayer.from_torch(nn.TransformerEncoderLayer(8, 2)), TypeError,
        r"expected nn.TransformerDecoderLayer, got TransformerEncoderLayer"),

    Bad("zero layers", transformer_layers.Encoder, lambda: transformer_layers.Encoder(0, 8, 2, 16), ValueError,
        r"n_layers must be positive, got 0"),
    Bad("float mask", transformer_layers.Encoder.forward,
        lambda: transformer_layers.Encoder(1, 8, 2, 16)(randn(2, 3, 8), torch.ones(2, 1, 1, 3)), TypeError,
        r"mask must be a bool tensor"),
    Bad("not an nn.TransformerEncoder", transformer_layers.Encoder.from_torch,
        lambda: transformer_layers.Encoder.from_torch(nn.TransformerEncoderLayer(8, 2)), TypeError,
        r"expected nn.TransformerEncoder, got TransformerEncoderLayer"),
    Bad("zero layers", transformer_layers.Decoder, lambda: transformer_layers.Decoder(0, 8, 2, 16), ValueError,
        r"n_layers must be positive, got 0"),
    Bad("cache for another depth", transformer_layers.Decoder.forward,
        lambda: transformer_layers.Decoder(2, 8, 2, 16)(randn(2, 1, 8), randn(2, 5, 8),
                                                        cache=transformer_layers.DecoderCache(1)),
        ValueError, r"cache must be a DecoderCache for 2 layers"),
    Bad("not an nn.TransformerDecoder", transformer_layers.Decoder.from_torch,
        lambda: transformer_layers.Decoder.from_torch(nn.Linear(2, 2)), TypeError,
        r"expected nn.TransformerDecoder, got Linear"),

    Bad("zero layers", transformer_layers.DecoderCache, lambda: transformer_layers.DecoderCache(0), ValueError,
        r"n_layers must be positive, got 0"),
    Bad("float layers", transformer_layers.DecoderCache, lambda: transformer_layers.DecoderCache(2.0), TypeError,
        r"n_layers must be an int, got float"),
    Bad("float index", transformer_layers.DecoderCache.reorder,
        lambda: transformer_layers.DecoderCache(1).reorder(torch.tensor([0.0])), TypeError,
        r"index must be a 1-D integer tensor.*torch.float32"),
    Bad("index past the batch", transformer_layers.DecoderCache.reorder,
        lambda: stepped_state().cache.reorder(torch.tensor([0, 5])),
        ValueError, r"index values must lie in \[0, 2\)"),

    Bad("pad id >= vocabulary", transformer.TransformerConfig, lambda: cfg(tgt_pad_id=13), ValueError,
        r"tgt_pad_id must be an id in \[0, 13\), got 13"),
    Bad("source pad id >= vocabulary", transformer.TransformerConfig, lambda: cfg(src_pad_id=11), ValueError,
        r"src_pad_id must be an id in \[0, 11\), got 11"),
    Bad("bos id >= vocabulary", transformer.TransformerConfig, lambda: cfg(bos_id=20), ValueError,
        r"bos_id must be an id in \[0, 13\), got 20"),
    Bad("negative eos id", transformer.TransformerConfig, lambda: cfg(eos_id=-1), ValueError,
        r"eos_id must be an id in \[0, 13\), got -1"),
    Bad("float pad id", transformer.TransformerConfig, lambda: cfg(src_pad_id=0.0), ValueError,
        r"src_pad_id must be an id in \[0, 11\), got 0.0"),
    Bad("dropout > 1", transformer.TransformerConfig, lambda: cfg(dropout=1.5), ValueError,
        r"dropout must lie in \[0, 1\), got 1.5"),
    Bad("negative eps", transformer.TransformerConfig, lambda: cfg(layer_norm_eps=-1e-5), ValueError,
        r"layer_norm_eps must be positive and finite, got -1e-05"),
    Bad("unknown positions", transformer.TransformerConfig, lambda: cfg(positions="rotary"), ValueError,
        r"positions must be 'sinusoidal' or 'learned', got 'rotary'"),
    Bad("unknown activation", transformer.TransformerConfig, lambda: cfg(activation="tanh"), ValueError,
        r"activation must be one of .*got 'tanh'"),
    Bad("heads do not divide the width", transformer.TransformerConfig, lambda: cfg(n_heads=3), ValueError,
        r"d_model=8 must be divisible by n_heads=3"),
    Bad("shared embeddings, two vocabularies", transformer.TransformerConfig, lambda: cfg(share_embeddings=True),
        ValueError, r"share_embeddings needs one vocabulary.*11/13"),
    Bad("zero vocabulary", transformer.TransformerConfig, lambda: cfg(src_vocab_size=0), ValueError,
        r"src_vocab_size must be positive, got 0"),
    Bad("float width", transformer.TransformerConfig, lambda: cfg(d_model=8.0), TypeError,
        r"d_model must be an int, got float"),

    Bad("a dict for a config", transformer.Transformer, lambda: transformer.Transformer({"d_model": 8}), TypeError,
        r"config must be a TransformerConfig, got dict"),
    Bad("float src", transformer.Transformer.forward, lambda: tf()(src_tgt()[0].float(), src_tgt()[1]), TypeError,
        r"src ids must be an integer \(int64 or int32\) tensor of token ids, got torch.float32"),
    Bad("uint8 src", transformer.Transformer.forward, lambda: tf()(src_tgt()[0].to(torch.uint8), src_tgt()[1]),
        TypeError, r"src ids must be an integer.*torch.uint8"),
    Bad("int16 tgt_in", transformer.Transformer.forward, lambda: tf()(src_tgt()[0], src_tgt()[1].to(torch.int16)),
        TypeError, r"tgt ids must be an integer.*torch.int16"),
    Bad("src id >= vocabulary", transformer.Transformer.forward,
        lambda: tf()(torch.tensor([[4, 11]]), torch.tensor([[2, 5]])), ValueError,
        r"src ids must hold ids in \[0, 11\), got values in \[4, 11\]"),
    Bad("negative tgt id", transformer.Transformer.forward,
        lambda: tf()(torch.tensor([[4, 5]]), torch.tensor([[2, -1]])), ValueError,
        r"tgt ids must hold ids in \[0, 13\), got values in \[-1, 2\]"),
    Bad("1-D src", transformer.Transformer.forward, lambda: tf()(torch.tensor([4, 5]), src_tgt()[1]), ValueError,
        r"src and tgt_in must be \(B, S\) and \(B, T\) with the same B, got \(2,\) and \(2, 4\)"),
    Bad("batches differ", transformer.Transformer.forward, lambda: tf()(src_tgt(B=3)[0], src_tgt(B=2)[1]),
        ValueError, r"same B, got \(3, 5\) and \(2, 4\)"),
    Bad("float src_keep", transformer.Transformer.forward,
        lambda: tf()(*src_tgt(), src_keep=torch.ones(2, 5)), TypeError,
        r"src_keep must have dtype torch.bool, got torch.float32"),
    Bad("src_keep of another shape", transformer.Transformer.forward,
        lambda: tf()(*src_tgt(), src_keep=ones_bool(2, 4)), ValueError,
        r"src_keep must have the shape of the ids \(2, 5\), got \(2, 4\)"),
    Bad("target longer than max_len", transformer.Transformer.forward, lambda: tf()(*src_tgt(T=17)), ValueError,
        r"exceed the model's context of max_len=16"),
    Bad("zero-length source", transformer.Transformer.forward, lambda: tf()(*src_tgt(S=0)), ValueError,
        r"src ids must hold at least one position, got shape \(2, 0\)"),
    Bad("empty batch", transformer.Transformer.forward, lambda: tf()(*src_tgt(B=0)), ValueError,
        r"src ids must hold at least one sentence, got shape \(0, 5\)"),
    Bad("a source row of padding only", transformer.Transformer.forward,
        lambda: tf()(torch.tensor([[4, 5], [0, 0]]), torch.tensor([[2, 5], [2, 6]])), ValueError,
        r"src_keep: every source row needs at least one real token; row 1 has none"),
    Bad("unknown side", transformer.Transformer.embed, lambda: tf().embed(src_tgt()[0], "source"), ValueError,
        r"which must be one of \['src', 'tgt'\], got 'source'"),
    Bad("memory as a list", transformer.Transformer.decode,
        lambda: tf().decode(src_tgt()[1], [[0.0]], ones_bool(2, 5)), TypeError,
        r"query must be a torch.Tensor, got list|memory must be a torch.Tensor, got list"),
    Bad("src_keep for another source length", transformer.Transformer.decode,
        lambda: tf().decode(src_tgt()[1], randn(2, 5, 8), ones_bool(2, 6)), ValueError,
        r"src_keep must have shape \(2, 5\).*\(2, 6\)"),
    Bad("2-D tokens", transformer.Transformer.step, lambda: tf().step(torch.tensor([[2], [2]]), state()), ValueError,
        r"tokens must have 1 dimensions, got shape \(2, 1\)"),
    Bad("float tokens", transformer.Transformer.step, lambda: tf().step(torch.tensor([2.0, 2.0]), state()), TypeError,
        r"tokens must have dtype torch.int64 or torch.int32, got torch.float32"),
    Bad("state not a TransformerState", transformer.Transformer.step,
        lambda: tf().step(torch.tensor([2, 2]), {"memory": None}), TypeError,
        r"state must be a TransformerState \(from model.start\), got dict"),
    Bad("tokens for another batch", transformer.Transformer.step, lambda: tf().step(torch.tensor([2, 2, 2]), state()),
        ValueError, r"tokens must have size 2 in dim 0"),
    Bad("target id >= vocabulary", transformer.Transformer.loss,
        lambda: tf().loss(tbatch(tgt_out=torch.full((2, 4), 13))), ValueError,
        r"batch.tgt_out must hold class ids in \[0, 13\).*got values in \[13, 13\]"),
    Bad("float targets", transformer.Transformer.loss, lambda: tf().loss(tbatch(tgt_out=torch.ones(2, 4))),
        TypeError, r"batch.tgt_out must be an integer.*torch.float32"),
    Bad("targets of another shape", transformer.Transformer.loss,
        lambda: tf().loss(tbatch(tgt_out=torch.ones(2, 3, dtype=i64))), ValueError,
        r"batch.tgt_out must have the shape of batch.tgt_in \(2, 4\), got \(2, 3\)"),
    Bad("label smoothing > 1", transformer.Transformer.loss, lambda: tf().loss(tbatch(), label_smoothing=1.5),
        ValueError, r"label_smoothing must lie in \[0, 1\], got 1.5"),
    Bad("not a batch", transformer.Transformer.loss, lambda: tf().loss((1, 2)), TypeError,
        r"batch must be a TranslationBatch.*got tuple"),
    Bad("zero beam", transformer.Transformer.translate, lambda: tf().translate(src_tgt()[0], beam_size=0), ValueError,
        r"beam_size must be positive, got 0"),
    Bad("zero max_len", transformer.Transformer.translate, lambda: tf().translate(src_tgt()[0], max_len=0),
        ValueError, r"max_len must be positive, got 0"),
    Bad("negative length penalty", transformer.Transformer.translate,
        lambda: tf().translate(src_tgt()[0], length_penalty=-1.0), ValueError,
        r"length_penalty must be a number ≥ 0, got -1.0"),
    Bad("float src", transformer.Transformer.attention_maps,
        lambda: tf().attention_maps(src_tgt()[0].float(), src_tgt()[1]), TypeError, r"src ids must be an integer"),
    Bad("not an nn.Transformer", transformer.Transformer.from_torch,
        lambda: transformer.Transformer.from_torch(nn.Linear(2, 2), 11, 13), TypeError,
        r"expected nn.Transformer, got Linear"),

    Bad("list memory", transformer.TransformerState,
        lambda: transformer.TransformerState([[0.0]], ones_bool(1, 1), transformer_layers.DecoderCache(1)), TypeError,
        r"memory must be a torch.Tensor, got list"),
    Bad("float src_keep", transformer.TransformerState,
        lambda: transformer.TransformerState(randn(2, 5, 8), torch.ones(2, 5), transformer_layers.DecoderCache(1)),
        TypeError, r"src_keep must be a bool tensor.*torch.float32"),
    Bad("src_keep of another shape", transformer.TransformerState,
        lambda: transformer.TransformerState(randn(2, 5, 8), ones_bool(2, 4), transformer_layers.DecoderCache(1)),
        ValueError, r"src_keep must have shape \(2, 5\).*got \(2, 4\)"),
    Bad("cache not a DecoderCache", transformer.TransformerState,
        lambda: transformer.TransformerState(randn(2, 5, 8), ones_bool(2, 5), None), TypeError,
        r"cache must be a DecoderCache, got NoneType"),
    Bad("list index", transformer.TransformerState.reorder, lambda: state().reorder([0, 1]), TypeError,
        r"index must be a 1-D integer tensor.*list"),
    Bad("index past the batch", transformer.TransformerState.reorder, lambda: state().reorder(torch.tensor([0, 2])),
        ValueError, r"index values must lie in \[0, 2\).*max 2"),
]


# ==============================================================================================
# coursekit.decoding.sampling
# ==============================================================================================

def logits_with(*values):
    return torch.tensor([[1.0, 2.0, 3.0], list(values)])


SAMPLING = [
    Bad("list logits", sampling.apply_temperature, lambda: sampling.apply_temperature([1.0, 2.0], 1.0), TypeError,
        r"logits must be a torch.Tensor, got list"),
    Bad("integer logits", sampling.apply_temperature,
        lambda: sampling.apply_temperature(torch.tensor([1, 2]), 1.0), TypeError,
        r"logits must be a floating-point tensor, got torch.int64"),
    Bad("0-d logits", sampling.apply_temperature, lambda: sampling.apply_temperature(torch.tensor(1.0), 1.0),
        ValueError, r"non-empty last \(vocabulary\) dimension, got shape \(\)"),
    Bad("empty vocabulary", sampling.apply_temperature, lambda: sampling.apply_temperature(randn(2, 0), 1.0),
        ValueError, r"non-empty last \(vocabulary\) dimension, got shape \(2, 0\)"),
    Bad("zero temperature", sampling.apply_temperature, lambda: sampling.apply_temperature(randn(2, 3), 0.0),
        ValueError, r"temperature must be > 0 \(use greedy decoding for T = 0\), got 0.0"),
    Bad("negative temperature", sampling.apply_temperature, lambda: sampling.apply_temperature(randn(2, 3), -1.0),
        ValueError, r"temperature must be > 0.*got -1.0"),
    Bad("NaN temperature", sampling.apply_temperature,
        lambda: sampling.apply_temperature(randn(2, 3), float("nan")), ValueError, r"temperature must be > 0.*nan"),
    Bad("temperature as a string", sampling.apply_temperature, lambda: sampling.apply_temperature(randn(2, 3), "1"),
        TypeError, r"temperature must be a number, got str"),
    Bad("NaN logits", sampling.apply_temperature,
        lambda: sampling.apply_temperature(logits_with(1.0, float("nan"), 0.0), 1.0), ValueError,
        r"logits must not contain NaN, got 1 NaN"),

    Bad("zero k", sampling.top_k_filter, lambda: sampling.top_k_filter(randn(2, 5), 0), ValueError,
        r"top_k must be positive, got 0"),
    Bad("float k", sampling.top_k_filter, lambda: sampling.top_k_filter(randn(2, 5), 2.0), TypeError,
        r"top_k must be an int, got float"),
    Bad("bool k", sampling.top_k_filter, lambda: sampling.top_k_filter(randn(2, 5), True), TypeError,
        r"top_k must be an int, got bool"),
    Bad("all -inf row", sampling.top_k_filter, lambda: sampling.top_k_filter(logits_with(*[NEG_INF] * 3), 2),
        ValueError, r"every row of logits needs at least one finite value; 1 row is all -inf"),

    Bad("zero p", sampling.top_p_filter, lambda: sampling.top_p_filter(randn(2, 5), 0.0), ValueError,
        r"top_p must lie in \(0, 1\], got 0.0"),
    Bad("p > 1", sampling.top_p_filter, lambda: sampling.top_p_filter(randn(2, 5), 1.5), ValueError,
        r"top_p must lie in \(0, 1\], got 1.5"),
    Bad("p as a string", sampling.top_p_filter, lambda: sampling.top_p_filter(randn(2, 5), "0.9"), TypeError,
        r"top_p must be a number, got str"),
    Bad("NaN p", sampling.top_p_filter, lambda: sampling.top_p_filter(randn(2, 5), float("nan")), ValueError,
        r"top_p must lie in \(0, 1\], got nan"),
    Bad("+inf logit", sampling.top_p_filter, lambda: sampling.top_p_filter(logits_with(1.0, float("inf"), 0.0), 0.9),
        ValueError, r"logits must not contain \+inf, got 1"),

    Bad("negative temperature", sampling.filter_logits, lambda: sampling.filter_logits(randn(2, 5), temperature=-1.0),
        ValueError, r"temperature must be > 0"),
    Bad("zero top_k", sampling.filter_logits, lambda: sampling.filter_logits(randn(2, 5), top_k=0), ValueError,
        r"top_k must be positive, got 0"),
    Bad("top_p > 1", sampling.filter_logits, lambda: sampling.filter_logits(randn(2, 5), top_p=2.0), ValueError,
        r"top_p must lie in \(0, 1\], got 2.0"),

    Bad("NaN logits", sampling.sample_next, lambda: sampling.sample_next(logits_with(float("nan"), 0.0, 1.0)),
        ValueError, r"logits must not contain NaN, got 1 NaN"),
    Bad("all -inf row", sampling.sample_next, lambda: sampling.sample_next(logits_with(*[NEG_INF] * 3)), ValueError,
        r"every row of logits needs at least one finite value; 1 row is all -inf"),
    Bad("all -inf row, greedy", sampling.sample_next,
        lambda: sampling.sample_next(logits_with(*[NEG_INF] * 3), temperature=0), ValueError,
        r"at least one finite value"),
    Bad("3-D logits", sampling.sample_next, lambda: sampling.sample_next(randn(2, 3, 5)), ValueError,
        r"logits must have shape \(B, V\) or \(V,\), got \(2, 3, 5\)"),
    Bad("empty batch", sampling.sample_next, lambda: sampling.sample_next(randn(0, 5)), ValueError,
        r"logits must hold at least one row, got shape \(0, 5\)"),
    Bad("generator of the wrong type", sampling.sample_next, lambda: sampling.sample_next(randn(2, 5), generator=0),
        TypeError, r"generator must be a torch.Generator or None, got int"),
    Bad("greedy with an invalid top_k", sampling.sample_next,
        lambda: sampling.sample_next(randn(2, 5), temperature=0, top_k=-1), ValueError,
        r"top_k must be positive, got -1"),
    Bad("negative temperature", sampling.sample_next, lambda: sampling.sample_next(randn(2, 5), temperature=-0.5),
        ValueError, r"temperature must be > 0.*-0.5"),
]


# ==============================================================================================
# coursekit.decoding.search
# ==============================================================================================

def uniform_step(V=5):
    def step(prefix, st):
        return torch.zeros(prefix.shape[0], V), st
    return step


def search_kw(**kw):
    return dict(batch_size=2, bos_id=1, eos_id=2, max_len=4) | kw


SEARCH = [
    Bad("list index", search.reorder_state, lambda: search.reorder_state(randn(3, 2), [0, 1]), TypeError,
        r"index must be a 1-D integer tensor.*list"),
    Bad("float index", search.reorder_state, lambda: search.reorder_state(randn(3, 2), torch.tensor([0.0])),
        TypeError, r"index must be a 1-D integer tensor.*torch.float32"),
    Bad("2-D index", search.reorder_state, lambda: search.reorder_state(randn(3, 2), torch.tensor([[0]])),
        TypeError, r"index must be a 1-D integer tensor.*\(1, 1\)"),
    Bad("index past the rows", search.reorder_state,
        lambda: search.reorder_state({"h": randn(3, 2)}, torch.tensor([0, 3])), ValueError,
        r"index values must lie in \[0, 3\).*max 3"),
    Bad("negative index", search.reorder_state, lambda: search.reorder_state((randn(3, 2),), torch.tensor([-1])),
        ValueError, r"index values must lie in \[0, 3\).*min -1"),
    Bad("a set in the state", search.reorder_state, lambda: search.reorder_state({1, 2}, torch.tensor([0])),
        TypeError, r"cannot reorder a state of type set"),

    Bad("step not callable", search.greedy_search, lambda: search.greedy_search(3, None, **search_kw()), TypeError,
        r"step must be a function step\(prefix, state\), got int"),
    Bad("zero batch", search.greedy_search, lambda: search.greedy_search(uniform_step(), None,
                                                                         **search_kw(batch_size=0)),
        ValueError, r"batch_size must be positive, got 0"),
    Bad("zero max_len", search.greedy_search,
        lambda: search.greedy_search(uniform_step(), None, **search_kw(max_len=0)), ValueError,
        r"max_len must be positive, got 0"),
    Bad("negative bos", search.greedy_search, lambda: search.greedy_search(uniform_step(), None,
                                                                           **search_kw(bos_id=-1)),
        TypeError, r"bos_id must be a non-negative int, got -1"),
    Bad("float eos", search.greedy_search, lambda: search.greedy_search(uniform_step(), None, **search_kw(eos_id=2.0)),
        TypeError, r"eos_id must be a non-negative int, got 2.0"),
    Bad("eos outside the vocabulary", search.greedy_search,
        lambda: search.greedy_search(uniform_step(V=2), None, **search_kw()), ValueError,
        r"eos_id=2 is outside the vocabulary of size 2"),
    Bad("bos outside the vocabulary", search.greedy_search,
        lambda: search.greedy_search(uniform_step(V=3), None, **search_kw(bos_id=7)), ValueError,
        r"bos_id=7 is outside the vocabulary of size 3"),
    Bad("step returns one value", search.greedy_search,
        lambda: search.greedy_search(lambda p, s: torch.zeros(2, 5), None, **search_kw()), TypeError,
        r"must return a pair \(log_probs \(N, V\), new_state\), got Tensor"),
    Bad("step returns another batch", search.greedy_search,
        lambda: search.greedy_search(lambda p, s: (torch.zeros(3, 5), s), None, **search_kw()), ValueError,
        r"step returned log_probs for 3 rows, expected N = 2"),
    Bad("step returns 1-D scores", search.greedy_search,
        lambda: search.greedy_search(lambda p, s: (torch.zeros(5), s), None, **search_kw()), ValueError,
        r"step log_probs must have 2 dimensions, got shape \(5,\)"),
    Bad("step returns integer scores", search.greedy_search,
        lambda: search.greedy_search(lambda p, s: (torch.zeros(2, 5, dtype=i64), s), None, **search_kw()),
        TypeError, r"step log_probs must be a floating-point tensor, got torch.int64"),
    Bad("step returns NaN", search.greedy_search,
        lambda: search.greedy_search(lambda p, s: (torch.full((2, 5), float("nan")), s), None, **search_kw()),
        ValueError, r"step log_probs must not contain NaN, got 10 NaN"),
    Bad("step returns an all -inf row", search.greedy_search,
        lambda: search.greedy_search(lambda p, s: (torch.full((2, 5), NEG_INF), s), None, **search_kw()),
        ValueError, r"every row of step log_probs needs at least one finite value; 2 rows are all -inf"),

    Bad("zero beam", search.beam_search, lambda: search.beam_search(uniform_step(), None, beam_size=0, **search_kw()),
        ValueError, r"beam_size must be positive, got 0"),
    Bad("negative length penalty", search.beam_search,
        lambda: search.beam_search(uniform_step(), None, length_penalty=-1.0, **search_kw()), ValueError,
        r"length_penalty must be a number ≥ 0, got -1.0"),
    Bad("reorder not callable", search.beam_search,
        lambda: search.beam_search(uniform_step(), None, reorder="rows", **search_kw()), TypeError,
        r"reorder must be a function reorder\(state, index\), got str"),
    Bad("step not callable", search.beam_search, lambda: search.beam_search(None, None, **search_kw()), TypeError,
        r"step must be a function step\(prefix, state\), got NoneType"),
    Bad("step returns the un-expanded batch", search.beam_search,
        lambda: search.beam_search(lambda p, s: (torch.zeros(2, 5), s), None, beam_size=3, **search_kw()),
        ValueError, r"step returned log_probs for 2 rows, expected N = 6"),
    Bad("step returns NaN", search.beam_search,
        lambda: search.beam_search(lambda p, s: (torch.full((p.shape[0], 5), float("nan")), s), None,
                                   **search_kw()), ValueError, r"step log_probs must not contain NaN"),

    Bad("list scores", search.beam_search_step, lambda: search.beam_search_step([[0.0]], randn(1, 1, 5), 1),
        TypeError, r"scores must be a torch.Tensor, got list"),
    Bad("scores of another shape", search.beam_search_step,
        lambda: search.beam_search_step(randn(2, 3), randn(2, 2, 5), 2), ValueError,
        r"scores must have shape \(B, k\) = \(2, 2\).*got \(2, 3\)"),
    Bad("2-D log_probs", search.beam_search_step, lambda: search.beam_search_step(randn(2, 3), randn(2, 5), 2),
        ValueError, r"log_probs must have 3 dimensions, got shape \(2, 5\)"),
    Bad("beam wider than the candidates", search.beam_search_step,
        lambda: search.beam_search_step(randn(1, 2), randn(1, 2, 3), 7), ValueError,
        r"beam_size=7 exceeds the k\*V = 6 candidates"),
    Bad("zero beam", search.beam_search_step, lambda: search.beam_search_step(randn(1, 2), randn(1, 2, 3), 0),
        ValueError, r"beam_size must be positive, got 0"),
    Bad("length penalty without lengths", search.beam_search_step,
        lambda: search.beam_search_step(randn(1, 2), randn(1, 2, 3), 2, length_penalty=1.0), ValueError,
        r"length_penalty needs the candidates' lengths \(B, k\)"),
    Bad("lengths of another shape", search.beam_search_step,
        lambda: search.beam_search_step(randn(1, 2), randn(1, 2, 3), 2, torch.ones(3, dtype=i64), 1.0), ValueError,
        r"lengths must have shape \(B, k\) = \(1, 2\), got \(3,\)"),
    Bad("negative length penalty", search.beam_search_step,
        lambda: search.beam_search_step(randn(1, 2), randn(1, 2, 3), 2, torch.ones(1, 2, dtype=i64), -0.5),
        ValueError, r"length_penalty must be a number ≥ 0, got -0.5"),
]


# ==============================================================================================
# coursekit.rnn.seq2seq
# ==============================================================================================

def s2s_cfg(**kw):
    return seq2seq.Seq2SeqConfig(**(dict(src_vocab_size=13, tgt_vocab_size=11, d_emb=8, d_hidden=12) | kw))


def s2s(**kw):
    torch.manual_seed(0)
    return seq2seq.Seq2Seq(s2s_cfg(**kw)).eval()


def src_and_mask(B=2, S=5, left=False):
    lengths = torch.tensor([S, 2, 3][:B])
    mask = torch.arange(S)[None] < lengths[:, None]
    if left:
        mask = mask.flip(1)                                 # padding first, real tokens last
    return torch.randint(4, 13, (B, S)).masked_fill(~mask, 0), mask


def tgt(B=2, T=4):
    return torch.randint(4, 11, (B, T))


def s2s_batch(tgt_out):
    src, mask = src_and_mask()
    return TranslationBatch(src, mask, mask.sum(1), tgt(), tgt_out, ones_bool(2, 4), torch.arange(2))


def dec_state(model):
    return model.encode(*src_and_mask())


SEQ2SEQ = [
    Bad("target pad id >= vocabulary", seq2seq.Seq2SeqConfig, lambda: s2s_cfg(pad_id=11), ValueError,
        r"pad_id must be an id in \[0, 11\), got 11"),
    Bad("source pad id >= source vocabulary", seq2seq.Seq2SeqConfig,
        lambda: s2s_cfg(src_vocab_size=5, tgt_vocab_size=11, pad_id=7), ValueError,
        r"pad_id must be an id in \[0, 5\) \(the source vocabulary\), got 7"),
    Bad("negative bos", seq2seq.Seq2SeqConfig, lambda: s2s_cfg(bos_id=-1), ValueError,
        r"bos_id must be an id in \[0, 11\), got -1"),
    Bad("dropout > 1", seq2seq.Seq2SeqConfig, lambda: s2s_cfg(dropout=1.5), ValueError,
        r"dropout must lie in \[0, 1\), got 1.5"),
    Bad("dropout as a string", seq2seq.Seq2SeqConfig, lambda: s2s_cfg(dropout="0.1"), TypeError,
        r"dropout must be a number, got str"),
    Bad("unknown cell", seq2seq.Seq2SeqConfig, lambda: s2s_cfg(cell="rnn"), ValueError,
        r"cell must be one of \['gru', 'lstm'\], got 'rnn'"),
    Bad("unknown style", seq2seq.Seq2SeqConfig, lambda: s2s_cfg(attention="dot", style="vaswani"), ValueError,
        r"style must be one of .*got 'vaswani'"),
    Bad("unknown score", seq2seq.Seq2SeqConfig, lambda: s2s_cfg(attention="bilinear"), ValueError,
        r"attention must be None or one of dot.*got 'bilinear'"),
    Bad("location score without max_src_len", seq2seq.Seq2SeqConfig, lambda: s2s_cfg(attention="location"),
        ValueError, r"location score needs max_src_len"),
    Bad("zero attention width", seq2seq.Seq2SeqConfig, lambda: s2s_cfg(attention="additive", d_attn=0), ValueError,
        r"d_attn must be positive, got 0"),
    Bad("zero max_src_len", seq2seq.Seq2SeqConfig, lambda: s2s_cfg(max_src_len=0), ValueError,
        r"max_src_len must be positive, got 0"),
    Bad("input feeding without attention", seq2seq.Seq2SeqConfig, lambda: s2s_cfg(input_feeding=True), ValueError,
        r"input_feeding.*needs attention"),
    Bad("bidirectional with an odd width", seq2seq.Seq2SeqConfig,
        lambda: s2s_cfg(bidirectional=True, d_hidden=7), ValueError, r"d_hidden must be even, got 7"),
    Bad("shared embeddings, two vocabularies", seq2seq.Seq2SeqConfig, lambda: s2s_cfg(share_embeddings=True),
        ValueError, r"src_vocab_size == tgt_vocab_size, got 13 and 11"),
    Bad("zero vocabulary", seq2seq.Seq2SeqConfig, lambda: s2s_cfg(src_vocab_size=0), ValueError,
        r"src_vocab_size must be positive, got 0"),

    Bad("a dict for a config", seq2seq.Encoder, lambda: seq2seq.Encoder({"d_emb": 8}), TypeError,
        r"config must be a Seq2SeqConfig, got dict"),
    Bad("left-padded src_mask (read by its row sums)", seq2seq.Encoder.forward,
        lambda: s2s().encoder(*src_and_mask(left=True)), ValueError,
        r"src_mask must be right-padded.*row 1"),
    Bad("float src", seq2seq.Encoder.forward,
        lambda: s2s().encoder(src_and_mask()[0].float(), src_and_mask()[1]), TypeError,
        r"src must be an integer \(int64 or int32\) tensor of token ids, got torch.float32"),
    Bad("float src_mask", seq2seq.Encoder.forward,
        lambda: s2s().encoder(src_and_mask()[0], src_and_mask()[1].float()), TypeError,
        r"src_mask must have dtype torch.bool, got torch.float32"),
    Bad("a row without real tokens", seq2seq.Encoder.forward,
        lambda: s2s().encoder(torch.tensor([[5, 6], [0, 0]]), torch.tensor([[True, True], [False, False]])),
        ValueError, r"every source sentence needs at least one real token"),

    Bad("a dict for a config", seq2seq.Decoder, lambda: seq2seq.Decoder({"d_emb": 8}), TypeError,
        r"config must be a Seq2SeqConfig, got dict"),
    Bad("memory as a list", seq2seq.Decoder.init_state,
        lambda: s2s(attention="dot").decoder.init_state([[0.0]], ones_bool(1, 1), randn(1, 1, 12)), TypeError,
        r"memory must be a torch.Tensor, got list"),
    Bad("src_mask for another source length", seq2seq.Decoder.init_state,
        lambda: s2s(attention="dot").decoder.init_state(randn(2, 5, 12), ones_bool(2, 4), randn(2, 1, 12)),
        ValueError, r"src_mask must have shape \(2, 5\).*got \(2, 4\)"),
    Bad("float y_prev", seq2seq.Decoder.step,
        lambda: (lambda m: m.decoder.step(torch.tensor([2.0, 2.0]), dec_state(m)))(s2s()), TypeError,
        r"y_prev must be an integer.*torch.float32"),
    Bad("y_prev >= vocabulary", seq2seq.Decoder.step,
        lambda: (lambda m: m.decoder.step(torch.tensor([2, 11]), dec_state(m)))(s2s()), ValueError,
        r"y_prev must hold ids in \[0, 11\), got values in \[2, 11\]"),
    Bad("2-D y_prev", seq2seq.Decoder.step,
        lambda: (lambda m: m.decoder.step(torch.tensor([[2], [2]]), dec_state(m)))(s2s()), ValueError,
        r"y_prev must have 1 dimensions, got shape \(2, 1\)"),
    Bad("state not a dict", seq2seq.Decoder.step, lambda: s2s().decoder.step(torch.tensor([2, 2]), randn(2, 1, 12)),
        TypeError, r"state must be the dict of Decoder.init_state, got Tensor"),
    Bad("1-D tgt_in", seq2seq.Decoder.forward,
        lambda: (lambda m: m.decoder(torch.tensor([2, 5]), dec_state(m)))(s2s()), ValueError,
        r"tgt_in must have 2 dimensions, got shape \(2,\)"),
    Bad("zero-length tgt_in", seq2seq.Decoder.forward,
        lambda: (lambda m: m.decoder(tgt(T=0), dec_state(m)))(s2s()), ValueError,
        r"tgt_in must hold at least one position, got shape \(2, 0\)"),
    Bad("teacher forcing 2", seq2seq.Decoder.forward,
        lambda: (lambda m: m.decoder(tgt(), dec_state(m), teacher_forcing=2.0))(s2s()), ValueError,
        r"teacher_forcing must lie in \[0, 1\], got 2.0"),

    Bad("a dict for a config", seq2seq.Seq2Seq, lambda: seq2seq.Seq2Seq({"d_emb": 8}), TypeError,
        r"config must be a Seq2SeqConfig, got dict"),
    Bad("float src", seq2seq.Seq2Seq.forward, lambda: s2s()(src_and_mask()[0].float(), src_and_mask()[1], tgt()),
        TypeError, r"src must be an integer.*torch.float32"),
    Bad("uint8 src", seq2seq.Seq2Seq.forward,
        lambda: s2s()(src_and_mask()[0].to(torch.uint8), src_and_mask()[1], tgt()), TypeError,
        r"src must be an integer.*torch.uint8"),
    Bad("src id >= vocabulary", seq2seq.Seq2Seq.forward,
        lambda: s2s()(torch.tensor([[5, 13]]), ones_bool(1, 2), tgt(B=1)), ValueError,
        r"src must hold ids in \[0, 13\), got values in \[5, 13\]"),
    Bad("negative src id", seq2seq.Seq2Seq.forward,
        lambda: s2s()(torch.tensor([[5, -2]]), ones_bool(1, 2), tgt(B=1)), ValueError,
        r"src must hold ids in \[0, 13\), got values in \[-2, 5\]"),
    Bad("float src_mask", seq2seq.Seq2Seq.forward,
        lambda: s2s()(src_and_mask()[0], src_and_mask()[1].float(), tgt()), TypeError,
        r"src_mask must have dtype torch.bool, got torch.float32"),
    Bad("src_mask of another shape", seq2seq.Seq2Seq.forward,
        lambda: s2s()(src_and_mask()[0], ones_bool(2, 4), tgt()), ValueError,
        r"src_mask must have the shape of src \(2, 5\), got \(2, 4\)"),
    Bad("left-padded src_mask", seq2seq.Seq2Seq.forward, lambda: s2s()(*src_and_mask(left=True), tgt()), ValueError,
        r"src_mask must be right-padded"),
    Bad("float tgt_in", seq2seq.Seq2Seq.forward, lambda: s2s()(*src_and_mask(), tgt().float()), TypeError,
        r"tgt_in must be an integer.*torch.float32"),
    Bad("tgt_in id >= vocabulary", seq2seq.Seq2Seq.forward,
        lambda: s2s()(*src_and_mask(), torch.full((2, 3), 11)), ValueError,
        r"tgt_in must hold ids in \[0, 11\), got values in \[11, 11\]"),
    Bad("batches differ", seq2seq.Seq2Seq.forward, lambda: s2s()(*src_and_mask(B=2), tgt(B=3)), ValueError,
        r"src has 2 sentences but tgt_in has 3"),
    Bad("teacher forcing 1.5", seq2seq.Seq2Seq.forward,
        lambda: s2s()(*src_and_mask(), tgt(), teacher_forcing=1.5), ValueError,
        r"teacher_forcing must lie in \[0, 1\], got 1.5"),
    Bad("generator of the wrong type", seq2seq.Seq2Seq.forward,
        lambda: s2s()(*src_and_mask(), tgt(), teacher_forcing=0.5, generator=1), TypeError,
        r"generator must be a torch.Generator or None, got int"),
    Bad("empty batch", seq2seq.Seq2Seq.forward, lambda: s2s()(*src_and_mask(B=0), tgt(B=0)), ValueError,
        r"src must hold at least one sentence, got shape \(0, 5\)"),
    Bad("zero-length source", seq2seq.Seq2Seq.forward, lambda: s2s()(*src_and_mask(S=0), tgt()), ValueError,
        r"every source sentence needs at least one real token|src must hold at least one position"),
    Bad("source longer than max_src_len", seq2seq.Seq2Seq.forward,
        lambda: s2s(attention="location", max_src_len=4)(*src_and_mask(S=5), tgt()), ValueError,
        r"source length 5 exceeds max_src_len=4"),
    Bad("target id >= vocabulary", seq2seq.Seq2Seq.loss, lambda: s2s().loss(s2s_batch(torch.full((2, 4), 11))),
        ValueError, r"batch.tgt_out must hold class ids in \[0, 11\).*got values in \[11, 11\]"),
    Bad("float targets", seq2seq.Seq2Seq.loss, lambda: s2s().loss(s2s_batch(torch.ones(2, 4))), TypeError,
        r"batch.tgt_out must be an integer.*torch.float32"),
    Bad("negative target other than padding", seq2seq.Seq2Seq.loss,
        lambda: s2s().loss(s2s_batch(torch.full((2, 4), -100))), ValueError,
        r"batch.tgt_out must hold class ids in \[0, 11\).*got values in \[-100, -100\]"),
    Bad("label smoothing > 1", seq2seq.Seq2Seq.loss,
        lambda: s2s().loss(s2s_batch(tgt()), label_smoothing=1.5), ValueError,
        r"label_smoothing must lie in \[0, 1\], got 1.5"),
    Bad("zero beam", seq2seq.Seq2Seq.translate, lambda: s2s().translate(*src_and_mask(), beam_size=0), ValueError,
        r"beam_size must be positive, got 0"),
    Bad("zero max_len", seq2seq.Seq2Seq.translate, lambda: s2s().translate(*src_and_mask(), max_len=0), ValueError,
        r"max_len must be positive, got 0"),

    Bad("unknown kind", seq2seq.teacher_forcing_schedule,
        lambda: seq2seq.teacher_forcing_schedule(1, 10, "cosine"), ValueError,
        r"kind must be 'linear', 'exponential' or 'inverse_sigmoid', got 'cosine'"),
    Bad("zero total", seq2seq.teacher_forcing_schedule, lambda: seq2seq.teacher_forcing_schedule(1, 0), ValueError,
        r"total_steps must be positive, got 0"),
    Bad("negative step", seq2seq.teacher_forcing_schedule, lambda: seq2seq.teacher_forcing_schedule(-1, 10),
        ValueError, r"step must be a non-negative int, got -1"),
    Bad("float step", seq2seq.teacher_forcing_schedule, lambda: seq2seq.teacher_forcing_schedule(1.5, 10),
        (ValueError, TypeError), r"step must be a non-negative int, got 1.5"),
    Bad("floor > 1", seq2seq.teacher_forcing_schedule,
        lambda: seq2seq.teacher_forcing_schedule(1, 10, floor=1.5), ValueError, r"floor must lie in \[0, 1\], got 1.5"),
    Bad("sharpness as a string", seq2seq.teacher_forcing_schedule,
        lambda: seq2seq.teacher_forcing_schedule(1, 10, sharpness="10"), TypeError,
        r"sharpness must be a number, got str"),
]


# ==============================================================================================
# coursekit.rnn.layers, coursekit.rnn.cells, coursekit.rnn.bptt, coursekit.rnn.elmo, coursekit.rnn.char_lm
# ==============================================================================================

def manual_bptt(H=3, I=2, O=4, **kw):  # noqa: E741 - I, O as in the equations
    """A valid call of elman_bptt (T = 5 steps) with the arguments in ``kw`` replaced."""
    args = dict(x=randn(5, I), targets=torch.tensor([0, 1, 2, 3, 0]), W=randn(H, I), V=randn(H, H), b=randn(H),
                U=randn(O, H))
    return bptt.elman_bptt(**(args | kw))


TEXT = "to be or not to be, that is the question; " * 3


def corpus():
    return char_lm.CharCorpus(TEXT)


def tiny_char_lm():
    return char_lm.CharLM(corpus().vocab_size, 8)


RNN = [
    Bad("zero input size", rnn_cells.RNNCell,
        lambda: rnn_cells.RNNCell(0, 4), ValueError, r"input_size must be positive, got 0"),
    Bad("unknown nonlinearity", rnn_cells.RNNCell, lambda: rnn_cells.RNNCell(2, 4, nonlinearity="sigmoid"), ValueError,
        r"nonlinearity must be one of \['relu', 'tanh'\], got 'sigmoid'"),
    Bad("list x", rnn_cells.RNNCell.forward, lambda: rnn_cells.RNNCell(2, 4)([[0.0, 0.0]]), TypeError,
        r"x must be a torch.Tensor, got list"),
    Bad("3-D x", rnn_cells.RNNCell.forward, lambda: rnn_cells.RNNCell(2, 4)(randn(1, 3, 2)), ValueError,
        r"x must have 2 dimensions, got shape \(1, 3, 2\)"),
    Bad("wrong width", rnn_cells.RNNCell.forward, lambda: rnn_cells.RNNCell(2, 4)(randn(3, 5)), ValueError,
        r"x must have shape \(B, input_size=2\), got \(3, 5\)"),
    Bad("h for another batch", rnn_cells.RNNCell.forward,
        lambda: rnn_cells.RNNCell(2, 4)(randn(3, 2), randn(2, 4)), ValueError,
        r"h must have shape \(B, hidden_size\) = \(3, 4\).*got \(2, 4\)"),
    Bad("integer x", rnn_cells.RNNCell.forward, lambda: rnn_cells.RNNCell(2, 4)(torch.ones(3, 2, dtype=i64)), TypeError,
        r"x must be a floating-point tensor, got torch.int64"),
    Bad("float64 x into a float32 cell", rnn_cells.RNNCell.forward,
        lambda: rnn_cells.RNNCell(2, 4)(randn(3, 2, dtype=f64)),
        TypeError, r"x has dtype torch.float64.*torch.float32"),
    Bad("float64 h with float32 x", rnn_cells.RNNCell.forward,
        lambda: rnn_cells.RNNCell(2, 4)(randn(3, 2), randn(3, 4, dtype=f64)), TypeError,
        r"h has dtype torch.float64.*torch.float32"),
    Bad("not an nn.RNNCell", rnn_cells.RNNCell.from_torch,
        lambda: rnn_cells.RNNCell.from_torch(nn.LSTMCell(2, 3)), TypeError,
        r"expected an nn.RNNCell, got LSTMCell"),

    Bad("NaN forget bias", rnn_cells.LSTMCell, lambda: rnn_cells.LSTMCell(2, 3, forget_bias=float("nan")), ValueError,
        r"forget_bias must be a finite number, got nan"),
    Bad("state of three tensors", rnn_cells.LSTMCell.forward,
        lambda: rnn_cells.LSTMCell(2, 3)(randn(1, 2), (randn(1, 3), randn(1, 3), randn(1, 3))), TypeError,
        r"state must be a tuple \(h, c\), got a tuple of 3"),
    Bad("c for another batch", rnn_cells.LSTMCell.forward,
        lambda: rnn_cells.LSTMCell(2, 3)(randn(2, 2), (randn(2, 3), randn(1, 3))), ValueError,
        r"c must have shape \(B, hidden_size\) = \(2, 3\).*got \(1, 3\)"),
    Bad("a tensor for the state", rnn_cells.LSTMCell.forward,
        lambda: rnn_cells.LSTMCell(2, 3)(randn(2, 2), randn(2, 3)),
        TypeError, r"state must be a tuple \(h, c\), got Tensor"),
    Bad("list x", rnn_cells.LSTMCell.gates,
        lambda: rnn_cells.LSTMCell(2, 3).gates([[0.0, 0.0]], (randn(1, 3), randn(1, 3))),
        TypeError, r"x must be a torch.Tensor, got list"),
    Bad("h of another width", rnn_cells.LSTMCell.gates,
        lambda: rnn_cells.LSTMCell(2, 3).gates(randn(1, 2), (randn(1, 4), randn(1, 3))), ValueError,
        r"h must have shape \(B, hidden_size\) = \(1, 3\)"),
    Bad("not an nn.LSTMCell", rnn_cells.LSTMCell.from_torch,
        lambda: rnn_cells.LSTMCell.from_torch(nn.RNNCell(2, 3)), TypeError,
        r"expected an nn.LSTMCell, got RNNCell"),

    Bad("an RNN whose bias happens to have 4*k rows", rnn_cells.init_forget_gate_bias,
        lambda: rnn_cells.init_forget_gate_bias(nn.RNN(2, 4)), ValueError, r"RNN holds no LSTM"),
    Bad("an RNN", rnn_cells.init_forget_gate_bias, lambda: rnn_cells.init_forget_gate_bias(nn.RNN(2, 3)), ValueError,
        r"RNN holds no LSTM.*4\*H"),
    Bad("value as a string", rnn_cells.init_forget_gate_bias,
        lambda: rnn_cells.init_forget_gate_bias(nn.LSTM(2, 3), "one"),
        TypeError, r"value must be a number, got str"),
    Bad("infinite value", rnn_cells.init_forget_gate_bias,
        lambda: rnn_cells.init_forget_gate_bias(nn.LSTM(2, 3), float("inf")), ValueError,
        r"value must be a finite number, got inf"),
    Bad("a tensor for a module", rnn_cells.init_forget_gate_bias,
        lambda: rnn_cells.init_forget_gate_bias(randn(8)), TypeError,
        r"module must be an nn.Module, got Tensor"),
    Bad("LSTM without biases", rnn_cells.init_forget_gate_bias,
        lambda: rnn_cells.init_forget_gate_bias(rnn.LSTM(2, 3, bias=False)), ValueError, r"no LSTM biases"),

    Bad("list lengths", rnn.lengths_to_mask, lambda: rnn.lengths_to_mask([2, 3], 4), TypeError,
        r"lengths must be a torch.Tensor, got list"),
    Bad("float lengths", rnn.lengths_to_mask, lambda: rnn.lengths_to_mask(torch.tensor([2.5, 3.0]), 4), TypeError,
        r"lengths must be an integer tensor, got torch.float32"),
    Bad("length above T", rnn.lengths_to_mask, lambda: rnn.lengths_to_mask(torch.tensor([2, 5]), 4), ValueError,
        r"lengths must lie in \[0, 4\], got values in \[2, 5\]"),
    Bad("negative length", rnn.lengths_to_mask, lambda: rnn.lengths_to_mask(torch.tensor([-1, 2]), 4), ValueError,
        r"lengths must lie in \[0, 4\], got values in \[-1, 2\]"),
    Bad("zero T", rnn.lengths_to_mask, lambda: rnn.lengths_to_mask(torch.tensor([0]), 0), ValueError,
        r"T must be positive, got 0"),
    Bad("2-D lengths", rnn.lengths_to_mask, lambda: rnn.lengths_to_mask(torch.tensor([[1, 2]]), 4), ValueError,
        r"lengths must have 1 dimensions, got shape \(1, 2\)"),

    Bad("zero input size", rnn.RNN, lambda: rnn.RNN(0, 4), ValueError, r"input_size must be positive, got 0"),
    Bad("zero layers", rnn.RNN, lambda: rnn.RNN(2, 4, num_layers=0), ValueError, r"num_layers must be positive"),
    Bad("dropout > 1", rnn.RNN, lambda: rnn.RNN(2, 4, dropout=1.5), ValueError,
        r"dropout must lie in \[0, 1\), got 1.5"),
    Bad("dropout as a string", rnn.RNN, lambda: rnn.RNN(2, 4, dropout="x"), TypeError,
        r"dropout must be a number, got str"),
    Bad("unknown nonlinearity", rnn.RNN, lambda: rnn.RNN(2, 4, nonlinearity="gelu"), ValueError,
        r"nonlinearity must be one of"),
    Bad("forward: list input", rnn.RNN, lambda: rnn.RNN(2, 4)([[[0.0, 0.0]]]), TypeError,
        r"input must be a torch.Tensor, got list"),
    Bad("forward: 2-D input", rnn.RNN, lambda: rnn.RNN(2, 4)(randn(3, 2)), ValueError,
        r"input must have 3 dimensions, got shape \(3, 2\)"),
    Bad("forward: wrong width", rnn.RNN, lambda: rnn.RNN(2, 4)(randn(3, 2, 5)), ValueError,
        r"input must have shape \(T, B, input_size\) with input_size=2, got \(3, 2, 5\)"),
    Bad("forward: zero time steps", rnn.RNN, lambda: rnn.RNN(2, 4)(randn(0, 2, 2)), ValueError,
        r"input has zero time steps"),
    Bad("forward: empty batch", rnn.RNN, lambda: rnn.RNN(2, 4)(randn(3, 0, 2)), ValueError,
        r"input has an empty batch, got shape \(3, 0, 2\)"),
    Bad("forward: h0 of another shape", rnn.RNN, lambda: rnn.RNN(2, 4)(randn(3, 2, 2), randn(1, 3, 4)), ValueError,
        r"h0 must have shape \(num_layers\*num_directions, B, hidden_size\) = \(1, 2, 4\).*got \(1, 3, 4\)"),
    Bad("forward: float lengths", rnn.RNN, lambda: rnn.RNN(2, 4)(randn(3, 2, 2), lengths=torch.tensor([3.0, 2.0])),
        TypeError, r"lengths must be an integer tensor, got torch.float32"),
    Bad("forward: length above T", rnn.RNN, lambda: rnn.RNN(2, 4)(randn(3, 2, 2), lengths=torch.tensor([4, 2])),
        ValueError, r"lengths must be at most the sequence length T=3, got a length of 4"),
    Bad("forward: zero length", rnn.RNN, lambda: rnn.RNN(2, 4)(randn(3, 2, 2), lengths=[3, 0]), ValueError,
        r"lengths must be at least 1, got 0"),
    Bad("forward: one length for two sequences", rnn.RNN,
        lambda: rnn.RNN(2, 4)(randn(3, 2, 2), lengths=torch.tensor([3])), ValueError,
        r"one entry per sequence \(B=2\), got 1"),
    Bad("forward: float64 input into a float32 network", rnn.RNN, lambda: rnn.RNN(2, 4)(randn(3, 2, 2, dtype=f64)),
        TypeError, r"input has dtype torch.float64.*torch.float32"),
    Bad("forward: h0 of another dtype", rnn.RNN,
        lambda: rnn.RNN(2, 4)(randn(3, 2, 2), randn(1, 2, 4, dtype=f64)), TypeError,
        r"h0 has dtype torch.float64.*torch.float32"),
    Bad("forward_layers: 2-D input", rnn.RNN, lambda: rnn.RNN(2, 4).forward_layers(randn(3, 2)), ValueError,
        r"input must have 3 dimensions"),
    Bad("not an nn.RNN", rnn.RNN.from_torch, lambda: rnn.RNN.from_torch(nn.LSTM(2, 3)), TypeError,
        r"expected an nn.RNN, got LSTM"),

    Bad("forget bias as a string", rnn.LSTM, lambda: rnn.LSTM(2, 3, forget_bias="1"), TypeError,
        r"forget_bias must be a number, got str"),
    Bad("forward: a tensor for the state", rnn.LSTM, lambda: rnn.LSTM(2, 3)(randn(4, 2, 2), randn(1, 2, 3)), TypeError,
        r"state must be a tuple \(h0, c0\), got Tensor"),
    Bad("forward: c0 of another shape", rnn.LSTM,
        lambda: rnn.LSTM(2, 3)(randn(4, 2, 2), (randn(1, 2, 3), randn(2, 2, 3))), ValueError,
        r"c0 must have shape .* = \(1, 2, 3\).*got \(2, 2, 3\)"),
    Bad("not an nn.LSTM", rnn.LSTM.from_torch, lambda: rnn.LSTM.from_torch(nn.GRU(2, 3)), TypeError,
        r"expected an nn.LSTM, got GRU"),

    Bad("zero outputs", bptt.ElmanNetwork, lambda: bptt.ElmanNetwork(2, 4, 0), ValueError,
        r"output_size must be positive, got 0"),
    Bad("zero hidden size", bptt.ElmanNetwork, lambda: bptt.ElmanNetwork(2, 0, 3), ValueError,
        r"hidden_size must be positive, got 0"),
    Bad("2-D x", bptt.ElmanNetwork.forward, lambda: bptt.ElmanNetwork(2, 4, 3)(randn(5, 2)), ValueError,
        r"input must have 3 dimensions, got shape \(5, 2\)"),
    Bad("length above T", bptt.ElmanNetwork.forward,
        lambda: bptt.ElmanNetwork(2, 4, 3)(randn(2, 5, 2), lengths=torch.tensor([6, 2])), ValueError,
        r"at most the sequence length T=5"),

    Bad("zero layers", elmo.ScalarMix, lambda: elmo.ScalarMix(0), ValueError, r"num_layers must be positive, got 0"),
    Bad("wrong number of layers", elmo.ScalarMix.forward, lambda: elmo.ScalarMix(3)([randn(2, 4)] * 2), ValueError,
        r"built for 3 layers, got 2"),
    Bad("layers of different shapes", elmo.ScalarMix.forward,
        lambda: elmo.ScalarMix(2)([randn(2, 4), randn(2, 5)]), ValueError,
        r"layers\[0\] is \(2, 4\), layers\[1\] is \(2, 5\)"),
    Bad("list of lists", elmo.ScalarMix.forward, lambda: elmo.ScalarMix(2)([[0.0], [1.0]]), TypeError,
        r"layers\[0\] must be a torch.Tensor, got list"),
    Bad("integer layers", elmo.ScalarMix.forward, lambda: elmo.ScalarMix(2)(torch.ones(2, 3, dtype=i64)), TypeError,
        r"layers\[0\] must be a floating-point tensor, got torch.int64"),
    Bad("0-d tensor", elmo.ScalarMix.forward, lambda: elmo.ScalarMix(1)(torch.tensor(1.0)), ValueError,
        r"layers must be a list of tensors or a tensor \(L, \.\.\.\), got a 0-d tensor"),
    Bad("layers of different dtypes", elmo.ScalarMix.forward,
        lambda: elmo.ScalarMix(2)([randn(2, 4), randn(2, 4, dtype=f64)]), TypeError,
        r"layers\[1\] has dtype torch.float64 but layers\[0\] has torch.float32"),
    Bad("a string", elmo.ScalarMix.forward, lambda: elmo.ScalarMix(2)("ab"), TypeError,
        r"layers must be a list of tensors or a tensor \(L, \.\.\.\), got str"),

    Bad("float targets", bptt.elman_bptt, lambda: manual_bptt(targets=torch.tensor([0.0, 1.0, 2.0, 3.0, 0.0])),
        TypeError, r"targets must be an integer \(int64 or int32\) tensor of class ids, got torch.float32"),
    Bad("target >= number of outputs", bptt.elman_bptt, lambda: manual_bptt(targets=torch.tensor([0, 1, 2, 4, 0])),
        ValueError, r"targets must hold class ids in \[0, 4\), got values in \[0, 4\]"),
    Bad("negative target", bptt.elman_bptt, lambda: manual_bptt(targets=torch.tensor([0, 1, -1, 3, 0])), ValueError,
        r"targets must hold class ids in \[0, 4\), got values in \[-1, 3\]"),
    Bad("ignore index -100 (not supported by the hand-written gradient)", bptt.elman_bptt,
        lambda: manual_bptt(targets=torch.tensor([0, 1, -100, 3, 0])), ValueError,
        r"targets must hold class ids in \[0, 4\), got values in \[-100, 3\]"),
    Bad("one target too few", bptt.elman_bptt, lambda: manual_bptt(targets=torch.tensor([0, 1, 2, 3])), ValueError,
        r"targets must have one class per step \(T=5\), got 4"),
    Bad("W of another shape", bptt.elman_bptt, lambda: manual_bptt(W=randn(3, 5)), ValueError,
        r"W must have shape \(3, 2\), got \(3, 5\)"),
    Bad("list V", bptt.elman_bptt, lambda: manual_bptt(V=[[0.0] * 3] * 3), TypeError,
        r"V must be a torch.Tensor, got list"),
    Bad("list U", bptt.elman_bptt, lambda: manual_bptt(U=[[0.0] * 3] * 4), TypeError,
        r"U must be a torch.Tensor, got list"),
    Bad("h0 of another width", bptt.elman_bptt, lambda: manual_bptt(h0=randn(4)), ValueError,
        r"h0 must have shape \(3,\), got \(4,\)"),
    Bad("float64 x with float32 weights", bptt.elman_bptt, lambda: manual_bptt(x=randn(5, 2, dtype=f64)), TypeError,
        r"W has dtype torch.float32 but x has torch.float64"),
    Bad("zero time steps", bptt.elman_bptt, lambda: manual_bptt(x=randn(0, 2), targets=torch.tensor([], dtype=i64)),
        ValueError, r"x must hold at least one time step, got shape \(0, 2\)"),
    Bad("list x", bptt.elman_bptt, lambda: manual_bptt(x=[[0.0, 0.0]]), TypeError,
        r"x must be a torch.Tensor, got list"),

    Bad("not a str", char_lm.CharCorpus, lambda: char_lm.CharCorpus(["a"] * 30), TypeError,
        r"text must be a str, got list"),
    Bad("val_fraction 1", char_lm.CharCorpus, lambda: char_lm.CharCorpus(TEXT, val_fraction=1.0), ValueError,
        r"val_fraction must lie in \(0, 1\), got 1.0"),
    Bad("val_fraction as a string", char_lm.CharCorpus, lambda: char_lm.CharCorpus(TEXT, val_fraction="0.1"), TypeError,
        r"val_fraction must be a number, got str"),
    Bad("unknown character", char_lm.CharCorpus.encode, lambda: corpus().encode("to bé"), ValueError,
        r"characters not in the vocabulary: \['é'\]"),
    Bad("negative id (would read from the end)", char_lm.CharCorpus.decode, lambda: corpus().decode([1, -1]),
        ValueError, r"ids must lie in \[0, \d+\).*got \[-1\]"),
    Bad("float ids", char_lm.CharCorpus.decode, lambda: corpus().decode([1.0, 2.0]), TypeError,
        r"ids must hold ints, got \[1.0, 2.0\]"),
    Bad("unknown split", char_lm.CharCorpus.batch, lambda: corpus().batch("test", 2, 4), ValueError,
        r"split must be one of \['train', 'val'\], got 'test'"),
    Bad("zero batch", char_lm.CharCorpus.batch, lambda: corpus().batch("train", 0, 4), ValueError,
        r"batch_size must be positive, got 0"),
    Bad("window as long as the split", char_lm.CharCorpus.batch,
        lambda: corpus().batch("val", 2, len(corpus().val_ids) - 1), ValueError,
        r"seq_len=\d+ is longer than the val split allows"),
    Bad("zero embedding width", char_lm.CharLM, lambda: char_lm.CharLM(10, 8, embed_dim=0), ValueError,
        r"embed_dim must be positive, got 0"),
    Bad("zero layers", char_lm.CharLM, lambda: char_lm.CharLM(10, 8, num_layers=0), ValueError,
        r"num_layers must be positive, got 0"),
    Bad("unknown cell", char_lm.CharLM, lambda: char_lm.CharLM(10, 8, cell="gru"), ValueError,
        r"cell must be 'rnn' or 'lstm', got 'gru'"),
    Bad("id >= vocabulary", char_lm.CharLM.forward, lambda: char_lm.CharLM(10, 8)(torch.tensor([[1, 10]])), ValueError,
        r"ids must hold ids in \[0, 10\), got values in \[1, 10\]"),
    Bad("float ids", char_lm.CharLM.forward, lambda: char_lm.CharLM(10, 8)(torch.ones(1, 3)), TypeError,
        r"ids must be an integer \(int64 or int32\) tensor of token ids, got torch.float32"),
    Bad("empty batch", char_lm.CharLM.forward, lambda: char_lm.CharLM(10, 8)(torch.ones(0, 3, dtype=i64)), ValueError,
        r"ids must hold at least one sequence.*\(0, 3\)"),
    Bad("target >= vocabulary", char_lm.char_lm_loss,
        lambda: char_lm.char_lm_loss(char_lm.CharLM(10, 8), (torch.ones(2, 3, dtype=i64), torch.full((2, 3), 10))),
        ValueError, r"y must hold class ids in \[0, 10\), got values in \[10, 10\]"),
    Bad("float targets", char_lm.char_lm_loss,
        lambda: char_lm.char_lm_loss(char_lm.CharLM(10, 8), (torch.ones(2, 3, dtype=i64), torch.ones(2, 3))), TypeError,
        r"y must be an integer \(int64 or int32\) tensor of class ids, got torch.float32"),
    Bad("negative target", char_lm.char_lm_loss,
        lambda: char_lm.char_lm_loss(char_lm.CharLM(10, 8), (torch.ones(2, 3, dtype=i64), torch.full((2, 3), -100))),
        ValueError, r"y must hold class ids in \[0, 10\), got values in \[-100, -100\]"),
    Bad("targets of another shape", char_lm.char_lm_loss,
        lambda: char_lm.char_lm_loss(char_lm.CharLM(10, 8), (torch.ones(2, 3, dtype=i64), torch.ones(2, 4, dtype=i64))),
        ValueError, r"y must have the shape of x \(2, 3\).*got \(2, 4\)"),
    Bad("batch not a pair", char_lm.char_lm_loss, lambda: char_lm.char_lm_loss(char_lm.CharLM(10, 8), torch.ones(2, 3)),
        TypeError, r"batch must be a pair \(x, y\).*got Tensor"),
    Bad("id >= vocabulary", char_lm.evaluate_nll, lambda: char_lm.evaluate_nll(char_lm.CharLM(10, 8), torch.arange(12)),
        ValueError, r"ids must hold ids in \[0, 10\), got values in \[0, 11\]"),
    Bad("zero seq_len", char_lm.evaluate_nll,
        lambda: char_lm.evaluate_nll(char_lm.CharLM(10, 8), torch.arange(10).repeat(20), seq_len=0), ValueError,
        r"seq_len must be positive, got 0"),
    Bad("too few characters", char_lm.evaluate_nll,
        lambda: char_lm.evaluate_nll(char_lm.CharLM(10, 8), torch.arange(10), batch_size=64), ValueError,
        r"10 characters are too few for batch_size=64"),
    Bad("not a CharLM", char_lm.evaluate_nll, lambda: char_lm.evaluate_nll(nn.Linear(2, 2), torch.arange(10)),
        TypeError, r"model must be a CharLM, got Linear"),
    Bad("empty prompt", char_lm.generate, lambda: char_lm.generate(tiny_char_lm(), corpus(), "", 5), ValueError,
        r"prompt must contain at least one character"),
    Bad("negative length", char_lm.generate, lambda: char_lm.generate(tiny_char_lm(), corpus(), "to", -1), ValueError,
        r"n_chars must be a non-negative int, got -1"),
    Bad("negative temperature", char_lm.generate,
        lambda: char_lm.generate(tiny_char_lm(), corpus(), "to", 3, temperature=-1.0),
        ValueError, r"temperature must be a number ≥ 0 \(0 = greedy\), got -1.0"),
    Bad("a model for another corpus", char_lm.generate,
        lambda: char_lm.generate(char_lm.CharLM(50, 8), corpus(), "to", 3),
        ValueError, r"the corpus has \d+ characters but the model was built for 50"),

    Bad("a GRU", rnn.from_torch, lambda: rnn.from_torch(nn.GRU(2, 3)), TypeError,
        r"from_torch expects nn.RNN, nn.LSTM, nn.RNNCell or nn.LSTMCell, got GRU"),
    Bad("a string", rnn.from_torch, lambda: rnn.from_torch("lstm"), TypeError, r"got str"),
]


ROWS = register(CORE + SCORES + TRANSFORMER + SAMPLING + SEARCH + SEQ2SEQ + RNN)


@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_bad_call(row):
    check_bad_call(row)

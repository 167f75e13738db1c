"""Bad calls to coursekit.attention (core, masks, scores): each must give a clear error.

One row per thing that can go wrong (see ``tests/helpers/bad_inputs.py``): the error type, a regex its
message must match (the argument's name, what was expected, what arrived), raised by coursekit itself.
A ``returns=`` row checks a documented convention instead (a fully masked attention row gives zeros).
"""

from __future__ import annotations

import torch
from helpers.bad_inputs import Bad, bad_call_test, f64, i64, ones_bool, randn
from torch import nn

from coursekit.attention import core, masks, scores

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


ROWS = CORE + SCORES

test_bad_call = bad_call_test(ROWS)

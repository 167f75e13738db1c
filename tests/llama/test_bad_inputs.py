"""Bad calls to coursekit.llama (RoPE, RMSNorm/SwiGLU/grouped-query attention, tiled attention, the model and
its Hugging Face import): each must give a clear error.

One row per thing that can go wrong (see ``tests/helpers/bad_inputs.py``): the error type, a regex its
message must match (the argument's name, what was expected, what arrived), raised by coursekit itself.
Every model here is tiny (width 8, one block); Hugging Face models are built locally with random weights
(nothing is downloaded), and damaged checkpoints are written in a temporary folder.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import torch
from helpers.bad_inputs import NAN, Bad, bad_call_test, f16, f32, f64, i64, randn, tmp
from safetensors.torch import save_file
from torch import nn

from coursekit.attention import KVCache
from coursekit.llama import flash, hf, layers, model, rope

# ==============================================================================================
# coursekit.llama.rope — tables of 8 positions, d_head 4
# ==============================================================================================

def tables(max_len=8, d_head=4):
    return rope.rope_angles(d_head, max_len)


def apply(x=None, cos=None, sin=None, positions=None):
    c, s = tables()
    return rope.apply_rope(randn(1, 2, 3, 4) if x is None else x, c if cos is None else cos,
                           s if sin is None else sin, positions)


ROPE = [
    Bad("float d_head", rope.rope_angles, lambda: rope.rope_angles(4.0, 8),
        TypeError, r"d_head must be an int, got float"),
    Bad("odd d_head", rope.rope_angles, lambda: rope.rope_angles(5, 8), ValueError,
        r"d_head must be even \(RoPE rotates pairs of dimensions\), got 5"),
    Bad("zero max_len", rope.rope_angles, lambda: rope.rope_angles(4, 0),
        ValueError, r"max_len must be positive, got 0"),
    Bad("negative base", rope.rope_angles, lambda: rope.rope_angles(4, 8, -1.0), ValueError,
        r"base must be positive and finite, got -1.0"),
    Bad("a string base", rope.rope_angles, lambda: rope.rope_angles(4, 8, "1e4"), TypeError,
        r"base must be a number, got str"),

    Bad("a list", rope.rotate_half, lambda: rope.rotate_half([1.0, 2.0]),
        TypeError, r"x must be a torch.Tensor, got list"),
    Bad("a scalar", rope.rotate_half, lambda: rope.rotate_half(torch.tensor(1.0)), ValueError,
        r"x must have at least one dimension \(\.\.\., d_head\), got a scalar"),
    Bad("odd last dim", rope.rotate_half, lambda: rope.rotate_half(randn(2, 5)), ValueError,
        r"the last dim of x \(d_head\) must be even.*got 5"),

    Bad("3-D x", rope.apply_rope, lambda: apply(x=randn(2, 3, 4)), ValueError,
        r"x must have 4 dimensions, got shape \(2, 3, 4\)"),
    Bad("integer x", rope.apply_rope, lambda: apply(x=torch.ones(1, 2, 3, 4, dtype=i64)), TypeError,
        r"x must be a floating-point tensor, got torch.int64"),
    Bad("1-D cos table", rope.apply_rope, lambda: apply(cos=randn(4)), ValueError,
        r"cos must have 2 dimensions, got shape \(4,\)"),
    Bad("cos and sin of different lengths", rope.apply_rope, lambda: apply(sin=tables(6)[1]), ValueError,
        r"cos and sin must have the same shape.*got \(8, 4\) and \(6, 4\)"),
    Bad("tables for another d_head", rope.apply_rope, lambda: apply(x=randn(1, 2, 3, 6)), ValueError,
        r"x must have last dim d_head=4 \(that of the cos/sin tables\), got shape \(1, 2, 3, 6\)"),
    Bad("more positions than the tables", rope.apply_rope, lambda: apply(x=randn(1, 2, 9, 4)), ValueError,
        r"x has 9 positions but the RoPE tables stop at max_len=8"),
    Bad("positions beyond max_len", rope.apply_rope, lambda: apply(positions=torch.tensor([6, 7, 8])), ValueError,
        r"positions must lie in \[0, max_len=8\), got values in \[6, 8\]"),
    Bad("negative positions", rope.apply_rope, lambda: apply(positions=torch.tensor([-1, 0, 1])), ValueError,
        r"positions must lie in \[0, max_len=8\), got values in \[-1, 1\]"),
    Bad("float positions", rope.apply_rope, lambda: apply(positions=torch.tensor([0.0, 1.0, 2.0])), TypeError,
        r"positions must have dtype torch.int64 or torch.int32, got torch.float32"),
    Bad("one position too few", rope.apply_rope, lambda: apply(positions=torch.tensor([0, 1])), ValueError,
        r"positions must hold one position per row of x \(T=3\), got shape \(2,\)"),

    Bad("float16 x", rope.rope_interleaved, lambda: rope.rope_interleaved(randn(3, 4, dtype=f16), torch.arange(3)),
        TypeError, r"x must be float32 or float64 \(complex arithmetic\), got torch.float16"),
    Bad("integer x", rope.rope_interleaved, lambda: rope.rope_interleaved(torch.ones(3, 4, dtype=i64), torch.arange(3)),
        TypeError, r"x must be a floating-point tensor, got torch.int64"),
    Bad("1-D x", rope.rope_interleaved, lambda: rope.rope_interleaved(randn(4), torch.arange(1)), ValueError,
        r"x must have shape \(\.\.\., T, d_head\), got \(4,\)"),
    Bad("odd d_head", rope.rope_interleaved, lambda: rope.rope_interleaved(randn(3, 5), torch.arange(3)), ValueError,
        r"the last dim of x \(d_head\) must be even.*got 5"),
    Bad("float positions", rope.rope_interleaved, lambda: rope.rope_interleaved(randn(3, 4), torch.arange(3.0)),
        TypeError, r"positions must have dtype torch.int64 or torch.int32, got torch.float32"),
    Bad("one position too many", rope.rope_interleaved, lambda: rope.rope_interleaved(randn(3, 4), torch.arange(4)),
        ValueError, r"positions must hold one position per row of x \(T=3\), got shape \(4,\)"),
    Bad("zero base", rope.rope_interleaved, lambda: rope.rope_interleaved(randn(3, 4), torch.arange(3), base=0),
        ValueError, r"base must be positive and finite, got 0"),

    Bad("odd d_head", rope.half_split_permutation, lambda: rope.half_split_permutation(7), ValueError,
        r"d_head must be even \(RoPE rotates pairs of dimensions\), got 7"),
    Bad("float d_head", rope.half_split_permutation, lambda: rope.half_split_permutation(8.0), TypeError,
        r"d_head must be an int, got float"),
    Bad("zero d_head", rope.half_split_permutation, lambda: rope.half_split_permutation(0), ValueError,
        r"d_head must be positive, got 0"),
]


# ==============================================================================================
# coursekit.llama.layers — width 8, 2 query heads sharing 1 key/value head (d_head 4)
# ==============================================================================================

def gqa():
    torch.manual_seed(0)
    return layers.GroupedQueryAttention(8, 2, 1)


def gqa_call(x=None, cos=None, sin=None, cache=None):
    c, s = tables()
    return gqa()(randn(1, 3, 8) if x is None else x, c if cos is None else cos, s if sin is None else sin, cache)


def cache_holding(T, B=1, H_kv=1, d=4):
    cache = KVCache()
    cache.append(randn(B, H_kv, T, d), randn(B, H_kv, T, d))
    return cache


LAYERS = [
    Bad("zero width", layers.RMSNorm, lambda: layers.RMSNorm(0), ValueError, r"d_model must be positive, got 0"),
    Bad("float width", layers.RMSNorm, lambda: layers.RMSNorm(8.0), TypeError, r"d_model must be an int, got float"),
    Bad("zero eps", layers.RMSNorm, lambda: layers.RMSNorm(8, eps=0.0), ValueError,
        r"eps must be positive and finite, got 0.0"),
    Bad("NaN eps", layers.RMSNorm, lambda: layers.RMSNorm(8, eps=NAN),
        ValueError, r"eps must be positive and finite, got nan"),
    Bad("integer x", layers.RMSNorm.forward, lambda: layers.RMSNorm(8)(torch.ones(2, 8, dtype=i64)), TypeError,
        r"x must be a floating-point tensor, got torch.int64"),
    Bad("wrong width", layers.RMSNorm.forward, lambda: layers.RMSNorm(8)(randn(2, 6)), ValueError,
        r"x must have last dim d_model=8, got shape \(2, 6\)"),
    Bad("a scalar", layers.RMSNorm.forward, lambda: layers.RMSNorm(8)(torch.tensor(1.0)), ValueError,
        r"x must have last dim d_model=8, got shape \(\)"),
    Bad("a list", layers.RMSNorm.forward, lambda: layers.RMSNorm(8)([1.0] * 8), TypeError,
        r"x must be a torch.Tensor, got list"),

    Bad("zero hidden width", layers.SwiGLU, lambda: layers.SwiGLU(8, 0), ValueError, r"d_ff must be positive, got 0"),
    Bad("float hidden width", layers.SwiGLU, lambda: layers.SwiGLU(8, 12.0),
        TypeError, r"d_ff must be an int, got float"),
    Bad("float width", layers.SwiGLU, lambda: layers.SwiGLU(8.5, 12), TypeError, r"d_model must be an int, got float"),
    Bad("float64 x, float32 weights", layers.SwiGLU.forward, lambda: layers.SwiGLU(8, 12)(randn(2, 8, dtype=f64)),
        TypeError, r"x has dtype torch.float64 but the layer's weights are torch.float32"),
    Bad("wrong width", layers.SwiGLU.forward, lambda: layers.SwiGLU(8, 12)(randn(2, 6)), ValueError,
        r"x must have last dim d_model=8, got shape \(2, 6\)"),
    Bad("a scalar", layers.SwiGLU.forward, lambda: layers.SwiGLU(8, 12)(torch.tensor(1.0)), ValueError,
        r"x must have last dim d_model=8, got shape \(\)"),
    Bad("integer x", layers.SwiGLU.forward, lambda: layers.SwiGLU(8, 12)(torch.ones(2, 8, dtype=i64)), TypeError,
        r"x must be a floating-point tensor, got torch.int64"),

    Bad("3-D keys", layers.repeat_kv, lambda: layers.repeat_kv(randn(2, 3, 4), 2), ValueError,
        r"x must have 4 dimensions, got shape \(2, 3, 4\)"),
    Bad("zero repeats", layers.repeat_kv, lambda: layers.repeat_kv(randn(1, 2, 3, 4), 0), ValueError,
        r"n_rep must be positive, got 0"),
    Bad("float repeats", layers.repeat_kv, lambda: layers.repeat_kv(randn(1, 2, 3, 4), 2.0), TypeError,
        r"n_rep must be an int, got float"),
    Bad("a list", layers.repeat_kv, lambda: layers.repeat_kv([[1.0]], 2),
        TypeError, r"x must be a torch.Tensor, got list"),

    Bad("heads do not divide the width", layers.GroupedQueryAttention, lambda: layers.GroupedQueryAttention(10, 4, 2),
        ValueError, r"d_model=10 must be divisible by n_heads=4"),
    Bad("key/value heads do not divide the heads", layers.GroupedQueryAttention,
        lambda: layers.GroupedQueryAttention(12, 4, 3), ValueError, r"n_heads=4 must be divisible by n_kv_heads=3"),
    Bad("zero key/value heads", layers.GroupedQueryAttention, lambda: layers.GroupedQueryAttention(8, 2, 0), ValueError,
        r"n_kv_heads must be positive, got 0"),
    Bad("float width", layers.GroupedQueryAttention, lambda: layers.GroupedQueryAttention(8.0, 2, 1), TypeError,
        r"d_model must be an int, got float"),
    Bad("2-D x", layers.GroupedQueryAttention.forward, lambda: gqa_call(x=randn(3, 8)), ValueError,
        r"x must have 3 dimensions, got shape \(3, 8\)"),
    Bad("wrong width", layers.GroupedQueryAttention.forward, lambda: gqa_call(x=randn(1, 3, 6)), ValueError,
        r"x must have last dim d_model=8, got shape \(1, 3, 6\)"),
    Bad("float64 x, float32 weights", layers.GroupedQueryAttention.forward,
        lambda: gqa_call(x=randn(1, 3, 8, dtype=f64)),
        TypeError, r"x has dtype torch.float64 but the layer's weights are torch.float32"),
    Bad("integer x", layers.GroupedQueryAttention.forward, lambda: gqa_call(x=torch.ones(1, 3, 8, dtype=i64)),
        TypeError, r"x must be a floating-point tensor, got torch.int64"),
    Bad("a list of caches", layers.GroupedQueryAttention.forward, lambda: gqa_call(cache=[KVCache()]), TypeError,
        r"cache must be a coursekit.attention.KVCache or None, got list"),
    Bad("RoPE tables for another d_head", layers.GroupedQueryAttention.forward,
        lambda: gqa_call(cos=tables(8, 6)[0], sin=tables(8, 6)[1]), ValueError,
        r"x must have last dim d_head=6 \(that of the cos/sin tables\), got shape \(1, 2, 3, 4\)"),
    Bad("new tokens beyond the RoPE tables", layers.GroupedQueryAttention.forward,
        lambda: gqa_call(x=randn(1, 2, 8), cache=cache_holding(7)), ValueError,
        r"positions must lie in \[0, max_len=8\), got values in \[7, 8\]"),
    Bad("a cache of another batch size", layers.GroupedQueryAttention.forward,
        lambda: gqa_call(cache=cache_holding(2, B=2)), ValueError,
        r"cannot append k \(1, 1, 3, 4\) / v \(1, 1, 3, 4\) to a cache holding k \(2, 1, 2, 4\)"),
]


# ==============================================================================================
# coursekit.llama.flash
# ==============================================================================================

def attn_args(q_shape=(2, 3, 4), k_shape=(2, 5, 4), v_shape=None, dtypes=(f32, f32, f32)):
    return (randn(*q_shape, dtype=dtypes[0]), randn(*k_shape, dtype=dtypes[1]),
            randn(*(v_shape or k_shape), dtype=dtypes[2]))


def running(rows=3, d_v=4, b=2, lead=(2,), **changes):
    """The arguments of online_softmax_update for a fresh row state: m, l, acc, scores_tile, v_tile."""
    args = dict(m=torch.full((*lead, rows, 1), float("-inf")), l=torch.zeros(*lead, rows, 1),
                acc=torch.zeros(*lead, rows, d_v), scores_tile=randn(*lead, rows, b), v_tile=randn(*lead, b, d_v))
    return flash.online_softmax_update(**(args | changes))


FLASH = [
    Bad("integer q", flash.naive_attention, lambda: flash.naive_attention(torch.ones(2, 3, 4, dtype=i64),
                                                                          *attn_args()[1:]),
        TypeError, r"q must be a floating-point tensor, got torch.int64"),
    Bad("1-D k", flash.naive_attention, lambda: flash.naive_attention(randn(3, 4), randn(4), randn(4)), ValueError,
        r"k must have shape \(\.\.\., T, d\), got \(4,\)"),
    Bad("no queries", flash.naive_attention, lambda: flash.naive_attention(*attn_args(q_shape=(2, 0, 4))), ValueError,
        r"q must hold at least one position, got shape \(2, 0, 4\)"),
    Bad("mixed dtypes", flash.naive_attention, lambda: flash.naive_attention(*attn_args(dtypes=(f32, f64, f32))),
        TypeError, r"q, k, v must share a dtype, got torch.float32, torch.float64, torch.float32"),
    Bad("different batch dims", flash.naive_attention, lambda: flash.naive_attention(*attn_args(k_shape=(3, 5, 4))),
        ValueError, r"q, k, v must have the same leading \(batch, head\) dims, got q \(2, 3, 4\), k \(3, 5, 4\)"),
    Bad("q and k of different widths", flash.naive_attention,
        lambda: flash.naive_attention(*attn_args(k_shape=(2, 5, 6))), ValueError,
        r"q and k must have the same last dim d_k, got q \(2, 3, 4\) and k \(2, 5, 6\)"),
    Bad("k and v of different lengths", flash.naive_attention,
        lambda: flash.naive_attention(*attn_args(v_shape=(2, 4, 4))), ValueError,
        r"k and v must have the same length T_k, got k \(2, 5, 4\) and v \(2, 4, 4\)"),
    Bad("causal as an int", flash.naive_attention,
        lambda: flash.naive_attention(*attn_args(k_shape=(2, 3, 4)), causal=1), TypeError,
        r"causal must be a bool, got int"),
    Bad("causal with T_q != T_k", flash.naive_attention, lambda: flash.naive_attention(*attn_args(), causal=True),
        ValueError, r"causal=True needs as many queries as keys.*T_q=3, T_k=5"),

    Bad("causal with T_q != T_k", flash.tiled_attention, lambda: flash.tiled_attention(*attn_args(), causal=True),
        ValueError, r"causal=True needs as many queries as keys \(T_q == T_k.*got T_q=3, T_k=5"),
    Bad("zero block size", flash.tiled_attention, lambda: flash.tiled_attention(*attn_args(), block_size=0), ValueError,
        r"block_size must be positive, got 0"),
    Bad("float block size", flash.tiled_attention, lambda: flash.tiled_attention(*attn_args(), block_size=2.0),
        TypeError, r"block_size must be an int, got float"),
    Bad("a list for q", flash.tiled_attention, lambda: flash.tiled_attention([[1.0]], *attn_args()[1:]), TypeError,
        r"q must be a torch.Tensor, got list"),
    Bad("mixed dtypes", flash.tiled_attention, lambda: flash.tiled_attention(*attn_args(dtypes=(f64, f32, f32))),
        TypeError, r"q, k, v must share a dtype, got torch.float64, torch.float32, torch.float32"),
    Bad("causal as a string", flash.tiled_attention,
        lambda: flash.tiled_attention(*attn_args(k_shape=(2, 3, 4)), causal="yes"), TypeError,
        r"causal must be a bool, got str"),

    Bad("m without its trailing 1", flash.online_softmax_update, lambda: running(m=torch.zeros(2, 3)), ValueError,
        r"m and l must both have shape \(\.\.\., T_q, 1\) with acc \(\.\.\., T_q, d_v\) = \(2, 3, 4\), got m \(2, 3\)"),
    Bad("a tile of scores for other rows", flash.online_softmax_update, lambda: running(scores_tile=randn(2, 5, 2)),
        ValueError, r"scores_tile must have shape \(\.\.\., T_q=3, b ≥ 1\).*got \(2, 5, 2\)"),
    Bad("an empty tile of scores", flash.online_softmax_update,
        lambda: running(scores_tile=randn(2, 3, 0), v_tile=randn(2, 0, 4)), ValueError,
        r"scores_tile must have shape \(\.\.\., T_q=3, b ≥ 1\).*got \(2, 3, 0\)"),
    Bad("a tile of values of another length", flash.online_softmax_update, lambda: running(v_tile=randn(2, 3, 4)),
        ValueError, r"v_tile must have shape \(\.\.\., b=2, d_v=4\), got \(2, 3, 4\)"),
    Bad("integer acc", flash.online_softmax_update, lambda: running(acc=torch.zeros(2, 3, 4, dtype=i64)), TypeError,
        r"acc must be a floating-point tensor, got torch.int64"),
    Bad("1-D l", flash.online_softmax_update, lambda: running(l=torch.zeros(3)), ValueError,
        r"l must have shape \(\.\.\., rows, columns\), got \(3,\)"),
    Bad("float64 values, float32 scores", flash.online_softmax_update,
        lambda: running(v_tile=randn(2, 2, 4, dtype=f64)),
        TypeError, r"m, l, acc, scores_tile, v_tile must share a dtype.*torch.float64"),
]


# ==============================================================================================
# coursekit.llama.model — 11 tokens, width 8, 2 heads sharing 1 key/value head, 1 block, context 8
# ==============================================================================================

V, C, CTX = 11, 8, 8


def config(**changes):
    return model.LlamaConfig(**(dict(vocab_size=V, d_model=C, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=12,
                                      max_len=CTX) | changes))


@functools.cache
def tiny_llama():
    torch.manual_seed(0)
    return model.Llama(config()).eval()


def token_ids(B=2, T=3):
    return torch.randint(0, V, (B, T), generator=torch.Generator().manual_seed(0))


def filled_cache(T=2):
    cache = tiny_llama().new_cache()
    tiny_llama()(token_ids(1, T), cache)
    return cache


def block_call(x):
    torch.manual_seed(0)
    c, s = rope.rope_angles(4, CTX)
    return model.LlamaBlock(config())(x, c, s)


MODEL = [
    Bad("float vocabulary", model.LlamaConfig, lambda: config(vocab_size=11.0), TypeError,
        r"vocab_size must be an int, got float"),
    Bad("zero layers", model.LlamaConfig, lambda: config(n_layers=0), ValueError, r"n_layers must be positive, got 0"),
    Bad("float context", model.LlamaConfig, lambda: config(max_len=8.5),
        TypeError, r"max_len must be an int, got float"),
    Bad("heads do not divide the width", model.LlamaConfig, lambda: config(n_heads=3), ValueError,
        r"d_model=8 must be divisible by n_heads=3"),
    Bad("key/value heads do not divide the heads", model.LlamaConfig,
        lambda: config(d_model=12, n_heads=3, n_kv_heads=2),
        ValueError, r"n_heads=3 must be divisible by n_kv_heads=2"),
    Bad("zero key/value heads", model.LlamaConfig, lambda: config(n_kv_heads=0), ValueError,
        r"n_kv_heads must be positive, got 0"),
    Bad("odd d_head", model.LlamaConfig, lambda: config(d_model=6), ValueError,
        r"d_head = d_model / n_heads = 3 must be even \(RoPE rotates pairs\)"),
    Bad("zero RoPE base", model.LlamaConfig, lambda: config(rope_base=0.0), ValueError,
        r"rope_base must be positive and finite, got 0.0"),
    Bad("negative eps", model.LlamaConfig, lambda: config(norm_eps=-1e-6), ValueError,
        r"norm_eps must be positive and finite, got -1e-06"),
    Bad("a string for tie_embeddings", model.LlamaConfig, lambda: config(tie_embeddings="yes"), TypeError,
        r"tie_embeddings must be a bool, got str"),

    Bad("a dict for the config", model.LlamaBlock, lambda: model.LlamaBlock({"d_model": 8}), TypeError,
        r"config must be a coursekit.llama.model.LlamaConfig, got dict"),
    Bad("x of another width", model.LlamaBlock.forward, lambda: block_call(randn(1, 3, 6)), ValueError,
        r"x must have last dim d_model=8, got shape \(1, 3, 6\)"),

    Bad("a dict for the config", model.Llama, lambda: model.Llama({"vocab_size": V}), TypeError,
        r"config must be a coursekit.llama.model.LlamaConfig, got dict"),
    Bad("float ids", model.Llama.forward, lambda: tiny_llama()(token_ids().float()), TypeError,
        r"ids must be an integer \(int64 or int32\) tensor of token ids, got torch.float32"),
    Bad("1-D ids", model.Llama.forward, lambda: tiny_llama()(token_ids()[0]), ValueError,
        r"ids must have 2 dimensions, got shape \(3,\)"),
    Bad("id beyond the vocabulary", model.Llama.forward, lambda: tiny_llama()(torch.tensor([[0, V]])), ValueError,
        r"ids must hold ids in \[0, 11\), got values in \[0, 11\]"),
    Bad("negative id", model.Llama.forward, lambda: tiny_llama()(torch.tensor([[-1, 2]])), ValueError,
        r"ids must hold ids in \[0, 11\), got values in \[-1, 2\]"),
    Bad("no tokens", model.Llama.forward, lambda: tiny_llama()(torch.zeros(2, 0, dtype=i64)), ValueError,
        r"ids must hold at least one token per row, got shape \(2, 0\)"),
    Bad("longer than the context", model.Llama.forward, lambda: tiny_llama()(token_ids(1, CTX + 1)), ValueError,
        r"sequence of 9 tokens \(0 cached \+ 9 new\) is longer than the model's context max_len=8"),
    Bad("cached + new longer than the context", model.Llama.forward,
        lambda: tiny_llama()(token_ids(1, 3), filled_cache(6)), ValueError,
        r"sequence of 9 tokens \(6 cached \+ 3 new\) is longer than the model's context max_len=8"),
    Bad("one KVCache, not a list", model.Llama.forward, lambda: tiny_llama()(token_ids(), KVCache()), TypeError,
        r"cache must be a list of KVCache \(one per block\), got KVCache"),
    Bad("a cache for two blocks", model.Llama.forward, lambda: tiny_llama()(token_ids(), [KVCache(), KVCache()]),
        ValueError, r"cache must hold one KVCache per block \(1\), got 2"),
    Bad("a cache of another batch size", model.Llama.forward, lambda: tiny_llama()(token_ids(2, 1), filled_cache(2)),
        ValueError, r"cannot append k \(2, 1, 1, 4\) / v \(2, 1, 1, 4\) to a cache holding k \(1, 1, 2, 4\)"),

    Bad("negative max_new_tokens", model.Llama.generate, lambda: tiny_llama().generate(token_ids(), -1), ValueError,
        r"max_new_tokens must be an int ≥ 0, got -1"),
    Bad("float max_new_tokens", model.Llama.generate, lambda: tiny_llama().generate(token_ids(), 2.0), TypeError,
        r"max_new_tokens must be an int, got float"),
    Bad("a string for use_cache", model.Llama.generate,
        lambda: tiny_llama().generate(token_ids(), 2, use_cache="yes"), TypeError,
        r"use_cache must be a bool, got str"),
    Bad("an empty prompt", model.Llama.generate, lambda: tiny_llama().generate(torch.zeros(1, 0, dtype=i64), 2),
        ValueError, r"ids must hold at least one token per row \(the prompt\), got shape \(1, 0\)"),
    Bad("prompt + new tokens beyond the context", model.Llama.generate,
        lambda: tiny_llama().generate(token_ids(1, 6), 3), ValueError,
        r"a prompt of 6 tokens \+ max_new_tokens=3 is longer than the model's context max_len=8"),
    Bad("a cache that is not empty", model.Llama.generate,
        lambda: tiny_llama().generate(token_ids(1, 2), 2, cache=filled_cache(2)), ValueError,
        r"the cache must be empty \(new_cache\(\)\), it already holds 2 positions"),
    Bad("a cache with use_cache=False", model.Llama.generate,
        lambda: tiny_llama().generate(token_ids(), 2, use_cache=False, cache=tiny_llama().new_cache()), ValueError,
        r"a cache was given with use_cache=False"),
    Bad("float ids", model.Llama.generate, lambda: tiny_llama().generate(token_ids().float(), 2), TypeError,
        r"ids must be an integer \(int64 or int32\) tensor of token ids, got torch.float32"),

    Bad("a dict for the config", model.kv_cache_bytes_per_token, lambda: model.kv_cache_bytes_per_token({}), TypeError,
        r"config must be a coursekit.llama.model.LlamaConfig, got dict"),
    Bad("zero bytes per value", model.kv_cache_bytes_per_token, lambda: model.kv_cache_bytes_per_token(config(), 0),
        ValueError, r"bytes_per_value must be positive and finite, got 0"),
    Bad("a dtype for bytes per value", model.kv_cache_bytes_per_token,
        lambda: model.kv_cache_bytes_per_token(config(), torch.bfloat16), TypeError,
        r"bytes_per_value must be a number, got dtype"),

    Bad("a dict for the config", model.n_parameters, lambda: model.n_parameters({"d_model": 8}), TypeError,
        r"config must be a coursekit.llama.model.LlamaConfig, got dict"),
    Bad("a model for the config", model.n_parameters, lambda: model.n_parameters(tiny_llama()), TypeError,
        r"config must be a coursekit.llama.model.LlamaConfig, got Llama"),
]


# ==============================================================================================
# coursekit.llama.hf — random-init tiny transformers models, built here (nothing is downloaded)
# ==============================================================================================

def hf_config_dict(**changes) -> dict:
    """A Llama config.json as transformers writes it: width 8, 2 heads, 1 key/value head, one layer."""
    return dict(model_type="llama", architectures=["LlamaForCausalLM"], vocab_size=V, hidden_size=C,
                num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1, intermediate_size=12,
                max_position_embeddings=CTX, rms_norm_eps=1e-6, tie_word_embeddings=False) | changes


def hf_llama(tie=False, cls="LlamaForCausalLM"):
    import transformers

    torch.manual_seed(0)
    kw = hf_config_dict(tie_word_embeddings=tie)
    kw = {k: v for k, v in kw.items() if k not in ("model_type", "architectures")}
    cfg = transformers.LlamaConfig(**kw, bos_token_id=None, eos_token_id=None, pad_token_id=None)
    return getattr(transformers, cls)(cfg).eval()


def hf_gpt2():
    import transformers

    torch.manual_seed(0)
    return transformers.GPT2LMHeadModel(transformers.GPT2Config(vocab_size=V, n_positions=CTX, n_embd=8, n_layer=1,
                                                                n_head=2, bos_token_id=None, eos_token_id=None))


@functools.cache
def hf_llama_state() -> dict:
    return {k: v.detach().clone() for k, v in hf_llama().state_dict().items()}


def hf_dir(state=None, **config_changes) -> Path:
    """A save_pretrained-like folder: config.json + model.safetensors (the tiny Llama's unless ``state``)."""
    folder = tmp()
    (folder / "config.json").write_text(json.dumps(hf_config_dict(**config_changes)))
    save_file(dict(hf_llama_state() if state is None else state), str(folder / "model.safetensors"),
              metadata={"format": "pt"})
    return folder


def hf_state_without(name: str) -> dict:
    return {k: v for k, v in hf_llama_state().items() if k != name}


def untied_head():
    """A model whose config ties the output layer to the embeddings but whose lm_head holds other weights."""
    tied = hf_llama(tie=True)
    with torch.no_grad():
        tied.lm_head.weight = nn.Parameter(tied.lm_head.weight + 1)
    return tied


HF = [
    Bad("an int", hf.config_from_hf, lambda: hf.config_from_hf(42), TypeError,
        r"hf_config must be a transformers LlamaConfig or a dict, got int"),
    Bad("a GPT-2 config", hf.config_from_hf, lambda: hf.config_from_hf(hf_gpt2().config), ValueError,
        r"expected a Llama checkpoint \(model_type 'llama'\), got model_type 'gpt2'"),
    Bad("no model_type", hf.config_from_hf,
        lambda: hf.config_from_hf({k: v for k, v in hf_config_dict().items() if k != "model_type"}), ValueError,
        r"expected a Llama checkpoint \(model_type 'llama'\), got model_type None"),
    Bad("no intermediate_size", hf.config_from_hf,
        lambda: hf.config_from_hf({k: v for k, v in hf_config_dict().items() if k != "intermediate_size"}),
        ValueError, r"the Llama config lacks \['intermediate_size'\]"),
    Bad("rope_scaling (transformers 4.x)", hf.config_from_hf,
        lambda: hf.config_from_hf(hf_config_dict(rope_scaling={"type": "linear", "factor": 2.0})), ValueError,
        r"rope_scaling=\{'type': 'linear', 'factor': 2.0\} is set: the course's Llama implements plain RoPE only"),
    Bad("Llama 3.1 RoPE scaling (transformers 5.x)", hf.config_from_hf,
        lambda: hf.config_from_hf(hf_config_dict(rope_parameters={"rope_type": "llama3", "rope_theta": 5e5})),
        ValueError, r"rope_scaling is set \(rope_parameters rope_type='llama3'\)"),
    Bad("rope_parameters not a dict", hf.config_from_hf,
        lambda: hf.config_from_hf(hf_config_dict(rope_parameters="default")), ValueError,
        r"rope_parameters must be a dict, got 'default'"),
    Bad("attention biases", hf.config_from_hf, lambda: hf.config_from_hf(hf_config_dict(attention_bias=True)),
        ValueError, r"settings the course's Llama does not implement: \{'attention_bias': True\}"),
    Bad("a GELU feed-forward block", hf.config_from_hf, lambda: hf.config_from_hf(hf_config_dict(hidden_act="gelu")),
        ValueError, r"does not implement: \{'hidden_act': 'gelu'\}"),
    Bad("head_dim other than width / heads", hf.config_from_hf,
        lambda: hf.config_from_hf(hf_config_dict(head_dim=8)), ValueError, r"does not implement: \{'head_dim': 8\}"),
    Bad("key/value heads do not divide the heads", hf.config_from_hf,
        lambda: hf.config_from_hf(hf_config_dict(num_key_value_heads=3)), ValueError,
        r"does not make a valid LlamaConfig: n_heads=2 must be divisible by n_kv_heads=3"),
    Bad("a string width", hf.config_from_hf, lambda: hf.config_from_hf(hf_config_dict(hidden_size="8")), ValueError,
        r"does not make a valid LlamaConfig: d_model must be an int, got str"),

    Bad("a dict for the config", hf.hf_weight_names, lambda: hf.hf_weight_names(hf_config_dict()), TypeError,
        r"config must be a coursekit.llama.model.LlamaConfig, got dict"),
    Bad("a transformers config", hf.hf_weight_names, lambda: hf.hf_weight_names(hf_llama().config), TypeError,
        r"config must be a coursekit.llama.model.LlamaConfig, got LlamaConfig"),

    Bad("an int", hf.from_hf, lambda: hf.from_hf(42), TypeError,
        r"source must be a transformers model or a checkpoint directory, got int"),
    Bad("a missing folder", hf.from_hf, lambda: hf.from_hf(tmp() / "gone"), FileNotFoundError,
        r"no checkpoint directory at .*gone: expected a folder holding config.json"),
    Bad("an integer dtype", hf.from_hf, lambda: hf.from_hf(hf_llama(), dtype=torch.long), TypeError,
        r"dtype must be a floating-point torch.dtype \(e.g. torch.float64\), got torch.int64"),
    Bad("a GPT-2 model", hf.from_hf, lambda: hf.from_hf(hf_gpt2()), ValueError,
        r"expected a Llama checkpoint \(model_type 'llama'\), got model_type 'gpt2'"),
    Bad("a Llama without its head", hf.from_hf, lambda: hf.from_hf(hf_llama(cls="LlamaModel")), ValueError,
        r"expected a LlamaForCausalLM \(the language model with its head\), got LlamaModel"),
    Bad("a folder of another head", hf.from_hf,
        lambda: hf.from_hf(hf_dir(architectures=["LlamaForSequenceClassification"])), ValueError,
        r"expected a LlamaForCausalLM .*got LlamaForSequenceClassification"),
    Bad("a missing weight", hf.from_hf,
        lambda: hf.from_hf(hf_dir(hf_state_without("model.layers.0.mlp.up_proj.weight"))),
        ValueError, r"weights missing from the Llama checkpoint: \['model.layers.0.mlp.up_proj.weight'\]"),
    Bad("no output layer in an untied checkpoint", hf.from_hf,
        lambda: hf.from_hf(hf_dir(hf_state_without("lm_head.weight"))), ValueError,
        r"weights missing from the Llama checkpoint: \['lm_head.weight'\]"),
    Bad("tied config, untied output layer", hf.from_hf, lambda: hf.from_hf(untied_head()), ValueError,
        r"tie_word_embeddings is True but lm_head.weight differs from model.embed_tokens.weight"),
    Bad("a config wider than the weights", hf.from_hf, lambda: hf.from_hf(hf_dir(intermediate_size=16)), ValueError,
        r"weight shapes differ from the config \(checkpoint, expected\):.*gate_proj.*\(12, 8\), \(16, 8\)"),
    Bad("weights of a deeper model", hf.from_hf,
        lambda: hf.from_hf(hf_dir(hf_llama_state() | {"model.layers.1.mlp.up_proj.weight": torch.zeros(12, 8)})),
        ValueError, r"unexpected weights in the Llama checkpoint \(config says num_hidden_layers=1\): "
                    r"\['model.layers.1.mlp.up_proj.weight'\]"),
]


ROWS = ROPE + LAYERS + FLASH + MODEL + HF

test_bad_call = bad_call_test(ROWS)

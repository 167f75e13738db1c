"""coursekit.attention.core against F.scaled_dot_product_attention and nn.MultiheadAttention."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from coursekit.attention import (
    KVCache,
    MultiHeadAttention,
    causal_mask,
    combine_masks,
    merge_heads,
    padding_mask,
    scaled_dot_product_attention,
    sliding_window_attention,
    split_heads,
    window_mask,
)

ATOL = 1e-5


def _qkv(B=2, H=3, T_q=5, T_k=7, d_k=4, d_v=6, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(B, H, T_q, d_k, generator=g, dtype=dtype)
    k = torch.randn(B, H, T_k, d_k, generator=g, dtype=dtype)
    v = torch.randn(B, H, T_k, d_v, generator=g, dtype=dtype)
    return q, k, v


# ---------------------------------------------------------------- masks

def test_causal_mask_square_is_lower_triangular():
    m = causal_mask(4)
    assert m.dtype == torch.bool
    assert torch.equal(m, torch.tril(torch.ones(4, 4, dtype=torch.bool)))


def test_causal_mask_rectangular_aligns_to_the_end():
    m = causal_mask(2, 5)  # the last 2 of 5 positions
    assert m.tolist() == [[True, True, True, True, False], [True, True, True, True, True]]
    # one new query attends to all cached keys
    assert causal_mask(1, 6).all()


def test_padding_mask_from_lengths_and_keep_mask():
    m = padding_mask(torch.tensor([3, 1]), T=4)
    assert m.shape == (2, 1, 1, 4)
    assert m[:, 0, 0].tolist() == [[True, True, True, False], [True, False, False, False]]
    keep = torch.tensor([[True, True, False], [True, True, True]])
    assert torch.equal(padding_mask(keep)[:, 0, 0], keep)
    assert padding_mask(torch.tensor([2, 3])).shape == (2, 1, 1, 3)


def test_combined_mask_is_padding_and_causal():
    pad = padding_mask(torch.tensor([2, 3]), T=3)
    both = combine_masks(pad, causal_mask(3))
    assert both.shape == (2, 1, 3, 3)
    assert both[0, 0].tolist() == [[True, False, False], [True, True, False], [True, True, False]]
    assert combine_masks(None, pad) is pad
    assert combine_masks(None, None) is None


def test_bad_mask_arguments():
    with pytest.raises(ValueError, match="T_q must be positive"):
        causal_mask(0)
    with pytest.raises(TypeError, match="integer tensor"):
        padding_mask(torch.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="must be bool"):
        padding_mask(torch.ones(2, 3))
    with pytest.raises(ValueError, match="exceeds T=2"):
        padding_mask(torch.tensor([3, 1]), T=2)
    with pytest.raises(TypeError, match="bool"):
        combine_masks(torch.ones(2, 2))


# ---------------------------------------------------------------- scaled dot-product attention

def test_written_out_formula():
    q, k, v = _qkv(dtype=torch.float64)
    out, w = scaled_dot_product_attention(q, k, v)
    want_w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    assert torch.allclose(w, want_w)
    assert torch.allclose(out, want_w @ v)
    assert torch.allclose(w.sum(-1), torch.ones(w.shape[:-1], dtype=torch.float64))


@pytest.mark.parametrize("mask_kind", ["none", "padding", "causal", "combined", "full"])
@pytest.mark.parametrize("T_q,T_k", [(5, 5), (3, 7), (7, 3)])
@pytest.mark.parametrize("need_weights", [True, False])
def test_equals_torch_sdpa(mask_kind, T_q, T_k, need_weights):
    q, k, v = _qkv(T_q=T_q, T_k=T_k)
    if T_q > T_k and mask_kind in ("causal", "combined"):
        with pytest.raises(ValueError, match="T_q <= T_k"):   # the first queries would have no key
            causal_mask(T_q, T_k)
        return
    g = torch.Generator().manual_seed(1)
    lengths = torch.tensor([T_k, max(1, T_k - 2)])
    masks = {
        "none": lambda: None,
        "padding": lambda: padding_mask(lengths, T=T_k),
        "causal": lambda: causal_mask(T_q, T_k),
        "combined": lambda: combine_masks(padding_mask(lengths, T=T_k), causal_mask(T_q, T_k)),
        "full": lambda: torch.rand(2, 3, T_q, T_k, generator=g) > 0.3,
    }
    mask = masks[mask_kind]()
    if mask is not None:  # rows with no visible key are compared separately below
        mask = mask | (torch.arange(T_k) == 0)
    out, w = scaled_dot_product_attention(q, k, v, mask, need_weights=need_weights)
    want = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert (out - want).abs().max() < ATOL
    assert (w is None) == (not need_weights)


def test_causal_flag_equals_torch_is_causal():
    q, k, v = _qkv(T_q=6, T_k=6)
    want = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    for need in (True, False):
        out, _ = scaled_dot_product_attention(q, k, v, causal=True, need_weights=need)
        assert (out - want).abs().max() < ATOL


@pytest.mark.parametrize("T_q, T_k", [(6, 6), (2, 6), (1, 5)])
def test_fused_causal_shortcut_equals_the_explicit_mask(T_q, T_k):
    """need_weights=False with causal=True uses the kernel's is_causal when T_q == T_k; with a KV cache
    (T_q < T_k) it must keep the bottom-right-aligned causal_mask. Values and gradients agree."""
    q, k, v = (t.requires_grad_() for t in _qkv(T_q=T_q, T_k=T_k))
    fast, _ = scaled_dot_product_attention(q, k, v, causal=True, need_weights=False)
    grads_fast = torch.autograd.grad(fast.pow(2).sum(), (q, k, v))
    slow, _ = scaled_dot_product_attention(q, k, v, causal_mask(T_q, T_k)[None, None], need_weights=True)
    grads_slow = torch.autograd.grad(slow.pow(2).sum(), (q, k, v))
    assert (fast - slow).abs().max() < ATOL
    assert all((a - b).abs().max() < 1e-5 for a, b in zip(grads_fast, grads_slow, strict=True))


def test_weights_are_zero_where_masked_and_rows_sum_to_one():
    q, k, v = _qkv(T_q=4, T_k=4)
    _, w = scaled_dot_product_attention(q, k, v, causal=True)
    assert torch.all(w[..., ~causal_mask(4)] == 0)
    assert torch.allclose(w.sum(-1), torch.ones(w.shape[:-1]))


@pytest.mark.parametrize("need_weights", [True, False])
def test_fully_masked_rows_give_zeros_not_nan(need_weights):
    q, k, v = _qkv(T_q=3, T_k=4)
    q.requires_grad_(True)
    mask = torch.ones(3, 4, dtype=torch.bool)
    mask[1] = False  # query 1 sees nothing
    out, w = scaled_dot_product_attention(q, k, v, mask, need_weights=need_weights)
    assert not torch.isnan(out).any()
    assert torch.all(out[:, :, 1] == 0)
    if need_weights:
        assert torch.all(w[:, :, 1] == 0)
    out.sum().backward()
    assert torch.isfinite(q.grad).all()
    # the other rows are untouched
    want = F.scaled_dot_product_attention(q.detach()[:, :, [0, 2]], k, v)
    assert (out.detach()[:, :, [0, 2]] - want).abs().max() < ATOL


def test_broadcast_leading_dims_multi_query():
    q, k, v = _qkv(H=4)
    k1, v1 = k[:, :1], v[:, :1]  # one key/value head shared by 4 query heads
    out, _ = scaled_dot_product_attention(q, k1, v1)
    fast, _ = scaled_dot_product_attention(q, k1, v1, need_weights=False)
    want = F.scaled_dot_product_attention(q, k1.expand_as(k), v1.expand_as(v))
    assert (out - want).abs().max() < ATOL and (fast - want).abs().max() < ATOL


def test_dropout_in_training_changes_output_but_keeps_weights():
    q, k, v = _qkv()
    torch.manual_seed(0)
    out, w = scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    ref, w_ref = scaled_dot_product_attention(q, k, v)
    assert torch.equal(w, w_ref) and not torch.allclose(out, ref)


def test_bad_inputs_raise_clear_errors():
    q, k, v = _qkv(T_q=3, T_k=5)
    with pytest.raises(ValueError, match="not broadcastable"):
        scaled_dot_product_attention(q, k, v, torch.ones(3, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="not broadcastable"):
        scaled_dot_product_attention(q, k, v, torch.ones(5, dtype=torch.bool))
    with pytest.raises(ValueError, match="not broadcastable"):
        scaled_dot_product_attention(q, k, v, torch.ones(7, 2, 3, 3, 5, dtype=torch.bool))
    with pytest.raises(TypeError, match="bool"):
        scaled_dot_product_attention(q, k, v, torch.zeros(3, 5))
    with pytest.raises(ValueError, match="same last dim d_k"):
        scaled_dot_product_attention(q, k[..., :3], v)
    with pytest.raises(ValueError, match="same length T_k"):
        scaled_dot_product_attention(q, k, v[..., :4, :])
    with pytest.raises(TypeError, match="share a dtype"):
        scaled_dot_product_attention(q, k.double(), v)
    with pytest.raises(TypeError, match="floating-point"):
        scaled_dot_product_attention(q.long(), k, v)
    with pytest.raises(TypeError, match="torch.Tensor"):
        scaled_dot_product_attention(q.tolist(), k, v)
    with pytest.raises(ValueError, match="do not broadcast"):
        scaled_dot_product_attention(q, k[:1, :2], v[:1, :2])
    with pytest.raises(ValueError, match="dropout_p"):
        scaled_dot_product_attention(q, k, v, dropout_p=1.0)


# ---------------------------------------------------------------- heads

def test_split_merge_roundtrip_and_layout():
    x = torch.arange(2 * 3 * 8, dtype=torch.float32).view(2, 3, 8)
    h = split_heads(x, 4)
    assert h.shape == (2, 4, 3, 2)
    assert torch.equal(h[0, 1, 2], x[0, 2, 2:4])  # head 1 holds features 2..3
    assert torch.equal(merge_heads(h), x)
    with pytest.raises(ValueError, match="not divisible"):
        split_heads(x, 3)
    with pytest.raises(ValueError, match="3 dimensions"):
        split_heads(x[0], 2)
    with pytest.raises(ValueError, match="4 dimensions"):
        merge_heads(x)


# ---------------------------------------------------------------- multi-head attention vs nn.MultiheadAttention

def _torch_mha(d_model=12, n_heads=3, bias=True, kdim=None, vdim=None, seed=0):
    torch.manual_seed(seed)
    ref = nn.MultiheadAttention(d_model, n_heads, bias=bias, kdim=kdim, vdim=vdim, batch_first=True)
    with torch.no_grad():  # non-zero biases so that the bias copy is tested too
        for p in ref.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return ref.eval()


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("T_q,T_k", [(5, 5), (4, 7)])
@pytest.mark.parametrize("mask_kind", ["none", "padding", "causal", "combined"])
def test_mha_equals_torch(bias, T_q, T_k, mask_kind):
    ref = _torch_mha(bias=bias)
    ours = MultiHeadAttention.from_torch(ref)
    g = torch.Generator().manual_seed(2)
    x = torch.randn(2, T_q, 12, generator=g)
    mem = torch.randn(2, T_k, 12, generator=g)
    lengths = torch.tensor([T_k, T_k - 2])
    pad = padding_mask(lengths, T=T_k)                 # (B, 1, 1, T_k), True = keep
    causal = causal_mask(T_q, T_k)                     # (T_q, T_k), True = attend
    kw = {}
    mask = None
    if mask_kind in ("padding", "combined"):
        kw["key_padding_mask"] = ~pad[:, 0, 0]         # torch: True = ignore
        mask = pad
    if mask_kind in ("causal", "combined"):
        kw["attn_mask"] = ~causal
        mask = combine_masks(mask, causal)
    want, want_w = ref(x, mem, mem, average_attn_weights=False, **kw)
    for need in (True, False):
        got, w = ours(x, mem, mem, mask=mask, need_weights=need)
        assert (got - want).abs().max() < ATOL
        if need:
            assert w.shape == (2, 3, T_q, T_k)
            assert (w - want_w).abs().max() < ATOL


def test_mha_self_attention_default_key_value_and_causal_flag():
    ref = _torch_mha()
    ours = MultiHeadAttention.from_torch(ref)
    x = torch.randn(3, 6, 12)
    want, _ = ref(x, x, x, attn_mask=~causal_mask(6))
    got, _ = ours(x, causal=True)
    assert (got - want).abs().max() < ATOL


def test_mha_from_torch_kdim_vdim_and_seq_first():
    ref = _torch_mha(kdim=5, vdim=7)
    ours = MultiHeadAttention.from_torch(ref)
    assert ours.k_proj.in_features == 5 and ours.v_proj.in_features == 7
    x, k, v = torch.randn(2, 4, 12), torch.randn(2, 6, 5), torch.randn(2, 6, 7)
    want, _ = ref(x, k, v)
    got, _ = ours(x, k, v)
    assert (got - want).abs().max() < ATOL
    # a sequence-first torch module has the same weights: compare after transposing its inputs
    torch.manual_seed(0)
    ref_sf = nn.MultiheadAttention(12, 4, batch_first=False).eval()
    ours_sf = MultiHeadAttention.from_torch(ref_sf)
    y = torch.randn(2, 5, 12)
    want_sf, _ = ref_sf(y.transpose(0, 1), y.transpose(0, 1), y.transpose(0, 1))
    assert (ours_sf(y)[0] - want_sf.transpose(0, 1)).abs().max() < ATOL


def test_mha_float64_parity_is_tight():
    ref = _torch_mha().double()
    ours = MultiHeadAttention.from_torch(ref)
    assert ours.q_proj.weight.dtype == torch.float64
    x = torch.randn(2, 5, 12, dtype=torch.float64)
    assert (ours(x)[0] - ref(x, x, x)[0]).abs().max() < 1e-12


def test_mha_gradients_match_torch():
    ref = _torch_mha()
    ours = MultiHeadAttention.from_torch(ref)
    x = torch.randn(2, 5, 12)
    ref(x, x, x)[0].square().sum().backward()
    ours(x)[0].square().sum().backward()
    assert (ours.out_proj.weight.grad - ref.out_proj.weight.grad).abs().max() < 1e-4
    assert (ours.q_proj.weight.grad - ref.in_proj_weight.grad[:12]).abs().max() < 1e-4


def test_mha_per_batch_3d_mask():
    ours = MultiHeadAttention(8, 2)
    x = torch.randn(2, 3, 8)
    m = torch.ones(2, 3, 3, dtype=torch.bool)
    m[1, :, 2] = False
    _, w = ours(x, mask=m, need_weights=True)
    assert torch.all(w[1, :, :, 2] == 0) and torch.all(w[0, :, :, 2] > 0)


def test_mha_bad_inputs():
    mha = MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match="divisible"):
        MultiHeadAttention(10, 3)
    with pytest.raises(ValueError, match="d_model=8"):
        mha(torch.randn(2, 3, 6))
    with pytest.raises(ValueError, match="3 dimensions"):
        mha(torch.randn(3, 8))
    with pytest.raises(ValueError, match="not broadcastable"):
        mha(torch.randn(2, 3, 8), mask=torch.ones(2, 1, 1, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="batch size"):
        mha(torch.randn(2, 3, 8), torch.randn(3, 3, 8))
    with pytest.raises(TypeError, match="KVCache"):
        mha(torch.randn(2, 3, 8), cache={})
    with pytest.raises(TypeError, match="nn.MultiheadAttention"):
        MultiHeadAttention.from_torch(nn.Linear(2, 2))
    with pytest.raises(ValueError, match="add_bias_kv"):
        MultiHeadAttention.from_torch(nn.MultiheadAttention(8, 2, add_bias_kv=True))


# ---------------------------------------------------------------- KV cache

def test_cached_causal_steps_equal_full_recomputation():
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4).eval()
    x = torch.randn(2, 9, 16)
    full, _ = mha(x, causal=True)
    cache = KVCache()
    steps = [mha(x[:, t:t + 1], causal=True, cache=cache)[0] for t in range(9)]
    assert cache.length == 9
    assert (torch.cat(steps, dim=1) - full).abs().max() < ATOL
    # a prompt of 4 tokens in one call, then one token at a time
    cache = KVCache()
    parts = [mha(x[:, :4], causal=True, cache=cache)[0]]
    parts += [mha(x[:, t:t + 1], causal=True, cache=cache)[0] for t in range(4, 9)]
    assert (torch.cat(parts, dim=1) - full).abs().max() < ATOL


def test_static_cache_for_cross_attention_projects_memory_once():
    torch.manual_seed(0)
    mha = MultiHeadAttention(8, 2).eval()
    mem, y = torch.randn(2, 5, 8), torch.randn(2, 3, 8)
    full, _ = mha(y, mem)
    cache = KVCache(static=True)
    steps = [mha(y[:, t:t + 1], mem, cache=cache)[0] for t in range(3)]
    assert cache.length == 5  # filled once, not appended to
    assert (torch.cat(steps, 1) - full).abs().max() < ATOL


def test_kv_cache_append_reorder_and_errors():
    c = KVCache()
    assert c.length == 0
    k, v = torch.randn(2, 1, 3, 4), torch.randn(2, 1, 3, 5)
    c.append(k, v)
    k_all, v_all = c.append(k[:, :, :1], v[:, :, :1])
    assert c.length == 4 and k_all.shape == (2, 1, 4, 4) and v_all.shape == (2, 1, 4, 5)
    c.reorder(torch.tensor([1, 1]))
    assert torch.equal(c.k[0], c.k[1])
    with pytest.raises(ValueError, match="cannot append"):
        c.append(torch.randn(3, 1, 1, 4), torch.randn(3, 1, 1, 5))
    with pytest.raises(ValueError, match="same"):
        c.append(torch.randn(2, 1, 2, 4), torch.randn(2, 1, 1, 5))
    c.reset()
    assert c.length == 0


# ---------------------------------------------------------------- windowed attention

def test_window_mask():
    m = window_mask(5, 1)
    assert m.sum(1).tolist() == [2, 3, 3, 3, 2]
    assert torch.equal(window_mask(5, 4), torch.ones(5, 5, dtype=torch.bool))
    assert torch.equal(window_mask(5, 4, causal=True), causal_mask(5))
    assert torch.equal(window_mask(4, 0), torch.eye(4, dtype=torch.bool))
    with pytest.raises(ValueError, match="window"):
        window_mask(4, -1)


@pytest.mark.parametrize("window", [0, 1, 3, 20])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("T", [9, 10])
def test_sliding_window_attention_equals_masked_attention(window, causal, T):
    q, k, v = _qkv(T_q=T, T_k=T, d_v=5)
    want, _ = scaled_dot_product_attention(q, k, v, window_mask(T, window, causal=causal))
    got = sliding_window_attention(q, k, v, window, causal=causal)
    assert got.shape == want.shape and (got - want).abs().max() < ATOL


def test_sliding_window_attention_bad_inputs():
    q, k, v = _qkv(T_q=4, T_k=6)
    with pytest.raises(ValueError, match="same"):
        sliding_window_attention(q, k, v, 2)
    q, k, v = _qkv(T_q=4, T_k=4)
    with pytest.raises(ValueError, match="window"):
        sliding_window_attention(q, k, v, -2)

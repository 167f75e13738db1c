"""coursekit.llama: parity with Hugging Face's Llama (logits, greedy generation, cache, layers), RoPE's relative
property and its two layouts, tiled (FlashAttention) attention against SDPA, the KV-cache and parameter arithmetic,
and every refusal. All Hugging Face models are random-init and built here (nothing is downloaded)."""

import json

import pytest
import torch
import torch.nn.functional as F

from coursekit import runtime
from coursekit.attention import KVCache, MultiHeadAttention
from coursekit.llama.flash import naive_attention, online_softmax_update, tiled_attention
from coursekit.llama.hf import config_from_hf, from_hf, hf_weight_names
from coursekit.llama.layers import GroupedQueryAttention, RMSNorm, SwiGLU, repeat_kv
from coursekit.llama.model import Llama, LlamaConfig, kv_cache_bytes_per_token, n_parameters
from coursekit.llama.rope import apply_rope, half_split_permutation, rope_angles, rope_interleaved, rotate_half
from coursekit.training.loop import count_parameters

transformers = pytest.importorskip("transformers")
hf_llama = pytest.importorskip("transformers.models.llama.modeling_llama")

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
V, C, H, L, D_FF, MAX_LEN = 97, 48, 6, 2, 80, 40          # odd small sizes: d_head = 8


def hf_config(n_kv_heads=2, tie=False, **overrides):
    kw = dict(vocab_size=V, hidden_size=C, num_attention_heads=H, num_key_value_heads=n_kv_heads,
              num_hidden_layers=L, intermediate_size=D_FF, max_position_embeddings=MAX_LEN, rms_norm_eps=1e-5,
              tie_word_embeddings=tie, bos_token_id=None, eos_token_id=None, pad_token_id=None)
    return transformers.LlamaConfig(**(kw | overrides))


def tiny_hf(seed=0, n_kv_heads=2, tie=False, **overrides):
    """A random LlamaForCausalLM whose weights are far from their init (gains ≠ 1, larger matrices), so that a
    swapped norm or a missing gain would show."""
    torch.manual_seed(seed)
    model = transformers.LlamaForCausalLM(hf_config(n_kv_heads, tie, **overrides)).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.uniform_(0.5, 1.5)
            else:
                p.normal_(0.0, 0.08)
    return model


def ours_config(**overrides):
    return LlamaConfig(**(dict(vocab_size=V, d_model=C, n_layers=L, n_heads=H, n_kv_heads=2, d_ff=D_FF,
                                max_len=MAX_LEN) | overrides))


def cache_keys(out, layer):
    """Layer ``layer``'s cached keys in a Hugging Face output (the attribute moved between versions)."""
    cache = getattr(out, "cache", None) or out.past_key_values
    return cache.layers[layer].keys if hasattr(cache, "layers") else cache.key_cache[layer]


@pytest.fixture(params=DEVICES)
def device(request):
    with runtime.exact_matmul():                              # TF32 off on a GPU; nothing changes on a CPU
        yield torch.device(request.param)


# ================================================================================================
# The model against Hugging Face
# ================================================================================================

@pytest.mark.parametrize("tie", [False, True], ids=["untied", "tied"])
@pytest.mark.parametrize("n_kv_heads", [6, 2, 1], ids=["mha", "gqa", "mqa"])
def test_logits_equal_transformers(device, tmp_path, n_kv_heads, tie):
    hf = tiny_hf(1, n_kv_heads, tie)
    hf.save_pretrained(tmp_path)
    x = torch.randint(0, V, (3, MAX_LEN))
    with torch.no_grad():
        want = hf.to(device)(x.to(device)).logits
        for source in (hf, tmp_path):
            ours = from_hf(source).to(device)
            assert ours.config.n_kv_heads == n_kv_heads and ours.config.tie_embeddings == tie
            assert (ours.lm_head.weight is ours.embed.weight) == tie
            got = ours(x.to(device))
            assert got.shape == want.shape == (3, MAX_LEN, V)
            assert (got - want).abs().max().item() < 1e-5


@pytest.mark.parametrize("n_kv_heads", [6, 2, 1])
def test_greedy_continuation_identical_to_transformers(n_kv_heads):
    hf = tiny_hf(2, n_kv_heads)
    ours = from_hf(hf)
    prompt = torch.randint(0, V, (2, 5))
    want = hf.generate(prompt, max_new_tokens=8, do_sample=False, pad_token_id=0,
                       attention_mask=torch.ones_like(prompt))
    assert want.shape == (2, 13)
    assert torch.equal(ours.generate(prompt, 8), want)
    assert torch.equal(ours.generate(prompt, 8, use_cache=False), want)


def test_cached_steps_equal_the_full_forward_and_transformers_cache():
    hf = tiny_hf(3, n_kv_heads=2)
    ours = from_hf(hf)
    x = torch.randint(0, V, (2, 12))
    with torch.no_grad():
        full = ours(x)
        cache = ours.new_cache()
        steps = [ours(x[:, :5], cache), ours(x[:, 5:8], cache)]          # a prompt, then 3 tokens after a cache
        steps += [ours(x[:, t:t + 1], cache) for t in range(8, 12)]      # then one at a time
        out = hf(x, use_cache=True)
    torch.testing.assert_close(torch.cat(steps, dim=1), full, atol=1e-5, rtol=0)
    for i, layer_cache in enumerate(cache):                              # rotated keys, H_kv heads, as HF stores
        assert layer_cache.k.shape == (2, 2, 12, C // H)
        torch.testing.assert_close(layer_cache.k, cache_keys(out, i), atol=1e-5, rtol=0)


def test_generate_with_cache_equals_recomputing_and_keeps_the_mode():
    torch.manual_seed(4)
    model = Llama(ours_config(n_kv_heads=3)).train()
    prompt = torch.randint(0, V, (3, 4))
    a = model.generate(prompt, 30)
    assert model.training and a.shape == (3, 34) and torch.equal(a[:, :4], prompt)
    assert torch.equal(a, model.generate(prompt, 30, use_cache=False))
    assert torch.equal(model.generate(prompt, 0), prompt)


def test_float64_import_and_dtype_argument():
    hf = tiny_hf(5).double()
    ours = from_hf(hf)
    assert ours.embed.weight.dtype == torch.float64
    x = torch.randint(0, V, (2, 16))
    with torch.no_grad():   # HF's RMSNorm drops to float32 even for float64 inputs, ours does not: 1e-6, not 1e-12
        torch.testing.assert_close(ours(x), hf(x).logits, atol=1e-6, rtol=0)
    assert from_hf(hf, dtype=torch.float32).embed.weight.dtype == torch.float32


# ================================================================================================
# Rotary position embeddings
# ================================================================================================

def test_rope_tables_are_transformers_tables():
    cos, sin = rope_angles(8, MAX_LEN, 500.0)
    assert cos.shape == sin.shape == (MAX_LEN, 8) and cos.dtype == torch.float32
    rotary = hf_llama.LlamaRotaryEmbedding(hf_config(rope_theta=500.0))
    hf_cos, hf_sin = rotary(torch.zeros(1), torch.arange(MAX_LEN)[None])
    assert torch.equal(hf_cos[0], cos) and torch.equal(hf_sin[0], sin)
    x = torch.randn(2, 3, 7, 8)
    positions = torch.tensor([0, 3, 5, 9, 10, 20, 39])
    want, _ = hf_llama.apply_rotary_pos_emb(x, x, hf_cos[:, positions], hf_sin[:, positions])
    assert torch.equal(apply_rope(x, cos, sin, positions), want)
    assert torch.equal(rotate_half(rotate_half(x)), -x)


def test_rope_score_depends_only_on_the_offset():
    torch.manual_seed(6)
    d = 16
    cos, sin = rope_angles(d, 64)
    q, k = torch.randn(1, 1, 1, d, dtype=torch.float64), torch.randn(1, 1, 1, d, dtype=torch.float64)

    def score(m, n):
        qm = apply_rope(q, cos, sin, torch.tensor([m]))
        kn = apply_rope(k, cos, sin, torch.tensor([n]))
        return (qm * kn).sum().item()

    for shift in (0, 1, 3, 17, -5):
        scores = [score(n + shift, n) for n in (5, 12, 30, 40)]
        assert max(scores) - min(scores) < 1e-5, (shift, scores)
    assert abs(score(3, 0) - score(0, 3)) > 1e-3                     # but the direction of the offset matters
    rotated = apply_rope(q.expand(1, 1, 5, d), cos, sin, torch.tensor([0, 1, 7, 20, 63]))
    torch.testing.assert_close(rotated.norm(dim=-1), q.norm(dim=-1).expand(1, 1, 5))   # a rotation keeps lengths


def test_half_split_equals_the_papers_interleaved_form_up_to_a_permutation():
    torch.manual_seed(7)
    d = 8
    p = half_split_permutation(d)
    assert p.tolist() == [0, 2, 4, 6, 1, 3, 5, 7]
    x = torch.randn(2, 3, MAX_LEN, d)
    positions = torch.arange(MAX_LEN)
    cos, sin = rope_angles(d, MAX_LEN)
    paper = rope_interleaved(x, positions)
    torch.testing.assert_close(apply_rope(x[..., p], cos, sin), paper[..., p], atol=1e-5, rtol=0)
    assert (apply_rope(x, cos, sin) - paper).abs().max() > 0.1       # without the permutation they differ
    q, k = torch.randn(1, 1, MAX_LEN, d), torch.randn(1, 1, MAX_LEN, d)   # and scores agree, permutation or not
    torch.testing.assert_close(apply_rope(q[..., p], cos, sin) @ apply_rope(k[..., p], cos, sin).mT,
                               rope_interleaved(q, positions) @ rope_interleaved(k, positions).mT,
                               atol=1e-4, rtol=0)
    x64 = x.double()                                                 # float64: agreement to float32's angles
    torch.testing.assert_close(rope_interleaved(x64, positions)[..., p],
                               apply_rope(x64[..., p], cos, sin), atol=1e-5, rtol=0)


def test_rope_refuses_positions_beyond_max_len_and_bad_shapes():
    cos, sin = rope_angles(8, 10)
    x = torch.randn(1, 2, 4, 8)
    with pytest.raises(ValueError, match=r"positions must lie in \[0, max_len=10\).*\[7, 10\]"):
        apply_rope(x, cos, sin, torch.tensor([7, 8, 9, 10]))
    with pytest.raises(ValueError, match="max_len=10"):
        apply_rope(torch.randn(1, 2, 11, 8), cos, sin)
    with pytest.raises(ValueError, match="4 dimensions"):
        apply_rope(torch.randn(2, 4, 8), cos, sin)
    with pytest.raises(ValueError, match="last dim d_head=8"):
        apply_rope(torch.randn(1, 2, 4, 6), cos, sin)
    with pytest.raises(TypeError, match="floating-point"):
        apply_rope(torch.ones(1, 2, 4, 8, dtype=torch.long), cos, sin)
    with pytest.raises(ValueError, match="one position per row"):
        apply_rope(x, cos, sin, torch.arange(3))
    with pytest.raises(TypeError, match="int64 or torch.int32"):
        apply_rope(x, cos, sin, torch.arange(4.0))
    with pytest.raises(ValueError, match="same shape"):
        apply_rope(x, cos, sin[:5])
    with pytest.raises(ValueError, match="even"):
        rope_angles(7, 10)
    with pytest.raises(TypeError, match="max_len must be an int"):
        rope_angles(8, 10.0)
    with pytest.raises(ValueError, match="base must be positive"):
        rope_angles(8, 10, base=0.0)
    with pytest.raises(TypeError, match="float32 or float64"):
        rope_interleaved(x.half(), torch.arange(4))
    with pytest.raises(ValueError, match="must be even.*got 7"):
        rotate_half(torch.randn(2, 7))


# ================================================================================================
# The layers against Hugging Face's
# ================================================================================================

def test_rmsnorm_equals_llama_rmsnorm():
    torch.manual_seed(8)
    ref = hf_llama.LlamaRMSNorm(C, eps=1e-5)
    ours = RMSNorm(C, eps=1e-5)
    with torch.no_grad():
        ref.weight.uniform_(0.5, 1.5)
        ours.weight.copy_(ref.weight)
    x = torch.randn(2, 5, C) * 3
    assert torch.equal(ours(x), ref(x))
    ref16, ours16, x16 = ref.to(torch.bfloat16), ours.to(torch.bfloat16), x.to(torch.bfloat16)
    assert torch.equal(ours16(x16), ref16(x16))                      # same order of casts: same rounding
    x64, g = x.double(), ours.weight.double()
    want = x64 / torch.sqrt(x64.pow(2).mean(-1, keepdim=True) + 1e-5) * g   # Eq. (4), ε inside the root
    torch.testing.assert_close(ours.double()(x64), want, atol=1e-12, rtol=0)


def test_swiglu_equals_llama_mlp_and_repeat_kv_equals_transformers():
    torch.manual_seed(9)
    ref = hf_llama.LlamaMLP(hf_config())
    ours = SwiGLU(C, D_FF)
    ours.load_state_dict(ref.state_dict())                           # same names: gate_proj, up_proj, down_proj
    x = torch.randn(2, 5, C)
    torch.testing.assert_close(ours(x), ref(x), atol=1e-6, rtol=0)
    kv = torch.randn(2, 3, 5, 8)
    for n_rep in (1, 2, 4):
        assert torch.equal(repeat_kv(kv, n_rep), hf_llama.repeat_kv(kv, n_rep))
        assert torch.equal(repeat_kv(kv, n_rep), kv.repeat_interleave(n_rep, dim=1))


def test_gqa_with_as_many_kv_heads_is_multi_head_attention():
    torch.manual_seed(10)
    gqa = GroupedQueryAttention(C, H, n_kv_heads=H)
    mha = MultiHeadAttention(C, H, bias=False)
    mha.q_proj.weight, mha.k_proj.weight, mha.v_proj.weight, mha.out_proj.weight = (
        gqa.q_proj.weight, gqa.k_proj.weight, gqa.v_proj.weight, gqa.o_proj.weight)
    x = torch.randn(2, 9, C)
    no_turn = torch.ones(MAX_LEN, C // H), torch.zeros(MAX_LEN, C // H)     # RoPE by angle 0: no positions
    want, _ = mha(x, causal=True)
    torch.testing.assert_close(gqa(x, *no_turn), want, atol=1e-6, rtol=0)


def test_gqa_is_multi_head_attention_with_shared_key_value_heads():
    torch.manual_seed(11)
    gqa = GroupedQueryAttention(C, H, n_kv_heads=2)
    mha = GroupedQueryAttention(C, H, n_kv_heads=H)
    d = C // H
    with torch.no_grad():
        mha.q_proj.weight.copy_(gqa.q_proj.weight)
        mha.o_proj.weight.copy_(gqa.o_proj.weight)
        for name in ("k_proj", "v_proj"):                            # head g of GQA serves query heads 3g … 3g+2
            w = getattr(gqa, name).weight.view(2, d, C)
            getattr(mha, name).weight.copy_(w.repeat_interleave(3, dim=0).reshape(H * d, C))
    cos, sin = rope_angles(d, MAX_LEN)
    x = torch.randn(2, 9, C)
    torch.testing.assert_close(gqa(x, cos, sin), mha(x, cos, sin), atol=1e-6, rtol=0)
    cache = KVCache()
    gqa(x, cos, sin, cache)
    assert cache.k.shape == (2, 2, 9, d)                             # the cache keeps H_kv = 2 heads, not 6


# ================================================================================================
# FlashAttention: tiles and the online softmax
# ================================================================================================

@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("causal", [False, True])
def test_tiled_attention_equals_sdpa(causal, dtype):
    torch.manual_seed(12)
    tol = 1e-6 if dtype == torch.float32 else 1e-12
    for T in (1, 63, 64, 130):
        q, k, v = (torch.randn(2, 3, T, 16, dtype=dtype) for _ in range(3))
        want = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        for block_size in (16, 64):
            got = tiled_attention(q, k, v, causal=causal, block_size=block_size)
            assert (got - want).abs().max().item() < tol, (T, block_size)
        assert (naive_attention(q, k, v, causal) - want).abs().max().item() < tol


def test_tiled_attention_with_more_keys_than_queries():
    torch.manual_seed(13)
    q, k, v = torch.randn(2, 37, 16), torch.randn(2, 130, 16), torch.randn(2, 130, 24)   # d_v ≠ d too
    want = F.scaled_dot_product_attention(q, k, v)
    assert (tiled_attention(q, k, v, block_size=16) - want).abs().max().item() < 1e-6
    with pytest.raises(ValueError, match="T_q == T_k.*T_q=37, T_k=130"):
        tiled_attention(q, k, v, causal=True)
    with pytest.raises(ValueError, match="T_q == T_k"):
        naive_attention(q, k, v, causal=True)


def test_online_softmax_update_tile_by_tile():
    torch.manual_seed(14)
    q, k, v = (torch.randn(2, 3, 50, 8) for _ in range(3))
    S = q @ k.mT / 8 ** 0.5
    S = S.masked_fill(torch.ones(50, 50, dtype=torch.bool).triu(1), float("-inf"))   # causal
    m = torch.full((2, 3, 50, 1), float("-inf"))
    l = torch.zeros(2, 3, 50, 1)  # noqa: E741 - the paper's ℓ
    acc = torch.zeros(2, 3, 50, 8)
    for j in range(0, 50, 16):     # row 0 sees only -inf after the first tile: the guard keeps it NaN-free
        m, l, acc = online_softmax_update(m, l, acc, S[..., j:j + 16], v[..., j:j + 16, :])  # noqa: E741
        assert not acc.isnan().any()
    want = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert (acc / l - want).abs().max().item() < 1e-6
    torch.testing.assert_close(m, S.amax(-1, keepdim=True))           # the running max is the row max
    with pytest.raises(ValueError, match="v_tile must have shape"):
        online_softmax_update(m, l, acc, S[..., :16], v[..., :15, :])
    with pytest.raises(ValueError, match="m and l"):
        online_softmax_update(m[..., 0], l, acc, S[..., :16], v[..., :16, :])


def test_tiled_attention_refuses_bad_inputs():
    q = torch.randn(2, 5, 8)
    with pytest.raises(ValueError, match="shape \\(..., T, d\\)"):
        tiled_attention(torch.randn(8), q, q)
    with pytest.raises(ValueError, match="same last dim"):
        tiled_attention(q, torch.randn(2, 5, 4), q)
    with pytest.raises(ValueError, match="same length T_k"):
        tiled_attention(q, q, torch.randn(2, 6, 8))
    with pytest.raises(ValueError, match="leading"):
        tiled_attention(q, torch.randn(3, 5, 8), torch.randn(3, 5, 8))
    with pytest.raises(TypeError, match="share a dtype"):
        tiled_attention(q, q.double(), q)
    with pytest.raises(TypeError, match="floating-point"):
        tiled_attention(q.long(), q.long(), q.long())
    with pytest.raises(ValueError, match="block_size must be positive"):
        tiled_attention(q, q, q, block_size=0)
    with pytest.raises(TypeError, match="block_size must be an int"):
        tiled_attention(q, q, q, block_size=16.0)
    with pytest.raises(TypeError, match="causal must be a bool"):
        tiled_attention(q, q, q, causal=1)


# ================================================================================================
# Cache and parameter arithmetic
# ================================================================================================

@pytest.mark.parametrize("n_kv_heads", [6, 2, 1])
def test_kv_cache_bytes_per_token_is_what_the_cache_holds(n_kv_heads):
    torch.manual_seed(15)
    config = ours_config(n_kv_heads=n_kv_heads)
    for dtype, nbytes in ((torch.float32, 4), (torch.bfloat16, 2)):
        model = Llama(config).to(dtype)
        cache = model.new_cache()
        model.generate(torch.randint(0, V, (3, 5)), 6, cache=cache)
        tokens = 3 * cache[0].length                                   # batch × positions (5 + 6 − 1 fed)
        held = sum(c.k.numel() * c.k.element_size() + c.v.numel() * c.v.element_size() for c in cache)
        assert cache[0].length == 10 and cache[0].k.shape[1] == n_kv_heads
        assert held / tokens == kv_cache_bytes_per_token(config, nbytes) == 2 * L * n_kv_heads * (C // H) * nbytes
    llama2_70b = LlamaConfig(vocab_size=32000, d_model=8192, n_layers=80, n_heads=64, n_kv_heads=8, d_ff=28672,
                             max_len=4096)
    assert kv_cache_bytes_per_token(llama2_70b) == 320 * 1024        # 2.5 MiB with 64 key/value heads


def test_parameter_count():
    for tie in (False, True):
        for n_kv_heads in (6, 2, 1):
            config = ours_config(n_kv_heads=n_kv_heads, tie_embeddings=tie)
            assert n_parameters(config) == count_parameters(Llama(config))
    llama2_7b = LlamaConfig(vocab_size=32000, d_model=4096, n_layers=32, n_heads=32, n_kv_heads=32, d_ff=11008,
                            max_len=4096)
    assert n_parameters(llama2_7b) == 6_738_415_616                  # the "7B" of Llama 2
    hf = tiny_hf(16, tie=False)
    assert n_parameters(config_from_hf(hf.config)) == sum(p.numel() for p in hf.parameters())


# ================================================================================================
# Refusals: configs, inputs, checkpoints
# ================================================================================================

@pytest.mark.parametrize("overrides, error, message", [
    (dict(d_model=50), ValueError, "d_model=50 must be divisible by n_heads=6"),
    (dict(n_kv_heads=4), ValueError, "n_heads=6 must be divisible by n_kv_heads=4"),
    (dict(n_layers=0), ValueError, "n_layers must be positive, got 0"),
    (dict(d_model=48.0), TypeError, "d_model must be an int, got float"),
    (dict(d_ff=80.5), TypeError, "d_ff must be an int"),
    (dict(n_kv_heads=True), TypeError, "n_kv_heads must be an int, got bool"),
    (dict(d_model=42, n_heads=6), ValueError, "d_head = d_model / n_heads = 7 must be even"),
    (dict(rope_base=-1.0), ValueError, "rope_base must be positive"),
    (dict(norm_eps=0.0), ValueError, "norm_eps must be positive"),
    (dict(tie_embeddings="yes"), TypeError, "tie_embeddings must be a bool"),
])
def test_bad_config_values(overrides, error, message):
    with pytest.raises(error, match=message):
        ours_config(**overrides)


def test_config_is_frozen():
    config = ours_config()
    with pytest.raises(AttributeError):
        config.n_layers = 3


def test_forward_and_generate_refuse_bad_inputs():
    model = Llama(ours_config()).eval()
    with pytest.raises(TypeError, match="integer"):
        model(torch.zeros(1, 3))
    with pytest.raises(ValueError, match="2 dimensions"):
        model(torch.zeros(3, dtype=torch.long))
    with pytest.raises(ValueError, match="2 dimensions"):
        model(torch.zeros(1, 2, 3, dtype=torch.long))
    with pytest.raises(ValueError, match=r"\[0, 97\)"):
        model(torch.tensor([[1, 97]]))
    with pytest.raises(ValueError, match="41 tokens.*max_len=40"):
        model(torch.zeros(1, 41, dtype=torch.long))
    cache = model.new_cache()
    model(torch.zeros(1, 38, dtype=torch.long), cache)
    with pytest.raises(ValueError, match="38 cached \\+ 3 new.*max_len=40"):
        model(torch.zeros(1, 3, dtype=torch.long), cache)
    with pytest.raises(ValueError, match="one KVCache per block"):
        model(torch.zeros(1, 3, dtype=torch.long), cache[:1])
    with pytest.raises(ValueError, match="at least one token"):
        model(torch.zeros(1, 0, dtype=torch.long))
    prompt = torch.zeros(1, 35, dtype=torch.long)
    with pytest.raises(ValueError, match="35 tokens \\+ max_new_tokens=6.*max_len=40"):
        model.generate(prompt, 6)
    with pytest.raises(ValueError, match="max_new_tokens"):
        model.generate(prompt, -1)
    with pytest.raises(TypeError, match="max_new_tokens must be an int"):
        model.generate(prompt, 2.0)
    with pytest.raises(ValueError, match="must be empty"):
        model.generate(prompt[:, :2], 2, cache=cache)
    with pytest.raises(ValueError, match="use_cache=False"):
        model.generate(prompt[:, :2], 2, use_cache=False, cache=model.new_cache())
    with pytest.raises(TypeError, match="d_model|dtype"):
        model.blocks[0].attn(torch.randn(1, 3, C, dtype=torch.float64), model.rope_cos, model.rope_sin)
    with pytest.raises(TypeError, match="config must be a coursekit.llama.model.LlamaConfig"):
        Llama(hf_config())


@pytest.mark.parametrize("overrides, message", [
    (dict(attention_bias=True), "attention_bias': True"),
    (dict(mlp_bias=True), "mlp_bias': True"),
    (dict(hidden_act="gelu"), "hidden_act': 'gelu'"),
    (dict(head_dim=16), "head_dim': 16"),
    (dict(rope_scaling={"rope_type": "linear", "factor": 2.0}), "rope_scaling.*'linear'"),
])
def test_unsupported_llama_settings_are_refused(overrides, message):
    config = hf_config(**overrides)
    with pytest.raises(ValueError, match=message):
        config_from_hf(config)
    with pytest.raises(ValueError, match=message):
        config_from_hf(config.to_dict())


def test_config_from_hf_reads_both_generations_of_config_json(tmp_path):
    hf = tiny_hf(17, rope_theta=500.0)
    hf.save_pretrained(tmp_path)
    new_style = json.loads((tmp_path / "config.json").read_text())
    assert config_from_hf(new_style) == ours_config(rope_base=500.0, norm_eps=1e-5)
    old_style = {k: v for k, v in new_style.items() if k not in ("rope_parameters", "head_dim", "mlp_bias")}
    old_style |= {"rope_theta": 500.0, "rope_scaling": None}          # transformers 4.x wrote these
    assert config_from_hf(old_style) == config_from_hf(new_style)
    (tmp_path / "config.json").write_text(json.dumps(old_style))
    x = torch.randint(0, V, (2, 10))
    with torch.no_grad():
        assert (from_hf(tmp_path)(x) - hf(x).logits).abs().max().item() < 1e-5
    with pytest.raises(ValueError, match="rope_scaling=\\{'type': 'linear', 'factor': 2.0\\} is set"):
        config_from_hf(old_style | {"rope_scaling": {"type": "linear", "factor": 2.0}})
    with pytest.raises(ValueError, match="lacks \\['intermediate_size'\\]"):
        config_from_hf({k: v for k, v in new_style.items() if k != "intermediate_size"})
    with pytest.raises(ValueError, match="not make a valid LlamaConfig.*n_kv_heads=4"):
        config_from_hf(new_style | {"num_key_value_heads": 4})
    with pytest.raises(TypeError, match="LlamaConfig or a dict"):
        config_from_hf(42)


def test_other_families_and_heads_are_refused(tmp_path):
    gpt2 = transformers.GPT2LMHeadModel(transformers.GPT2Config(vocab_size=V, n_positions=16, n_embd=16, n_layer=1,
                                                                n_head=2))
    gpt2.save_pretrained(tmp_path / "gpt2")
    for source in (gpt2, tmp_path / "gpt2"):
        with pytest.raises(ValueError, match="model_type 'llama'.*'gpt2'"):
            from_hf(source)
    base = transformers.LlamaModel(hf_config())
    base.save_pretrained(tmp_path / "base")
    for source in (base, tmp_path / "base"):
        with pytest.raises(ValueError, match="expected a LlamaForCausalLM.*got LlamaModel"):
            from_hf(source)
    with pytest.raises(TypeError, match="source must be"):
        from_hf(42)
    with pytest.raises(FileNotFoundError, match="no checkpoint directory"):
        from_hf(tmp_path / "absent")
    with pytest.raises(TypeError, match="dtype"):
        from_hf(tmp_path / "base", dtype=torch.long)


def test_truncated_or_mismatched_checkpoints_are_refused(tmp_path):
    from safetensors.torch import load_file, save_file

    hf = tiny_hf(18)
    good = tmp_path / "good"
    hf.save_pretrained(good)
    state = load_file(str(good / "model.safetensors"))
    assert set(state) == set(hf_weight_names(ours_config(norm_eps=1e-5)))
    damages = {
        "no_up_proj": ({k: v for k, v in state.items() if k != "model.layers.1.mlp.up_proj.weight"}, {},
                       "missing.*model.layers.1.mlp.up_proj.weight"),
        "no_lm_head": ({k: v for k, v in state.items() if k != "lm_head.weight"}, {}, "missing.*lm_head.weight"),
        "short_k_proj": (state | {"model.layers.0.self_attn.k_proj.weight": state[
            "model.layers.0.self_attn.k_proj.weight"][:8]}, {}, "shapes differ.*k_proj.*\\(8, 48\\), \\(16, 48\\)"),
        "wider_config": (state, {"intermediate_size": 96}, "shapes differ.*gate_proj.*\\(80, 48\\), \\(96, 48\\)"),
        "deeper_config": (state, {"num_hidden_layers": 3}, "missing.*model.layers.2"),
        "shallower_config": (state, {"num_hidden_layers": 1}, "unexpected weights.*model.layers.1"),
        "more_kv_heads": (state, {"num_key_value_heads": 6}, "shapes differ.*k_proj.*\\(16, 48\\), \\(48, 48\\)"),
    }
    config = json.loads((good / "config.json").read_text())
    for name, (tensors, config_change, message) in damages.items():
        d = tmp_path / name
        d.mkdir()
        (d / "config.json").write_text(json.dumps(config | config_change))
        save_file(tensors, str(d / "model.safetensors"), metadata={"format": "pt"})
        with pytest.raises(ValueError, match=message):
            from_hf(d)
    tied = tiny_hf(19, tie=True)
    with torch.no_grad():
        tied.lm_head.weight = torch.nn.Parameter(tied.lm_head.weight + 1)   # a tied config with an untied head
    with pytest.raises(ValueError, match="lm_head.weight differs"):
        from_hf(tied)

"""coursekit.transformer.model(_layers) against torch.nn.Transformer (copied weights), caches, positional encodings."""

import math

import pytest
import torch
from torch import nn

from coursekit.attention import causal_mask, padding_mask
from coursekit.transformer.layers import (
    Decoder,
    DecoderLayer,
    Encoder,
    EncoderLayer,
    FeedForward,
    LearnedPositions,
    SinusoidalPositions,
    sinusoidal_positions,
)
from coursekit.transformer.model import Transformer, TransformerConfig

ATOL = 1e-5
D, H, FF = 16, 4, 24


def _perturb(module: nn.Module, seed: int = 0) -> nn.Module:
    """Random non-trivial values for every parameter (LayerNorm gains/biases and biases included)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.add_(0.2 * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return module


def _torch_transformer(norm_first: bool, activation: str = "relu", dtype=torch.float32, n_layers=2):
    torch.manual_seed(0)
    ref = nn.Transformer(D, H, n_layers, n_layers, FF, dropout=0.0, activation=activation, batch_first=True,
                         norm_first=norm_first)
    return _perturb(ref).to(dtype).eval()


def _inputs(dtype=torch.float32):
    g = torch.Generator().manual_seed(1)
    src = torch.randn(3, 7, D, generator=g, dtype=dtype)
    tgt = torch.randn(3, 5, D, generator=g, dtype=dtype)
    src_keep = torch.arange(7) < torch.tensor([[7], [4], [6]])  # (B, S) True = real
    tgt_keep = torch.arange(5) < torch.tensor([[5], [5], [3]])
    return src, tgt, src_keep, tgt_keep


# ---------------------------------------------------------------- parity with nn.Transformer

@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_stacks_equal_torch_transformer_with_masks(norm_first, activation):
    ref = _torch_transformer(norm_first, activation)
    enc, dec = Encoder.from_torch(ref.encoder), Decoder.from_torch(ref.decoder)
    src, tgt, src_keep, tgt_keep = _inputs()
    T = tgt.shape[1]
    want = ref(src, tgt, tgt_mask=~causal_mask(T), src_key_padding_mask=~src_keep,
               tgt_key_padding_mask=~tgt_keep, memory_key_padding_mask=~src_keep)
    memory, _ = enc(src, padding_mask(src_keep))
    got, _ = dec(tgt, memory, self_mask=padding_mask(tgt_keep), memory_mask=padding_mask(src_keep), causal=True)
    real = tgt_keep  # outputs at padded target positions are not defined the same way by both
    diff = (got - want)[real].abs().max().item()
    assert diff < ATOL, diff
    # the encoder alone (real positions)
    want_mem = ref.encoder(src, src_key_padding_mask=~src_keep)
    assert (memory - want_mem)[src_keep].abs().max() < ATOL


@pytest.mark.parametrize("norm_first", [False, True])
def test_stacks_equal_torch_in_float64_without_masks(norm_first):
    ref = _torch_transformer(norm_first, dtype=torch.float64)
    enc, dec = Encoder.from_torch(ref.encoder), Decoder.from_torch(ref.decoder)
    src, tgt, _, _ = _inputs(torch.float64)
    want = ref(src, tgt, tgt_mask=~causal_mask(tgt.shape[1]))
    got, _ = dec(tgt, enc(src)[0])
    assert (got - want).abs().max() < 1e-12


def test_layers_equal_torch_layers_sequence_first_and_gelu():
    torch.manual_seed(0)
    enc_ref = _perturb(nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, activation="gelu")).eval()
    dec_ref = _perturb(nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, norm_first=True)).eval()
    x, y = torch.randn(2, 6, D), torch.randn(2, 4, D)
    want_x = enc_ref(x.transpose(0, 1)).transpose(0, 1)
    got_x, _ = EncoderLayer.from_torch(enc_ref)(x)
    assert (got_x - want_x).abs().max() < ATOL
    want_y = dec_ref(y.transpose(0, 1), x.transpose(0, 1), tgt_mask=~causal_mask(4)).transpose(0, 1)
    got_y, _ = DecoderLayer.from_torch(dec_ref)(y, x)
    assert (got_y - want_y).abs().max() < ATOL


@pytest.mark.parametrize("norm_first", [False, True])
def test_full_model_from_torch_equals_reference_on_token_ids(norm_first):
    ref = _torch_transformer(norm_first)
    model = Transformer.from_torch(ref, src_vocab_size=11, tgt_vocab_size=13, max_len=32).eval()
    assert model.config.norm_first is norm_first and model.config.final_norm
    g = torch.Generator().manual_seed(3)
    src = torch.randint(1, 11, (2, 6), generator=g)
    tgt = torch.randint(1, 13, (2, 4), generator=g)
    src[1, 4:] = 0  # padding (pad id 0)
    src_keep = src != 0
    logits = model(src, tgt)
    emb = lambda ids, table: table(ids) * math.sqrt(D) + sinusoidal_positions(ids.shape[1], D)  # noqa: E731
    want = ref(emb(src, model.src_embed), emb(tgt, model.tgt_embed), tgt_mask=~causal_mask(4),
               src_key_padding_mask=~src_keep, memory_key_padding_mask=~src_keep)
    want_logits = want @ model.tgt_embed.weight.T  # tied output projection
    assert logits.shape == (2, 4, 13)
    assert (logits - want_logits).abs().max() < ATOL


# ---------------------------------------------------------------- caching

def _small_model(norm_first=False, positions="sinusoidal"):
    torch.manual_seed(0)
    cfg = TransformerConfig(src_vocab_size=20, tgt_vocab_size=17, d_model=D, n_heads=H, n_encoder_layers=2,
                            n_decoder_layers=2, d_ff=FF, dropout=0.1, norm_first=norm_first, max_len=40,
                            positions=positions)
    return _perturb(Transformer(cfg)).eval()


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("positions", ["sinusoidal", "learned"])
def test_cached_decoding_equals_full_recomputation(norm_first, positions):
    model = _small_model(norm_first, positions)
    g = torch.Generator().manual_seed(5)
    src = torch.randint(4, 20, (3, 8), generator=g)
    src[2, 5:] = 0
    tgt = torch.randint(4, 17, (3, 9), generator=g)
    with torch.no_grad():
        full = torch.log_softmax(model(src, tgt), -1)
        state = model.start(src)
        steps = [model.step(tgt[:, t], state) for t in range(tgt.shape[1])]
    assert state.cache.length == 9
    assert (torch.stack(steps, 1) - full).abs().max() < ATOL


def test_greedy_equals_argmax_of_full_recomputation():
    model = _small_model()
    src = torch.randint(4, 20, (2, 6), generator=torch.Generator().manual_seed(7))
    out = model.translate(src, max_len=7).tokens
    # reproduce without the cache: re-run the whole prefix each step
    for b in range(2):
        prefix = [2]
        for _ in range(7):
            nxt = int(model(src[b:b + 1], torch.tensor([prefix]))[0, -1].argmax())
            if nxt == 3:
                break
            prefix.append(nxt)
        assert out[b] == prefix[1:]


def test_beam_search_with_cache_equals_uncached_beam_search():
    from coursekit.decoding import beam_search

    model = _small_model()
    src = torch.randint(4, 20, (2, 6), generator=torch.Generator().manual_seed(9))
    got = model.translate(src, beam_size=3, max_len=6)

    def uncached(prefix, src_rows):  # re-run the whole prefix every step
        return torch.log_softmax(model(src_rows, prefix)[:, -1], -1), src_rows

    with torch.no_grad():
        want = beam_search(uncached, src, batch_size=2, bos_id=2, eos_id=3, max_len=6, beam_size=3)
    assert got.tokens == want.tokens
    assert torch.allclose(got.scores, want.scores, atol=1e-4)
    assert model.translate(src, beam_size=1, max_len=6).tokens == model.translate(src, max_len=6).tokens


def test_loss_ignores_padding_and_supports_label_smoothing():
    from types import SimpleNamespace

    model = _small_model()
    src = torch.tensor([[5, 6, 3, 0], [7, 3, 0, 0]])
    tgt_in = torch.tensor([[2, 8, 9], [2, 10, 0]])
    tgt_out = torch.tensor([[8, 9, 3], [10, 3, 0]])
    batch = SimpleNamespace(src=src, src_mask=src != 0, tgt_in=tgt_in, tgt_out=tgt_out, tgt_mask=tgt_in != 0)
    logits = model(src, tgt_in)
    real = tgt_out != 0
    want = torch.nn.functional.cross_entropy(logits[real], tgt_out[real])
    assert torch.allclose(model.loss(batch), want, atol=1e-6)
    log_p = torch.log_softmax(logits[real], -1)
    smoothed = 0.9 * want - 0.1 * log_p.mean(-1).mean()  # (1-ε)·CE + ε·(cross-entropy with the uniform)
    assert torch.allclose(model.loss(batch, label_smoothing=0.1), smoothed, atol=1e-6)


def test_state_reorder_for_beams():
    model = _small_model()
    src = torch.randint(4, 20, (2, 5), generator=torch.Generator().manual_seed(8))
    state = model.start(src)
    model.step(torch.tensor([2, 2]), state)
    state.reorder(torch.tensor([1, 1]))
    lp = model.step(torch.tensor([5, 5]), state)
    assert torch.allclose(lp[0], lp[1])
    with torch.no_grad():
        want = torch.log_softmax(model(src[1:2], torch.tensor([[2, 5]])), -1)[0, -1]
    assert (lp[0] - want).abs().max() < ATOL


def test_gpt_block_without_cross_attention_and_cache():
    torch.manual_seed(0)
    dec = _perturb(Decoder(2, D, H, FF, activation="gelu_tanh", norm_first=True, cross_attention=False)).eval()
    assert dec.norm is not None and dec.layers[0].cross_attn is None
    x = torch.randn(2, 6, D)
    full, _ = dec(x)
    cache = dec.new_cache()
    steps = torch.cat([dec(x[:, t:t + 1], cache=cache)[0] for t in range(6)], 1)
    assert (steps - full).abs().max() < ATOL
    with pytest.raises(ValueError, match="no cross-attention"):
        dec(x, x)


def test_attention_maps_shapes_and_rows():
    model = _small_model()
    src = torch.randint(4, 20, (2, 6))
    src[1, 4:] = 0
    tgt = torch.randint(4, 17, (2, 5))
    maps = model.attention_maps(src, tgt)
    assert maps["encoder"].shape == (2, 2, H, 6, 6)
    assert maps["decoder_self"].shape == (2, 2, H, 5, 5)
    assert maps["cross"].shape == (2, 2, H, 5, 6)
    assert torch.all(maps["cross"][:, 1, :, :, 4:] == 0)  # padding never attended
    assert torch.all(maps["decoder_self"][..., ~causal_mask(5)] == 0)
    assert torch.allclose(maps["cross"].sum(-1), torch.ones(2, 2, H, 5))


# ---------------------------------------------------------------- positional encodings

def test_sinusoid_formula_values():
    pe = sinusoidal_positions(50, 8)
    assert pe.shape == (50, 8)
    pos, i = 7, 2
    assert math.isclose(pe[pos, 2 * i].item(), math.sin(pos / 10000 ** (2 * i / 8)), abs_tol=1e-7)
    assert math.isclose(pe[pos, 2 * i + 1].item(), math.cos(pos / 10000 ** (2 * i / 8)), abs_tol=1e-7)
    assert torch.equal(pe[0, 0::2], torch.zeros(4)) and torch.equal(pe[0, 1::2], torch.ones(4))
    assert sinusoidal_positions(3, 5).shape == (3, 5)  # odd widths: the last cos column is dropped
    # PE(pos + k) is a rotation of PE(pos): the dot product depends only on the offset k
    big = sinusoidal_positions(60, 64)
    assert torch.allclose(big[10] @ big[13], big[30] @ big[33], atol=1e-5)


def test_position_modules_and_context_limit():
    sp, lp = SinusoidalPositions(10, 6), LearnedPositions(10, 6)
    assert torch.equal(sp(3, offset=2), sinusoidal_positions(10, 6)[2:5])
    assert lp(4).shape == (4, 6) and sum(p.numel() for p in sp.parameters()) == 0
    with pytest.raises(ValueError, match="max_len=10"):
        sp(5, offset=6)
    with pytest.raises(ValueError, match="max_len=10"):
        lp(11)


def test_feed_forward_is_position_wise():
    ff = FeedForward(6, 10, "gelu_tanh")
    x = torch.randn(2, 5, 6)
    assert torch.allclose(ff(x)[:, 3], ff(x[:, 3:4])[:, 0], atol=1e-6)


# ---------------------------------------------------------------- bad inputs

def test_bad_inputs():
    with pytest.raises(ValueError, match="activation"):
        FeedForward(4, 8, "tanh")
    with pytest.raises(ValueError, match="divisible"):
        TransformerConfig(10, 10, d_model=10, n_heads=3)
    with pytest.raises(ValueError, match="positions"):
        TransformerConfig(10, 10, positions="rotary")
    with pytest.raises(TypeError, match="TransformerConfig"):
        Transformer({"d_model": 8})
    model = _small_model()
    with pytest.raises(ValueError, match=r"ids in \[0, 20\)"):
        model(torch.tensor([[1, 25]]), torch.tensor([[1]]))
    with pytest.raises(ValueError, match="same B"):
        model(torch.ones(2, 3, dtype=torch.long), torch.ones(3, 3, dtype=torch.long))
    with pytest.raises(ValueError, match="max_len=40"):
        model(torch.ones(1, 41, dtype=torch.long), torch.ones(1, 3, dtype=torch.long))
    with pytest.raises(ValueError, match="shape of the ids"):
        model(torch.ones(1, 4, dtype=torch.long), torch.ones(1, 3, dtype=torch.long),
              src_keep=torch.ones(1, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match="memory"):
        DecoderLayer(D, H, FF)(torch.randn(1, 2, D))
    with pytest.raises(TypeError, match="nn.Transformer"):
        Transformer.from_torch(nn.Linear(2, 2), 5, 5)
    with pytest.raises(TypeError, match="TransformerEncoderLayer"):
        EncoderLayer.from_torch(nn.TransformerDecoderLayer(8, 2))

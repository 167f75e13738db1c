"""Bad calls to coursekit.transformer (layers, the encoder–decoder model, the Hugging Face checkpoint
reader): each must give a clear error.

One row per thing that can go wrong (see ``tests/helpers/bad_inputs.py``): the error type, a regex its
message must match (the argument's name, what was expected, what arrived), raised by coursekit itself.
"""

from __future__ import annotations

import torch
from helpers.bad_inputs import Bad, bad_call_test, f64, i64, ones_bool, randn, tmp
from helpers.tiny_models import damaged, hf_bert_bin_dir, hf_bert_dir, with_config_json
from torch import nn

from coursekit.transformer import hf
from coursekit.transformer import layers as transformer_layers
from coursekit.transformer import model as transformer
from coursekit.translation import TranslationBatch

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
# coursekit.transformer.hf
# ==============================================================================================

HF = [
    Bad("a number", hf.read_checkpoint, lambda: hf.read_checkpoint(3.5), TypeError,
        r"source must be a transformers model or a checkpoint directory, got float"),
    Bad("a module without config", hf.read_checkpoint, lambda: hf.read_checkpoint(nn.Linear(2, 2)), TypeError,
        r"source must be a transformers model or a checkpoint directory, got Linear"),
    Bad("a missing directory", hf.read_checkpoint, lambda: hf.read_checkpoint(tmp() / "gone"), FileNotFoundError,
        r"no checkpoint directory at"),
    Bad("a file instead of a directory", hf.read_checkpoint,
        lambda: hf.read_checkpoint(hf_bert_dir() / "model.safetensors"), FileNotFoundError,
        r"no checkpoint directory at .*model.safetensors"),
    Bad("no config.json", hf.read_checkpoint, lambda: hf.read_checkpoint(tmp()), ValueError, r"no config.json there"),
    Bad("config.json cut short", hf.read_checkpoint,
        lambda: hf.read_checkpoint(with_config_json('{"hidden_size": 8, "vocab')), ValueError,
        r"config.json is not valid JSON"),
    Bad("config.json holding a string", hf.read_checkpoint, lambda: hf.read_checkpoint(with_config_json('"bert"')),
        ValueError, r"config.json must hold a JSON object \(a dict of settings\), got str"),
    Bad("no weights", hf.read_checkpoint,
        lambda: hf.read_checkpoint(damaged(hf_bert_dir(), "model.safetensors", "drop")), ValueError,
        r"neither model.safetensors nor pytorch_model.bin"),
    Bad("truncated model.safetensors", hf.read_checkpoint,
        lambda: hf.read_checkpoint(damaged(hf_bert_dir(), "model.safetensors", "cut")), ValueError,
        r"model.safetensors is truncated or not a safetensors file"),
    Bad("empty model.safetensors", hf.read_checkpoint,
        lambda: hf.read_checkpoint(damaged(hf_bert_dir(), "model.safetensors", "junk")), ValueError,
        r"model.safetensors is truncated or not a safetensors file"),
    Bad("truncated pytorch_model.bin", hf.read_checkpoint, lambda: hf.read_checkpoint(hf_bert_bin_dir()), ValueError,
        r"pytorch_model.bin is truncated or not a PyTorch state dict"),
]


ROWS = TRANSFORMER + HF

test_bad_call = bad_call_test(ROWS)

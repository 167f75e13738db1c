"""Bad calls to coursekit.gpt — the model and its character-level recipe, in-context learning, induction
heads and prompting: each must give a clear error.

One row per thing that can go wrong (see ``tests/helpers/bad_inputs.py``): the error type, a regex its
message must match (the argument's name, what was expected, what arrived), raised by coursekit itself.
A ``returns=`` row checks a documented convention instead (e.g. fine-tuning on zero demonstrations returns
an untouched copy). Every model here is tiny and every row fails before any training starts; checkpoints
are written in a temporary folder, never in ``data/``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path

import pytest
import torch
from helpers.bad_inputs import NAN, Bad, bad_call_test, f32, gen, i64, tmp
from safetensors.torch import load_file, save_file

from coursekit.attention import KVCache
from coursekit.gpt import char as char_gpt
from coursekit.gpt import icl, icl_training, induction
from coursekit.gpt import model as gpt
from coursekit.gpt import prompting as P
from coursekit.training.loop import save_checkpoint

# ==============================================================================================
# coursekit.gpt.model and coursekit.gpt.char — a GPT with 11 tokens, a context of 8, 2 layers of width 8
# ==============================================================================================

V, CTX = 11, 8


def gpt_config(**kw):
    return gpt.GPTConfig(**({"vocab_size": V, "max_len": CTX, "n_layers": 2, "n_heads": 2, "d_model": 8} | kw))


@functools.cache
def tiny_gpt():
    torch.manual_seed(0)
    return gpt.GPT(gpt_config()).eval()


def nan_gpt():
    """A GPT whose final LayerNorm gain is NaN: every logit is NaN."""
    model = gpt.GPT(gpt_config()).eval()
    with torch.no_grad():
        model.ln_f.weight.fill_(NAN)
    return model


def token_ids(B=2, T=4, dtype=i64):
    return torch.randint(0, V, (B, T), generator=gen()).to(dtype)


def forward(idx=None, targets=None, **kw):
    return tiny_gpt()(token_ids() if idx is None else idx, targets, **kw)


def generate(idx=None, n=2, **kw):
    return tiny_gpt().generate(token_ids() if idx is None else idx, n, **kw)


def classifier(**kw):
    return gpt.GPTClassifier(tiny_gpt(), **({"n_classes": 3} | kw))


def tiny_hf(**overrides):
    import transformers

    torch.manual_seed(0)
    kw = dict(vocab_size=V, n_positions=CTX, n_embd=8, n_layer=2, n_head=2, bos_token_id=None, eos_token_id=None)
    return transformers.GPT2LMHeadModel(transformers.GPT2Config(**(kw | overrides))).eval()


def hf_gpt2_dir(**overrides) -> Path:
    folder = tmp()
    tiny_hf(**overrides).save_pretrained(folder)
    return folder


def hf_dir_without(name: str) -> Path:
    folder = hf_gpt2_dir()
    state = load_file(str(folder / "model.safetensors"))
    save_file({k: v for k, v in state.items() if k != name}, str(folder / "model.safetensors"),
              metadata={"format": "pt"})
    return folder


def hf_dir_with_config(**changes) -> Path:
    folder = hf_gpt2_dir()
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(config | changes))
    return folder


def hf_bert_dir() -> Path:
    import transformers

    folder = tmp()
    config = transformers.BertConfig(vocab_size=V, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=16)
    transformers.BertModel(config).save_pretrained(folder)
    return folder


def hf_state(**changes) -> dict:
    return tiny_hf().state_dict() | changes


def char_gpt_dir(extra=None, report=True, config=None) -> Path:
    """A directory like data/gpt: model.safetensors (+ the character table) and report.json; ``config`` (a dict)
    replaces the model's own in the metadata."""
    folder = tmp()
    model = gpt.GPT(gpt_config())
    save_checkpoint(folder / "model.safetensors", model, model.config if config is None else config, extra=extra)
    if report:
        (folder / "report.json").write_text("{}")
    return folder


STREAM = torch.arange(50) % V                     # a stream of token ids, as char_data returns


def train_config(**kw):
    return char_gpt.TrainConfig(**kw)


GPT = [
    Bad("zero vocabulary", gpt.GPTConfig, lambda: gpt_config(vocab_size=0), ValueError,
        r"vocab_size must be positive, got 0"),
    Bad("float width", gpt.GPTConfig, lambda: gpt_config(d_model=8.0), TypeError, r"d_model must be an int, got float"),
    Bad("a bool for the layer count", gpt.GPTConfig, lambda: gpt_config(n_layers=True), TypeError,
        r"n_layers must be an int, got bool"),
    Bad("negative context", gpt.GPTConfig, lambda: gpt_config(max_len=-8), ValueError,
        r"max_len must be positive, got -8"),
    Bad("heads do not divide the width", gpt.GPTConfig, lambda: gpt_config(d_model=10, n_heads=3), ValueError,
        r"d_model=10 must be divisible by n_heads=3"),
    Bad("dropout of 1", gpt.GPTConfig, lambda: gpt_config(dropout=1.0), ValueError,
        r"dropout must lie in \[0, 1\), got 1.0"),
    Bad("a string for dropout", gpt.GPTConfig, lambda: gpt_config(dropout="0.1"), TypeError,
        r"dropout must be a number, got str"),
    Bad("zero layer_norm_eps", gpt.GPTConfig, lambda: gpt_config(layer_norm_eps=0.0), ValueError,
        r"layer_norm_eps must be positive and finite, got 0.0"),
    Bad("NaN layer_norm_eps", gpt.GPTConfig, lambda: gpt_config(layer_norm_eps=NAN), ValueError,
        r"layer_norm_eps must be positive and finite, got nan"),
    Bad("a string for bias", gpt.GPTConfig, lambda: gpt_config(bias="yes"), TypeError,
        r"bias must be a bool, got str"),

    Bad("a dict for the config", gpt.GPT, lambda: gpt.GPT({"vocab_size": V}), TypeError,
        r"config must be a GPTConfig, got dict"),
    Bad("float ids", gpt.GPT.forward, lambda: forward(token_ids(dtype=f32)), TypeError,
        r"idx must be an integer \(int64 or int32\) tensor of token ids, got torch.float32"),
    Bad("uint8 ids", gpt.GPT.forward, lambda: forward(token_ids(dtype=torch.uint8)), TypeError,
        r"idx must be an integer .* got torch.uint8"),
    Bad("int16 ids", gpt.GPT.forward, lambda: forward(token_ids(dtype=torch.int16)), TypeError,
        r"idx must be an integer .* got torch.int16"),
    Bad("id = vocab_size", gpt.GPT.forward, lambda: forward(torch.tensor([[1, V]])), ValueError,
        r"idx must hold ids in \[0, 11\), got values in \[1, 11\]"),
    Bad("negative id", gpt.GPT.forward, lambda: forward(torch.tensor([[-1, 2]])), ValueError,
        r"idx must hold ids in \[0, 11\), got values in \[-1, 2\]"),
    Bad("1-D ids", gpt.GPT.forward, lambda: forward(torch.tensor([1, 2])), ValueError,
        r"idx must have 2 dimensions, got shape \(2,\)"),
    Bad("a list of ids", gpt.GPT.forward, lambda: forward([[1, 2]]), TypeError,
        r"idx must be a torch.Tensor, got list"),
    Bad("no tokens", gpt.GPT.forward, lambda: forward(torch.zeros(2, 0, dtype=i64)), ValueError,
        r"idx must hold at least one token per row, got shape \(2, 0\)"),
    Bad("longer than the context", gpt.GPT.forward, lambda: forward(torch.zeros(1, CTX + 1, dtype=i64)), ValueError,
        r"sequence of 9 tokens .* longer than the model's context max_len=8"),
    Bad("float targets", gpt.GPT.forward, lambda: forward(targets=token_ids(dtype=f32)), TypeError,
        r"targets must be an integer \(int64 or int32\) tensor of class ids, got torch.float32"),
    Bad("int16 targets", gpt.GPT.forward, lambda: forward(targets=token_ids(dtype=torch.int16)), TypeError,
        r"targets must be an integer .* got torch.int16"),
    Bad("target = vocab_size", gpt.GPT.forward, lambda: forward(targets=torch.full((2, 4), V)), ValueError,
        r"targets must hold class ids in \[0, 11\) \(or -1 to ignore a position\), got values in \[11, 11\]"),
    Bad("target -100 (the ignore index is -1)", gpt.GPT.forward,
        lambda: forward(targets=torch.full((2, 4), -100)), ValueError,
        r"targets must hold class ids in \[0, 11\) \(or -1 to ignore a position\), got values in \[-100, -100\]"),
    Bad("targets of another shape", gpt.GPT.forward, lambda: forward(targets=token_ids(2, 3)), ValueError,
        r"targets must have the shape of idx \(2, 4\), got \(2, 3\)"),
    Bad("one cache for two blocks", gpt.GPT.forward, lambda: forward(cache=[KVCache()]), ValueError,
        r"cache must hold one KVCache per block \(2\), got 1"),
    Bad("a KVCache instead of a list", gpt.GPT.forward, lambda: forward(cache=KVCache()), TypeError,
        r"cache must be a list of KVCache \(one per block\), got KVCache"),
    Bad("float ids", gpt.GPT.hidden_states, lambda: tiny_gpt().hidden_states(token_ids(dtype=f32)), TypeError,
        r"idx must be an integer .* got torch.float32"),
    Bad("a string for the cache", gpt.GPT.hidden_states, lambda: tiny_gpt().hidden_states(token_ids(), "cache"),
        TypeError, r"cache must be a list of KVCache \(one per block\), got str"),

    Bad("negative max_new_tokens", gpt.GPT.generate, lambda: generate(n=-1), ValueError,
        r"max_new_tokens must be an int ≥ 0, got -1"),
    Bad("float max_new_tokens", gpt.GPT.generate, lambda: generate(n=2.5), TypeError,
        r"max_new_tokens must be an int, got float"),
    Bad("float prompt", gpt.GPT.generate, lambda: generate(token_ids(dtype=f32)), TypeError,
        r"idx must be an integer .* got torch.float32"),
    Bad("prompt id = vocab_size", gpt.GPT.generate, lambda: generate(torch.tensor([[1, V]])), ValueError,
        r"idx must hold ids in \[0, 11\)"),
    Bad("prompt longer than the context", gpt.GPT.generate, lambda: generate(torch.zeros(1, CTX + 1, dtype=i64)),
        ValueError, r"the prompt has 9 tokens but the context is max_len=8"),
    Bad("negative temperature", gpt.GPT.generate, lambda: generate(temperature=-1.0), ValueError, r"temperature"),
    Bad("top_k = 0", gpt.GPT.generate, lambda: generate(top_k=0), ValueError, r"top_k must be positive, got 0"),
    Bad("top_p above 1", gpt.GPT.generate, lambda: generate(top_p=1.5), ValueError, r"top_p.*1.5"),
    Bad("a seed for the generator", gpt.GPT.generate, lambda: generate(generator=0), TypeError,
        r"generator must be a torch.Generator or None, got int"),
    Bad("NaN logits", gpt.GPT.generate, lambda: nan_gpt().generate(token_ids(), 2), ValueError,
        r"logits must not contain NaN, got 22 NaN"),
    Bad("NaN logits, greedy", gpt.GPT.generate, lambda: nan_gpt().generate(token_ids(), 2, temperature=0),
        ValueError, r"logits must not contain NaN"),
    Bad("NaN logits leave the model in training mode", gpt.GPT.generate, lambda: generate_nan_keeps_mode(),
        returns=lambda training: training is True),

    Bad("a number for the source", gpt.GPT.from_hf, lambda: gpt.GPT.from_hf(42), TypeError,
        r"source must be a transformers model or a checkpoint directory, got int"),
    Bad("a missing directory", gpt.GPT.from_hf, lambda: gpt.GPT.from_hf(tmp() / "gone"), FileNotFoundError,
        r"no checkpoint directory at .*gone"),
    Bad("a directory without config.json", gpt.GPT.from_hf, lambda: gpt.GPT.from_hf(tmp()), ValueError,
        r"no config.json there"),
    Bad("a BERT checkpoint", gpt.GPT.from_hf, lambda: gpt.GPT.from_hf(hf_bert_dir()), ValueError,
        r"expected a GPT-2 checkpoint \(model_type 'gpt2'\), got model_type 'bert'"),
    Bad("a missing tensor", gpt.GPT.from_hf, lambda: gpt.GPT.from_hf(hf_dir_without("transformer.h.1.mlp.c_fc.bias")),
        ValueError, r"weights missing from the GPT-2 checkpoint: \['h.1.mlp.c_fc.bias'\]"),
    Bad("no final LayerNorm", gpt.GPT.from_hf, lambda: gpt.GPT.from_hf(hf_dir_without("transformer.ln_f.weight")),
        ValueError, r"weights missing from the GPT-2 checkpoint: \['ln_f.weight'\]"),
    Bad("config asks for more layers than the weights hold", gpt.GPT.from_hf,
        lambda: gpt.GPT.from_hf(hf_dir_with_config(n_layer=3)), ValueError,
        r"checkpoint has no block 2 \(no h.2.\* weights\); the config asks for n_layers=3"),
    Bad("config asks for fewer layers than the weights hold", gpt.GPT.from_hf,
        lambda: gpt.GPT.from_hf(hf_dir_with_config(n_layer=1)), ValueError,
        r"unexpected weights in the GPT-2 checkpoint \(config says n_layers=1\): \['h.1."),
    Bad("config width differs from the weights", gpt.GPT.from_hf,
        lambda: gpt.GPT.from_hf(hf_dir_with_config(n_embd=4)), ValueError,
        r"weight shapes differ from the config.*'wte.weight': \(\(11, 8\), \(11, 4\)\)"),
    Bad("config vocabulary differs from the weights", gpt.GPT.from_hf,
        lambda: gpt.GPT.from_hf(hf_dir_with_config(vocab_size=20)), ValueError,
        r"weight shapes differ from the config.*'wte.weight': \(\(11, 8\), \(20, 8\)\)"),
    Bad("an activation the course's GPT lacks", gpt.GPT.from_hf,
        lambda: gpt.GPT.from_hf(tiny_hf(activation_function="relu")), ValueError,
        r"settings the course's GPT does not implement: \{'activation_function': 'relu'\}"),
    Bad("a string for the dtype", gpt.GPT.from_hf, lambda: gpt.GPT.from_hf(tiny_hf(), dtype="float16"), TypeError,
        r"dtype must be a floating-point torch.dtype or None, got str"),
    Bad("an integer dtype", gpt.GPT.from_hf, lambda: gpt.GPT.from_hf(tiny_hf(), dtype=torch.int64), TypeError,
        r"dtype must be a floating-point torch.dtype or None, got torch.int64"),
    Bad("a list for the state dict", gpt.GPT.load_hf_state_dict, lambda: gpt.GPT(gpt_config()).load_hf_state_dict([]),
        TypeError, r"sd must be a dict of tensors \(a GPT-2 state_dict\), got list"),
    Bad("our own state dict (other names)", gpt.GPT.load_hf_state_dict,
        lambda: gpt.GPT(gpt_config()).load_hf_state_dict(tiny_gpt().state_dict()), ValueError,
        r"checkpoint has no block 0 \(no h.0.\* weights\)"),
    Bad("an untied output layer", gpt.GPT.load_hf_state_dict,
        lambda: gpt.GPT(gpt_config()).load_hf_state_dict(hf_state(**{"lm_head.weight": torch.zeros(V, 8)})),
        ValueError, r"lm_head.weight differs from wte.weight: the course's GPT ties them"),
    Bad("a narrower model", gpt.GPT.load_hf_state_dict,
        lambda: gpt.GPT(gpt_config(d_model=4)).load_hf_state_dict(hf_state()), ValueError,
        r"weight shapes differ from the config \(checkpoint, expected\): \{'wte.weight': \(\(11, 8\), \(11, 4\)\)"),

    Bad("a dict for the model", gpt.GPTClassifier, lambda: gpt.GPTClassifier({"d_model": 8}, 3), TypeError,
        r"gpt must be a coursekit.gpt.model.GPT, got dict"),
    Bad("zero classes", gpt.GPTClassifier, lambda: classifier(n_classes=0), ValueError,
        r"n_classes must be positive, got 0"),
    Bad("negative LM weight", gpt.GPTClassifier, lambda: classifier(lm_weight=-0.5), ValueError,
        r"lm_weight must be (an int )?≥ 0 and finite, got -0.5"),
    Bad("a string LM weight", gpt.GPTClassifier, lambda: classifier(lm_weight="0.5"), TypeError,
        r"lm_weight must be a number, got str"),
    Bad("float ids", gpt.GPTClassifier.forward, lambda: classifier()(token_ids(dtype=f32)), TypeError,
        r"idx must be an integer .* got torch.float32"),
    Bad("float labels", gpt.GPTClassifier.loss, lambda: classifier().loss(token_ids(), torch.tensor([0.0, 1.0])),
        TypeError, r"labels must be an integer \(int64 or int32\) tensor of class ids, got torch.float32"),
    Bad("label = n_classes", gpt.GPTClassifier.loss, lambda: classifier().loss(token_ids(), torch.tensor([0, 3])),
        ValueError, r"labels must hold class ids in \[0, 3\), got values in \[0, 3\]"),
    Bad("negative label", gpt.GPTClassifier.loss, lambda: classifier().loss(token_ids(), torch.tensor([-1, 0])),
        ValueError, r"labels must hold class ids in \[0, 3\), got values in \[-1, 0\]"),
    Bad("one label too many", gpt.GPTClassifier.loss, lambda: classifier().loss(token_ids(), torch.tensor([0, 1, 2])),
        ValueError, r"labels must have size 2 in dim 0 \(one per row of idx\), got shape \(3,\)"),
    Bad("labels as a column", gpt.GPTClassifier.loss, lambda: classifier().loss(token_ids(), torch.tensor([[0], [1]])),
        ValueError, r"labels must have 1 dimensions, got shape \(2, 1\)"),

    Bad("a dict for the model", gpt.with_extra_tokens, lambda: gpt.with_extra_tokens({}, 2), TypeError,
        r"model must be a coursekit.gpt.model.GPT, got dict"),
    Bad("no new tokens", gpt.with_extra_tokens, lambda: gpt.with_extra_tokens(tiny_gpt(), 0), ValueError,
        r"n_new must be positive, got 0"),
    Bad("float count", gpt.with_extra_tokens, lambda: gpt.with_extra_tokens(tiny_gpt(), 2.0), TypeError,
        r"n_new must be an int, got float"),

    Bad("no characters", char_gpt.CharTokenizer, lambda: char_gpt.CharTokenizer(""), ValueError,
        r"chars must be a non-empty string of distinct characters, got ''"),
    Bad("a repeated character", char_gpt.CharTokenizer, lambda: char_gpt.CharTokenizer("aba"), ValueError,
        r"chars must be a non-empty string of distinct characters, got 'aba'"),
    Bad("a list of characters", char_gpt.CharTokenizer, lambda: char_gpt.CharTokenizer(["a", "b"]), TypeError,
        r"chars must be a str, got list"),
    Bad("a number for the text", char_gpt.CharTokenizer.from_text, lambda: char_gpt.CharTokenizer.from_text(5),
        TypeError, r"text must be a str, got int"),
    Bad("an empty text", char_gpt.CharTokenizer.from_text, lambda: char_gpt.CharTokenizer.from_text(""), ValueError,
        r"text must not be empty"),
    Bad("a character it lacks", char_gpt.CharTokenizer.encode, lambda: char_gpt.CharTokenizer("abc").encode("abz"),
        ValueError, r"characters not in the vocabulary: \['z'\]"),
    Bad("a list instead of a string", char_gpt.CharTokenizer.encode,
        lambda: char_gpt.CharTokenizer("abc").encode(["a"]), TypeError, r"encode expects a str, got list"),
    Bad("negative id (not the last character)", char_gpt.CharTokenizer.decode,
        lambda: char_gpt.CharTokenizer("abc").decode([-1]), ValueError, r"ids must lie in \[0, 3\), got -1"),
    Bad("id = vocabulary size", char_gpt.CharTokenizer.decode, lambda: char_gpt.CharTokenizer("abc").decode([0, 3]),
        ValueError, r"ids must lie in \[0, 3\), got 3"),
    Bad("float ids", char_gpt.CharTokenizer.decode, lambda: char_gpt.CharTokenizer("abc").decode([1.7]), TypeError,
        r"ids must hold ints, got \[1.7\]"),
    Bad("a float tensor", char_gpt.CharTokenizer.decode,
        lambda: char_gpt.CharTokenizer("abc").decode(torch.tensor([0.0, 1.0])),
        TypeError, r"ids must be a 1-D integer tensor or a list of ints, got torch.float32"),
    Bad("a string of ids", char_gpt.CharTokenizer.decode, lambda: char_gpt.CharTokenizer("abc").decode("01"), TypeError,
        r"ids must be a sequence of ints, got str"),

    Bad("a number for the text", char_gpt.char_data, lambda: char_gpt.char_data(5), TypeError,
        r"text must be a str, got int"),
    Bad("one character", char_gpt.char_data, lambda: char_gpt.char_data("a"), ValueError,
        r"text must be long enough to split 90/10 into non-empty train and validation parts, got 'a'"),
    Bad("a corpus name for the text", char_gpt.char_data, lambda: char_gpt.char_data("tinyshakespear"), ValueError,
        r"text must be the corpus itself, got 'tinyshakespear' \(14 characters, no whitespace\), which looks like a "
        r"name: call char_data\(\) for Tiny Shakespeare"),

    Bad("float data", char_gpt.get_batch, lambda: char_gpt.get_batch(STREAM.float(), 2, 4), TypeError,
        r"data must be an integer \(int64 or int32\) tensor of token ids, got torch.float32"),
    Bad("2-D data", char_gpt.get_batch, lambda: char_gpt.get_batch(STREAM.reshape(5, 10), 2, 4), ValueError,
        r"data must have 1 dimensions, got shape \(5, 10\)"),
    Bad("a list for the data", char_gpt.get_batch, lambda: char_gpt.get_batch(STREAM.tolist(), 2, 4), TypeError,
        r"data must be a torch.Tensor, got list"),
    Bad("data no longer than a window", char_gpt.get_batch, lambda: char_gpt.get_batch(STREAM[:8], 2, 8), ValueError,
        r"data must hold more than max_len=8 tokens \(a window and its next token\), got 8"),
    Bad("zero batch", char_gpt.get_batch, lambda: char_gpt.get_batch(STREAM, 0, 4), ValueError,
        r"batch_size must be positive, got 0"),
    Bad("zero window", char_gpt.get_batch, lambda: char_gpt.get_batch(STREAM, 2, 0), ValueError,
        r"max_len must be positive, got 0"),
    Bad("float window", char_gpt.get_batch, lambda: char_gpt.get_batch(STREAM, 2, 4.0), TypeError,
        r"max_len must be an int, got float"),
    Bad("a seed for the generator", char_gpt.get_batch, lambda: char_gpt.get_batch(STREAM, 2, 4, 0), TypeError,
        r"generator must be a torch.Generator or None, got int"),

    Bad("a dict for the model", char_gpt.estimate_loss,
        lambda: char_gpt.estimate_loss({}, STREAM, batch_size=2, iters=1),
        TypeError, r"model must be a coursekit.gpt.model.GPT, got dict"),
    Bad("zero iterations", char_gpt.estimate_loss,
        lambda: char_gpt.estimate_loss(tiny_gpt(), STREAM, batch_size=2, iters=0),
        ValueError, r"iters must be positive, got 0"),
    Bad("zero batch", char_gpt.estimate_loss, lambda: char_gpt.estimate_loss(tiny_gpt(), STREAM, batch_size=0, iters=1),
        ValueError, r"batch_size must be positive, got 0"),
    Bad("data shorter than the context", char_gpt.estimate_loss,
        lambda: char_gpt.estimate_loss(tiny_gpt(), STREAM[:5], batch_size=2, iters=1), ValueError,
        r"data must hold more than max_len=8 tokens"),
    Bad("ids of another vocabulary", char_gpt.estimate_loss,
        lambda: char_gpt.estimate_loss(tiny_gpt(), STREAM + V, batch_size=2, iters=1), ValueError,
        r"idx must hold ids in \[0, 11\)"),
    Bad("a dict for the model", char_gpt.fixed_val_loss, lambda: char_gpt.fixed_val_loss({}, STREAM), TypeError,
        r"model must be a coursekit.gpt.model.GPT, got dict"),
    Bad("float validation ids", char_gpt.fixed_val_loss, lambda: char_gpt.fixed_val_loss(tiny_gpt(), STREAM.float()),
        TypeError, r"val_ids must be an integer \(int64 or int32\) tensor of token ids, got torch.float32"),
    Bad("validation ids shorter than the context", char_gpt.fixed_val_loss,
        lambda: char_gpt.fixed_val_loss(tiny_gpt(), STREAM[:6]), ValueError,
        r"val_ids must hold more than max_len=8 tokens \(a window and its next token\), got 6"),

    Bad("a missing directory", char_gpt.load_char_gpt, lambda: char_gpt.load_char_gpt(tmp() / "gone"),
        FileNotFoundError, r"no checkpoint at .*gone.*python -m coursekit.gpt train"),
    Bad("no report.json", char_gpt.load_char_gpt,
        lambda: char_gpt.load_char_gpt(char_gpt_dir({"chars": "abcdefghijk"}, False)),
        FileNotFoundError, r"no report at .*report.json; make the model with `python -m coursekit.gpt train"),
    Bad("a checkpoint without a character table", char_gpt.load_char_gpt,
        lambda: char_gpt.load_char_gpt(char_gpt_dir()),
        ValueError, r"holds no character-level GPT \(its metadata has no 'chars'\)"),
    Bad("a config field this GPTConfig does not know", char_gpt.load_char_gpt,
        lambda: char_gpt.load_char_gpt(char_gpt_dir({"chars": "abcdefghijk"}, config=dict(
            dataclasses.asdict(gpt_config()), rotary=True))),
        ValueError,
        r"the model's config has fields GPTConfig does not know: \['rotary'\].*python -m coursekit.gpt train"),

    Bad("a dict for the config", char_gpt.model_flops_per_token, lambda: char_gpt.model_flops_per_token({}, 100),
        TypeError, r"config must be a GPTConfig, got dict"),
    Bad("negative parameter count", char_gpt.model_flops_per_token,
        lambda: char_gpt.model_flops_per_token(gpt_config(), -1), ValueError, r"n_params must be positive, got -1"),
    Bad("float parameter count", char_gpt.model_flops_per_token,
        lambda: char_gpt.model_flops_per_token(gpt_config(), 1e6), TypeError, r"n_params must be an int, got float"),
    Bad("zero size", char_gpt.matmul_flops, lambda: char_gpt.matmul_flops(0), ValueError, r"n must be positive, got 0"),
    Bad("float size", char_gpt.matmul_flops, lambda: char_gpt.matmul_flops(2.5), TypeError,
        r"n must be an int, got float"),
    Bad("zero repeats", char_gpt.matmul_flops, lambda: char_gpt.matmul_flops(4, 0), ValueError,
        r"repeats must be positive, got 0"),

    Bad("zero layers", char_gpt.TrainConfig, lambda: train_config(n_layers=0), ValueError,
        r"n_layers must be positive, got 0"),
    Bad("float batch", char_gpt.TrainConfig, lambda: train_config(batch_size=1.5), TypeError,
        r"batch_size must be an int, got float"),
    Bad("heads do not divide the width", char_gpt.TrainConfig, lambda: train_config(d_model=10, n_heads=3), ValueError,
        r"d_model=10 must be divisible by n_heads=3"),
    Bad("zero learning rate", char_gpt.TrainConfig, lambda: train_config(learning_rate=0.0), ValueError,
        r"learning_rate must be positive and finite, got 0.0"),
    Bad("min_lr_ratio above 1", char_gpt.TrainConfig, lambda: train_config(min_lr_ratio=1.5), ValueError,
        r"min_lr_ratio must lie in \[0, 1\], got 1.5"),
    Bad("dropout of 1", char_gpt.TrainConfig, lambda: train_config(dropout=1.0), ValueError,
        r"dropout must lie in \[0, 1\), got 1.0"),
    Bad("beta2 of 1", char_gpt.TrainConfig, lambda: train_config(beta2=1.0), ValueError,
        r"beta2 must lie in \[0, 1\), got 1.0"),
    Bad("negative weight decay", char_gpt.TrainConfig, lambda: train_config(weight_decay=-0.1), ValueError,
        r"weight_decay must be (an int )?≥ 0 and finite, got -0.1"),
    Bad("zero gradient clip", char_gpt.TrainConfig, lambda: train_config(grad_clip=0.0), ValueError,
        r"grad_clip must be positive and finite, got 0.0"),
    Bad("negative warm-up", char_gpt.TrainConfig, lambda: train_config(warmup_iters=-1), ValueError,
        r"warmup_iters must be an int ≥ 0, got -1"),
    Bad("zero evaluation batches", char_gpt.TrainConfig, lambda: train_config(eval_iters=0), ValueError,
        r"eval_iters must be positive, got 0"),
    Bad("negative threads", char_gpt.TrainConfig, lambda: train_config(threads=-2), ValueError,
        r"threads must be an int ≥ 0, got -2"),
    Bad("a float seed", char_gpt.TrainConfig, lambda: train_config(seed=1.5), TypeError,
        r"seed must be an int, got float"),
    Bad("zero vocabulary", char_gpt.TrainConfig.model_config, lambda: train_config().model_config(0), ValueError,
        r"vocab_size must be positive, got 0"),

    Bad("a dict for the TrainConfig", char_gpt.train, lambda: char_gpt.train({"max_iters": 1}, "abc" * 100), TypeError,
        r"cfg must be a TrainConfig, got dict"),
    Bad("a number for the text", char_gpt.train, lambda: char_gpt.train(train_config(), 5), TypeError,
        r"text must be a str, got int"),
    Bad("a text too short for the context", char_gpt.train,
        lambda: char_gpt.train(train_config(max_len=64), "abcd" * 100),
        ValueError, r"text is too short for max_len=64: its validation part \(the last 10%\) has 40 characters"),
    Bad("an unknown device", char_gpt.train, lambda: char_gpt.train(train_config(), "abcd" * 1000, device="gpu"),
        ValueError, r"device 'gpu': expected cpu, cuda\[:N\] or mps"),
]


def generate_nan_keeps_mode():
    model = nan_gpt().train()
    with pytest.raises(ValueError):
        model.generate(token_ids(), 2)
    return model.training


# ==============================================================================================
# coursekit.gpt.icl, coursekit.gpt.icl_training and coursekit.gpt.induction — a task family of 16 tokens,
# a GPT with a context of 25
# ==============================================================================================

def family(**kw):
    return icl.ICLTaskFamily(**({"n_input_tokens": 8, "n_label_tokens": 4, "inputs_per_task": 4,
                                 "labels_per_task": 2, "n_pairs": 5} | kw))


FAM = family()                                    # vocabulary 16, max_len 25


@functools.cache
def icl_gpt():
    torch.manual_seed(0)
    return gpt.GPT(gpt.GPTConfig(vocab_size=FAM.vocab_size, max_len=FAM.max_len(), n_layers=2, n_heads=2,
                                 d_model=8)).eval()


def icl_config(**kw):
    return icl_training.ICLTrainConfig(**({"n_layers": 2, "n_heads": 2, "d_model": 8, "steps": 2, "batch_size": 2,
                                  "eval_tasks": 2, "eval_every": 1, "family": {"n_input_tokens": 8,
                                  "n_label_tokens": 4, "inputs_per_task": 4, "labels_per_task": 2, "n_pairs": 5}}
                                 | kw))


def icl_train_config(**kw):
    """A recipe train_icl accepts: 20 content tokens and a context of 35 hold its induction probe (2 × 16)."""
    return icl_config(family={"n_input_tokens": 16, "n_label_tokens": 4, "inputs_per_task": 4,
                              "labels_per_task": 2, "n_pairs": 7}, **kw)


def tasks(n=2):
    return icl.sample_tasks(FAM, n, "heldout", gen())


def task(**kw):
    parts = {"inputs": torch.tensor([4, 5, 6, 7]), "labels": torch.tensor([12, 13]),
             "mapping": torch.tensor([0, 1, 0, 1])} | kw
    return icl.Task(**parts)


def batch(tasks_=None, k=2, fmt="arrow", **kw):
    return icl.icl_batch(FAM, tasks() if tasks_ is None else tasks_, k, fmt, gen(), **kw)


def shots(model=None, tasks_=None, shots_=(1,), **kw):
    return icl_training.evaluate_shots(icl_gpt() if model is None else model, FAM,
                                       tasks() if tasks_ is None else tasks_, shots_, "arrow", **kw)


def finetune(demos=((5, 12), (6, 13)), fmt=None, **kw):
    return icl_training.finetune_on_demonstrations(icl_gpt(), list(demos), fmt or FAM.formats()["arrow"], **kw)


def icl_dir(drop_report=False, report=None) -> Path:
    cfg = icl_config()
    torch.manual_seed(0)
    folder = icl_training.save_icl_checkpoint(tmp(), gpt.GPT(cfg.model_config()), cfg, {})
    if drop_report:
        (folder / "report.json").unlink()
    if report is not None:
        (folder / "report.json").write_text(report)
    return folder


SAVED = {"model": {}, "optimizer": {}, "scheduler": {}, "generator": torch.zeros(1), "state": {}}


def work_with_checkpoint(content: bytes | dict) -> Path:
    folder = tmp()
    if isinstance(content, dict):
        torch.save(content, folder / "checkpoint.pt")
    else:
        (folder / "checkpoint.pt").write_bytes(content)
    return folder


ICL = [
    Bad("empty input pool", icl.ICLTaskFamily, lambda: family(n_input_tokens=0), ValueError,
        r"n_input_tokens must be positive, got 0"),
    Bad("float inputs per task", icl.ICLTaskFamily, lambda: family(inputs_per_task=1.5), TypeError,
        r"inputs_per_task must be an int, got float"),
    Bad("more inputs than half the pool", icl.ICLTaskFamily, lambda: family(inputs_per_task=5), ValueError,
        r"need inputs_per_task <= n_input_tokens/2 and labels_per_task <= n_label_tokens/2, got "
        r"inputs_per_task=5, n_input_tokens=8, labels_per_task=2, n_label_tokens=4"),
    Bad("one label per task", icl.ICLTaskFamily, lambda: family(labels_per_task=1), ValueError,
        r"labels_per_task must be >= 2, got 1"),
    Bad("pool half 2", icl.ICLTaskFamily.input_ids, lambda: FAM.input_ids(2), ValueError,
        r"half must be one of \[0, 1\], got 2"),
    Bad("pool half -1", icl.ICLTaskFamily.label_ids, lambda: FAM.label_ids(-1), ValueError,
        r"half must be one of \[0, 1\], got -1"),
    Bad("id = vocab_size", icl.ICLTaskFamily.token_name, lambda: FAM.token_name(16), ValueError,
        r"i must be a token id in \[0, 16\), got 16"),
    Bad("negative id", icl.ICLTaskFamily.token_name, lambda: FAM.token_name(-1), ValueError,
        r"i must be a token id in \[0, 16\), got -1"),
    Bad("float id", icl.ICLTaskFamily.token_name, lambda: FAM.token_name(4.7), TypeError,
        r"i must be an int token id, got float"),
    Bad("a float tensor id", icl.ICLTaskFamily.token_name, lambda: FAM.token_name(torch.tensor(4.7)), TypeError,
        r"i must be one integer token id, got a torch.float32 tensor of shape \(\)"),
    Bad("unknown format", icl.ICLTaskFamily.max_len, lambda: FAM.max_len("yaml"), ValueError,
        r"fmt must be one of \['bare', 'arrow', 'io'\], got 'yaml'"),

    Bad("float inputs", icl.Task, lambda: task(inputs=torch.tensor([4.0, 5.0, 6.0, 7.0])), TypeError,
        r"inputs must have dtype torch.int64 or torch.int32, got torch.float32"),
    Bad("a list of labels", icl.Task, lambda: task(labels=[12, 13]), TypeError,
        r"labels must be a torch.Tensor, got list"),
    Bad("a mapping shorter than the inputs", icl.Task, lambda: task(mapping=torch.tensor([0, 1, 0])), ValueError,
        r"mapping must have size 4 in dim 0 \(one label index per input\), got shape \(3,\)"),
    Bad("a mapping past the labels", icl.Task, lambda: task(mapping=torch.tensor([0, 1, 0, 2])), ValueError,
        r"mapping must hold class ids in \[0, 2\), got values in \[0, 2\]"),
    Bad("input index = K", icl.Task.label_of, lambda: task().label_of(4), ValueError,
        r"j must be an input index in \[0, 4\), got 4"),
    Bad("negative input index", icl.Task.label_of, lambda: task().label_of(-1), ValueError,
        r"j must be an input index in \[0, 4\), got -1"),
    Bad("float input index", icl.Task.label_of, lambda: task().label_of(1.0), TypeError,
        r"j must be an int, got float"),

    Bad("no inputs", icl.random_task, lambda: icl.random_task(FAM.input_ids(0), FAM.label_ids(0), 0, 2, gen()),
        ValueError, r"K must be positive, got 0"),
    Bad("no labels", icl.random_task, lambda: icl.random_task(FAM.input_ids(0), FAM.label_ids(0), 2, 0, gen()),
        ValueError, r"L must be positive, got 0"),
    Bad("more inputs than the pool", icl.random_task,
        lambda: icl.random_task(FAM.input_ids(0), FAM.label_ids(0), 5, 2, gen()), ValueError,
        r"need K=5 <= 4 inputs and L=2 <= 2 labels in the pools"),
    Bad("a float pool", icl.random_task,
        lambda: icl.random_task(FAM.input_ids(0).float(), FAM.label_ids(0), 2, 2, gen()), TypeError,
        r"input_pool must have dtype torch.int64 or torch.int32, got torch.float32"),
    Bad("a list for the pool", icl.random_task, lambda: icl.random_task([4, 5, 6], FAM.label_ids(0), 2, 2, gen()),
        TypeError, r"input_pool must be a torch.Tensor, got list"),
    Bad("a seed for the generator", icl.random_task,
        lambda: icl.random_task(FAM.input_ids(0), FAM.label_ids(0), 2, 2, 0), TypeError,
        r"generator must be a torch.Generator or None, got int"),

    Bad("unknown split", icl.sample_tasks, lambda: icl.sample_tasks(FAM, 2, "test", gen()), ValueError,
        r"split must be one of \['train', 'heldout'\], got 'test'"),
    Bad("no tasks", icl.sample_tasks, lambda: icl.sample_tasks(FAM, 0, "train", gen()), ValueError,
        r"n must be positive, got 0"),
    Bad("a dict for the family", icl.sample_tasks, lambda: icl.sample_tasks({}, 2, "train", gen()), TypeError,
        r"family must be an ICLTaskFamily, got dict"),

    Bad("no inputs", icl.demo_order, lambda: icl.demo_order(0, 2, gen()), ValueError, r"K must be positive, got 0"),
    Bad("negative shots (a silent slice)", icl.demo_order, lambda: icl.demo_order(4, -1, gen()), ValueError,
        r"k must be an int ≥ 0, got -1"),
    Bad("float shots", icl.demo_order, lambda: icl.demo_order(4, 2.5, gen()), TypeError,
        r"k must be an int, got float"),

    Bad("unknown format", icl.icl_batch, lambda: batch(fmt="yaml"), ValueError,
        r"fmt must be one of \['bare', 'arrow', 'io'\], got 'yaml'"),
    Bad("a format name without a family", icl.icl_batch, lambda: icl.icl_batch(None, tasks(), 2, "arrow", gen()),
        TypeError, r"fmt='arrow' is a format name, which needs the task family; pass family or a TokenFormat"),
    Bad("negative shots", icl.icl_batch, lambda: batch(k=-1), ValueError,
        r"k \(the number of shots\) must be an int ≥ 0, got -1"),
    Bad("float shots", icl.icl_batch, lambda: batch(k=1.5), TypeError,
        r"k \(the number of shots\) must be an int, got float"),
    Bad("label noise above 1", icl.icl_batch, lambda: batch(label_noise=1.5), ValueError,
        r"label_noise must lie in \[0, 1\], got 1.5"),
    Bad("a string for the label noise", icl.icl_batch, lambda: batch(label_noise="0.1"), TypeError,
        r"label_noise must be a number, got str"),
    Bad("unknown queries", icl.icl_batch, lambda: batch(queries="some"), ValueError,
        r"queries must be one of \['all', 'one'\], got 'some'"),
    Bad("unknown noise", icl.icl_batch, lambda: batch(noise="flipped", label_noise=0.5), ValueError,
        r"noise must be one of \['random', 'flip'\], got 'flipped'"),
    Bad("no tasks", icl.icl_batch, lambda: batch([]), ValueError, r"tasks must not be empty"),
    Bad("ids instead of tasks", icl.icl_batch, lambda: batch([4, 5]), TypeError,
        r"tasks must hold Task objects, got int"),
    Bad("one order for two tasks", icl.icl_batch, lambda: batch(demo_orders=[torch.tensor([0, 1])]), ValueError,
        r"demo_orders must hold one order per task \(2\), got 1"),
    Bad("an order of the wrong length", icl.icl_batch,
        lambda: batch(demo_orders=[torch.tensor([0, 1, 2])] * 2), ValueError,
        r"demo_orders\[0\] must hold k=2 demonstration indices, got 3"),
    Bad("an order past the inputs", icl.icl_batch, lambda: batch(demo_orders=[torch.tensor([0, 7])] * 2), ValueError,
        r"demo_orders\[0\] must hold ids in \[0, 4\), got values in \[0, 7\]"),
    Bad("a negative order (counted from the end)", icl.icl_batch,
        lambda: batch(demo_orders=[torch.tensor([0, -1])] * 2), ValueError,
        r"demo_orders\[0\] must hold ids in \[0, 4\), got values in \[-1, 0\]"),
    Bad("a seed for the generator", icl.icl_batch, lambda: icl.icl_batch(FAM, tasks(), 2, "arrow", 0), TypeError,
        r"generator must be a torch.Generator or None, got int"),

    Bad("unknown format", icl.training_batch, lambda: icl.training_batch(FAM, 2, gen(), "yaml"), ValueError,
        r"fmt must be one of \['bare', 'arrow', 'io'\], got 'yaml'"),
    Bad("zero batch", icl.training_batch, lambda: icl.training_batch(FAM, 0, gen()), ValueError,
        r"batch_size must be positive, got 0"),
    Bad("a dict for the family", icl.training_batch, lambda: icl.training_batch({}, 2, gen()), TypeError,
        r"family must be an ICLTaskFamily, got dict"),
    Bad("a seed for the generator", icl.training_batch, lambda: icl.training_batch(FAM, 2, 0), TypeError,
        r"generator must be a torch.Generator or None, got int"),

    Bad("too short for two copies", icl.repeated_segment_batch, lambda: icl.repeated_segment_batch(FAM, 2, 7, gen()),
        ValueError, r"length must be >= 8 \(room for two copies of a 4-token segment\), got 7"),
    Bad("float length", icl.repeated_segment_batch, lambda: icl.repeated_segment_batch(FAM, 2, 9.5, gen()), TypeError,
        r"length must be an int, got float"),
    Bad("zero batch", icl.repeated_segment_batch, lambda: icl.repeated_segment_batch(FAM, 0, 10, gen()), ValueError,
        r"batch_size must be positive, got 0"),
    Bad("segments longer than the distinct tokens", icl.repeated_segment_batch,
        lambda: icl.repeated_segment_batch(FAM, 2, 40, gen()), ValueError,
        r"length=40 allows segments of up to 20 distinct tokens, but the family has only 12 content tokens"),
    Bad("a dict for the family", icl.repeated_segment_batch, lambda: icl.repeated_segment_batch({}, 2, 10, gen()),
        TypeError, r"family must be an ICLTaskFamily, got dict"),

    Bad("no inputs", icl.ideal_accuracy, lambda: icl.ideal_accuracy(2, 0, 2), ValueError, r"K must be positive, got 0"),
    Bad("no labels", icl.ideal_accuracy, lambda: icl.ideal_accuracy(2, 4, 0), ValueError, r"L must be positive, got 0"),
    Bad("negative shots", icl.ideal_accuracy, lambda: icl.ideal_accuracy(-1, 4, 2), ValueError,
        r"k must be an int ≥ 0, got -1"),
    Bad("float shots", icl.ideal_accuracy, lambda: icl.ideal_accuracy(1.5, 4, 2), TypeError,
        r"k must be an int, got float"),

    Bad("zero layers", icl_training.ICLTrainConfig, lambda: icl_config(n_layers=0), ValueError,
        r"n_layers must be positive, got 0"),
    Bad("float steps", icl_training.ICLTrainConfig, lambda: icl_config(steps=1.5), TypeError,
        r"steps must be an int, got float"),
    Bad("heads do not divide the width", icl_training.ICLTrainConfig, lambda: icl_config(d_model=10, n_heads=3),
        ValueError, r"d_model=10 must be divisible by n_heads=3"),
    Bad("negative learning rate", icl_training.ICLTrainConfig, lambda: icl_config(learning_rate=-1e-3), ValueError,
        r"learning_rate must be positive and finite, got -0.001"),
    Bad("negative weight decay", icl_training.ICLTrainConfig, lambda: icl_config(weight_decay=-0.1), ValueError,
        r"weight_decay must be (an int )?≥ 0 and finite, got -0.1"),
    Bad("negative warm-up", icl_training.ICLTrainConfig, lambda: icl_config(warmup=-1), ValueError,
        r"warmup must be an int ≥ 0, got -1"),
    Bad("negative repeat_every", icl_training.ICLTrainConfig, lambda: icl_config(repeat_every=-2), ValueError,
        r"repeat_every must be an int ≥ 0, got -2"),
    Bad("zero eval_every", icl_training.ICLTrainConfig, lambda: icl_config(eval_every=0), ValueError,
        r"eval_every must be positive, got 0"),
    Bad("unknown format", icl_training.ICLTrainConfig, lambda: icl_config(format="yaml"), ValueError,
        r"format must be one of \['bare', 'arrow', 'io'\], got 'yaml'"),
    Bad("a string for the family", icl_training.ICLTrainConfig, lambda: icl_config(family="default"), TypeError,
        r"family must be a dict of ICLTaskFamily fields, got str"),
    Bad("an unknown family field", icl_training.ICLTrainConfig, lambda: icl_config(family={"n_inputs": 8}), ValueError,
        r"family has unknown fields \['n_inputs'\]; ICLTaskFamily has \['n_input_tokens'"),
    Bad("an invalid family", icl_training.ICLTrainConfig, lambda: icl_config(family={"labels_per_task": 1}), ValueError,
        r"labels_per_task must be >= 2, got 1"),

    Bad("a dict for the recipe", icl_training.train_icl, lambda: icl_training.train_icl({"steps": 1}), TypeError,
        r"cfg must be an ICLTrainConfig, got dict"),
    Bad("stop_at = 0 (would train the whole recipe)", icl_training.train_icl,
        lambda: icl_training.train_icl(icl_config(), stop_at=0), ValueError, r"stop_at must be positive, got 0"),
    Bad("negative stop_at", icl_training.train_icl, lambda: icl_training.train_icl(icl_config(), stop_at=-5),
        ValueError, r"stop_at must be positive, got -5"),
    Bad("zero checkpoint interval", icl_training.train_icl,
        lambda: icl_training.train_icl(icl_config(), tmp(), checkpoint_minutes=0),
        ValueError, r"checkpoint_minutes must be positive and finite, got 0"),
    Bad("a number for the work folder", icl_training.train_icl, lambda: icl_training.train_icl(icl_config(), 5),
        TypeError, r"work must be a folder path \(str or Path\) or None, got int"),
    Bad("a checkpoint left in the work folder", icl_training.train_icl,
        lambda: icl_training.train_icl(icl_train_config(), work_with_checkpoint(b"x")), FileExistsError,
        r"checkpoint.pt exists: pass resume=True \(--resume\) to continue it, or remove it"),
    Bad("resuming another recipe", icl_training.train_icl,
        lambda: icl_training.train_icl(icl_train_config(), work_with_checkpoint(SAVED | {"config": {"steps": 1}}),
                                       resume=True),
        ValueError,
        r"checkpoint.pt was written by another recipe"),
    Bad("resuming a damaged checkpoint", icl_training.train_icl,
        lambda: icl_training.train_icl(icl_train_config(), work_with_checkpoint(b"not a checkpoint"), resume=True),
        ValueError, r"checkpoint.pt is truncated or not a checkpoint of this training loop"),
    Bad("a family too small for the induction probe", icl_training.train_icl,
        lambda: icl_training.train_icl(icl_config()), ValueError,
        r"the family needs at least 16 content tokens and a context of 32, got 12 tokens and max_len=25"),

    Bad("a function for the model", icl_training.evaluate_shots, lambda: shots(lambda idx: idx), TypeError,
        r"model must be an nn.Module, got function"),
    Bad("one number of shots, not a list", icl_training.evaluate_shots, lambda: shots(shots_=4), TypeError,
        r"shots must be a sequence of ints, got int"),
    Bad("no numbers of shots", icl_training.evaluate_shots, lambda: shots(shots_=[]), ValueError,
        r"shots must not be empty"),
    Bad("negative shots", icl_training.evaluate_shots, lambda: shots(shots_=[-1]), ValueError,
        r"k \(the number of shots\) must be an int ≥ 0, got -1"),
    Bad("float shots", icl_training.evaluate_shots, lambda: shots(shots_=[1.5]), TypeError,
        r"shots must hold ints, got \[1.5\]"),
    Bad("no tasks", icl_training.evaluate_shots, lambda: shots(tasks_=[]), ValueError, r"tasks must not be empty"),
    Bad("a float seed", icl_training.evaluate_shots, lambda: shots(seed=1.5), TypeError,
        r"seed must be an int, got float"),
    Bad("prompts longer than the context", icl_training.evaluate_shots, lambda: shots(shots_=[10]), ValueError,
        r"longer than the model's context max_len=25"),

    Bad("a dict for the recipe", icl_training.heldout_accuracy, lambda: icl_training.heldout_accuracy(icl_gpt(), {}),
        TypeError, r"cfg must be an ICLTrainConfig, got dict"),
    Bad("no tasks", icl_training.heldout_accuracy,
        lambda: icl_training.heldout_accuracy(icl_gpt(), icl_config(), n_tasks=0), ValueError,
        r"n_tasks must be positive, got 0"),
    Bad("no numbers of shots", icl_training.heldout_accuracy,
        lambda: icl_training.heldout_accuracy(icl_gpt(), icl_config(), shots=()),
        ValueError, r"shots must not be empty"),

    Bad("a dict for the model", icl_training.save_icl_checkpoint,
        lambda: icl_training.save_icl_checkpoint(tmp(), {}, icl_config(), {}),
        TypeError, r"model must be a coursekit.gpt.model.GPT, got dict"),
    Bad("a dict for the recipe", icl_training.save_icl_checkpoint,
        lambda: icl_training.save_icl_checkpoint(tmp(), icl_gpt(), {}, {}),
        TypeError, r"cfg must be an ICLTrainConfig, got dict"),
    Bad("a list for the report", icl_training.save_icl_checkpoint,
        lambda: icl_training.save_icl_checkpoint(tmp(), icl_gpt(), icl_config(), []), TypeError,
        r"report must be a dict, got list"),
    Bad("a model of another recipe", icl_training.save_icl_checkpoint,
        lambda: icl_training.save_icl_checkpoint(tmp(), icl_gpt(), icl_config(d_model=16), {}), ValueError,
        r"the model is not the recipe's: model.config differs from cfg.model_config\(\)"),

    Bad("a missing directory", icl_training.load_icl_checkpoint,
        lambda: icl_training.load_icl_checkpoint(tmp() / "gone"), FileNotFoundError,
        r"no checkpoint at .*gone.*python -m coursekit.gpt train-icl"),
    Bad("a character GPT's directory", icl_training.load_icl_checkpoint,
        lambda: icl_training.load_icl_checkpoint(char_gpt_dir({"chars": "abcdefghijk"})), ValueError,
        r"holds no in-context learner \(its metadata has no 'train_config'\)"),
    Bad("no report", icl_training.load_icl_checkpoint,
        lambda: icl_training.load_icl_checkpoint(icl_dir(drop_report=True)), FileNotFoundError,
        r"no report at .*report.json"),
    Bad("a report of another file", icl_training.load_icl_checkpoint,
        lambda: icl_training.load_icl_checkpoint(icl_dir(report='{"file_sha256": "0"}')), ValueError,
        r"model.safetensors does not match its report"),
    Bad("a damaged report", icl_training.load_icl_checkpoint,
        lambda: icl_training.load_icl_checkpoint(icl_dir(report="{not json")), ValueError,
        r"report.json is not valid JSON"),

    Bad("no demonstrations: an untouched copy", icl_training.finetune_on_demonstrations, lambda: finetune(()),
        returns=lambda m: m is not icl_gpt() and not m.training
        and all(torch.equal(a, b) for a, b in zip(m.parameters(), icl_gpt().parameters()))),
    Bad("ids instead of pairs", icl_training.finetune_on_demonstrations, lambda: finetune([5, 6]), TypeError,
        r"demos must be a list of \(x, y\) pairs of int token ids, got 5"),
    Bad("a float input", icl_training.finetune_on_demonstrations, lambda: finetune([(5.5, 12)]), TypeError,
        r"demos must be a list of \(x, y\) pairs of int token ids, got \(5.5, 12\)"),
    Bad("a float label (truncated before)", icl_training.finetune_on_demonstrations, lambda: finetune([(5, 12.7)]),
        TypeError, r"demos must be a list of \(x, y\) pairs of int token ids, got \(5, 12.7\)"),
    Bad("label id = vocab_size", icl_training.finetune_on_demonstrations, lambda: finetune([(5, 16)]), ValueError,
        r"the demonstrations' labels y must hold class ids in \[0, 16\), got values in \[16, 16\]"),
    Bad("a format name", icl_training.finetune_on_demonstrations, lambda: finetune(fmt="arrow"), TypeError,
        r"fmt must be a TokenFormat, got str"),
    Bad("zero steps", icl_training.finetune_on_demonstrations, lambda: finetune(steps=0), ValueError,
        r"steps must be positive, got 0"),
    Bad("zero learning rate", icl_training.finetune_on_demonstrations, lambda: finetune(lr=0.0), ValueError,
        r"lr must be positive and finite, got 0.0"),
    Bad("a prefix no parameter has", icl_training.finetune_on_demonstrations, lambda: finetune(params="decoder."),
        ValueError, r"params='decoder.' matches no parameter name of the model"),
    Bad("a function for the model", icl_training.finetune_on_demonstrations,
        lambda: icl_training.finetune_on_demonstrations(lambda idx: idx, [(5, 12)], FAM.formats()["arrow"]), TypeError,
        r"model must be an nn.Module, got function"),

    Bad("unknown format", icl_training.evaluate_finetuning,
        lambda: icl_training.evaluate_finetuning(icl_gpt(), FAM, tasks(), 1, fmt="yaml"), ValueError,
        r"fmt must be one of \['bare', 'arrow', 'io'\], got 'yaml'"),
    Bad("negative shots", icl_training.evaluate_finetuning,
        lambda: icl_training.evaluate_finetuning(icl_gpt(), FAM, tasks(), -1), ValueError,
        r"k must be an int ≥ 0, got -1"),
    Bad("no tasks", icl_training.evaluate_finetuning, lambda: icl_training.evaluate_finetuning(icl_gpt(), FAM, [], 1),
        ValueError, r"tasks must not be empty"),
    Bad("a dict for the family", icl_training.evaluate_finetuning,
        lambda: icl_training.evaluate_finetuning(icl_gpt(), {}, tasks(), 1), TypeError,
        r"family must be an ICLTaskFamily, got dict"),
    Bad("zero fine-tuning steps", icl_training.evaluate_finetuning,
        lambda: icl_training.evaluate_finetuning(icl_gpt(), FAM, tasks(), 1, steps=0), ValueError,
        r"steps must be positive, got 0"),
]


def ablate(model=None, heads=((0, 0),)):
    with induction.ablate_heads(icl_gpt() if model is None else model, heads):
        pass


def ablation_leaves_no_hook() -> bool:
    model = icl_gpt()
    with pytest.raises(ValueError):
        ablate(model, [(0, 0), (0, 9)])                  # the second pair is wrong: the first must not stay
    return all(not block.self_attn.out_proj._forward_pre_hooks for block in model.blocks)


VOCAB = torch.arange(4, FAM.vocab_size)
REPEATS = induction.repeated_random_tokens(3, 4, VOCAB, gen())      # (3, 8)

INDUCTION = [
    Bad("a dict for the model", induction.attention_maps, lambda: induction.attention_maps({}, REPEATS), TypeError,
        r"model must be a coursekit.gpt.model.GPT, got dict"),
    Bad("float ids", induction.attention_maps, lambda: induction.attention_maps(icl_gpt(), REPEATS.float()),
        TypeError, r"idx must be an integer \(int64 or int32\) tensor of token ids, got torch.float32"),
    Bad("id = vocab_size", induction.attention_maps, lambda: induction.attention_maps(icl_gpt(), REPEATS + 12),
        ValueError, r"idx must hold ids in \[0, 16\), got values in \[\d+, \d+\]"),
    Bad("uint8 ids", induction.attention_maps, lambda: induction.attention_maps(icl_gpt(), REPEATS.to(torch.uint8)),
        TypeError, r"idx must be an integer .* got torch.uint8"),
    Bad("1-D ids", induction.attention_maps, lambda: induction.attention_maps(icl_gpt(), REPEATS[0]), ValueError,
        r"idx must have 2 dimensions, got shape \(8,\)"),
    Bad("no tokens", induction.attention_maps, lambda: induction.attention_maps(icl_gpt(), REPEATS[:, :0]),
        ValueError, r"idx must hold at least one token per row, got shape \(3, 0\)"),
    Bad("longer than the context", induction.attention_maps,
        lambda: induction.attention_maps(icl_gpt(), REPEATS.repeat(1, 4)), ValueError,
        r"idx has 32 tokens, more than the model's context max_len=25"),

    Bad("no sequences", induction.repeated_random_tokens, lambda: induction.repeated_random_tokens(0, 4, VOCAB, gen()),
        ValueError, r"n must be positive, got 0"),
    Bad("zero period", induction.repeated_random_tokens, lambda: induction.repeated_random_tokens(2, 0, VOCAB, gen()),
        ValueError, r"period must be positive, got 0"),
    Bad("period longer than the vocabulary", induction.repeated_random_tokens,
        lambda: induction.repeated_random_tokens(2, 13, VOCAB, gen()), ValueError,
        r"period=13 needs that many distinct tokens, vocab has 12"),
    Bad("a float vocabulary", induction.repeated_random_tokens,
        lambda: induction.repeated_random_tokens(2, 4, VOCAB.float(), gen()), TypeError,
        r"vocab must have dtype torch.int64 or torch.int32, got torch.float32"),
    Bad("a list vocabulary", induction.repeated_random_tokens,
        lambda: induction.repeated_random_tokens(2, 4, list(range(4, 16)), gen()), TypeError,
        r"vocab must be a torch.Tensor, got list"),
    Bad("a 2-D vocabulary", induction.repeated_random_tokens,
        lambda: induction.repeated_random_tokens(2, 4, VOCAB.reshape(3, 4), gen()), ValueError,
        r"vocab must have 1 dimensions, got shape \(3, 4\)"),
    Bad("a seed for the generator", induction.repeated_random_tokens,
        lambda: induction.repeated_random_tokens(2, 4, VOCAB, 0), TypeError,
        r"generator must be a torch.Generator or None, got int"),

    Bad("integer weights", induction.induction_scores,
        lambda: induction.induction_scores(torch.ones(8, 8, dtype=i64), 4),
        TypeError, r"attn must be a floating-point tensor, got torch.int64"),
    Bad("1-D weights", induction.induction_scores, lambda: induction.induction_scores(torch.rand(8), 4), ValueError,
        r"attn must have at least 2 dimensions \(\.\.\., T, T\), got shape \(8,\)"),
    Bad("T is not twice the period", induction.induction_scores,
        lambda: induction.induction_scores(torch.rand(8, 8), 3),
        ValueError, r"attn must be \(\.\.\., T, T\) with T = 2·period = 6, got \(8, 8\)"),
    Bad("not square", induction.induction_scores, lambda: induction.induction_scores(torch.rand(6, 8), 4), ValueError,
        r"attn must be \(\.\.\., T, T\) with T = 2·period = 8, got \(6, 8\)"),
    Bad("zero period", induction.induction_scores, lambda: induction.induction_scores(torch.rand(8, 8), 0), ValueError,
        r"period must be positive, got 0"),
    Bad("float period", induction.induction_scores, lambda: induction.induction_scores(torch.rand(8, 8), 4.0),
        TypeError, r"period must be an int, got float"),
    Bad("a list of weights", induction.induction_scores, lambda: induction.induction_scores([[1.0]], 1), TypeError,
        r"attn must be a torch.Tensor, got list"),
    Bad("1-D weights", induction.previous_token_scores, lambda: induction.previous_token_scores(torch.rand(8)),
        ValueError, r"attn must have at least 2 dimensions \(\.\.\., T, T\), got shape \(8,\)"),
    Bad("integer weights", induction.previous_token_scores,
        lambda: induction.previous_token_scores(torch.ones(4, 4, dtype=i64)), TypeError,
        r"attn must be a floating-point tensor, got torch.int64"),
    Bad("one position", induction.previous_token_scores, lambda: induction.previous_token_scores(torch.ones(1, 1)),
        ValueError, r"attn must be \(\.\.\., T, T\) with T >= 2, got \(1, 1\)"),
    Bad("not square", induction.previous_token_scores, lambda: induction.previous_token_scores(torch.ones(3, 4)),
        ValueError, r"attn must be \(\.\.\., T, T\) with T >= 2, got \(3, 4\)"),
    Bad("zero period", induction.uniform_induction_score, lambda: induction.uniform_induction_score(0), ValueError,
        r"period must be positive, got 0"),
    Bad("float period", induction.uniform_induction_score, lambda: induction.uniform_induction_score(1.5), TypeError,
        r"period must be an int, got float"),

    Bad("a dict for the model", induction.ablate_heads, lambda: ablate({}), TypeError,
        r"model must be a coursekit.gpt.model.GPT, got dict"),
    Bad("layer = n_layers", induction.ablate_heads, lambda: ablate(heads=[(2, 0)]), ValueError,
        r"layer must lie in 0…1, got 2"),
    Bad("negative layer (counted from the end)", induction.ablate_heads, lambda: ablate(heads=[(-1, 0)]), ValueError,
        r"layer must lie in 0…1, got -1"),
    Bad("head = n_heads", induction.ablate_heads, lambda: ablate(heads=[(0, 2)]), ValueError,
        r"head must lie in 0…1, got 2"),
    Bad("float head", induction.ablate_heads, lambda: ablate(heads=[(0, 1.0)]), TypeError,
        r"head must be an int, got float"),
    Bad("one pair, not a list of pairs", induction.ablate_heads, lambda: ablate(heads=(0, 1)), TypeError,
        r"heads must be a list of \(layer, head\) pairs, got 0"),
    Bad("a wrong pair after a good one leaves no hook", induction.ablate_heads, ablation_leaves_no_hook,
        returns=lambda clean: clean is True),

    Bad("a dict for the model", induction.head_scores, lambda: induction.head_scores({}, VOCAB, n=2, period=4),
        TypeError, r"model must be a coursekit.gpt.model.GPT, got dict"),
    Bad("repeats longer than the context", induction.head_scores,
        lambda: induction.head_scores(icl_gpt(), torch.arange(16), n=2, period=13), ValueError,
        r"idx has 26 tokens, more than the model's context max_len=25"),
    Bad("a float seed", induction.head_scores, lambda: induction.head_scores(icl_gpt(), VOCAB, n=2, period=4, seed=0.5),
        TypeError, r"seed must be an int, got float"),
    Bad("no sequences", induction.head_scores, lambda: induction.head_scores(icl_gpt(), VOCAB, n=0, period=4),
        ValueError, r"n must be positive, got 0"),
]


# ==============================================================================================
# coursekit.gpt.prompting — text prompts, token prompts, reading the answer of the tiny GPT
# ==============================================================================================

ARROW = P.TokenFormat("arrow", between=(0,), after_y=(1,))


def returns_2d(idx):
    return torch.zeros(idx.shape)                               # (B, T): no vocabulary axis


@functools.cache
def slide_tokenizer():
    """A character tokenizer that can write the slides' prompts (a stand-in for GPT-2's BPE)."""
    texts = [P.build_prompt(p["demonstrations"], p["query"], task_description=p["description"])
             for p in P.SLIDE_PROMPTS.values()]
    return char_gpt.CharTokenizer.from_text("".join(texts) + "\n " + "".join(P.SLIDE_PROMPTS["sentiment"]["labels"]))


def slide_gpt():
    return gpt.GPT(gpt_config(vocab_size=len(slide_tokenizer()), max_len=512))


PROMPTING = [
    Bad("a template without {x}", P.PromptFormat, lambda: P.PromptFormat("bad", "{y}"), ValueError,
        r"template must contain '\{x\}' and end with ' \{y\}', got '\{y\}'"),
    Bad("a number for the template", P.PromptFormat, lambda: P.PromptFormat("bad", 5), TypeError,
        r"template must be a str, got int"),
    Bad("a template with another field", P.PromptFormat, lambda: P.PromptFormat("bad", "{x} {z} {y}"), ValueError,
        r"template may only use the fields \{x\} and \{y\}, got '\{x\} \{z\} \{y\}'"),
    Bad("a number for the separator", P.PromptFormat, lambda: P.PromptFormat("bad", "{x} {y}", 0), TypeError,
        r"separator must be a str, got int"),
    Bad("a number for the name", P.PromptFormat, lambda: P.PromptFormat(1, "{x} {y}"), TypeError,
        r"name must be a str, got int"),

    Bad("unknown format", P.build_prompt, lambda: P.build_prompt([], "x", fmt="yaml"), ValueError,
        r"unknown prompt format 'yaml'; expected one of \['arrow', 'bare', 'io'\] or a PromptFormat"),
    Bad("demonstrations as strings", P.build_prompt, lambda: P.build_prompt(["a => b"], "x"), TypeError,
        r"demonstrations must be a sequence of \(x, y\) string pairs"),
    Bad("demonstrations as a generator (consumed by the check)", P.build_prompt,
        lambda: P.build_prompt((d for d in [("a", "b")]), "x"), TypeError,
        r"demonstrations must be a sequence of \(x, y\) string pairs, got generator"),
    Bad("a number for the query", P.build_prompt, lambda: P.build_prompt([], 3), TypeError,
        r"query must be a str, got int"),
    Bad("a number for the description", P.build_prompt, lambda: P.build_prompt([], "x", task_description=5),
        TypeError, r"task_description must be a str or None, got int"),

    Bad("a number for before_x", P.TokenFormat, lambda: P.TokenFormat("t", before_x=5), TypeError,
        r"before_x must be a sequence of ints, got int"),
    Bad("float ids", P.TokenFormat, lambda: P.TokenFormat("t", between=(1.5,)), TypeError,
        r"between must hold ints, got \[1.5\]"),
    Bad("negative id", P.TokenFormat, lambda: P.TokenFormat("t", after_y=(-1,)), ValueError,
        r"after_y must hold token ids >= 0, got -1"),
    Bad("a string of ids", P.TokenFormat, lambda: P.TokenFormat("t", between="=>"), TypeError,
        r"between must be a sequence of ints, got str"),
    Bad("a number for the name", P.TokenFormat, lambda: P.TokenFormat(3), TypeError, r"name must be a str, got int"),

    Bad("a format name", P.build_token_prompt, lambda: P.build_token_prompt([], 5, "arrow"), TypeError,
        r"fmt must be a TokenFormat, got str"),
    Bad("a float input", P.build_token_prompt, lambda: P.build_token_prompt([(1.5, 2)], 5, ARROW), TypeError,
        r"a demonstration's x must be a sequence of ints, got float"),
    Bad("a float tensor label (truncated before)", P.build_token_prompt,
        lambda: P.build_token_prompt([(1, torch.tensor([2.7]))], 5, ARROW), TypeError,
        r"a demonstration's y must be a 1-D integer tensor or a list of ints, got torch.float32"),
    Bad("a demonstration that is not a pair", P.build_token_prompt, lambda: P.build_token_prompt([(5,)], 6, ARROW),
        TypeError, r"demonstrations must be \(x, y\) pairs, got \(5,\)"),
    Bad("a negative query", P.build_token_prompt, lambda: P.build_token_prompt([], -1, ARROW), ValueError,
        r"query must hold token ids >= 0, got -1"),
    Bad("a string prefix", P.build_token_prompt, lambda: P.build_token_prompt([], 5, ARROW, prefix="ab"), TypeError,
        r"prefix must be a sequence of ints, got str"),

    Bad("a number for the model", P.model_logits, lambda: P.model_logits(5, token_ids()), TypeError,
        r"model must be callable \(a language model\), got int"),
    Bad("a list of ids", P.model_logits, lambda: P.model_logits(tiny_gpt(), [[1, 2]]), TypeError,
        r"idx must be a torch.Tensor, got list"),
    Bad("1-D ids", P.model_logits, lambda: P.model_logits(tiny_gpt(), torch.tensor([1, 2])), ValueError,
        r"idx must have 2 dimensions, got shape \(2,\)"),
    Bad("a model without a vocabulary axis", P.model_logits, lambda: P.model_logits(returns_2d, token_ids()),
        ValueError,
        r"the model must return logits of shape \(B, T, V\) = \(2, 4\) \+ \(V,\), got torch.Size\(\[2, 4\]\)"),

    Bad("unknown reduction", P.label_logprobs, lambda: P.label_logprobs(tiny_gpt(), [1, 2], [[3]], reduce="max"),
        ValueError, r"reduce must be one of \['sum', 'mean'\], got 'max'"),
    Bad("an empty prompt", P.label_logprobs, lambda: P.label_logprobs(tiny_gpt(), [], [[3]]), ValueError,
        r"the prompt must hold at least one token"),
    Bad("no labels", P.label_logprobs, lambda: P.label_logprobs(tiny_gpt(), [1], []), ValueError,
        r"labels must be a non-empty list of non-empty token sequences"),
    Bad("label id = vocab_size", P.label_logprobs, lambda: P.label_logprobs(tiny_gpt(), [1, 2], [[3], [V]]),
        ValueError, r"labels must hold token ids in \[0, 11\) \(the model's vocabulary\), got 11"),
    Bad("negative label id", P.label_logprobs, lambda: P.label_logprobs(tiny_gpt(), [1, 2], [[-1]]), ValueError,
        r"a label must hold token ids >= 0, got -1"),
    Bad("a float prompt", P.label_logprobs, lambda: P.label_logprobs(tiny_gpt(), [1.5], [[3]]), TypeError,
        r"prompt must hold ints, got \[1.5\]"),
    Bad("NaN logits", P.label_logprobs, lambda: P.label_logprobs(nan_gpt(), [1, 2], [[3]]), ValueError,
        r"the model's logits must be finite, got 11 NaN"),

    Bad("float candidates", P.classify_by_likelihood,
        lambda: P.classify_by_likelihood(tiny_gpt(), token_ids(), torch.tensor([[1.0], [2.0]])), TypeError,
        r"candidates must be an integer \(int64 or int32\) tensor of token ids, got torch.float32"),
    Bad("candidate = vocab_size", P.classify_by_likelihood,
        lambda: P.classify_by_likelihood(tiny_gpt(), token_ids(), torch.tensor([[1], [V]])), ValueError,
        r"candidates must hold ids in \[0, 11\), got values in \[1, 11\]"),
    Bad("negative candidate", P.classify_by_likelihood,
        lambda: P.classify_by_likelihood(tiny_gpt(), token_ids(), torch.tensor([[1], [-1]])), ValueError,
        r"candidates must hold ids in \[0, 11\), got values in \[-1, 1\]"),
    Bad("uint8 candidates", P.classify_by_likelihood,
        lambda: P.classify_by_likelihood(tiny_gpt(), token_ids(), torch.tensor([[1], [2]], dtype=torch.uint8)),
        TypeError, r"candidates must be an integer .* got torch.uint8"),
    Bad("1-D prompts", P.classify_by_likelihood,
        lambda: P.classify_by_likelihood(tiny_gpt(), torch.tensor([1, 2]), torch.tensor([[1]])), ValueError,
        r"prompts must have 2 dimensions, got shape \(2,\)"),
    Bad("a row of candidates missing", P.classify_by_likelihood,
        lambda: P.classify_by_likelihood(tiny_gpt(), token_ids(), torch.tensor([[1]])), ValueError,
        r"candidates must have one row per prompt \(2\), got 1"),
    Bad("float prompts", P.classify_by_likelihood,
        lambda: P.classify_by_likelihood(tiny_gpt(), token_ids(dtype=f32), torch.tensor([[1], [2]])), TypeError,
        r"idx must be an integer .* got torch.float32"),
    Bad("NaN logits", P.classify_by_likelihood,
        lambda: P.classify_by_likelihood(nan_gpt(), token_ids(), torch.tensor([[1], [2]])), ValueError,
        r"the model's next-token logits must be finite, got 22 NaN"),

    Bad("no new tokens", P.greedy_continuation, lambda: P.greedy_continuation(tiny_gpt(), [1], 0), ValueError,
        r"max_new_tokens must be positive, got 0"),
    Bad("an empty prompt", P.greedy_continuation, lambda: P.greedy_continuation(tiny_gpt(), [], 2), ValueError,
        r"the prompt must hold at least one token"),
    Bad("a float prompt", P.greedy_continuation, lambda: P.greedy_continuation(tiny_gpt(), [1.5], 2), TypeError,
        r"prompt must hold ints, got \[1.5\]"),
    Bad("a string prompt", P.greedy_continuation, lambda: P.greedy_continuation(tiny_gpt(), "abc", 2), TypeError,
        r"prompt must be a sequence of ints, got str"),
    Bad("a string stop token", P.greedy_continuation, lambda: P.greedy_continuation(tiny_gpt(), [1], 2, stop="\n"),
        TypeError, r"stop must be a sequence of ints, got str"),
    Bad("zero window (no crop at all before)", P.greedy_continuation,
        lambda: P.greedy_continuation(tiny_gpt(), [1], 2, max_len=0), ValueError,
        r"max_len must be positive, got 0"),
    Bad("NaN logits (argmax picks the NaN)", P.greedy_continuation,
        lambda: P.greedy_continuation(nan_gpt(), [1], 2), ValueError,
        r"the model's next-token logits must be finite, got 11 NaN"),

    Bad("a number for the path", P.hf_gpt2_dir, lambda: P.hf_gpt2_dir(5), TypeError,
        r"path must be a folder path \(str or Path\) or None, got int"),
    Bad("a folder without config.json is None", P.hf_gpt2_dir, lambda: P.hf_gpt2_dir(tmp()),
        returns=lambda found: found is None),
    Bad("a missing directory", P.load_hf_gpt2, lambda: P.load_hf_gpt2(tmp() / "gone"), FileNotFoundError,
        r"is not a Hugging Face model directory \(no config.json\)"),
    Bad("a number for the directory", P.load_hf_gpt2, lambda: P.load_hf_gpt2(5), TypeError,
        r"directory must be a folder path \(str or Path\), got int"),
    Bad("a BERT directory", P.load_hf_gpt2, lambda: P.load_hf_gpt2(hf_bert_dir()), ValueError,
        r"expected a GPT-2 checkpoint \(model_type 'gpt2'\), got model_type 'bert'"),

    Bad("no tokenizer", P.run_slide_prompts, lambda: P.run_slide_prompts(slide_gpt(), None), TypeError,
        r"tokenizer must have encode and decode methods, got NoneType"),
    Bad("a number for the model", P.run_slide_prompts, lambda: P.run_slide_prompts(5, slide_tokenizer()), TypeError,
        r"model must be callable \(a language model\), got int"),
    Bad("no new tokens", P.run_slide_prompts,
        lambda: P.run_slide_prompts(slide_gpt(), slide_tokenizer(), max_new_tokens=0), ValueError,
        r"max_new_tokens must be positive, got 0"),
]


ROWS = GPT + ICL + INDUCTION + PROMPTING

test_bad_call = bad_call_test(ROWS)

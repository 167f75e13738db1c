"""Bad calls to GPT, in-context learning, induction heads, prompting, the translation task and the exercise
machinery (checks, grading, student versions): each must give a clear error.

One row per thing that can go wrong (see ``tests/bad_input_helpers.py``): the error type, a regex its
message must match (the argument's name, what was expected, what arrived), raised by coursekit itself.
A ``returns=`` row checks a documented convention instead (e.g. fine-tuning on zero demonstrations returns
an untouched copy). Every model here is tiny and every row fails before any training starts; checkpoints
and notebooks are written in a temporary folder, never in ``data/`` or ``notebooks/``.
"""

from __future__ import annotations

import functools
import json
import tempfile
from pathlib import Path

import nbformat
import pytest
import torch
from bad_input_helpers import Bad, check_bad_call, ids, register
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from safetensors.torch import load_file, save_file
from torch import nn

from coursekit import text
from coursekit.attention import KVCache
from coursekit.bench import cost
from coursekit.bench import speed as bench
from coursekit.exercises import core as ex_core
from coursekit.exercises import grade as ex_grade
from coursekit.exercises import student as ex_student
from coursekit.exercises import written as ex_written
from coursekit.gpt import char as char_gpt
from coursekit.gpt import icl, icl_training, induction
from coursekit.gpt import model as gpt
from coursekit.gpt import prompting as P
from coursekit.text import Vocab
from coursekit.training.loop import save_checkpoint
from coursekit.transformer.model import Transformer, TransformerConfig
from coursekit.translation import benchmark, recipes, subword, throughput
from coursekit.translation import core as tr
from coursekit.translation import explore as tr_inspect
from coursekit.translation import scoring as tr_scoring

EXEMPT = {
    "coursekit.translation.core.TranslationBatch": "a plain container of tensors built by TranslationData.make_batch; "
                                                   "the models check what they read from it",
    "coursekit.translation.explore.Attended": "a plain result container filled by translate_with_attention",
    "coursekit.exercises.core.CheckFailed": "an exception class raised by the checks",
    "coursekit.exercises.core.Delegated": "an exception class raised by forbid_references",
    "coursekit.exercises.core.describe": "describes any value for a message: there is no wrong argument",
    "coursekit.exercises.grade.ExerciseGrade": "a plain result container filled by grade",
    "coursekit.exercises.grade.GradeReport": "a plain result container filled by grade",
    "coursekit.exercises.written.WrittenExercise": "a plain result container filled by written_exercises",
    "coursekit.exercises.student.MarkerError": "an exception class raised on malformed markers",
    "coursekit.exercises.student.Exercise": "a plain record filled by student_notebook and exercises_of",
}

f32, i64 = torch.float32, torch.long
NAN = float("nan")
_TMP = tempfile.TemporaryDirectory(prefix="coursekit-bad-applications-")


def tmp() -> Path:
    """A fresh empty folder (removed when the test session ends)."""
    return Path(tempfile.mkdtemp(dir=_TMP.name))


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


# ==============================================================================================
# coursekit.gpt.model and coursekit.gpt.char — a GPT with 11 tokens, a context of 8, 2 layers of width 8
# ==============================================================================================

V, CTX = 11, 8


def gpt_config(**kw):
    return gpt.GPTConfig(**({"vocab_size": V, "block_size": CTX, "n_layer": 2, "n_head": 2, "n_embd": 8} | kw))


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


def char_gpt_dir(extra=None, report=True) -> Path:
    """A directory like data/gpt: model.safetensors (+ the character table) and report.json."""
    folder = tmp()
    model = gpt.GPT(gpt_config())
    save_checkpoint(folder / "model.safetensors", model, model.config, extra=extra)
    if report:
        (folder / "report.json").write_text("{}")
    return folder


STREAM = torch.arange(50) % V                     # a stream of token ids, as char_data returns


def train_config(**kw):
    return char_gpt.TrainConfig(**kw)


GPT = [
    Bad("zero vocabulary", gpt.GPTConfig, lambda: gpt_config(vocab_size=0), ValueError,
        r"vocab_size must be positive, got 0"),
    Bad("float width", gpt.GPTConfig, lambda: gpt_config(n_embd=8.0), TypeError, r"n_embd must be an int, got float"),
    Bad("a bool for the layer count", gpt.GPTConfig, lambda: gpt_config(n_layer=True), TypeError,
        r"n_layer must be an int, got bool"),
    Bad("negative context", gpt.GPTConfig, lambda: gpt_config(block_size=-8), ValueError,
        r"block_size must be positive, got -8"),
    Bad("heads do not divide the width", gpt.GPTConfig, lambda: gpt_config(n_embd=10, n_head=3), ValueError,
        r"n_embd=10 must be divisible by n_head=3"),
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
        r"sequence of 9 tokens .* longer than the model's context block_size=8"),
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
        ValueError, r"the prompt has 9 tokens but the context is block_size=8"),
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
        r"checkpoint has no block 2 \(no h.2.\* weights\); the config asks for n_layer=3"),
    Bad("config asks for fewer layers than the weights hold", gpt.GPT.from_hf,
        lambda: gpt.GPT.from_hf(hf_dir_with_config(n_layer=1)), ValueError,
        r"unexpected weights in the GPT-2 checkpoint \(config says n_layer=1\): \['h.1."),
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
        lambda: gpt.GPT(gpt_config(n_embd=4)).load_hf_state_dict(hf_state()), ValueError,
        r"weight shapes differ from the config \(checkpoint, expected\): \{'wte.weight': \(\(11, 8\), \(11, 4\)\)"),

    Bad("a dict for the model", gpt.GPTClassifier, lambda: gpt.GPTClassifier({"n_embd": 8}, 3), TypeError,
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
        r"text must be long enough to split 90/10 into non-empty train and validation parts, got 1 character"),

    Bad("float data", char_gpt.get_batch, lambda: char_gpt.get_batch(STREAM.float(), 2, 4), TypeError,
        r"data must be an integer \(int64 or int32\) tensor of token ids, got torch.float32"),
    Bad("2-D data", char_gpt.get_batch, lambda: char_gpt.get_batch(STREAM.reshape(5, 10), 2, 4), ValueError,
        r"data must have 1 dimensions, got shape \(5, 10\)"),
    Bad("a list for the data", char_gpt.get_batch, lambda: char_gpt.get_batch(STREAM.tolist(), 2, 4), TypeError,
        r"data must be a torch.Tensor, got list"),
    Bad("data no longer than a window", char_gpt.get_batch, lambda: char_gpt.get_batch(STREAM[:8], 2, 8), ValueError,
        r"data must hold more than block_size=8 tokens \(a window and its next token\), got 8"),
    Bad("zero batch", char_gpt.get_batch, lambda: char_gpt.get_batch(STREAM, 0, 4), ValueError,
        r"batch_size must be positive, got 0"),
    Bad("zero window", char_gpt.get_batch, lambda: char_gpt.get_batch(STREAM, 2, 0), ValueError,
        r"block_size must be positive, got 0"),
    Bad("float window", char_gpt.get_batch, lambda: char_gpt.get_batch(STREAM, 2, 4.0), TypeError,
        r"block_size must be an int, got float"),
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
        r"data must hold more than block_size=8 tokens"),
    Bad("ids of another vocabulary", char_gpt.estimate_loss,
        lambda: char_gpt.estimate_loss(tiny_gpt(), STREAM + V, batch_size=2, iters=1), ValueError,
        r"idx must hold ids in \[0, 11\)"),
    Bad("a dict for the model", char_gpt.fixed_val_loss, lambda: char_gpt.fixed_val_loss({}, STREAM), TypeError,
        r"model must be a coursekit.gpt.model.GPT, got dict"),
    Bad("float validation ids", char_gpt.fixed_val_loss, lambda: char_gpt.fixed_val_loss(tiny_gpt(), STREAM.float()),
        TypeError, r"val_ids must be an integer \(int64 or int32\) tensor of token ids, got torch.float32"),
    Bad("validation ids shorter than the context", char_gpt.fixed_val_loss,
        lambda: char_gpt.fixed_val_loss(tiny_gpt(), STREAM[:6]), ValueError,
        r"val_ids must hold more than block_size=8 tokens \(a window and its next token\), got 6"),

    Bad("a missing directory", char_gpt.load_char_gpt, lambda: char_gpt.load_char_gpt(tmp() / "gone"),
        FileNotFoundError, r"no checkpoint at .*gone.*python -m coursekit.gpt train"),
    Bad("no report.json", char_gpt.load_char_gpt,
        lambda: char_gpt.load_char_gpt(char_gpt_dir({"chars": "abcdefghijk"}, False)),
        FileNotFoundError, r"no report at .*report.json; make the model with `python -m coursekit.gpt train"),
    Bad("a checkpoint without a character table", char_gpt.load_char_gpt,
        lambda: char_gpt.load_char_gpt(char_gpt_dir()),
        ValueError, r"holds no character-level GPT \(its metadata has no 'chars'\)"),

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

    Bad("zero layers", char_gpt.TrainConfig, lambda: train_config(n_layer=0), ValueError,
        r"n_layer must be positive, got 0"),
    Bad("float batch", char_gpt.TrainConfig, lambda: train_config(batch_size=1.5), TypeError,
        r"batch_size must be an int, got float"),
    Bad("heads do not divide the width", char_gpt.TrainConfig, lambda: train_config(n_embd=10, n_head=3), ValueError,
        r"n_embd=10 must be divisible by n_head=3"),
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
        lambda: char_gpt.train(train_config(block_size=64), "abcd" * 100),
        ValueError, r"text is too short for block_size=64: its validation part \(the last 10%\) has 40 characters"),
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


FAM = family()                                    # vocabulary 16, block_size 25


@functools.cache
def icl_gpt():
    torch.manual_seed(0)
    return gpt.GPT(gpt.GPTConfig(vocab_size=FAM.vocab_size, block_size=FAM.block_size(), n_layer=2, n_head=2,
                                 n_embd=8)).eval()


def icl_config(**kw):
    return icl_training.ICLTrainConfig(**({"n_layer": 2, "n_head": 2, "n_embd": 8, "steps": 2, "batch_size": 2,
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
    Bad("unknown format", icl.ICLTaskFamily.block_size, lambda: FAM.block_size("yaml"), ValueError,
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

    Bad("zero layers", icl_training.ICLTrainConfig, lambda: icl_config(n_layer=0), ValueError,
        r"n_layer must be positive, got 0"),
    Bad("float steps", icl_training.ICLTrainConfig, lambda: icl_config(steps=1.5), TypeError,
        r"steps must be an int, got float"),
    Bad("heads do not divide the width", icl_training.ICLTrainConfig, lambda: icl_config(n_embd=10, n_head=3),
        ValueError, r"n_embd=10 must be divisible by n_head=3"),
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
        r"the family needs at least 16 content tokens and a context of 32, got 12 tokens and block_size=25"),

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
        r"longer than the model's context block_size=25"),

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
        lambda: icl_training.save_icl_checkpoint(tmp(), icl_gpt(), icl_config(n_embd=16), {}), ValueError,
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
        r"idx has 32 tokens, more than the model's context block_size=25"),

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
    Bad("layer = n_layer", induction.ablate_heads, lambda: ablate(heads=[(2, 0)]), ValueError,
        r"layer must lie in 0…1, got 2"),
    Bad("negative layer (counted from the end)", induction.ablate_heads, lambda: ablate(heads=[(-1, 0)]), ValueError,
        r"layer must lie in 0…1, got -1"),
    Bad("head = n_head", induction.ablate_heads, lambda: ablate(heads=[(0, 2)]), ValueError,
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
        r"idx has 26 tokens, more than the model's context block_size=25"),
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
    return gpt.GPT(gpt_config(vocab_size=len(slide_tokenizer()), block_size=512))


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
        lambda: P.greedy_continuation(tiny_gpt(), [1], 2, block_size=0), ValueError,
        r"block_size must be positive, got 0"),
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


# ==============================================================================================
# coursekit.translation — three sentence pairs, word vocabularies, a one-layer Transformer of width 8
# ==============================================================================================

PAIRS = [(["i", "run", "."], ["je", "cours", "."]), (["we", "run", "."], ["nous", "courons", "."]),
         (["i", "eat", "."], ["je", "mange", "."])]


def tiny_data(**kw):
    """Train = the three pairs, test = the first two (a real TranslationData, no corpus read)."""
    src, tgt = Vocab.build([e for e, _ in PAIRS]), Vocab.build([f for _, f in PAIRS])
    parts = {"train": list(PAIRS), "test": list(PAIRS[:2]), "src_vocab": src, "tgt_vocab": tgt, "max_len": 5} | kw
    return tr.TranslationData(**parts)


@functools.cache
def tiny_transformer():
    data = tiny_data()
    torch.manual_seed(0)
    return Transformer(TransformerConfig(len(data.src_vocab), len(data.tgt_vocab), d_model=8, n_heads=2,
                                         n_encoder_layers=1, n_decoder_layers=1, d_ff=16, max_len=16)).eval()


def config_mt(**kw):
    return TransformerConfig(**({"src_vocab_size": 12, "tgt_vocab_size": 12, "d_model": 8, "n_heads": 2,
                                 "n_encoder_layers": 1, "n_decoder_layers": 1, "d_ff": 16, "max_len": 16} | kw))


def echo(batch):
    return batch.tgt_out.tolist()


@functools.cache
def toy_bpe():
    return subword.SubwordVocab.train(["le chat dort .", "le chien dort .", "un chat noir ."] * 5, 40)


def tokenizer_dir(content: str) -> Path:
    folder = tmp()
    (folder / benchmark.TOKENIZER_FILE).write_text(content)
    return folder


def report(**kw):
    return tr_scoring.BleuReport(**({"bleu": 10.0, "by_length": [], "sources": ["a"], "hypotheses": ["b"],
                             "references": ["c"]} | kw))


def recipe(**kw):
    return recipes.Recipe(**({"model": "transformer"} | kw))


def model_dir_with(report_text: str | None, model_bytes: bytes | None = None) -> Path:
    folder = tmp()
    if report_text is not None:
        (folder / "report.json").write_text(report_text)
    if model_bytes is not None:
        (folder / "model.safetensors").write_bytes(model_bytes)
    return folder


def torch_mt():
    torch.manual_seed(0)
    return throughput.TorchTransformerMT(config_mt())


def torch_mt_call(src=None, tgt_in=None, src_keep=None, tgt_keep=None):
    src = torch.randint(0, 12, (2, 5), generator=gen()) if src is None else src
    tgt_in = torch.randint(0, 12, (2, 4), generator=gen()) if tgt_in is None else tgt_in
    src_keep = torch.ones(src.shape, dtype=torch.bool) if src_keep is None else src_keep
    tgt_keep = torch.ones(tgt_in.shape, dtype=torch.bool) if tgt_keep is None else tgt_keep
    return torch_mt()(src, tgt_in, src_keep, tgt_keep)


TRANSLATION = [
    Bad("a list for the sentence", tr.normalize, lambda: tr.normalize(["hi"]), TypeError,
        r"normalize expects a str, got list"),
    Bad("None for the sentence", tr.split_tokens, lambda: tr.split_tokens(None), TypeError,
        r"normalize expects a str, got NoneType"),
    Bad("a number for the sentence", tr.is_test_sentence, lambda: tr.is_test_sentence(5), TypeError,
        r"normalize expects a str, got int"),
    Bad("test_per_mille = 1000 (every sentence)", tr.is_test_sentence, lambda: tr.is_test_sentence("Hi.", 1000),
        ValueError, r"test_per_mille must be an int in \(0, 1000\), got 1000"),
    Bad("float test_per_mille", tr.is_test_sentence, lambda: tr.is_test_sentence("Hi.", 50.5), TypeError,
        r"test_per_mille must be an int, got float"),

    Bad("a dict for the vocabulary", tr.TranslationData, lambda: tiny_data(src_vocab={"i": 4}), TypeError,
        r"src_vocab must be a Vocab or a SubwordVocab, got dict"),
    Bad("zero max_len", tr.TranslationData, lambda: tiny_data(max_len=0), ValueError,
        r"max_len must be positive, got 0"),
    Bad("sentences instead of pairs", tr.TranslationData, lambda: tiny_data(train=["i run ."]), TypeError,
        r"train must hold \(english_tokens, french_tokens\) pairs of token lists, got 'i run .'"),
    Bad("a pair of strings (split into characters)", tr.TranslationData,
        lambda: tiny_data(test=[("i run .", "je cours .")]), TypeError,
        r"test must hold \(english_tokens, french_tokens\) pairs of token lists, got \('i run .', 'je cours .'\)"),
    Bad("an index past the split", tr.TranslationData.make_batch, lambda: tiny_data().make_batch([0, 2], "test"),
        ValueError, r"indices must be ints in \[0, 2\) for the 'test' split \(2 pairs\), got \[2\]"),
    Bad("a negative index (counted from the end)", tr.TranslationData.make_batch,
        lambda: tiny_data().make_batch([-1]), ValueError,
        r"indices must be ints in \[0, 3\) for the 'train' split \(3 pairs\), got \[-1\]"),
    Bad("no index", tr.TranslationData.make_batch, lambda: tiny_data().make_batch([]), ValueError,
        r"make_batch needs at least one index"),
    Bad("a float index", tr.TranslationData.make_batch, lambda: tiny_data().make_batch([0.5]), TypeError,
        r"indices must hold ints, got \[0.5\]"),
    Bad("a float tensor of indices", tr.TranslationData.make_batch,
        lambda: tiny_data().make_batch(torch.tensor([0.0, 1.0])), TypeError,
        r"indices must be a 1-D integer tensor or a list of ints, got torch.float32"),
    Bad("one index, not a list", tr.TranslationData.make_batch, lambda: tiny_data().make_batch(1), TypeError,
        r"indices must be a sequence of ints, got int"),
    Bad("unknown split", tr.TranslationData.make_batch, lambda: tiny_data().make_batch([0], "dev"), ValueError,
        r"split must be 'train', 'test' or 'valid', got 'dev'"),
    Bad("zero batch", tr.TranslationData.batches, lambda: list(tiny_data().batches(0)), ValueError,
        r"batch_size must be positive, got 0"),
    Bad("unknown split", tr.TranslationData.batches, lambda: list(tiny_data().batches(2, split="dev")), ValueError,
        r"split must be 'train', 'test' or 'valid', got 'dev'"),
    Bad("a seed for the generator", tr.TranslationData.batches, lambda: list(tiny_data().batches(2, 0)), TypeError,
        r"generator must be a torch.Generator or None, got int"),
    Bad("a string for shuffle", tr.TranslationData.batches, lambda: list(tiny_data().batches(2, shuffle="yes")),
        TypeError, r"shuffle must be a bool or None, got str"),
    Bad("zero batch (found when the function is made)", tr.TranslationData.batch_fn,
        lambda: tiny_data().batch_fn(0), ValueError, r"batch_size must be positive, got 0"),
    Bad("a seed for the generator", tr.TranslationData.batch_fn, lambda: tiny_data().batch_fn(2, 0), TypeError,
        r"generator must be a torch.Generator or None, got int"),
    Bad("unknown split", tr.TranslationData.lengths, lambda: tiny_data().lengths("dev"), ValueError,
        r"split must be 'train', 'test' or 'valid', got 'dev'"),
    Bad("more pairs than the split has", tr.TranslationData.truncate, lambda: tiny_data().truncate("test", 5),
        ValueError, r"n must be an int in \[0, 2\] for split 'test', got 5"),
    Bad("unknown split", tr.TranslationData.truncate, lambda: tiny_data().truncate("dev", 1), ValueError,
        r"split must be 'train', 'test' or 'valid', got 'dev'"),
    Bad("an index past the split", tr.TranslationData.source_text, lambda: tiny_data().source_text(2), ValueError,
        r"i must be an index in \[0, 2\) of the 'test' split, got 2"),
    Bad("a negative index", tr.TranslationData.source_text, lambda: tiny_data().source_text(-1), ValueError,
        r"i must be an index in \[0, 2\) of the 'test' split, got -1"),
    Bad("a float index", tr.TranslationData.source_text, lambda: tiny_data().source_text(1.0), TypeError,
        r"i must be an int, got float"),
    Bad("float ids", tr.TranslationData.detokenize, lambda: tiny_data().detokenize([4.0, 5.0]), TypeError,
        r"ids must hold ints, got \[4.0, 5.0\]"),
    Bad("an id past the vocabulary", tr.TranslationData.detokenize, lambda: tiny_data().detokenize([4, 99]),
        ValueError, r"ids must lie in \[0, 10\), got 99"),
    Bad("a number for translate", tr.TranslationData.evaluate, lambda: tiny_data().evaluate(5), TypeError,
        r"translate must be a function batch -> list of id lists, got int"),
    Bad("zero batch", tr.TranslationData.evaluate, lambda: tiny_data().evaluate(echo, batch_size=0), ValueError,
        r"batch_size must be positive, got 0"),
    Bad("zero limit", tr.TranslationData.evaluate, lambda: tiny_data().evaluate(echo, limit=0), ValueError,
        r"limit must be positive, got 0"),
    Bad("negative limit", tr.TranslationData.evaluate, lambda: tiny_data().evaluate(echo, limit=-1), ValueError,
        r"limit must be positive, got -1"),
    Bad("unknown split", tr.TranslationData.evaluate, lambda: tiny_data().evaluate(echo, split="dev"), ValueError,
        r"split must be 'train', 'test' or 'valid', got 'dev'"),
    Bad("one output for a batch of two", tr.TranslationData.evaluate, lambda: tiny_data().evaluate(lambda b: [[4]]),
        ValueError, r"translate returned 1 outputs for a batch of 2"),
    Bad("float ids from translate", tr.TranslationData.evaluate,
        lambda: tiny_data().evaluate(lambda b: [[4.0], [5.0]]), TypeError, r"ids must hold ints, got \[4.0\]"),

    Bad("negative number of examples", tr_scoring.BleuReport.examples, lambda: report().examples(-1), ValueError,
        r"k must be an int ≥ 0, got -1"),
    Bad("float number of examples", tr_scoring.BleuReport.examples, lambda: report().examples(2.5), TypeError,
        r"k must be an int, got float"),
    Bad("exact match of an empty report", tr_scoring.BleuReport, lambda: report(hypotheses=[], references=[]).exact,
        ValueError, r"exact is undefined for a report without references"),

    Bad("float max_len", tr.load_translation, lambda: tr.load_translation(max_len=6.5), TypeError,
        r"max_len must be an int, got float"),
    Bad("test_per_mille = 0", tr.load_translation, lambda: tr.load_translation(test_per_mille=0), ValueError,
        r"test_per_mille must be an int in \(0, 1000\), got 0"),
    Bad("zero test sentences", tr.load_translation, lambda: tr.load_translation(n_test=0), ValueError,
        r"n_test must be positive, got 0"),
    Bad("negative validation size", tr.load_translation, lambda: tr.load_translation(n_valid=-1), ValueError,
        r"n_valid must be an int ≥ 0, got -1"),
    Bad("validation without a test set", tr.load_translation, lambda: tr.load_translation(n_test=None, n_valid=5),
        ValueError, r"n_valid needs n_test"),
    Bad("a string for the subwords (found before reading the corpus)", tr.load_translation,
        lambda: tr.load_translation(subwords="bpe"), TypeError, r"subwords must be a SubwordVocab or None, got str"),
    Bad("a float seed", tr.load_translation, lambda: tr.load_translation(seed=0.5), TypeError,
        r"seed must be an int, got float"),
    Bad("unknown release", tr.load_translation, lambda: tr.load_translation(release="europarl"), ValueError,
        r"release must be one of \['d2l', 'pytorch'\], got 'europarl'"),

    Bad("fewer references", tr_scoring.corpus_bleu, lambda: tr_scoring.corpus_bleu(["a b", "c"], ["a b"]), ValueError,
        r"2 hypotheses but 1 references"),
    Bad("an empty corpus", tr_scoring.corpus_bleu, lambda: tr_scoring.corpus_bleu([], []), ValueError,
        r"BLEU of an empty corpus is undefined"),
    Bad("a string for the hypotheses (scored per character)", tr_scoring.corpus_bleu,
        lambda: tr_scoring.corpus_bleu("abc", "abc"), TypeError, r"hypotheses must be a list of str, got str"),
    Bad("token lists instead of strings", tr_scoring.corpus_bleu,
        lambda: tr_scoring.corpus_bleu(["le chat"], [["le", "chat"]]),
        TypeError, r"references must hold str, got \['le', 'chat'\] \(list\)"),
    Bad("fewer references", tr_scoring.corpus_chrf, lambda: tr_scoring.corpus_chrf(["a"], []), ValueError,
        r"1 hypotheses but 0 references"),
    Bad("a string for the references", tr_scoring.corpus_chrf, lambda: tr_scoring.corpus_chrf(["abc"], "abc"),
        TypeError, r"references must be a list of str, got str"),
    Bad("ids instead of strings", tr_scoring.corpus_chrf, lambda: tr_scoring.corpus_chrf([[4, 5]], ["a"]), TypeError,
        r"hypotheses must hold str, got \[4, 5\] \(list\)"),
    Bad("lengths of another size", tr_scoring.bleu_by_length,
        lambda: tr_scoring.bleu_by_length([1], ["a", "b"], ["a", "b"], [(1, 2)]),
        ValueError, r"source_lengths, hypotheses and references must have the same length, got 1, 2, 2"),
    Bad("an empty bucket", tr_scoring.bleu_by_length,
        lambda: tr_scoring.bleu_by_length([1], ["a"], ["a"], [(3, 1)]), ValueError,
        r"bucket \(3, 1\) is empty: expected lo <= hi"),
    Bad("numbers instead of buckets", tr_scoring.bleu_by_length,
        lambda: tr_scoring.bleu_by_length([1], ["a"], ["a"], [3]), TypeError,
        r"buckets must hold \(lo, hi\) pairs of ints, got 3"),
    Bad("float lengths", tr_scoring.bleu_by_length,
        lambda: tr_scoring.bleu_by_length([1.5], ["a"], ["a"], [(1, 2)]), TypeError,
        r"source_lengths must hold ints, got \[1.5\]"),
    Bad("zero max_len", tr_scoring.length_buckets, lambda: tr_scoring.length_buckets(0), ValueError,
        r"max_len must be positive, got 0"),
    Bad("float width", tr_scoring.length_buckets, lambda: tr_scoring.length_buckets(10, 1.5), TypeError,
        r"width must be an int, got float"),
    Bad("a model without translate", tr.translator, lambda: tr.translator(nn.Linear(2, 2)), TypeError,
        r"model must have a translate\(src, src_mask, \.\.\.\) method, got Linear"),
    Bad("zero beam", tr.translator, lambda: tr.translator(tiny_transformer(), beam_size=0), ValueError,
        r"beam_size must be positive, got 0"),
    Bad("zero max_len", tr.translator, lambda: tr.translator(tiny_transformer(), max_len=0), ValueError,
        r"max_len must be positive, got 0"),
    Bad("negative length penalty", tr.translator, lambda: tr.translator(tiny_transformer(), length_penalty=-1.0),
        ValueError, r"length_penalty must be (an int )?≥ 0 and finite, got -1.0"),

    Bad("a string for the tokenizer", subword.SubwordVocab, lambda: subword.SubwordVocab("tokenizer.json"), TypeError,
        r"tokenizer must be a tokenizers.Tokenizer, got str"),
    Bad("one sentence (trained per character)", subword.SubwordVocab.train,
        lambda: subword.SubwordVocab.train("le chat dort .", 40), TypeError,
        r"sentences must be an iterable of str sentences, got one str"),
    Bad("ids instead of sentences", subword.SubwordVocab.train, lambda: subword.SubwordVocab.train([5, 6], 40),
        TypeError, r"sentences must hold str, got 5 \(int\)"),
    Bad("zero pieces", subword.SubwordVocab.train, lambda: subword.SubwordVocab.train(["le chat"], 0), ValueError,
        r"vocab_size must be positive, got 0"),
    Bad("negative min_frequency", subword.SubwordVocab.train,
        lambda: subword.SubwordVocab.train(["le chat"], 40, min_frequency=-1), ValueError,
        r"min_frequency must be positive, got -1"),
    Bad("a number for the path", subword.SubwordVocab.save, lambda: toy_bpe().save(5), TypeError,
        r"path must be a file path \(str or Path\), got int"),
    Bad("a number for the path", subword.SubwordVocab.load, lambda: subword.SubwordVocab.load(5), TypeError,
        r"path must be a file path \(str or Path\), got int"),
    Bad("a missing file", subword.SubwordVocab.load, lambda: subword.SubwordVocab.load(tmp() / "tok.json"),
        FileNotFoundError, r"no tokenizer file at .*tok.json"),
    Bad("a damaged file", subword.SubwordVocab.load, lambda: subword.SubwordVocab.load(text_file("tok.json", "{oops")),
        ValueError, r"tok.json is not a tokenizers JSON file"),
    Bad("a sentence string", subword.SubwordVocab.encode, lambda: toy_bpe().encode("le chat"), TypeError,
        r"encode expects the list of words of a sentence \(split_tokens\(text\)\), got a str"),
    Bad("ids instead of words", subword.SubwordVocab.encode, lambda: toy_bpe().encode([5]), TypeError,
        r"words must hold str, got 5 \(int\)"),
    Bad("sentence strings (split into characters before)", subword.SubwordVocab.encode_batch,
        lambda: toy_bpe().encode_batch(["le chat"]), TypeError,
        r"sentences must hold word lists \(split_tokens\(text\)\), got 'le chat'"),
    Bad("one string", subword.SubwordVocab.encode_batch, lambda: toy_bpe().encode_batch("le chat"), TypeError,
        r"sentences must be a list of word lists, got str"),
    Bad("an id past the vocabulary", subword.SubwordVocab.decode, lambda: toy_bpe().decode([999]), ValueError,
        r"ids must lie in \[0, \d+\), got 999"),
    Bad("float ids", subword.SubwordVocab.decode, lambda: toy_bpe().decode([1.5]), TypeError,
        r"ids must hold ints, got \[1.5\]"),
    Bad("a negative id", subword.SubwordVocab.detokenize, lambda: toy_bpe().detokenize([4, -1]), ValueError,
        r"ids must lie in \[0, \d+\), got -1"),
    Bad("a sentence string", subword.SubwordVocab.pieces, lambda: toy_bpe().pieces("le chat"), TypeError,
        r"encode expects the list of words of a sentence"),

    Bad("a number for the folder", benchmark.load_tokenizer, lambda: benchmark.load_tokenizer(5), TypeError,
        r"directory must be a folder path \(str or Path\) or None, got int"),
    Bad("a folder given as a string, without the file", benchmark.load_tokenizer,
        lambda: benchmark.load_tokenizer(str(tmp())), FileNotFoundError, r"no benchmark tokenizer at .*tokenizer.json"),
    Bad("a damaged tokenizer file", benchmark.load_tokenizer, lambda: benchmark.load_tokenizer(tokenizer_dir("{oops")),
        ValueError, r"tokenizer.json is not a tokenizers JSON file"),
    Bad("a number for the data", benchmark.train_tokenizer, lambda: benchmark.train_tokenizer(5), TypeError,
        r"data must be a TranslationData or None, got int"),
    Bad("more test sentences than the benchmark", benchmark.load_benchmark,
        lambda: benchmark.load_benchmark(n_test=2000, tokenizer=toy_bpe()), ValueError,
        r"the benchmark's test set has 1000 sentences, n_test=2000 asked"),
    Bad("zero test sentences", benchmark.load_benchmark,
        lambda: benchmark.load_benchmark(n_test=0, tokenizer=toy_bpe()),
        ValueError, r"n_test must be positive, got 0"),
    Bad("float test size", benchmark.load_benchmark, lambda: benchmark.load_benchmark(n_test=10.0, tokenizer=toy_bpe()),
        TypeError, r"n_test must be an int, got float"),
    Bad("negative validation size", benchmark.load_benchmark,
        lambda: benchmark.load_benchmark(n_valid=-1, tokenizer=toy_bpe()), ValueError,
        r"n_valid must be an int ≥ 0, got -1"),
    Bad("more validation sentences than the benchmark", benchmark.load_benchmark,
        lambda: benchmark.load_benchmark(n_valid=600, tokenizer=toy_bpe()), ValueError,
        r"the benchmark's validation set has 500 sentences, n_valid=600"),
    Bad("a path for the tokenizer", benchmark.load_benchmark, lambda: benchmark.load_benchmark(tokenizer="tok.json"),
        TypeError, r"tokenizer must be a SubwordVocab or None, got str"),
    Bad("zero training pairs", benchmark.load_benchmark,
        lambda: benchmark.load_benchmark(n_train=0, tokenizer=toy_bpe()),
        ValueError, r"n_train must be positive, got 0"),
    Bad("a number for the data", benchmark.showcase, lambda: benchmark.showcase(5), TypeError,
        r"data must be a TranslationData, got int"),
    Bad("zero test sentences", benchmark.showcase, lambda: benchmark.showcase(tiny_data(), 0), ValueError,
        r"n_test must be positive, got 0"),
    Bad("more test sentences than the data", benchmark.showcase, lambda: benchmark.showcase(tiny_data(), 5),
        ValueError, r"n_test=5 but the data has 2 test pairs"),
    Bad("lengths of different sizes", text.token_batches, lambda: text.token_batches([3, 4], [3], 100),
        ValueError, r"need as many source as target lengths \(≥ 1\), got 2 and 1"),
    Bad("no pairs", text.token_batches, lambda: text.token_batches([], [], 100), ValueError,
        r"need as many source as target lengths \(≥ 1\), got 0 and 0"),
    Bad("zero budget", text.token_batches, lambda: text.token_batches([3], [3], 0), ValueError,
        r"max_tokens must be positive, got 0"),
    Bad("a pair over the budget", text.token_batches, lambda: text.token_batches([30], [30], 50), ValueError,
        r"a pair has 60 tokens, more than max_tokens=50"),
    Bad("zero pool", text.token_batches, lambda: text.token_batches([3], [3], 100, pool=0), ValueError,
        r"pool must be positive, got 0"),
    Bad("float lengths", text.token_batches, lambda: text.token_batches([3.5], [3], 100), TypeError,
        r"src_lengths must hold ints, got \[3.5\]"),
    Bad("a seed for the generator", text.token_batches, lambda: text.token_batches([3], [3], 100, 0),
        TypeError, r"generator must be a torch.Generator or None, got int"),

    Bad("a model without translate", tr_inspect.translate_with_attention,
        lambda: tr_inspect.translate_with_attention(nn.Linear(2, 2), tiny_data(), "I run."), TypeError,
        r"model must have a translate\(src, src_mask, \.\.\.\) method, got Linear"),
    Bad("a number for the data", tr_inspect.translate_with_attention,
        lambda: tr_inspect.translate_with_attention(tiny_transformer(), 5, "I run."), TypeError,
        r"data must be a TranslationData, got int"),
    Bad("an empty sentence", tr_inspect.translate_with_attention,
        lambda: tr_inspect.translate_with_attention(tiny_transformer(), tiny_data(), ""), ValueError,
        r"the sentence has no words"),
    Bad("a list of words", tr_inspect.translate_with_attention,
        lambda: tr_inspect.translate_with_attention(tiny_transformer(), tiny_data(), ["i", "run"]), TypeError,
        r"sentence must be a str, got list"),
    Bad("zero max_len", tr_inspect.translate_with_attention,
        lambda: tr_inspect.translate_with_attention(tiny_transformer(), tiny_data(), "I run.", max_len=0), ValueError,
        r"max_len must be positive, got 0"),
    Bad("a list of weights", tr_inspect.alignment_monotonicity, lambda: tr_inspect.alignment_monotonicity([[1.0]]),
        TypeError, r"weights must be a torch.Tensor, got list"),
    Bad("1-D weights", tr_inspect.alignment_monotonicity, lambda: tr_inspect.alignment_monotonicity(torch.rand(3)),
        ValueError, r"weights must have 2 dimensions, got shape \(3,\)"),
    Bad("one output step", tr_inspect.alignment_monotonicity,
        lambda: tr_inspect.alignment_monotonicity(torch.rand(1, 3)), ValueError,
        r"weights must be \(T, S\) with T ≥ 2 output steps, got shape \(1, 3\)"),
    Bad("NaN weights", tr_inspect.alignment_monotonicity,
        lambda: tr_inspect.alignment_monotonicity(torch.tensor([[0.5, NAN], [0.2, 0.8]])), ValueError,
        r"weights must be finite, got 1 NaN and 0 infinite values"),
    Bad("no example sentences", tr_inspect.translation_explorer,
        lambda: tr_inspect.translation_explorer({"t": tiny_transformer()}, tiny_data(), []), ValueError,
        r"examples must not be empty"),
    Bad("one sentence, not a list", tr_inspect.translation_explorer,
        lambda: tr_inspect.translation_explorer({"t": tiny_transformer()}, tiny_data(), "I run."), TypeError,
        r"examples must be a list of str, got str"),
    Bad("no models", tr_inspect.translation_explorer,
        lambda: tr_inspect.translation_explorer({}, tiny_data(), ["I run."]), ValueError, r"models must not be empty"),
    Bad("a list of models", tr_inspect.translation_explorer,
        lambda: tr_inspect.translation_explorer([tiny_transformer()], tiny_data(), ["I run."]), TypeError,
        r"models must be a dict \{name: model\}, got list"),
    Bad("a model without translate", tr_inspect.translation_explorer,
        lambda: tr_inspect.translation_explorer({"lin": nn.Linear(2, 2)}, tiny_data(), ["I run."]), TypeError,
        r"model must have a translate\(src, src_mask, \.\.\.\) method, got Linear"),
    Bad("a string layer", tr_inspect.translation_explorer,
        lambda: tr_inspect.translation_explorer({"t": tiny_transformer()}, tiny_data(), ["I run."], layer="last"),
        TypeError, r"layer must be an int, got str"),

    Bad("unknown model", recipes.Recipe, lambda: recipe(model="rnn"), ValueError,
        r"model must be one of \('seq2seq', 'attention', 'transformer'\), got 'rnn'"),
    Bad("a list for the architecture", recipes.Recipe, lambda: recipe(arch=[]), TypeError,
        r"arch must be a dict, got list"),
    Bad("zero token budget", recipes.Recipe, lambda: recipe(max_tokens=0), ValueError,
        r"max_tokens must be positive, got 0"),
    Bad("zero learning rate", recipes.Recipe, lambda: recipe(lr=0.0), ValueError,
        r"lr must be positive and finite, got 0.0"),
    Bad("zero warm-up (division by zero)", recipes.Recipe, lambda: recipe(warmup=0), ValueError,
        r"warmup must be positive, got 0"),
    Bad("zero updates", recipes.Recipe, lambda: recipe(max_updates=0), ValueError,
        r"max_updates must be positive, got 0"),
    Bad("label smoothing of 1", recipes.Recipe, lambda: recipe(label_smoothing=1.0), ValueError,
        r"label_smoothing must lie in \[0, 1\), got 1.0"),
    Bad("zero clip", recipes.Recipe, lambda: recipe(clip=0.0), ValueError,
        r"clip must be positive and finite, got 0.0"),
    Bad("zero eval_every", recipes.Recipe, lambda: recipe(eval_every=0), ValueError,
        r"eval_every must be positive, got 0"),
    Bad("a float seed", recipes.Recipe, lambda: recipe(seed=0.5), TypeError, r"seed must be an int, got float"),
    Bad("a recipe name", recipes.build_model, lambda: recipes.build_model("transformer", 12), TypeError,
        r"recipe must be a Recipe, got str"),
    Bad("zero vocabulary", recipes.build_model, lambda: recipes.build_model(recipes.RECIPES["transformer"], 0),
        ValueError, r"vocab_size must be positive, got 0"),
    Bad("an unknown architecture field", recipes.build_model,
        lambda: recipes.build_model(recipe(arch={"d_model": 8, "width": 3}), 12), TypeError,
        r"unexpected keyword argument 'width'"),
    Bad("zero warm-up", recipes.inverse_sqrt, lambda: recipes.inverse_sqrt(0), ValueError,
        r"warmup must be positive, got 0"),
    Bad("float warm-up", recipes.inverse_sqrt, lambda: recipes.inverse_sqrt(1.5), TypeError,
        r"warmup must be an int, got float"),
    Bad("unknown recipe", recipes.train, lambda: recipes.train("rnn", tmp()), ValueError,
        r"name must be one of \['seq2seq', 'attention', 'transformer'\], got 'rnn'"),
    Bad("a dict for the recipe", recipes.train, lambda: recipes.train("transformer", tmp(), recipe={}), TypeError,
        r"recipe must be a Recipe or None, got dict"),
    Bad("zero updates", recipes.train, lambda: recipes.train("transformer", tmp(), max_updates=0), ValueError,
        r"max_updates must be positive, got 0"),
    Bad("a number for the data", recipes.train, lambda: recipes.train("transformer", tmp(), data=5), TypeError,
        r"data must be a TranslationData or None, got int"),
    Bad("zero checkpoint interval", recipes.train,
        lambda: recipes.train("transformer", tmp(), checkpoint_minutes=0, data=tiny_data()), ValueError,
        r"checkpoint_minutes must be positive and finite, got 0"),
    Bad("unknown recipe", recipes.export, lambda: recipes.export("rnn", tiny_transformer(), {}, tmp(), tiny_data()),
        ValueError, r"name must be one of \['seq2seq', 'attention', 'transformer'\], got 'rnn'"),
    Bad("a dict for the model", recipes.export, lambda: recipes.export("transformer", {}, {}, tmp(), tiny_data()),
        TypeError, r"model must be an nn.Module, got dict"),
    Bad("a state without the training record", recipes.export,
        lambda: recipes.export("transformer", tiny_transformer(), {"update": 3}, tmp(),
                               tiny_data(info={"benchmark": {"tokenizer_sha256": "0"}})), ValueError,
        r"state must be the state train\(\) returns; it lacks \['curve', 'epoch', 'position', 'seconds', 'train'\]"),
    Bad("a number for the data", recipes.export,
        lambda: recipes.export("transformer", tiny_transformer(), {}, tmp(), 5), TypeError,
        r"data must be a TranslationData, got int"),
    Bad("data that is not the benchmark", recipes.export,
        lambda: recipes.export("transformer", tiny_transformer(), {}, tmp(), tiny_data()), ValueError,
        r"data must come from load_benchmark \(its info has no 'benchmark' entry\)"),
    Bad("unknown model", recipes.load_model, lambda: recipes.load_model("rnn"), ValueError,
        r"model must be one of \('seq2seq', 'attention', 'transformer'\), got 'rnn'"),
    Bad("a missing directory", recipes.load_model, lambda: recipes.load_model("transformer", tmp() / "gone"),
        FileNotFoundError, r"no report at .*gone.*report.json; make the model with"),
    Bad("a number for the directory", recipes.load_model, lambda: recipes.load_model("transformer", 5), TypeError,
        r"directory must be a folder path \(str or Path\) or None, got int"),
    Bad("a damaged report", recipes.load_model,
        lambda: recipes.load_model("transformer", model_dir_with("{not json")), ValueError,
        r"report.json is not valid JSON"),
    Bad("a report without the file's hash", recipes.load_model,
        lambda: recipes.load_model("transformer", model_dir_with("{}", b"weights")), ValueError,
        r"model.safetensors does not match its report \(sha256 [0-9a-f]{12}… vs None…\)"),
    Bad("a model without translate", recipes.evaluate, lambda: recipes.evaluate(nn.Linear(2, 2), tiny_data()),
        TypeError, r"model must have a translate\(src, src_mask, \.\.\.\) method, got Linear"),
    Bad("a number for the data", recipes.evaluate, lambda: recipes.evaluate(tiny_transformer(), 5), TypeError,
        r"data must be a TranslationData, got int"),
    Bad("unknown split", recipes.evaluate, lambda: recipes.evaluate(tiny_transformer(), tiny_data(), "dev"),
        ValueError, r"split must be 'train', 'test' or 'valid', got 'dev'"),
    Bad("zero beam", recipes.evaluate, lambda: recipes.evaluate(tiny_transformer(), tiny_data(), beam_size=0),
        ValueError, r"beam_size must be positive, got 0"),
    Bad("a list of words", tr.readable_french, lambda: tr.readable_french(["bonjour", "."]), TypeError,
        r"readable_french expects a str, got list"),
    Bad("a sentence longer than the models' context", recipes.translate_sentences,
        lambda: recipes.translate_sentences(tiny_transformer(), tiny_data(), ["i run . " * 30]), ValueError,
        r"sentence 0 has \d+ subword tokens, more than the 62 the committed models take"),
    Bad("one sentence, not a list (translated per character)", recipes.translate_sentences,
        lambda: recipes.translate_sentences(tiny_transformer(), tiny_data(), "I run."), TypeError,
        r"sentences must be a list of str, got str"),
    Bad("numbers for sentences", recipes.translate_sentences,
        lambda: recipes.translate_sentences(tiny_transformer(), tiny_data(), [5]), TypeError,
        r"sentences must hold str, got 5 \(int\)"),
    Bad("a model without translate", recipes.translate_sentences,
        lambda: recipes.translate_sentences(nn.Linear(2, 2), tiny_data(), ["I run."]), TypeError,
        r"model must have a translate\(src, src_mask, \.\.\.\) method, got Linear"),
    Bad("a number for the data", recipes.translate_sentences,
        lambda: recipes.translate_sentences(tiny_transformer(), 5, ["I run."]), TypeError,
        r"data must be a TranslationData, got int"),
    Bad("zero beam", recipes.translate_sentences,
        lambda: recipes.translate_sentences(tiny_transformer(), tiny_data(), ["I run."], beam_size=0), ValueError,
        r"beam_size must be positive, got 0"),

    Bad("a dict for the config", throughput.TorchTransformerMT, lambda: throughput.TorchTransformerMT({}), TypeError,
        r"c must be a TransformerConfig, got dict"),
    Bad("float source", throughput.TorchTransformerMT.forward,
        lambda: torch_mt_call(src=torch.rand(2, 5)), TypeError,
        r"src must be an integer \(int64 or int32\) tensor of token ids, got torch.float32"),
    Bad("source id = vocab_size", throughput.TorchTransformerMT.forward,
        lambda: torch_mt_call(src=torch.full((2, 5), 12)), ValueError, r"src must hold ids in \[0, 12\)"),
    Bad("int16 target", throughput.TorchTransformerMT.forward,
        lambda: torch_mt_call(tgt_in=torch.ones(2, 4, dtype=torch.int16)), TypeError,
        r"tgt_in must be an integer .* got torch.int16"),
    Bad("a float keep-mask (inverted by ~)", throughput.TorchTransformerMT.forward,
        lambda: torch_mt_call(src_keep=torch.ones(2, 5)), TypeError,
        r"src_keep must be a bool tensor \(True = keep\), got torch.float32"),
    Bad("a keep-mask of another shape", throughput.TorchTransformerMT.forward,
        lambda: torch_mt_call(tgt_keep=torch.ones(2, 3, dtype=torch.bool)), ValueError,
        r"tgt_keep must have shape \(2, 4\), got \(2, 3\)"),
    Bad("longer than the positions", throughput.TorchTransformerMT.forward,
        lambda: torch_mt_call(tgt_in=torch.ones(2, 20, dtype=i64)), ValueError,
        r"tgt_in has 20 positions, more than max_len=16"),
    Bad("zero updates (division by zero)", throughput.compare, lambda: throughput.compare(updates=0), ValueError,
        r"updates must be positive, got 0"),
    Bad("negative warm-up", throughput.compare, lambda: throughput.compare(warmup=-1), ValueError,
        r"warmup must be an int ≥ 0, got -1"),
    Bad("zero budget", throughput.compare, lambda: throughput.compare(max_tokens=0), ValueError,
        r"max_tokens must be positive, got 0"),
    Bad("a number for the data", throughput.compare, lambda: throughput.compare(5), TypeError,
        r"data must be a TranslationData or None, got int"),
]


# ==============================================================================================
# coursekit.exercises — check results, the grader, student versions (notebooks in a temporary folder)
# ==============================================================================================

EXERCISE = "# EXERCISE 1: double\n### BEGIN SOLUTION\ny = 2\n### END SOLUTION"


def notebook(*sources: str, markdown: tuple[str, ...] = ()):
    return new_notebook(cells=[new_code_cell(s) for s in sources] + [new_markdown_cell(m) for m in markdown])


def notebook_file(nb=None, name="hw.ipynb", folder=None) -> Path:
    path = (folder or tmp()) / name
    nbformat.write(nb if nb is not None else notebook(EXERCISE), path)
    return path


def text_file(name: str, content: str) -> Path:
    path = tmp() / name
    path.write_text(content)
    return path


def ignore(*args):
    return None


def forbid(references, student=ignore):
    with ex_core.forbid_references(student, references, "this exercise"):
        pass


EXERCISES = [
    Bad("unknown status", ex_core.CheckResult, lambda: ex_core.CheckResult("c", "done", "ok"), ValueError,
        r"status must be one of \['passed', 'failed', 'not attempted'\], got 'done'"),
    Bad("a number for the check name", ex_core.CheckResult, lambda: ex_core.CheckResult(5, "passed", "ok"), TypeError,
        r"check must be a str, got int"),
    Bad("None for the message", ex_core.CheckResult, lambda: ex_core.CheckResult("c", "passed", None), TypeError,
        r"message must be a str, got NoneType"),
    Bad("a result instead of the function", ex_core.require_function,
        lambda: ex_core.require_function(5, "softmax"), ex_core.CheckFailed,
        r"pass your softmax function itself \(e.g. check\(my_softmax\)\), got int 5"),
    Bad("a number for the mistake", ex_core.mistake_value, lambda: ex_core.mistake_value(5, 1), TypeError,
        r"fn must be a function \(the typical mistake\), got int"),
    Bad("a result instead of the student's function", ex_core.run_student,
        lambda: ex_core.run_student(5, "the input 2", 2), ex_core.CheckFailed,
        r"on the input 2, expected your function itself, got int 5"),
    Bad("one dotted name, not a tuple", ex_core.forbid_references, lambda: forbid("torch.softmax"), TypeError,
        r"references must be a tuple of dotted names, got str"),
    Bad("an attribute that does not exist", ex_core.forbid_references,
        lambda: forbid(("torch.nn.functional.no_such_function",)), ValueError,
        r"cannot resolve 'torch.nn.functional.no_such_function'"),
    Bad("a module that does not exist", ex_core.forbid_references, lambda: forbid(("no_such_module.f",)), ValueError,
        r"cannot resolve 'no_such_module.f'"),
    Bad("negative atol", ex_core.expect_close, lambda: ex_core.expect_close(1.0, 1.0, case="c", atol=-1e-5),
        ValueError, r"atol must be (an int )?≥ 0 and finite, got -1e-05"),
    Bad("NaN rtol", ex_core.expect_close, lambda: ex_core.expect_close(1.0, 1.0, case="c", rtol=NAN), ValueError,
        r"rtol must be (an int )?≥ 0 and finite, got nan"),
    Bad("a list of mistakes", ex_core.expect_close,
        lambda: ex_core.expect_close(1.0, 2.0, case="c", mistakes=[("hint", 1.0)]), TypeError,
        r"mistakes must be a dict \{hint: wrong value\} or None, got list"),
    Bad("another shape (the student's mistake: a failed check)", ex_core.expect_close,
        lambda: ex_core.expect_close(torch.ones(2), torch.ones(3), case="c"), ex_core.CheckFailed,
        r"on c, the output should have shape \(3,\), got \(2,\)"),
    Bad("a number for the title", ex_core.exercise_check, lambda: ex_core.exercise_check(5), TypeError,
        r"title must be a str, got int"),
    Bad("one dotted name, not a tuple", ex_core.exercise_check,
        lambda: ex_core.exercise_check("t", reimplements="torch.softmax"), TypeError,
        r"reimplements must be a tuple of dotted names, got str"),
    Bad("None for the success message", ex_core.exercise_check, lambda: ex_core.exercise_check("t", success=None),
        TypeError, r"success must be a str, got NoneType"),

    Bad("a missing notebook", ex_grade.grade, lambda: ex_grade.grade(tmp() / "hw.ipynb"), FileNotFoundError,
        r"no such notebook: .*hw.ipynb"),
    Bad("a number for the path", ex_grade.grade, lambda: ex_grade.grade(5), TypeError,
        r"path must be a notebook path \(str or Path\), got int"),
    Bad("a Python file", ex_grade.grade, lambda: ex_grade.grade(text_file("hw.py", "x = 1\n")), ValueError,
        r"expected a .ipynb notebook, got .*hw.py"),
    Bad("a folder", ex_grade.grade, lambda: ex_grade.grade(tmp()), ValueError, r"expected a .ipynb notebook, got"),
    Bad("a damaged notebook", ex_grade.grade, lambda: ex_grade.grade(text_file("hw.ipynb", "{not json")), ValueError,
        r"hw.ipynb is not a readable notebook"),
    Bad("zero timeout", ex_grade.grade, lambda: ex_grade.grade(notebook_file(), timeout=0), ValueError,
        r"timeout must be a positive number of seconds, got 0"),
    Bad("float timeout", ex_grade.grade, lambda: ex_grade.grade(notebook_file(), timeout=1.5), (ValueError, TypeError),
        r"timeout must be a positive .*seconds.*1.5"),
    Bad("an unknown kernel", ex_grade.grade, lambda: ex_grade.grade(notebook_file(), kernel="no-such-kernel"),
        ValueError, r"no Jupyter kernel named 'no-such-kernel'"),
    Bad("a missing reference", ex_grade.grade, lambda: ex_grade.grade(notebook_file(), reference=tmp() / "ref.ipynb"),
        FileNotFoundError, r"no such reference notebook: .*ref.ipynb"),
    Bad("a damaged reference", ex_grade.grade,
        lambda: ex_grade.grade(notebook_file(), reference=text_file("ref.ipynb", "[]")), ValueError,
        r"ref.ipynb is not a readable notebook"),
    Bad("a number for save_executed", ex_grade.grade, lambda: ex_grade.grade(notebook_file(), save_executed=5),
        TypeError, r"save_executed must be a notebook path \(str or Path\) or None, got int"),
    Bad("a number for the log", ex_grade.grading_env, lambda: ex_grade.grading_env(5), TypeError,
        r"log_path must be a file path \(str or Path\), got int"),
    Bad("a path instead of a notebook", ex_written.written_exercises,
        lambda: ex_written.written_exercises(str(notebook_file())), TypeError,
        r"nb must be a notebook \(nbformat.NotebookNode, e.g. from nbformat.read\), got str"),
    Bad("a plain dict", ex_written.written_exercises, lambda: ex_written.written_exercises({"cells": []}), TypeError,
        r"nb must be a notebook \(nbformat.NotebookNode, e.g. from nbformat.read\), got dict"),
    Bad("a string of numbers ('1' in '12')", ex_written.written_exercises,
        lambda: ex_written.written_exercises(notebook(), code_numbers="12"), TypeError,
        r"code_numbers must be a set of exercise numbers \(str\), got str"),
    Bad("int exercise numbers (never equal to '1')", ex_written.written_exercises,
        lambda: ex_written.written_exercises(notebook(), code_numbers={1}), TypeError,
        r"code_numbers must hold str exercise numbers such as '3' or '3b', got 1 \(int\)"),
    Bad("a tuple for the notes", ex_written.written_exercises,
        lambda: ex_written.written_exercises(notebook(), notes=()), TypeError,
        r"notes must be a list \(messages are appended to it\) or None, got tuple"),

    Bad("a number for the source", ex_student.exercise_header, lambda: ex_student.exercise_header(5), TypeError,
        r"source must be a str, got int"),
    Bad("a list of lines", ex_student.exercise_header, lambda: ex_student.exercise_header(["# EXERCISE 1: a"]),
        TypeError, r"source must be a str, got list"),
    Bad("a header without its colon", ex_student.exercise_header,
        lambda: ex_student.exercise_header("# EXERCISE 1 double"), ex_student.MarkerError,
        r"malformed exercise header '# EXERCISE 1 double'; expected '# EXERCISE N: short title'"),
    Bad("a string instead of lines (read per character)", ex_student.solution_regions,
        lambda: ex_student.solution_regions(EXERCISE, ex_student.SOLUTION_BEGIN, ex_student.SOLUTION_END), TypeError,
        r"lines must be a list of str lines \(source.split\('\\n'\)\), got str"),
    Bad("a region never closed", ex_student.solution_regions,
        lambda: ex_student.solution_regions(["### BEGIN SOLUTION", "x"], ex_student.SOLUTION_BEGIN,
                                            ex_student.SOLUTION_END), ex_student.MarkerError,
        r"'### BEGIN SOLUTION' on line 1 is never closed by '### END SOLUTION'"),
    Bad("an end without a begin", ex_student.solution_regions,
        lambda: ex_student.solution_regions(["x", "### END SOLUTION"], ex_student.SOLUTION_BEGIN,
                                            ex_student.SOLUTION_END), ex_student.MarkerError,
        r"'### END SOLUTION' on line 2 has no '### BEGIN SOLUTION' before it"),
    Bad("nested regions", ex_student.solution_regions,
        lambda: ex_student.solution_regions(["### BEGIN SOLUTION"] * 2, ex_student.SOLUTION_BEGIN,
                                            ex_student.SOLUTION_END), ex_student.MarkerError,
        r"nested markers: '### BEGIN SOLUTION' on line 2 while the one on line 1 is still open"),
    Bad("an unknown cell type (left unchanged before)", ex_student.student_source,
        lambda: ex_student.student_source(EXERCISE, "Code", stub="raise NotImplementedError"), ValueError,
        r"cell_type must be one of \['code', 'markdown', 'raw'\], got 'Code'"),
    Bad("a number for the stub", ex_student.student_source, lambda: ex_student.student_source(EXERCISE, "code", stub=5),
        TypeError, r"stub must be a str, got int"),
    Bad("None for the source", ex_student.student_source, lambda: ex_student.student_source(None, "code", stub="s"),
        TypeError, r"source must be a str, got NoneType"),
    Bad("a plain dict", ex_student.student_notebook, lambda: ex_student.student_notebook({"cells": []}), TypeError,
        r"nb must be a notebook \(nbformat.NotebookNode, e.g. from nbformat.read\), got dict"),
    Bad("an exercise number used twice", ex_student.student_notebook,
        lambda: ex_student.student_notebook(notebook(EXERCISE, EXERCISE)), ex_student.MarkerError,
        r"exercise number 1 is already used by cell 1"),
    Bad("solution markers outside an exercise", ex_student.student_notebook,
        lambda: ex_student.student_notebook(notebook("### BEGIN SOLUTION\ny = 2\n### END SOLUTION")),
        ex_student.MarkerError, r"solution markers outside an exercise cell"),
    Bad("a path instead of a notebook", ex_student.exercises_of, lambda: ex_student.exercises_of("hw.ipynb"), TypeError,
        r"nb must be a notebook \(nbformat.NotebookNode, e.g. from nbformat.read\), got str"),
    Bad("a number for the path", ex_student.notebooks_in, lambda: ex_student.notebooks_in(5), TypeError,
        r"path must be a notebook or folder path \(str or Path\), got int"),
    Bad("a Python file, given as a string", ex_student.notebooks_in, lambda: ex_student.notebooks_in("hw.py"),
        ValueError, r"expected a .ipynb notebook or a directory of them, got hw.py \(build the .ipynb first"),
    Bad("a missing notebook", ex_student.notebooks_in, lambda: ex_student.notebooks_in(tmp() / "hw.ipynb"),
        FileNotFoundError, r"no such notebook: .*hw.ipynb"),
    Bad("an empty folder", ex_student.notebooks_in, lambda: ex_student.notebooks_in(tmp()), ValueError,
        r"no .ipynb notebooks in"),
    Bad("one path, not a list", ex_student.student_paths,
        lambda: ex_student.student_paths(notebook_file(), tmp()), TypeError,
        r"sources must be a list of notebook paths, got PosixPath"),
    Bad("a number for the output", ex_student.student_paths, lambda: ex_student.student_paths([notebook_file()], 5),
        TypeError, r"out must be a folder or notebook path \(str or Path\), got int"),
    Bad("writing into the source folder", ex_student.student_paths,
        lambda: (lambda src: ex_student.student_paths([src], src.parent))(notebook_file()), ValueError,
        r"refusing to write .*hw.ipynb: it is in the source directory"),
    Bad("two notebooks into one file", ex_student.student_paths,
        lambda: ex_student.student_paths([notebook_file(), notebook_file(name="b.ipynb")], tmp() / "out.ipynb"),
        ValueError, r"out.ipynb is a notebook file, but 2 notebooks were given"),
    Bad("overwriting an instructor's notebook", ex_student.student_paths,
        lambda: (lambda out: ex_student.student_paths([notebook_file()], out))(notebook_file().parent), ValueError,
        r"refusing to overwrite .*hw.ipynb: it contains solution markers"),
    Bad("a missing source", ex_student.write_student_versions,
        lambda: ex_student.write_student_versions(tmp() / "hw.ipynb", tmp()), FileNotFoundError,
        r"no such notebook: .*hw.ipynb"),
    Bad("a number for the sources", ex_student.write_student_versions,
        lambda: ex_student.write_student_versions(5, tmp()), TypeError,
        r"sources must be a notebook path, a folder or a list of them, got int"),
    Bad("a malformed notebook writes nothing", ex_student.write_student_versions,
        lambda: ex_student.write_student_versions([notebook_file(notebook("# EXERCISE 1 no colon"))], tmp()),
        ex_student.MarkerError, r"malformed exercise header"),
]


BENCH = [
    Bad("an odd width for the heads", bench.Sizes, lambda: bench.Sizes(2, 8, 30, 4, 1, 10, 8, 1), ValueError,
        r"d_model=30 must be divisible by n_heads=4"),
    Bad("zero steps", bench.Sizes, lambda: bench.Sizes(2, 8, 32, 4, 1, 10, 8, 0), ValueError, r"steps"),
    Bad("a float batch", bench.Sizes, lambda: bench.Sizes(2.5, 8, 32, 4, 1, 10, 8, 1), TypeError, r"batch"),
    Bad("a zero matrix size", bench.matmul_gflops, lambda: bench.matmul_gflops(0), ValueError, r"n must be"),
    Bad("zero repeats", bench.matmul_gflops, lambda: bench.matmul_gflops(64, repeat=0), ValueError, r"repeat"),
    Bad("zero steps", bench.time_pair, lambda: bench.time_pair(print, print, steps=0, warmup=0), ValueError,
        r"steps"),
    Bad("a result instead of a function", bench.time_pair, lambda: bench.time_pair(print, 3, steps=1, warmup=0),
        TypeError, r"ours and reference must be functions of no arguments, got int"),
    Bad("a dict for the sizes", bench.run, lambda: bench.run({"batch": 2}), TypeError,
        r"sizes must be a coursekit.bench.speed.Sizes, got dict"),
    Bad("a string for compile", bench.run, lambda: bench.run(bench.QUICK, compile="yes"), TypeError,
        r"compile must be a bool, got str"),
    Bad("a dict for the sizes", bench.bench_compile, lambda: bench.bench_compile({"batch": 2}), TypeError,
        r"sizes must be a coursekit.bench.speed.Sizes, got dict"),
    Bad("a string for the log", bench.run, lambda: bench.run(bench.QUICK, log="print"), TypeError,
        r"log must be a function"),
]


COST = [
    Bad("a tensor instead of a function", cost.saved_bytes, lambda: cost.saved_bytes(torch.ones(2)), TypeError,
        r"fn must be a function of no arguments, got Tensor"),
    Bad("one length as an int", cost.attention_cost, lambda: cost.attention_cost(64), TypeError,
        r"lengths must be a non-empty sequence of ints, got int"),
    Bad("a zero length", cost.attention_cost, lambda: cost.attention_cost((64, 0)), ValueError, r"each length"),
    Bad("a float length", cost.transformer_cost, lambda: cost.transformer_cost((64.5,)), TypeError,
        r"each length"),
    Bad("one tensor to exclude, not a tuple", cost.PeakMemory, lambda: cost.PeakMemory(exclude=torch.ones(2)),
        TypeError, r"exclude must be a tuple or list of tensors .* got Tensor"),
    Bad("a list of arrays to exclude", cost.PeakMemory, lambda: cost.PeakMemory(exclude=[[1.0, 2.0]]),
        TypeError, r"exclude must be a tuple or list of tensors"),
    Bad("zero heads", cost.attention_cost, lambda: cost.attention_cost((8,), n_heads=0), ValueError, r"n_heads"),
    Bad("zero batch", cost.transformer_cost, lambda: cost.transformer_cost((8,), batch=0), ValueError, r"batch"),
    Bad("one measurement", cost.quadratic_onset,
        lambda: cost.quadratic_onset([{"model": "m", "impl": "i", "T": 8, "seconds": 1.0}]), ValueError,
        r"at least two measurements"),
    Bad("two implementations mixed", cost.quadratic_onset,
        lambda: cost.quadratic_onset([{"model": "m", "impl": i, "T": 8, "seconds": 1.0} for i in "ab"]),
        ValueError, r"one model and implementation"),
    Bad("a zero factor", cost.quadratic_onset,
        lambda: cost.quadratic_onset([{"model": "m", "impl": "i", "T": T, "seconds": 1.0} for T in (8, 16)], 0.0),
        ValueError, r"factor"),
    Bad("no rows to plot", cost.plot_cost, lambda: cost.plot_cost([]), ValueError, r"non-empty list"),
]


ROWS = register(GPT + ICL + INDUCTION + PROMPTING + TRANSLATION + EXERCISES + BENCH + COST)


@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_bad_call(row):
    check_bad_call(row)

"""Bad calls to coursekit.bert — config, model, heads, the objectives, the pre-training corpus and recipe,
the committed checkpoint, fine-tuning and ELECTRA: each must give a clear error.

One row per thing that can go wrong (see ``tests/helpers/bad_inputs.py``): the error type, a regex its
message must match (the argument's name, what was expected, what arrived), raised by coursekit itself.
A ``returns=`` row checks a documented convention instead (e.g. a BERT batch in which no position was
masked adds 0, not NaN, to the pre-training loss). Every model and tokenizer here is tiny (the shared ones
are in ``tests/helpers/tiny_models.py``), every row fails before any training starts, and damaged files
are written in a temporary folder, never in ``data/``.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, replace
from pathlib import Path

import torch
from helpers.bad_inputs import Bad, bad_call_test, gen, i64, tmp
from helpers.tiny_models import (
    CLS,
    MASK,
    PAD,
    SEP,
    V,
    bart_config,
    bert_config,
    damaged,
    hf_bart_dir,
    hf_bert_bin_dir,
    hf_bert_dir,
    save_tensors,
    saved_small_bert,
    tiny_bart,
    tiny_bart_dir,
    tiny_bert,
    tokenizer,
    with_config_json,
)
from torch import nn

from coursekit.bert import checkpoint as bert_checkpoint
from coursekit.bert import corpus as bert_corpus
from coursekit.bert import electra
from coursekit.bert import finetuning as bert_finetuning
from coursekit.bert import heads as bert_heads
from coursekit.bert import model as bert
from coursekit.bert import objectives as bert_data
from coursekit.bert import pretraining as bert_pretraining
from coursekit.bert import sst2 as bert_sst2
from coursekit.training import loop as train

EXEMPT = {
    "coursekit.bert.model.BertOutput": "a plain result container filled by Bert.forward",
    "coursekit.bert.checkpoint.origin_record": "records a report load_small_bert has just read and checked; "
                                               "continued_from is the checked way in",
}


# ==============================================================================================
# coursekit.bert.model, objectives and heads — the tiny BERT world of tests/helpers/tiny_models.py
# ==============================================================================================

def token_ids(B=2, T=5, dtype=i64):
    return torch.randint(5, V, (B, T), generator=gen()).to(dtype)


def bert_call(**kw):
    """A forward pass of the tiny BERT; ``kw`` replaces one input."""
    args = dict(input_ids=token_ids(), token_type_ids=None, attention_mask=None) | kw
    return tiny_bert()(**args)


def mlm_labels(B=2, T=5):
    labels = torch.full((B, T), bert_data.IGNORE_INDEX)
    labels[0, 1], labels[1, 3] = 7, 9
    return labels


def pretraining_loss(**kw):
    args = dict(model=tiny_bert(), input_ids=token_ids(), token_type_ids=torch.zeros(2, 5, dtype=i64),
                attention_mask=torch.ones(2, 5, dtype=i64), mlm_labels=mlm_labels(), nsp_labels=torch.tensor([0, 1]))
    return bert_data.pretraining_loss(**(args | kw))


def labelled_batches(n=2, B=3, T=4, labels=None):
    out = []
    for _ in range(n):
        y = torch.tensor([0, 1, 0][:B]) if labels is None else labels
        out.append((token_ids(B, T), torch.zeros(B, T, dtype=i64), torch.ones(B, T, dtype=i64), y))
    return out


def fine_tune(**kw):
    args = dict(body=tiny_bert(mlm_head=False, nsp_head=False), batches=labelled_batches(), lr=1e-3) | kw
    return bert_heads.fine_tune(args.pop("body"), args.pop("batches"), **args)


def accuracy(batches):
    clf = bert_heads.BertForSequenceClassification(tiny_bert(mlm_head=False, nsp_head=False), 2)
    return bert_heads.classifier_accuracy(clf, batches)


def hidden_states(L=4, B=2, T=3, C=8):
    return tuple(torch.randn(B, T, C) for _ in range(L + 1))


def mask_tokens(ids=None, **kw):
    args = dict(vocab_size=V, mask_id=MASK, special_ids=(CLS, SEP), pad_id=PAD, generator=gen()) | kw
    return bert_data.mask_tokens(token_ids() if ids is None else ids, **args)


def build_pair(a=(5, 6, 7), b=(8, 9), **kw):
    return bert_data.build_pair(a, b, **(dict(cls_id=CLS, sep_id=SEP, max_len=10) | kw))


DOCS = [["The cat sat.", "It ran."], ["A dog ran.", "The sun is hot."], ["It is red.", "A big mat."]]


def features(**kw):
    batches = bert_heads.sentence_batches(tokenizer(), ["the cat", "a dog ran"], [0, 1])
    args = dict(model=tiny_bert(), batches=batches) | kw
    return bert_heads.sentence_features(args.pop("model"), args.pop("batches"), **args)


BERT_CONFIG = [
    Bad("zero vocabulary", bert.BertConfig, lambda: bert_config(vocab_size=0), ValueError,
        r"BertConfig.vocab_size must be positive, got 0"),
    Bad("float width", bert.BertConfig, lambda: bert_config(d_model=8.0), TypeError,
        r"BertConfig.d_model must be an int, got float"),
    Bad("negative width", bert.BertConfig, lambda: bert_config(d_ff=-16), ValueError,
        r"BertConfig.d_ff must be positive, got -16"),
    Bad("heads do not divide the width", bert.BertConfig, lambda: bert_config(d_model=10, n_heads=3), ValueError,
        r"d_model=10 must be divisible by n_heads=3"),
    Bad("dropout above 1", bert.BertConfig, lambda: bert_config(dropout=1.5), ValueError,
        r"BertConfig.dropout must lie in \[0, 1\), got 1.5"),
    Bad("negative attention dropout", bert.BertConfig, lambda: bert_config(attention_dropout=-0.1), ValueError,
        r"BertConfig.attention_dropout must lie in \[0, 1\), got -0.1"),
    Bad("attention dropout 1 (every weight dropped)", bert.BertConfig, lambda: bert_config(attention_dropout=1.0),
        ValueError, r"BertConfig.attention_dropout must lie in \[0, 1\), got 1.0"),
    Bad("negative layer_norm_eps", bert.BertConfig, lambda: bert_config(layer_norm_eps=-1e-12), ValueError,
        r"BertConfig.layer_norm_eps must be positive and finite, got -1e-12"),
    Bad("zero layer_norm_eps", bert.BertConfig, lambda: bert_config(layer_norm_eps=0.0), ValueError,
        r"BertConfig.layer_norm_eps must be positive and finite, got 0.0"),
    Bad("pad id = vocab_size", bert.BertConfig, lambda: bert_config(pad_id=V), ValueError,
        r"BertConfig.pad_id must be a token id in \[0, 20\), got 20"),
    Bad("negative pad id", bert.BertConfig, lambda: bert_config(pad_id=-1), ValueError,
        r"BertConfig.pad_id must be a token id in \[0, 20\), got -1"),
    Bad("float pad id", bert.BertConfig, lambda: bert_config(pad_id=0.0), TypeError,
        r"BertConfig.pad_id must be an int token id, got float"),
    Bad("zero segment types", bert.BertConfig, lambda: bert_config(type_vocab_size=0), ValueError,
        r"BertConfig.type_vocab_size must be positive, got 0"),
    Bad("a BART config from a checkpoint's metadata", bert.BertConfig.from_dict,
        lambda: bert.BertConfig.from_dict(asdict(bart_config())), ValueError,
        r"not a BertConfig: unknown fields \[.*'n_encoder_layers'"),
    Bad("a list for the metadata", bert.BertConfig.from_dict, lambda: bert.BertConfig.from_dict([]), TypeError,
        r"d must be a dict of BertConfig fields, got list"),
    Bad("a list for a Hugging Face config", bert.BertConfig.from_hf_config,
        lambda: bert.BertConfig.from_hf_config([("hidden_size", 8)]), TypeError,
        r"hf must be a transformers.BertConfig or a config.json dict, got list"),
    Bad("a BART config", bert.BertConfig.from_hf_config,
        lambda: bert.BertConfig.from_hf_config(bart_config().to_hf_dict() | {"model_type": "bart"}), ValueError,
        r"not a BERT.*model_type='bart'"),
    Bad("a config without its width", bert.BertConfig.from_hf_config,
        lambda: bert.BertConfig.from_hf_config({k: v for k, v in bert_config().to_hf_dict().items()
                                                if k != "hidden_size"}), ValueError,
        r"missing field 'hidden_size'"),
    Bad("a string width in config.json", bert.BertConfig.from_hf_config,
        lambda: bert.BertConfig.from_hf_config(bert_config().to_hf_dict() | {"hidden_size": "8"}), TypeError,
        r"BertConfig.d_model must be an int, got str"),
]

BERT_MODEL = [
    Bad("a dict for the config", bert.BertEmbeddings, lambda: bert.BertEmbeddings({"vocab_size": V}), TypeError,
        r"config must be a BertConfig, got dict"),
    Bad("id = vocab_size", bert.BertEmbeddings.forward,
        lambda: bert.BertEmbeddings(bert_config())(torch.tensor([[5, V]]), torch.zeros(1, 2, dtype=i64)), ValueError,
        r"input_ids must hold ids in \[0, 20\), got values in \[5, 20\]"),
    Bad("float ids", bert.BertEmbeddings.forward,
        lambda: bert.BertEmbeddings(bert_config())(token_ids().float(), torch.zeros(2, 5, dtype=i64)), TypeError,
        r"input_ids must be an integer .*got torch.float32"),
    Bad("segment ids of another shape", bert.BertEmbeddings.forward,
        lambda: bert.BertEmbeddings(bert_config())(token_ids(), torch.zeros(2, 4, dtype=i64)), ValueError,
        r"token_type_ids must have the shape of input_ids \(2, 5\), got \(2, 4\)"),
    Bad("segment id 2 with 2 segment types", bert.BertEmbeddings.forward,
        lambda: bert.BertEmbeddings(bert_config())(token_ids(), torch.full((2, 5), 2)), ValueError,
        r"token_type_ids must hold ids in \[0, 2\), got values in \[2, 2\]"),
    Bad("longer than the position table", bert.BertEmbeddings.forward,
        lambda: bert.BertEmbeddings(bert_config())(token_ids(1, 17), torch.zeros(1, 17, dtype=i64)), ValueError,
        r"input_ids has 17 positions but the model has max_len=16"),
    Bad("1-D ids", bert.BertEmbeddings.forward,
        lambda: bert.BertEmbeddings(bert_config())(token_ids()[0], torch.zeros(5, dtype=i64)), ValueError,
        r"input_ids must have 2 dimensions, got shape \(5,\)"),

    Bad("a Linear for the token embedding", bert.MaskedLMHead,
        lambda: bert.MaskedLMHead(bert_config(), nn.Linear(8, V)), TypeError,
        r"token_embedding must be an nn.Embedding, got Linear"),
    Bad("an embedding of another vocabulary", bert.MaskedLMHead,
        lambda: bert.MaskedLMHead(bert_config(), nn.Embedding(V + 1, 8)), ValueError,
        r"token_embedding must be \(vocab_size, d_model\) = \(20, 8\), got \(21, 8\)"),
    Bad("a dict for the config", bert.MaskedLMHead, lambda: bert.MaskedLMHead({}, nn.Embedding(V, 8)), TypeError,
        r"config must be a BertConfig, got dict"),
    Bad("hidden states of another width", bert.MaskedLMHead.forward,
        lambda: tiny_bert().mlm(torch.randn(2, 5, 6)), ValueError,
        r"h must have size 8 in dim -1 \(d_model\), got shape \(2, 5, 6\)"),
    Bad("integer hidden states", bert.MaskedLMHead.forward, lambda: tiny_bert().mlm(torch.ones(2, 8, dtype=i64)),
        TypeError, r"h must be a floating-point tensor, got torch.int64"),

    Bad("a dict for the config", bert.Bert, lambda: bert.Bert({"vocab_size": V}), TypeError,
        r"config must be a BertConfig, got dict"),
    Bad("NSP head without pooler", bert.Bert, lambda: bert.Bert(bert_config(), pooler=False), ValueError,
        r"nsp_head=True needs pooler=True"),
    Bad("a string for a flag", bert.Bert, lambda: bert.Bert(bert_config(), mlm_head="no"), TypeError,
        r"mlm_head must be a bool, got str"),
    Bad("float ids", bert.Bert.forward, lambda: bert_call(input_ids=token_ids().float()), TypeError,
        r"input_ids must be an integer \(int64 or int32\) tensor of token ids, got torch.float32"),
    Bad("int16 ids", bert.Bert.forward, lambda: bert_call(input_ids=token_ids(dtype=torch.int16)), TypeError,
        r"input_ids must be an integer \(int64 or int32\) tensor of token ids, got torch.int16"),
    Bad("uint8 ids", bert.Bert.forward, lambda: bert_call(input_ids=token_ids(dtype=torch.uint8)), TypeError,
        r"input_ids must be an integer \(int64 or int32\) tensor of token ids, got torch.uint8"),
    Bad("id = vocab_size", bert.Bert.forward, lambda: bert_call(input_ids=torch.tensor([[5, 6, V]])), ValueError,
        r"input_ids must hold ids in \[0, 20\), got values in \[5, 20\]"),
    Bad("negative id", bert.Bert.forward, lambda: bert_call(input_ids=torch.tensor([[5, -1, 6]])), ValueError,
        r"input_ids must hold ids in \[0, 20\), got values in \[-1, 6\]"),
    Bad("1-D ids", bert.Bert.forward, lambda: bert_call(input_ids=token_ids()[0]), ValueError,
        r"input_ids must have 2 dimensions, got shape \(5,\)"),
    Bad("3-D ids", bert.Bert.forward, lambda: bert_call(input_ids=token_ids()[None]), ValueError,
        r"input_ids must have 2 dimensions, got shape \(1, 2, 5\)"),
    Bad("a list of ids", bert.Bert.forward, lambda: bert_call(input_ids=[[5, 6, 7]]), TypeError,
        r"input_ids must be a torch.Tensor, got list"),
    Bad("empty batch", bert.Bert.forward, lambda: bert_call(input_ids=torch.zeros(0, 5, dtype=i64)), ValueError,
        r"input_ids must hold at least one sequence of at least one token, got shape \(0, 5\)"),
    Bad("zero-length sequences", bert.Bert.forward, lambda: bert_call(input_ids=torch.zeros(2, 0, dtype=i64)),
        ValueError, r"input_ids must hold at least one sequence of at least one token, got shape \(2, 0\)"),
    Bad("longer than the position table", bert.Bert.forward, lambda: bert_call(input_ids=token_ids(1, 17)),
        ValueError, r"input_ids has 17 positions but the model has max_len=16"),
    Bad("segment id 2", bert.Bert.forward, lambda: bert_call(token_type_ids=torch.full((2, 5), 2)), ValueError,
        r"token_type_ids must hold ids in \[0, 2\), got values in \[2, 2\]"),
    Bad("float segment ids", bert.Bert.forward, lambda: bert_call(token_type_ids=torch.zeros(2, 5)), TypeError,
        r"token_type_ids must be an integer .*got torch.float32"),
    Bad("segment ids of another batch size", bert.Bert.forward,
        lambda: bert_call(token_type_ids=torch.zeros(3, 5, dtype=i64)), ValueError,
        r"token_type_ids must have the shape of input_ids \(2, 5\), got \(3, 5\)"),
    Bad("float attention mask (an additive 0/-inf mask would be read backwards)", bert.Bert.forward,
        lambda: bert_call(attention_mask=torch.ones(2, 5)), TypeError,
        r"attention_mask must be a bool tensor \(True = keep\), got torch.float32"),
    Bad("attention mask with values other than 0/1", bert.Bert.forward,
        lambda: bert_call(attention_mask=torch.full((2, 5), 2)), ValueError,
        r"attention_mask must hold 0 \(padding\) and 1 \(real token\), got values in \[2, 2\]"),
    Bad("attention mask of another shape", bert.Bert.forward,
        lambda: bert_call(attention_mask=torch.ones(2, 4, dtype=torch.bool)), ValueError,
        r"attention_mask must have the shape of input_ids \(2, 5\), got \(2, 4\)"),
    Bad("attention mask of another batch size", bert.Bert.forward,
        lambda: bert_call(attention_mask=torch.ones(1, 5, dtype=torch.bool)), ValueError,
        r"attention_mask must have the shape of input_ids \(2, 5\), got \(1, 5\)"),
    Bad("integer mlm_positions (would index rows, not select positions)", bert.Bert.forward,
        lambda: tiny_bert()(token_ids(), mlm_positions=torch.ones(2, 5, dtype=i64)), TypeError,
        r"mlm_positions must be a bool tensor \(True = keep\), got torch.int64"),
    Bad("mlm_positions of another shape", bert.Bert.forward,
        lambda: tiny_bert()(token_ids(), mlm_positions=torch.ones(2, 4, dtype=torch.bool)), ValueError,
        r"mlm_positions must have shape \(2, 5\), got \(2, 4\)"),

    Bad("a number for the source", bert.Bert.from_hf, lambda: bert.Bert.from_hf(42), TypeError,
        r"source must be a transformers model or a checkpoint directory, got int"),
    Bad("a missing directory", bert.Bert.from_hf, lambda: bert.Bert.from_hf(tmp() / "nowhere"), FileNotFoundError,
        r"no checkpoint directory at .*nowhere"),
    Bad("a directory without config.json (e.g. a coursekit model)", bert.Bert.from_hf,
        lambda: bert.Bert.from_hf(damaged(hf_bert_dir(), "config.json", "drop")), ValueError,
        r"is not a Hugging Face checkpoint directory: no config.json there"),
    Bad("config.json that is not JSON", bert.Bert.from_hf, lambda: bert.Bert.from_hf(with_config_json("{hidden")),
        ValueError, r"config.json is not valid JSON .*restore the checkpoint directory"),
    Bad("config.json holding a list", bert.Bert.from_hf, lambda: bert.Bert.from_hf(with_config_json("[1, 2]")),
        ValueError, r"config.json must hold a JSON object \(a dict of settings\), got list"),
    Bad("no weights file", bert.Bert.from_hf,
        lambda: bert.Bert.from_hf(damaged(hf_bert_dir(), "model.safetensors", "drop")), ValueError,
        r"has config.json but neither model.safetensors nor pytorch_model.bin"),
    Bad("truncated model.safetensors", bert.Bert.from_hf,
        lambda: bert.Bert.from_hf(damaged(hf_bert_dir(), "model.safetensors", "cut")), ValueError,
        r"model.safetensors is truncated or not a safetensors file .*restore the checkpoint"),
    Bad("junk in model.safetensors", bert.Bert.from_hf,
        lambda: bert.Bert.from_hf(damaged(hf_bert_dir(), "model.safetensors", "junk")), ValueError,
        r"model.safetensors is truncated or not a safetensors file"),
    Bad("truncated pytorch_model.bin", bert.Bert.from_hf, lambda: bert.Bert.from_hf(hf_bert_bin_dir()), ValueError,
        r"pytorch_model.bin is truncated or not a PyTorch state dict"),
    Bad("the directory of a BART", bert.Bert.from_hf, lambda: bert.Bert.from_hf(hf_bart_dir()), ValueError,
        r"not a BERT that coursekit.bert.model can load: model_type='bart'"),
    Bad("an integer dtype", bert.Bert.from_hf, lambda: bert.Bert.from_hf(hf_bert_dir(), dtype=torch.long), TypeError,
        r"dtype must be a floating-point torch.dtype \(e.g. torch.float64\), got torch.int64"),
    Bad("a string dtype", bert.Bert.from_hf, lambda: bert.Bert.from_hf(hf_bert_dir(), dtype="float64"), TypeError,
        r"dtype must be a floating-point torch.dtype \(e.g. torch.float64\), got 'float64'"),
    Bad("an empty state dict", bert.Bert.load_hf_state_dict, lambda: tiny_bert().load_hf_state_dict({}), ValueError,
        r"keys do not match a BERT of this config.*missing from the checkpoint: \[.*'embeddings.word_embeddings"),
    Bad("a list for the state dict", bert.Bert.load_hf_state_dict, lambda: tiny_bert().load_hf_state_dict([]),
        TypeError, r"state must be a dict of tensors, got list"),
]

BERT_HEADS = [
    Bad("a model without MLM head", bert_data.pretraining_loss,
        lambda: pretraining_loss(model=tiny_bert(mlm_head=False)),
        ValueError, r"pretraining_loss needs a model with an MLM head"),
    Bad("a Linear for the model", bert_data.pretraining_loss,
        lambda: pretraining_loss(model=nn.Linear(2, 2)), TypeError,
        r"model must be a coursekit.bert.model.Bert, got Linear"),
    Bad("float MLM labels", bert_data.pretraining_loss, lambda: pretraining_loss(mlm_labels=mlm_labels().float()),
        TypeError, r"mlm_labels must be an integer \(int64 or int32\) tensor of class ids, got torch.float32"),
    Bad("MLM label = vocab_size", bert_data.pretraining_loss,
        lambda: pretraining_loss(mlm_labels=mlm_labels().masked_fill(mlm_labels() == 7, V)), ValueError,
        r"mlm_labels must hold class ids in \[0, 20\) \(or -100 to ignore a position\), got values in \[9, 20\]"),
    Bad("negative MLM label other than -100", bert_data.pretraining_loss,
        lambda: pretraining_loss(mlm_labels=mlm_labels().masked_fill(mlm_labels() == 7, -1)), ValueError,
        r"mlm_labels must hold class ids in \[0, 20\) \(or -100 to ignore a position\), got values in \[-1, 9\]"),
    Bad("MLM labels of another shape", bert_data.pretraining_loss,
        lambda: pretraining_loss(mlm_labels=mlm_labels(2, 4)),
        ValueError, r"mlm_labels must have the shape of input_ids \(2, 5\), got \(2, 4\)"),
    Bad("no masked position: the MLM term is 0, not NaN (documented)", bert_data.pretraining_loss,
        lambda: pretraining_loss(mlm_labels=torch.full((2, 5), bert_data.IGNORE_INDEX), nsp_labels=None),
        returns=lambda out: out[0].item() == 0.0 and out[1] == {"mlm": 0.0} and out[0].requires_grad),
    Bad("no NSP label: the NSP term is left out, not NaN (documented)", bert_data.pretraining_loss,
        lambda: pretraining_loss(nsp_labels=torch.tensor([bert_data.IGNORE_INDEX] * 2)),
        returns=lambda out: set(out[1]) == {"mlm"} and bool(torch.isfinite(out[0]))),
    Bad("NSP label 2", bert_data.pretraining_loss,
        lambda: pretraining_loss(nsp_labels=torch.tensor([0, 2])), ValueError,
        r"nsp_labels must hold class ids in \[0, 2\) \(or -100 to ignore a position\), got values in \[0, 2\]"),
    Bad("float NSP labels", bert_data.pretraining_loss, lambda: pretraining_loss(nsp_labels=torch.tensor([0.0, 1.0])),
        TypeError, r"nsp_labels must be an integer \(int64 or int32\) tensor of class ids, got torch.float32"),
    Bad("NSP labels for another batch size", bert_data.pretraining_loss,
        lambda: pretraining_loss(nsp_labels=torch.tensor([0, 1, 0])), ValueError,
        r"nsp_labels must have shape \(2,\) \(one per sequence\), got \(3,\)"),
    Bad("NSP labels for a model without NSP head", bert_data.pretraining_loss,
        lambda: pretraining_loss(model=tiny_bert(nsp_head=False)), ValueError,
        r"nsp_labels were given but the model has no NSP head"),

    Bad("a Linear for the body", bert_heads.BertForSequenceClassification,
        lambda: bert_heads.BertForSequenceClassification(nn.Linear(8, 8), 2), TypeError,
        r"bert must be a coursekit.bert.model.Bert, got Linear"),
    Bad("zero classes", bert_heads.BertForSequenceClassification,
        lambda: bert_heads.BertForSequenceClassification(tiny_bert(), 0), ValueError,
        r"n_classes must be positive, got 0"),
    Bad("unknown pooling", bert_heads.BertForSequenceClassification,
        lambda: bert_heads.BertForSequenceClassification(tiny_bert(), 2, pooling="max"), ValueError,
        r"pooling must be 'cls' or 'mean', got 'max'"),
    Bad("cls pooling without pooler", bert_heads.BertForSequenceClassification,
        lambda: bert_heads.BertForSequenceClassification(tiny_bert(pooler=False, nsp_head=False), 2), ValueError,
        r"pooling='cls' reads the pooled \[CLS\] vector: the Bert needs a pooler"),
    Bad("dropout above 1", bert_heads.BertForSequenceClassification,
        lambda: bert_heads.BertForSequenceClassification(tiny_bert(), 2, dropout=1.5), ValueError,
        r"dropout must lie in \[0, 1\], got 1.5"),
    Bad("float attention mask", bert_heads.BertForSequenceClassification.forward,
        lambda: bert_heads.BertForSequenceClassification(tiny_bert(), 2, pooling="mean")(token_ids(), None,
                                                                                   torch.ones(2, 5)),
        TypeError, r"attention_mask must be a bool tensor"),
    Bad("id = vocab_size", bert_heads.BertForSequenceClassification.forward,
        lambda: bert_heads.BertForSequenceClassification(tiny_bert(), 2)(torch.tensor([[V]])), ValueError,
        r"input_ids must hold ids in \[0, 20\)"),

    Bad("a Linear for the body", bert_heads.BertForTokenClassification,
        lambda: bert_heads.BertForTokenClassification(nn.Linear(8, 8), 3), TypeError,
        r"bert must be a coursekit.bert.model.Bert, got Linear"),
    Bad("zero labels", bert_heads.BertForTokenClassification,
        lambda: bert_heads.BertForTokenClassification(tiny_bert(), 0),
        ValueError, r"n_labels must be positive, got 0"),
    Bad("negative dropout", bert_heads.BertForTokenClassification,
        lambda: bert_heads.BertForTokenClassification(tiny_bert(), 3, dropout=-0.1), ValueError,
        r"dropout must lie in \[0, 1\], got -0.1"),
    Bad("float ids", bert_heads.BertForTokenClassification.forward,
        lambda: bert_heads.BertForTokenClassification(tiny_bert(), 3)(token_ids().float()), TypeError,
        r"input_ids must be an integer"),

    Bad("more layers than the model has", bert_heads.freeze_bottom,
        lambda: bert_heads.freeze_bottom(tiny_bert(), 2), ValueError,
        r"n_layers must be an int in \[0, 1\], got 2"),
    Bad("negative layers", bert_heads.freeze_bottom, lambda: bert_heads.freeze_bottom(tiny_bert(), -1), ValueError,
        r"n_layers must be an int in \[0, 1\], got -1"),
    Bad("float layers", bert_heads.freeze_bottom, lambda: bert_heads.freeze_bottom(tiny_bert(), 1.0), ValueError,
        r"n_layers must be an int in \[0, 1\], got 1.0"),
    Bad("a classifier for the body", bert_heads.freeze_bottom,
        lambda: bert_heads.freeze_bottom(bert_heads.BertForSequenceClassification(tiny_bert(), 2), 0), TypeError,
        r"model must be a coursekit.bert.model.Bert, got BertForSequenceClassification"),

    Bad("no batches", bert_heads.fine_tune,
        lambda: fine_tune(batches=[]), ValueError, r"fine_tune needs at least one batch"),
    Bad("a tensor for the batches", bert_heads.fine_tune, lambda: fine_tune(batches=token_ids()), TypeError,
        r"batches must be a list of \(input_ids, token_type_ids, attention_mask, labels\) tuples, got Tensor"),
    Bad("a batch of three tensors", bert_heads.fine_tune, lambda: fine_tune(batches=[labelled_batches(1)[0][:3]]),
        ValueError, r"batches\[0\] must be \(input_ids, token_type_ids, attention_mask, labels\), got 3 items"),
    Bad("an unlabelled batch", bert_heads.fine_tune, lambda: fine_tune(batches=[(*labelled_batches(1)[0][:3], None)]),
        ValueError, r"batches\[0\] has no labels"),
    Bad("label = n_classes", bert_heads.fine_tune,
        lambda: fine_tune(batches=labelled_batches(labels=torch.tensor([0, 1, 2]))), ValueError,
        r"labels of batches\[0\] must hold class ids in \[0, 2\), got values in \[0, 2\]"),
    Bad("negative label", bert_heads.fine_tune,
        lambda: fine_tune(batches=labelled_batches(labels=torch.tensor([0, -100, 1]))), ValueError,
        r"labels of batches\[0\] must hold class ids in \[0, 2\), got values in \[-100, 1\]"),
    Bad("float labels", bert_heads.fine_tune,
        lambda: fine_tune(batches=labelled_batches(labels=torch.tensor([0.0, 1, 0]))),
        TypeError, r"labels of batches\[0\] must be an integer .*got torch.float32"),
    Bad("labels for another batch size", bert_heads.fine_tune,
        lambda: fine_tune(batches=labelled_batches(labels=torch.tensor([0, 1]))), ValueError,
        r"labels of batches\[0\] must have shape \(3,\) \(one per sequence\), got \(2,\)"),
    Bad("zero learning rate", bert_heads.fine_tune, lambda: fine_tune(lr=0.0), ValueError,
        r"lr must be positive and finite, got 0.0"),
    Bad("negative head multiplier", bert_heads.fine_tune, lambda: fine_tune(head_lr_multiplier=-1.0), ValueError,
        r"head_lr_multiplier must be positive and finite, got -1.0"),
    Bad("negative weight decay", bert_heads.fine_tune, lambda: fine_tune(weight_decay=-0.01), ValueError,
        r"weight_decay must be (an int )?≥ 0 and finite, got -0.01"),
    Bad("unknown pooling", bert_heads.fine_tune, lambda: fine_tune(pooling="max"), ValueError,
        r"pooling must be 'cls' or 'mean', got 'max'"),
    Bad("more frozen layers than the model has", bert_heads.fine_tune, lambda: fine_tune(frozen_layers=3), ValueError,
        r"n_layers must be an int in \[0, 1\], got 3"),
    Bad("a classifier for the body", bert_heads.fine_tune,
        lambda: fine_tune(body=bert_heads.BertForSequenceClassification(tiny_bert(), 2)), TypeError,
        r"body must be a coursekit.bert.model.Bert, got BertForSequenceClassification"),
    Bad("an unknown device", bert_heads.fine_tune, lambda: fine_tune(device="gpu"), ValueError,
        r"device 'gpu': expected cpu, cuda\[:N\] or mps"),

    Bad("unlabelled batches", bert_heads.classifier_accuracy, lambda: accuracy([(*labelled_batches(1)[0][:3], None)]),
        ValueError, r"batches\[0\] has no labels"),
    Bad("no batches", bert_heads.classifier_accuracy, lambda: accuracy([]), ValueError,
        r"classifier_accuracy needs at least one batch"),
    Bad("a function for the classifier", bert_heads.classifier_accuracy,
        lambda: bert_heads.classifier_accuracy(lambda *a: None, labelled_batches()), TypeError,
        r"clf must be an nn.Module, got function"),
    Bad("column labels (would broadcast to (B, B))", bert_heads.classifier_accuracy,
        lambda: accuracy(labelled_batches(labels=torch.tensor([[0], [1], [0]]))), ValueError,
        r"labels of batches\[0\] must have shape \(3,\) \(one per sequence\), got \(3, 1\)"),
    Bad("label = n_classes", bert_heads.classifier_accuracy,
        lambda: accuracy(labelled_batches(labels=torch.tensor([0, 2, 1]))), ValueError,
        r"labels of batches\[0\] must hold class ids in \[0, 2\), got values in \[0, 2\]"),
    Bad("float labels", bert_heads.classifier_accuracy,
        lambda: accuracy(labelled_batches(labels=torch.tensor([0.0, 1.0, 0.0]))), TypeError,
        r"labels of batches\[0\] must be an integer"),

    Bad("unknown choice", bert_heads.combine_layers,
        lambda: bert_heads.combine_layers(hidden_states(), "first"), ValueError,
        r"how must be one of \(.*\), got 'first'"),
    Bad("four layers asked of a two-layer model", bert_heads.combine_layers,
        lambda: bert_heads.combine_layers(hidden_states(L=2), "sum_last_four"), ValueError,
        r"sum_last_four needs at least 4 layers, the model has 2"),
    Bad("no hidden states", bert_heads.combine_layers, lambda: bert_heads.combine_layers((), "last"), ValueError,
        r"hidden_states must hold the embeddings and at least one layer, got 0 tensors"),
    Bad("one tensor instead of a tuple (would index the batch)", bert_heads.combine_layers,
        lambda: bert_heads.combine_layers(torch.randn(2, 3, 8), "last"), TypeError,
        r"hidden_states must be a tuple or list of \(B, T, C\) tensors, got Tensor"),
    Bad("hidden states of different shapes", bert_heads.combine_layers,
        lambda: bert_heads.combine_layers((*hidden_states(L=3), torch.randn(2, 3, 4)), "sum_last_four"), ValueError,
        r"hidden_states\[4\] has shape \(2, 3, 4\), hidden_states\[0\] \(2, 3, 8\): all must be \(B, T, C\) alike"),

    Bad("2-D hidden states", bert_heads.mean_pool,
        lambda: bert_heads.mean_pool(torch.randn(2, 3), torch.ones(2, 3, dtype=i64)),
        ValueError, r"h must have 3 dimensions, got shape \(2, 3\)"),
    Bad("float mask", bert_heads.mean_pool,
        lambda: bert_heads.mean_pool(torch.randn(2, 3, 4), torch.ones(2, 3)), TypeError,
        r"attention_mask must be a bool tensor \(True = keep\), got torch.float32"),
    Bad("mask of another shape", bert_heads.mean_pool,
        lambda: bert_heads.mean_pool(torch.randn(2, 3, 4), torch.ones(2, 4, dtype=torch.bool)), ValueError,
        r"attention_mask must have the shape of input_ids \(2, 3\), got \(2, 4\)"),
    Bad("mask with a 2", bert_heads.mean_pool,
        lambda: bert_heads.mean_pool(torch.randn(2, 3, 4), torch.full((2, 3), 2)),
        ValueError, r"attention_mask must hold 0 \(padding\) and 1 \(real token\), got values in \[2, 2\]"),
    Bad("a row without real tokens gives zeros (documented)", bert_heads.mean_pool,
        lambda: bert_heads.mean_pool(torch.randn(2, 3, 4), torch.tensor([[1, 1, 0], [0, 0, 0]])),
        returns=lambda v: v.shape == (2, 4) and bool((v[1] == 0).all())),
]

BERT_DATA = [
    Bad("one string for the texts", bert_heads.encode_batch,
        lambda: bert_heads.encode_batch(tokenizer(), "the cat"), TypeError,
        r"texts must be a list of strings, got one string"),
    Bad("no texts", bert_heads.encode_batch, lambda: bert_heads.encode_batch(tokenizer(), []), ValueError,
        r"texts must not be empty"),
    Bad("None among the texts", bert_heads.encode_batch,
        lambda: bert_heads.encode_batch(tokenizer(), ["the cat", None]),
        TypeError, r"texts\[1\] must be a string, got NoneType"),
    Bad("an empty sentence", bert_heads.encode_batch, lambda: bert_heads.encode_batch(tokenizer(), ["the cat", "  "]),
        ValueError, r"texts\[1\] is an empty sentence"),
    Bad("fewer pairs than texts", bert_heads.encode_batch,
        lambda: bert_heads.encode_batch(tokenizer(), ["a", "the"], ["cat"]),
        ValueError, r"pairs must have as many entries as texts \(2\), got 1"),
    Bad("one string for the pairs", bert_heads.encode_batch, lambda: bert_heads.encode_batch(tokenizer(), ["a"], "cat"),
        TypeError, r"pairs must be a list of strings, got one string"),
    Bad("zero max_len", bert_heads.encode_batch,
        lambda: bert_heads.encode_batch(tokenizer(), ["a"], max_len=0), ValueError,
        r"max_len must be positive, got 0"),
    Bad("max_len without room for the pair's content", bert_heads.encode_batch,
        lambda: bert_heads.encode_batch(tokenizer(), ["the cat"], ["a dog"], max_len=4), ValueError,
        r"max_len=4 leaves no room for the text: the tokenizer adds 3 special tokens"),
    Bad("a vocabulary dict for the tokenizer", bert_heads.encode_batch,
        lambda: bert_heads.encode_batch({"a": 1}, ["a"]),
        TypeError, r"tokenizer must be a tokenizers.Tokenizer, got dict"),
    Bad("a tokenizer without [PAD]", bert_heads.encode_batch, lambda: bert_heads.encode_batch(tokenizer(False), ["a"]),
        ValueError, r"the tokenizer has no \[PAD\] token"),

    Bad("one string for the sentences", bert_heads.sentence_batches,
        lambda: bert_heads.sentence_batches(tokenizer(), "the cat"),
        TypeError, r"sentences must be a list of strings, got one string"),
    Bad("no sentences", bert_heads.sentence_batches, lambda: bert_heads.sentence_batches(tokenizer(), []), ValueError,
        r"sentences must not be empty"),
    Bad("fewer labels than sentences", bert_heads.sentence_batches,
        lambda: bert_heads.sentence_batches(tokenizer(), ["a", "the"], [0]), ValueError,
        r"labels must have one entry per sentence \(2\), got 1"),
    Bad("float labels", bert_heads.sentence_batches,
        lambda: bert_heads.sentence_batches(tokenizer(), ["a", "the"], [0.0, 1.0]),
        TypeError, r"labels must hold ints, got \[0.0, 1.0\] \(float\)"),
    Bad("zero batch size", bert_heads.sentence_batches,
        lambda: bert_heads.sentence_batches(tokenizer(), ["a"], batch_size=0),
        ValueError, r"batch_size must be positive, got 0"),
    Bad("a string seed", bert_heads.sentence_batches,
        lambda: bert_heads.sentence_batches(tokenizer(), ["a"], shuffle_seed="0"),
        TypeError, r"shuffle_seed must be an int or None, got str"),

    Bad("a Linear for the model", bert_heads.sentence_features, lambda: features(model=nn.Linear(8, 8)), TypeError,
        r"model must be a coursekit.bert.model.Bert, got Linear"),
    Bad("one string for the choices", bert_heads.sentence_features, lambda: features(how="last"), TypeError,
        r"how must be a list of choices from FEATURE_CHOICES, got one string"),
    Bad("unknown choice", bert_heads.sentence_features, lambda: features(how=["last", "first"]), ValueError,
        r"how must be one of .*'concat_last_four'.*, got 'first'"),
    Bad("no batches", bert_heads.sentence_features, lambda: features(batches=[]), ValueError,
        r"sentence_features needs at least one batch"),
    Bad("labelled and unlabelled batches mixed (labels would not line up)", bert_heads.sentence_features,
        lambda: features(batches=labelled_batches(1) + [(*labelled_batches(1)[0][:3], None)]), ValueError,
        r"batches\[1\] has no labels but batches\[0\] has: label every batch or none"),

    Bad("a wrong hash", bert_checkpoint.minilm_path, lambda: bert_checkpoint.minilm_path("0" * 64), ValueError,
        r"has sha256 .*, expected 0000.*refusing to use them"),
    Bad("a number for the hash", bert_checkpoint.minilm_path, lambda: bert_checkpoint.minilm_path(123), TypeError,
        r"expected_sha256 must be a string of 64 hexadecimal digits, got int"),
    Bad("a short hash", bert_checkpoint.minilm_path, lambda: bert_checkpoint.minilm_path("abc"), ValueError,
        r"expected_sha256 must be 64 hexadecimal digits, got 'abc'"),
    Bad("a wrong hash", bert_checkpoint.load_minilm,
        lambda: bert_checkpoint.load_minilm(expected_sha256="f" * 64), ValueError,
        r"expected ffff.*refusing to use them"),
    Bad("None for the hash", bert_checkpoint.load_minilm,
        lambda: bert_checkpoint.load_minilm(expected_sha256=None), TypeError,
        r"expected_sha256 must be a string of 64 hexadecimal digits, got NoneType"),
]

BERT_MASKING = [
    Bad("integer maskable", bert_data.mlm_actions, lambda: bert_data.mlm_actions(torch.ones(3, dtype=i64)), TypeError,
        r"maskable must have dtype torch.bool, got torch.int64"),
    Bad("probability above 1", bert_data.mlm_actions,
        lambda: bert_data.mlm_actions(torch.ones(3, dtype=torch.bool), mlm_probability=1.5), ValueError,
        r"mlm_probability must lie in \[0, 1\], got 1.5"),
    Bad("fractions above 1 together", bert_data.mlm_actions,
        lambda: bert_data.mlm_actions(torch.ones(3, dtype=torch.bool), mask_frac=0.9, random_frac=0.2), ValueError,
        r"mask_frac \+ random_frac must be ≤ 1, got 0.9 \+ 0.2"),
    Bad("a seed for the generator", bert_data.mlm_actions,
        lambda: bert_data.mlm_actions(torch.ones(3, dtype=torch.bool), generator=0), TypeError,
        r"generator must be a torch.Generator or None, got int"),

    Bad("float ids", bert_data.mask_tokens, lambda: mask_tokens(token_ids().float()), TypeError,
        r"input_ids must be an integer \(int64 or int32\) tensor of token ids, got torch.float32"),
    Bad("int16 ids", bert_data.mask_tokens, lambda: mask_tokens(token_ids(dtype=torch.int16)), TypeError,
        r"input_ids must be an integer .*got torch.int16"),
    Bad("uint8 ids", bert_data.mask_tokens, lambda: mask_tokens(token_ids(dtype=torch.uint8)), TypeError,
        r"input_ids must be an integer .*got torch.uint8"),
    Bad("id = vocab_size", bert_data.mask_tokens, lambda: mask_tokens(torch.tensor([[2, 5, V, 3]])), ValueError,
        r"input_ids must hold ids in \[0, 20\), got values in \[2, 20\]"),
    Bad("negative id", bert_data.mask_tokens, lambda: mask_tokens(torch.tensor([[2, -5, 6, 3]])), ValueError,
        r"input_ids must hold ids in \[0, 20\), got values in \[-5, 6\]"),
    Bad("3-D ids", bert_data.mask_tokens, lambda: mask_tokens(token_ids()[None]), ValueError,
        r"input_ids must have 1 or 2 dimensions, got shape \(1, 2, 5\)"),
    Bad("empty batch", bert_data.mask_tokens, lambda: mask_tokens(torch.zeros(0, 5, dtype=i64)), ValueError,
        r"input_ids must hold at least one token, got shape \(0, 5\)"),
    Bad("float vocabulary size", bert_data.mask_tokens, lambda: mask_tokens(vocab_size=20.0), TypeError,
        r"vocab_size must be an int, got float"),
    Bad("mask id = vocab_size", bert_data.mask_tokens, lambda: mask_tokens(mask_id=V), ValueError,
        r"mask_id must be a token id in \[0, 20\), got 20"),
    Bad("float mask id (would be truncated into the ids)", bert_data.mask_tokens, lambda: mask_tokens(mask_id=4.5),
        TypeError, r"mask_id must be an int token id, got float"),
    Bad("float special id (would be truncated)", bert_data.mask_tokens, lambda: mask_tokens(special_ids=(2.5, 3)),
        TypeError, r"special_ids must hold ints, got \[2.5\] \(float\)"),
    Bad("special id outside the vocabulary", bert_data.mask_tokens, lambda: mask_tokens(special_ids=(2, 3, 25)),
        ValueError, r"special_ids must hold token ids in \[0, 20\), got \[25\]"),
    Bad("one int for the special ids", bert_data.mask_tokens, lambda: mask_tokens(special_ids=2), TypeError,
        r"special_ids must be a list of int token ids, got int"),
    Bad("pad id = vocab_size (would be silently ignored)", bert_data.mask_tokens,
        lambda: mask_tokens(pad_id=V), ValueError,
        r"pad_id must be a token id in \[0, 20\), got 20"),
    Bad("float pad id", bert_data.mask_tokens, lambda: mask_tokens(pad_id=0.0), TypeError,
        r"pad_id must be an int token id, got float"),
    Bad("integer special mask", bert_data.mask_tokens, lambda: mask_tokens(special_mask=torch.zeros(2, 5, dtype=i64)),
        TypeError, r"special_mask must have dtype torch.bool, got torch.int64"),
    Bad("special mask of another shape", bert_data.mask_tokens,
        lambda: mask_tokens(special_mask=torch.zeros(2, 4, dtype=torch.bool)), ValueError,
        r"special_mask must have the shape of input_ids \(2, 5\), got \(2, 4\)"),
    Bad("every id special: nothing to replace with", bert_data.mask_tokens,
        lambda: mask_tokens(torch.tensor([[2, 5, 3]]), vocab_size=6, special_ids=(1, 2, 3, 5)),
        ValueError, r"every id in the vocabulary is special: nothing to draw random replacements from"),
    Bad("random fraction above 1", bert_data.mask_tokens, lambda: mask_tokens(random_frac=1.5), ValueError,
        r"random_frac must lie in \[0, 1\], got 1.5"),
    Bad("random replacements stay inside [0, vocab_size) and off the specials", bert_data.mask_tokens,
        lambda: mask_tokens(torch.full((4, 50), 7), vocab_size=9, mlm_probability=1.0, mask_frac=0.0, random_frac=1.0),
        returns=lambda out: set(out[0].unique().tolist()) == {1, 5, 6, 7, 8}),   # no [PAD], [CLS], [SEP], [MASK]

    Bad("zero copies", bert_data.StaticMasking,
        lambda: bert_data.StaticMasking(token_ids(), copies=0, vocab_size=V, mask_id=MASK), ValueError,
        r"copies must be positive, got 0"),
    Bad("float ids", bert_data.StaticMasking,
        lambda: bert_data.StaticMasking(token_ids().float(), vocab_size=V, mask_id=MASK), TypeError,
        r"input_ids must be an integer"),
    Bad("float epoch", bert_data.StaticMasking.__getitem__,
        lambda: bert_data.StaticMasking(token_ids(), copies=2, vocab_size=V, mask_id=MASK)[1.5], TypeError,
        r"epoch must be an int, got float"),
    Bad("negative epoch", bert_data.StaticMasking.__getitem__,
        lambda: bert_data.StaticMasking(token_ids(), copies=2, vocab_size=V, mask_id=MASK)[-1], ValueError,
        r"epoch must be (an int )?≥ 0, got -1"),

    Bad("a number for the paragraph", bert_data.split_sentences, lambda: bert_data.split_sentences(3), TypeError,
        r"paragraph must be a string, got int"),
    Bad("one string for the lines (read character by character)", bert_data.wikitext_documents,
        lambda: bert_data.wikitext_documents(" = T = \n The cat sat. It ran.\n"), TypeError,
        r"lines must be a list of strings \(the lines of a file\), got one string"),
    Bad("a number among the lines", bert_data.wikitext_documents, lambda: bert_data.wikitext_documents([" = T = ", 3]),
        TypeError, r"lines must be strings, got int"),
    Bad("zero min_sentences", bert_data.wikitext_documents, lambda: bert_data.wikitext_documents([], min_sentences=0),
        ValueError, r"min_sentences must be positive, got 0"),

    Bad("zero pairs", bert_data.make_nsp_pairs, lambda: bert_data.make_nsp_pairs(DOCS, 0), ValueError,
        r"n_pairs must be positive, got 0"),
    Bad("p_next above 1", bert_data.make_nsp_pairs, lambda: bert_data.make_nsp_pairs(DOCS, 2, p_next=1.5), ValueError,
        r"p_next must lie in \[0, 1\], got 1.5"),
    Bad("one usable document", bert_data.make_nsp_pairs, lambda: bert_data.make_nsp_pairs(DOCS[:1], 2), ValueError,
        r"needs at least 2 documents with ≥ 2 sentences, got 1"),
    Bad("a list of sentences for the documents (each string read as a document)", bert_data.make_nsp_pairs,
        lambda: bert_data.make_nsp_pairs(DOCS[0] + DOCS[1], 2), TypeError,
        r"documents\[0\] must be a list of sentences, got str"),
    Bad("a torch generator for the rng", bert_data.make_nsp_pairs, lambda: bert_data.make_nsp_pairs(DOCS, 2, rng=gen()),
        TypeError, r"rng must be a random.Random, an int seed or None, got Generator"),

    Bad("a string for A (read as characters)", bert_data.build_pair, lambda: build_pair(a="the cat"), TypeError,
        r"ids_a must be a sequence of ints, got str"),
    Bad("float ids in B", bert_data.build_pair, lambda: build_pair(b=[8.0, 9.0]), TypeError,
        r"ids_b must hold ints, got \[8.0, 9.0\] \(float\)"),
    Bad("a 2-D tensor for B", bert_data.build_pair, lambda: build_pair(b=torch.ones(2, 2, dtype=i64)), TypeError,
        r"ids_b must be a 1-D integer tensor or a list of ints"),
    Bad("an empty A", bert_data.build_pair, lambda: build_pair(a=[]), ValueError, r"ids_a must not be empty"),
    Bad("an empty B", bert_data.build_pair, lambda: build_pair(b=[]), ValueError, r"ids_b must not be empty"),
    Bad("float [CLS] id", bert_data.build_pair, lambda: build_pair(cls_id=2.0), TypeError,
        r"cls_id must be an int token id, got float"),
    Bad("negative [SEP] id", bert_data.build_pair, lambda: build_pair(sep_id=-1), ValueError,
        r"sep_id must be a token id ≥ 0, got -1"),
    Bad("no room for the special tokens", bert_data.build_pair, lambda: build_pair(max_len=2), ValueError,
        r"max_len must leave room for the 3 special tokens, got 2"),
    Bad("zero max_len", bert_data.build_pair,
        lambda: build_pair(max_len=0), ValueError, r"max_len must be positive, got 0"),
]


# ==============================================================================================
# coursekit.bert.corpus, coursekit.bert.pretraining, coursekit.bert.checkpoint and coursekit.bert.finetuning
# ==============================================================================================

TINY_PT = bert_corpus.PretrainConfig(vocab_size=V, d_model=8, n_layers=1, n_heads=2, d_ff=16, max_len=16,
                                     batch_size=4, steps=2, warmup_steps=1, eval_every=1, held_out_articles=1,
                                     held_out_pairs=32)
TRAIN_DOCS = [[[5, 6, 7], [8, 9]], [[10, 11], [12, 13, 14]], [[15, 16], [17, 18, 19]]]


def pt_corpus(**kw):
    args = dict(tokenizer=tokenizer(), train_docs=TRAIN_DOCS, held_docs=TRAIN_DOCS, in_domain=[[5, 6], [7, 8, 9]])
    return bert_corpus.PretrainingCorpus(**(args | kw))


def pt_batch(**kw):
    """A held-out batch of the tiny corpus, with one part replaced."""
    parts = dict(zip(("ids", "seg", "keep", "mlm", "nsp"), bert_corpus.held_out_batch(pt_corpus(), TINY_PT),
                     strict=True))
    return tuple((parts | kw).values())


def one_labelled_nsp_row() -> dict:
    """held_out_losses on a batch whose only NSP label is the model's own prediction (the rest -100)."""
    model = tiny_bert().eval()
    ids, seg, keep, _, _ = pt_batch()
    with torch.no_grad():
        predicted = model(ids, seg, keep).nsp_logits.argmax(-1)
    nsp = torch.full((len(ids),), bert_data.IGNORE_INDEX)
    nsp[0] = predicted[0]
    return bert_pretraining.held_out_losses(model, pt_batch(nsp=nsp))


def make_batch(pairs=(([5, 6], [7, 8], 0),), singles=([9, 10],), **kw):
    return bert_corpus.make_batch(pt_corpus(), list(pairs), list(singles), **(dict(max_len=16) | kw))


def small_bert_dir_with(name: str, content: str | None) -> Path:
    folder = saved_small_bert()
    if content is None:
        (folder / name).unlink()
    else:
        (folder / name).write_text(content)
    return folder


def small_bert_without_metadata() -> Path:
    folder = saved_small_bert()
    save_tensors(folder / "model.safetensors", {"w": torch.zeros(2)})
    return folder


def tiny_electra_model(vocab_size=V) -> electra.Electra:
    torch.manual_seed(0)
    return electra.Electra(bert_config(vocab_size=vocab_size, n_layers=2))


def small_bert_with_electra_parts_of(parts: electra.Electra) -> Path:
    """A small-BERT directory with an electra.safetensors written from ``parts``."""
    folder = saved_small_bert()
    bert_checkpoint.save_electra_parts(folder, parts)
    return folder


def work_folder_with_checkpoint(tokenizer_file: bool) -> Path:
    """A work folder as an interrupted run leaves it: checkpoint.pt (and, if asked, a tokenizer of 20 pieces)."""
    folder = tmp()
    (folder / "checkpoint.pt").write_bytes(b"")
    if tokenizer_file:
        tokenizer().save(str(folder / bert_pretraining.WORK_TOKENIZER))
    return folder


def other_tokenizer():
    """A tokenizer of other pieces than ``tokenizer()``'s."""
    from tokenizers import Tokenizer, models

    return Tokenizer(models.WordLevel({f"w{i}": i for i in range(20)}, unk_token="w0"))


def small_bert_of_another_vocabulary() -> Path:
    folder = saved_small_bert()
    model = bert.Bert(bert_config(vocab_size=30))
    train.save_checkpoint(folder / "model.safetensors", model, model.config)
    return folder


def full_precision_small_bert(report) -> Path:
    """A small-BERT directory as save_pretrained wrote it before issue 34 (fp32 weights) with ``report``."""
    folder = tmp()
    model = tiny_bert()
    train.save_checkpoint(folder / "model.safetensors", model, model.config)
    tokenizer().save(str(folder / "tokenizer.json"))
    (folder / "report.json").write_text(json.dumps(report))
    return folder


def recompact(report=None, folder=None, **kw):
    """recompact of a full-precision tiny directory holding ``report`` (default: a recipe and a final that the
    tiny held-out batch does not give), on the tiny corpus."""
    report = report or {"config": asdict(TINY_PT), "final": {"mlm": 0.0, "nsp": 0.0, "nsp_acc": 1.0}}
    return bert_pretraining.recompact(folder or full_precision_small_bert(report), **(dict(corpus=pt_corpus()) | kw))


def export(**kw):
    args = dict(directory=tmp(), model=tiny_bert(), tokenizer=tokenizer(), report={"steps": 0}, held=pt_batch())
    return bert_pretraining.export(**(args | kw))


def snapshots(bad_second=None) -> Path:
    """A snapshot folder of the tiny BERT (steps 1 and 2); ``bad_second`` damages the second one."""
    folder = tmp()
    model = tiny_bert()
    for step in (1, 2):
        train.save_checkpoint(folder / f"step_{step}.safetensors", model, model.config)
    if bad_second == "cut":
        damaged(folder, "step_2.safetensors", "cut")
    elif bad_second == "bart":
        m = tiny_bart()
        train.save_checkpoint(folder / "step_2.safetensors", m, m.config)
    elif bad_second == "name":
        (folder / "step_2.safetensors").rename(folder / "step_two.safetensors")
    return folder


def by_step(folder=None, **kw):
    return bert_finetuning.finetune_by_step(folder or snapshots(), tokenizer(), **(dict(n_train=4, epochs=1) | kw))


SPLITS = {"train": {"sentence": ["the cat"], "label": [0]}, "select": {"sentence": [], "label": []},
          "test": {"sentence": ["a dog"], "label": [1]}}


def finetune_once(**kw):
    args = dict(body=tiny_bert(), tokenizer=tokenizer(), splits=SPLITS, lr=1e-3, seed=0, epochs=1, batch_size=2) | kw
    return bert_finetuning.finetune_once(args.pop("body"), args.pop("tokenizer"), args.pop("splits"), **args)


BERT_PRETRAINING = [
    Bad("zero steps", bert_corpus.PretrainConfig, lambda: replace(TINY_PT, steps=0), ValueError,
        r"steps must be positive, got 0"),
    Bad("in-domain fraction above 1", bert_corpus.PretrainConfig,
        lambda: replace(TINY_PT, in_domain_fraction=1.5), ValueError, r"in_domain_fraction must lie in \[0, 1\]"),
    Bad("no NSP pair left", bert_corpus.PretrainConfig, lambda: replace(TINY_PT, in_domain_fraction=0.9),
        ValueError, r"in_domain_fraction=0.9 leaves no NSP pair in a batch of 4"),
    Bad("zero learning rate", bert_corpus.PretrainConfig, lambda: replace(TINY_PT, learning_rate=0.0), ValueError,
        r"learning_rate must be positive and finite, got 0.0"),
    Bad("negative warm-up", bert_corpus.PretrainConfig, lambda: replace(TINY_PT, warmup_steps=-1), ValueError,
        r"warmup_steps must be (an int )?≥ 0, got -1"),
    Bad("min_lr_ratio above 1", bert_corpus.PretrainConfig, lambda: replace(TINY_PT, min_lr_ratio=2.0),
        ValueError, r"min_lr_ratio must lie in \[0, 1\], got 2.0"),
    Bad("negative weight decay", bert_corpus.PretrainConfig, lambda: replace(TINY_PT, weight_decay=-0.1),
        ValueError, r"weight_decay must be (an int )?≥ 0 and finite, got -0.1"),
    Bad("zero clipping", bert_corpus.PretrainConfig, lambda: replace(TINY_PT, grad_clip=0.0), ValueError,
        r"grad_clip must be positive and finite, got 0.0"),
    Bad("no room for [CLS] A [SEP] B [SEP]", bert_corpus.PretrainConfig, lambda: replace(TINY_PT, max_len=4),
        ValueError, r"max_len must leave room for \[CLS\] A \[SEP\] B \[SEP\] \(at least 5\), got 4"),
    Bad("heads do not divide the width", bert_corpus.PretrainConfig, lambda: replace(TINY_PT, n_heads=3),
        ValueError, r"d_model=8 must be divisible by n_heads=3"),
    Bad("negative threads", bert_corpus.PretrainConfig, lambda: replace(TINY_PT, threads=-1), ValueError,
        r"threads must be (an int )?≥ 0, got -1"),
    Bad("hold_out_selection as a string", bert_corpus.PretrainConfig,
        lambda: replace(TINY_PT, hold_out_selection="yes"), TypeError, r"hold_out_selection must be a bool, got str"),
    Bad("unknown extra MLM text", bert_corpus.PretrainConfig,
        lambda: replace(TINY_PT, extra_mlm_text="wikipedia"), ValueError,
        r"extra_mlm_text must be one of \('', 'translation_en'\), got 'wikipedia'"),
    Bad("a dict for the config of the text", bert_corpus.pretraining_text,
        lambda: bert_corpus.pretraining_text({"hold_out_selection": True}), TypeError,
        r"cfg must be a PretrainConfig, got dict"),
    Bad("float seed", bert_corpus.PretrainConfig, lambda: replace(TINY_PT, seed=0.5), TypeError,
        r"seed must be an int, got float"),
    Bad("a string flag", bert_corpus.PretrainConfig, lambda: replace(TINY_PT, pack_in_domain="yes"), TypeError,
        r"pack_in_domain must be a bool, got str"),
    Bad("zero vocabulary", bert_corpus.PretrainConfig.model_config, lambda: TINY_PT.model_config(0), ValueError,
        r"BertConfig.vocab_size must be positive, got 0"),

    Bad("a vocabulary dict for the tokenizer", bert_corpus.PretrainingCorpus,
        lambda: pt_corpus(tokenizer={"[CLS]": 2}), TypeError,
        r"tokenizer must be a tokenizers.Tokenizer, got dict"),
    Bad("documents of strings", bert_corpus.PretrainingCorpus,
        lambda: pt_corpus(train_docs=[["The cat sat."]]), TypeError,
        r"train_docs must be a list of documents, each a list of sentences of token ids; got a str sentence"),
    Bad("an unknown special token (would be None)", bert_corpus.PretrainingCorpus.special_id,
        lambda: pt_corpus().special_id("[BOS]"), ValueError, r"the tokenizer has no token '\[BOS\]'"),

    Bad("a dict for the config", bert_corpus.build_corpus,
        lambda: bert_corpus.build_corpus({}, [], [], tokenizer()), TypeError,
        r"cfg must be a PretrainConfig, got dict"),
    Bad("one string for the WikiText lines", bert_corpus.build_corpus,
        lambda: bert_corpus.build_corpus(TINY_PT, " = T = \n", [], tokenizer()), TypeError,
        r"wiki_lines must be a list of strings, got one string"),
    Bad("one string for the in-domain sentences", bert_corpus.build_corpus,
        lambda: bert_corpus.build_corpus(TINY_PT, [], "the cat sat", tokenizer()), TypeError,
        r"in_domain_sentences must be a list of strings, got one string"),
    Bad("a tokenizer without the BERT specials", bert_corpus.build_corpus,
        lambda: bert_corpus.build_corpus(TINY_PT, [], [], tokenizer(False)), ValueError,
        r"the tokenizer lacks the BERT special tokens \['\[PAD\]'\]"),
    Bad("too few articles", bert_corpus.build_corpus,
        lambda: bert_corpus.build_corpus(TINY_PT, [" = T = ", " The cat sat. It ran."], [], tokenizer()),
        ValueError, r"need more than 2 articles, got 1"),

    Bad("nothing to batch", bert_corpus.make_batch, lambda: make_batch((), ()), ValueError,
        r"make_batch needs at least one pair or sentence"),
    Bad("NSP label 2", bert_corpus.make_batch, lambda: make_batch(pairs=[([5], [6], 2)]), ValueError,
        r"pairs\[0\] has NSP label 2; expected IS_NEXT \(0\) or NOT_NEXT \(1\)"),
    Bad("a pair without label", bert_corpus.make_batch, lambda: make_batch(pairs=[([5], [6])]), ValueError,
        r"pairs\[0\] must be \(A, B, label\), got 2 items"),
    Bad("an empty single sentence", bert_corpus.make_batch, lambda: make_batch(singles=[[]]), ValueError,
        r"ids_a must not be empty"),
    Bad("max_len without room", bert_corpus.make_batch, lambda: make_batch(max_len=2), ValueError,
        r"max_len must leave room for the 3 special tokens, got 2"),
    Bad("a list for the corpus", bert_corpus.make_batch,
        lambda: bert_corpus.make_batch([], [([5], [6], 0)], [], max_len=8), TypeError,
        r"corpus must be a PretrainingCorpus, got list"),

    Bad("no sentences", bert_corpus.pack_sentences,
        lambda: bert_corpus.pack_sentences([], 2, max_len=8, sep_id=SEP, rng=random.Random(0)), ValueError,
        r"pack_sentences needs at least one sentence"),
    Bad("zero rows", bert_corpus.pack_sentences,
        lambda: bert_corpus.pack_sentences([[5]], 0, max_len=8, sep_id=SEP, rng=random.Random(0)), ValueError,
        r"n must be positive, got 0"),
    Bad("a seed for the rng", bert_corpus.pack_sentences,
        lambda: bert_corpus.pack_sentences([[5]], 2, max_len=8, sep_id=SEP, rng=0), TypeError,
        r"rng must be a random.Random, got int"),
    Bad("max_len without room", bert_corpus.pack_sentences,
        lambda: bert_corpus.pack_sentences([[5]], 2, max_len=2, sep_id=SEP, rng=random.Random(0)), ValueError,
        r"max_len must leave room for \[CLS\] and \[SEP\] and one token \(at least 3\), got 2"),
    Bad("negative [SEP] id", bert_corpus.pack_sentences,
        lambda: bert_corpus.pack_sentences([[5]], 2, max_len=8, sep_id=-1, rng=random.Random(0)), ValueError,
        r"sep_id must be a token id ≥ 0, got -1"),
    Bad("an empty sentence", bert_corpus.pack_sentences,
        lambda: bert_corpus.pack_sentences([[5], []], 2, max_len=8, sep_id=SEP, rng=random.Random(0)),
        ValueError, r"sentences\[1\] is empty"),

    Bad("no documents", bert_corpus.doc_sentence_rows,
        lambda: bert_corpus.doc_sentence_rows([], 2, max_len=8, rng=random.Random(0)), ValueError,
        r"doc_sentence_rows needs a non-empty list of documents"),
    Bad("an empty sentence", bert_corpus.doc_sentence_rows,
        lambda: bert_corpus.doc_sentence_rows([[[5], []]], 2, max_len=8, rng=random.Random(0)), ValueError,
        r"documents\[0\] must be a non-empty list of non-empty sentences of token ids"),
    Bad("zero rows", bert_corpus.doc_sentence_rows,
        lambda: bert_corpus.doc_sentence_rows([[[5]]], 0, max_len=8, rng=random.Random(0)), ValueError,
        r"n must be positive, got 0"),
    Bad("max_len without room", bert_corpus.doc_sentence_rows,
        lambda: bert_corpus.doc_sentence_rows([[[5]]], 2, max_len=2, rng=random.Random(0)), ValueError,
        r"max_len must leave room for \[CLS\] and \[SEP\] and one token \(at least 3\), got 2"),
    Bad("a seed for the rng", bert_corpus.doc_sentence_rows,
        lambda: bert_corpus.doc_sentence_rows([[[5]]], 2, max_len=8, rng=0), TypeError,
        r"rng must be a random.Random, got int"),
    Bad("an unknown layout", bert_corpus.PretrainConfig,
        lambda: bert_corpus.PretrainConfig(layout="segments"), ValueError,
        r"layout must be one of \('nsp_pairs', 'doc_sentences'\), got 'segments'"),

    Bad("a seed for the rng", bert_corpus.sample_batch,
        lambda: bert_corpus.sample_batch(pt_corpus(), TINY_PT, 0, gen()), TypeError,
        r"rng must be a random.Random, got int"),
    Bad("a seed for the generator", bert_corpus.sample_batch,
        lambda: bert_corpus.sample_batch(pt_corpus(), TINY_PT, random.Random(0), 0), TypeError,
        r"generator must be a torch.Generator, got int"),
    Bad("a dict for the config", bert_corpus.sample_batch,
        lambda: bert_corpus.sample_batch(pt_corpus(), {}, random.Random(0), gen()), TypeError,
        r"cfg must be a PretrainConfig, got dict"),

    Bad("one held-out document", bert_corpus.held_out_batch,
        lambda: bert_corpus.held_out_batch(pt_corpus(held_docs=TRAIN_DOCS[:1]), TINY_PT), ValueError,
        r"make_nsp_pairs needs at least 2 documents with ≥ 2 sentences, got 1"),
    Bad("a dict for the config", bert_corpus.held_out_batch,
        lambda: bert_corpus.held_out_batch(pt_corpus(), {}), TypeError, r"cfg must be a PretrainConfig, got dict"),

    Bad("four parts instead of five", bert_pretraining.held_out_losses,
        lambda: bert_pretraining.held_out_losses(tiny_bert(), pt_batch()[:4]), ValueError,
        r"batch must be \(input_ids, token_type_ids, attention_mask, mlm_labels, nsp_labels\), got 4 items"),
    Bad("no masked position (the MLM loss would be NaN)", bert_pretraining.held_out_losses,
        lambda: bert_pretraining.held_out_losses(tiny_bert(), pt_batch(mlm=torch.full_like(pt_batch()[3], -100))),
        ValueError, r"the batch has no masked position: the held-out MLM loss is undefined"),
    Bad("no NSP label (the NSP loss would be NaN)", bert_pretraining.held_out_losses,
        lambda: bert_pretraining.held_out_losses(tiny_bert(), pt_batch(nsp=torch.full((32,), -100))), ValueError,
        r"the batch has no NSP label: the held-out NSP loss is undefined"),
    Bad("MLM label = vocab_size", bert_pretraining.held_out_losses,
        lambda: bert_pretraining.held_out_losses(tiny_bert(), pt_batch(mlm=torch.full_like(pt_batch()[3], V))),
        ValueError, r"mlm_labels must hold class ids in \[0, 20\)"),
    Bad("a model without NSP head", bert_pretraining.held_out_losses,
        lambda: bert_pretraining.held_out_losses(tiny_bert(nsp_head=False), pt_batch()), ValueError,
        r"held_out_losses needs a model with MLM and NSP heads"),
    Bad("NSP accuracy counts only the labelled rows (was 1/32 here)", bert_pretraining.held_out_losses,
        one_labelled_nsp_row, returns=lambda r: r["nsp_acc"] == 1.0),

    Bad("a dict for the recipe", bert_pretraining.electra_evaluation,
        lambda: bert_pretraining.electra_evaluation(tiny_electra_model(), pt_batch(), {"seed": 0}), TypeError,
        r"cfg must be a PretrainConfig, got dict"),
    Bad("a string for whole_electra", bert_pretraining.pretrain,
        lambda: bert_pretraining.pretrain(TINY_PT, pt_corpus(), whole_electra="yes"), TypeError,
        r"whole_electra must be a bool, got str"),
    Bad("resume a run that kept no tokenizer", bert_pretraining.keep_work_tokenizer,
        lambda: bert_pretraining.keep_work_tokenizer(work_folder_with_checkpoint(False), tokenizer(), resume=True),
        ValueError, r"holds a checkpoint but no tokenizer.json .* copy the run's tokenizer there to resume it"),
    Bad("resume with a vocabulary trained again", bert_pretraining.keep_work_tokenizer,
        lambda: bert_pretraining.keep_work_tokenizer(work_folder_with_checkpoint(True), other_tokenizer(),
                                                     resume=True),
        ValueError, r"the corpus was encoded with another vocabulary than .*tokenizer.json"),
    Bad("an Electra with a report that is not an ELECTRA run's", bert_pretraining.export,
        lambda: export(model=tiny_electra_model()), ValueError,
        r"an Electra was given but the report is not an ELECTRA run's"),

    Bad("a dict for the config", bert_pretraining.pretrain, lambda: bert_pretraining.pretrain({}, pt_corpus()),
        TypeError, r"cfg must be a PretrainConfig, got dict"),
    Bad("a list for the corpus", bert_pretraining.pretrain, lambda: bert_pretraining.pretrain(TINY_PT, [[1]]),
        TypeError, r"corpus must be a PretrainingCorpus or None, got list"),
    Bad("an unknown device", bert_pretraining.pretrain,
        lambda: bert_pretraining.pretrain(TINY_PT, pt_corpus(), device="gpu"), ValueError,
        r"device 'gpu': expected cpu, cuda\[:N\] or mps"),
    Bad("zero checkpoint interval", bert_pretraining.pretrain,
        lambda: bert_pretraining.pretrain(TINY_PT, pt_corpus(), checkpoint_minutes=0), ValueError,
        r"checkpoint_minutes must be positive and finite, got 0"),
    Bad("stop before the first step", bert_pretraining.pretrain,
        lambda: bert_pretraining.pretrain(TINY_PT, pt_corpus(), stop_at=0), ValueError,
        r"stop_at must be positive, got 0"),

    Bad("a list for the corpus", bert_corpus.unigram_entropy, lambda: bert_corpus.unigram_entropy([[1]]),
        TypeError, r"corpus must be a PretrainingCorpus, got list"),
    Bad("a corpus without tokens (the entropy would be NaN)", bert_corpus.unigram_entropy,
        lambda: bert_corpus.unigram_entropy(pt_corpus(train_docs=[], in_domain=[])), ValueError,
        r"the corpus has no tokens: the unigram entropy is undefined"),
]


BERT_CHECKPOINT = [
    Bad("a classifier for the model", bert_checkpoint.save_pretrained,
        lambda: bert_checkpoint.save_pretrained(tmp(), bert_heads.BertForSequenceClassification(tiny_bert(), 2),
                                                tokenizer(), {}), TypeError,
        r"model must be a coursekit.bert.model.Bert, got BertForSequenceClassification"),
    Bad("a vocabulary dict for the tokenizer", bert_checkpoint.save_pretrained,
        lambda: bert_checkpoint.save_pretrained(tmp(), tiny_bert(), {"a": 1}, {}), TypeError,
        r"tokenizer must be a tokenizers.Tokenizer, got dict"),
    Bad("a report JSON cannot hold (nothing is written)", bert_checkpoint.save_pretrained,
        lambda: bert_checkpoint.save_pretrained(tmp(), tiny_bert(), tokenizer(), {"w": torch.ones(1)}), TypeError,
        r"report must be JSON-serialisable"),
    Bad("a tokenizer of another vocabulary", bert_checkpoint.save_pretrained,
        lambda: bert_checkpoint.save_pretrained(tmp(), bert.Bert(bert_config(vocab_size=30)), tokenizer(), {}),
        ValueError, r"the tokenizer has 20 pieces but the model's vocabulary is 30"),

    Bad("a directory as an int", bert_checkpoint.save_electra_parts,
        lambda: bert_checkpoint.save_electra_parts(3, tiny_electra_model()), TypeError,
        r"directory must be a path \(str or Path\), got int"),
    Bad("a Bert for the Electra", bert_checkpoint.save_electra_parts,
        lambda: bert_checkpoint.save_electra_parts(tmp(), tiny_bert()), TypeError,
        r"model must be a coursekit.bert.electra.Electra, got Bert"),
    Bad("a directory without electra.safetensors", bert_checkpoint.load_electra,
        lambda: bert_checkpoint.load_electra(saved_small_bert()), FileNotFoundError,
        r"no electra.safetensors in .*: it is written by an ELECTRA run"),
    Bad("electra.safetensors of another model", bert_checkpoint.load_electra,
        lambda: bert_checkpoint.load_electra(small_bert_with_electra_parts_of(tiny_electra_model(vocab_size=30))),
        ValueError, r"electra.safetensors belongs to another model than .*model.safetensors"),

    Bad("a report that is a list", bert_checkpoint.stage_reports, lambda: bert_checkpoint.stage_reports([]),
        TypeError, r"report must be a dict \(report.json of a run\), got list"),
    Bad("continued_from without the earlier report", bert_checkpoint.stage_reports,
        lambda: bert_checkpoint.stage_reports({"history": {}, "config": {}, "continued_from": {"directory": "x"}}),
        ValueError, r"report\['continued_from'\] must be a dict with the earlier run's 'report'"),
    Bad("a report without history", bert_checkpoint.combined_history,
        lambda: bert_checkpoint.combined_history({"config": {"steps": 1}}), ValueError,
        r"stage 1 of the report has no 'history' and 'config' dicts"),
    Bad("a string for the report", bert_checkpoint.combined_history,
        lambda: bert_checkpoint.combined_history("report.json"), TypeError, r"report must be a dict"),
    Bad("a directory as an int", bert_checkpoint.continued_from, lambda: bert_checkpoint.continued_from(3),
        TypeError, r"directory must be a path \(str or Path\), got int"),
    Bad("an empty directory", bert_checkpoint.continued_from, lambda: bert_checkpoint.continued_from(tmp()),
        FileNotFoundError, r"python -m coursekit.bert pretrain --out"),
    Bad("an empty directory", bert_checkpoint.load_small_bert, lambda: bert_checkpoint.load_small_bert(tmp()),
        FileNotFoundError, r"no checkpoint at .*model.safetensors; make it with `python -m coursekit.bert pretrain"),
    Bad("truncated model.safetensors", bert_checkpoint.load_small_bert,
        lambda: bert_checkpoint.load_small_bert(damaged(saved_small_bert(), "model.safetensors", "cut")), ValueError,
        r"model.safetensors is truncated or damaged.*python -m coursekit.bert pretrain"),
    Bad("a safetensors file without metadata", bert_checkpoint.load_small_bert,
        lambda: bert_checkpoint.load_small_bert(small_bert_without_metadata()), ValueError,
        r"is not a coursekit checkpoint.*python -m coursekit.bert pretrain"),
    Bad("a Hugging Face directory", bert_checkpoint.load_small_bert,
        lambda: bert_checkpoint.load_small_bert(hf_bert_dir()), ValueError,
        r"is not a coursekit checkpoint: its metadata has no config.*python -m coursekit.bert pretrain"),
    Bad("the directory of a BART", bert_checkpoint.load_small_bert,
        lambda: bert_checkpoint.load_small_bert(tiny_bart_dir()), ValueError,
        r"is not a BERT checkpoint: its config has the fields .*n_encoder_layers.*re-run "
        r"`python -m coursekit.bert pretrain"),
    Bad("no tokenizer.json", bert_checkpoint.load_small_bert,
        lambda: bert_checkpoint.load_small_bert(small_bert_dir_with("tokenizer.json", None)), FileNotFoundError,
        r"no tokenizer at .*tokenizer.json; make it with `python -m coursekit.bert pretrain"),
    Bad("a damaged tokenizer.json", bert_checkpoint.load_small_bert,
        lambda: bert_checkpoint.load_small_bert(small_bert_dir_with("tokenizer.json", '{"model": ')), ValueError,
        r"tokenizer.json is not a tokenizers file \(truncated or damaged.*python -m coursekit.bert pretrain"),
    Bad("no report.json", bert_checkpoint.load_small_bert,
        lambda: bert_checkpoint.load_small_bert(small_bert_dir_with("report.json", None)), FileNotFoundError,
        r"no report at .*report.json; make it with `python -m coursekit.bert pretrain"),
    Bad("a damaged report.json", bert_checkpoint.load_small_bert,
        lambda: bert_checkpoint.load_small_bert(small_bert_dir_with("report.json", '{"steps": ')), ValueError,
        r"report.json is not valid JSON.*python -m coursekit.bert pretrain"),
    Bad("a tokenizer of another vocabulary", bert_checkpoint.load_small_bert,
        lambda: bert_checkpoint.load_small_bert(small_bert_of_another_vocabulary()), ValueError,
        r"tokenizer.json has 20 pieces but the model's vocabulary is 30"),
]


BERT_EXPORT = [
    Bad("a directory as an int", bert_pretraining.export, lambda: export(directory=3), TypeError,
        r"directory must be a path \(str or Path\), got int"),
    Bad("a list for the report", bert_pretraining.export, lambda: export(report=[]), TypeError,
        r"report must be a dict \(what pretrain returns\), got list"),
    Bad("a classifier for the model", bert_pretraining.export,
        lambda: export(model=bert_heads.BertForSequenceClassification(tiny_bert(), 2)), TypeError,
        r"model must be a coursekit.bert.model.Bert, got BertForSequenceClassification"),
    Bad("a held-out batch of four parts (nothing is written)", bert_pretraining.export,
        lambda: export(held=pt_batch()[:4]), ValueError,
        r"batch must be \(input_ids, token_type_ids, attention_mask, mlm_labels, nsp_labels\), got 4 items"),
    Bad("a model without NSP head", bert_pretraining.export, lambda: export(model=tiny_bert(nsp_head=False)),
        ValueError, r"held_out_losses needs a model with MLM and NSP heads"),

    Bad("a directory as an int", bert_pretraining.recompact, lambda: bert_pretraining.recompact(3), TypeError,
        r"directory must be a path \(str or Path\), got int"),
    Bad("an int for out", bert_pretraining.recompact, lambda: recompact(out=1), TypeError,
        r"out must be a path \(str or Path\) or None \(write over directory\), got int"),
    Bad("a list for the corpus", bert_pretraining.recompact, lambda: recompact(corpus=[[1]]), TypeError,
        r"corpus must be a PretrainingCorpus or None, got list"),
    Bad("an empty directory", bert_pretraining.recompact, lambda: recompact(folder=tmp()), FileNotFoundError,
        r"no checkpoint at .*model.safetensors; make it with `python -m coursekit.bert pretrain"),
    Bad("a directory already stored as int8", bert_pretraining.recompact,
        lambda: recompact(folder=saved_small_bert()), ValueError,
        r"model.safetensors is already stored as 'int8-rowwise': there is nothing to recompact"),
    Bad("a report without recipe and final figures", bert_pretraining.recompact,
        lambda: recompact({"steps": 0}), ValueError,
        r"report.json is not a report of python -m coursekit.bert pretrain: it lacks the dicts \['config', 'final'\]"),
    Bad("a recipe with an unknown field", bert_pretraining.recompact,
        lambda: recompact({"config": asdict(TINY_PT) | {"colour": 1}, "final": {}}), ValueError,
        r"its recipe has fields PretrainConfig does not know: \['colour'\]"),
    Bad("an ELECTRA run (its generator is not stored)", bert_pretraining.recompact,
        lambda: recompact({"config": asdict(replace(TINY_PT, n_layers=2, objective="electra")), "final": {}}),
        ValueError, r"holds an ELECTRA run: its final figures need the generator and the RTD head"),
    Bad("a corpus of another vocabulary", bert_pretraining.recompact,
        lambda: recompact(corpus=pt_corpus(tokenizer=tokenizer(with_pad=False))), ValueError,
        r"corpus was encoded with another vocabulary than .*tokenizer.json"),
    Bad("a final the held-out batch does not reproduce (nothing is written)", bert_pretraining.recompact,
        lambda: recompact(), ValueError,
        r"the held-out batch of the report's recipe gives .* not the report's final .*it is not the batch the run "
        r"measured"),
]


BERT_FINETUNING = [
    Bad("seeds given as a count", bert_finetuning.sst2_gain, lambda: bert_finetuning.sst2_gain(seeds=3), ValueError,
        r"seeds must be a non-empty tuple of ints, got 3"),
    Bad("a folder without downstream.json", bert_finetuning.sst2_gain,
        lambda: bert_finetuning.sst2_gain(saved_small_bert(), seeds=(0,)), FileNotFoundError,
        r"downstream.json is missing: run `python -m coursekit.bert compare --out"),
    Bad("a start of another width", bert_pretraining.continue_from,
        lambda: bert_pretraining.continue_from(tiny_bert(), pt_corpus(), bert.Bert(bert_config(d_model=16)),
                                               tokenizer(), {}, directory="runs/x"), ValueError,
        r"init_from='runs/x' holds a BERT with config .*'d_model': 16.*but the recipe builds"),
    Bad("no learning rates", bert_sst2.SST2Protocol, lambda: bert_sst2.SST2Protocol(lrs=()), ValueError,
        r"lrs must be positive floats, got \(\)"),
    Bad("a zero learning rate", bert_sst2.SST2Protocol, lambda: bert_sst2.SST2Protocol(lrs=(0.0,)),
        ValueError, r"lrs must be positive floats, got \(0.0,\)"),
    Bad("no seeds", bert_sst2.SST2Protocol, lambda: bert_sst2.SST2Protocol(seeds=()), ValueError,
        r"seeds must be a non-empty tuple of ints, got \(\)"),
    Bad("zero training sentences", bert_sst2.SST2Protocol, lambda: bert_sst2.SST2Protocol(n_train=0),
        ValueError, r"n_train must be positive, got 0"),
    Bad("no selection sentences (the learning rate could not be chosen)", bert_sst2.SST2Protocol,
        lambda: bert_sst2.SST2Protocol(n_select=0), ValueError, r"n_select must be positive, got 0"),
    Bad("zero epochs", bert_sst2.SST2Protocol, lambda: bert_sst2.SST2Protocol(epochs=0), ValueError,
        r"epochs must be positive, got 0"),
    Bad("float batch size", bert_sst2.SST2Protocol, lambda: bert_sst2.SST2Protocol(batch_size=16.0),
        TypeError, r"batch_size must be an int, got float"),

    Bad("zero training sentences (an empty training set)", bert_sst2.sst2_splits,
        lambda: bert_sst2.sst2_splits(0, 10), ValueError, r"n_train must be positive, got 0"),
    Bad("more training sentences than the offset", bert_sst2.sst2_splits,
        lambda: bert_sst2.sst2_splits(60_001, 10), ValueError, r"n_train must be ≤ 60000"),
    Bad("negative selection", bert_sst2.sst2_splits, lambda: bert_sst2.sst2_splits(10, -1), ValueError,
        r"n_select must be (an int )?≥ 0, got -1"),
    Bad("float training size", bert_sst2.sst2_splits, lambda: bert_sst2.sst2_splits(10.0, 10), TypeError,
        r"n_train must be an int, got float"),

    Bad("a classifier for the body", bert_finetuning.finetune_once,
        lambda: finetune_once(body=bert_heads.BertForSequenceClassification(tiny_bert(), 2)), TypeError,
        r"body must be a coursekit.bert.model.Bert, got BertForSequenceClassification"),
    Bad("splits without the test set", bert_finetuning.finetune_once,
        lambda: finetune_once(splits={k: v for k, v in SPLITS.items() if k != "test"}), ValueError,
        r"splits must have the keys \['select', 'test', 'train'\], got \['select', 'train'\]"),
    Bad("a list for the splits", bert_finetuning.finetune_once, lambda: finetune_once(splits=[]), TypeError,
        r"splits must be a dict \{'train', 'select', 'test'\} \(from sst2_splits\), got list"),
    Bad("zero learning rate", bert_finetuning.finetune_once, lambda: finetune_once(lr=0.0), ValueError,
        r"lr must be positive and finite, got 0.0"),
    Bad("zero epochs", bert_finetuning.finetune_once, lambda: finetune_once(epochs=0), ValueError,
        r"epochs must be positive, got 0"),
    Bad("a string seed", bert_finetuning.finetune_once, lambda: finetune_once(seed="0"), TypeError,
        r"seed must be an int, got str"),

    Bad("a dict for the protocol", bert_finetuning.compare, lambda: bert_finetuning.compare(protocol={}), TypeError,
        r"protocol must be an SST2Protocol, got dict"),
    Bad("a string for the log", bert_finetuning.compare, lambda: bert_finetuning.compare(log="out.txt"), TypeError,
        r"log must be a function such as print, got str"),
    Bad("a directory without model", bert_finetuning.compare, lambda: bert_finetuning.compare(tmp()),
        FileNotFoundError, r"no checkpoint at .*model.safetensors"),

    Bad("no snapshots", bert_finetuning.finetune_by_step, lambda: by_step(tmp()), FileNotFoundError,
        r"no step_\*.safetensors snapshots in"),
    Bad("zero training sentences", bert_finetuning.finetune_by_step, lambda: by_step(n_train=0), ValueError,
        r"n_train must be positive, got 0"),
    Bad("negative learning rate", bert_finetuning.finetune_by_step, lambda: by_step(lr=-1e-3), ValueError,
        r"lr must be positive and finite, got -0.001"),
    Bad("a truncated snapshot (found before any fine-tuning)", bert_finetuning.finetune_by_step,
        lambda: by_step(snapshots("cut")), ValueError, r"step_2.safetensors is truncated or damaged"),
    Bad("a snapshot of another model", bert_finetuning.finetune_by_step, lambda: by_step(snapshots("bart")),
        ValueError, r"step_2.safetensors is not a snapshot of the same BERT: its config differs from step_1's"),
    Bad("a snapshot without a step number", bert_finetuning.finetune_by_step, lambda: by_step(snapshots("name")),
        ValueError, r"step_two.safetensors is not named step_<number>.safetensors"),
]


# ==============================================================================================
# coursekit.bert.electra and PretrainConfig(objective="electra")
# ==============================================================================================

def tiny_electra(**kw):
    """ELECTRA on the tiny BERT world: a two-layer discriminator, a one-layer generator."""
    torch.manual_seed(0)
    return electra.Electra(bert_config(n_layers=2), **kw)


def sure_logits(labels, value=0.0):
    """Generator logits (one row per masked position of ``labels``), all ``value``."""
    return torch.full((int((labels != bert_data.IGNORE_INDEX).sum()), V), value)


def corrupt(**kw):
    args = dict(input_ids=token_ids(), mlm_labels=mlm_labels(), generator_logits=sure_logits(mlm_labels()),
                generator=gen()) | kw
    return electra.corrupt(args.pop("input_ids"), args.pop("mlm_labels"), args.pop("generator_logits"), **args)


def electra_loss(**kw):
    args = dict(model=tiny_electra(), input_ids=token_ids(), token_type_ids=torch.zeros(2, 5, dtype=i64),
                attention_mask=torch.ones(2, 5, dtype=i64), mlm_labels=mlm_labels(), generator=gen()) | kw
    return electra.electra_loss(**args)


def held_out_electra(model=None, batch=None, **kw):
    return bert_pretraining.held_out_electra_losses(model or tiny_electra(), pt_batch() if batch is None else batch,
                                                    **kw)


def nan_logits():
    logits = sure_logits(mlm_labels())
    logits[0, 3] = float("nan")
    return logits


def label_v() -> torch.Tensor:
    labels = mlm_labels()
    labels[0, 1] = V
    return labels


ELECTRA = [
    Bad("a dict for the config", electra.Electra, lambda: electra.Electra({"vocab_size": V}), TypeError,
        r"config must be a BertConfig, got dict"),
    Bad("a generator as deep as the discriminator", electra.Electra,
        lambda: electra.Electra(bert_config(n_layers=2), generator_layers=2), ValueError,
        r"generator_layers must be below the discriminator's n_layers=2 \(ELECTRA's generator is the smaller model\), "
        r"got 2"),
    Bad("a generator of zero layers", electra.Electra, lambda: tiny_electra(generator_layers=0), ValueError,
        r"generator_layers must be positive, got 0"),
    Bad("a float number of layers", electra.Electra, lambda: tiny_electra(generator_layers=1.0), TypeError,
        r"generator_layers must be an int, got float"),

    Bad("zero width", electra.ReplacedTokenDetectionHead, lambda: electra.ReplacedTokenDetectionHead(0), ValueError,
        r"d_model must be positive, got 0"),
    Bad("a float width", electra.ReplacedTokenDetectionHead, lambda: electra.ReplacedTokenDetectionHead(8.0),
        TypeError, r"d_model must be an int, got float"),
    Bad("hidden states of another width", electra.ReplacedTokenDetectionHead.forward,
        lambda: electra.ReplacedTokenDetectionHead(8)(torch.randn(2, 5, 6)), ValueError,
        r"h must have size 8 in dim -1 \(d_model\), got shape \(2, 5, 6\)"),
    Bad("integer hidden states", electra.ReplacedTokenDetectionHead.forward,
        lambda: electra.ReplacedTokenDetectionHead(8)(torch.ones(2, 5, 8, dtype=i64)), TypeError,
        r"h must be a floating-point tensor, got torch.int64"),

    Bad("logits for more positions than were masked", electra.corrupt,
        lambda: corrupt(generator_logits=torch.zeros(3, V)), ValueError,
        r"generator_logits must have one row per masked position \(2, the entries of mlm_labels that are not -100\), "
        r"got shape \(3, 20\)"),
    Bad("1-D logits", electra.corrupt, lambda: corrupt(generator_logits=torch.zeros(V)), ValueError,
        r"generator_logits must have 2 dimensions, got shape \(20,\)"),
    Bad("integer logits", electra.corrupt, lambda: corrupt(generator_logits=torch.zeros(2, V, dtype=i64)),
        TypeError, r"generator_logits must be a floating-point tensor, got torch.int64"),
    Bad("a NaN logit (the sample would be garbage)", electra.corrupt, lambda: corrupt(generator_logits=nan_logits()),
        ValueError, r"generator_logits must give a distribution in every row .*; row 0 holds NaN, \+inf or only -inf"),
    Bad("a row of -inf only", electra.corrupt,
        lambda: corrupt(generator_logits=sure_logits(mlm_labels(), float("-inf"))), ValueError,
        r"row 0 holds NaN, \+inf or only -inf"),
    Bad("-inf logits are tokens that are never drawn (documented)", electra.corrupt,
        lambda: corrupt(generator_logits=torch.full((2, V), float("-inf")).index_fill_(1, torch.tensor([6]), 0.0)),
        returns=lambda out: set(out[0][mlm_labels() != -100].tolist()) == {6}),
    Bad("float ids", electra.corrupt, lambda: corrupt(input_ids=token_ids().float()), TypeError,
        r"input_ids must be an integer \(int64 or int32\) tensor of token ids, got torch.float32"),
    Bad("a label = vocab_size", electra.corrupt, lambda: corrupt(mlm_labels=label_v()), ValueError,
        r"mlm_labels must hold class ids in \[0, 20\) \(or -100 to ignore a position\), got values in \[9, 20\]"),
    Bad("labels of another shape", electra.corrupt,
        lambda: corrupt(mlm_labels=mlm_labels(2, 4), generator_logits=sure_logits(mlm_labels(2, 4))), ValueError,
        r"mlm_labels must have the shape of input_ids \(2, 5\), got \(2, 4\)"),
    Bad("a seed for the generator", electra.corrupt, lambda: corrupt(generator=0), TypeError,
        r"generator must be a torch.Generator or None, got int"),
    Bad("nothing masked: the text comes back, nothing replaced (documented)", electra.corrupt,
        lambda: corrupt(mlm_labels=torch.full((2, 5), -100), generator_logits=torch.zeros(0, V)),
        returns=lambda out: torch.equal(out[0], token_ids()) and not out[1].any()),

    Bad("a BERT for the model", electra.electra_loss, lambda: electra_loss(model=tiny_bert()), TypeError,
        r"model must be a coursekit.bert.electra.Electra, got Bert"),
    Bad("a negative discriminator weight", electra.electra_loss, lambda: electra_loss(rtd_weight=-1.0), ValueError,
        r"rtd_weight must be ≥ 0 and finite, got -1.0"),
    Bad("labels of another shape", electra.electra_loss, lambda: electra_loss(mlm_labels=mlm_labels(2, 4)),
        ValueError, r"mlm_labels must have the shape of input_ids \(2, 5\), got \(2, 4\)"),
    Bad("an additive float mask", electra.electra_loss,
        lambda: electra_loss(attention_mask=torch.zeros(2, 5)), TypeError,
        r"attention_mask must be a bool tensor \(True = keep\), got torch.float32"),
    Bad("nothing but padding (the loss would be NaN)", electra.electra_loss,
        lambda: electra_loss(attention_mask=torch.zeros(2, 5, dtype=i64)), ValueError,
        r"attention_mask marks no real token: the discriminator loss is undefined"),
    Bad("a seed for the generator", electra.electra_loss, lambda: electra_loss(generator=1), TypeError,
        r"generator must be a torch.Generator or None, got int"),
    Bad("nothing masked adds 0, not NaN, to the loss (documented)", electra.electra_loss,
        lambda: electra_loss(mlm_labels=torch.full((2, 5), -100)),
        returns=lambda out: out[1]["mlm"] == 0.0 and out[1]["replaced"] == 0.0 and bool(torch.isfinite(out[0]))),

    Bad("a BERT for the model", bert_pretraining.held_out_electra_losses,
        lambda: held_out_electra(model=tiny_bert()), TypeError,
        r"model must be a coursekit.bert.electra.Electra, got Bert"),
    Bad("four parts instead of five", bert_pretraining.held_out_electra_losses,
        lambda: held_out_electra(batch=pt_batch()[:4]), ValueError,
        r"batch must be \(input_ids, token_type_ids, attention_mask, mlm_labels, nsp_labels\), got 4 items"),
    Bad("no masked position (the MLM loss would be NaN)", bert_pretraining.held_out_electra_losses,
        lambda: held_out_electra(batch=pt_batch(mlm=torch.full_like(pt_batch()[3], -100))), ValueError,
        r"the batch has no masked position: the held-out MLM loss is undefined"),
    Bad("a float seed", bert_pretraining.held_out_electra_losses, lambda: held_out_electra(seed=0.5), TypeError,
        r"seed must be an int, got float"),
    Bad("NSP labels are not read: single sentences only (documented)", bert_pretraining.held_out_electra_losses,
        lambda: held_out_electra(batch=pt_batch(nsp=torch.full((32,), -100))),
        returns=lambda r: set(r) == {"mlm", "rtd", "rtd_acc", "replaced", "rtd_prior"}),

    Bad("an unknown objective", bert_corpus.PretrainConfig, lambda: replace(TINY_PT, objective="gan"), ValueError,
        r"objective must be one of \('mlm_nsp', 'electra'\), got 'gan'"),
    Bad("a generator of zero layers", bert_corpus.PretrainConfig, lambda: replace(TINY_PT, generator_layers=0),
        ValueError, r"generator_layers must be positive, got 0"),
    Bad("ELECTRA with a generator as deep as the discriminator", bert_corpus.PretrainConfig,
        lambda: replace(TINY_PT, objective="electra"), ValueError,
        r"generator_layers must be below n_layers=1 \(ELECTRA's generator is the smaller model\), got 1"),
    Bad("a negative discriminator weight", bert_corpus.PretrainConfig, lambda: replace(TINY_PT, rtd_weight=-1.0),
        ValueError, r"rtd_weight must be ≥ 0 and finite, got -1.0"),
    Bad("a NaN discriminator weight", bert_corpus.PretrainConfig, lambda: replace(TINY_PT, rtd_weight=float("nan")),
        ValueError, r"rtd_weight must be ≥ 0 and finite, got nan"),
    Bad("a string discriminator weight", bert_corpus.PretrainConfig, lambda: replace(TINY_PT, rtd_weight="50"),
        TypeError, r"rtd_weight must be a number, got str"),
    Bad("ELECTRA continuing a saved BERT", bert_corpus.PretrainConfig,
        lambda: replace(TINY_PT, n_layers=2, objective="electra", init_from="data/bert"), ValueError,
        r"init_from='data/bert' continues a saved BERT, which has no generator: objective='electra' starts from "
        r"random init"),
]


ROWS = (BERT_CONFIG + BERT_MODEL + BERT_HEADS + BERT_DATA + BERT_MASKING + BERT_PRETRAINING
        + BERT_CHECKPOINT + BERT_EXPORT + BERT_FINETUNING + ELECTRA)

test_bad_call = bad_call_test(ROWS)

"""Tiny models and files that the bad-input tables of more than one family build.

* a tiny BERT world — a 20-piece WordPiece tokenizer, a one-layer model of width 8, its Hugging Face
  directories and damaged copies (the bert/, bart/ and transformer/ tables);
* a tiny BART of vocabulary 30 and its saved directories (bert/ and bart/: a BART folder given to a BERT
  loader and the other way round);
* a five-word set of word vectors (embeddings/ and training/).
"""

from __future__ import annotations

import functools
import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from coursekit.bart import corpus as bart_corpus
from coursekit.bart import model as bart
from coursekit.bart import pretraining as bart_pretraining
from coursekit.bert import checkpoint as bert_checkpoint
from coursekit.bert import model as bert
from coursekit.data import sha256_file
from coursekit.embeddings import word_vectors
from coursekit.training import loop as train
from helpers.bad_inputs import tmp

# ==============================================================================================
# Five word vectors in 3 dimensions (embeddings/ and training/)
# ==============================================================================================

def toy_vectors():
    itos = ["man", "woman", "king", "queen", "apple"]
    vecs = np.array([[1, 0, 0], [1, 1, 0], [1, 0, 1], [1, 1, 1], [0, 0, -1]], dtype=np.float32)
    return word_vectors.WordVectors(itos, vecs)


# ==============================================================================================
# A tiny BERT world: a 20-piece WordPiece tokenizer, a one-layer model of width 8
# ==============================================================================================

PAD, UNK, CLS, SEP, MASK = 0, 1, 2, 3, 4
WORDS = ["the", "cat", "sat", "on", "mat", "dog", "ran", "a", "red", "big", "sun", "is", "hot", "it", "."]
V = 5 + len(WORDS)                                              # 20


@functools.cache
def tokenizer(with_pad=True):
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    specials = ["[PAD]" if with_pad else "[X]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = Tokenizer(models.WordPiece({w: i for i, w in enumerate(specials + WORDS)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                                       special_tokens=[("[CLS]", CLS), ("[SEP]", SEP)])
    return tok


def bert_config(**kw):
    return bert.BertConfig(**(dict(vocab_size=V, d_model=8, n_layers=1, n_heads=2, d_ff=16, max_len=16) | kw))


def tiny_bert(**kw):
    torch.manual_seed(0)
    return bert.Bert(bert_config(), **kw)


def save_tensors(path: Path, state: dict, metadata=None) -> Path:
    save_file({k: v.contiguous() for k, v in state.items()}, str(path), metadata=metadata)
    return path


def hf_bert_dir(model=None) -> Path:
    """A Hugging Face BERT checkpoint directory (config.json + model.safetensors) of the tiny model."""
    model = model or tiny_bert()
    folder = tmp()
    config = model.config.to_hf_dict() | {"model_type": "bert", "position_embedding_type": "absolute"}
    (folder / "config.json").write_text(json.dumps(config))
    ours = model.state_dict()
    save_tensors(folder / "model.safetensors", {f"bert.{k}": ours[v] for k, v in model.hf_key_map().items()})
    return folder


def damaged(folder: Path, name: str, how: str) -> Path:
    """``folder`` with the file ``name`` truncated (``cut``), replaced by junk (``junk``) or removed (``drop``)."""
    path = folder / name
    if how == "cut":
        path.write_bytes(path.read_bytes()[:-7])
    elif how == "junk":
        path.write_bytes(b"this is not a checkpoint")
    else:
        path.unlink()
    return folder


def hf_bert_bin_dir() -> Path:
    """A Hugging Face BERT directory in the older format (pytorch_model.bin), truncated."""
    folder = hf_bert_dir()
    torch.save(load_file(str(folder / "model.safetensors")), folder / "pytorch_model.bin")
    (folder / "model.safetensors").unlink()
    return damaged(folder, "pytorch_model.bin", "cut")


def hf_bart_dir() -> Path:
    """A Hugging Face BART checkpoint directory of the tiny BART."""
    folder = tmp()
    model = tiny_bart()
    (folder / "config.json").write_text(json.dumps(model.config.to_hf_dict() | {"model_type": "bart"}))
    ours = model.state_dict()
    save_tensors(folder / "model.safetensors", {f"model.{k}": ours[v] for k, v in model.hf_key_map().items()})
    return folder


def with_config_json(text: str) -> Path:
    folder = hf_bert_dir()
    (folder / "config.json").write_text(text)
    return folder


def saved_small_bert(model=None, tokenizer_=None, report=None) -> Path:
    folder = tmp()
    bert_checkpoint.save_pretrained(folder, model or tiny_bert(), tokenizer_ or tokenizer(), report or {"steps": 0})
    return folder


# ==============================================================================================
# A tiny BART: vocabulary 30, one layer each side, width 8
# ==============================================================================================

BV = 30


def bart_config(**kw):
    return bart.BartConfig(**(dict(vocab_size=BV, d_model=8, n_encoder_layers=1, n_decoder_layers=1, n_heads=2,
                                   d_ff=16, max_len=16, dropout=0.0) | kw))


def tiny_bart(**kw):
    torch.manual_seed(0)
    return bart.Bart(bart_config(**kw))


# ==============================================================================================
# A tiny BART recipe, its vocabulary and its saved directory (bert/ and bart/)
# ==============================================================================================

TINY_BART = bart_corpus.BartRecipe(arch=dict(d_model=8, n_heads=2, n_encoder_layers=1, n_decoder_layers=1,
                                             d_ff=16, dropout=0.0, max_len=32), max_tokens=300, max_updates=2,
                                   warmup=1, eval_every=1, n_held_out=2)


@functools.cache
def bart_vocab():
    return bart_corpus.BartVocab()


def vocab_bart():
    torch.manual_seed(0)
    return bart_pretraining.build_bart(TINY_BART, bart_vocab())


def tiny_bart_dir(**report_changes) -> Path:
    """A coursekit BART directory (model.safetensors with its recipe and tokenizer hash, report.json)."""
    vocab = bart_vocab()
    model = vocab_bart()
    folder = tmp()
    path = train.save_checkpoint(folder / "model.safetensors", model.half(), model.config,
                                 extra={"recipe": asdict(TINY_BART), "tokenizer_sha256": vocab.subwords.sha256(),
                                        "mask_id": str(vocab.mask_id)})
    report = {"recipe": asdict(TINY_BART), "file_sha256": sha256_file(path), "unigram_top": "the", "updates": 0}
    report.update(report_changes)
    (folder / "report.json").write_text(json.dumps({k: v for k, v in report.items() if v is not None}))
    return folder

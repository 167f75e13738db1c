"""Bad calls to coursekit.bart — the model, batches and heads, the pre-training corpus and recipe,
fine-tuning and the noise functions: each must give a clear error.

One row per thing that can go wrong (see ``tests/helpers/bad_inputs.py``): the error type, a regex its
message must match (the argument's name, what was expected, what arrived), raised by coursekit itself.
Every model and tokenizer here is tiny (some from ``tests/helpers/tiny_models.py``), every row fails before
any training starts, and damaged files are written in a temporary folder, never in ``data/``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path

import torch
from helpers.bad_inputs import Bad, bad_call_test, gen, i64, tmp
from helpers.tiny_models import (
    BV,
    TINY_BART,
    bart_config,
    bart_vocab,
    bert_config,
    damaged,
    hf_bart_dir,
    hf_bert_dir,
    saved_small_bert,
    tiny_bart,
    tiny_bart_dir,
    tiny_bert,
    vocab_bart,
)

from coursekit.bart import batches as bart_batches
from coursekit.bart import corpus as bart_corpus
from coursekit.bart import finetuning as bart_finetuning
from coursekit.bart import heads as bart_heads
from coursekit.bart import model as bart
from coursekit.bart import noising
from coursekit.bart import pretraining as bart_pretraining
from coursekit.data import sha256_file
from coursekit.training import loop as train

# ==============================================================================================
# coursekit.bart.model, coursekit.bart.batches and coursekit.bart.heads
# ==============================================================================================

B_PAD, B_BOS, B_EOS = 1, 0, 2


def bart_ids(B=2, T=6, dtype=i64):
    x = torch.randint(3, BV, (B, T), generator=gen())
    x[:, 0], x[:, -1] = B_BOS, B_EOS
    return x.to(dtype)


def bart_call(**kw):
    args = dict(src=bart_ids(), tgt_in=None, src_keep=None, tgt_keep=None) | kw
    return tiny_bart()(**args)


def classify(ids=None, keep=None, **kw):
    return bart_heads.BartForSequenceClassification(tiny_bart(), 3, **kw)(bart_ids() if ids is None else ids, keep)


def s2s_batch(**kw):
    b = bart_batches.seq2seq_batch([[0, 5, 6, 2], [0, 7, 2]], [[0, 8, 9, 2], [0, 10, 2]], pad_id=B_PAD,
                                   decoder_start_id=B_EOS)
    return bart_batches.Seq2SeqBatch(**(asdict(b) | kw))


def seq2seq(sources=([0, 5, 2],), targets=([0, 6, 2],), **kw):
    return bart_batches.seq2seq_batch(list(sources), list(targets), **(dict(pad_id=B_PAD, decoder_start_id=B_EOS) | kw))


def denoise(documents=([0, 5, 6, 7, 2],), noise=None, **kw):
    noise = noise or (lambda ids, generator=None: noising.token_masking(ids, mask_id=3, generator=generator))
    return bart_batches.denoising_batch(list(documents), noise, **(dict(pad_id=B_PAD, decoder_start_id=B_EOS) | kw))


BART = [
    Bad("1-D ids", bart_batches.shift_tokens_right,
        lambda: bart_batches.shift_tokens_right(bart_ids()[0], B_PAD, B_EOS), ValueError,
        r"ids must have 2 dimensions, got shape \(6,\)"),
    Bad("float ids", bart_batches.shift_tokens_right,
        lambda: bart_batches.shift_tokens_right(bart_ids().float(), B_PAD, B_EOS),
        TypeError, r"ids must be integer token ids, got torch.float32"),
    Bad("a list of ids", bart_batches.shift_tokens_right,
        lambda: bart_batches.shift_tokens_right([[0, 5, 2]], B_PAD, B_EOS),
        TypeError, r"ids must be a torch.Tensor, got list"),
    Bad("zero-length targets", bart_batches.shift_tokens_right,
        lambda: bart_batches.shift_tokens_right(torch.zeros(2, 0, dtype=i64), B_PAD, B_EOS), ValueError,
        r"ids must hold at least one token per row, got shape \(2, 0\)"),
    Bad("a negative id other than -100", bart_batches.shift_tokens_right,
        lambda: bart_batches.shift_tokens_right(torch.tensor([[0, -5, 2]]), B_PAD, B_EOS), ValueError,
        r"ids must hold token ids ≥ 0 \(or -100 for label padding\), got -5"),
    Bad("float pad id", bart_batches.shift_tokens_right,
        lambda: bart_batches.shift_tokens_right(bart_ids(), 1.0, B_EOS), TypeError,
        r"pad_id must be an int token id, got float"),
    Bad("negative start id", bart_batches.shift_tokens_right,
        lambda: bart_batches.shift_tokens_right(bart_ids(), B_PAD, -2),
        ValueError, r"decoder_start_id must be a token id ≥ 0, got -2"),

    Bad("an integer keep-mask", bart_batches.Seq2SeqBatch,
        lambda: s2s_batch(src_keep=s2s_batch().src_keep.long()), TypeError,
        r"src_keep must be a bool tensor \(True = keep\), got torch.int64"),
    Bad("targets of another length", bart_batches.Seq2SeqBatch,
        lambda: s2s_batch(tgt_out=s2s_batch().tgt_out[:, :-1]), ValueError,
        r"tgt_out must have the shape of tgt_in \(2, 4\), got \(2, 3\)"),
    Bad("sources of another batch size", bart_batches.Seq2SeqBatch,
        lambda: s2s_batch(src=s2s_batch().src[:1], src_keep=s2s_batch().src_keep[:1]), ValueError,
        r"src has 1 rows but tgt_in has 2: one source per target"),
    Bad("a list for the source", bart_batches.Seq2SeqBatch, lambda: s2s_batch(src=[[0, 5, 2]]), TypeError,
        r"src must be a torch.Tensor, got list"),

    Bad("more sources than targets", bart_batches.seq2seq_batch,
        lambda: seq2seq(sources=([0, 5, 2], [0, 6, 2])), ValueError,
        r"need as many sources as targets \(at least one\), got 2 and 1"),
    Bad("no pairs", bart_batches.seq2seq_batch, lambda: seq2seq((), ()), ValueError,
        r"need as many sources as targets \(at least one\), got 0 and 0"),
    Bad("float ids", bart_batches.seq2seq_batch, lambda: seq2seq(sources=([0, 5.5, 2],)), TypeError,
        r"sources\[0\] must hold ints, got \[5.5\] \(float\)"),
    Bad("an empty target", bart_batches.seq2seq_batch, lambda: seq2seq(targets=([],)), ValueError,
        r"targets\[0\] is empty"),
    Bad("a 2-D tensor as one source", bart_batches.seq2seq_batch,
        lambda: seq2seq(sources=(torch.ones(2, 3, dtype=i64),)), TypeError,
        r"sources\[0\] must be a 1-D integer tensor or a list of ints"),
    Bad("a negative id", bart_batches.seq2seq_batch, lambda: seq2seq(targets=([0, -1, 2],)), ValueError,
        r"targets\[0\] must hold token ids ≥ 0, got -1"),
    Bad("negative pad id", bart_batches.seq2seq_batch, lambda: seq2seq(pad_id=-1), ValueError,
        r"pad_id must be a token id ≥ 0, got -1"),

    Bad("no documents", bart_batches.denoising_batch, lambda: denoise(()), ValueError,
        r"denoising_batch needs at least one document"),
    Bad("float ids (would be truncated)", bart_batches.denoising_batch, lambda: denoise(([0, 5.7, 2],)), TypeError,
        r"documents\[0\] must hold ints, got \[5.7\] \(float\)"),
    Bad("a number for the noise", bart_batches.denoising_batch, lambda: denoise(noise=3), TypeError,
        r"noise must be a function noise\(ids, \*, generator\) -> ids, got int"),
    Bad("a seed for the generator", bart_batches.denoising_batch, lambda: denoise(generator=0), TypeError,
        r"generator must be a torch.Generator or None, got int"),
    Bad("a noise that returns a batch", bart_batches.denoising_batch,
        lambda: denoise(noise=lambda ids, generator=None: ids[None]), TypeError,
        r"sources\[0\] must be a 1-D integer tensor or a list of ints"),

    Bad("a list for the batch", bart_batches.denoising_loss,
        lambda: bart_batches.denoising_loss(tiny_bart(), [1]), TypeError,
        r"batch must be a Seq2SeqBatch, got list"),
    Bad("a function for the model", bart_batches.denoising_loss,
        lambda: bart_batches.denoising_loss(len, s2s_batch()), TypeError,
        r"model must be an nn.Module, got builtin_function_or_method"),
    Bad("a target id = vocab_size (the last target is never a decoder input)", bart_batches.denoising_loss,
        lambda: bart_batches.denoising_loss(tiny_bart(), s2s_batch(tgt_out=s2s_batch().tgt_out.masked_fill(
            s2s_batch().tgt_out == B_EOS, BV))), ValueError,
        r"batch.tgt_out must hold class ids in \[0, 30\), got values in \[0, 30\]"),
    Bad("no real target token (the loss would be NaN)", bart_batches.denoising_loss,
        lambda: bart_batches.denoising_loss(tiny_bart(), s2s_batch(tgt_keep=torch.zeros(2, 4, dtype=torch.bool))),
        ValueError,
        r"batch.tgt_keep marks no target token: the loss is undefined"),

    Bad("zero vocabulary", bart.BartConfig, lambda: bart_config(vocab_size=0), ValueError,
        r"BartConfig.vocab_size must be positive, got 0"),
    Bad("heads do not divide the width", bart.BartConfig, lambda: bart_config(n_heads=3), ValueError,
        r"d_model=8 must be divisible by the heads \(3\)"),
    Bad("decoder heads do not divide the width", bart.BartConfig, lambda: bart_config(decoder_n_heads=5), ValueError,
        r"d_model=8 must be divisible by the heads \(5\)"),
    Bad("pad id = vocab_size", bart.BartConfig, lambda: bart_config(pad_id=BV), ValueError,
        r"BartConfig.pad_id must be an id in \[0, 30\), got 30"),
    Bad("dropout above 1", bart.BartConfig, lambda: bart_config(dropout=1.5), ValueError,
        r"BartConfig.dropout must lie in \[0, 1\), got 1.5"),
    Bad("unknown activation", bart.BartConfig, lambda: bart_config(activation="swish"), ValueError,
        r"BartConfig.activation must be one of .*got 'swish'"),
    Bad("zero init std", bart.BartConfig, lambda: bart_config(init_std=0.0), ValueError,
        r"BartConfig.init_std must be positive and finite, got 0.0"),
    Bad("a string flag", bart.BartConfig, lambda: bart_config(scale_embedding="yes"), TypeError,
        r"BartConfig.scale_embedding must be a bool, got str"),
    Bad("a list for a Hugging Face config", bart.BartConfig.from_hf_config,
        lambda: bart.BartConfig.from_hf_config([]), TypeError,
        r"hf must be a transformers.BartConfig or a config.json dict, got list"),
    Bad("a BERT config", bart.BartConfig.from_hf_config,
        lambda: bart.BartConfig.from_hf_config(bert_config().to_hf_dict() | {"model_type": "bert"}), ValueError,
        r"not a BART that coursekit.bart.model can load: model_type='bert'"),

    Bad("a dict for the config", bart.Bart, lambda: bart.Bart({"vocab_size": BV}), TypeError,
        r"config must be a BartConfig, got dict"),
    Bad("id = vocab_size", bart.Bart.forward, lambda: bart_call(src=torch.tensor([[0, BV, 2]])), ValueError,
        r"encoder ids must hold ids in \[0, 30\), got values in \[0, 30\]"),
    Bad("int16 ids", bart.Bart.forward, lambda: bart_call(src=bart_ids(dtype=torch.int16)), TypeError,
        r"encoder ids must be an integer \(int64 or int32\) tensor of token ids, got torch.int16"),
    Bad("float ids", bart.Bart.forward, lambda: bart_call(src=bart_ids().float(), tgt_in=bart_ids()), TypeError,
        r"encoder ids must be an integer \(int64 or int32\) tensor of token ids, got torch.float32"),
    Bad("negative decoder id", bart.Bart.forward,
        lambda: bart_call(tgt_in=torch.tensor([[2, -1, 5], [2, 5, 6]])), ValueError,
        r"decoder ids must hold ids in \[0, 30\), got values in \[-1, 6\]"),
    Bad("longer than the position table", bart.Bart.forward, lambda: bart_call(src=bart_ids(1, 17)), ValueError,
        r"encoder sequence of 17 positions exceeds max_len=16"),
    Bad("different batch sizes", bart.Bart.forward, lambda: bart_call(tgt_in=bart_ids(3, 4)), ValueError,
        r"src and tgt_in must be \(B, S\) and \(B, T\) with the same B, got \(2, 6\) and \(3, 4\)"),
    Bad("a zero-length source", bart.Bart.forward,
        lambda: bart_call(src=torch.zeros(2, 0, dtype=i64), tgt_in=bart_ids()), ValueError,
        r"encoder ids must hold at least one sequence of at least one token, got shape \(2, 0\)"),
    Bad("float keep-mask", bart.Bart.forward, lambda: bart_call(src_keep=torch.ones(2, 6)), TypeError,
        r"src_keep must be a bool tensor \(True = keep\), got torch.float32"),
    Bad("keep-mask of another shape", bart.Bart.forward,
        lambda: bart_call(tgt_keep=torch.ones(2, 5, dtype=torch.bool)), ValueError,
        r"tgt_keep must have the shape of the ids \(2, 6\), got \(2, 5\)"),
    Bad("memory of another width", bart.Bart.decode,
        lambda: tiny_bart().decode(bart_ids(), torch.randn(2, 6, 4), torch.ones(2, 6, dtype=torch.bool)), ValueError,
        r"memory must have size 8 in dim 2 \(d_model\), got shape \(2, 6, 4\)"),
    Bad("integer source keep-mask", bart.Bart.decode,
        lambda: tiny_bart().decode(bart_ids(), torch.randn(2, 6, 8), torch.ones(2, 6, dtype=i64)), TypeError,
        r"src_keep must be a bool tensor \(True = keep\), got torch.int64"),
    Bad("hidden states of another width", bart.Bart.lm_head, lambda: tiny_bart().lm_head(torch.randn(2, 3, 4)),
        ValueError, r"h must have size 8 in dim -1 \(d_model\), got shape \(2, 3, 4\)"),
    Bad("zero max_len", bart.Bart.generate, lambda: tiny_bart().generate(bart_ids(), max_len=0), ValueError,
        r"max_len must be positive, got 0"),
    Bad("zero beams", bart.Bart.generate, lambda: tiny_bart().generate(bart_ids(), beam_size=0), ValueError,
        r"beam_size must be positive, got 0"),
    Bad("a string length penalty", bart.Bart.generate,
        lambda: tiny_bart().generate(bart_ids(), beam_size=2, length_penalty="1"), TypeError,
        r"length_penalty must be a number, got str"),
    Bad("a number for the source", bart.Bart.from_hf, lambda: bart.Bart.from_hf(42), TypeError,
        r"source must be a transformers model or a checkpoint directory, got int"),
    Bad("truncated model.safetensors", bart.Bart.from_hf,
        lambda: bart.Bart.from_hf(damaged(hf_bart_dir(), "model.safetensors", "cut")), ValueError,
        r"model.safetensors is truncated or not a safetensors file .*restore the checkpoint directory"),
    Bad("the directory of a BERT", bart.Bart.from_hf, lambda: bart.Bart.from_hf(hf_bert_dir()), ValueError,
        r"not a BART that coursekit.bart.model can load: model_type='bert'"),
    Bad("an integer dtype", bart.Bart.from_hf, lambda: bart.Bart.from_hf(hf_bart_dir(), dtype=torch.int32),
        TypeError, r"dtype must be a floating-point torch.dtype \(e.g. torch.float64\), got torch.int32"),

    Bad("a BERT for the model", bart_heads.BartForSequenceClassification,
        lambda: bart_heads.BartForSequenceClassification(tiny_bert(), 2), TypeError,
        r"bart must be a coursekit.bart.model.Bart, got Bert"),
    Bad("zero classes", bart_heads.BartForSequenceClassification,
        lambda: bart_heads.BartForSequenceClassification(tiny_bart(), 0), ValueError,
        r"n_classes must be positive, got 0"),
    Bad("dropout above 1", bart_heads.BartForSequenceClassification,
        lambda: bart_heads.BartForSequenceClassification(tiny_bart(), 2, dropout=2.0), ValueError,
        r"dropout must lie in \[0, 1\), got 2.0"),
    Bad("a row without </s>", bart_heads.BartForSequenceClassification.forward,
        lambda: classify(torch.tensor([[0, 5, 6], [0, 7, 2]])), ValueError,
        r"every input must contain an </s> \(id 2\) to classify; rows \[0\] have none"),
    Bad("float keep-mask", bart_heads.BartForSequenceClassification.forward,
        lambda: classify(keep=torch.ones(2, 6)), TypeError, r"keep must be a bool tensor"),
    Bad("float ids", bart_heads.BartForSequenceClassification.forward, lambda: classify(bart_ids().float()), TypeError,
        r"ids must be an integer \(int64 or int32\) tensor of token ids, got torch.float32"),
    Bad("1-D ids", bart_heads.BartForSequenceClassification.sentence_representation,
        lambda: bart_heads.BartForSequenceClassification(tiny_bart(), 2).sentence_representation(bart_ids()[0]),
        ValueError, r"ids must have 2 dimensions, got shape \(6,\)"),
    Bad("an integer dtype", bart_heads.BartForSequenceClassification.from_hf,
        lambda: bart_heads.BartForSequenceClassification.from_hf(hf_bart_dir(), dtype=torch.long), TypeError,
        r"dtype must be a floating-point torch.dtype"),
    Bad("a missing directory", bart_heads.BartForSequenceClassification.from_hf,
        lambda: bart_heads.BartForSequenceClassification.from_hf(tmp() / "gone"), FileNotFoundError,
        r"no checkpoint directory at"),
]


# ==============================================================================================
# coursekit.bart.corpus, coursekit.bart.pretraining and coursekit.bart.finetuning
# ==============================================================================================

def vocab_docs():
    v = bart_vocab()
    return [v.encode_text(s) for s in ("the cat sat on the mat .", "il fait beau .", "i like this film .")]


def b_corpus(**kw):
    args = dict(vocab=bart_vocab(), train=vocab_docs(), held_out=vocab_docs()[:2], sources={}, unigram_top=10) | kw
    return bart_corpus.PretrainingCorpus(**args)


def bart_dir_with_report(text: str) -> Path:
    folder = tiny_bart_dir()
    (folder / "report.json").write_text(text)
    return folder


def bart_dir_without_recipe() -> Path:
    """A coursekit checkpoint whose metadata lacks the BART recipe (e.g. written by save_checkpoint alone)."""
    folder = tiny_bart_dir()
    model = vocab_bart()
    path = train.save_checkpoint(folder / "model.safetensors", model.half(), model.config)
    report = json.loads((folder / "report.json").read_text()) | {"file_sha256": sha256_file(path)}
    (folder / "report.json").write_text(json.dumps(report))
    return folder


def bart_dir_holding_a_bert() -> Path:
    folder = saved_small_bert()
    (folder / "report.json").write_text(json.dumps({"file_sha256": sha256_file(folder / "model.safetensors")}))
    return folder


def accuracy_of(**kw):
    args = dict(model=vocab_bart(), docs=vocab_docs(), vocab=bart_vocab(), recipe=TINY_BART) | kw
    return bart_pretraining.denoising_accuracy(args.pop("model"), args.pop("docs"), args.pop("vocab"),
                                               args.pop("recipe"), **args)


def export(**kw):
    state = {"update": 1, "epoch": 0, "position": 1, "seconds": 1.0, "hardware": {}, "curve": [], "train": []}
    args = dict(model=vocab_bart(), state=state, corpus=b_corpus(), out=tmp() / "out") | kw
    return bart_pretraining.export(args.pop("model"), args.pop("state"), args.pop("corpus"), args.pop("out"),
                                   recipe=TINY_BART)


def exported_bart_dir() -> Path:
    """A directory as export writes it: int8 weights and the full report."""
    folder = tmp() / "out"
    export(out=folder)
    return folder


def fp16_bart_dir() -> Path:
    """A directory as export wrote it before int8 storage: the full report, fp16 weights (what recompact takes)."""
    folder, vocab, model = exported_bart_dir(), bart_vocab(), vocab_bart()
    path = train.save_checkpoint(folder / "model.safetensors", model.half(), model.config,
                                 extra={"recipe": asdict(TINY_BART), "tokenizer_sha256": vocab.subwords.sha256(),
                                        "mask_id": str(vocab.mask_id)})
    report = json.loads((folder / "report.json").read_text())
    report = {k: v for k, v in report.items() if k != "storage"} | {"file_sha256": sha256_file(path),
                                                                     "size_bytes": path.stat().st_size}
    (folder / "report.json").write_text(json.dumps(report))
    return folder


BART_PRETRAINING = [
    Bad("an architecture without d_ff", bart_corpus.BartRecipe,
        lambda: replace(TINY_BART, arch={k: v for k, v in TINY_BART.arch.items() if k != "d_ff"}), ValueError,
        r"arch must have the keys \[.*'d_ff'.*\]; missing \['d_ff'\]"),
    Bad("an unknown architecture key (would be ignored)", bart_corpus.BartRecipe,
        lambda: replace(TINY_BART, arch=TINY_BART.arch | {"n_layers": 2}), ValueError,
        r"arch must have the keys .*; unknown \['n_layers'\]"),
    Bad("a list for the architecture", bart_corpus.BartRecipe, lambda: replace(TINY_BART, arch=[]), TypeError,
        r"arch must be a dict, got list"),
    Bad("mask ratio above 1", bart_corpus.BartRecipe, lambda: replace(TINY_BART, mask_ratio=1.5), ValueError,
        r"mask_ratio must lie in \[0, 1\], got 1.5"),
    Bad("zero span length", bart_corpus.BartRecipe, lambda: replace(TINY_BART, poisson_lambda=0.0), ValueError,
        r"poisson_lambda must be positive and finite, got 0.0"),
    Bad("zero tokens per batch", bart_corpus.BartRecipe, lambda: replace(TINY_BART, max_tokens=0), ValueError,
        r"max_tokens must be positive, got 0"),
    Bad("zero learning rate", bart_corpus.BartRecipe, lambda: replace(TINY_BART, lr=0.0), ValueError,
        r"lr must be positive and finite, got 0.0"),
    Bad("float seed", bart_corpus.BartRecipe, lambda: replace(TINY_BART, seed=1.5), TypeError,
        r"seed must be an int, got float"),

    Bad("a negative number of reviews", bart_corpus.BartRecipe, lambda: replace(TINY_BART, n_reviews=-1), ValueError,
        r"n_reviews must be 0 or more, got -1"),
    Bad("a model to continue without its hash", bart_corpus.BartRecipe, lambda: replace(TINY_BART, init="data/bart"),
        ValueError, r"init and init_sha256 go together.*init='data/bart', init_sha256=''"),
    Bad("a short hash for the model to continue", bart_corpus.BartRecipe,
        lambda: replace(TINY_BART, init="data/bart", init_sha256="dc336b"), ValueError,
        r"init_sha256 must be 64 lower-case hex digits, got 'dc336b'"),
    Bad("a Path for the model to continue (the recipe is stored as JSON)", bart_corpus.BartRecipe,
        lambda: replace(TINY_BART, init=Path("data/bart"), init_sha256="0" * 64), TypeError,
        r"init must be a str, got PosixPath"),
    Bad("a number for the review", bart_corpus.review_sentences, lambda: bart_corpus.review_sentences(5), TypeError,
        r"review must be a str, got int"),
    Bad("one string for the reviews", bart_corpus.review_documents,
        lambda: bart_corpus.review_documents("A fine film.", bart_vocab(), 64), TypeError,
        r"reviews must be a list of review texts, got str"),
    Bad("a number among the reviews", bart_corpus.review_documents,
        lambda: bart_corpus.review_documents(["A fine film.", 7], bart_vocab(), 64), TypeError,
        r"reviews\[1\] must be a str, got int"),
    Bad("no room for a piece between <s> and </s>", bart_corpus.review_documents,
        lambda: bart_corpus.review_documents(["A fine film."], bart_vocab(), 2), ValueError,
        r"max_len must leave room for <s>, one piece and </s> \(≥ 3\), got 2"),
    Bad("a dict for the vocabulary", bart_corpus.review_documents,
        lambda: bart_corpus.review_documents(["A fine film."], {}, 64), TypeError,
        r"vocab must be a BartVocab, got dict"),
    Bad("a string for the subwords", bart_corpus.BartVocab, lambda: bart_corpus.BartVocab("bpe.json"),
        TypeError, r"subwords must be a SubwordVocab \(from coursekit.translation.benchmark.load_tokenizer\), got str"),
    Bad("one string for the words", bart_corpus.BartVocab.encode, lambda: bart_vocab().encode("the cat"),
        TypeError, r"words must be a list of word strings, got one string"),
    Bad("a number for the text", bart_corpus.BartVocab.encode_text, lambda: bart_vocab().encode_text(3),
        TypeError, r"text must be a string, got int"),
    Bad("one string for the sentences", bart_corpus.BartVocab.encode_many,
        lambda: bart_vocab().encode_many("the cat"), TypeError, r"sentences must be a list of word lists, got str"),
    Bad("a string among the sentences", bart_corpus.BartVocab.encode_many,
        lambda: bart_vocab().encode_many([["the", "cat"], "a dog"]), TypeError,
        r"sentences\[1\] must be a list of words, got str"),
    Bad("an id past the vocabulary", bart_corpus.BartVocab.detokenize,
        lambda: bart_vocab().detokenize([5, 8001]), ValueError, r"ids must hold ids in \[0, 8001\), got 8001"),
    Bad("float ids", bart_corpus.BartVocab.detokenize, lambda: bart_vocab().detokenize([5.0, 6.0]), TypeError,
        r"ids must hold ints, got \[5.0, 6.0\] \(float\)"),

    Bad("a dict for the vocabulary", bart_corpus.PretrainingCorpus, lambda: b_corpus(vocab={}), TypeError,
        r"vocab must be a BartVocab, got dict"),
    Bad("no training documents", bart_corpus.PretrainingCorpus, lambda: b_corpus(train=[]), ValueError,
        r"train must not be empty"),
    Bad("unigram id past the vocabulary", bart_corpus.PretrainingCorpus, lambda: b_corpus(unigram_top=9000),
        ValueError, r"unigram_top must be a token id in \[0, 8001\), got 9000"),

    Bad("a dict for the recipe", bart_corpus.build_corpus, lambda: bart_corpus.build_corpus({}), TypeError,
        r"recipe must be a BartRecipe, got dict"),
    Bad("one string for the SST-2 sentences", bart_corpus.build_corpus,
        lambda: bart_corpus.build_corpus(TINY_BART, sst_sentences="a fine film"), TypeError,
        r"sst_sentences must be a list of strings, got one string"),
    Bad("a dict for the recipe", bart_corpus.held_out_sentences,
        lambda: bart_corpus.held_out_sentences({}, bart_vocab()), TypeError,
        r"recipe must be a BartRecipe, got dict"),
    Bad("a dict for the vocabulary", bart_corpus.held_out_sentences,
        lambda: bart_corpus.held_out_sentences(TINY_BART, {}), TypeError, r"vocab must be a BartVocab, got dict"),

    Bad("a string seed", bart_pretraining.denoising_report,
        lambda: bart_pretraining.denoising_report(tiny_bart_dir(), seed="1"), TypeError,
        r"seed must be an int, got str"),
    Bad("a missing directory", bart_pretraining.denoising_report,
        lambda: bart_pretraining.denoising_report(tmp() / "gone"), FileNotFoundError,
        r"no report at .*report.json; make the model with `python -m coursekit.bart pretrain"),

    Bad("a dict for the recipe", bart_pretraining.build_bart, lambda: bart_pretraining.build_bart({}, bart_vocab()),
        TypeError, r"recipe must be a BartRecipe, got dict"),
    Bad("a list for the vocabulary", bart_pretraining.build_bart, lambda: bart_pretraining.build_bart(TINY_BART, []),
        TypeError, r"vocab must be a BartVocab, got list"),

    Bad("no documents", bart_pretraining.corrupt, lambda: bart_pretraining.corrupt([], bart_vocab(), TINY_BART, gen()),
        ValueError, r"corrupt needs at least one document"),
    Bad("float ids", bart_pretraining.corrupt,
        lambda: bart_pretraining.corrupt([[0, 5.0, 3]], bart_vocab(), TINY_BART, gen()), TypeError,
        r"docs\[0\] must hold ints, got \[5.0\] \(float\)"),
    Bad("an id past the vocabulary", bart_pretraining.corrupt,
        lambda: bart_pretraining.corrupt([[2, 9000, 3]], bart_vocab(), TINY_BART, gen()), ValueError,
        r"docs\[0\] must hold ids in \[0, 8001\), got 9000"),
    Bad("a seed for the generator", bart_pretraining.corrupt,
        lambda: bart_pretraining.corrupt(vocab_docs(), bart_vocab(), TINY_BART, 0), TypeError,
        r"generator must be a torch.Generator or None, got int"),

    Bad("no documents", bart_pretraining.denoising_accuracy, lambda: accuracy_of(docs=[]), ValueError,
        r"denoising_accuracy needs at least one document"),
    Bad("zero batch size", bart_pretraining.denoising_accuracy, lambda: accuracy_of(batch_size=0), ValueError,
        r"batch_size must be positive, got 0"),
    Bad("unigram id past the vocabulary", bart_pretraining.denoising_accuracy,
        lambda: accuracy_of(unigram_top=-1), ValueError, r"unigram_top must be a token id in \[0, 8001\), got -1"),
    Bad("nothing hidden (the fill accuracy would divide by zero)", bart_pretraining.denoising_accuracy,
        lambda: accuracy_of(recipe=replace(TINY_BART, mask_ratio=0.0)), ValueError,
        r"the corruption hid no token of these documents \(mask_ratio=0.0\): the fill accuracy is undefined"),
    Bad("a function for the model", bart_pretraining.denoising_accuracy, lambda: accuracy_of(model=len), TypeError,
        r"model must be an nn.Module, got builtin_function_or_method"),

    Bad("a BERT to continue into", bart_pretraining.continue_from,
        lambda: bart_pretraining.continue_from(tiny_bert(), TINY_BART), TypeError,
        r"model must be a coursekit.bart.model.Bart, got Bert"),
    Bad("a recipe that continues nothing", bart_pretraining.continue_from,
        lambda: bart_pretraining.continue_from(vocab_bart(), TINY_BART), ValueError,
        r"recipe.init is empty: there is no model to continue from"),
    Bad("a folder without the model to continue", bart_pretraining.continue_from,
        lambda: bart_pretraining.continue_from(vocab_bart(), replace(TINY_BART, init=str(tmp()),
                                                                     init_sha256="0" * 64)),
        FileNotFoundError, r"no model to continue from at .*model.safetensors"),
    Bad("another model than the recipe's hash", bart_pretraining.continue_from,
        lambda: bart_pretraining.continue_from(vocab_bart(), replace(TINY_BART, init=str(exported_bart_dir()),
                                                                     init_sha256="0" * 64)),
        ValueError, r"has sha256 [0-9a-f]{12}…, the recipe continues from 000000000000…: another model"),

    Bad("a dict for the recipe", bart_pretraining.first_stage_record,
        lambda: bart_pretraining.first_stage_record({}), TypeError, r"recipe must be a BartRecipe, got dict"),
    Bad("a first-stage recipe", bart_pretraining.first_stage_record,
        lambda: bart_pretraining.first_stage_record(TINY_BART), ValueError,
        r"recipe.init is empty: a first-stage model has no first stage"),
    Bad("a folder without a report", bart_pretraining.first_stage_record,
        lambda: bart_pretraining.first_stage_record(replace(TINY_BART, init=str(tmp()), init_sha256="0" * 64)),
        FileNotFoundError, r"no report of the first stage at .*report.json"),
    Bad("the report of another model", bart_pretraining.first_stage_record,
        lambda: bart_pretraining.first_stage_record(replace(TINY_BART, init=str(exported_bart_dir()),
                                                            init_sha256="0" * 64)),
        ValueError, r"report.json describes the model [0-9a-f]{12}…, the recipe continued 000000000000…"),

    Bad("a dict for the recipe (found before the corpus is built)", bart_pretraining.pretrain,
        lambda: bart_pretraining.pretrain(tmp(), recipe={}), TypeError, r"recipe must be a BartRecipe, got dict"),
    Bad("a list of documents for the corpus", bart_pretraining.pretrain,
        lambda: bart_pretraining.pretrain(tmp(), recipe=TINY_BART, corpus=[[1]]), TypeError,
        r"corpus must be a PretrainingCorpus or None, got list"),
    Bad("zero updates (found before the corpus is built)", bart_pretraining.pretrain,
        lambda: bart_pretraining.pretrain(tmp(), recipe=TINY_BART, max_updates=0), ValueError,
        r"max_updates must be positive, got 0"),
    Bad("a checkpoint every 0 minutes", bart_pretraining.pretrain,
        lambda: bart_pretraining.pretrain(tmp(), recipe=TINY_BART, corpus=b_corpus(), checkpoint_minutes=0.0),
        ValueError, r"checkpoint_minutes must be positive and finite, got 0.0"),

    Bad("a BERT for the model", bart_pretraining.export, lambda: export(model=tiny_bert()), TypeError,
        r"model must be a coursekit.bart.model.Bart, got Bert"),
    Bad("a state without its counters (nothing is written)", bart_pretraining.export,
        lambda: export(state={"update": 1}), ValueError,
        r"state must be the training state of pretrain\(\); it lacks \['curve', 'epoch', 'hardware'"),
    Bad("a list for the corpus", bart_pretraining.export, lambda: export(corpus=[]), TypeError,
        r"corpus must be a PretrainingCorpus, got list"),

    Bad("a missing directory", bart_pretraining.load_pretrained_bart,
        lambda: bart_pretraining.load_pretrained_bart(tmp() / "nothing"), FileNotFoundError,
        r"no report at .*python -m coursekit.bart pretrain"),
    Bad("a damaged report.json", bart_pretraining.load_pretrained_bart,
        lambda: bart_pretraining.load_pretrained_bart(bart_dir_with_report('{"recipe": ')), ValueError,
        r"report.json is not valid JSON.*re-run `python -m coursekit.bart pretrain"),
    Bad("a report without the file's hash", bart_pretraining.load_pretrained_bart,
        lambda: bart_pretraining.load_pretrained_bart(tiny_bart_dir(file_sha256=None)), ValueError,
        r"report.json is not a report of coursekit.bart.pretraining: it lacks \['file_sha256'\]"),
    Bad("a truncated model.safetensors", bart_pretraining.load_pretrained_bart,
        lambda: bart_pretraining.load_pretrained_bart(damaged(tiny_bart_dir(), "model.safetensors", "cut")),
        ValueError, r"does not match its report .*a truncated or replaced file; re-run "
                    r"`python -m coursekit.bart pretrain"),
    Bad("no model.safetensors", bart_pretraining.load_pretrained_bart,
        lambda: bart_pretraining.load_pretrained_bart(damaged(tiny_bart_dir(), "model.safetensors", "drop")),
        FileNotFoundError, r"no checkpoint at .*model.safetensors; make it with `python -m coursekit.bart pretrain"),
    Bad("a checkpoint without the recipe", bart_pretraining.load_pretrained_bart,
        lambda: bart_pretraining.load_pretrained_bart(bart_dir_without_recipe()), ValueError,
        r"is not a BART checkpoint of coursekit.bart.pretraining: its metadata lacks \['recipe', 'tokenizer_sha256'\]"
        r".*python -m coursekit.bart pretrain"),
    Bad("the directory of the small BERT", bart_pretraining.load_pretrained_bart,
        lambda: bart_pretraining.load_pretrained_bart(bart_dir_holding_a_bert()), ValueError,
        r"report.json is not a report of coursekit.bart.pretraining: it lacks \['recipe'"),
    Bad("a number for the directory", bart_pretraining.load_pretrained_bart,
        lambda: bart_pretraining.load_pretrained_bart(3), TypeError,
        r"directory must be a folder path \(str or Path\) or None, got int"),

    Bad("a number for the directory", bart_pretraining.recompact, lambda: bart_pretraining.recompact(3), TypeError,
        r"directory must be a folder path \(str or Path\) or None, got int"),
    Bad("a list for the output directory", bart_pretraining.recompact,
        lambda: bart_pretraining.recompact(tmp(), ["data/bart"]), TypeError,
        r"out must be a folder path \(str or Path\) or None, got list"),
    Bad("a list of documents for the corpus", bart_pretraining.recompact,
        lambda: bart_pretraining.recompact(tmp(), corpus=vocab_docs()), TypeError,
        r"corpus must be a PretrainingCorpus or None, got list"),
    Bad("a report without the training record (nothing to keep)", bart_pretraining.recompact,
        lambda: bart_pretraining.recompact(tiny_bart_dir(), corpus=b_corpus()), ValueError,
        r"lacks \['corpus', 'curve', .*'train_seconds'\]: recompact keeps the training record of a report "
        r"written by export\(\); re-run `python -m coursekit.bart pretrain"),
    Bad("a model already stored as int8", bart_pretraining.recompact,
        lambda: bart_pretraining.recompact(exported_bart_dir(), corpus=b_corpus()), ValueError,
        r"model.safetensors is already stored as 'int8-rowwise': nothing to recompact"),
    Bad("another corpus than the model's (other held-out figures)", bart_pretraining.recompact,
        lambda: bart_pretraining.recompact(fp16_bart_dir(), tmp(), corpus=b_corpus(unigram_top=11)), ValueError,
        r"corpus is not the one the model of .* was trained on: its unigram_top .* vs the report's"),
]


def mt(**kw):
    vocab = bart_vocab()
    docs = vocab_docs()
    args = dict(model=vocab_bart(), sources=docs, targets=docs, vocab=vocab) | kw
    return bart_finetuning.finetune_translation(args.pop("model"), args.pop("sources"), args.pop("targets"),
                                                args.pop("vocab"), **args)


def sst(**kw):
    args = dict(model=vocab_bart(), ids=vocab_docs(), labels=[0, 1, 0], vocab=bart_vocab()) | kw
    return bart_finetuning.finetune_sst2(args.pop("model"), args.pop("ids"), args.pop("labels"), args.pop("vocab"),
                                         **args)


def sst_acc(**kw):
    clf = bart_heads.BartForSequenceClassification(vocab_bart(), 2)
    args = dict(clf=clf, ids=vocab_docs(), labels=[0, 1, 0], vocab=bart_vocab()) | kw
    return bart_finetuning.sst2_accuracy(args.pop("clf"), args.pop("ids"), args.pop("labels"), args.pop("vocab"),
                                         **args)


def bart_dir_with_downstream(table) -> Path:
    """The tiny BART directory with a ``downstream.json`` (a dict is written as JSON, a str as it is)."""
    folder = tiny_bart_dir()
    (folder / "downstream.json").write_text(table if isinstance(table, str) else json.dumps(table))
    return folder


SST2_TABLE = {"recipe": asdict(bart_finetuning.FinetuneRecipe()),
              "sst2": {"summary": {"pretrained": {"chosen_lr": 1e-3, "mean": 0.66},
                                   "random": {"chosen_lr": 1e-3, "mean": 0.66}}}}


def gain(directory=None, seeds=(0,), **kw):
    return bart_finetuning.sst2_gain(tmp() / "no_model" if directory is None else directory, seeds, **kw)


BART_FINETUNING = [
    Bad("zero pairs", bart_finetuning.FinetuneRecipe, lambda: bart_finetuning.FinetuneRecipe(n_pairs=0), ValueError,
        r"n_pairs must be positive, got 0"),
    Bad("zero learning rate", bart_finetuning.FinetuneRecipe, lambda: bart_finetuning.FinetuneRecipe(mt_lr=0.0),
        ValueError, r"mt_lr must be positive and finite, got 0.0"),
    Bad("label smoothing of 1", bart_finetuning.FinetuneRecipe,
        lambda: bart_finetuning.FinetuneRecipe(label_smoothing=1.0), ValueError,
        r"label_smoothing must lie in \[0, 1\), got 1.0"),
    Bad("float batch size", bart_finetuning.FinetuneRecipe, lambda: bart_finetuning.FinetuneRecipe(sst2_batch=32.0),
        TypeError, r"sst2_batch must be an int, got float"),

    Bad("unknown init", bart_finetuning.starting_model, lambda: bart_finetuning.starting_model("pre-trained", 0),
        ValueError, r"init must be 'pretrained' or 'random', got 'pre-trained'"),
    Bad("a string seed", bart_finetuning.starting_model,
        lambda: bart_finetuning.starting_model("random", "0", bart_vocab()), TypeError,
        r"seed must be an int, got str"),
    Bad("a dict for the vocabulary", bart_finetuning.starting_model,
        lambda: bart_finetuning.starting_model("random", 0, {}), TypeError,
        r"vocab must be a BartVocab or None, got dict"),

    Bad("more sources than targets", bart_finetuning.finetune_translation, lambda: mt(targets=vocab_docs()[:2]),
        ValueError, r"sources and targets must be pairs: got 3 sources and 2 targets"),
    Bad("no pairs", bart_finetuning.finetune_translation, lambda: mt(sources=[], targets=[]), ValueError,
        r"finetune_translation needs at least one pair"),
    Bad("a BERT for the model", bart_finetuning.finetune_translation, lambda: mt(model=tiny_bert()), TypeError,
        r"model must be a coursekit.bart.model.Bart, got Bert"),
    Bad("a dict for the recipe", bart_finetuning.finetune_translation, lambda: mt(recipe={}), TypeError,
        r"recipe must be a FinetuneRecipe, got dict"),
    Bad("an id past the vocabulary (found before training)", bart_finetuning.finetune_translation,
        lambda: mt(targets=vocab_docs()[:2] + [[2, 9000, 3]]), ValueError,
        r"targets\[2\] must hold ids in \[0, 8001\), got 9000"),

    Bad("an unknown split", bart_finetuning.translation_bleu,
        lambda: bart_finetuning.translation_bleu(vocab_bart(), bart_vocab(), None, split="dev"), ValueError,
        r"split must be one of \['train', 'valid', 'test'\], got 'dev'"),
    Bad("None for the data", bart_finetuning.translation_bleu,
        lambda: bart_finetuning.translation_bleu(vocab_bart(), bart_vocab(), None), TypeError,
        r"data must be a TranslationData \(from load_benchmark\), got NoneType"),
    Bad("a BERT for the model", bart_finetuning.translation_bleu,
        lambda: bart_finetuning.translation_bleu(tiny_bert(), bart_vocab(), None), TypeError,
        r"model must be a coursekit.bart.model.Bart, got Bert"),

    Bad("label 2 in a two-class task", bart_finetuning.finetune_sst2, lambda: sst(labels=[0, 2, 1]), ValueError,
        r"labels must hold class ids in \[0, 2\), got values in \[0, 2\]"),
    Bad("float labels", bart_finetuning.finetune_sst2, lambda: sst(labels=[0.0, 1.0, 0.0]), TypeError,
        r"labels must hold ints, got \[0.0, 1.0, 0.0\] \(float\)"),
    Bad("fewer labels than sentences", bart_finetuning.finetune_sst2, lambda: sst(labels=[0, 1]), ValueError,
        r"labels must have one entry per sentence \(3\), got 2"),
    Bad("no sentences", bart_finetuning.finetune_sst2, lambda: sst(ids=[], labels=[]), ValueError,
        r"finetune_sst2 needs at least one sentence"),
    Bad("a sentence without </s>", bart_finetuning.finetune_sst2, lambda: sst(ids=vocab_docs()[:2] + [[2, 10]]),
        ValueError, r"ids\[2\] must end with </s> \(id 3\), the position the classifier reads"),

    Bad("fewer labels than sentences", bart_finetuning.sst2_accuracy, lambda: sst_acc(labels=[0]), ValueError,
        r"labels must have one entry per sentence \(3\), got 1"),
    Bad("no sentences (the accuracy would divide by zero)", bart_finetuning.sst2_accuracy,
        lambda: sst_acc(ids=[], labels=[]), ValueError, r"sst2_accuracy needs at least one sentence"),
    Bad("zero batch size", bart_finetuning.sst2_accuracy, lambda: sst_acc(batch_size=0), ValueError,
        r"batch_size must be positive, got 0"),
    Bad("a bare Bart for the classifier", bart_finetuning.sst2_accuracy, lambda: sst_acc(clf=vocab_bart()),
        TypeError, r"clf must be a BartForSequenceClassification, got Bart"),
    Bad("label 2 in a two-class task", bart_finetuning.sst2_accuracy, lambda: sst_acc(labels=[0, 2, 1]), ValueError,
        r"labels must hold class ids in \[0, 2\), got values in \[0, 2\]"),

    Bad("no seeds", bart_finetuning.compare, lambda: bart_finetuning.compare(()), ValueError,
        r"seeds must be a non-empty sequence of ints, got \(\)"),
    Bad("an unknown task", bart_finetuning.compare, lambda: bart_finetuning.compare((0,), tasks=("summaries",)),
        ValueError, r"tasks must be among \('translation', 'sst2'\), got \('summaries',\)"),
    Bad("one string for the tasks", bart_finetuning.compare, lambda: bart_finetuning.compare((0,), tasks="sst2"),
        TypeError, r"tasks must be a tuple of task names, got one string"),
    Bad("a dict for the recipe", bart_finetuning.compare, lambda: bart_finetuning.compare((0,), recipe={}),
        TypeError, r"recipe must be a FinetuneRecipe, got dict"),
    Bad("one string for the starts", bart_finetuning.compare, lambda: bart_finetuning.compare((0,), inits="random"),
        TypeError, r"inits must be a tuple of starts, got str"),
    Bad("an unknown start", bart_finetuning.compare, lambda: bart_finetuning.compare((0,), inits=("warm",)),
        ValueError, r"inits must be among \('pretrained', 'random'\), got \('warm',\)"),
    Bad("a file name for the log", bart_finetuning.compare, lambda: bart_finetuning.compare((0,), log="log.txt"),
        TypeError, r"log must be a function such as print, got str"),
    Bad("one learning rate as a float", bart_finetuning.FinetuneRecipe,
        lambda: bart_finetuning.FinetuneRecipe(sst2_lrs=1e-3), TypeError, r"sst2_lrs must be a non-empty tuple"),
    Bad("a negative learning rate among several", bart_finetuning.FinetuneRecipe,
        lambda: bart_finetuning.FinetuneRecipe(sst2_lrs=(1e-3, -1e-3)), ValueError, r"each of sst2_lrs"),
    Bad("no selection sentences as None", bart_finetuning.FinetuneRecipe,
        lambda: bart_finetuning.FinetuneRecipe(n_sst2_select=None), TypeError, r"n_sst2_select"),
    Bad("a negative selection size", bart_finetuning.sst2_data,
        lambda: bart_finetuning.sst2_data(bart_corpus.BartVocab(), 10, -1), ValueError,
        r"n_select must be an int ≥ 0, got -1"),
    Bad("zero training sentences", bart_finetuning.sst2_data,
        lambda: bart_finetuning.sst2_data(bart_corpus.BartVocab(), 0), ValueError, r"n_train"),
    Bad("one int for the seeds", bart_finetuning.sst2_gain, lambda: gain(seeds=2), TypeError,
        r"seeds must be a non-empty tuple of ints, got int 2"),
    Bad("no seeds", bart_finetuning.sst2_gain, lambda: gain(seeds=()), ValueError,
        r"seeds must be a non-empty tuple of ints, got an empty one"),
    Bad("a float seed", bart_finetuning.sst2_gain, lambda: gain(seeds=(0, 1.0)), TypeError,
        r"each of seeds must be an int, got float"),
    Bad("a repeated seed", bart_finetuning.sst2_gain, lambda: gain(seeds=(0, 0)), ValueError,
        r"seeds must be distinct .*got \(0, 0\)"),
    Bad("a file name for the log", bart_finetuning.sst2_gain, lambda: gain(log="log.txt"), TypeError,
        r"log must be a function such as print, or None, got str"),
    Bad("a dict for the directory", bart_finetuning.sst2_gain, lambda: gain({}), TypeError,
        r"directory must be a path \(str or Path\) or None for data/bart, got dict"),
    Bad("a model directory without downstream.json", bart_finetuning.sst2_gain, lambda: gain(tiny_bart_dir()),
        FileNotFoundError, r"downstream.json is missing: run `python -m coursekit.bart compare --tasks sst2"),
    Bad("a damaged downstream.json", bart_finetuning.sst2_gain,
        lambda: gain(bart_dir_with_downstream('{"recipe": ')), ValueError, r"downstream.json is not valid JSON"),
    Bad("a table of the translation task only", bart_finetuning.sst2_gain,
        lambda: gain(bart_dir_with_downstream({"recipe": SST2_TABLE["recipe"], "translation": {}})), ValueError,
        r"not a compare\(\) table with SST-2 results: it lacks \['sst2.summary.pretrained.chosen_lr', "
        r"'sst2.summary.random.chosen_lr'\]"),
    Bad("a table without its recipe", bart_finetuning.sst2_gain,
        lambda: gain(bart_dir_with_downstream({"sst2": SST2_TABLE["sst2"]})), ValueError, r"it lacks \['recipe'\]"),
    Bad("a recipe with an unknown field", bart_finetuning.sst2_gain,
        lambda: gain(bart_dir_with_downstream(SST2_TABLE | {"recipe": SST2_TABLE["recipe"] | {"n_steps": 1}})),
        ValueError, r"records a recipe FinetuneRecipe does not take .*n_steps"),
    Bad("a model with fewer positions than the SST-2 sentences get", bart_finetuning.sst2_gain,
        lambda: gain(bart_dir_with_downstream(SST2_TABLE)), ValueError,
        r"has 32 positions; SST-2 sentences are cut to 64"),
    Bad("one result instead of a list", bart_finetuning.merge, lambda: bart_finetuning.merge({"seeds": [0]}),
        TypeError, r"parts must be a non-empty list of compare\(\) results"),
    Bad("parts of different recipes", bart_finetuning.merge,
        lambda: bart_finetuning.merge([{"recipe": {"a": 1}}, {"recipe": {"a": 2}}]), ValueError,
        r"parts must come from the same recipe"),
]


# ==============================================================================================
# coursekit.bart.noising
# ==============================================================================================

DOC = [0, 5, 6, 7, 8, 9, 2]


NOISING = [
    Bad("a batch instead of one document", noising.token_masking,
        lambda: noising.token_masking(torch.zeros(2, 3, dtype=i64), mask_id=4), ValueError,
        r"ids must be ONE document, a 1-D sequence of token ids, got shape \(2, 3\)"),
    Bad("negative mask id", noising.token_masking, lambda: noising.token_masking(DOC, mask_id=-1), ValueError,
        r"mask_id must be a token id ≥ 0, got -1"),
    Bad("float mask id", noising.token_masking, lambda: noising.token_masking(DOC, mask_id=4.0), TypeError,
        r"mask_id must be an int token id, got float"),
    Bad("the mask token's text for its id", noising.text_infilling,
        lambda: noising.text_infilling(DOC, mask_id="[MASK]"), TypeError,
        r"mask_id must be an int token id, got str '\[MASK\]'"),
    Bad("ratio above 1", noising.token_masking, lambda: noising.token_masking(DOC, mask_id=4, ratio=1.5), ValueError,
        r"ratio must lie in \[0, 1\], got 1.5"),
    Bad("a negative id", noising.token_masking, lambda: noising.token_masking([0, -3, 2], mask_id=4), ValueError,
        r"ids must hold token ids ≥ 0, got -3"),
    Bad("a seed for the generator", noising.token_masking,
        lambda: noising.token_masking(DOC, mask_id=4, generator=0), TypeError,
        r"generator must be a torch.Generator or None, got int"),
    Bad("an empty document comes back empty (documented)", noising.token_masking,
        lambda: noising.token_masking([], mask_id=4), returns=lambda out: out.shape == (0,) and out.dtype == i64),

    Bad("float tensor", noising.token_deletion, lambda: noising.token_deletion(torch.zeros(3)), TypeError,
        r"ids must hold integer token ids, got dtype torch.float32"),
    Bad("a float in the list", noising.token_deletion, lambda: noising.token_deletion([1, 2.5]), TypeError,
        r"ids must be a list of int token ids, found 2.5 \(float\)"),
    Bad("negative ratio", noising.token_deletion, lambda: noising.token_deletion(DOC, ratio=-0.1), ValueError,
        r"ratio must lie in \[0, 1\], got -0.1"),
    Bad("strings for the special ids", noising.token_deletion,
        lambda: noising.token_deletion(DOC, special_ids=["<s>"]), TypeError, r"special_ids must contain ints"),
    Bad("a list for the generator", noising.token_deletion, lambda: noising.token_deletion(DOC, generator=[0]),
        TypeError, r"generator must be a torch.Generator or None, got list"),

    Bad("negative count", noising.poisson_span_lengths, lambda: noising.poisson_span_lengths(-1), ValueError,
        r"n_tokens must be (an int )?≥ 0, got -1"),
    Bad("float count", noising.poisson_span_lengths, lambda: noising.poisson_span_lengths(3.0), TypeError,
        r"n_tokens must be an int, got float"),
    Bad("zero lambda", noising.poisson_span_lengths, lambda: noising.poisson_span_lengths(5, poisson_lambda=0),
        ValueError, r"poisson_lambda must be positive and finite, got 0"),
    Bad("infinite lambda", noising.poisson_span_lengths,
        lambda: noising.poisson_span_lengths(5, poisson_lambda=float("inf")), ValueError,
        r"poisson_lambda must be positive and finite, got inf"),
    Bad("a huge lambda (torch's sampler overflows into negative lengths)", noising.poisson_span_lengths,
        lambda: noising.poisson_span_lengths(5, poisson_lambda=1e30), ValueError,
        r"poisson_lambda must be at most 1e\+06 \(a mean span length in tokens\), got 1e\+30"),
    Bad("a seed for the generator", noising.poisson_span_lengths,
        lambda: noising.poisson_span_lengths(5, generator=1), TypeError,
        r"generator must be a torch.Generator or None, got int"),

    Bad("return_masked not a bool", noising.text_infilling,
        lambda: noising.text_infilling(DOC, mask_id=4, return_masked="yes"), TypeError,
        r"return_masked must be a bool, got 'yes'"),
    Bad("ratio above 1", noising.text_infilling, lambda: noising.text_infilling(DOC, mask_id=4, ratio=1.5),
        ValueError, r"ratio must lie in \[0, 1\], got 1.5"),
    Bad("zero lambda", noising.text_infilling, lambda: noising.text_infilling(DOC, mask_id=4, poisson_lambda=0),
        ValueError, r"poisson_lambda must be positive and finite, got 0"),
    Bad("negative mask id", noising.text_infilling, lambda: noising.text_infilling(DOC, mask_id=-1), ValueError,
        r"mask_id must be a token id ≥ 0, got -1"),
    Bad("a 2-D tensor", noising.text_infilling,
        lambda: noising.text_infilling(torch.ones(2, 4, dtype=i64), mask_id=4), ValueError, r"ONE document"),
    Bad("a seed for the generator", noising.text_infilling,
        lambda: noising.text_infilling(DOC, mask_id=4, generator=3), TypeError,
        r"generator must be a torch.Generator or None, got int"),

    Bad("a tensor of tokens is cut like its list (0-d tensors never equalled an int in a set)", noising.split_sentences,
        lambda: noising.split_sentences(torch.tensor([5, 9, 6, 9]), {9}), returns=lambda out: out == [[5, 9], [6, 9]]),
    Bad("a string of tokens", noising.split_sentences, lambda: noising.split_sentences("a. b.", {"."}), TypeError,
        r"tokens must be a sequence of ints, got str"),
    Bad("float tokens", noising.split_sentences, lambda: noising.split_sentences([5.0, 9.0], {9}), TypeError,
        r"tokens must hold ints, got \[5.0, 9.0\] \(float\)"),
    Bad("no sentence-end ids", noising.split_sentences, lambda: noising.split_sentences([5, 9, 6], ()), ValueError,
        r"sentence_end_ids must name at least one token id"),
    Bad("strings for the sentence-end ids", noising.split_sentences,
        lambda: noising.split_sentences([5, 9, 6], "."), TypeError, r"sentence_end_ids must contain ints"),

    Bad("no sentence-end ids", noising.sentence_permutation,
        lambda: noising.sentence_permutation(DOC, sentence_end_ids=()), ValueError,
        r"sentence_end_ids must name at least one token id"),
    Bad("strings for the special ids", noising.sentence_permutation,
        lambda: noising.sentence_permutation(DOC, sentence_end_ids={9}, special_ids=["a"]), TypeError,
        r"special_ids must contain ints"),
    Bad("a seed for the generator", noising.sentence_permutation,
        lambda: noising.sentence_permutation(DOC, sentence_end_ids={9}, generator=0), TypeError,
        r"generator must be a torch.Generator or None, got int"),

    Bad("a string", noising.document_rotation, lambda: noising.document_rotation("abc"), TypeError,
        r"ids must be a 1-D LongTensor or a list of ints, got str"),
    Bad("a bool tensor", noising.document_rotation, lambda: noising.document_rotation(torch.ones(3, dtype=torch.bool)),
        TypeError, r"ids must hold integer token ids, got dtype torch.bool"),
    Bad("a seed for the generator", noising.document_rotation,
        lambda: noising.document_rotation(DOC, generator=0), TypeError,
        r"generator must be a torch.Generator or None, got int"),
    Bad("a document of specials only comes back unchanged (documented)", noising.document_rotation,
        lambda: noising.document_rotation([0, 2], special_ids={0, 2}), returns=lambda out: out.tolist() == [0, 2]),

    Bad("no noise", noising.compose, lambda: noising.compose(), ValueError,
        r"compose needs at least one noise function"),
    Bad("a number for a noise", noising.compose, lambda: noising.compose(3), TypeError,
        r"compose expects callables noise\(ids, \*, generator=None\), got int"),
    Bad("float ids to the composed noise", noising.compose,
        lambda: noising.compose(noising.document_rotation)([0.5, 1.5]), TypeError,
        r"ids must be a list of int token ids, found 0.5 \(float\)"),

    Bad("a string for the source (diffed character by character)", noising.diff_tokens,
        lambda: noising.diff_tokens("the cat", ["the", "cat"]), TypeError,
        r"source must be a list of token strings, got one string"),
    Bad("ids instead of strings", noising.diff_tokens, lambda: noising.diff_tokens(["a"], [5]), TypeError,
        r"corrupted must hold strings, got 5 \(int\)"),
    Bad("a number for the title", noising.diff_html, lambda: noising.diff_html(["a"], ["a"], title=3), TypeError,
        r"title must be a string, got int"),
    Bad("ids instead of strings", noising.diff_html, lambda: noising.diff_html([1, 2], ["a"]), TypeError,
        r"source must hold strings, got 1 \(int\)"),
    Bad("a string for the corrupted tokens", noising.diff_html, lambda: noising.diff_html(["a"], "a"), TypeError,
        r"corrupted must be a list of token strings, got one string"),
]


ROWS = BART + BART_PRETRAINING + BART_FINETUNING + NOISING

test_bad_call = bad_call_test(ROWS)

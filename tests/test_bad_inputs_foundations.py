"""Bad calls to the foundations — embeddings, classifiers, text, metrics, training, runtime, plots, widgets,
data and the validators themselves: each must give a clear error.

One row per thing that can go wrong (see ``tests/bad_input_helpers.py``): the error type, a regex its
message must match (the argument's name, what was expected, what arrived), raised by coursekit itself.
A ``returns=`` row checks a documented convention instead (e.g. a similarity score over fewer than three
covered pairs is NaN, reported with its coverage). Files are damaged in a temporary folder, never in ``data/``.
"""

from __future__ import annotations

import json
import math
import os
import random
import tempfile
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from bad_input_helpers import Bad, check_bad_call, ids, register
from safetensors.torch import save_file
from torch import nn

from coursekit import data, metrics, runtime, text
from coursekit import validation as checks
from coursekit.data import store as data_store
from coursekit.embeddings import classifiers, sgns, word_vectors
from coursekit.embeddings import counts as embeddings
from coursekit.gpt.char import TrainConfig
from coursekit.training import loop as train
from coursekit.training import resumable
from coursekit.viz import plots as viz
from coursekit.viz import widgets

EXEMPT = {
    "coursekit.embeddings.sgns.SGNSHistory": "a plain result container filled by train_sgns",
    "coursekit.training.resumable.hardware": "takes no arguments: it describes the machine",
    "coursekit.runtime.oversubscribed": "takes no arguments: it reads the load average",
    "coursekit.runtime.use_one_thread_if_busy": "takes no arguments: it reads the load average and OMP_NUM_THREADS",
    "coursekit.runtime.environment_report": "takes no arguments; a bad $COURSEKIT_PROFILE is profile()'s row",
    "coursekit.runtime.exact_matmul": "a context manager without arguments",
    "coursekit.viz.widgets.headless": "takes no arguments: it reads $COURSEKIT_HEADLESS",
    "coursekit.data.registry.DataNotFoundError": "an exception class raised by the data layer",
    "coursekit.data.registry.DataHashError": "an exception class raised by the data layer",
    "coursekit.data.registry.UnknownCorpusError": "an exception class raised by the data layer (a KeyError)",
    "coursekit.data.registry.RemoteFile": "a frozen registry record written in registry.py, never by a caller",
    "coursekit.data.store.cache_dir": "takes no arguments: it reads $COURSEKIT_CACHE",
}

f32, i64 = torch.float32, torch.long
NAN = float("nan")
_TMP = tempfile.TemporaryDirectory(prefix="coursekit-bad-inputs-")


def tmp() -> Path:
    """A fresh empty folder (removed when the test session ends)."""
    return Path(tempfile.mkdtemp(dir=_TMP.name))


def with_env(call, **env):
    """Run ``call()`` with environment variables set (restored afterwards)."""
    with mock.patch.dict(os.environ, env):
        return call()


# ==============================================================================================
# coursekit.validation — the validators must reject what they promise
# ==============================================================================================

CHECKS = [
    Bad("float64 input for float32 weights", checks.check_same_dtype,
        lambda: checks.check_same_dtype(torch.zeros(2, dtype=torch.float64), "query", torch.zeros(2)), TypeError,
        r"query has dtype torch.float64 but the layer's weights are torch.float32; convert one of them"),
    Bad("float row index", checks.check_row_index, lambda: checks.check_row_index(torch.tensor([0.0]), 2), TypeError,
        r"index must be a 1-D integer tensor of batch rows, got torch.float32 \(1,\)"),
    Bad("a row that does not exist", checks.check_row_index, lambda: checks.check_row_index(torch.tensor([0, 2]), 2),
        ValueError, r"index values must lie in \[0, 2\) \(there are 2 batch rows\), got min 0, max 2"),
    Bad("list", checks.check_tensor, lambda: checks.check_tensor([1.0], "x"), TypeError,
        r"x must be a torch.Tensor, got list"),
    Bad("wrong number of dims", checks.check_tensor, lambda: checks.check_tensor(torch.zeros(2), "x", ndim=(2, 3)),
        ValueError, r"x must have 2 or 3 dimensions, got shape \(2,\)"),
    Bad("integer where float is needed", checks.check_tensor,
        lambda: checks.check_tensor(torch.zeros(2, dtype=i64), "x", floating=True), TypeError,
        r"x must be a floating-point tensor, got torch.int64"),
    Bad("wrong dtype", checks.check_tensor, lambda: checks.check_tensor(torch.zeros(2), "x", dtype=torch.bool),
        TypeError, r"x must have dtype torch.bool, got torch.float32"),

    Bad("wrong size", checks.check_size, lambda: checks.check_size(torch.zeros(2, 3), "x", 1, 4, "d_model"),
        ValueError, r"x must have size 4 in dim 1 \(d_model\), got shape \(2, 3\)"),

    Bad("float ids", checks.check_token_ids, lambda: checks.check_token_ids(torch.tensor([1.0]), "ids", 5),
        TypeError, r"ids must be an integer .*got torch.float32"),
    Bad("bool ids", checks.check_token_ids, lambda: checks.check_token_ids(torch.tensor([True]), "ids", 5),
        TypeError, r"ids must be an integer .*got torch.bool"),
    Bad("int16 ids (nn.Embedding refuses them)", checks.check_token_ids,
        lambda: checks.check_token_ids(torch.tensor([1], dtype=torch.int16), "ids", 5), TypeError,
        r"ids must be an integer \(int64 or int32\).*torch.int16"),
    Bad("id = vocab_size", checks.check_token_ids, lambda: checks.check_token_ids(torch.tensor([0, 5]), "ids", 5),
        ValueError, r"ids must hold ids in \[0, 5\), got values in \[0, 5\]"),
    Bad("negative id", checks.check_token_ids, lambda: checks.check_token_ids(torch.tensor([-1, 2]), "ids", 5),
        ValueError, r"ids must hold ids in \[0, 5\), got values in \[-1, 2\]"),

    Bad("bool as a count", checks.check_count, lambda: checks.check_count(True, "steps"), TypeError,
        r"steps must be an int, got bool"),
    Bad("negative count", checks.check_count, lambda: checks.check_count(-1, "steps"), ValueError,
        r"steps must be an int ≥ 0, got -1"),
    Bad("float count", checks.check_count, lambda: checks.check_count(1.0, "steps"), TypeError,
        r"steps must be an int, got float"),
    Bad("float seed", checks.check_int, lambda: checks.check_int(1.5, "seed"), TypeError,
        r"seed must be an int, got float"),
    Bad("bool seed", checks.check_int, lambda: checks.check_int(False, "seed"), TypeError,
        r"seed must be an int, got bool"),
    Bad("a seed for the generator", checks.check_generator, lambda: checks.check_generator(0), TypeError,
        r"generator must be a torch.Generator or None, got int"),
    Bad("bool as an int", checks.check_positive_int, lambda: checks.check_positive_int(True, "n"), TypeError,
        r"n must be an int, got bool"),
    Bad("float", checks.check_positive_int, lambda: checks.check_positive_int(2.0, "n"), TypeError,
        r"n must be an int, got float"),
    Bad("zero", checks.check_positive_int, lambda: checks.check_positive_int(0, "n"), ValueError,
        r"n must be positive, got 0"),
    Bad("negative", checks.check_positive_int, lambda: checks.check_positive_int(-3, "n"), ValueError,
        r"n must be positive, got -3"),

    Bad("NaN", checks.check_probability, lambda: checks.check_probability(NAN, "p"), ValueError,
        r"p must lie in \[0, 1\], got nan"),
    Bad("above 1", checks.check_probability, lambda: checks.check_probability(1.5, "p"), ValueError,
        r"p must lie in \[0, 1\], got 1.5"),
    Bad("negative", checks.check_probability, lambda: checks.check_probability(-0.1, "p"), ValueError,
        r"p must lie in \[0, 1\], got -0.1"),
    Bad("1 when the upper end is open", checks.check_probability,
        lambda: checks.check_probability(1.0, "p", inclusive_high=False), ValueError,
        r"p must lie in \[0, 1\), got 1.0"),
    Bad("bool", checks.check_probability, lambda: checks.check_probability(True, "p"), TypeError,
        r"p must be a number, got bool"),
    Bad("string", checks.check_probability, lambda: checks.check_probability("0.5", "p"), TypeError,
        r"p must be a number, got str"),

    Bad("float labels", checks.check_labels, lambda: checks.check_labels(torch.tensor([0.0, 1.0]), "y", 3),
        TypeError, r"y must be an integer .*class ids, got torch.float32"),
    Bad("label = n_classes", checks.check_labels, lambda: checks.check_labels(torch.tensor([0, 3]), "y", 3),
        ValueError, r"y must hold class ids in \[0, 3\), got values in \[0, 3\]"),
    Bad("negative label", checks.check_labels, lambda: checks.check_labels(torch.tensor([-1, 0]), "y", 3),
        ValueError, r"y must hold class ids in \[0, 3\), got values in \[-1, 0\]"),
    Bad("-1 where -100 is the ignore index", checks.check_labels,
        lambda: checks.check_labels(torch.tensor([-1, 0, -100]), "y", 3, ignore_index=-100), ValueError,
        r"class ids in \[0, 3\) \(or -100 to ignore a position\), got values in \[-1, 0\]"),

    Bad("additive float mask", checks.check_bool_mask, lambda: checks.check_bool_mask(torch.zeros(2, 3), "mask"),
        TypeError, r"mask must be a bool tensor \(True = keep\), got torch.float32.*mask == 0"),
    Bad("wrong shape", checks.check_bool_mask,
        lambda: checks.check_bool_mask(torch.ones(3, 2, dtype=torch.bool), "mask", (2, 3)), ValueError,
        r"mask must have shape \(2, 3\), got \(3, 2\)"),
    Bad("list", checks.check_bool_mask, lambda: checks.check_bool_mask([[True]], "mask"), TypeError,
        r"mask must be a torch.Tensor, got list"),

    Bad("NaN", checks.check_finite, lambda: checks.check_finite(torch.tensor([1.0, NAN]), "x"), ValueError,
        r"x must be finite, got 1 NaN and 0 infinite values"),
    Bad("infinity", checks.check_finite, lambda: checks.check_finite(torch.tensor([float("-inf")]), "x"),
        ValueError, r"x must be finite, got 0 NaN and 1 infinite values"),

    Bad("NaN", checks.check_positive_float, lambda: checks.check_positive_float(NAN, "lr"), ValueError,
        r"lr must be positive and finite, got nan"),
    Bad("infinity", checks.check_positive_float, lambda: checks.check_positive_float(float("inf"), "lr"),
        ValueError, r"lr must be positive and finite, got inf"),
    Bad("zero", checks.check_positive_float, lambda: checks.check_positive_float(0.0, "lr"), ValueError,
        r"lr must be positive and finite, got 0.0"),
    Bad("negative with allow_zero", checks.check_positive_float,
        lambda: checks.check_positive_float(-1.0, "t", allow_zero=True), ValueError,
        r"t must be (an int )?≥ 0 and finite, got -1.0"),
    Bad("bool", checks.check_positive_float, lambda: checks.check_positive_float(True, "lr"), TypeError,
        r"lr must be a number, got bool"),
    Bad("string", checks.check_positive_float, lambda: checks.check_positive_float("1e-3", "lr"), TypeError,
        r"lr must be a number, got str"),

    Bad("unknown name", checks.check_choice, lambda: checks.check_choice("dev", "split", ["train", "test"]),
        ValueError, r"split must be one of \['train', 'test'\], got 'dev'"),

    Bad("floats", checks.check_int_sequence, lambda: checks.check_int_sequence([1.5, 2], "ids"), TypeError,
        r"ids must hold ints, got \[1.5\] \(float\)"),
    Bad("bools", checks.check_int_sequence, lambda: checks.check_int_sequence([True, 2], "ids"), TypeError,
        r"ids must hold ints, got \[True\] \(bool\)"),
    Bad("a string", checks.check_int_sequence, lambda: checks.check_int_sequence("12", "ids"), TypeError,
        r"ids must be a sequence of ints, got str"),
    Bad("an int", checks.check_int_sequence, lambda: checks.check_int_sequence(5, "ids"), TypeError,
        r"ids must be a sequence of ints, got int"),
    Bad("float tensor", checks.check_int_sequence, lambda: checks.check_int_sequence(torch.tensor([1.0]), "ids"),
        TypeError, r"ids must be a 1-D integer tensor or a list of ints, got torch.float32"),
    Bad("2-D tensor", checks.check_int_sequence, lambda: checks.check_int_sequence(torch.ones(2, 2, dtype=i64), "ids"),
        TypeError, r"ids must be a 1-D integer tensor .*of shape \(2, 2\)"),
    Bad("bool tensor", checks.check_int_sequence, lambda: checks.check_int_sequence(torch.tensor([True]), "ids"),
        TypeError, r"ids must be a 1-D integer tensor .*torch.bool"),

    Bad("empty list", checks.check_non_empty, lambda: checks.check_non_empty([], "xs"), ValueError,
        r"xs must not be empty"),
    Bad("empty tensor", checks.check_non_empty, lambda: checks.check_non_empty(torch.zeros(0), "xs"), ValueError,
        r"xs must not be empty"),
]


# ==============================================================================================
# coursekit.text
# ==============================================================================================

def small_vocab():
    return text.Vocab.build([["b", "a", "b"], ["c", "b", "a"]])        # specials + b a c: 7 tokens


TEXT = [
    Bad("list", text.tokenize, lambda: text.tokenize(["a"]), TypeError, r"tokenize expects a str, got list"),
    Bad("bytes", text.tokenize, lambda: text.tokenize(b"a b"), TypeError, r"tokenize expects a str, got bytes"),
    Bad("None", text.tokenize, lambda: text.tokenize(None), TypeError, r"tokenize expects a str, got NoneType"),

    Bad("duplicate tokens", text.Vocab, lambda: text.Vocab(["a", "b", "a"]), ValueError,
        r"itos must hold unique tokens, got 'a' more than once"),
    Bad("a string for itos (one token per character)", text.Vocab, lambda: text.Vocab("abc"), TypeError,
        r"itos must be a list of str tokens, got str"),
    Bad("a non-str token", text.Vocab, lambda: text.Vocab(["a", 1]), TypeError,
        r"itos must hold str tokens, got 1 \(int\)"),

    Bad("min_freq 0", text.Vocab.build, lambda: text.Vocab.build([["a"]], min_freq=0), ValueError,
        r"min_freq must be positive, got 0"),
    Bad("float min_freq", text.Vocab.build, lambda: text.Vocab.build([["a"]], min_freq=1.5), TypeError,
        r"min_freq must be an int, got float"),
    Bad("max_size smaller than the specials", text.Vocab.build, lambda: text.Vocab.build([["a"]], max_size=3),
        ValueError, r"max_size=3 leaves no room for words after the 4 special tokens"),
    Bad("max_size equal to the specials", text.Vocab.build, lambda: text.Vocab.build([["a"]], max_size=4),
        ValueError, r"max_size=4 leaves no room for words after the 4 special tokens"),
    Bad("max_size 0", text.Vocab.build, lambda: text.Vocab.build([["a"]], max_size=0, specials=()), ValueError,
        r"max_size must be positive, got 0"),
    Bad("float max_size", text.Vocab.build, lambda: text.Vocab.build([["a"]], max_size=10.5), TypeError,
        r"max_size must be an int, got float"),
    Bad("untokenised sentences", text.Vocab.build, lambda: text.Vocab.build(["a sentence"]), TypeError,
        r"expects an iterable of token lists, got a str inside it"),
    Bad("non-str tokens", text.Vocab.build, lambda: text.Vocab.build([[1, 2, 1]]), TypeError,
        r"tokens must be str, got 1 \(int\)"),
    Bad("specials as one string", text.Vocab.build, lambda: text.Vocab.build([["a"]], specials="<pad>"), TypeError,
        r"specials must be a list of str tokens, got str"),

    Bad("a string", text.Vocab.encode, lambda: small_vocab().encode("abc"), TypeError,
        r"encode expects a list of tokens, got a str"),
    Bad("non-str tokens (were mapped to <unk>)", text.Vocab.encode, lambda: small_vocab().encode(["a", 3]),
        TypeError, r"tokens must be str, got 3 \(int\)"),
    Bad("None token", text.Vocab.encode, lambda: small_vocab().encode([None]), TypeError,
        r"tokens must be str, got None \(NoneType\)"),
    Bad("unknown token and no <unk>", text.Vocab.encode, lambda: text.Vocab(["<pad>", "x"]).encode(["y"]), KeyError,
        r"token 'y' is not in the vocabulary and it has no <unk>"),
    Bad("add_bos without <bos>", text.Vocab.encode, lambda: text.Vocab(["<pad>", "x"]).encode(["x"], add_bos=True),
        KeyError, r"this vocabulary has no <bos> token"),

    Bad("float ids (were truncated)", text.Vocab.decode, lambda: small_vocab().decode([1.7, 2.9]), TypeError,
        r"ids must hold ints, got \[1.7, 2.9\] \(float\)"),
    Bad("negative id (negative indexing)", text.Vocab.decode, lambda: small_vocab().decode([4, -1]), ValueError,
        r"ids must lie in \[0, 7\), got -1 \(out of range\)"),
    Bad("id past the end", text.Vocab.decode, lambda: small_vocab().decode([99]), ValueError,
        r"ids must lie in \[0, 7\), got 99 \(out of range\)"),
    Bad("float tensor", text.Vocab.decode, lambda: small_vocab().decode(torch.tensor([4.0, 5.0])), TypeError,
        r"ids must be a 1-D integer tensor or a list of ints, got torch.float32"),
    Bad("2-D tensor", text.Vocab.decode, lambda: small_vocab().decode(torch.tensor([[4, 5]])), TypeError,
        r"ids must be a 1-D integer tensor .*shape \(1, 2\)"),
    Bad("a string of digits", text.Vocab.decode, lambda: small_vocab().decode("45"), TypeError,
        r"ids must be a sequence of ints, got str"),
    Bad("float numpy array", text.Vocab.decode, lambda: small_vocab().decode(np.array([4.0, 5.5])), TypeError,
        r"ids must hold ints, got \[4.0, 5.5\] \(float\)"),
    Bad("bools", text.Vocab.decode, lambda: small_vocab().decode([True, False]), TypeError,
        r"ids must hold ints, got \[True, False\] \(bool\)"),
    Bad("float ids", text.Vocab.detokenize, lambda: small_vocab().detokenize([4.2]), TypeError,
        r"ids must hold ints, got \[4.2\] \(float\)"),

    Bad("negative id", text.decode_ids, lambda: text.decode_ids(["a", "b"], [-2]), ValueError,
        r"ids must lie in \[0, 2\), got -2 \(out of range\)"),
    Bad("float ids", text.decode_ids, lambda: text.decode_ids(["a", "b"], [0.0, 1.0]), TypeError,
        r"ids must hold ints, got \[0.0, 1.0\] \(float\)"),
    Bad("itos as a string", text.decode_ids, lambda: text.decode_ids("ab", [0]), TypeError,
        r"itos must be a list of str tokens, got str"),

    Bad("float ids (were truncated)", text.pad_batch, lambda: text.pad_batch([[1.5, 2.7]], 0), TypeError,
        r"seqs\[0\] must hold ints, got \[1.5, 2.7\] \(float\)"),
    Bad("float ids in a later sequence", text.pad_batch, lambda: text.pad_batch([[1, 2], [3.0]], 0), TypeError,
        r"seqs\[1\] must hold ints, got \[3.0\] \(float\)"),
    Bad("negative id", text.pad_batch, lambda: text.pad_batch([[1, -2]], 0), ValueError,
        r"seqs\[0\] must hold ids ≥ 0, got -2"),
    Bad("a string", text.pad_batch, lambda: text.pad_batch("abc", 0), TypeError,
        r"seqs must be a list of id sequences, got str"),
    Bad("strings inside", text.pad_batch, lambda: text.pad_batch(["ab"], 0), TypeError,
        r"seqs\[0\] must be a sequence of ints, got str"),
    Bad("float pad_id", text.pad_batch, lambda: text.pad_batch([[1]], 0.5), TypeError,
        r"pad_id must be an int, got float"),
    Bad("negative pad_id", text.pad_batch, lambda: text.pad_batch([[1]], -1), ValueError,
        r"pad_id must be (an int )?≥ 0, got -1"),
    Bad("max_len 0", text.pad_batch, lambda: text.pad_batch([[1]], 0, max_len=0), ValueError,
        r"max_len must be positive, got 0"),
    Bad("sequence longer than max_len", text.pad_batch, lambda: text.pad_batch([[1, 2, 3]], 0, max_len=2),
        ValueError, r"length 3 > max_len=2; truncate it explicitly"),
    Bad("no sequence", text.pad_batch, lambda: text.pad_batch([], 0), ValueError, r"at least one sequence"),

    Bad("one string instead of a list of texts", text.train_wordpiece, lambda: text.train_wordpiece("some text"),
        TypeError, r"texts must be an iterable of str, got a single str"),
    Bad("token lists instead of texts", text.train_wordpiece, lambda: text.train_wordpiece([["a", "b"]], 100),
        TypeError, r"texts must hold str, got list at position 0"),
    Bad("vocab_size 0", text.train_wordpiece, lambda: text.train_wordpiece(["a b"], 0), ValueError,
        r"vocab_size must be positive, got 0"),
    Bad("min_frequency 0", text.train_wordpiece, lambda: text.train_wordpiece(["a b"], 100, min_frequency=0),
        ValueError, r"min_frequency must be positive, got 0"),
    Bad("float vocab_size", text.train_bpe, lambda: text.train_bpe(["a b"], 1000.0), TypeError,
        r"vocab_size must be an int, got float"),
    Bad("vocab_size below the byte alphabet", text.train_bpe, lambda: text.train_bpe(["a b"], 100), ValueError,
        r"vocab_size=100 is smaller than the 257 symbols .*256 bytes"),
    Bad("special_tokens as one string", text.train_bpe,
        lambda: text.train_bpe(["a b"], 300, special_tokens="<|endoftext|>"), TypeError,
        r"special_tokens must be a list of str tokens, got str"),
    Bad("one string instead of a list of texts", text.train_bpe, lambda: text.train_bpe("a b", 300), TypeError,
        r"texts must be an iterable of str, got a single str"),
]


# ==============================================================================================
# coursekit.metrics
# ==============================================================================================

METRICS = [
    Bad("NaN", metrics.perplexity, lambda: metrics.perplexity(NAN), ValueError,
        r"mean_nll must be a finite non-negative number of nats, got nan"),
    Bad("negative", metrics.perplexity, lambda: metrics.perplexity(-0.5), ValueError,
        r"mean_nll must be a finite non-negative number of nats, got -0.5"),
    Bad("infinity", metrics.perplexity, lambda: metrics.perplexity(float("inf")), ValueError,
        r"finite non-negative number of nats, got inf"),
    Bad("string", metrics.perplexity, lambda: metrics.perplexity("2.0"), TypeError,
        r"mean_nll must be a number, got str"),
    Bad("bool", metrics.perplexity, lambda: metrics.perplexity(True), TypeError,
        r"mean_nll must be a number, got bool"),
    Bad("a loss beyond exp's float range (a convention: inf, as torch.exp gives)", metrics.perplexity,
        lambda: metrics.perplexity(1000.0), returns=lambda value: value == float("inf")),

    Bad("probabilities instead of class ids", metrics.accuracy,
        lambda: metrics.accuracy(torch.tensor([0.9, 0.2]), torch.tensor([1, 0])), TypeError,
        r"pred must hold class ids \(integers\) or logits with one more dim than target, got torch.float32 "
        r"of shape \(2,\)"),
    Bad("python float probabilities", metrics.accuracy, lambda: metrics.accuracy([0.9, 0.2], [1, 0]), TypeError,
        r"pred must hold class ids \(integers\) or logits.*torch.float32"),
    Bad("float targets", metrics.accuracy, lambda: metrics.accuracy(torch.tensor([1, 0]), torch.tensor([1.0, 0.0])),
        TypeError, r"target must hold integer class ids, got torch.float32"),
    Bad("bool targets", metrics.accuracy, lambda: metrics.accuracy(torch.tensor([1, 0]), torch.tensor([True, False])),
        TypeError, r"target must hold integer class ids, got torch.bool"),
    Bad("NaN logits (a NaN row counted as correct)", metrics.accuracy,
        lambda: metrics.accuracy(torch.tensor([[NAN, 0.0], [0.2, 0.8]]), torch.tensor([0, 1])), ValueError,
        r"pred must be finite, got 1 NaN"),
    Bad("shape mismatch", metrics.accuracy, lambda: metrics.accuracy([1, 2, 3], [1, 2]), ValueError,
        r"pred shape \(3,\) does not match target shape \(2,\)"),
    Bad("empty", metrics.accuracy, lambda: metrics.accuracy(torch.zeros(0, dtype=i64), torch.zeros(0, dtype=i64)),
        ValueError, r"accuracy of an empty set is undefined"),

    Bad("single strings", metrics.bleu, lambda: metrics.bleu("a b", "a b"), TypeError,
        r"bleu expects lists of strings \(one per sentence\), got a single string"),
    Bad("token lists instead of strings", metrics.bleu, lambda: metrics.bleu([["a", "b"]], ["a b"]), TypeError,
        r"hypotheses must hold str sentences, got list"),
    Bad("None reference", metrics.bleu, lambda: metrics.bleu(["a b"], [None]), TypeError,
        r"references must hold str sentences, got NoneType"),
    Bad("length mismatch", metrics.bleu, lambda: metrics.bleu(["a", "b"], ["a"]), ValueError,
        r"2 hypotheses but 1 references"),
    Bad("empty", metrics.bleu, lambda: metrics.bleu([], []), ValueError, r"bleu needs at least one sentence"),

    Bad("a dict for the rows", metrics.select_then_test, lambda: metrics.select_then_test({"init": "random"}, (1e-3,)),
        TypeError, r"rows must be a non-empty list of run dicts, got dict"),
    Bad("a row without its selection accuracy", metrics.select_then_test,
        lambda: metrics.select_then_test([{"init": "random", "lr": 1e-3, "seed": 0, "test": 0.7}], (1e-3,)),
        ValueError, r"rows\[0\] must be a dict with keys \['init', 'lr', 'seed', 'select', 'test'\]"),
    Bad("one learning rate as a float", metrics.select_then_test,
        lambda: metrics.select_then_test([{"init": "random", "lr": 1e-3, "seed": 0, "select": .7, "test": .7}], 1e-3),
        TypeError, r"lrs must be a non-empty sequence of learning rates"),
    Bad("an init with no runs", metrics.select_then_test,
        lambda: metrics.select_then_test([{"init": "random", "lr": 1e-3, "seed": 0, "select": .7, "test": .7}],
                                         (1e-3,)), ValueError, r"no runs of init 'pretrained'"),
    Bad("one init as a string", metrics.select_then_test,
        lambda: metrics.select_then_test([{"init": "random", "lr": 1e-3, "seed": 0, "select": .7, "test": .7}],
                                         (1e-3,), "random"), TypeError, r"inits must be a sequence of init names"),

    Bad("n 0", metrics.distinct_n, lambda: metrics.distinct_n([["a"]], 0), ValueError, r"n must be positive, got 0"),
    Bad("float n", metrics.distinct_n, lambda: metrics.distinct_n([["a", "b"]], 1.5), TypeError,
        r"n must be an int, got float"),
    Bad("a single string (read as one text per character)", metrics.distinct_n,
        lambda: metrics.distinct_n("abab", 1), TypeError, r"texts must be a list of texts, got a single str"),
    Bad("no n-grams", metrics.distinct_n, lambda: metrics.distinct_n([["a", "b"]], 3), ValueError,
        r"no 3-grams in the given texts"),
]


# ==============================================================================================
# coursekit.embeddings.classifiers
# ==============================================================================================

def batch(B=2, T=4, V=10):
    ids = torch.randint(1, V, (B, T))
    mask = torch.ones(B, T, dtype=torch.bool)
    mask[1, 2:] = False
    return ids, mask


def feats(B=2, T=4, d=3):
    return torch.randn(B, T, d)


class FakeVectors:
    """Something with ``stoi`` and ``vectors`` (what init_embeddings reads)."""

    def __init__(self, words, vectors):
        self.stoi = {w: i for i, w in enumerate(words)}
        self.vectors = vectors


def embedding(V=4, d=3):
    return nn.Embedding(V, d, padding_idx=0)


ITOS = ["<pad>", "a", "b", "c"]

CLASSIFIERS = [
    Bad("list", classifiers.masked_mean, lambda: classifiers.masked_mean([[0.0]], batch()[1]), TypeError,
        r"x must be a torch.Tensor, got list"),
    Bad("2-D x", classifiers.masked_mean, lambda: classifiers.masked_mean(torch.randn(2, 4), batch()[1]), ValueError,
        r"x must have 3 dimensions, got shape \(2, 4\)"),
    Bad("integer x", classifiers.masked_mean,
        lambda: classifiers.masked_mean(torch.ones(2, 4, 3, dtype=i64), batch()[1]), TypeError,
        r"x must be a floating-point tensor, got torch.int64"),
    Bad("float mask", classifiers.masked_mean, lambda: classifiers.masked_mean(feats(), torch.ones(2, 4)), TypeError,
        r"mask must be a bool tensor.*torch.float32"),
    Bad("mask one position too long", classifiers.masked_mean,
        lambda: classifiers.masked_mean(feats(), torch.ones(2, 5, dtype=torch.bool)), ValueError,
        r"mask must have shape \(2, 4\), got \(2, 5\)"),
    Bad("(T, B) mask", classifiers.masked_mean,
        lambda: classifiers.masked_mean(feats(), torch.ones(4, 2, dtype=torch.bool)), ValueError,
        r"mask must have shape \(2, 4\), got \(4, 2\)"),
    Bad("(B, T, 1) mask", classifiers.masked_mean,
        lambda: classifiers.masked_mean(feats(), torch.ones(2, 4, 1, dtype=torch.bool)), ValueError,
        r"mask must have shape \(2, 4\), got \(2, 4, 1\)"),

    Bad("float mask", classifiers.masked_max, lambda: classifiers.masked_max(feats(), torch.ones(2, 4)), TypeError,
        r"mask must be a bool tensor.*torch.float32"),
    Bad("mask of another length", classifiers.masked_max,
        lambda: classifiers.masked_max(feats(), torch.ones(2, 3, dtype=torch.bool)), ValueError,
        r"mask must have shape \(2, 4\), got \(2, 3\)"),
    Bad("2-D x", classifiers.masked_max, lambda: classifiers.masked_max(torch.randn(2, 4), batch()[1]), ValueError,
        r"x must have 3 dimensions"),
    Bad("a row without real positions (max would be -inf)", classifiers.masked_max,
        lambda: classifiers.masked_max(feats(), torch.tensor([[True] * 4, [False] * 4])), ValueError,
        r"mask rows \[1\] have no real position"),

    Bad("p = 1", classifiers.word_dropout, lambda: classifiers.word_dropout(batch()[1], 1.0), ValueError,
        r"p must lie in \[0, 1\), got 1.0"),
    Bad("NaN p", classifiers.word_dropout, lambda: classifiers.word_dropout(batch()[1], NAN), ValueError,
        r"p must lie in \[0, 1\), got nan"),
    Bad("p as a string", classifiers.word_dropout, lambda: classifiers.word_dropout(batch()[1], "0.3"), TypeError,
        r"p must be a number, got str"),
    Bad("float mask", classifiers.word_dropout, lambda: classifiers.word_dropout(torch.ones(2, 4), 0.3), TypeError,
        r"mask must be a bool tensor.*torch.float32"),
    Bad("1-D mask", classifiers.word_dropout,
        lambda: classifiers.word_dropout(torch.ones(4, dtype=torch.bool), 0.3), ValueError,
        r"mask must have 2 dimensions, got shape \(4,\)"),

    Bad("vocab_size 0", classifiers.BOW, lambda: classifiers.BOW(0), ValueError, r"vocab_size must be positive, got 0"),
    Bad("n_classes 0", classifiers.BOW, lambda: classifiers.BOW(10, 0), ValueError, r"n_classes must be positive"),
    Bad("pad_id = vocab_size", classifiers.BOW, lambda: classifiers.BOW(10, pad_id=10), ValueError,
        r"pad_id must lie in \[0, 10\), got 10"),
    Bad("negative pad_id", classifiers.BOW, lambda: classifiers.BOW(10, pad_id=-1), ValueError,
        r"pad_id must lie in \[0, 10\), got -1"),
    Bad("float ids", classifiers.BOW.forward, lambda: classifiers.BOW(10)(batch()[0].float(), batch()[1]), TypeError,
        r"ids must be an integer .*torch.float32"),
    Bad("id past the vocabulary", classifiers.BOW.forward, lambda: classifiers.BOW(10)(batch()[0] + 10, batch()[1]),
        ValueError, r"ids must hold ids in \[0, 10\)"),
    Bad("float mask", classifiers.BOW.forward, lambda: classifiers.BOW(10)(batch()[0], batch()[1].float()), TypeError,
        r"mask must have dtype torch.bool, got torch.float32"),
    Bad("mask shape differs", classifiers.BOW.forward,
        lambda: classifiers.BOW(10)(batch()[0], batch()[1][:, :3]), ValueError,
        r"mask must have the shape of ids \(2, 4\), got \(2, 3\)"),
    Bad("a sentence of padding only", classifiers.BOW.forward,
        lambda: classifiers.BOW(10)(batch()[0], torch.tensor([[True] * 4, [False] * 4])), ValueError,
        r"rows \[1\] are all padding"),

    Bad("unknown pooling", classifiers.CBOW, lambda: classifiers.CBOW(10, pooling="max"), ValueError,
        r"pooling must be one of \['mean', 'sum'\], got 'max'"),
    Bad("n_classes 0", classifiers.CBOW, lambda: classifiers.CBOW(10, 4, 0), ValueError,
        r"n_classes must be positive, got 0"),
    Bad("float embed_dim", classifiers.CBOW, lambda: classifiers.CBOW(10, 4.0), TypeError,
        r"embed_dim must be an int, got float"),
    Bad("1-D ids", classifiers.CBOW.forward, lambda: classifiers.CBOW(10, 4)(batch()[0][0], batch()[1][0]),
        ValueError, r"ids must have 2 dimensions, got shape \(4,\)"),

    Bad("n_layers as a bool", classifiers.DAN, lambda: classifiers.DAN(10, n_layers=True), TypeError,
        r"n_layers must be an int, got bool"),
    Bad("n_layers 0", classifiers.DAN, lambda: classifiers.DAN(10, n_layers=0), ValueError,
        r"n_layers must be positive, got 0"),
    Bad("dropout 1", classifiers.DAN, lambda: classifiers.DAN(10, dropout=1.0), ValueError,
        r"dropout must lie in \[0, 1\), got 1.0"),
    Bad("negative word dropout", classifiers.DAN, lambda: classifiers.DAN(10, word_dropout=-0.1), ValueError,
        r"word_dropout must lie in \[0, 1\), got -0.1"),
    Bad("unknown activation", classifiers.DAN, lambda: classifiers.DAN(10, activation="gelu"), ValueError,
        r"activation must be one of \['relu', 'tanh'\], got 'gelu'"),
    Bad("n_classes 0", classifiers.DAN, lambda: classifiers.DAN(10, 4, 0), ValueError,
        r"n_classes must be positive, got 0"),
    Bad("mask shape differs", classifiers.DAN.forward,
        lambda: classifiers.DAN(10, 4)(batch()[0], batch()[1].T), ValueError, r"mask must have the shape of ids"),

    Bad("no widths", classifiers.KimCNN, lambda: classifiers.KimCNN(10, widths=()), ValueError,
        r"widths must not be empty"),
    Bad("one int for widths", classifiers.KimCNN, lambda: classifiers.KimCNN(10, widths=3), TypeError,
        r"widths must be a sequence of ints, got int"),
    Bad("zero width", classifiers.KimCNN, lambda: classifiers.KimCNN(10, widths=(3, 0)), ValueError,
        r"widths must be positive, got \(3, 0\)"),
    Bad("float width", classifiers.KimCNN, lambda: classifiers.KimCNN(10, widths=(2.5,)), TypeError,
        r"widths must hold ints, got \[2.5\] \(float\)"),
    Bad("bool width", classifiers.KimCNN, lambda: classifiers.KimCNN(10, widths=(True, 3)), TypeError,
        r"widths must hold ints, got \[True\] \(bool\)"),
    Bad("n_filters 0", classifiers.KimCNN, lambda: classifiers.KimCNN(10, n_filters=0), ValueError,
        r"n_filters must be positive, got 0"),
    Bad("dropout above 1", classifiers.KimCNN, lambda: classifiers.KimCNN(10, dropout=1.5), ValueError,
        r"dropout must lie in \[0, 1\), got 1.5"),
    Bad("float mask", classifiers.KimCNN.features,
        lambda: classifiers.KimCNN(10, 4, widths=(2,), n_filters=2).features(batch()[0], batch()[1].float()),
        TypeError, r"mask must have dtype torch.bool"),
    Bad("float ids", classifiers.KimCNN.forward,
        lambda: classifiers.KimCNN(10, 4, widths=(2,), n_filters=2)(batch()[0].double(), batch()[1]), TypeError,
        r"ids must be an integer .*torch.float64"),

    Bad("a Linear layer", classifiers.init_embeddings,
        lambda: classifiers.init_embeddings(nn.Linear(3, 4), ITOS, FakeVectors(["a"], np.ones((1, 3)))), TypeError,
        r"embedding must be an nn.Embedding, got Linear"),
    Bad("itos shorter than the table", classifiers.init_embeddings,
        lambda: classifiers.init_embeddings(embedding(), ITOS[:3], FakeVectors(["a"], np.ones((1, 3)))), ValueError,
        r"itos has 3 words but the embedding has 4 rows"),
    Bad("itos as a string", classifiers.init_embeddings,
        lambda: classifiers.init_embeddings(embedding(), "abcd", FakeVectors(["a"], np.ones((1, 3)))), TypeError,
        r"itos must be a list of words, got str"),
    Bad("vectors of another dimension", classifiers.init_embeddings,
        lambda: classifiers.init_embeddings(embedding(), ITOS, FakeVectors(["a"], np.ones((1, 5)))), ValueError,
        r"pretrained vectors have dimension 5, the embedding 3; build the model with embed_dim=5"),
    Bad("a dict of vectors", classifiers.init_embeddings,
        lambda: classifiers.init_embeddings(embedding(), ITOS, {"a": np.ones(3)}), TypeError,
        r"word_vectors must have .stoi and .vectors.*got dict"),
    Bad("NaN in the pretrained vectors", classifiers.init_embeddings,
        lambda: classifiers.init_embeddings(embedding(), ITOS, FakeVectors(["a", "b"], np.array([[1, 2, 3],
                                                                                             [NAN, 0, 0]]))),
        ValueError, r"word_vectors.vectors must be finite, got 1 NaN"),
    Bad("1-D vectors", classifiers.init_embeddings,
        lambda: classifiers.init_embeddings(embedding(), ITOS, FakeVectors(["a"], np.ones(3))), ValueError,
        r"word_vectors.vectors must have 2 dimensions, got shape \(3,\)"),
    Bad("more words than vectors", classifiers.init_embeddings,
        lambda: classifiers.init_embeddings(embedding(), ITOS, FakeVectors(["a", "b", "c"], np.ones((2, 3)))),
        ValueError, r"word_vectors has 3 words but 2 vectors"),

    Bad("unknown kind", classifiers.classifier, lambda: classifiers.classifier("rnn", 10), ValueError,
        r"kind must be one of \['bow', 'cbow', 'cnn', 'dan'\], got 'rnn'"),
    Bad("an option of another model", classifiers.classifier,
        lambda: classifiers.classifier("dan", 10, widths=(3,)), TypeError, r"unexpected keyword argument 'widths'"),
    Bad("vocab_size 0", classifiers.classifier, lambda: classifiers.classifier("cbow", 0), ValueError,
        r"vocab_size must be positive, got 0"),
]


# ==============================================================================================
# coursekit.embeddings.counts
# ==============================================================================================

TINY = [["the", "cat", "sat", "on", "the", "mat"], ["the", "dog", "sat"]]
TINY_IDS = [[0, 1, 2, 3, 0, 4], [0, 5, 2]]


def tiny_vocab():
    return text.Vocab(["the", "cat", "sat", "on", "mat", "dog"])


EMBEDDINGS = [
    Bad("untokenised sentences", embeddings.build_vocab, lambda: embeddings.build_vocab(["the cat sat"]), TypeError,
        r"sentences must be a list of token lists, got a str inside it"),
    Bad("min_count 0", embeddings.build_vocab, lambda: embeddings.build_vocab(TINY, min_count=0), ValueError,
        r"min_count must be positive, got 0"),
    Bad("min_count above every count", embeddings.build_vocab, lambda: embeddings.build_vocab(TINY, min_count=10),
        ValueError, r"no word occurs 10 times or more; lower min_count"),
    Bad("max_size 0", embeddings.build_vocab, lambda: embeddings.build_vocab(TINY, min_count=1, max_size=0),
        ValueError, r"max_size must be positive, got 0"),
    Bad("ids instead of tokens", embeddings.build_vocab, lambda: embeddings.build_vocab(TINY_IDS, min_count=1),
        TypeError, r"tokens must be str, got 0 \(int\)"),

    Bad("a dict for vocab", embeddings.encode_sentences, lambda: embeddings.encode_sentences(TINY, {"the": 0}),
        TypeError, r"vocab must be a coursekit.text.Vocab, got dict"),
    Bad("one sentence as a string", embeddings.encode_sentences,
        lambda: embeddings.encode_sentences("the cat", tiny_vocab()), TypeError,
        r"sentences must be a list of token lists, got str"),

    Bad("float ids (were truncated)", embeddings.cooccurrence_matrix,
        lambda: embeddings.cooccurrence_matrix([[0.5, 1.7]], 6), TypeError,
        r"id_sentences\[0\] must hold integer word ids, got float64"),
    Bad("bool ids", embeddings.cooccurrence_matrix, lambda: embeddings.cooccurrence_matrix([[True, False]], 6),
        TypeError, r"id_sentences\[0\] must hold integer word ids, got bool"),
    Bad("id past the vocabulary", embeddings.cooccurrence_matrix, lambda: embeddings.cooccurrence_matrix([[0, 7]], 6),
        ValueError, r"word ids must lie in \[0, 6\), got values in \[0, 7\]"),
    Bad("negative id", embeddings.cooccurrence_matrix, lambda: embeddings.cooccurrence_matrix([[0, -1]], 6),
        ValueError, r"word ids must lie in \[0, 6\), got values in \[-1, 0\]"),
    Bad("unknown weighting", embeddings.cooccurrence_matrix,
        lambda: embeddings.cooccurrence_matrix(TINY_IDS, 6, weighting="gaussian"), ValueError,
        r"weighting must be one of \['uniform', 'harmonic'\], got 'gaussian'"),
    Bad("window 0", embeddings.cooccurrence_matrix, lambda: embeddings.cooccurrence_matrix(TINY_IDS, 6, window=0),
        ValueError, r"window must be positive, got 0"),
    Bad("vocab_size 0", embeddings.cooccurrence_matrix, lambda: embeddings.cooccurrence_matrix(TINY_IDS, 0),
        ValueError, r"vocab_size must be positive, got 0"),
    Bad("one flat array", embeddings.cooccurrence_matrix, lambda: embeddings.cooccurrence_matrix(np.arange(3), 6),
        TypeError, r"expected a list of id sequences \(one per sentence\), got ndarray"),

    Bad("list", embeddings.ppmi, lambda: embeddings.ppmi([[1.0, 2.0]]), TypeError,
        r"C must be a torch.Tensor or a scipy.sparse matrix, got list"),
    Bad("integer counts", embeddings.ppmi, lambda: embeddings.ppmi(torch.ones(2, 2, dtype=i64)), TypeError,
        r"C must be a floating-point tensor, got torch.int64"),
    Bad("NaN count (NaN out)", embeddings.ppmi, lambda: embeddings.ppmi(torch.tensor([[1.0, NAN], [2.0, 1.0]])),
        ValueError, r"C must be finite, got 1 NaN"),
    Bad("NaN in a sparse matrix", embeddings.ppmi,
        lambda: embeddings.ppmi(sp.csr_matrix(np.array([[1.0, NAN], [2.0, 1.0]]))), ValueError,
        r"C must be finite, got 1 NaN"),
    Bad("infinite count", embeddings.ppmi, lambda: embeddings.ppmi(torch.tensor([[1.0, float("inf")], [2.0, 1.0]])),
        ValueError, r"C must be finite, got 0 NaN and 1 infinite"),
    Bad("negative count", embeddings.ppmi, lambda: embeddings.ppmi(torch.tensor([[1.0, -1.0], [0.0, 1.0]])),
        ValueError, r"C must hold non-negative counts"),
    Bad("all zero", embeddings.ppmi, lambda: embeddings.ppmi(torch.zeros(3, 3)), ValueError,
        r"C has no co-occurrences \(all zero\)"),
    Bad("1-D counts", embeddings.ppmi, lambda: embeddings.ppmi(torch.ones(3)), ValueError,
        r"C must have 2 dimensions, got shape \(3,\)"),
    Bad("alpha 1.5", embeddings.ppmi, lambda: embeddings.ppmi(torch.ones(2, 2), alpha=1.5), ValueError,
        r"alpha must be a number in \(0, 1\], got 1.5"),
    Bad("alpha 0", embeddings.ppmi, lambda: embeddings.ppmi(torch.ones(2, 2), alpha=0), ValueError,
        r"alpha must be a number in \(0, 1\], got 0"),
    Bad("NaN alpha", embeddings.ppmi, lambda: embeddings.ppmi(torch.ones(2, 2), alpha=NAN), ValueError,
        r"alpha must be a number in \(0, 1\], got nan"),

    Bad("list", embeddings.svd_vectors, lambda: embeddings.svd_vectors([[1.0]], 1), TypeError,
        r"M must be a 2-D matrix \(tensor, array or scipy.sparse\), got list"),
    Bad("1-D array", embeddings.svd_vectors, lambda: embeddings.svd_vectors(np.ones(3), 1), ValueError,
        r"M must be a 2-D matrix, got shape \(3,\)"),
    Bad("NaN", embeddings.svd_vectors, lambda: embeddings.svd_vectors(np.array([[1.0, NAN], [0, 1], [1, 1]]), 1),
        ValueError, r"M must be finite, got 1 NaN"),
    Bad("dim too large", embeddings.svd_vectors, lambda: embeddings.svd_vectors(np.ones((4, 3)), 3), ValueError,
        r"dim=3 must be smaller than min\(M.shape\)=3"),
    Bad("dim 0", embeddings.svd_vectors, lambda: embeddings.svd_vectors(np.ones((4, 3)), 0), ValueError,
        r"dim must be positive, got 0"),
    Bad("NaN power", embeddings.svd_vectors, lambda: embeddings.svd_vectors(np.eye(4), 2, power=NAN), ValueError,
        r"power must be (an int )?≥ 0 and finite, got nan"),
]


# ==============================================================================================
# coursekit.embeddings.sgns
# ==============================================================================================

COUNTS = np.array([3, 1, 2, 1, 1, 1])


def sgns_step(center=(0, 1, 2), targets=None, lr=0.1, model=None):
    model = model if model is not None else sgns.SkipGramNS(10, 4)
    center = torch.tensor(center) if isinstance(center, tuple) else center
    targets = targets if targets is not None else torch.randint(0, 10, (len(center), 3))
    return sgns.sgns_sgd_step(model, center, targets, lr)


def tiny_sgns(**kw):
    kw = {"dim": 4, "window": 2, "epochs": 1, "sample": 0.0} | kw
    sentences = kw.pop("sentences", TINY_IDS)
    counts = kw.pop("counts", COUNTS)
    return sgns.train_sgns(sentences, counts, **kw)


SGNS = [
    Bad("negative count", sgns.keep_probabilities, lambda: sgns.keep_probabilities([-1, 2]), ValueError,
        r"counts must hold non-negative word counts, got min -1"),
    Bad("NaN count", sgns.keep_probabilities, lambda: sgns.keep_probabilities([NAN, 2.0]), ValueError,
        r"counts must be finite, got 1 NaN"),
    Bad("2-D counts", sgns.keep_probabilities, lambda: sgns.keep_probabilities(np.ones((2, 2))),
        ValueError, r"counts must be a 1-D array of word counts, got shape \(2, 2\)"),
    Bad("all zero", sgns.keep_probabilities, lambda: sgns.keep_probabilities([0, 0]), ValueError,
        r"counts must have a positive sum"),
    Bad("strings", sgns.keep_probabilities, lambda: sgns.keep_probabilities(["a", "b"]), TypeError,
        r"counts must hold numbers, got <U1"),
    Bad("NaN sample (every word dropped)", sgns.keep_probabilities,
        lambda: sgns.keep_probabilities([3, 2], sample=NAN), ValueError,
        r"sample must be (an int )?≥ 0 and finite, got nan"),
    Bad("negative sample", sgns.keep_probabilities, lambda: sgns.keep_probabilities([3, 2], sample=-1e-3),
        ValueError, r"sample must be (an int )?≥ 0 and finite, got -0.001"),

    Bad("all zero", sgns.noise_distribution, lambda: sgns.noise_distribution([0, 0]), ValueError,
        r"counts must have a positive sum"),
    Bad("NaN count", sgns.noise_distribution, lambda: sgns.noise_distribution([1.0, NAN]), ValueError,
        r"counts must be finite, got 1 NaN"),
    Bad("negative power", sgns.noise_distribution, lambda: sgns.noise_distribution([1, 2], power=-1),
        ValueError, r"power must be (an int )?≥ 0 and finite, got -1"),
    Bad("2-D counts", sgns.noise_distribution, lambda: sgns.noise_distribution(np.ones((2, 2))),
        ValueError, r"counts must be a 1-D array of word counts, got shape \(2, 2\)"),

    Bad("float ids (were truncated)", sgns.skipgram_pairs,
        lambda: sgns.skipgram_pairs([[0, 1.9, 2]], 4), TypeError,
        r"id_sentences\[0\] must hold integer word ids, got float64"),
    Bad("id past the vocabulary", sgns.skipgram_pairs, lambda: sgns.skipgram_pairs([[0, 4]], 4),
        ValueError, r"word ids must lie in \[0, 4\), got values in \[0, 4\]"),
    Bad("keep_prob of another length", sgns.skipgram_pairs,
        lambda: sgns.skipgram_pairs([[0, 1]], 4, keep_prob=np.ones(3)), ValueError,
        r"keep_prob must have shape \(4,\), got \(3,\)"),
    Bad("keep_prob above 1", sgns.skipgram_pairs,
        lambda: sgns.skipgram_pairs([[0, 1]], 4, keep_prob=np.full(4, 1.5)), ValueError,
        r"keep_prob must hold probabilities in \[0, 1\]"),
    Bad("NaN keep_prob", sgns.skipgram_pairs,
        lambda: sgns.skipgram_pairs([[0, 1]], 4, keep_prob=np.array([1, NAN, 1, 1])), ValueError,
        r"keep_prob must hold probabilities in \[0, 1\]"),
    Bad("an int for rng", sgns.skipgram_pairs, lambda: sgns.skipgram_pairs([[0, 1]], 4, rng=0), TypeError,
        r"rng must be a numpy.random.Generator \(np.random.default_rng\(seed\)\), got int"),
    Bad("window 0", sgns.skipgram_pairs, lambda: sgns.skipgram_pairs([[0, 1]], 4, window=0), ValueError,
        r"window must be positive, got 0"),
    Bad("float vocab_size", sgns.skipgram_pairs, lambda: sgns.skipgram_pairs([[0, 1]], 4.0), TypeError,
        r"vocab_size must be an int, got float"),

    Bad("integer vectors", sgns.sgns_loss,
        lambda: sgns.sgns_loss(torch.ones(2, 3, dtype=i64), torch.randn(2, 3), torch.randn(2, 4, 3)), TypeError,
        r"v_c must be a floating-point tensor, got torch.int64"),
    Bad("u_neg of another width", sgns.sgns_loss,
        lambda: sgns.sgns_loss(torch.randn(4, 3), torch.randn(4, 3), torch.randn(4, 5, 2)), ValueError,
        r"expected v_c \(B, d\), u_o \(B, d\), u_neg \(B, K, d\); got \(4, 3\), \(4, 3\), \(4, 5, 2\)"),
    Bad("2-D u_neg", sgns.sgns_loss,
        lambda: sgns.sgns_loss(torch.randn(4, 3), torch.randn(4, 3), torch.randn(4, 3)), ValueError,
        r"u_neg must have 3 dimensions"),
    Bad("NaN vector (NaN out)", sgns.sgns_loss,
        lambda: sgns.sgns_loss(torch.tensor([[NAN, 0.0]]), torch.ones(1, 2), torch.ones(1, 3, 2)), ValueError,
        r"v_c must be finite, got 1 NaN"),
    Bad("list", sgns.sgns_loss, lambda: sgns.sgns_loss([[0.0]], torch.ones(1, 1), torch.ones(1, 1, 1)),
        TypeError, r"v_c must be a torch.Tensor, got list"),

    Bad("vocab_size 0", sgns.SkipGramNS, lambda: sgns.SkipGramNS(0, 4), ValueError,
        r"vocab_size must be positive, got 0"),
    Bad("float dim", sgns.SkipGramNS, lambda: sgns.SkipGramNS(10, 4.0), TypeError,
        r"dim must be an int, got float"),
    Bad("id past the vocabulary", sgns.SkipGramNS.forward,
        lambda: sgns.SkipGramNS(10, 4)(torch.tensor([10]), torch.tensor([0]), torch.tensor([[0]])), ValueError,
        r"center must hold ids in \[0, 10\), got values in \[10, 10\]"),
    Bad("float ids", sgns.SkipGramNS.forward,
        lambda: sgns.SkipGramNS(10, 4)(torch.tensor([1.0]), torch.tensor([0]), torch.tensor([[0]])), TypeError,
        r"center must be an integer .*torch.float32"),
    Bad("1-D negatives", sgns.SkipGramNS.forward,
        lambda: sgns.SkipGramNS(10, 4)(torch.tensor([1, 2]), torch.tensor([0, 3]), torch.tensor([5, 6])),
        ValueError, r"expected center \(B,\), context \(B,\), negatives \(B, K\); got \(2,\), \(2,\), \(2,\)"),

    Bad("center id out of range", sgns.sgns_sgd_step, lambda: sgns_step(center=(0, 12, 2)), ValueError,
        r"center must hold ids in \[0, 10\), got values in \[0, 12\]"),
    Bad("target id out of range", sgns.sgns_sgd_step,
        lambda: sgns_step(targets=torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 10]])), ValueError,
        r"targets must hold ids in \[0, 10\), got values in \[1, 10\]"),
    Bad("negative center id", sgns.sgns_sgd_step, lambda: sgns_step(center=(0, -1, 2)), ValueError,
        r"center must hold ids in \[0, 10\), got values in \[-1, 2\]"),
    Bad("float targets", sgns.sgns_sgd_step, lambda: sgns_step(targets=torch.zeros(3, 3)), TypeError,
        r"targets must be an integer .*torch.float32"),
    Bad("1-D targets", sgns.sgns_sgd_step, lambda: sgns_step(targets=torch.tensor([1, 2, 3])), ValueError,
        r"targets must have 2 dimensions, got shape \(3,\)"),
    Bad("targets for another batch size", sgns.sgns_sgd_step,
        lambda: sgns_step(targets=torch.zeros(2, 3, dtype=i64)), ValueError,
        r"targets must have size 3 in dim 0 \(one row per center\), got shape \(2, 3\)"),
    Bad("2-D center", sgns.sgns_sgd_step, lambda: sgns_step(center=torch.zeros(3, 1, dtype=i64)), ValueError,
        r"center must have 1 dimensions, got shape \(3, 1\)"),
    Bad("NaN lr", sgns.sgns_sgd_step, lambda: sgns_step(lr=NAN), ValueError,
        r"lr must be positive and finite, got nan"),
    Bad("negative lr (gradient ascent)", sgns.sgns_sgd_step, lambda: sgns_step(lr=-0.1), ValueError,
        r"lr must be positive and finite, got -0.1"),
    Bad("another model", sgns.sgns_sgd_step, lambda: sgns_step(model=nn.Linear(2, 2)), TypeError,
        r"model must be a SkipGramNS, got Linear"),

    Bad("no pair in the corpus", sgns.train_sgns, lambda: tiny_sgns(sentences=[[0], [1]]), ValueError,
        r"no \(center, context\) pairs"),
    Bad("id past len(counts)", sgns.train_sgns, lambda: tiny_sgns(counts=COUNTS[:3]), ValueError,
        r"word ids must lie in \[0, 3\), got values in \[0, 5\]"),
    Bad("float ids", sgns.train_sgns, lambda: tiny_sgns(sentences=[[0.0, 1.0, 2.0]]), TypeError,
        r"id_sentences\[0\] must hold integer word ids, got float64"),
    Bad("2-D counts", sgns.train_sgns, lambda: tiny_sgns(counts=np.ones((6, 2))), ValueError,
        r"counts must be a 1-D array of word counts, got shape \(6, 2\)"),
    Bad("lr as a bool", sgns.train_sgns, lambda: tiny_sgns(lr=True), TypeError, r"lr must be a number, got bool"),
    Bad("NaN lr", sgns.train_sgns, lambda: tiny_sgns(lr=NAN), ValueError, r"lr must be positive and finite, got nan"),
    Bad("min_lr above 1", sgns.train_sgns, lambda: tiny_sgns(min_lr=2.0), ValueError,
        r"min_lr must lie in \[0, 1\], got 2.0"),
    Bad("log_every 0", sgns.train_sgns, lambda: tiny_sgns(log_every=0), ValueError,
        r"log_every must be positive, got 0"),
    Bad("dim 0", sgns.train_sgns, lambda: tiny_sgns(dim=0), ValueError, r"dim must be positive, got 0"),
    Bad("negative sample", sgns.train_sgns, lambda: tiny_sgns(sample=-1.0), ValueError,
        r"sample must be (an int )?≥ 0 and finite, got -1.0"),
    Bad("cpu_threads 0", sgns.train_sgns, lambda: tiny_sgns(cpu_threads=0), ValueError,
        r"cpu_threads must be positive, got 0"),
]


# ==============================================================================================
# coursekit.embeddings.word_vectors
# ==============================================================================================

def toy_vectors():
    itos = ["man", "woman", "king", "queen", "apple"]
    vecs = np.array([[1, 0, 0], [1, 1, 0], [1, 0, 1], [1, 1, 1], [0, 0, -1]], dtype=np.float32)
    return word_vectors.WordVectors(itos, vecs)


def saved_vectors(damage=None):
    """Save the toy vectors in a fresh folder, damage them, and load them back."""
    folder = tmp()
    toy_vectors().save(folder / "v")
    if damage is not None:
        damage(folder / "v")
    return word_vectors.WordVectors.load(folder / "v")


def cut(path: Path, n: int = 5) -> None:
    path.write_bytes(path.read_bytes()[:-n])


def vectors_under_another_name(stem: Path) -> None:
    st = stem.with_suffix(".safetensors")
    save_file({"weights": torch.zeros(5, 3)}, str(st))
    train.stamp_content_hash(st)


def vocabulary_not_json(stem: Path) -> None:
    st = stem.with_suffix(".safetensors")
    save_file({"vectors": torch.zeros(5, 3)}, str(st))      # no vocabulary hash to catch the damage first
    train.stamp_content_hash(st)
    stem.with_suffix(".vocab.json").write_text('["man", ')


WORD_VECTORS = [
    Bad("shape mismatch", word_vectors.WordVectors, lambda: word_vectors.WordVectors(["a"], np.ones((2, 3))),
        ValueError, r"vectors must have shape \(len\(itos\)=1, d\), got \(2, 3\)"),
    Bad("duplicate words", word_vectors.WordVectors, lambda: word_vectors.WordVectors(["a", "a"], np.ones((2, 3))),
        ValueError, r"itos must not contain duplicate words"),
    Bad("itos as a string", word_vectors.WordVectors, lambda: word_vectors.WordVectors("ab", np.ones((2, 3))),
        TypeError, r"itos must be a list of words, got str"),
    Bad("a non-str word", word_vectors.WordVectors, lambda: word_vectors.WordVectors(["a", 3], np.ones((2, 3))),
        TypeError, r"itos must hold str words, got 3 \(int\)"),
    Bad("NaN vectors", word_vectors.WordVectors,
        lambda: word_vectors.WordVectors(["a", "b"], np.array([[1.0, NAN], [0.0, 1.0]])), ValueError,
        r"vectors must be finite, got 1 NaN"),
    Bad("out of vocabulary", word_vectors.WordVectors.index, lambda: toy_vectors().index("green"), KeyError,
        r"'green' is out of vocabulary \(OOV\)"),
    Bad("out of vocabulary", word_vectors.WordVectors.similarity, lambda: toy_vectors().similarity("man", "green"),
        KeyError, r"'green' is out of vocabulary"),
    Bad("k 0", word_vectors.WordVectors.nearest, lambda: toy_vectors().nearest("man", 0), ValueError,
        r"k must be positive, got 0"),
    Bad("k above the candidates (excluded words came back)", word_vectors.WordVectors.nearest,
        lambda: toy_vectors().nearest("man", 5), ValueError, r"k=5 is more than the 4 candidate words"),
    Bad("query of another dimension", word_vectors.WordVectors.nearest, lambda: toy_vectors().nearest(np.ones(4)),
        ValueError, r"query vector must have 3 dimensions, got 4"),
    Bad("NaN query", word_vectors.WordVectors.nearest, lambda: toy_vectors().nearest(np.array([1.0, NAN, 0.0])),
        ValueError, r"query vector must be finite"),
    Bad("exclude as one string", word_vectors.WordVectors.nearest,
        lambda: toy_vectors().nearest("man", 1, exclude="king"), TypeError,
        r"exclude must be a list of words, got str"),
    Bad("out of vocabulary", word_vectors.WordVectors.analogy, lambda: toy_vectors().analogy("man", "woman", "prince"),
        KeyError, r"'prince' is out of vocabulary"),
    Bad("k 0", word_vectors.WordVectors.analogy, lambda: toy_vectors().analogy("man", "woman", "king", k=0),
        ValueError, r"k must be positive, got 0"),
    Bad("missing file", word_vectors.WordVectors.load, lambda: word_vectors.WordVectors.load(tmp() / "missing"),
        FileNotFoundError, r"no saved word vectors at .*missing.safetensors \(notebook 01 writes them\)"),
    Bad("truncated vectors", word_vectors.WordVectors.load,
        lambda: saved_vectors(lambda stem: cut(stem.with_suffix(".safetensors"))), ValueError,
        r"v.safetensors is truncated or damaged.*re-run the command that wrote it"),
    Bad("vocabulary of other vectors", word_vectors.WordVectors.load,
        lambda: saved_vectors(lambda stem: stem.with_suffix(".vocab.json").write_text('["a", "b"]')), ValueError,
        r"v.vocab.json does not belong to .*v.safetensors"),
    Bad("a safetensors file without vectors", word_vectors.WordVectors.load,
        lambda: saved_vectors(vectors_under_another_name), ValueError,
        r"v.safetensors holds no 'vectors' tensor: not word vectors saved by WordVectors.save"),
    Bad("vocabulary that is not JSON", word_vectors.WordVectors.load, lambda: saved_vectors(vocabulary_not_json),
        ValueError, r"v.vocab.json is not a JSON list of words"),

    Bad("a dict for wv", word_vectors.evaluate_similarity,
        lambda: word_vectors.evaluate_similarity({}, [("a", "b", 1.0)]), TypeError,
        r"wv must be a WordVectors, got dict"),
    Bad("NaN score (NaN out)", word_vectors.evaluate_similarity,
        lambda: word_vectors.evaluate_similarity(toy_vectors(), [("man", "king", NAN)] * 4), ValueError,
        r"pair 0 \('man', 'king', nan\) has a score that is not a finite number"),
    Bad("a score that is not a number", word_vectors.evaluate_similarity,
        lambda: word_vectors.evaluate_similarity(toy_vectors(), [("man", "king", "high")]), TypeError,
        r"pair 0 \('man', 'king', 'high'\) has a score that is not a finite number"),
    Bad("pairs without scores", word_vectors.evaluate_similarity,
        lambda: word_vectors.evaluate_similarity(toy_vectors(), [("man", "king")]), ValueError,
        r"pairs must yield \(word1, word2, score\), got \('man', 'king'\) at position 0"),
    Bad("no pairs", word_vectors.evaluate_similarity, lambda: word_vectors.evaluate_similarity(toy_vectors(), []),
        ValueError, r"no word pairs given"),
    Bad("fewer than 3 covered pairs: spearman is NaN, with its coverage", word_vectors.evaluate_similarity,
        lambda: word_vectors.evaluate_similarity(toy_vectors(), [("man", "king", 3.0), ("elf", "orc", 1.0)]),
        returns=lambda r: math.isnan(r["spearman"]) and r["n"] == 1 and r["coverage"] == 0.5),

    Bad("no questions", word_vectors.evaluate_analogies, lambda: word_vectors.evaluate_analogies(toy_vectors(), []),
        ValueError, r"no analogy questions given"),
    Bad("three-word questions (were silently regrouped by four)", word_vectors.evaluate_analogies,
        lambda: word_vectors.evaluate_analogies(toy_vectors(), [("man", "woman", "king")] * 4), ValueError,
        r"questions must yield \(a, b, c, d\), got \('man', 'woman', 'king'\) at position 0"),
    Bad("non-str word", word_vectors.evaluate_analogies,
        lambda: word_vectors.evaluate_analogies(toy_vectors(), [("man", "woman", "king", 3)]), TypeError,
        r"questions must hold words \(str\), got 3 \(int\) at position 0"),
    Bad("batch_size 0", word_vectors.evaluate_analogies,
        lambda: word_vectors.evaluate_analogies(toy_vectors(), [("man", "woman", "king", "queen")], batch_size=0),
        ValueError, r"batch_size must be positive, got 0"),
    Bad("a dict for wv", word_vectors.evaluate_analogies, lambda: word_vectors.evaluate_analogies({}, []), TypeError,
        r"wv must be a WordVectors, got dict"),
    Bad("no covered question: accuracy is NaN, with coverage 0", word_vectors.evaluate_analogies,
        lambda: word_vectors.evaluate_analogies(toy_vectors(), [("elf", "orc", "man", "king")]),
        returns=lambda r: math.isnan(r["accuracy"]) and r["n"] == 0 and r["coverage"] == 0.0),

    Bad("untokenised sentences", word_vectors.train_gensim_word2vec,
        lambda: word_vectors.train_gensim_word2vec(["the cat"]), TypeError, r"got a str inside it"),
    Bad("dim 0", word_vectors.train_gensim_word2vec, lambda: word_vectors.train_gensim_word2vec(TINY, dim=0),
        ValueError, r"dim must be positive, got 0"),
    Bad("min_count above every count", word_vectors.train_gensim_word2vec,
        lambda: word_vectors.train_gensim_word2vec(TINY, min_count=10), ValueError,
        r"no word occurs 10 times or more; lower min_count"),
    Bad("negative lr", word_vectors.train_gensim_word2vec,
        lambda: word_vectors.train_gensim_word2vec(TINY, min_count=1, lr=-0.1), ValueError,
        r"lr must be positive and finite, got -0.1"),
    Bad("workers 0", word_vectors.train_gensim_word2vec,
        lambda: word_vectors.train_gensim_word2vec(TINY, min_count=1, workers=0), ValueError,
        r"workers must be positive, got 0"),
]


# ==============================================================================================
# coursekit.training.loop
# ==============================================================================================

def linear_problem():
    model = nn.Linear(3, 1)
    return model, torch.optim.SGD(model.parameters(), lr=0.1)


def mse(m, b):
    return nn.functional.mse_loss(m(b[0]), b[1])


def run_fit(batches=None, loss_fn=mse, **kw):
    model, opt = kw.pop("model", None), kw.pop("optimizer", None)
    default_model, default_opt = linear_problem()
    batches = [(torch.ones(4, 3), torch.zeros(4, 1))] if batches is None else batches
    kw = {"steps": 2, "progress": False} | kw
    return train.fit(model or default_model, opt if opt is not None else default_opt, batches, loss_fn, **kw)


def history(evals=(), losses=(1.0, 0.5)):
    h = train.History(steps=list(range(1, len(losses) + 1)), train_loss=list(losses))
    h.evals = list(evals)
    return h


def sgd():
    return torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=1.0)


def saved_checkpoint(name="ck.safetensors"):
    path = tmp() / name
    return train.save_checkpoint(path, nn.Linear(3, 2), {"d": 3})


def truncated_checkpoint():
    path = saved_checkpoint()
    cut(path)
    return path


def header_cut_checkpoint():
    path = saved_checkpoint()
    path.write_bytes(path.read_bytes()[:30])
    return path


def flipped_checkpoint():
    path = saved_checkpoint()
    raw = bytearray(path.read_bytes())
    raw[-1] ^= 0x01
    path.write_bytes(bytes(raw))
    return path


def junk_file():
    path = tmp() / "junk.safetensors"
    path.write_bytes(b"not a checkpoint at all")
    return path


def empty_file():
    path = tmp() / "empty.safetensors"
    path.write_bytes(b"")
    return path


def vectors_file():
    folder = tmp()
    toy_vectors().save(folder / "v")
    return folder / "v.safetensors"


def raw_safetensors(header: dict, payload: bytes = b"") -> Path:
    """A file in the safetensors layout (8-byte header length, JSON header, tensor bytes), written by hand."""
    head = json.dumps(header).encode()
    path = tmp() / "hand.safetensors"
    path.write_bytes(len(head).to_bytes(8, "little") + head + payload)
    return path


def without_config():
    path = tmp() / "plain.safetensors"
    save_file({"weight": torch.zeros(2, 3), "bias": torch.zeros(2)}, str(path))
    return path


def config_not_json():
    path = tmp() / "badconfig.safetensors"
    save_file({"weight": torch.zeros(2, 3), "bias": torch.zeros(2)}, str(path), metadata={"config": "{d: 3"})
    return path


def unknown_dtype():
    return raw_safetensors({"__metadata__": {"config": "{\"d\": 3}"},
                            "weight": {"dtype": "Q7", "shape": [2, 3], "data_offsets": [0, 24]},
                            "bias": {"dtype": "F32", "shape": [2], "data_offsets": [24, 32]}}, bytes(32))


def model_folder(make):
    """A model directory whose model.safetensors is made by ``make()``."""
    folder = tmp()
    make().rename(folder / "model.safetensors")
    return folder


class Configured(nn.Linear):
    def __init__(self, config):
        super().__init__(config["d"], 2)
        self.config = config


def load_folder(folder, build=lambda config, extra: Configured(config)):
    return train.load_model_directory(folder, build, reproduce="make-it")


TRAIN = [
    Bad("unknown key", train.History.eval_curve, lambda: history(evals=[(1, {"mse": 0.1})]).eval_curve("acc"),
        KeyError, r"no evaluation recorded 'acc'; the evaluations hold \['mse'\]"),
    Bad("no evaluations at all", train.History.eval_curve, lambda: history().eval_curve("acc"), KeyError,
        r"no evaluation recorded 'acc'; this run has no evaluations \(pass eval_fn to fit\)"),
    Bad("window 0", train.History.smoothed_loss, lambda: history().smoothed_loss(0), ValueError,
        r"window must be positive, got 0"),
    Bad("float window", train.History.smoothed_loss, lambda: history().smoothed_loss(2.5), TypeError,
        r"window must be an int, got float"),

    Bad("negative clip (gradients flipped)", train.fit, lambda: run_fit(clip=-1.0), ValueError,
        r"clip must be positive and finite, got -1.0"),
    Bad("clip 0 (no update at all)", train.fit, lambda: run_fit(clip=0.0), ValueError,
        r"clip must be positive and finite, got 0.0"),
    Bad("NaN clip", train.fit, lambda: run_fit(clip=NAN), ValueError, r"clip must be positive and finite, got nan"),
    Bad("steps 0", train.fit, lambda: run_fit(steps=0), ValueError, r"steps must be positive, got 0"),
    Bad("negative steps", train.fit, lambda: run_fit(steps=-1), ValueError, r"steps must be positive, got -1"),
    Bad("float steps", train.fit, lambda: run_fit(steps=2.5), TypeError, r"steps must be an int, got float"),
    Bad("an empty list of batches", train.fit, lambda: run_fit(batches=[]), ValueError,
        r"batches is empty: it gave no batch to train on"),
    Bad("an exhausted iterator", train.fit, lambda: run_fit(batches=iter([])), ValueError,
        r"batches is empty: it gave no batch to train on"),
    Bad("a tensor for batches", train.fit, lambda: run_fit(batches=torch.ones(3, 3)), TypeError,
        r"batches must be an iterable of batches or a function step -> batch, got Tensor"),
    Bad("an int for batches", train.fit, lambda: run_fit(batches=5), TypeError,
        r"batches must be an iterable of batches or a function step -> batch, got int"),
    Bad("eval_every 0", train.fit, lambda: run_fit(eval_every=0, eval_fn=lambda m: {}), ValueError,
        r"eval_every must be positive, got 0"),
    Bad("float eval_every", train.fit, lambda: run_fit(eval_every=1.5, eval_fn=lambda m: {}), TypeError,
        r"eval_every must be an int, got float"),
    Bad("per-example losses", train.fit, lambda: run_fit(loss_fn=lambda m, b: (m(b[0]) - b[1]).pow(2).flatten()),
        ValueError, r"loss_fn must return a scalar tensor, got shape \(4,\)"),
    Bad("a float loss", train.fit, lambda: run_fit(loss_fn=lambda m, b: 1.0), TypeError,
        r"loss_fn must return a scalar tensor, got float"),
    Bad("loss_fn not callable", train.fit, lambda: run_fit(loss_fn="mse"), TypeError,
        r"loss_fn must be a function \(model, batch\) -> loss, got str"),
    Bad("no optimizer", train.fit, lambda: run_fit(optimizer=0), TypeError,
        r"optimizer must be a torch.optim.Optimizer, got int"),
    Bad("a function for model", train.fit, lambda: run_fit(model=lambda x: x), TypeError,
        r"model must be an nn.Module, got function"),
    Bad("eval_fn returns a number", train.fit, lambda: run_fit(eval_fn=lambda m: 0.5), TypeError,
        r"eval_fn must return a dict of numbers, got float"),
    Bad("NaN loss stops the run", train.fit,
        lambda: run_fit(loss_fn=lambda m, b: m(b[0]).sum() * NAN), FloatingPointError,
        r"loss became nan at step 1"),

    Bad("negative warmup", train.warmup_cosine, lambda: train.warmup_cosine(sgd(), -1, 10), ValueError,
        r"warmup must be (an int )?≥ 0, got -1"),
    Bad("float warmup", train.warmup_cosine, lambda: train.warmup_cosine(sgd(), 2.5, 10), TypeError,
        r"warmup must be an int, got float"),
    Bad("total 0", train.warmup_cosine, lambda: train.warmup_cosine(sgd(), 0, 0), ValueError,
        r"total must be positive, got 0"),
    Bad("min_ratio above 1", train.warmup_cosine, lambda: train.warmup_cosine(sgd(), 1, 10, min_ratio=1.5),
        ValueError, r"min_ratio must lie in \[0, 1\], got 1.5"),
    Bad("no optimizer", train.warmup_cosine, lambda: train.warmup_cosine(None, 1, 10), TypeError,
        r"optimizer must be a torch.optim.Optimizer, got NoneType"),

    Bad("a dict for model", train.save_checkpoint,
        lambda: train.save_checkpoint(tmp() / "m.safetensors", {"w": torch.zeros(1)}, {"d": 1}), TypeError,
        r"model must be an nn.Module, got dict"),
    Bad("a string for config", train.save_checkpoint,
        lambda: train.save_checkpoint(tmp() / "m.safetensors", nn.Linear(1, 1), "cfg"), TypeError,
        r"config must be a dataclass instance or a dict, got str"),
    Bad("extra not a dict", train.save_checkpoint,
        lambda: train.save_checkpoint(tmp() / "m.safetensors", nn.Linear(1, 1), {"d": 1}, extra=[1]), TypeError,
        r"extra must be a dict, got list"),
    Bad("extra that JSON cannot hold", train.save_checkpoint,
        lambda: train.save_checkpoint(tmp() / "m.safetensors", nn.Linear(1, 1), {"d": 1}, extra={"w": torch.ones(1)}),
        TypeError, r"extra must be JSON-serialisable: .*Tensor"),
    Bad("config that JSON cannot hold", train.save_checkpoint,
        lambda: train.save_checkpoint(tmp() / "m.safetensors", nn.Linear(1, 1), {"dtype": torch.float32}), TypeError,
        r"config must be JSON-serialisable: .*dtype"),

    Bad("missing file", train.stamp_content_hash, lambda: train.stamp_content_hash(tmp() / "nope.safetensors"),
        FileNotFoundError, r"no checkpoint at .*nope.safetensors"),
    Bad("metadata that is not a string", train.stamp_content_hash,
        lambda: train.stamp_content_hash(saved_checkpoint(), epoch=3), TypeError,
        r"metadata values must be str, got int for 'epoch'"),
    Bad("junk", train.stamp_content_hash,
        lambda: train.stamp_content_hash(junk_file()), ValueError,
        r"is not a safetensors file"),

    Bad("missing file", train.checkpoint_content, lambda: train.checkpoint_content(tmp() / "nope.safetensors"),
        FileNotFoundError, r"no checkpoint at .*nope.safetensors"),
    Bad("junk", train.checkpoint_content, lambda: train.checkpoint_content(junk_file()), ValueError,
        r"junk.safetensors is not a safetensors file \(or its header is damaged\); restore it or re-run"),
    Bad("empty file", train.checkpoint_content, lambda: train.checkpoint_content(empty_file()), ValueError,
        r"is not a safetensors file"),
    Bad("truncated", train.checkpoint_content, lambda: train.checkpoint_content(truncated_checkpoint()), ValueError,
        r"is truncated or damaged: its header announces .* bytes, the file has .*; restore it or re-run the "
        r"command that wrote it"),
    Bad("cut inside the header", train.checkpoint_content, lambda: train.checkpoint_content(header_cut_checkpoint()),
        ValueError, r"is not a safetensors file \(or its header is damaged\)"),
    Bad("a header without data offsets", train.checkpoint_content,
        lambda: train.checkpoint_content(raw_safetensors({"w": {"dtype": "F32", "shape": [1]}}, bytes(4))),
        ValueError, r"is not a safetensors file \(or its header is damaged\)"),
    Bad("a header entry that is not a dict", train.checkpoint_content,
        lambda: train.checkpoint_content(raw_safetensors({"w": 1})), ValueError,
        r"is not a safetensors file \(or its header is damaged\)"),

    Bad("a flipped bit", train.verify_checkpoint, lambda: train.verify_checkpoint(flipped_checkpoint()), ValueError,
        r"is corrupt: its tensors hash to .*re-run the command that made it"),
    Bad("truncated", train.verify_checkpoint, lambda: train.verify_checkpoint(truncated_checkpoint()), ValueError,
        r"is truncated or damaged"),
    Bad("missing file", train.verify_checkpoint, lambda: train.verify_checkpoint(tmp() / "nope.safetensors"),
        FileNotFoundError, r"no checkpoint at"),

    Bad("no config in the metadata", train.read_checkpoint_metadata,
        lambda: train.read_checkpoint_metadata(without_config()), ValueError,
        r"plain.safetensors is not a coursekit checkpoint: its metadata has no config.*save_checkpoint"),
    Bad("word vectors, not a model", train.read_checkpoint_metadata,
        lambda: train.read_checkpoint_metadata(vectors_file()), ValueError, r"is not a coursekit checkpoint"),
    Bad("config that is not JSON", train.read_checkpoint_metadata,
        lambda: train.read_checkpoint_metadata(config_not_json()), ValueError,
        r"badconfig.safetensors is not a coursekit checkpoint: its config is not valid JSON"),
    Bad("truncated", train.read_checkpoint_metadata,
        lambda: train.read_checkpoint_metadata(truncated_checkpoint()), ValueError, r"is truncated or damaged"),
    Bad("missing file", train.read_checkpoint_metadata,
        lambda: train.read_checkpoint_metadata(tmp() / "nope.safetensors"), FileNotFoundError, r"no checkpoint at"),

    Bad("truncated", train.load_checkpoint, lambda: train.load_checkpoint(truncated_checkpoint(), nn.Linear(3, 2)),
        ValueError, r"is truncated or damaged"),
    Bad("no config (not a coursekit checkpoint)", train.load_checkpoint,
        lambda: train.load_checkpoint(without_config(), nn.Linear(3, 2)), ValueError,
        r"is not a coursekit checkpoint: its metadata has no config"),
    Bad("a dtype safetensors does not know", train.load_checkpoint,
        lambda: train.load_checkpoint(unknown_dtype(), nn.Linear(3, 2)), ValueError,
        r"hand.safetensors could not be read as safetensors .*; restore it or re-run the command that wrote it"),
    Bad("config mismatch", train.load_checkpoint,
        lambda: train.load_checkpoint(saved_checkpoint(), nn.Linear(3, 2), expected_config={"d": 4}), ValueError,
        r"config mismatch — d: checkpoint 3 vs expected 4"),
    Bad("weights of another shape", train.load_checkpoint,
        lambda: train.load_checkpoint(saved_checkpoint(), nn.Linear(4, 2)), ValueError, r"do not fit this model"),
    Bad("weights of another model", train.load_checkpoint,
        lambda: train.load_checkpoint(saved_checkpoint(), nn.Sequential(nn.Linear(3, 2))), ValueError,
        r"weight names differ from the model's"),
    Bad("a dict for model", train.load_checkpoint, lambda: train.load_checkpoint(saved_checkpoint(), {}), TypeError,
        r"model must be an nn.Module, got dict"),
    Bad("missing file", train.load_checkpoint,
        lambda: train.load_checkpoint(tmp() / "nope.safetensors", nn.Linear(3, 2)), FileNotFoundError,
        r"no checkpoint at"),

    Bad("missing", train.load_model_directory, lambda: load_folder(tmp()), FileNotFoundError,
        r"no checkpoint at .*model.safetensors; make it with `make-it`"),
    Bad("truncated", train.load_model_directory, lambda: load_folder(model_folder(truncated_checkpoint)), ValueError,
        r"is truncated or damaged.*; make it again with `make-it`"),
    Bad("not a coursekit checkpoint", train.load_model_directory,
        lambda: load_folder(model_folder(without_config)), ValueError,
        r"is not a coursekit checkpoint.*; make it again with `make-it`"),
    Bad("build returns a model without .config", train.load_model_directory,
        lambda: load_folder(model_folder(saved_checkpoint), build=lambda config, extra: nn.Linear(3, 2)), TypeError,
        r"build\(config, extra\) must return an nn.Module with a .config, got Linear without one"),
    Bad("build returns no model", train.load_model_directory,
        lambda: load_folder(model_folder(saved_checkpoint), build=lambda config, extra: None), TypeError,
        r"build\(config, extra\) must return an nn.Module with a .config, got NoneType"),
    Bad("build is not callable", train.load_model_directory,
        lambda: load_folder(model_folder(saved_checkpoint), build="Linear"), TypeError,
        r"build must be a function \(config, extra\) -> model, got str"),

    Bad("a list for model", train.count_parameters, lambda: train.count_parameters([nn.Linear(1, 1)]), TypeError,
        r"model must be an nn.Module, got list"),

    Bad("--config with a typo", train.config_from_json, lambda: config_json('{"max_iter": 5}'), ValueError,
        r"unknown TrainConfig fields in .*config\.json: \['max_iter'\]; known fields: \[.*'max_iters'"),
    Bad("--config holding a list", train.config_from_json, lambda: config_json("[5]"), ValueError,
        r"must hold a JSON object of TrainConfig fields, got a list"),
    Bad("--config not JSON", train.config_from_json, lambda: config_json("max_iters: 5"), ValueError,
        r"config\.json is not valid JSON"),
    Bad("--config with a bad value", train.config_from_json, lambda: config_json('{"max_iters": -5}'), ValueError,
        r"max_iters"),
    Bad("the class, not an instance", train.config_from_json, lambda: config_json("{}", base=TrainConfig), TypeError,
        r"base must be a config dataclass instance, got type"),
]


def config_json(text: str, base=None):
    """config_from_json on a file holding ``text``, over char_gpt's TrainConfig (a real recipe with checks)."""
    path = tmp() / "config.json"
    path.write_text(text)
    return train.config_from_json(path, TrainConfig() if base is None else base)


# ==============================================================================================
# coursekit.training.resumable
# ==============================================================================================

def folder_run(work=None, **kw):
    """train_in_folder on a two-pair toy problem; ``kw`` overrides one argument."""
    model = nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
    args = dict(recipe={"lr": 0.1}, step_loss=lambda index, update: (model(torch.ones(len(index), 2)).pow(2).mean(),
                                                                      {"tokens": len(index)}),
                lengths=([3, 3], [3, 3]), max_tokens=100, max_updates=2, seed=0, clip=1.0, eval_every=1,
                quiet=True) | kw
    return resumable.train_in_folder(work if work is not None else tmp(), model, opt, sched, **args)


def folder_with(content: bytes | dict):
    work = tmp()
    if isinstance(content, bytes):
        (work / "checkpoint.pt").write_bytes(content)
    else:
        torch.save(content, work / "checkpoint.pt")
    return work


def steps_run(work=None, **kw):
    model = nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
    args = dict(recipe={"lr": 0.1}, step_loss=lambda step: (model(torch.ones(1, 2)).pow(2).mean(), {}), steps=2,
                generators={"batches": random.Random(0)}) | kw
    return resumable.train_steps_in_folder(work if work is not None else tmp(), model, opt, sched, **args)


RESUMABLE = [
    Bad("a list for record", resumable.append_jsonl, lambda: resumable.append_jsonl(tmp() / "log", [1, 2]),
        TypeError, r"record must be a dict, got list"),
    Bad("a tensor in the record", resumable.append_jsonl,
        lambda: resumable.append_jsonl(tmp() / "log", {"loss": torch.tensor(1.0)}), TypeError,
        r"record must be JSON-serialisable: .*Tensor"),

    Bad("a list for state", resumable.save_state_atomic, lambda: resumable.save_state_atomic(tmp() / "s.pt", [1]),
        TypeError, r"state must be a dict, got list"),
    Bad("a folder that does not exist", resumable.save_state_atomic,
        lambda: resumable.save_state_atomic(tmp() / "absent" / "s.pt", {}), FileNotFoundError,
        r"cannot write .*s.pt: the folder .*absent does not exist"),

    Bad("max_updates 0", resumable.train_in_folder, lambda: folder_run(max_updates=0), ValueError,
        r"max_updates must be positive, got 0"),
    Bad("negative clip", resumable.train_in_folder, lambda: folder_run(clip=-1.0), ValueError,
        r"clip must be positive and finite, got -1.0"),
    Bad("eval_every 0 with an evaluation", resumable.train_in_folder,
        lambda: folder_run(eval_every=0, evaluate=lambda u, s: {}), ValueError, r"eval_every must be positive, got 0"),
    Bad("checkpoint_minutes 0", resumable.train_in_folder, lambda: folder_run(checkpoint_minutes=0), ValueError,
        r"checkpoint_minutes must be positive and finite, got 0"),
    Bad("max_tokens 0", resumable.train_in_folder, lambda: folder_run(max_tokens=0), ValueError,
        r"max_tokens must be positive, got 0"),
    Bad("lengths of different sizes", resumable.train_in_folder, lambda: folder_run(lengths=([3, 3], [3])), ValueError,
        r"need as many source as target lengths"),
    Bad("a list for recipe", resumable.train_in_folder, lambda: folder_run(recipe=[1]), TypeError,
        r"recipe must be a dict, got list"),
    Bad("step_loss not callable", resumable.train_in_folder, lambda: folder_run(step_loss=None), TypeError,
        r"step_loss must be a function \(index, update\) -> \(loss, counts\), got NoneType"),
    Bad("NaN loss stops the run", resumable.train_in_folder,
        lambda: folder_run(step_loss=lambda index, update: (torch.tensor(NAN, requires_grad=True), {})),
        FloatingPointError, r"loss became nan at update 1"),
    Bad("a damaged checkpoint.pt", resumable.train_in_folder,
        lambda: folder_run(folder_with(b"half a checkpoint"), resume=True), ValueError,
        r"checkpoint.pt is truncated or not a checkpoint of this training loop.*remove it"),
    Bad("a checkpoint of another loop", resumable.train_in_folder,
        lambda: folder_run(folder_with({"model": {}}), resume=True), ValueError,
        r"checkpoint.pt is not a checkpoint of this training loop: it lacks"),
    Bad("a checkpoint without --resume", resumable.train_in_folder, lambda: folder_run(folder_with({}), resume=False),
        FileExistsError, r"checkpoint.pt exists: pass resume=True \(--resume\) to continue it, or remove it"),

    Bad("steps 0", resumable.train_steps_in_folder, lambda: steps_run(steps=0), ValueError,
        r"steps must be positive, got 0"),
    Bad("float steps", resumable.train_steps_in_folder, lambda: steps_run(steps=2.0), TypeError,
        r"steps must be an int, got float"),
    Bad("negative clip", resumable.train_steps_in_folder, lambda: steps_run(clip=-1.0), ValueError,
        r"clip must be positive and finite, got -1.0"),
    Bad("NaN clip", resumable.train_steps_in_folder, lambda: steps_run(clip=NAN), ValueError,
        r"clip must be positive and finite, got nan"),
    Bad("negative eval_every", resumable.train_steps_in_folder, lambda: steps_run(eval_every=-1), ValueError,
        r"eval_every must be (an int )?≥ 0, got -1"),
    Bad("checkpoint_minutes 0", resumable.train_steps_in_folder, lambda: steps_run(checkpoint_minutes=0), ValueError,
        r"checkpoint_minutes must be positive and finite, got 0"),
    Bad("stop_at 0", resumable.train_steps_in_folder, lambda: steps_run(stop_at=0), ValueError,
        r"stop_at must be positive, got 0"),
    Bad("a seed instead of a generator", resumable.train_steps_in_folder,
        lambda: steps_run(generators={"batches": 0}), TypeError,
        r"generator 'batches' must be a random.Random or torch.Generator, got int"),
    Bad("step_loss not callable", resumable.train_steps_in_folder, lambda: steps_run(step_loss=None), TypeError,
        r"step_loss must be a function step -> \(loss, parts\), got NoneType"),
    Bad("NaN loss stops the run", resumable.train_steps_in_folder,
        lambda: steps_run(step_loss=lambda step: (torch.tensor(NAN, requires_grad=True), {})), FloatingPointError,
        r"loss became nan at step 1"),
    Bad("a damaged checkpoint.pt", resumable.train_steps_in_folder,
        lambda: steps_run(folder_with(b"\x80\x02 half"), resume=True), ValueError,
        r"checkpoint.pt is truncated or not a checkpoint of this training loop"),
    Bad("a checkpoint of another loop", resumable.train_steps_in_folder,
        lambda: steps_run(folder_with({"recipe": {"lr": 0.1}, "model": {}}), resume=True), ValueError,
        r"checkpoint.pt is not a checkpoint of this training loop: it lacks"),
    Bad("a checkpoint of another recipe", resumable.train_steps_in_folder,
        lambda: steps_run(folder_with({k: {} for k in ("model", "optimizer", "scheduler", "state", "generators",
                                                         "rng")} | {"recipe": {"lr": 1.0}}), resume=True),
        ValueError, r"was written by another recipe: \{'lr': 1.0\} \(now \{'lr': 0.1\}\)"),
]


# ==============================================================================================
# coursekit.runtime
# ==============================================================================================

def knobs():
    return runtime.sizes(quick={"n": 1}, class_={"n": 2}, full={"n": 3}, profile_name="quick")


RUNTIME = [
    Bad("unknown profile in the environment", runtime.profile,
        lambda: with_env(runtime.profile, COURSEKIT_PROFILE="fast"), ValueError,
        r"COURSEKIT_PROFILE='fast' is not a profile; expected one of quick, class, full"),

    Bad("a profile without a knob", runtime.sizes,
        lambda: runtime.sizes(quick=dict(n=1), class_=dict(n=2, width=3), full=dict(n=3, width=4)), ValueError,
        r"every profile must define the same knobs; missing: \{'quick': \['width'\]\}"),
    Bad("a list of knobs", runtime.sizes, lambda: runtime.sizes(quick=[1], class_={}, full={}), TypeError,
        r"quick must be a dict of knobs, got list"),
    Bad("unknown profile name", runtime.sizes,
        lambda: runtime.sizes(quick={}, class_={}, full={}, profile_name="huge"), ValueError,
        r"profile 'huge' is not one of \('quick', 'class', 'full'\)"),
    Bad("unknown knob (attribute)", runtime.Sizes.__getattr__, lambda: knobs().steps, AttributeError,
        r"no size knob 'steps'; this notebook defines \['n'\]"),
    Bad("unknown knob (item)", runtime.Sizes.__getitem__, lambda: knobs()["steps"], KeyError,
        r"no size knob 'steps'; this notebook defines \['n'\]"),

    Bad("unknown device", runtime.device, lambda: runtime.device("tpu"), ValueError,
        r"device 'tpu': expected cpu, cuda\[:N\] or mps"),
    Bad("malformed device", runtime.device, lambda: runtime.device("cuda:x"), ValueError,
        r"device 'cuda:x': expected cpu, cuda\[:N\] or mps"),
    Bad("a GPU that is not there", runtime.device, lambda: runtime.device("cuda:99"), ValueError,
        r"device 'cuda:99' requested but (CUDA is not available here|this machine has \d+ CUDA device)"),
    Bad("an int (was read as 'no override')", runtime.device, lambda: runtime.device(0), TypeError,
        r"override must be a device name such as 'cpu' or 'cuda:0', got int"),

    Bad("float seed", runtime.seed_everything, lambda: runtime.seed_everything(1.5), TypeError,
        r"seed must be an int, got float"),
    Bad("bool seed", runtime.seed_everything, lambda: runtime.seed_everything(True), TypeError,
        r"seed must be an int, got bool"),
    Bad("seed beyond 64 bits", runtime.seed_everything, lambda: runtime.seed_everything(2**70), ValueError,
        r"seed must lie in \[-2\*\*63, 2\*\*64\), got 1180591620717411303424"),

    Bad("unknown device", runtime.synchronize, lambda: runtime.synchronize("gpu"), ValueError,
        r"device 'gpu': expected cpu, cuda\[:N\] or mps"),
    Bad("a GPU that is not there", runtime.synchronize, lambda: runtime.synchronize("cuda:99"), ValueError,
        r"device 'cuda:99' requested but"),

    Bad("repeat 0", runtime.timed, lambda: runtime.timed(lambda: None, "cpu", repeat=0), ValueError,
        r"repeat must be positive, got 0"),
    Bad("repeat as a bool", runtime.timed, lambda: runtime.timed(lambda: None, "cpu", repeat=True), TypeError,
        r"repeat must be an int, got bool"),
    Bad("negative warmup", runtime.timed, lambda: runtime.timed(lambda: None, "cpu", warmup=-1), ValueError,
        r"warmup must be (an int )?≥ 0, got -1"),
    Bad("not a function", runtime.timed, lambda: runtime.timed(3, "cpu"), TypeError,
        r"fn must be a function of no arguments, got int"),
    Bad("unknown device", runtime.timed, lambda: runtime.timed(lambda: None, "gpu"), ValueError,
        r"device 'gpu': expected cpu, cuda\[:N\] or mps"),
]


# ==============================================================================================
# coursekit.viz.plots and coursekit.viz.widgets
# ==============================================================================================

VIZ = [
    Bad("a list of pairs", viz.plot_curves, lambda: viz.plot_curves([([1, 2], [3, 4])]), TypeError,
        r"curves must be a dict name -> \(xs, ys\), got list"),
    Bad("no curve", viz.plot_curves, lambda: viz.plot_curves({}), ValueError, r"curves must not be empty"),
    Bad("ys alone", viz.plot_curves, lambda: viz.plot_curves({"loss": np.arange(5.0)}), TypeError,
        r"curve 'loss' must be an \(xs, ys\) pair, got ndarray"),
    Bad("xs and ys of different lengths", viz.plot_curves, lambda: viz.plot_curves({"bad": ([1, 2, 3], [1, 2])}),
        ValueError, r"curve 'bad': 3 x values but 2 y values"),

    Bad("3-D matrix", viz.heatmap, lambda: viz.heatmap(torch.rand(2, 3, 4)), ValueError,
        r"heatmap needs a 2-D matrix, got shape \(2, 3, 4\)"),
    Bad("labels of another count", viz.heatmap, lambda: viz.heatmap(torch.rand(2, 3), xlabels=["a", "b"]),
        ValueError, r"xlabels has 2 labels for 3 columns"),
    Bad("labels as one string", viz.heatmap, lambda: viz.heatmap(torch.rand(2, 3), xlabels="abc"), TypeError,
        r"xlabels must be a list of labels, got str"),
    Bad("empty matrix", viz.heatmap, lambda: viz.heatmap(np.zeros((0, 3))), ValueError,
        r"heatmap needs a non-empty matrix, got shape \(0, 3\)"),
    Bad("strings", viz.heatmap, lambda: viz.heatmap([["a", "b"]]), TypeError,
        r"heatmap needs a matrix of numbers, got <U1"),

    Bad("one dict instead of a list", viz.show_table, lambda: viz.show_table({"a": 1}), TypeError,
        r"rows must be a list of dicts \(one per row\), got dict"),
    Bad("lists instead of dicts", viz.show_table, lambda: viz.show_table([[1, 2]]), TypeError,
        r"rows must hold dicts \(column -> value\), got list"),
    Bad("printf-style floatfmt", viz.show_table, lambda: viz.show_table([{"a": 1.0}], floatfmt="%.3f"), ValueError,
        r"floatfmt must be a format string such as '\{:.3f\}', got '%.3f'"),
]

WIDGETS = [
    Bad("no static example", widgets.explorer, lambda: widgets.explorer(lambda word: None, [], word="x"), ValueError,
        r"explorer needs at least one static example"),
    Bad("an example with an unknown argument", widgets.explorer,
        lambda: widgets.explorer(lambda word: None, [{"wrod": "x"}], word="x"), ValueError,
        r"uses arguments \['wrod'\] that are not controls \(\['word'\]\)"),
    Bad("render not callable", widgets.explorer, lambda: widgets.explorer("show", [{"word": "x"}], word="x"),
        TypeError, r"render must be a function, got str"),
    Bad("one dict instead of a list", widgets.explorer,
        lambda: widgets.explorer(lambda word: None, {"word": "x"}, word="x"), TypeError,
        r"static_examples must be a list of dicts, got dict"),
    Bad("examples that are not dicts", widgets.explorer,
        lambda: widgets.explorer(lambda word: None, ["x"], word="x"), TypeError,
        r"each static example must be a dict of keyword arguments, got str"),
]


# ==============================================================================================
# coursekit.data
# ==============================================================================================

def damaged_mirror(corpus_name: str, filename: str, call):
    """Run ``call()`` with a mirror whose copy of ``corpus_name/filename`` is damaged (and an empty cache)."""
    mirror, cache = tmp(), tmp()
    (mirror / corpus_name).mkdir()
    (mirror / corpus_name / filename).write_bytes(b"not the real file\n")
    return with_env(call, COURSEKIT_DATA_MIRROR=str(mirror), COURSEKIT_CACHE=str(cache))


def offline(call):
    """Run ``call()`` with an empty mirror and an empty cache."""
    return with_env(call, COURSEKIT_DATA_MIRROR=str(tmp()), COURSEKIT_CACHE=str(tmp()))


def file_with(content: bytes) -> Path:
    path = tmp() / "input.txt"
    path.write_bytes(content)
    return path


def imdb_archive_with_a_gap():
    """A tar archive laid out like aclImdb's, whose unsup folder lacks review 1 (ids 0 and 2)."""
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for name in ("aclImdb/train/unsup/0_0.txt", "aclImdb/train/unsup/2_0.txt"):
            info = tarfile.TarInfo(name)
            info.size = 1
            tf.addfile(info, io.BytesIO(b"a"))
    buf.seek(0)
    return tarfile.open(fileobj=buf)


DATA = [
    Bad("a list of reviews", data.clean_review, lambda: data.clean_review(["a <br /> b"]), TypeError,
        r"text must be a str, got list"),
    Bad("an unknown split", data.load_imdb, lambda: data.load_imdb("validation"), ValueError,
        r"split must be one of \['train', 'test', 'unsup'\], got 'validation'"),
    Bad("review ids with a gap", data_store.build_imdb_file,
        lambda: data_store.build_imdb_file(imdb_archive_with_a_gap(), "aclImdb/train/unsup"), data.DataNotFoundError,
        r"aclImdb/train/unsup: expected review files with ids 0..n-1, found 2 files"),
    Bad("empty name", data.model_dir, lambda: data.model_dir(""), ValueError,
        r"name must be the name of a folder under data/, e.g. 'gpt', got ''"),
    Bad("a path outside data/", data.model_dir, lambda: data.model_dir("../etc"), ValueError,
        r"name must be the name of a folder under data/.*got '../etc'"),
    Bad("not a string", data.model_dir, lambda: data.model_dir(3), ValueError,
        r"name must be the name of a folder under data/.*got 3"),

    Bad("unknown corpus", data.corpus, lambda: data.corpus("imagenet"), data.UnknownCorpusError,
        r"^unknown corpus 'imagenet'; known corpora: imdb, rt-polarity, sst2"),
    Bad("a typo of a known corpus", data.corpus, lambda: data.corpus("sst-2"), data.UnknownCorpusError,
        r"^unknown corpus 'sst-2'; did you mean 'sst2'\? known corpora: imdb, rt-polarity, sst2, tatoeba-eng-fra"),
    Bad("not a string", data.corpus, lambda: data.corpus(["sst2"]), KeyError,
        r"unknown corpus \['sst2'\]; known corpora"),
    Bad("unknown file", data.Corpus.file, lambda: data.corpus("sst2").file("train.csv"), KeyError,
        r"corpus 'sst2' has no file 'train.csv'; it has \['train.tsv', 'dev.tsv', 'test.tsv'\]"),

    Bad("a str", data.sha256_bytes, lambda: data.sha256_bytes("text"), TypeError,
        r"data must be bytes, got str \(encode it first\)"),
    Bad("missing file", data.sha256_file, lambda: data.sha256_file(tmp() / "absent.txt"), FileNotFoundError,
        r"no file at .*absent.txt"),
    Bad("a folder", data.sha256_file, lambda: data.sha256_file(tmp()), FileNotFoundError, r"no file at"),

    Bad("unknown corpus", data.path, lambda: data.path("imagenet", "x"), KeyError, r"unknown corpus 'imagenet'"),
    Bad("unknown file", data.path, lambda: data.path("sst2", "train.csv"), KeyError,
        r"corpus 'sst2' has no file 'train.csv'"),
    Bad("damaged mirror copy", data.path,
        lambda: damaged_mirror("tinyshakespeare", "input.txt", lambda: data.path("tinyshakespeare", "input.txt")),
        data.DataHashError, r"tinyshakespeare: .*input.txt has sha256 .*, expected .*it was not used"),
    Bad("missing offline", data.path,
        lambda: offline(lambda: data.path("tinyshakespeare", "input.txt", download=False)), data.DataNotFoundError,
        r"corpus 'tinyshakespeare': input.txt not found. Searched: .*python -m coursekit.data fetch tinyshakespeare"),

    Bad("unknown corpus", data.open_text, lambda: data.open_text("imagenet", "x"), KeyError, r"unknown corpus"),
    Bad("damaged mirror copy", data.open_text,
        lambda: damaged_mirror("tinyshakespeare", "input.txt", lambda: data.open_text("tinyshakespeare", "input.txt")),
        data.DataHashError, r"has sha256 .*it was not used"),

    Bad("several files and no filename", data.read_text, lambda: data.read_text("sst2"), ValueError,
        r"corpus 'sst2' has several files \['train.tsv', 'dev.tsv', 'test.tsv'\]; name one"),
    Bad("unknown corpus", data.read_text, lambda: data.read_text("imagenet"), KeyError, r"unknown corpus"),
    Bad("damaged mirror copy", data.read_text,
        lambda: damaged_mirror("tinyshakespeare", "input.txt", lambda: data.read_text("tinyshakespeare")),
        data.DataHashError, r"has sha256 .*it was not used"),

    Bad("unknown release", data.load_tatoeba, lambda: data.load_tatoeba("wmt"), ValueError,
        r"release must be one of \['d2l', 'pytorch'\], got 'wmt'"),
    Bad("damaged mirror copy", data.load_tatoeba,
        lambda: damaged_mirror("tatoeba-eng-fra", "fra.txt", data.load_tatoeba), data.DataHashError,
        r"tatoeba-eng-fra: .*fra.txt has sha256"),
    Bad("damaged mirror copy", data.load_sst2, lambda: damaged_mirror("sst2", "train.tsv", data.load_sst2),
        data.DataHashError, r"sst2: .*train.tsv has sha256"),
    Bad("damaged mirror copy", data.load_rt_polarity,
        lambda: damaged_mirror("rt-polarity", "rt-polarity.neg", data.load_rt_polarity), data.DataHashError,
        r"rt-polarity: .*rt-polarity.neg has sha256"),
    Bad("unknown kind", data.load_wikitext2, lambda: data.load_wikitext2("bpe"), ValueError,
        r"kind must be one of \['tokens', 'raw'\], got 'bpe'"),
    Bad("damaged mirror copy", data.load_wikitext2,
        lambda: damaged_mirror("wikitext-2", "wiki.valid.tokens", data.load_wikitext2), data.DataHashError,
        r"wikitext-2: .*wiki.valid.tokens has sha256"),
    Bad("damaged mirror copy", data.load_analogies,
        lambda: damaged_mirror("word-embedding-eval", "questions-words.txt", data.load_analogies), data.DataHashError,
        r"word-embedding-eval: .*questions-words.txt has sha256"),
    Bad("damaged mirror copy", data.load_wordsim353,
        lambda: damaged_mirror("word-embedding-eval", "wordsim353.tsv", data.load_wordsim353), data.DataHashError,
        r"word-embedding-eval: .*wordsim353.tsv has sha256"),

    Bad("unknown corpus", data.status, lambda: data.status("imagenet"), KeyError, r"unknown corpus 'imagenet'"),

    Bad("a file of other content", data_store.copy_to_cache,
        lambda: offline(lambda: data_store.copy_to_cache("tinyshakespeare", "input.txt", file_with(b"hello"))),
        data.DataHashError, r"input.txt has sha256 .*, expected .*it was not used"),
    Bad("missing source", data_store.copy_to_cache,
        lambda: offline(lambda: data_store.copy_to_cache("tinyshakespeare", "input.txt", tmp() / "absent.txt")),
        FileNotFoundError, r"no file at .*absent.txt"),
    Bad("unknown file", data_store.copy_to_cache,
        lambda: data_store.copy_to_cache("tinyshakespeare", "output.txt", file_with(b"hello")), KeyError,
        r"corpus 'tinyshakespeare' has no file 'output.txt'"),
]


ROWS = register(CHECKS + TEXT + METRICS + CLASSIFIERS + EMBEDDINGS + SGNS + WORD_VECTORS + TRAIN + RESUMABLE
                + RUNTIME + VIZ + WIDGETS + DATA)


@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_bad_call(row):
    check_bad_call(row)

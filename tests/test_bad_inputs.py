"""Bad calls to the top-level modules — the validators themselves (coursekit.validation), coursekit.text,
coursekit.metrics and coursekit.runtime: each must give a clear error.

One row per thing that can go wrong (see ``tests/helpers/bad_inputs.py``): the error type, a regex its
message must match (the argument's name, what was expected, what arrived), raised by coursekit itself.
"""

from __future__ import annotations

import numpy as np
import torch
from helpers.bad_inputs import NAN, Bad, bad_call_test, i64, with_env

from coursekit import metrics, runtime, text
from coursekit import validation as checks

EXEMPT = {
    "coursekit.runtime.oversubscribed": "takes no arguments: it reads the load average",
    "coursekit.runtime.use_one_thread_if_busy": "takes no arguments: it reads the load average and OMP_NUM_THREADS",
    "coursekit.runtime.environment_report": "takes no arguments; a bad $COURSEKIT_PROFILE is profile()'s row",
    "coursekit.runtime.tf32_settings": "takes no arguments: it reads torch's TF32 switches",
    "coursekit.runtime.exact_matmul": "a context manager without arguments",
}


# ==============================================================================================
# coursekit.validation — the validators must reject what they promise
# ==============================================================================================

CHECKS = [
    Bad("a long value is cut, not pasted whole into the message", checks.received, lambda: checks.received("x" * 500),
        returns=lambda shown: shown.startswith("str 'xxx") and shown.endswith("...") and len(shown) < 70),
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

    Bad("nothing to score", metrics.accuracy, lambda: metrics.accuracy([], []), ValueError,
        r"accuracy of an empty set is undefined: pred and target hold no entries"),
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

    Bad("no docstring", runtime.run_subcommand, lambda: runtime.run_subcommand(None, {"a": print}, ["a"]), TypeError,
        r"doc must be a str \(the command line's docstring\), got NoneType"),
    Bad("a list of commands", runtime.run_subcommand, lambda: runtime.run_subcommand("doc", [("a", print)], ["a"]),
        TypeError, r"commands must be a dict of command name -> function, got list"),
    Bad("a command that is no function", runtime.run_subcommand,
        lambda: runtime.run_subcommand("doc", {"a": "print"}, ["a"]), TypeError,
        r"commands\['a'\] must be a function under a str name, got str"),
    Bad("argv as one string", runtime.run_subcommand, lambda: runtime.run_subcommand("doc", {"a": print}, "a"),
        TypeError, r"argv must be a list of strings \(or None for sys.argv\[1:\]\), got str"),
]


ROWS = CHECKS + TEXT + METRICS + RUNTIME

test_bad_call = bad_call_test(ROWS)

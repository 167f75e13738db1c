"""Bad calls to coursekit.translation (the EN→FR task: core, subword, scoring, benchmark, recipes,
throughput, explore): each must give a clear error.

One row per thing that can go wrong (see ``tests/helpers/bad_inputs.py``): the error type, a regex its
message must match (the argument's name, what was expected, what arrived), raised by coursekit itself.
Every model here is tiny; tokenizers and checkpoints are written in a temporary folder.
"""

from __future__ import annotations

import functools
from pathlib import Path

import torch
from helpers.bad_inputs import NAN, Bad, bad_call_test, gen, i64, text_file, tmp
from torch import nn

from coursekit import text
from coursekit.text import Vocab
from coursekit.transformer.model import Transformer, TransformerConfig
from coursekit.translation import benchmark, posttrain, recipes, register, subword, throughput
from coursekit.translation import core as tr
from coursekit.translation import explore as tr_inspect
from coursekit.translation import scoring as tr_scoring

EXEMPT = {
    "coursekit.translation.register.RegisterCount": "four counts filled by vous_rate; no input of its own",
    "coursekit.translation.core.TranslationBatch": "a plain container of tensors built by TranslationData.make_batch; "
                                                   "the models check what they read from it",
    "coursekit.translation.explore.Attended": "a plain result container filled by translate_with_attention",
    "coursekit.translation.register.YouPairs": "three lists filled by you_pairs; no input of its own",
}


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


def banded_data(**kw):
    """tiny_data as load_benchmark labels it: both test pairs are the short band."""
    return tiny_data(info={"benchmark": {"tokenizer_sha256": "0"}, "bands": {"test_short": 2, "test_long": 0}}, **kw)


def report_of(data):
    """A BleuReport of the data's whole test split (hypotheses = references)."""
    refs = [" ".join(f) for _, f in data.test]
    return tr_scoring.BleuReport(bleu=100.0, by_length=[], sources=[" ".join(e) for e, _ in data.test],
                                 hypotheses=refs, references=refs)


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
    Bad("more training pairs than the pool holds (not silently all of them)", tr.load_translation,
        lambda: tr.load_translation(max_len=2, n_train=100), ValueError,
        r"n_train=100 but the training pool has 35 pairs of at most max_len=2 tokens \(release 'd2l'\)"),
    Bad("more test pairs than the held-out pool holds (not silently fewer)", tr.load_translation,
        lambda: tr.load_translation(max_len=2, n_test=1), ValueError,
        r"n_test=1 but the held-out pool has 0 pairs of at most short_len=2 tokens \(test_per_mille=50\)"),
    Bad("a list for the release (cached by name, so checked before the cache)", tr.load_translation,
        lambda: tr.load_translation(release=["d2l"]), TypeError,
        r"release must be a str \('d2l' or 'pytorch'\), got list"),

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
        r"the benchmark's short test set has 1000 sentences, n_test=2000 asked"),
    Bad("more long test sentences than the benchmark", benchmark.load_benchmark,
        lambda: benchmark.load_benchmark(n_test_long=900, tokenizer=toy_bpe()), ValueError,
        r"the benchmark's long test set has 800 sentences, n_test_long=900 asked"),
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
        r"the benchmark's short validation set has 500 sentences, n_valid=600 asked"),
    Bad("a path for the tokenizer", benchmark.load_short_benchmark,
        lambda: benchmark.load_short_benchmark(tokenizer="tok.json"), TypeError,
        r"tokenizer must be a SubwordVocab or None, got str"),
    Bad("a float for the short benchmark's training pairs", benchmark.load_short_benchmark,
        lambda: benchmark.load_short_benchmark(n_train=100.0), TypeError, r"n_train must be an int, got float"),
    Bad("more training pairs than the short benchmark has", benchmark.load_short_benchmark,
        lambda: benchmark.load_short_benchmark(n_train=10**6), ValueError,
        r"n_train=1000000 but the training pool has 133694 pairs of at most max_len=10 tokens"),
    Bad("a dict for the report", benchmark.benchmark_figures, lambda: benchmark.benchmark_figures({}, banded_data()),
        TypeError, r"report must be a BleuReport, got dict"),
    Bad("data without the benchmark's bands", benchmark.benchmark_figures,
        lambda: benchmark.benchmark_figures(report_of(tiny_data()), tiny_data()), ValueError,
        r"data has no test bands \(data.info\['bands'\]\): load it with load_benchmark"),
    Bad("a report of other sentences", benchmark.benchmark_figures,
        lambda: benchmark.benchmark_figures(report_of(tiny_data(test=list(PAIRS[1:]))), banded_data()), ValueError,
        r"report must score data's whole test split in order \(2 pairs\); sentence 0 differs"),
    Bad("a list of pairs for the data", benchmark.short_view, lambda: benchmark.short_view(list(PAIRS)), TypeError,
        r"data must be a TranslationData \(from load_benchmark\), got list"),
    Bad("a zero test size", benchmark.short_view, lambda: benchmark.short_view(tiny_data(), n_test=0), ValueError,
        r"n_test must be"),
    Bad("more test pairs than the data has", benchmark.short_view, lambda: benchmark.short_view(tiny_data(), n_test=3),
        ValueError, r"n_test must be at most the 2 test pairs of data, got 3"),
    Bad("a number for the data", benchmark.check_banded, lambda: benchmark.check_banded(5), TypeError,
        r"data must be a TranslationData from load_benchmark, got int"),
    Bad("data without the benchmark's bands", benchmark.check_banded, lambda: benchmark.check_banded(tiny_data()),
        ValueError, r"data has no test bands \(data.info\['bands'\]\): load it with load_benchmark"),
    Bad("a number for the data", recipes.subset_indices, lambda: recipes.subset_indices(5), TypeError,
        r"data must be a TranslationData from load_benchmark, got int"),
    Bad("data without the benchmark's bands", recipes.subset_indices, lambda: recipes.subset_indices(tiny_data()),
        ValueError, r"data has no test bands \(data.info\['bands'\]\): load it with load_benchmark"),
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
    Bad("a negative cool-down", recipes.Recipe, lambda: recipe(cooldown=-1), ValueError,
        r"cooldown must be an int ≥ 0, got -1"),
    Bad("a cool-down that eats the warm-up", recipes.Recipe,
        lambda: recipe(warmup=400, max_updates=1000, cooldown=700), ValueError,
        r"cooldown must leave the warm-up whole: at most max_updates - warmup = 600 updates, got 700"),
    Bad("a recipe's name for the recipe", recipes.lr_factor, lambda: recipes.lr_factor("transformer"), TypeError,
        r"recipe must be a Recipe, got str"),
    Bad("a cool-down recipe run past its end", recipes.train,
        lambda: recipes.train("transformer", tmp(), recipe=recipe(warmup=2, max_updates=10, cooldown=4),
                              max_updates=12, data=tiny_data()), ValueError,
        r"max_updates can only stop a recipe with a cool-down early: at most 10, got 12"),
    Bad("unknown recipe", recipes.start_from_model,
        lambda: recipes.start_from_model("rnn", tmp(), tmp(), data=tiny_data()), ValueError,
        r"name must be one of \['seq2seq', 'attention', 'transformer'\], got 'rnn'"),
    Bad("a number for the data", recipes.start_from_model,
        lambda: recipes.start_from_model("transformer", tmp(), tmp(), data=5), TypeError,
        r"data must be a TranslationData, got int"),
    Bad("a dict for the recipe", recipes.start_from_model,
        lambda: recipes.start_from_model("transformer", tmp(), tmp(), data=tiny_data(), recipe={}), TypeError,
        r"recipe must be a Recipe or None, got dict"),
    Bad("a number for the model folder", recipes.start_from_model,
        lambda: recipes.start_from_model("transformer", 3, tmp(), data=tiny_data()), TypeError,
        r"directory must be a folder path \(str or Path\), got int"),
    Bad("a folder without a model", recipes.start_from_model,
        lambda: recipes.start_from_model("transformer", tmp(), tmp(), data=tiny_data()), FileNotFoundError,
        r"no report at .*report.json; make the model with"),
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
                               banded_data()), ValueError,
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


REGISTER = [
    Bad("a list for one sentence", register.register_of, lambda: register.register_of(["Tu es là."]), TypeError,
        r"french must be a str \(one sentence\), got list"),
    Bad("one sentence for the list", register.vous_rate, lambda: register.vous_rate("Vous êtes là."), TypeError,
        r"translations must be a list of French sentences, got str"),
    Bad("no sentences: a rate of nothing is NaN, and the counts say so", register.vous_rate,
        lambda: register.vous_rate([]), returns=lambda c: c.vous == c.tu == 0 and c.rate != c.rate),

    Bad("a sentence string for its tokens", register.addresses_you, lambda: register.addresses_you("you lost ."),
        TypeError, r"english must be a list of word tokens \(split_tokens gives them\), got str"),
    Bad("a register that does not exist", register.tag_source, lambda: register.tag_source(["you"], "polite"),
        ValueError, r"register must be one of \['formal', 'informal'\], got 'polite'"),
    Bad("tokens that are not strings", register.tag_source, lambda: register.tag_source([1, 2], "formal"),
        TypeError, r"english must be a list of word tokens"),
    Bad("one pair for the list", register.you_pairs, lambda: register.you_pairs((["you"], ["vous"])), TypeError,
        r"pairs must hold \(english_tokens, french_tokens\) pairs, got list"),
    Bad("a string for the pairs", register.you_pairs, lambda: register.you_pairs("you"), TypeError,
        r"pairs must be a list of \(english_tokens, french_tokens\), got str"),
]


@functools.cache
def bpe():
    return benchmark.load_tokenizer()


@functools.cache
def bpe_transformer():
    torch.manual_seed(0)
    n = len(bpe().itos)
    return Transformer(TransformerConfig(n, n, d_model=8, n_heads=2, n_encoder_layers=1, n_decoder_layers=1,
                                         d_ff=16, max_len=64, share_embeddings=True)).eval()


def you_batch(french=("vous", "avez", "perdu", ".")):
    return posttrain.pairs_data([(["you", "lost", "."], list(french))], bpe()).make_batch([0])


POSTTRAIN = [
    Bad("a word vocabulary for the BPE", posttrain.pairs_data,
        lambda: posttrain.pairs_data(PAIRS, tiny_data().src_vocab), TypeError,
        r"tokenizer must be the benchmark's SubwordVocab \(load_tokenizer\(\)\), got Vocab"),
    Bad("a string for the pairs", posttrain.pairs_data, lambda: posttrain.pairs_data("you lost", bpe()), TypeError,
        r"pairs must be a list of \(english_tokens, french_tokens\) pairs, got str"),
    Bad("an nn.Transformer for the course's", posttrain.answer_logprob,
        lambda: posttrain.answer_logprob(nn.Transformer(d_model=8, nhead=2), you_batch()), TypeError,
        r"model must be the course's Transformer .*got Transformer"),
    Bad("a tensor for the batch", posttrain.answer_logprob,
        lambda: posttrain.answer_logprob(bpe_transformer(), torch.ones(1, 3, dtype=i64)), TypeError,
        r"batch must be a TranslationBatch \(TranslationData.make_batch\), got Tensor"),
    Bad("a dict for the batch", posttrain.sft_loss, lambda: posttrain.sft_loss(bpe_transformer(), {"src": 1}),
        TypeError, r"batch must be a TranslationBatch"),
    Bad("rejected answers to other sentences", posttrain.dpo_batch,
        lambda: posttrain.dpo_batch(bpe_transformer(), bpe_transformer(), you_batch(),
                                    posttrain.pairs_data([(["i", "run", "."], ["je", "cours", "."])], bpe()
                                                         ).make_batch([0]), 0.1),
        ValueError, r"chosen and rejected must hold the same English sentences in the same order"),
    Bad("beta zero", posttrain.dpo_batch,
        lambda: posttrain.dpo_batch(bpe_transformer(), bpe_transformer(), you_batch(), you_batch(("tu", "as", ".")),
                                    0.0), ValueError, r"beta must be positive and finite, got 0"),
    Bad("the batch given as the reference", posttrain.token_kl,
        lambda: posttrain.token_kl(bpe_transformer(), you_batch(), you_batch()), TypeError,
        r"model must be the course's Transformer .*got TranslationBatch"),
    Bad("n zero", posttrain.sample_translations,
        lambda: posttrain.sample_translations(bpe_transformer(), bpe(), [["you"]], 0), ValueError,
        r"n must be positive, got 0"),
    Bad("sentences as strings", posttrain.sample_translations,
        lambda: posttrain.sample_translations(bpe_transformer(), bpe(), ["you lost ."], 2), TypeError,
        r"sources must be a list of English sentences as word-token lists, got list"),
    Bad("temperature zero (that is greedy: translate_tokens)", posttrain.sample_translations,
        lambda: posttrain.sample_translations(bpe_transformer(), bpe(), [["you"]], 2, temperature=0), ValueError,
        r"temperature must be positive and finite, got 0"),
    Bad("an unknown register", posttrain.translate_tokens,
        lambda: posttrain.translate_tokens(bpe_transformer(), bpe(), [["you"]], register="vous"), ValueError,
        r"register must be one of \['formal', 'informal'\], got 'vous'"),
    Bad("an empty sentence", posttrain.translate_tokens,
        lambda: posttrain.translate_tokens(bpe_transformer(), bpe(), [[]]), TypeError,
        r"sources must be a list of English sentences as word-token lists"),
    Bad("a register for the data", posttrain.tagged_test, lambda: posttrain.tagged_test("formal", "formal"),
        TypeError, r"data must be a TranslationData \(load_benchmark\), got str"),
    Bad("the French register instead of the request", posttrain.tagged_test,
        lambda: posttrain.tagged_test(tiny_data(), "tu"), ValueError, r"register must be one of"),
    Bad("the training split", posttrain.you_test_sources, lambda: posttrain.you_test_sources(tiny_data(), "train"),
        ValueError, r"split must be one of \['test', 'valid'\], got 'train'"),
    Bad("one string for the list", posttrain.repetition_rate, lambda: posttrain.repetition_rate("je je ."),
        TypeError, r"translations must be a list of strings, got str"),
    Bad("no translations", posttrain.repetition_rate, lambda: posttrain.repetition_rate([]), ValueError,
        r"translations is empty"),
    Bad("an unknown register", posttrain.register_figures,
        lambda: posttrain.register_figures(bpe_transformer(), bpe(), [["you"]], register="polite"), ValueError,
        r"register must be one of"),
    Bad("a reward model of an nn.Linear", posttrain.RewardModel, lambda: posttrain.RewardModel(nn.Linear(2, 2)),
        TypeError, r"model must be the course's Transformer .*got Linear"),
    Bad("an unknown method", posttrain.PostRecipe, lambda: posttrain.PostRecipe("rlhf", 10), ValueError,
        r"method must be one of \['sft', 'tagged', 'dpo'\], got 'rlhf'"),
    Bad("a negative rank", posttrain.PostRecipe, lambda: posttrain.PostRecipe("sft", 10, lora_r=-1), ValueError,
        r"lora_r must be an int ≥ 0 \(0: train every weight\), got -1"),
    Bad("beta as a string", posttrain.PostRecipe, lambda: posttrain.PostRecipe("dpo", 10, beta="0.1"), TypeError,
        r"beta must be a number"),
    Bad("an unknown recipe", posttrain.train_run, lambda: posttrain.train_run("ppo", tmp(), data=tiny_data()),
        ValueError, r"name must be one of \["),
    Bad("a list for the data", posttrain.train_run, lambda: posttrain.train_run("sft", tmp(), data=[]), TypeError,
        r"data must be the benchmark \(load_benchmark\(\)\), got list"),
    Bad("an unknown recipe", posttrain.export_run,
        lambda: posttrain.export_run("ppo", bpe_transformer(), bpe_transformer(), {}, tmp(), data=tiny_data()),
        ValueError, r"name must be one of \["),
    Bad("a recipe's name for the recipe", posttrain.prepare_model,
        lambda: posttrain.prepare_model("dpo", bpe_transformer()), TypeError,
        r"recipe must be a PostRecipe \(e.g. RECIPES\['dpo'\]\), got str"),
    Bad("a length of zero words", posttrain.held_out_preferences, lambda: posttrain.held_out_preferences(max_len=0),
        ValueError, r"max_len must be positive, got 0"),
    Bad("no pairs", posttrain.implicit_reward_accuracy,
        lambda: posttrain.implicit_reward_accuracy(bpe_transformer(), bpe_transformer(), [], bpe(), 0.1), ValueError,
        r"preferences is empty: an accuracy needs at least one pair"),
    Bad("one pair as a string", posttrain.implicit_reward_accuracy,
        lambda: posttrain.implicit_reward_accuracy(bpe_transformer(), bpe_transformer(), "you", bpe(), 0.1),
        TypeError, r"preferences must be a list of \(english_tokens, french_tokens\) pairs, got str"),
    Bad("a folder without the adapter", posttrain.load_register_model,
        lambda: posttrain.load_register_model(tiny_data(), directory=tmp()), FileNotFoundError,
        r"no register adapter report at .*make it with `python -m coursekit.translation posttrain tagged"),
]

ROWS = TRANSLATION + REGISTER + POSTTRAIN

test_bad_call = bad_call_test(ROWS)

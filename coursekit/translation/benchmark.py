"""The course's English→French benchmark: one split, one vocabulary, one metric, one set of showcase sentences.

Every translation model of the course — the GRU encoder–decoder (05), the GRU with attention (06), the
Transformer (08), BART fine-tuned (11) — is measured on the same thing:

* **pairs**: Tatoeba EN–FR (D2L release), normalised, both sides ≤ 25 words (:data:`BENCHMARK`);
* **test**: held-out English sentences (:func:`~coursekit.translation.core.is_test_sentence`), never trained
  on, in two bands, each in hash order: the first 1,000 *short* pairs (both sides ≤ 10 words — exactly the
  test set of the earlier ≤ 10-word benchmark, so its figures stay comparable as a row of their own) and the
  first 800 *long* ones (a side of 11–25 words). A prefix of the hash order alone would hold too few long
  sentences to measure them (they are 1 in 6 of the pool);
* **valid**: the next 500 short and 200 long held-out pairs, for curves during training;
* **vocabulary**: one BPE of 8,000 pieces shared by both languages, trained on the training pairs only
  and committed (``data/translation/tokenizer.json``: ``tokenizers``' trainer breaks frequency ties in
  no fixed order, so retraining gives the same pieces under other ids — the models need these ids);
* **metrics**: sacreBLEU and chrF on the normalised strings, overall and by source length;
* **showcase**: :func:`showcase` — the first 12 test sentences and 8 everyday sentences that are not in
  Tatoeba at all, shown by every notebook so that models can be compared by eye.

Batches are built by :func:`coursekit.text.token_batches`: pairs of similar length go together and a batch holds at most
``max_tokens`` tokens (source + target, padding included), so a batch of short sentences has more of them.
"""

from __future__ import annotations

import copy
from pathlib import Path

from coursekit.data import model_dir
from coursekit.translation.core import TranslationData, load_translation, normalize
from coursekit.translation.scoring import BleuReport, bleu_by_length, corpus_bleu, corpus_chrf
from coursekit.translation.subword import SubwordVocab
from coursekit.validation import check_count as _check_count
from coursekit.validation import check_positive_int

__all__ = ["BENCHMARK", "LENGTH_BUCKETS", "LONG_SOURCES", "EVERYDAY", "load_benchmark", "load_short_benchmark",
           "short_view", "load_tokenizer", "train_tokenizer", "benchmark_figures", "check_banded", "showcase",
           "TOKENIZER_FILE"]

#: The benchmark's fixed settings (changing any of them changes every reported BLEU).
BENCHMARK = {"max_len": 25, "short_len": 10, "test_per_mille": 50, "n_test": 1000, "n_test_long": 800,
             "n_valid": 500, "n_valid_long": 200, "bpe_size": 8000, "bpe_min_frequency": 2}

#: The source-length buckets every report uses (words): Bahdanau et al. (2015, Fig. 2) in miniature.
LENGTH_BUCKETS = [(1, 5), (6, 10), (11, 15), (16, 20), (21, 25)]

#: Test sentences whose source has more than ``short_len`` words: ``bleu_long`` is one corpus BLEU over them.
LONG_SOURCES = (11, 25)

TOKENIZER_FILE = "tokenizer.json"

#: Everyday sentences that are not Tatoeba pairs (checked: none is in the corpus), with a reference
#: translation written for this course. They test whether a model translates beyond its corpus.
EVERYDAY = [
    ("The train to Paris leaves at eight.", "Le train pour Paris part à huit heures."),
    ("Could you open the window, please?", "Pourriez-vous ouvrir la fenêtre, s'il vous plaît ?"),
    ("My sister works in a big hospital.", "Ma sœur travaille dans un grand hôpital."),
    ("We have no more bread.", "Nous n'avons plus de pain."),
    ("I forgot my umbrella at the office.", "J'ai oublié mon parapluie au bureau."),
    ("The children are playing in the garden.", "Les enfants jouent dans le jardin."),
    ("Why didn't you call me yesterday?", "Pourquoi ne m'as-tu pas appelé hier ?"),
    ("This soup is too hot to eat.", "Cette soupe est trop chaude pour être mangée."),
]


def load_tokenizer(directory=None) -> SubwordVocab:
    """The committed benchmark BPE (``data/translation/tokenizer.json``)."""
    if directory is not None and not isinstance(directory, (str, Path)):
        raise TypeError(f"directory must be a folder path (str or Path) or None, got {type(directory).__name__}")
    path = (model_dir("translation") if directory is None else Path(directory)) / TOKENIZER_FILE
    if not path.is_file():
        raise FileNotFoundError(f"no benchmark tokenizer at {path}; write it with "
                                "`python -m coursekit.translation tokenizer`")
    return SubwordVocab.load(path)


def train_tokenizer(data: TranslationData | None = None) -> SubwordVocab:
    """Train the benchmark BPE on the training pairs (both languages) of the ≤ ``short_len``-word split.

    The committed BPE was trained on those 133,694 pairs, before the benchmark grew to 25 words; it covers the
    longer text as well (no ``<unk>`` in the test set, 2 in the 2.6M tokens of the ≤ 25-word training pairs),
    so it was kept: the committed models' ids are its ids.
    """
    if data is not None and not isinstance(data, TranslationData):
        raise TypeError(f"data must be a TranslationData or None, got {type(data).__name__}")
    data = data or load_translation(max_len=BENCHMARK["short_len"], test_per_mille=BENCHMARK["test_per_mille"],
                                    n_test=BENCHMARK["n_test"])
    sentences = [" ".join(e) for e, _ in data.train] + [" ".join(f) for _, f in data.train]
    return SubwordVocab.train(sentences, BENCHMARK["bpe_size"], min_frequency=BENCHMARK["bpe_min_frequency"])


_SPLIT_NAMES = {"n_test": "short test set", "n_test_long": "long test set", "n_valid": "short validation set",
                "n_valid_long": "long validation set"}


def load_benchmark(*, n_train: int | None = None, n_test: int = 1000, n_test_long: int = 800, n_valid: int = 500,
                   n_valid_long: int = 200, tokenizer: SubwordVocab | None = None, seed: int = 0) -> TranslationData:
    """The benchmark pairs with the committed BPE: all 158,696 training pairs (or a fixed subset of
    ``n_train``); the first ``n_test`` short and ``n_test_long`` long test pairs, in that order; the first
    ``n_valid`` short and ``n_valid_long`` long validation pairs. Smaller counts give prefixes of each band,
    so a quick profile's test set is inside the full one."""
    counts = {"n_test": n_test, "n_test_long": n_test_long, "n_valid": n_valid, "n_valid_long": n_valid_long}
    check_positive_int(n_test, "n_test")
    for name in ("n_test_long", "n_valid", "n_valid_long"):
        _check_count(counts[name], name)
    if n_train is not None:
        check_positive_int(n_train, "n_train")
    if tokenizer is not None and not isinstance(tokenizer, SubwordVocab):
        raise TypeError(f"tokenizer must be a SubwordVocab or None, got {type(tokenizer).__name__}")
    for name, n in counts.items():
        if n > BENCHMARK[name]:
            raise ValueError(f"the benchmark's {_SPLIT_NAMES[name]} has {BENCHMARK[name]} sentences, {name}={n} asked")
    tokenizer = tokenizer or load_tokenizer()
    data = load_translation(max_len=BENCHMARK["max_len"], short_len=BENCHMARK["short_len"],
                            test_per_mille=BENCHMARK["test_per_mille"], n_train=n_train, seed=seed,
                            subwords=tokenizer, **{name: BENCHMARK[name] for name in counts})
    data.keep("test", list(range(n_test)) + [BENCHMARK["n_test"] + i for i in range(n_test_long)])
    data.keep("valid", list(range(n_valid)) + [BENCHMARK["n_valid"] + i for i in range(n_valid_long)])
    data.info["benchmark"] = dict(BENCHMARK, tokenizer_sha256=tokenizer.sha256())
    data.info["bands"] = {"test_short": n_test, "test_long": n_test_long}
    return data


def load_short_benchmark(*, tokenizer: SubwordVocab | None = None, n_train: int | None = None) -> TranslationData:
    """The benchmark as it was before it grew to 25 words: both sides ≤ ``short_len`` (10) words, its 133,694
    training pairs, the same 1,000 short test and 500 validation pairs.

    BERT's and BART's committed pre-training corpora were built from these pairs (English and French sides,
    never as pairs for BERT), so they read them here: a corpus must not change under a committed model.
    ``n_train`` keeps a random sample of that many training pairs (seed 0; test and validation unchanged)
    for a live run that needs only a few — tokenising all 133,694 takes ~10 s on a 2-core CPU.
    """
    if tokenizer is not None and not isinstance(tokenizer, SubwordVocab):
        raise TypeError(f"tokenizer must be a SubwordVocab or None, got {type(tokenizer).__name__}")
    if n_train is not None:
        check_positive_int(n_train, "n_train")
    tokenizer = tokenizer or load_tokenizer()
    data = load_translation(max_len=BENCHMARK["short_len"], test_per_mille=BENCHMARK["test_per_mille"],
                            n_test=BENCHMARK["n_test"], n_valid=BENCHMARK["n_valid"], subwords=tokenizer,
                            n_train=n_train)
    data.info["benchmark"] = dict(BENCHMARK, max_len=BENCHMARK["short_len"], n_test_long=0, n_valid_long=0,
                                  tokenizer_sha256=tokenizer.sha256())
    return data


def short_view(data: TranslationData, n_test: int | None = None) -> TranslationData:
    """A view of the benchmark for a live run in class: its training pairs with both sides ≤ ``short_len``
    (10) words and, if ``n_test`` is given, its first ``n_test`` test pairs (the short band comes first).

    In random batches one long pair pads every sentence of its batch to its length, which makes a step
    several times dearer; the reference models, trained with length-grouped batches, read every pair.
    ``data`` itself is left as it is (a shallow copy is cut down: :meth:`TranslationData.keep` replaces
    lists, it does not change them).
    """
    if not isinstance(data, TranslationData):
        raise TypeError(f"data must be a TranslationData (from load_benchmark), got {type(data).__name__}")
    if n_test is not None:
        check_positive_int(n_test, "n_test")
        if n_test > len(data.test):
            raise ValueError(f"n_test must be at most the {len(data.test)} test pairs of data, got {n_test}")
    view = copy.copy(data)
    view.keep("train", [i for i, (en, fr) in enumerate(data.train)
                        if max(len(en), len(fr)) <= BENCHMARK["short_len"]])
    if n_test is not None:
        view.truncate("test", n_test)
    return view


def check_banded(data) -> None:
    """``data`` must be a :class:`TranslationData` from :func:`load_benchmark`, whose info names the test bands."""
    if not isinstance(data, TranslationData):
        raise TypeError(f"data must be a TranslationData from load_benchmark, got {type(data).__name__}")
    if "bands" not in data.info:
        raise ValueError("data has no test bands (data.info['bands']): load it with load_benchmark")


def benchmark_figures(report: BleuReport, data: TranslationData) -> dict:
    """The figures every report and ``evaluate --json`` give for a test run of the benchmark:

    ``bleu``, ``chrf``, ``exact``, ``n_test``; ``bleu_by_length`` (rows of :data:`LENGTH_BUCKETS` with their
    counts); ``bleu_long`` and ``n_long`` (one corpus BLEU over the sources of 11–25 words); ``short`` (BLEU,
    chrF, exact on the short band alone — the ≤ 10-word test set of the earlier benchmark, comparable with
    its figures). ``report`` must be the evaluation of ``data``'s whole test split, in order.
    """
    if not isinstance(report, BleuReport):
        raise TypeError(f"report must be a BleuReport, got {type(report).__name__}")
    check_banded(data)
    sources = [" ".join(e) for e, _ in data.test]
    if report.sources != sources:
        first = next((i for i, (a, b) in enumerate(zip(report.sources, sources)) if a != b), None)
        where = f"sentence {first} differs" if first is not None else f"it has {len(report.sources)} sentences"
        raise ValueError(f"report must score data's whole test split in order ({len(sources)} pairs); {where}")
    lengths = [len(e) for e, _ in data.test]
    hyps, refs = report.hypotheses, report.references
    lo, hi = LONG_SOURCES
    long = [i for i, n in enumerate(lengths) if lo <= n <= hi]
    n_short = data.info["bands"]["test_short"]
    short_hyps, short_refs = hyps[:n_short], refs[:n_short]
    return {
        "bleu": round(report.bleu, 2), "chrf": round(report.chrf, 2), "exact": round(report.exact, 4),
        "n_test": len(refs),
        "bleu_by_length": [{**row, "bleu": round(row["bleu"], 2)}
                           for row in bleu_by_length(lengths, hyps, refs, LENGTH_BUCKETS)],
        "bleu_long": round(corpus_bleu([hyps[i] for i in long], [refs[i] for i in long]), 2) if long else None,
        "n_long": len(long),
        "short": {"bleu": round(corpus_bleu(short_hyps, short_refs), 2) if n_short else None,
                  "chrf": round(corpus_chrf(short_hyps, short_refs), 2) if n_short else None,
                  "exact": round(sum(h == r for h, r in zip(short_hyps, short_refs)) / max(n_short, 1), 4),
                  "n": n_short},
    }


def showcase(data: TranslationData, n_test: int = 12) -> list[dict]:
    """The sentences every notebook translates: the first ``n_test`` test pairs and :data:`EVERYDAY`.

    Rows ``{"source", "reference", "kind"}`` with normalised strings; ``kind`` is "test" or "everyday".
    """
    if not isinstance(data, TranslationData):
        raise TypeError(f"data must be a TranslationData, got {type(data).__name__}")
    check_positive_int(n_test, "n_test")
    if n_test > len(data.test):
        raise ValueError(f"n_test={n_test} but the data has {len(data.test)} test pairs")
    rows = [{"source": " ".join(e), "reference": " ".join(f), "kind": "test"} for e, f in data.test[:n_test]]
    rows += [{"source": normalize(e), "reference": normalize(f), "kind": "everyday"} for e, f in EVERYDAY]
    return rows

"""The course's English→French benchmark: one split, one vocabulary, one metric, one set of showcase sentences.

Every translation model of the course — the GRU encoder–decoder (05), the GRU with attention (06), the
Transformer (08), BART fine-tuned (11) — is measured on the same thing:

* **pairs**: Tatoeba EN–FR (D2L release), normalised, both sides ≤ 10 words (:data:`BENCHMARK`);
* **test**: the first 1,000 held-out English sentences in hash order
  (:func:`~coursekit.translation.core.is_test_sentence`), never trained on;
* **valid**: the next 500 held-out sentences, for curves during training;
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

from pathlib import Path

from coursekit.data import model_dir
from coursekit.translation.core import TranslationData, load_translation, normalize
from coursekit.translation.subword import SubwordVocab
from coursekit.validation import check_count as _check_count
from coursekit.validation import check_positive_int

__all__ = ["BENCHMARK", "EVERYDAY", "load_benchmark", "load_tokenizer", "train_tokenizer", "showcase",
           "TOKENIZER_FILE"]

#: The benchmark's fixed settings (changing any of them changes every reported BLEU).
BENCHMARK = {"max_len": 10, "test_per_mille": 50, "n_test": 1000, "n_valid": 500, "bpe_size": 8000,
             "bpe_min_frequency": 2}

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
    """Train the benchmark BPE on the training pairs (both languages) of the full benchmark split."""
    if data is not None and not isinstance(data, TranslationData):
        raise TypeError(f"data must be a TranslationData or None, got {type(data).__name__}")
    data = data or load_translation(max_len=BENCHMARK["max_len"], test_per_mille=BENCHMARK["test_per_mille"],
                                    n_test=BENCHMARK["n_test"])
    sentences = [" ".join(e) for e, _ in data.train] + [" ".join(f) for _, f in data.train]
    return SubwordVocab.train(sentences, BENCHMARK["bpe_size"], min_frequency=BENCHMARK["bpe_min_frequency"])


def load_benchmark(*, n_train: int | None = None, n_test: int = 1000, n_valid: int = 500,
                   tokenizer: SubwordVocab | None = None, seed: int = 0) -> TranslationData:
    """The benchmark pairs with the committed BPE: all 133,694 training pairs (or a fixed subset of
    ``n_train``), the first ``n_test`` test sentences and ``n_valid`` validation sentences."""
    check_positive_int(n_test, "n_test")
    _check_count(n_valid, "n_valid")
    if n_train is not None:
        check_positive_int(n_train, "n_train")
    if tokenizer is not None and not isinstance(tokenizer, SubwordVocab):
        raise TypeError(f"tokenizer must be a SubwordVocab or None, got {type(tokenizer).__name__}")
    if n_test > BENCHMARK["n_test"]:
        raise ValueError(f"the benchmark's test set has {BENCHMARK['n_test']} sentences, n_test={n_test} asked")
    if n_valid > BENCHMARK["n_valid"]:
        raise ValueError(f"the benchmark's validation set has {BENCHMARK['n_valid']} sentences, n_valid={n_valid}")
    tokenizer = tokenizer or load_tokenizer()
    data = load_translation(max_len=BENCHMARK["max_len"], test_per_mille=BENCHMARK["test_per_mille"],
                            n_test=BENCHMARK["n_test"], n_valid=BENCHMARK["n_valid"], n_train=n_train, seed=seed,
                            subwords=tokenizer)
    data.truncate("test", n_test)
    data.truncate("valid", n_valid)
    data.info["benchmark"] = dict(BENCHMARK, tokenizer_sha256=tokenizer.sha256())
    return data


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

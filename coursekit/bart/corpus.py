"""What the course's small BART is pre-trained on: the recipe, the vocabulary and the corpus (notebook 11).

:class:`BartRecipe` is the recipe (size, noise, optimisation, corpus); :mod:`coursekit.bart.pretraining`
pre-trains with it and is the command that makes the committed model. The recipe is defined here, next to
the data it describes, because that command runs as ``__main__`` and the checks below must see the one
class. The corpus (:func:`build_corpus`) is built so that pre-training can pay off downstream and the
comparison stays honest (in the spirit of mBART, Liu et al. 2020, which pre-trains one model on the
monolingual text of several languages before fine-tuning it to translate):

* **English** sentences: the English side of one half of the benchmark's training pairs;
* **French** sentences: the French side of the *other* half — so no translation pair is ever seen
  whole, and nothing of the test or validation sentences;
* **SST-2 training sentences** (unlabelled): in-domain text for the sentiment task (Gururangan et al.
  2020, *Don't Stop Pretraining*); the labels and the validation sentences are never used;
* **IMDB movie reviews** (only in a recipe with ``n_reviews``, the second, in-domain stage that continues a
  committed model: ``init``): the unlabelled reviews and the training reviews' texts (labels never read, the
  test reviews never touched), cut into passages of whole consecutive sentences (:func:`review_documents`).

Every benchmark or SST-2 document is one sentence. All are written in the benchmark's BPE
(:mod:`coursekit.translation.benchmark`) with one extra piece, ``<mask>`` (id 8000) (:class:`BartVocab`): the
ids of the 8,000 translation pieces are unchanged, so the pre-trained model fine-tunes on the benchmark as it
is. :func:`held_out_sentences` are the validation sentences of each language, never trained on, on which the
denoising is measured.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, field

import torch

from coursekit.data import load_imdb, load_sst2
from coursekit.translation.benchmark import load_short_benchmark, load_tokenizer
from coursekit.translation.core import split_tokens
from coursekit.translation.subword import SubwordVocab
from coursekit.validation import check_int as _check_int
from coursekit.validation import check_int_sequence, check_positive_float, check_positive_int, check_probability

__all__ = ["MASK", "BartRecipe", "RECIPE", "REVIEWS_STAGE", "BartVocab", "PretrainingCorpus", "build_corpus",
           "held_out_sentences", "review_sentences", "review_documents", "REVIEW_SPLITS"]

MASK = "<mask>"


@dataclass(frozen=True)
class BartRecipe:
    """Everything that decides the committed BART: size, noise, optimisation and corpus."""

    arch: dict = field(default_factory=lambda: dict(d_model=256, n_heads=4, n_encoder_layers=3, n_decoder_layers=3,
                                                    d_ff=1024, dropout=0.1, max_len=64))
    mask_ratio: float = 0.3          # share of the tokens hidden by text infilling (§2.2, the paper's best)
    poisson_lambda: float = 3.0      # mean span length
    max_tokens: int = 3000           # per batch, corrupted source + original target, padding included
    lr: float = 7e-4
    warmup: int = 500
    max_updates: int = 4000
    clip: float = 1.0
    eval_every: int = 250
    n_held_out: int = 500            # validation sentences of each language, never trained on
    seed: int = 0
    n_reviews: int = 0               # IMDB reviews added to the corpus as passages (0: the first stage)
    init: str = ""                   # continue from the committed model in this folder ("": random init)
    init_sha256: str = ""            # ... whose model.safetensors has this content hash

    ARCH_KEYS = ("d_model", "n_heads", "n_encoder_layers", "n_decoder_layers", "d_ff", "dropout", "max_len")

    def __post_init__(self) -> None:
        if not isinstance(self.arch, dict):
            raise TypeError(f"arch must be a dict, got {type(self.arch).__name__}")
        missing = sorted(set(self.ARCH_KEYS) - set(self.arch))
        unknown = sorted(set(self.arch) - set(self.ARCH_KEYS))
        if missing or unknown:
            raise ValueError(f"arch must have the keys {list(self.ARCH_KEYS)}; "
                             + "; ".join(f"{what} {keys}" for what, keys in (("missing", missing), ("unknown", unknown))
                                         if keys))
        check_probability(self.mask_ratio, "mask_ratio")
        check_positive_float(self.poisson_lambda, "poisson_lambda")
        for name in ("max_tokens", "warmup", "max_updates", "eval_every", "n_held_out"):
            check_positive_int(getattr(self, name), name)
        check_positive_float(self.lr, "lr")
        check_positive_float(self.clip, "clip")
        _check_int(self.seed, "seed")
        if _check_int(self.n_reviews, "n_reviews") < 0:
            raise ValueError(f"n_reviews must be 0 or more, got {self.n_reviews}")
        for name in ("init", "init_sha256"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"{name} must be a str, got {type(getattr(self, name)).__name__}")
        if bool(self.init) != bool(self.init_sha256):
            raise ValueError("init and init_sha256 go together: the folder of the model to continue and the "
                             f"sha256 of its model.safetensors (got init={self.init!r}, "
                             f"init_sha256={self.init_sha256!r})")
        if self.init_sha256 and not re.fullmatch(r"[0-9a-f]{64}", self.init_sha256):
            raise ValueError(f"init_sha256 must be 64 lower-case hex digits, got {self.init_sha256!r}")


RECIPE = BartRecipe()

#: The in-domain second stage (``python -m coursekit.bart pretrain --continue-from DIR``): the first stage's
#: corpus plus passages of IMDB reviews, continuing the committed first-stage model at a lower learning rate.
REVIEWS_STAGE = dict(n_reviews=8000, lr=3e-4, warmup=200, max_updates=3000)


def _check_recipe(recipe) -> None:
    if not isinstance(recipe, BartRecipe):
        raise TypeError(f"recipe must be a BartRecipe, got {type(recipe).__name__}")


def _check_vocab(vocab) -> None:
    if not isinstance(vocab, BartVocab):
        raise TypeError(f"vocab must be a BartVocab, got {type(vocab).__name__}")


def _check_corpus(corpus, *, optional: bool = False) -> None:
    if not (isinstance(corpus, PretrainingCorpus) or (optional and corpus is None)):
        raise TypeError(f"corpus must be a PretrainingCorpus{' or None' if optional else ''}, "
                        f"got {type(corpus).__name__}")


def _check_vocab_id(value, name: str, vocab_size: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int token id, got {type(value).__name__}")
    if not 0 <= value < vocab_size:
        raise ValueError(f"{name} must be a token id in [0, {vocab_size}), got {value}")
    return value


def _check_documents(docs, name: str, vocab_size: int, *, what: str) -> list[list[int]]:
    """A non-empty list of documents, each a non-empty list of token ids in ``[0, vocab_size)``."""
    if isinstance(docs, (str, torch.Tensor)) or not isinstance(docs, (list, tuple)):
        raise TypeError(f"{name} must be a list of documents (lists of token ids), got {type(docs).__name__}")
    if not docs:
        raise ValueError(f"{what} needs at least one document")
    out = []
    for i, doc in enumerate(docs):
        ids = check_int_sequence(doc, f"{name}[{i}]")
        if not ids:
            raise ValueError(f"{name}[{i}] is empty")
        outside = [t for t in ids if not 0 <= t < vocab_size]
        if outside:
            raise ValueError(f"{name}[{i}] must hold ids in [0, {vocab_size}), got {outside[0]}")
        out.append(ids)
    return out


class BartVocab:
    """The benchmark BPE (ids 0–7999 unchanged) plus ``<mask>``; BART's ids: ``<pad>`` 0, ``<s>`` 2, ``</s>`` 3."""

    def __init__(self, subwords=None) -> None:
        if subwords is not None and not isinstance(subwords, SubwordVocab):
            raise TypeError(f"subwords must be a SubwordVocab (from coursekit.translation.benchmark.load_tokenizer), "
                            f"got {type(subwords).__name__}")
        self.subwords = subwords or load_tokenizer()
        self.itos = list(self.subwords.itos) + [MASK]
        self.mask_id = len(self.itos) - 1
        self.pad_id, self.unk_id, self.bos_id, self.eos_id = (self.subwords.pad_id, self.subwords.unk_id,
                                                              self.subwords.bos_id, self.subwords.eos_id)
        self.special_ids = (self.pad_id, self.bos_id, self.eos_id, self.mask_id)

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, words: list[str]) -> list[int]:
        """The words of one normalised sentence → ``<s> pieces </s>``."""
        _check_words(words, "words")
        return self.subwords.encode(words, add_bos=True, add_eos=True)

    def encode_text(self, text: str) -> list[int]:
        if not isinstance(text, str):
            raise TypeError(f"text must be a string, got {type(text).__name__}")
        return self.encode(split_tokens(text))

    def encode_many(self, sentences: list[list[str]]) -> list[list[int]]:
        """:meth:`encode` of many word lists at once (the tokenizer's parallel batch encoder)."""
        if isinstance(sentences, str) or not isinstance(sentences, (list, tuple)):
            raise TypeError(f"sentences must be a list of word lists, got {type(sentences).__name__}")
        for i, words in enumerate(sentences):
            if not isinstance(words, (list, tuple)):
                raise TypeError(f"sentences[{i}] must be a list of words, got {type(words).__name__}")
        return [[self.bos_id] + ids for ids in self.subwords.encode_batch(sentences, add_eos=True)]

    def detokenize(self, ids) -> str:
        """Ids → the sentence (specials and ``<mask>`` dropped by the BPE decoder, ``<mask>`` kept visible)."""
        ids = check_int_sequence(ids, "ids")
        outside = [i for i in ids if not 0 <= i < len(self)]
        if outside:
            raise ValueError(f"ids must hold ids in [0, {len(self)}), got {outside[0]}")
        parts, run = [], []
        for i in ids:
            if i == self.mask_id:
                parts += [self.subwords.detokenize(run), MASK] if run else [MASK]
                run = []
            else:
                run.append(i)
        parts.append(self.subwords.detokenize(run))
        return " ".join(p for p in parts if p)


def _check_words(words, name: str) -> None:
    if isinstance(words, str):
        raise TypeError(f"{name} must be a list of word strings, got one string")
    if not isinstance(words, (list, tuple)):
        raise TypeError(f"{name} must be a list of word strings, got {type(words).__name__}")


@dataclass
class PretrainingCorpus:
    """Pre-training documents (one sentence each, as ids) and held-out sentences, with where they came from."""

    vocab: BartVocab
    train: list[list[int]]
    held_out: list[list[int]]
    sources: dict
    unigram_top: int                 # the most frequent content piece of the training documents

    def __post_init__(self) -> None:
        _check_vocab(self.vocab)
        for name in ("train", "held_out"):
            if not isinstance(getattr(self, name), list):
                raise TypeError(f"{name} must be a list of documents, got {type(getattr(self, name)).__name__}")
        if not self.train:
            raise ValueError("train must not be empty")
        _check_vocab_id(self.unigram_top, "unigram_top", len(self.vocab))


def build_corpus(recipe: BartRecipe = RECIPE, *, data=None,
                 sst_sentences: list[str] | None = None) -> PretrainingCorpus:
    """English of half the training pairs, French of the other half, SST-2 training sentences, and (when
    ``recipe.n_reviews``) the passages of that many IMDB reviews (:func:`review_documents`); held out:
    ``n_held_out`` validation sentences of each language. Sentences longer than the model's positions are
    counted and left out (none of the benchmark's are; a few SST-2 and review sentences are)."""
    _check_recipe(recipe)
    if isinstance(sst_sentences, str):
        raise TypeError("sst_sentences must be a list of strings, got one string")
    vocab = BartVocab()
    data = data or load_short_benchmark(tokenizer=vocab.subwords)
    order = list(range(len(data.train)))
    random.Random(recipe.seed).shuffle(order)
    half = len(order) // 2
    english = vocab.encode_many([data.train[i][0] for i in order[:half]])
    french = vocab.encode_many([data.train[i][1] for i in order[half:]])
    if sst_sentences is None:
        sst_sentences = list(load_sst2()["train"]["sentence"])
    sst = vocab.encode_many([split_tokens(s) for s in sst_sentences if s.strip()])
    limit = recipe.arch["max_len"]
    too_long = sum(len(d) > limit for d in sst)
    sst = [d for d in sst if len(d) <= limit]
    held_out = held_out_sentences(recipe, vocab, data)
    train = english + french + sst
    reviews = {}
    if recipe.n_reviews:
        texts = [text for split in REVIEW_SPLITS for text in load_imdb(split)["text"]]
        if recipe.n_reviews > len(texts):
            raise ValueError(f"n_reviews={recipe.n_reviews} but IMDB has {len(texts)} unlabelled and training reviews")
        random.Random(recipe.seed).shuffle(texts)
        passages, left_out = review_documents(texts[:recipe.n_reviews], vocab, limit)
        train += passages
        reviews = {"reviews": recipe.n_reviews, "review_passages": len(passages),
                   "review_tokens": sum(len(d) for d in passages), "review_sentences_too_long_left_out": left_out,
                   "reviews_from": "IMDB unsup + train texts (labels never read; test reviews never read)"}
    counts = Counter(t for d in train for t in d if t not in vocab.special_ids)
    sources = {"english_sentences": len(english), "french_sentences": len(french), "sst2_sentences": len(sst),
               "sst2_too_long_left_out": too_long, **reviews, "tokens": sum(len(d) for d in train),
               "held_out_sentences": len(held_out), "held_out_from": "benchmark validation split (EN and FR sides)"}
    return PretrainingCorpus(vocab, train, held_out, sources, counts.most_common(1)[0][0])


def held_out_sentences(recipe: BartRecipe, vocab: BartVocab, data=None) -> list[list[int]]:
    """The first ``n_held_out`` validation pairs of the benchmark: their English sentences, then their French."""
    _check_recipe(recipe)
    _check_vocab(vocab)
    data = data or load_short_benchmark(tokenizer=vocab.subwords)
    return (vocab.encode_many([e for e, _ in data.valid[:recipe.n_held_out]])
            + vocab.encode_many([f for _, f in data.valid[:recipe.n_held_out]]))


#: The IMDB splits read as unlabelled review text (the test reviews are never read).
REVIEW_SPLITS = ("unsup", "train")

_SENTENCE_END = frozenset({".", "!", "?"})


def review_sentences(review: str) -> list[list[str]]:
    """One (cleaned) review → its sentences as normalised words (:func:`~coursekit.translation.core.split_tokens`),
    each ending after a ``.``, ``!`` or ``?`` word (a last sentence without one is kept)."""
    if not isinstance(review, str):
        raise TypeError(f"review must be a str, got {type(review).__name__}")
    sentences, current = [], []
    for word in split_tokens(review):
        current.append(word)
        if word in _SENTENCE_END:
            sentences.append(current)
            current = []
    return sentences + ([current] if current else [])


def review_documents(reviews: list[str], vocab: BartVocab, max_len: int) -> tuple[list[list[int]], int]:
    """Reviews → BART documents: ``<s>`` + whole consecutive sentences of one review + ``</s>``, packed while
    they fit in ``max_len`` ids — a passage, as BART pre-trains on (Lewis et al. 2020 §3), not one sentence.

    Returns ``(documents, left_out)``: a sentence that does not fit in ``max_len`` on its own is left out and
    counted, and the passage around it is cut there (a document never spans a gap)."""
    if isinstance(reviews, str) or not isinstance(reviews, (list, tuple)):
        raise TypeError(f"reviews must be a list of review texts, got {type(reviews).__name__}")
    _check_vocab(vocab)
    if check_positive_int(max_len, "max_len") < 3:
        raise ValueError(f"max_len must leave room for <s>, one piece and </s> (≥ 3), got {max_len}")
    sentences, owner = [], []
    for r, review in enumerate(reviews):
        if not isinstance(review, str):
            raise TypeError(f"reviews[{r}] must be a str, got {type(review).__name__}")
        for words in review_sentences(review):
            sentences.append(words)
            owner.append(r)
    room = max_len - 2
    docs, left_out, current, current_owner = [], 0, [], None

    def flush() -> None:
        if current:
            docs.append([vocab.bos_id] + current + [vocab.eos_id])

    for ids, r in zip(vocab.subwords.encode_batch(sentences), owner):
        if r != current_owner or len(current) + len(ids) > room:
            flush()
            current, current_owner = [], r
        if len(ids) > room:
            left_out += 1
            continue
        current += ids
    flush()
    return docs, left_out

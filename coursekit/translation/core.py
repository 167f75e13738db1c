"""The one English→French translation task of the course (notebooks 05, 06, 08 and 11).

Tatoeba sentence pairs (the Dive into Deep Learning release of manythings.org's ``fra-eng``, see
``coursekit.data.load_tatoeba``) go through one pipeline, so that BLEU scores of the RNN, attention
and Transformer notebooks are measured on the *same* held-out sentences:

1. **normalise** (:func:`normalize`): Unicode NFKC (turns the no-break spaces U+00A0 / U+202F that
   French puts before ``! ? :`` into ordinary spaces), curly apostrophes → ``'``, lower-case, and a
   space before each punctuation mark ``, . ! ? ; :`` so it becomes its own token (D2L §10.5);
   tokens are then the whitespace-separated pieces (``j'ai`` stays one token).
2. **filter**: keep a pair when both sides have at most ``max_len`` tokens (before ``<eos>``).
3. **split** (:func:`is_test_sentence`): a pair belongs to the test pool when a hash of its
   normalised *English* sentence falls in the first ``test_per_mille``/1000 of the hash range. The
   split depends on nothing else (not on the profile, the order of the file or a random seed), and
   every translation of a test sentence is kept out of training. The test set holds one pair per
   English sentence (its first translation in the file), ordered by hash; ``n_test`` takes a prefix
   of that order, so a smaller profile's test set is a subset of a larger one's.
4. **subsample** the training pairs with a fixed permutation (``seed``) to ``n_train``: again a prefix,
   so the ``quick`` training set is inside the ``class`` one.
5. **vocabularies** built on the training pairs only: a word :class:`coursekit.text.Vocab` per language
   (``<pad> <unk> <bos> <eos>``, tokens seen ``min_freq`` times), or one shared BPE vocabulary
   (:class:`coursekit.translation.subword.SubwordVocab`, no ``<unk>``) — the course benchmark
   (:func:`coursekit.translation.benchmark.load_benchmark`) uses the latter.
6. **batches**: source = tokens + ``<eos>``; decoder input = ``<bos>`` + tokens; decoder target =
   tokens + ``<eos>``; right-padded with masks (True = real token) by :func:`coursekit.text.pad_batch`.

:meth:`TranslationData.evaluate` scores a model on a split: corpus BLEU overall and by source-length
bucket, and chrF, from :mod:`coursekit.translation.scoring`.

The held-out pool is larger than the test set: its sentences after the first ``n_test`` form a
*validation* split (``n_valid``), for watching BLEU during training without touching the test set.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import torch

from coursekit.data import load_tatoeba
from coursekit.text import Vocab, pad_batch
from coursekit.translation.scoring import BleuReport, bleu_by_length, corpus_bleu, corpus_chrf, length_buckets
from coursekit.translation.subword import SubwordVocab
from coursekit.validation import check_count as _check_count
from coursekit.validation import check_generator as _check_generator
from coursekit.validation import check_int_sequence, check_positive_int

__all__ = [
    "COURSE_SPLIT",
    "normalize",
    "readable_french",
    "split_tokens",
    "is_test_sentence",
    "TranslationBatch",
    "TranslationData",
    "load_translation",
]

#: The split every translation notebook uses, so their test BLEU is measured on the same sentences:
#: sentences of at most 10 tokens, the first 1000 held-out English sentences (fewer in ``quick``).
COURSE_SPLIT = {"max_len": 10, "test_per_mille": 50, "n_test": 1000}

_PUNCT_RE = re.compile(r"(?<! )(?=[,.!?;:])")  # the empty position before a mark not preceded by a space


def _check_test_per_mille(test_per_mille) -> None:
    if isinstance(test_per_mille, bool) or not isinstance(test_per_mille, int):
        raise TypeError(f"test_per_mille must be an int, got {type(test_per_mille).__name__}")
    if not 0 < test_per_mille < 1000:
        raise ValueError(f"test_per_mille must be an int in (0, 1000), got {test_per_mille}")


def normalize(text: str) -> str:
    """Normalise one sentence: NFKC, ``’`` → ``'``, lower-case, a space before ``, . ! ? ; :``.

    >>> normalize("Cours\\u202f!")
    'cours !'
    >>> normalize("I'm fine, thanks.")
    "i'm fine , thanks ."
    """
    if not isinstance(text, str):
        raise TypeError(f"normalize expects a str, got {type(text).__name__}")
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).replace("\u2019", "'")
    text = text.lower()
    text = _PUNCT_RE.sub(" ", text)
    return " ".join(text.split())


def readable_french(text: str) -> str:
    """A normalised French string (what the models produce and BLEU scores) as a reader expects it: capital
    first letter, no space before ``.`` ``,`` ``…``, one space before ``? ! : ;`` (French typography).

    >>> readable_french("bonjour , je m'appelle marie .")
    "Bonjour, je m'appelle marie."
    >>> readable_french("tu viens ?")
    'Tu viens ?'

    Only the first letter is restored: the models' output is lower case, so names stay lower case.
    """
    if not isinstance(text, str):
        raise TypeError(f"readable_french expects a str, got {type(text).__name__}")
    text = re.sub(r"\s+([.,…])", r"\1", " ".join(text.split()))
    return text[:1].upper() + text[1:]


def split_tokens(text: str) -> list[str]:
    """Tokens of a sentence: :func:`normalize` it, then split on whitespace."""
    return normalize(text).split()


def is_test_sentence(english: str, test_per_mille: int = 50) -> bool:
    """True when the (normalised) English sentence belongs to the fixed held-out pool.

    The decision is a hash (SHA-1) of the normalised sentence, so it is the same in every
    notebook, profile and run, and all translations of one English sentence fall on the same side.
    """
    _check_test_per_mille(test_per_mille)
    return _hash(normalize(english)) % 1000 < test_per_mille


def _hash(normalised: str) -> int:
    return int(hashlib.sha1(normalised.encode("utf-8")).hexdigest()[:12], 16)


@functools.lru_cache(maxsize=2)
def _normalised_pairs(release: str) -> tuple[tuple[str, str, int], ...]:
    """Every pair of a Tatoeba release, normalised, with the hash of its English side.

    Read and normalised once per process (~4 s for the 167,130 pairs): a notebook that loads two views
    of the corpus (its own split and the benchmark) pays for it once. Immutable, so no caller can alter it.
    """
    raw = load_tatoeba(release)[:]  # dict of two plain lists (row-wise Dataset iteration is slow)
    out = []
    for en_raw, fr_raw in zip(raw["en"], raw["fr"]):
        en = normalize(en_raw)
        out.append((en, normalize(fr_raw), _hash(en)))
    return tuple(out)


# --------------------------------------------------------------------------- batches


@dataclass
class TranslationBatch:
    """A padded batch. Masks are True at real tokens.

    ``src`` (B, S) = source tokens + ``<eos>``; ``tgt_in`` (B, T) = ``<bos>`` + target tokens (what the
    decoder reads under teacher forcing); ``tgt_out`` (B, T) = target tokens + ``<eos>`` (what it must
    predict). ``index`` holds the positions of the pairs in their split.
    """

    src: torch.Tensor          # (B, S) long
    src_mask: torch.Tensor     # (B, S) bool
    src_lengths: torch.Tensor  # (B,) long
    tgt_in: torch.Tensor       # (B, T) long
    tgt_out: torch.Tensor      # (B, T) long
    tgt_mask: torch.Tensor     # (B, T) bool
    index: torch.Tensor        # (B,) long

    def to(self, device) -> TranslationBatch:
        """The same batch on ``device`` (``src_lengths`` and ``index`` stay on the CPU)."""
        return TranslationBatch(self.src.to(device), self.src_mask.to(device), self.src_lengths,
                                self.tgt_in.to(device), self.tgt_out.to(device), self.tgt_mask.to(device),
                                self.index)

    def __len__(self) -> int:
        return self.src.shape[0]


# --------------------------------------------------------------------------- the data set


@dataclass
class TranslationData:
    """Tokenised train/test pairs, vocabularies, padded batches and BLEU evaluation.

    Build it with :func:`load_translation`. ``train`` / ``test`` / ``valid`` are lists of
    ``(english_tokens, french_tokens)``; the vocabularies are word :class:`~coursekit.text.Vocab` s or
    one shared :class:`~coursekit.translation.subword.SubwordVocab` (then ``src_vocab is tgt_vocab``).
    """

    train: list[tuple[list[str], list[str]]]
    test: list[tuple[list[str], list[str]]]
    src_vocab: Vocab
    tgt_vocab: Vocab
    max_len: int
    info: dict = field(default_factory=dict)
    valid: list[tuple[list[str], list[str]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        for name in ("src_vocab", "tgt_vocab"):
            if not isinstance(getattr(self, name), (Vocab, SubwordVocab)):
                raise TypeError(f"{name} must be a Vocab or a SubwordVocab, got {type(getattr(self, name)).__name__}")
        check_positive_int(self.max_len, "max_len")
        for name, pairs in self.splits().items():
            for pair in pairs:
                if not (isinstance(pair, (tuple, list)) and len(pair) == 2
                        and all(isinstance(side, (list, tuple)) for side in pair)):
                    raise TypeError(f"{name} must hold (english_tokens, french_tokens) pairs of token lists, "
                                    f"got {pair!r}")
        self._ids = {name: self._encode(pairs) for name, pairs in self.splits().items()}

    def splits(self) -> dict[str, list]:
        return {"train": self.train, "test": self.test, "valid": self.valid}

    def _encode(self, pairs):
        if hasattr(self.src_vocab, "encode_batch"):  # subwords: the tokenizer's batch encoder is much faster
            return (self.src_vocab.encode_batch([e for e, _ in pairs], add_eos=True),
                    self.tgt_vocab.encode_batch([f for _, f in pairs]))
        src = [self.src_vocab.encode(e, add_eos=True) for e, _ in pairs]
        tgt = [self.tgt_vocab.encode(f) for _, f in pairs]
        return src, tgt

    def _split(self, split: str):
        if split not in self._ids:
            raise ValueError(f"split must be 'train', 'test' or 'valid', got {split!r}")
        return self._ids[split]

    def truncate(self, split: str, n: int) -> None:
        """Keep only the first ``n`` pairs of ``split`` (a smaller test set is a prefix of the larger one)."""
        pairs = self.splits()[split] if split in self._ids else self._split(split)
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= len(pairs):
            raise ValueError(f"n must be an int in [0, {len(pairs)}] for split {split!r}, got {n!r}")
        self.keep(split, list(range(n)))

    def keep(self, split: str, indices: Sequence[int]) -> None:
        """Keep only the pairs of ``split`` at ``indices`` (in that order), e.g. a prefix of each length band.

        New lists replace the old ones (nothing is changed in place), so a ``copy.copy`` of the data can be
        cut down without touching the original: the cheap way to a smaller view of a large benchmark.
        """
        pairs = self.splits()[split] if split in self._ids else self._split(split)
        indices = check_int_sequence(indices, "indices")
        bad = [i for i in indices if not 0 <= i < len(pairs)]
        if bad:
            raise ValueError(f"indices must be ints in [0, {len(pairs)}) for split {split!r}, got {bad[:5]}")
        setattr(self, split, [pairs[i] for i in indices])
        src, tgt = self._ids[split]
        self._ids = {**self._ids, split: ([src[i] for i in indices], [tgt[i] for i in indices])}

    def lengths(self, split: str = "train") -> tuple[list[int], list[int]]:
        """Token counts per pair of ``split``: source (with ``<eos>``) and target (with ``<bos>``)."""
        src, tgt = self._split(split)
        return [len(s) for s in src], [len(t) + 1 for t in tgt]

    # ---- batching
    def make_batch(self, indices: Sequence[int], split: str = "train") -> TranslationBatch:
        """The padded batch of the pairs at ``indices`` of ``split``."""
        src_ids, tgt_ids = self._split(split)
        indices = check_int_sequence(indices, "indices")
        if len(indices) == 0:
            raise ValueError("make_batch needs at least one index")
        bad = [i for i in indices if not 0 <= i < len(src_ids)]
        if bad:
            raise ValueError(f"indices must be ints in [0, {len(src_ids)}) for the {split!r} split "
                             f"({len(src_ids)} pairs), got {bad[:5]}")
        src, src_mask, src_lengths = pad_batch([src_ids[i] for i in indices], self.src_vocab.pad_id)
        bos, eos = self.tgt_vocab.bos_id, self.tgt_vocab.eos_id
        tgt_in, tgt_mask, _ = pad_batch([[bos] + tgt_ids[i] for i in indices], self.tgt_vocab.pad_id)
        tgt_out, _, _ = pad_batch([tgt_ids[i] + [eos] for i in indices], self.tgt_vocab.pad_id)
        return TranslationBatch(src, src_mask, src_lengths, tgt_in, tgt_out, tgt_mask,
                                torch.as_tensor(indices, dtype=torch.long))

    def batches(self, batch_size: int, generator: torch.Generator | None = None, *, split: str = "train",
                shuffle: bool | None = None) -> Iterator[TranslationBatch]:
        """One pass over ``split`` in batches (shuffled with ``generator`` for train, in order for test)."""
        check_positive_int(batch_size, "batch_size")
        _check_generator(generator)
        if shuffle is not None and not isinstance(shuffle, bool):
            raise TypeError(f"shuffle must be a bool or None, got {type(shuffle).__name__}")
        n = len(self._split(split)[0])
        shuffle = (split == "train") if shuffle is None else shuffle
        order = torch.randperm(n, generator=generator).tolist() if shuffle else list(range(n))
        for start in range(0, n, batch_size):
            yield self.make_batch(order[start:start + batch_size], split)

    def batch_fn(self, batch_size: int, generator: torch.Generator | None = None,
                 device=None) -> Callable[[int], TranslationBatch]:
        """``step -> batch`` over endless reshuffled epochs of the training pairs (for ``train.fit``)."""
        check_positive_int(batch_size, "batch_size")
        _check_generator(generator)
        state = {"it": iter(())}

        def next_batch(step: int) -> TranslationBatch:
            try:
                batch = next(state["it"])
            except StopIteration:
                state["it"] = self.batches(batch_size, generator)
                batch = next(state["it"])
            return batch if device is None else batch.to(device)

        return next_batch

    # ---- text
    def source_text(self, i: int, split: str = "test") -> str:
        self._split(split)
        pairs = self.splits()[split]
        if isinstance(i, bool) or not isinstance(i, int):
            raise TypeError(f"i must be an int, got {type(i).__name__}")
        if not 0 <= i < len(pairs):
            raise ValueError(f"i must be an index in [0, {len(pairs)}) of the {split!r} split, got {i}")
        return " ".join(pairs[i][0])

    def detokenize(self, ids) -> str:
        """Target ids → the string BLEU sees (specials dropped, stops at ``<eos>``)."""
        return self.tgt_vocab.detokenize(ids)

    # ---- evaluation
    def evaluate(self, translate: Callable[[TranslationBatch], Sequence[Sequence[int]]], *,
                 split: str = "test", batch_size: int = 256, buckets: Sequence[tuple[int, int]] | None = None,
                 device=None, limit: int | None = None, indices: Sequence[int] | None = None) -> BleuReport:
        """BLEU of ``translate`` on ``split`` (its first ``limit`` pairs, or the pairs at ``indices``), overall
        and by source length.

        ``translate(batch)`` returns, for each pair of the batch, the predicted target ids (with or
        without ``<bos>``/``<eos>``; decoding stops at the first ``<eos>``). References are the
        normalised French sentences, *not* mapped through the vocabulary, so ``<unk>`` costs BLEU.
        """
        if not callable(translate):
            raise TypeError(f"translate must be a function batch -> list of id lists, got {type(translate).__name__}")
        check_positive_int(batch_size, "batch_size")
        if limit is not None:
            check_positive_int(limit, "limit")
        self._split(split)
        pairs = self.splits()[split]
        if indices is None:
            indices = list(range(len(pairs) if limit is None else min(limit, len(pairs))))
        elif limit is not None:
            raise ValueError("give limit or indices, not both")
        else:
            indices = check_int_sequence(indices, "indices")
        hyps: list[str] = []
        for start in range(0, len(indices), batch_size):
            batch = self.make_batch(indices[start:start + batch_size], split)
            out = translate(batch if device is None else batch.to(device))
            if len(out) != len(batch):
                raise ValueError(f"translate returned {len(out)} outputs for a batch of {len(batch)}")
            hyps.extend(self.detokenize(ids) for ids in out)
        refs = [" ".join(pairs[i][1]) for i in indices]
        srcs = [" ".join(pairs[i][0]) for i in indices]
        lengths = [len(pairs[i][0]) for i in indices]
        buckets = list(buckets) if buckets is not None else length_buckets(self.max_len)
        return BleuReport(corpus_bleu(hyps, refs), bleu_by_length(lengths, hyps, refs, buckets), srcs, hyps, refs,
                          corpus_chrf(hyps, refs))


def load_translation(*, max_len: int = 10, n_train: int | None = None, n_test: int | None = 1000,
                     min_freq: int = 2, max_vocab: int | None = None, test_per_mille: int = 50, seed: int = 0,
                     release: str = "d2l", n_valid: int = 0, subwords=None, short_len: int | None = None,
                     n_test_long: int = 0, n_valid_long: int = 0) -> TranslationData:
    """Read, normalise, filter, split and index the Tatoeba English→French pairs (see the module doc).

    ``max_len``: longest sentence kept, in tokens, on both sides. ``n_train`` / ``n_test``: how many
    training / test pairs to keep (``None`` = all; a count above the pool is a ``ValueError``). ``max_vocab``
    caps each vocabulary (specials included; the most frequent tokens are kept), which bounds the cost of the
    output softmax.
    Keep ``max_len``, ``test_per_mille`` and ``n_test`` equal across notebooks to compare their BLEU
    (the course uses :data:`COURSE_SPLIT`). ``n_valid``: held-out sentences after the test set kept as
    a validation split. ``subwords``: a :class:`~coursekit.translation.subword.SubwordVocab` to use for
    both languages instead of word vocabularies (``min_freq`` / ``max_vocab`` are then unused).

    ``short_len`` splits the held-out pool in two *bands*, each in hash order: **short** pairs (both sides
    ≤ ``short_len``) and **long** ones (the others, both sides ≤ ``max_len``). The test set is then the first
    ``n_test`` short pairs followed by the first ``n_test_long`` long ones, and the validation set the next
    ``n_valid`` short and ``n_valid_long`` long ones. So the short part of a test set with ``max_len=25,
    short_len=10`` is exactly the test set of ``max_len=10``, and long sentences are not left to the few
    that a prefix of the hash order would hold.
    """
    check_positive_int(max_len, "max_len")
    check_positive_int(min_freq, "min_freq")
    _check_count(seed, "seed")
    if subwords is not None and not isinstance(subwords, SubwordVocab):
        raise TypeError(f"subwords must be a SubwordVocab or None, got {type(subwords).__name__}")
    if n_train is not None:
        check_positive_int(n_train, "n_train")
    if n_test is not None:
        check_positive_int(n_test, "n_test")
    if max_vocab is not None:
        check_positive_int(max_vocab, "max_vocab")
    _check_count(n_valid, "n_valid")
    _check_count(n_test_long, "n_test_long")
    _check_count(n_valid_long, "n_valid_long")
    if short_len is None:
        if n_test_long or n_valid_long:
            raise ValueError("n_test_long / n_valid_long need short_len: long sentences are those longer than it")
        short_len = max_len
    else:
        check_positive_int(short_len, "short_len")
        if short_len > max_len:
            raise ValueError(f"short_len must be at most max_len={max_len}, got {short_len}")
    if (n_valid or n_test_long or n_valid_long) and n_test is None:
        raise ValueError("n_valid needs n_test: the validation sentences are the held-out ones after the test set")
    _check_test_per_mille(test_per_mille)
    if not isinstance(release, str):
        raise TypeError(f"release must be a str ('d2l' or 'pytorch'), got {type(release).__name__}")

    pairs = _normalised_pairs(release)
    train, test_by_en = [], {}
    n_raw = len(pairs)
    for en, fr, en_hash in pairs:
        if en_hash % 1000 < test_per_mille:
            test_by_en.setdefault(en, fr)  # first translation of each test sentence
            continue
        en_t, fr_t = en.split(), fr.split()
        if 0 < len(en_t) <= max_len and 0 < len(fr_t) <= max_len:
            train.append((en_t, fr_t))
    held_out = [(en.split(), fr.split()) for en, fr in sorted(test_by_en.items(), key=lambda kv: _hash(kv[0]))
                if 0 < len(en.split()) <= max_len and 0 < len(fr.split()) <= max_len]
    short = [pair for pair in held_out if max(map(len, pair)) <= short_len]
    long = [pair for pair in held_out if max(map(len, pair)) > short_len]
    n_train_pool, n_test_pool = len(train), len(held_out)
    if n_train is not None and n_train > n_train_pool:
        raise ValueError(f"n_train={n_train} but the training pool has {n_train_pool} pairs of at most "
                         f"max_len={max_len} tokens (release {release!r}); ask for at most that many, or None for all")
    if n_test is not None and n_test > len(short):
        raise ValueError(f"n_test={n_test} but the held-out pool has {len(short)} pairs of at most "
                         f"short_len={short_len} tokens (test_per_mille={test_per_mille})")
    if n_train is not None and n_train < len(train):
        order = torch.randperm(len(train), generator=torch.Generator().manual_seed(seed))[:n_train]
        train = [train[i] for i in order.tolist()]
    test, valid = short + long, []
    if n_test is not None:
        if n_test_long + n_valid_long > len(long):
            raise ValueError(f"n_test_long + n_valid_long = {n_test_long + n_valid_long} but the held-out pool has "
                             f"{len(long)} pairs longer than short_len={short_len}")
        test = short[:n_test] + long[:n_test_long]
        valid = short[n_test:n_test + n_valid] + long[n_test_long:n_test_long + n_valid_long]
        if len(valid) < n_valid + n_valid_long:
            raise ValueError(f"n_valid={n_valid} but only {max(len(short) - n_test, 0)} held-out sentences remain "
                             f"after the test set")
    if subwords is not None:
        src_vocab = tgt_vocab = subwords
    else:
        src_vocab = Vocab.build((e for e, _ in train), min_freq=min_freq, max_size=max_vocab)
        tgt_vocab = Vocab.build((f for _, f in train), min_freq=min_freq, max_size=max_vocab)
    info = {"release": release, "pairs_in_file": n_raw, "train_pool": n_train_pool, "test_pool": n_test_pool,
            "max_len": max_len, "short_len": short_len, "n_test_long": n_test_long, "n_valid_long": n_valid_long,
            "min_freq": min_freq, "max_vocab": max_vocab, "test_per_mille": test_per_mille,
            "seed": seed, "n_valid": n_valid, "vocabulary": "words" if subwords is None else f"bpe {len(subwords)}"}
    return TranslationData(train, test, src_vocab, tgt_vocab, max_len, info, valid)

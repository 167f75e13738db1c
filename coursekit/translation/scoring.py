"""Scoring translations: corpus BLEU and chrF, BLEU by source-length bucket, and the report that holds them.

BLEU is corpus BLEU from sacrebleu (Papineni et al. 2002; Post 2018) on the detokenised strings,
overall and by source-length bucket (:func:`length_buckets`, :func:`bleu_by_length`), and chrF
(Popović 2015), the character n-gram F-score, which gives partial credit for a word with the right
stem. :meth:`coursekit.translation.core.TranslationData.evaluate` computes all of them into a
:class:`BleuReport`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from coursekit.metrics import bleu
from coursekit.validation import check_count as _check_count
from coursekit.validation import check_int_sequence, check_positive_int

__all__ = [
    "BleuReport",
    "corpus_bleu",
    "corpus_chrf",
    "bleu_by_length",
    "length_buckets",
]

def _check_strings(values, name: str) -> None:
    """A list/tuple of str (a single str would be read one character at a time)."""
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise TypeError(f"{name} must be a list of str, got {type(values).__name__}")
    bad = next((v for v in values if not isinstance(v, str)), None)
    if bad is not None:
        raise TypeError(f"{name} must hold str, got {bad!r} ({type(bad).__name__})")


def _check_corpus(hypotheses, references, metric: str) -> None:
    """Lists of str, one reference per hypothesis, and not empty (``metric`` names the score)."""
    _check_strings(hypotheses, "hypotheses")
    _check_strings(references, "references")
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    if not hypotheses:
        raise ValueError(f"{metric} of an empty corpus is undefined")


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Corpus BLEU (sacrebleu, 13a tokenisation, 0–100) of detokenised strings, one reference each."""
    _check_corpus(hypotheses, references, "BLEU")

    # Our strings are space-tokenised ("il pleut ."); sacrebleu's 13a tokeniser splits punctuation off
    # anyway, so the score is the same, but it warns about "tokenized periods" on every call: silence it.
    logger = logging.getLogger("sacrebleu")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        return float(bleu(list(hypotheses), list(references)))
    finally:
        logger.setLevel(level)


def corpus_chrf(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Corpus chrF (sacrebleu defaults: character 6-grams, β = 2; 0–100), one reference each."""
    import sacrebleu

    _check_corpus(hypotheses, references, "chrF")
    return float(sacrebleu.corpus_chrf(list(hypotheses), [list(references)]).score)


def length_buckets(max_len: int, width: int = 2) -> list[tuple[int, int]]:
    """Contiguous inclusive source-length buckets ``(lo, hi)`` covering 1..``max_len``.

    The first bucket absorbs the rare very short sentences: ``length_buckets(10)`` →
    ``[(1, 4), (5, 6), (7, 8), (9, 10)]``.
    """
    check_positive_int(max_len, "max_len")
    check_positive_int(width, "width")
    edges = list(range(max_len, 0, -width))  # upper ends, from the top
    buckets = [(max(hi - width + 1, 1), hi) for hi in edges][::-1]
    if len(buckets) > 1 and buckets[0][1] - buckets[0][0] + 1 < width:
        first = buckets.pop(0)
        buckets[0] = (first[0], buckets[0][1])
    if len(buckets) > 1 and buckets[0][1] <= 3:
        first = buckets.pop(0)
        buckets[0] = (first[0], buckets[0][1])
    return buckets


def bleu_by_length(source_lengths: Sequence[int], hypotheses: Sequence[str], references: Sequence[str],
                   buckets: Sequence[tuple[int, int]]) -> list[dict]:
    """Corpus BLEU within each source-length bucket: rows ``{"bucket", "lo", "hi", "n", "bleu"}``.

    A bucket with no sentences gets ``bleu = nan`` and ``n = 0``.
    """
    source_lengths = check_int_sequence(source_lengths, "source_lengths")
    if not len(source_lengths) == len(hypotheses) == len(references):
        raise ValueError("source_lengths, hypotheses and references must have the same length, got "
                         f"{len(source_lengths)}, {len(hypotheses)}, {len(references)}")
    for bucket in buckets:
        if not (isinstance(bucket, (tuple, list)) and len(bucket) == 2
                and all(isinstance(v, int) and not isinstance(v, bool) for v in bucket)):
            raise TypeError(f"buckets must hold (lo, hi) pairs of ints, got {bucket!r}")
    rows = []
    for lo, hi in buckets:
        if lo > hi:
            raise ValueError(f"bucket ({lo}, {hi}) is empty: expected lo <= hi")
        idx = [i for i, n in enumerate(source_lengths) if lo <= n <= hi]
        score = corpus_bleu([hypotheses[i] for i in idx], [references[i] for i in idx]) if idx else float("nan")
        rows.append({"bucket": f"{lo}-{hi}", "lo": lo, "hi": hi, "n": len(idx), "bleu": score})
    return rows


@dataclass
class BleuReport:
    """Result of :meth:`TranslationData.evaluate`."""

    bleu: float
    by_length: list[dict]
    sources: list[str]
    hypotheses: list[str]
    references: list[str]
    chrf: float = float("nan")

    @property
    def exact(self) -> float:
        """Fraction of hypotheses equal to their reference."""
        if not self.references:
            raise ValueError("exact is undefined for a report without references")
        return sum(h == r for h, r in zip(self.hypotheses, self.references)) / len(self.references)

    def examples(self, k: int = 5) -> list[dict]:
        """The first ``k`` (source, reference, hypothesis) triples, for display."""
        _check_count(k, "k")
        return [{"source": s, "reference": r, "hypothesis": h}
                for s, r, h in zip(self.sources[:k], self.references[:k], self.hypotheses[:k])]

"""Evaluation measures used across the course: perplexity, accuracy, BLEU, distinct-n."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch


def perplexity(mean_nll: float) -> float:
    """Perplexity = exp(mean negative log-likelihood per token, in nats)."""
    if not math.isfinite(mean_nll) or mean_nll < 0:
        raise ValueError(f"mean_nll must be a finite non-negative number of nats, got {mean_nll}")
    return math.exp(mean_nll)


def accuracy(pred: torch.Tensor | Sequence[int], target: torch.Tensor | Sequence[int]) -> float:
    """Fraction of equal entries; ``pred`` may be class ids or logits (argmax over the last dim)."""
    pred_t, target_t = torch.as_tensor(pred), torch.as_tensor(target)
    if pred_t.dim() == target_t.dim() + 1:
        pred_t = pred_t.argmax(-1)
    if pred_t.shape != target_t.shape:
        raise ValueError(f"pred shape {tuple(pred_t.shape)} does not match target shape {tuple(target_t.shape)}")
    if target_t.numel() == 0:
        raise ValueError("accuracy of an empty set is undefined")
    return (pred_t == target_t).float().mean().item()


def bleu(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Corpus BLEU (Papineni et al. 2002) with sacrebleu's standard settings, on detokenised strings."""
    import sacrebleu

    if isinstance(hypotheses, str) or isinstance(references, str):
        raise TypeError("bleu expects lists of strings (one per sentence), got a single string")
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    if not hypotheses:
        raise ValueError("bleu needs at least one sentence")
    return sacrebleu.corpus_bleu(list(hypotheses), [list(references)]).score


def distinct_n(texts: Sequence[Sequence[str]] | Sequence[str], n: int) -> float:
    """distinct-n (Li et al. 2016): unique n-grams / total n-grams over all texts.

    Each text is a token list, or a string split into characters (for character-level models).
    """
    if n < 1:
        raise ValueError(f"n must be ≥ 1, got {n}")
    grams, total = set(), 0
    for text in texts:
        tokens = list(text)
        for i in range(len(tokens) - n + 1):
            grams.add(tuple(tokens[i:i + n]))
            total += 1
    if total == 0:
        raise ValueError(f"no {n}-grams in the given texts")
    return len(grams) / total

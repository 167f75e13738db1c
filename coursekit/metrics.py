"""Evaluation measures used across the course: perplexity, accuracy, BLEU, distinct-n."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import torch

from coursekit.checks import check_finite, check_positive_int


def perplexity(mean_nll: float) -> float:
    """Perplexity = exp(mean negative log-likelihood per token, in nats)."""
    if isinstance(mean_nll, torch.Tensor) and mean_nll.numel() == 1:
        mean_nll = mean_nll.item()
    if isinstance(mean_nll, bool) or not isinstance(mean_nll, numbers.Real):
        raise TypeError(f"mean_nll must be a number, got {type(mean_nll).__name__}")
    if not math.isfinite(mean_nll) or mean_nll < 0:
        raise ValueError(f"mean_nll must be a finite non-negative number of nats, got {mean_nll}")
    return math.exp(mean_nll)


def accuracy(pred: torch.Tensor | Sequence[int], target: torch.Tensor | Sequence[int]) -> float:
    """Fraction of equal entries; ``pred`` may be class ids or logits (argmax over the last dim).

    Class ids must be integers: probabilities of the shape of ``target`` (e.g. ``sigmoid`` outputs) are an
    error, not compared with the ids; NaN logits are an error, not an arg-max.
    """
    pred_t, target_t = torch.as_tensor(pred), torch.as_tensor(target)
    if target_t.is_floating_point() or target_t.is_complex() or target_t.dtype == torch.bool:
        raise TypeError(f"target must hold integer class ids, got {target_t.dtype}")
    if pred_t.dim() == target_t.dim() + 1:
        check_finite(pred_t, "pred")
        pred_t = pred_t.argmax(-1)
    elif pred_t.is_floating_point() or pred_t.dtype == torch.bool:
        raise TypeError(f"pred must hold class ids (integers) or logits with one more dim than target, got "
                        f"{pred_t.dtype} of shape {tuple(pred_t.shape)} for target of shape {tuple(target_t.shape)}")
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
    for name, sentences in (("hypotheses", hypotheses), ("references", references)):
        for s in sentences:
            if not isinstance(s, str):
                raise TypeError(f"{name} must hold str sentences, got {type(s).__name__}")
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    if not hypotheses:
        raise ValueError("bleu needs at least one sentence")
    return sacrebleu.corpus_bleu(list(hypotheses), [list(references)]).score


def distinct_n(texts: Sequence[Sequence[str]] | Sequence[str], n: int) -> float:
    """distinct-n (Li et al. 2016): unique n-grams / total n-grams over all texts.

    Each text is a token list, or a string split into characters (for character-level models).
    """
    check_positive_int(n, "n")
    if isinstance(texts, str):
        raise TypeError("texts must be a list of texts, got a single str (wrap it in a list)")
    grams, total = set(), 0
    for text in texts:
        tokens = list(text)
        for i in range(len(tokens) - n + 1):
            grams.add(tuple(tokens[i:i + n]))
            total += 1
    if total == 0:
        raise ValueError(f"no {n}-grams in the given texts")
    return len(grams) / total

"""Evaluation measures used across the course: perplexity, accuracy, BLEU, distinct-n, and the fair
comparison of two starting points (each with its own learning rate, chosen off the test set)."""

from __future__ import annotations

import math
import numbers
import statistics
from collections.abc import Sequence
from sys import float_info

import torch

from coursekit.validation import check_finite, check_positive_int


def perplexity(mean_nll: float) -> float:
    """Perplexity = exp(mean negative log-likelihood per token, in nats).

    A loss beyond the float range of ``exp`` (about 709.8 nats) gives ``math.inf``, as ``torch.exp`` would.
    """
    if isinstance(mean_nll, torch.Tensor) and mean_nll.numel() == 1:
        mean_nll = mean_nll.item()
    if isinstance(mean_nll, bool) or not isinstance(mean_nll, numbers.Real):
        raise TypeError(f"mean_nll must be a number, got {type(mean_nll).__name__}")
    if not math.isfinite(mean_nll) or mean_nll < 0:
        raise ValueError(f"mean_nll must be a finite non-negative number of nats, got {mean_nll}")
    return math.exp(mean_nll) if mean_nll < math.log(float_info.max) else math.inf


def accuracy(pred: torch.Tensor | Sequence[int], target: torch.Tensor | Sequence[int]) -> float:
    """Fraction of equal entries; ``pred`` may be class ids or logits (argmax over the last dim).

    Class ids must be integers: probabilities of the shape of ``target`` (e.g. ``sigmoid`` outputs) are an
    error, not compared with the ids; NaN logits are an error, not an arg-max.
    """
    pred_t, target_t = torch.as_tensor(pred), torch.as_tensor(target)
    if target_t.numel() == 0 and pred_t.numel() == 0:
        raise ValueError("accuracy of an empty set is undefined: pred and target hold no entries")
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


def select_then_test(rows: Sequence[dict], lrs: Sequence[float],
                     inits: Sequence[str] = ("pretrained", "random")) -> dict:
    """A fair comparison of starting points: each ``init`` gets the learning rate with the best mean
    ``"select"`` accuracy over its seeds (sentences outside the test set), and only then is its
    ``"test"`` accuracy at that rate read (mean ± sd over seeds). ``rows``: one dict per run with keys
    ``init``, ``lr``, ``seed``, ``select``, ``test``. Picking each rate on the test set would flatter
    both; one shared rate would favour whichever start it happens to suit."""
    if isinstance(rows, (str, dict)) or not isinstance(rows, Sequence) or not rows:
        raise TypeError(f"rows must be a non-empty list of run dicts, got {type(rows).__name__}")
    needed = {"init", "lr", "seed", "select", "test"}
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not needed <= set(row):
            raise ValueError(f"rows[{i}] must be a dict with keys {sorted(needed)}, got {row!r:.100}")
    if isinstance(lrs, (str, bytes)) or not isinstance(lrs, Sequence) or not lrs:
        raise TypeError(f"lrs must be a non-empty sequence of learning rates, got {lrs!r:.60}")
    if isinstance(inits, str) or not isinstance(inits, Sequence) or not inits:
        raise TypeError(f"inits must be a sequence of init names such as ('pretrained', 'random'), got {inits!r:.60}")
    summary = {}
    for init in inits:
        mine = [r for r in rows if r["init"] == init]
        tried = [lr for lr in lrs if any(r["lr"] == lr for r in mine)]
        if not tried:
            raise ValueError(f"no runs of init {init!r} at any of the learning rates {list(lrs)}")
        chosen = max(tried, key=lambda lr: statistics.mean(r["select"] for r in mine if r["lr"] == lr))
        test = [r["test"] for r in mine if r["lr"] == chosen]
        summary[init] = {"chosen_lr": chosen, "mean": round(statistics.mean(test), 4),
                         "sd": round(statistics.stdev(test), 4) if len(test) > 1 else 0.0, "values": test}
    if len(inits) == 2:
        summary["difference"] = round(summary[inits[0]]["mean"] - summary[inits[1]]["mean"], 4)
    return summary

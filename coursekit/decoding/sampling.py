"""Sampling the next token: temperature, top-k and nucleus (top-p) filtering.

A language model gives logits z over the vocabulary; decoding turns them into one token.

* Temperature (Ackley et al. 1985; used for text by Graves 2013): p_i = softmax(z / T)_i.
  T → 0 is greedy (argmax), T = 1 the model's distribution, T > 1 flatter.
* Top-k (Fan et al. 2018, "Hierarchical Neural Story Generation"): keep the k largest logits,
  renormalise over them.
* Nucleus / top-p (Holtzman et al. 2020, "The Curious Case of Neural Text Degeneration", Eq. 2):
  keep the smallest set V^(p) of most likely tokens with Σ_{x ∈ V^(p)} P(x) ≥ p, renormalise.

Filters work on logits and set the removed entries to ``-inf`` so that ``softmax`` renormalises
over the kept set. Ties at the top-k boundary are all kept (the kept set does not depend on the
order in which equal logits happen to be stored).

Logits may hold ``-inf`` (a token that can never be drawn) but not NaN or ``+inf``, and every row
needs at least one finite logit: otherwise the softmax is NaN and the draw is meaningless.
"""

from __future__ import annotations

import torch

from coursekit.validation import check_tensor

__all__ = ["apply_temperature", "top_k_filter", "top_p_filter", "filter_logits", "sample_next"]


def _check_scores(scores: torch.Tensor, name: str) -> torch.Tensor:
    """Scores over a vocabulary (logits or log-probabilities): no NaN, no ``+inf``, and at least one finite
    value per row (``-inf`` marks a token that cannot be chosen). One reduction when all is well."""
    finite = torch.isfinite(scores)
    if bool(finite.all()):
        return scores
    n_nan, n_posinf = int(torch.isnan(scores).sum()), int(torch.isposinf(scores).sum())
    if n_nan:
        raise ValueError(f"{name} must not contain NaN, got {n_nan} NaN")
    if n_posinf:
        raise ValueError(f"{name} must not contain +inf, got {n_posinf}")
    n_empty = int((~finite.any(dim=-1)).sum())
    if n_empty:
        raise ValueError(f"every row of {name} needs at least one finite value; "
                         f"{n_empty} row{' is' if n_empty == 1 else 's are'} all -inf")
    return scores


def _check_logits(logits: torch.Tensor) -> torch.Tensor:
    check_tensor(logits, "logits", floating=True)
    if logits.dim() == 0 or logits.shape[-1] == 0:
        raise ValueError(f"logits must have a non-empty last (vocabulary) dimension, got shape {tuple(logits.shape)}")
    if logits.numel() == 0:
        raise ValueError(f"logits must hold at least one row, got shape {tuple(logits.shape)}")
    return _check_scores(logits, "logits")


def _check_top_k(k) -> None:
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"top_k must be an int, got {type(k).__name__}")
    if k <= 0:
        raise ValueError(f"top_k must be positive, got {k}")


def _check_top_p(p) -> None:
    if isinstance(p, bool) or not isinstance(p, (int, float)):
        raise TypeError(f"top_p must be a number, got {type(p).__name__}")
    if not 0.0 < p <= 1.0:
        raise ValueError(f"top_p must lie in (0, 1], got {p}")


def apply_temperature(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """Divide logits by the temperature T > 0: softmax(z / T)."""
    _check_logits(logits)
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)):
        raise TypeError(f"temperature must be a number, got {type(temperature).__name__}")
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0 (use greedy decoding for T = 0), got {temperature}")
    return logits / temperature


def top_k_filter(logits: torch.Tensor, k: int) -> torch.Tensor:
    """Keep the k largest logits in the last dim (and any tied with the k-th), set the rest to -inf.

    ``k >= V`` keeps everything.
    """
    _check_logits(logits)
    _check_top_k(k)
    if k >= logits.shape[-1]:
        return logits
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]                 # (..., 1) the k-th largest
    return logits.masked_fill(logits < kth, float("-inf"))


def top_p_filter(logits: torch.Tensor, p: float) -> torch.Tensor:
    """Nucleus filtering: keep the smallest set of most likely tokens whose probability sum is ≥ p.

    A token is kept when the probability mass of the tokens *strictly before it* in the sorted
    order is < p, so the most likely token is always kept and the token that crosses p is included.
    ``p = 1`` keeps everything.
    """
    _check_logits(logits)
    _check_top_p(p)
    if p == 1.0:
        return logits
    sorted_logits, order = torch.sort(logits, dim=-1, descending=True)
    probs = torch.softmax(sorted_logits, dim=-1)
    mass_before = torch.cumsum(probs, dim=-1) - probs                     # exclusive cumulative sum
    remove_sorted = mass_before >= p
    remove = torch.zeros_like(remove_sorted).scatter(-1, order, remove_sorted)
    return logits.masked_fill(remove, float("-inf"))


def filter_logits(logits: torch.Tensor, *, temperature: float = 1.0, top_k: int | None = None,
                  top_p: float | None = None) -> torch.Tensor:
    """Temperature, then top-k, then top-p (the order of Hugging Face ``generate``)."""
    logits = apply_temperature(logits, temperature)
    if top_k is not None:
        logits = top_k_filter(logits, top_k)
    if top_p is not None:
        logits = top_p_filter(logits, top_p)
    return logits


def sample_next(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
                top_p: float | None = None, generator: torch.Generator | None = None) -> torch.Tensor:
    """Draw the next token id from logits of shape (B, V) (or (V,)); returns (B,) (or a 0-d tensor).

    ``temperature=0`` means greedy (argmax); ``top_k`` / ``top_p`` are still checked (and cannot change
    the argmax). A seeded ``generator`` makes the draw reproducible.
    """
    _check_logits(logits)
    if logits.dim() > 2:
        raise ValueError(f"logits must have shape (B, V) or (V,), got {tuple(logits.shape)}")
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator or None, got {type(generator).__name__}")
    if temperature == 0:
        if top_k is not None:
            _check_top_k(top_k)
        if top_p is not None:
            _check_top_p(top_p)
        return logits.argmax(dim=-1)
    filtered = filter_logits(logits, temperature=temperature, top_k=top_k, top_p=top_p)
    probs = torch.softmax(filtered.float(), dim=-1)
    flat = probs.reshape(-1, probs.shape[-1])                              # (B, V)
    if generator is not None and generator.device != flat.device:
        ids = torch.multinomial(flat.cpu(), 1, generator=generator).to(flat.device)
    else:
        ids = torch.multinomial(flat, 1, generator=generator)
    return ids.reshape(logits.shape[:-1])

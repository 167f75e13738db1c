"""Induction heads: attention maps, induction and previous-token scores, knock-outs (notebook 12).

Olsson et al. (2022), *In-context Learning and Induction Heads*: at a token ``A`` an **induction head**
attends to the token that *followed* the previous occurrence of ``A`` and copies it (``… A B … A → B``).
It takes two layers: a **previous-token head** first writes into each position which token preceded it;
the induction head's query (``A``) then matches those keys. Both are measured on sequences of random
tokens repeated twice, ``r_1 … r_p r_1 … r_p``, where the second half can only be predicted by copying:

* induction score of a head: its mean attention from a query at position i of the repeated half to key
  i − p + 1 (:func:`induction_scores`);
* previous-token score: its mean attention from position i to i − 1 (:func:`previous_token_scores`).

Uniform causal attention scores about 0.04 on p = 16. :func:`ablate_heads` zeroes chosen heads (a
knock-out), and ``python -m coursekit.gpt induction --json`` prints every head's scores for the
committed model of ``data/icl``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import torch

from coursekit.gpt.model import GPT, _check_gpt
from coursekit.validation import ID_DTYPES, check_positive_int, check_tensor, check_token_ids
from coursekit.validation import check_count as _check_count
from coursekit.validation import check_generator as _check_generator

__all__ = ["attention_maps", "repeated_random_tokens", "induction_scores", "previous_token_scores",
           "uniform_induction_score", "ablate_heads", "head_scores"]


@torch.no_grad()
def attention_maps(model: GPT, idx: torch.Tensor) -> torch.Tensor:
    """Attention weights of every layer and head: (n_layers, B, H, T, T).

    ``coursekit.gpt.model.GPT.forward`` does not return attention weights, so this re-runs its forward
    pass (the same embeddings, blocks and causal mask) asking each block for ``need_weights=True``.
    """
    _check_gpt(model)
    check_tensor(idx, "idx", ndim=2)
    check_token_ids(idx, "idx", model.config.vocab_size)
    T = idx.shape[1]
    if T == 0:
        raise ValueError(f"idx must hold at least one token per row, got shape {tuple(idx.shape)}")
    if T > model.config.max_len:
        raise ValueError(f"idx has {T} tokens, more than the model's context max_len={model.config.max_len}")
    model.eval()
    x = model.wte(idx) + model.wpe(idx.shape[1], 0)                         # (B, T, C)
    maps = []
    for block in model.blocks:
        x, w = block(x, causal=True, need_weights=True)
        maps.append(w["self"])                                              # (B, H, T, T)
    return torch.stack(maps)


def repeated_random_tokens(n: int, period: int, vocab: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """(n, 2·period) sequences ``r_1 … r_p r_1 … r_p`` of distinct random tokens drawn from ``vocab``:
    the second half can only be predicted by copying (Olsson et al. 2022)."""
    check_positive_int(n, "n")
    check_positive_int(period, "period")
    check_tensor(vocab, "vocab", ndim=1, dtype=ID_DTYPES)
    _check_generator(generator)
    if period > len(vocab):
        raise ValueError(f"period={period} needs that many distinct tokens, vocab has {len(vocab)}")
    first = torch.stack([vocab[torch.randperm(len(vocab), generator=generator)[:period]] for _ in range(n)])
    return torch.cat([first, first], dim=1)                                 # (n, 2p)


def induction_scores(attn: torch.Tensor, period: int) -> torch.Tensor:
    """Induction score of each head: the mean attention that a query at position i of the repeated
    half pays to key i - period + 1 — the token *after* the previous occurrence of token i.

    ``attn`` (..., T, T) with T = 2·period; returns (...) (e.g. (n_layers, H) after averaging the batch
    dimension yourself, or pass (n_layers, B, H, T, T) and take ``.mean(1)``).
    """
    check_positive_int(period, "period")
    _check_attention(attn)
    T = attn.shape[-1]
    if attn.shape[-2] != T or T != 2 * period:
        raise ValueError(f"attn must be (..., T, T) with T = 2·period = {2 * period}, got {tuple(attn.shape)}")
    q = torch.arange(period, T)                                             # queries in the repeated half
    return attn[..., q, q - period + 1].mean(-1)


def previous_token_scores(attn: torch.Tensor) -> torch.Tensor:
    """Previous-token score of each head: mean attention from position i to i − 1 (i ≥ 1); (..., T, T) → (...)."""
    _check_attention(attn)
    T = attn.shape[-1]
    if attn.shape[-2] != T or T < 2:
        raise ValueError(f"attn must be (..., T, T) with T >= 2, got {tuple(attn.shape)}")
    i = torch.arange(1, T)
    return attn[..., i, i - 1].mean(-1)


def _check_attention(attn) -> None:
    check_tensor(attn, "attn", floating=True)
    if attn.dim() < 2:
        raise ValueError(f"attn must have at least 2 dimensions (..., T, T), got shape {tuple(attn.shape)}")


def uniform_induction_score(period: int) -> float:
    """The induction score of uniform causal attention: query i spreads 1/(i + 1) over keys 0…i."""
    check_positive_int(period, "period")
    q = torch.arange(period, 2 * period, dtype=torch.float64)
    return (1 / (q + 1)).mean().item()


@contextlib.contextmanager
def ablate_heads(model: GPT, heads: Sequence[tuple[int, int]]):
    """Inside the ``with`` block, the outputs of the given (layer, head) pairs are zeroed before W^O
    (a knock-out experiment: does accuracy depend on these heads?)."""
    _check_gpt(model)
    n_layers, n_heads = model.config.n_layers, model.config.n_heads
    for pair in heads:                                  # all pairs first: a wrong one must not leave hooks behind
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            raise TypeError(f"heads must be a list of (layer, head) pairs, got {pair!r}")
        for name, value, n in (("layer", pair[0], n_layers), ("head", pair[1], n_heads)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int, got {type(value).__name__}")
            if not 0 <= value < n:
                raise ValueError(f"{name} must lie in 0…{n - 1}, got {value}")
    hooks = []
    for layer, head in heads:
        attn = model.blocks[layer].self_attn
        sl = slice(head * attn.d_head, (head + 1) * attn.d_head)

        def zero_head(module, args, sl=sl):
            x = args[0].clone()                                             # (B, T, H·D): merged heads
            x[..., sl] = 0.0
            return (x,)
        hooks.append(attn.out_proj.register_forward_pre_hook(zero_head))
    try:
        yield model
    finally:
        for h in hooks:
            h.remove()



@torch.no_grad()
def head_scores(model: GPT, vocab: torch.Tensor, *, n: int = 64, period: int = 16, seed: int = 0) -> dict:
    """Induction and previous-token score of every head on ``n`` fresh repeated random sequences.

    Returns ``{"induction": [[…per head…] per layer], "previous_token": …, "best_head": [layer, head],
    "best_score": …, "uniform": …, "period": …, "n": …, "seed": …}`` (plain lists: JSON-ready).
    """
    _check_gpt(model)
    _check_count(seed, "seed")
    rep = repeated_random_tokens(n, period, vocab, torch.Generator().manual_seed(seed))
    maps = attention_maps(model, rep)                                       # (n_layers, B, H, T, T)
    induction = induction_scores(maps, period).mean(1)                      # (n_layers, H)
    best = divmod(int(induction.argmax()), induction.shape[1])
    return {"induction": [[round(v, 4) for v in row] for row in induction.tolist()],
            "previous_token": [[round(v, 4) for v in row] for row in previous_token_scores(maps).mean(1).tolist()],
            "best_head": list(best), "best_score": round(induction.max().item(), 4),
            "uniform": round(uniform_induction_score(period), 4), "period": period, "n": n, "seed": seed}

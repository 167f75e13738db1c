"""Training speed of the course's translation Transformer against ``torch.nn.Transformer``, side by side.

A slow from-scratch model is a worse lesson: the class profile gets fewer updates in its minutes. This
module times one training update (forward, backward, Adam step) of the course's
:class:`~coursekit.transformer.model.Transformer` and of a model of the same size built on
``torch.nn.Transformer`` (same embeddings, positions, tied output layer, masks, dropout), on the *same*
benchmark batches, alternating the two so that a change in machine load hits both alike.

``python -m coursekit.translation throughput [--updates N] [--json]`` prints target tokens per second
of both and their ratio (ours ÷ torch, > 1 = ours faster).
"""

from __future__ import annotations

import math
import os
import time
import warnings

import torch
import torch.nn.functional as F
from torch import nn

from coursekit.text import token_batches
from coursekit.transformer.layers import sinusoidal_positions
from coursekit.transformer.model import Transformer, TransformerConfig
from coursekit.translation.benchmark import load_benchmark
from coursekit.translation.core import TranslationData
from coursekit.translation.recipes import RECIPES
from coursekit.validation import check_bool_mask, check_positive_int, check_tensor, check_token_ids
from coursekit.validation import check_count as _check_count

__all__ = ["TorchTransformerMT", "compare"]


class TorchTransformerMT(nn.Module):
    """The recipe's translation model with ``nn.Transformer`` as its encoder–decoder (the reference)."""

    def __init__(self, c: TransformerConfig) -> None:
        super().__init__()
        if not isinstance(c, TransformerConfig):
            raise TypeError(f"c must be a TransformerConfig, got {type(c).__name__}")
        self.config = c
        self.embed = nn.Embedding(c.tgt_vocab_size, c.d_model)
        nn.init.normal_(self.embed.weight, std=c.d_model ** -0.5)
        self.register_buffer("pe", sinusoidal_positions(c.max_len, c.d_model), persistent=False)
        self.dropout = nn.Dropout(c.dropout)
        with warnings.catch_warnings():  # "enable_nested_tensor is True, but ... norm_first": irrelevant here
            warnings.simplefilter("ignore", UserWarning)
            self.core = nn.Transformer(c.d_model, c.n_heads, c.n_encoder_layers, c.n_decoder_layers, c.d_ff,
                                       c.dropout, activation=c.activation, batch_first=True,
                                       norm_first=c.norm_first)

    def _in(self, ids: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.embed(ids) * math.sqrt(self.config.d_model) + self.pe[: ids.shape[1]])

    def forward(self, src, tgt_in, src_keep, tgt_keep):
        c = self.config
        for name, ids, vocab_size in (("src", src, c.tgt_vocab_size), ("tgt_in", tgt_in, c.tgt_vocab_size)):
            check_tensor(ids, name, ndim=2)
            check_token_ids(ids, name, vocab_size)            # one (target) embedding table serves both sides
            if ids.shape[1] > c.max_len:
                raise ValueError(f"{name} has {ids.shape[1]} positions, more than max_len={c.max_len}")
        check_bool_mask(src_keep, "src_keep", src.shape)
        check_bool_mask(tgt_keep, "tgt_keep", tgt_in.shape)
        T = tgt_in.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=src.device).triu(1)   # True = may not attend
        h = self.core(self._in(src), self._in(tgt_in), tgt_mask=causal, src_key_padding_mask=~src_keep,
                      tgt_key_padding_mask=~tgt_keep, memory_key_padding_mask=~src_keep, tgt_is_causal=True)
        return h @ self.embed.weight.T  # tied output layer


def _update(model, opt, batch, label_smoothing=0.1) -> int:
    logits = model(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.tgt_out.reshape(-1), ignore_index=0,
                           label_smoothing=label_smoothing)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return int(batch.tgt_mask.sum())


def compare(data=None, *, updates: int = 20, warmup: int = 3, max_tokens: int = 3000) -> dict:
    """Tokens per second of both models over the same ``updates`` batches (after ``warmup`` untimed ones)."""
    if data is not None and not isinstance(data, TranslationData):
        raise TypeError(f"data must be a TranslationData or None, got {type(data).__name__}")
    check_positive_int(updates, "updates")
    _check_count(warmup, "warmup")
    check_positive_int(max_tokens, "max_tokens")

    data = data or load_benchmark(n_valid=0)
    cfg = TransformerConfig(len(data.tgt_vocab), len(data.tgt_vocab), **RECIPES["transformer"].arch)
    torch.manual_seed(0)
    models = {"ours": Transformer(cfg), "torch": TorchTransformerMT(cfg)}
    opts = {n: torch.optim.Adam(m.parameters(), lr=1e-4) for n, m in models.items()}
    src_len, tgt_len = data.lengths("train")
    order = token_batches(src_len, tgt_len, max_tokens, torch.Generator().manual_seed(0))[: warmup + updates]
    seconds = {n: 0.0 for n in models}
    tokens = 0
    for i, index in enumerate(order):
        batch = data.make_batch(index)
        for name in (("ours", "torch") if i % 2 else ("torch", "ours")):     # alternate who goes first
            start = time.perf_counter()
            n = _update(models[name].train(), opts[name], batch)
            if i >= warmup:
                seconds[name] += time.perf_counter() - start
        tokens += n if i >= warmup else 0
    per_s = {n: tokens / s for n, s in seconds.items()}
    return {"name": "translation Transformer (recipe size) vs nn.Transformer", "updates": updates,
            "target_tokens": tokens, "ours_per_s": round(per_s["ours"], 1), "reference_per_s": round(per_s["torch"], 1),
            "ratio": round(per_s["ours"] / per_s["torch"], 3), "torch_threads": torch.get_num_threads(),
            "load_average": os.getloadavg()[0], "torch": torch.__version__}

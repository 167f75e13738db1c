"""Checks for the exercises of notebook 02 (text classifiers): BOW scores, the DAN forward pass,
max-over-time pooling with a padding mask.

What the student writes (``mask`` is a (B, T) bool tensor, True at real tokens):

* ``bow_logits(ids, mask, scores, bias)`` — ids (B, T) long, scores (V, C) one score per word and
  class, bias (C,); returns (B, C): the sum of the scores of the real tokens plus the bias.
* ``dan_forward(emb, mask, W1, b1, W2, b2)`` — emb (B, T, d) embedded tokens; returns the logits
  (B, C) = W2 · ReLU(W1 · mean_real_tokens(emb) + b1) + b2 (Iyyer et al. 2015, no dropout).
* ``max_over_time(x, mask)`` — x (B, T, F) feature maps; returns (B, F), the maximum over the real
  positions only (Kim 2014), even when every real value is negative.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from coursekit.classifiers import masked_max, masked_mean
from coursekit.exercises.core import exercise_check, expect_close, require_function, run_student

__all__ = ["check_bow_logits", "check_dan_forward", "check_max_over_time"]


def _mask(lengths: list[int], T: int) -> torch.Tensor:
    return torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]          # (B, T)


# ----------------------------------------------------------------------------- BOW


def _bow_cases():
    g = torch.Generator().manual_seed(0)
    V, C = 12, 3
    scores = torch.randn(V, C, generator=g)           # the padding row 0 is NOT zero: masking must matter
    bias = torch.randn(C, generator=g)
    mask = _mask([4, 2, 1], 5)
    ids = torch.randint(1, V, (3, 5), generator=g).masked_fill(~mask, 0)
    return [("ids (3, 5) with lengths [4, 2, 1], V=12, C=3", ids, mask, scores, bias),
            ("one sentence of 3 tokens, no padding", ids[:1, :3], mask[:1, :3], scores, bias)]


@exercise_check("bag-of-words logits", reimplements=("coursekit.classifiers.BOW",))
def check_bow_logits(bow_logits: Callable[..., torch.Tensor]) -> None:
    """Check ``bow_logits(ids, mask, scores, bias)`` = Σ over real tokens of scores[id] + bias."""
    require_function(bow_logits, "bow_logits")
    for case, ids, mask, scores, bias in _bow_cases():
        got = run_student(bow_logits, case, ids.clone(), mask.clone(), scores.clone(), bias.clone())
        per_token = scores[ids]                                               # (B, T, C)
        m = mask.unsqueeze(-1)
        want = (per_token * m).sum(1) + bias
        expect_close(got, want, case=case, what="the logits", mistakes={
            "the padding positions were counted: multiply by the mask before summing": per_token.sum(1) + bias,
            "the bias is missing": (per_token * m).sum(1),
            "the scores were averaged; a bag of words sums them": masked_mean(per_token, mask) + bias,
        })


# ----------------------------------------------------------------------------- DAN


def _dan_cases():
    g = torch.Generator().manual_seed(1)
    d, H, C = 4, 5, 2
    W1, b1 = torch.randn(H, d, generator=g), torch.randn(H, generator=g)
    W2, b2 = torch.randn(C, H, generator=g), torch.randn(C, generator=g)
    emb = torch.randn(3, 6, d, generator=g) + 1.0
    mask = _mask([6, 3, 1], 6)
    emb = emb.masked_fill(~mask.unsqueeze(-1), 0.0)                            # padding embeds to zero
    return [("emb (3, 6, 4) with lengths [6, 3, 1], hidden 5, 2 classes", emb, mask, W1, b1, W2, b2)]


@exercise_check("DAN forward pass", reimplements=("coursekit.classifiers.DAN", "coursekit.classifiers.masked_mean"))
def check_dan_forward(dan_forward: Callable[..., torch.Tensor]) -> None:
    """Check the Deep Averaging Network forward pass (average → ReLU layer → linear)."""
    require_function(dan_forward, "dan_forward")
    for case, emb, mask, W1, b1, W2, b2 in _dan_cases():
        got = run_student(dan_forward, case, emb.clone(), mask.clone(), W1, b1, W2, b2)

        def head(z, act=torch.relu, W1=W1, b1=b1, W2=W2, b2=b2):
            return act(z @ W1.T + b1) @ W2.T + b2

        want = head(masked_mean(emb, mask))
        expect_close(got, want, case=case, what="the logits", mistakes={
            "the average includes the padding (divide by the number of real tokens, mask.sum(1), not by T)":
                head(emb.sum(1) / emb.shape[1]),
            "the embeddings were summed, not averaged": head((emb * mask.unsqueeze(-1)).sum(1)),
            "the ReLU is missing: without a non-linearity the MLP is linear and learns no combination features":
                head(masked_mean(emb, mask), act=lambda x: x),
            "a ReLU was applied to the output layer too: the logits must be able to go negative":
                torch.relu(head(masked_mean(emb, mask))),
        })


# ----------------------------------------------------------------------------- max-over-time pooling


def _pool_cases():
    g = torch.Generator().manual_seed(2)
    x = torch.randn(3, 5, 4, generator=g)
    mask = _mask([5, 2, 3], 5)
    x_pad_big = x.masked_fill(~mask.unsqueeze(-1), 10.0)                       # padding would win if unmasked
    neg = -(torch.rand(2, 4, 3, generator=g) + 0.5)                            # every real value negative
    neg_mask = _mask([4, 2], 4)
    neg = neg.masked_fill(~neg_mask.unsqueeze(-1), 0.0)
    return [("x (3, 5, 4), lengths [5, 2, 3], large values at padding", x_pad_big, mask),
            ("all-negative features (2, 4, 3), lengths [4, 2], zeros at padding", neg, neg_mask)]


@exercise_check("max-over-time pooling with a mask", reimplements=("coursekit.classifiers.masked_max",))
def check_max_over_time(max_over_time: Callable[..., torch.Tensor]) -> None:
    """Check masked max-over-time pooling against :func:`coursekit.classifiers.masked_max`."""
    require_function(max_over_time, "max_over_time")
    for case, x, mask in _pool_cases():
        got = run_student(max_over_time, case, x.clone(), mask.clone())
        want = masked_max(x, mask)
        expect_close(got, want, case=case, what="the pooled features", mistakes={
            "the mask was ignored: padding positions took part in the max": x.max(dim=1).values,
            "padding was filled with 0 instead of −inf, so 0 beats negative features":
                x.masked_fill(~mask.unsqueeze(-1), 0.0).max(dim=1).values,
            "this is mean pooling; Kim's CNN takes the maximum over time": masked_mean(x, mask),
        })

"""Checks for the exercises of notebook 02 (text classifiers): BOW scores, the DAN forward pass,
max-over-time pooling with a padding mask.

What the student writes (``mask`` is a (B, T) bool tensor, True at real tokens; which id the padding
positions hold is not fixed — only the mask says where the padding is):

* ``bow_logits(ids, mask, scores, bias)`` — ids (B, T) int64, scores (V, C) one score per word and
  class, bias (C,); returns a (B, C) float tensor: the sum of the scores of the real tokens plus the bias.
* ``dan_forward(emb, mask, W1, b1, W2, b2)`` — emb (B, T, d) embedded tokens (padding positions hold
  arbitrary, non-zero vectors), W1 (H, d), b1 (H,), W2 (C, H), b2 (C,); returns the logits (B, C) =
  W2 · ReLU(W1 · mean_real_tokens(emb) + b1) + b2 (Iyyer et al. 2015, no dropout, no softmax).
* ``max_over_time(x, mask)`` — x (B, T, F) feature maps; returns (B, F), the maximum over the real
  positions only (Kim 2014), even when every real value is negative.

Every check runs several inputs whose sizes, pad ids and lengths vary (batch size 1, a sentence of one
real token, sentences without padding, square shapes that let a missing ``unsqueeze``/``.T`` run without an
error), computes the reference on its own copies before the student's call, checks the type, shape and
dtype of what comes back, and names the typical mistake whose output the student's matches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from coursekit.embeddings.classifiers import masked_max, masked_mean
from coursekit.exercises.core import (
    CheckFailed,
    case_generator,
    describe,
    exercise_check,
    expect_close,
    mistake_value,
    require_function,
    run_student,
)

__all__ = ["check_bow_logits", "check_dan_forward", "check_max_over_time"]


def _mask(lengths: list[int], T: int) -> torch.Tensor:
    return torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]          # (B, T)


def _expect_float(got: Any, shape: tuple[int, ...], *, case: str, what: str) -> None:
    """``got`` is a float tensor of ``shape``, or the student reads which case and what came back."""
    if isinstance(got, (tuple, list)) and len(got) == 2 and all(isinstance(t, torch.Tensor) for t in got):
        raise CheckFailed(f"on {case}, expected {what} as a {shape} float tensor, got a pair of tensors: "
                          "x.max(dim=...) returns (values, indices); keep .values")
    if not isinstance(got, torch.Tensor):
        raise CheckFailed(f"on {case}, expected {what} as a {shape} float tensor, got {describe(got)}")
    if not got.is_floating_point():
        raise CheckFailed(f"on {case}, expected {what} as a {shape} float tensor, got {describe(got)}")
    if tuple(got.shape) != shape:
        extra = ""
        if got.dim() == len(shape) + 1 and got.shape[1] == 1 and tuple(got.shape[:1] + got.shape[2:]) == shape:
            extra = " (the reduced axis was kept: drop keepdim=True, or squeeze(1))"
        elif tuple(got.shape) == shape[::-1]:
            extra = " (the axes are swapped)"
        raise CheckFailed(f"on {case}, {what} should have shape {shape}, got {tuple(got.shape)}{extra}")


# ----------------------------------------------------------------------------- BOW


def _bow_case(g: torch.Generator, name: str, lengths: list[int], T: int, V: int, C: int, pad: int | None,
              zero_token: bool = False):
    """ids (B, T) with real ids in [0, V) other than ``pad``, padding = ``pad`` (or random ids if None)."""
    scores = torch.randn(V, C, generator=g)           # the padding row is NOT zero: masking must matter
    bias = torch.randn(C, generator=g)
    mask = _mask(lengths, T)
    real = torch.randint(0, V - 1, (len(lengths), T), generator=g)
    if pad is not None:
        real = real + (real >= pad).long()             # skip the pad id
    if zero_token:
        real[0, 0] = 0                                 # a real word whose id is 0
    fill = torch.full_like(real, pad) if pad is not None else torch.randint(0, V, real.shape, generator=g)
    ids = torch.where(mask, real, fill)
    return (name, ids, mask, scores, bias)


def _bow_cases():
    g = case_generator(0)
    return [
        _bow_case(g, "a batch of 1, ids (1, 4) with length 2, V=8, C=4 (T = C), pad id 5", [2], 4, 8, 4, 5),
        _bow_case(g, "ids (3, 5) with lengths [4, 2, 1], V=12, C=3, pad id 0", [4, 2, 1], 5, 12, 3, 0),
        _bow_case(g, "one sentence of 3 tokens, no padding, V=10, C=3", [3], 3, 10, 3, None),
        _bow_case(g, "ids (2, 7) with lengths [7, 3], V=9, C=4, pad id 3, a real word with id 0",
                  [7, 3], 7, 9, 4, 3, zero_token=True),
        _bow_case(g, "ids (4, 6) with lengths [1, 6, 2, 3], V=20, C=2, padding holding arbitrary word ids",
                  [1, 6, 2, 3], 6, 20, 2, None),
        _bow_case(g, "length-1 sentences, ids (3, 1), V=5, C=5", [1, 1, 1], 1, 5, 5, None),
    ]


def _bow_mistakes(ids, mask, scores, bias) -> dict[str, Any]:
    per_token = scores[ids]                                               # (B, T, C)
    m = mask.unsqueeze(-1)
    return {
        "the padding positions were counted: multiply by the mask before summing": per_token.sum(1) + bias,
        "the bias is missing": (per_token * m).sum(1),
        "the scores were averaged; a bag of words sums them": masked_mean(per_token, mask) + bias,
        "the padding was found by comparing the ids with 0 (ids != 0): the pad id is not always 0, and only the "
        "mask says which positions are real": (per_token * (ids != 0).unsqueeze(-1)).sum(1) + bias,
        "the mask was inverted: True marks the real tokens, so keep them (multiply by mask, not ~mask)":
            (per_token * ~m).sum(1) + bias,
        "the bias was added to every token; add it once per sentence, after the sum":
            ((per_token + bias) * m).sum(1),
        "the mask has no trailing axis (mask.unsqueeze(-1)), so it was broadcast over the classes":
            mistake_value(lambda: (per_token * mask).sum(1) + bias),
    }


@exercise_check("bag-of-words logits", reimplements=("coursekit.embeddings.classifiers.BOW",))
def check_bow_logits(bow_logits: Callable[..., torch.Tensor]) -> None:
    """Check ``bow_logits(ids, mask, scores, bias)`` = Σ over real tokens of scores[id] + bias."""
    require_function(bow_logits, "bow_logits")
    for case, ids, mask, scores, bias in _bow_cases():
        want = (scores[ids] * mask.unsqueeze(-1)).sum(1) + bias              # on the check's own copies
        mistakes = _bow_mistakes(ids, mask, scores, bias)
        got = run_student(bow_logits, case, ids.clone(), mask.clone(), scores.clone(), bias.clone())
        _expect_float(got, tuple(want.shape), case=case, what="the matrix of logits")
        expect_close(got, want, case=case, what="the matrix of logits", mistakes=mistakes)


# ----------------------------------------------------------------------------- DAN


def _dan_case(g: torch.Generator, name: str, lengths: list[int], T: int, d: int, H: int, C: int):
    W1, b1 = torch.randn(H, d, generator=g), torch.randn(H, generator=g)
    W2, b2 = torch.randn(C, H, generator=g), torch.randn(C, generator=g)
    mask = _mask(lengths, T)
    emb = torch.randn(len(lengths), T, d, generator=g) + 1.0
    junk = 3.0 + torch.rand(len(lengths), T, d, generator=g)                  # padding vectors are NOT zero
    emb = torch.where(mask.unsqueeze(-1), emb, junk)
    return (name, emb, mask, W1, b1, W2, b2)


def _dan_cases():
    g = case_generator(1)
    return [
        _dan_case(g, "B = T = d = hidden = classes = 3: emb (3, 3, 3) with lengths [2, 3, 1], non-zero padding "
                  "vectors", [2, 3, 1], 3, 3, 3, 3),
        _dan_case(g, "emb (3, 6, 4) with lengths [6, 3, 1], hidden 5, 2 classes, non-zero padding vectors",
                  [6, 3, 1], 6, 4, 5, 2),
        _dan_case(g, "a batch of 1, emb (1, 7, 6) with one real token, hidden 3, 3 classes", [1], 7, 6, 3, 3),
        _dan_case(g, "emb (2, 5, 8) without padding (lengths [5, 5]), hidden 16, 5 classes", [5, 5], 5, 8, 16, 5),
        _dan_case(g, "emb (4, 2, 3) with lengths [2, 1, 2, 1], hidden 6, 2 classes, non-zero padding",
                  [2, 1, 2, 1], 2, 3, 6, 2),
    ]


def _dan_mistakes(emb, mask, W1, b1, W2, b2) -> dict[str, Any]:
    def head(z, act=torch.relu, W1=W1, b1=b1, W2=W2, b2=b2):
        return act(z @ W1.T + b1) @ W2.T + b2

    m = mask.unsqueeze(-1).to(emb.dtype)
    summed = (emb * m).sum(1)
    mean = masked_mean(emb, mask)
    T = emb.shape[1]
    return {
        "the average includes the padding (divide by the number of real tokens, mask.sum(1), not by T)":
            head(emb.sum(1) / T),
        "the padding vectors were summed (they are not zero): multiply the embeddings by the mask before summing":
            head(emb.sum(1) / m.sum(1)),
        "the masked sum was divided by T, the padded length; divide by the number of real tokens, mask.sum(1)":
            head(summed / T),
        "the embeddings were summed, not averaged": head(summed),
        "the masked sum was divided by the number of real tokens in the whole batch (mask.sum()), not per "
        "sentence (mask.sum(1, keepdim=True))": head(summed / m.sum()),
        "mask.sum(1) lacks keepdim=True, so the division by the lengths broadcasts along the wrong axis":
            mistake_value(lambda: head(summed / mask.sum(1))),
        "the mask was inverted: True marks the real tokens, average those":
            mistake_value(lambda: head((emb * ~mask.unsqueeze(-1)).sum(1) / (~mask).sum(1, keepdim=True))),
        "the mask has no trailing axis (mask.unsqueeze(-1)), so it was broadcast over the embedding dimensions":
            mistake_value(lambda: head((emb * mask).sum(1) / mask.sum(1, keepdim=True))),
        "the ReLU is missing: without a non-linearity the MLP is linear and learns no combination features":
            head(mean, act=lambda x: x),
        "a ReLU was applied to the output layer too: the logits must be able to go negative":
            torch.relu(head(mean)),
        "tanh was used as the non-linearity; this DAN uses a ReLU": head(mean, act=torch.tanh),
        "W1 was not transposed: W1 is (H, d), so the hidden layer is z @ W1.T + b1":
            mistake_value(lambda: head(mean, W1=W1.T)),
        "W2 was not transposed: W2 is (C, H), so the logits are h @ W2.T + b2":
            mistake_value(lambda: head(mean, W2=W2.T)),
        "the hidden bias b1 is missing": head(mean, b1=torch.zeros_like(b1)),
        "the output bias b2 is missing": head(mean, b2=torch.zeros_like(b2)),
        "a softmax was applied: return the raw logits (the loss applies log_softmax itself)":
            torch.softmax(head(mean), dim=-1),
    }


@exercise_check("DAN forward pass",
                reimplements=("coursekit.embeddings.classifiers.DAN", "coursekit.embeddings.classifiers.masked_mean"))
def check_dan_forward(dan_forward: Callable[..., torch.Tensor]) -> None:
    """Check the Deep Averaging Network forward pass (average → ReLU layer → linear)."""
    require_function(dan_forward, "dan_forward")
    for case, emb, mask, W1, b1, W2, b2 in _dan_cases():
        want = torch.relu(masked_mean(emb, mask) @ W1.T + b1) @ W2.T + b2     # on the check's own copies
        mistakes = _dan_mistakes(emb, mask, W1, b1, W2, b2)
        got = run_student(dan_forward, case, emb.clone(), mask.clone(), W1.clone(), b1.clone(), W2.clone(),
                          b2.clone())
        _expect_float(got, tuple(want.shape), case=case, what="the matrix of logits")
        expect_close(got, want, case=case, what="the matrix of logits", mistakes=mistakes)


# ----------------------------------------------------------------------------- max-over-time pooling


def _pool_cases():
    g = case_generator(2)
    x = torch.randn(3, 5, 4, generator=g)
    mask = _mask([5, 2, 3], 5)
    x_pad_big = x.masked_fill(~mask.unsqueeze(-1), 10.0)                       # padding would win if unmasked
    neg = -(torch.rand(2, 4, 3, generator=g) + 0.5)                            # every real value negative
    neg_mask = _mask([4, 2], 4)
    neg = neg.masked_fill(~neg_mask.unsqueeze(-1), 0.0)
    sq_mask = _mask([1, 3, 2], 4)                                 # T = F; no row is full, the first the shortest
    sq = torch.where(sq_mask.unsqueeze(-1), torch.randn(3, 4, 4, generator=g),
                     1.5 + torch.randn(3, 4, 4, generator=g))                 # padding often, not always, larger
    deep_mask = _mask([1], 6)
    deep = -1e6 * (1.0 + torch.rand(1, 6, 7, generator=g))                    # real values below -10⁶
    deep = deep.masked_fill(~deep_mask.unsqueeze(-1), -1.0)
    scales_mask = _mask([3, 1], 3)
    scales = torch.randn(2, 3, 5, generator=g) * torch.tensor([1000.0, 0.001])[:, None, None]
    scales = scales.masked_fill(~scales_mask.unsqueeze(-1), 0.5)
    full = torch.randn(2, 1, 3, generator=g)
    return [("T = F = 4: x (3, 4, 4), lengths [1, 3, 2], larger values at padding", sq, sq_mask),
            ("x (3, 5, 4), lengths [5, 2, 3], large values at padding", x_pad_big, mask),
            ("all-negative features (2, 4, 3), lengths [4, 2], zeros at padding", neg, neg_mask),
            ("a batch of 1, x (1, 6, 7) with one real position whose features are all below -10⁶, "
             "-1 at padding", deep, deep_mask),
            ("rows on very different scales (×1000 and ×0.001), x (2, 3, 5), lengths [3, 1], 0.5 at padding",
             scales, scales_mask),
            ("sequences of length 1, x (2, 1, 3), no padding", full, torch.ones(2, 1, dtype=torch.bool))]


def _pool_mistakes(x, mask) -> dict[str, Any]:
    m = mask.unsqueeze(-1)
    return {
        "the mask was ignored: padding positions took part in the max": x.max(dim=1).values,
        "padding was filled with 0 instead of −inf, so 0 beats negative features":
            x.masked_fill(~m, 0.0).max(dim=1).values,
        "this is mean pooling; Kim's CNN takes the maximum over time": masked_mean(x, mask),
        "the mask was inverted: True marks the real tokens (fill ~mask, the padding, with −inf)":
            x.masked_fill(m, float("-inf")).max(dim=1).values,
        "the max was taken over the features (dim=-1), not over time (dim=1)":
            x.masked_fill(~m, float("-inf")).max(dim=-1).values,
        "only the first sentence's length was used for the whole batch (x[:, :length]); each row has its own "
        "length, given by the mask": x[:, :int(mask[0].sum())].max(dim=1).values,
        "the longest length of the batch was used for every row; shorter rows include padding":
            x[:, :int(mask.sum(1).max())].max(dim=1).values,
    }


def _padding_won(got: torch.Tensor, x: torch.Tensor, mask: torch.Tensor, want: torch.Tensor) -> bool:
    """Some wrong entry of ``got`` is no real value of its row and feature, but a padding value or a fill
    constant (≤ 0, above every real value): padding took part in the max."""
    m = mask.unsqueeze(-1)
    real = x.masked_fill(~m, float("nan"))                                     # (B, T, F)
    pad = x.masked_fill(m, float("nan"))
    from_real = (real == got.unsqueeze(1)).any(1)                              # (B, F)
    from_pad = (pad == got.unsqueeze(1)).any(1)
    fill = (got > want) & (got <= 0)                                           # want is the largest real value
    wrong = ~torch.isclose(got.double(), want.double(), rtol=1e-4, atol=1e-5)
    return bool((wrong & ~from_real & (from_pad | fill)).any())


@exercise_check("max-over-time pooling with a mask", reimplements=("coursekit.embeddings.classifiers.masked_max",))
def check_max_over_time(max_over_time: Callable[..., torch.Tensor]) -> None:
    """Check masked max-over-time pooling against :func:`coursekit.embeddings.classifiers.masked_max`."""
    require_function(max_over_time, "max_over_time")
    for case, x, mask in _pool_cases():
        want = masked_max(x, mask)                                             # on the check's own copies
        mistakes = _pool_mistakes(x, mask)
        got = run_student(max_over_time, case, x.clone(), mask.clone())
        if isinstance(got, torch.Tensor) and not got.is_floating_point() and got.shape == want.shape:
            raise CheckFailed(f"on {case}, expected the pooled features as a {tuple(want.shape)} float tensor, got "
                              f"{describe(got)}: these look like positions (argmax / .indices); return the "
                              "maximum values (.values)")
        _expect_float(got, tuple(want.shape), case=case, what="the pooled matrix")
        try:
            expect_close(got, want, case=case, what="the pooled matrix", mistakes=mistakes)
        except CheckFailed as failure:
            if "It looks like" in str(failure) or not _padding_won(got, x, mask, want):
                raise
            raise CheckFailed(f"{str(failure).rstrip('.')}. It looks like a padding position won the max: that "
                              "value is not at any real position of the row. Fill the padding with float('-inf') "
                              "(a finite fill such as -1e4 still beats features below it)") from None

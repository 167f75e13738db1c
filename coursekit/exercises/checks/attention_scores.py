"""Exercise checks for notebook 06 (attention for recurrent decoders).

What the student writes:

* ``additive_score(h, s, W_h, W_s, v)`` — Bahdanau's score vᵀ tanh(W_h h + W_s s_k) for a decoder
  state ``h`` (B, d_h) and encoder states ``s`` (B, S, d_s); ``W_h`` (A, d_h), ``W_s`` (A, d_s),
  ``v`` (A,); returns scores (B, S).
* ``general_score(h, s, W)`` — Luong's bilinear score hᵀ W s_k, ``W`` (d_h, d_s); returns (B, S).
* ``attention_context(scores, values, mask)`` — weights a = softmax over the source positions with
  masked positions (mask False) at 0, and the context c = Σ_k a_k values_k; ``scores`` (B, S),
  ``values`` (B, S, d), ``mask`` (B, S) bool; returns ``(context (B, d), weights (B, S))``.

References: :class:`coursekit.attention.AdditiveScore`, :class:`~coursekit.attention.GeneralScore`
and :func:`~coursekit.attention.masked_softmax`, computed on the check's own copies of the inputs. The
inputs are seeded and vary between cases: sizes (square ones too, where a missing transpose or a missing
sequence axis gives a wrong value instead of an error), batch size 1 and a single source position, masks
with left padding and holes whose pattern differs in every row, padded values that are large and not
zero, score rows on scales 100,000 times apart (a hand-written softmax with the global instead of the
per-row max gives NaN there).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from coursekit.attention import AdditiveScore, GeneralScore, masked_softmax
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

__all__ = ["check_additive_score", "check_general_score", "check_attention_context"]

NEG_INF = float("-inf")



def _scores_tensor(got: Any, shape: tuple, case: str, what: str = "the scores") -> torch.Tensor:
    """``got`` must be a float tensor of ``shape``; else a message naming the case."""
    expected = f"{what}, a float tensor of shape {shape}"
    if not isinstance(got, torch.Tensor):
        raise CheckFailed(f"on {case}, expected {expected}, got {describe(got)}")
    if not got.is_floating_point():
        raise CheckFailed(f"on {case}, expected {expected}, got {describe(got)} (a cast to an integer dtype?)")
    if tuple(got.shape) != shape:
        hint = ""
        if got.numel() == torch.Size(shape).numel():
            hint = " (a leftover size-1 axis? squeeze it, or index [..., 0])"
        raise CheckFailed(f"on {case}, expected {expected}, got {describe(got)}{hint}")
    return got


# ----------------------------------------------------------------------------------------------
# additive (Bahdanau) score
# ----------------------------------------------------------------------------------------------

# (B, S, d_h, d_s, A) and the scales of the decoder states h (None: all 1); the square sizes come first, where a
# missing [:, None] or .T gives wrong values instead of an error
ADDITIVE_CASES = [((3, 3, 4, 4, 4), None), ((2, 4, 3, 3, 5), None), ((3, 6, 4, 2, 3), (0.01, 1.0, 30.0)),
                  ((1, 1, 2, 5, 6), None)]


def _additive_cases():
    for seed, ((B, S, d_h, d_s, A), scales) in enumerate(ADDITIVE_CASES):
        g = case_generator(seed)
        h = torch.randn(B, d_h, generator=g)
        case = f"h {(B, d_h)}, s {(B, S, d_s)}, attention width A={A}"
        if scales is not None:   # decoder states on very different scales: tanh saturates for the large one
            h = h * torch.tensor(scales)[:, None]
            case += f", the rows of h scaled by {scales}"
        yield (case, h, torch.randn(B, S, d_s, generator=g),
               torch.randn(A, d_h, generator=g), torch.randn(A, d_s, generator=g), torch.randn(A, generator=g))


def _reference_additive(h, s, W_h, W_s, v) -> torch.Tensor:
    score = AdditiveScore(W_h.shape[1], W_s.shape[1], W_h.shape[0])
    with torch.no_grad():
        score.W_h.weight.copy_(W_h)
        score.W_s.weight.copy_(W_s)
        score.W_s.bias.zero_()
        score.v.weight.copy_(v[None])
        return score(h[:, None], s)[:, 0]  # (B, S)


def _additive_mistakes(h, s, W_h, W_s, v, want) -> dict[str, Any]:
    def m(fn):
        return mistake_value(fn)

    pre = (h @ W_h.T)[:, None, :] + s @ W_s.T                                   # (B, S, A)
    return {
        "the tanh is missing: score = vᵀ tanh(W_h h + W_s s)": pre @ v,
        "tanh was applied after v (tanh(vᵀ(W_h h + W_s s))): the non-linearity sits inside, before v":
            torch.tanh(pre @ v),
        "a sigmoid was used where Bahdanau's score has tanh": torch.sigmoid(pre) @ v,
        "the query projection W_h h is missing": torch.tanh(s @ W_s.T) @ v,
        "the returned scores are already softmax-normalised: return the raw scores": torch.softmax(want, -1),
        "W_h h was added without a sequence axis: (B, A) against (B, S, A) lines the batch up with the source "
        "positions; use (h @ W_h.T)[:, None, :]": m(lambda: torch.tanh(h @ W_h.T + s @ W_s.T) @ v),
        "the projections are not transposed: W_h h is h @ W_h.T (W_h has shape (A, d_h)), W_s s is s @ W_s.T":
            m(lambda: torch.tanh((h @ W_h)[:, None, :] + s @ W_s) @ v),
        "W_h and W_s are swapped: W_h projects the decoder state h, W_s the encoder states s":
            m(lambda: torch.tanh((h @ W_s.T)[:, None, :] + s @ W_h.T) @ v),
        "v is missing: the tanh features were summed; the score is their dot product with v":
            torch.tanh(pre).sum(-1),
        "v is missing: the tanh features were averaged; the score is their dot product with v":
            torch.tanh(pre).mean(-1),
    }


@exercise_check("additive (Bahdanau) score", reimplements=(
    "coursekit.attention.AdditiveScore", "coursekit.attention.scores.AdditiveScore",
    "coursekit.attention.make_score", "coursekit.attention.scores.make_score"))
def check_additive_score(additive_score: Callable) -> None:
    """``additive_score(h (B, d_h), s (B, S, d_s), W_h (A, d_h), W_s (A, d_s), v (A,)) -> (B, S)``."""
    require_function(additive_score, "additive_score")
    for case, h, s, W_h, W_s, v in _additive_cases():
        want = _reference_additive(h.clone(), s.clone(), W_h.clone(), W_s.clone(), v.clone())
        got = run_student(additive_score, case, h.clone(), s.clone(), W_h.clone(), W_s.clone(), v.clone())
        got = _scores_tensor(got, tuple(want.shape), case)
        expect_close(got, want, case=case, what="the tensor of scores",
                     mistakes=_additive_mistakes(h, s, W_h, W_s, v, want))


# ----------------------------------------------------------------------------------------------
# general (bilinear) score
# ----------------------------------------------------------------------------------------------

def _general_mistakes(h, s, W, want) -> dict[str, Any]:
    Ws = s @ W.T                                                            # (B, S, d_h): W s_k
    d_h = h.shape[-1]
    return {
        "the score ignores W (that is the dot score hᵀ s)": mistake_value(lambda: (s @ h[:, :, None])[..., 0]),
        "W is transposed: the score is hᵀ W s = h · (W s), not h · (Wᵀ s)":
            mistake_value(lambda: (s @ W @ h[:, :, None])[..., 0]),
        "h was multiplied without a sequence axis: (B, d_h) against (B, S, d_h) lines the batch up with the "
        "source positions; use h[:, None, :]": mistake_value(lambda: (Ws * h).sum(-1)),
        "the product was summed over the source positions (dim=1) instead of the features (dim=-1)":
            mistake_value(lambda: (Ws * h[:, None, :]).sum(1)),
        "the scores were divided by sqrt(d): the general score hᵀ W s has no scaling":
            want / d_h ** 0.5 if d_h > 1 else None,
        "the returned scores are already softmax-normalised: return the raw scores": torch.softmax(want, -1),
    }


# (B, S, d_h, d_s); all equal first, where a missing [:, None], .T or a wrong sum axis gives wrong values
GENERAL_SIZES = [(3, 3, 3, 3), (2, 5, 4, 4), (3, 3, 2, 5), (4, 6, 6, 6), (1, 1, 3, 2)]


@exercise_check("general (bilinear) score", reimplements=(
    "coursekit.attention.GeneralScore", "coursekit.attention.scores.GeneralScore",
    "coursekit.attention.make_score", "coursekit.attention.scores.make_score",
    "torch.nn.functional.bilinear", "torch.bilinear", "torch.nn.Bilinear"))
def check_general_score(general_score: Callable) -> None:
    """``general_score(h (B, d_h), s (B, S, d_s), W (d_h, d_s)) -> (B, S)`` with scores hᵀ W s_k."""
    require_function(general_score, "general_score")
    for seed, (B, S, d_h, d_s) in enumerate(GENERAL_SIZES):
        g = case_generator(10 + seed)
        h, s = torch.randn(B, d_h, generator=g), torch.randn(B, S, d_s, generator=g)
        W = torch.randn(d_h, d_s, generator=g)
        case = f"h {(B, d_h)}, s {(B, S, d_s)}, W {(d_h, d_s)}"
        ref = GeneralScore(d_h, d_s)
        with torch.no_grad():
            ref.W.weight.copy_(W)  # the module stores W so that W(s) = W s
            want = ref(h.clone()[:, None], s.clone())[:, 0]
        got = run_student(general_score, case, h.clone(), s.clone(), W.clone())
        got = _scores_tensor(got, (B, S), case)
        expect_close(got, want, case=case, what="the tensor of scores", mistakes=_general_mistakes(h, s, W, want))


# ----------------------------------------------------------------------------------------------
# attention weights and context vector
# ----------------------------------------------------------------------------------------------

def _context_cases():
    g = case_generator(20)
    mask = torch.tensor([[0, 1, 1, 1, 1], [1, 0, 1, 0, 1], [0, 0, 0, 1, 0], [1, 1, 1, 1, 1], [1, 1, 0, 0, 0]],
                        dtype=torch.bool)
    scale = torch.tensor([300.0, 1.0, 0.001, 50.0, 2.0])[:, None]
    scores, values = torch.randn(5, 5, generator=g) * scale, torch.randn(5, 5, 5, generator=g)
    values = torch.where(mask[..., None], values, values - 7)
    yield ("scores (5, 5), values (5, 5, 5), a different mask in every row (left padding, holes), score rows "
           "on scales from about ±300 to about ±0.001"), scores, values, mask
    B, S, d = 3, 5, 4
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 0, 0, 0, 0]], dtype=torch.bool)
    scores, values = torch.randn(B, S, generator=g), torch.randn(B, S, d, generator=g)
    scores = torch.where(mask, scores, scores.abs() + 3)        # padding scores high: ignoring the mask shows
    values = torch.where(mask[..., None], values, 20 + values)  # padding values large and not zero
    yield "scores (3, 5), values (3, 5, 4), source lengths 5, 3, 1 (padding at the end)", scores, values, mask
    yield "scores (2, 2), values (2, 2, 3), no padding", torch.randn(2, 2, generator=g), \
        torch.randn(2, 2, 3, generator=g), torch.ones(2, 2, dtype=torch.bool)
    yield "scores (1, 1), values (1, 1, 6) (batch size 1, one source position)", torch.randn(1, 1, generator=g), \
        torch.randn(1, 1, 6, generator=g), torch.ones(1, 1, dtype=torch.bool)


def _right_padded(mask: torch.Tensor) -> torch.Tensor:
    """The mask a function that assumes padding at the end rebuilds from the lengths ``mask.sum(1)``."""
    return torch.arange(mask.shape[1])[None, :] < mask.sum(1, keepdim=True)


def _weight_mistakes(scores: torch.Tensor, mask: torch.Tensor) -> dict[str, Any]:
    def soft(s, how="torch"):
        return _softmax(s, how)

    def filled(m):
        return scores.masked_fill(~m, NEG_INF)

    out = {
        "the softmax is over the batch axis: normalise over the source positions (dim=-1)":
            mistake_value(lambda: torch.softmax(filled(mask), 0).nan_to_num(0.0)),
        "the softmax is over the batch axis (dim=0), which gives NaN where a column is masked in every row: "
        "normalise over the source positions (dim=-1)":
            mistake_value(lambda: torch.softmax(filled(mask), 0)),
    }
    for how, hint in SOFTMAX_HINTS.items():
        out[hint] = mistake_value(lambda how=how: soft(filled(mask), how))
    if not bool(mask.all()):
        plain = torch.softmax(scores, -1)
        out.update({
            "the mask is ignored: padded source positions must get weight 0": plain,
            "the mask is applied after the softmax without renormalising (rows no longer sum to 1): "
            "fill masked scores with -inf before the softmax": plain * mask,
            "masked scores were set to 0 instead of -inf (exp(0) = 1 still gives them weight)":
                torch.softmax(scores.masked_fill(~mask, 0.0), -1),
            "the mask is inverted: True marks the positions to keep, so fill those where mask is False":
                torch.softmax(scores.masked_fill(mask, NEG_INF), -1),
            "the first row's mask was used for every row: each row has its own mask, mask[b]":
                mistake_value(lambda: soft(filled(mask[:1].expand_as(mask)))),
            "the padding was assumed to sit at the end (rebuilt from the lengths mask.sum(1)): use the mask "
            "itself, its False positions can be anywhere": mistake_value(lambda: soft(filled(_right_padded(mask)))),
        })
    return out


def _softmax(s: torch.Tensor, how: str = "torch") -> torch.Tensor:
    if how == "torch":
        return torch.softmax(s, dim=-1)
    if how == "global max":
        e = torch.exp(s - s.max())
    elif how == "no max":
        e = torch.exp(s)
    elif how == "max no keepdim":
        e = torch.exp(s - s.amax(dim=-1))
    else:
        e = torch.exp(s - s.amax(dim=-1, keepdim=True))
    if how == "global sum":
        return e / e.sum()
    if how == "sum no keepdim":
        return e / e.sum(dim=-1)
    return e / e.sum(dim=-1, keepdim=True)


SOFTMAX_HINTS = {
    "global max": "the softmax subtracts the max of the whole tensor (scores.max()) instead of each row's max: "
                  "rows whose scores are far below the global max underflow to 0/0 = NaN. Subtract "
                  "scores.amax(dim=-1, keepdim=True)",
    "no max": "the hand-written softmax does not subtract the row max: exp of a large score overflows to inf "
              "and inf/inf = NaN. Subtract scores.amax(dim=-1, keepdim=True) first",
    "max no keepdim": "the row max was taken without keepdim=True: (B, S) - (B,) subtracts the max of row j "
                      "from column j. Use amax(dim=-1, keepdim=True)",
    "global sum": "the exponentials are divided by the sum over the whole batch; each row's weights must sum "
                  "to 1: divide by e.sum(dim=-1, keepdim=True)",
    "sum no keepdim": "the exponentials are divided by e.sum(dim=-1) without keepdim=True, which lines the row "
                      "sums up with the source positions: use e.sum(dim=-1, keepdim=True)",
}


def _context_mistakes(scores, values, weights) -> dict[str, Any]:
    return {
        "the context is the unweighted sum of the values: weight them, c = Σ_k a_k s_k": values.sum(1),
        "the context is the unweighted mean of the values": values.mean(1),
        "the context uses the raw scores instead of the softmax weights": torch.einsum("bs,bsd->bd", scores, values),
        "the context uses the weights before masking: the padded positions' values leak in":
            torch.einsum("bs,bsd->bd", torch.softmax(scores, -1), values),
        "the weights were lined up with the feature axis (weights[:, None, :]); they weight the source "
        "positions: weights[:, :, None] * values, summed over dim 1":
            mistake_value(lambda: (weights[:, None, :] * values).sum(1)),
        "the weighted values were summed over the features (dim=-1) instead of the source positions (dim=1)":
            mistake_value(lambda: (weights[:, :, None] * values).sum(-1)),
    }


@exercise_check("attention weights and context vector", reimplements=(
    "coursekit.attention.masked_softmax", "coursekit.attention.scores.masked_softmax",
    "coursekit.attention.RecurrentAttention", "coursekit.attention.scores.RecurrentAttention"))
def check_attention_context(attention_context: Callable) -> None:
    """``attention_context(scores (B, S), values (B, S, d), mask (B, S)) -> (context (B, d), weights (B, S))``."""
    require_function(attention_context, "attention_context")
    for case, scores, values, mask in _context_cases():
        weights = masked_softmax(scores.clone(), mask.clone())
        context = torch.einsum("bs,bsd->bd", weights, values.clone())
        out = run_student(attention_context, case, scores.clone(), values.clone(), mask.clone())
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise CheckFailed(f"on {case}, return a pair (context, weights), got {describe(out)}")
        got_context, got_weights = out
        B, S, d = values.shape
        if (isinstance(got_context, torch.Tensor) and isinstance(got_weights, torch.Tensor) and S != d
                and tuple(got_context.shape) == (B, S) and tuple(got_weights.shape) == (B, d)):
            raise CheckFailed(f"on {case}, the pair is in the wrong order: return (context, weights), got "
                              f"({describe(got_context)}, {describe(got_weights)})")
        got_weights = _scores_tensor(got_weights, (B, S), case, "the weights (second element)")
        got_context = _scores_tensor(got_context, (B, d), case, "the context vector (first element)")
        weight_hints = _weight_mistakes(scores, mask)
        weight_hints["the pair is in the wrong order: return (context, weights)"] = context if d == S else None
        expect_close(got_weights, weights, case=case, what="the tensor of weights", mistakes=weight_hints)
        expect_close(got_context, context, case=case, what="the context vector",
                     mistakes=_context_mistakes(scores, values, weights))

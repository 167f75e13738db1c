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
and :class:`~coursekit.attention.RecurrentAttention` with copied weights.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from coursekit.attention import AdditiveScore, GeneralScore, masked_softmax
from coursekit.exercises.core import CheckFailed, describe, exercise_check, expect_close, require_function, run_student

__all__ = ["check_additive_score", "check_general_score", "check_attention_context"]


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# ----------------------------------------------------------------------------------------------
# additive (Bahdanau) score
# ----------------------------------------------------------------------------------------------

def _additive_cases():
    for seed, (B, S, d_h, d_s, A) in enumerate([(2, 4, 3, 3, 5), (3, 6, 4, 2, 3)]):
        g = _gen(seed)
        yield (f"h {(B, d_h)}, s {(B, S, d_s)}, attention width A={A}",
               torch.randn(B, d_h, generator=g), torch.randn(B, S, d_s, generator=g),
               torch.randn(A, d_h, generator=g), torch.randn(A, d_s, generator=g), torch.randn(A, generator=g))


def _reference_additive(h, s, W_h, W_s, v) -> torch.Tensor:
    score = AdditiveScore(W_h.shape[1], W_s.shape[1], W_h.shape[0])
    with torch.no_grad():
        score.W_h.weight.copy_(W_h)
        score.W_s.weight.copy_(W_s)
        score.W_s.bias.zero_()
        score.v.weight.copy_(v[None])
        return score(h[:, None], s)[:, 0]  # (B, S)


@exercise_check("additive (Bahdanau) score", reimplements=(
    "coursekit.attention.AdditiveScore", "coursekit.attention.scores.AdditiveScore",
    "coursekit.attention.make_score", "coursekit.attention.scores.make_score"))
def check_additive_score(additive_score: Callable) -> None:
    """``additive_score(h (B, d_h), s (B, S, d_s), W_h (A, d_h), W_s (A, d_s), v (A,)) -> (B, S)``."""
    require_function(additive_score, "additive_score")
    for case, h, s, W_h, W_s, v in _additive_cases():
        want = _reference_additive(h, s, W_h, W_s, v)
        got = run_student(additive_score, case, h.clone(), s.clone(), W_h.clone(), W_s.clone(), v.clone())
        pre = (h @ W_h.T)[:, None, :] + s @ W_s.T                               # (B, S, A)
        expect_close(got, want, case=case, what="the scores", mistakes={
            "the tanh is missing: score = vᵀ tanh(W_h h + W_s s)": pre @ v,
            "tanh was applied after v (tanh(vᵀ(W_h h + W_s s))): the non-linearity sits inside, before v":
                torch.tanh(pre @ v),
            "a sigmoid was used where Bahdanau's score has tanh": torch.sigmoid(pre) @ v,
            "the query projection W_h h is missing": torch.tanh(s @ W_s.T) @ v,
            "the returned scores are already softmax-normalised: return the raw scores": torch.softmax(want, -1),
        })


# ----------------------------------------------------------------------------------------------
# general (bilinear) score
# ----------------------------------------------------------------------------------------------

@exercise_check("general (bilinear) score", reimplements=(
    "coursekit.attention.GeneralScore", "coursekit.attention.scores.GeneralScore",
    "coursekit.attention.make_score", "coursekit.attention.scores.make_score",
    "torch.nn.functional.bilinear", "torch.bilinear", "torch.nn.Bilinear"))
def check_general_score(general_score: Callable) -> None:
    """``general_score(h (B, d_h), s (B, S, d_s), W (d_h, d_s)) -> (B, S)`` with scores hᵀ W s_k."""
    require_function(general_score, "general_score")
    for seed, (B, S, d_h, d_s) in enumerate([(2, 5, 4, 4), (3, 3, 2, 5)]):
        g = _gen(10 + seed)
        h, s = torch.randn(B, d_h, generator=g), torch.randn(B, S, d_s, generator=g)
        W = torch.randn(d_h, d_s, generator=g)
        case = f"h {(B, d_h)}, s {(B, S, d_s)}, W {(d_h, d_s)}"
        ref = GeneralScore(d_h, d_s)
        with torch.no_grad():
            ref.W.weight.copy_(W)  # the module stores W so that W(s) = W s
            want = ref(h[:, None], s)[:, 0]
        got = run_student(general_score, case, h.clone(), s.clone(), W.clone())
        dot = (s @ h[:, :, None])[..., 0] if d_h == d_s else None
        mistakes = {"the score ignores W (that is the dot score hᵀ s)": dot}
        if d_h == d_s:
            mistakes["W is transposed: the score is hᵀ W s = h · (W s), not h · (Wᵀ s)"] = \
                (s @ W @ h[:, :, None])[..., 0]
        expect_close(got, want, case=case, what="the scores", mistakes=mistakes)


# ----------------------------------------------------------------------------------------------
# attention weights and context vector
# ----------------------------------------------------------------------------------------------

def _context_cases():
    g = _gen(20)
    B, S, d = 3, 5, 4
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 0, 0, 0, 0]], dtype=torch.bool)
    yield "scores (3, 5), values (3, 5, 4), source lengths 5, 3, 1", \
        torch.randn(B, S, generator=g), torch.randn(B, S, d, generator=g), mask
    yield "scores (2, 2), values (2, 2, 3), no padding", torch.randn(2, 2, generator=g), \
        torch.randn(2, 2, 3, generator=g), torch.ones(2, 2, dtype=torch.bool)


@exercise_check("attention weights and context vector", reimplements=(
    "coursekit.attention.masked_softmax", "coursekit.attention.scores.masked_softmax",
    "coursekit.attention.RecurrentAttention", "coursekit.attention.scores.RecurrentAttention"))
def check_attention_context(attention_context: Callable) -> None:
    """``attention_context(scores (B, S), values (B, S, d), mask (B, S)) -> (context (B, d), weights (B, S))``."""
    require_function(attention_context, "attention_context")
    for case, scores, values, mask in _context_cases():
        weights = masked_softmax(scores, mask)
        context = torch.einsum("bs,bsd->bd", weights, values)
        out = run_student(attention_context, case, scores.clone(), values.clone(), mask.clone())
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise CheckFailed(f"on {case}, return a pair (context, weights), got {describe(out)}")
        got_context, got_weights = out
        plain = torch.softmax(scores, -1)
        expect_close(got_weights, weights, case=case, what="the weights", mistakes={
            "the softmax is over the batch axis: normalise over the source positions (dim=-1)":
                torch.softmax(scores.masked_fill(~mask, float("-inf")), 0).nan_to_num(0.0),
            "the mask is ignored: padded source positions must get weight 0": plain,
            "the mask is applied after the softmax without renormalising (rows no longer sum to 1): "
            "fill masked scores with -inf before the softmax": plain * mask,
            "masked scores were set to 0 instead of -inf (exp(0) = 1 still gives them weight)":
                torch.softmax(scores.masked_fill(~mask, 0.0), -1),
        } if not bool(mask.all()) else {
            "the softmax is over the batch axis: normalise over the source positions (dim=-1)":
                torch.softmax(scores, 0),
        })
        expect_close(got_context, context, case=case, what="the context vector", mistakes={
            "the context is the unweighted sum of the values: weight them, c = Σ_k a_k s_k": values.sum(1),
            "the context is the unweighted mean of the values": values.mean(1),
            "the context uses the raw scores instead of the softmax weights":
                torch.einsum("bs,bsd->bd", scores, values),
        })

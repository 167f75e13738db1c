"""Checks for the exercises of notebook 01 (word embeddings): PPMI, the negative-sampling loss, 3CosAdd.

What the student writes:

* ``ppmi(C)`` — ``C`` a (V, V) float tensor of co-occurrence counts; returns PPMI with the natural log,
  ``max(0, log P(w, c) / (P(w) P(c)))`` and 0 where ``C == 0`` (no context smoothing).
* ``sgns_loss(v_c, u_o, u_neg)`` — v_c (B, d), u_o (B, d), u_neg (B, K, d); returns the per-pair loss
  (B,) ``−log σ(u_o·v_c) − Σ_k log σ(−u_k·v_c)`` (Mikolov et al. 2013, eq. 4).
* ``analogy(W, a, b, c)`` — W (V, d) word vectors, a, b, c int ids; returns the int id of
  ``argmax_d cos(W[d], W[b] − W[a] + W[c])`` over every word except a, b and c (3CosAdd with unit
  vectors: normalise the rows of W first).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from coursekit import embeddings as E
from coursekit.exercises.core import (
    CheckFailed,
    describe,
    exercise_check,
    expect_close,
    mistake_value,
    require_function,
    run_student,
)

__all__ = ["check_ppmi", "check_sgns_loss", "check_analogy"]


# ----------------------------------------------------------------------------- PPMI


def _ppmi_cases() -> list[tuple[str, torch.Tensor]]:
    g = torch.Generator().manual_seed(0)
    sents = [torch.randint(0, 6, (10,), generator=g).tolist() for _ in range(4)]
    counts = torch.from_numpy(E.cooccurrence_matrix(sents, 6, window=2).toarray())
    rect = torch.randint(0, 5, (3, 4), generator=g).double()
    rect[0, 0] = 0.0
    return [
        ("the 2×2 counts [[0, 2], [2, 4]]", torch.tensor([[0.0, 2.0], [2.0, 4.0]], dtype=torch.float64)),
        ("window-2 counts of a 6-word toy corpus", counts),
        ("a non-square 3×4 count matrix (words × contexts)", rect),
    ]


def _ppmi_mistakes(C: torch.Tensor) -> dict[str, Any]:
    total = C.sum()
    row, col = C.sum(1, keepdim=True), C.sum(0, keepdim=True)
    pmi = torch.log(C * total / (row * col))
    zero = torch.zeros_like(C)
    return {
        "the negative PMI values were kept: PPMI clips them, max(0, PMI)":
            torch.where(C > 0, pmi, zero),
        "counts were used instead of probabilities (divide C, its row sums and its column sums by the total)":
            torch.where(C > 0, torch.log(C / (row * col)).clamp(min=0), zero),
        "log base 2 was used; the course uses the natural log (torch.log)":
            torch.where(C > 0, (pmi / math.log(2)).clamp(min=0), zero),
        "P(c) was taken from the row sums (use the column sums for the contexts)":
            mistake_value(lambda: torch.where(C > 0, torch.log(C * total / (row * row.T)).clamp(min=0), zero)),
    }


@exercise_check("PPMI", reimplements=("coursekit.embeddings.ppmi",))
def check_ppmi(ppmi: Callable[[torch.Tensor], torch.Tensor]) -> None:
    """Check ``ppmi(C)`` against :func:`coursekit.embeddings.ppmi` (α = 1)."""
    require_function(ppmi, "ppmi")
    for case, C in _ppmi_cases():
        got = run_student(ppmi, case, C.clone())
        if isinstance(got, torch.Tensor) and torch.isneginf(got).any():
            raise CheckFailed(f"on {case}, your PPMI contains -inf: log(0) where C = 0. Those cells are 0 in PPMI "
                              "(torch.where(C > 0, ..., 0) or clamp(min=0) after the log)")
        expect_close(got, E.ppmi(C), case=case, mistakes=_ppmi_mistakes(C), what="the PPMI matrix")


# ----------------------------------------------------------------------------- negative-sampling loss


def _sgns_cases() -> list[tuple[str, torch.Tensor, torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(1)
    return [
        ("one pair: v_c=[1, 0], u_o=[2, 1], negatives [[1, 1], [-1, 3]]",
         torch.tensor([[1.0, 0.0]]), torch.tensor([[2.0, 1.0]]), torch.tensor([[[1.0, 1.0], [-1.0, 3.0]]])),
        ("a batch B=4, d=3, K=5", torch.randn(4, 3, generator=g), torch.randn(4, 3, generator=g),
         torch.randn(4, 5, 3, generator=g)),
        ("large scores (|u·v| ≈ 200): log(sigmoid(x)) must not give -inf",
         torch.tensor([[10.0, 10.0]]), torch.tensor([[-10.0, -10.0]]), torch.tensor([[[10.0, 10.0], [0.0, 1.0]]])),
    ]


def _sgns_mistakes(v, u, n) -> dict[str, Any]:
    pos = (u * v).sum(-1)                                   # (B,)
    neg = (n * v.unsqueeze(1)).sum(-1)                      # (B, K)
    ref = -(F.logsigmoid(pos) + F.logsigmoid(-neg).sum(-1))
    return {
        "the noise words enter with the wrong sign: it is log σ(−u_k·v_c) for a noise word":
            -(F.logsigmoid(pos) + F.logsigmoid(neg).sum(-1)),
        "the noise terms were averaged over K; eq. 4 sums them": -(F.logsigmoid(pos) + F.logsigmoid(-neg).mean(-1)),
        "the sign is flipped: this is the log-likelihood, the loss is its negative": -ref,
        "the noise terms are missing (only −log σ(u_o·v_c))": -F.logsigmoid(pos),
    }


@exercise_check("negative-sampling loss", reimplements=("coursekit.embeddings.sgns_loss",))
def check_sgns_loss(sgns_loss: Callable[..., torch.Tensor]) -> None:
    """Check the per-pair skip-gram negative-sampling loss against :func:`coursekit.embeddings.sgns_loss`."""
    require_function(sgns_loss, "sgns_loss")
    for case, v, u, n in _sgns_cases():
        got = run_student(sgns_loss, case, v.clone(), u.clone(), n.clone())
        want = E.sgns_loss(v, u, n)
        if isinstance(got, torch.Tensor) and got.dim() == 0 and want.dim() == 1:
            raise CheckFailed(f"on {case}, return one loss per pair, shape {tuple(want.shape)}, not a scalar "
                              "(do not average over the batch inside the function)")
        if isinstance(got, torch.Tensor) and torch.isinf(got).any():
            raise CheckFailed(f"on {case}, the loss is infinite: torch.log(torch.sigmoid(x)) underflows for large "
                              "|x|; use torch.nn.functional.logsigmoid(x)")
        expect_close(got, want, case=case, mistakes=_sgns_mistakes(v, u, n), what="the loss")


# ----------------------------------------------------------------------------- 3CosAdd


def _analogy_cases() -> list[tuple[str, torch.Tensor, tuple[int, int, int]]]:
    # Each typical mistake picks a different word on the hand-made vectors or on the random ones.
    W = torch.tensor([
        [1.0, 0.0, 0.0],     # 0 man
        [1.0, 1.0, 0.0],     # 1 woman
        [1.0, 0.0, 1.0],     # 2 king
        [0.9, 1.0, 1.1],     # 3 queen  (cos ≈ 0.99 with woman − man + king = [1, 1, 1])
        [6.0, 2.0, 0.0],     # 4 long: wins by raw dot product, loses by cosine
        [1.0, -1.0, 1.0],    # 5 wins when the offset has the wrong sign (man − woman + king)
    ])
    g = torch.Generator().manual_seed(2)
    R = torch.randn(40, 8, generator=g)
    return [
        ("man:woman :: king:? on 6 hand-made vectors", W, (0, 1, 2)),
        ("40 random 8-d vectors, question (3, 7, 11)", R, (3, 7, 11)),
        ("40 random 8-d vectors, question (20, 5, 9)", R, (20, 5, 9)),
    ]


def _analogy_ref(W, a, b, c, *, normalise=True, exclude=True, sign=(1, -1, 1)) -> int:
    U = F.normalize(W, dim=1) if normalise else W
    target = sign[0] * U[b] + sign[1] * U[a] + sign[2] * U[c]
    sims = F.normalize(U, dim=1) @ target if normalise else U @ target
    if exclude:
        sims = sims.clone()
        sims[[a, b, c]] = float("-inf")
    return int(sims.argmax())


@exercise_check("3CosAdd analogy", reimplements=(
    "coursekit.embeddings.WordVectors.analogy", "coursekit.embeddings.WordVectors.nearest",
    "coursekit.embeddings.evaluate_analogies"))
def check_analogy(analogy: Callable[..., int]) -> None:
    """Check ``analogy(W, a, b, c)`` → argmax cos(w, b − a + c) excluding a, b, c."""
    require_function(analogy, "analogy")
    for case, W, (a, b, c) in _analogy_cases():
        got = run_student(analogy, case, W.clone(), a, b, c)
        if isinstance(got, torch.Tensor) and got.numel() == 1:
            got = int(got)
        if isinstance(got, bool) or not isinstance(got, int):
            raise CheckFailed(f"on {case}, return the id of the answer as an int, got {describe(got)}")
        want = _analogy_ref(W, a, b, c)
        mistakes = {
            "the question words a, b, c were not excluded (the nearest vector to b − a + c is often b or c)":
                _analogy_ref(W, a, b, c, exclude=False),
            "raw dot products were used: normalise the rows first so that long (frequent) vectors do not win":
                _analogy_ref(W, a, b, c, normalise=False),
            "the offset has the wrong sign: the target is b − a + c (woman − man + king)":
                _analogy_ref(W, a, b, c, sign=(-1, 1, 1)),
        }
        if got != want:
            hints = [h for h, wrong in mistakes.items() if wrong == got and wrong != want]
            raise CheckFailed(f"on {case}, the answer should be word {want}, got {got}."
                              + (f" It looks like {hints[0]}." if len(hints) == 1 else ""))
        expect_close(got, want, case=case)

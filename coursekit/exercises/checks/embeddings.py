"""Checks for the exercises of notebook 01 (word embeddings): PPMI, the negative-sampling loss, 3CosAdd.

What the student writes:

* ``ppmi(C)`` — ``C`` a (V_w, V_c) float tensor of co-occurrence counts (rows: words, columns: contexts;
  not necessarily square or symmetric, possibly fractional; a row or column may be all zero); returns a
  float tensor of the same shape, PPMI with the natural log, ``max(0, log P(w, c) / (P(w) P(c)))`` with
  P(w) from the row sums and P(c) from the column sums, and 0 where ``C == 0`` (no context smoothing, α = 1).
* ``sgns_loss(v_c, u_o, u_neg)`` — v_c (B, d), u_o (B, d), u_neg (B, K, d); returns the per-pair loss
  as a (B,) float tensor, ``−log σ(u_o·v_c) − Σ_k log σ(−u_k·v_c)`` (Mikolov et al. 2013, eq. 4).
* ``analogy(W, a, b, c)`` — W (V, d) word vectors, a, b, c int ids (a : b :: c : ?); returns the int id
  ``argmax_w cos(W[w], Û[b] − Û[a] + Û[c])`` over every word w except a, b and c, where Û is W with
  each row scaled to length 1 (3CosAdd on unit vectors, as :meth:`coursekit.embeddings.word_vectors.WordVectors.analogy`
  computes it; the cosine makes the length of the target irrelevant, not the lengths of Û[a], Û[b], Û[c]).

Every check runs several inputs (odd and varying sizes, batch size 1, one noise word, asymmetric and
non-square counts, all-zero rows and columns, large scores, vectors of very different lengths, a question
whose every candidate has a negative cosine), computes the reference on its own copies before the
student's call, checks the type, shape and dtype of what comes back, and names the typical mistake whose
output the student's matches.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from coursekit.embeddings import counts as E
from coursekit.embeddings import sgns as SG
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

__all__ = ["check_ppmi", "check_sgns_loss", "check_analogy"]


def _expect_float(got: Any, shape: tuple[int, ...], *, case: str, what: str) -> None:
    """``got`` is a float tensor of ``shape``, or the student reads which case and what came back."""
    if not isinstance(got, torch.Tensor) or not got.is_floating_point():
        raise CheckFailed(f"on {case}, expected {what} as a {shape} float tensor, got {describe(got)}")


# ----------------------------------------------------------------------------- PPMI


def _ppmi_cases() -> list[tuple[str, torch.Tensor]]:
    g = case_generator(0)
    sents = [torch.randint(0, 6, (10,), generator=g).tolist() for _ in range(4)]
    counts = torch.from_numpy(E.cooccurrence_matrix(sents, 6, window=2).toarray())
    rect = torch.randint(0, 5, (3, 4), generator=g).double()
    rect[0, 0] = 0.0
    asym = torch.randint(0, 6, (4, 4), generator=g).float()
    asym[1, 2], asym[2, 1] = 9.0, 1.0                                     # C[w, c] != C[c, w]
    holes = torch.randint(1, 4, (5, 4), generator=g).double()
    holes[2, :] = 0.0                                                     # a word never seen with a context
    holes[:, 3] = 0.0                                                     # a context never seen
    holes[0, 1] = 0.0
    scales = torch.tensor([[2e6, 5e5, 1.0], [3.0, 1.0, 7.0], [1.0, 4e5, 2.0]], dtype=torch.float64)
    two = [[0, 1, 2, 3, 4], [2, 5, 1, 0]]
    harmonic = torch.from_numpy(E.cooccurrence_matrix(two, 6, window=3, weighting="harmonic").toarray()).float()
    return [
        ("the 2×2 counts [[0, 2], [2, 4]]", torch.tensor([[0.0, 2.0], [2.0, 4.0]], dtype=torch.float64)),
        ("window-2 counts of a 6-word toy corpus", counts),
        ("an asymmetric 4×4 float32 count matrix (C[1, 2] = 9, C[2, 1] = 1)", asym),
        ("a non-square 3×4 count matrix (words × contexts)", rect),
        ("a 5×4 count matrix with an all-zero row (word 2) and an all-zero column (context 3)", holes),
        ("counts on very different scales (millions next to single counts), 3×3", scales),
        ("fractional counts (window-3 harmonic weights 1/d, as GloVe) of two short sentences, float32", harmonic),
    ]


def _ppmi_with(C: torch.Tensor, p_w: torch.Tensor, p_c: torch.Tensor, *, base: float = math.e) -> torch.Tensor:
    pmi = torch.log(C / C.sum() / (p_w * p_c)) / math.log(base)
    return torch.where(C > 0, pmi.clamp(min=0), torch.zeros_like(C))


def _ppmi_mistakes(C: torch.Tensor) -> dict[str, Any]:
    total = C.sum()
    row, col = C.sum(1, keepdim=True), C.sum(0, keepdim=True)
    pmi = torch.log(C * total / (row * col))
    zero = torch.zeros_like(C)
    return {
        "the negative PMI values were kept: PPMI clips them, max(0, PMI)":
            torch.where(C > 0, pmi, zero),
        "counts were used instead of probabilities (divide C, its row sums and its column sums by the total), "
        "which makes every PMI ≤ 0 and the whole matrix 0 — or the torch.where keeps the wrong cells (it is "
        "torch.where(C > 0, pmi, 0))":
            torch.where(C > 0, torch.log(C / (row * col)).clamp(min=0), zero),
        "log base 2 was used; the course uses the natural log (torch.log)":
            torch.where(C > 0, (pmi / math.log(2)).clamp(min=0), zero),
        "log base 10 was used; the course uses the natural log (torch.log)":
            _ppmi_with(C, row / total, col / total, base=10.0),
        "P(c) was taken from the row sums (use the column sums for the contexts)":
            mistake_value(lambda: torch.where(C > 0, torch.log(C * total / (row * row.T)).clamp(min=0), zero)),
        "the row and column sums were swapped: P(w) is a word's row sum C.sum(1), P(c) a context's column "
        "sum C.sum(0)": mistake_value(lambda: _ppmi_with(C, col.T / total, row.T / total)),
        "the sums lack keepdim=True: C.sum(1) has shape (V,), so P(w) broadcasts along the columns, not the rows":
            mistake_value(lambda: _ppmi_with(C, row.T / total, col / total)),
        "an all-zero row or column gives 0/0 = NaN, which survives clamp(min=0) and `pmi[pmi < 0] = 0`: set "
        "every cell where C == 0 to 0 with torch.where(C > 0, ..., 0)": pmi.clamp(min=0),
        "the context distribution was smoothed (α = 0.75, Levy et al. 2015); this exercise uses plain P(c), "
        "α = 1": E.ppmi(C, alpha=0.75),
        "add-one smoothing was applied to the counts; this exercise uses the raw counts": E.ppmi(C + 1.0),
        "the cells with a fractional count (0 < C < 1) were set to 0: only cells with C == 0 are 0 "
        "(torch.where(C > 0, ...), not C >= 1)": torch.where(C >= 1, E.ppmi(C), zero),
    }


@exercise_check("PPMI", reimplements=("coursekit.embeddings.counts.ppmi",))
def check_ppmi(ppmi: Callable[[torch.Tensor], torch.Tensor]) -> None:
    """Check ``ppmi(C)`` against :func:`coursekit.embeddings.counts.ppmi` (α = 1)."""
    require_function(ppmi, "ppmi")
    for case, C in _ppmi_cases():
        want = E.ppmi(C)                                         # on the check's own copy, before the student's
        mistakes = _ppmi_mistakes(C)
        got = run_student(ppmi, case, C.clone())
        _expect_float(got, tuple(C.shape), case=case, what="the PPMI matrix")
        if torch.isneginf(got).any():
            raise CheckFailed(f"on {case}, your PPMI contains -inf: log(0) where C = 0. Those cells are 0 in PPMI "
                              "(torch.where(C > 0, ..., 0) or clamp(min=0) after the log)")
        expect_close(got, want, case=case, mistakes=mistakes, what="the PPMI matrix")


# ----------------------------------------------------------------------------- negative-sampling loss


def _sgns_cases() -> list[tuple[str, torch.Tensor, torch.Tensor, torch.Tensor]]:
    g = case_generator(1)

    def rand(*shape):
        return torch.randn(*shape, generator=g)

    scale = torch.tensor([[0.01], [1.0], [30.0]])
    return [
        ("one pair: v_c=[1, 0], u_o=[2, 1], negatives [[1, 1], [-1, 3]]",
         torch.tensor([[1.0, 0.0]]), torch.tensor([[2.0, 1.0]]), torch.tensor([[[1.0, 1.0], [-1.0, 3.0]]])),
        ("a batch B=4, d=3, K=5", rand(4, 3), rand(4, 3), rand(4, 5, 3)),
        ("large scores (|u·v| ≈ 200): log(sigmoid(x)) must not give -inf",
         torch.tensor([[10.0, 10.0]]), torch.tensor([[-10.0, -10.0]]), torch.tensor([[[10.0, 10.0], [0.0, 1.0]]])),
        ("one noise word: B=3, d=5, K=1", rand(3, 5), rand(3, 5), rand(3, 1, 5)),
        ("pairs on very different scales (centre vectors ×0.01, ×1, ×30), B=3, d=2, K=4",
         scale * rand(3, 2), rand(3, 2), rand(3, 4, 2)),
        ("float64 vectors, B=2, d=7, K=3", rand(2, 7).double(), rand(2, 7).double(), rand(2, 3, 7).double()),
    ]


def _sgns_mistakes(v, u, n) -> dict[str, Any]:
    pos = (u * v).sum(-1)                                   # (B,)
    neg = (n * v.unsqueeze(1)).sum(-1)                      # (B, K)
    ref = -(F.logsigmoid(pos) + F.logsigmoid(-neg).sum(-1))
    mistakes = {
        "the noise words enter with the wrong sign: it is log σ(−u_k·v_c) for a noise word":
            -(F.logsigmoid(pos) + F.logsigmoid(neg).sum(-1)),
        "the noise terms were averaged over K; eq. 4 sums them": -(F.logsigmoid(pos) + F.logsigmoid(-neg).mean(-1)),
        "the sign is flipped: this is the log-likelihood, the loss is its negative": -ref,
        "the noise terms are missing (only −log σ(u_o·v_c))": -F.logsigmoid(pos),
        "the positive term is missing (only the noise terms): add −log σ(u_o·v_c)": -F.logsigmoid(-neg).sum(-1),
        "the noise words were dotted with the context vector u_o; each noise word is scored against the centre "
        "vector v_c": -(F.logsigmoid(pos) + F.logsigmoid(-(n * u.unsqueeze(1)).sum(-1)).sum(-1)),
        "the K noise scores were summed inside the log σ: it is Σ_k log σ(−u_k·v_c), not log σ(−Σ_k u_k·v_c)":
            -(F.logsigmoid(pos) + F.logsigmoid(-neg.sum(-1))),
        "each pair's noise words were scored against every centre vector of the batch (u_neg @ v_c.T); use the "
        "pair's own v_c, (u_neg * v_c.unsqueeze(1)).sum(-1)":
            -(F.logsigmoid(pos) + F.logsigmoid(-(n @ v.T)).sum((-1, -2))) if len(v) > 1 else None,
    }
    if n.shape[1] == 1 and len(v) > 1:
        mistakes["squeeze() without a dim also dropped the K axis (K = 1 here), so the noise terms of the whole batch "
                 "were summed into every pair's loss: squeeze only the axis you mean, squeeze(-1)"] = \
            -(F.logsigmoid(pos) + F.logsigmoid(-neg[:, 0]).sum())
    for eps in (1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-12):
        mistakes[f"an epsilon inside the log (log(σ(x) + {eps:g})) caps each term; use "
                 "torch.nn.functional.logsigmoid(x)"] = \
            -(torch.log(torch.sigmoid(pos) + eps) + torch.log(torch.sigmoid(-neg) + eps).sum(-1))
    return mistakes


@exercise_check("negative-sampling loss", reimplements=("coursekit.embeddings.sgns.sgns_loss",))
def check_sgns_loss(sgns_loss: Callable[..., torch.Tensor]) -> None:
    """Check the per-pair skip-gram negative-sampling loss against :func:`coursekit.embeddings.sgns.sgns_loss`."""
    require_function(sgns_loss, "sgns_loss")
    for case, v, u, n in _sgns_cases():
        want = SG.sgns_loss(v, u, n)                              # on the check's own copies
        mistakes = _sgns_mistakes(v, u, n)
        got = run_student(sgns_loss, case, v.clone(), u.clone(), n.clone())
        _expect_float(got, tuple(want.shape), case=case, what="the per-pair loss")
        if got.dim() == 0 and want.dim() == 1:
            raise CheckFailed(f"on {case}, return one loss per pair, shape {tuple(want.shape)}, not a scalar "
                              "(do not average over the batch inside the function)")
        if tuple(got.shape) == (*want.shape, 1):
            raise CheckFailed(f"on {case}, return one loss per pair, shape {tuple(want.shape)}, got "
                              f"{tuple(got.shape)}: drop the trailing axis (keepdim=False, or squeeze(-1))")
        if torch.isinf(got).any():
            raise CheckFailed(f"on {case}, the loss is infinite: torch.log(torch.sigmoid(x)) underflows for large "
                              "|x|; use torch.nn.functional.logsigmoid(x)")
        expect_close(got, want, case=case, mistakes=mistakes, what="the loss")


# ----------------------------------------------------------------------------- 3CosAdd


def _analogy_cases() -> list[tuple[str, torch.Tensor, tuple[int, int, int]]]:
    # Each typical mistake picks a different word than 3CosAdd on at least one of these (tests check it).
    W = torch.tensor([
        [1.0, 0.0, 0.0],     # 0 man
        [1.0, 1.0, 0.0],     # 1 woman
        [1.0, 0.0, 1.0],     # 2 king
        [0.9, 1.0, 1.1],     # 3 queen  (cos ≈ 0.99 with woman − man + king = [1, 1, 1])
        [6.0, 2.0, 0.0],     # 4 long: wins by raw dot product, loses by cosine
        [1.0, -1.0, 1.0],    # 5 wins when the offset has the wrong sign (man − woman + king)
    ])
    g = case_generator(2)
    R = torch.randn(40, 8, generator=g)
    g = case_generator(8)
    L = torch.randn(25, 5, generator=g) * torch.exp(1.2 * torch.randn(25, 1, generator=g))  # lengths 0.14 … 25
    N = torch.tensor([        # the target Û[1] − Û[3] + Û[5] ∝ [1, 1, 0]: every other word has a negative cosine
        [-1.0, 0.5, 1.0],
        [1.0, 0.0, 0.0],      # 1 b
        [0.2, -1.0, 0.5],
        [1.0, 1.0, 0.0],      # 3 a: lies between b and c, so it is the nearest word to b − a + c
        [-0.5, 0.2, -1.0],
        [0.0, 1.0, 0.0],      # 5 c
        [-2.0, -1.0, 0.3],
        [0.3, -0.6, 2.0],     # 7 the answer (cos ≈ −0.04)
    ])
    return [
        ("man:woman :: king:? on 6 hand-made vectors", W, (0, 1, 2)),
        ("40 random 8-d vectors, question (3, 7, 11)", R, (3, 7, 11)),
        ("40 random 8-d vectors, question (20, 5, 9)", R, (20, 5, 9)),
        ("25 random 5-d vectors of very different lengths (0.14 to 25), question (9, 5, 1)", L, (9, 5, 1)),
        ("8 vectors where every candidate has a negative cosine with the target, question (3, 1, 5)", N, (3, 1, 5)),
    ]


def _analogy_ref(W, a, b, c, *, normalise=True, exclude=(0, 1, 2), sign=(1, -1, 1), raw_offset=False,
                 unit_candidates=None, norm_dim=1, fill=float("-inf")) -> int:
    U = F.normalize(W, dim=norm_dim) if normalise else W
    src = W if raw_offset else U
    target = sign[0] * src[b] + sign[1] * src[a] + sign[2] * src[c]
    unit_candidates = normalise if unit_candidates is None else unit_candidates
    sims = (U if unit_candidates else W) @ target
    question = (a, b, c)
    sims = sims.clone()
    sims[[question[i] for i in exclude]] = fill
    return int(sims.argmax())


_WORDS = ("a", "b", "c")


def _analogy_mistakes(W, a, b, c) -> dict[str, int]:
    mistakes = {
        "the question words a, b, c were not excluded (the nearest vector to b − a + c is often b or c)":
            _analogy_ref(W, a, b, c, exclude=()),
        "raw dot products were used: normalise the rows first so that long (frequent) vectors do not win":
            _analogy_ref(W, a, b, c, normalise=False),
        "the offset has the wrong sign: the target is b − a + c (woman − man + king)":
            _analogy_ref(W, a, b, c, sign=(-1, 1, 1)),
        "the offset has the wrong signs (b + a − c): the target is b − a + c":
            _analogy_ref(W, a, b, c, sign=(1, 1, -1)),
        "the offset b − a + c was built from the raw vectors: normalise the rows of W first, then take "
        "Û[b] − Û[a] + Û[c]": _analogy_ref(W, a, b, c, raw_offset=True),
        "the candidate vectors were not normalised (only the question words were): use cosines, Û @ target, "
        "so that long vectors do not win": _analogy_ref(W, a, b, c, unit_candidates=False),
        "the columns were normalised (dim=0); normalise each word vector, the rows (dim=1)":
            _analogy_ref(W, a, b, c, norm_dim=0),
        "the excluded words were given the score 0, which beats every negative cosine: use float('-inf')":
            _analogy_ref(W, a, b, c, fill=0.0),
    }
    for k in (1, 2):
        for kept in itertools.combinations(range(3), k):
            left = " and ".join(_WORDS[i] for i in range(3) if i not in kept)
            mistakes[f"{left} {'was' if k == 2 else 'were'} not excluded: exclude all three question words "
                     "a, b and c"] = _analogy_ref(W, a, b, c, exclude=kept)
    return mistakes


def _as_id(got: Any, case: str, V: int) -> int:
    if isinstance(got, torch.Tensor) and got.numel() == 1:
        if got.is_floating_point() or got.dtype == torch.bool:
            raise CheckFailed(f"on {case}, return the id of the answer as an int, got {describe(got)}: "
                              "a float looks like a similarity score, not an id (take the argmax)")
        got = int(got)
    if isinstance(got, bool) or not isinstance(got, numbers.Integral):
        raise CheckFailed(f"on {case}, return the id of the answer as an int, got {describe(got)}")
    if not 0 <= int(got) < V:
        raise CheckFailed(f"on {case}, the answer {int(got)} is not a word id of the vocabulary [0, {V})")
    return int(got)


def _analogy_hint(answers: dict[str, int], mistakes: dict[str, dict[str, int]], case: str) -> str:
    """The mistakes that give the student's answer on every case answered (several: the first three)."""
    hints = [h for h in mistakes[case] if all(mistakes[k][h] == answers[k] for k in answers)]
    if not hints:      # a mistake that gives the same word on one question by chance would mislead
        return ""
    return f" It looks like {hints[0]}" + (f" (or: {'; '.join(hints[1:3])})" if len(hints) > 1 else "") + "."


@exercise_check("3CosAdd analogy", reimplements=(
    "coursekit.embeddings.word_vectors.WordVectors.analogy", "coursekit.embeddings.word_vectors.WordVectors.nearest",
    "coursekit.embeddings.word_vectors.evaluate_analogies"))
def check_analogy(analogy: Callable[..., int]) -> None:
    """Check ``analogy(W, a, b, c)`` → argmax_w cos(W[w], Û[b] − Û[a] + Û[c]) excluding a, b, c."""
    require_function(analogy, "analogy")
    answers: dict[str, int] = {}
    wants: dict[str, int] = {}
    mistakes: dict[str, dict[str, int]] = {}
    failure: CheckFailed | None = None
    for case, W, (a, b, c) in _analogy_cases():
        wants[case] = _analogy_ref(W, a, b, c)                   # on the check's own copy
        mistakes[case] = _analogy_mistakes(W, a, b, c)
        try:
            answers[case] = _as_id(run_student(analogy, case, W.clone(), a, b, c), case, len(W))
        except CheckFailed as exc:          # report a wrong answer on an earlier case first
            failure = exc
            break
    for case, got in answers.items():
        if got != wants[case]:
            raise CheckFailed(f"on {case}, the answer should be word {wants[case]}, got {got}."
                              + _analogy_hint(answers, mistakes, case))
    if failure is not None:
        raise failure

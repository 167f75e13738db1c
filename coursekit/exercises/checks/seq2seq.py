"""Exercise checks for notebook 05 (sequence-to-sequence).

What the student writes:

* ``beam_step(scores, log_probs, beam_size)`` — one step of beam search for one sentence: ``scores``
  (k,) the log-probabilities of the kept prefixes, ``log_probs`` (k, V) the next-token
  log-probabilities of each prefix; return ``(new_scores (beam_size,), beam_index (beam_size,),
  token (beam_size,))`` for the ``beam_size`` best extensions, best first.
* ``greedy_decode(step, bos_id, eos_id, max_len)`` — ``step(token: int) -> log_probs (V,)`` gives the
  next-token distribution after feeding ``token`` (the model keeps its own state); return the list of
  generated token ids without ``<eos>`` (stop at ``<eos>`` or after ``max_len`` tokens).
* ``masked_nll(logits, targets, pad_id)`` — mean cross-entropy per *real* target token of
  ``logits`` (B, T, V) against ``targets`` (B, T), ignoring positions whose target is ``pad_id``.

References: :func:`coursekit.decoding.beam_search_step`, :func:`coursekit.decoding.greedy_search`,
``torch.nn.functional.cross_entropy(..., ignore_index=pad_id)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from coursekit.decoding import beam_search_step, greedy_search
from coursekit.exercises.core import CheckFailed, describe, exercise_check, expect_close, require_function, run_student

__all__ = ["check_beam_search_step", "check_greedy_decode", "check_masked_nll"]


# ----------------------------------------------------------------------------------------------
# one beam-search step
# ----------------------------------------------------------------------------------------------

def _beam_cases():
    g = torch.Generator().manual_seed(0)
    # hand-made: the best extension comes from the *second* beam, whose own score is lower
    scores = torch.tensor([-0.5, -1.0])
    log_probs = torch.log(torch.tensor([[0.4, 0.3, 0.3], [0.05, 0.9, 0.05]]))
    yield "two beams, three tokens (the best extension is of the second beam)", scores, log_probs, 2
    for k, V, size in [(3, 5, 3), (4, 7, 2), (1, 6, 3)]:
        scores = -torch.rand(k, generator=g).mul(3).sort(descending=True).values
        log_probs = torch.log_softmax(2 * torch.randn(k, V, generator=g), dim=-1)
        yield f"{k} beams, V={V}, beam_size={size}", scores, log_probs, size


def _beam_mistakes(scores: torch.Tensor, log_probs: torch.Tensor, size: int) -> dict[str, Any]:
    k, V = log_probs.shape
    wrong_total = log_probs.reshape(-1).topk(size).values
    per_beam = (scores + log_probs.max(dim=-1).values).sort(descending=True).values[:size]
    probs = (scores[:, None].exp() * log_probs.exp()).reshape(-1).topk(size).values
    return {
        "the running scores of the beams were not added: a candidate's score is scores[i] + log_probs[i, v]":
            wrong_total,
        "only the best token of each beam was kept (greedy within each beam): rank all k × V candidates together":
            per_beam if per_beam.numel() == size else None,
        "the scores are probabilities, not log-probabilities: add log-probabilities (multiply probabilities)":
            probs,
    }


@exercise_check("one step of beam search", reimplements=(
    "coursekit.decoding.beam_search_step", "coursekit.decoding.search.beam_search_step"))
def check_beam_search_step(beam_step: Callable) -> None:
    """``beam_step(scores (k,), log_probs (k, V), beam_size) -> (new_scores, beam_index, token)``."""
    require_function(beam_step, "beam_step")
    for case, scores, log_probs, size in _beam_cases():
        out = run_student(beam_step, case, scores.clone(), log_probs.clone(), size)
        if not (isinstance(out, (tuple, list)) and len(out) == 3):
            raise CheckFailed(f"on {case}, return a tuple (new_scores, beam_index, token), got {describe(out)}")
        got_scores, got_beam, got_token = (torch.as_tensor(x) for x in out)
        want_scores, want_beam, want_token = (x[0] for x in beam_search_step(scores[None], log_probs[None], size))
        if got_scores.shape == want_scores.shape and not torch.allclose(got_scores.double(), want_scores.double()) \
                and torch.allclose(got_scores.double().sort().values, want_scores.double().sort().values):
            raise CheckFailed(f"on {case}, the right candidates are there but not best first: "
                              "sort by score, descending (topk does this)")
        expect_close(got_scores, want_scores, case=case, what="new_scores",
                     mistakes=_beam_mistakes(scores, log_probs, size))
        V = log_probs.shape[1]
        if torch.equal(got_beam.long(), want_token) and torch.equal(got_token.long(), want_beam) \
                and not torch.equal(want_beam, want_token):
            raise CheckFailed(f"on {case}, beam_index and token are swapped: for a flat index f into the k × V "
                              "candidates, the beam is f // V and the token is f % V")
        pairs_got = list(zip(got_beam.long().tolist(), got_token.long().tolist()))
        pairs_want = list(zip(want_beam.tolist(), want_token.tolist()))
        if pairs_got != pairs_want:
            hint = ""
            if sorted(pairs_got) == sorted(pairs_want):
                hint = " The right candidates are there but not best first: sort by score, descending."
            elif [b for b, _ in pairs_got] == [f // log_probs.shape[0] for f in (want_beam * V + want_token).tolist()]:
                hint = " It looks like the flat index was divided by k instead of V (use f // V, f % V)."
            raise CheckFailed(f"on {case}, (beam_index, token) should be {pairs_want}, got {pairs_got}.{hint}")


# ----------------------------------------------------------------------------------------------
# greedy decoding
# ----------------------------------------------------------------------------------------------

BOS, EOS = 1, 2


def _markov(table: torch.Tensor):
    """A 'model' whose next-token log-probabilities depend on the last fed token (V, V)."""
    log_table = torch.log_softmax(table, dim=-1)

    def step(token: int) -> torch.Tensor:
        return log_table[int(token)].clone()

    def batched(prefix, state):
        return log_table[prefix[:, -1]], state

    return step, batched


def _greedy_cases():
    g = torch.Generator().manual_seed(1)
    table = torch.full((5, 5), -5.0)
    table[BOS, 3], table[3, 4], table[4, EOS] = 5.0, 5.0, 5.0          # <bos> → 3 → 4 → <eos>
    yield "a model that says 3 4 <eos>", table, 10
    loop = torch.full((5, 5), -5.0)
    loop[BOS, 3], loop[3, 4], loop[4, 3] = 5.0, 5.0, 5.0                # 3 4 3 4 … never ends
    yield "a model that never says <eos> (max_len=5)", loop, 5
    yield "a random model over 7 tokens", 3 * torch.randn(7, 7, generator=g), 6


@exercise_check("greedy decoding", reimplements=(
    "coursekit.decoding.greedy_search", "coursekit.decoding.search.greedy_search",
    "coursekit.decoding.beam_search", "coursekit.decoding.search.beam_search"))  # beam_size=1 is greedy
def check_greedy_decode(greedy_decode: Callable) -> None:
    """``greedy_decode(step, bos_id, eos_id, max_len) -> list[int]`` (no ``<bos>``, no ``<eos>``)."""
    require_function(greedy_decode, "greedy_decode")
    for case, table, max_len in _greedy_cases():
        step, batched = _markov(table)
        want = greedy_search(batched, None, batch_size=1, bos_id=BOS, eos_id=EOS, max_len=max_len).tokens[0]
        got = run_student(greedy_decode, case, step, BOS, EOS, max_len)
        if isinstance(got, torch.Tensor):
            got = got.tolist()
        if not isinstance(got, (list, tuple)):
            raise CheckFailed(f"on {case}, return a list of token ids, got {describe(got)}")
        got = [int(t) for t in got]
        if got == want:
            continue
        hint = ""
        if got == want + [EOS]:
            hint = " It looks like <eos> was kept in the output: stop *before* appending it."
        elif got[:1] == [BOS] and got[1:] == want:
            hint = " It looks like <bos> was included: return only the generated tokens."
        elif len(got) == len(want) - 1 and got == want[:-1]:
            hint = " One token short: max_len counts generated tokens (loop max_len times)."
        elif len(got) == len(want) + 1 and got[:-1] == want:
            hint = " One token too many: generate at most max_len tokens."
        elif len(got) > len(want) and got[: len(want)] == want:
            hint = " Decoding did not stop at <eos>."
        elif got and got[0] != (want[0] if want else EOS):
            hint = " Even the first token differs: feed <bos> first and take the arg-max of the log-probabilities."
        else:
            hint = " Feed back the token you just chose (not <bos> again, not the previous input)."
        raise CheckFailed(f"on {case}, expected {want}, got {got}.{hint}")


# ----------------------------------------------------------------------------------------------
# masked loss
# ----------------------------------------------------------------------------------------------

def _loss_cases():
    g = torch.Generator().manual_seed(2)
    for B, T, V, lengths in [(2, 4, 5, [4, 2]), (3, 5, 7, [5, 1, 3])]:
        logits = torch.randn(B, T, V, generator=g)
        targets = torch.randint(1, V, (B, T), generator=g)
        for b, n in enumerate(lengths):
            targets[b, n:] = 0
        yield f"logits {(B, T, V)}, target lengths {lengths} (pad_id=0)", logits, targets, 0


def _loss_mistakes(logits, targets, pad_id) -> dict[str, Any]:
    V = logits.shape[-1]
    flat = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), reduction="none").view(targets.shape)
    keep = (targets != pad_id).float()
    return {
        "padding positions were included in the mean (use ignore_index=pad_id or a mask)": flat.mean(),
        "the loss is averaged per sentence and then over sentences; average over all real tokens":
            ((flat * keep).sum(1) / keep.sum(1)).mean(),
        "the masked losses were summed instead of averaged over the real tokens": (flat * keep).sum(),
        "the masked sum was divided by all B × T positions, not by the number of real tokens":
            (flat * keep).sum() / keep.numel(),
    }


@exercise_check("masked cross-entropy", reimplements=(
    "torch.nn.functional.cross_entropy", "torch.nn.CrossEntropyLoss", "torch.nn.functional.nll_loss",
    "torch.nn.NLLLoss"))
def check_masked_nll(masked_nll: Callable) -> None:
    """``masked_nll(logits (B, T, V), targets (B, T), pad_id) -> scalar`` mean over real tokens."""
    require_function(masked_nll, "masked_nll")
    for case, logits, targets, pad_id in _loss_cases():
        want = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=pad_id)
        got = run_student(masked_nll, case, logits.clone(), targets.clone(), pad_id)
        if isinstance(got, torch.Tensor) and got.numel() != 1:
            raise CheckFailed(f"on {case}, return one number (the mean), got {describe(got)}")
        got = got.reshape(()) if isinstance(got, torch.Tensor) else torch.tensor(float(got))
        expect_close(got, want, case=case, what="the loss", mistakes=_loss_mistakes(logits, targets, pad_id))

"""Exercise checks for notebook 05 (sequence-to-sequence).

What the student writes:

* ``beam_step(scores, log_probs, beam_size)`` — one step of beam search for one sentence: ``scores``
  (k,) the log-probabilities of the kept prefixes, ``log_probs`` (k, V) the next-token
  log-probabilities of each prefix; return ``(new_scores (beam_size,), beam_index (beam_size,),
  token (beam_size,))`` for the ``beam_size`` best extensions, best first (the indices as integer tensors).
* ``greedy_decode(step, bos_id, eos_id, max_len)`` — ``step(token: int) -> log_probs (V,)`` feeds one
  token to the model, which keeps its own state, and gives the next-token distribution; return the list of
  generated token ids without ``<eos>`` (stop at ``<eos>`` or after ``max_len`` tokens).
* ``masked_nll(logits, targets, pad_id)`` — mean cross-entropy per *real* target token of
  ``logits`` (B, T, V) against ``targets`` (B, T), ignoring positions whose target is ``pad_id``.

Every check runs several seeded cases whose sizes and special ids vary (``pad_id`` 0, 3, V-1 …; ``<bos>`` /
``<eos>`` ids other than 1 / 2), computes its reference on its own copy of the inputs, checks the type, dtype
and shape of what comes back and names the typical mistake a wrong value matches.

References: :func:`coursekit.decoding.beam_search_step`, :func:`coursekit.decoding.greedy_search`,
``torch.nn.functional.cross_entropy(..., ignore_index=pad_id)``.
"""

from __future__ import annotations

import contextlib
import numbers
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from coursekit.decoding import beam_search_step, greedy_search
from coursekit.exercises.core import (
    CheckFailed,
    case_generator,
    case_seed,
    describe,
    exercise_check,
    expect_close,
    require_function,
    run_student,
)

__all__ = ["check_beam_search_step", "check_greedy_decode", "check_masked_nll"]


# ----------------------------------------------------------------------------------------------
# one beam-search step
# ----------------------------------------------------------------------------------------------

def _beam_cases():
    g = case_generator(0)
    # hand-made: the best extension comes from the *second* beam, whose own score is lower
    scores = torch.tensor([-0.5, -1.0])
    log_probs = torch.log(torch.tensor([[0.4, 0.3, 0.3], [0.05, 0.9, 0.05]]))
    yield "two beams, three tokens (the best extension is of the second beam)", scores, log_probs, 2
    # (k, V, beam_size): beam_size > k, beam_size = 1, k == V (scores added along the wrong axis do not raise)
    for k, V, size, what in [(3, 5, 3, ""), (4, 7, 2, ""), (1, 6, 3, " (a single beam)"), (4, 4, 4, " (k == V)"),
                             (5, 9, 1, " (beam_size=1)")]:
        scores = -torch.rand(k, generator=g).mul(3).sort(descending=True).values
        log_probs = torch.log_softmax(2 * torch.randn(k, V, generator=g), dim=-1)
        yield f"{k} beams, V={V}, beam_size={size}{what}", scores, log_probs, size
    # the first step: one live beam (score 0) and k-1 dead ones (-inf) with the same next-token distribution
    row = torch.log_softmax(2 * torch.randn(6, generator=g), dim=-1)
    yield ("the first step: beam 0 alive, beams 1 and 2 at -inf with the same log_probs, V=6, beam_size=3",
           torch.tensor([0.0, -float("inf"), -float("inf")]), row.expand(3, 6).clone(), 3)


def _beam_mistakes(scores: torch.Tensor, log_probs: torch.Tensor, size: int) -> dict[str, Any]:
    k, V = log_probs.shape
    wrong_total = log_probs.reshape(-1).topk(size).values
    per_beam = (scores + log_probs.max(dim=-1).values).sort(descending=True).values[:size]
    probs = (scores[:, None].exp() * log_probs.exp()).reshape(-1).topk(size).values
    candidates = scores[:, None] + log_probs
    flat = candidates.reshape(-1).topk(size).indices
    return {
        "the running scores of the beams were not added: a candidate's score is scores[i] + log_probs[i, v]":
            wrong_total,
        "only the best token of each beam was kept (greedy within each beam): rank all k × V candidates together":
            per_beam if per_beam.numel() == size else None,
        "the scores are probabilities, not log-probabilities: add log-probabilities (multiply probabilities)":
            probs,
        "new_scores are the log_probs[i, v] of the chosen extensions alone: return the totals "
        "scores[i] + log_probs[i, v]": log_probs.reshape(-1)[flat],
        "the lowest-scoring candidates were picked: take the largest (topk(largest=True), or sort descending)":
            candidates.reshape(-1).topk(size, largest=False).values,
        "the scores were added along the vocabulary axis (scores + log_probs broadcasts scores[v] onto "
        "log_probs[i, v]): use scores[:, None] + log_probs":
            (scores[None, :] + log_probs).reshape(-1).topk(size).values if k == V else None,
    }


def _expect_vector(x: Any, n: int, *, case: str, what: str, integer: bool) -> torch.Tensor:
    kind = "an int64" if integer else "a floating-point"
    expected = f"on {case}, expected {what} as {kind} tensor of shape ({n},), got {describe(x)}"
    if not isinstance(x, torch.Tensor):
        raise CheckFailed(expected + (" (return tensors, not Python lists)" if isinstance(x, (list, tuple)) else ""))
    if tuple(x.shape) != (n,):
        hint = ""
        if x.numel() == n:
            hint = ". Return a flat (beam_size,) tensor (no extra dimension of size 1)"
        elif x.dim() == 1:
            hint = ". Keep beam_size candidates (not k, not k × V)"
        raise CheckFailed(expected + hint)
    if integer and (x.is_floating_point() or x.is_complex() or x.dtype == torch.bool):
        raise CheckFailed(expected + ". Indices are integers: use integer division flat // V and flat % V "
                                     "(flat / V is a float division)")
    if not integer and not x.is_floating_point():
        raise CheckFailed(expected + ". Scores are log-probabilities, real numbers")
    return x


@exercise_check("one step of beam search", reimplements=(
    "coursekit.decoding.beam_search_step", "coursekit.decoding.search.beam_search_step"))
def check_beam_search_step(beam_step: Callable) -> None:
    """``beam_step(scores (k,), log_probs (k, V), beam_size) -> (new_scores, beam_index, token)``."""
    require_function(beam_step, "beam_step")
    for case, scores, log_probs, size in _beam_cases():
        k, V = log_probs.shape
        want_scores, want_beam, want_token = (x[0] for x in beam_search_step(scores[None].clone(),
                                                                             log_probs[None].clone(), size))
        mistakes = _beam_mistakes(scores.clone(), log_probs.clone(), size)
        out = run_student(beam_step, case, scores, log_probs, size)
        if not (isinstance(out, (tuple, list)) and len(out) == 3):
            raise CheckFailed(f"on {case}, return a tuple (new_scores, beam_index, token), got {describe(out)}")
        got_scores = _expect_vector(out[0], size, case=case, what="new_scores", integer=False)
        got_beam = _expect_vector(out[1], size, case=case, what="beam_index", integer=True)
        got_token = _expect_vector(out[2], size, case=case, what="token", integer=True)
        if not torch.allclose(got_scores.double(), want_scores.double()) \
                and torch.allclose(got_scores.double().sort().values, want_scores.double().sort().values):
            raise CheckFailed(f"on {case}, the right candidates are there but not best first: "
                              "sort by score, descending (topk does this)")
        expect_close(got_scores, want_scores, case=case, what="new_scores", mistakes=mistakes)
        if torch.equal(got_beam.long(), want_token) and torch.equal(got_token.long(), want_beam) \
                and not torch.equal(want_beam, want_token):
            raise CheckFailed(f"on {case}, beam_index and token are swapped: for a flat index f into the k × V "
                              "candidates, the beam is f // V and the token is f % V")
        pairs_got = list(zip(got_beam.long().tolist(), got_token.long().tolist()))
        pairs_want = list(zip(want_beam.tolist(), want_token.tolist()))
        if pairs_got != pairs_want:
            flat = (want_beam * V + want_token).tolist()
            hint = ""
            if sorted(pairs_got) == sorted(pairs_want):
                hint = " The right candidates are there but not best first: sort by score, descending."
            elif [b for b, _ in pairs_got] == [f // k for f in flat] and k != V:
                hint = " It looks like the flat index was divided by k instead of V (use f // V, f % V)."
            elif [t for _, t in pairs_got] == flat:
                hint = " token is the flat index f itself: the token is f % V (and the beam f // V)."
            raise CheckFailed(f"on {case}, (beam_index, token) should be {pairs_want}, got {pairs_got}.{hint}")


# ----------------------------------------------------------------------------------------------
# greedy decoding
# ----------------------------------------------------------------------------------------------

class _Model:
    """A 'model' with a state: its next-token log-probabilities depend on the last fed token and on how many
    tokens it has been fed — ``log_tables[min(calls, P - 1), token]`` (P, V, V). Each ``step`` call feeds one
    token, as in a recurrent decoder, so calling it twice per generated token changes what comes next."""

    def __init__(self, log_tables: torch.Tensor, max_calls: int):
        self.log_tables, self.max_calls, self.calls = log_tables, max_calls, 0

    def step(self, token) -> torch.Tensor:
        if self.calls >= self.max_calls:
            raise RuntimeError(f"step() was called more than {self.max_calls} times: decoding must stop at <eos> or "
                               "after max_len generated tokens")
        try:
            t = int(token)
        except (TypeError, ValueError, RuntimeError):
            raise TypeError(f"step() feeds one token id (an int), got {describe(token)}") from None
        V = self.log_tables.shape[-1]
        if not 0 <= t < V:
            raise ValueError(f"step() was fed {t}, not a token id in 0..{V - 1}")
        row = self.log_tables[min(self.calls, self.log_tables.shape[0] - 1), t]
        self.calls += 1
        return row.clone()


def _batched(log_tables: torch.Tensor):
    """The same model for :func:`greedy_search`: the prefix length tells how many tokens were fed."""
    def batched(prefix, state):
        return log_tables[min(prefix.shape[1] - 1, log_tables.shape[0] - 1)][prefix[:, -1]], state
    return batched


def _chain(V: int, path: list[int], *, positional: bool = True, seed: int = 0) -> torch.Tensor:
    """Log-probability tables that say path[1] after <bos> = path[0], then path[2], … almost surely.

    ``positional``: one table per step (P = len(path) - 1), so the same token may be followed by different ones
    at different steps; otherwise one table for every step (P = 1). Everything else is low, distinct noise (no
    ties, so the arg-max is unambiguous whatever a wrong decoder feeds)."""
    g = case_generator(seed)
    P = len(path) - 1 if positional else 1
    tables = -5.0 + 0.5 * torch.rand(P, V, V, generator=g)
    for p, (a, b) in enumerate(zip(path, path[1:])):
        tables[p if positional else 0, a, b] = 5.0
    return torch.log_softmax(tables, dim=-1)


def _stateful_random(V: int, bos: int, eos: int, length: int, seed: int) -> torch.Tensor:
    """(length + 1, V, V): flat-ish random rows (the arg-max has about a third of the mass, so a sampler
    strays), <eos> unlikely before step ``length`` and almost sure at it; margins ≥ 0.2 so the arg-max is clear."""
    g = case_generator(seed)
    tables = []
    for pos in range(length + 1):
        while True:
            t = 0.8 * torch.randn(V, V, generator=g)
            t[:, eos] = -4.0
            if pos == length:
                t[:, eos] = 8.0
            top2 = t.topk(2, dim=-1).values
            if bool((top2[:, 0] - top2[:, 1] > 0.2).all()):
                break
        tables.append(torch.log_softmax(t, dim=-1))
    return torch.stack(tables)


def _greedy_cases():
    # (case, log_tables, bos, eos, max_len): ids vary (eos 0, bos 5 …), so hard-coded ids fail
    yield "a model that says 3 5 <eos> (bos_id=1, eos_id=2)", _chain(6, [1, 3, 5, 2]), 1, 2, 10
    yield ("a model that never says <eos> (bos_id=4, eos_id=0, max_len=5)",
           _chain(5, [4, 1, 2, 1], positional=False), 4, 0, 5)
    yield "a model whose first token is <eos> (bos_id=2, eos_id=3)", _chain(5, [2, 3]), 2, 3, 6
    yield "max_len=1, a model that says 2 3 <eos> (bos_id=5, eos_id=1)", _chain(6, [5, 2, 3, 1]), 5, 1, 1
    yield ("a model that generates the <bos> id again: 3 0 4 <eos> (bos_id=0, eos_id=6)", _chain(7, [0, 3, 0, 4, 6]),
           0, 6, 10)
    yield ("a random model with a state (it depends on the tokens fed so far; bos_id=7, eos_id=8, max_len=12)",
           _stateful_random(9, 7, 8, 8, seed=1), 7, 8, 12)


@contextlib.contextmanager
def _seeded(seed: int):
    """Fix torch's, Python's and NumPy's random generators inside the block (a sampling decoder gets the same
    draws every time the check runs), and give the notebook its own generator states back afterwards."""
    py_state, np_state = random.getstate(), np.random.get_state()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(case_seed(seed))
        random.seed(seed)
        np.random.seed(seed)
        try:
            yield
        finally:
            random.setstate(py_state)
            np.random.set_state(np_state)


def _token_list(got: Any, case: str) -> list[int]:
    expected = f"on {case}, expected a list of int token ids"
    if isinstance(got, torch.Tensor):
        if got.dim() != 1:
            raise CheckFailed(f"{expected}, got {describe(got)}: return a flat list (no batch dimension; "
                              "e.g. tokens[0].tolist() or a plain Python list)")
        if got.is_floating_point() or got.is_complex() or got.dtype == torch.bool:
            raise CheckFailed(f"{expected}, got {describe(got)}: token ids are integers")
        got = got.tolist()
    if not isinstance(got, (list, tuple)):
        raise CheckFailed(f"{expected}, got {describe(got)}")
    out = []
    for t in got:
        if isinstance(t, torch.Tensor) and t.numel() == 1 and not (t.is_floating_point() or t.dtype == torch.bool):
            t = int(t)
        if isinstance(t, bool) or not isinstance(t, numbers.Integral):
            raise CheckFailed(f"{expected}, got a list holding {describe(t)}"
                              + (": return a flat list of ints" if isinstance(t, (list, tuple, torch.Tensor)) else ""))
        out.append(int(t))
    return out


def _simulate(log_tables: torch.Tensor, bos: int, eos: int, max_len: int, *, stop: int | None = None) -> list[int]:
    """Greedy decoding of the table model with a possibly wrong <bos> (fed) and <eos> (``stop``) id."""
    model = _Model(log_tables, 10 * max_len + 10)
    out, token = [], bos
    for _ in range(max_len):
        token = int(model.step(token).argmax())
        if token == (eos if stop is None else stop):
            break
        out.append(token)
    return out


def _greedy_hint(got: list[int], want: list[int], log_tables, bos: int, eos: int, max_len: int, calls: int) -> str:
    V = log_tables.shape[-1]
    if got == want + [eos]:
        return " It looks like <eos> was kept in the output: test for <eos> *before* appending the token."
    if got[:1] == [bos] and got[1:] == want:
        return " It looks like <bos> was included: return only the generated tokens."
    if bos in want and got == [t for t in want if t != bos]:
        return (" The model generated the <bos> id as an ordinary token and your function dropped it: only the "
                "<eos> ends the output.")
    if len(got) == len(want) - 1 and got == want[:-1]:
        return " One token short: max_len counts generated tokens (loop max_len times)."
    if len(got) == len(want) + 1 and got[:-1] == want:
        return " One token too many: generate at most max_len tokens."
    for wrong_bos in sorted({0, 1, 2, 3, eos} - {bos}):
        if wrong_bos < V and got == _simulate(log_tables, wrong_bos, eos, max_len):
            return f" It looks like {wrong_bos} was fed as <bos>: use the bos_id argument ({bos})."
    for wrong_eos in sorted({0, 1, 2, 3, bos} - {eos}):
        if len(got) < max_len and got == _simulate(log_tables, bos, eos, max_len, stop=wrong_eos):
            return (f" It looks like decoding tested for id {wrong_eos} instead of <eos>: <eos> is the eos_id "
                    f"argument ({eos}).")
    if got[: len(want) + 1] == want + [eos]:
        return (f" Decoding did not stop at <eos> (id {eos}, at position {len(want)}): test each new token for "
                "<eos> *before* appending it, and stop there.")
    if eos in got:
        return (f" <eos> (id {eos}) is in the output, at position {got.index(eos)}: test each new token for <eos> "
                "*before* appending it, and stop there.")
    if len(got) > len(want) and got[: len(want)] == want:
        return " Decoding did not stop at <eos>."
    if calls > len(got) + 1:
        return (f" step() was called {calls} times for {len(got)} tokens: each call feeds one token to the model, "
                "which keeps its own state; call it once per generated token.")
    if got and got[0] != (want[0] if want else eos):
        return " Even the first token differs: feed <bos> first and take the arg-max of the log-probabilities."
    return " Feed back the token you just chose (not <bos> again, not the previous input)."


@exercise_check("greedy decoding", reimplements=(
    "coursekit.decoding.greedy_search", "coursekit.decoding.search.greedy_search",
    "coursekit.decoding.beam_search", "coursekit.decoding.search.beam_search"))  # beam_size=1 is greedy
def check_greedy_decode(greedy_decode: Callable) -> None:
    """``greedy_decode(step, bos_id, eos_id, max_len) -> list[int]`` (no ``<bos>``, no ``<eos>``)."""
    require_function(greedy_decode, "greedy_decode")
    for case, log_tables, bos, eos, max_len in _greedy_cases():
        want = greedy_search(_batched(log_tables), None, batch_size=1, bos_id=bos, eos_id=eos,
                             max_len=max_len).tokens[0]
        model = _Model(log_tables, 3 * max_len + 5)
        with _seeded(0):
            got = _token_list(run_student(greedy_decode, case, model.step, bos, eos, max_len), case)
        if got == want:
            continue
        again = _Model(log_tables, 3 * max_len + 5)
        with _seeded(1):
            try:
                second = _token_list(greedy_decode(again.step, bos, eos, max_len), case)
            except Exception:  # noqa: BLE001 - student code; the first run's output is what is reported
                second = got
        if second != got:
            raise CheckFailed(f"on {case}, expected {want}, got {got} — and {second} when run again: your decoder "
                              "is not deterministic (does it sample?). Greedy decoding takes the arg-max at every "
                              "step.")
        hint = _greedy_hint(got, want, log_tables, bos, eos, max_len, model.calls)
        raise CheckFailed(f"on {case}, expected {want}, got {got}.{hint}")


# ----------------------------------------------------------------------------------------------
# masked loss
# ----------------------------------------------------------------------------------------------

def _loss_cases():
    g = case_generator(2)
    # (B, T, V, lengths, pad_id, logit scale): pad 0, 3, 2, V-1, 1; no padding at all; a fully padded row;
    # logits so large that log(softmax(…)) underflows
    specs = [(2, 4, 5, [4, 2], 0, 1.0, ""), (3, 5, 7, [5, 1, 3], 3, 1.0, ""),
             (1, 6, 4, [6], 2, 1.0, ", batch size 1, no padding"),
             (3, 4, 6, [4, 0, 2], 5, 1.0, ", the second row all padding"),
             (2, 5, 8, [5, 3], 1, 40.0, ", logits on a large scale (×40)")]
    for B, T, V, lengths, pad_id, scale, what in specs:
        logits = scale * torch.randn(B, T, V, generator=g)
        targets = torch.randint(0, V - 1, (B, T), generator=g)
        targets = targets + (targets >= pad_id).long()                     # real tokens are never pad_id
        for b, n in enumerate(lengths):
            targets[b, n:] = pad_id
        yield f"logits {(B, T, V)}, target lengths {lengths} (pad_id={pad_id}{what})", logits, targets, pad_id


def _loss_mistakes(logits, targets, pad_id) -> dict[str, Any]:
    B, T, V = logits.shape
    flat = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), reduction="none").view(targets.shape)
    keep = (targets != pad_id).float()

    def masked_mean(per_token, mask):
        return (per_token * mask).sum() / mask.sum()

    def picked(values, t=targets):
        return values.gather(-1, t[..., None])[..., 0]

    shifted = F.cross_entropy(logits[:, :-1].reshape(-1, V), targets[:, 1:].reshape(-1), reduction="none")
    return {
        "padding positions were included in the mean (use ignore_index=pad_id or a mask)": flat.mean(),
        "the loss is averaged per sentence and then over sentences; average over all real tokens":
            ((flat * keep).sum(1) / keep.sum(1)).mean(),
        "the masked losses were summed instead of averaged over the real tokens": (flat * keep).sum(),
        "the masked sum was divided by all B × T positions, not by the number of real tokens":
            (flat * keep).sum() / keep.numel(),
        "the masked sum was divided by the batch size B, not by the number of real tokens": (flat * keep).sum() / B,
        "the padding id is hard-coded as 0: mask the positions whose target is pad_id":
            masked_mean(flat, (targets != 0).float()) if pad_id != 0 else None,
        "the mask is inverted: it keeps the padding and drops the real tokens (keep = targets != pad_id)":
            masked_mean(flat, 1 - keep),
        "log_softmax was taken over the time axis: normalise over the vocabulary, the last axis (dim=-1)":
            masked_mean(-picked(torch.log_softmax(logits, dim=1)), keep),
        "the sign is wrong: the loss is the *negative* log-likelihood": -masked_mean(flat, keep),
        "the logits were used as log-probabilities: apply log_softmax first": masked_mean(-picked(logits), keep),
        "the probabilities were used instead of their log: the loss is −log p(target)":
            masked_mean(-picked(torch.softmax(logits, dim=-1)), keep),
        "the targets were shifted by one position: logits[:, t] already scores targets[:, t]":
            masked_mean(shifted.view(B, T - 1), keep[:, 1:]) if T > 1 else None,
        "log(softmax(…)) underflows to log(0) = -inf for large logits: use log_softmax, which is computed stably":
            masked_mean(-picked(torch.log(torch.softmax(logits, dim=-1))), keep),
    }


def _scalar_loss(got: Any, case: str) -> torch.Tensor:
    expected = f"on {case}, expected the loss as one number (a 0-d float tensor, or a float)"
    if got is None:
        raise CheckFailed(f"{expected}, got None: a missing `return`?")
    if isinstance(got, (tuple, list)):
        hint = (": a pair like (sum, count)? Return the mean itself, sum / count" if len(got) == 2 else "")
        raise CheckFailed(f"{expected}, got {describe(got)}{hint}")
    if isinstance(got, torch.Tensor):
        if got.numel() != 1:
            raise CheckFailed(f"{expected}, got {describe(got)}: average the per-token losses into one number")
        if got.dim() != 0:
            raise CheckFailed(f"{expected}, got {describe(got)}: return a 0-d tensor (no extra dimensions; "
                              ".mean() of the kept losses gives one)")
        if not got.is_floating_point():
            raise CheckFailed(f"{expected}, got {describe(got)}: a loss is a real number")
        return got
    if isinstance(got, bool) or not isinstance(got, numbers.Real):
        raise CheckFailed(f"{expected}, got {describe(got)}")
    return torch.tensor(float(got))


@exercise_check("masked cross-entropy", reimplements=(
    "torch.nn.functional.cross_entropy", "torch.nn.CrossEntropyLoss", "torch.nn.functional.nll_loss",
    "torch.nn.NLLLoss"))
def check_masked_nll(masked_nll: Callable) -> None:
    """``masked_nll(logits (B, T, V), targets (B, T), pad_id) -> scalar`` mean over real tokens."""
    require_function(masked_nll, "masked_nll")
    for case, logits, targets, pad_id in _loss_cases():
        want = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=pad_id)
        mistakes = _loss_mistakes(logits.clone(), targets.clone(), pad_id)
        got = _scalar_loss(run_student(masked_nll, case, logits, targets, pad_id), case)
        if not bool(torch.isfinite(got)):
            for hint, wrong in mistakes.items():
                if wrong is not None and not bool(torch.isfinite(wrong)) and torch.allclose(
                        got.double(), wrong.double(), equal_nan=True):
                    raise CheckFailed(f"on {case}, the loss is {got.item()} where the reference is {want.item():.6g}. "
                                      f"It looks like {hint}.")
            raise CheckFailed(f"on {case}, the loss is {got.item()} where the reference is {want.item():.6g}: "
                              "log(softmax(…)) underflows to log(0) = -inf for large logits (use log_softmax), "
                              "and 0 × inf is NaN (select the kept positions instead of multiplying by the mask)")
        expect_close(got, want, case=case, what="the loss", mistakes=mistakes)

"""Checks of notebook 05: the reference passes, a stub is "not attempted", typical mistakes get their hint."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from exercise_helpers import fails_with, passes, refuses_delegation, stub

from coursekit import decoding, exercises
from coursekit.exercises.checks import seq2seq as s2s


def test_checks_are_exported_and_stubs_not_attempted():
    for name in s2s.__all__:
        assert getattr(exercises, name) is getattr(s2s, name)
        assert getattr(s2s, name)(stub, verbose=False).status == "not attempted", name


# ---------------------------------------------------------------- beam step

def _beam_step(scores, log_probs, beam_size, *, add=True, per_beam=False, swap=False, unsorted=False):
    k, V = log_probs.shape
    cand = (scores[:, None] + log_probs) if add else log_probs
    if per_beam:
        best, tok = cand.max(-1)
        order = best.argsort(descending=True)[:beam_size]
        return best[order], order, tok[order]
    top, flat = cand.reshape(-1).topk(beam_size)
    beam, token = flat // V, flat % V
    if unsorted:
        perm = torch.arange(beam_size).flip(0)
        top, beam, token = top[perm], beam[perm], token[perm]
    return (top, token, beam) if swap else (top, beam, token)


def test_beam_step_reference_and_mistakes():
    passes(s2s.check_beam_search_step, _beam_step)
    fails_with(s2s.check_beam_search_step, lambda s, lp, k: _beam_step(s, lp, k, add=False), "running scores")
    fails_with(s2s.check_beam_search_step, lambda s, lp, k: _beam_step(s, lp, k, per_beam=True), "greedy within")
    fails_with(s2s.check_beam_search_step, lambda s, lp, k: _beam_step(s, lp, k, swap=True), "swapped")
    fails_with(s2s.check_beam_search_step, lambda s, lp, k: _beam_step(s, lp, k, unsorted=True), "best first")
    fails_with(s2s.check_beam_search_step, lambda s, lp, k: 42, "tuple")


# ---------------------------------------------------------------- greedy decoding

def _greedy(step, bos_id, eos_id, max_len, *, keep_eos=False, keep_bos=False, extra=0, no_stop=False):
    out, token = [], bos_id
    for _ in range(max_len + extra):
        token = int(step(token).argmax())
        if token == eos_id and not no_stop:
            if keep_eos:
                out.append(token)
            break
        out.append(token)
    return ([bos_id] if keep_bos else []) + out


def test_greedy_reference_and_mistakes():
    passes(s2s.check_greedy_decode, _greedy)
    fails_with(s2s.check_greedy_decode, lambda *a: _greedy(*a, keep_eos=True), "<eos> was kept")
    fails_with(s2s.check_greedy_decode, lambda *a: _greedy(*a, keep_bos=True), "<bos> was included")
    fails_with(s2s.check_greedy_decode, lambda *a: _greedy(*a, extra=1), "too many")
    fails_with(s2s.check_greedy_decode, lambda *a: _greedy(*a, no_stop=True), "did not stop")

    def always_bos(step, bos_id, eos_id, max_len):
        out = []
        for _ in range(max_len):
            token = int(step(bos_id).argmax())
            if token == eos_id:
                break
            out.append(token)
        return out

    fails_with(s2s.check_greedy_decode, always_bos, "Feed back")


# ---------------------------------------------------------------- masked loss

def _per_token(logits, targets):
    """−log softmax(logits)[target] at every position (B, T), written out."""
    return -torch.log_softmax(logits, dim=-1).gather(-1, targets[..., None])[..., 0]


def _masked_nll(logits, targets, pad_id):   # the solution in notebook 05
    return _per_token(logits, targets)[targets != pad_id].mean()


def test_masked_nll_reference_and_mistakes():
    passes(s2s.check_masked_nll, _masked_nll)
    passes(s2s.check_masked_nll, lambda lg, t, p: _masked_nll(lg, t, p).item())  # a float is fine
    fails_with(s2s.check_masked_nll, lambda lg, t, p: _per_token(lg, t).mean(), "padding positions")
    fails_with(s2s.check_masked_nll,
                lambda lg, t, p: ((_per_token(lg, t) * (t != p)).sum(1) / (t != p).sum(1)).mean(), "per sentence")
    fails_with(s2s.check_masked_nll, lambda lg, t, p: (_per_token(lg, t) * (t != p)).sum(), "summed")
    fails_with(s2s.check_masked_nll, lambda lg, t, p: _per_token(lg, t), "one number")


# ---------------------------------------------------------------- calling the library is refused

def _greedy_by_library(step, bos_id, eos_id, max_len, *, beam=False):
    def batched(prefix, state):
        return torch.stack([step(int(t)) for t in prefix[:, -1]]), state

    if beam:
        return decoding.beam_search(batched, None, batch_size=1, bos_id=bos_id, eos_id=eos_id, max_len=max_len,
                                    beam_size=1)
    return decoding.greedy_search(batched, None, batch_size=1, bos_id=bos_id, eos_id=eos_id,
                                  max_len=max_len).tokens[0]


def _flat(logits, targets):
    return logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)


@pytest.mark.parametrize("check, delegating, dotted, correct", [
    (s2s.check_beam_search_step,
     lambda s, lp, k: tuple(x[0] for x in decoding.beam_search_step(s[None], lp[None], k)),
     "coursekit.decoding.beam_search_step", True),
    (s2s.check_greedy_decode, _greedy_by_library, "coursekit.decoding.greedy_search", True),
    (s2s.check_greedy_decode, lambda *a: _greedy_by_library(*a, beam=True), "coursekit.decoding.beam_search",
     False),
    (s2s.check_masked_nll, lambda lg, t, p: F.cross_entropy(*_flat(lg, t), ignore_index=p),
     "torch.nn.functional.cross_entropy", True),
    (s2s.check_masked_nll, lambda lg, t, p: torch.nn.CrossEntropyLoss(ignore_index=p)(*_flat(lg, t)),
     "torch.nn.CrossEntropyLoss", True),
    (s2s.check_masked_nll, lambda lg, t, p: F.nll_loss(torch.log_softmax(lg, -1).flatten(0, 1), t.flatten(),
                                                       ignore_index=p),
     "torch.nn.functional.nll_loss", True),
    (s2s.check_masked_nll, lambda lg, t, p: torch.nn.NLLLoss(ignore_index=p), "torch.nn.NLLLoss", False),
])
def test_calling_the_library_is_refused(check, delegating, dotted, correct):
    refuses_delegation(check, delegating, dotted, correct=correct)


def test_the_defining_module_is_refused_too():
    refuses_delegation(s2s.check_beam_search_step,
                       lambda s, lp, k: decoding.search.beam_search_step(s[None], lp[None], k),
                       "coursekit.decoding.search.beam_search_step")


@pytest.mark.parametrize("check, solution", [
    (s2s.check_beam_search_step, _beam_step), (s2s.check_greedy_decode, _greedy),
    (s2s.check_masked_nll, _masked_nll),
])
def test_reference_solutions_still_pass(check, solution):
    passes(check, solution)

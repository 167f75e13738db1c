"""Greedy decoding and beam search, shared by every sequence model of the course.

A model is decoded through a **step function**::

    log_probs, state = step(prefix, state)
    # prefix    (N, t) long: the tokens so far, starting with <bos>
    # state     whatever the model carries between steps (encoder outputs, RNN hidden, KV cache, ...)
    # log_probs (N, V): scores of the next token (logits are fine: they go through log_softmax)

A recurrent decoder reads only ``prefix[:, -1]``; a Transformer without a cache re-reads the whole
prefix. Beam search must copy and reorder the state when beams are kept, duplicated or dropped;
by default every tensor in the (nested tuple / list / dict) state is indexed along **dim 0**, so keep
the batch first in the state, or pass ``reorder_state(state, index)``.

Beam search (e.g. Sutskever et al. 2014 §3.2; Koehn 2017 §13.2) keeps the ``k`` best prefixes of each
sentence. A finished beam (one that produced ``<eos>``) stays in the beam with a frozen score. With
``length_penalty=α`` hypotheses are ranked by ``log P(y) / |y|^α`` (|y| counts ``<eos>``), so that long
translations are not punished for having more negative log-probabilities to add up (α = 0: raw
log-probability, α = 1: mean log-probability per token). With ``beam_size=1`` it is greedy decoding.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from coursekit.decoding.sampling import _check_scores
from coursekit.validation import check_positive_int, check_tensor

__all__ = ["SearchResult", "greedy_search", "beam_search", "beam_search_step", "reorder_state"]

StepFn = Callable[[torch.Tensor, Any], tuple[torch.Tensor, Any]]


@dataclass
class SearchResult:
    """Decoded hypotheses for a batch of ``B`` inputs.

    ``tokens[b]``: the best hypothesis without ``<bos>`` and ``<eos>``; ``scores`` (B,): its total
    log-probability (``<eos>`` included); ``finished`` (B,): whether it ended with ``<eos>`` (False:
    cut at ``max_len``); ``beams[b]``: all kept hypotheses as ``(tokens, score)``, best first (by the
    length-normalised score).
    """

    tokens: list[list[int]]
    scores: torch.Tensor
    finished: torch.Tensor
    beams: list[list[tuple[list[int], float]]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.tokens)


def reorder_state(state: Any, index: torch.Tensor) -> Any:
    """Select rows ``index`` (dim 0) of every tensor in a nested tuple / list / dict state.

    ``index`` is a 1-D integer tensor; each of its values must be a row of every tensor in the state.
    """
    if not isinstance(index, torch.Tensor):
        raise TypeError(f"index must be a 1-D integer tensor of rows, got {type(index).__name__}")
    if index.dim() != 1 or index.is_floating_point() or index.is_complex() or index.dtype == torch.bool:
        raise TypeError(f"index must be a 1-D integer tensor of rows, got {index.dtype} {tuple(index.shape)}")
    lo, hi = (int(index.min()), int(index.max())) if index.numel() else (0, -1)
    return _reorder(state, index.long(), lo, hi)


def _reorder(state: Any, index: torch.Tensor, lo: int, hi: int) -> Any:
    """:func:`reorder_state` once ``index`` is checked; ``lo``/``hi`` are its smallest and largest values."""
    if state is None:
        return None
    if isinstance(state, torch.Tensor):
        if lo < 0 or hi >= state.shape[0]:
            raise ValueError(f"index values must lie in [0, {state.shape[0]}) (the rows of a state tensor of "
                             f"shape {tuple(state.shape)}), got min {lo}, max {hi}")
        return state.index_select(0, index.to(state.device))
    if isinstance(state, tuple):
        return tuple(_reorder(s, index, lo, hi) for s in state)
    if isinstance(state, list):
        return [_reorder(s, index, lo, hi) for s in state]
    if isinstance(state, dict):
        return {k: _reorder(v, index, lo, hi) for k, v in state.items()}
    raise TypeError(f"cannot reorder a state of type {type(state).__name__}; "
                    "use tensors in tuples/lists/dicts or pass reorder_state=")


def _check_common(step, batch_size, bos_id, eos_id, max_len) -> None:
    if not callable(step):
        raise TypeError(f"step must be a function step(prefix, state), got {type(step).__name__}")
    check_positive_int(batch_size, "batch_size")
    check_positive_int(max_len, "max_len")
    for value, name in ((bos_id, "bos_id"), (eos_id, "eos_id")):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise TypeError(f"{name} must be a non-negative int, got {value!r}")


def _next_log_probs(step: StepFn, prefix: torch.Tensor, state: Any, n: int, bos_id: int, eos_id: int):
    out = step(prefix, state)
    if not (isinstance(out, tuple) and len(out) == 2):
        raise TypeError("step(prefix, state) must return a pair (log_probs (N, V), new_state), "
                        f"got {type(out).__name__}")
    scores, state = out
    check_tensor(scores, "step log_probs", ndim=2, floating=True)
    if scores.shape[0] != n:
        raise ValueError(f"step returned log_probs for {scores.shape[0]} rows, expected N = {n} "
                         f"(shape {tuple(scores.shape)})")
    for name, value in (("bos_id", bos_id), ("eos_id", eos_id)):
        if value >= scores.shape[1]:
            raise ValueError(f"{name}={value} is outside the vocabulary of size {scores.shape[1]}")
    _check_scores(scores, "step log_probs")
    return torch.log_softmax(scores.float(), dim=-1), state  # (N, V)


def _check_length_penalty(length_penalty) -> None:
    if isinstance(length_penalty, bool) or not isinstance(length_penalty, (int, float)) or not length_penalty >= 0:
        raise ValueError(f"length_penalty must be a number ≥ 0, got {length_penalty!r}")


def _strip(seq: list[int], eos_id: int) -> tuple[list[int], bool]:
    if eos_id in seq:
        return seq[: seq.index(eos_id)], True
    return seq, False


@torch.no_grad()
def greedy_search(step: StepFn, state: Any, *, batch_size: int, bos_id: int, eos_id: int, max_len: int,
                  device: torch.device | str | None = None) -> SearchResult:
    """Feed back the arg-max token until every sentence has produced ``<eos>`` or ``max_len`` tokens."""
    _check_common(step, batch_size, bos_id, eos_id, max_len)
    prefix = torch.full((batch_size, 1), bos_id, dtype=torch.long, device=device)  # (B, 1)
    scores = torch.zeros(batch_size, device=device)
    finished = torch.zeros(batch_size, dtype=torch.bool, device=device)
    for _ in range(max_len):
        log_probs, state = _next_log_probs(step, prefix, state, batch_size, bos_id, eos_id)  # (B, V)
        best_lp, best = log_probs.max(dim=-1)                                       # (B,), (B,)
        best = torch.where(finished, torch.full_like(best, eos_id), best)           # finished: pad with <eos>
        scores = scores + torch.where(finished, torch.zeros_like(best_lp), best_lp)
        prefix = torch.cat([prefix, best[:, None]], dim=1)                           # (B, t + 1)
        finished = finished | (best == eos_id)
        if bool(finished.all()):
            break
    tokens = [_strip(row, eos_id)[0] for row in prefix[:, 1:].tolist()]
    beams = [[(t, float(s))] for t, s in zip(tokens, scores.tolist())]
    return SearchResult(tokens, scores.cpu(), finished.cpu(), beams)


def beam_search_step(scores: torch.Tensor, log_probs: torch.Tensor, beam_size: int,
                     lengths: torch.Tensor | None = None, length_penalty: float = 0.0):
    """One step of beam search: the ``beam_size`` best one-token extensions of the current beams.

    ``scores`` (B, k): log-probabilities of the kept prefixes; ``log_probs`` (B, k, V): next-token
    log-probabilities. Candidates score ``scores[b, i] + log_probs[b, i, v]``; with
    ``length_penalty=α`` and ``lengths`` (B, k) (the candidates' lengths) they are *ranked* by
    ``score / length^α``. Returns ``(new_scores (B, k'), beam_index (B, k'), token (B, k'))`` with
    ``k' = beam_size``, best first; ``new_scores`` are un-normalised.
    """
    check_tensor(scores, "scores", ndim=2, floating=True)
    check_tensor(log_probs, "log_probs", ndim=3, floating=True)
    check_positive_int(beam_size, "beam_size")
    B, k, V = log_probs.shape
    if scores.shape != (B, k):
        raise ValueError(f"scores must have shape (B, k) = {(B, k)} to match log_probs {tuple(log_probs.shape)}, "
                         f"got {tuple(scores.shape)}")
    if beam_size > k * V:
        raise ValueError(f"beam_size={beam_size} exceeds the k*V = {k * V} candidates")
    _check_length_penalty(length_penalty)
    candidates = scores[:, :, None] + log_probs                               # (B, k, V)
    rank = candidates
    if length_penalty:
        if lengths is None:
            raise ValueError("length_penalty needs the candidates' lengths (B, k)")
        check_tensor(lengths, "lengths")
        if lengths.shape != (B, k):
            raise ValueError(f"lengths must have shape (B, k) = {(B, k)}, got {tuple(lengths.shape)}")
        rank = candidates / lengths.to(candidates.dtype).clamp(min=1)[:, :, None] ** length_penalty
    _, flat = rank.reshape(B, k * V).topk(beam_size, dim=-1)                  # (B, k')
    new_scores = candidates.reshape(B, k * V).gather(1, flat)
    return new_scores, flat // V, flat % V


@torch.no_grad()
def beam_search(step: StepFn, state: Any, *, batch_size: int, bos_id: int, eos_id: int, max_len: int,
                beam_size: int = 4, length_penalty: float = 0.0,
                reorder: Callable[[Any, torch.Tensor], Any] = reorder_state,
                device: torch.device | str | None = None) -> SearchResult:
    """Beam search with ``beam_size`` beams per sentence, for a batch of ``batch_size`` sentences.

    ``state`` holds ``batch_size`` rows; it is expanded to ``batch_size * beam_size`` rows (sentence-major:
    row ``b * k + i`` is beam ``i`` of sentence ``b``) with ``reorder``. See the module docstring.
    """
    _check_common(step, batch_size, bos_id, eos_id, max_len)
    check_positive_int(beam_size, "beam_size")
    _check_length_penalty(length_penalty)
    if not callable(reorder):
        raise TypeError(f"reorder must be a function reorder(state, index), got {type(reorder).__name__}")
    B, k = batch_size, beam_size
    state = reorder(state, torch.arange(B, device=device).repeat_interleave(k))
    prefix = torch.full((B * k, 1), bos_id, dtype=torch.long, device=device)   # (B*k, 1)
    scores = torch.zeros(B, k, device=device)
    scores[:, 1:] = float("-inf")               # at t = 0 all beams are the same <bos>: expand one of them
    finished = torch.zeros(B, k, dtype=torch.bool, device=device)
    lengths = torch.zeros(B, k, dtype=torch.long, device=device)
    for _ in range(max_len):
        log_probs, state = _next_log_probs(step, prefix, state, B * k, bos_id, eos_id)
        V = log_probs.shape[-1]
        log_probs = log_probs.view(B, k, V)
        if bool(finished.any()):                # a finished beam only "extends" by <eos> at no cost
            frozen = torch.full((V,), float("-inf"), device=log_probs.device)
            frozen[eos_id] = 0.0
            log_probs = torch.where(finished[:, :, None], frozen, log_probs)
        new_lengths = lengths + (~finished).long()                              # (B, k)
        scores, beam_idx, token = beam_search_step(scores, log_probs, k, new_lengths, length_penalty)
        finished = finished.gather(1, beam_idx) | (token == eos_id)
        lengths = new_lengths.gather(1, beam_idx)
        rows = (torch.arange(B, device=beam_idx.device)[:, None] * k + beam_idx).reshape(-1)  # (B*k,)
        prefix = torch.cat([prefix[rows], token.reshape(-1, 1)], dim=1)
        state = reorder(state, rows)
        if bool(finished.all()):
            break
    final = scores / lengths.clamp(min=1).to(scores.dtype) ** length_penalty if length_penalty else scores
    order = final.argsort(dim=1, descending=True)                               # (B, k)
    seqs = prefix[:, 1:].view(B, k, -1).tolist()
    result_tokens, result_scores, result_finished, beams = [], [], [], []
    for b in range(B):
        kept = []
        for i in order[b].tolist():
            if scores[b, i] == float("-inf"):
                continue
            toks, _ = _strip(seqs[b][i], eos_id)
            kept.append((toks, float(scores[b, i])))
        best = int(order[b, 0])
        result_tokens.append(kept[0][0])
        result_scores.append(float(scores[b, best]))
        result_finished.append(bool(finished[b, best]))
        beams.append(kept)
    return SearchResult(result_tokens, torch.tensor(result_scores), torch.tensor(result_finished), beams)

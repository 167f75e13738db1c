"""Bad calls to coursekit.decoding (sampling, greedy and beam search): each must give a clear error.

One row per thing that can go wrong (see ``tests/helpers/bad_inputs.py``): the error type, a regex its
message must match (the argument's name, what was expected, what arrived), raised by coursekit itself.
"""

from __future__ import annotations

from types import SimpleNamespace

import torch
from helpers.bad_inputs import Bad, bad_call_test, i64, randn

from coursekit.decoding import sampling, search, translate

EXEMPT = {
    "coursekit.decoding.search.SearchResult": "a plain result container filled by the search functions",
}


NEG_INF = float("-inf")


# ==============================================================================================
# coursekit.decoding.sampling
# ==============================================================================================

def logits_with(*values):
    return torch.tensor([[1.0, 2.0, 3.0], list(values)])


SAMPLING = [
    Bad("list logits", sampling.apply_temperature, lambda: sampling.apply_temperature([1.0, 2.0], 1.0), TypeError,
        r"logits must be a torch.Tensor, got list"),
    Bad("integer logits", sampling.apply_temperature,
        lambda: sampling.apply_temperature(torch.tensor([1, 2]), 1.0), TypeError,
        r"logits must be a floating-point tensor, got torch.int64"),
    Bad("0-d logits", sampling.apply_temperature, lambda: sampling.apply_temperature(torch.tensor(1.0), 1.0),
        ValueError, r"non-empty last \(vocabulary\) dimension, got shape \(\)"),
    Bad("empty vocabulary", sampling.apply_temperature, lambda: sampling.apply_temperature(randn(2, 0), 1.0),
        ValueError, r"non-empty last \(vocabulary\) dimension, got shape \(2, 0\)"),
    Bad("zero temperature", sampling.apply_temperature, lambda: sampling.apply_temperature(randn(2, 3), 0.0),
        ValueError, r"temperature must be > 0 \(use greedy decoding for T = 0\), got 0.0"),
    Bad("negative temperature", sampling.apply_temperature, lambda: sampling.apply_temperature(randn(2, 3), -1.0),
        ValueError, r"temperature must be > 0.*got -1.0"),
    Bad("NaN temperature", sampling.apply_temperature,
        lambda: sampling.apply_temperature(randn(2, 3), float("nan")), ValueError, r"temperature must be > 0.*nan"),
    Bad("temperature as a string", sampling.apply_temperature, lambda: sampling.apply_temperature(randn(2, 3), "1"),
        TypeError, r"temperature must be a number, got str"),
    Bad("NaN logits", sampling.apply_temperature,
        lambda: sampling.apply_temperature(logits_with(1.0, float("nan"), 0.0), 1.0), ValueError,
        r"logits must not contain NaN, got 1 NaN"),

    Bad("zero k", sampling.top_k_filter, lambda: sampling.top_k_filter(randn(2, 5), 0), ValueError,
        r"top_k must be positive, got 0"),
    Bad("float k", sampling.top_k_filter, lambda: sampling.top_k_filter(randn(2, 5), 2.0), TypeError,
        r"top_k must be an int, got float"),
    Bad("bool k", sampling.top_k_filter, lambda: sampling.top_k_filter(randn(2, 5), True), TypeError,
        r"top_k must be an int, got bool"),
    Bad("all -inf row", sampling.top_k_filter, lambda: sampling.top_k_filter(logits_with(*[NEG_INF] * 3), 2),
        ValueError, r"every row of logits needs at least one finite value; 1 row is all -inf"),

    Bad("zero p", sampling.top_p_filter, lambda: sampling.top_p_filter(randn(2, 5), 0.0), ValueError,
        r"top_p must lie in \(0, 1\], got 0.0"),
    Bad("p > 1", sampling.top_p_filter, lambda: sampling.top_p_filter(randn(2, 5), 1.5), ValueError,
        r"top_p must lie in \(0, 1\], got 1.5"),
    Bad("p as a string", sampling.top_p_filter, lambda: sampling.top_p_filter(randn(2, 5), "0.9"), TypeError,
        r"top_p must be a number, got str"),
    Bad("NaN p", sampling.top_p_filter, lambda: sampling.top_p_filter(randn(2, 5), float("nan")), ValueError,
        r"top_p must lie in \(0, 1\], got nan"),
    Bad("+inf logit", sampling.top_p_filter, lambda: sampling.top_p_filter(logits_with(1.0, float("inf"), 0.0), 0.9),
        ValueError, r"logits must not contain \+inf, got 1"),

    Bad("negative temperature", sampling.filter_logits, lambda: sampling.filter_logits(randn(2, 5), temperature=-1.0),
        ValueError, r"temperature must be > 0"),
    Bad("zero top_k", sampling.filter_logits, lambda: sampling.filter_logits(randn(2, 5), top_k=0), ValueError,
        r"top_k must be positive, got 0"),
    Bad("top_p > 1", sampling.filter_logits, lambda: sampling.filter_logits(randn(2, 5), top_p=2.0), ValueError,
        r"top_p must lie in \(0, 1\], got 2.0"),

    Bad("NaN logits", sampling.sample_next, lambda: sampling.sample_next(logits_with(float("nan"), 0.0, 1.0)),
        ValueError, r"logits must not contain NaN, got 1 NaN"),
    Bad("all -inf row", sampling.sample_next, lambda: sampling.sample_next(logits_with(*[NEG_INF] * 3)), ValueError,
        r"every row of logits needs at least one finite value; 1 row is all -inf"),
    Bad("all -inf row, greedy", sampling.sample_next,
        lambda: sampling.sample_next(logits_with(*[NEG_INF] * 3), temperature=0), ValueError,
        r"at least one finite value"),
    Bad("3-D logits", sampling.sample_next, lambda: sampling.sample_next(randn(2, 3, 5)), ValueError,
        r"logits must have shape \(B, V\) or \(V,\), got \(2, 3, 5\)"),
    Bad("empty batch", sampling.sample_next, lambda: sampling.sample_next(randn(0, 5)), ValueError,
        r"logits must hold at least one row, got shape \(0, 5\)"),
    Bad("generator of the wrong type", sampling.sample_next, lambda: sampling.sample_next(randn(2, 5), generator=0),
        TypeError, r"generator must be a torch.Generator or None, got int"),
    Bad("greedy with an invalid top_k", sampling.sample_next,
        lambda: sampling.sample_next(randn(2, 5), temperature=0, top_k=-1), ValueError,
        r"top_k must be positive, got -1"),
    Bad("negative temperature", sampling.sample_next, lambda: sampling.sample_next(randn(2, 5), temperature=-0.5),
        ValueError, r"temperature must be > 0.*-0.5"),
]


# ==============================================================================================
# coursekit.decoding.search
# ==============================================================================================

def uniform_step(V=5):
    def step(prefix, st):
        return torch.zeros(prefix.shape[0], V), st
    return step


def search_kw(**kw):
    return dict(batch_size=2, bos_id=1, eos_id=2, max_len=4) | kw


SEARCH = [
    Bad("list index", search.reorder_state, lambda: search.reorder_state(randn(3, 2), [0, 1]), TypeError,
        r"index must be a 1-D integer tensor.*list"),
    Bad("float index", search.reorder_state, lambda: search.reorder_state(randn(3, 2), torch.tensor([0.0])),
        TypeError, r"index must be a 1-D integer tensor.*torch.float32"),
    Bad("2-D index", search.reorder_state, lambda: search.reorder_state(randn(3, 2), torch.tensor([[0]])),
        TypeError, r"index must be a 1-D integer tensor.*\(1, 1\)"),
    Bad("index past the rows", search.reorder_state,
        lambda: search.reorder_state({"h": randn(3, 2)}, torch.tensor([0, 3])), ValueError,
        r"index values must lie in \[0, 3\).*max 3"),
    Bad("negative index", search.reorder_state, lambda: search.reorder_state((randn(3, 2),), torch.tensor([-1])),
        ValueError, r"index values must lie in \[0, 3\).*min -1"),
    Bad("a set in the state", search.reorder_state, lambda: search.reorder_state({1, 2}, torch.tensor([0])),
        TypeError, r"cannot reorder a state of type set"),

    Bad("step not callable", search.greedy_search, lambda: search.greedy_search(3, None, **search_kw()), TypeError,
        r"step must be a function step\(prefix, state\), got int"),
    Bad("zero batch", search.greedy_search, lambda: search.greedy_search(uniform_step(), None,
                                                                         **search_kw(batch_size=0)),
        ValueError, r"batch_size must be positive, got 0"),
    Bad("zero max_len", search.greedy_search,
        lambda: search.greedy_search(uniform_step(), None, **search_kw(max_len=0)), ValueError,
        r"max_len must be positive, got 0"),
    Bad("negative bos", search.greedy_search, lambda: search.greedy_search(uniform_step(), None,
                                                                           **search_kw(bos_id=-1)),
        TypeError, r"bos_id must be a non-negative int, got -1"),
    Bad("float eos", search.greedy_search, lambda: search.greedy_search(uniform_step(), None, **search_kw(eos_id=2.0)),
        TypeError, r"eos_id must be a non-negative int, got 2.0"),
    Bad("eos outside the vocabulary", search.greedy_search,
        lambda: search.greedy_search(uniform_step(V=2), None, **search_kw()), ValueError,
        r"eos_id=2 is outside the vocabulary of size 2"),
    Bad("bos outside the vocabulary", search.greedy_search,
        lambda: search.greedy_search(uniform_step(V=3), None, **search_kw(bos_id=7)), ValueError,
        r"bos_id=7 is outside the vocabulary of size 3"),
    Bad("step returns one value", search.greedy_search,
        lambda: search.greedy_search(lambda p, s: torch.zeros(2, 5), None, **search_kw()), TypeError,
        r"must return a pair \(log_probs \(N, V\), new_state\), got Tensor"),
    Bad("step returns another batch", search.greedy_search,
        lambda: search.greedy_search(lambda p, s: (torch.zeros(3, 5), s), None, **search_kw()), ValueError,
        r"step returned log_probs for 3 rows, expected N = 2"),
    Bad("step returns 1-D scores", search.greedy_search,
        lambda: search.greedy_search(lambda p, s: (torch.zeros(5), s), None, **search_kw()), ValueError,
        r"step log_probs must have 2 dimensions, got shape \(5,\)"),
    Bad("step returns integer scores", search.greedy_search,
        lambda: search.greedy_search(lambda p, s: (torch.zeros(2, 5, dtype=i64), s), None, **search_kw()),
        TypeError, r"step log_probs must be a floating-point tensor, got torch.int64"),
    Bad("step returns NaN", search.greedy_search,
        lambda: search.greedy_search(lambda p, s: (torch.full((2, 5), float("nan")), s), None, **search_kw()),
        ValueError, r"step log_probs must not contain NaN, got 10 NaN"),
    Bad("step returns an all -inf row", search.greedy_search,
        lambda: search.greedy_search(lambda p, s: (torch.full((2, 5), NEG_INF), s), None, **search_kw()),
        ValueError, r"every row of step log_probs needs at least one finite value; 2 rows are all -inf"),

    Bad("zero beam", search.beam_search, lambda: search.beam_search(uniform_step(), None, beam_size=0, **search_kw()),
        ValueError, r"beam_size must be positive, got 0"),
    Bad("negative length penalty", search.beam_search,
        lambda: search.beam_search(uniform_step(), None, length_penalty=-1.0, **search_kw()), ValueError,
        r"length_penalty must be a number ≥ 0, got -1.0"),
    Bad("reorder not callable", search.beam_search,
        lambda: search.beam_search(uniform_step(), None, reorder="rows", **search_kw()), TypeError,
        r"reorder must be a function reorder\(state, index\), got str"),
    Bad("step not callable", search.beam_search, lambda: search.beam_search(None, None, **search_kw()), TypeError,
        r"step must be a function step\(prefix, state\), got NoneType"),
    Bad("step returns the un-expanded batch", search.beam_search,
        lambda: search.beam_search(lambda p, s: (torch.zeros(2, 5), s), None, beam_size=3, **search_kw()),
        ValueError, r"step returned log_probs for 2 rows, expected N = 6"),
    Bad("step returns NaN", search.beam_search,
        lambda: search.beam_search(lambda p, s: (torch.full((p.shape[0], 5), float("nan")), s), None,
                                   **search_kw()), ValueError, r"step log_probs must not contain NaN"),

    Bad("list scores", search.beam_search_step, lambda: search.beam_search_step([[0.0]], randn(1, 1, 5), 1),
        TypeError, r"scores must be a torch.Tensor, got list"),
    Bad("scores of another shape", search.beam_search_step,
        lambda: search.beam_search_step(randn(2, 3), randn(2, 2, 5), 2), ValueError,
        r"scores must have shape \(B, k\) = \(2, 2\).*got \(2, 3\)"),
    Bad("2-D log_probs", search.beam_search_step, lambda: search.beam_search_step(randn(2, 3), randn(2, 5), 2),
        ValueError, r"log_probs must have 3 dimensions, got shape \(2, 5\)"),
    Bad("beam wider than the candidates", search.beam_search_step,
        lambda: search.beam_search_step(randn(1, 2), randn(1, 2, 3), 7), ValueError,
        r"beam_size=7 exceeds the k\*V = 6 candidates"),
    Bad("zero beam", search.beam_search_step, lambda: search.beam_search_step(randn(1, 2), randn(1, 2, 3), 0),
        ValueError, r"beam_size must be positive, got 0"),
    Bad("length penalty without lengths", search.beam_search_step,
        lambda: search.beam_search_step(randn(1, 2), randn(1, 2, 3), 2, length_penalty=1.0), ValueError,
        r"length_penalty needs the candidates' lengths \(B, k\)"),
    Bad("lengths of another shape", search.beam_search_step,
        lambda: search.beam_search_step(randn(1, 2), randn(1, 2, 3), 2, torch.ones(3, dtype=i64), 1.0), ValueError,
        r"lengths must have shape \(B, k\) = \(1, 2\), got \(3,\)"),
    Bad("negative length penalty", search.beam_search_step,
        lambda: search.beam_search_step(randn(1, 2), randn(1, 2, 3), 2, torch.ones(1, 2, dtype=i64), -0.5),
        ValueError, r"length_penalty must be a number ≥ 0, got -0.5"),
]

# a stand-in with the translate method the course's encoder–decoders have: the checks run before any call
TRANSLATES = SimpleNamespace(translate=lambda src, src_mask, **options: None, training=False)

TRANSLATOR = [
    Bad("a model without translate", translate.translator, lambda: translate.translator(torch.nn.Linear(2, 2)),
        TypeError, r"model must have a translate\(src, src_mask, \.\.\.\) method, got Linear"),
    Bad("zero beam", translate.translator, lambda: translate.translator(TRANSLATES, beam_size=0), ValueError,
        r"beam_size must be positive, got 0"),
    Bad("zero max_len", translate.translator, lambda: translate.translator(TRANSLATES, max_len=0), ValueError,
        r"max_len must be positive, got 0"),
    Bad("negative length penalty", translate.translator,
        lambda: translate.translator(TRANSLATES, length_penalty=-1.0), ValueError,
        r"length_penalty must be (an int )?≥ 0 and finite, got -1.0"),
    Bad("a model without translate", translate.check_translation_model,
        lambda: translate.check_translation_model(3), TypeError,
        r"model must have a translate\(src, src_mask, \.\.\.\) method, got int"),
]

ROWS = SAMPLING + SEARCH + TRANSLATOR

test_bad_call = bad_call_test(ROWS)

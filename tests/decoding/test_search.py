"""Greedy and beam search on tiny models whose scores are known."""

import itertools
import math

import pytest
import torch

from coursekit.decoding import SearchResult, beam_search, beam_search_step, greedy_search, reorder_state

BOS, EOS = 0, 1


def markov_step(table):
    """A stateless 'model': the next-token log-probabilities depend on the previous token only."""
    log_table = torch.log(torch.as_tensor(table, dtype=torch.float64)).float()  # (V, V)

    def step(prefix, state):
        return log_table[prefix[:, -1]], state

    return step, log_table


def batched_markov_step():
    """Each sentence has its own transition table, carried in the state (N, V, V): tests reordering."""

    def step(prefix, state):
        rows = torch.arange(prefix.shape[0])
        return state[rows, prefix[:, -1]], state

    return step


def exhaustive_best(log_table, max_len, alpha=0.0):
    """Best hypothesis by brute force: every sequence that ends in <eos> within max_len, or is cut there."""
    V = log_table.shape[0]
    best, best_rank = None, -math.inf
    for n in range(1, max_len + 1):
        for seq in itertools.product(range(V), repeat=n):
            if EOS in seq[:-1] or (seq[-1] != EOS and n < max_len):
                continue
            prev, score = BOS, 0.0
            for tok in seq:
                score += float(log_table[prev, tok])
                prev = tok
            rank = score / n**alpha
            if rank > best_rank:
                best, best_rank = (list(seq[:-1]) if seq[-1] == EOS else list(seq), score), rank
    return best


# The hand-built model of the notebook: greedy takes "a" (0.6 > 0.4) and then can only end badly;
# the best sentence starts with the less likely "b".  Tokens: 0 <bos>, 1 <eos>, 2 a, 3 b.
HAND = [
    [0.0, 0.0, 0.6, 0.4],   # after <bos>
    [0.0, 1.0, 0.0, 0.0],   # after <eos> (never used)
    [0.0, 0.4, 0.3, 0.3],   # after a: nothing is likely
    [0.0, 0.9, 0.05, 0.05],  # after b: <eos> is almost certain
]


def test_beam_finds_the_best_sequence_where_greedy_does_not():
    step, log_table = markov_step(HAND)
    greedy = greedy_search(step, None, batch_size=1, bos_id=BOS, eos_id=EOS, max_len=5)
    beam = beam_search(step, None, batch_size=1, bos_id=BOS, eos_id=EOS, max_len=5, beam_size=2)
    assert greedy.tokens == [[2]] and greedy.scores[0] == pytest.approx(math.log(0.6 * 0.4))
    assert beam.tokens == [[3]] and beam.scores[0] == pytest.approx(math.log(0.4 * 0.9))
    assert beam.tokens[0] == exhaustive_best(log_table, 5)[0]
    assert beam.finished.tolist() == [True]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_wide_beam_is_exhaustive_on_random_models(seed, alpha):
    g = torch.Generator().manual_seed(seed)
    table = torch.softmax(3 * torch.randn(4, 4, generator=g), dim=-1)
    step, log_table = markov_step(table)
    max_len = 4
    beam = beam_search(step, None, batch_size=1, bos_id=BOS, eos_id=EOS, max_len=max_len,
                       beam_size=4**max_len, length_penalty=alpha)
    tokens, score = exhaustive_best(log_table, max_len, alpha)
    assert beam.tokens[0] == tokens
    assert beam.scores[0].item() == pytest.approx(score, abs=1e-5)


def test_length_penalty_changes_the_winner():
    # <bos> → <eos> at once (0.45), or "a b <eos>" (0.55 · 1 · 0.8 = 0.44): raw log-probability prefers
    # the empty translation, the per-token average (alpha = 1) the longer one
    table = [[0.0, 0.45, 0.55, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], [0.0, 0.8, 0.0, 0.2]]
    step, log_table = markov_step(table)
    raw = beam_search(step, None, batch_size=1, bos_id=BOS, eos_id=EOS, max_len=4, beam_size=3)
    norm = beam_search(step, None, batch_size=1, bos_id=BOS, eos_id=EOS, max_len=4, beam_size=3,
                       length_penalty=1.0)
    assert raw.tokens[0] == exhaustive_best(log_table, 4, 0.0)[0]
    assert norm.tokens[0] == exhaustive_best(log_table, 4, 1.0)[0]
    assert raw.tokens[0] == [] and norm.tokens[0] == [2, 3]


@pytest.mark.parametrize("seed", range(4))
def test_beam_size_one_equals_greedy(seed):
    g = torch.Generator().manual_seed(seed)
    B, V = 5, 7
    tables = torch.log_softmax(2 * torch.randn(B, V, V, generator=g), dim=-1)
    step = batched_markov_step()
    greedy = greedy_search(step, tables, batch_size=B, bos_id=BOS, eos_id=EOS, max_len=6)
    beam = beam_search(step, tables, batch_size=B, bos_id=BOS, eos_id=EOS, max_len=6, beam_size=1)
    assert greedy.tokens == beam.tokens
    assert torch.allclose(greedy.scores, beam.scores, atol=1e-5)
    assert torch.equal(greedy.finished, beam.finished)
    beam_lp = beam_search(step, tables, batch_size=B, bos_id=BOS, eos_id=EOS, max_len=6, beam_size=1,
                          length_penalty=0.7)
    assert beam_lp.tokens == greedy.tokens


def test_batched_beam_equals_one_sentence_at_a_time():
    g = torch.Generator().manual_seed(7)
    B, V = 4, 6
    tables = torch.log_softmax(2 * torch.randn(B, V, V, generator=g), dim=-1)
    step = batched_markov_step()
    together = beam_search(step, tables, batch_size=B, bos_id=BOS, eos_id=EOS, max_len=5, beam_size=3)
    for b in range(B):
        alone = beam_search(step, tables[b:b + 1], batch_size=1, bos_id=BOS, eos_id=EOS, max_len=5, beam_size=3)
        assert alone.tokens[0] == together.tokens[b]
        assert [t for t, _ in alone.beams[0]] == [t for t, _ in together.beams[b]]
        assert [s for _, s in alone.beams[0]] == pytest.approx([s for _, s in together.beams[b]], abs=1e-5)
    assert len(together.beams[0]) == 3
    scores = [s for _, s in together.beams[0]]
    assert scores == sorted(scores, reverse=True)  # alpha = 0: best first by raw score


def test_eos_and_max_len_handling():
    # a model that says <eos> at once
    step_eos, _ = markov_step([[0.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 1.0, 0.0]])
    for search in (greedy_search, beam_search):
        res = search(step_eos, None, batch_size=2, bos_id=BOS, eos_id=EOS, max_len=5)
        assert res.tokens == [[], []] and res.finished.tolist() == [True, True]
    # a model that never says <eos>: cut at max_len, not finished
    step_loop, _ = markov_step([[0.0, 0.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    for search in (greedy_search, beam_search):
        res = search(step_loop, None, batch_size=1, bos_id=BOS, eos_id=EOS, max_len=3)
        assert res.tokens == [[2, 2, 2]] and res.finished.tolist() == [False]


def test_step_is_called_at_most_max_len_times_and_stops_early():
    calls = []
    step, _ = markov_step(HAND)

    def counting(prefix, state):
        calls.append(prefix.shape[1])
        return step(prefix, state)

    beam_search(counting, None, batch_size=1, bos_id=BOS, eos_id=EOS, max_len=10, beam_size=2)
    assert calls == list(range(1, len(calls) + 1)) and len(calls) < 10


def test_beam_search_step():
    scores = torch.tensor([[-1.0, -2.0]])
    log_probs = torch.log(torch.tensor([[[0.5, 0.5, 0.0], [0.1, 0.2, 0.7]]]))
    new, beam, tok = beam_search_step(scores, log_probs, 3)
    want = sorted([(-1 + math.log(p), 0, v) for v, p in enumerate([0.5, 0.5]) if p]
                  + [(-2 + math.log(p), 1, v) for v, p in enumerate([0.1, 0.2, 0.7])], reverse=True)[:3]
    assert new[0].tolist() == pytest.approx([w[0] for w in want])
    assert beam[0].tolist() == [w[1] for w in want] and sorted(tok[0].tolist()[:2]) == [0, 1]


def test_reorder_state_nested():
    state = {"h": torch.arange(6).view(3, 2), "pair": (torch.arange(3), [torch.arange(3) * 10]), "none": None}
    out = reorder_state(state, torch.tensor([2, 2, 0]))
    assert out["h"].tolist() == [[4, 5], [4, 5], [0, 1]]
    assert out["pair"][0].tolist() == [2, 2, 0] and out["pair"][1][0].tolist() == [20, 20, 0]
    with pytest.raises(TypeError, match="reorder"):
        reorder_state("text", torch.tensor([0]))


def test_bad_inputs():
    step, _ = markov_step(HAND)
    with pytest.raises(ValueError, match="beam_size"):
        beam_search(step, None, batch_size=1, bos_id=BOS, eos_id=EOS, max_len=3, beam_size=0)
    with pytest.raises(ValueError, match="max_len"):
        greedy_search(step, None, batch_size=1, bos_id=BOS, eos_id=EOS, max_len=0)
    with pytest.raises(TypeError, match="bos_id"):
        greedy_search(step, None, batch_size=1, bos_id="<bos>", eos_id=EOS, max_len=3)
    with pytest.raises(ValueError, match="length_penalty"):
        beam_search(step, None, batch_size=1, bos_id=BOS, eos_id=EOS, max_len=3, length_penalty=-1)

    def wrong_rows(prefix, state):
        return torch.zeros(prefix.shape[0] + 1, 4), state

    with pytest.raises(ValueError, match="rows"):
        greedy_search(wrong_rows, None, batch_size=2, bos_id=BOS, eos_id=EOS, max_len=3)
    with pytest.raises(TypeError, match="pair"):
        greedy_search(lambda p, s: torch.zeros(1, 4), None, batch_size=1, bos_id=BOS, eos_id=EOS, max_len=3)
    with pytest.raises(ValueError, match="eos_id"):
        greedy_search(step, None, batch_size=1, bos_id=BOS, eos_id=9, max_len=3)
    with pytest.raises(ValueError, match=r"\(B, k\)"):
        beam_search_step(torch.zeros(1, 3), torch.zeros(1, 2, 4), 2)
    assert isinstance(greedy_search(step, None, batch_size=1, bos_id=BOS, eos_id=EOS, max_len=2), SearchResult)

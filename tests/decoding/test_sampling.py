"""Temperature, top-k and nucleus (top-p) filtering and sampling (coursekit.decoding.sampling)."""

import math

import pytest
import torch

from coursekit.decoding import apply_temperature, filter_logits, sample_next, top_k_filter, top_p_filter


def kept(filtered: torch.Tensor) -> set[int]:
    return set(torch.nonzero(torch.isfinite(filtered)).flatten().tolist())


def test_temperature_scales_logits_and_sharpens():
    z = torch.tensor([2.0, 1.0, 0.0])
    assert torch.allclose(apply_temperature(z, 0.5), z * 2)
    cold, hot = torch.softmax(apply_temperature(z, 0.5), -1), torch.softmax(apply_temperature(z, 2.0), -1)
    assert cold[0] > torch.softmax(z, -1)[0] > hot[0]


def test_top_k_keeps_k_largest_and_ties():
    z = torch.tensor([0.1, 3.0, 2.0, -1.0, 2.5])
    assert kept(top_k_filter(z, 2)) == {1, 4}
    assert kept(top_k_filter(z, 1)) == {1}
    # ties at the boundary are all kept
    assert kept(top_k_filter(torch.tensor([1.0, 2.0, 2.0, 0.0]), 2)) == {1, 2}
    assert kept(top_k_filter(torch.tensor([1.0, 2.0, 1.0, 0.0]), 2)) == {0, 1, 2}
    # k >= V keeps everything, unchanged
    assert torch.equal(top_k_filter(z, 5), z) and torch.equal(top_k_filter(z, 50), z)


def test_top_k_batched_rows_independent():
    z = torch.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])
    out = top_k_filter(z, 1)
    assert torch.isfinite(out).tolist() == [[False, False, True], [True, False, False]]


def test_top_p_smallest_set_reaching_p():
    probs = torch.tensor([0.5, 0.3, 0.15, 0.05])
    z = probs.log()
    assert kept(top_p_filter(z, 0.5)) == {0}            # 0.5 already reaches p
    assert kept(top_p_filter(z, 0.6)) == {0, 1}         # the token that crosses p is included
    assert kept(top_p_filter(z, 0.8)) == {0, 1}
    assert kept(top_p_filter(z, 0.81)) == {0, 1, 2}
    assert kept(top_p_filter(z, 0.01)) == {0}           # the top token is always kept
    assert torch.equal(top_p_filter(z, 1.0), z)         # p = 1 keeps all
    # the order of the vocabulary does not matter
    perm = torch.tensor([2, 0, 3, 1])
    assert kept(top_p_filter(z[perm], 0.6)) == {1, 3}


def test_top_p_renormalises_over_the_nucleus():
    z = torch.tensor([0.5, 0.3, 0.15, 0.05]).log()
    p = torch.softmax(top_p_filter(z, 0.7), -1)
    assert torch.allclose(p, torch.tensor([0.5 / 0.8, 0.3 / 0.8, 0.0, 0.0]))


def test_filter_order_temperature_then_topk_then_topp():
    z = torch.tensor([3.0, 2.0, 1.0, 0.0, -1.0])
    out = filter_logits(z, temperature=2.0, top_k=3, top_p=0.5)
    want = top_p_filter(top_k_filter(z / 2.0, 3), 0.5)
    assert torch.equal(out, want)


def test_sample_next_shapes_greedy_and_reproducible():
    torch.manual_seed(0)
    logits = torch.randn(4, 50)
    assert sample_next(logits, temperature=0).tolist() == logits.argmax(-1).tolist()
    a = sample_next(logits, 1.0, generator=torch.Generator().manual_seed(7))
    b = sample_next(logits, 1.0, generator=torch.Generator().manual_seed(7))
    assert a.shape == (4,) and torch.equal(a, b)
    assert sample_next(logits[0], 1.0).shape == ()
    # top_k=1 is greedy whatever the temperature
    assert torch.equal(sample_next(logits, 5.0, top_k=1), logits.argmax(-1))


def test_sample_next_frequencies_follow_filtered_distribution():
    z = torch.tensor([0.5, 0.3, 0.15, 0.05]).log().expand(20000, 4)
    ids = sample_next(z, 1.0, top_p=0.7, generator=torch.Generator().manual_seed(0))
    freq = torch.bincount(ids, minlength=4).float() / ids.numel()
    assert freq[2] == 0 and freq[3] == 0
    assert math.isclose(freq[0].item(), 0.625, abs_tol=0.02)


@pytest.mark.parametrize("call, err", [
    (lambda: apply_temperature(torch.zeros(3), -1.0), ValueError),
    (lambda: apply_temperature(torch.zeros(3), "hot"), TypeError),
    (lambda: top_k_filter(torch.zeros(3), 0), ValueError),
    (lambda: top_k_filter(torch.zeros(3), 1.5), TypeError),
    (lambda: top_p_filter(torch.zeros(3), 0.0), ValueError),
    (lambda: top_p_filter(torch.zeros(3), 1.5), ValueError),
    (lambda: top_p_filter(torch.zeros(3), None), TypeError),
    (lambda: sample_next(torch.zeros(3, dtype=torch.long)), TypeError),
    (lambda: sample_next(torch.zeros(2, 3, 4)), ValueError),
    (lambda: sample_next(torch.zeros(2, 0)), ValueError),
    (lambda: sample_next([0.1, 0.2]), TypeError),
])
def test_bad_inputs_raise_clear_errors(call, err):
    with pytest.raises(err):
        call()

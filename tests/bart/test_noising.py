"""Tests of coursekit.bart.noising: BART's five corruptions (Lewis et al. 2020, §2.2), as properties."""

from collections import Counter
from functools import partial

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from coursekit.bart.noising import (
    compose,
    diff_html,
    diff_tokens,
    document_rotation,
    poisson_span_lengths,
    sentence_permutation,
    split_sentences,
    text_infilling,
    token_deletion,
    token_masking,
)

PAD, BOS, EOS, MASK, DOT = 0, 1, 2, 3, 4
SPECIALS = {PAD, BOS, EOS, MASK}
WORDS = st.integers(5, 60)


def _doc(words):
    return [BOS, *words, EOS]


def _content(ids):
    return [t for t in ids if t not in SPECIALS]


def _specials(ids):
    return [(i, t) for i, t in enumerate(ids) if t in (PAD, BOS, EOS)]


docs = st.lists(WORDS, min_size=0, max_size=60).map(_doc)
seeds = st.integers(0, 2**31 - 1)

ALL_NOISES = {
    "token_masking": partial(token_masking, mask_id=MASK, ratio=0.3, special_ids=SPECIALS),
    "token_deletion": partial(token_deletion, ratio=0.3, special_ids=SPECIALS),
    "text_infilling": partial(text_infilling, mask_id=MASK, ratio=0.3, special_ids=SPECIALS),
    "sentence_permutation": partial(sentence_permutation, sentence_end_ids={DOT}, special_ids=SPECIALS),
    "document_rotation": partial(document_rotation, special_ids=SPECIALS),
}


def g(seed):
    return torch.Generator().manual_seed(seed)


# ---------------------------------------------------------------- special tokens and determinism

@pytest.mark.parametrize("name", sorted(ALL_NOISES))
@settings(max_examples=60, deadline=None)
@given(doc=docs, seed=seeds)
def test_special_tokens_are_never_corrupted(name, doc, seed):
    out = ALL_NOISES[name](doc, generator=g(seed)).tolist()
    assert out[0] == BOS and out[-1] == EOS
    assert [t for t in out if t in (PAD, BOS, EOS)] == [BOS, EOS]
    if name in ("token_masking", "sentence_permutation", "document_rotation"):
        assert len(out) == len(doc)


def test_specials_in_the_middle_keep_their_positions():
    doc = [BOS, 10, 11, 12, DOT, PAD, 13, 14, DOT, EOS]
    for name in ("token_masking", "sentence_permutation", "document_rotation"):
        for seed in range(20):
            out = ALL_NOISES[name](doc, generator=g(seed)).tolist()
            assert _specials(out) == _specials(doc), name
    for seed in range(20):   # infilling/deletion: the specials keep their order
        for name in ("text_infilling", "token_deletion"):
            out = ALL_NOISES[name](doc, generator=g(seed)).tolist()
            assert [t for t in out if t in (PAD, BOS, EOS)] == [BOS, PAD, EOS], name


@pytest.mark.parametrize("name", sorted(ALL_NOISES))
def test_same_seed_same_corruption(name):
    doc = _doc(list(range(5, 45)) + [DOT] + list(range(5, 25)) + [DOT])
    a = ALL_NOISES[name](doc, generator=g(7))
    b = ALL_NOISES[name](doc, generator=g(7))
    assert torch.equal(a, b)
    others = [ALL_NOISES[name](doc, generator=g(s)) for s in range(8, 16)]
    assert any(not torch.equal(a, o) for o in others)


# ---------------------------------------------------------------- token masking / deletion ratios

@pytest.mark.parametrize("ratio", [0.1, 0.3, 0.5])
def test_masking_and_deletion_ratios_over_many_draws(ratio):
    gen = g(0)
    doc = _doc(list(range(5, 105)))                    # 100 content tokens
    masked = deleted = 0
    draws = 200
    for _ in range(draws):
        out = token_masking(doc, mask_id=MASK, ratio=ratio, special_ids=SPECIALS, generator=gen)
        masked += int((out == MASK).sum())
        assert torch.equal(out[out != MASK], torch.tensor(doc)[out != MASK])  # the rest is untouched
        deleted += len(doc) - len(token_deletion(doc, ratio=ratio, special_ids=SPECIALS, generator=gen))
    n = 100 * draws
    # binomial standard deviation sqrt(p(1-p)/n) ≤ 0.0036: a tolerance of 0.015 is > 4 sigma
    assert abs(masked / n - ratio) < 0.015
    assert abs(deleted / n - ratio) < 0.015


@settings(max_examples=50, deadline=None)
@given(doc=docs, seed=seeds)
def test_deletion_keeps_a_subsequence(doc, seed):
    out = token_deletion(doc, ratio=0.4, special_ids=SPECIALS, generator=g(seed)).tolist()
    it = iter(doc)
    assert all(t in it for t in out)                   # out is a subsequence of doc


# ---------------------------------------------------------------- text infilling

def test_poisson_span_lengths_sum_and_mean():
    lengths = poisson_span_lengths(30_000, poisson_lambda=3.0, generator=g(0))
    assert int(lengths.sum()) == 30_000
    assert abs(lengths[:-1].float().mean().item() - 3.0) < 0.05    # Poisson(3) has mean 3
    assert (lengths == 0).any()                                     # P(0) = e^-3 ≈ 5%: zero-length spans occur
    assert poisson_span_lengths(0, generator=g(0)).numel() == 0


@settings(max_examples=150, deadline=None)
@given(doc=docs, seed=seeds, ratio=st.sampled_from([0.0, 0.15, 0.3, 0.5, 0.9, 1.0]),
       lam=st.sampled_from([0.5, 1.0, 3.0]))
def test_infilling_properties(doc, seed, ratio, lam):
    out = text_infilling(doc, mask_id=MASK, ratio=ratio, poisson_lambda=lam, special_ids=SPECIALS,
                         generator=g(seed)).tolist()
    n = len(doc) - 2
    n_mask = round(ratio * n)
    # the same generator state gives the same span lengths (they are drawn first)
    spans = poisson_span_lengths(n_mask, poisson_lambda=lam, generator=g(seed)) if n_mask else torch.tensor([])
    inserted = int((spans == 0).sum())
    kept = [t for t in out if t != MASK and t not in (BOS, EOS)]
    assert len(kept) == n - n_mask                                  # exactly the masking ratio
    it = iter(doc)
    assert all(t in it for t in kept)                               # kept tokens stay in order
    n_masks = out.count(MASK)
    assert n_masks <= len(spans)                                    # one mask per span (at most)
    if len(spans) <= n - n_mask + 1:
        assert n_masks == len(spans)                                # spans never merge when there is room
    assert len(out) <= len(doc) + inserted                          # never longer than input + inserted masks
    assert len(out) == len(doc) - n_mask + n_masks


def test_zero_length_spans_insert_a_mask():
    doc = _doc(list(range(10, 30)))
    found = False
    for seed in range(50):
        spans = poisson_span_lengths(2, poisson_lambda=0.5, generator=g(seed))
        if (spans == 0).any():
            out = text_infilling(doc, mask_id=MASK, ratio=0.1, poisson_lambda=0.5, special_ids=SPECIALS,
                                 generator=g(seed)).tolist()
            assert out.count(MASK) == len(spans)
            assert len(out) == len(doc) - 2 + len(spans)            # 2 tokens gone, one mask per span
            found = True
    assert found


def test_full_infilling_is_one_mask():
    doc = _doc(list(range(10, 30)))
    assert text_infilling(doc, mask_id=MASK, ratio=1.0, special_ids=SPECIALS, generator=g(0)).tolist() == \
        [BOS, MASK, EOS]
    assert text_infilling(doc, mask_id=MASK, ratio=0.0, special_ids=SPECIALS, generator=g(0)).tolist() == doc


def test_infilling_span_interrupted_by_a_special_gets_a_new_mask():
    doc = [BOS, 10, 11, PAD, 12, 13, EOS]
    out = text_infilling(doc, mask_id=MASK, ratio=1.0, special_ids=SPECIALS, generator=g(0)).tolist()
    assert out == [BOS, MASK, PAD, MASK, EOS]


# ---------------------------------------------------------------- permutation and rotation

sentences = st.lists(st.lists(WORDS.filter(lambda t: t != DOT), min_size=1, max_size=8), min_size=1, max_size=8)


@settings(max_examples=100, deadline=None)
@given(sents=sentences, seed=seeds, last_has_dot=st.booleans())
def test_permutation_preserves_the_multiset_of_sentences(sents, seed, last_has_dot):
    sents = [s + [DOT] for s in sents]
    if not last_has_dot:
        sents[-1] = sents[-1][:-1]
    doc = _doc([t for s in sents for t in s])
    out = sentence_permutation(doc, sentence_end_ids={DOT}, special_ids=SPECIALS, generator=g(seed)).tolist()
    assert Counter(out) == Counter(doc)
    order = torch.randperm(len(sents), generator=g(seed)).tolist()
    assert _content(out) == [t for i in order for t in sents[i]]
    if last_has_dot:
        assert Counter(map(tuple, split_sentences(_content(out), {DOT}))) == Counter(map(tuple, sents))


@settings(max_examples=100, deadline=None)
@given(doc=docs, seed=seeds)
def test_rotation_preserves_the_tokens_and_is_a_rotation(doc, seed):
    out = document_rotation(doc, special_ids=SPECIALS, generator=g(seed)).tolist()
    assert Counter(out) == Counter(doc)
    c, co = _content(doc), _content(out)
    assert not c or any(co == c[k:] + c[:k] for k in range(len(c)))


def test_rotation_start_is_uniform():
    doc = _doc(list(range(10, 20)))
    starts = Counter(document_rotation(doc, special_ids=SPECIALS, generator=g(s)).tolist()[1] for s in range(2000))
    assert set(starts) == set(range(10, 20))
    assert max(starts.values()) < 2000 / 10 * 1.35


# ---------------------------------------------------------------- composition, display, errors

def test_compose_applies_left_to_right_with_one_generator():
    doc = _doc([10, 11, DOT, 12, 13, 14, DOT, 15, DOT])
    perm, fill = ALL_NOISES["sentence_permutation"], ALL_NOISES["text_infilling"]
    noise = compose(perm, fill)
    gen = g(3)
    want = fill(perm(doc, generator=gen), generator=gen)
    assert torch.equal(noise(doc, generator=g(3)), want)
    assert noise.__name__ == "sentence_permutation → text_infilling"


def test_diff_tokens_and_html():
    ops = diff_tokens(["a", "b", "c", "d"], ["a", "[MASK]", "d"])
    assert ops == [("equal", ["a"], ["a"]), ("replace", ["b", "c"], ["[MASK]"]), ("equal", ["d"], ["d"])]
    out = diff_html(["a", "<b>"], ["a"], title="deletion")
    assert "line-through" in out and "&lt;b&gt;" in out and "deletion" in out


def test_bad_inputs_are_clear_errors():
    with pytest.raises(ValueError, match="ONE document"):
        token_masking(torch.zeros(2, 3, dtype=torch.long), mask_id=MASK)
    with pytest.raises(TypeError, match="integer token ids"):
        token_deletion(torch.zeros(3))
    with pytest.raises(TypeError, match="list of int"):
        token_deletion([1, 2.5])
    with pytest.raises(TypeError, match="1-D LongTensor or a list"):
        document_rotation("abc")
    with pytest.raises(ValueError, match="ratio"):
        text_infilling([1, 5, 6], mask_id=MASK, ratio=1.5)
    with pytest.raises(ValueError, match="poisson_lambda"):
        text_infilling([1, 5, 6], mask_id=MASK, poisson_lambda=0)
    with pytest.raises(ValueError, match="mask_id"):      # a negative id is a wrong value, not a wrong type
        text_infilling([1, 5, 6], mask_id=-1)
    with pytest.raises(ValueError, match="sentence_end_ids"):
        sentence_permutation([1, 5, 6], sentence_end_ids=())
    with pytest.raises(TypeError, match="special_ids"):
        document_rotation([1, 5, 6], special_ids=["a"])
    with pytest.raises(ValueError, match="at least one"):
        compose()
    with pytest.raises(TypeError, match="callables"):
        compose(3)

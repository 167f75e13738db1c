"""Tests of coursekit.bert: masked-LM corruption, NSP pairs, the model and its checkpoint import."""

from __future__ import annotations

import math
import random

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from coursekit.bert import (
    IGNORE_INDEX,
    IS_NEXT,
    KEEP,
    NOT_NEXT,
    NOT_SELECTED,
    REPLACE_MASK,
    REPLACE_RANDOM,
    StaticMasking,
    build_pair,
    make_nsp_pairs,
    mask_tokens,
    mlm_actions,
    split_sentences,
    wikitext_documents,
)

PAD, CLS, SEP, MASK = 0, 1, 2, 3
SPECIALS = (PAD, CLS, SEP, MASK)


def _batch(seed: int, B: int, T: int, vocab: int, pad_frac: float = 0.3) -> torch.Tensor:
    """Random [CLS] w ... [SEP] [PAD]... sequences."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(len(SPECIALS), vocab, (B, T), generator=g)
    lengths = torch.randint(max(2, int(T * (1 - pad_frac))), T + 1, (B,), generator=g)
    for b, n in enumerate(lengths.tolist()):
        ids[b, 0] = CLS
        ids[b, n - 1] = SEP
        ids[b, n:] = PAD
    return ids


def _mask(ids, vocab, seed=None, **kw):
    g = torch.Generator().manual_seed(seed) if seed is not None else None
    return mask_tokens(ids, vocab_size=vocab, mask_id=MASK, special_ids=(CLS, SEP), pad_id=PAD, generator=g, **kw)


# ------------------------------------------------------------------ masked LM: invariants

@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), B=st.integers(1, 6), T=st.integers(2, 40), vocab=st.integers(5, 200),
       p=st.floats(0.0, 1.0))
def test_mask_tokens_invariants(seed, B, T, vocab, p):
    ids = _batch(seed, B, T, vocab)
    before = ids.clone()
    corrupted, labels = _mask(ids, vocab, seed, mlm_probability=p)
    assert torch.equal(ids, before), "the input must not be modified"
    assert corrupted.shape == labels.shape == ids.shape
    special = (ids == PAD) | (ids == CLS) | (ids == SEP)
    # specials and padding are never selected, never changed
    assert (labels[special] == IGNORE_INDEX).all()
    assert torch.equal(corrupted[special], ids[special])
    selected = labels != IGNORE_INDEX
    # labels hold the original token exactly at the selected positions
    assert torch.equal(labels[selected], ids[selected])
    # positions not selected are unchanged
    assert torch.equal(corrupted[~selected], ids[~selected])
    # random replacements never produce a special token or padding
    changed = selected & (corrupted != MASK)
    assert not (corrupted[changed] < len(SPECIALS)).any()
    assert int(corrupted.min()) >= 0 and int(corrupted.max()) < vocab


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_mask_tokens_deterministic_under_seed_and_dynamic_without(seed):
    ids = _batch(seed, 8, 64, 1000)
    a = _mask(ids, 1000, seed)
    b = _mask(ids, 1000, seed)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    g = torch.Generator().manual_seed(seed)
    kw = {"vocab_size": 1000, "mask_id": MASK, "special_ids": (CLS, SEP), "pad_id": PAD, "generator": g}
    first, second = mask_tokens(ids, **kw), mask_tokens(ids, **kw)
    # dynamic masking: two calls with one generator draw different masks (P(equal) is astronomically small)
    assert not torch.equal(first[1], second[1])


def test_special_mask_argument_protects_positions():
    ids = torch.arange(4, 24).view(2, 10)
    special = torch.zeros_like(ids, dtype=torch.bool)
    special[:, :3] = True
    _, labels = mask_tokens(ids, vocab_size=30, mask_id=MASK, special_mask=special, mlm_probability=1.0,
                            generator=torch.Generator().manual_seed(0))
    assert (labels[:, :3] == IGNORE_INDEX).all() and (labels[:, 3:] != IGNORE_INDEX).all()


# ------------------------------------------------------------------ masked LM: proportions

@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), p=st.sampled_from([0.15, 0.3, 0.5]))
def test_mlm_action_proportions(seed, p):
    maskable = torch.ones(200, 200, dtype=torch.bool)
    maskable[:, :20] = False  # e.g. padding
    acts = mlm_actions(maskable, mlm_probability=p, generator=torch.Generator().manual_seed(seed))
    assert (acts[~maskable] == NOT_SELECTED).all()
    n = int(maskable.sum())
    k = int((acts != NOT_SELECTED).sum())
    # binomial: 6 standard deviations never fail by chance in practice
    assert abs(k / n - p) < 6 * math.sqrt(p * (1 - p) / n)
    for action, frac in ((REPLACE_MASK, 0.8), (REPLACE_RANDOM, 0.1), (KEEP, 0.1)):
        got = int((acts == action).sum()) / k
        assert abs(got - frac) < 6 * math.sqrt(frac * (1 - frac) / k), (action, got)


def test_mask_tokens_proportions_over_many_draws():
    vocab = 30000
    ids = _batch(0, 64, 128, vocab)
    maskable = (ids != PAD) & (ids != CLS) & (ids != SEP)
    g = torch.Generator().manual_seed(1)
    n_sel = n_mask = n_same = n_rand = 0
    for _ in range(20):
        corrupted, labels = mask_tokens(ids, vocab_size=vocab, mask_id=MASK, special_ids=(CLS, SEP), pad_id=PAD,
                                        generator=g)
        sel = labels != IGNORE_INDEX
        n_sel += int(sel.sum())
        n_mask += int((corrupted[sel] == MASK).sum())
        n_same += int((corrupted[sel] == ids[sel]).sum())
        n_rand += int(((corrupted[sel] != MASK) & (corrupted[sel] != ids[sel])).sum())
    n = 20 * int(maskable.sum())
    assert abs(n_sel / n - 0.15) < 0.005
    assert abs(n_mask / n_sel - 0.8) < 0.01
    assert abs(n_rand / n_sel - 0.1) < 0.01
    assert abs(n_same / n_sel - 0.1) < 0.01


def test_static_masking_replays_copies():
    ids = _batch(3, 4, 32, 500)
    static = StaticMasking(ids, copies=2, vocab_size=500, mask_id=MASK, special_ids=(CLS, SEP), pad_id=PAD,
                           generator=torch.Generator().manual_seed(0))
    assert len(static) == 2
    assert torch.equal(static[0][1], static[2][1]) and torch.equal(static[1][0], static[3][0])
    assert not torch.equal(static[0][1], static[1][1])


def test_mask_tokens_errors():
    ids = torch.tensor([[1, 5, 6, 2]])
    with pytest.raises(ValueError, match="ids in"):
        mask_tokens(ids, vocab_size=6, mask_id=3)
    with pytest.raises(ValueError, match="mask_id"):
        mask_tokens(ids, vocab_size=10, mask_id=10)
    with pytest.raises(TypeError, match="integer"):
        mask_tokens(ids.float(), vocab_size=10, mask_id=3)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        mask_tokens(ids, vocab_size=10, mask_id=3, mlm_probability=1.5)
    with pytest.raises(ValueError, match="shape"):
        mask_tokens(ids, vocab_size=10, mask_id=3, special_mask=torch.zeros(2, 2, dtype=torch.bool))
    with pytest.raises(ValueError, match="mask_frac"):
        mlm_actions(torch.ones(3, dtype=torch.bool), mask_frac=0.9, random_frac=0.2)


# ------------------------------------------------------------------ next-sentence prediction

WIKI = """ 
 = Alpha = 
 
 Alpha one is here . Alpha two follows ! Alpha three ends ? 
 
 = = History = = 
 
 Alpha four is in a section . 
 
 = Beta = 
 
 Beta one . Beta two . 
 = Gamma = 
 Gamma one only . 
 = Delta = 
 Delta one . Delta two . Delta three . 
""".splitlines()


def test_wikitext_documents_structure():
    docs = wikitext_documents(WIKI)
    assert [len(d) for d in docs] == [4, 2, 3]  # Gamma (1 sentence) is left out
    assert docs[0][0] == "Alpha one is here ." and docs[0][3] == "Alpha four is in a section ."
    assert split_sentences(" One . Two ? 3 is a number ! ") == ["One .", "Two ?", "3 is a number !"]


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_nsp_pairs_fifty_fifty_and_correct(seed):
    docs = wikitext_documents(WIKI)
    where = {s: (d, i) for d, doc in enumerate(docs) for i, s in enumerate(doc)}
    pairs = make_nsp_pairs(docs, 4000, rng=seed)
    labels = [lab for _, _, lab in pairs]
    frac = labels.count(IS_NEXT) / len(labels)
    assert abs(frac - 0.5) < 6 * math.sqrt(0.25 / len(labels))
    for a, b, lab in pairs:
        (da, ia), (db, ib) = where[a], where[b]
        if lab == IS_NEXT:
            assert da == db and ib == ia + 1
        else:
            assert lab == NOT_NEXT and da != db


def test_nsp_pairs_deterministic_and_errors():
    docs = wikitext_documents(WIKI)
    assert make_nsp_pairs(docs, 50, rng=7) == make_nsp_pairs(docs, 50, rng=random.Random(7))
    with pytest.raises(ValueError, match="at least 2 documents"):
        make_nsp_pairs(docs[:1], 5)


def test_build_pair_format_and_truncation():
    ids, seg = build_pair([10, 11], [20, 21, 22], cls_id=CLS, sep_id=SEP, max_len=16)
    assert ids == [CLS, 10, 11, SEP, 20, 21, 22, SEP]
    assert seg == [0, 0, 0, 0, 1, 1, 1, 1]
    ids, seg = build_pair(list(range(10, 20)), [20, 21], cls_id=CLS, sep_id=SEP, max_len=8)
    assert ids == [CLS, 10, 11, 12, SEP, 20, 21, SEP] and len(seg) == 8  # the longer segment lost tokens
    ids, seg = build_pair([10, 11, 12], None, cls_id=CLS, sep_id=SEP, max_len=4)
    assert ids == [CLS, 10, 11, SEP] and seg == [0, 0, 0, 0]
    with pytest.raises(ValueError, match="special tokens"):
        build_pair([1], [2], cls_id=CLS, sep_id=SEP, max_len=2)

"""The BERT exercise checks: the reference passes, a stub is "not attempted", typical mistakes get their hint."""

from __future__ import annotations

import pytest
import torch
from exercise_helpers import refuses_delegation, stub

from coursekit import bert
from coursekit.bert import IGNORE_INDEX, mask_tokens
from coursekit.exercises import check_cls_head, check_mask_tokens, check_segment_embeddings
from coursekit.exercises.core import FAILED, NOT_ATTEMPTED, PASSED

# ------------------------------------------------------------------ masking rule

def _masking(input_ids, vocab_size, mask_id, special_ids, pad_id, *, p=0.15, split=(0.8, 0.1), protect=True,
             labels_everywhere=False):
    """A configurable masking function: the reference, or one typical mistake."""
    maskable = torch.ones_like(input_ids, dtype=torch.bool)
    if protect:
        for s in (*special_ids, pad_id):
            maskable &= input_ids != s
    selected = maskable & (torch.rand(input_ids.shape) < p)
    u = torch.rand(input_ids.shape)
    corrupted = input_ids.clone()
    corrupted[selected & (u < split[0])] = mask_id
    rnd = selected & (u >= split[0]) & (u < split[0] + split[1])
    corrupted[rnd] = torch.randint(1000, vocab_size, (int(rnd.sum()),))
    labels = input_ids.clone() if labels_everywhere else torch.where(selected, input_ids, IGNORE_INDEX)
    return corrupted, labels


def test_mask_tokens_reference_passes_and_the_library_is_refused():
    assert check_mask_tokens(_masking, verbose=False).status == PASSED
    # handing in the library function itself is refused by name
    handed_in = check_mask_tokens(mask_tokens, verbose=False)
    assert handed_in.status == FAILED and "library's own mask_tokens" in handed_in.message


def test_mask_tokens_stub_not_attempted():
    assert check_mask_tokens(stub, verbose=False).status == NOT_ATTEMPTED


def test_mask_tokens_typical_mistakes():
    def specials_masked(*a, **k):
        return _masking(*a, **k, protect=False)

    def all_masked(*a, **k):
        return _masking(*a, **k, split=(1.0, 0.0))

    def labels_not_ignored(*a, **k):
        return _masking(*a, **k, labels_everywhere=True)

    def corrupted_labels(*a, **k):
        corrupted, labels = _masking(*a, **k)
        return corrupted, torch.where(labels != IGNORE_INDEX, corrupted, labels)

    def wrong_rate(*a, **k):
        return _masking(*a, **k, p=0.3)

    for fn, hint in ((specials_masked, "never be masked"), (all_masked, "80/10/10 split is wrong"),
                     (labels_not_ignored, "not -100"), (corrupted_labels, "ORIGINAL token ids"),
                     (wrong_rate, "expected 15%")):
        result = check_mask_tokens(fn, verbose=False)
        assert result.status == FAILED and hint in result.message, (fn.__name__, result.message)


# ------------------------------------------------------------------ input representation

def _embed(emb, ids, seg, *, segment=True, position=True, norm=True):
    x = emb.token(ids)
    if segment:
        x = x + emb.segment(seg)
    if position:
        x = x + emb.position(torch.arange(ids.shape[1]))
    return emb.norm(x) if norm else x


def test_segment_embeddings_reference_passes_stub_not_attempted():
    assert check_segment_embeddings(_embed, verbose=False).status == PASSED
    assert check_segment_embeddings(stub, verbose=False).status == NOT_ATTEMPTED


def test_segment_embeddings_typical_mistakes():
    cases = (({"segment": False}, "segment (token type) embeddings are missing"),
             ({"position": False}, "position embeddings are missing"),
             ({"norm": False}, "LayerNorm after the sum is missing"))
    for kw, hint in cases:
        result = check_segment_embeddings(lambda e, i, s, kw=kw: _embed(e, i, s, **kw), verbose=False)
        assert result.status == FAILED and hint in result.message, (kw, result.message)


# ------------------------------------------------------------------ [CLS] head

def test_cls_head_reference_passes_stub_not_attempted():
    def ref(h, pooler, classifier):
        return classifier(torch.tanh(pooler(h[:, 0])))

    assert check_cls_head(ref, verbose=False).status == PASSED
    assert check_cls_head(stub, verbose=False).status == NOT_ATTEMPTED


def test_cls_head_typical_mistakes():
    cases = ((lambda h, p, c: c(torch.tanh(p(h.mean(1)))), "averaged over all positions"),
             (lambda h, p, c: c(torch.tanh(p(h[:, -1]))), "FIRST token"),
             (lambda h, p, c: c(p(h[:, 0])), "tanh of the pooler is missing"),
             (lambda h, p, c: c(h[:, 0]), "pooler layer is skipped"),
             (lambda h, p, c: c(torch.tanh(p(h[:, 0])))[:, :1], "shape"))
    for fn, hint in cases:
        result = check_cls_head(fn, verbose=False)
        assert result.status == FAILED and hint in result.message, (hint, result.message)


# ------------------------------------------------------------------ calling the library is refused

@pytest.mark.parametrize("check, delegating, dotted, correct", [
    (check_mask_tokens, lambda ids, **kw: bert.mask_tokens(ids, **kw), "coursekit.bert.mask_tokens", True),
    (check_mask_tokens, lambda ids, **kw: bert.StaticMasking(ids, **kw)[0], "coursekit.bert.StaticMasking", True),
    (check_mask_tokens, lambda ids, **kw: bert.mlm_actions(ids != kw["pad_id"]), "coursekit.bert.mlm_actions",
     False),
    (check_segment_embeddings, lambda emb, ids, seg: emb(ids, seg), "coursekit.bert.BertEmbeddings.__call__", True),
    (check_segment_embeddings, lambda emb, ids, seg: emb.forward(ids, seg), "coursekit.bert.BertEmbeddings.forward",
     True),
])
def test_calling_the_library_is_refused(check, delegating, dotted, correct):
    refuses_delegation(check, delegating, dotted, correct=correct)


def test_reference_solutions_still_pass_and_modules_still_work():
    assert check_segment_embeddings(_embed, verbose=False).status == PASSED
    emb = bert.BertEmbeddings(bert.BertConfig(vocab_size=10, d_model=4, n_layers=1, n_heads=1, d_ff=8, max_len=8))
    ids = torch.tensor([[1, 2, 3]])
    assert emb(ids, torch.zeros_like(ids)).shape == (1, 3, 4)     # __call__ is back after the check


def test_cls_head_re_creates_no_library_function():
    # the pooler and the classifier are given: the exercise composes them, no library function takes them
    assert check_cls_head.reimplements == ()

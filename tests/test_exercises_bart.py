"""The BART exercise checks: the reference passes, a stub is "not attempted", typical mistakes get their hint."""

from __future__ import annotations

import pytest
import torch
from exercise_helpers import fails_with, refuses_delegation, stub

from coursekit import bart, noising
from coursekit.bart import shift_tokens_right
from coursekit.exercises import check_sentence_permutation, check_shift_tokens_right, check_text_infilling
from coursekit.exercises.core import NOT_ATTEMPTED, PASSED

# ------------------------------------------------------------------ text infilling

def infill(ids, spans, mask_id, special_ids, *, per_token=False, zero=True, protect=True, leave=True):
    """A student-style solution: walk the tokens, replace each span by one mask (or a typical mistake)."""
    out, i = [], 0
    spans = dict(spans)
    while i <= len(ids):
        n = spans.get(i)
        if n == 0 and zero:
            out.append(mask_id)
        if n:
            fresh = True
            for t in ids[i:i + n]:
                if protect and t in special_ids:
                    out.append(t)
                    fresh = True
                elif leave and (fresh or per_token):
                    out.append(mask_id)
                    fresh = False
                else:
                    fresh = False
            i += n
            continue
        if i < len(ids):
            out.append(ids[i])
        i += 1
    return out


def test_text_infilling_reference_passes_and_stub_not_attempted():
    assert check_text_infilling(infill, verbose=False).status == PASSED
    assert check_text_infilling(stub, verbose=False).status == NOT_ATTEMPTED


def test_text_infilling_typical_mistakes():
    fails_with(check_text_infilling, lambda *a: infill(*a, per_token=True), "one [MASK] per masked TOKEN")
    fails_with(check_text_infilling, lambda *a: infill(*a, zero=False), "zero-length span was ignored")
    fails_with(check_text_infilling, lambda *a: infill(*a, protect=False), "special token")
    fails_with(check_text_infilling, lambda *a: infill(*a, leave=False), "token deletion")
    result = fails_with(check_text_infilling, lambda *a: "no", "return a list")
    assert "ids=" in result.message


# ------------------------------------------------------------------ sentence permutation

def split_after(tokens, end_id):
    """Sentences ending after each ``end_id`` (a last one without it counts too), written out."""
    sentences, current = [], []
    for t in tokens:
        current.append(t)
        if t == end_id:
            sentences.append(current)
            current = []
    return sentences + [current] if current else sentences


def permute(ids, order, end_id, special_ids):
    pos = [i for i, t in enumerate(ids) if t not in special_ids]
    sentences = split_after([ids[i] for i in pos], end_id)
    out = list(ids)
    for i, t in zip(pos, [t for o in order for t in sentences[o]]):
        out[i] = t
    return out


def test_sentence_permutation_reference_passes_and_stub_not_attempted():
    assert check_sentence_permutation(permute, verbose=False).status == PASSED
    assert check_sentence_permutation(lambda *a: torch.tensor(permute(*a)), verbose=False).status == PASSED
    assert check_sentence_permutation(stub, verbose=False).status == NOT_ATTEMPTED


def test_sentence_permutation_typical_mistakes():
    def inverse(ids, order, end_id, special_ids):
        return permute(ids, sorted(range(len(order)), key=order.__getitem__), end_id, special_ids)

    def split_before(ids, order, end_id, special_ids):
        pos = [i for i, t in enumerate(ids) if t not in special_ids]
        sents, cur = [], []
        for t in (ids[i] for i in pos):
            if t == end_id and cur:
                sents.append(cur)
                cur = []
            cur.append(t)
        sents.append(cur)
        out = list(ids)
        for i, t in zip(pos, [t for o in order for t in sents[o]]):
            out[i] = t
        return out

    def drop_last(ids, order, end_id, special_ids):
        pos = [i for i, t in enumerate(ids) if t not in special_ids]
        sents = [s for s in split_after([ids[i] for i in pos], end_id) if s[-1] == end_id]
        new = [t for o in order if o < len(sents) for t in sents[o]]
        return ids[:pos[0]] + new + ids[pos[-1] + 1:]

    fails_with(check_sentence_permutation, inverse, "position order[i]")
    fails_with(check_sentence_permutation, split_before, "BEFORE each full stop")
    fails_with(check_sentence_permutation, drop_last, "was lost")


# ------------------------------------------------------------------ shift_tokens_right

def test_shift_tokens_right_reference_passes_and_stub_not_attempted():
    handed_in = check_shift_tokens_right(shift_tokens_right, verbose=False)   # the library function itself
    assert handed_in.status != PASSED and "library's own" in handed_in.message

    def manual(labels, pad_id, start_id):
        out = torch.cat([torch.full_like(labels[:, :1], start_id), labels[:, :-1]], dim=1)
        return out.masked_fill(out == -100, pad_id)

    assert check_shift_tokens_right(manual, verbose=False).status == PASSED
    assert check_shift_tokens_right(stub, verbose=False).status == NOT_ATTEMPTED


def test_shift_tokens_right_typical_mistakes():
    def left(labels, pad_id, start_id):
        out = torch.cat([labels[:, 1:], torch.full_like(labels[:, :1], pad_id)], dim=1)
        return out.masked_fill(out == -100, pad_id)

    def no_start(labels, pad_id, start_id):
        out = torch.cat([torch.full_like(labels[:, :1], pad_id), labels[:, :-1]], dim=1)
        return out.masked_fill(out == -100, pad_id)

    def keeps_minus_100(labels, pad_id, start_id):
        return torch.cat([torch.full_like(labels[:, :1], start_id), labels[:, :-1]], dim=1)

    def rolled(labels, pad_id, start_id):
        out = labels.roll(1, dims=1)
        return out.masked_fill(out == -100, pad_id)

    fails_with(check_shift_tokens_right, left, "shifted LEFT")
    fails_with(check_shift_tokens_right, no_start, "decoder_start token is missing")
    fails_with(check_shift_tokens_right, keeps_minus_100, "-100 label padding")
    fails_with(check_shift_tokens_right, rolled, "wrapped around")


# ------------------------------------------------------------------ calling the library is refused

def _permute_by_library(ids, order, end_id, special_ids):
    pos = [i for i, t in enumerate(ids) if t not in special_ids]
    sentences = noising.split_sentences([ids[i] for i in pos], {end_id})
    out = list(ids)
    for i, t in zip(pos, [t for o in order for t in sentences[o]]):
        out[i] = t
    return out


def _shift_by_transformers(labels, pad_id, start_id):
    from transformers.models.bart import modeling_bart

    return modeling_bart.shift_tokens_right(labels, pad_id, start_id)


@pytest.mark.parametrize("check, delegating, dotted, correct", [
    (check_text_infilling, lambda ids, spans, m, sp: noising.text_infilling(ids, mask_id=m, special_ids=sp),
     "coursekit.noising.text_infilling", False),
    (check_text_infilling, lambda ids, spans, m, sp: noising._rebuild_with_masks(torch.tensor(ids), *[None] * 3, m),
     "coursekit.noising._rebuild_with_masks", False),
    (check_sentence_permutation, _permute_by_library, "coursekit.noising.split_sentences", True),
    (check_sentence_permutation, lambda ids, order, e, sp: noising.sentence_permutation(ids, sentence_end_ids={e}),
     "coursekit.noising.sentence_permutation", False),
    (check_shift_tokens_right, lambda labels, p, s: bart.shift_tokens_right(labels, p, s),
     "coursekit.bart.shift_tokens_right", True),
    (check_shift_tokens_right, _shift_by_transformers,
     "transformers.models.bart.modeling_bart.shift_tokens_right", True),
])
def test_calling_the_library_is_refused(check, delegating, dotted, correct):
    refuses_delegation(check, delegating, dotted, correct=correct)


def _manual_shift(labels, pad_id, start_id):   # the notebook's solution
    shifted = torch.full_like(labels, start_id)
    shifted[:, 1:] = labels[:, :-1]
    return shifted.masked_fill(shifted == -100, pad_id)


def test_reference_solutions_still_pass():
    assert check_text_infilling(infill, verbose=False).status == PASSED
    assert check_sentence_permutation(permute, verbose=False).status == PASSED
    assert check_shift_tokens_right(_manual_shift, verbose=False).status == PASSED

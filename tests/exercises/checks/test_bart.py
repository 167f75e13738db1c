"""The BART exercise checks: the reference passes, a stub is "not attempted", typical mistakes get their hint."""

from __future__ import annotations

import pytest
import torch
from helpers.exercises import fails_with, notebook_solutions, passes, refuses_delegation, stub

from coursekit.bart import batches as bart_batches
from coursekit.bart import model as bart
from coursekit.bart import noising
from coursekit.bart.batches import shift_tokens_right
from coursekit.exercises import check_sentence_permutation, check_shift_tokens_right, check_text_infilling
from coursekit.exercises.core import NOT_ATTEMPTED, PASSED

# ------------------------------------------------------------------ text infilling

def infill(ids, spans, mask_id, special_ids, *, per_token=False, zero=True, protect=True, leave=True,
           fresh_after_special=True):
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
                    fresh = fresh or fresh_after_special
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
    def drop_last_written_back(ids, order, end_id, special_ids):     # the unfinished sentence stays where it was
        pos = [i for i, t in enumerate(ids) if t not in special_ids]
        sents = [s for s in split_after([ids[i] for i in pos], end_id) if s[-1] == end_id]
        out = list(ids)
        for i, t in zip(pos, [t for o in order if o < len(sents) for t in sents[o]]):
            out[i] = t
        return out

    fails_with(check_sentence_permutation, drop_last, "was lost")
    fails_with(check_sentence_permutation, drop_last_written_back, "was left out of the permutation")


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


# ------------------------------------------------------------------ the notebook's solutions

NB11 = notebook_solutions("11_bart")
my_text_infilling = NB11["my_text_infilling"]
my_sentence_permutation = NB11["my_sentence_permutation"]
my_shift_tokens_right = NB11["my_shift_tokens_right"]


@pytest.mark.parametrize("check, solution", [
    (check_text_infilling, my_text_infilling), (check_sentence_permutation, my_sentence_permutation),
    (check_shift_tokens_right, my_shift_tokens_right),
])
def test_the_notebook_solutions_pass(check, solution):
    passes(check, solution)


# ------------------------------------------------------------------ realistic wrong solutions

def _sliced_in_order(ids, spans, mask_id, special_ids):
    out = list(ids)
    for s, n in spans:                      # the later starts now point at shifted tokens
        out[s:s + n] = [mask_id]
    return out


def _infill_in_place(ids, spans, mask_id, special_ids):
    """The right corruption, written back into the caller's list (and returned)."""
    ids[:] = infill(list(ids), spans, mask_id, special_ids)
    return ids


def _permute_in_place(ids, order, end_id, special_ids):
    """The right permutation, but the order list is sorted in place along the way."""
    out = my_sentence_permutation(ids, order, end_id, special_ids)
    order.sort()
    return out


def _no_new_mask_after_special(ids, spans, mask_id, special_ids):
    return infill(ids, spans, mask_id, special_ids, fresh_after_special=False)


INFILL_WRONG = {   # name -> (student function, a word of the hint or None)
    "mask id hard-coded to 3": (lambda ids, spans, m, sp: infill(ids, spans, 3, sp), "use the mask_id argument"),
    "BART's specials hard-coded": (lambda ids, spans, m, sp: infill(ids, spans, m, {0, 1, 2}), "special token"),
    "no new mask after a special": (_no_new_mask_after_special, "did not go on after the special"),
    "spans replaced in place in order": (_sliced_in_order, "ORIGINAL ids"),
    "span one token too long": (lambda ids, spans, m, sp: infill(ids, [(s, n + 1) for s, n in spans], m, sp),
                                "one token too many"),
    "start read as 1-based": (lambda ids, spans, m, sp: infill(ids, [(s - 1, n) for s, n in spans], m, sp),
                              "one position too early"),
    "zero-length mask inserted after the token": (
        lambda ids, spans, m, sp: infill(ids, [(s + (n == 0), n) for s, n in spans], m, sp), "too late"),
    "returns a float tensor": (lambda *a: torch.tensor(infill(*a), dtype=torch.float), "list of int ids"),
    "returns a tuple": (lambda *a: tuple(infill(*a)), "return a list"),
    "returns the ids unchanged": (lambda ids, spans, m, sp: list(ids), None),
    "right answer, but the caller's ids edited in place": (_infill_in_place, "changed the caller's ids list in place"),
}


@pytest.mark.parametrize("name", sorted(INFILL_WRONG))
def test_text_infilling_wrong_solutions_fail(name):
    fn, hint = INFILL_WRONG[name]
    fails_with(check_text_infilling, fn, "on ", *([hint] if hint else []))


def _specials_as_content(ids, order, end_id, special_ids):
    return my_sentence_permutation(ids, order, end_id, set())


def _inner_slice(ids, order, end_id, special_ids):
    sentences = split_after(ids[1:-1], end_id)
    return [ids[0]] + [t for o in order for t in sentences[o]] + [ids[-1]]


def _content_only(ids, order, end_id, special_ids):
    return [t for t in my_sentence_permutation(ids, order, end_id, special_ids) if t not in special_ids]


def _reversed(ids, order, end_id, special_ids):
    pos = [i for i, t in enumerate(ids) if t not in special_ids]
    sentences = split_after([ids[i] for i in pos], end_id)
    out = list(ids)
    for i, t in zip(pos, [t for s in sentences[::-1] for t in s]):
        out[i] = t
    return out


PERMUTE_WRONG = {
    "specials permuted with the sentences": (_specials_as_content, "moved with the sentences"),
    "specials found by position": (_inner_slice, "found by position"),
    "'.' hard-coded to 4": (lambda ids, order, e, sp: my_sentence_permutation(ids, order, 4, sp), None),
    "order ignored": (lambda ids, order, e, sp: list(ids), "order was not applied"),
    "special tokens dropped": (_content_only, "keeps every token"),
    "sentences reversed instead of ordered": (_reversed, None),
    "returns a string": (lambda *a: " ".join(map(str, my_sentence_permutation(*a))), "return a list"),
    "argsort of the order": (lambda ids, order, e, sp: my_sentence_permutation(
        ids, sorted(range(len(order)), key=order.__getitem__), e, sp), "position order[i]"),
    "right answer, but the caller's order sorted in place": (_permute_in_place, "changed the caller's order list"),
}


@pytest.mark.parametrize("name", sorted(PERMUTE_WRONG))
def test_sentence_permutation_wrong_solutions_fail(name):
    fn, hint = PERMUTE_WRONG[name]
    fails_with(check_sentence_permutation, fn, "on ", *([hint] if hint else []))


def _in_place_pad(labels, pad_id, start_id):
    labels[labels == -100] = pad_id                # the caller's loss targets lose their -100 (the case)
    return my_shift_tokens_right(labels, pad_id, start_id)


def _float_inputs(labels, pad_id, start_id):
    out = torch.zeros(labels.shape)
    out[:, 0] = start_id
    out[:, 1:] = labels[:, :-1]
    return out.masked_fill(out == -100, pad_id)


def _copied_not_shifted(labels, pad_id, start_id):
    out = labels.clone()
    out[:, 0] = start_id
    return out.masked_fill(out == -100, pad_id)


SHIFT_WRONG = {
    "-100 → pad in place on the labels": (_in_place_pad, "in place"),
    "pad hard-coded to 1": (lambda lab, p, s: my_shift_tokens_right(lab, 1, s), "-100 became 1"),
    "pad hard-coded to 0": (lambda lab, p, s: my_shift_tokens_right(lab, 0, s), "-100 became 0"),
    "start hard-coded to 2 (BART's </s>)": (lambda lab, p, s: my_shift_tokens_right(lab, p, 2), "position 0 holds 2"),
    "shifted along the batch": (lambda lab, p, s: torch.cat([torch.full_like(lab[:1], s), lab[:-1]], 0).masked_fill(
        torch.cat([torch.full_like(lab[:1], s), lab[:-1]], 0) == -100, p), "along the batch"),
    "start prepended, last label kept": (lambda lab, p, s: torch.cat([torch.full_like(lab[:, :1], s), lab], 1)
                                         .masked_fill(torch.cat([torch.full_like(lab[:, :1], s), lab], 1) == -100, p),
                                         "drop the last one"),
    "float decoder inputs": (_float_inputs, "int64"),
    "start written over the first label (no shift)": (_copied_not_shifted, None),
    "returns a list": (lambda *a: my_shift_tokens_right(*a).tolist(), "int64 tensor"),
}


@pytest.mark.parametrize("name", sorted(SHIFT_WRONG))
def test_shift_tokens_right_wrong_solutions_fail(name):
    fn, hint = SHIFT_WRONG[name]
    fails_with(check_shift_tokens_right, fn, "on ", *([hint] if hint else []))


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
     "coursekit.bart.noising.text_infilling", False),
    (check_text_infilling, lambda ids, spans, m, sp: noising._rebuild_with_masks(torch.tensor(ids), *[None] * 3, m),
     "coursekit.bart.noising._rebuild_with_masks", False),
    (check_sentence_permutation, _permute_by_library, "coursekit.bart.noising.split_sentences", True),
    (check_sentence_permutation, lambda ids, order, e, sp: noising.sentence_permutation(ids, sentence_end_ids={e}),
     "coursekit.bart.noising.sentence_permutation", False),
    (check_shift_tokens_right, lambda labels, p, s: bart_batches.shift_tokens_right(labels, p, s),
     "coursekit.bart.batches.shift_tokens_right", True),
    (check_shift_tokens_right, lambda labels, p, s: bart.shift_tokens_right(labels, p, s),   # bart imports it
     "coursekit.bart.model.shift_tokens_right", True),
    (check_shift_tokens_right, _shift_by_transformers,
     "transformers.models.bart.modeling_bart.shift_tokens_right", True),
])
def test_calling_the_library_is_refused(check, delegating, dotted, correct):
    refuses_delegation(check, delegating, dotted, correct=correct)


def test_reference_solutions_still_pass():
    assert check_text_infilling(infill, verbose=False).status == PASSED
    assert check_sentence_permutation(permute, verbose=False).status == PASSED
    assert check_shift_tokens_right(my_shift_tokens_right, verbose=False).status == PASSED  # the notebook's

"""Exercise checks for notebook 11 (BART): text infilling, sentence permutation, shifting decoder inputs right.

What the student writes:

* ``my_text_infilling(ids: list[int], spans: list[(start, length)], mask_id, special_ids) -> list[int]``.
* ``my_sentence_permutation(ids: list[int], order: list[int], end_id, special_ids) -> list[int]``.
* ``my_shift_tokens_right(labels (B, T) int64, pad_id, decoder_start_id) -> (B, T) int64``.

The mask id, the sentence-end id, the special ids, the pad id and the start id change from case to case
(BART's own in some cases only), and every reference is computed on the check's own copy of the inputs.
"""

from __future__ import annotations

from typing import Any

import torch

from coursekit.bart.batches import shift_tokens_right
from coursekit.bart.noising import split_sentences
from coursekit.exercises.core import (
    CheckFailed,
    active_variant,
    case_generator,
    describe,
    exercise_check,
    expect_close,
    hidden_ids,
    mistake_value,
    require_function,
    run_student,
)

__all__ = ["check_sentence_permutation", "check_shift_tokens_right", "check_text_infilling"]

_BART = dict(bos=0, pad=1, eos=2, mask=3, dot=4)            # the course's BART-style ids
_BART_SPECIALS = frozenset({0, 1, 2})
_BERT_SPECIALS = frozenset({0, 101, 102})                   # [PAD] [CLS] [SEP] of bert-base
_OTHER_SPECIALS = frozenset({7, 8, 9})                      # <s> 7, </s> 8, <pad> 9


def _as_id_list(got: Any, case: str, what: str) -> list[int]:
    """A list (or 1-D tensor) of integer ids → list[int]; anything else fails with a specific message."""
    if isinstance(got, torch.Tensor):
        if got.dim() != 1 or got.is_floating_point() or got.dtype == torch.bool:
            raise CheckFailed(f"on {case}, expected {what} as a list of int ids, got {describe(got)}")
        return got.tolist()
    if not isinstance(got, list):
        raise CheckFailed(f"on {case}, return a list of token ids ({what}), got {describe(got)}")
    out = []
    for t in got:
        if isinstance(t, torch.Tensor) and t.dim() == 0 and not t.is_floating_point() and t.dtype != torch.bool:
            t = int(t)
        if not isinstance(t, int) or isinstance(t, bool):
            raise CheckFailed(f"on {case}, {what} must be a list of int ids; it holds {describe(t)}")
        out.append(t)
    return out


# ---------------------------------------------------------------------------------------------
# Text infilling with given spans
# ---------------------------------------------------------------------------------------------

def _infill(ids, spans, mask_id, special_ids, *, one_mask_per_span=True, insert_zero=True, protect=True,
            leave_mask=True, remask=True):
    """Reference (defaults) and typical mistakes (flags) of span infilling with given spans."""
    out, i = [], 0
    starts = {s: n for s, n in spans}
    while i <= len(ids):
        if i in starts:
            n = starts[i]
            if n == 0:
                if insert_zero:
                    out.append(mask_id)
            else:
                emitted = False
                for t in ids[i:i + n]:
                    if protect and t in special_ids:
                        out.append(t)
                        emitted = emitted and not remask     # a special interrupts the span
                        continue
                    if leave_mask and (not emitted or not one_mask_per_span):
                        out.append(mask_id)
                    emitted = True
                i += n
                continue
        if i < len(ids):
            out.append(ids[i])
        i += 1
    return out


def _sliced_in_order(ids, spans, mask_id, special_ids):
    """The naive loop: out[s:s+n] = [mask] span after span, so the later starts point at shifted tokens."""
    out = list(ids)
    for s, n in spans:
        out[s:s + n] = [mask_id]
    return out


def _infill_mistakes(ids, spans, mask_id, specials) -> dict[str, Any]:
    def shifted(spans2):
        if any(s < 0 or s + n > len(ids) for s, n in spans2):
            return None
        return _infill(ids, spans2, mask_id, specials)

    return {
        "you wrote one [MASK] per masked TOKEN (that is token masking); text infilling replaces each span "
        "by a single [MASK], so the model must also predict how many tokens are missing":
            _infill(ids, spans, mask_id, specials, one_mask_per_span=False),
        "a zero-length span was ignored; it must INSERT a [MASK] at its position":
            _infill(ids, spans, mask_id, specials, insert_zero=False),
        "a special token (a special_ids member) was masked; special tokens are never part of a span":
            _infill(ids, spans, mask_id, specials, protect=False),
        "the spans were deleted without leaving a [MASK] (that is token deletion)":
            _infill(ids, spans, mask_id, specials, leave_mask=False),
        "the span did not go on after the special token with a new [MASK]: the words after it were dropped":
            _infill(ids, spans, mask_id, specials, remask=False),
        "each span was replaced in place one after the other, so after the first replacement the later starts "
        "point at the wrong tokens: the starts index the ORIGINAL ids (build a new list, or go from the last "
        "span to the first)": mistake_value(_sliced_in_order, ids, spans, mask_id, specials),
        "each span covered one token too many; a span (start, length) covers ids[start:start + length]":
            shifted([(s, n + 1) for s, n in spans]),
        "each span covered one token too few; a span (start, length) covers ids[start:start + length]":
            shifted([(s, max(n - 1, 0)) for s, n in spans]),
        "the spans start one position too early: start is a 0-based index into ids":
            shifted([(s - 1, n) for s, n in spans]),
        "the spans start one position too late: start is a 0-based index into ids":
            shifted([(s + 1, n) for s, n in spans]),
    }


_INFILL_CASES = [
    # (ids, spans (start, length) in the full sequence, mask_id, special ids, what the case shows)
    ([0, 10, 11, 12, 13, 14, 15, 16, 2], [(2, 3)], 3, _BART_SPECIALS, "one span of 3 tokens"),
    ([0, 10, 11, 12, 13, 14, 15, 16, 17, 18, 2], [(1, 2), (5, 1), (7, 3)], 3, _BART_SPECIALS,
     "three spans of lengths 2, 1, 3"),
    ([101, 10, 11, 12, 13, 14, 102], [(3, 0)], 103, _BERT_SPECIALS, "a zero-length span (an inserted mask)"),
    ([101, 10, 11, 12, 13, 14, 15, 102], [(2, 0), (4, 2)], 103, _BERT_SPECIALS,
     "a zero-length span and a span of 2"),
    ([0, 10, 11, 12, 13, 2, 1, 1], [(3, 4)], 3, _BART_SPECIALS, "a span that runs into </s> and padding"),
    ([101, 10, 11, 102, 12, 13, 102, 0, 0], [(2, 4)], 103, _BERT_SPECIALS,
     "a span with a [SEP] in its middle (the words after it get a new mask)"),
    ([20, 21, 22, 23, 24, 8], [(0, 2), (3, 1)], 50, _OTHER_SPECIALS, "a span at the very start (no <s>)"),
    ([7, 30, 31, 3, 8], [(4, 0)], 50, _OTHER_SPECIALS, "a zero-length span just before </s> (id 3 is a word)"),
    ([7, 30, 31, 32, 8, 9], [], 50, _OTHER_SPECIALS, "no spans at all (nothing changes)"),
    ([7, 40, 41, 42, 43, 44, 45, 8], [(1, 6)], 50, _OTHER_SPECIALS, "one span covering every word"),
]


@exercise_check("text infilling (each span → ONE [MASK]; zero-length spans insert one; specials untouched)",
                reimplements=("coursekit.bart.noising.text_infilling", "coursekit.bart.noising._rebuild_with_masks"))
def check_text_infilling(infill_fn) -> None:
    """``infill_fn(ids: list[int], spans: list[(start, length)], mask_id, special_ids) -> list[int]``.

    ``spans`` are sorted, non-overlapping and never adjacent; ``start`` indexes ``ids``. A span of length
    0 inserts a mask before position ``start``. Special tokens inside a span are kept (they are never
    masked); the span goes on after them with a new mask.
    """
    require_function(infill_fn, "text_infilling")
    for n, (ids, spans, mask_id, specials, what) in enumerate(_INFILL_CASES):
        ids = hidden_ids(ids, set(specials) | {mask_id}, seed=n)     # the grader's hidden cases: other word ids
        case = f"ids={ids} with spans={spans} ({what}), mask_id={mask_id}, special_ids={sorted(specials)}"
        want = _infill(list(ids), list(spans), mask_id, specials)
        mistakes = _infill_mistakes(list(ids), list(spans), mask_id, specials)
        given_ids, given_spans = list(ids), list(spans)
        got = run_student(infill_fn, case, given_ids, given_spans, mask_id, set(specials))
        _check_inputs_untouched(case, given_ids, list(ids), given_spans, list(spans), "spans")
        got = _as_id_list(got, case, "the corrupted ids")
        if got != want and got == [3 if t == mask_id else t for t in want]:
            raise CheckFailed(f"on {case}, the spans became id 3, but mask_id is {mask_id}: use the mask_id "
                              "argument, not a fixed id.")
        expect_close(got, want, case=case, what="the corrupted ids", mistakes=mistakes)


# ---------------------------------------------------------------------------------------------
# Sentence permutation with a given order
# ---------------------------------------------------------------------------------------------

def _permute(ids, order, end_id, special_ids, *, split_before=False, drop_unfinished=False, inverse=False,
             write_back=False):
    """Reference (defaults) and typical mistakes (flags) of sentence permutation with a given order."""
    content_pos = [i for i, t in enumerate(ids) if t not in special_ids]
    content = [ids[i] for i in content_pos]
    if split_before:   # cut BEFORE each full stop: the stop sticks to the next sentence
        sentences, cur = [], []
        for t in content:
            if t == end_id and cur:
                sentences.append(cur)
                cur = []
            cur.append(t)
        if cur:
            sentences.append(cur)
    else:
        sentences = split_sentences(content, {end_id}) if content else []
    if drop_unfinished and sentences and sentences[-1][-1] != end_id:
        sentences = sentences[:-1]
    if sorted(o for o in order if o < len(sentences)) != list(range(len(sentences))):
        return None        # this mistake does not apply to this case: no hint
    if inverse:
        placed = [None] * len(order)
        for i, o in enumerate(order):
            placed[o] = sentences[i]
    else:
        placed = [sentences[o] for o in order if o < len(sentences)]
    new = [t for s in placed for t in s]
    if len(new) < len(content) and not write_back:   # a sentence went missing: the specials around it stay
        return ids[:content_pos[0]] + new + ids[content_pos[-1] + 1:]
    out = list(ids)
    for i, t in zip(content_pos, new):
        out[i] = t
    return out


def _inner_slice(ids, order, end_id, special_ids):
    """Specials found by POSITION: ids[0] and ids[-1] kept, everything between permuted."""
    sentences = split_sentences(ids[1:-1], {end_id})
    return [ids[0]] + [t for o in order for t in sentences[o]] + [ids[-1]]


def _permute_mistakes(ids, order, end_id, specials) -> dict[str, Any]:
    return {
        "the document was cut BEFORE each full stop; a sentence ends with (includes) its full stop":
            _permute(ids, order, end_id, specials, split_before=True),
        "the last sentence, which has no full stop, was lost; keep it as a sentence":
            _permute(ids, order, end_id, specials, drop_unfinished=True),
        "the last sentence, which has no full stop, was left out of the permutation (its tokens stayed at the end, "
        "where they were); it is a sentence too, and moves with the order":
            _permute(ids, order, end_id, specials, drop_unfinished=True, write_back=True),
        "sentence i was put at position order[i]; the output's i-th sentence is sentence order[i]":
            _permute(ids, order, end_id, specials, inverse=True),
        "the special tokens moved with the sentences; they keep their positions (only the non-special tokens "
        "are split into sentences and permuted)": _permute(ids, order, end_id, set()),
        "the special tokens were found by position (ids[0] and ids[-1]); find them by id (t in special_ids): "
        "padding and a [SEP] in the middle are special too": mistake_value(_inner_slice, ids, order, end_id, specials),
        "the order was not applied: sentence order[0] comes first, then order[1], …":
            list(ids) if order != sorted(order) else None,
    }


_PERMUTE_CASES = [
    # (ids, order, end_id, special ids, what the case shows)
    ([0, 10, 4, 11, 12, 4, 13, 14, 2, 1], [1, 2, 0], 4, _BART_SPECIALS,
     "a last sentence without a full stop, padding"),
    ([0, 10, 11, 4, 12, 4, 13, 14, 15, 4, 2], [2, 0, 1], 4, _BART_SPECIALS, "three sentences"),
    ([101, 20, 21, 1012, 22, 1012, 23, 1012, 24, 25, 1012, 102], [3, 1, 0, 2], 1012, _BERT_SPECIALS,
     "four sentences, '.' is id 1012"),
    ([101, 5, 6, 1012, 7, 1012, 102, 8, 1012, 102, 0], [2, 0, 1], 1012, _BERT_SPECIALS,
     "a [SEP] between the sentences and padding (the specials stay where they are)"),
    ([7, 30, 13, 13, 31, 32, 13, 8, 9, 9], [2, 0, 1], 13, _OTHER_SPECIALS,
     "a sentence that is only its full stop (two stops in a row), '.' is id 13"),
    ([7, 40, 41, 42, 13, 8], [0], 13, _OTHER_SPECIALS, "a single sentence"),
    ([0, 50, 4, 51, 4, 52, 53, 4, 2], [0, 1, 2], 4, _BART_SPECIALS, "the identity order"),
    ([60, 61, 4, 62, 4], [1, 0], 4, _BART_SPECIALS, "no special tokens at all"),
]


@exercise_check("sentence permutation (split after each full stop, reorder, specials stay in place)",
                reimplements=("coursekit.bart.noising.sentence_permutation", "coursekit.bart.noising.split_sentences"))
def check_sentence_permutation(permute_fn) -> None:
    """``permute_fn(ids: list[int], order: list[int], end_id, special_ids) -> list[int]``.

    Split the non-special tokens into sentences, each ending AFTER an ``end_id`` token (a last sentence
    without one counts too), and output them in ``order``: sentence ``order[0]`` first, then
    ``order[1]``, … Special tokens keep their positions.
    """
    require_function(permute_fn, "sentence_permutation")
    for n, (ids, order, end_id, specials, what) in enumerate(_PERMUTE_CASES):
        ids = hidden_ids(ids, set(specials) | {end_id}, seed=n)       # the grader's hidden cases: other word ids
        if active_variant():                                          # … and another order of the sentences
            order = [order[i] for i in torch.randperm(len(order), generator=case_generator(n))]
        case = f"ids={ids}, order={order} ({what}), end_id={end_id}, special_ids={sorted(specials)}"
        want = _permute(list(ids), list(order), end_id, specials)
        mistakes = _permute_mistakes(list(ids), list(order), end_id, specials)
        given_ids, given_order = list(ids), list(order)
        got = run_student(permute_fn, case, given_ids, given_order, end_id, set(specials))
        _check_inputs_untouched(case, given_ids, list(ids), given_order, list(order), "order")
        got = _as_id_list(got, case, "the permuted ids")
        if len(got) != len(ids):
            hint = _matching(got, mistakes)
            raise CheckFailed(f"on {case}, the output has {len(got)} tokens, the input {len(ids)}: a permutation "
                              "keeps every token." + (f" It looks like {hint}." if hint else ""))
        expect_close(got, want, case=case, what="the permuted ids", mistakes=mistakes)


def _check_inputs_untouched(case: str, ids_after: list, ids: list, other_after: list, other: list,
                            other_name: str) -> None:
    """A noising function must leave its inputs as they were: the caller still holds the original document
    (the pre-training loop corrupts the same document again in the next epoch)."""
    if ids_after != ids:
        raise CheckFailed(f"on {case}, your function changed the caller's ids list in place (it now holds "
                          f"{ids_after}): build a new list and return it, and leave the input as it was — the caller "
                          "still needs the original document.")
    if other_after != other:
        raise CheckFailed(f"on {case}, your function changed the caller's {other_name} list in place (it now holds "
                          f"{other_after}): leave the inputs as they were.")


def _matching(got, mistakes: dict[str, Any]) -> str | None:
    return next((hint for hint, wrong in mistakes.items() if wrong is not None and got == wrong), None)


# ---------------------------------------------------------------------------------------------
# Shifting decoder inputs right
# ---------------------------------------------------------------------------------------------

def _shift_mistakes(labels: torch.Tensor, pad: int, start: int) -> dict[str, Any]:
    def clean(x, fill=pad):
        return x.masked_fill(x == -100, fill)

    B = labels.shape[0]
    start_col = torch.full_like(labels[:, :1], start)
    right = torch.cat([start_col, labels[:, :-1]], 1)
    mistakes = {
        "the tokens were shifted LEFT (labels[:, 1:]); decoder inputs are the labels shifted RIGHT by one":
            clean(torch.cat([labels[:, 1:], torch.full_like(labels[:, :1], pad)], 1)),
        "the decoder_start token is missing at position 0 (BART starts with decoder_start_id)":
            clean(torch.cat([torch.full_like(labels[:, :1], pad), labels[:, :-1]], 1)) if start != pad else None,
        "-100 label padding was copied into the decoder inputs; replace it with pad_id": right,
        "the last token wrapped around to the front (torch.roll); position 0 must be decoder_start":
            clean(labels.roll(1, dims=1)),
        "the targets were not shifted at all": clean(labels),
        "the shift ran along the batch (dim 0); shift each row along time (dim 1)":
            clean(torch.cat([torch.full_like(labels[:1], start), labels[:-1]], 0)) if B > 1 else None,
    }
    for fixed in (0, 1):
        if fixed != pad:
            mistakes[f"-100 became {fixed}, a fixed id; replace it with the pad_id argument ({pad} here)"] = \
                clean(right, fixed)
    for fixed in (0, 2):
        if fixed != start:
            mistakes[f"position 0 holds {fixed}, a fixed id; use the decoder_start_id argument ({start} here)"] = \
                clean(torch.cat([torch.full_like(labels[:, :1], fixed), labels[:, :-1]], 1))
    return mistakes


_SHIFT_CASES = [
    # (labels, pad_id, decoder_start_id, what)
    ([[0, 10, 11, 2, -100, -100], [0, 12, 13, 14, 15, 2]], 1, 2,
     "two targets, the first padded with -100 (ignored labels), BART's ids"),
    ([[0, 10, 11, 12, 2]], 1, 2, "one target <s> w w w </s>, BART's ids"),
    ([[21, 22, 23, 1, -100], [24, 1, -100, -100, -100], [25, 26, 27, 28, 1]], 0, 0,
     "three targets, T5-style: pad 0 is also the start id"),
    ([[30, 31, -100, -100], [32, 33, 34, 6], [35, -100, -100, -100]], 5, 7, "three targets, pad 5 and start 7"),
    ([[9], [4]], 3, 6, "targets of ONE token (only the start id remains)"),
    ([[-100, -100, -100]], 4, 8, "a row that is all -100"),
]


@exercise_check("shift_tokens_right (decoder inputs = [start] + targets[:-1]; -100 → <pad>)",
                reimplements=("coursekit.bart.batches.shift_tokens_right",
                              "transformers.models.bart.modeling_bart.shift_tokens_right"))
def check_shift_tokens_right(shift_fn) -> None:
    """``shift_fn(labels (B, T) long, pad_id, decoder_start_id) -> (B, T) long``."""
    require_function(shift_fn, "shift_tokens_right")
    for n, (rows, pad, start, what) in enumerate(_SHIFT_CASES):
        rows = [hidden_ids(row, {-100, pad, start}, seed=n) for row in rows]   # hidden cases: other label ids
        labels = torch.tensor(rows)
        B, T = labels.shape
        case = f"labels={rows} ({what}), pad_id={pad}, decoder_start_id={start}"
        want = shift_tokens_right(labels.clone(), pad, start)
        mistakes = _shift_mistakes(labels.clone(), pad, start)
        got = run_student(shift_fn, case, labels.clone(), pad, start)
        if isinstance(got, torch.Tensor) and tuple(got.shape) == (B, T + 1):
            raise CheckFailed(f"on {case}, the decoder inputs have shape {(B, T + 1)}, not {(B, T)}: you prepended "
                              "decoder_start_id but kept all T labels; drop the last one (labels[:, :-1]).")
        if not isinstance(got, torch.Tensor) or tuple(got.shape) != (B, T) or got.dtype != torch.long:
            raise CheckFailed(f"on {case}, expected the decoder inputs as an int64 tensor of shape {(B, T)} "
                              f"(token ids for an embedding), got {describe(got)}")
        expect_close(got, want, case=case, what="the decoder inputs", mistakes=mistakes)

"""Exercise checks for notebook 11 (BART): text infilling, sentence permutation, shifting decoder inputs right."""

from __future__ import annotations

import torch

from coursekit.bart import shift_tokens_right
from coursekit.exercises.core import CheckFailed, exercise_check, expect_close, run_student
from coursekit.noising import split_sentences

__all__ = ["check_sentence_permutation", "check_shift_tokens_right", "check_text_infilling"]

_BOS, _PAD, _EOS, _MASK, _DOT = 0, 1, 2, 3, 4
_SPECIALS = frozenset({_BOS, _PAD, _EOS})


# ---------------------------------------------------------------------------------------------
# Text infilling with given spans
# ---------------------------------------------------------------------------------------------

def _infill(ids, spans, mask_id, special_ids, *, one_mask_per_span=True, insert_zero=True, protect=True,
            leave_mask=True):
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
                        emitted = False      # a special interrupts the span
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


_INFILL_CASES = [
    # (ids, spans (start, length) in the full sequence, what the case shows)
    ([_BOS, 10, 11, 12, 13, 14, 15, 16, _EOS], [(2, 3)], "one span of 3 tokens"),
    ([_BOS, 10, 11, 12, 13, 14, 15, 16, 17, 18, _EOS], [(1, 2), (5, 1), (7, 3)], "three spans of lengths 2, 1, 3"),
    ([_BOS, 10, 11, 12, 13, 14, _EOS], [(3, 0)], "a zero-length span (an inserted [MASK])"),
    ([_BOS, 10, 11, 12, 13, 14, 15, _EOS], [(2, 0), (4, 2)], "a zero-length span and a span of 2"),
    ([_BOS, 10, 11, 12, 13, _EOS, _PAD, _PAD], [(3, 4)], "a span that runs into </s> and padding"),
]


@exercise_check("text infilling (each span → ONE [MASK]; zero-length spans insert one; specials untouched)",
                reimplements=("coursekit.noising.text_infilling", "coursekit.noising._rebuild_with_masks"))
def check_text_infilling(infill_fn) -> None:
    """``infill_fn(ids: list[int], spans: list[(start, length)], mask_id, special_ids) -> list[int]``.

    ``spans`` are sorted, non-overlapping and never adjacent; ``start`` indexes ``ids``. A span of length
    0 inserts a mask before position ``start``. Special tokens inside a span are kept (they are never
    masked); the span goes on after them with a new mask.
    """
    for ids, spans, what in _INFILL_CASES:
        case = f"ids={ids} with spans={spans} ({what}), mask_id={_MASK}"
        got = run_student(infill_fn, case, list(ids), list(spans), _MASK, set(_SPECIALS))
        if isinstance(got, torch.Tensor):
            got = got.tolist()
        if not isinstance(got, list):
            raise CheckFailed(f"on {case}, return a list of token ids, got {type(got).__name__}")
        expect_close(got, _infill(ids, spans, _MASK, _SPECIALS), case=case, what="the corrupted ids", mistakes={
            "you wrote one [MASK] per masked TOKEN (that is token masking); text infilling replaces each span "
            "by a single [MASK], so the model must also predict how many tokens are missing":
                _infill(ids, spans, _MASK, _SPECIALS, one_mask_per_span=False),
            "a zero-length span was ignored; it must INSERT a [MASK] at its position":
                _infill(ids, spans, _MASK, _SPECIALS, insert_zero=False),
            "a special token (</s> or <pad>) was masked; special tokens are never part of a span":
                _infill(ids, spans, _MASK, _SPECIALS, protect=False),
            "the spans were deleted without leaving a [MASK] (that is token deletion)":
                _infill(ids, spans, _MASK, _SPECIALS, leave_mask=False),
        })


# ---------------------------------------------------------------------------------------------
# Sentence permutation with a given order
# ---------------------------------------------------------------------------------------------

def _permute(ids, order, end_id, special_ids, *, split_before=False, drop_unfinished=False, inverse=False):
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
        sentences = split_sentences(content, {end_id})
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
    if len(new) < len(content):   # a sentence went missing: the specials around the content stay
        return ids[:content_pos[0]] + new + ids[content_pos[-1] + 1:]
    out = list(ids)
    for i, t in zip(content_pos, new):
        out[i] = t
    return out


_PERMUTE_CASES = [
    ([_BOS, 10, _DOT, 11, 12, _DOT, 13, 14, _EOS, _PAD], [1, 2, 0], "a last sentence without a full stop, padding"),
    ([_BOS, 10, 11, _DOT, 12, _DOT, 13, 14, 15, _DOT, _EOS], [2, 0, 1], "three sentences"),
    ([_BOS, 20, 21, _DOT, 22, _DOT, 23, _DOT, 24, 25, _DOT, _EOS], [3, 1, 0, 2], "four sentences"),
]


@exercise_check("sentence permutation (split after each full stop, reorder, specials stay in place)",
                reimplements=("coursekit.noising.sentence_permutation", "coursekit.noising.split_sentences"))
def check_sentence_permutation(permute_fn) -> None:
    """``permute_fn(ids: list[int], order: list[int], end_id, special_ids) -> list[int]``.

    Split the non-special tokens into sentences, each ending AFTER an ``end_id`` token (a last sentence
    without one counts too), and output them in ``order``: sentence ``order[0]`` first, then
    ``order[1]``, … Special tokens keep their positions.
    """
    for ids, order, what in _PERMUTE_CASES:
        case = f"ids={ids}, order={order} ({what}), end_id={_DOT}"
        got = run_student(permute_fn, case, list(ids), list(order), _DOT, set(_SPECIALS))
        if isinstance(got, torch.Tensor):
            got = got.tolist()
        if not isinstance(got, list):
            raise CheckFailed(f"on {case}, return a list of token ids, got {type(got).__name__}")
        expect_close(got, _permute(ids, order, _DOT, _SPECIALS), case=case, what="the permuted ids", mistakes={
            "the document was cut BEFORE each full stop; a sentence ends with (includes) its full stop":
                _permute(ids, order, _DOT, _SPECIALS, split_before=True),
            "the last sentence, which has no full stop, was lost; keep it as a sentence":
                _permute(ids, order, _DOT, _SPECIALS, drop_unfinished=True),
            "sentence i was put at position order[i]; the output's i-th sentence is sentence order[i]":
                _permute(ids, order, _DOT, _SPECIALS, inverse=True),
        })


# ---------------------------------------------------------------------------------------------
# Shifting decoder inputs right
# ---------------------------------------------------------------------------------------------

@exercise_check("shift_tokens_right (decoder inputs = [start] + targets[:-1]; -100 → <pad>)",
                reimplements=("coursekit.bart.shift_tokens_right",
                              "transformers.models.bart.modeling_bart.shift_tokens_right"))
def check_shift_tokens_right(shift_fn) -> None:
    """``shift_fn(labels (B, T) long, pad_id, decoder_start_id) -> (B, T) long``."""
    cases = [
        (torch.tensor([[_BOS, 10, 11, 12, _EOS]]), "one target <s> w w w </s>"),
        (torch.tensor([[_BOS, 10, 11, _EOS, -100, -100], [_BOS, 12, 13, 14, 15, _EOS]]),
         "two targets, the first padded with -100 (ignored labels)"),
    ]
    for labels, what in cases:
        case = f"labels={labels.tolist()} ({what}), pad_id={_PAD}, decoder_start_id={_EOS}"
        got = run_student(shift_fn, case, labels.clone(), _PAD, _EOS)
        start_col = torch.full_like(labels[:, :1], _EOS)
        expect_close(got, shift_tokens_right(labels, _PAD, _EOS), case=case, what="the decoder inputs", mistakes={
            "the tokens were shifted LEFT (labels[:, 1:]); decoder inputs are the labels shifted RIGHT by one":
                torch.cat([labels[:, 1:], torch.full_like(labels[:, :1], _PAD)], 1).masked_fill(
                    torch.cat([labels[:, 1:], torch.full_like(labels[:, :1], _PAD)], 1) == -100, _PAD),
            "the decoder_start token is missing at position 0 (BART starts with </s>)":
                torch.cat([torch.full_like(labels[:, :1], _PAD), labels[:, :-1]], 1).masked_fill(
                    torch.cat([start_col, labels[:, :-1]], 1) == -100, _PAD),
            "-100 label padding was copied into the decoder inputs; replace it with pad_id":
                torch.cat([start_col, labels[:, :-1]], 1),
            "the last token wrapped around to the front (torch.roll); position 0 must be decoder_start":
                labels.roll(1, dims=1).masked_fill(labels.roll(1, dims=1) == -100, _PAD),
            "the targets were not shifted at all":
                labels.masked_fill(labels == -100, _PAD),
        })

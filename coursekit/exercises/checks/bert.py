"""Exercise checks for notebook 09 (BERT): the masking rule, the input representation, the [CLS] head.

What the student writes:

* ``my_mask_tokens(input_ids, vocab_size, mask_id, special_ids, pad_id) -> (corrupted_ids, labels)`` — BERT's
  masked-LM corruption: 15% of the non-special, non-padding positions are selected; of those 80% become
  ``mask_id``, 10% a random id of ``[0, vocab_size)``, 10% stay; ``labels`` hold the original ids at the
  selected positions and -100 elsewhere. Both are int64 tensors of the input's shape.
* ``my_input_embeddings(emb, input_ids, token_type_ids) -> (B, T, C)`` — token + segment + position
  embeddings, then the LayerNorm (no dropout).
* ``my_cls_head(hidden (B, T, C), pooler, classifier) -> logits (B, K)`` — tanh(pooler(h_[CLS])), then the
  classifier.

The special ids, the pad id, the vocabulary and the sizes change from case to case (bert-base's 0/101/102/103
in one case only), and every reference is computed on the check's own copy of the inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from coursekit.bert.model import BertConfig, BertEmbeddings
from coursekit.bert.objectives import IGNORE_INDEX
from coursekit.exercises.core import (
    CheckFailed,
    case_generator,
    case_seed,
    describe,
    exercise_check,
    expect_close,
    require_function,
    run_student,
)

__all__ = ["check_cls_head", "check_mask_tokens", "check_segment_embeddings"]



def _tensor_of(got: Any, shape: tuple[int, ...], dtype: torch.dtype | None, case: str, what: str) -> None:
    """``got`` must be a tensor of ``shape`` (and ``dtype``; a floating dtype when None)."""
    ok = isinstance(got, torch.Tensor) and tuple(got.shape) == shape and (
        got.dtype == dtype if dtype is not None else got.is_floating_point())
    if not ok:
        kind = "a floating-point" if dtype is None else ("an int64" if dtype == torch.long else f"a {dtype}")
        raise CheckFailed(f"on {case}, expected {what} as {kind} tensor of shape {shape}, got {describe(got)}")


def _parameters_unchanged(modules: dict[str, nn.Module], before: dict[str, dict], case: str) -> None:
    for name, module in modules.items():
        for key, value in module.state_dict().items():
            if not torch.equal(value, before[name][key]):
                raise CheckFailed(f"on {case}, your function changed {name}.{key} in place: the weights of the "
                                  "module it was given are not its to change (the model would be corrupted). "
                                  "Compute with them; do not assign to them or modify a view of them.")


def _snapshot(modules: dict[str, nn.Module]) -> dict[str, dict]:
    return {name: {k: v.detach().clone() for k, v in m.state_dict().items()} for name, m in modules.items()}


# ----------------------------------------------------------------------------------------------
# the masking rule
# ----------------------------------------------------------------------------------------------

# (what the case shows, batch shape, vocab_size, pad_id, [CLS], [SEP], [MASK], more special ids, word ids, calls)
_MLM_CONFIGS = (
    ("bert-base ids ([PAD] 0, [CLS] 101, [SEP] 102, [MASK] 103), vocabulary 2000", (96, 48),
     2000, 0, 101, 102, 103, (), (1000, 2000), 10),
    ("a small vocabulary of 300 ([PAD] 3, [CLS] 1, [SEP] 2, [MASK] 4, [UNK] 5 special too), "
     "an all-padding row and a row with no words", (48, 40), 300, 3, 1, 2, 4, (5,), (5, 300), 6),
    ("one sequence of 400 tokens, specials at the END of a vocabulary of 1000 ([CLS] 996, [SEP] 997, "
     "[MASK] 998, [PAD] 999); ids 0, 101, 102, 103 are ordinary words here", (1, 400),
     1000, 999, 996, 997, 998, (), (0, 996), 4),
)
_N_CALLS = sum(c[-1] for c in _MLM_CONFIGS)


def _mlm_batch(seed: int, shape, pad, cls, sep, words) -> torch.Tensor:
    """[CLS] words [SEP] words [SEP] [PAD]… rows (an all-padding row and a [CLS] [SEP] row when B > 2)."""
    g = case_generator(seed)
    B, T = shape
    ids = torch.randint(*words, (B, T), generator=g)
    if words[0] == 0:     # make bert-base's special ids frequent ordinary words
        common = torch.tensor([0, 101, 102, 103])
        spots = torch.rand(B, T, generator=g) < 0.1
        ids[spots] = common[torch.randint(4, (int(spots.sum()),), generator=g)]
    lengths = torch.randint(20, T + 1, (B,), generator=g) if B > 1 else torch.tensor([T - 5])
    if B > 2:
        lengths[1], lengths[2] = 0, 2
    for b, n in enumerate(lengths.tolist()):
        if n >= 2:
            ids[b, 0], ids[b, n - 1] = cls, sep
            if n >= 6:
                ids[b, n // 2] = sep
        ids[b, n:] = pad
    return ids


def _mlm_cases():
    for seed, (what, shape, vocab, pad, cls, sep, mask, extra, words, calls) in enumerate(_MLM_CONFIGS):
        ids = _mlm_batch(seed, shape, pad, cls, sep, words)
        yield what, ids, dict(vocab_size=vocab, mask_id=mask, special_ids=(cls, sep, *extra), pad_id=pad), calls


def _check_mlm_call(out: Any, ids: torch.Tensor, kw: dict, case: str) -> tuple[torch.Tensor, torch.Tensor]:
    """The exact invariants of one call; returns (corrupted, selected)."""
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise CheckFailed(f"on {case}, return a pair (corrupted_ids, labels), got {describe(out)}")
    corrupted, labels = out
    for name, t in (("corrupted_ids", corrupted), ("labels", labels)):
        _tensor_of(t, tuple(ids.shape), torch.long, case, name)
    if (corrupted == IGNORE_INDEX).any() and not (labels == IGNORE_INDEX).any():
        raise CheckFailed(f"on {case}, the first tensor holds -100 and the second none: the pair looks swapped. "
                          "Return (corrupted_ids, labels) in that order.")
    selected = labels != IGNORE_INDEX
    if not selected.any() or selected.all():
        raise CheckFailed(f"on {case}, labels should be -100 (IGNORE_INDEX) everywhere except at the "
                          f"~15% selected positions; got {int(selected.sum())} of {ids.numel()} positions "
                          "with a label. It looks like the labels are not -100 at the unselected positions.")
    protected_ids = {kw["pad_id"]: "pad_id", **{s: "one of special_ids" for s in kw["special_ids"]}}
    for token, role in protected_ids.items():
        if (selected & (ids == token)).any():
            raise CheckFailed(f"on {case}, a position holding id {token} ({role}) was selected for masking: special "
                              "tokens and padding must never be masked. Compare with the pad_id and special_ids "
                              "arguments, not with fixed ids.")
    if not torch.equal(labels[selected], ids[selected]):
        hint = (" It looks like the labels were taken from the corrupted ids." if
                torch.equal(labels[selected], corrupted[selected]) else "")
        raise CheckFailed(f"on {case}, labels at the selected positions must be the ORIGINAL token ids "
                          f"(what the model has to predict), not the corrupted ones.{hint}")
    changed = corrupted != ids
    if (changed & ~selected).any():
        if (changed & ~selected & (corrupted == kw["mask_id"])).any():
            raise CheckFailed(f"on {case}, a position was replaced by mask_id but its label is -100: every "
                              "corrupted position must keep its original id as its label (draw the selection "
                              "once and use it for both).")
        if (corrupted[selected] == kw["mask_id"]).all():
            raise CheckFailed(f"on {case}, a position replaced by a random id has label -100: only the [MASK] "
                              "positions have a label. Every selected token keeps its label, whether it became "
                              "[MASK], a random id or stayed the same.")
        raise CheckFailed(f"on {case}, a position that was not selected (label -100) was changed: only "
                          "selected positions may be corrupted.")
    vocab = kw["vocab_size"]
    outside = selected & ((corrupted < 0) | (corrupted >= vocab))
    if outside.any():
        raise CheckFailed(f"on {case}, a selected token became id {int(corrupted[outside][0])}, outside the "
                          f"vocabulary [0, {vocab}): draw the random replacements from [0, vocab_size) "
                          "with the vocab_size argument, not a fixed size.")
    n_sel = int(selected.sum())
    mask_id = kw["mask_id"]
    if n_sel >= 20 and (corrupted[selected] == mask_id).float().mean() < 0.5:
        new = corrupted[selected & changed]
        if len(new):
            value, count = torch.mode(new).values.item(), int((new == torch.mode(new).values).sum())
            if count > 0.5 * n_sel:
                raise CheckFailed(f"on {case}, {count} of the {n_sel} selected tokens became id {value}, but "
                                  f"mask_id is {mask_id}: use the mask_id argument, not a fixed id.")
    return corrupted, selected


def _check_one_random_id(draws: torch.Tensor, case: str) -> None:
    if len(draws) >= 10 and len(draws.unique()) <= 2:
        raise CheckFailed(f"on {case}, the {len(draws)} random replacements took only the ids "
                          f"{draws.unique().tolist()}: draw one random id per replaced position "
                          "(torch.randint(vocab_size, (n,))), not one for all of them.")


def _check_random_draws(draws: torch.Tensor, vocab: int, case: str) -> None:
    if len(draws) >= 30 and (draws.max() < vocab / 2 or draws.min() >= vocab / 2):
        raise CheckFailed(f"on {case}, the {len(draws)} random replacements all lie in [{int(draws.min())}, "
                          f"{int(draws.max())}]: draw them uniformly from the whole vocabulary [0, vocab_size).")


def _check_proportions(sel: int, maskable: int, mask_n: int, rand: int, same: int, where: str) -> None:
    rate = sel / maskable
    got = {"[MASK]": mask_n / sel, "random": rand / sel, "unchanged": same / sel}
    shown = ", ".join(f"{k} {v:.1%}" for k, v in got.items())
    if got["unchanged"] < 0.03:
        if abs(rate - 0.135) < 0.0075 and abs(got["random"] - 0.111) < 0.03:
            raise CheckFailed(f"on {where}, {rate:.1%} of the maskable tokens have a label and none of them kept "
                              "its original id: the 10% of the selected tokens that stay UNCHANGED lost their "
                              "labels. Labels come from the selection (15%), not from which tokens changed: the "
                              "model must predict the unchanged ones too.")
        if abs(rate - 0.12) < 0.0075 and got["random"] < 0.03:
            raise CheckFailed(f"on {where}, only [MASK] positions have a label ({rate:.1%} of the maskable tokens): "
                              "the random and the unchanged tokens (20% of the selected) must keep their labels too.")
        if abs(rate - 0.15) < 0.01:
            raise CheckFailed(f"on {where}, of the selected tokens you produced {shown}: no selected token stays "
                              "unchanged. 10% of them must keep their original id (and their label); the 80/10/10 "
                              "split is wrong.")
    if abs(rate - 0.15) > 0.01:
        raise CheckFailed(f"on {where}, {rate:.1%} of the maskable tokens were selected; expected 15% "
                          f"(measured over {maskable} tokens).")
    want = {"[MASK]": 0.8, "random": 0.1, "unchanged": 0.1}
    if any(abs(got[k] - want[k]) > 0.02 for k in want):
        hint = ""
        if abs(got["[MASK]"] - 0.8) < 0.02 and abs(got["random"] - 0.02) < 0.015:
            hint = (" It looks like the random 10% were drawn as 10% of the tokens NOT masked: of the remaining 20%, "
                    "half become random, half stay (one uniform u: u < 0.8 [MASK], 0.8 ≤ u < 0.9 random).")
        elif abs(got["[MASK]"] - 0.7) < 0.02 and abs(got["unchanged"] - 0.2) < 0.02:
            hint = (" It looks like the random draw overlaps the [MASK] one (both use u < …): use disjoint ranges, "
                    "u < 0.8 [MASK], 0.8 ≤ u < 0.9 random.")
        raise CheckFailed(f"on {where}, of the selected tokens you produced {shown}; the rule is 80% [MASK], "
                          f"10% a random token, 10% unchanged. The 80/10/10 split is wrong.{hint}")


@exercise_check("masked-LM corruption (15% selected; 80% [MASK] / 10% random / 10% unchanged)",
                reimplements=("coursekit.bert.objectives.mask_tokens", "coursekit.bert.objectives.mlm_actions",
                              "coursekit.bert.objectives.StaticMasking"))
def check_mask_tokens(mask_tokens_fn: Callable) -> None:
    """``mask_tokens_fn(input_ids, vocab_size, mask_id, special_ids, pad_id) -> (corrupted, labels)``.

    The draws are random, so we check the invariants exactly on every call and the proportions over the
    ~40,000 maskable tokens of the 20 calls.
    """
    require_function(mask_tokens_fn, "mask_tokens")
    torch.manual_seed(case_seed(0))
    sel = maskable = mask_n = same = rand = 0
    for what, ids, kw, calls in _mlm_cases():
        protected = torch.zeros_like(ids, dtype=torch.bool)
        for token in (kw["pad_id"], *kw["special_ids"]):
            protected |= ids == token
        draws, selections = [], []
        for rep in range(calls):
            case = f"a batch of shape {tuple(ids.shape)} with {what} (call {rep + 1})"
            out = run_student(mask_tokens_fn, case, ids.clone(), vocab_size=kw["vocab_size"], mask_id=kw["mask_id"],
                              special_ids=tuple(kw["special_ids"]), pad_id=kw["pad_id"])
            corrupted, selected = _check_mlm_call(out, ids, kw, case)
            is_mask = corrupted[selected] == kw["mask_id"]
            kept = corrupted[selected] == ids[selected]
            draws.append(corrupted[selected][~is_mask & ~kept])
            _check_one_random_id(draws[-1], case)
            selections.append(selected)
            sel += int(selected.sum())
            maskable += int((~protected).sum())
            mask_n += int(is_mask.sum())
            same += int(kept.sum())
            rand += int((~is_mask & ~kept).sum())
        where = f"the {calls} calls with {what}"
        _check_random_draws(torch.cat(draws), kw["vocab_size"], where)
        if calls > 1 and all(torch.equal(s, selections[0]) for s in selections):
            raise CheckFailed(f"on {where}, every call selected the same positions: draw fresh random numbers "
                              "on every call (dynamic masking); do not re-seed inside your function.")
    _check_proportions(sel, maskable, mask_n, rand, same, f"the {_N_CALLS} calls of this check ({maskable} "
                       "maskable tokens in all)")


# ----------------------------------------------------------------------------------------------
# the input representation
# ----------------------------------------------------------------------------------------------

# (what, vocab, d_model, max_len, pad_id, ids rows, segment rows)
_EMB_CASES = (
    ("three pairs of 12 tokens, pad id 3, d_model 6, every id below max_len", 30, 6, 32, 3,
     [[1, 7, 8, 9, 2, 10, 11, 12, 13, 2, 3, 3], [1, 14, 15, 2, 16, 17, 18, 19, 20, 21, 22, 2],
      [1, 23, 2, 24, 2, 3, 3, 3, 3, 3, 3, 3]],
     [[0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0], [0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1],
      [0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0]]),
    ("two sentence pairs [CLS] A [SEP] B [SEP], the second padded (pad id 0), d_model 12", 50, 12, 16, 0,
     [[2, 11, 12, 3, 21, 22, 23, 3], [2, 13, 3, 24, 25, 3, 0, 0]],
     [[0, 0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 1, 1, 1, 0, 0]]),
    ("one sequence as long as max_len = 10, d_model 10", 40, 10, 10, 0,
     [[5, 31, 32, 33, 6, 34, 35, 36, 37, 6]], [[0, 0, 0, 0, 0, 1, 1, 1, 1, 1]]),
    ("four sequences of ONE token, d_model 5", 20, 5, 8, 1, [[2], [7], [1], [19]], [[0], [1], [0], [1]]),
)


def _embedding_module(seed: int, vocab: int, d: int, max_len: int, pad: int) -> BertEmbeddings:
    torch.manual_seed(case_seed(seed))
    emb = BertEmbeddings(BertConfig(vocab_size=vocab, d_model=d, n_layers=1, n_heads=1, d_ff=2 * d,
                                    max_len=max_len, pad_id=pad))
    with torch.no_grad():  # non-trivial LayerNorm parameters and a NON-zero padding row, so that mistakes show
        emb.norm.weight.uniform_(0.5, 1.5)
        emb.norm.bias.uniform_(-0.5, 0.5)
        emb.token.weight[pad].normal_()
    return emb.eval()


def _layer_norm_manual(x: torch.Tensor, norm: nn.LayerNorm, dim: int = -1, unbiased: bool = False) -> torch.Tensor:
    mean = x.mean(dim, keepdim=True)
    var = x.var(dim, keepdim=True, unbiased=unbiased)
    return (x - mean) / torch.sqrt(var + norm.eps) * norm.weight + norm.bias


def _embedding_mistakes(emb: BertEmbeddings, ids: torch.Tensor, seg: torch.Tensor) -> dict[str, Any]:
    T = ids.shape[1]
    tok, s, p, norm = emb.token(ids), emb.segment(seg), emb.position(torch.arange(T)), emb.norm
    max_len = emb.position.num_embeddings
    return {
        "the segment (token type) embeddings are missing": norm(tok + p),
        "the position embeddings are missing": norm(tok + s),
        "the LayerNorm after the sum is missing": tok + s + p,
        "the position embeddings are looked up with the token ids instead of the positions 0..T-1":
            norm(tok + s + emb.position(ids)) if int(ids.max()) < max_len else None,
        "the positions start at 1; they are 0, 1, …, T-1 (torch.arange(T))":
            norm(tok + s + emb.position(torch.arange(1, T + 1))) if T < max_len else None,
        "the segment ids were looked up in the TOKEN table; use emb.segment(token_type_ids)":
            norm(tok + emb.token(seg) + p),
        "the padding positions were zeroed; BERT embeds every position (padding is handled by the attention mask)":
            norm(tok + s + p) * (ids != emb.config.pad_id).unsqueeze(-1),
        "the LayerNorm's own weight and bias were left out; use emb.norm (it has learned parameters)":
            F.layer_norm(tok + s + p, (tok.shape[-1],), eps=norm.eps),
        "each embedding was normalised separately; add the three, then apply ONE LayerNorm":
            norm(tok) + norm(s) + norm(p),
        "the position embeddings were added after the LayerNorm; the sum of all three is normalised":
            norm(tok + s) + p,
        "the normalisation runs over the positions; LayerNorm normalises each vector over its features (dim=-1)":
            _layer_norm_manual(tok + s + p, norm, dim=1) if T > 1 else None,
        "the variance is the unbiased one (divides by C-1); LayerNorm divides by C (unbiased=False)":
            _layer_norm_manual(tok + s + p, norm, unbiased=True),
    }


@exercise_check("BERT input representation (token + segment + position, then LayerNorm)",
                # calling the module, emb(ids, seg), goes through __call__; forward is its body
                reimplements=("coursekit.bert.model.BertEmbeddings.__call__",
                              "coursekit.bert.model.BertEmbeddings.forward"))
def check_segment_embeddings(embed_fn: Callable) -> None:
    """``embed_fn(emb: BertEmbeddings, input_ids, token_type_ids) -> (B, T, C)`` without dropout.

    ``emb.token``, ``emb.segment``, ``emb.position`` are ``nn.Embedding``s and ``emb.norm`` a LayerNorm.
    """
    require_function(embed_fn, "input_embeddings")
    for seed, (what, vocab, d, max_len, pad, rows, seg_rows) in enumerate(_EMB_CASES):
        emb = _embedding_module(seed, vocab, d, max_len, pad)
        ids, seg = torch.tensor(rows), torch.tensor(seg_rows)
        B, T = ids.shape
        case = f"{what} (input_ids {tuple(ids.shape)})"
        with torch.no_grad():
            want = emb(ids.clone(), seg.clone())
            mistakes = _embedding_mistakes(emb, ids.clone(), seg.clone())
            before = _snapshot({"emb": emb})
            got = run_student(embed_fn, case, emb, ids.clone(), seg.clone())
        _parameters_unchanged({"emb": emb}, before, case)
        _tensor_of(got, (B, T, d), None, case, "the input embeddings")
        expect_close(got, want, case=case, what="the input embeddings", mistakes=mistakes)


# ----------------------------------------------------------------------------------------------
# the classification head on [CLS]
# ----------------------------------------------------------------------------------------------

_HEAD_SIZES = ((3, 7, 6, 2, 1.0), (1, 5, 10, 3, 1.0), (4, 1, 5, 4, 1.0), (2, 9, 12, 5, 4.0))   # B, T, C, K, scale


def _head_mistakes(h: torch.Tensor, pooler: nn.Linear, classifier: nn.Linear) -> dict[str, Any]:
    cls = h[:, 0]
    return {
        "you averaged over all positions instead of taking the [CLS] vector (position 0)":
            classifier(torch.tanh(pooler(h.mean(1)))),
        "you max-pooled over the positions instead of taking the [CLS] vector (position 0)":
            classifier(torch.tanh(pooler(h.max(1).values))),
        "you took the last position; [CLS] is the FIRST token": classifier(torch.tanh(pooler(h[:, -1]))),
        "the tanh of the pooler is missing": classifier(pooler(cls)),
        "the pooler layer is skipped (the classifier reads h_[CLS] directly)": classifier(cls),
        "the pooler's activation is tanh, not ReLU": classifier(torch.relu(pooler(cls))),
        "the pooler's activation is tanh, not the sigmoid": classifier(torch.sigmoid(pooler(cls))),
        "the tanh was applied to the logits; it belongs to the pooler: classifier(tanh(pooler(h_[CLS])))":
            torch.tanh(classifier(pooler(cls))),
        "you returned probabilities (softmax); the head returns the logits": torch.softmax(
            classifier(torch.tanh(pooler(cls))), dim=-1),
    }


@exercise_check("classification head on [CLS] (pooler: tanh(W h_[CLS] + b), then a linear classifier)")
def check_cls_head(head_fn: Callable) -> None:
    """``head_fn(hidden (B, T, C), pooler: nn.Linear, classifier: nn.Linear) -> logits (B, n_classes)``."""
    require_function(head_fn, "cls_head")
    for seed, (B, T, C, K, scale) in enumerate(_HEAD_SIZES):
        torch.manual_seed(case_seed(seed))
        h = scale * torch.randn(B, T, C)
        pooler, classifier = nn.Linear(C, C), nn.Linear(C, K)
        case = f"hidden states of shape {(B, T, C)} and {K} classes" + (
            f" (values scaled by {scale:g})" if scale != 1 else "")
        modules = {"pooler": pooler, "classifier": classifier}
        with torch.no_grad():
            want = classifier(torch.tanh(pooler(h[:, 0])))
            mistakes = _head_mistakes(h.clone(), pooler, classifier)
            before = _snapshot(modules)
            got = run_student(head_fn, case, h.clone(), pooler, classifier)
        _parameters_unchanged(modules, before, case)
        if isinstance(got, torch.Tensor) and tuple(got.shape) != (B, K):
            hint = ""
            if tuple(got.shape) == (T, K):
                hint = " It looks like you took hidden[0] (the first SEQUENCE); [CLS] is hidden[:, 0]."
            elif tuple(got.shape) == (B, 1, K):
                hint = " It looks like you kept the time axis (hidden[:, :1]); take hidden[:, 0]."
            elif got.numel() == B * K:
                hint = " Do not squeeze or reshape the logits: with B = 1 they are still (1, K)."
            raise CheckFailed(f"on {case}, expected the logits as a tensor of shape {(B, K)}, "
                              f"got {describe(got)}.{hint}")
        _tensor_of(got, (B, K), None, case, "the logits")
        expect_close(got, want, case=case, what="the logits", mistakes=mistakes)


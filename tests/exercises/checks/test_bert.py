"""The BERT exercise checks: the reference passes, a stub is "not attempted", typical mistakes get their hint."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from helpers.exercises import fails_with, notebook_solutions, passes, refuses_delegation, stub

from coursekit.bert import model as bert
from coursekit.bert import objectives as bert_data
from coursekit.bert.objectives import IGNORE_INDEX, mask_tokens
from coursekit.exercises import check_cls_head, check_mask_tokens, check_segment_embeddings
from coursekit.exercises.core import FAILED, NOT_ATTEMPTED, PASSED

# ------------------------------------------------------------------ the notebook's solutions


NB09 = notebook_solutions("09_bert")
my_mask_tokens, my_input_embeddings = NB09["my_mask_tokens"], NB09["my_input_embeddings"]
my_cls_head = NB09["my_cls_head"]


@pytest.mark.parametrize("check, solution", [
    (check_mask_tokens, my_mask_tokens), (check_segment_embeddings, my_input_embeddings),
    (check_cls_head, my_cls_head),
])
def test_the_notebook_solutions_pass(check, solution):
    passes(check, solution)


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
    corrupted[rnd] = torch.randint(vocab_size, (int(rnd.sum()),))
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


def _bert_base_ids(input_ids, vocab_size, mask_id, special_ids, pad_id):
    """bert-base's ids hard-coded: [PAD] 0, [CLS] 101, [SEP] 102."""
    return my_mask_tokens(input_ids, vocab_size, mask_id, (101, 102), 0)


def _mask_103(input_ids, vocab_size, mask_id, special_ids, pad_id):
    return my_mask_tokens(input_ids, vocab_size, 103, special_ids, pad_id)


def _random_from_30522(input_ids, vocab_size, mask_id, special_ids, pad_id):
    return my_mask_tokens(input_ids, 30522, mask_id, special_ids, pad_id)


def _random_below_1000(input_ids, vocab_size, mask_id, special_ids, pad_id):
    corrupted, labels = my_mask_tokens(input_ids, vocab_size, mask_id, special_ids, pad_id)
    is_random = (labels != -100) & (corrupted != mask_id) & (corrupted != input_ids)
    return corrupted.masked_scatter(is_random, torch.randint(0, min(1000, vocab_size), (int(is_random.sum()),))), \
        labels


def _labels_where_changed(input_ids, vocab_size, mask_id, special_ids, pad_id):
    corrupted, _ = my_mask_tokens(input_ids, vocab_size, mask_id, special_ids, pad_id)
    return corrupted, torch.where(corrupted != input_ids, input_ids, -100)


def _labels_where_masked(input_ids, vocab_size, mask_id, special_ids, pad_id):
    corrupted, _ = my_mask_tokens(input_ids, vocab_size, mask_id, special_ids, pad_id)
    return corrupted, torch.where(corrupted == mask_id, input_ids, -100)


def _two_independent_draws(input_ids, vocab_size, mask_id, special_ids, pad_id):
    """[MASK] with probability 0.8, then random with probability 0.1 of the REST (2% of the selected)."""
    maskable = input_ids != pad_id
    for s in special_ids:
        maskable &= input_ids != s
    selected = maskable & (torch.rand(input_ids.shape) < 0.15)
    to_mask = selected & (torch.rand(input_ids.shape) < 0.8)
    to_random = selected & ~to_mask & (torch.rand(input_ids.shape) < 0.1)
    corrupted = input_ids.masked_fill(to_mask, mask_id)
    corrupted[to_random] = torch.randint(vocab_size, (int(to_random.sum()),))
    return corrupted, torch.where(selected, input_ids, -100)


def _overlapping_ranges(input_ids, vocab_size, mask_id, special_ids, pad_id):
    """u < 0.8 → [MASK], then u < 0.1 → random (overwrites some masks)."""
    maskable = input_ids != pad_id
    for s in special_ids:
        maskable &= input_ids != s
    selected = maskable & (torch.rand(input_ids.shape) < 0.15)
    u = torch.rand(input_ids.shape)
    corrupted = input_ids.masked_fill(selected & (u < 0.8), mask_id)
    rnd = selected & (u < 0.1)
    corrupted[rnd] = torch.randint(vocab_size, (int(rnd.sum()),))
    return corrupted, torch.where(selected, input_ids, -100)


def _one_random_id(input_ids, vocab_size, mask_id, special_ids, pad_id):
    corrupted, labels = my_mask_tokens(input_ids, vocab_size, mask_id, special_ids, pad_id)
    is_random = (labels != -100) & (corrupted != mask_id) & (corrupted != input_ids)
    return corrupted.masked_fill(is_random, int(torch.randint(vocab_size, (1,)))), labels


def _reseeded(input_ids, vocab_size, mask_id, special_ids, pad_id):
    torch.manual_seed(1234)
    return my_mask_tokens(input_ids, vocab_size, mask_id, special_ids, pad_id)


def _float_labels(*a, **k):
    corrupted, labels = my_mask_tokens(*a, **k)
    return corrupted, labels.float()


def _swapped(*a, **k):
    corrupted, labels = my_mask_tokens(*a, **k)
    return labels, corrupted


def _in_place(input_ids, vocab_size, mask_id, special_ids, pad_id):
    maskable = input_ids != pad_id
    for s in special_ids:
        maskable &= input_ids != s
    selected = maskable & (torch.rand(input_ids.shape) < 0.15)
    labels = torch.where(selected, input_ids, -100)
    u = torch.rand(input_ids.shape)
    input_ids[selected & (u < 0.8)] = mask_id                   # no clone: the caller's batch is corrupted
    rnd = selected & (u >= 0.8) & (u < 0.9)
    input_ids[rnd] = torch.randint(vocab_size, (int(rnd.sum()),))
    return input_ids, labels


def _zero_labels(*a, **k):
    corrupted, labels = my_mask_tokens(*a, **k)
    return corrupted, labels.clamp_min(0)


def _separate_selections(input_ids, vocab_size, mask_id, special_ids, pad_id):
    """The corruption and the labels each draw their own 15%."""
    corrupted, _ = my_mask_tokens(input_ids, vocab_size, mask_id, special_ids, pad_id)
    _, labels = my_mask_tokens(input_ids, vocab_size, mask_id, special_ids, pad_id)
    return corrupted, labels


def _as_lists(*a, **k):
    corrupted, labels = my_mask_tokens(*a, **k)
    return corrupted.tolist(), labels.tolist()


MASK_WRONG = {   # name -> (student function, a word of the hint or None)
    "bert-base's special and pad ids hard-coded": (_bert_base_ids, "(pad_id) was selected"),
    "[MASK] hard-coded to 103": (_mask_103, "use the mask_id argument"),
    "random ids from bert-base's 30522": (_random_from_30522, "outside the vocabulary"),
    "random ids below 1000": (_random_below_1000, "whole vocabulary"),
    "unchanged tokens lose their labels (labels where the token changed)": (_labels_where_changed, "UNCHANGED"),
    "labels only at [MASK]": (_labels_where_masked, "only the [MASK] positions have a label"),
    "random = 10% of the tokens not masked": (_two_independent_draws, "NOT masked"),
    "overlapping u ranges": (_overlapping_ranges, "overlaps"),
    "one random id for every replaced position": (_one_random_id, "one random id per replaced position"),
    "re-seeded inside the function": (_reseeded, "same positions"),
    "float labels": (_float_labels, "int64"),
    "pair swapped": (_swapped, "swapped"),
    "input changed in place": (_in_place, "in place"),
    "label 0 instead of -100": (_zero_labels, "not -100"),
    "corruption and labels from different draws": (_separate_selections, "its label is -100"),
    "lists instead of tensors": (_as_lists, "int64 tensor"),
}


@pytest.mark.parametrize("name", sorted(MASK_WRONG))
def test_mask_tokens_wrong_solutions_fail(name):
    fn, hint = MASK_WRONG[name]
    fails_with(check_mask_tokens, fn, "on ", *([hint] if hint else []))


def test_mask_tokens_unchanged_without_labels_is_not_blamed_on_the_rate():
    r = fails_with(check_mask_tokens, _labels_where_changed, "UNCHANGED")
    assert "expected 15%" not in r.message


def test_the_library_passes_the_proportions():
    check_mask_tokens.__wrapped__(lambda ids, **kw: bert_data.mask_tokens(ids, **kw))


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


def _manual_norm(x, norm, dim=-1, unbiased=False):
    mean = x.mean(dim, keepdim=True)
    var = x.var(dim, keepdim=True, unbiased=unbiased)
    return (x - mean) / torch.sqrt(var + norm.eps) * norm.weight + norm.bias


def _sum(emb, ids, seg):
    return emb.token(ids) + emb.segment(seg) + emb.position(torch.arange(ids.shape[1]))


def _zeroes_the_padding_row(emb, ids, seg):
    emb.token.weight[emb.config.pad_id] = 0.0    # "padding embeddings should be zero": changes the module
    return _embed(emb, ids, seg)


EMBED_WRONG = {
    "positions from 1": (lambda e, i, s: e.norm(e.token(i) + e.segment(s) + e.position(
        torch.arange(1, i.shape[1] + 1))), "positions start at 1"),
    "positions looked up with the token ids": (lambda e, i, s: e.norm(e.token(i) + e.segment(s) + e.position(i)),
                                               "token ids instead of the positions"),
    "segments in the token table": (lambda e, i, s: e.norm(e.token(i) + e.token(s) + e.position(torch.arange(
        i.shape[1]))), "TOKEN table"),
    "padding zeroed": (lambda e, i, s: _embed(e, i, s) * (i != 0).unsqueeze(-1), "padding positions were zeroed"),
    "LayerNorm without its weight and bias": (lambda e, i, s: F.layer_norm(_sum(e, i, s), (e.norm.weight.shape[0],),
                                                                            eps=e.norm.eps), "weight and bias"),
    "each embedding normalised": (lambda e, i, s: e.norm(e.token(i)) + e.norm(e.segment(s)) + e.norm(
        e.position(torch.arange(i.shape[1]))), "normalised separately"),
    "positions added after the LayerNorm": (lambda e, i, s: e.norm(e.token(i) + e.segment(s)) + e.position(
        torch.arange(i.shape[1])), "added after the LayerNorm"),
    "manual LayerNorm, unbiased variance": (lambda e, i, s: _manual_norm(_sum(e, i, s), e.norm, unbiased=True),
                                            "unbiased"),
    "manual LayerNorm over the positions": (lambda e, i, s: _manual_norm(_sum(e, i, s), e.norm, dim=1),
                                            "over the positions"),
    "T hard-coded to 8": (lambda e, i, s: e.norm(e.token(i) + e.segment(s) + e.position(torch.arange(8))), None),
    "the whole position table": (lambda e, i, s: e.norm(e.token(i) + e.segment(s) + e.position.weight), None),
    "the padding row of the token table zeroed": (_zeroes_the_padding_row, "in place"),
    "dropout left on": (lambda e, i, s: F.dropout(_embed(e, i, s), 0.1, training=True), None),
    "returns a list": (lambda e, i, s: _embed(e, i, s).tolist(), "floating-point tensor"),
}


@pytest.mark.parametrize("name", sorted(EMBED_WRONG))
def test_segment_embeddings_wrong_solutions_fail(name):
    fn, hint = EMBED_WRONG[name]
    fails_with(check_segment_embeddings, fn, "on ", *([hint] if hint else []))


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


def _weight_changed(h, pooler, classifier):
    pooler.weight.mul_(1.0 + 1e-3)               # e.g. a "normalisation" of the layer's weight in place
    return classifier(torch.tanh(pooler(h[:, 0])))


CLS_WRONG = {
    "relu": (lambda h, p, c: c(torch.relu(p(h[:, 0]))), "not ReLU"),
    "sigmoid": (lambda h, p, c: c(torch.sigmoid(p(h[:, 0]))), "not the sigmoid"),
    "tanh on the logits": (lambda h, p, c: torch.tanh(c(p(h[:, 0]))), "applied to the logits"),
    "softmax returned": (lambda h, p, c: torch.softmax(c(torch.tanh(p(h[:, 0]))), -1), "probabilities"),
    "max pooling": (lambda h, p, c: c(torch.tanh(p(h.max(1).values))), "max-pooled"),
    "hidden[0]": (lambda h, p, c: c(torch.tanh(p(h[0]))), "first SEQUENCE"),
    "hidden[:, :1]": (lambda h, p, c: c(torch.tanh(p(h[:, :1]))), "kept the time axis"),
    "squeezed": (lambda h, p, c: c(torch.tanh(p(h[:, 0]))).squeeze(), "Do not squeeze"),
    "argmax returned": (lambda h, p, c: c(torch.tanh(p(h[:, 0]))).argmax(-1), None),
    "pooler on every position, then the mean": (lambda h, p, c: c(torch.tanh(p(h))).mean(1), None),
    "a weight changed in place": (_weight_changed, "in place"),
    "float64 numpy": (lambda h, p, c: c(torch.tanh(p(h[:, 0]))).numpy(), "floating-point tensor"),
}


@pytest.mark.parametrize("name", sorted(CLS_WRONG))
def test_cls_head_wrong_solutions_fail(name):
    fn, hint = CLS_WRONG[name]
    fails_with(check_cls_head, fn, "on ", *([hint] if hint else []))


# ------------------------------------------------------------------ calling the library is refused

@pytest.mark.parametrize("check, delegating, dotted, correct", [
    (check_mask_tokens, lambda ids, **kw: bert_data.mask_tokens(ids, **kw), "coursekit.bert.objectives.mask_tokens",
     True),
    (check_mask_tokens, lambda ids, **kw: bert_data.StaticMasking(ids, **kw)[0],
     "coursekit.bert.objectives.StaticMasking", True),
    (check_mask_tokens, lambda ids, **kw: bert_data.mlm_actions(ids != kw["pad_id"]),
     "coursekit.bert.objectives.mlm_actions", False),
    (check_segment_embeddings, lambda emb, ids, seg: emb(ids, seg), "coursekit.bert.model.BertEmbeddings.__call__",
     True),
    (check_segment_embeddings, lambda emb, ids, seg: emb.forward(ids, seg),
     "coursekit.bert.model.BertEmbeddings.forward", True),
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

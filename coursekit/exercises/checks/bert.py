"""Exercise checks for notebook 09 (BERT): the masking rule, the input representation, the [CLS] head."""

from __future__ import annotations

import torch
from torch import nn

from coursekit.bert import IGNORE_INDEX, BertConfig, BertEmbeddings
from coursekit.exercises.core import CheckFailed, exercise_check, expect_close, run_student

__all__ = ["check_cls_head", "check_mask_tokens", "check_segment_embeddings"]

_PAD, _CLS, _SEP, _MASK = 0, 101, 102, 103
_VOCAB = 2000


def _mlm_batch() -> torch.Tensor:
    """(64, 48) ids: [CLS] words [SEP] words [SEP] [PAD]…, words drawn from [1000, 2000)."""
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(1000, _VOCAB, (64, 48), generator=g)
    lengths = torch.randint(20, 49, (64,), generator=g)
    for b, n in enumerate(lengths.tolist()):
        ids[b, 0], ids[b, n // 2], ids[b, n - 1] = _CLS, _SEP, _SEP
        ids[b, n:] = _PAD
    return ids


@exercise_check("masked-LM corruption (15% selected; 80% [MASK] / 10% random / 10% unchanged)",
                reimplements=("coursekit.bert.mask_tokens", "coursekit.bert.mlm_actions",
                              "coursekit.bert.StaticMasking"))
def check_mask_tokens(mask_tokens_fn) -> None:
    """``mask_tokens_fn(input_ids, vocab_size, mask_id, special_ids, pad_id) -> (corrupted, labels)``.

    The draws are random, so we check the invariants exactly and the proportions over ~40,000 tokens.
    """
    ids = _mlm_batch()
    protected = (ids == _PAD) | (ids == _CLS) | (ids == _SEP)
    n_maskable = int((~protected).sum())
    torch.manual_seed(0)
    sel = mask_n = same = rand = 0
    for rep in range(20):
        case = f"a batch of shape {tuple(ids.shape)} with [CLS]/[SEP]/[PAD] (call {rep + 1})"
        out = run_student(mask_tokens_fn, case, ids.clone(), vocab_size=_VOCAB, mask_id=_MASK,
                          special_ids=(_CLS, _SEP), pad_id=_PAD)
        if not (isinstance(out, tuple) and len(out) == 2):
            raise CheckFailed(f"on {case}, return a pair (corrupted_ids, labels), got {type(out).__name__}")
        corrupted, labels = out
        for name, t in (("corrupted_ids", corrupted), ("labels", labels)):
            if not isinstance(t, torch.Tensor) or t.shape != ids.shape:
                raise CheckFailed(f"on {case}, {name} should be a tensor of shape {tuple(ids.shape)}")
        selected = labels != IGNORE_INDEX
        if not selected.any() or selected.all():
            raise CheckFailed(f"on {case}, labels should be -100 (IGNORE_INDEX) everywhere except at the "
                              f"~15% selected positions; got {int(selected.sum())} of {ids.numel()} positions "
                              "with a label. It looks like the labels are not -100 at the unselected positions.")
        if (selected & protected).any():
            raise CheckFailed(f"on {case}, a [CLS], [SEP] or [PAD] position was selected for masking: "
                              "special tokens and padding must never be masked.")
        if not torch.equal(labels[selected], ids[selected]):
            raise CheckFailed(f"on {case}, labels at the selected positions must be the ORIGINAL token ids "
                              "(what the model has to predict), not the corrupted ones.")
        if not torch.equal(corrupted[~selected], ids[~selected]):
            raise CheckFailed(f"on {case}, a position that was not selected (label -100) was changed: only "
                              "selected positions may be corrupted.")
        sel += int(selected.sum())
        mask_n += int((corrupted[selected] == _MASK).sum())
        same += int((corrupted[selected] == ids[selected]).sum())
        rand += int(((corrupted[selected] != _MASK) & (corrupted[selected] != ids[selected])).sum())
    rate = sel / (20 * n_maskable)
    if abs(rate - 0.15) > 0.01:
        raise CheckFailed(f"{rate:.1%} of the maskable tokens were selected; expected 15% "
                          f"(measured over {20 * n_maskable} tokens).")
    got = {"[MASK]": mask_n / sel, "random": rand / sel, "unchanged": same / sel}
    want = {"[MASK]": 0.8, "random": 0.1, "unchanged": 0.1}
    if any(abs(got[k] - want[k]) > 0.02 for k in want):
        shown = ", ".join(f"{k} {got[k]:.1%}" for k in want)
        raise CheckFailed(f"of the selected tokens you produced {shown}; the rule is 80% [MASK], 10% a random "
                          "token, 10% unchanged. The 80/10/10 split is wrong.")


@exercise_check("BERT input representation (token + segment + position, then LayerNorm)",
                # calling the module, emb(ids, seg), goes through __call__; forward is its body
                reimplements=("coursekit.bert.BertEmbeddings.__call__", "coursekit.bert.BertEmbeddings.forward"))
def check_segment_embeddings(embed_fn) -> None:
    """``embed_fn(emb: BertEmbeddings, input_ids, token_type_ids) -> (B, T, C)`` without dropout.

    ``emb.token``, ``emb.segment``, ``emb.position`` are ``nn.Embedding``s and ``emb.norm`` a LayerNorm.
    """
    torch.manual_seed(0)
    emb = BertEmbeddings(BertConfig(vocab_size=50, d_model=8, n_layers=1, n_heads=2, d_ff=16, max_len=16))
    with torch.no_grad():  # give the LayerNorm non-trivial parameters so that forgetting it shows
        emb.norm.weight.uniform_(0.5, 1.5)
        emb.norm.bias.uniform_(-0.5, 0.5)
    emb.eval()
    ids = torch.tensor([[2, 11, 12, 3, 21, 22, 23, 3], [2, 13, 3, 24, 25, 3, 0, 0]])
    seg = torch.tensor([[0, 0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 1, 1, 1, 0, 0]])
    pos = torch.arange(ids.shape[1])
    tok, s, p, norm = emb.token(ids), emb.segment(seg), emb.position(pos), emb.norm
    case = "a batch of two sentence pairs [CLS] A [SEP] B [SEP]"
    with torch.no_grad():
        got = run_student(embed_fn, case, emb, ids, seg)
        want = emb(ids, seg)
        expect_close(got, want, case=case, what="the input embeddings", mistakes={
            "the segment (token type) embeddings are missing": norm(tok + p),
            "the position embeddings are missing": norm(tok + s),
            "the LayerNorm after the sum is missing": tok + s + p,
            "the position embeddings are looked up with the token ids instead of the positions 0..T-1":
                norm(tok + s + emb.position(ids.clamp_max(15))),
        })


@exercise_check("classification head on [CLS] (pooler: tanh(W h_[CLS] + b), then a linear classifier)")
def check_cls_head(head_fn) -> None:
    """``head_fn(hidden (B, T, C), pooler: nn.Linear, classifier: nn.Linear) -> logits (B, n_classes)``."""
    torch.manual_seed(0)
    B, T, C, K = 3, 7, 6, 2
    h = torch.randn(B, T, C)
    pooler, classifier = nn.Linear(C, C), nn.Linear(C, K)
    case = f"hidden states of shape {(B, T, C)} and {K} classes"
    with torch.no_grad():
        got = run_student(head_fn, case, h, pooler, classifier)
        want = classifier(torch.tanh(pooler(h[:, 0])))
        expect_close(got, want, case=case, what="the logits", mistakes={
            "you averaged over all positions instead of taking the [CLS] vector (position 0)":
                classifier(torch.tanh(pooler(h.mean(1)))),
            "you took the last position; [CLS] is the FIRST token": classifier(torch.tanh(pooler(h[:, -1]))),
            "the tanh of the pooler is missing": classifier(pooler(h[:, 0])),
            "the pooler layer is skipped (the classifier reads h_[CLS] directly)": classifier(h[:, 0]),
        })

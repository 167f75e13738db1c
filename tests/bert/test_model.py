"""Tests of coursekit.bert.model, coursekit.bert.objectives and coursekit.bert.heads: masked-LM corruption, NSP
pairs, the model and its checkpoint import, the fine-tuning heads and frozen features (and the MiniLM loader of
coursekit.bert.checkpoint)."""

from __future__ import annotations

import math
import random

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from coursekit.bert import checkpoint as bert_checkpoint
from coursekit.bert import heads as bert_heads
from coursekit.bert import model as bert
from coursekit.bert import objectives as bert_data
from coursekit.bert.objectives import (
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

WIKI = [
    ' ',
    ' = Alpha = ',
    ' ',
    ' Alpha one is here . Alpha two follows ! Alpha three ends ? ',
    ' ',
    ' = = History = = ',
    ' ',
    ' Alpha four is in a section . ',
    ' ',
    ' = Beta = ',
    ' ',
    ' Beta one . Beta two . ',
    ' = Gamma = ',
    ' Gamma one only . ',
    ' = Delta = ',
    ' Delta one . Delta two . Delta three . ',
    '',
]


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


# ------------------------------------------------------------------ the model vs Hugging Face transformers

transformers = pytest.importorskip("transformers")

TINY = {"vocab_size": 97, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
        "intermediate_size": 64, "max_position_embeddings": 40, "type_vocab_size": 2}


def _hf(cls_name, **overrides):
    torch.manual_seed(0)
    cfg = transformers.BertConfig(**(TINY | overrides))
    return getattr(transformers, cls_name)(cfg).eval()


def _inputs(seed=0, B=3, T=12, vocab=97):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, vocab, (B, T), generator=g)
    seg = torch.zeros_like(ids)
    seg[:, T // 2:] = 1
    mask = torch.ones_like(ids)
    mask[1, T - 4:] = 0  # padding in one row
    ids[1, T - 4:] = 0
    return ids, seg, mask


@pytest.mark.parametrize("via", ["object", "directory"])
def test_bertmodel_parity_hidden_states(tmp_path, via):
    ref = _hf("BertModel")
    if via == "directory":
        ref.save_pretrained(tmp_path)
        ours = bert.Bert.from_hf(tmp_path)
    else:
        ours = bert.Bert.from_hf(ref)
    assert ours.pooler is not None and ours.mlm is None and ours.nsp is None
    ids, seg, mask = _inputs()
    with torch.no_grad():
        got = ours(ids, seg, mask, output_hidden_states=True)
        want = ref(input_ids=ids, token_type_ids=seg, attention_mask=mask, output_hidden_states=True)
    assert len(got.hidden_states) == len(want.hidden_states) == 3
    for a, b in zip(got.hidden_states, want.hidden_states, strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(got.pooler_output, want.pooler_output, atol=1e-5, rtol=1e-5)


def test_masked_lm_parity_logits_and_tied_weights(tmp_path):
    ref = _hf("BertForMaskedLM")
    ref.save_pretrained(tmp_path)  # safetensors
    ours = bert.Bert.from_hf(tmp_path)
    assert ours.mlm is not None and ours.pooler is None  # BertForMaskedLM has no pooler
    assert ours.mlm.embedding.weight is ours.embeddings.token.weight  # tied, not copied
    ids, seg, mask = _inputs(1)
    with torch.no_grad():
        got = ours(ids, seg, mask).mlm_logits
        want = ref(input_ids=ids, token_type_ids=seg, attention_mask=mask).logits
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)
    # logits only at selected positions equal the full logits there
    sel = torch.zeros_like(ids, dtype=torch.bool)
    sel[0, 3] = sel[2, 7] = True
    with torch.no_grad():
        part = ours(ids, seg, mask, mlm_positions=sel).mlm_logits
    torch.testing.assert_close(part, got[sel])


def test_pretraining_parity_float64_and_bin_format(tmp_path):
    ref = _hf("BertForPreTraining").double()
    with torch.no_grad():                                    # values float32 cannot hold
        for p in ref.parameters():
            p.add_(torch.randn_like(p) * 1e-9)
    ref.save_pretrained(tmp_path, safe_serialization=False)  # pytorch_model.bin
    ours = bert.Bert.from_hf(tmp_path, dtype=torch.float64)
    ids, seg, mask = _inputs(2)
    with torch.no_grad():
        got = ours(ids, seg, mask)
        want = ref(input_ids=ids, token_type_ids=seg, attention_mask=mask)
    torch.testing.assert_close(got.mlm_logits, want.prediction_logits, atol=1e-10, rtol=1e-10)
    torch.testing.assert_close(got.nsp_logits, want.seq_relationship_logits, atol=1e-10, rtol=1e-10)


def test_pretraining_loss_matches_hf():
    ref = _hf("BertForPreTraining")
    ours = bert.Bert.from_hf(ref)
    ids, seg, mask = _inputs(3)
    g = torch.Generator().manual_seed(0)
    corrupted, labels = mask_tokens(ids, vocab_size=97, mask_id=4, pad_id=0, generator=g, mlm_probability=0.3)
    nsp = torch.tensor([0, 1, 0])
    with torch.no_grad():
        loss, parts = bert_data.pretraining_loss(ours, corrupted, seg, mask, labels, nsp)
        want = ref(input_ids=corrupted, token_type_ids=seg, attention_mask=mask, labels=labels,
                   next_sentence_label=nsp).loss
    torch.testing.assert_close(loss, want, atol=1e-5, rtol=1e-5)
    assert set(parts) == {"mlm", "nsp"}


def test_key_mismatch_error_lists_the_keys(tmp_path):
    seq = _hf("BertForSequenceClassification")  # has classifier.* which the course's Bert does not map
    with pytest.raises(ValueError, match=r"classifier\.weight"):
        bert.Bert.from_hf(seq)
    ref = _hf("BertModel")
    state = ref.state_dict()
    del state["encoder.layer.1.output.dense.weight"]
    from safetensors.torch import save_file
    ref.config.save_pretrained(tmp_path)
    save_file({k: v.contiguous() for k, v in state.items()}, str(tmp_path / "model.safetensors"))
    missing = r"missing from the checkpoint: \['encoder\.layer\.1\.output\.dense\.weight'\]"
    with pytest.raises(ValueError, match=missing):
        bert.Bert.from_hf(tmp_path)


def test_config_mismatch_errors(tmp_path):
    with pytest.raises(ValueError, match="hidden_act='relu'"):
        bert.Bert.from_hf(_hf("BertModel", hidden_act="relu"))
    with pytest.raises(ValueError, match="position_embedding_type"):
        bert.BertConfig.from_hf_config(TINY | {"model_type": "bert", "hidden_act": "gelu",
                                               "position_embedding_type": "relative_key"})
    with pytest.raises(ValueError, match="no config.json"):
        bert.Bert.from_hf(tmp_path)
    with pytest.raises(TypeError, match="checkpoint directory"):
        bert.Bert.from_hf(42)
    # a state dict whose shapes do not fit its config
    ref = _hf("BertModel")
    ref.save_pretrained(tmp_path)
    import json
    cfg = json.loads((tmp_path / "config.json").read_text())
    cfg["intermediate_size"] = 48
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="intermediate.dense.weight"):
        bert.Bert.from_hf(tmp_path)


def test_model_input_errors():
    model = bert.Bert(bert.BertConfig(vocab_size=50, d_model=16, n_layers=1, n_heads=2, d_ff=32, max_len=8)).eval()
    with pytest.raises(ValueError, match="max_len=8"):
        model(torch.zeros(1, 9, dtype=torch.long))
    with pytest.raises(ValueError, match=r"ids in \[0, 50\)"):
        model(torch.full((1, 4), 50))
    with pytest.raises(ValueError, match="token_type_ids"):
        model(torch.zeros(1, 4, dtype=torch.long), torch.full((1, 4), 2))
    with pytest.raises(ValueError, match="attention_mask"):
        model(torch.zeros(1, 4, dtype=torch.long), attention_mask=torch.ones(1, 3))
    with pytest.raises(ValueError, match="divisible"):
        bert.BertConfig(d_model=10, n_heads=3)
    with pytest.raises(ValueError, match="pooler"):
        bert.Bert(bert.BertConfig(vocab_size=50, d_model=16, n_layers=1, n_heads=2, d_ff=32), pooler=False)


def test_heads_shapes_and_padding_invariance():
    cfg = bert.BertConfig(vocab_size=50, d_model=16, n_layers=4, n_heads=2, d_ff=32, max_len=16)
    torch.manual_seed(0)
    body = bert.Bert(cfg, mlm_head=False, nsp_head=False).eval()
    ids = torch.randint(5, 50, (2, 6))
    seq = bert_heads.BertForSequenceClassification(body, 3).eval()
    tok = bert_heads.BertForTokenClassification(body, 5).eval()
    assert seq(ids).shape == (2, 3) and tok(ids).shape == (2, 6, 5)
    # padding does not change the real positions' vectors
    padded = torch.cat([ids, torch.zeros(2, 3, dtype=torch.long)], 1)
    mask = torch.cat([torch.ones(2, 6, dtype=torch.bool), torch.zeros(2, 3, dtype=torch.bool)], 1)
    with torch.no_grad():
        torch.testing.assert_close(body(padded, attention_mask=mask).last_hidden_state[:, :6],
                                   body(ids).last_hidden_state, atol=1e-5, rtol=1e-5)
        hs = body(ids, output_hidden_states=True).hidden_states
    assert bert_heads.combine_layers(hs, "concat_last_four").shape == (2, 6, 64)
    torch.testing.assert_close(bert_heads.combine_layers(hs, "sum_last_four"), hs[1] + hs[2] + hs[3] + hs[4])
    assert bert_heads.combine_layers(hs, "second_to_last") is hs[-2]
    with pytest.raises(ValueError, match="how must be one of"):
        bert_heads.combine_layers(hs, "first")


def test_freeze_bottom_stops_gradients_below_the_cut():
    cfg = bert.BertConfig(vocab_size=50, d_model=16, n_layers=4, n_heads=2, d_ff=32, max_len=16)
    torch.manual_seed(0)
    body = bert.Bert(cfg, mlm_head=False, nsp_head=False)
    clf = bert_heads.BertForSequenceClassification(body, 2, pooling="mean")
    n_frozen = bert_heads.freeze_bottom(body, 2)
    want = sum(p.numel() for m in (body.embeddings, body.layers[0], body.layers[1]) for p in m.parameters())
    assert n_frozen == want
    clf(torch.randint(5, 50, (3, 7))).sum().backward()
    assert all(p.grad is None for p in body.embeddings.parameters())
    assert all(p.grad is None for p in body.layers[1].parameters())
    assert all(p.grad is not None for p in body.layers[2].parameters())
    assert clf.classifier.weight.grad is not None
    assert bert_heads.freeze_bottom(bert.Bert(cfg), 0) == sum(p.numel() for p in body.embeddings.parameters())
    for bad in (-1, 5, 1.0, True):
        with pytest.raises(ValueError, match=r"n_layers must be an int in \[0, 4\]"):
            bert_heads.freeze_bottom(body, bad)
    with pytest.raises(TypeError, match="must be a coursekit.bert.model.Bert"):
        bert_heads.freeze_bottom(clf, 1)


def test_fine_tune_learns_a_separable_task_and_respects_freezing():
    cfg = bert.BertConfig(vocab_size=30, d_model=16, n_layers=2, n_heads=2, d_ff=32, max_len=16)
    torch.manual_seed(0)
    labels = torch.arange(64) % 2
    ids = torch.randint(5, 17, (64, 6)) + 12 * labels[:, None]   # class 0: ids 5-16, class 1: ids 17-28
    batches = [(ids[i:i + 16], torch.zeros_like(ids[i:i + 16]), torch.ones_like(ids[i:i + 16]), labels[i:i + 16])
               for i in range(0, 64, 16)] * 15
    body = bert.Bert(cfg, mlm_head=False, nsp_head=False)
    frozen_before = body.layers[0].ff.linear1.weight.detach().clone()
    clf, history = bert_heads.fine_tune(body, batches, lr=3e-3, frozen_layers=1)
    assert len(history.train_loss) == len(batches)
    assert torch.equal(body.layers[0].ff.linear1.weight, frozen_before)            # frozen layer unchanged
    assert bert_heads.classifier_accuracy(clf, batches[:4]) > 0.9
    with pytest.raises(ValueError, match="at least one batch"):
        bert_heads.fine_tune(body, [], lr=1e-3)
    with pytest.raises(ValueError, match="labelled batches"):
        bert_heads.classifier_accuracy(clf, [(ids, None, None, None)])


# ------------------------------------------------------------------ the real checkpoint: all-MiniLM-L6-v2

def test_minilm_sha256_and_parity_with_transformers(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    try:
        folder = bert_checkpoint.minilm_path()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    ours, tok = bert_checkpoint.load_minilm()
    assert (ours.config.n_layers, ours.config.d_model, ours.config.n_heads) == (6, 384, 12)
    assert tok.encode("embeddings").tokens == ["[CLS]", "em", "##bed", "##ding", "##s", "[SEP]"]
    ref = transformers.BertModel.from_pretrained(str(folder)).eval()
    ids, seg, mask = bert_heads.encode_batch(tok, ["The bank of the river.", "She deposited money at the bank."],
                                       ["It was green.", "Short."], max_len=32)
    with torch.no_grad():
        got = ours(ids, seg, mask, output_hidden_states=True)
        want = ref(input_ids=ids, token_type_ids=seg, attention_mask=mask, output_hidden_states=True)
    for a, b in zip(got.hidden_states, want.hidden_states, strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(got.pooler_output, want.pooler_output, atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="sha256"):
        bert_checkpoint.minilm_path(expected_sha256="0" * 64)


def test_sentence_batches_and_features():
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    vocab = {w: i for i, w in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "c", "d"])}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                                       special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    sents = ["a b c d a b", "a", "b c", "d d d", "c"]
    batches = bert_heads.sentence_batches(tok, sents, [0, 1, 0, 1, 1], batch_size=2)
    assert [len(y) for *_, y in batches] == [2, 2, 1]
    assert sorted(int(k.sum()) - 2 for _, _, keep, _ in batches for k in keep) == sorted(len(s.split()) for s in sents)
    ids, seg, keep = bert_heads.encode_batch(tok, ["a b"], ["c"])
    assert ids.tolist() == [[2, 5, 6, 3, 7, 3]] and seg.tolist() == [[0, 0, 0, 0, 1, 1]]
    cfg = bert.BertConfig(vocab_size=9, d_model=8, n_layers=4, n_heads=2, d_ff=16, max_len=16)
    torch.manual_seed(0)
    model = bert.Bert(cfg).eval()
    feats = bert_heads.sentence_features(model, batches)
    assert feats["concat_last_four"].shape == (5, 32) and feats["last"].shape == (5, 8)
    assert sorted(feats["labels"].tolist()) == [0, 0, 1, 1, 1]
    # mean pooling ignores padding: the features of a sentence do not depend on its batch-mates
    alone = bert_heads.sentence_features(model, bert_heads.sentence_batches(tok, ["b c"], [0]))
    assert any(torch.allclose(alone["last"][0], row, atol=1e-5) for row in feats["last"])
    clf = bert_heads.BertForSequenceClassification(model, 2, pooling="mean").eval()
    assert clf(*batches[0][:3]).shape == (2, 2)
    with pytest.raises(ValueError, match="pooling"):
        bert_heads.BertForSequenceClassification(model, 2, pooling="max")
    with pytest.raises(ValueError, match="labels must have one entry"):
        bert_heads.sentence_batches(tok, sents, [0])

"""ELECTRA's replaced-token detection (coursekit.bert.electra) and its place in the pre-training recipe
(PretrainConfig(objective="electra"), coursekit.bert.pretraining)."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch
import torch.nn.functional as F
from helpers.bert import TINY, tiny_text
from safetensors.torch import load_file

from coursekit.bert import checkpoint as bc
from coursekit.bert import corpus as bcorp
from coursekit.bert import finetuning as bf
from coursekit.bert import pretraining as bp
from coursekit.bert.electra import Electra, ReplacedTokenDetectionHead, corrupt, electra_loss
from coursekit.bert.model import Bert, BertConfig
from coursekit.bert.objectives import IGNORE_INDEX, mask_tokens
from coursekit.bert.sst2 import sst2_splits
from coursekit.training.compact import expand_state
from coursekit.training.loop import load_checkpoint

PAD, CLS, SEP, MASK = 0, 1, 2, 3
V = 40
CONFIG = BertConfig(vocab_size=V, d_model=16, n_layers=2, n_heads=2, d_ff=32, max_len=32)


def tiny_electra(seed=0, **kw) -> Electra:
    torch.manual_seed(seed)
    return Electra(CONFIG, **kw)


def masked_batch(seed=0, B=4, T=12, p=0.3):
    """``(x^masked, segments, keep, labels, x)``: [CLS] w … [SEP] rows, the last row padded, masked with ``p``."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(4, V, (B, T), generator=g)
    ids[:, 0], ids[:, -1] = CLS, SEP
    ids[-1, T - 4:] = PAD
    ids[-1, T - 5] = SEP
    keep = (ids != PAD).long()
    segments = torch.zeros_like(ids)
    segments[:, T // 2:] = 1
    masked, labels = mask_tokens(ids, vocab_size=V, mask_id=MASK, special_ids=(CLS, SEP), pad_id=PAD, generator=g,
                                 mlm_probability=p)
    return masked, segments, keep, labels, ids


def binary_entropy(p: float) -> float:
    """The binary cross-entropy of always predicting the share ``p``: what a discriminator must beat."""
    return 0.0 if p in (0.0, 1.0) else -(p * math.log(p) + (1 - p) * math.log(1 - p))


# ------------------------------------------------------------------ the head: parity with Hugging Face

def test_rtd_head_equals_hugging_face_discriminator_predictions():
    transformers = pytest.importorskip("transformers")
    from transformers.models.electra.modeling_electra import ElectraDiscriminatorPredictions

    hf_config = transformers.ElectraConfig(vocab_size=V, embedding_size=16, hidden_size=16, num_hidden_layers=2,
                                           num_attention_heads=2, intermediate_size=32, hidden_act="gelu")
    torch.manual_seed(0)
    ref = ElectraDiscriminatorPredictions(hf_config).eval()
    ours = ReplacedTokenDetectionHead(16)
    with torch.no_grad():
        for p in ref.parameters():                          # values far from both initialisations
            p.normal_(0, 0.5)
    ours.load_state_dict(ref.state_dict())                  # the same names: dense, dense_prediction
    h = torch.randn(3, 7, 16, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        torch.testing.assert_close(ours(h), ref(h), atol=1e-5, rtol=1e-5)
    assert ours(h).shape == (3, 7)


# ------------------------------------------------------------------ corruption

def test_corrupt_replaces_only_masked_positions_and_is_reproducible():
    masked, _, _, labels, ids = masked_batch(p=0.5)
    selected = labels != IGNORE_INDEX
    logits = torch.randn(int(selected.sum()), V, generator=torch.Generator().manual_seed(2))
    corrupted, replaced = corrupt(masked, labels, logits, generator=torch.Generator().manual_seed(3))
    assert torch.equal(corrupted[~selected], ids[~selected])          # every other position is the original text
    assert not (corrupted == MASK)[~selected].any() and not replaced[~selected].any()
    assert torch.equal(replaced, corrupted != ids)                    # replaced = differs from the original
    assert replaced.any()
    again = corrupt(masked, labels, logits, generator=torch.Generator().manual_seed(3))
    assert torch.equal(again[0], corrupted) and torch.equal(again[1], replaced)
    other = corrupt(masked, labels, logits, generator=torch.Generator().manual_seed(4))[0]
    assert not torch.equal(other, corrupted)                          # a fresh draw per seed
    before = masked.clone(), labels.clone()
    corrupt(masked, labels, logits)
    assert torch.equal(masked, before[0]) and torch.equal(labels, before[1])    # the inputs are not modified


def test_a_sample_equal_to_the_original_counts_as_original():
    masked, _, _, labels, ids = masked_batch(p=0.5)
    selected = labels != IGNORE_INDEX
    targets = labels[selected]
    logits = torch.full((len(targets), V), -30.0)
    logits[torch.arange(len(targets)), targets] = 30.0                # the generator is sure of the right token
    logits[::2] = 0.0                                                 # … except at every other position: uniform
    logits[::2, targets[::2]] = -30.0                                 # (and never the right token there)
    corrupted, replaced = corrupt(masked, labels, logits, generator=torch.Generator().manual_seed(0))
    positions = selected.nonzero()
    sure = positions[1::2]
    assert torch.equal(corrupted[sure[:, 0], sure[:, 1]], ids[sure[:, 0], sure[:, 1]])
    assert not replaced[sure[:, 0], sure[:, 1]].any()                 # sampled = original → label "original"
    unsure = positions[::2]
    assert replaced[unsure[:, 0], unsure[:, 1]].all()


def test_corrupt_samples_from_the_softmax_not_the_argmax():
    n = 20_000
    input_ids = torch.full((1, n), MASK)
    labels = torch.full((1, n), 5)
    p = torch.tensor([0.5, 0.3, 0.2])
    logits = torch.full((n, V), -50.0)
    logits[:, 5:8] = p.log()
    corrupted, replaced = corrupt(input_ids, labels, logits, generator=torch.Generator().manual_seed(0))
    freq = torch.bincount(corrupted[0], minlength=V)[5:8].float() / n
    torch.testing.assert_close(freq, p, atol=0.015, rtol=0)          # 3 sd of a 20,000-draw frequency ≈ 0.011
    assert freq[1:].sum() > 0.4                                       # not the argmax (which would give 0)
    assert replaced.float().mean().item() == pytest.approx(1 - freq[0].item(), abs=1e-6)


def test_a_temperature_flattens_the_samples():
    """softmax(logits / T): T = 1 is the default draw; a large T draws nearly uniformly; T ≤ 0 is refused."""
    n = 20_000
    input_ids = torch.full((1, n), MASK)
    labels = torch.full((1, n), 5)
    logits = torch.full((n, V), -4.0)
    logits[:, 5] = 4.0                                                # the generator is fairly sure of token 5
    draw = {t: corrupt(input_ids, labels, logits, generator=torch.Generator().manual_seed(0), temperature=t)[0]
            for t in (1.0, 2.0, 1e6)}
    assert torch.equal(draw[1.0], corrupt(input_ids, labels, logits, generator=torch.Generator().manual_seed(0))[0])
    kept = {t: (d == 5).float().mean().item() for t, d in draw.items()}
    p5 = {t: F.softmax(logits[0] / t, -1)[5].item() for t in draw}
    for t in draw:                                                    # 3 sd of a 20,000-draw share ≤ 0.011
        assert kept[t] == pytest.approx(p5[t], abs=0.015), (t, kept[t], p5[t])
    assert kept[1.0] > kept[2.0] > kept[1e6] and abs(kept[1e6] - 1 / V) < 0.01
    with pytest.raises(ValueError, match="temperature must be positive"):
        corrupt(input_ids, labels, logits, temperature=0.0)
    with pytest.raises(ValueError, match="sample_temperature must be positive"):
        dataclasses.replace(ELECTRA_TINY, sample_temperature=-1.0)
    model = tiny_electra().eval()                                     # no dropout: one generator output
    batch = masked_batch(p=0.5)[:4]
    _, parts = electra_loss(model, *batch, generator=torch.Generator().manual_seed(1), temperature=3.0)
    logits_g = model.generator(batch[0], batch[1], batch[2], mlm_positions=batch[3] != IGNORE_INDEX).mlm_logits
    _, replaced = corrupt(batch[0], batch[3], logits_g, generator=torch.Generator().manual_seed(1), temperature=3.0)
    assert parts["replaced"] == pytest.approx(replaced[batch[2].bool()].float().mean().item(), abs=1e-7)
    at_t1 = corrupt(batch[0], batch[3], logits_g, generator=torch.Generator().manual_seed(1))[0]
    at_t3 = corrupt(batch[0], batch[3], logits_g, generator=torch.Generator().manual_seed(1), temperature=3.0)[0]
    assert not torch.equal(at_t1, at_t3)                              # the same uniforms, another distribution


def test_no_gradient_flows_through_the_sample():
    masked, _, _, labels, _ = masked_batch()
    logits = torch.randn(int((labels != IGNORE_INDEX).sum()), V, requires_grad=True)
    corrupted, replaced = corrupt(masked, labels, logits)
    assert not corrupted.requires_grad and not replaced.requires_grad and corrupted.dtype == masked.dtype


# ------------------------------------------------------------------ the model and the loss

def test_generator_and_discriminator_share_the_embedding_tensors():
    model = tiny_electra()
    G, D = model.generator, model.discriminator
    assert G.embeddings is D.embeddings
    for table in ("token", "position", "segment"):
        assert getattr(G.embeddings, table).weight is getattr(D.embeddings, table).weight
    assert G.mlm.embedding.weight is D.embeddings.token.weight        # G's output layer: the same token table
    assert len(G.layers) == 1 and len(D.layers) == CONFIG.n_layers   # smaller by depth, same width
    assert model.generator_config == dataclasses.replace(CONFIG, n_layers=1)
    assert G.pooler is None and G.nsp is None and G.mlm is not None
    assert D.pooler is not None and D.mlm is not None and D.nsp is not None   # a complete BERT, saved as one
    unique = {id(p) for p in model.parameters()}
    assert len(unique) == len(list(model.parameters()))               # each shared tensor counted (and trained) once
    with torch.no_grad():
        D.embeddings.position.weight[3] += 1.0
    assert torch.equal(G.embeddings.position.weight[3], D.embeddings.position.weight[3])
    assert tiny_electra(generator_layers=1).generator_config.n_layers == 1


def test_electra_loss_equals_a_hand_computation():
    model = tiny_electra().eval()                                     # no dropout: the two paths see the same numbers
    masked, segments, keep, labels, ids = masked_batch(seed=5, p=0.4)
    with torch.no_grad():
        loss, parts = electra_loss(model, masked, segments, keep, labels, rtd_weight=50.0,
                                   generator=torch.Generator().manual_seed(7))
        selected = labels != IGNORE_INDEX
        g_logits = model.generator(masked, segments, keep).mlm_logits[selected]              # (N, V)
        log_p = g_logits.log_softmax(-1)
        mlm = -log_p[torch.arange(len(g_logits)), labels[selected]].mean()
        corrupted, replaced = corrupt(masked, labels, g_logits, generator=torch.Generator().manual_seed(7))
        h = model.discriminator(corrupted, segments, keep).last_hidden_state
        z = model.rtd_head.dense_prediction(F.gelu(model.rtd_head.dense(h))).squeeze(-1)     # (B, T)
        d_real = torch.sigmoid(-z)                                    # the paper's D(x, t): P(original)
        y = replaced.float()
        per_token = -(1 - y) * d_real.log() - y * (1 - d_real).log()
        real = keep.bool()
        rtd = per_token[real].mean()                                  # padding is not a token
    assert (~real).any() and replaced[real].any()
    torch.testing.assert_close(loss, mlm + 50.0 * rtd, atol=1e-5, rtol=1e-5)
    assert parts["mlm"] == pytest.approx(mlm.item(), abs=1e-5)
    assert parts["rtd"] == pytest.approx(rtd.item(), abs=1e-5)
    assert parts["replaced"] == pytest.approx(y[real].mean().item(), abs=1e-6)
    assert parts["rtd_acc"] == pytest.approx(((z > 0) == replaced)[real].float().mean().item(), abs=1e-6)
    # λ weighs the discriminator's term only
    with torch.no_grad():
        loss_0, _ = electra_loss(model, masked, segments, keep, labels, rtd_weight=0.0,
                                 generator=torch.Generator().manual_seed(7))
    torch.testing.assert_close(loss_0, mlm, atol=1e-5, rtol=1e-5)


def test_gradient_reaches_both_models_but_not_through_the_samples():
    masked, segments, keep, labels, _ = masked_batch(seed=1, p=0.4)

    def grads(rtd_weight):
        model = tiny_electra().eval()
        loss, _ = electra_loss(model, masked, segments, keep, labels, rtd_weight=rtd_weight,
                               generator=torch.Generator().manual_seed(0))
        loss.backward()
        return {name: (p.grad.clone() if p.grad is not None else None) for name, p in model.named_parameters()}

    full, mlm_only = grads(50.0), grads(0.0)
    generator_own = [n for n in full if n.startswith("generator.") and not n.startswith("generator.embeddings.")]
    disc_layers = [n for n in full if n.startswith("discriminator.layers.")]
    assert generator_own and disc_layers
    for name in generator_own + disc_layers + ["rtd_head.dense.weight", "discriminator.embeddings.token.weight"]:
        assert full[name] is not None and full[name].abs().sum() > 0, name
    # The discriminator's loss reaches the generator only through the shared embeddings: its own weights get
    # exactly the gradient of L_MLM, with or without λ·L_Disc (nothing flows back through the sampled ids).
    for name in generator_own:
        torch.testing.assert_close(full[name], mlm_only[name], atol=0, rtol=0)
    for name in disc_layers:                                           # and L_MLM does not reach D's layers
        assert mlm_only[name] is None or not mlm_only[name].any(), name
    assert not torch.equal(full["discriminator.embeddings.token.weight"],
                           mlm_only["discriminator.embeddings.token.weight"])   # the tables learn from both
    for head in ("discriminator.nsp.weight", "discriminator.pooler.weight", "discriminator.mlm.dense.weight"):
        assert full[head] is None                                     # ELECTRA trains neither BERT head


# ------------------------------------------------------------------ the recipe

def short_text():
    """A tiny corpus (the words of helpers.bert) of one- and two-word sentences."""
    return tiny_text(sentence_words=(1, 2), in_domain_words=(1, 2))


# 100 steps: in 30 the discriminator only reaches the base rate (it sits at the constant predictor's loss)
ELECTRA_TINY = dataclasses.replace(TINY, objective="electra", batch_size=16, steps=100, learning_rate=1e-2,
                                   warmup_steps=2, eval_every=50, held_out_pairs=64)


@pytest.fixture(scope="module")
def short_corpus():
    return bcorp.build_corpus(ELECTRA_TINY, *short_text())


@pytest.fixture(scope="module")
def electra_run(short_corpus, tmp_path_factory):
    snaps = tmp_path_factory.mktemp("electra_snaps")
    model, report = bp.pretrain(ELECTRA_TINY, short_corpus, progress=False, snapshot_dir=snaps)
    return model, report, snaps


def test_electra_pretraining_learns_to_detect_replaced_tokens(electra_run, short_corpus):
    model, report, _ = electra_run
    vocab_size = short_corpus.tokenizer.get_vocab_size()
    assert isinstance(model, Bert) and model.config == ELECTRA_TINY.model_config(vocab_size)   # the discriminator
    assert report["objective"] == "electra" and report["config"]["objective"] == "electra"
    assert report["generator"]["model_config"]["n_layers"] == ELECTRA_TINY.generator_layers == 1
    assert report["generator"]["model_config"]["d_model"] == ELECTRA_TINY.d_model
    assert 0 < report["generator"]["n_params_own"] < report["generator"]["n_params"] < report["n_params"]
    hist = report["history"]
    assert all(len(hist[k]) == ELECTRA_TINY.steps for k in ("mlm", "nsp", "rtd", "rtd_acc", "replaced"))
    assert all(math.isnan(v) for v in hist["nsp"])                    # no NSP in ELECTRA
    assert [s for s, _ in hist["evals"]] == [0, 50, 100]
    before, final = report["before"], report["final"]
    assert set(final) == {"mlm", "rtd", "rtd_acc", "replaced", "rtd_prior"}
    assert before["rtd"] == pytest.approx(math.log(2), abs=0.01)      # a fresh head says 50/50
    assert final["rtd_prior"] == pytest.approx(binary_entropy(final["replaced"]), abs=1e-9)
    assert 0.02 < final["replaced"] < 0.2
    # the discriminator learned more than the share of replaced tokens
    assert final["rtd"] < binary_entropy(final["replaced"]) - 0.01, final
    assert final["mlm"] < before["mlm"]                               # and the generator learned too
    assert bc.combined_history(report)["mlm"] == hist["mlm"]          # the report reads like an MLM run's


def test_electra_discriminator_reloads_and_fine_tunes_like_an_mlm_model(electra_run, short_corpus, tmp_path):
    model, report, snaps = electra_run
    bc.save_pretrained(tmp_path / "electra", model, short_corpus.tokenizer, report)
    loaded, tokenizer, loaded_report = bc.load_small_bert(tmp_path / "electra")
    assert loaded_report["objective"] == "electra" and loaded_report["generator"] == report["generator"]
    stored = expand_state(load_file(str(tmp_path / "electra" / "model.safetensors")))   # int8 matrices, dequantised
    own = loaded.state_dict()
    assert all(torch.equal(own[k], v) for k, v in stored.items())
    assert all(torch.allclose(a, b, atol=0.01) for a, b in zip(model.state_dict().values(), own.values(), strict=True))
    snapshot = Bert(model.config)                                     # the snapshots are the discriminator too
    load_checkpoint(snaps / "step_100.safetensors", snapshot, expected_config=model.config)
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), snapshot.state_dict().values(),
                                                 strict=True))
    body = bf.starting_body("pretrained", 0, loaded)                  # what compare() and sst2_gain() do
    result = bf.finetune_once(body, tokenizer, sst2_splits(32, 16), lr=1e-3, seed=0, epochs=1, batch_size=16)
    assert 0.0 <= result["test"] <= 1.0 and 0.0 <= result["select"] <= 1.0
    # pretrain --out: an ELECTRA run's final figures need the generator and the RTD head, which are not stored
    written = bp.export(tmp_path / "export", model, short_corpus.tokenizer, report,
                        bcorp.held_out_batch(short_corpus, ELECTRA_TINY))
    assert written["final"] == report["final"] and written["storage"] == "int8-rowwise"
    assert written["final_measured_on"].startswith("the weights in training")


def test_an_electra_run_is_stored_whole_and_measured_as_loaded_back(short_corpus, tmp_path):
    """pretrain --out of an ELECTRA run: the discriminator in model.safetensors, the generator and the detection
    head in electra.safetensors (without a second copy of the shared embeddings), the final figures measured on
    both as loaded back; load_electra gives the whole model, sharing as in training."""
    cfg = dataclasses.replace(ELECTRA_TINY, steps=20, eval_every=20)
    whole, report = bp.pretrain(cfg, short_corpus, progress=False, whole_electra=True)
    assert isinstance(whole, Electra)
    held = bcorp.held_out_batch(short_corpus, cfg)
    written = bp.export(tmp_path / "out", whole, short_corpus.tokenizer, report, held)
    loaded, tokenizer, _ = bc.load_electra(tmp_path / "out")
    assert loaded.generator.embeddings is loaded.discriminator.embeddings          # shared, as in training
    assert loaded.generator.mlm.embedding is loaded.discriminator.embeddings.token
    stored = load_file(str(tmp_path / "out" / bc.ELECTRA_FILE))
    assert not any("embeddings" in k for k in stored) and any(k.startswith("rtd_head.") for k in stored)
    for (name, a), b in zip(whole.state_dict().items(), loaded.state_dict().values(), strict=True):
        assert torch.allclose(a, b, atol=0.01), name                               # int8 rows: close, not equal
    again = bp.held_out_electra_losses(loaded, held, seed=cfg.seed + 2, temperature=cfg.sample_temperature)
    assert written["final"] == again and written["final_measured_on"].startswith("model.safetensors + electra")
    assert written["final"]["rtd"] == pytest.approx(report["final"]["rtd"], abs=0.02)  # what training measured
    assert written["electra_size_bytes"] < written["size_bytes"] / 2
    discriminator, _, _ = bc.load_small_bert(tmp_path / "out")                       # the file fine-tuning reads
    assert all(torch.equal(a, b) for a, b in zip(discriminator.state_dict().values(),
                                                 loaded.discriminator.state_dict().values(), strict=True))
    assert tokenizer.get_vocab() == short_corpus.tokenizer.get_vocab()


def test_electra_run_resumes_exactly(short_corpus, tmp_path):
    cfg = dataclasses.replace(ELECTRA_TINY, steps=6, eval_every=3)
    full, full_report = bp.pretrain(cfg, short_corpus, progress=False, work=tmp_path / "full")
    bp.pretrain(cfg, short_corpus, progress=False, work=tmp_path / "split", stop_at=4)
    resumed, resumed_report = bp.pretrain(cfg, short_corpus, progress=False, work=tmp_path / "split", resume=True)
    assert resumed_report["history"]["rtd"] == full_report["history"]["rtd"]
    assert all(torch.equal(a, b) for a, b in zip(full.state_dict().values(), resumed.state_dict().values(),
                                                 strict=True))
    with pytest.raises(ValueError, match="another recipe"):       # λ is part of an ELECTRA run's recipe
        bp.pretrain(dataclasses.replace(cfg, rtd_weight=10.0), short_corpus, progress=False,
                    work=tmp_path / "full", resume=True)


def test_mlm_nsp_recipe_is_unchanged_by_the_electra_fields(short_corpus):
    """An MLM + NSP run ignores generator_layers and rtd_weight: same weights, same losses."""
    cfg = dataclasses.replace(TINY, steps=3, eval_every=3)
    a, report_a = bp.pretrain(cfg, short_corpus, progress=False)
    b, report_b = bp.pretrain(dataclasses.replace(cfg, generator_layers=5, rtd_weight=1.0, sample_temperature=2.0),
                              short_corpus, progress=False)
    assert report_a["objective"] == "mlm_nsp" and report_a["history"]["mlm"] == report_b["history"]["mlm"]
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True))


# ------------------------------------------------------------------ bad inputs

def test_bad_recipes_and_models_give_clear_errors():
    with pytest.raises(ValueError, match=r"objective must be one of \('mlm_nsp', 'electra'\), got 'gan'"):
        dataclasses.replace(ELECTRA_TINY, objective="gan")
    with pytest.raises(ValueError, match="generator_layers must be positive, got 0"):
        dataclasses.replace(ELECTRA_TINY, generator_layers=0)
    with pytest.raises(ValueError, match="generator_layers must be below n_layers=2"):
        dataclasses.replace(ELECTRA_TINY, generator_layers=2)
    with pytest.raises(ValueError, match="rtd_weight must be ≥ 0 and finite, got -1"):
        dataclasses.replace(ELECTRA_TINY, rtd_weight=-1.0)
    with pytest.raises(TypeError, match="generator_layers must be an int, got float"):
        dataclasses.replace(ELECTRA_TINY, generator_layers=1.0)
    with pytest.raises(ValueError, match="objective='electra' starts from random init"):
        dataclasses.replace(ELECTRA_TINY, init_from="data/bert")
    assert dataclasses.replace(TINY, n_layers=1).generator_layers == 1        # only an ELECTRA run needs G < D
    with pytest.raises(ValueError, match="generator_layers must be below the discriminator's n_layers=2"):
        Electra(CONFIG, generator_layers=2)
    with pytest.raises(TypeError, match="config must be a BertConfig"):
        Electra({"d_model": 16})
    with pytest.raises(TypeError, match="model must be a coursekit.bert.electra.Electra, got Bert"):
        electra_loss(Bert(CONFIG), *masked_batch()[:4])
    masked, _, _, labels, _ = masked_batch()
    with pytest.raises(ValueError, match="one row per masked position"):
        corrupt(masked, labels, torch.zeros(1, V))

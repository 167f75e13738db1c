"""The small-BERT pre-training recipe (coursekit.bert.corpus, coursekit.bert.pretraining) and the committed
checkpoint (coursekit.bert.checkpoint)."""

from __future__ import annotations

import codecs
import dataclasses
import json
import math
import random
import shutil

import pytest
import torch
from helpers.bert import TINY, tiny_text
from safetensors.torch import load_file
from tokenizers import Tokenizer

from coursekit.bert import checkpoint as bc
from coursekit.bert import corpus as bcorp
from coursekit.bert import finetuning as bert_finetuning
from coursekit.bert import pretraining as bp
from coursekit.bert.objectives import IGNORE_INDEX
from coursekit.data import sha256_file
from coursekit.training.compact import STORAGE, expand_state
from coursekit.training.loop import checkpoint_content, save_checkpoint, verify_checkpoint


@pytest.fixture(scope="module")
def corpus():
    lines, in_domain = tiny_text()
    return bcorp.build_corpus(TINY, lines, in_domain)


def test_config_checks():
    assert TINY.n_in_domain == 4
    with pytest.raises(ValueError, match="leaves no NSP pair"):
        bcorp.PretrainConfig(batch_size=4, in_domain_fraction=0.9)
    with pytest.raises(ValueError, match="steps must be positive"):
        bcorp.PretrainConfig(steps=0)
    with pytest.raises(ValueError, match="in_domain_fraction"):
        bcorp.PretrainConfig(in_domain_fraction=1.5)
    assert bcorp.PretrainConfig().model_config(8000).vocab_size == 8000


def test_build_corpus_holds_out_the_last_articles(corpus):
    assert len(corpus.train_docs) == 13 and len(corpus.held_docs) == 3
    assert len(corpus.in_domain) == 50
    assert all(isinstance(i, int) for doc in corpus.held_docs for s in doc for i in s)
    assert corpus.special_id("[MASK]") is not None
    lines, in_domain = tiny_text(n_articles=3)
    with pytest.raises(ValueError, match="need more than 4 articles"):
        bcorp.build_corpus(TINY, lines, in_domain)


def test_make_batch_layout_and_masking(corpus):
    docs = corpus.train_docs
    pairs = [(docs[0][0], docs[0][1], 0), (docs[1][0], docs[2][0], 1)]
    singles = corpus.in_domain[:3]
    ids, seg, keep, mlm, nsp = bcorp.make_batch(corpus, pairs, singles, max_len=TINY.max_len,
                                                generator=torch.Generator().manual_seed(0))
    B, T = ids.shape
    assert B == 5 and seg.shape == keep.shape == mlm.shape == (B, T) and T <= TINY.max_len
    assert nsp.tolist() == [0, 1, IGNORE_INDEX, IGNORE_INDEX, IGNORE_INDEX]
    cls_id, sep_id, pad_id = (corpus.special_id(t) for t in ("[CLS]", "[SEP]", "[PAD]"))
    assert (ids[:, 0] == cls_id).all()
    assert (seg[2:] == 0).all() and (seg[:2] == 1).any(dim=1).all()   # singles have one segment, pairs two
    selected = mlm != IGNORE_INDEX
    assert selected.any()
    assert not (selected & (keep == 0)).any()                            # padding is never a target
    original = torch.where(selected, mlm, ids)
    assert not (selected & ((original == cls_id) | (original == sep_id))).any()
    with pytest.raises(ValueError, match="at least one pair or sentence"):
        bcorp.make_batch(corpus, [], [], max_len=TINY.max_len)


def test_sample_batch_mixes_pairs_and_in_domain_sentences(corpus):
    batch = bcorp.sample_batch(corpus, TINY, random.Random(0), torch.Generator().manual_seed(0))
    nsp = batch[4]
    assert len(nsp) == TINY.batch_size
    assert int((nsp == IGNORE_INDEX).sum()) == TINY.n_in_domain
    assert set(nsp[nsp != IGNORE_INDEX].tolist()) <= {0, 1}


def test_pretrain_report_snapshots_and_round_trip(corpus, tmp_path):
    model, report = bp.pretrain(TINY, corpus, progress=False, snapshot_dir=tmp_path / "snaps")
    assert len(report["history"]["mlm"]) == TINY.steps
    assert [s for s, _ in report["history"]["evals"]] == [0, 3, 6]
    assert all(math.isfinite(v) for v in report["final"].values())
    assert 0 < report["unigram_mlm"] < report["uniform_mlm"] == pytest.approx(math.log(120), abs=1e-6)
    assert sorted(p.name for p in (tmp_path / "snaps").iterdir()) == ["step_3.safetensors", "step_6.safetensors"]

    bc.save_pretrained(tmp_path / "out", model, corpus.tokenizer, report)
    loaded, tokenizer, loaded_report = bc.load_small_bert(tmp_path / "out")
    assert tokenizer.get_vocab() == corpus.tokenizer.get_vocab()
    assert loaded_report["final"] == report["final"]
    assert_stored_compactly(tmp_path / "out", loaded)
    batch = bcorp.held_out_batch(corpus, TINY)                  # int8 weights: close to the fp32 ones, not equal
    assert bp.held_out_losses(loaded, batch) == pytest.approx(bp.held_out_losses(model, batch), abs=0.02)


def assert_stored_compactly(folder, loaded):
    """``folder/model.safetensors`` holds int8 matrices with their scales, and ``loaded`` (fp32) is exactly
    the dequantised file."""
    path = folder / "model.safetensors"
    assert verify_checkpoint(path)["storage"] == STORAGE == "int8-rowwise"
    raw = load_file(str(path))
    matrices = [k for k, v in raw.items() if v.dim() >= 2]
    assert matrices and all(raw[k].dtype == torch.int8 and k + ":scale" in raw for k in matrices)
    own = loaded.state_dict()
    assert all(v.dtype == torch.float32 for v in own.values() if v.is_floating_point())
    stored = expand_state(raw)
    assert all(torch.equal(own[k], v) for k, v in stored.items())


def full_precision_dir(folder, model, tokenizer, report):
    """A model directory as save_pretrained wrote it before issue 34: fp32 weights."""
    folder.mkdir(parents=True)
    save_checkpoint(folder / "model.safetensors", model, model.config)
    tokenizer.save(str(folder / "tokenizer.json"))
    (folder / "report.json").write_text(json.dumps(report, indent=1))
    return folder


def test_export_measures_the_final_figures_on_the_stored_weights(corpus, tmp_path):
    """pretrain --out: int8 on disk, and report["final"] is what the weights as loaded back give on the
    held-out batch; the curve keeps the fp32 figures."""
    model, report = bp.pretrain(TINY, corpus, progress=False)
    held = bcorp.held_out_batch(corpus, TINY)
    written = bp.export(tmp_path / "out", model, corpus.tokenizer, report, held)
    loaded, _, loaded_report = bc.load_small_bert(tmp_path / "out")
    assert loaded_report == json.loads(json.dumps(written))
    assert_stored_compactly(tmp_path / "out", loaded)
    assert written["final"] == bp.held_out_losses(loaded, held)
    assert written["history"]["evals"][-1][1] == report["final"] == bp.held_out_losses(model, held)
    assert written["final"] == pytest.approx(report["final"], abs=0.02)
    assert written["storage"] == "int8-rowwise" and written["final_measured_on"] == "model.safetensors as loaded back"
    path = tmp_path / "out" / "model.safetensors"
    assert written["model_sha256"] == sha256_file(path) and written["size_bytes"] == path.stat().st_size
    added = ("storage", "final_measured_on", "model_sha256", "size_bytes")
    assert {k: v for k, v in written.items() if k not in added} == {**report, "final": written["final"]}


def test_recompact_stores_a_full_precision_directory_as_int8(corpus, tmp_path):
    model, report = bp.pretrain(TINY, corpus, progress=False)
    old = full_precision_dir(tmp_path / "old", model, corpus.tokenizer, report)
    old_sha, old_size = sha256_file(old / "model.safetensors"), (old / "model.safetensors").stat().st_size
    new = bp.recompact(old, tmp_path / "new", corpus=corpus)
    assert sha256_file(old / "model.safetensors") == old_sha                  # --out leaves the original alone
    loaded, tokenizer, loaded_report = bc.load_small_bert(tmp_path / "new")
    assert loaded_report == json.loads(json.dumps(new))
    assert_stored_compactly(tmp_path / "new", loaded)
    assert (tmp_path / "new" / "tokenizer.json").read_bytes() == (old / "tokenizer.json").read_bytes()
    assert new["recompacted_from"] == {"model_sha256": old_sha, "size_bytes": old_size, "storage": "fp32",
                                       "final": report["final"]}
    assert new["final"] == bp.held_out_losses(loaded, bcorp.held_out_batch(corpus, TINY))
    assert new["storage"] == "int8-rowwise" and new["size_bytes"] < old_size
    for key in ("config", "model_config", "history", "before", "unigram_mlm", "wall_seconds", "objective"):
        assert new[key] == json.loads(json.dumps(report[key]))                 # the rest of the report is kept
    # in place (out=None): the same tensors, tokenizer and report as into another folder (the safetensors
    # header's metadata order, hence the file's sha256, may differ between two writes)
    shutil.copytree(old, tmp_path / "in_place")
    in_place = bp.recompact(tmp_path / "in_place", corpus=corpus)
    assert checkpoint_content(tmp_path / "in_place" / "model.safetensors") == checkpoint_content(
        tmp_path / "new" / "model.safetensors")
    assert (tmp_path / "in_place" / "tokenizer.json").read_bytes() == (old / "tokenizer.json").read_bytes()
    assert {**in_place, "model_sha256": None} == {**new, "model_sha256": None}
    with pytest.raises(ValueError, match="already stored as 'int8-rowwise': there is nothing to recompact"):
        bp.recompact(tmp_path / "in_place", corpus=corpus)
    moved = full_precision_dir(tmp_path / "moved", model, corpus.tokenizer,
                               {**report, "final": {**report["final"], "mlm": report["final"]["mlm"] + 0.01}})
    with pytest.raises(ValueError, match="it is not the batch the run measured"):   # a final this batch never gave
        bp.recompact(moved, tmp_path / "never", corpus=corpus)
    rot13 = bcorp.build_corpus(TINY, *[[codecs.encode(line, "rot13") for line in part] for part in tiny_text()])
    with pytest.raises(ValueError, match="corpus was encoded with another vocabulary than .*tokenizer.json"):
        bp.recompact(old, tmp_path / "never", corpus=rot13)
    assert not (tmp_path / "never").exists()


def test_recompact_command_rebuilds_the_held_out_batch_from_the_recipe(corpus, tmp_path, capsys):
    """python -m coursekit.bert recompact: without a corpus the held-out batch comes from the report's recipe and
    the directory's tokenizer (the real pre-training text), as pretrain measured it."""
    from coursekit.bert.__main__ import main as bert_cli

    model, report = bp.pretrain(dataclasses.replace(TINY, steps=1, eval_every=1), corpus, progress=False)
    real = bcorp.build_corpus(TINY, tokenizer=corpus.tokenizer)
    report["final"] = bp.held_out_losses(model, bcorp.held_out_batch(real, TINY))
    old = full_precision_dir(tmp_path / "old", model, corpus.tokenizer, report)
    assert bert_cli(["recompact", "--model", str(old), "--out", str(tmp_path / "new")]) == 0
    printed = capsys.readouterr().out
    new = json.loads((tmp_path / "new" / "report.json").read_text())
    assert new["recompacted_from"]["final"] == report["final"] and new["storage"] == "int8-rowwise"
    assert f"held-out MLM {report['final']['mlm']:.4f} -> {new['final']['mlm']:.4f}" in printed


def test_pack_sentences_fills_rows_with_whole_sentences():
    sentences = [[10, 11], [20, 21, 22], [30]]
    rows = bcorp.pack_sentences(sentences, 50, max_len=9, sep_id=3, rng=random.Random(0))
    assert len(rows) == 50
    for row in rows:
        assert len(row) <= 9 - 2
        parts, cur = [], []
        for t in row:
            if t == 3:
                parts.append(cur)
                cur = []
            else:
                cur.append(t)
        parts.append(cur)
        assert all(p in sentences for p in parts)                      # never a cut sentence
    assert sum(len(r) for r in rows) / len(rows) > 4                   # one sentence alone averages 2 pieces
    with pytest.raises(ValueError, match="at least one sentence"):
        bcorp.pack_sentences([], 1, max_len=9, sep_id=3, rng=random.Random(0))


def test_doc_sentence_rows_are_runs_of_one_document():
    docs = [[[10, 11], [12], [13, 14, 15], [16]], [[20, 21, 22], [23]], [[30] * 12, [31]]]
    rows = bcorp.doc_sentence_rows(docs, 200, max_len=8, rng=random.Random(0))
    assert len(rows) == 200
    for row in rows:
        assert 0 < len(row) <= 8 - 2 or row == [30] * 12         # a first sentence too long is cut by build_pair
        doc = next(d for d in docs if any(row[:len(s)] == list(s) for s in d))
        start = next(i for i, s in enumerate(doc) if row[:len(s)] == list(s))
        run, i = [], start                                       # the row is consecutive whole sentences …
        while len(run) < len(row):
            run += doc[i]
            i += 1
        assert run == row
        if i < len(doc) and row != [30] * 12:                    # … and stops only where the next one does not fit
            assert len(row) + len(doc[i]) > 8 - 2
    assert {r[0] // 10 for r in rows} == {1, 2, 3}              # every document is drawn
    with pytest.raises(ValueError, match=r"documents\[1\] must be a non-empty list"):
        bcorp.doc_sentence_rows([[[5]], []], 1, max_len=8, rng=random.Random(0))


def test_doc_sentences_layout_has_no_nsp_pairs_and_resumes_like_the_pairs(corpus, tmp_path):
    cfg = dataclasses.replace(TINY, layout="doc_sentences")
    ids, segments, keep, mlm_labels, nsp = bcorp.sample_batch(corpus, cfg, random.Random(0),
                                                              torch.Generator().manual_seed(0))
    assert (nsp == IGNORE_INDEX).all() and (segments == 0).all()  # one segment per row, nothing for NSP
    pairs = bcorp.sample_batch(corpus, TINY, random.Random(0), torch.Generator().manual_seed(0))
    assert keep.sum() > pairs[2].sum() * 0.8                      # rows of running text, not single sentences
    model, report = bp.pretrain(cfg, corpus, progress=False, work=tmp_path / "docs")
    assert report["config"]["layout"] == "doc_sentences" and math.isnan(report["history"]["nsp"][0])
    assert set(report["final"]) == {"mlm", "nsp", "nsp_acc"}       # measured on the held-out NSP pairs as before
    with pytest.raises(ValueError, match="layout must be one of"):
        dataclasses.replace(TINY, layout="pairs")


def test_a_run_keeps_its_tokenizer_and_resumes_only_with_it(corpus, tmp_path):
    """WordPiece trained twice on the same text gives other ids (not deterministic across processes), so a run in
    a work folder keeps its tokenizer there, and --resume with a corpus of another vocabulary is refused."""
    cfg = dataclasses.replace(TINY, steps=4, eval_every=2)
    bp.pretrain(cfg, corpus, progress=False, work=tmp_path / "w", stop_at=2)
    kept = Tokenizer.from_file(str(tmp_path / "w" / bp.WORK_TOKENIZER))
    assert kept.get_vocab() == corpus.tokenizer.get_vocab()
    vocab = corpus.tokenizer.get_vocab()
    a, b = sorted(vocab, key=vocab.get)[-2:]                             # two pieces' ids swapped
    swapped = Tokenizer.from_str(corpus.tokenizer.to_str().replace(f'"{a}":', '"@A@":').replace(
        f'"{b}":', f'"{a}":').replace('"@A@":', f'"{b}":'))
    other = bcorp.PretrainingCorpus(swapped, corpus.train_docs, corpus.held_docs, corpus.in_domain)
    with pytest.raises(ValueError, match="another vocabulary than"):
        bp.pretrain(cfg, other, progress=False, work=tmp_path / "w", resume=True)
    _, report = bp.pretrain(cfg, corpus, progress=False, work=tmp_path / "w", resume=True)
    assert len(report["history"]["mlm"]) == 4


def test_packed_batch_keeps_sep_unmasked_and_nsp_ignored(corpus):
    cfg = dataclasses.replace(TINY, pack_in_domain=True)
    batch = bcorp.sample_batch(corpus, cfg, random.Random(0), torch.Generator().manual_seed(0))
    ids, segments, _, mlm_labels, nsp = batch
    sep = corpus.special_id("[SEP]")
    in_domain = nsp == IGNORE_INDEX
    assert int(in_domain.sum()) == cfg.n_in_domain
    assert (mlm_labels[ids == sep] == IGNORE_INDEX).all()
    assert (segments[in_domain] == 0).all()


def test_resumed_pretraining_equals_an_uninterrupted_run(corpus, tmp_path):
    cfg = dataclasses.replace(TINY, pack_in_domain=True)
    full, full_report = bp.pretrain(cfg, corpus, progress=False, work=tmp_path / "full")
    bp.pretrain(cfg, corpus, progress=False, work=tmp_path / "split", stop_at=4)
    resumed, resumed_report = bp.pretrain(cfg, corpus, progress=False, work=tmp_path / "split", resume=True)
    assert resumed_report["history"]["mlm"] == full_report["history"]["mlm"]
    pairs = zip(full.state_dict().values(), resumed.state_dict().values(), strict=True)
    assert all(torch.equal(a, b) for a, b in pairs)
    with pytest.raises(FileExistsError, match="--resume"):
        bp.pretrain(cfg, corpus, progress=False, work=tmp_path / "full")
    with pytest.raises(ValueError, match="another recipe"):
        bp.pretrain(dataclasses.replace(cfg, learning_rate=0.5), corpus, progress=False, work=tmp_path / "full",
                    resume=True)


def test_continued_pretraining_starts_from_the_saved_weights(corpus, tmp_path):
    """Domain-adaptive pre-training (init_from): the run starts from the saved model, not a fresh one."""
    first, report = bp.pretrain(TINY, corpus, progress=False)
    bc.save_pretrained(tmp_path / "stage1", first, corpus.tokenizer, report)
    stored = bc.load_small_bert(tmp_path / "stage1")[0]            # the int8 weights as a reader gets them
    cfg = dataclasses.replace(TINY, init_from=str(tmp_path / "stage1"), in_domain_fraction=0.75,
                              pack_in_domain=True)
    held = bcorp.held_out_batch(corpus, cfg)
    second, second_report = bp.pretrain(cfg, corpus, progress=False)
    assert second_report["before"] == pytest.approx(bp.held_out_losses(stored, held), abs=1e-6)
    assert not all(torch.equal(a, b) for a, b in zip(first.state_dict().values(), second.state_dict().values(),
                                                     strict=True))          # and it trained on from there
    # the default corpus path encodes with the saved tokenizer: the vocabulary is the stage-1 one
    origin = bc.continued_from(tmp_path / "stage1")
    assert origin["model_sha256"] == sha256_file(tmp_path / "stage1" / "model.safetensors")
    assert origin["report"]["final"] == report["final"]
    assert origin["report"]["history"]["mlm"] == report["history"]["mlm"]
    assert second_report["continued_from"] == origin                 # pretrain records where it started
    assert bc.stage_reports(second_report) == [origin["report"], second_report]
    both = bc.combined_history(second_report)
    assert both["steps"] == list(range(1, 2 * TINY.steps + 1)) and both["boundaries"] == [TINY.steps]
    assert both["mlm"] == report["history"]["mlm"] + second_report["history"]["mlm"]
    assert [s for s, _ in both["evals"]] == [0, 3, 6, 9, 12]   # the second stage's step 0 is the first's last
    with pytest.raises(ValueError, match="holds a BERT with config"):
        bp.pretrain(dataclasses.replace(cfg, d_model=32, n_heads=2), corpus, progress=False)
    rot13 = [[codecs.encode(line, "rot13") for line in part] for part in tiny_text()]
    other = bcorp.build_corpus(TINY, *rot13)                    # a vocabulary of the same size, other pieces
    assert other.tokenizer.get_vocab_size() == corpus.tokenizer.get_vocab_size()
    with pytest.raises(ValueError, match="encoded with another vocabulary"):
        bp.pretrain(cfg, other, progress=False)
    with pytest.raises(TypeError, match="init_from must be a directory path"):
        bcorp.PretrainConfig(init_from=None)


def test_finetune_by_step_covers_the_random_start_and_every_snapshot(corpus, tmp_path):
    bp.pretrain(TINY, corpus, progress=False, snapshot_dir=tmp_path)
    rows = bert_finetuning.finetune_by_step(tmp_path, corpus.tokenizer, n_train=32, epochs=1, batch_size=16)
    assert [r["step"] for r in rows] == [0, 3, 6]
    assert all(0.0 <= r["dev_acc"] <= 1.0 and r["seconds"] > 0 for r in rows)
    with pytest.raises(FileNotFoundError, match="no step_"):
        bert_finetuning.finetune_by_step(tmp_path / "empty", corpus.tokenizer)


def test_load_errors(tmp_path, corpus):
    with pytest.raises(FileNotFoundError, match="python -m coursekit.bert pretrain --out"):
        bc.load_small_bert(tmp_path)
    model, report = bp.pretrain(dataclasses.replace(TINY, steps=1, eval_every=1), corpus, progress=False)
    bc.save_pretrained(tmp_path / "a", model, corpus.tokenizer, report)
    other = bcorp.build_corpus(dataclasses.replace(TINY, vocab_size=90), *tiny_text())
    other.tokenizer.save(str(tmp_path / "a" / "tokenizer.json"))
    with pytest.raises(ValueError, match="tokenizer.json has"):
        bc.load_small_bert(tmp_path / "a")


def test_committed_checkpoint_learned_beyond_the_unigram_plateau():
    model, tokenizer, report = bc.load_small_bert()
    assert tokenizer.get_vocab_size() == model.config.vocab_size == report["config"]["vocab_size"]
    assert report["final"]["mlm"] < report["unigram_mlm"] - 1.0      # uses the context, not only frequencies
    assert report["final"]["nsp_acc"] > 0.6                           # and NSP is above chance
    assert len(report["history"]["mlm"]) == report["config"]["steps"]

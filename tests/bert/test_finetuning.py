"""The fair SST-2 comparison of the small BERT (coursekit.bert.finetuning) and its committed table."""

from __future__ import annotations

import dataclasses
import json

import pytest
from helpers.bert import TINY, tiny_text

from coursekit.bert import checkpoint as bc
from coursekit.bert import corpus as bcorp
from coursekit.bert import finetuning as bf
from coursekit.bert import pretraining as bp
from coursekit.bert import sst2 as bert_sst2
from coursekit.bert.checkpoint import CHECKPOINT_DIR
from coursekit.data import sha256_file

FAST = bert_sst2.SST2Protocol(n_train=48, n_select=32, epochs=1, lrs=(3e-4, 3e-3), seeds=(0, 1))


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory):
    lines, in_domain = tiny_text()
    corpus = bcorp.build_corpus(dataclasses.replace(TINY, steps=2), lines, in_domain)
    model, report = bp.pretrain(dataclasses.replace(TINY, steps=2), corpus, progress=False)
    return bc.save_pretrained(tmp_path_factory.mktemp("bert") / "tiny", model, corpus.tokenizer, report)


def test_protocol_checks():
    with pytest.raises(ValueError, match="lrs must be positive floats"):
        bert_sst2.SST2Protocol(lrs=())
    with pytest.raises(ValueError, match="lrs must be positive floats"):
        bert_sst2.SST2Protocol(lrs=(1,))
    with pytest.raises(ValueError, match="seeds must be"):
        bert_sst2.SST2Protocol(seeds=(True,))
    with pytest.raises(ValueError, match="n_train must be"):
        bert_sst2.sst2_splits(70_000, 10)


def test_splits_are_disjoint():
    splits = bert_sst2.sst2_splits(500, 300)
    assert len(splits["train"]) == 500 and len(splits["select"]) == 300 and len(splits["test"]) == 872
    shuffled = bert_sst2.sst2_splits(bert_sst2.SELECT_OFFSET, 300)["train"]["sentence"]
    assert splits["train"]["sentence"] == shuffled[:500]                      # the first rows of one shuffle
    assert splits["select"]["sentence"] != shuffled[:300]                     # rows after all possible train rows
    assert not set(splits["test"]["sentence"]) & set(splits["train"]["sentence"])


def test_compare_chooses_each_learning_rate_on_the_selection_sentences(tiny_model_dir):
    result = bf.compare(tiny_model_dir, FAST, log=lambda _: None)
    rows, summary = result["rows"], result["summary"]
    assert len(rows) == 2 * len(FAST.lrs) * len(FAST.seeds)
    for init in ("pretrained", "random"):
        mine = [r for r in rows if r["init"] == init]
        by_lr = {lr: sum(r["select"] for r in mine if r["lr"] == lr) for lr in FAST.lrs}
        assert summary[init]["chosen_lr"] == max(by_lr, key=by_lr.get)
        assert summary[init]["values"] == [r["test"] for r in mine if r["lr"] == summary[init]["chosen_lr"]]
    assert summary["difference"] == pytest.approx(summary["pretrained"]["mean"] - summary["random"]["mean"], abs=1e-4)
    assert result["model_sha256"] == sha256_file(tiny_model_dir / "model.safetensors")
    with pytest.raises(ValueError, match="init must be"):
        bf.starting_body("glove", 0, bc.load_small_bert(tiny_model_dir)[0])


def test_committed_downstream_table_holds_and_one_run_reproduces():
    """data/bert/downstream.json: measured on the committed weights; every pre-trained seed ahead of every
    random one (≥ 2 seeds; +1.9 points, short of the 3 aimed for); its first pre-trained run re-done here
    gives the same test accuracy."""
    table = json.loads((CHECKPOINT_DIR / "downstream.json").read_text())
    assert table["model_sha256"] == sha256_file(CHECKPOINT_DIR / "model.safetensors")
    summary, protocol = table["summary"], table["protocol"]
    assert len(protocol["seeds"]) >= 2 and summary["difference"] > 0.01
    assert min(summary["pretrained"]["values"]) > max(summary["random"]["values"])
    lr, seed = summary["pretrained"]["chosen_lr"], protocol["seeds"][0]
    row = next(r for r in table["rows"] if r["init"] == "pretrained" and r["lr"] == lr and r["seed"] == seed)
    model, tokenizer, _ = bc.load_small_bert()
    splits = bert_sst2.sst2_splits(protocol["n_train"], protocol["n_select"])
    again = bf.finetune_once(model, tokenizer, splits, lr=lr, seed=seed, epochs=protocol["epochs"],
                             batch_size=protocol["batch_size"])
    assert again["test"] == pytest.approx(row["test"], abs=0.005)     # ±4 of 872 sentences (thread-count rounding)


def test_pretraining_text_can_hold_out_the_selection_sentences_and_add_english_sentences():
    """The MLM text never holds SST-2's dev sentences; with hold_out_selection not the selection
    sentences either, and translation_en adds the benchmark's English training sentences once each."""
    _, default = bcorp.pretraining_text()
    _, held = bcorp.pretraining_text(bcorp.PretrainConfig(hold_out_selection=True))
    _, extended = bcorp.pretraining_text(bcorp.PretrainConfig(hold_out_selection=True,
                                                              extra_mlm_text="translation_en"))
    splits = bert_sst2.sst2_splits(1, bert_sst2.PROTOCOL.n_select)
    selection, dev = set(splits["select"]["sentence"]), set(splits["test"]["sentence"])
    assert selection <= set(default) and not selection & set(held)
    assert not dev & set(default) and not dev & set(extended)
    assert len(default) - len(held) == sum(s in selection for s in default)
    english = extended[len(held):]
    assert extended[:len(held)] == held and english == sorted(set(english)) and len(english) > 90_000
    assert "zoology deals with the study of animal life ." in english


def test_sst2_command_refits_both_starts_at_their_committed_rates(tiny_model_dir, tmp_path, capsys):
    """python -m coursekit.bert sst2: each start at the rate its committed table chose, the keys instructors read."""
    import shutil

    from coursekit.bert.__main__ import main as bert_cli

    folder = tmp_path / "model"
    shutil.copytree(tiny_model_dir, folder)
    table = bf.compare(folder, FAST, log=lambda _: None)
    (folder / "downstream.json").write_text(json.dumps(table))
    assert bert_cli(["sst2", "--model", str(folder), "--seeds", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert {"pretrained", "random", "gain", "n_dev", "seconds"} <= set(result) and result["n_dev"] == 872
    assert result["lr"] == {init: table["summary"][init]["chosen_lr"] for init in ("pretrained", "random")}
    assert result["gain"] == pytest.approx(100 * (result["pretrained"] - result["random"]), abs=0.01)
    # seed 0 at the chosen rate is a run of the committed table: the same accuracy again
    row = next(r for r in table["rows"] if r["init"] == "pretrained" and r["seed"] == 0
               and r["lr"] == table["summary"]["pretrained"]["chosen_lr"])
    assert result["pretrained"] == pytest.approx(row["test"], abs=0.005)
    with pytest.raises(SystemExit) as exit_:
        bert_cli(["sst2", "--model", str(folder), "--seeds", "0"])
    assert exit_.value.code == 2 and "--seeds must be at least 1, got 0" in capsys.readouterr().err

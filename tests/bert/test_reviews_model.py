"""The committed in-domain model of notebook 09's domain table (data/bert_reviews/, issue 36): it reloads with
its content hash, its report's final figures were measured on the stored weights, its downstream table
describes these weights and one of its runs reproduces, and it fills review blanks with review words."""

from __future__ import annotations

import json

import pytest
import torch
from helpers import ROOT

from coursekit.bert import checkpoint as bc
from coursekit.bert import finetuning as bf
from coursekit.bert import sst2 as bert_sst2
from coursekit.bert.heads import encode_batch
from coursekit.data import sha256_file

DIR = bc.REVIEWS_DIR
RECIPE = ROOT / "docs" / "trials" / "bert_imdb_long_recipe.json"   # the reproduce command's --config


@pytest.fixture(scope="module")
def reviews():
    return bc.load_small_bert(DIR)


def test_the_reviews_model_reloads_and_its_report_describes_the_stored_file(reviews):
    model, tokenizer, report = reviews
    assert report["model_sha256"] == sha256_file(DIR / "model.safetensors")
    assert report["config"]["documents"] == "imdb" and report["objective"] == "mlm_nsp"
    assert report["config"]["hold_out_selection"]                          # the selection sentences never seen
    assert report["final_measured_on"] == "model.safetensors as loaded back"
    assert report["final"]["mlm"] < report["unigram_mlm"] - 2              # the context is used
    assert tokenizer.get_vocab_size() == model.config.vocab_size == 8000
    recipe = json.loads(RECIPE.read_text())
    assert {k: report["config"][k] for k in recipe} == recipe               # the README's command made this model


def test_it_fills_review_blanks_with_review_words(reviews):
    model, tokenizer, _ = reviews

    def top(sentence: str) -> str:
        ids, seg, keep = encode_batch(tokenizer, [sentence])
        pos = (ids[0] == tokenizer.token_to_id("[MASK]")).nonzero()[0, 0]
        with torch.no_grad():
            logits = model.eval()(ids, seg, keep).mlm_logits[0, pos]
        return tokenizer.id_to_token(int(logits.argmax()))

    assert top("a complete [MASK] of time .") == "waste"
    assert top("one of the [MASK] films i have ever seen .") in {"best", "worst"}


def test_the_reviews_downstream_table_holds_and_one_run_reproduces(reviews):
    """downstream.json: measured on the stored weights, pre-training ahead on average; its first pre-trained run
    at the chosen rate re-done here gives the same accuracy."""
    table = json.loads((DIR / "downstream.json").read_text())
    assert table["model_sha256"] == sha256_file(DIR / "model.safetensors")
    summary, protocol = table["summary"], table["protocol"]
    assert protocol["seeds"] == [0, 1, 2]
    # issue 36's target: ≥ 5 points on the mean of three seeds, every pre-trained seed ahead of every random one
    assert summary["difference"] >= 0.05
    assert min(summary["pretrained"]["values"]) > max(summary["random"]["values"])
    lr, seed = summary["pretrained"]["chosen_lr"], protocol["seeds"][0]
    row = next(r for r in table["rows"] if r["init"] == "pretrained" and r["lr"] == lr and r["seed"] == seed)
    model, tokenizer, _ = reviews
    splits = bert_sst2.sst2_splits(protocol["n_train"], protocol["n_select"])
    again = bf.finetune_once(bf.starting_body("pretrained", seed, model), tokenizer, splits, lr=lr, seed=seed,
                             epochs=protocol["epochs"], batch_size=protocol["batch_size"])
    assert again["test"] == pytest.approx(row["test"], abs=0.005)     # ±4 of 872 sentences (thread-count rounding)

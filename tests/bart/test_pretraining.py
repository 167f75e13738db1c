"""coursekit.bart.corpus / bart_pretraining / bart_finetuning: the denoising recipe (exact resume), the
reconstruction measures, the committed pre-trained BART (reload, hash, the issue's targets) and the fine-tuning
code."""

import json
import shutil
from dataclasses import asdict, replace

import pytest
import torch
from helpers import ROOT

from coursekit.bart import corpus as bart_corpus
from coursekit.bart import finetuning as bart_finetuning
from coursekit.bart import noising
from coursekit.bart import pretraining as bart_pretraining
from coursekit.bart.__main__ import main as bart_cli
from coursekit.bart.corpus import RECIPE, REVIEWS_STAGE, BartRecipe, BartVocab, PretrainingCorpus
from coursekit.data import model_dir
from coursekit.metrics import select_then_test

BART_DIR = ROOT / "data" / "bart"
committed = pytest.mark.skipif(not (BART_DIR / "model.safetensors").exists(), reason="data/bart not committed yet")

TINY = BartRecipe(arch=dict(d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=32, dropout=0.1,
                            max_len=64), max_tokens=300, max_updates=6, warmup=2, eval_every=3)
SENTENCES = ["the cat sat on the mat .", "il fait beau aujourd'hui .", "i like this film a lot .",
             "tom is reading a book .", "nous allons à la plage .", "what a dull and predictable story .",
             "she plays the piano every day .", "le chat dort sur le canapé ."] * 4


@pytest.fixture(scope="module")
def vocab():
    return BartVocab()


@pytest.fixture()
def corpus(vocab):
    docs = [vocab.encode_text(s) for s in SENTENCES]
    return PretrainingCorpus(vocab, docs, docs[:4], {"tokens": sum(map(len, docs))}, unigram_top=docs[0][1])


def test_vocab_keeps_the_benchmark_ids_and_adds_mask(vocab):
    assert len(vocab) == len(vocab.subwords.itos) + 1 and vocab.itos[vocab.mask_id] == "<mask>"
    ids = vocab.encode_text("The cat sat.")
    assert ids[0] == vocab.bos_id and ids[-1] == vocab.eos_id
    assert ids[1:-1] == vocab.subwords.encode(["the", "cat", "sat", "."])
    assert vocab.detokenize(ids) == "the cat sat ."
    assert vocab.detokenize([vocab.bos_id, ids[1], vocab.mask_id, vocab.eos_id]) == "the <mask>"


def test_text_infilling_reports_which_positions_it_hid():
    ids = torch.arange(10, 40)
    for seed in range(20):
        out, hidden = noising.text_infilling(ids, mask_id=99, ratio=0.3, generator=torch.Generator().manual_seed(seed),
                                             return_masked=True)
        plain = noising.text_infilling(ids, mask_id=99, ratio=0.3, generator=torch.Generator().manual_seed(seed))
        assert torch.equal(out, plain)                                     # the same corruption
        assert int(hidden.sum()) == round(0.3 * len(ids))
        assert out[out != 99].tolist() == ids[~hidden].tolist()            # the kept tokens, in order
    with pytest.raises(TypeError, match="return_masked"):
        noising.text_infilling(ids, mask_id=99, return_masked="yes")


def test_denoising_accuracy_counts_copy_and_fill_positions(vocab, corpus):
    class Oracle(torch.nn.Module):
        """Predicts the original token everywhere (it peeks at the target) — copy = fill = 1."""

        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.zeros(1))
            self.targets = None

        def forward(self, src, tgt_in, src_keep=None, tgt_keep=None):
            out = torch.roll(tgt_in, -1, 1)
            return torch.nn.functional.one_hot(out, len(vocab)).float() * 10 + self.w

    model = Oracle()
    docs = corpus.train[:8]
    acc = bart_pretraining.denoising_accuracy(model, docs, vocab, TINY, unigram_top=corpus.unigram_top)
    # the shifted decoder input holds every target but the last (</s>): all content tokens right
    assert acc["copy_accuracy"] == 1.0 and acc["fill_accuracy"] == 1.0
    n_content = sum(len(d) - 2 for d in docs)
    assert acc["n_copy"] + acc["n_fill"] == n_content and acc["n_fill"] > 0
    with pytest.raises(ValueError, match="at least one"):
        bart_pretraining.denoising_accuracy(model, [], vocab, TINY)


def test_pretraining_resumes_exactly_and_exports_a_loadable_model(tmp_path, vocab, corpus):
    full, st_full, _ = bart_pretraining.pretrain(tmp_path / "full", recipe=TINY, corpus=corpus, quiet=True)
    assert st_full["update"] == 6 and [p["update"] for p in st_full["curve"]] == [0, 3, 6]
    bart_pretraining.pretrain(tmp_path / "split", recipe=TINY, corpus=corpus, max_updates=3, quiet=True)
    resumed, st, _ = bart_pretraining.pretrain(tmp_path / "split", recipe=TINY, corpus=corpus, resume=True, quiet=True)
    for a, b in zip(full.parameters(), resumed.parameters()):
        assert torch.equal(a, b)                                             # same batches, noise and dropout
    with pytest.raises(FileExistsError, match="--resume"):
        bart_pretraining.pretrain(tmp_path / "full", recipe=TINY, corpus=corpus)
    report = bart_pretraining.export(full, st_full, corpus, tmp_path / "out", recipe=TINY)
    model, _, loaded = bart_pretraining.load_pretrained_bart(tmp_path / "out")
    assert loaded == json.loads((tmp_path / "out" / "report.json").read_text()) and report["updates"] == 6
    again = bart_pretraining.denoising_accuracy(model, corpus.held_out, vocab, TINY, unigram_top=corpus.unigram_top)
    assert again == report["held_out"]                                       # measured on the stored int8 weights
    report["file_sha256"] = "0" * 64
    (tmp_path / "out" / "report.json").write_text(json.dumps(report))
    with pytest.raises(ValueError, match="does not match its report"):
        bart_pretraining.load_pretrained_bart(tmp_path / "out")
    with pytest.raises(FileNotFoundError, match="python -m coursekit.bart pretrain"):
        bart_pretraining.load_pretrained_bart(tmp_path / "nothing")


def test_review_documents_pack_whole_sentences_of_one_review(vocab):
    reviews = ["A fine film. I loved it! Would watch again?", "Dull.", "word " * 80 + ". Short one."]
    assert bart_corpus.review_sentences(reviews[0]) == [["a", "fine", "film", "."], ["i", "loved", "it", "!"],
                                                        ["would", "watch", "again", "?"]]
    docs, left_out = bart_corpus.review_documents(reviews, vocab, 64)
    assert left_out == 1                                         # the 81-word sentence fits no document
    assert [vocab.detokenize(d) for d in docs] == ["a fine film . i loved it ! would watch again ?", "dull .",
                                                   "short one ."]          # never across reviews or a gap
    assert all(d[0] == vocab.bos_id and d[-1] == vocab.eos_id and len(d) <= 64 for d in docs)
    small, _ = bart_corpus.review_documents(reviews[:1], vocab, 12)      # 3 sentences of 4-5 pieces: 2 passages
    assert [vocab.detokenize(d) for d in small] == ["a fine film . i loved it !", "would watch again ?"]


def test_second_stage_continues_the_exported_model_and_checks_its_hash(tmp_path, vocab, corpus):
    first, st, _ = bart_pretraining.pretrain(tmp_path / "first", recipe=TINY, corpus=corpus, quiet=True)
    bart_pretraining.export(first, st, corpus, tmp_path / "stage1", recipe=TINY)
    stored, _, _ = bart_pretraining.load_pretrained_bart(tmp_path / "stage1")
    sha = json.loads((tmp_path / "stage1" / "report.json").read_text())["file_sha256"]
    second = replace(TINY, init=str(tmp_path / "stage1"), init_sha256=sha, max_updates=1, eval_every=1)
    torch.manual_seed(5)
    model = bart_pretraining.continue_from(bart_pretraining.build_bart(second, vocab), second)
    for a, b in zip(model.state_dict().values(), stored.state_dict().values()):
        assert torch.equal(a, b)                                  # the first stage's weights as stored
    _, st2, _ = bart_pretraining.pretrain(tmp_path / "second", recipe=second, corpus=corpus, quiet=True)
    assert st2["curve"][0]["held_out_loss"] == pytest.approx(                # evaluated before the first update
        bart_pretraining.denoising_accuracy(stored, corpus.held_out, vocab, TINY)["loss"], abs=1e-4)
    report = bart_pretraining.export(model, st2, corpus, tmp_path / "out", recipe=second)
    assert report["recipe"]["init_sha256"] == sha and "--continue-from" in report["reproduce"]
    assert report["first_stage"]["file_sha256"] == sha and report["first_stage"]["updates"] == 6
    with pytest.raises(ValueError, match="another model than the one this run started from"):
        bart_pretraining.continue_from(model, replace(second, init_sha256="1" * 64))


def test_finetuning_code_runs_on_both_tasks(vocab, corpus):
    recipe = replace(bart_finetuning.FINETUNE, mt_updates=3, mt_max_tokens=300, sst2_updates=3, sst2_batch=4)
    torch.manual_seed(0)
    model = bart_pretraining.build_bart(TINY, vocab)
    src, tgt = corpus.train[:8], corpus.train[8:16]
    losses = bart_finetuning.finetune_translation(model, src, tgt, vocab, recipe=recipe)
    assert len(losses) == 3 and all(torch.isfinite(torch.tensor(losses)))
    clf, losses = bart_finetuning.finetune_sst2(model, corpus.train[:8], [0, 1] * 4, vocab, recipe=recipe)
    assert len(losses) == 3 and 0 <= bart_finetuning.sst2_accuracy(clf, corpus.train[:8], [0, 1] * 4, vocab) <= 1
    with pytest.raises(ValueError, match="init"):
        bart_finetuning.starting_model("pre-trained", 0, vocab)
    with pytest.raises(ValueError, match="seeds"):
        bart_finetuning.compare(())
    with pytest.raises(ValueError, match="tasks"):
        bart_finetuning.compare((0,), tasks=("summaries",))


@committed
def test_committed_bart_reloads_and_meets_the_denoising_targets():
    """The issue's targets on held-out sentences: ≥ 95 % of the uncorrupted tokens copied, masked spans
    filled far above the unigram guess; the figures equal the report's."""
    report = json.loads((BART_DIR / "report.json").read_text())
    result = bart_pretraining.denoising_report(BART_DIR)
    for key in ("copy_accuracy", "fill_accuracy", "unigram_fill_accuracy", "n_copy", "n_fill"):
        assert result[key] == pytest.approx(report["held_out"][key], abs=1e-9)
    assert result["copy_accuracy"] >= 0.95
    assert result["fill_accuracy"] >= 3 * result["unigram_fill_accuracy"]
    assert report["size_bytes"] < 20e6


@committed
def test_committed_bart_must_match_its_report(tmp_path):
    for name in ("model.safetensors", "report.json"):
        shutil.copy(BART_DIR / name, tmp_path / name)
    with open(tmp_path / "model.safetensors", "r+b") as fh:          # flip one byte of the weights
        fh.seek(-10, 2)
        byte = fh.read(1)
        fh.seek(-10, 2)
        fh.write(bytes([byte[0] ^ 1]))
    with pytest.raises(ValueError, match="does not match its report"):
        bart_pretraining.load_pretrained_bart(tmp_path)


@committed
def test_denoise_command_prints_json(capsys):
    assert bart_cli(["denoise", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["copy_accuracy"] >= 0.95 and out["fill_accuracy"] > out["unigram_fill_accuracy"]
    rates = [v for v in out.values() if isinstance(v, float)]
    assert rates and all(v == round(v, 4) for v in rates)                  # rounded, not 0.9943181818181818
    assert "</w>" not in out["unigram_guess"] and out["unigram_guess_piece"].endswith("</w>")


def test_merge_combines_processes_and_keeps_other_tasks():
    recipe = asdict(bart_finetuning.FinetuneRecipe())

    def part(seed, test):
        rows = [{"init": init, "lr": lr, "seed": seed, "select": 0.7 + (lr > 5e-4) * 0.01,
                 "test": round(test + (init == "pretrained") * 0.02 + (lr > 5e-4) * 0.01, 4)}
                for init in ("pretrained", "random") for lr in recipe["sst2_lrs"]]
        return {"recipe": recipe, "hardware": {}, "seeds": [seed], "sst2": {"n_train": 2, "rows": rows}}

    kept = {"translation": {"bleu": "kept"}}
    table = bart_finetuning.merge([part(0, 0.60), part(1, 0.62)], kept)
    assert table["translation"] == {"bleu": "kept"} and table["seeds"] == [0, 1]
    summary = table["sst2"]["summary"]
    assert summary["pretrained"]["chosen_lr"] == 1e-3 and summary["pretrained"]["values"] == [0.63, 0.65]
    assert summary["difference"] == pytest.approx(0.02)
    three = bart_finetuning.merge([part(2, 0.61)], table)          # a third seed for SST-2 only
    assert three["seeds"] == [0, 1, 2] and three["sst2"]["seeds"] == [0, 1, 2]
    assert three["translation"] == {"bleu": "kept"} and len(three["sst2"]["summary"]["pretrained"]["values"]) == 3


def test_merge_replaces_the_rows_it_reran_and_keeps_the_others():
    """After a new committed model only its pre-trained rows are re-run: the random-init rows stay."""
    recipe = asdict(bart_finetuning.FinetuneRecipe())

    def rows(inits, test):
        return [{"init": init, "seed": seed, "bleu": test + (init == "pretrained") * 10.0, "chrf": 1.0}
                for seed in (0, 1) for init in inits]

    committed = {"recipe": recipe, "seeds": [0, 1],
                 "translation": {"n_pairs": 4, "rows": rows(("pretrained", "random"), 10.0)}}
    rerun = {"recipe": recipe, "hardware": {}, "seeds": [0, 1], "model_file_sha256": "ab" * 32,
             "translation": {"n_pairs": 4, "rows": rows(("pretrained",), 12.0)}}
    table = bart_finetuning.merge([rerun], committed)
    got = [(r["init"], r["seed"], r["bleu"]) for r in table["translation"]["rows"]]
    assert got == [("pretrained", 0, 22.0), ("random", 0, 10.0), ("pretrained", 1, 22.0), ("random", 1, 10.0)]
    assert table["translation"]["bleu"]["difference"] == pytest.approx(12.0)
    assert table["model_file_sha256"] == "ab" * 32 and table["translation"]["seeds"] == [0, 1]


def test_compare_of_one_start_leaves_the_summary_to_merge(monkeypatch):
    """compare(inits=("pretrained",)) once crashed computing a summary without random-init rows."""
    from coursekit.bart import finetuning as ft

    class Report:
        bleu, chrf = 21.0, 44.0

        def examples(self, n):
            return []

    monkeypatch.setattr(ft, "translation_subset", lambda n, vocab: (type("D", (), {"test": [0] * 3})(), [], []))
    monkeypatch.setattr(ft, "starting_model", lambda init, seed, vocab, directory: (None, vocab))
    monkeypatch.setattr(ft, "finetune_translation", lambda *a, **k: [1.0] * 50)
    monkeypatch.setattr(ft, "translation_bleu", lambda *a, **k: Report())
    monkeypatch.setattr(ft, "sha256_file", lambda path: "ab" * 32)
    part = ft.compare((0,), tasks=("translation",), inits=("pretrained",), log=lambda line: None)
    assert [r["init"] for r in part["translation"]["rows"]] == ["pretrained"] and "bleu" not in part["translation"]
    assert part["model_file_sha256"] == "ab" * 32


def test_committed_downstream_table_follows_its_protocol():
    """data/bart/downstream.json: each start's SST-2 learning rate is the one with the best mean accuracy on the
    selection sentences, and the reported test accuracies are that rate's, for every seed."""
    table = json.loads((model_dir("bart") / "downstream.json").read_text())
    sst = table["sst2"]
    assert sst["summary"] == select_then_test(sst["rows"], tuple(table["recipe"]["sst2_lrs"]))
    assert len(sst["seeds"]) >= 3 and sst["n_select"] >= 1000 and sst["n_test"] == 872
    for init in ("pretrained", "random"):
        assert {r["seed"] for r in sst["rows"] if r["init"] == init} == set(sst["seeds"])
        for task in ("sst2", "translation"):
            assert {r["seed"] for r in table[task]["rows"] if r["init"] == init} == set(table[task]["seeds"])
    bleu = table["translation"]["bleu"]
    assert min(bleu["pretrained"]["values"]) - max(bleu["random"]["values"]) > 5     # the translation target
    s = sst["summary"]                                                              # issue 36's BART target
    assert s["difference"] >= 0.03 and min(s["pretrained"]["values"]) > max(s["random"]["values"])
    first = table["first_stage"]["sst2"]                    # the first-stage model, the same runs and random rows
    assert first["summary"] == select_then_test(first["rows"], tuple(table["recipe"]["sst2_lrs"]))
    assert first["summary"]["random"] == s["random"] and first["seeds"] == sst["seeds"]
    report = json.loads((BART_DIR / "report.json").read_text())
    assert table["model_file_sha256"] == report["file_sha256"]                   # measured on the committed file
    assert table["first_stage"]["model_file_sha256"] == report["first_stage"]["file_sha256"]


@committed
def test_committed_bart_is_the_in_domain_second_stage():
    """data/bart continues the first-stage model (recorded by hash) on the corpus plus IMDB review passages,
    with the package's REVIEWS_STAGE recipe, and denoises the held-out Tatoeba sentences no worse for it."""
    report = json.loads((BART_DIR / "report.json").read_text())
    recipe = BartRecipe(**report["recipe"])
    assert recipe == replace(RECIPE, **REVIEWS_STAGE, init=recipe.init, init_sha256=recipe.init_sha256)
    assert recipe.init_sha256 == report["first_stage"]["file_sha256"]
    assert BartRecipe(**report["first_stage"]["recipe"]) == RECIPE
    assert report["corpus"]["reviews"] == recipe.n_reviews and report["corpus"]["review_passages"] > 0
    assert report["held_out"]["loss"] <= report["first_stage"]["held_out"]["loss"]
    assert "--continue-from" in report["reproduce"]

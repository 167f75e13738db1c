"""coursekit.bart.pretraining stores the pre-trained BART as int8 (one scale per output channel, issue 34):
``export`` writes int8 and measures its report on the weights as loaded back from the file,
``load_pretrained_bart`` gives fp32 from int8 and from the fp16 files committed before, and ``recompact`` (and
``python -m coursekit.bart recompact``) rewrites an fp16 export keeping its training record. All on a tiny BART."""

import copy
import json
import shutil
import stat
from dataclasses import asdict

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file

from coursekit.bart import pretraining as bart_pretraining
from coursekit.bart.__main__ import main as bart_cli
from coursekit.bart.corpus import BartRecipe, BartVocab, PretrainingCorpus
from coursekit.data import sha256_file
from coursekit.training.compact import STORAGE, expand_state
from coursekit.training.loop import save_checkpoint

TINY = BartRecipe(arch=dict(d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=32, dropout=0.1,
                            max_len=64), max_tokens=300, max_updates=6, warmup=2, eval_every=3, n_held_out=2)
SENTENCES = ["the cat sat on the mat .", "il fait beau aujourd'hui .", "i like this film a lot .",
             "tom is reading a book .", "nous allons à la plage .", "what a dull and predictable story .",
             "she plays the piano every day .", "le chat dort sur le canapé ."] * 4
STATE = {"update": 6, "epoch": 0, "position": 1, "seconds": 12.34, "hardware": {"device": "cpu"},
         "curve": [{"update": 0, "held_out_loss": 9.0}, {"update": 6, "held_out_loss": 8.5}],
         "train": [{"update": 6, "loss": 8.7, "tokens": 300}]}
TRAINING_FIELDS = ("recipe", "corpus", "parameters", "updates", "epochs", "train_seconds", "hardware", "curve",
                   "train_log", "unigram_top", "reproduce")


@pytest.fixture(scope="module")
def vocab():
    return BartVocab()


@pytest.fixture(scope="module")
def corpus(vocab):
    docs = [vocab.encode_text(s) for s in SENTENCES]
    return PretrainingCorpus(vocab, docs, docs[:4], {"tokens": sum(map(len, docs))}, unigram_top=docs[0][1])


@pytest.fixture()
def model(vocab):
    """A tiny BART with weights away from init (so that int8 and fp16 storage differ measurably)."""
    torch.manual_seed(0)
    m = bart_pretraining.build_bart(TINY, vocab)
    with torch.no_grad():
        for p in m.parameters():
            p.add_(0.05 * torch.randn_like(p))
    return m


def fp16_export(model, corpus, folder):
    """A directory as export wrote it before issue 34: fp16 weights, figures measured on them, no ``storage``."""
    vocab = corpus.vocab
    rounded = copy.deepcopy(model).half()
    path = save_checkpoint(folder / "model.safetensors", rounded, model.config,
                           extra={"recipe": asdict(TINY), "tokenizer_sha256": vocab.subwords.sha256(),
                                  "mask_id": str(vocab.mask_id)})
    held_out = bart_pretraining.denoising_accuracy(rounded.float(), corpus.held_out, vocab, TINY,
                                                   unigram_top=corpus.unigram_top)
    report = {"recipe": asdict(TINY), "corpus": corpus.sources, "parameters": 1234, "updates": 6, "epochs": 0.5,
              "train_seconds": 12.3, "hardware": {"device": "cpu", "note": "old run"}, "held_out": held_out,
              "unigram_top": vocab.itos[corpus.unigram_top], "examples": [{"original": "old"}],
              "curve": STATE["curve"], "train_log": STATE["train"], "file_sha256": sha256_file(path),
              "size_bytes": path.stat().st_size, "reproduce": "python -m coursekit.bart pretrain --out old"}
    (folder / "report.json").write_text(json.dumps(report, indent=1))
    return report


def dtypes(path):
    with safe_open(str(path), "pt") as f:
        return {k: f.get_slice(k).get_dtype() for k in f.keys()}, f.metadata()


def test_export_stores_int8_and_measures_the_weights_as_loaded_back(tmp_path, vocab, corpus, model):
    before = {k: v.clone() for k, v in model.state_dict().items()}
    report = bart_pretraining.export(model, STATE, corpus, tmp_path / "out", recipe=TINY)
    for k, v in model.state_dict().items():                                 # the caller's fp32 model is untouched
        assert v.dtype == torch.float32 and torch.equal(v, before[k])
    path = tmp_path / "out" / "model.safetensors"
    kinds, meta = dtypes(path)
    assert meta["storage"] == STORAGE == report["storage"] == "int8-rowwise"
    for name, tensor in before.items():
        if tensor.dim() >= 2:
            assert kinds[name] == "I8" and kinds[name + ":scale"] == "F32", name
        else:
            assert kinds[name] == "F16", name
    assert set(kinds) == set(before) | {n + ":scale" for n, t in before.items() if t.dim() >= 2}
    assert report["file_sha256"] == sha256_file(path) and report["size_bytes"] == path.stat().st_size
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["model.safetensors", "report.json"]

    loaded, _, on_disk = bart_pretraining.load_pretrained_bart(tmp_path / "out")
    assert on_disk == report == json.loads((tmp_path / "out" / "report.json").read_text())
    stored = expand_state(load_file(str(path)))
    state = loaded.state_dict()
    assert set(state) == set(stored)
    for name, tensor in state.items():                                       # fp32, exactly the dequantised file
        assert tensor.dtype == torch.float32 and torch.equal(tensor, stored[name]), name
    quantised = [name for name, t in before.items() if t.dim() >= 2 and not torch.equal(t, state[name])]
    assert quantised                                                         # int8 is not the fp32 model
    again = bart_pretraining.denoising_accuracy(loaded, corpus.held_out, vocab, TINY, unigram_top=corpus.unigram_top)
    assert again == report["held_out"]                                       # measured on the weights as stored
    assert len(report["examples"]) == 6          # held_out[:5] and held_out[n_held_out:n_held_out + 5]: 4 + 2
    assert {k: report[k] for k in ("updates", "train_seconds", "curve", "train_log")} == {
        "updates": 6, "train_seconds": 12.3, "curve": STATE["curve"], "train_log": STATE["train"]}


def test_load_pretrained_bart_still_reads_fp16_exports_exactly(tmp_path, corpus, model):
    fp16_export(model, corpus, tmp_path / "old")
    loaded, _, report = bart_pretraining.load_pretrained_bart(tmp_path / "old")
    assert "storage" not in report
    for name, tensor in loaded.state_dict().items():
        assert tensor.dtype == torch.float32
        assert torch.equal(tensor, model.state_dict()[name].half().float()), name


def test_recompact_keeps_the_training_record_and_traces_the_old_file(tmp_path, vocab, corpus, model):
    old = fp16_export(model, corpus, tmp_path / "old")
    old_bytes = (tmp_path / "old" / "model.safetensors").read_bytes()
    report = bart_pretraining.recompact(tmp_path / "old", tmp_path / "new", corpus=corpus)
    assert (tmp_path / "old" / "model.safetensors").read_bytes() == old_bytes        # --out elsewhere: untouched
    assert report == json.loads((tmp_path / "new" / "report.json").read_text())
    assert {k: report[k] for k in TRAINING_FIELDS} == {k: old[k] for k in TRAINING_FIELDS}
    assert report["recompacted_from"] == {"file_sha256": old["file_sha256"], "size_bytes": old["size_bytes"],
                                          "storage": "fp16", "held_out": old["held_out"]}
    path = tmp_path / "new" / "model.safetensors"
    assert report["storage"] == dtypes(path)[1]["storage"] == STORAGE
    assert report["file_sha256"] == sha256_file(path) and report["size_bytes"] == path.stat().st_size
    assert report["size_bytes"] < old["size_bytes"]
    loaded, _, _ = bart_pretraining.load_pretrained_bart(tmp_path / "new")
    again = bart_pretraining.denoising_accuracy(loaded, corpus.held_out, vocab, TINY, unigram_top=corpus.unigram_top)
    assert again == report["held_out"] and report["examples"] != old["examples"]

    # the same measuring and writing as export: exporting the fp16 weights gives the same tensors and figures
    # (the file hashes may differ: safetensors writes the metadata's keys in no fixed order)
    fp16_weights, _, _ = bart_pretraining.load_pretrained_bart(tmp_path / "old")
    exported = bart_pretraining.export(fp16_weights, STATE, corpus, tmp_path / "exported", recipe=TINY)
    for key in ("held_out", "examples", "size_bytes", "storage"):
        assert exported[key] == report[key], key
    assert dtypes(tmp_path / "exported" / "model.safetensors")[1] == dtypes(path)[1]    # content_sha256 included

    # in place (the default out), then a second time: nothing left to do
    shutil.copytree(tmp_path / "old", tmp_path / "inplace")
    (tmp_path / "inplace" / "model.safetensors").chmod(0o644)                 # as git checks it out
    inplace = bart_pretraining.recompact(tmp_path / "inplace", corpus=corpus)
    assert stat.S_IMODE((tmp_path / "inplace" / "model.safetensors").stat().st_mode) == 0o644   # kept
    assert {k: v for k, v in inplace.items() if k != "file_sha256"} == {
        k: v for k, v in report.items() if k != "file_sha256"}
    assert sorted(p.name for p in (tmp_path / "inplace").iterdir()) == ["model.safetensors", "report.json"]
    with pytest.raises(ValueError, match=r"already stored as 'int8-rowwise': nothing to recompact"):
        bart_pretraining.recompact(tmp_path / "inplace", corpus=corpus)


def test_recompact_command_builds_the_corpus_from_the_recipe(tmp_path, corpus, model, monkeypatch, capsys):
    old = fp16_export(model, corpus, tmp_path / "old")
    built = []

    def build_corpus(recipe):
        built.append(recipe)
        return corpus

    monkeypatch.setattr(bart_pretraining, "build_corpus", build_corpus)
    assert bart_cli(["recompact", "--model", str(tmp_path / "old"), "--out", str(tmp_path / "new")]) == 0
    assert built == [TINY]                                                   # the report's recipe
    out = json.loads(capsys.readouterr().out)
    report = json.loads((tmp_path / "new" / "report.json").read_text())
    assert out["storage"] == ["fp16", "int8-rowwise"]
    assert out["size_bytes"] == [old["size_bytes"], report["size_bytes"]]
    assert out["held_out"]["fill_accuracy"] == [round(old["held_out"]["fill_accuracy"], 4),
                                                round(report["held_out"]["fill_accuracy"], 4)]


def test_recompact_refuses_what_it_cannot_keep_or_measure(tmp_path, vocab, corpus, model):
    with pytest.raises(TypeError, match=r"directory must be a folder path \(str or Path\) or None, got int"):
        bart_pretraining.recompact(3)
    with pytest.raises(TypeError, match=r"out must be a folder path \(str or Path\) or None, got list"):
        bart_pretraining.recompact(tmp_path, ["x"])
    with pytest.raises(TypeError, match=r"corpus must be a PretrainingCorpus or None, got list"):
        bart_pretraining.recompact(tmp_path, corpus=[[1, 2]])
    with pytest.raises(FileNotFoundError, match=r"no report at"):
        bart_pretraining.recompact(tmp_path / "nothing", corpus=corpus)
    old = fp16_export(model, corpus, tmp_path / "old")
    other = PretrainingCorpus(vocab, corpus.train, corpus.held_out, corpus.sources, unigram_top=corpus.unigram_top + 1)
    with pytest.raises(ValueError, match=r"corpus is not the one the model of .* was trained on"):
        bart_pretraining.recompact(tmp_path / "old", tmp_path / "new", corpus=other)
    assert not (tmp_path / "new").exists()                                   # refused before writing anything
    (tmp_path / "old" / "report.json").write_text(json.dumps({k: v for k, v in old.items() if k != "curve"}))
    with pytest.raises(ValueError, match=r"lacks \['curve'\]: recompact keeps the training record"):
        bart_pretraining.recompact(tmp_path / "old", tmp_path / "new", corpus=corpus)

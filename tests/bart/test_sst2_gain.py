"""coursekit.bart.finetuning.sst2_gain and ``python -m coursekit.bart sst2`` on a tiny BART saved to a temporary
folder with a small ``downstream.json`` (8 training sentences, 2 updates): the real SST-2 dev set is scored, so
``n_dev`` is 872, but nothing takes more than a few seconds. The committed model is never fine-tuned here."""

from __future__ import annotations

import json
from dataclasses import asdict, replace

import pytest
import torch
from helpers.tiny_models import TINY_BART, bart_vocab

from coursekit.bart import __main__ as bart_main
from coursekit.bart import pretraining as bart_pretraining
from coursekit.bart.__main__ import main as bart_cli
from coursekit.bart.corpus import RECIPE
from coursekit.bart.finetuning import FinetuneRecipe, sst2_gain
from coursekit.data import sha256_file
from coursekit.training import loop as train

# The tiny architecture, with the committed positions: sst2_data cuts the dev sentences to those.
ARCH = replace(TINY_BART, arch=TINY_BART.arch | {"max_len": RECIPE.arch["max_len"]})
TINY_RECIPE = FinetuneRecipe(n_sst2=8, n_sst2_select=2, sst2_updates=2, sst2_batch=4, sst2_lrs=(1e-3, 3e-3))
COMMITTED = {"pretrained": {"chosen_lr": 1e-3, "mean": 0.61}, "random": {"chosen_lr": 3e-3, "mean": 0.55}}


@pytest.fixture(scope="module")
def model_folder(tmp_path_factory):
    """A coursekit BART directory as export writes it (model.safetensors, report.json) plus downstream.json."""
    folder = tmp_path_factory.mktemp("tiny_bart")
    vocab = bart_vocab()
    torch.manual_seed(0)
    model = bart_pretraining.build_bart(ARCH, vocab)
    path = train.save_checkpoint(folder / "model.safetensors", model.half(), model.config,
                                 extra={"recipe": asdict(ARCH), "tokenizer_sha256": vocab.subwords.sha256(),
                                        "mask_id": str(vocab.mask_id)})
    (folder / "report.json").write_text(json.dumps({"recipe": asdict(ARCH), "file_sha256": sha256_file(path)}))
    table = {"recipe": asdict(TINY_RECIPE), "seeds": [0], "sst2": {"n_test": 872, "summary": COMMITTED}}
    (folder / "downstream.json").write_text(json.dumps(table))
    return folder


def test_sst2_gain_fine_tunes_both_starts_at_their_committed_rates(model_folder):
    before = (model_folder / "model.safetensors").read_bytes()
    lines = []
    r = sst2_gain(model_folder, (0, 1), log=lines.append)
    assert set(r) == {"pretrained", "random", "gain", "n_dev", "seconds", "seeds", "per_seed", "lr", "committed"}
    assert r["n_dev"] == 872 and r["seeds"] == [0, 1]
    assert r["lr"] == {"pretrained": 1e-3, "random": 3e-3}
    assert r["committed"] == {"pretrained": 0.61, "random": 0.55}
    for init in ("pretrained", "random"):
        assert len(r["per_seed"][init]) == 2 and all(0 <= a <= 1 for a in r["per_seed"][init])
        assert r[init] == round(sum(r["per_seed"][init]) / 2, 4)
    assert r["gain"] == round(100 * (r["pretrained"] - r["random"]), 2)
    logged = [json.loads(line) for line in lines]
    assert [(x["seed"], x["init"], x["lr"]) for x in logged] == [
        (0, "pretrained", 1e-3), (0, "random", 3e-3), (1, "pretrained", 1e-3), (1, "random", 3e-3)]
    assert (model_folder / "model.safetensors").read_bytes() == before            # fine-tuned copies only
    # every seed starts from the saved weights (not from the previous seed's fine-tuned model), and repeats
    again = sst2_gain(model_folder, (1,))
    assert again["per_seed"]["pretrained"] == r["per_seed"]["pretrained"][1:]
    assert again["per_seed"]["random"] == r["per_seed"]["random"][1:]


def test_cli_prints_the_json_and_the_line(model_folder, capsys, monkeypatch):
    threads = torch.get_num_threads()
    try:
        assert bart_cli(["sst2", "--model", str(model_folder), "--seeds", "1", "--threads", "1", "--json"]) == 0
    finally:
        torch.set_num_threads(threads)
    out = json.loads(capsys.readouterr().out)
    assert out["seeds"] == [0] and out["n_dev"] == 872 and out["committed"]["random"] == 0.55
    monkeypatch.setattr(bart_main, "sst2_gain", lambda model, seeds: out)          # the same figures, as a line
    assert bart_cli(["sst2", "--model", str(model_folder)]) == 0
    line = capsys.readouterr().out
    assert line.startswith("SST-2 dev (872 sentences, 1 seed): pre-trained ")
    assert "committed table: 0.610 vs 0.550" in line
    with pytest.raises(SystemExit):
        bart_cli(["sst2", "--model", str(model_folder), "--seeds", "0"])

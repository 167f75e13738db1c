"""coursekit.bench.speed: every comparison runs and reports consistent numbers (a benchmark: nothing about time)."""

from __future__ import annotations

import json
import shutil

import pytest
import torch
from helpers import ROOT

from coursekit.bench import speed as bench
from coursekit.bench.__main__ import main as bench_cli


def test_quick_json_lists_every_comparison(capsys):
    assert bench_cli(["--quick", "--json", "--threads", str(torch.get_num_threads())]) == 0
    rows = json.loads(capsys.readouterr().out)
    names = [r["name"] for r in rows]
    for words in ("F.scaled_dot_product_attention", "nn.MultiheadAttention", "nn.RNN", "nn.LSTM", "nn.Transformer",
                  "GPT"):
        assert any(words in n for n in names), (words, names)
    for r in rows:
        assert r["ours_per_s"] > 0 and r["reference_per_s"] > 0
        # ratio is rounded to 3 decimals (±5e-4: 0.8 % of a ratio of 0.065), the rates to 0.1
        assert r["ratio"] == pytest.approx(r["ours_per_s"] / r["reference_per_s"], rel=2e-3, abs=5e-4)
    gpt = next(r for r in rows if r["name"].startswith("GPT"))
    assert 0 < gpt["mfu"] < 1


def test_out_file_records_the_machine(tmp_path):
    out = tmp_path / "bench.json"
    bench_cli(["--quick", "--out", str(out)])
    result = json.loads(out.read_text())
    assert result["matmul_gflops"] > 0 and result["torch_threads"] >= 1
    assert {"load_average_before", "load_average_after", "torch", "sizes"} <= set(result)
    assert len(result["rows"]) == 7


def test_same_weights_same_outputs():
    """The pairs are timed on equal footing: ours and the reference compute the same function."""
    from coursekit.attention import MultiHeadAttention, causal_mask
    from coursekit.rnn.layers import from_torch

    torch.manual_seed(0)
    ref = torch.nn.MultiheadAttention(16, 4, batch_first=True)
    x = torch.randn(2, 5, 16)
    ours = MultiHeadAttention.from_torch(ref)
    want = ref(x, x, x, attn_mask=~causal_mask(5), need_weights=False)[0]
    torch.testing.assert_close(ours(x, causal=True)[0], want, atol=1e-5, rtol=1e-5)
    lstm = torch.nn.LSTM(16, 8, num_layers=2, batch_first=True)
    torch.testing.assert_close(from_torch(lstm)(x)[0], lstm(x)[0], atol=1e-5, rtol=1e-5)


def test_time_pair_counts_each_side_separately():
    calls = []
    seconds = bench.time_pair(lambda: calls.append("a"), lambda: calls.append("b"), steps=3, warmup=1)
    assert calls.count("a") == calls.count("b") == 4 and all(s >= 0 for s in seconds)
    assert calls[2:4] == ["b", "a"] and calls[4:6] == ["a", "b"]     # who goes first alternates


@pytest.mark.skipif(not any(shutil.which(cc) for cc in ("c++", "g++", "clang++")),
                    reason="torch.compile's CPU backend needs a C++ compiler")
def test_compile_row_times_the_compiled_gpt_against_the_same_model_eager():
    row = bench.bench_compile(bench.QUICK)
    assert row["name"] == "GPT under torch.compile vs eager" and row["compile_seconds"] > 0
    assert row["ours_per_s"] > 0 and row["reference_per_s"] > 0
    assert row["ratio"] == pytest.approx(row["ours_per_s"] / row["reference_per_s"], rel=2e-3)


def test_readme_speed_table_is_the_committed_run():
    """README's table of ratios is data/bench/bench.json, row by row (rounded to two decimals)."""
    rows = {r["name"]: r for r in json.loads((ROOT / "data/bench/bench.json").read_text())["rows"]}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("| comparison | ratio |"):].split("\n\n")[0].splitlines()[2:]
    readme_rows = {line.split(" | ")[0].strip("| "): line.split(" | ")[1] for line in table}
    which = {"multi-head attention vs `nn.MultiheadAttention`": "multi-head attention vs nn.MultiheadAttention",
             "Transformer vs `nn.Transformer`": "Transformer vs nn.Transformer",
             "GPT vs a pre-LN `nn.TransformerEncoderLayer` stack": "GPT vs nn.TransformerEncoderLayer stack (causal)",
             "GPT under `torch.compile` vs the same GPT eager": "GPT under torch.compile vs eager",
             "our attention with `need_weights=False` (the fused kernel behind our input checks)":
                 "attention (need_weights=False) vs F.scaled_dot_product_attention",
             "attention written out (it returns its weights) vs `F.scaled_dot_product_attention`":
                 "attention (explicit) vs F.scaled_dot_product_attention",
             "RNN, 2 layers, vs `nn.RNN`": "RNN (2 layers) vs nn.RNN",
             "LSTM, 2 layers, vs `nn.LSTM`": "LSTM (2 layers) vs nn.LSTM"}
    assert set(readme_rows) == set(which) and set(which.values()) == set(rows)
    for label, name in which.items():
        assert float(readme_rows[label].split()[0]) == round(rows[name]["ratio"], 2), label
    mfu = rows["GPT vs nn.TransformerEncoderLayer stack (causal)"]["mfu"]
    assert f"model-FLOPs utilisation {mfu:.2f}" in readme_rows["GPT vs a pre-LN `nn.TransformerEncoderLayer` stack"]

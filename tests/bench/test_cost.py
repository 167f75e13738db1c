"""coursekit.bench.cost: the measured memory is the activations autograd keeps, and it grows as the theory says."""

from __future__ import annotations

import json

import torch

from coursekit.bench import cost
from coursekit.bench.__main__ import cost_main


def test_saved_bytes_counts_activations_not_parameters_or_inputs():
    w = torch.randn(8, 8, requires_grad=True)
    x = torch.randn(4, 8, requires_grad=True)
    nbytes, out = cost.saved_bytes(lambda: torch.tanh(x @ w))       # tanh saves its (4, 8) output
    assert nbytes == 4 * 8 * 4 and out.shape == (4, 8)


def test_explicit_attention_keeps_the_weights_fused_does_not():
    rows = cost.attention_cost((32, 64), batch=2, n_heads=2, d_head=8, repeat=1)
    saved = {(r["impl"], r["T"]): r["saved_MiB"] * 2 ** 20 for r in rows}
    # explicit: at least the (B, H, T, T) float32 weights; doubling T multiplies it by ~4
    assert saved["explicit", 64] >= 2 * 2 * 64 * 64 * 4
    assert saved["explicit", 64] / saved["explicit", 32] > 3.5
    # fused: linear in T (output and log-sum-exp), far below the explicit version
    assert saved["fused", 64] / saved["fused", 32] < 2.2
    assert saved["fused", 64] < saved["explicit", 64] / 4
    peak = {(r["impl"], r["T"]): r["peak_MiB"] for r in rows}
    assert peak["explicit", 64] > 2 * peak["fused", 64]


def test_peak_memory_sees_temporaries_and_frees():
    x = torch.randn(256, 256)
    with cost.PeakMemory() as m:
        y = (x * 2).sum()               # a 256 KiB temporary, freed before .sum() returns its 4 bytes
    assert m.peak >= 256 * 256 * 4 and m.live < 256 * 256 * 4
    assert y.shape == ()


def test_quadratic_onset_finds_where_doubling_starts_to_more_than_triple():
    def rows(seconds):
        return [{"model": "m", "impl": "i", "T": T, "seconds": seconds(T)} for T in (64, 128, 256, 512, 1024, 2048)]

    assert cost.quadratic_onset(rows(lambda T: 3e-3 * T + 1e-5 * T ** 2)) == 512      # ×3 once T ≥ a/b = 300
    assert cost.quadratic_onset(rows(lambda T: 1e-3 * T)) is None
    assert cost.quadratic_onset(rows(lambda T: 1e-6 * T ** 2)) == 64


def test_cli_quick_writes_json_and_figure(tmp_path):
    out, fig = tmp_path / "cost.json", tmp_path / "cost.png"
    assert cost_main(["--quick", "--out", str(out), "--plot", str(fig)]) == 0
    result = json.loads(out.read_text())
    assert {(r["model"], r["impl"]) for r in result["rows"]} == {
        ("attention", "explicit"), ("attention", "fused"), ("Transformer", "ours"), ("Transformer", "nn.Transformer")}
    assert fig.stat().st_size > 10_000

import matplotlib

matplotlib.use("Agg")

import pytest
import torch

from coursekit import viz, widgets


def test_plot_curves_and_heatmap():
    ax = viz.plot_curves({"train": ([1, 2, 3], [3.0, 2.0, 1.0]), "val": ([1, 3], [3.5, 1.5])}, logy=True, title="t")
    assert len(ax.lines) == 2 and ax.get_yscale() == "log"
    ax = viz.heatmap(torch.rand(2, 3), xlabels=["a", "b", "c"], ylabels=["x", "y"], title="attn")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]
    with pytest.raises(ValueError, match="2 labels for 3 columns"):
        viz.heatmap(torch.rand(2, 3), xlabels=["a", "b"])
    with pytest.raises(ValueError, match="2-D"):
        viz.heatmap(torch.rand(2, 3, 4))
    with pytest.raises(ValueError, match="3 x values but 2 y values"):
        viz.plot_curves({"bad": ([1, 2, 3], [1, 2])})


def test_show_table_prints_outside_a_notebook(capsys):
    assert viz.show_table([{"model": "a", "acc": 0.5}, {"model": "b", "acc": 0.75}], title="results") is None
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "results" and out[1].split() == ["model", "acc"] and out[3].split() == ["b", "0.75"]


def test_explorer_static_fallback(monkeypatch, capsys):
    monkeypatch.setenv("COURSEKIT_HEADLESS", "1")
    seen = []
    examples = [{"word": "king", "k": 3}, {"word": "queen", "k": 5}]
    assert widgets.explorer(lambda word, k: seen.append((word, k)), examples, word="king", k=(1, 10)) is None
    assert seen == [("king", 3), ("queen", 5)]
    assert "static view" in capsys.readouterr().out
    with pytest.raises(ValueError, match="not controls"):
        widgets.explorer(lambda word: None, [{"wrod": "x"}], word="x")
    with pytest.raises(ValueError, match="at least one static example"):
        widgets.explorer(lambda word: None, [], word="x")


def test_headless_detection(monkeypatch):
    monkeypatch.setenv("COURSEKIT_HEADLESS", "1")
    assert widgets.headless()
    monkeypatch.setenv("COURSEKIT_HEADLESS", "0")
    assert widgets.headless()  # plain pytest is not a kernel either

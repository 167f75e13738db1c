import matplotlib

matplotlib.use("Agg")

import pytest
import torch

from coursekit.viz import plots as viz
from coursekit.viz import widgets


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
    assert out[0] == "results" and out[1].split() == ["model", "acc"] and out[3].split() == ["b", "0.750"]


def test_show_table_in_a_notebook_has_a_plain_text_form(monkeypatch):
    """In IPython the table is HTML for the notebook and the same aligned text as its plain-text form, not a
    Styler's ``<pandas.io.formats.style.Styler at 0x…>`` (which changed with every run of a stored notebook)."""
    import IPython
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython, "get_ipython", lambda: object())
    monkeypatch.setattr(IPython.display, "display", shown.append)
    viz.show_table([{"model": "a", "acc": 0.5}, {"model": "b", "acc": 0.75}])
    (table,) = shown
    assert [line.split() for line in repr(table).splitlines()] == [["model", "acc"], ["a", "0.500"], ["b", "0.750"]]
    html = table._repr_html_()
    assert "<table" in html and "0.750" in html and "Styler" not in repr(table)


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


def test_live_explorer_draws_under_the_drawing_lock(monkeypatch):
    # Live (not headless), explorer displays one ipywidgets.interactive whose every update holds
    # widgets._DRAWING: another thread (a second widget message, a post_execute flush) cannot take it.
    import threading

    import ipywidgets
    from IPython import display as ipython_display

    shown = []
    monkeypatch.setattr(widgets, "headless", lambda: False)
    monkeypatch.setattr(ipython_display, "display", lambda *objs, **kw: shown.extend(objs))
    free_while_drawing = []

    def render(k=1):
        probe = threading.Thread(target=lambda: free_while_drawing.append(widgets._DRAWING.acquire(blocking=False)))
        probe.start()
        probe.join()

    assert widgets.explorer(render, [{"k": 2}], k=(1, 5)) is None
    assert len(shown) == 1 and isinstance(shown[0], ipywidgets.interactive)  # displayed exactly once
    shown[0].kwargs_widgets[0].value = 3  # a control moved: update runs again
    assert free_while_drawing == [False, False]
    assert widgets._DRAWING.acquire(blocking=False)  # released after each update
    widgets._DRAWING.release()


def test_matplotlib_hooks_wait_for_a_drawing_explorer():
    # After every comm message (on whichever thread handled it) IPython runs post_execute, where
    # matplotlib-inline shows and closes all open figures and pyplot redraws the stale ones: guarded, they
    # wait while an explorer draws on another thread. Other callbacks are left alone.
    import threading
    from types import SimpleNamespace

    import matplotlib.pyplot as plt
    from IPython.core.events import EventManager, available_events
    from matplotlib_inline.backend_inline import flush_figures

    def other():
        pass

    events = EventManager(None, available_events)
    for callback in (other, flush_figures, plt._draw_all_if_interactive):
        events.register("post_execute", callback)
    shell = SimpleNamespace(events=events)
    assert widgets._guard_matplotlib_hooks(shell) == 2 and widgets._guard_matplotlib_hooks(shell) == 2  # idempotent
    first, flush, draw_all = events.callbacks["post_execute"]
    assert first is other
    assert isinstance(flush, widgets._AfterDrawing) and flush.callback is flush_figures
    assert isinstance(draw_all, widgets._AfterDrawing) and draw_all.callback is plt._draw_all_if_interactive
    events.register("post_execute", flush_figures)  # %matplotlib inline again: not a second flush
    assert len(events.callbacks["post_execute"]) == 3
    events.unregister("post_execute", flush_figures)  # another backend: the flush goes
    assert events.callbacks["post_execute"] == [other, draw_all]
    assert widgets._guard_matplotlib_hooks(SimpleNamespace(events=EventManager(None, available_events))) == 0

    order = []
    guarded = widgets._AfterDrawing(lambda: order.append("flushed"))
    with widgets._DRAWING:
        flusher = threading.Thread(target=guarded)
        flusher.start()
        flusher.join(timeout=0.3)
        assert flusher.is_alive()  # held back while drawing
        order.append("drawn")
    flusher.join(timeout=5)
    assert order == ["drawn", "flushed"]

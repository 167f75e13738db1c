"""Bad calls to coursekit.viz (plots and widgets): each must give a clear error.

One row per thing that can go wrong (see ``tests/helpers/bad_inputs.py``): the error type, a regex its
message must match (the argument's name, what was expected, what arrived), raised by coursekit itself.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import torch
from helpers.bad_inputs import Bad, bad_call_test

from coursekit.viz import plots as viz
from coursekit.viz import png, widgets, wording

EXEMPT = {
    "coursekit.viz.widgets.headless": "takes no arguments: it reads $COURSEKIT_HEADLESS",
}


# ==============================================================================================
# coursekit.viz.plots and coursekit.viz.widgets
# ==============================================================================================

VIZ = [
    Bad("a list of pairs", viz.plot_curves, lambda: viz.plot_curves([([1, 2], [3, 4])]), TypeError,
        r"curves must be a dict name -> \(xs, ys\), got list"),
    Bad("no curve", viz.plot_curves, lambda: viz.plot_curves({}), ValueError, r"curves must not be empty"),
    Bad("ys alone", viz.plot_curves, lambda: viz.plot_curves({"loss": np.arange(5.0)}), TypeError,
        r"curve 'loss' must be an \(xs, ys\) pair, got ndarray"),
    Bad("xs and ys of different lengths", viz.plot_curves, lambda: viz.plot_curves({"bad": ([1, 2, 3], [1, 2])}),
        ValueError, r"curve 'bad': 3 x values but 2 y values"),

    Bad("3-D matrix", viz.heatmap, lambda: viz.heatmap(torch.rand(2, 3, 4)), ValueError,
        r"heatmap needs a 2-D matrix, got shape \(2, 3, 4\)"),
    Bad("labels of another count", viz.heatmap, lambda: viz.heatmap(torch.rand(2, 3), xlabels=["a", "b"]),
        ValueError, r"xlabels has 2 labels for 3 columns"),
    Bad("labels as one string", viz.heatmap, lambda: viz.heatmap(torch.rand(2, 3), xlabels="abc"), TypeError,
        r"xlabels must be a list of labels, got str"),
    Bad("empty matrix", viz.heatmap, lambda: viz.heatmap(np.zeros((0, 3))), ValueError,
        r"heatmap needs a non-empty matrix, got shape \(0, 3\)"),
    Bad("strings", viz.heatmap, lambda: viz.heatmap([["a", "b"]]), TypeError,
        r"heatmap needs a matrix of numbers, got <U1"),

    Bad("one dict instead of a list", viz.show_table, lambda: viz.show_table({"a": 1}), TypeError,
        r"rows must be a list of dicts \(one per row\), got dict"),
    Bad("lists instead of dicts", viz.show_table, lambda: viz.show_table([[1, 2]]), TypeError,
        r"rows must hold dicts \(column -> value\), got list"),
    Bad("printf-style floatfmt", viz.show_table, lambda: viz.show_table([{"a": 1.0}], floatfmt="%.3f"), ValueError,
        r"floatfmt must be a format string such as '\{:.3f\}', got '%.3f'"),
]

WIDGETS = [
    Bad("no static example", widgets.explorer, lambda: widgets.explorer(lambda word: None, [], word="x"), ValueError,
        r"explorer needs at least one static example"),
    Bad("an example with an unknown argument", widgets.explorer,
        lambda: widgets.explorer(lambda word: None, [{"wrod": "x"}], word="x"), ValueError,
        r"uses arguments \['wrod'\] that are not controls \(\['word'\]\)"),
    Bad("render not callable", widgets.explorer, lambda: widgets.explorer("show", [{"word": "x"}], word="x"),
        TypeError, r"render must be a function, got str"),
    Bad("one dict instead of a list", widgets.explorer,
        lambda: widgets.explorer(lambda word: None, {"word": "x"}, word="x"), TypeError,
        r"static_examples must be a list of dicts, got dict"),
    Bad("examples that are not dicts", widgets.explorer,
        lambda: widgets.explorer(lambda word: None, ["x"], word="x"), TypeError,
        r"each static example must be a dict of keyword arguments, got str"),
]


# ==============================================================================================
# coursekit.viz.wording
# ==============================================================================================

WORDING = [
    Bad("a length instead of a count", wording.noun, lambda: wording.noun(["a", "b"], "split"), TypeError,
        r"n must be an int \(a count\), got list \['a', 'b'\]"),
    Bad("a negative count", wording.noun, lambda: wording.noun(-2, "split"), ValueError,
        r"n must be a count \(≥ 0\), got -2"),
    Bad("a blank noun", wording.noun, lambda: wording.noun(2, "  "), TypeError,
        r"singular must be a non-empty str \(the noun\), got str '  '"),
    Bad("a float count", wording.counted, lambda: wording.counted(2.0, "thread"), TypeError,
        r"n must be an int \(a count\), got float 2.0"),
    Bad("a bool count", wording.counted, lambda: wording.counted(True, "thread"), TypeError,
        r"n must be an int \(a count\), got bool True"),
    Bad("a count as a string (a stored run's torch_threads)", wording.counted, lambda: wording.counted("2", "thread"),
        TypeError, r"n must be an int \(a count\), got str '2'"),
    Bad("a negative count", wording.counted, lambda: wording.counted(-1, "thread"), ValueError,
        r"n must be a count \(≥ 0\), got -1"),
    Bad("an empty noun", wording.counted, lambda: wording.counted(2, ""), TypeError,
        r"singular must be a non-empty str \(the noun\), got str ''"),
    Bad("the arguments swapped", wording.counted, lambda: wording.counted("thread", 2), TypeError,
        r"n must be an int \(a count\), got str 'thread'"),
    Bad("a plural that is no str", wording.counted, lambda: wording.counted(2, "child", ["children"]), TypeError,
        r"plural must be a non-empty str \(the noun\), got list \['children'\]"),
    Bad("a numpy integer is a count", wording.counted, lambda: wording.counted(np.int64(1000), "pair"),
        returns=lambda value: value == "1,000 pairs"),
]


# ==============================================================================================
# coursekit.viz.png
# ==============================================================================================

PNG = [
    Bad("base64 text instead of the PNG's bytes", png.compact_png, lambda: png.compact_png("iVBORw0KGgo="),
        TypeError, r"data must be the bytes of a PNG, got str"),
    Bad("a path instead of a figure", png.save_figure, lambda: png.save_figure("fig.png", "out.png"), TypeError,
        r"fig must be a matplotlib Figure, got str"),
    Bad("a PDF path", png.save_figure, lambda: png.save_figure(plt.figure(), "cost.pdf"), ValueError,
        r"path must name a \.png file, got 'cost\.pdf'"),
]


ROWS = VIZ + WIDGETS + WORDING + PNG

test_bad_call = bad_call_test(ROWS)

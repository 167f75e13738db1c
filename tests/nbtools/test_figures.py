"""coursekit.nbtools.figures: a notebook's stored PNGs re-encoded in place (the palette: tests/viz/test_png.py)."""

from __future__ import annotations

import base64

import nbformat
import pytest
from helpers.figures import figure_png

from coursekit.nbtools import figures


def test_notebook_outputs_compacted_in_place_and_text_untouched(tmp_path):
    png = base64.b64encode(figure_png()).decode("ascii")
    cell = nbformat.v4.new_code_cell("plot()", outputs=[
        nbformat.v4.new_output("display_data", data={"image/png": png, "text/plain": "<Figure>"}),
        nbformat.v4.new_output("stream", name="stdout", text="BLEU 43.33\n")])
    path = tmp_path / "nb.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), str(path))
    saved = figures.compact_file(path)
    nb = nbformat.read(str(path), as_version=4)
    outputs = nb.cells[0].outputs
    assert saved > 0 and len(outputs[0]["data"]["image/png"]) < len(png)
    assert outputs[0]["data"]["text/plain"] == "<Figure>" and outputs[1]["text"] == "BLEU 43.33\n"
    assert figures.compact_file(path) == 0                       # a second pass finds nothing left to shrink


@pytest.mark.parametrize("name", ["07_self_attention", "13_modern_decoders"])
def test_committed_notebooks_store_compact_figures(name):
    """`nbtools run` compacts what it saves, so a committed notebook has nothing left to shrink."""
    from coursekit.nbtools.execution import NOTEBOOKS

    nb = nbformat.read(str(NOTEBOOKS / f"{name}.ipynb"), as_version=4)
    assert figures.compact_figures(nb) == 0

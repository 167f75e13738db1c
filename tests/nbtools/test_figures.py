"""coursekit.nbtools.figures: stored PNGs re-encoded with a 256-colour palette, smaller and still the figure."""

from __future__ import annotations

import base64
import io

import matplotlib
import nbformat
import numpy as np
import pytest

from coursekit.nbtools import figures

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from PIL import Image  # noqa: E402


def figure_png() -> bytes:
    """A figure like the course's: a heatmap with a colour bar and a line plot, saved as a full-colour PNG."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(6, 2.5))
    image = a.imshow(np.random.default_rng(0).random((12, 12)), cmap="magma")
    fig.colorbar(image, ax=a)
    b.plot(np.sin(np.linspace(0, 6, 100)), marker=".")
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=80)
    plt.close(fig)
    return out.getvalue()


def test_palette_png_is_smaller_and_the_same_picture():
    data = figure_png()
    small = figures.compact_png(data)
    assert len(small) < 0.8 * len(data)
    with Image.open(io.BytesIO(data)) as before, Image.open(io.BytesIO(small)) as after:
        assert after.mode == "P" and after.size == before.size
        diff = np.abs(np.asarray(before.convert("RGB"), dtype=int) - np.asarray(after.convert("RGB"), dtype=int))
    assert diff.mean() < 2 and np.percentile(diff, 99) < 40     # colours move a little, the picture does not


def test_a_palette_png_is_returned_as_it_is():
    small = figures.compact_png(figure_png())
    assert figures.compact_png(small) is small


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

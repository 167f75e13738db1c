"""coursekit.viz.png: PNGs re-encoded with a 256-colour palette, smaller and still the figure; figures saved so."""

from __future__ import annotations

import io

import numpy as np
from helpers.figures import course_figure, figure_png
from PIL import Image

from coursekit.viz.png import compact_png, save_figure


def pixel_difference(a: bytes, b: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(a)) as before, Image.open(io.BytesIO(b)) as after:
        assert after.size == before.size
        return np.abs(np.asarray(before.convert("RGB"), dtype=int) - np.asarray(after.convert("RGB"), dtype=int))


def test_palette_png_is_smaller_and_the_same_picture():
    data = figure_png()
    small = compact_png(data)
    assert len(small) < 0.8 * len(data)
    with Image.open(io.BytesIO(small)) as after:
        assert after.mode == "P"
    diff = pixel_difference(data, small)
    assert diff.mean() < 2 and np.percentile(diff, 99) < 40     # colours move a little, the picture does not


def test_a_palette_png_is_returned_as_it_is():
    small = compact_png(figure_png())
    assert compact_png(small) is small


def test_save_figure_writes_the_palette_version(tmp_path):
    """What a command line's ``--plot`` writes (e.g. ``python -m coursekit.bench cost --plot``): the figure that
    ``savefig`` gives, palette-encoded."""
    import matplotlib.pyplot as plt

    fig = course_figure()
    full = io.BytesIO()
    fig.savefig(full, format="png", dpi=80)
    path = save_figure(fig, tmp_path / "cost.png", dpi=80)
    plt.close(fig)
    written = path.read_bytes()
    assert path == tmp_path / "cost.png" and written == compact_png(full.getvalue())
    assert len(written) < 0.8 * len(full.getvalue())

"""A figure like the course's, as full-colour PNG bytes: what the palette tests of coursekit.viz.png and
coursekit.nbtools.figures compress."""

from __future__ import annotations

import io

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def course_figure():
    """A heatmap with a colour bar and a line plot (the caller closes it)."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(6, 2.5))
    image = a.imshow(np.random.default_rng(0).random((12, 12)), cmap="magma")
    fig.colorbar(image, ax=a)
    b.plot(np.sin(np.linspace(0, 6, 100)), marker=".")
    return fig


def figure_png() -> bytes:
    """:func:`course_figure` saved as a full-colour PNG at 80 dpi."""
    fig = course_figure()
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=80)
    plt.close(fig)
    return out.getvalue()

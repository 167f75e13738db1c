"""Figures as compact PNGs: a 256-colour palette instead of full colour.

Matplotlib writes full-colour PNGs; the course's figures (lines, heatmaps, a few dozen colours in all) look the
same with a palette of 256 and take about half the bytes. Everything the course commits goes through here: the
notebooks' stored figures (:mod:`coursekit.nbtools.figures`), the benchmark figures written by the package's
command lines (:func:`save_figure`) and the site's screenshots. A PNG whose palette version would not be smaller
is left as it is.
"""

from __future__ import annotations

import io
from pathlib import Path

__all__ = ["compact_png", "save_figure"]


def compact_png(data: bytes) -> bytes:
    """``data`` (a PNG) with a 256-colour palette, or ``data`` itself when that is not smaller."""
    from PIL import Image

    if not isinstance(data, bytes):
        raise TypeError(f"data must be the bytes of a PNG, got {type(data).__name__}")
    with Image.open(io.BytesIO(data)) as image:
        if image.mode == "P":                         # already a palette image
            return data
        quantized = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    out = io.BytesIO()
    quantized.save(out, format="PNG", optimize=True)
    return out.getvalue() if out.tell() < len(data) else data


def save_figure(fig, path, *, dpi: int = 100) -> Path:
    """Save a matplotlib figure to ``path`` (a ``.png``) as a compact PNG (:func:`compact_png`); returns the path."""
    from matplotlib.figure import Figure

    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    if not isinstance(path, (str, Path)) or Path(path).suffix.lower() != ".png":
        raise ValueError(f"path must name a .png file, got {path!r}")
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=dpi)
    Path(path).write_bytes(compact_png(out.getvalue()))
    return Path(path)

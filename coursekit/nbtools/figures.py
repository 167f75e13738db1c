"""Stored figures, compact: every PNG output of an executed notebook re-encoded with a 256-colour palette.

Matplotlib writes full-colour PNGs; the course's figures (lines, heatmaps, a few dozen colours in all) look the
same with a palette of 256 and take about half the bytes. The executed notebooks are committed, and the tracked
tree has a budget (``tests/test_tree_size.py``), so :func:`coursekit.nbtools.execution.run` compacts every
notebook it saves. A figure whose palette version would not be smaller is left as it is. nbval does not compare
images, so the stored outputs stay checkable.

    python -m coursekit.nbtools compact-figures notebooks/07_self_attention.ipynb
"""

from __future__ import annotations

import base64
import io
from pathlib import Path

import nbformat

__all__ = ["compact_png", "compact_figures", "compact_file"]


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


def compact_figures(nb: nbformat.NotebookNode) -> int:
    """Re-encode the PNG outputs of ``nb`` in place (:func:`compact_png`); returns the bytes saved."""
    if not isinstance(nb, nbformat.NotebookNode):
        raise TypeError(f"nb must be a notebook read with nbformat (NotebookNode), got {type(nb).__name__}")
    saved = 0
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            encoded = output.get("data", {}).get("image/png")
            if not encoded:
                continue
            data = base64.b64decode(encoded if isinstance(encoded, str) else "".join(encoded))
            smaller = compact_png(data)
            if smaller is not data:
                output["data"]["image/png"] = base64.b64encode(smaller).decode("ascii")
                saved += len(data) - len(smaller)
    return saved


def compact_file(path: Path) -> int:
    """:func:`compact_figures` on an executed ``.ipynb``, written back when anything shrank; returns the bytes saved."""
    path = Path(path)
    if path.suffix != ".ipynb" or not path.is_file():
        raise ValueError(f"path must be an existing .ipynb file, got {str(path)!r}")
    nb = nbformat.read(str(path), as_version=4)
    saved = compact_figures(nb)
    if saved:
        nbformat.write(nb, str(path))
    return saved

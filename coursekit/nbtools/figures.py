"""Stored figures, compact: every PNG output of an executed notebook re-encoded with a 256-colour palette
(:func:`coursekit.viz.png.compact_png`: the same picture at about half the bytes).

The executed notebooks are committed, and the tracked tree has a budget (``tests/test_tree_size.py``), so
:func:`coursekit.nbtools.execution.run` compacts every notebook it saves. A figure whose palette version would
not be smaller is left as it is. nbval does not compare images, so the stored outputs stay checkable.

    python -m coursekit.nbtools compact-figures notebooks/07_self_attention.ipynb
"""

from __future__ import annotations

import base64
from pathlib import Path

import nbformat

from coursekit.viz.png import compact_png

__all__ = ["compact_figures", "compact_file"]


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

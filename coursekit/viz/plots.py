"""Plotting helpers with one look across the course (matplotlib + seaborn)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch


def _as_numpy(x) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.detach().float().cpu().numpy()
    return np.asarray(x)


def plot_curves(curves: Mapping[str, tuple[Sequence[float], Sequence[float]]], ax=None, *, xlabel: str = "step",
                ylabel: str = "loss", logy: bool = False, title: str | None = None):
    """One line per named ``(xs, ys)`` curve, e.g. ``{"train": (steps, losses), "val": ...}``."""
    if not isinstance(curves, Mapping):
        raise TypeError(f"curves must be a dict name -> (xs, ys), got {type(curves).__name__}")
    if not curves:
        raise ValueError("curves must not be empty: give at least one name -> (xs, ys)")
    arrays = {}
    for name, curve in curves.items():
        if not isinstance(curve, (tuple, list)) or len(curve) != 2:
            raise TypeError(f"curve {name!r} must be an (xs, ys) pair, got {type(curve).__name__}")
        xs, ys = _as_numpy(curve[0]), _as_numpy(curve[1])
        if xs.shape != ys.shape:
            raise ValueError(f"curve {name!r}: {len(xs)} x values but {len(ys)} y values")
        arrays[name] = xs, ys
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.5))
    for name, (xs, ys) in arrays.items():
        ax.plot(xs, ys, label=name, marker="o" if len(xs) <= 12 else None)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if logy:
        ax.set_yscale("log")
    if title:
        ax.set_title(title)
    if len(curves) > 1:
        ax.legend()
    ax.grid(alpha=0.3)
    return ax


def heatmap(matrix, xlabels: Sequence[str] | None = None, ylabels: Sequence[str] | None = None, ax=None, *,
            title: str | None = None, cmap: str = "viridis", annot: bool = False, fmt: str = ".2f",
            vmin: float | None = None, vmax: float | None = None, cbar: bool = True):
    """A labelled heatmap (rows = ``ylabels``, e.g. queries; columns = ``xlabels``, e.g. keys)."""
    m = _as_numpy(matrix)
    if m.dtype.kind not in "biuf":
        raise TypeError(f"heatmap needs a matrix of numbers, got {m.dtype}")
    if m.ndim != 2:
        raise ValueError(f"heatmap needs a 2-D matrix, got shape {m.shape}")
    if m.size == 0:
        raise ValueError(f"heatmap needs a non-empty matrix, got shape {m.shape}")
    for labels, size, axis in ((xlabels, m.shape[1], "xlabels"), (ylabels, m.shape[0], "ylabels")):
        if isinstance(labels, str):
            raise TypeError(f"{axis} must be a list of labels, got str")
        if labels is not None and len(labels) != size:
            raise ValueError(f"{axis} has {len(labels)} labels for {size} {'columns' if axis == 'xlabels' else 'rows'}")
    if ax is None:
        _, ax = plt.subplots(figsize=(max(3, 0.45 * m.shape[1] + 1.5), max(2.5, 0.4 * m.shape[0] + 1)))
    # matplotlib directly, laid out as seaborn's heatmap (cells of side 1, row 0 at the top, a label at each
    # cell's centre): seaborn renders the whole figure on every call to test its labels for overlap, which made
    # a 3 × 4 grid of maps take ~1 s per panel
    mesh = ax.pcolormesh(m, cmap=cmap, vmin=vmin, vmax=vmax)
    ax.set_xlim(0, m.shape[1])
    ax.set_ylim(m.shape[0], 0)
    for side in ax.spines.values():
        side.set_visible(False)
    if cbar:
        ax.figure.colorbar(mesh, ax=ax)
    if annot:
        for (i, j), value in np.ndenumerate(m):
            shade = mesh.cmap(mesh.norm(value))
            light = 0.299 * shade[0] + 0.587 * shade[1] + 0.114 * shade[2] > 0.408   # seaborn's choice of ink
            ax.text(j + 0.5, i + 0.5, format(value, fmt), ha="center", va="center", color="0.15" if light else "w")
    for labels, size, axis in ((xlabels, m.shape[1], ax.xaxis), (ylabels, m.shape[0], ax.yaxis)):
        if labels is None:                       # every k-th index, at most about 10 (seaborn's "auto")
            ticks = range(0, size, max(1, size // 10))
            axis.set_ticks([k + 0.5 for k in ticks], [str(k) for k in ticks])
        else:
            axis.set_ticks([k + 0.5 for k in range(size)], [str(label) for label in labels])
    if xlabels is not None:
        plt.setp(ax.get_xticklabels(), rotation=60, ha="right")
    if title:
        ax.set_title(title)
    return ax


def show_table(rows: Sequence[Mapping], title: str | None = None, floatfmt: str = "{:.3f}") -> None:
    """Display a list of dicts as a table: formatted HTML in a notebook, plain text elsewhere.

    Returns nothing, so a table at the end of a cell is not shown twice; build a
    ``pandas.DataFrame(rows)`` yourself when you need the data.
    """
    import pandas as pd

    if isinstance(rows, (str, Mapping)) or not isinstance(rows, Iterable):
        raise TypeError(f"rows must be a list of dicts (one per row), got {type(rows).__name__}")
    rows = list(rows)
    for row in rows:
        if not isinstance(row, Mapping):
            raise TypeError(f"rows must hold dicts (column -> value), got {type(row).__name__}")
    try:
        formats = isinstance(floatfmt, str) and floatfmt.format(1.0) != floatfmt
    except (IndexError, KeyError, ValueError):
        formats = False
    if not formats:
        raise ValueError(f"floatfmt must be a format string such as '{{:.3f}}', got {floatfmt!r}")
    frame = pd.DataFrame(rows)
    if title:
        print(title)
    text = frame.to_string(index=False, float_format=floatfmt.format)
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        get_ipython = lambda: None  # noqa: E731
    if get_ipython() is None:
        print(text)
        return
    styler = frame.style.format({c: floatfmt.format for c in frame.select_dtypes("float").columns}).hide(axis="index")
    display(_Table(styler.to_html(), text))


class _Table:
    """What :func:`show_table` displays: the styled HTML for a notebook, the aligned text as the plain-text
    form (a stored notebook's text view, nbval, a terminal) instead of a Styler's ``<... at 0x…>``."""

    def __init__(self, html: str, text: str) -> None:
        self.html, self.text = html, text

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return self.text

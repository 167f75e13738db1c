"""Interactive explorers with a static fallback.

In a live notebook, :func:`explorer` shows ipywidgets controls driving a ``render`` function. When
no widget front end will ever display them — nbval, CI, ``coursekit.nbtools``, a notebook rendered
on a code host — the environment variable ``COURSEKIT_HEADLESS=1`` is set and the same ``render``
is called on a few fixed examples instead, so the stored notebook still shows what the explorer
does.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

HEADLESS_ENV = "COURSEKIT_HEADLESS"


def headless() -> bool:
    """True when no widget front end is expected (``$COURSEKIT_HEADLESS`` set, or not in a kernel)."""
    if os.environ.get(HEADLESS_ENV, "").strip() not in ("", "0"):
        return True
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:
        return True
    return shell is None or not hasattr(shell, "kernel")


def explorer(render: Callable[..., Any], static_examples: Sequence[dict], **controls: Any):
    """Show ``render`` under ipywidgets ``controls`` (live) or on ``static_examples`` (headless).

    ``controls`` are what ``ipywidgets.interactive`` accepts: a widget, a ``(min, max, step)``
    tuple, a list of options, a string for a text box. Each static example is a dict of the same
    keyword arguments. Returns ``None`` in both cases: the explorer is displayed here, exactly once.
    """
    if not callable(render):
        raise TypeError(f"render must be a function, got {type(render).__name__}")
    if isinstance(static_examples, (str, dict)) or not isinstance(static_examples, Sequence):
        raise TypeError(f"static_examples must be a list of dicts, got {type(static_examples).__name__}")
    if not static_examples:
        raise ValueError("explorer needs at least one static example for the headless fallback")
    for example in static_examples:
        if not isinstance(example, dict):
            raise TypeError(f"each static example must be a dict of keyword arguments, got {type(example).__name__}")
        unknown = set(example) - set(controls)
        if unknown:
            raise ValueError(f"static example {example} uses arguments {sorted(unknown)} that are not controls "
                             f"({sorted(controls)})")
    if headless():
        print(f"(static view: {len(static_examples)} example(s); run the notebook live for the interactive explorer)")
        for example in static_examples:
            render(**example)
        return None
    import ipywidgets
    from IPython.display import display

    widget = ipywidgets.interactive(render, **controls)
    display(widget)
    return None  # displayed once here; returning it too would show it a second time as the cell's value

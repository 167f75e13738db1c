"""Interactive explorers with a static fallback.

In a live notebook, :func:`explorer` shows ipywidgets controls driving a ``render`` function. When
no widget front end will ever display them — nbval, CI, ``coursekit.nbtools``, a notebook rendered
on a code host — the environment variable ``COURSEKIT_HEADLESS=1`` is set and the same ``render``
is called on a few fixed examples instead, so the stored notebook still shows what the explorer
does.

Live, every ``render`` call draws under one lock, which matplotlib's own ``pre/post_execute`` hooks
also take (see :func:`_guard_matplotlib_hooks`): ipykernel 7 handles widget messages on more than one
thread (JupyterLab sends them on a subshell; a fresh widget's first message still goes to the main
shell), and every comm message ends with ``post_execute``, where matplotlib-inline shows and closes
*all* open figures and pyplot redraws every stale one — including a figure that ``render`` is still
drawing on another thread. Without the lock the first change of a fresh explorer (a word pasted into
01's box) often showed a blank or half-drawn plot.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

from coursekit.viz.wording import counted

HEADLESS_ENV = "COURSEKIT_HEADLESS"

# Held while an explorer draws, and by matplotlib's pre/post_execute hooks (see _guard_matplotlib_hooks).
_DRAWING = threading.RLock()


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
        print(f"(static view: {counted(len(static_examples), 'example')}; run the notebook live for the "
              "interactive explorer)")
        for example in static_examples:
            render(**example)
        return None
    import ipywidgets
    from IPython.display import display

    _guard_matplotlib_hooks()
    widget = _serialized_interactive(ipywidgets.interactive)(render, **controls)
    display(widget)
    return None  # displayed once here; returning it too would show it a second time as the cell's value


@functools.cache
def _serialized_interactive(interactive: type) -> type:
    """``ipywidgets.interactive`` whose ``update`` (flush pending figures, clear the output, call
    ``render``, show its figures) runs under the drawing lock, start to end."""

    class SerializedInteractive(interactive):
        def update(self, *args):
            _guard_matplotlib_hooks()  # pyplot registers its hook with its first figure: maybe in render
            with _DRAWING:
                return super().update(*args)

    SerializedInteractive.__name__ = SerializedInteractive.__qualname__ = "interactive"
    return SerializedInteractive


class _AfterDrawing:
    """A matplotlib ``pre/post_execute`` callback (matplotlib-inline's ``flush_figures``, pyplot's
    ``_draw_all_if_interactive``) that waits for an explorer to finish drawing. It compares equal to the
    original, so that ``events.register`` does not add the original a second time and
    ``events.unregister`` (``%matplotlib`` with another backend) removes it."""

    def __init__(self, callback: Callable[..., Any]):
        self.callback = callback

    def __call__(self, *args, **kwargs):
        with _DRAWING:
            return self.callback(*args, **kwargs)

    def __eq__(self, other):
        if isinstance(other, _AfterDrawing):
            other = other.callback
        return other is self.callback or other == self.callback

    def __hash__(self):
        return hash(self.callback)

    def __repr__(self):
        return f"_AfterDrawing({self.callback!r})"


def _guard_matplotlib_hooks(shell=None) -> int:
    """Wrap the ``pre/post_execute`` callbacks that matplotlib registered on ``shell`` (default: the running
    one) in the drawing lock; returns how many are guarded (idempotent)."""
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return 0
        shell = get_ipython()
    events = getattr(shell, "events", None)
    if events is None:
        return 0
    guarded = 0
    for event in ("pre_execute", "post_execute"):
        callbacks = events.callbacks.get(event, [])
        for i, callback in enumerate(callbacks):
            if isinstance(callback, _AfterDrawing):
                guarded += 1
            elif (getattr(callback, "__module__", None) or "").split(".")[0] in ("matplotlib", "matplotlib_inline"):
                callbacks[i] = _AfterDrawing(callback)
                guarded += 1
    return guarded

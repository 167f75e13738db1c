"""Repository-wide pytest setup: test profile, headless widgets, and nbval conventions.

* Tests and nbval default to the ``quick`` profile (set ``COURSEKIT_PROFILE`` to override).
* Widgets render their static fallback (``COURSEKIT_HEADLESS=1``).
* nbval uses ``notebooks/sanitize.cfg`` by absolute path (so pytest can be started from any
  directory) and never compares stderr: warnings differ between machines and library versions.
"""

import os
from pathlib import Path

os.environ.setdefault("COURSEKIT_PROFILE", "quick")
os.environ.setdefault("COURSEKIT_HEADLESS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")


def _one_thread_when_oversubscribed():
    """On a machine busier than its core count, torch's threads spin against each other: use one."""
    import torch

    from coursekit.runtime import oversubscribed

    if oversubscribed() and "OMP_NUM_THREADS" not in os.environ:
        os.environ["OMP_NUM_THREADS"] = "1"  # inherited by nbval's kernels
        torch.set_num_threads(1)


_one_thread_when_oversubscribed()

SANITIZE = Path(__file__).resolve().parent / "notebooks" / "sanitize.cfg"


def pytest_configure(config):
    if hasattr(config.option, "nbval_sanitize_with"):
        if not config.option.nbval_sanitize_with and not getattr(config.option, "sanitize_with", None):
            config.option.nbval_sanitize_with = str(SANITIZE)
        _skip_stderr_in_nbval()


def _skip_stderr_in_nbval():
    from nbval.plugin import IPyNbFile

    if getattr(IPyNbFile, "_coursekit_patched", False):
        return
    original_init = IPyNbFile.__init__

    def __init__(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        self.skip_compare = tuple(self.skip_compare) + ("stderr",)

    IPyNbFile.__init__ = __init__
    IPyNbFile._coursekit_patched = True


# --------------------------------------------------------------------------- per-notebook durations
_durations: dict[str, float] = {}


def pytest_runtest_logreport(report):
    path = report.nodeid.split("::")[0]
    if path.endswith(".ipynb"):
        _durations[path] = _durations.get(path, 0.0) + report.duration
    elif "test_student_version_of_every_notebook[" in report.nodeid:
        key = "student version of " + report.nodeid.split("[", 1)[1].rstrip("]")
        _durations[key] = _durations.get(key, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter):
    if not _durations:
        return
    terminalreporter.section("per-notebook durations")
    for name, seconds in sorted(_durations.items()):
        terminalreporter.write_line(f"{seconds:8.1f} s  {name}")

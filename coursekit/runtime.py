"""Runtime choices shared by every notebook: device, seeding and the size profile; and the sub-command
dispatcher of the package's command lines (:func:`run_subcommand`).

The profile is read from one environment variable, ``COURSEKIT_PROFILE``:

* ``quick`` — CI and nbval: every notebook finishes in well under 90 s on a 2-core CPU.
* ``class`` — the default: ≤ 5 min per notebook on a laptop CPU; the stored outputs.
* ``full``  — a GPU: the best results a notebook can show in ≤ 10 min.

Notebooks read their size knobs in one place, :func:`sizes`.
"""

from __future__ import annotations

import os
import platform
import random
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import torch

from coursekit.validation import check_positive_int

PROFILE_ENV = "COURSEKIT_PROFILE"
DEVICE_ENV = "COURSEKIT_DEVICE"
PROFILES = ("quick", "class", "full")
DEFAULT_PROFILE = "class"


def profile() -> str:
    """The active profile, from ``$COURSEKIT_PROFILE`` (default ``class``).

    Raises ``ValueError`` naming the allowed values when the variable holds anything else.
    """
    value = os.environ.get(PROFILE_ENV, "").strip().lower() or DEFAULT_PROFILE
    if value not in PROFILES:
        raise ValueError(
            f"{PROFILE_ENV}={os.environ.get(PROFILE_ENV)!r} is not a profile; "
            f"expected one of {', '.join(PROFILES)} (or unset for {DEFAULT_PROFILE!r})"
        )
    return value


@dataclass(frozen=True)
class Sizes:
    """The size knobs of one notebook for the active profile (attribute access)."""

    profile: str
    values: Mapping[str, Any]

    def __getattr__(self, name: str) -> Any:
        values = object.__getattribute__(self, "values")
        if name in values:
            return values[name]
        raise AttributeError(f"no size knob {name!r}; this notebook defines {sorted(values)}")

    def __getitem__(self, name: str) -> Any:
        if name not in self.values:
            raise KeyError(f"no size knob {name!r}; this notebook defines {sorted(self.values)}")
        return self.values[name]

    def asdict(self) -> dict[str, Any]:
        return dict(self.values)

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.values.items())
        return f"Sizes[{self.profile}]({inner})"


def sizes(*, quick: Mapping[str, Any], class_: Mapping[str, Any], full: Mapping[str, Any],
          profile_name: str | None = None) -> Sizes:
    """Pick a notebook's size knobs for the active profile.

    All three mappings must define the same keys, so that no profile silently lacks a knob.
    ``profile_name`` overrides the environment (used by tests).
    """
    table = {"quick": quick, "class": class_, "full": full}
    for name, knobs in table.items():
        if not isinstance(knobs, Mapping):
            raise TypeError(f"sizes(): {name} must be a dict of knobs, got {type(knobs).__name__}")
    keys = {name: set(knobs) for name, knobs in table.items()}
    if not keys["quick"] == keys["class"] == keys["full"]:
        every = set().union(*keys.values())
        missing = {name: sorted(every - k) for name, k in keys.items() if every - k}
        raise ValueError(f"sizes(): every profile must define the same knobs; missing: {missing}")
    chosen = profile_name or profile()
    if chosen not in PROFILES:
        raise ValueError(f"profile {chosen!r} is not one of {PROFILES}")
    use_one_thread_if_busy()
    return Sizes(chosen, MappingProxyType(dict(table[chosen])))


def use_one_thread_if_busy() -> bool:
    """On a machine busier than its cores (see :func:`oversubscribed`), drop torch to one thread — what
    ``nbtools`` and the tests do — unless ``OMP_NUM_THREADS`` says otherwise; :func:`sizes` calls it, so a
    live kernel on a student's busy laptop does not run 06 in 200 s instead of 30. Returns whether it did."""
    if os.environ.get("OMP_NUM_THREADS") or torch.get_num_threads() == 1 or not oversubscribed():
        return False
    load, cores = os.getloadavg()[0], os.cpu_count()
    torch.set_num_threads(1)
    print(f"this machine is busy (load average {load:.1f} on {cores} cores): using one torch thread, which is "
          "faster here; set OMP_NUM_THREADS before starting Jupyter to choose yourself")
    return True


def device(override: str | None = None) -> torch.device:
    """Pick the compute device: CUDA → MPS → CPU.

    ``override`` (or ``$COURSEKIT_DEVICE``) forces one, e.g. ``"cpu"`` on a GPU box. Asking for a
    device that is not available is a ``ValueError``, not a silent fallback.
    """
    if isinstance(override, torch.device):
        override = str(override)
    if override is not None and not isinstance(override, str):
        raise TypeError(f"override must be a device name such as 'cpu' or 'cuda:0', got {type(override).__name__}")
    wanted = override or os.environ.get(DEVICE_ENV, "").strip() or None
    if wanted is None:
        if torch.cuda.is_available():
            return torch.device("cuda")
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        dev = torch.device(wanted)
    except (RuntimeError, ValueError):
        dev = None
    if dev is None or dev.type not in {"cpu", "cuda", "mps"}:
        raise ValueError(f"device {wanted!r}: expected cpu, cuda[:N] or mps")
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {wanted!r} requested but CUDA is not available here")
    if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
        raise ValueError(f"device {wanted!r} requested but this machine's CUDA devices are numbered 0 to "
                         f"{torch.cuda.device_count() - 1}")
    if dev.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError(f"device {wanted!r} requested but MPS is not available here")
    return dev


def seed_everything(seed: int = 0, deterministic: bool = True) -> torch.Generator:
    """Seed python, numpy and torch (CPU and CUDA); return a CPU generator seeded the same.

    With ``deterministic=True`` cuDNN picks deterministic kernels (no benchmark autotuning).
    We do not call ``torch.use_deterministic_algorithms`` because some ops used in the course
    (e.g. ``index_add_`` on CUDA) have no deterministic version and would raise.
    """
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    if not -(2**63) <= seed < 2**64:                     # what torch.manual_seed accepts
        raise ValueError(f"seed must lie in [-2**63, 2**64), got {seed}")
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    if deterministic:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
    return torch.Generator().manual_seed(seed)


def oversubscribed() -> bool:
    """True when the 1-minute load average exceeds the number of cores.

    On a shared machine, PyTorch's intra-op threads then spin against other processes and small
    models run tens of times slower than with one thread; ``coursekit.nbtools`` and the test suite
    use one thread in that case (and record it).
    """
    try:
        return os.getloadavg()[0] > (os.cpu_count() or 1)
    except OSError:  # not available on this platform
        return False


def environment_report() -> dict[str, str]:
    """Versions, device and profile: the first cell of notebook 00 prints this."""
    import importlib.metadata as md

    def version(pkg: str) -> str:
        try:
            return md.version(pkg)
        except md.PackageNotFoundError:
            return "not installed"

    dev = device()
    report = {
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "torch": torch.__version__,
        "device": str(dev),
        "profile": profile(),
        "cpu threads": str(torch.get_num_threads()),
    }
    if dev.type == "cuda":
        report["gpu"] = torch.cuda.get_device_name(dev)
    for pkg in ("transformers", "tokenizers", "datasets", "sacrebleu", "gensim", "nbval"):
        report[pkg] = version(pkg)
    return report


def _tf32_knobs() -> list[tuple[str, Any, str, Any]]:
    """``(name, object, attribute, value meaning "no TF32")`` for every switch that lets fp32 work use TF32.

    torch ≥ 2.9 has per-backend, per-operator ``fp32_precision`` settings; there the cuDNN RNN and
    convolution settings default to ``"tf32"`` on their own, the legacy ``allow_tf32`` flags are deprecated,
    and the two APIs may not be mixed (reading a legacy flag after setting the new ones raises). Older torch
    has only the two legacy flags.
    """
    b = torch.backends
    if hasattr(b.cuda.matmul, "fp32_precision") and hasattr(getattr(b.cudnn, "rnn", None), "fp32_precision"):
        return [(f"{name}.fp32_precision", obj, "fp32_precision", "ieee")
                for name, obj in (("cuda.matmul", b.cuda.matmul), ("cudnn", b.cudnn), ("cudnn.conv", b.cudnn.conv),
                                  ("cudnn.rnn", b.cudnn.rnn))]
    return [("cuda.matmul.allow_tf32", b.cuda.matmul, "allow_tf32", False),
            ("cudnn.allow_tf32", b.cudnn, "allow_tf32", False)]


def tf32_settings() -> dict[str, Any]:
    """The current TF32 switches by name (``{"cuda.matmul.fp32_precision": "none", …}`` on torch ≥ 2.9)."""
    return {name: getattr(obj, attr) for name, obj, attr, _ in _tf32_knobs()}


@contextmanager
def exact_matmul() -> Iterator[None]:
    """Full fp32 precision for matmuls and cuDNN inside the block (TF32 off), restored on exit.

    On Ampere and later GPUs, cuDNN's RNN and convolution kernels use TF32 by default: inputs rounded to
    a 10-bit mantissa, so a fused ``nn.LSTM`` and a from-scratch twin differ in the 4th digit. A parity
    check at 1e-5 must run without it. On a CPU this changes nothing. Uses the ``fp32_precision``
    settings where torch has them (see :func:`_tf32_knobs`), else the legacy ``allow_tf32`` flags.
    """
    knobs = _tf32_knobs()
    saved = [getattr(obj, attr) for _, obj, attr, _ in knobs]
    for _, obj, attr, exact in knobs:
        setattr(obj, attr, exact)
    try:
        yield
    finally:
        for (_, obj, attr, _), value in zip(reversed(knobs), reversed(saved)):
            setattr(obj, attr, value)


def synchronize(dev: torch.device | str | None = None) -> None:
    """Wait for the queued kernels of ``dev`` (CUDA and MPS run asynchronously; a no-op on the CPU)."""
    dev = device(dev) if dev is not None else device()
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
    elif dev.type == "mps":
        torch.mps.synchronize()


def timed(fn: Callable[[], Any], dev: torch.device | str | None = None, *, repeat: int = 1,
          warmup: int = 0) -> tuple[float, Any]:
    """``(best seconds over `repeat` runs, last result)`` of ``fn()``, synchronising ``dev`` around each run.

    Without the synchronisation a GPU timing measures only how long it took to *queue* the kernels.
    """
    if not callable(fn):
        raise TypeError(f"fn must be a function of no arguments, got {type(fn).__name__}")
    check_positive_int(repeat, "repeat")
    if isinstance(warmup, bool) or not isinstance(warmup, int):
        raise TypeError(f"warmup must be an int, got {type(warmup).__name__}")
    if warmup < 0:
        raise ValueError(f"warmup must be ≥ 0, got {warmup}")
    dev = device(dev) if dev is not None else device()
    for _ in range(warmup):
        fn()
    best, result = float("inf"), None
    for _ in range(repeat):
        synchronize(dev)
        start = time.perf_counter()
        result = fn()
        synchronize(dev)
        best = min(best, time.perf_counter() - start)
    return best, result


def run_subcommand(doc: str, commands: Mapping[str, Callable[[list[str]], int | None]],
                   argv: Sequence[str] | None = None) -> int:
    """The exit status of ``python -m coursekit.<package> <command> …`` (``bart``, ``bert``, ``gpt``).

    ``argv`` (default ``sys.argv[1:]``) starts with a command's name; ``commands[name]`` gets the whole list,
    name included, and what it returns is the exit status (``None`` counts as 0). ``-h`` or ``--help`` prints
    ``doc`` (the package's ``__main__`` docstring, which lists its commands) and returns 0; no command or an
    unknown one prints it on stderr and returns 2, argparse's status for a usage error.
    """
    if not isinstance(doc, str):
        raise TypeError(f"doc must be a str (the command line's docstring), got {type(doc).__name__}")
    if not isinstance(commands, Mapping):
        raise TypeError(f"commands must be a dict of command name -> function, got {type(commands).__name__}")
    for name, fn in commands.items():
        if not isinstance(name, str) or not callable(fn):
            raise TypeError(f"commands[{name!r}] must be a function under a str name, got {type(fn).__name__}")
    if argv is not None and (isinstance(argv, str) or not isinstance(argv, Sequence)):
        raise TypeError(f"argv must be a list of strings (or None for sys.argv[1:]), got {type(argv).__name__}")
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] not in commands:
        asked = bool(argv) and argv[0] in ("-h", "--help")
        print(doc.strip(), file=sys.stdout if asked else sys.stderr)
        return 0 if asked else 2
    return commands[argv[0]](argv) or 0

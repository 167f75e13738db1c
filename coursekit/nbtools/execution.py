"""Build, execute and time the course notebooks; check that each ``.py`` twin matches its ``.ipynb``.

Each notebook's source is a jupytext "percent" file ``notebooks/NN_topic.py``; the ``.ipynb``
beside it is built from it and executed top to bottom in a fresh kernel::

    python -m coursekit.nbtools run notebooks/07_self_attention.py --profile class
    python -m coursekit.nbtools run notebooks/07_self_attention.py --profile quick --no-save
    python -m coursekit.nbtools table          # rewrite the runtime table in README.md
    python -m coursekit.nbtools sync-check     # every .py and .ipynb pair has the same cells

(the command line is :mod:`coursekit.nbtools.__main__`). ``run`` records in the notebook's
``metadata.coursekit`` the profile, device, library versions and wall time of that run, and in
``notebooks/timings.json`` the wall time per profile; the figures it stores are compacted
(:mod:`coursekit.nbtools.figures`).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from pathlib import Path

import nbformat

from coursekit import runtime
from coursekit.nbtools.figures import compact_figures
from coursekit.runtime import oversubscribed
from coursekit.viz.wording import counted

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
TIMINGS = NOTEBOOKS / "timings.json"
README = ROOT / "README.md"
TABLE_START, TABLE_END = "<!-- runtime-table:start -->", "<!-- runtime-table:end -->"
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


def read_source(path: Path) -> nbformat.NotebookNode:
    """The notebook a ``.py`` (jupytext percent) or ``.ipynb`` file describes, outputs dropped."""
    import jupytext

    nb = jupytext.read(path)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        cell.metadata.pop("lines_to_next_cell", None)
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata.pop("jupytext", None)
    return nb


def cell_sources(nb: nbformat.NotebookNode) -> list[tuple[str, str]]:
    return [(c.cell_type, c.source.strip()) for c in nb.cells]


def execute(nb: nbformat.NotebookNode, *, profile: str, cwd: Path, timeout: int = 900,
            extra_env: dict[str, str] | None = None) -> float:
    """Execute ``nb`` in place in a fresh ``python3`` kernel; return the wall time in seconds."""
    from nbclient import NotebookClient

    env = {"COURSEKIT_PROFILE": profile, "COURSEKIT_HEADLESS": "1", "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
    env.update(extra_env or {})
    if "OMP_NUM_THREADS" not in os.environ and "OMP_NUM_THREADS" not in env:
        if oversubscribed():
            env["OMP_NUM_THREADS"] = "1"  # see runtime.oversubscribed
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        # Not coalesce_streams: it merges a cell's printed text into one output placed before its tables and figures,
        # so a table's title or a line printed after a plot would be read out of order.
        client = NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(cwd)}})
        start = time.perf_counter()
        client.execute()
        return time.perf_counter() - start
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_metadata(profile: str, seconds: float, threads: str, load: float) -> dict:
    import importlib.metadata as md
    import platform

    def version(pkg: str) -> str:
        try:
            return md.version(pkg)
        except md.PackageNotFoundError:
            return "not installed"

    dev = runtime.device()
    device = str(dev)
    if dev.type == "cuda":
        import torch

        device += f" ({torch.cuda.get_device_name(dev)})"
    else:
        device += f" ({os.cpu_count()} cores)"
    return {
        "profile": profile,
        "device": device,
        "wall_time_s": round(seconds, 1),
        "torch_threads": threads,
        "load_average_before": round(load, 1),
        "executed_at": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "versions": {p: version(p) for p in ("torch", "transformers", "tokenizers", "datasets", "numpy")}
        | {"python": platform.python_version()},
    }


def record_timing(name: str, meta: dict) -> None:
    timings = json.loads(TIMINGS.read_text()) if TIMINGS.exists() else {}
    timings.setdefault(name, {})[meta["profile"]] = {
        "seconds": meta["wall_time_s"], "device": meta["device"], "date": meta["executed_at"][:10],
        "torch_threads": meta["torch_threads"], "load_average_before": meta["load_average_before"]}
    TIMINGS.write_text(json.dumps(dict(sorted(timings.items())), indent=1) + "\n")


def run(path: Path, profile: str, save: bool = True, timeout: int = 900) -> dict:
    """Build ``path`` (.py or .ipynb) into its .ipynb, execute it, record metadata and timing."""
    path = Path(path).resolve()
    source = path.with_suffix(".py") if path.with_suffix(".py").exists() else path.with_suffix(".ipynb")
    nb = read_source(source)
    load = os.getloadavg()[0]

    threads = os.environ.get("OMP_NUM_THREADS") or ("1" if oversubscribed() else str(os.cpu_count()))
    seconds = execute(nb, profile=profile, cwd=source.parent, timeout=timeout)
    meta = run_metadata(profile, seconds, threads, load)
    nb.metadata["coursekit"] = meta
    if save:
        compact_figures(nb)               # 256-colour PNGs: about half the bytes of the committed notebook
        nbformat.write(nb, str(source.with_suffix(".ipynb")))
    record_timing(source.stem, meta)
    return meta


def sync_prose(path: Path) -> int:
    """Copy the markdown cells of ``path``'s ``.py`` twin into its executed ``.ipynb``, keeping every output; returns
    how many cells changed. Only prose may differ: a changed, added or removed code cell (or a cell that changed
    kind) is an error, since its stored outputs would no longer be what the code prints — re-execute with
    :func:`run` instead."""
    path = Path(path)
    py, ipynb = path.with_suffix(".py"), path.with_suffix(".ipynb")
    for twin in (py, ipynb):
        if not twin.is_file():
            raise FileNotFoundError(f"no {twin.name}: sync_prose needs both twins of a notebook")
    source, executed = read_source(py), nbformat.read(str(ipynb), as_version=4)
    code_only = [[(kind, text if kind == "code" else "") for kind, text in cell_sources(nb)]
                 for nb in (source, executed)]                 # every cell's kind, and the code cells' text
    if code_only[0] != code_only[1]:
        raise ValueError(f"{py.name} and {ipynb.name} differ in their code cells (or in the order of the cells): "
                         f"the stored outputs would not match the code; run `python -m coursekit.nbtools run {py}`")
    changed = 0
    for new, old in zip(source.cells, executed.cells):
        if new.cell_type == "markdown" and new.source.strip() != old.source.strip():
            old.source, changed = new.source, changed + 1
    if changed:
        nbformat.write(executed, str(ipynb))
    return changed


def sync_problems(directory: Path = NOTEBOOKS) -> list[str]:
    """Pairs whose ``.py`` and ``.ipynb`` cells differ, or that lack their twin."""
    problems = []
    pys = {p.stem for p in directory.glob("[0-9][0-9]_*.py")}
    nbs = {p.stem for p in directory.glob("[0-9][0-9]_*.ipynb")}
    for stem in sorted(pys ^ nbs):
        problems.append(f"{stem}: has only a {'.py' if stem in pys else '.ipynb'} file")
    for stem in sorted(pys & nbs):
        a = cell_sources(read_source(directory / f"{stem}.py"))
        b = cell_sources(nbformat.read(str(directory / f"{stem}.ipynb"), as_version=4))
        if a != b:
            first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            problems.append(f"{stem}: .py and .ipynb differ from cell {first} on "
                            f"(rebuild with `python -m coursekit.nbtools run notebooks/{stem}.py`)")
    return problems


def _seconds(seconds: float | None) -> str:
    return f"{seconds:.0f} s" if seconds is not None else "—"


def runtime_table() -> str:
    """Markdown table of wall times per notebook.

    ``class (stored run)`` comes from the stored notebook's metadata; the other columns from
    ``timings.json`` (the latest timed run of each profile, e.g. a re-timing on a quiet machine).
    """
    timings = json.loads(TIMINGS.read_text()) if TIMINGS.exists() else {}
    lines = ["| notebook | quick | class (stored run) | class (latest timing) | full | stored class run on |",
             "|---|---:|---:|---:|---:|---|"]
    for nb_path in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
        meta = nbformat.read(str(nb_path), as_version=4).metadata.get("coursekit", {})
        timed = timings.get(nb_path.stem, {})
        stored = meta.get("wall_time_s") if meta.get("profile") == "class" else None
        latest = [timed.get(p, {}).get("seconds") for p in ("quick", "class", "full")]
        where = meta.get("device", "—")
        if "torch_threads" in meta:
            where += f", {counted(int(meta['torch_threads']), 'torch thread')}, load {meta['load_average_before']}"
        cells = [_seconds(latest[0]), _seconds(stored), _seconds(latest[1]), _seconds(latest[2])]
        lines.append(f"| `{nb_path.name}` | {' | '.join(cells)} | {where} |")
    return "\n".join(lines)


def write_table(readme: Path = README) -> None:
    text = readme.read_text()
    if TABLE_START not in text or TABLE_END not in text:
        raise ValueError(f"{readme} has no {TABLE_START} … {TABLE_END} markers")
    head, rest = text.split(TABLE_START, 1)
    _, tail = rest.split(TABLE_END, 1)
    readme.write_text(f"{head}{TABLE_START}\n{runtime_table()}\n{TABLE_END}{tail}")

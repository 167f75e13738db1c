"""The tracked tree travels: with every clone, and with every command sent to a lent GPU machine, which
carries at most 64 MiB per call — the tree plus a part of the wheels and corpora it lacks
(``../shared/tools/gpu``). Issue 34 set the budget: the files git tracks stay within 40 MiB."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BUDGET_MIB = 40


def tracked_files() -> list[Path]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: nothing tracked to measure")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [ROOT / name for name in out.decode().split("\0") if name]


def test_tracked_tree_fits_its_budget():
    sizes = {p: p.stat().st_size for p in tracked_files() if p.is_file()}
    total = sum(sizes.values())
    largest = sorted(sizes.items(), key=lambda kv: -kv[1])[:5]
    listing = ", ".join(f"{p.relative_to(ROOT)} {s / 2**20:.1f} MiB" for p, s in largest)
    assert total <= BUDGET_MIB * 2**20, (f"the tracked tree is {total / 2**20:.1f} MiB, over its {BUDGET_MIB} MiB "
                                         f"budget; largest: {listing}")

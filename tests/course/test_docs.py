"""The documentation says what is true: links resolve, commands exist, variables are documented, budgets agree."""

from __future__ import annotations

import importlib.util
import json
import re

import pytest
from helpers import ROOT

REPO = ROOT
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
PATH = re.compile(r"`((?:docs|data|notebooks|coursekit|tests|\.ci)/[\w./-]*)`")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_relative_links_and_named_paths_exist(doc):
    text = doc.read_text(encoding="utf-8")
    missing = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue                                            # a URL or an anchor in the same page
        if not (doc.parent / target.split("#")[0]).exists():
            missing.append(target)
    for path in PATH.findall(text):
        placeholder = re.search(r"/(?:[A-Z]+|NN_\w+)(?:/|\.|$)", path)    # data/translation/MODEL/…, NN_topic.py
        if not placeholder and not (REPO / path.rstrip(".")).exists() and "cache" not in path:
            missing.append(path)
    assert not missing, f"{doc.name} names files that do not exist: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_command_names_a_module_that_exists(doc):
    modules = set(re.findall(r"python -m (coursekit[\w.]*)", doc.read_text(encoding="utf-8")))
    missing = [m for m in {m.rstrip(".") for m in modules} if importlib.util.find_spec(m) is None]
    assert not missing, f"{doc.name} tells readers to run modules that do not exist: {missing}"


def test_every_environment_variable_is_documented():
    used = set()
    for path in [*REPO.glob("coursekit/**/*.py"), *REPO.glob("notebooks/*.py")]:
        used |= set(re.findall(r"COURSEKIT_[A-Z0-9_]+", path.read_text(encoding="utf-8")))
    documented = set(re.findall(r"COURSEKIT_[A-Z0-9_]+", (REPO / "docs" / "TEACHING.md").read_text(encoding="utf-8")))
    assert used and not used - documented, f"undocumented variables: {sorted(used - documented)}"


def test_profile_budgets_agree_between_readme_and_notebook_00():
    def budgets(text: str) -> dict[str, str]:
        rows = re.findall(r"^\| `(quick|class|full)`[^|]*\|[^|]*\| ([^|]+)\|", text, flags=re.M)
        return {name: cell.strip().split(" on ")[0] for name, cell in rows}

    readme = budgets((REPO / "README.md").read_text(encoding="utf-8"))
    nb = json.loads((REPO / "notebooks" / "00_setup.ipynb").read_text(encoding="utf-8"))
    notebook = budgets("".join("".join(c["source"]) + "\n" for c in nb["cells"] if c["cell_type"] == "markdown")
                       .replace("# ", ""))
    assert readme.keys() == {"quick", "class", "full"}, readme
    for name in ("quick", "class", "full"):
        assert readme[name].split(",")[0] == notebook[name].split(",")[0], (name, readme[name], notebook[name])

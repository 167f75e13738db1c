"""Sphinx extension of the course website: the nbval markers are not shown in the rendered code cells.

A ``# NBVAL_CHECK_OUTPUT`` first line tells nbval to compare a cell's output with the stored one (DESIGN.md);
it is for the test run, not for the reader. This drops such marker lines from the notebooks' code cells as
Sphinx reads them (the files are not touched). tests/course/test_site.py checks the built pages.
"""

from __future__ import annotations

import json
import re

MARKER = re.compile(r"^#\s*NBVAL_[A-Z_]+\s*$")


def hide_markers(notebook_json: str) -> str:
    """The notebook's JSON with every nbval marker line removed from its code cells."""
    notebook = json.loads(notebook_json)
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        cell["source"] = "".join(line for line in source.splitlines(keepends=True) if not MARKER.match(line))
    return json.dumps(notebook)


def _read(app, docname: str, source: list[str]) -> None:
    if str(app.env.doc2path(docname)).endswith(".ipynb"):
        source[0] = hide_markers(source[0])


def setup(app):
    app.connect("source-read", _read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

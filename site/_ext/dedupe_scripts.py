"""Sphinx extension of the course website: write each inline <script> once per page.

Sphinx 7.2-7.4 adds an inline script (``app.add_js_file(None, body=...)``) registered after the
builder started twice to every page: once as it is registered and once more in ``prepare_writing``
(as filename ``''`` rather than ``None``, so its de-duplication misses it). sphinx-thebe registers
``const THEBE_JS_URL = ...`` that way, and its second copy is a JavaScript error on every page
("Identifier 'THEBE_JS_URL' has already been declared"). This drops the repeated copies from the
page context; tests/course/test_site.py checks in a browser that no page logs an error.
"""

from __future__ import annotations


def _unique_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for script in scripts:
        key = (
            getattr(script, "filename", script) or "",
            tuple(sorted(getattr(script, "attributes", {}).items())),
        )
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def setup(app):
    app.connect("html-page-context", _unique_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

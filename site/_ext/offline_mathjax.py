"""Sphinx extension of the course website: MathJax served with the site, so formulas render offline.

Sphinx loads MathJax 3 from a CDN by default; in a lab or on a train without a network every formula then
shows as raw LaTeX. The ``jupyter-server-mathjax`` package (the site extra) carries MathJax 2.7, the copy
Jupyter itself serves offline. ``site/_config.yml`` points ``mathjax_path`` at ``_static/mathjax/MathJax.js``
with the package's combined configuration (TeX in, HTML-CSS out) and its STIX-Web fonts, as Jupyter does; this
extension copies what that configuration loads — the loader, the configuration, extensions, the TeX input, the
HTML-CSS output, the STIX-Web fonts and the licence — into the built site. tests/course/test_site.py checks in
a browser, with every other host unreachable, that formulas render.
"""

from __future__ import annotations

import shutil
from pathlib import Path

# what MathJax 2 loads for TeX in, HTML-CSS out with the STIX-Web fonts (MathJax.js fetches parts on demand)
PARTS = ("MathJax.js", "LICENSE", "config", "extensions", "jax/input/TeX", "jax/output/HTML-CSS", "jax/element",
         "fonts/HTML-CSS/STIX-Web")


def _mathjax_static() -> Path:
    import jupyter_server_mathjax

    return Path(jupyter_server_mathjax.__file__).parent / "static"


def _copy_mathjax(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    source, target = _mathjax_static(), Path(app.outdir) / "_static" / "mathjax"
    for part in PARTS:
        if (source / part).is_dir():
            shutil.copytree(source / part, target / part, dirs_exist_ok=True)
        else:
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / part, target / part)


def setup(app):
    _mathjax_static()                      # fail at the start of a build, not at its end, without the package
    app.connect("build-finished", _copy_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

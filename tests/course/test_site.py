"""The course website (Jupyter Book, ``site/``): it builds, its internal links resolve, it shows the
notebooks' stored outputs, and a browser renders its front page and a notebook page.

The site is built once per test run with the README's command, its output sent to a temporary folder::

    jupyter-book build . --config site/_config.yml --toc site/_toc.yml --path-output site -W --keep-going

(``-W``: any Sphinx warning, e.g. a broken cross-reference, fails the build). Nothing is executed:
the pages show the outputs stored in the notebooks.

Skipped when the ``site`` extra (``pip install -e ".[site]"``) is not installed. The browser test also
needs Chromium (Debian: ``apt-get install -y chromium``) and Playwright for Python (in the extra); it is
skipped, saying which is missing, without them. With ``COURSEKIT_REQUIRE_SITE=1`` (CI) each of these
skips is a failure instead. It writes its screenshots to a temporary folder, so that a test run leaves the
tracked tree as it was; set ``COURSEKIT_SITE_SCREENSHOTS=site/screenshots`` to refresh the committed ones.
"""

from __future__ import annotations

import functools
import html
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from helpers import ROOT
from helpers.browser import NO_CHROMIUM, chromium_executable, skip_or_fail

from coursekit.viz.png import compact_png

try:
    import jupyter_book  # noqa: F401
    import yaml
except ImportError as err:
    skip_or_fail(f'the site extra is not installed (pip install -e ".[site]"): {err}')

SITE = ROOT / "site"
SCREENSHOTS_ENV = "COURSEKIT_SITE_SCREENSHOTS"   # unset: a temporary folder (committed ones stay untouched)
MAX_SCREENSHOT_BYTES = 300_000
HIDE_STICKY_HEADER = ".bd-header, .bd-header-article, .skip-link { visibility: hidden !important; }"


# --------------------------------------------------------------------------------------------- helpers
def toc_files() -> list[str]:
    """Every page of the table of contents, as a path relative to the repository root."""
    toc = yaml.safe_load((SITE / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]
    for part in toc.get("parts", []):
        files += [chapter["file"] for chapter in part["chapters"]]
    return files


def notebooks_in_toc() -> list[Path]:
    return [ROOT / f for f in toc_files() if f.endswith(".ipynb")]


def page_of(html_root: Path, source: str) -> Path:
    """The HTML page built from a source file (``notebooks/07_x.ipynb`` → ``notebooks/07_x.html``)."""
    return html_root / Path(source).with_suffix(".html")


def notebook_title(path: Path) -> str:
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    raise AssertionError(f"{path.name} has no '# title' heading")


def stored_outputs(path: Path) -> list[dict]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [(cell, output) for cell in nb["cells"] if cell["cell_type"] == "code" for output in cell["outputs"]]


class _Page(HTMLParser):
    """Links (href/src of every tag, the redirect of a meta refresh), element ids and visible text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.text: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in ("href", "src"):
            if attrs.get(name):
                self.links.append(attrs[name])
        if tag == "meta" and (attrs.get("http-equiv") or "").lower() == "refresh":
            match = re.search(r"url=(.+)$", attrs.get("content") or "", re.IGNORECASE)
            if match:
                self.links.append(match.group(1).strip())
        for name in ("id", "name"):
            if attrs.get(name) and (name == "id" or tag == "a"):
                self.ids.add(attrs[name])
        if tag in ("script", "style"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.text.append(data)


@functools.cache
def parse(page: Path) -> _Page:
    parser = _Page()
    parser.feed(page.read_text(encoding="utf-8"))
    parser.close()
    return parser


def page_text(page: Path) -> str:
    return " ".join(" ".join(parse(page).text).split())


def is_internal(link: str) -> bool:
    parts = urlsplit(link)
    return not parts.scheme and not parts.netloc  # no http:, mailto:, data:, javascript:, //host


def site_pages(html_root: Path) -> list[Path]:
    """The HTML pages of the site; not the theme's Jinja fragments that Sphinx copies into _static/."""
    return sorted(p for p in html_root.rglob("*.html") if "_static" not in p.relative_to(html_root).parts)


def broken_internal_links(html_root: Path) -> list[str]:
    """Every relative href/src (and CSS url()) of the built site that does not resolve to a file (or,
    with a #fragment into an HTML page, to an element id of that page)."""
    broken = []
    html_root = html_root.resolve()
    for page in site_pages(html_root):
        for link in parse(page).links:
            if not is_internal(link):
                continue
            parts = urlsplit(link)
            where = f"{page.relative_to(html_root)}: {link}"
            if parts.path.startswith("/"):
                broken.append(where + " (root-absolute: breaks when the site is not served at the host root)")
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if html_root not in target.parents and target != html_root:
                broken.append(where + " (points outside the site)")
            elif not target.is_file():
                broken.append(where + " (no such file)")
            elif parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in parse(target).ids:
                broken.append(where + f" (no id {parts.fragment!r} in {target.name})")
    for css in sorted(html_root.rglob("*.css")):
        text = css.read_text(encoding="utf-8", errors="replace")
        for link in re.findall(r"url\(\s*['\"]?([^'\")]+)['\"]?\s*\)", text):
            parts = urlsplit(link)
            if is_internal(link) and parts.path and not parts.path.startswith("/"):
                if not (css.parent / unquote(parts.path)).resolve().is_file():
                    broken.append(f"{css.relative_to(html_root)}: url({link}) (no such file)")
    return broken


# ---------------------------------------------------------------------------------------------- build
def jupyter_book_command() -> str:
    script = Path(sys.executable).with_name("jupyter-book")
    return str(script) if script.exists() else (shutil.which("jupyter-book") or "jupyter-book")


@pytest.fixture(scope="module")
def built_site(tmp_path_factory) -> Path:
    """Build the site from the working tree into a fresh folder; return its html/ folder."""
    out = tmp_path_factory.mktemp("site")
    command = [jupyter_book_command(), "build", ".", "--config", "site/_config.yml", "--toc", "site/_toc.yml",
               "--path-output", str(out), "-W", "--keep-going"]  # fmt: skip
    start = time.perf_counter()
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
    seconds = time.perf_counter() - start
    log = result.stdout + result.stderr
    assert result.returncode == 0, f"site build failed (exit {result.returncode}):\n{log[-6000:]}"
    assert "build succeeded" in log, log[-3000:]
    print(f"site built in {seconds:.1f} s into {out}")
    return out / "_build" / "html"


# ---------------------------------------------------------------------------------------------- tests
def test_toc_lists_every_notebook_once_and_no_jupytext_twin():
    listed = [f for f in toc_files() if f.startswith("notebooks/")]
    on_disk = sorted(f"notebooks/{p.name}" for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert sorted(listed) == on_disk, "site/_toc.yml must list every notebook, in order, as .ipynb"
    assert listed == sorted(listed), "notebooks are listed in course order"


def test_site_config_never_executes_notebooks():
    config = yaml.safe_load((SITE / "_config.yml").read_text(encoding="utf-8"))
    assert config["execute"]["execute_notebooks"] == "off"


def test_every_page_is_built_with_its_title(built_site):
    assert (built_site / "index.html").is_file(), "no index.html at the top of the site"
    for source in toc_files():
        page = page_of(built_site, source)
        assert page.is_file(), f"{source}: no page {page.relative_to(built_site)}"
    for notebook in notebooks_in_toc():
        page = page_of(built_site, notebook.relative_to(ROOT).as_posix())
        title = notebook_title(notebook)
        assert title in page_text(page), f"{page.name} lacks its title {title!r}"
        assert f"<title>{html.escape(title, quote=False)}" in page.read_text(encoding="utf-8")
    front = page_text(page_of(built_site, toc_files()[0]))
    for notebook in notebooks_in_toc():
        assert notebook_title(notebook).split(" — ")[0] in front  # the front page lists every notebook


def test_no_broken_internal_links(built_site):
    pages = site_pages(built_site)
    links = sum(1 for page in pages for link in parse(page).links if is_internal(link))
    broken = broken_internal_links(built_site)
    print(f"{links} internal links in {len(pages)} HTML pages, {len(broken)} broken")
    assert links > 500
    assert not broken, f"{len(broken)} broken internal link(s):\n" + "\n".join(broken[:50])


def test_link_checker_catches_a_broken_link(tmp_path):
    (tmp_path / "a.html").write_text('<a href="b.html#there">b</a><img src="img/x.png"><a href="#here">', "utf-8")
    (tmp_path / "b.html").write_text('<h1 id="elsewhere">b</h1><a href="https://example.org/x">', "utf-8")
    assert sorted(broken_internal_links(tmp_path)) == [
        "a.html: #here (no id 'here' in a.html)",
        "a.html: b.html#there (no id 'there' in b.html)",
        "a.html: img/x.png (no such file)",
    ]


def test_pages_show_the_stored_outputs(built_site):
    """Every stored text output (its first line) and every stored image of every notebook is on its page."""
    for notebook in notebooks_in_toc():
        page = page_of(built_site, notebook.relative_to(ROOT).as_posix())
        text, raw = page_text(page), page.read_text(encoding="utf-8")
        images = 0
        for _cell, output in stored_outputs(notebook):
            if output["output_type"] == "stream" and output["name"] == "stdout":
                first = next((line for line in "".join(output["text"]).splitlines() if line.strip()), "")
                assert " ".join(first.split()) in text, f"{page.name}: stored output {first!r} missing"
            images += "image/png" in output.get("data", {})
        shown = len(re.findall(r'<img [^>]*src="\.\./_images/', raw))
        assert shown >= images, f"{page.name}: {images} stored images, {shown} on the page"
        assert "widget-view+json" not in raw and "jupyter-widgets" not in raw, f"{page.name}: a live-widget box"
    setup = page_text(page_of(built_site, "notebooks/00_setup.ipynb"))
    assert "✅ softmax: all cases match the reference." in setup


def test_code_cells_hide_the_nbval_markers(built_site):
    """``# NBVAL_CHECK_OUTPUT`` is for nbval, not for the reader: no code cell of any page shows it (the notebooks
    keep it; site/_ext/hide_nbval_markers.py drops it as the site is built)."""
    marked = 0
    for notebook in notebooks_in_toc():
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        marked += sum("NBVAL_CHECK_OUTPUT" in "".join(c["source"]) for c in cells if c["cell_type"] == "code")
        raw = page_of(built_site, notebook.relative_to(ROOT).as_posix()).read_text(encoding="utf-8")
        code = "".join(re.findall(r'<div class="cell_input.*?</pre>', raw, flags=re.S))
        assert "NBVAL" not in code, f"{notebook.name}: a code cell shows an nbval marker"
    assert marked > 0, "no notebook has a marked cell: the test checks nothing"


def test_widget_explorers_show_their_static_fallback(built_site):
    """Notebooks that call coursekit.viz.widgets.explorer show its headless view: text and plots, no widget."""
    with_explorer = [nb for nb in notebooks_in_toc() if "explorer(" in nb.read_text(encoding="utf-8")]
    assert with_explorer, "no notebook uses coursekit.viz.widgets.explorer any more: update this test"
    for notebook in with_explorer:
        page = page_of(built_site, notebook.relative_to(ROOT).as_posix())
        text = page_text(page)
        assert "static view:" in text, f"{page.name}: the explorer's static fallback is not on the page"
        cells = [cell for cell, _ in stored_outputs(notebook) if "explorer(" in "".join(cell["source"])]
        assert cells, f"{notebook.name}: the explorer cell has no stored output"


# -------------------------------------------------------------------------------------- browser test
@pytest.fixture(scope="module")
def served_site(built_site):
    """The built site over HTTP on 127.0.0.1 (an ephemeral port), as it is served once published."""

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(built_site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def markdown_title(path: Path) -> str:
    return next(line[2:].strip() for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("# "))


class BrowserPage:
    """A page opened in Chromium, with every console error and uncaught exception it logs.

    The test runs offline: requests to other hosts (MathJax from its CDN) are answered with an empty
    body and listed in ``external``, so that any console error left is the site's own."""

    def __init__(self, browser, base_url: str, source: str):
        self.url = f"{base_url}/{Path(source).with_suffix('.html').as_posix()}"
        self.errors: list[str] = []
        self.external: list[str] = []
        self.page = browser.new_page(viewport={"width": 1200, "height": 760})
        self.page.route(re.compile(r"^(?!" + re.escape(base_url) + ").*"), self._offline)
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.errors.append(f"uncaught: {exc}"))
        response = self.page.goto(self.url, wait_until="load")
        assert response is not None and response.ok, f"{self.url}: HTTP {response and response.status}"
        self.page.wait_for_timeout(300)

    def _offline(self, route):
        self.external.append(route.request.url)
        route.fulfill(status=200, body="")

    def _console(self, message):
        if message.type != "error":
            return
        if message.location.get("url") == "about:blank" or "font at 'about:blank'" in message.text:
            return   # MathJax 2's probe font (@font-face MathJax_Blank, src about:blank), loaded on purpose to fail
        self.errors.append(message.text)


def _palette_png(path: Path) -> None:
    """Rewrite a screenshot with a 256-colour palette (the stored notebooks' figures get the same,
    ``coursekit.viz.png.compact_png``): a third of the bytes, text still sharp. The screenshots are
    committed, and the tracked tree has a budget (tests/test_tree_size.py)."""
    path.write_bytes(compact_png(path.read_bytes()))


def test_browser_screenshots_front_page_and_a_notebook(served_site, tmp_path):
    try:
        from playwright import sync_api
    except ImportError:
        skip_or_fail('Playwright is not installed (pip install -e ".[site]")')
    chromium = chromium_executable()
    if chromium is None:
        skip_or_fail(NO_CHROMIUM)
    folder = Path(os.environ[SCREENSHOTS_ENV]) if os.environ.get(SCREENSHOTS_ENV) else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    front = toc_files()[0]
    shots = {  # screenshot: (source, its title, text of the one cell to capture, or None: the viewport)
        "front_page.png": (front, markdown_title(ROOT / front), None),
        "notebook_07.png": ("notebooks/07_self_attention.ipynb", "07 — Self-attention", None),
        "widget_fallback_01.png": ("notebooks/01_word_embeddings.ipynb", "01 — Word embeddings", "static view:"),
    }
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        try:
            for name, (source, title, cell_text) in shots.items():
                visit = BrowserPage(browser, served_site, source)
                heading = visit.page.locator("article h1").first  # not the theme's print-only copy
                sync_api.expect(heading).to_be_visible()
                assert title in heading.inner_text()
                assert visit.page.title().startswith(title)
                if cell_text is None:
                    visit.page.screenshot(path=str(folder / name))
                else:  # the explorer's cell: its static view (text and plots), not an empty widget box
                    cell = visit.page.locator(".cell", has_text=cell_text).first
                    sync_api.expect(cell).to_be_visible()
                    assert cell.locator("img").count() >= 1, "the static view shows no plot"
                    # the theme's sticky header would cover the top of the cell in an element screenshot
                    cell.screenshot(path=str(folder / name), style=HIDE_STICKY_HEADER)
                assert not visit.errors, f"{visit.url}: console errors: {visit.errors}"
                _palette_png(folder / name)
                size = (folder / name).stat().st_size
                assert 5_000 < size < MAX_SCREENSHOT_BYTES, f"{name}: {size} bytes"
                print(f"{name}: {size:,} bytes; requests to other hosts answered empty: {visit.external}")
                visit.page.close()
        finally:
            browser.close()


def test_browser_renders_formulas_offline(served_site):
    """Formulas render with every other host unreachable: MathJax is served with the site
    (site/_ext/offline_mathjax.py), not fetched from a CDN."""
    try:
        from playwright import sync_api
    except ImportError:
        skip_or_fail('Playwright is not installed (pip install -e ".[site]")')
    chromium = chromium_executable()
    if chromium is None:
        skip_or_fail(NO_CHROMIUM)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        try:
            visit = BrowserPage(browser, served_site, "notebooks/07_self_attention.ipynb")
            formulas = visit.page.locator("span.math.notranslate")      # Sphinx's; MathJax adds its own span.math
            assert formulas.count() >= 10, f"only {formulas.count()} formulas on the page"
            visit.page.wait_for_function(   # MathJax 2 typesets, then empties its queue
                "() => window.MathJax && MathJax.Hub && MathJax.Hub.queue.pending === 0 && "
                "document.querySelectorAll('span.math .MathJax').length > 0", timeout=30_000)
            rendered = visit.page.locator("span.math.notranslate > .MathJax").count()
            assert rendered == formulas.count(), f"{rendered} of {formulas.count()} formulas rendered"
            raw = visit.page.evaluate("() => [...document.querySelectorAll('span.math.notranslate')]"
                                      ".filter(s => s.innerText.includes('\\\\(')).length")
            assert raw == 0, f"{raw} formulas still show their LaTeX source"
            assert not [u for u in visit.external if "mathjax" in u.lower()], visit.external
            assert not visit.errors, f"{visit.url}: console errors: {visit.errors}"
        finally:
            browser.close()


def test_browser_tables_are_padded_and_long_code_lines_wrap(served_site):
    """The tables the notebooks print (pandas Styler) get cell padding, so numbers do not run together, and code
    lines longer than the page wrap instead of being cut off (site/_static/course.css)."""
    try:
        from playwright import sync_api
    except ImportError:
        skip_or_fail('Playwright is not installed (pip install -e ".[site]")')
    chromium = chromium_executable()
    if chromium is None:
        skip_or_fail(NO_CHROMIUM)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        try:
            visit = BrowserPage(browser, served_site, "notebooks/13_modern_decoders.ipynb")
            cell = visit.page.locator(".cell_output table td").first
            sync_api.expect(cell).to_be_attached()
            padding = cell.evaluate("e => parseFloat(getComputedStyle(e).paddingLeft)")
            assert padding >= 4, f"table cells have {padding}px of padding: their numbers run together"
            clipped = visit.page.evaluate(
                "() => [...document.querySelectorAll('.cell_input pre')]"
                ".filter(p => p.scrollWidth > p.clientWidth + 1).length")
            assert clipped == 0, f"{clipped} code blocks are wider than the page"
            assert not visit.errors, f"{visit.url}: console errors: {visit.errors}"
        finally:
            browser.close()

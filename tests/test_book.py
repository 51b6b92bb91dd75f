"""The book (``python -m rungs book build``) is built and every page is opened in a real browser.

Built into a temporary folder, served by ``http.server`` on 127.0.0.1, opened
in Debian's Chromium through Playwright's Python API (the system browser; no
browser is downloaded). Every request that leaves 127.0.0.1 is blocked and
counted: a page that needs a CDN fails here. Each page must render: a
heading, its tables, its figures loaded (``naturalWidth > 0``), its formulas
drawn, no stream output split in fragments, no console error, and every link
between pages must resolve.

Needs: ``apt-get install -y chromium`` (``bash run.sh test`` installs it when
it can) and the ``playwright`` package; without them the browser test skips
and says so. ``RUNGS_BOOK_SCREENSHOTS=DIR`` saves a full-page PNG of each page.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import threading
from pathlib import Path
from urllib.parse import urljoin, urlparse

import pytest

from rungs.tools import book

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("book")
    return out, book.build(out)


def test_every_notebook_has_a_page_and_the_contents_lists_the_ladder(built):
    out, pages = built
    names = {p.name for p in pages}
    assert names == {"index.html"} | {p.stem + ".html" for p in book.entries()[0]["path"].parent.glob("*.ipynb")
                                      if not re.search(r"\.(new|backup)", p.name)}
    contents = (out / "index.html").read_text(encoding="utf-8")
    for rung in ("N0", "N1", "N2", "N3", "N4", "N5", "lab"):
        assert f'<td class="rung">{rung}</td>' in contents


def test_no_page_loads_anything_from_another_site(built):
    out, pages = built
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "<script" not in text, f"{page.name}: a script (require.js, MathJax, widgets) would need a CDN"
        assert not re.search(r"<link[^>]+href=[\"']https?:", text), f"{page.name}: a stylesheet from another site"
        assert ".ipynb\"" not in text and ".ipynb#" not in text, f"{page.name}: a link still points to a notebook"


def test_formulas_become_mathml_and_links_html():
    assert "<math" in book.render_math("score $k_1 + 1$ and $$\\sum_L \\frac{1}{k}$$")
    assert book.render_math("price `$5` or \\$5, and 5 $ each") == "price `$5` or \\$5, and 5 $ each"
    assert book.rewrite_links("see [N1](01_bm25.ipynb#k1) and [x](https://a.example/b.ipynb)") == \
        "see [N1](01_bm25.html#k1) and [x](https://a.example/b.ipynb)"


@pytest.fixture(scope="module")
def served(built):
    out, pages = built
    server, base = _serve(out)
    yield base, pages
    server.shutdown()
    server.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


PAGE_CHECK = """() => {
  const cells = [...document.querySelectorAll('.jp-Cell')];
  const fragmented = cells.map((c, i) => [i, c.querySelectorAll(
      '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stdout"]').length]).filter(([i, n]) => n > 5);
  // A paragraph of one token per line: an output of many lines, nearly all of them one short word or less.
  const tokenColumns = [...document.querySelectorAll('.jp-OutputArea-output pre')].map(p => p.innerText.split('\\n'))
      .filter(lines => lines.length >= 8 && lines.filter(
          l => l.trim().split(/\\s+/).length <= 1 && l.trim().length <= 12).length > 0.8 * lines.length)
      .map(lines => lines.slice(0, 4).join(' / '));
  return {
    h1: [...document.querySelectorAll('h1')].map(h => h.innerText.trim()),
    tables: [...document.querySelectorAll('table')].map(t => [t.rows.length, t.getBoundingClientRect().height]),
    images: [...document.querySelectorAll('img')].map(i => [i.complete, i.naturalWidth, (i.alt || i.src).slice(0, 40)]),
    math: [...document.querySelectorAll('math')].map(m => m.getBoundingClientRect().width),
    rawTex: /\\$\\$|\\\\frac|\\\\sum/.test(document.body.innerText),
    links: [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href')),
    fragmented, tokenColumns,
    widgetsLeft: document.querySelectorAll('.jupyter-widgets').length,
  };
}"""


def _browser_or_skip():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no browser at {CHROMIUM}: apt-get install -y chromium (bash run.sh test does it as root)")
    return pytest.importorskip("playwright.sync_api", reason="pip install playwright (requirements.txt has it)")


def _serve(folder: Path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def open_in_browser(sync_api, base: str, pages: list[Path], shots: str | None = None) -> tuple[list[str], list[str]]:
    """Open every page; returns (problems, requests that tried to leave 127.0.0.1)."""
    problems, outside, names = [], [], {p.name for p in pages}

    def block_outside(route):
        if urlparse(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1100, "height": 900})  # a fresh profile each run
        context.route("**/*", block_outside)
        for page_path in pages:
            page = context.new_page()
            errors = []
            page.on("console", lambda msg, errors=errors: msg.type == "error" and errors.append(msg.text))
            page.on("pageerror", lambda err, errors=errors: errors.append(str(err)))
            response = page.goto(base + page_path.name, wait_until="load")
            name = page_path.name
            if response is None or response.status != 200:
                problems.append(f"{name}: HTTP {response and response.status}")
                continue
            seen = page.evaluate(PAGE_CHECK)
            if shots:
                Path(shots).mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(Path(shots) / (page_path.stem + ".png")), full_page=True)
            if not seen["h1"]:
                problems.append(f"{name}: no heading")
            problems += [f"{name}: an empty or invisible table" for rows, height in seen["tables"] if rows < 2 or height <= 0]
            problems += [f"{name}: figure not loaded ({what})" for done, width, what in seen["images"]
                         if not done or width <= 0]
            problems += [f"{name}: a formula drawn with no width" for width in seen["math"] if width <= 0]
            if seen["rawTex"]:
                problems.append(f"{name}: TeX left as text ($$, \\frac or \\sum)")
            problems += [f"{name}: cell {i} shows {n} stream fragments" for i, n in seen["fragmented"]]
            problems += [f"{name}: a column of one token per line: {sample!r}" for sample in seen["tokenColumns"]]
            if seen["widgetsLeft"]:
                problems.append(f"{name}: {seen['widgetsLeft']} widget placeholder(s) with nothing to draw them")
            problems += [f"{name}: console error: {e}" for e in errors]
            for href in seen["links"]:
                target = urlparse(urljoin(base + name, href))
                if target.hostname != "127.0.0.1" or not target.path.endswith(".html"):
                    continue  # another site (not followed) or an anchor on this page
                if target.path.rsplit("/", 1)[-1] not in names:
                    problems.append(f"{name}: link {href} leads to no page of the book")
            if name == "index.html":
                if not seen["tables"] or seen["tables"][0][0] < len(pages):  # header row + one row per notebook
                    problems.append("index.html: the contents table lacks rows")
            elif not any(href == "index.html" for href in seen["links"]):
                problems.append(f"{name}: no link back to the contents")
            page.close()
        browser.close()
    return problems, outside


def test_every_page_renders_in_a_real_browser(served):
    sync_api = _browser_or_skip()
    base, pages = served
    problems, outside = open_in_browser(sync_api, base, pages, os.environ.get("RUNGS_BOOK_SCREENSHOTS"))
    assert not outside, f"pages asked for other sites (a CDN?): {sorted(set(outside))[:5]}"
    assert not problems, "\n".join(problems)


def test_the_browser_check_catches_a_broken_page(tmp_path):
    """The check is not blind: a token-per-line answer, a dead link and a broken figure are all reported."""
    import nbformat

    sync_api = _browser_or_skip()
    source = tmp_path / "notebooks"
    source.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# N0 · Broken\n\nSee [the next rung](01_missing.ipynb).\n\n"
                                              "![a figure](figure-that-is-not-there.png)"),
                nbformat.v4.new_code_cell("for t in tokens: print(t)", execution_count=1, outputs=[
                    nbformat.v4.new_output("stream", name="stdout", text=t + "\n")
                    for t in ["Je", "pars", "en", "vacances", "le", "3", "mai", "et", "je"]])]
    nbformat.write(nb, source / "00_broken.ipynb")
    pages = book.build(tmp_path / "book", source)
    server, base = _serve(tmp_path / "book")
    try:
        problems, _ = open_in_browser(sync_api, base, pages)
    finally:
        server.shutdown()
        server.server_close()
    text = "\n".join(problems)
    assert "a column of one token per line: 'Je / pars / en / vacances'" in text
    assert "link 01_missing.html leads to no page of the book" in text
    assert "figure not loaded" in text


def test_prev_and_next_follow_the_ladder(built):
    out, pages = built
    order = [p.name for p in pages[1:]]
    for i, name in enumerate(order):
        text = (out / name).read_text(encoding="utf-8")
        nav = re.search(r'<nav[^>]*rungs-book top[^>]*>.*?</nav>', text, re.S).group(0)
        links = re.findall(r'href="([^"]+)"', nav)
        expected = ([order[i - 1]] if i else []) + ["index.html"] + ([order[i + 1]] if i + 1 < len(order) else [])
        assert links == expected, (name, links)


def _small_collection(folder: Path, *names: str) -> Path:
    import nbformat

    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"# {name}\n\nUn texte."),
                                             nbformat.v4.new_code_cell("1 + 1")])
        nbformat.write(nb, folder / name)
    return folder


def test_every_name_written_into_the_html_is_escaped(tmp_path):
    from html.parser import HTMLParser
    from urllib.parse import unquote

    hostile = '10_a"b<c>&d \'e.ipynb'
    source = _small_collection(tmp_path / "nb", "00_fts.ipynb", hostile)
    out = tmp_path / "book"
    book.build(out, source)

    class Links(HTMLParser):
        def __init__(self):
            super().__init__()
            self.hrefs = []

        def handle_starttag(self, tag, attrs):
            self.hrefs += [v for k, v in attrs if tag == "a" and k == "href"]

    for page in ("index.html", "00_fts.html"):
        text = (out / page).read_text(encoding="utf-8")
        assert 'a"b<c>' not in text, page  # the raw name would close the attribute and open a tag
        links = Links()
        links.feed(text)
        pages = [unquote(h) for h in links.hrefs if h.endswith(".html") and h != "index.html"]
        assert pages and all((out / p).is_file() for p in pages), (page, pages)


def test_a_book_built_into_a_file_is_one_line_and_the_file_is_kept(tmp_path, capsys):
    source = _small_collection(tmp_path / "nb", "00_fts.ipynb")
    target = tmp_path / "book.html"
    target.write_text("mine")
    assert book.main(["build", str(target), "--notebooks", str(source)]) == 1
    err = capsys.readouterr().err
    assert "book.html is a file" in err and len(err.strip().splitlines()) == 1
    assert target.read_text() == "mine"


@pytest.mark.parametrize("content", ["{ not json", "[1, 2]", "[" * 100_000, '{"cells": 5, "nbformat": 4}',
                                     '{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [{"cell_type": 7}]}'])
def test_a_broken_notebook_is_named_and_nothing_is_written(tmp_path, capsys, content):
    source = _small_collection(tmp_path / "nb", "00_fts.ipynb")
    (source / "03_rag.ipynb").write_text(content, encoding="utf-8")
    out = tmp_path / "book"
    assert book.main(["build", str(out), "--notebooks", str(source)]) == 1
    err = capsys.readouterr().err
    assert "03_rag.ipynb" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not out.exists()

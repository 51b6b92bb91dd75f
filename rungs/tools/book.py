"""``python -m rungs book build DIR``: the notebooks as a static site, to read without installing anything.

For a reader with no Python, a learner whose laptop cannot run the model, or
an instructor projecting the outputs: one HTML page per notebook, with its
outputs as committed (nothing is executed), a contents page that lists the
ladder with one line per rung, previous/next links on every page, and the
links between rungs rewritten from ``.ipynb`` to ``.html``.

Built with nbconvert (it comes with JupyterLab, so building needs nothing
more and no network) through its ``lab`` template, with every script a page
would fetch from a CDN taken out, so the book opens offline, even from a USB
stick (``file://``):

- require.js and the widget manager: not loaded; a widget output shows its
  text fallback, and saved widget state is dropped (it would show stale values);
- MathJax: not loaded; formulas are turned into MathML at build time
  (``latex2mathml``), which browsers draw natively;
- mermaid: not loaded (no notebook uses it).

Streamed outputs split in many pieces are joined (nbconvert's
``coalesce_streams``) so a page shows a paragraph, not one token per line.
Every name written into the HTML is escaped (a notebook's file name in an
``href`` is quoted, then escaped). Every notebook is read and converted
before the first page is written: a broken one is named, and nothing is.

Cost: about a second per notebook.
"""

from __future__ import annotations

import argparse
import html
import re
import sys
from pathlib import Path
from urllib.parse import quote

from ..core import paths
from ..core.errors import RungsError

def notebooks() -> Path:
    """The collection's notebooks: in the repository this package runs from (they are not installed with it)."""
    return paths.in_checkout("notebooks", what="the notebooks")
TITLE = "Search in your own documents — a ladder of rungs"

# The contents page: (prefix of the notebook's name, rung, what it teaches in one line).
LADDER = [
    ("00_", "N0", "SQLite FTS5: an index for free, MATCH, bm25(), weights, snippets, user input that is not syntax"),
    ("01_", "N1", "BM25 written out: k1, b, field weights, stop words, stemming; equal to FTS5 to 1e-9"),
    ("01a_", "primer", "measuring a ranking: MRR, recall, success, nDCG, AP, judged@k; the paired test, bootstrap, Holm"),
    ("02_", "N2", "a multilingual encoder finds « congés payés » for « vacances »; reciprocal rank fusion"),
    ("03_", "N3", "a local model answers from retrieved passages; citations checked; « je ne sais pas »"),
    ("04_", "N4", "yes/no probabilities, choices and scores from a model, validated; a judge that reranks"),
    ("05_", "N5", "plan → search → read → rank → synthesize → cite, bounded in rounds, time and tokens"),
    ("06_", "lab", "metrics, sweeps of k1 × b × title weight and of the fusion constant, on a held-out half"),
    ("07_", "your documents", "the same ladder over a folder of your own files: Markdown, text, HTML, PDF, Word"),
    ("08_", "engines", "why engines are fast: impacts frozen, MaxScore, shards and global idf, the same knobs exported"),
]

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_LINK = re.compile(r"(\]\(|href=[\"'])(?!https?://)([\w./-]*?)\.ipynb(#[^)\"'\s]*)?")
_FENCE = re.compile(r"(^```.*?^```|^~~~.*?^~~~|`[^`\n]+`)", re.S | re.M)
_DISPLAY_MATH = re.compile(r"\$\$(.+?)\$\$", re.S)
_INLINE_MATH = re.compile(r"(?<![\\$\w])\$(?!\s)([^$\n]+?)(?<!\s)\$(?![\w$])")


class BookError(RungsError, RuntimeError):
    """The book cannot be built; the message says why and what to do."""


# ---------------------------------------------------------------- markdown: formulas and links

def _mathml(tex: str, display: bool) -> str:
    try:
        from latex2mathml.converter import convert
    except ImportError:  # still readable without it: the formula as TeX, in code
        return f"<code>{html.escape(tex)}</code>"
    try:
        return convert(tex.strip(), display="block" if display else "inline")
    except Exception:  # a formula latex2mathml cannot read is shown as written, not lost
        return f"<code>{html.escape(tex)}</code>"


def _outside_code(text: str, change) -> str:
    """Apply ``change`` to the parts of a Markdown text that are not code (fenced blocks, inline spans)."""
    pieces = _FENCE.split(text)
    return "".join(piece if i % 2 else change(piece) for i, piece in enumerate(pieces))


def render_math(markdown: str) -> str:
    """``$$…$$`` and ``$…$`` → MathML, outside code; ``\\$`` and prices like « 5 $ » stay text."""
    def change(text: str) -> str:
        text = _DISPLAY_MATH.sub(lambda m: "\n\n" + _mathml(m.group(1), True) + "\n\n", text)
        return _INLINE_MATH.sub(lambda m: _mathml(m.group(1), False), text)

    return _outside_code(markdown, change)


def rewrite_links(text: str) -> str:
    """``[N1](01_bm25.ipynb#k1)`` → ``[N1](01_bm25.html#k1)``; links to other sites are left alone."""
    return _LINK.sub(lambda m: f"{m.group(1)}{m.group(2)}.html{m.group(3) or ''}", text)


# ---------------------------------------------------------------- one notebook

def _source(cell) -> str:
    return "".join(cell.source) if isinstance(cell.source, list) else cell.source


def prepare(notebook):
    """The notebook as the book shows it: outputs as committed, made readable in a static page."""
    from nbconvert.preprocessors import CoalesceStreamsPreprocessor

    coalesce = CoalesceStreamsPreprocessor()

    notebook.metadata.pop("widgets", None)  # saved widget state: values of a past session, shown as live
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            cell.source = rewrite_links(render_math(_source(cell)))
        elif cell.cell_type == "code":
            coalesce.preprocess_cell(cell, {}, 0)
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                if WIDGET_VIEW in data and len(data) > 1:
                    del data[WIDGET_VIEW]  # the text fallback says what the widget was
    return notebook


_TEMPLATE = r"""
{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block extra_css -%}
<style type="text/css">
nav.rungs-book { display: flex; justify-content: space-between; gap: 1em; padding: 0.6em 1em;
  font-family: var(--jp-ui-font-family); font-size: 14px; border-bottom: 1px solid #ddd; background: #fafafa; }
nav.rungs-book.bottom { border-top: 1px solid #ddd; border-bottom: none; margin-top: 2em; }
nav.rungs-book a { text-decoration: none; }
nav.rungs-book .prev, nav.rungs-book .next { flex: 1; }
nav.rungs-book .next { text-align: right; }
math[display="block"] { margin: 0.8em 0; font-size: 1.15em; }
</style>
{%- endblock extra_css -%}
{%- block body_header -%}
{{ super() }}
{{ resources.rungs_nav | safe }}
{%- endblock body_header -%}
{%- block body_footer -%}
{{ resources.rungs_nav_bottom | safe }}
{{ super() }}
{%- endblock body_footer -%}
"""


def _exporter():
    from jinja2 import DictLoader
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="lab", extra_loaders=[DictLoader({"rungs_book.html.j2": _TEMPLATE})])
    exporter.template_file = "rungs_book.html.j2"
    exporter.exclude_anchor_links = False
    return exporter


def _href(page: str) -> str:
    """A page's name as an ``href``: quoted as a URL (spaces, #, ?), then escaped for the attribute."""
    return html.escape(quote(page), quote=True)


def _nav(entries: list[dict], index: int, where: str) -> str:
    def link(entry, arrow_left: bool) -> str:
        label = html.escape(f"{entry['rung']} · {entry['title']}")
        return f'<a href="{_href(entry["page"])}">{"← " + label if arrow_left else label + " →"}</a>'

    prev = link(entries[index - 1], True) if index > 0 else ""
    nxt = link(entries[index + 1], False) if index + 1 < len(entries) else ""
    return (f'<nav class="rungs-book {where}" aria-label="rungs"><span class="prev">{prev}</span>'
            f'<a href="index.html">contents</a><span class="next">{nxt}</span></nav>')


# ---------------------------------------------------------------- the book

def _title(notebook, fallback: str) -> str:
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            for line in _source(cell).splitlines():
                if line.startswith("# "):
                    return re.sub(r"^(N\d|lab|[Pp]rimer|\d+)\s*·\s*", "", line[2:].strip())
    return fallback


def entries(source: Path | None = None) -> list[dict]:
    """The pages in ladder order: every known rung that exists, then any other notebook, by name."""
    source = Path(source) if source is not None else notebooks()
    import nbformat

    files = sorted(p for p in source.glob("*.ipynb") if not re.search(r"\.(new|backup)(-\d+)?\.ipynb$", p.name))
    if not files:
        raise BookError(f"no notebook in {source}")
    found = []
    for prefix, rung, line in LADDER:
        found += [(p, rung, line) for p in files if p.name.startswith(prefix)]
    found += [(p, p.stem.split("_")[0], "") for p in files if not any(p == f[0] for f in found)]
    result = []
    for path, rung, line in found:
        try:
            notebook = nbformat.read(path, as_version=4)
            nbformat.validate(notebook)
        except Exception as err:  # noqa: BLE001 - nbformat raises many kinds (not JSON, invalid, nested)
            raise BookError(f"{path.name} is not a readable notebook ({type(err).__name__}: "
                            f"{' '.join(str(err).split())[:120]}): fix it, or move it out of {source}; "
                            "nothing was written") from None
        result.append({"path": path, "page": path.stem + ".html", "rung": rung, "line": line,
                       "title": _title(notebook, path.stem), "notebook": notebook})
    return result


def _contents(pages: list[dict]) -> str:
    rows = "\n".join(
        f'<tr><td class="rung">{html.escape(e["rung"])}</td><td><a href="{_href(e["page"])}">{html.escape(e["title"])}</a>'
        f'</td><td>{html.escape(e["line"])}</td></tr>' for e in pages)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(TITLE)}</title>
<style>
body {{ font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 58em; margin: 2em auto;
  padding: 0 1em; line-height: 1.5; color: #222; }}
table {{ border-collapse: collapse; width: 100%; }}
th, td {{ text-align: left; padding: 0.45em 0.6em; border-bottom: 1px solid #ddd; vertical-align: top; }}
td.rung {{ font-weight: 600; white-space: nowrap; }}
a {{ text-decoration: none; }}
</style></head>
<body><main>
<h1>{html.escape(TITLE)}</h1>
<p>A teaching collection that goes from a full-text index to answers with checked sources, one notebook per
rung, over the employee handbook of a fictional French company. These pages show each notebook with the
outputs it was committed with: nothing here runs, nothing needs a network. To run them yourself:
<code>bash run.sh lab</code>.</p>
<table>
<thead><tr><th>rung</th><th>notebook</th><th>what it teaches</th></tr></thead>
<tbody>
{rows}
</tbody></table>
</main></body></html>
"""


def build(out: Path, source: Path | None = None) -> list[Path]:
    """Write the book into ``out``: ``index.html`` and one page per notebook. Returns the pages written.

    Every page is made before any is written: a notebook that cannot be converted stops the build, named.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise BookError(f"{out} is a file: give a folder for the book (it is created if missing)")
    pages = entries(source)
    exporter = _exporter()
    made = []
    for i, entry in enumerate(pages):
        try:
            notebook = prepare(entry["notebook"])
            body, _ = exporter.from_notebook_node(notebook, resources={
                "metadata": {"name": f"{entry['rung']} · {entry['title']}"},
                "rungs_nav": _nav(pages, i, "top"), "rungs_nav_bottom": _nav(pages, i, "bottom")})
        except Exception as err:  # noqa: BLE001 - a notebook nbconvert cannot render is named, not a traceback
            raise BookError(f"{entry['path'].name} cannot be converted ({type(err).__name__}: "
                            f"{' '.join(str(err).split())[:120]}); nothing was written") from None
        made.append((out / entry["page"], body))
    try:
        out.mkdir(parents=True, exist_ok=True)
        for path, body in [(out / "index.html", _contents(pages)), *made]:
            path.write_text(body, encoding="utf-8")
    except OSError as err:
        raise BookError(f"the book cannot be written in {out} ({err.strerror or err})") from None
    return [out / "index.html", *(path for path, _ in made)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rungs book", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="write the book (index.html and one page per notebook) into DIR")
    b.add_argument("out", metavar="DIR", type=Path)
    b.add_argument("--notebooks", type=Path, default=None, help="where the notebooks are (default: the collection's)")
    args = parser.parse_args(argv)
    try:
        written = build(args.out, args.notebooks)
    except BookError as err:
        print(f"book: {err}", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    print(f"open {args.out / 'index.html'} in a browser (no server, no network needed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Reading one file: Markdown, plain text, HTML, PDF and Word, each with the library made for it.

What it is for: a learner's folder holds real files. Each reader turns the
bytes of one file into a document — ``title``, ``body``, ``headings`` and, for
a PDF, ``page_starts`` (where each page begins in the body, which the
passages turn into the page they cite). A file that cannot be read is an
``Unreadable`` naming the reason and, where there is one, the fix.

The title: the front matter's ``title:`` or the first ``#`` heading
(Markdown); ``<title>`` or the first heading (HTML); the document's metadata
or its first line (PDF); the core properties' title or the first heading
(Word); the first line (text); else the file's name.

Where a new format goes: a ``read_xxx(data, path) -> dict`` here, its
extensions in ``FORMATS``, and a test with a real file of that format.

Cost: reading is dominated by PDFs (pypdf: a few pages a second to a hundred,
depending on the file).
"""

from __future__ import annotations

import codecs
import html
import io
import logging
import re
import unicodedata
import warnings
from html.parser import HTMLParser
from pathlib import Path

from ..core.errors import RungsError


#: The largest file read, in bytes: a 200 MB PDF is a book scan, not a page to search.
MAX_BYTES = 20_000_000
#: What each extension is read as.
FORMATS = {".md": "markdown", ".markdown": "markdown", ".txt": "text", ".text": "text",
           ".html": "html", ".htm": "html", ".xhtml": "html", ".pdf": "pdf", ".docx": "docx"}
#: Types people have that rungs does not read, with what to do instead.
_HINTS = {".doc": "the old Word format: save it as .docx", ".odt": "an OpenDocument file: save it as .docx or PDF",
          ".rtf": "rich text: save it as .docx", ".pages": "an Apple Pages file: export it as PDF or .docx",
          ".xlsx": "a spreadsheet: rungs reads documents, not tables", ".pptx": "slides: export them as PDF"}


class Unreadable(RungsError, ValueError):
    """One file could not be read; the message says why (and, when there is one, the fix)."""


def _text(data: bytes, name: str, encoding: str = "utf-8") -> str:
    try:
        text = data.decode("utf-8-sig" if encoding == "utf-8" else encoding)  # a BOM is not a character
    except UnicodeDecodeError as err:
        raise Unreadable(f"not {encoding.upper()} text (byte {err.start} is {data[err.start]:#04x}): "
                         "save it as UTF-8") from None
    # NFC: a decomposed « é » (e + accent) would otherwise be two characters to every rung.
    return unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\r", "\n"))


def _first_line(text: str, width: int = 120) -> str:
    for line in text.split("\n"):
        line = " ".join(line.strip().lstrip("#").split())
        if line:
            return line if len(line) <= width else line[: width - 1] + "…"
    return ""


def _name_title(path: Path) -> str:
    """A title made from a file name: « conges-payes.pdf » → « conges payes »."""
    return " ".join(re.split(r"[-_ ]+", path.stem)).strip() or path.name


_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


def read_markdown(data: bytes, path: Path) -> dict:
    """Front matter (``title:``) if any, then the body; the title falls back to the first ``#`` heading."""
    text = _text(data, path.name)
    meta, body = {}, text
    lines = text.split("\n")
    if lines and lines[0].strip() == "---":
        end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
        if end is not None:  # an unclosed front matter is text, not metadata
            for line in lines[1:end]:
                key, sep, value = line.partition(":")
                if sep and key.strip():
                    meta[key.strip().lower()] = value.strip().strip("\"'")
            body = "\n".join(lines[end + 1:])
    headings = [m.group(2).strip() for m in map(_HEADING.match, body.split("\n")) if m]
    title = meta.get("title") or (headings[0] if headings else "")
    return {"title": title, "body": body.strip(), "headings": headings}


def read_text(data: bytes, path: Path) -> dict:
    """Plain text: the first line is the title."""
    text = _text(data, path.name).strip()
    return {"title": _first_line(text), "body": text, "headings": []}


class _HTMLText(HTMLParser):
    """Visible text of an HTML page, one paragraph per block; ``<title>`` and the headings kept aside."""

    BLOCKS = {"p", "div", "section", "article", "li", "ul", "ol", "dl", "dt", "dd", "table", "tr", "td", "th",
              "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "br", "hr", "main", "figure",
              "figcaption", "header", "footer", "aside", "caption"}
    HIDDEN = {"script", "style", "noscript", "template", "head", "nav", "svg"}
    # DocBook's navigation bars (« Précédent · Suivant · Sommaire ») are on every page of a manual: not content.
    HIDDEN_CLASSES = {"navheader", "navfooter"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.chunks: list[str] = []
        self.title, self.headings = "", []
        self._skip: list | None = None  # [tag, depth] while inside a hidden element
        self._in_title = False
        self._heading: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if self._skip is not None:
            self._skip[1] += tag == self._skip[0]
            return
        classes = set((dict(attrs).get("class") or "").split())
        if (tag in self.HIDDEN and tag != "head") or classes & self.HIDDEN_CLASSES:
            self._skip = [tag, 1]
            return
        if tag == "title":
            self._in_title = True
        if tag in self.BLOCKS:
            self.chunks.append("\n\n" if tag not in ("br", "td", "th") else ("\n" if tag == "br" else " "))
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._heading = []

    def handle_startendtag(self, tag, attrs):
        if self._skip is None and tag in ("br", "hr"):
            self.chunks.append("\n")

    def handle_endtag(self, tag):
        if self._skip is not None:
            if tag == self._skip[0]:
                self._skip[1] -= 1
                if self._skip[1] <= 0:
                    self._skip = None
            return
        if tag == "title":
            self._in_title = False
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6") and self._heading is not None:
            heading = " ".join("".join(self._heading).split())
            if heading:
                self.headings.append(heading)
            self._heading = None
        if tag in self.BLOCKS:
            self.chunks.append("\n\n")

    def handle_data(self, data):
        if self._in_title:
            self.title += data
            return
        if self._skip is not None:
            return
        self.chunks.append(data)
        if self._heading is not None:
            self._heading.append(data)


_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_\-:.]+)""", re.IGNORECASE)


def read_html(data: bytes, path: Path) -> dict:
    """HTML through the standard library's parser: the charset the page declares (UTF-8 if none)."""
    found = _CHARSET.search(data[:4096])
    encoding = "utf-8"
    if found:
        try:
            encoding = codecs.lookup(found.group(1).decode("ascii")).name
        except (LookupError, UnicodeDecodeError):
            pass  # an unknown charset: try UTF-8, and say so if that fails
    parser = _HTMLText()
    parser.feed(_text(data, path.name, "utf-8" if encoding in ("utf-8", "utf_8") else encoding))
    parser.close()
    text = "".join(parser.chunks).replace("\xa0", " ")
    # Whitespace inside a paragraph is layout, not content; blank lines separate paragraphs.
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text)]
    body = "\n\n".join(p for p in paragraphs if p)
    title = " ".join(html.unescape(parser.title).split()) or (parser.headings[0] if parser.headings else "")
    return {"title": title, "body": body, "headings": parser.headings}


def read_pdf(data: bytes, path: Path) -> dict:
    """Every page's text (pypdf), and where each page starts in the body: passages learn their page."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    # pypdf logs every oddity of a damaged file; the report says what matters, once.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reader = PdfReader(io.BytesIO(data))
            if reader.is_encrypted:
                # Many PDFs are "encrypted" with an empty password (printing rights): those open.
                try:
                    opened = reader.decrypt("")
                except Exception:  # noqa: BLE001 - an unsupported cipher is a reason, not a crash
                    opened = 0
                if not opened:
                    raise Unreadable("encrypted (a password is needed): save an unprotected copy")
            texts = [(page.extract_text() or "") for page in reader.pages]
            meta = reader.metadata or {}
            meta_title = str(meta.get("/Title") or "").strip()
    except Unreadable:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, OSError, RecursionError) as err:
        raise Unreadable(f"not a readable PDF ({type(err).__name__}: {str(err)[:120]}): "
                         "open it and save it again, or export it again") from None
    if not texts:
        raise Unreadable("a PDF with no pages")
    body, page_starts = "", []
    for number, text in enumerate(texts):
        text = unicodedata.normalize("NFC", text.replace("\r\n", "\n")).strip()
        if number:
            body += "\n\n"
        page_starts.append(len(body))
        body += text
    if not body.strip():
        raise Unreadable(f"no text in its {len(texts)} page(s): a scanned image? run OCR on it first")
    return {"title": meta_title or _first_line(body), "body": body, "page_starts": page_starts, "headings": []}


def read_docx(data: bytes, path: Path) -> dict:
    """Word paragraphs and tables in document order (python-docx); headings are the Heading/Title styles."""
    try:
        import docx

        document = docx.Document(io.BytesIO(data))
        paragraphs, headings, first_heading = [], [], ""
        for block in document.iter_inner_content():
            if hasattr(block, "rows"):  # a table: one line per row, cells separated
                for row in block.rows:
                    cells = dict.fromkeys(c.text.strip() for c in row.cells if c.text.strip())
                    if cells:
                        paragraphs.append(" · ".join(cells))
                continue
            text = block.text.strip()
            if not text:
                continue
            style = (block.style.name if block.style is not None else "") or ""
            if style.startswith("Heading") or style == "Title":
                headings.append(text)
                first_heading = first_heading or text
            paragraphs.append(text)
        core_title = (document.core_properties.title or "").strip()
    except Exception as err:  # noqa: BLE001 - python-docx raises many kinds for a damaged file
        raise Unreadable(f"not a readable Word file ({type(err).__name__}: {str(err)[:120]}): "
                         "open it in Word or LibreOffice and save it as .docx again") from None
    body = unicodedata.normalize("NFC", "\n\n".join(paragraphs))
    return {"title": core_title or first_heading or _first_line(body), "body": body, "headings": headings}


READERS = {"markdown": read_markdown, "text": read_text, "html": read_html, "pdf": read_pdf, "docx": read_docx}


def file_format(path: Path) -> str:
    """The format a file is read as, from its extension; an unsupported one raises ``Unreadable`` with the fix."""
    ext = path.suffix.lower()
    if ext in FORMATS:
        return FORMATS[ext]
    hint = _HINTS.get(ext, "rungs reads .md, .txt, .html, .pdf and .docx")
    raise Unreadable(f"unsupported type {ext or '(no extension)'}: {hint}")


def read_file(path, folder=None, *, max_bytes: int = MAX_BYTES) -> dict:
    """One file as a document: ``id`` and ``path`` (relative to ``folder``), ``title``, ``body``, ``format``,
    ``headings``, and ``page_starts`` for a PDF. Raises ``Unreadable`` with the reason."""
    path = Path(path)
    folder = Path(folder) if folder is not None else path.parent
    rel = path.relative_to(folder).as_posix() if path.is_absolute() == folder.is_absolute() else path.name
    kind = file_format(path)
    _check_size(path.stat().st_size, max_bytes)
    data = path.read_bytes()
    return _document(rel, kind, data, path)


def _bytes(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n / 1e3:.1f} kB"


def _check_size(size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise Unreadable(f"{_bytes(size)}, over the limit of {_bytes(max_bytes)} per file "
                         "(max_bytes, or --max-mb on the command line)")


def _document(rel: str, kind: str, data: bytes, path: Path) -> dict:
    doc = READERS[kind](data, path)
    doc = {"id": rel, "path": rel, "format": kind, **doc}
    doc["title"] = doc["title"] or _name_title(path)
    doc["body"] = doc["body"] or None  # an empty file is a document without a body, as in the handbook
    return doc

"""Your own documents: a folder of real files read, indexed on disk, kept up to date, searched by every rung.

What it is for: the handbook is a teaching set; your folder is the point. This
module reads Markdown, plain text, HTML, PDF and Word (.docx) files with the
libraries made for them (``html.parser``, ``pypdf``, ``python-docx``), cuts them
into passages (``rungs.passages``), and keeps one SQLite database (FTS5 for the
keyword leg, the passages, what was read when) with the vector cache beside it.
Every rung of the ladder then runs over it, through the one contract
(``search(query, *, limit) -> list[Hit]``).

Reading, file by file:

- **title**: the front matter's ``title:`` or the first ``#`` heading
  (Markdown); ``<title>`` or the first heading (HTML); the document's
  metadata or its first line (PDF); the core properties' title or the first
  heading (Word); the first line (text); else the file's name.
- **id** and **path**: the path relative to the folder (``rh/conges.pdf``):
  what a source is cited as.
- **pages** (PDF only): ``page_starts``, the offset where each page begins in
  the body, which ``passages.split`` turns into each passage's ``page``.
- A file that cannot be read (a damaged or encrypted PDF, text that is not
  UTF-8, a type nobody reads, a file over ``max_bytes``) is *reported by name
  with the reason*, and the rest are indexed. Hidden files and folders are
  skipped; a link that leads out of the folder is not followed.

Indexing, incrementally (``index_folder``): a file whose size and modification
time are unchanged costs one ``stat``; if they changed, its content hash
decides; only a file whose content changed is read again, and only its
passages whose text changed are encoded again (the vector cache is keyed by
the text). A removed file is removed. The whole update is **one transaction**:
an indexing run that is interrupted — Ctrl-C, an error, the machine killed —
leaves the previous index exactly as it was, and the vectors it had already
encoded are kept in the cache, so the next run does not pay for them again.

Four decisions are yours:

- ``size`` and ``overlap`` of the passages (recorded in the index; changing
  them means reading every file again, and ``index_folder`` says so);
- the rung: ``fts`` (SQLite's bm25(), on disk), ``bm25`` (N1, every word's
  part shown), ``vectors``, ``hybrid`` (both, fused by RRF);
- the level: documents (passages rolled up, ``rollup="max"`` or ``"sum"``) or
  the passages themselves — a search-time knob;
- ``max_bytes``, the largest file read (default 20 MB).

Cost: reading is dominated by PDFs (pypdf: a few pages a second to a hundred,
depending on the file); encoding by the vector leg (USE: about a hundred
passages a second on one thread); an unchanged folder of a thousand files is
re-checked in well under a second.
"""

from __future__ import annotations

import codecs
import hashlib
import html
import io
import json
import logging
import os
import random
import re
import sqlite3
import time
import unicodedata
import warnings
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from .errors import BadArgument, RungsError, check_choice, check_int
from .fts import FtsIndex
from .handbook import passage_text
from .passages import DEFAULT_OVERLAP, DEFAULT_SIZE, rollup, split
from .retrieval import Hit, Retriever

#: The largest file read, in bytes: a 200 MB PDF is a book scan, not a page to search.
MAX_BYTES = 20_000_000

#: What each extension is read as.
FORMATS = {".md": "markdown", ".markdown": "markdown", ".txt": "text", ".text": "text",
           ".html": "html", ".htm": "html", ".xhtml": "html", ".pdf": "pdf", ".docx": "docx"}

#: Types people have that rungs does not read, with what to do instead.
_HINTS = {".doc": "the old Word format: save it as .docx", ".odt": "an OpenDocument file: save it as .docx or PDF",
          ".rtf": "rich text: save it as .docx", ".pages": "an Apple Pages file: export it as PDF or .docx",
          ".xlsx": "a spreadsheet: rungs reads documents, not tables", ".pptx": "slides: export them as PDF"}

INDEX_DIR = ".rungs"
INDEX_FILE = "index.sqlite"
SCHEMA = 1


class Unreadable(RungsError, ValueError):
    """One file could not be read; the message says why (and, when there is one, the fix)."""


class IndexNotFound(RungsError, FileNotFoundError):
    """There is no index where one was looked for; the message says how to make one."""


class IndexMismatch(RungsError, ValueError):
    """The index belongs to another folder, or was written by another version of rungs."""


# ---------------------------------------------------------------- reading one file

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


# ---------------------------------------------------------------- walking a folder

@dataclass(frozen=True)
class Skipped:
    """A file that was not indexed, and why."""

    path: str
    reason: str


def _walk(folder: Path):
    """Every file under ``folder``, sorted, as (relative path, absolute path, stat) — or (rel, None, reason).

    Hidden files and folders (a leading dot: ``.git``, ``.rungs``, ``.DS_Store``) are not looked at.
    A link is followed only when it leads to a file inside the folder; linked folders are not entered
    (a link loop cannot trap the walk).
    """
    root = folder.resolve()
    for current, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        base = Path(current)
        for d in dirs:
            if (base / d).is_symlink():
                yield (base / d).relative_to(folder).as_posix(), None, "a link to a folder: not followed"
        dirs[:] = [d for d in dirs if not (base / d).is_symlink()]
        for name in sorted(files):
            if name.startswith("."):
                continue
            path = base / name
            rel = path.relative_to(folder).as_posix()
            if not _utf8(rel):  # bytes that are no text in any name: SQLite (and a citation) could not hold it
                yield rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace"), None, \
                    "a file name that is not UTF-8 text: rename the file"
                continue
            if path.is_symlink():
                target = path.resolve()
                if not target.is_relative_to(root):
                    yield rel, None, "a link to a file outside the folder: not followed"
                    continue
                if not target.is_file():
                    yield rel, None, "a link to nothing (its target is gone)"
                    continue
            try:
                yield rel, path, path.stat()
            except OSError as err:
                yield rel, None, f"cannot be opened ({err.strerror})"


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def read_folder(folder, *, max_bytes: int = MAX_BYTES) -> tuple[list[dict], list[Skipped]]:
    """Every readable file of ``folder`` as a document, and every other file with the reason (nothing indexed)."""
    folder = _folder(folder)
    documents, skipped = [], []
    for rel, path, stat in _walk(folder):
        if path is None:
            skipped.append(Skipped(rel, stat))
            continue
        try:
            documents.append(read_file(path, folder, max_bytes=max_bytes))
        except Unreadable as err:
            skipped.append(Skipped(rel, str(err)))
    return documents, skipped


def _folder(folder) -> Path:
    if not isinstance(folder, (str, os.PathLike)):
        raise BadArgument(f"folder must be a path, not {type(folder).__name__}")
    path = Path(folder)
    if not path.exists():
        raise IndexNotFound(f"{folder}: no such folder")
    if not path.is_dir():
        raise BadArgument(f"{folder} is a file: give the folder that holds your documents")
    return path


# ---------------------------------------------------------------- the index on disk

@dataclass
class IndexReport:
    """What one indexing run did, file by file: what it read, what it skipped and why, what it cost."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    touched: list[str] = field(default_factory=list)  # a new modification time, the same content: not re-read
    skipped: list[Skipped] = field(default_factory=list)
    passages: int = 0          # passages in the index after the run
    documents: int = 0         # documents in the index after the run
    read: int = 0              # files read (parsed) this run
    encoded: int = 0           # passages encoded this run (the others came from the vector cache)
    seconds: float = 0.0
    rebuilt: str = ""          # why every file was read again, if it was

    def __str__(self) -> str:
        lines = []
        if self.rebuilt:
            lines.append(f"every file read again: {self.rebuilt}")
        lines.append(f"{self.documents} documents, {self.passages} passages in the index; this run: "
                     f"{len(self.added)} added, {len(self.changed)} changed, {len(self.removed)} removed, "
                     f"{self.unchanged} unchanged; {self.read} read, {self.encoded} passages encoded")
        for label, paths in (("added", self.added), ("changed", self.changed), ("removed", self.removed),
                             ("same content, new date (not re-read)", self.touched)):
            for p in paths:
                lines.append(f"  {label:<8} {p}" if len(label) < 9 else f"  {p}: {label}")
        if self.skipped:
            lines.append(f"not indexed ({len(self.skipped)}):")
            unsupported: dict[str, int] = {}
            for s in self.skipped:
                if s.reason.startswith("unsupported type") and len(self.skipped) > 12:
                    unsupported[s.reason] = unsupported.get(s.reason, 0) + 1  # 300 images: one line, not 300
                else:
                    lines.append(f"  {s.path}: {s.reason}")
            for reason, n in unsupported.items():
                lines.append(f"  {n} file(s): {reason}")
        return "\n".join(lines)

    def __repr__(self) -> str:  # shows as its text in a notebook
        return str(self)


def default_index_path(folder) -> Path:
    """Where a folder's index lives unless you say otherwise: ``FOLDER/.rungs/index.sqlite``."""
    return Path(folder) / INDEX_DIR / INDEX_FILE


def _last_index_file() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "rungs" / "last-index"


def _connect(path: Path) -> sqlite3.Connection:
    # isolation_level=None: rungs says BEGIN and COMMIT itself, so one run is one transaction.
    # check_same_thread=False: a notebook's widgets may search from another thread than the one that opened it.
    db = sqlite3.connect(path, isolation_level=None, timeout=30, check_same_thread=False)
    db.execute("PRAGMA foreign_keys = ON")
    return db


_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, sha256 TEXT,
    format TEXT, title TEXT, body TEXT, page_starts TEXT, headings TEXT, passages INTEGER);
CREATE TABLE IF NOT EXISTS skipped (path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, sha256 TEXT, reason TEXT);
CREATE TABLE IF NOT EXISTS passages (
    n INTEGER PRIMARY KEY, id TEXT UNIQUE, doc TEXT REFERENCES files(path) ON DELETE CASCADE,
    position INTEGER, start INTEGER, page INTEGER, title TEXT, body TEXT);
CREATE INDEX IF NOT EXISTS passages_doc ON passages(doc);
CREATE VIRTUAL TABLE IF NOT EXISTS passages_fts USING fts5(
    id UNINDEXED, title, body, tokenize = 'unicode61 remove_diacritics 2');
"""


def _nfc(text):
    return unicodedata.normalize("NFC", text) if text else text


def index_folder(folder, *, index=None, size: int | None = None, overlap: int | None = None,
                 encoder=None, vectors: bool = True, max_bytes: int = MAX_BYTES, progress: bool = False,
                 batch: int = 256, remember: bool = False) -> "FolderIndex":
    """Index ``folder`` (or bring its index up to date) and return the index; ``.report`` says what was done.

    ``index``: the database file (default ``FOLDER/.rungs/index.sqlite``). ``size``/``overlap``: the
    passages' (default: what the index already has, else 1,500 and 200).
    ``encoder``: the vector leg's encoder (default USE multilingual); ``vectors=False`` skips encoding
    (the keyword rungs work at once; the vector leg encodes on first use). ``progress``: tqdm bars.
    ``remember``: note this index as the last one (``open_index()`` with no path finds it; the CLI does).
    """
    folder = _folder(folder)
    max_bytes = check_int(max_bytes, "max_bytes", low=1)
    batch = check_int(batch, "batch", low=1)
    path = Path(index) if index is not None else default_index_path(folder)
    if path.is_dir():
        raise BadArgument(f"index must be a database file, not the folder {path} (try {path / INDEX_FILE})")
    path.parent.mkdir(parents=True, exist_ok=True)
    store = FolderIndex(path, create=True, folder=folder)
    store.update(size=size, overlap=overlap, encoder=encoder, vectors=vectors, max_bytes=max_bytes,
                 progress=progress, batch=batch)
    if not remember:
        return store
    try:
        last = _last_index_file()
        last.parent.mkdir(parents=True, exist_ok=True)
        last.write_text(str(path.resolve()) + "\n")
    except OSError:
        pass  # remembering the last index is a convenience, never a reason to fail
    return store


def open_index(where=None) -> "FolderIndex":
    """An index that exists: a database file, a folder holding ``.rungs/index.sqlite``, or (``None``)
    the one in the current folder, else the last one indexed on this machine."""
    if where is None:
        here = default_index_path(Path.cwd())
        if here.exists():
            return FolderIndex(here)
        last = _last_index_file()
        remembered = last.read_text().strip() if last.exists() else ""
        if remembered and Path(remembered).exists():
            return FolderIndex(Path(remembered))
        raise IndexNotFound("no index here and none indexed before: run  python -m rungs index FOLDER  first "
                            "(or pass --index PATH)")
    path = Path(where)
    if path.is_dir():
        candidate = default_index_path(path)
        if not candidate.exists() and path.name == INDEX_DIR:
            candidate = path / INDEX_FILE
        path = candidate
    if not path.exists():
        raise IndexNotFound(f"no index at {where}: run  python -m rungs index FOLDER  first")
    return FolderIndex(path)


class FolderIndex:
    """One folder's index on disk: the SQLite database (files, passages, FTS5) and its vector cache.

    ``update(...)`` brings it up to date with the folder; ``retriever(rung, ...)`` gives a retriever of any
    rung over it, built once and kept (search-time knobs stay search-time); ``passages()``,
    ``documents()`` and ``skipped()`` read what it holds.
    """

    def __init__(self, path, *, create: bool = False, folder=None):
        self.path = Path(path)
        if not create and not self.path.exists():
            raise IndexNotFound(f"no index at {self.path}")
        try:
            self.db = _connect(self.path)
            if create:
                self.db.executescript(_TABLES)
            meta = dict(self.db.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError as err:
            raise IndexMismatch(f"{self.path} is not a rungs index ({err}): delete it, or give another --index") \
                from None
        if meta.get("schema") not in (None, str(SCHEMA)):
            raise IndexMismatch(f"{self.path} was written by another version of rungs (schema {meta['schema']}): "
                                "delete it and index again")
        if not create and "folder" not in meta:
            raise IndexMismatch(f"{self.path} holds no finished index: run  python -m rungs index FOLDER  again")
        self.folder = self._folder(meta, folder)
        self.size = int(meta.get("size", DEFAULT_SIZE))
        self.overlap = int(meta.get("overlap", DEFAULT_OVERLAP))
        self.report: IndexReport | None = None
        self._built: dict = {}  # what a retriever needs, built once: passages, a BM25 index, vectors

    def _folder(self, meta: dict, folder) -> Path:
        stored = meta.get("folder")
        if folder is not None:
            folder = Path(folder)
            if stored and Path(stored).resolve() != folder.resolve() and Path(stored).exists():
                raise IndexMismatch(f"{self.path} is the index of another folder ({stored}); "
                                    "give another --index, or delete that file")
            return folder
        if stored and Path(stored).exists():
            return Path(stored)
        if self.path.parent.name == INDEX_DIR:  # the folder was moved with its index inside it
            return self.path.parent.parent
        return Path(stored or ".")

    def __repr__(self) -> str:
        return f"FolderIndex({self.folder.name!r}: {self.count()} documents, passages of {self.size} characters)"

    # ------------------------------------------------------------ reading what the index holds

    def count(self) -> int:
        return self.db.execute("SELECT count(*) FROM files").fetchone()[0]

    @property
    def vector_folder(self) -> Path:
        """The vector cache beside the database: ``index.vectors/`` next to ``index.sqlite``."""
        return self.path.with_suffix(".vectors")

    def cache(self, encoder):
        """This index's vector cache for ``encoder`` (one file per encoder, keyed by each passage's text)."""
        from .vectors import VectorCache

        key = ("cache", encoder.fingerprint)
        if key not in self._built:
            self._built[key] = VectorCache(encoder, folder=self.vector_folder)
        return self._built[key]

    def documents(self) -> list[dict]:
        """Every indexed document: ``id``, ``path``, ``title``, ``body``, ``format``, ``headings``, ``page_starts``."""
        out = []
        for path, fmt, title, body, starts, headings in self.db.execute(
                "SELECT path, format, title, body, page_starts, headings FROM files ORDER BY path"):
            doc = {"id": path, "path": path, "format": fmt, "title": title, "body": body,
                   "headings": json.loads(headings or "[]")}
            if starts:
                doc["page_starts"] = json.loads(starts)
            out.append(doc)
        return out

    def passages(self) -> list[dict]:
        """Every passage, in document order: ``id`` (``path#n``), ``doc``, ``path``, ``position``, ``start``,
        ``page`` (PDF), ``title``, ``body``."""
        out = []
        for pid, doc, position, start, page, title, body in self.db.execute(
                "SELECT id, doc, position, start, page, title, body FROM passages ORDER BY doc, position"):
            p = {"id": pid, "doc": doc, "path": doc, "position": position, "start": start, "title": title,
                 "body": body}
            if page is not None:
                p["page"] = page
            out.append(p)
        return out

    def skipped(self) -> list[Skipped]:
        """The files that were not indexed at the last run, and why."""
        return [Skipped(p, r) for p, r in self.db.execute("SELECT path, reason FROM skipped ORDER BY path")]

    # ------------------------------------------------------------ bringing it up to date

    def update(self, *, size: int | None = None, overlap: int | None = None, encoder=None, vectors: bool = True,
               max_bytes: int = MAX_BYTES, progress: bool = False, batch: int = 256) -> IndexReport:
        """Compare the folder with the index and apply the difference, in one transaction. See the module."""
        size = self.size if size is None else check_int(size, "size", low=50, high=1_000_000)
        overlap = min(self.overlap, size // 2) if overlap is None else overlap
        overlap = check_int(overlap, "overlap", low=0, high=size // 2)
        started = time.perf_counter()
        report = IndexReport()
        db = self.db
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        if meta and "size" in meta and (int(meta["size"]), int(meta["overlap"])) != (size, overlap):
            report.rebuilt = (f"the passages were {meta['size']} characters with {meta['overlap']} of overlap, "
                              f"now {size} with {overlap}")
        if vectors and encoder is None:
            from .vectors import default_encoder
            encoder = default_encoder()
        cache = self.cache(encoder) if vectors else None
        encoded_before = cache.encoded if cache else 0
        known = {p: (s, m, h) for p, s, m, h in db.execute("SELECT path, size, mtime_ns, sha256 FROM files")}
        known_skipped = {p: (s, m, h, r) for p, s, m, h, r in
                         db.execute("SELECT path, size, mtime_ns, sha256, reason FROM skipped")}
        seen, pending = set(), []
        bar = _progress(progress, "reading", unit="file")
        encoding = _progress(progress and cache is not None, "encoding", unit="passage")
        db.execute("BEGIN IMMEDIATE")  # one run, one transaction: interrupted, the previous index stays whole
        try:
            for rel, path, stat in _walk(self.folder):
                bar.update(1)
                if path is not None and self._own(path):
                    continue  # the index's own files, when --index put them inside the folder
                seen.add(rel)
                if path is None:  # a link not followed: reported, never read
                    self._skip(rel, None, None, None, stat, report)
                    continue
                stamp = (stat.st_size, stat.st_mtime_ns)
                if not report.rebuilt and rel in known and known[rel][:2] == stamp:
                    report.unchanged += 1  # one stat: nothing read
                    continue
                if rel in known_skipped and known_skipped[rel][:2] == stamp and not report.rebuilt:
                    report.skipped.append(Skipped(rel, known_skipped[rel][3]))  # still unreadable: not read again
                    continue
                try:
                    kind = file_format(path)
                    _check_size(stat.st_size, max_bytes)
                    data = path.read_bytes()
                except Unreadable as err:
                    self._skip(rel, stat, None, known.get(rel), str(err), report)
                    continue
                except OSError as err:
                    self._skip(rel, stat, None, known.get(rel), f"cannot be read ({err.strerror})", report)
                    continue
                digest = hashlib.sha256(data).hexdigest()
                if not report.rebuilt and rel in known and known[rel][2] == digest:
                    # A new date on the same content (a copy, a checkout): the hash says nothing changed.
                    db.execute("UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?", (*stamp, rel))
                    report.touched.append(rel)
                    report.unchanged += 1
                    continue
                if rel in known_skipped and known_skipped[rel][2] == digest and not report.rebuilt:
                    db.execute("UPDATE skipped SET size = ?, mtime_ns = ? WHERE path = ?", (*stamp, rel))
                    report.skipped.append(Skipped(rel, known_skipped[rel][3]))
                    continue
                try:
                    doc = _document(rel, kind, data, path)
                except Unreadable as err:
                    self._skip(rel, stat, digest, known.get(rel), str(err), report)
                    continue
                report.read += 1
                new = self._store(doc, stat, digest, size, overlap)
                (report.changed if rel in known else report.added).append(rel)
                db.execute("DELETE FROM skipped WHERE path = ?", (rel,))
                if cache is not None:
                    pending += [passage_text(p) for p in new]
                    if len(pending) >= batch:
                        cache.documents(pending)  # encoded and saved now: an interruption keeps them
                        encoding.update(len(pending))
                        pending = []
            for rel in sorted(set(known) - seen):
                self._remove(rel)
                report.removed.append(rel)
            for rel in sorted(set(known_skipped) - seen):  # a skipped file that is gone is no longer news
                db.execute("DELETE FROM skipped WHERE path = ?", (rel,))
            if cache is not None and pending:
                cache.documents(pending)
            db.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                           [("schema", str(SCHEMA)), ("size", str(size)), ("overlap", str(overlap)),
                            ("folder", str(self.folder.resolve())), ("updated", str(time.time()))])
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")  # Ctrl-C included: what was committed before this run is what stays
            raise
        finally:
            bar.close()
            encoding.close()
        self.size, self.overlap = size, overlap
        self._built = {k: v for k, v in self._built.items() if k[0] == "cache"}  # legs see the new passages
        report.documents = self.count()
        report.passages = db.execute("SELECT count(*) FROM passages").fetchone()[0]
        if cache is not None:
            self._prune(cache)
            report.encoded = cache.encoded - encoded_before
        for paths in (report.added, report.changed, report.removed, report.touched):
            paths.sort()
        report.skipped.sort(key=lambda s: s.path)
        report.seconds = time.perf_counter() - started
        self.report = report
        return report

    def _own(self, path: Path) -> bool:
        path, db = path.resolve(), self.path.resolve()
        return (path.parent == db.parent and path.name.startswith(db.name)) or \
            path.is_relative_to(self.vector_folder.resolve())

    def _skip(self, rel, stat, digest, was_indexed, reason, report):
        if was_indexed:
            self._remove(rel)  # it was readable before; now it is not: its old text must not be found
            report.removed.append(rel)
        self.db.execute("INSERT OR REPLACE INTO skipped(path, size, mtime_ns, sha256, reason) VALUES (?, ?, ?, ?, ?)",
                        (rel, stat.st_size if stat else None, stat.st_mtime_ns if stat else None, digest, reason))
        report.skipped.append(Skipped(rel, reason))

    def _remove(self, rel):
        db = self.db
        db.execute("DELETE FROM passages_fts WHERE rowid IN (SELECT n FROM passages WHERE doc = ?)", (rel,))
        db.execute("DELETE FROM passages WHERE doc = ?", (rel,))
        db.execute("DELETE FROM files WHERE path = ?", (rel,))

    def _store(self, doc, stat, digest, size, overlap) -> list[dict]:
        self._remove(doc["id"])
        pieces = split([doc], size=size, overlap=overlap)
        db = self.db
        db.execute("INSERT INTO files(path, size, mtime_ns, sha256, format, title, body, page_starts, headings, "
                   "passages) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (doc["id"], stat.st_size, stat.st_mtime_ns, digest, doc["format"], doc["title"], doc["body"],
                    json.dumps(doc["page_starts"]) if doc.get("page_starts") else None,
                    json.dumps(doc.get("headings") or [], ensure_ascii=False), len(pieces)))
        for p in pieces:
            n = db.execute("INSERT INTO passages(id, doc, position, start, page, title, body) VALUES (?, ?, ?, ?, ?, ?, ?)",
                           (p["id"], p["doc"], p["position"], p["start"], p.get("page"), p["title"], p["body"])
                           ).lastrowid
            db.execute("INSERT INTO passages_fts(rowid, id, title, body) VALUES (?, ?, ?, ?)",
                       (n, p["id"], _nfc(p["title"]), _nfc(p["body"])))
        return pieces

    def _prune(self, cache) -> None:
        """Forget the vectors of passages the index no longer holds (a removed file, an edited paragraph)."""
        keep = {cache.key(passage_text(p)) for p in self.passages()}
        stale = set(cache.vectors) - keep
        if stale:
            for key in stale:
                del cache.vectors[key]
            cache._save()

    # ------------------------------------------------------------ retrievers over it

    def retriever(self, rung: str = "hybrid", *, encoder=None, size: int | None = None, overlap: int | None = None,
                  stopwords=True, stem=None, keyword_knobs: dict | None = None, **knobs) -> "FolderRetriever":
        """A retriever of ``rung`` (``fts``, ``bm25``, ``vectors``, ``hybrid``) over this index's passages,
        rolled up to documents unless ``level="passage"``. The heavy parts (a BM25 index, the passages'
        vectors) are built once per index and kept; asking again costs nothing.

        ``size``/``overlap`` other than the index's: the stored documents are cut again in memory (to
        compare passage sizes without touching the index on disk). ``stopwords``/``stem``: the BM25
        tokenizer (build-time). ``keyword_knobs``: the hybrid's keyword leg's knobs (``k1``, ``b``,
        ``match``…; default: match any word). ``knobs``: default search-time knobs, e.g. ``k=30``,
        ``rollup="sum"``, ``level="passage"`` — each can also be given to ``search``.
        """
        from .hybrid import YOUR_DOCUMENTS, Hybrid

        rung = check_choice(rung, "rung", ("fts", "bm25", "vectors", "hybrid"))
        size = self.size if size is None else check_int(size, "size", low=50, high=1_000_000)
        if overlap is None:
            overlap = self.overlap if size == self.size else min(self.overlap, size // 2)
        overlap = check_int(overlap, "overlap", low=0, high=size // 2)
        passages = self._passages_at(size, overlap)
        if rung == "fts":
            inner = self._fts(size, overlap)
        elif rung == "bm25":
            inner = self._bm25(size, overlap, stopwords, stem)
        else:
            vector = self._vectors(size, overlap, encoder or _default_encoder())
            if rung == "vectors":
                inner = vector
            else:
                keyword = self._bm25(size, overlap, stopwords, stem).with_knobs(
                    **{"match": YOUR_DOCUMENTS["match"], **(keyword_knobs or {})})
                inner = Hybrid({"keyword": keyword, "vector": vector}, method=YOUR_DOCUMENTS["method"],
                               k=YOUR_DOCUMENTS["k"], weights=YOUR_DOCUMENTS["weights"])
        on_disk = rung == "fts" and (size, overlap) == (self.size, self.overlap)
        refresh = (lambda: (self._passages_at(size, overlap), self._titles())) if on_disk else None
        retriever = FolderRetriever(inner, passages, self._titles(), refresh)
        return retriever.with_knobs(**knobs) if knobs else retriever

    def _once(self, key, build):
        if key not in self._built:
            self._built[key] = build()
        return self._built[key]

    def _titles(self) -> dict:
        return self._once(("titles",), lambda: dict(self.db.execute("SELECT path, title FROM files")))

    def _passages_at(self, size, overlap) -> list[dict]:
        if (size, overlap) == (self.size, self.overlap):
            return self._once(("passages", size, overlap), self.passages)
        return self._once(("passages", size, overlap),
                          lambda: split(self.documents(), size=size, overlap=overlap))

    def _fts(self, size, overlap) -> Retriever:
        if (size, overlap) == (self.size, self.overlap):
            return DiskFts(self.db)
        # Another passage size: an FTS5 table in memory, built from the stored documents cut again.
        return self._once(("fts", size, overlap), lambda: FtsIndex(self._passages_at(size, overlap)))

    def _bm25(self, size, overlap, stopwords, stem) -> Retriever:
        from .bm25 import build_index

        return self._once(("bm25", size, overlap, repr(stopwords), repr(stem)),
                          lambda: build_index(self._passages_at(size, overlap), stopwords=stopwords, stem=stem))

    def _vectors(self, size, overlap, encoder) -> Retriever:
        from .vectors import VectorIndex

        return self._once(("vectors", size, overlap, encoder.fingerprint),
                          lambda: VectorIndex(self._passages_at(size, overlap), encoder, cache=self.cache(encoder)))

    def close(self) -> None:
        self.db.close()


def _default_encoder():
    from .vectors import default_encoder
    return default_encoder()


def _progress(enabled: bool, desc: str, **options):
    from tqdm.auto import tqdm
    # disable=None: a bar only where a person watches a terminal (never in a log, a test or a notebook's stderr).
    return tqdm(desc=desc, disable=None if enabled else True, leave=False, **options)


class DiskFts(FtsIndex):
    """N0 over the index on disk: FTS5's ``bm25()`` on the passages table, knobs ``weights`` and ``match``.

    The same search as ``FtsIndex`` (every word quoted, so user text is never syntax); only the table
    is not built from a list — it is the one ``index_folder`` keeps up to date.
    """

    name = "FTS5 (on disk)"

    def __init__(self, db: sqlite3.Connection, table: str = "passages_fts"):
        Retriever.__init__(self)  # FtsIndex.__init__ would build a table; this one exists
        self.db, self.table = db, table


# ---------------------------------------------------------------- documents from passages

class FolderRetriever(Retriever):
    """Any passage retriever, rolled up to documents (or not): the inner rung's knobs, plus
    ``level`` (``"document"`` or ``"passage"``), ``rollup`` (``"max"`` or ``"sum"``), ``top`` (passages
    summed) and ``depth`` (passages ranked before rolling up). Every hit carries ``path`` and, for a
    PDF, ``page``; a document hit carries its best passage (``extra["best"]``) to explain it."""

    OWN = {"level": "document", "rollup": "max", "top": 2, "depth": 200}

    def __init__(self, inner: Retriever, passages: list[dict], titles: dict, refresh=None):
        super().__init__()
        self.inner = inner
        self.name = f"{inner.name} over passages"
        self.defaults = {**inner.knobs, **self.OWN}
        self.knobs = dict(self.defaults)
        self._know(passages, titles)
        # Only for a rung that reads the index on disk (FTS5): it sees an update at once, so must we.
        self.refresh = refresh

    def _know(self, passages: list[dict], titles: dict) -> None:
        self.meta = {p["id"]: p for p in passages}
        self.doc_of = {p["id"]: p["doc"] for p in passages}
        self.titles = titles

    def _found(self, query, limit, inner) -> list[Hit]:
        hits = self.inner.search(query, limit=limit, **inner)
        if self.refresh and any(h.id not in self.meta for h in hits):
            self._know(*self.refresh())  # the table on disk changed since this retriever was made
        return hits

    def check_knobs(self, knobs: dict) -> dict:
        inner = {k: v for k, v in knobs.items() if k not in self.OWN}
        clean = self.inner._settings(inner)
        return {**clean,
                "level": check_choice(knobs["level"], "level", ("document", "passage")),
                "rollup": check_choice(knobs["rollup"], "rollup", ("max", "sum")),
                "top": check_int(knobs["top"], "top", low=1, high=1000),
                "depth": check_int(knobs["depth"], "depth", low=1, high=100_000)}

    def _passage_hit(self, h: Hit) -> Hit:
        p = self.meta.get(h.id, {})
        extra = {**h.extra, "doc": p.get("doc"), "path": p.get("doc"), "position": p.get("position")}
        if p.get("page") is not None:
            extra["page"] = p["page"]
        return Hit(id=h.id, score=h.score, title=h.title, parts=h.parts, why=h.why, extra=extra)

    def _search(self, query, limit, knobs):
        inner = {k: knobs[k] for k in self.inner.knobs}
        if knobs["level"] == "passage":
            return [self._passage_hit(h) for h in self._found(query, limit, inner)]
        found = [self._passage_hit(h) for h in self._found(query, max(knobs["depth"], limit), inner)]
        by_id = {h.id: h for h in found}
        docs = rollup(found, self.doc_of, how=knobs["rollup"], top=knobs["top"], titles=self.titles)[:limit]
        out = []
        for d in docs:
            best = by_id[d.extra["best_passage"]]
            pages = sorted({by_id[p].extra["page"] for p in d.extra["passages"] if "page" in by_id[p].extra})
            extra = {**d.extra, "path": d.id, "best": best}
            if pages:
                extra["page"], extra["pages"] = best.extra["page"], pages
            out.append(Hit(id=d.id, score=d.score, title=d.title, parts=d.parts, extra=extra))
        return out


# ---------------------------------------------------------------- showing results

def where(hit) -> str:
    """A hit as a reader finds it again: its file, and its page when the file has pages."""
    path = hit.get("path") or hit["id"]
    return f"{path}, p. {hit['page']}" if hit.get("page") is not None else path


def hits_table(hits, *, explain: bool = False, width: int = 40) -> str:
    """Rank, score, file (and page), title; ``explain``: what each part contributed, under each hit."""
    from .display import Table

    if not hits:
        return Table("(no results)")
    lines = []
    for rank, h in enumerate(hits, start=1):
        title = " ".join(str(h.title or "").split())
        title = title if len(title) <= width else title[: width - 1] + "…"
        place = where(h) if "#" not in h.id else h.id + (f", p. {h['page']}" if h.get("page") is not None else "")
        lines.append(f"{rank:>2}  {h.score:>8.4f}  {place:<34} {title}")
        if explain:
            lines += ["      " + line for line in explanation(h).split("\n")]
    return Table("\n".join(lines))


def explanation(hit) -> str:
    """The parts of one hit's score, in words: the passages a document counts, then each word or leg."""
    lines = []
    best = hit.get("best")
    if best is not None:  # a document: which passages make its score, then why the best one scored
        counted = " + ".join(f"{v:.3f} (passage {k.rsplit('#', 1)[-1]})" for k, v in (hit.parts or {}).items())
        page = f", page {best['page']}" if best.get("page") is not None else ""
        lines.append(f"= {counted}; best: passage {best['position']}{page}")
        hit = best
    if hit.parts is None:
        lines.append(f"no parts: {hit.why}")
        return "\n".join(lines)
    ranks = hit.get("ranks") or {}
    for name, value in hit.parts.items():
        if name in ranks:
            rank = ranks[name]
            lines.append(f"{value:>8.4f}  {name} leg, rank {rank if rank is not None else '— (not in its list)'}")
        elif value:
            lines.append(f"{value:>8.3f}  « {name} »")
    return "\n".join(lines)


# ---------------------------------------------------------------- questions about your own folder

def known_item_questions(documents, *, per_document: int = 1, seed: int = 0, min_words: int = 2,
                         use_titles: bool = True) -> list[dict]:
    """Known-item questions made from titles and headings: « find the document this heading is in ».

    Each question is a heading (or a title) of one document, judged ``{that document: 2}``. A heading
    found in two documents is ambiguous and dropped. What it biases, say it when you report a number:
    the question *is* the document's words, so the keyword leg is favoured, and titles (weighted, and
    repeated in every passage) favour it more. Good to tune on; not a measure of paraphrase.
    """
    if hasattr(documents, "documents"):
        documents = documents.documents()
    per_document = check_int(per_document, "per_document", low=1, high=100)
    owners: dict[str, set] = {}
    candidates = {}
    for d in documents:
        texts = ([d["title"]] if use_titles else []) + list(d.get("headings") or [])
        clean = []
        for t in texts:
            t = " ".join(str(t).split())
            t = re.sub(r"^[\d.\s]+(?=\D)", "", t)  # « 3.2. Calques » → « Calques »: numbers are not words people type
            if len(re.findall(r"[^\W\d_]{2,}", t)) >= min_words and t not in clean:
                clean.append(t)
        for t in clean:
            owners.setdefault(t.lower(), set()).add(d["id"])
        candidates[d["id"]] = clean
    rng = random.Random(seed)
    out = []
    for doc_id in sorted(candidates):
        unique = [t for t in candidates[doc_id] if len(owners[t.lower()]) == 1]
        for t in rng.sample(unique, min(per_document, len(unique))):
            out.append({"id": f"k{len(out) + 1:04d}", "question": t, "kind": "known-item",
                        "judged": {doc_id: 2}, "relevant": {doc_id: 2}})
    return out


def write_questions(questions: list[dict], path) -> None:
    """Save questions in the handbook's format (one JSON object a line: id, question, kind, judgments)."""
    with open(path, "w", encoding="utf-8") as out:
        for q in questions:
            record = {"id": q["id"], "question": q["question"], "kind": q.get("kind", "lexical"),
                      "judgments": q.get("judged") or q["relevant"]}
            out.write(json.dumps(record, ensure_ascii=False) + "\n")

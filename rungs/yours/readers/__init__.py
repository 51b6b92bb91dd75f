"""Reading one file: each format with the library made for it, one module a format.

What it is for: a learner's folder holds real files. Each reader turns the
bytes of one file into a document — ``title``, ``body``, ``sections`` (where
each heading or bookmark starts in the body, and its title), ``headings``,
``notes`` (what the learner should know about this file: the encoding it was
read in, pages without text, boilerplate not indexed), ``dropped`` (how much
boilerplate, by kind) and, for a PDF, ``page_starts`` (where each page
begins, which the passages turn into the page they cite). A file that cannot
be read is an ``Unreadable`` naming the reason and, where there is one, the fix.

=============  ===========================================  ======================
format         read with                                    module
=============  ===========================================  ======================
Markdown, text the standard library; UTF-8 else detected    ``readers.text``
HTML, EPUB     a linear tokenizer of our own (stdlib zip)   ``readers.markup``
PDF            PDFium (pypdfium2), cleaned                  ``readers.pdf``
Word, ODT, PPT python-docx, ElementTree, python-pptx        ``readers.office``
=============  ===========================================  ======================

The title: the front matter's ``title:`` or the first ``#`` heading
(Markdown); ``<title>`` or the first heading (HTML); the book's metadata
(EPUB); the document's metadata or its first line (PDF); the core
properties' title or the first heading (Word, OpenDocument, PowerPoint); the
first line (text); else the file's name.

Where a new format goes: a ``read_xxx(data, path) -> dict`` in the module of
its family (or a new one), its extensions in ``FORMATS``, and a test with a
real file of that format.

Cost: reading is dominated by PDFs (PDFium: a few hundred pages a second).
"""

from __future__ import annotations

import re
from pathlib import Path

from ...core.errors import MAX_TEXT_CHARS
from .common import Unreadable, too_long
from .markup import read_epub, read_html
from .office import read_docx, read_odt, read_pptx
from .pdf import read_pdf
from .text import read_markdown, read_text

__all__ = ["FORMATS", "MAX_BYTES", "READERS", "Unreadable", "file_format", "read_file"]

#: The largest file read, in bytes: a 200 MB PDF is a book scan, not a page to search.
MAX_BYTES = 20_000_000
#: What each extension is read as.
FORMATS = {".md": "markdown", ".markdown": "markdown", ".txt": "text", ".text": "text",
           ".html": "html", ".htm": "html", ".xhtml": "html", ".pdf": "pdf", ".docx": "docx",
           ".epub": "epub", ".odt": "odt", ".pptx": "pptx"}
#: Types people have that rungs does not read, with what to do instead.
_HINTS = {".doc": "the old Word format: save it as .docx", ".rtf": "rich text: save it as .docx",
          ".pages": "an Apple Pages file: export it as PDF or .docx",
          ".ppt": "the old PowerPoint format: save it as .pptx", ".odp": "OpenDocument slides: save them as .pptx",
          ".key": "Keynote slides: export them as .pptx or PDF",
          ".xlsx": "a spreadsheet: rungs reads documents, not tables", ".xls": "a spreadsheet: rungs reads documents",
          ".ods": "a spreadsheet: rungs reads documents, not tables", ".csv": "a table: rungs reads documents",
          ".mobi": "a Kindle book: convert it to EPUB", ".azw3": "a Kindle book: convert it to EPUB",
          ".djvu": "a DjVu scan: export it as PDF with its text layer"}
READERS = {"markdown": read_markdown, "text": read_text, "html": read_html, "pdf": read_pdf, "docx": read_docx,
           "epub": read_epub, "odt": read_odt, "pptx": read_pptx}


def file_format(path: Path) -> str:
    """The format a file is read as, from its extension; an unsupported one raises ``Unreadable`` with the fix."""
    ext = path.suffix.lower()
    if ext in FORMATS:
        return FORMATS[ext]
    hint = _HINTS.get(ext, "rungs reads .md, .txt, .html, .pdf, .docx, .odt, .pptx and .epub")
    raise Unreadable(f"unsupported type {ext or '(no extension)'}: {hint}")


def read_file(path, folder=None, *, max_bytes: int = MAX_BYTES) -> dict:
    """One file as a document: ``id`` and ``path`` (relative to ``folder``), ``title``, ``body``, ``format``,
    ``sections``, ``headings``, ``notes``, ``dropped``, and ``page_starts`` for a PDF. Raises ``Unreadable``."""
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


def _name_title(path: Path) -> str:
    """A title made from a file name: « conges-payes.pdf » → « conges payes »."""
    return " ".join(re.split(r"[-_ ]+", path.stem)).strip() or path.name


def _document(rel: str, kind: str, data: bytes, path: Path) -> dict:
    doc = READERS[kind](data, path)
    if len(doc["body"]) > MAX_TEXT_CHARS:  # one document is at most what every rung accepts
        raise too_long(len(doc["body"]))
    doc = {"id": rel, "path": rel, "format": kind, **doc}
    doc["title"] = doc["title"] or _name_title(path)
    doc["body"] = doc["body"] or None  # an empty file is a document without a body, as in the handbook
    return doc

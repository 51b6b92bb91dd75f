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

import errno
import os
import re
import stat as stat_kind
from pathlib import Path

from ...core.errors import MAX_TEXT_CHARS, BadArgument, check_int
from .common import Unreadable, too_long
from .markup import read_epub, read_html
from .office import read_docx, read_odt, read_pptx
from .pdf import read_pdf
from .text import read_markdown, read_text

__all__ = ["FORMATS", "MAX_BYTES", "READERS", "Unreadable", "file_format", "read_bytes", "read_file"]

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


def file_format(path) -> str:
    """The format a file is read as, from its extension; an unsupported one raises ``Unreadable`` with the fix."""
    ext = _path(path, "path").suffix.lower()
    if ext in FORMATS:
        return FORMATS[ext]
    hint = _HINTS.get(ext, "rungs reads .md, .txt, .html, .pdf, .docx, .odt, .pptx and .epub")
    raise Unreadable(f"unsupported type {ext or '(no extension)'}: {hint}")


def read_file(path, folder=None, *, max_bytes: int = MAX_BYTES) -> dict:
    """One file as a document: ``id`` and ``path`` (relative to ``folder``), ``title``, ``body``, ``format``,
    ``sections``, ``headings``, ``notes``, ``dropped``, and ``page_starts`` for a PDF. Raises ``Unreadable``
    (a path that is not one, or outside ``folder``, and a ``max_bytes`` that is no size: ``BadArgument``)."""
    path = _path(path, "path")
    folder = _path(folder, "folder") if folder is not None else path.parent
    max_bytes = check_int(max_bytes, "max_bytes", low=1)  # NaN compares false with every size: no limit at all
    if path.is_absolute() != folder.is_absolute():
        rel = path.name
    elif path.is_relative_to(folder):
        rel = path.relative_to(folder).as_posix()
    else:
        raise BadArgument(f"path {path} is not inside folder {folder}: give the folder that holds it (or none)")
    kind = file_format(path)
    return document_from(rel, kind, read_bytes(path, max_bytes), path)


def _path(value, name: str) -> Path:
    """A path given as text or as a ``Path``; a NUL is refused here (no file name holds one; ``os`` would say ValueError)."""
    try:
        path = Path(value)
    except TypeError:  # an int, None, bytes, a PathLike that gives bytes
        raise BadArgument(f"{name} must be a path (text or a pathlib.Path), not {type(value).__name__}") from None
    if "\0" in str(path):
        raise BadArgument(f"{name} holds a NUL character, which no file name can hold")
    try:
        os.fsencode(path)
    except UnicodeEncodeError as err:  # « \ud800 »: not the bytes of a name the system gave (those are \udc80–\udcff)
        raise BadArgument(f"{name} holds a lone surrogate (U+{ord(str(path)[err.start]):04X}), which no file name "
                          "can hold") from None
    return path


_KINDS = [(stat_kind.S_ISDIR, "a folder"), (stat_kind.S_ISFIFO, "a named pipe (FIFO)"), (stat_kind.S_ISSOCK, "a socket"),
          (stat_kind.S_ISCHR, "a character device"), (stat_kind.S_ISBLK, "a block device")]
#: What a link that leads back to itself is called, by the walk and by ``read_file``.
LINK_LOOP = "a link loop (the link leads back to itself): not followed"


def kind_of(mode: int) -> str:
    """What a file that is not a regular file is, from its ``st_mode``: « a named pipe (FIFO) », « a socket »…"""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_bytes(path: Path, max_bytes: int = MAX_BYTES) -> bytes:
    """A regular file's bytes, at most ``max_bytes``; anything else is ``Unreadable``, named by what it is.

    Opened without blocking, then looked at through the open file: a FIFO is said to be one at once
    (a blocking open waits forever for a writer), and a file swapped for a pipe after a ``stat`` too.
    """
    path, max_bytes = _path(path, "path"), check_int(max_bytes, "max_bytes", low=1)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        raise Unreadable(_not_opened(path, err)) from None
    info = os.fstat(fd)
    if not stat_kind.S_ISREG(info.st_mode):
        os.close(fd)
        raise Unreadable(f"{kind_of(info.st_mode)}, not a file: not read")
    with os.fdopen(fd, "rb") as file:
        check_size(info.st_size, max_bytes)
        data = _at_most(file, max_bytes + 1)  # a file that grew since its stat is still cut past the limit
    check_size(len(data), max_bytes)
    return data


def _at_most(file, limit: int) -> bytes:
    """At most ``limit`` bytes, a megabyte at a time: read(limit) would set aside ``limit`` bytes at once
    (a max_bytes of 10**12 is a MemoryError, of 10**30 an OverflowError), whatever the file's size."""
    chunks, size = [], 0
    while size < limit and (chunk := file.read(min(1 << 20, limit - size))):
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _not_opened(path: Path, err: OSError) -> str:
    if err.errno == errno.ENOENT:
        return "no such file (moved, removed, or a link to nothing)"
    if err.errno == errno.ELOOP:
        return LINK_LOOP
    try:  # a socket cannot be opened at all (ENXIO): its stat says what it is
        mode = os.stat(path).st_mode
    except OSError:
        mode = None
    if mode is not None and not stat_kind.S_ISREG(mode):
        return f"{kind_of(mode)}, not a file: not read"
    return f"cannot be opened ({err.strerror or err})"


def _bytes(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n / 1e3:.1f} kB"


def check_size(size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise Unreadable(f"{_bytes(size)}, over the limit of {_bytes(max_bytes)} per file "
                         "(max_bytes, or --max-mb on the command line)")


def _name_title(path: Path) -> str:
    """A title made from a file name: « conges-payes.pdf » → « conges payes »."""
    return " ".join(re.split(r"[-_ ]+", path.stem)).strip() or path.name


def document_from(rel: str, kind: str, data: bytes, path: Path) -> dict:
    doc = READERS[kind](data, path)
    if len(doc["body"]) > MAX_TEXT_CHARS:  # one document is at most what every rung accepts
        raise too_long(len(doc["body"]))
    doc = {"id": rel, "path": rel, "format": kind, **doc}
    doc["title"] = doc["title"] or _name_title(path)
    doc["body"] = doc["body"] or None  # an empty file is a document without a body, as in the handbook
    return doc

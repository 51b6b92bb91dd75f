"""What every reader shares: the refusal, the body a reader assembles, text decoding, and boilerplate tests.

What it is for: each format has its own reader (``text``, ``markup``, ``pdf``,
``office``), and each hands back the same thing — a body assembled by ``Body``
(paragraphs, and where each section and page starts), the notes a learner
should read about the file (« read as Windows-1252 », « 3 contents pages not
indexed »), and how much was dropped as boilerplate.

Decoding (``decode``): strict UTF-8 first (a BOM allowed), and only if that
fails a detector (charset-normalizer) restricted to the Western encodings
French text is written in (``Windows-1252``, ``ISO-8859-15``). Unrestricted, the
detector read short French files as Central-European or even Big5; the
restriction was chosen after seeing those results on the benchmark folder's
files (``benchmarks/README.md``), and the UTF-8 step is required (restricted
and alone, the detector read a UTF-8 file as Windows-1252).

Cost: one pass over each text; the detector samples a few kilobytes.
"""

from __future__ import annotations

import codecs
import io
import re
import unicodedata
import zipfile
import zlib
from collections import Counter

from ...core.errors import MAX_TEXT_CHARS, BadArgument, RungsError


class Unreadable(RungsError, ValueError):
    """One file could not be read; the message says why (and, when there is one, the fix)."""


#: What the detector may choose between when a file is not UTF-8 (charset-normalizer's names).
WESTERN = ["utf_8", "cp1252", "iso8859_15"]
_SHOWN = {"cp1252": "Windows-1252", "iso8859_15": "ISO-8859-15 (Latin-9)", "latin_1": "ISO-8859-1 (Latin-1)",
          "utf_16": "UTF-16", "utf_8": "UTF-8"}


def check_data(data) -> bytes:
    """What every reader reads: the file's bytes (a str would be taken for a file's name by some libraries)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise BadArgument(f"data must be the file's bytes (path.read_bytes()), not {type(data).__name__}")
    return bytes(data)


def encoding_name(codec: str) -> str:
    """An encoding as a learner knows it: « Windows-1252 », not « cp1252 »."""
    name = codecs.lookup(codec).name.replace("-", "_")
    return _SHOWN.get(name, name)


def decode(data: bytes) -> tuple[str, str]:
    """The text of ``data`` and the encoding it was read in: UTF-8 when it is, else the detector's Western guess."""
    data = check_data(data)
    try:
        return data.decode("utf-8-sig"), "utf_8"  # a BOM is not a character
    except UnicodeDecodeError as err:
        where = f"byte {err.start} is {data[err.start]:#04x}"
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16"), "utf_16"
        except UnicodeDecodeError:
            pass
    from charset_normalizer import from_bytes

    best = from_bytes(data, cp_isolation=WESTERN).best()
    if best is None:
        raise Unreadable(f"not UTF-8 ({where}), and not Windows-1252 or ISO-8859-15 text either: "
                         "open it in a text editor and save it as UTF-8")
    return str(best), best.encoding


def read_note(codec: str) -> list[str]:
    """What to say about the encoding a file was read in (nothing when it was UTF-8)."""
    return [] if codec in ("utf_8", "ascii") else [f"read as {encoding_name(codec)} (not UTF-8)"]


class Body:
    """A document's text as a reader assembles it: paragraphs joined by a blank line, with the offset
    where each section (``heading``) and each page (``page``) starts, and what was dropped, by kind."""

    def __init__(self):
        self._parts: list[str] = []
        self.size = 0
        self.sections: list[list] = []      # [offset, heading], in order
        self.page_starts: list[int] = []    # offset of each page (PDF)
        self.dropped: Counter = Counter()   # kind of boilerplate → characters (or pages) not indexed
        self.notes: list[str] = []

    def _next(self) -> int:
        return self.size + 2 if self.size else 0

    def add(self, paragraph: str) -> None:
        """One paragraph (blank ones are nothing), composed (NFC) before its offset is taken."""
        paragraph = unicodedata.normalize("NFC", paragraph.strip())
        if not paragraph:
            return
        if self.size:
            self._parts.append("\n\n")
            self.size += 2
        self._parts.append(paragraph)
        self.size += len(paragraph)
        if self.size > MAX_TEXT_CHARS:
            raise too_long(self.size)

    def heading(self, title: str, *, in_text: bool = True) -> None:
        """A heading starts a section; it is a paragraph of the body too, unless it is a name made up
        for the section (``in_text=False``: « Slide 3 » is not on the slide)."""
        title = unicodedata.normalize("NFC", " ".join(title.split()))
        if title:
            self.sections.append([self._next(), title])
            if in_text:
                self.add(title)

    def page(self, text: str) -> None:
        """One page, even empty (pages keep their numbers): it starts after a blank line."""
        text = unicodedata.normalize("NFC", text)
        if self.page_starts:
            self._parts.append("\n\n")
            self.size += 2
        self.page_starts.append(self.size)
        self._parts.append(text)
        self.size += len(text)
        if self.size > MAX_TEXT_CHARS:
            raise too_long(self.size)

    def text(self) -> str:
        return "".join(self._parts)

    def document(self, title: str = "") -> dict:
        """The reader's answer: ``title``, ``body``, ``sections``, ``headings``, ``notes``, ``dropped`` (and pages)."""
        doc = {"title": title, "body": self.text(), "sections": self.sections,
               "headings": [t for _, t in self.sections], "notes": self.notes, "dropped": dict(self.dropped)}
        if self.page_starts:
            doc["page_starts"] = self.page_starts
        return doc


def too_long(size: int) -> Unreadable:
    return Unreadable(f"{size / 1e6:.1f} M characters of text, over the limit of {MAX_TEXT_CHARS / 1e6:g} M "
                      "per file: split it into smaller files")


def first_line(text: str, width: int = 120) -> str:
    for line in text.split("\n"):
        line = " ".join(line.strip().lstrip("#").split())
        if line:
            return line if len(line) <= width else line[: width - 1] + "…"
    return ""


# ---------------------------------------------------------------- boilerplate: contents pages

# A line ending in a dot leader and a page number (« Annexes . . . . 17 », « Index ........ xii ») or in a
# tab and a number (word processors). Only the end of a line is looked at: a line of a million dots is
# not a million starting points (the pattern stays linear).
_LEADER = re.compile(r"(?:\.\s?){4,}\s*[\divxlcIVXLC]{0,6}\s*$|\t\d{1,4}\s*$")
#: A page is a contents page when this share of its lines end in a leader (and at least 4 do).
CONTENTS_SHARE = 0.25


def contents_like(text: str) -> bool:
    """Is this page a table of contents (or a back-of-book index) laid out with dot leaders?

    The share was chosen on the benchmark folder's PDF pages: at 0.25, every page it flagged was a
    contents page, a list of tables or an index page by inspection (chosen after seeing them; the
    counts were not kept in a results file).
    """
    lines = [line for line in text.split("\n") if line.strip()]
    leaders = sum(1 for line in lines if _LEADER.search(line[-80:]))
    return leaders >= 4 and leaders >= CONTENTS_SHARE * len(lines)


# ---------------------------------------------------------------- zip containers (Word, OpenDocument, EPUB, slides)

#: A ZIP inside a document may not expand past this (a few kilobytes that inflate to gigabytes is a bomb).
MAX_UNZIPPED = 400_000_000


def open_zip(data: bytes, what: str) -> zipfile.ZipFile:
    """The ZIP container of an office file or an EPUB, refused by name if it is not one or would expand too far."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(check_data(data)))
    except (zipfile.BadZipFile, ValueError, OSError, NotImplementedError) as err:  # « zip file version 9.9 »
        raise Unreadable(f"not a readable {what} (its ZIP container is damaged: {err}): "
                         "open it in its program and save it again") from None
    total = sum(info.file_size for info in archive.infolist())
    if total > MAX_UNZIPPED:
        raise Unreadable(f"a {what} that would expand to {total / 1e9:.1f} GB: not read")
    return archive


def member(archive: zipfile.ZipFile, name: str, what: str) -> bytes:
    try:
        return archive.read(name)
    except KeyError:
        raise Unreadable(f"not a readable {what}: it has no {name}") from None
    except (zipfile.BadZipFile, OSError, NotImplementedError, RuntimeError, zlib.error, EOFError) as err:
        # zlib.error: a byte flipped inside a deflated part; EOFError: the part's stream cut short
        raise Unreadable(f"not a readable {what} ({name} cannot be unpacked: {err})") from None

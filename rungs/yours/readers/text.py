"""Plain text and Markdown: decoded (UTF-8, else detected), headings found by a scan that stays linear.

What it is for: ``.txt`` and ``.md`` files, in whatever encoding they were
saved. The text is decoded by ``common.decode`` (a file that is not UTF-8 is
read in the Western encoding the detector names, and the report says which);
line ends are made ``\\n``; NFC, so that a decomposed « é » is one character.

Markdown's sections are its ATX headings (``# Titre``), found line by line
without a regular expression: the pattern ``^(#{1,6})\\s+(.+?)\\s*#*\\s*$``
took 33 s on one heading followed by 3,000 spaces (its cost is cubic in the
spaces); ``_atx`` looks at each character once.

Cost: linear in the text.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from .common import Body, decode, first_line, read_note

# man-db renders a word hyphenated at a line end with U+2010 and the line break: the word is one word.
_HYPHENATED = re.compile(r"(?<=[^\W\d_])\u2010\n[ \t]*(?=[^\W\d_])")


def _text(data: bytes) -> tuple[str, list[str]]:
    text, codec = decode(data)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return unicodedata.normalize("NFC", _HYPHENATED.sub("", text)), read_note(codec)


def read_text(data: bytes, path: Path) -> dict:
    """Plain text: the first line is the title; no sections."""
    text, notes = _text(data)
    body = Body()
    body.notes += notes
    text = text.strip()
    doc = body.document(first_line(text))
    doc["body"] = text
    return doc


def _atx(line: str) -> str | None:
    """The heading of an ATX line (« ## Titre ## »), or None; each character looked at once or twice."""
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3 or not stripped.startswith("#"):
        return None
    level = len(stripped) - len(stripped.lstrip("#"))
    rest = stripped[level:]
    if level > 6 or (rest and rest[0] not in " \t"):
        return None  # « #hashtag » or seven hashes: text
    rest = rest.strip()
    closed = rest.rstrip("#")
    if not closed or closed[-1] in " \t":  # a closing run of # counts only after a space
        rest = closed.strip()
    return " ".join(rest.split())


def _front_matter(lines: list[str]) -> tuple[dict, int]:
    """The ``key: value`` lines between two ``---``, and the index of the first body line."""
    meta = {}
    if not lines or lines[0].strip() != "---":
        return meta, 0
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:  # an unclosed front matter is text, not metadata
        return meta, 0
    for line in lines[1:end]:
        key, sep, value = line.partition(":")
        if sep and key.strip():
            meta[key.strip().lower()] = value.strip().strip("\"'")
    return meta, end + 1


def read_markdown(data: bytes, path: Path) -> dict:
    """Front matter (``title:``) if any, then the body; every ``#`` heading starts a section."""
    text, notes = _text(data)
    lines = text.split("\n")
    meta, first = _front_matter(lines)
    body_text = "\n".join(lines[first:])
    lead = len(body_text) - len(body_text.lstrip())
    body_text = body_text.strip()
    body = Body()
    body.notes += notes
    offset, fenced = -lead, False
    for line in text.split("\n")[first:]:
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced  # a « # » inside a code block is a comment, not a heading
        heading = None if fenced else _atx(line)
        if heading:
            body.sections.append([max(offset, 0), heading])
        offset += len(line) + 1
    doc = body.document(meta.get("title") or (body.sections[0][1] if body.sections else ""))
    doc["body"] = body_text
    return doc

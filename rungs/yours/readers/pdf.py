"""PDF: every page's text with PDFium (pypdfium2), cleaned, its outline as sections, a verdict on its text.

What it is for: most of a real folder's pages are PDFs, and PDF text is
drawn, not written: a reader has to guess where words and lines end.
``benchmarks/bench_pdf_readers.py`` measured the readers a learner would pick
on 35 real PDFs (2,506 pages; the tables are in ``benchmarks/README.md``):
PDFium ran the fewest words together (0.12 % of letters in 25+-letter
« words », pypdf 1.32 %, pdfplumber 8.40 %), agreed best with poppler's
``pdftotext``, and was the fastest (2.7 ms a page; pypdf 48). Its wheel needs
no system library, and it opens PDFs encrypted with an empty password
(RC4 and AES) with no other package.

``clean_page`` repairs what PDFium leaves: the word a line-end hyphen cut
(PDFium marks it U+FFFE: joined again), ligatures (« ﬁ » → « fi »), and the
accents that old TeX fonts draw as glyphs of their own (« r´ealiser »,
« fran¸caise » → « réaliser », « française »). Known false repair: ``a^i``
written in running text becomes « aî » (``^`` is put back only before a
vowel, never after a backslash).

What else a learner is told, once per file (``verdict``): pages without text
(a scan: run OCR), fonts without a Unicode map (symbols come out), words run
together (spaces missing), accents that stayed apart. A contents page (dot
leaders, ``common.contents_like``) is not indexed, and the note says which.

Running headers and footers (``running_lines``) are not indexed either: a
title, « Page 12 / 40 », a chapter's name printed above every page of it is
not content, and would otherwise open passages, be quoted as an answer and
lend its numbers to the figure check. A line is one when, its digits read as
one placeholder (« 170 / 237 » is « 171 / 237 »; a number alone, by its
distance to the page's number, so that a folio is one line and a listing's
line number another: ``line_key``), it sits among the first or last ``EDGE``
lines of at least half the pages that have text; or when it is one of the
lines that fill one edge position (« the first line ») on at least half the
pages, each repeated there on ``MIN_PAGES`` pages or more — a chapter's head,
which changes with the chapter. Never under ``MIN_PAGES`` pages: on two pages
a repeated line may be a real heading, so a two-page PDF keeps every line.
Known false drop: a real heading opening most pages of a short PDF. Pages keep
their numbers; the note says how many lines went and shows the first few.
``benchmarks/bench_pdf_furniture.py`` lists every line dropped from the
benchmark folder's PDFs (``benchmarks/README.md``).

The outline (bookmarks), when there is one, gives the sections: each bookmark
starts where its title is found on its page, else at the top of its page.

Cost: PDFium reads a few hundred pages a second; the clean-up is one pass, the
furniture rule one more (0.08 s for the benchmark folder's 948 pages, 1.65 s
to read them: ``benchmarks/results/pdf_furniture.json``).
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path

from .common import Body, Unreadable, check_data, contents_like, first_line

_LIGATURES = str.maketrans({"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl",
                            "\ufb05": "st", "\ufb06": "st"})
_COMBINING = {"\u00b4": "\u0301", "`": "\u0300", "\u02c6": "\u0302", "^": "\u0302", "\u00a8": "\u0308",
              "\u02dc": "\u0303", "\u00b8": "\u0327", "\u02c7": "\u030c", "\u02d8": "\u0306", "\u02d9": "\u0307",
              "\u02da": "\u030a"}
_L = r"[^\W\d_]"
_SPACING = "\u00b4\u02c6\u00a8\u02dc\u00b8\u02c7\u02d8\u02d9\u02da"
# A spacing accent glued to a letter (before it, or after a letter and before the next); ASCII ^ and ` only
# before a vowel (or TeX's dotless ı) and never after a backslash, so that \^{o}, x^2 or `quotes' stay.
_LOOSE = re.compile(rf"(?<![\\\w])(?P<a>[{_SPACING}]) ?(?P<l>{_L})"
                    rf"|(?<={_L})(?P<b>[{_SPACING}]) ?(?P<m>{_L})"
                    rf"|(?:(?<={_L})|(?<=[\s(]))(?P<c>[\^`]) ?(?P<n>[aeiouAEIOUı])")
_HYPHEN_MARK = re.compile(r"[\ufffe\u0002]\s*")
# Control characters (but line breaks and tabs), private-use ones, the replacement character: a font without a map.
_JUNK = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\ue000-\uf8ff\ufffd]")


def _put_back(m: re.Match) -> str:
    accent = m.group("a") or m.group("b") or m.group("c")
    letter = m.group("l") or m.group("m") or m.group("n")
    return unicodedata.normalize("NFC", ("i" if letter == "ı" else letter) + _COMBINING[accent])


def clean_page(text: str) -> str:
    """One page of PDFium's text, repaired: hyphenated words joined, ligatures and loose accents put right, NFC."""
    text = _HYPHEN_MARK.sub("", text or "").replace("\r\n", "\n").replace("\r", "\n").translate(_LIGATURES)
    return _LOOSE.sub(_put_back, unicodedata.normalize("NFC", text))


def _camel(word: str) -> bool:
    """« HydrographicObstaclePointEntity »: an identifier, not words run together."""
    parts = re.findall(r"[A-Z][a-z]+", word)
    return len(parts) >= 3 and sum(map(len, parts)) >= 0.8 * len(word)


def verdict(pages: list[str]) -> list[str]:
    """What to tell a learner about one PDF's text ([] when it reads well): the rules of benchmarks/README.md."""
    words = [w for p in pages for w in re.findall(_L + "+", p)]
    letters = sum(map(len, words))
    run_together = sum(len(w) for w in words if len(w) >= 25 and not _camel(w))
    empty = sum(1 for p in pages if not re.search(_L, p))
    junk = sum(len(_JUNK.findall(p)) for p in pages)
    loose = sum(len(re.findall(f"[{_SPACING}](?={_L})", p)) for p in pages)
    out = []
    if pages and empty / len(pages) > 0.5:
        out.append(f"{empty} of its {len(pages)} pages have no text (images or a scan): run OCR on it to find them")
    if letters + junk and junk / (letters + junk) > 0.05:
        out.append("its fonts have no Unicode map: much of its text comes out as symbols and cannot be found")
    if letters and run_together / letters > 0.02:
        out.append(f"{100 * run_together / letters:.0f} % of its letters sit in « words » of 25 letters or more: "
                   "spaces are missing, and those words cannot be found")
    if letters and loose / letters > 0.002:
        out.append("accents drawn apart from their letters could not all be put back: accented words may not match")
    return out


# ---------------------------------------------------------------- running headers and footers

#: The first and the last this many lines of a page (blank ones not counted) are where furniture sits.
EDGE = 3
#: A line at the edge of this share of the pages with text is a running header or footer (« most pages »)...
RUNNING_SHARE = 0.5
#: ... and a line repeated on fewer pages never is: on two pages it may be a real heading.
MIN_PAGES = 3
#: How many of the dropped lines the note shows.
SHOWN_LINES = 2
#: A line that is a number alone (a folio, or a listing's line number).
_FOLIO = re.compile(r"[0-9]{1,5}")


def line_key(line: str, page: int) -> str:
    """A line as furniture is compared: spaces collapsed, every number one placeholder (« Page 3 / 6 » is
    « Page 4 / 6 »). A number alone is a folio only if it follows the pages, so it is keyed by its distance to
    the page's index: « 5 » on the 5th page and « 6 » on the 6th are one line, a listing's « 67 » is another."""
    line = " ".join(line.split())
    if _FOLIO.fullmatch(line):
        return f"# (page {int(line) - page - 1:+d})"
    return re.sub(r"\d+", "#", line)


def _edges(text: str, page: int) -> list[tuple[int, int, str]]:
    """(position, line number, key) of a page's edge lines: positions 0, 1, 2 from the top, -1, -2, -3 from the foot."""
    lines = text.split("\n")
    filled = [i for i, line in enumerate(lines) if line.strip()]
    top = [(slot, i) for slot, i in enumerate(filled[:EDGE])]
    foot = [(-1 - slot, i) for slot, i in enumerate(reversed(filled[-EDGE:]))]
    return [(slot, i, line_key(lines[i], page)) for slot, i in top + foot]  # a short page's line: both edges


def running_lines(pages: list[str]) -> set[tuple[int, int]]:
    """Where a PDF's running headers and footers are: (page index, line number in ``page.split("\\n")``)."""
    edges = [_edges(text, page) for page, text in enumerate(pages)]
    with_text = sum(1 for e in edges if e)
    most = max(MIN_PAGES, RUNNING_SHARE * with_text)
    on_pages, at_slot = defaultdict(set), defaultdict(set)  # key → pages; (slot, key) → pages
    for page, found in enumerate(edges):
        for slot, _, key in found:
            on_pages[key].add(page)
            at_slot[slot, key].add(page)
    # A slot is running when most pages hold there a line repeated there on MIN_PAGES pages or more
    # (a page has one line a slot: the pages of a slot's repeated lines are counted once each).
    filled = Counter()
    for (slot, _), seen in at_slot.items():
        if len(seen) >= MIN_PAGES:
            filled[slot] += len(seen)
    running = {slot for slot, n in filled.items() if n >= most}
    return {(page, i) for page, found in enumerate(edges) for slot, i, key in found
            if len(on_pages[key]) >= most or (slot in running and len(at_slot[slot, key]) >= MIN_PAGES)}


def drop_running(pages: list[str]) -> tuple[list[str], list[tuple[int, str]]]:
    """The pages without their running headers and footers, and what went: (page index, the line as printed)."""
    where = running_lines(pages)
    kept, dropped = [], []
    for page, text in enumerate(pages):
        lines = text.split("\n")
        dropped += [(page, lines[i].strip()) for i in range(len(lines)) if (page, i) in where]
        kept.append("\n".join(line for i, line in enumerate(lines) if (page, i) not in where))
    return kept, dropped


def _running_note(dropped: list[tuple[int, str]], pages: int) -> str:
    """« running headers and footers not indexed: 2 distinct lines, 12 in all, on 6 of 6 pages (« Titre », …) »."""
    first = {}
    for page, line in dropped:
        first.setdefault(line_key(line, page), line)
    shown = ", ".join(f"« {line[:60]} »" for line in list(first.values())[:SHOWN_LINES])
    more = f" and {len(first) - SHOWN_LINES} more" if len(first) > SHOWN_LINES else ""
    distinct = f"{len(first)} distinct line" + ("s" if len(first) > 1 else "")
    return (f"running headers and footers not indexed: {distinct}, {len(dropped)} in all, on "
            f"{len({p for p, _ in dropped})} of {pages} pages ({shown}{more})")


def _open(data: bytes):
    import pypdfium2 as pdfium

    logging.getLogger("pypdfium2").setLevel(logging.ERROR)  # a circular outline is logged; the report says enough
    try:
        return pdfium.PdfDocument(data)  # an empty password opens what only forbids printing or copying
    except pdfium.PdfiumError as err:
        if "password" in str(err).lower():
            raise Unreadable("encrypted with a password: export it without a password (open it, then print "
                             "or save it as a new PDF), and index again") from None
        said = str(err).split("PDFium: ", 1)[-1].rstrip(").").strip() or str(err)  # « Data format error »
        raise Unreadable(f"not a readable PDF (PDFium: {said[:120].lower()}): open it and save it again, or "
                         "export it again") from None


def _outline(pdf) -> list[tuple[str, int]]:
    """The bookmarks as (title, page index), in order; none if the outline cannot be read."""
    marks = []
    try:
        for bookmark in pdf.get_toc(max_depth=8):
            dest = bookmark.get_dest()
            index = dest.get_index() if dest is not None else None
            title = " ".join((bookmark.get_title() or "").split())
            if title and index is not None and 0 <= index < len(pdf):
                marks.append((title[:300], index))
    except Exception:  # noqa: BLE001 - a broken outline is no outline; the pages are what matter
        return []
    return marks


def _sections(body: Body, pages: list[str], marks: list[tuple[str, int]]) -> None:
    """Each bookmark starts where its title is on its page (spaces and line breaks loose), else at the page's top."""
    found = []
    from_where = {}
    for title, index in marks:
        words = [re.escape(w) for w in title.split()[:12]]
        where = re.compile(r"\s+".join(words)).search(pages[index], from_where.get(index, 0)) if words else None
        offset = where.start() if where else 0
        if where:
            from_where[index] = where.end()
        found.append((body.page_starts[index] + offset, title))
    body.sections[:] = [[offset, title] for offset, title in sorted(found, key=lambda f: f[0])]


def _read(data: bytes) -> tuple[list[str], list[tuple[str, int]], str]:
    """Every page's text as PDFium gives it (cleaned, furniture and all), the outline, the metadata's title."""
    pdf = _open(data)
    try:
        raw = []
        for i in range(len(pdf)):
            page = pdf[i]
            textpage = page.get_textpage()
            raw.append(clean_page(textpage.get_text_range()))
            textpage.close()
            page.close()
        marks = _outline(pdf)
        title = str(pdf.get_metadata_dict(skip_empty=True).get("Title") or "").strip()
    except Unreadable:
        raise
    except Exception as err:  # noqa: BLE001 - PDFium's errors are many; one file is one line in the report
        raise Unreadable(f"not a readable PDF ({type(err).__name__}: {str(err)[:120]}): open it and save it "
                         "again, or export it again") from None
    finally:
        pdf.close()
    return raw, marks, title


def raw_pages(data: bytes) -> list[str]:
    """Every page's cleaned text before anything is left out (what ``running_lines`` is asked about)."""
    return _read(data)[0]


def read_pdf(data: bytes, path: Path) -> dict:
    """Every page's text (PDFium, cleaned), where each page starts, the outline as sections, and the verdict."""
    data = check_data(data)  # a str is not a PDF's bytes, nor None: named, like every reader's argument
    raw, marks, title = _read(data)
    if not any(re.search(_L, p) for p in raw):
        raise Unreadable(f"no text in its {len(raw)} page(s): a scanned image? run OCR on it first")
    body = Body()
    contents = [i + 1 for i, p in enumerate(raw) if contents_like(p)]
    # Furniture is found on every page, contents pages too (they carry the same head), and counted where indexed.
    unfurnished, running = drop_running(raw)
    running = [(p, line) for p, line in running if p + 1 not in contents]
    pages = ["" if i + 1 in contents else p.strip() for i, p in enumerate(unfurnished)]
    for text in pages:
        body.page(text)
    if contents:
        body.dropped["contents pages"] = len(contents)
        body.notes.append(f"contents or index pages not indexed (dot leaders): {_pages(contents)}")
    if running:
        body.dropped["running header/footer lines"] = len(running)
        body.notes.append(_running_note(running, len(raw)))
    body.notes += verdict(raw)
    _sections(body, pages, marks)
    return body.document(title or first_line("\n".join(raw)))


def _pages(numbers: list[int]) -> str:
    """« page 3 », « pages 3–11, 40 »."""
    runs, start = [], numbers[0]
    for prev, cur in zip(numbers, numbers[1:] + [None]):
        if cur != prev + 1:
            runs.append(f"{start}" if start == prev else f"{start}–{prev}")
            start = cur
    return ("page " if len(numbers) == 1 else "pages ") + ", ".join(runs)

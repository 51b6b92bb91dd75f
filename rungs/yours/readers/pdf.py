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

The outline (bookmarks), when there is one, gives the sections: each bookmark
starts where its title is found on its page, else at the top of its page.

Cost: PDFium reads a few hundred pages a second; the clean-up is one pass.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from pathlib import Path

from .common import Body, Unreadable, contents_like, first_line

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


def read_pdf(data: bytes, path: Path) -> dict:
    """Every page's text (PDFium, cleaned), where each page starts, the outline as sections, and the verdict."""
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
    if not any(re.search(_L, p) for p in raw):
        raise Unreadable(f"no text in its {len(raw)} page(s): a scanned image? run OCR on it first")
    body = Body()
    contents = [i + 1 for i, p in enumerate(raw) if contents_like(p)]
    pages = ["" if i + 1 in contents else p.strip() for i, p in enumerate(raw)]
    for text in pages:
        body.page(text)
    if contents:
        body.dropped["contents pages"] = len(contents)
        body.notes.append(f"contents or index pages not indexed (dot leaders): {_pages(contents)}")
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

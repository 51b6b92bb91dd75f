"""HTML and EPUB: a tokenizer that stays linear on any markup, the page's text without its chrome, its headings.

What it is for: web pages saved from a site, generated manuals (Sphinx,
DocBook, texinfo) and e-books. Three things the standard library's parser
did not give:

- **Linear on anything.** ``html.parser`` rescans the rest of the page from
  every unclosed ``<``: 60 kB of ``<a `` took 35–43 s, and a malformed ``<![``
  section raised from inside it. ``tokens`` below reads each character once,
  as a browser's tokenizer does: an unclosed tag, quote or comment runs to the
  end of the page, and ``<!…>`` / ``<?…>`` are skipped up to the next ``>``.
- **Chrome is not content.** Navigation bars, sidebars, footers and « ¶ »
  permalinks are on every page of a generated site: their elements (``nav``,
  ``footer``, and a class, id or role that names navigation — DocBook's
  ``navheader``, Sphinx's ``sphinxsidebar`` and ``headerlink``, texinfo's
  ``nav_table``) are skipped, and the characters dropped are counted. A void
  element (``<br class="navheader">``) never opens a skipped region. The list
  of names was made by reading the generators' pages in the benchmark folder.
- **The charset is a hint, not a fact.** ``<meta charset>`` is used only if it
  names a text encoding and the bytes decode with it; a page that declares
  UTF-8 and is Latin-1, or declares « rot13 » or « undefined », is read by ``common.decode``
  and the note says so.

An EPUB is a ZIP of XHTML chapters in the order its package file's ``spine``
gives; each chapter goes through the same reader, into one body.

Cost: one pass over the markup.
"""

from __future__ import annotations

import codecs
import html
import posixpath
import re
from pathlib import Path
from xml.etree import ElementTree

from .common import Body, Unreadable, check_data, decode, encoding_name, member, open_zip

# ---------------------------------------------------------------- the tokenizer

_NAME = re.compile(r"[A-Za-z][^\s/>]*")
_ATTR = re.compile(r"""[\s/]*([^\s/>][^\s/>=]*)(?:\s*=\s*("[^"]*"?|'[^']*'?|[^\s>]*))?""")
_RAW = {"script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes"}
_RAW_END = {tag: re.compile(f"</{tag}", re.IGNORECASE) for tag in _RAW}


def _start_tag(markup: str, i: int) -> tuple[str, dict, bool, int]:
    """The start tag at ``i`` (just after its name): (name, attributes, self-closing, where it ends)."""
    name_match = _NAME.match(markup, i)
    name, j, attrs = name_match.group(0).lower(), name_match.end(), {}
    n = len(markup)
    while j < n:
        while j < n and markup[j] in " \t\n\r\f/":
            j += 1
        if j >= n or markup[j] == ">":
            break
        found = _ATTR.match(markup, j)
        if not found or found.end() == j:
            j += 1  # a character no attribute can start with: skipped, never read twice
            continue
        value = found.group(2) or ""
        if value[:1] in "\"'":
            value = value[1:-1] if len(value) > 1 and value[-1] == value[0] else value[1:]
        attrs.setdefault(found.group(1).lower(), html.unescape(value))
        j = found.end()
    closing = markup[j - 1] == "/" if 0 < j <= n else False
    return name, attrs, closing, min(j + 1, n)


def tokens(markup: str):
    """``("text", data)``, ``("start", name, attrs, self_closing)``, ``("end", name)`` — in one pass."""
    i, n = 0, len(markup)
    while i < n:
        lt = markup.find("<", i)
        if lt < 0:
            yield ("text", markup[i:])
            return
        if lt > i:
            yield ("text", markup[i:lt])
        i, after = lt, markup[lt + 1:lt + 2]
        if markup.startswith("<!--", i):
            end = markup.find("-->", i + 4)
            i = n if end < 0 else end + 3
        elif after in ("!", "?"):  # a doctype, <![CDATA[…]]>, <![if …]>, a processing instruction
            end = markup.find(">", i + 2)
            i = n if end < 0 else end + 1
        elif after == "/" and _NAME.match(markup, i + 2):
            name = _NAME.match(markup, i + 2).group(0).lower()
            end = markup.find(">", i + 2)
            i = n if end < 0 else end + 1
            yield ("end", name)
        elif after.isascii() and after.isalpha():
            name, attrs, closing, i = _start_tag(markup, i + 1)
            yield ("start", name, attrs, closing)
            if name in _RAW and not closing:  # its content is text up to its end tag, never markup
                found = _RAW_END[name].search(markup, i)
                stop = found.start() if found else n
                yield ("text", markup[i:stop])
                i = stop
        else:
            yield ("text", "<")
            i += 1


# ---------------------------------------------------------------- the page's text

_BLOCKS = {"p", "div", "section", "article", "li", "ul", "ol", "dl", "dt", "dd", "table", "tr", "pre", "blockquote",
           "hr", "main", "figure", "figcaption", "header", "aside", "caption", "h1", "h2", "h3", "h4", "h5", "h6",
           "body", "html", "form", "fieldset", "address", "details", "summary", "center"}
_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track",
         "wbr", "keygen", "frame", "basefont", "isindex"}
#: Elements whose content a reader does not see, or sees on every page of a site.
HIDDEN = {"script", "style", "noscript", "template", "nav", "svg", "footer", "iframe", "object", "canvas", "select"}
#: Class, id or role words that mark navigation chrome (DocBook, Sphinx, texinfo, MkDocs, common themes).
CHROME = {"navheader", "navfooter", "navigation", "navbar", "sidebar", "sphinxsidebar", "sphinxsidebarwrapper",
          "related", "breadcrumb", "breadcrumbs", "headerlink", "footer", "searchbox", "search", "menu", "nav_table",
          "tocframe", "toc-sidebar", "skip-link", "skiplink", "toc"}
_SOUNDLESS = {"script", "style", "template", "svg", "select"}  # hidden, but not navigation a reader would count


class _Page:
    """Turns the tokens of one page into paragraphs and headings of a ``Body``."""

    def __init__(self, body: Body):
        self.body, self.chunks = body, []
        self.title = ""
        self._skip: list | None = None   # [tag, depth, counted] while inside a hidden element
        self._in: str | None = None      # "title" or "heading" while capturing one
        self._captured: list[str] = []

    def feed(self, markup: str) -> None:
        for token in tokens(markup):
            if token[0] == "text":
                self.text(token[1])
            elif token[0] == "start":
                self.start(token[1], token[2], token[3])
            else:
                self.end(token[1])
        self.flush()
        self.end_capture()

    def hidden(self, tag: str, attrs: dict) -> bool:
        words = set(f"{attrs.get('class', '')} {attrs.get('id', '')} {attrs.get('role', '')}".lower().split())
        return tag in HIDDEN or bool(words & CHROME) or "hidden" in attrs or attrs.get("aria-hidden") == "true"

    def start(self, tag: str, attrs: dict, closing: bool) -> None:
        empty = closing or tag in _VOID  # an element with no content never opens a skipped region
        if self._skip is not None:
            self._skip[1] += tag == self._skip[0] and not empty
            return
        if not empty and tag != "title" and self.hidden(tag, attrs):
            self._skip = [tag, 1, tag not in _SOUNDLESS]
            return
        if tag == "title" and not empty:
            self.end_capture()
            self._in, self._captured = "title", []
        elif tag in _HEADINGS and not empty:
            self.flush()
            self.end_capture()
            self._in, self._captured = "heading", []
        elif tag == "br":
            self.chunks.append(" ")
        elif tag in _BLOCKS:
            if self._in == "heading" and "".join(self._captured).strip():
                self.end_capture()  # a heading left open ends where the next block starts
            if self._in is None:
                self.flush()
        elif tag in ("td", "th"):
            self.chunks.append(" · " if self.chunks else "")

    def end(self, tag: str) -> None:
        if self._skip is not None:
            if tag == self._skip[0]:
                self._skip[1] -= 1
                if self._skip[1] <= 0:
                    self._skip = None
            return
        if (tag == "title" and self._in == "title") or (tag in _HEADINGS and self._in == "heading"):
            self.end_capture()
        elif tag in _BLOCKS:
            self.flush()

    def text(self, data: str) -> None:
        data = html.unescape(data)
        if self._skip is not None:
            if self._skip[2]:
                shown = " ".join(data.split())
                kind = "pilcrows" if shown in ("¶", "#", "§") else "navigation"
                self.body.dropped[kind] += 1 if kind == "pilcrows" else len(shown)
            return
        (self._captured if self._in else self.chunks).append(data)

    def flush(self) -> None:
        text = " ".join("".join(self.chunks).replace("\xa0", " ").split())
        self.chunks = []
        self.body.add(text)

    def end_capture(self) -> None:
        what, text = self._in, " ".join("".join(self._captured).replace("\xa0", " ").split())
        self._in, self._captured = None, []
        if what == "title":
            self.title = self.title or text
        elif what == "heading":
            bare = text.rstrip("¶ ").strip()  # a permalink sign left in a heading is not its title
            self.body.dropped["pilcrows"] += text.count("¶") - bare.count("¶")
            if len(bare) <= 300:
                self.body.heading(bare)
            else:  # an unclosed heading would swallow the page: past 300 characters it is a paragraph
                self.body.add(bare)


# ---------------------------------------------------------------- decoding: the declared charset, checked

_DECLARED = re.compile(rb"""(?:charset|encoding)\s*=\s*["']?\s*([A-Za-z0-9_\-:.]{1,40})""", re.IGNORECASE)
#: What a browser reads a page declared Latin-1 or ASCII in (the WHATWG encoding standard).
_AS_BROWSERS = {"latin_1": "cp1252", "ascii": "cp1252", "iso8859_1": "cp1252"}


def _declared(data: bytes) -> str | None:
    found = _DECLARED.search(data[:4096])
    return found.group(1).decode("ascii") if found else None


def _text_codec(said: str | None) -> str | None:
    """The codec a declared charset names, if it is a text encoding (« rot13 » is a codec, not one)."""
    if not said:
        return None
    try:
        info = codecs.lookup(said)
        if not getattr(info, "_is_text_encoding", True):
            return None
        info.decode(b"")  # « undefined » is found, and refuses every byte (even none): no text encoding
    except (LookupError, UnicodeError):
        return None
    return _AS_BROWSERS.get(info.name.replace("-", "_"), info.name)


def decode_page(data: bytes) -> tuple[str, list[str]]:
    """The page's text and what to say about its encoding: the declared charset if it holds, else detected."""
    data = check_data(data)
    if data.startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return decode(data)[0], []
    said = _declared(data)
    codec = _text_codec(said)
    if codec:
        # Declared Latin-1 is read as browsers read it (Windows-1252), and as declared where that fails.
        for attempt in [codec] + (["latin_1"] if codec == "cp1252" else []):
            try:
                return data.decode(attempt), []
            except UnicodeError:  # not only UnicodeDecodeError: idna and punycode refuse with the bare class
                continue
    text, found = decode(data)
    shown = encoding_name(found)
    if not said:
        return text, [] if found == "utf_8" else [f"read as {shown} (not UTF-8)"]
    if not codec:
        return text, [f"declares charset « {said} », which is not a text encoding: read as {shown}"]
    return text, [f"declares charset « {said} » but its bytes are not: read as {shown}"]


def read_html(data: bytes, path: Path) -> dict:
    """One page: ``<title>`` (else the first heading), the visible text by paragraphs, h1–h6 as sections."""
    text, notes = decode_page(data)
    body = Body()
    body.notes += notes
    page = _Page(body)
    page.feed(text.replace("\r\n", "\n"))
    return body.document(page.title or (body.sections[0][1] if body.sections else ""))


# ---------------------------------------------------------------- EPUB

_FONTS = (".ttf", ".otf", ".woff", ".woff2")


def _xml(data: bytes, name: str) -> ElementTree.Element:
    try:
        return ElementTree.fromstring(data)
    except ElementTree.ParseError as err:
        raise Unreadable(f"not a readable EPUB file ({name} is not XML: {err})") from None


def _spine(archive) -> tuple[str, list[str]]:
    """The book's title and its chapters' names in reading order (container.xml → package file → spine)."""
    container = _xml(member(archive, "META-INF/container.xml", "EPUB file"), "container.xml")
    rootfile = container.find(".//{*}rootfile")
    if rootfile is None or not rootfile.get("full-path"):
        raise Unreadable("not a readable EPUB file: its container.xml names no package file")
    opf_name = rootfile.get("full-path")
    opf = _xml(member(archive, opf_name, "EPUB file"), opf_name)
    title = next((t.text.strip() for t in opf.iterfind(".//{*}title") if t.text and t.text.strip()), "")
    items = {i.get("id"): i.get("href") for i in opf.iterfind(".//{*}manifest/{*}item")}
    base = posixpath.dirname(opf_name)
    names = [posixpath.normpath(posixpath.join(base, items[ref.get("idref")]))
             for ref in opf.iterfind(".//{*}spine/{*}itemref") if items.get(ref.get("idref"))]
    return title, names


def read_epub(data: bytes, path: Path) -> dict:
    """An e-book: its chapters in reading order, each read as HTML, one body; the title from its metadata."""
    archive = open_zip(data, "EPUB file")
    if "META-INF/encryption.xml" in archive.namelist():
        locked = _xml(member(archive, "META-INF/encryption.xml", "EPUB file"), "encryption.xml")
        uris = [ref.get("URI", "") for ref in locked.iterfind(".//{*}CipherReference")]
        if any(not uri.lower().endswith(_FONTS) for uri in uris):  # obfuscated fonts are not locked text
            raise Unreadable("an EPUB locked by DRM: rungs cannot read it (use a copy without DRM)")
    title, names = _spine(archive)
    body = Body()
    for name in names:
        text, _ = decode_page(member(archive, name, "EPUB file"))
        _Page(body).feed(text)
    if not names:
        raise Unreadable("not a readable EPUB file: its spine lists no chapter")
    return body.document(title or (body.sections[0][1] if body.sections else ""))

"""Passages: long documents cut into pieces that a ranking, and a model, can use.

What it is for: a 40-page PDF is one document but not one answer. BM25
normalises by length, so a long document that says the right thing once, in
one paragraph, is outscored by a short one that says it vaguely; an encoder
reads a few hundred words and drops the rest; a model is sent 1,500
characters per source. So the collection is cut into *passages*, each
knowing its document and its position, and rankings are made of passages —
then, if the reader wants documents, rolled up.

Three decisions are yours:

- ``size`` (characters, default 1,500: what N3 sends per source) and
  ``overlap`` (characters repeated from the end of the previous passage, so a
  sentence cut at a border is whole in one of them). Cuts fall on paragraph
  breaks first, then on sentence ends, then between words: never inside a word.
  Both are build-time choices: changing them means indexing again.
- ``rollup`` (search-time): a document's score is its best passage's
  (``"max"``) or the sum of its ``top`` best (``"sum"``: a document that
  answers in several places goes up).

Every passage keeps ``doc`` (its document's id), ``position`` (1, 2, …),
``start`` (its first character in the document's body) and, when the
document has pages (a PDF), ``page``; when it has sections (headings, a PDF's
outline), ``section``. Its ``title`` is its document's title, so a title word
still counts for every passage.

A passage never crosses a page or a section silently: ``page`` and
``section`` are where it starts, and ``places`` lists every point inside it
where the page or the section changes (``[offset in the passage, page,
section]``). A hit cites the place of its best-matching sentence
(``rungs.core.display.best_sentence``), not of the passage's first line: a
rule on page 20 is cited as page 20 even when its passage starts on page 19.

Cost: one pass over the text; a passage index is a few times larger than a
document index when ``overlap`` is large.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping

from .core import sentences
from .core.display import best_sentence
from .core.documents import check_documents
from .core.errors import BadArgument, check_choice, check_int
from .core.retrieval import Hit, Retriever, check_hit_list, ordered

DEFAULT_SIZE = 1500
DEFAULT_OVERLAP = 200

# A paragraph ends at a blank line; inside it, sentences are the collection's one splitter's (core.sentences).
_PARAGRAPH = re.compile(r"\n\s*\n")


def _units(text: str, size: int) -> list[tuple[int, str, bool]]:
    """The text as (offset, sentence, starts a paragraph) units, none longer than ``size``."""
    units = []
    for para_start, para in _spans(text, _PARAGRAPH):
        first = True
        for a, b in sentences.spans(para) or [(0, len(para))]:
            start, sentence = para_start + a, para[a:b]
            for piece_start, piece in _pieces(sentence, size):
                units.append((start + piece_start, piece, first))
                first = False
    return units


def _pieces(sentence: str, size: int) -> list[tuple[int, str]]:
    """A sentence longer than a passage, cut between words (a word longer than ``size`` is cut hard).

    Positions move along the sentence; nothing is copied but the pieces, so one 4 MB sentence costs
    one pass (it used to copy the rest of the sentence at every cut: quadratic).
    """
    pieces, at, end = [], 0, len(sentence)
    while end - at > size:
        cut = sentence.rfind(" ", at, at + size + 1)
        cut = cut if cut > at else at + size
        pieces.append((at, sentence[at:cut]))
        at = cut
        while at < end and sentence[at].isspace():
            at += 1
    if at < end:
        pieces.append((at, sentence[at:]))
    return pieces


def _spans(text: str, separator: re.Pattern, offset: int = 0) -> list[tuple[int, str]]:
    spans, last = [], 0
    for match in separator.finditer(text):
        if text[last:match.start()].strip():
            spans.append((offset + last, text[last:match.start()]))
        last = match.end()
    if text[last:].strip():
        spans.append((offset + last, text[last:]))
    return spans


def _end(unit) -> int:
    return unit[0] + len(unit[1])


def split_text(text: str, *, size: int = DEFAULT_SIZE, overlap: int = DEFAULT_OVERLAP) -> list[tuple[int, str]]:
    """Cut ``text`` into (start offset, passage) pairs of at most ``size`` characters, ``overlap`` repeated."""
    size = check_int(size, "size", low=50, high=1_000_000)
    overlap = check_int(overlap, "overlap", low=0, high=size // 2)
    if not text or not text.strip():
        return []
    passages, current = [], []  # current: the sentences of the passage being filled
    for unit in _units(text, size):
        full = current and _end(unit) - current[0][0] > size
        # A passage ends at a paragraph break once it is half full: paragraphs stay whole when they can.
        at_break = current and unit[2] and _end(current[-1]) - current[0][0] >= size // 2
        if full or at_break:
            passages.append((current[0][0], _end(current[-1])))
            # The next passage starts with the last sentences of this one, up to ``overlap`` characters.
            first = len(current)
            while first > 0 and _end(current[-1]) - current[first - 1][0] <= overlap \
                    and _end(unit) - current[first - 1][0] <= size:
                first -= 1
            current = current[first:]
        current.append(unit)
    if current:
        passages.append((current[0][0], _end(current[-1])))
    return [(start, text[start:end]) for start, end in passages]


def _sections(doc: dict) -> tuple[list[int], list]:
    """The document's section starts (sorted) and titles; a malformed entry is left out, never fatal."""
    found = []
    for entry in doc.get("sections") or ():
        if isinstance(entry, (list, tuple)) and len(entry) == 2 and isinstance(entry[0], int) \
                and not isinstance(entry[0], bool) and isinstance(entry[1], str):
            found.append((entry[0], entry[1]))
    found.sort(key=lambda e: e[0])
    return [o for o, _ in found], [t for _, t in found]


def _placer(doc: dict):
    """A function from (start, end) of a passage to (page, section, places) — where it starts, and each change."""
    page_starts = sorted(o for o in doc.get("page_starts") or () if isinstance(o, int) and not isinstance(o, bool))
    section_starts, titles = _sections(doc)
    marks = sorted(set(page_starts) | set(section_starts))

    def at(offset: int):
        # Pages are numbered from 1; text before the first page's start (a cover, a preface) is on page 1.
        page = max(1, bisect.bisect_right(page_starts, offset)) if page_starts else None
        i = bisect.bisect_right(section_starts, offset) - 1
        return page, (titles[i] if i >= 0 else None)

    def place(start: int, end: int):
        page, section = at(start)
        places, last = [], (page, section)
        for mark in marks[bisect.bisect_right(marks, start):bisect.bisect_left(marks, end)]:
            here = at(mark)
            if here != last:
                places.append([mark - start, *here])
                last = here
        return page, section, places

    return place, bool(page_starts), bool(titles)


def split(documents: list[dict], *, size: int = DEFAULT_SIZE, overlap: int = DEFAULT_OVERLAP) -> list[dict]:
    """Every document's body cut into passages; a document without a body is one passage holding its title.

    A passage: ``id`` (``"<doc id>#<position>"``), ``doc``, ``position``,
    ``start``, ``title``, ``body`` (the passage's text); when the document lists
    ``page_starts`` (the offset where each page begins), ``page``; when it lists
    ``sections`` (``[offset, heading]`` pairs), ``section``; and ``places`` when
    the page or the section changes inside the passage. A document's own
    ``section`` (the handbook's) is every passage's.
    """
    documents = check_documents(documents)  # the one rule for documents: ids, text fields, duplicates
    size = check_int(size, "size", low=50, high=1_000_000)
    overlap = check_int(overlap, "overlap", low=0, high=size // 2)
    ids = [str(d["id"]) for d in documents]
    out = []
    for doc_id, doc in zip(ids, documents):
        pieces = split_text(doc.get("body") or "", size=size, overlap=overlap) or [(0, "")]
        place, paged, sectioned = _placer(doc)
        for position, (start, body) in enumerate(pieces, start=1):
            passage = {"id": f"{doc_id}#{position}", "doc": doc_id, "position": position, "start": start,
                       "title": str(doc.get("title") or ""), "body": body or None}
            page, section, places = place(start, start + len(body))
            if paged:
                passage["page"] = page
            if sectioned:
                passage["section"] = section
            if places:
                passage["places"] = places
            for key in ("path",) + (() if sectioned else ("section",)):
                if key in doc:
                    passage[key] = doc[key]
            out.append(passage)
    return out


def place_of(passage: dict, offset: int) -> tuple:
    """(page, section) of the character at ``offset`` in a passage: where it starts, moved by each ``places`` entry."""
    page, section = passage.get("page"), passage.get("section")
    for at, at_page, at_section in passage.get("places") or ():
        if at > offset:
            break
        page, section = at_page, at_section
    return page, section


def rollup(hits: list[Hit], doc_of: dict, *, how: str = "max", top: int = 2, titles: dict | None = None) -> list[Hit]:
    """Passage hits → document hits. ``max``: the best passage's score; ``sum``: the sum of the ``top`` best.

    Each document hit's ``parts`` are the passages that count (they add up to
    its score); ``extra["passages"]`` lists every passage of it that was found.
    """
    how = check_choice(how, "rollup", ("max", "sum"))
    top = 1 if how == "max" else check_int(top, "top", low=1, high=1000)
    hits = check_hit_list(hits)  # a dict has no .score to sum: built by hand, a hit is rungs.core.retrieval.Hit
    if not isinstance(doc_of, Mapping):
        raise BadArgument(f"doc_of must be a dict of passage id → document id, not {type(doc_of).__name__}")
    if titles is not None and not isinstance(titles, Mapping):
        raise BadArgument(f"titles must be a dict of document id → title (or None), not {type(titles).__name__}")
    grouped: dict[str, list[Hit]] = {}
    for h in hits:  # hits come best first: each document's list does too
        if h.id not in doc_of:
            raise BadArgument(f"passage {h.id!r} belongs to no known document: roll up hits of these passages only")
        grouped.setdefault(doc_of[h.id], []).append(h)
    titles = titles or {}
    out = []
    for doc_id, found in grouped.items():
        counted = found[:top]
        out.append(Hit(id=doc_id, title=titles.get(doc_id, found[0].title), score=sum(h.score for h in counted),
                       parts={h.id: h.score for h in counted},
                       extra={"passages": [h.id for h in found], "best_passage": found[0].id}))
    return ordered(out)


class PassageRetriever(Retriever):
    """Any passage retriever, rolled up to documents (or not): the one roll-up of the collection.

    ``inner`` ranks passages; its knobs are this retriever's knobs too (a slider on k1 still re-ranks
    without rebuilding). Its own knobs: ``level`` (``"document"`` or ``"passage"``), ``rollup``
    (``"max"`` or ``"sum"``), ``top`` (passages summed per document) and ``depth`` (passages ranked
    before rolling up). Every hit carries ``doc``, ``path`` (when the passages have one), ``position``,
    ``snippet`` (its best-matching sentence, the query's words marked), and the ``page`` and
    ``section`` that hold that sentence when the document has pages or sections; a document hit
    carries its best passage (``extra["best"]``) and the pages where the passages found start
    (``extra["pages"]``) to explain it.

    ``titles``: a document's title (default: its passages' title). ``refresh``: for an inner retriever
    that reads a table on disk which can change under it (FTS5 over a folder's index), a function
    returning ``(passages, titles)`` afresh; it is called when a hit names a passage this retriever
    does not know yet.
    """

    OWN = {"level": "document", "rollup": "max", "top": 2, "depth": 200}

    def __init__(self, inner: Retriever, passages: list[dict], *, titles: dict | None = None, refresh=None,
                 **knobs):
        if not isinstance(inner, Retriever):
            raise BadArgument("inner must be a retriever over the passages")
        clash = sorted(set(inner.knobs) & set(self.OWN))
        if clash:
            raise BadArgument(f"the inner retriever has knobs named like the roll-up's: {clash}")
        self.inner = inner
        self.name = f"{inner.name} over passages"
        self.defaults = {**inner.knobs, **self.OWN}
        super().__init__()
        self.refresh = refresh
        self._know(passages, titles)
        if knobs:
            self.knobs = self._settings(knobs)

    def _know(self, passages: list[dict], titles: dict | None) -> None:
        passages = check_documents(passages, name="passages")
        lost = next((i for i, p in enumerate(passages) if not isinstance(p.get("doc"), (str, int))
                     or isinstance(p.get("doc"), bool)), None)
        if lost is not None:  # a passage rolls up to its document: without one, it has nowhere to go
            raise BadArgument(f"passages[{lost}] has no 'doc' (the id of its document): cut documents with "
                              "passages.split, which gives every passage one")
        if titles is not None and not isinstance(titles, Mapping):
            raise BadArgument(f"titles must be a dict of document id → title (or None), not {type(titles).__name__}")
        self.meta = {p["id"]: p for p in passages}
        self.doc_of = {p["id"]: p["doc"] for p in passages}
        self.titles = titles if titles is not None else {p["doc"]: p.get("title", "") for p in passages}

    def check_knobs(self, knobs: dict) -> dict:
        clean = self.inner._settings({k: v for k, v in knobs.items() if k not in self.OWN})
        return {**clean,
                "level": check_choice(knobs["level"], "level", ("document", "passage")),
                "rollup": check_choice(knobs["rollup"], "rollup", ("max", "sum")),
                "top": check_int(knobs["top"], "top", low=1, high=1000),
                "depth": check_int(knobs["depth"], "depth", low=1, high=100_000)}

    def _found(self, query: str, limit: int, knobs: dict) -> list[Hit]:
        hits = self.inner.search(query, limit=limit, **{k: knobs[k] for k in self.inner.knobs})
        if self.refresh and any(h.id not in self.meta for h in hits):
            self._know(*self.refresh())  # the table on disk changed since this retriever was made
        return [self._passage_hit(h) for h in hits]

    def _passage_hit(self, h: Hit) -> Hit:
        p = self.meta.get(h.id, {})
        extra = {**h.extra, "doc": p.get("doc"), "position": p.get("position")}
        extra["path"] = p.get("path", p.get("doc"))
        for key in ("page", "section"):
            if p.get(key) is not None:
                extra[key] = p[key]
        return Hit(id=h.id, score=h.score, title=h.title, parts=h.parts, why=h.why, extra=extra)

    def _cited(self, h: Hit, query: str) -> Hit:
        """The hit with its best-matching sentence: its snippet, and the page and section that hold it.

        Done only for the hits returned (a few sentences each), never for the ``depth`` passages ranked.
        """
        p = self.meta.get(h.id, {})
        best = best_sentence(p.get("body") or "", query, parts=h.parts)
        if best is None:
            return h
        extra = dict(h.extra)
        page, section = place_of(p, best.start)
        for key, value in (("page", page), ("section", section)):
            if value is not None:
                extra[key] = value
        extra.setdefault("snippet", best.snippet)  # FTS5's own snippet() replaces it, when the inner rung makes one
        return Hit(id=h.id, score=h.score, title=h.title, parts=h.parts, why=h.why, extra=extra)

    def _search(self, query, limit, knobs):
        if knobs["level"] == "passage":
            return self._snippets([self._cited(h, query) for h in self._found(query, limit, knobs)], query)
        found = self._found(query, max(knobs["depth"], limit), knobs)
        by_id = {h.id: h for h in found}
        docs = rollup(found, self.doc_of, how=knobs["rollup"], top=knobs["top"], titles=self.titles)[:limit]
        bests = self._snippets([self._cited(by_id[d.extra["best_passage"]], query) for d in docs], query)
        out = []
        for d, best in zip(docs, bests):
            pages = sorted({by_id[p].extra["page"] for p in d.extra["passages"] if "page" in by_id[p].extra})
            extra = {**d.extra, "path": best.extra["path"], "best": best}
            for key in ("page", "section", "snippet"):
                if key in best.extra:
                    extra[key] = best.extra[key]
            if pages:
                extra["pages"] = pages
            out.append(Hit(id=d.id, score=d.score, title=d.title, parts=d.parts, extra=extra))
        return out

    def _snippets(self, hits: list[Hit], query: str) -> list[Hit]:
        """FTS5's own ``snippet()`` for the hits shown, when the inner rung is an FTS5 table that makes them."""
        made = getattr(self.inner, "snippets", None)
        given = made(query, [h.id for h in hits]) if callable(made) and hits else {}
        return [Hit(id=h.id, score=h.score, title=h.title, parts=h.parts, why=h.why,
                    extra={**h.extra, "snippet": given[h.id]}) if given.get(h.id) else h for h in hits]

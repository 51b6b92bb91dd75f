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
document has pages (a PDF), ``page``. Its ``title`` is its document's title,
so a title word still counts for every passage.

Cost: one pass over the text; a passage index is a few times larger than a
document index when ``overlap`` is large.
"""

from __future__ import annotations

import bisect
import re

from .core.documents import check_documents
from .core.errors import BadArgument, check_choice, check_int
from .core.retrieval import Hit, Retriever, ordered

DEFAULT_SIZE = 1500
DEFAULT_OVERLAP = 200

# A paragraph ends at a blank line; a sentence at . ! ? … followed by a space (French « ? » keeps its space).
_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE = re.compile(r"(?<=[.!?…])\s+")


def _units(text: str, size: int) -> list[tuple[int, str, bool]]:
    """The text as (offset, sentence, starts a paragraph) units, none longer than ``size``."""
    units = []
    for para_start, para in _spans(text, _PARAGRAPH):
        first = True
        for start, sentence in _spans(para, _SENTENCE, para_start):
            # A sentence longer than a passage: cut between words (a word longer than size is cut hard).
            while len(sentence) > size:
                cut = sentence.rfind(" ", 0, size + 1)
                cut = cut if cut > 0 else size
                units.append((start, sentence[:cut], first))
                first = False
                rest = sentence[cut:]
                lead = len(rest) - len(rest.lstrip())
                start, sentence = start + cut + lead, rest[lead:]
            if sentence:
                units.append((start, sentence, first))
                first = False
    return units


def _spans(text: str, separator: re.Pattern, offset: int = 0) -> list[tuple[int, str]]:
    spans, last = [], 0
    for match in separator.finditer(text):
        if text[last:match.start()].strip():
            spans.append((offset + last, text[last:match.start()]))
        last = match.end()
    if text[last:].strip():
        spans.append((offset + last, text[last:]))
    return spans


def _length(units) -> int:
    return units[-1][0] + len(units[-1][1]) - units[0][0] if units else 0


def split_text(text: str, *, size: int = DEFAULT_SIZE, overlap: int = DEFAULT_OVERLAP) -> list[tuple[int, str]]:
    """Cut ``text`` into (start offset, passage) pairs of at most ``size`` characters, ``overlap`` repeated."""
    size = check_int(size, "size", low=50, high=1_000_000)
    overlap = check_int(overlap, "overlap", low=0, high=size // 2)
    if not text or not text.strip():
        return []
    passages, current = [], []  # current: the sentences of the passage being filled
    for unit in _units(text, size):
        full = current and _length(current + [unit]) > size
        # A passage ends at a paragraph break once it is half full: paragraphs stay whole when they can.
        at_break = current and unit[2] and _length(current) >= size // 2
        if full or at_break:
            passages.append(current)
            # The next passage starts with the last sentences of this one, up to ``overlap`` characters.
            carry = []
            for prev in reversed(current):
                if _length([prev] + carry) > overlap or _length([prev] + carry + [unit]) > size:
                    break
                carry.insert(0, prev)
            current = carry
        current.append(unit)
    if current:
        passages.append(current)
    return [(units[0][0], text[units[0][0]:units[-1][0] + len(units[-1][1])]) for units in passages]


def split(documents: list[dict], *, size: int = DEFAULT_SIZE, overlap: int = DEFAULT_OVERLAP) -> list[dict]:
    """Every document's body cut into passages; a document without a body is one passage holding its title.

    A passage: ``id`` (``"<doc id>#<position>"``), ``doc``, ``position``,
    ``start``, ``title``, ``body`` (the passage's text) and, when the
    document lists ``page_starts`` (the offset where each page begins), ``page``.
    """
    documents = check_documents(documents)  # the one rule for documents: ids, text fields, duplicates
    size = check_int(size, "size", low=50, high=1_000_000)
    overlap = check_int(overlap, "overlap", low=0, high=size // 2)
    ids = [str(d["id"]) for d in documents]
    out = []
    for doc_id, doc in zip(ids, documents):
        pieces = split_text(doc.get("body") or "", size=size, overlap=overlap) or [(0, "")]
        page_starts = doc.get("page_starts")
        for position, (start, body) in enumerate(pieces, start=1):
            passage = {"id": f"{doc_id}#{position}", "doc": doc_id, "position": position, "start": start,
                       "title": str(doc.get("title") or ""), "body": body or None}
            if page_starts:
                passage["page"] = bisect.bisect_right(page_starts, start)  # pages are numbered from 1
            for key in ("path", "section"):
                if key in doc:
                    passage[key] = doc[key]
            out.append(passage)
    return out


def rollup(hits: list[Hit], doc_of: dict, *, how: str = "max", top: int = 2, titles: dict | None = None) -> list[Hit]:
    """Passage hits → document hits. ``max``: the best passage's score; ``sum``: the sum of the ``top`` best.

    Each document hit's ``parts`` are the passages that count (they add up to
    its score); ``extra["passages"]`` lists every passage of it that was found.
    """
    how = check_choice(how, "rollup", ("max", "sum"))
    top = 1 if how == "max" else check_int(top, "top", low=1, high=1000)
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
    before rolling up). Every hit carries ``doc``, ``path`` (when the passages have one), ``position``
    and, for a PDF, ``page``; a document hit carries its best passage (``extra["best"]``) and the pages
    of the passages found (``extra["pages"]``) to explain it.

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
        if p.get("page") is not None:
            extra["page"] = p["page"]
        return Hit(id=h.id, score=h.score, title=h.title, parts=h.parts, why=h.why, extra=extra)

    def _search(self, query, limit, knobs):
        if knobs["level"] == "passage":
            return self._found(query, limit, knobs)
        found = self._found(query, max(knobs["depth"], limit), knobs)
        by_id = {h.id: h for h in found}
        docs = rollup(found, self.doc_of, how=knobs["rollup"], top=knobs["top"], titles=self.titles)[:limit]
        out = []
        for d in docs:
            best = by_id[d.extra["best_passage"]]
            pages = sorted({by_id[p].extra["page"] for p in d.extra["passages"] if "page" in by_id[p].extra})
            extra = {**d.extra, "path": best.extra["path"], "best": best}
            if pages:
                extra["page"], extra["pages"] = best.extra["page"], pages
            out.append(Hit(id=d.id, score=d.score, title=d.title, parts=d.parts, extra=extra))
        return out

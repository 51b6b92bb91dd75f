"""N1 — a BM25 you can read: our own inverted index, every score explained term by term.

What it is for: opening the box FTS5 keeps closed. The index is two
dictionaries (which page holds which word how often, in which field; how long
each field is); the score is one formula, written out in ``_term_score``.

    score(q, D) = Σ over query words t of  idf(t) · f·(k1 + 1) / (f + k1·(1 − b + b·|D|/avgdl))

where f is the word's weighted count in D (title hits count ``weights["title"]``
times), |D| the page's length and avgdl the average length.

The decisions are yours, and every one is a search-time argument — a slider
re-ranks without rebuilding anything:

- ``k1``: how fast repeats stop counting (0: one occurrence is as good as ten).
- ``b``: how much a long page is penalised (0: not at all, 1: fully).
- ``weights``: how much a title word counts against a body word (a field
  you do not name counts 1.0, as in FTS5).
- ``match``: ``"any"`` word (OR) or ``"all"`` words (FTS5's implicit AND).
- ``idf``, ``lengths`` (``"lossy"``: Lucene's one-byte lengths), ``repeats``, ``saturation``: the switches on which
  implementations differ; the presets ``FTS5`` and ``LUCENE`` set them.

The tokenizer (stop words, stemming) is the one decision made at build time,
because it decides which words the index holds.

``build_index`` returns a retriever: ``index.search(query, limit=5, k1=…)``
(the collection's one calling convention, ``rungs.retrieval``); every hit's
``parts`` are what each query word contributed, and they add up to its score.

Cost: building the handbook's index takes a few milliseconds; one query
touches only the pages that hold one of its words (well under a millisecond).
"""

from __future__ import annotations

import heapq
import math
import numbers
from collections import Counter

from .core.documents import check_documents
from .core.errors import BadArgument, check_choice, check_int, check_names, check_number, check_query
from .core.retrieval import Hit, Retriever, check_weights
from .core.text import tokenise

#: SQLite FTS5's bm25(): flip these switches and N1 gives FTS5's scores to the last digit.
FTS5 = {"idf": "fts5", "lengths": "unweighted", "match": "all", "repeats": "count",
        "saturation": "k1+1", "k1": 1.2, "b": 0.75}

#: Lucene's BM25 (and bm25s' default method): idf never negative, no (k1 + 1) factor.
LUCENE = {"idf": "lucene", "lengths": "weighted", "match": "any", "repeats": "count",
          "saturation": "plain", "k1": 1.2, "b": 0.75}

#: Every search-time knob and its default: plain BM25 over every field with weight 1.
KNOBS = {"k1": 1.2, "b": 0.75, "weights": None, "match": "any", "idf": "lucene",
         "lengths": "weighted", "repeats": "once", "saturation": "k1+1"}



def check_knobs(knobs: dict, fields) -> dict:
    """Every knob checked once, for type, finiteness and range, with a message that names it."""
    return {"k1": check_number(knobs["k1"], "k1", low=0.0, high=1000.0),
            "b": check_number(knobs["b"], "b", low=0.0, high=1.0),
            "weights": check_weights(knobs.get("weights"), fields, what="field"),
            "match": check_choice(knobs["match"], "match", ("any", "all")),
            "idf": check_choice(knobs["idf"], "idf", ("lucene", "fts5")),
            "lengths": check_choice(knobs["lengths"], "lengths", ("weighted", "unweighted", "lossy")),
            "repeats": check_choice(knobs["repeats"], "repeats", ("once", "count")),
            "saturation": check_choice(knobs["saturation"], "saturation", ("k1+1", "plain"))}


def build_index(documents: list[dict], *, fields=("title", "body"), stopwords=None, stem=None) -> "Index":
    """Count every word of every field of every document; the index is the retriever.

    ``documents`` are dicts with an ``id`` and the ``fields`` (a missing or
    ``None`` field is an empty one). ``stopwords`` and ``stem`` go to
    ``rungs.core.text.tokenise``; queries are cut with the same options.
    """
    return Index(documents, fields=fields, stopwords=stopwords, stem=stem)


class Index(Retriever):
    """The inverted index: enough to score any query with any knob, without rebuilding."""

    name = "BM25"
    defaults = KNOBS

    def __init__(self, documents: list[dict], *, fields=("title", "body"), stopwords=None, stem=None):
        super().__init__()
        fields = check_names(fields, "fields")
        if not fields:
            raise BadArgument("fields must name at least one field to index, like ('title', 'body')")
        documents = check_documents(documents, fields=fields)
        tokenise("", stopwords=stopwords, stem=stem)  # the tokenizer's options are checked before any work
        ids = [str(d["id"]) for d in documents]
        self.ids, self.fields = ids, fields
        self.tokenizer = {"stopwords": stopwords, "stem": stem}  # queries are cut the same way
        self.postings: dict[str, dict[str, dict[str, int]]] = {}   # word → page id → field → count
        self.lengths: dict[str, dict[str, int]] = {}               # page id → field → number of words
        for doc_id, doc in zip(ids, documents):
            self.lengths[doc_id] = {}
            for f in fields:
                words = tokenise(doc.get(f), **self.tokenizer)
                self.lengths[doc_id][f] = len(words)
                for word, n in Counter(words).items():
                    self.postings.setdefault(word, {}).setdefault(doc_id, {})[f] = n
        self.titles = {doc_id: str(doc.get("title") or "") for doc_id, doc in zip(ids, documents)}

    @property
    def n_docs(self) -> int:
        return len(self.ids)

    def check_knobs(self, knobs: dict) -> dict:
        return check_knobs(knobs, self.fields)

    def query_words(self, query: str, repeats: str = "once") -> list[str]:
        """The query as the index sees it: cut by the same tokenizer; a repeated word once unless told."""
        check_choice(repeats, "repeats", ("once", "count"))
        words = tokenise(check_query(query), **self.tokenizer)
        # A word typed twice is not twice as important (FTS5 and Lucene disagree: repeats="count").
        return list(dict.fromkeys(words)) if repeats == "once" else words

    def _search(self, query, limit, knobs):
        words = self.query_words(query, knobs["repeats"])
        if not words or not self.ids:
            return []

        # Which documents take part: those holding any word, or every word.
        holders = [set(self.postings.get(w, ())) for w in dict.fromkeys(words)]
        candidates = set.intersection(*holders) if knobs["match"] == "all" else set.union(*holders)
        if not candidates:
            return []

        length, contribution = self._scorer(words, knobs)

        # Word by word, each page's score summed in the query's order (the order FTS5 adds in): the
        # cost is the pages that hold each word, not every candidate page times every query word.
        scores, dls = dict.fromkeys(candidates, 0.0), {}
        for w in words:
            for doc_id in self.postings.get(w, ()):
                if doc_id in scores:
                    if doc_id not in dls:
                        dls[doc_id] = length(doc_id)
                    scores[doc_id] += contribution(w, doc_id, dls[doc_id])
        # Best first, ties by id; only the hits returned are explained word by word.
        top = heapq.nsmallest(limit, scores.items(), key=lambda item: (-item[1], item[0]))
        hits = []
        for doc_id, score in top:
            parts = {}
            for w in words:
                parts[w] = parts.get(w, 0.0) + contribution(w, doc_id, dls.get(doc_id) or length(doc_id))
            hits.append(Hit(id=doc_id, title=self.titles.get(doc_id, ""), score=score, parts=parts))
        return hits

    def _scorer(self, words, knobs: dict):
        """(length, contribution) for clean knobs: a page's length, and what one word adds to one page."""
        k1, b, weight, lengths = knobs["k1"], knobs["b"], knobs["weights"], knobs["lengths"]

        # Length of a document: its words counted once each ("unweighted", as FTS5 does),
        # each field's words counted with the field's weight ("weighted"), or counted once
        # and stored in one byte as Lucene does ("lossy").
        def length(doc_id):
            per_field = self.lengths[doc_id]
            if lengths == "unweighted":
                return sum(per_field.values())
            if lengths == "lossy":
                return lucene_length(sum(per_field.values()))
            return sum(weight[f] * n for f, n in per_field.items())

        # FTS5 computes the average from its totals: all tokens / all rows (Lucene too, exactly).
        exact = (lambda d: sum(self.lengths[d].values())) if lengths == "lossy" else length
        avg = sum(exact(d) for d in self.ids) / self.n_docs
        avg = avg if avg > 0 else 1.0
        idfs = {w: idf(self.n_docs, len(self.postings.get(w, ())), knobs["idf"]) for w in set(words)}

        def contribution(w, doc_id, dl):
            per_field = self.postings.get(w, {}).get(doc_id, {})
            f = sum(weight[fld] * n for fld, n in per_field.items())
            return _term_score(idfs[w], f, k1, b, dl, avg, knobs["saturation"]) if f else 0.0

        return length, contribution

    def term_scores(self, words, **knobs) -> dict[str, dict[str, float]]:
        """What each index word adds to every page that holds it, with these knobs: word → page → part.

        ``words`` are the index's own words (already cut by its tokenizer: ``query_words`` gives them).
        The parts are those ``search`` adds up, so a query whose words weigh differently — query
        expansion (``rungs.feedback``) — is Σ weight × part.
        """
        if isinstance(words, (str, bytes)):
            raise BadArgument("words must be a list of index words, not one string (query_words cuts a query)")
        words = [check_query(w, name="word") for w in words]
        settings = self._settings(knobs)
        length, contribution = self._scorer(words, settings)
        return {w: {d: contribution(w, d, length(d)) for d in self.postings.get(w, ())} for w in dict.fromkeys(words)}

    def explain(self, hit: Hit, **knobs) -> list[dict]:
        """The arithmetic behind one hit, one row per query word: counts per field, f, idf, contribution.

        Pass the knobs the hit was searched with (``weights``, ``idf``) to see the same numbers.
        """
        settings = self._settings(knobs)
        if not isinstance(hit, Hit):
            raise BadArgument(f"hit must be one of this index's hits (a Hit), not {type(hit).__name__}")
        rows = []
        for w, part in (hit.parts or {}).items():
            per_field = self.postings.get(w, {}).get(hit.id, {})
            f = sum(settings["weights"][fld] * n for fld, n in per_field.items())
            n_with = len(self.postings.get(w, ()))
            rows.append({"word": w, **{fld: per_field.get(fld, 0) for fld in self.fields}, "f": f,
                         "n_with": n_with, "idf": idf(self.n_docs, n_with, settings["idf"]), "contribution": part})
        return rows


def field_weights(index, weights: dict | None) -> dict[str, float]:
    """Every field's weight: the ones given, 1.0 for a field not named. ``index`` is anything with ``fields``."""
    return check_knobs({**KNOBS, "weights": weights}, index.fields)["weights"]


def lucene_length(n: int) -> int:
    """A length as Lucene stores it: in one byte (SmallFloat.intToByte4), read back.

    Exact below 40 words; above, only the 4 leading bits survive (rounded down,
    under 1/8 relative error). Lucene's average length stays exact.
    """
    # A length is a whole number of words (a float that holds one is accepted: numpy sums are floats).
    if isinstance(n, numbers.Integral) and not isinstance(n, bool):
        n = check_int(n, "n", low=0, high=2**62)
    elif isinstance(n, bool) or not isinstance(n, numbers.Real) or not math.isfinite(n) or n < 0 or n != int(n) \
            or n > 2**62:
        raise BadArgument(f"n must be a number of words (a whole number, 0 or more), not {n!r}")
    n = int(n)
    if n < 24:  # 24 = 255 − the largest 4-bit-mantissa code: small lengths are stored as they are
        return n
    rest = n - 24
    bits = rest.bit_length()
    if bits < 4:
        return 24 + rest
    shift = bits - 4
    return 24 + ((rest >> shift) << shift)


def idf(n_docs: int, n_with: int, kind: str = "lucene") -> float:
    """How rare a word is: ``n_with`` of ``n_docs`` documents hold it.

    ``lucene``: ln(1 + (N − n + 0.5)/(n + 0.5)), never negative.
    ``fts5`` (Robertson–Spärck Jones): ln((N − n + 0.5)/(n + 0.5)); a word in more
    than half the documents would score negative, so FTS5 floors it at 1e-6.
    """
    n_docs = check_int(n_docs, "n_docs", low=0)
    # More documents holding a word than there are documents: a count from another collection.
    n_with = check_int(n_with, "n_with", low=0, high=n_docs)
    if kind == "lucene":
        return math.log(1 + (n_docs - n_with + 0.5) / (n_with + 0.5))
    if kind == "fts5":
        value = math.log((n_docs - n_with + 0.5) / (n_with + 0.5))
        # A common word must not push a page down for containing it.
        return value if value > 0.0 else 1e-6
    raise BadArgument(f"idf must be 'lucene' or 'fts5', not {kind!r}")


def _term_score(idf_t, f, k1, b, length, avg, saturation):
    # Written in FTS5's order of operations, so that the floats agree to the last digit.
    norm = f + k1 * (1 - b + b * length / avg)
    if saturation == "k1+1":
        return idf_t * ((f * (k1 + 1.0)) / norm)
    return idf_t * (f / norm)

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
  you do not name counts 1.0).
- ``match``: ``"any"`` word (OR) or ``"all"`` words (FTS5's implicit AND).
- ``idf``, ``lengths`` (``"lossy"``: Lucene's one-byte lengths), ``repeats``, ``saturation``: the switches on which
  implementations differ; the presets ``FTS5`` and ``LUCENE`` set them.

The tokenizer (stop words, stemming) is the one decision made at build time,
because it decides which words the index holds.

Cost: building the handbook's index takes a few milliseconds; one query
touches only the pages that hold one of its words (well under a millisecond).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from .handbook import duplicates
from .text import tokenise

#: SQLite FTS5's bm25(): flip these switches and N1 gives FTS5's scores to the last digit.
FTS5 = {"idf": "fts5", "lengths": "unweighted", "match": "all", "repeats": "count",
        "saturation": "k1+1", "k1": 1.2, "b": 0.75}

#: Lucene's BM25 (and bm25s' default method): idf never negative, no (k1 + 1) factor.
LUCENE = {"idf": "lucene", "lengths": "weighted", "match": "any", "repeats": "count",
          "saturation": "plain", "k1": 1.2, "b": 0.75}

DEFAULT_WEIGHTS = {"title": 3.0, "body": 1.0}


@dataclass
class Index:
    """What ``build_index`` keeps: enough to score any query with any knob, without rebuilding."""

    ids: list[str]
    fields: tuple[str, ...]
    postings: dict[str, dict[str, dict[str, int]]]  # word → page id → field → count
    lengths: dict[str, dict[str, int]]              # page id → field → number of words
    titles: dict[str, str]
    tokenizer: dict = field(default_factory=dict)   # the tokenise() options the index was built with

    @property
    def n_docs(self) -> int:
        return len(self.ids)


def build_index(documents: list[dict], *, fields: tuple[str, ...] = ("title", "body"),
                stopwords=None, stem=None) -> Index:
    """Count every word of every field of every document.

    ``documents`` are dicts with an ``id`` and the ``fields`` (a missing or
    ``None`` field is an empty one). ``stopwords`` and ``stem`` go to
    ``rungs.text.tokenise``; queries are cut with the same options.
    """
    ids = [str(d["id"]) for d in documents]
    dup = duplicates(ids)
    if dup:
        raise ValueError(f"duplicate document ids {dup}: each document needs its own id")
    tokenizer = {"stopwords": stopwords, "stem": stem}
    postings: dict[str, dict[str, dict[str, int]]] = {}
    lengths: dict[str, dict[str, int]] = {}
    for doc_id, doc in zip(ids, documents):
        lengths[doc_id] = {}
        for f in fields:
            words = tokenise(doc.get(f), **tokenizer)
            lengths[doc_id][f] = len(words)
            for word, n in Counter(words).items():
                postings.setdefault(word, {}).setdefault(doc_id, {})[f] = n
    titles = {doc_id: str(doc.get("title") or "") for doc_id, doc in zip(ids, documents)}
    return Index(ids, tuple(fields), postings, lengths, titles, tokenizer)


def lucene_length(n: int) -> int:
    """A length as Lucene stores it: in one byte (SmallFloat.intToByte4), read back.

    Exact below 40 words; above, only the 4 leading bits survive (rounded down,
    under 1/8 relative error). Lucene's average length stays exact.
    """
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
    if kind == "lucene":
        return math.log(1 + (n_docs - n_with + 0.5) / (n_with + 0.5))
    if kind == "fts5":
        value = math.log((n_docs - n_with + 0.5) / (n_with + 0.5))
        # A common word must not push a page down for containing it.
        return value if value > 0.0 else 1e-6
    raise ValueError(f"idf must be 'lucene' or 'fts5', not {kind!r}")


def _term_score(idf_t, f, k1, b, length, avg, saturation):
    # Written in FTS5's order of operations, so that the floats agree to the last digit.
    norm = f + k1 * (1 - b + b * length / avg)
    if saturation == "k1+1":
        return idf_t * ((f * (k1 + 1.0)) / norm)
    return idf_t * (f / norm)


def _check(limit, k1, b, weights, match, lengths, repeats, saturation, fields):
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise TypeError(f"limit must be an integer, not {type(limit).__name__}")
    if limit < 0:
        raise ValueError(f"limit must be 0 or more, not {limit}")
    if k1 < 0:
        raise ValueError(f"k1 must be 0 or more, not {k1}")
    if not 0 <= b <= 1:
        raise ValueError(f"b must be between 0 and 1, not {b}")
    if match not in ("any", "all"):
        raise ValueError(f"match must be 'any' or 'all', not {match!r}")
    if lengths not in ("weighted", "unweighted", "lossy"):
        raise ValueError(f"lengths must be 'weighted', 'unweighted' or 'lossy', not {lengths!r}")
    if repeats not in ("once", "count"):
        raise ValueError(f"repeats must be 'once' or 'count', not {repeats!r}")
    if saturation not in ("k1+1", "plain"):
        raise ValueError(f"saturation must be 'k1+1' or 'plain', not {saturation!r}")
    unknown = set(weights) - set(fields)
    if unknown:
        raise ValueError(f"weights name fields the index does not have: {sorted(unknown)}")
    if any(w < 0 for w in weights.values()):
        raise ValueError("field weights must be 0 or more")


def search(index: Index, query: str, *, limit: int = 5, k1: float = 1.2, b: float = 0.75,
           weights: dict[str, float] | None = None, match: str = "any", idf: str = "lucene",
           lengths: str = "weighted", repeats: str = "once", saturation: str = "k1+1") -> list[dict]:
    """Rank documents for ``query``, best first, ties broken by id.

    Each result: ``id``, ``title``, ``score`` and ``terms`` — what each query
    word contributed, so that ``sum(terms.values()) == score``.
    """
    _check(limit, k1, b, weights or {}, match, lengths, repeats, saturation, index.fields)
    weight = field_weights(index, weights)
    words = tokenise(query, **index.tokenizer)
    if repeats == "once":
        # A word typed twice is not twice as important.
        words = list(dict.fromkeys(words))
    if not words or limit == 0 or not index.ids:
        return []

    # Which documents take part: those holding any word, or every word.
    holders = [set(index.postings.get(w, ())) for w in dict.fromkeys(words)]
    candidates = set.intersection(*holders) if match == "all" else set.union(*holders)
    if not candidates:
        return []

    # Length of a document: its words counted once each ("unweighted", as FTS5 does),
    # each field's words counted with the field's weight ("weighted"), or counted once
    # and stored in one byte as Lucene does ("lossy").
    def length(doc_id):
        per_field = index.lengths[doc_id]
        if lengths == "unweighted":
            return sum(per_field.values())
        if lengths == "lossy":
            return lucene_length(sum(per_field.values()))
        return sum(weight[f] * n for f, n in per_field.items())

    # FTS5 computes the average from its totals: all tokens / all rows (Lucene too, exactly).
    exact = (lambda d: sum(index.lengths[d].values())) if lengths == "lossy" else length
    avg = sum(exact(d) for d in index.ids) / index.n_docs
    avg = avg if avg > 0 else 1.0
    idfs = {w: _idf_of(index, w, idf) for w in set(words)}

    results = []
    for doc_id in candidates:
        dl = length(doc_id)
        score, terms = 0.0, {}
        for w in words:
            per_field = index.postings.get(w, {}).get(doc_id, {})
            f = sum(weight[fld] * n for fld, n in per_field.items())
            part = _term_score(idfs[w], f, k1, b, dl, avg, saturation) if f else 0.0
            score += part
            terms[w] = terms.get(w, 0.0) + part
        results.append({"id": doc_id, "title": index.titles.get(doc_id, ""), "score": score, "terms": terms})
    # Ties are broken on the identifier, so two runs give the same order.
    results.sort(key=lambda r: (-r["score"], r["id"]))
    return results[:limit]


def field_weights(index, weights: dict[str, float] | None) -> dict[str, float]:
    """Every field's weight: the ones given, 1.0 for a field not named (``None``: title 3, body 1).

    ``index`` is anything with ``fields``: this index, or ``rungs.fastbm25``'s.
    """
    if weights is None:
        weights = {f: w for f, w in DEFAULT_WEIGHTS.items() if f in index.fields}
    return {f: float(weights.get(f, 1.0)) for f in index.fields}


def _idf_of(index, word, kind):
    return idf(index.n_docs, len(index.postings.get(word, ())), kind)


def explain(index: Index, result: dict, *,
            weights: dict[str, float] | None = None, idf: str = "lucene") -> list[dict]:
    """The arithmetic behind one result, one row per query word: counts per field, f, idf, contribution."""
    weight = field_weights(index, weights)
    rows = []
    for w, part in result["terms"].items():
        per_field = index.postings.get(w, {}).get(result["id"], {})
        f = sum(weight[fld] * n for fld, n in per_field.items())
        rows.append({"word": w, **{fld: per_field.get(fld, 0) for fld in index.fields},
                     "f": f, "n_with": len(index.postings.get(w, ())), "idf": _idf_of(index, w, idf),
                     "contribution": part})
    return rows

"""N1, the fast path: the same BM25 arithmetic as ``rungs.bm25``, reorganised as sparse matrices.

What it is for: sweeps and benchmarks. The tuning lab scores every question
for a hundred settings of k1 × b × title weight; ``rungs.bm25.search`` is
written to be read, one page and one word at a time. Here the same formula
is applied to every (page, word) pair at once with numpy and scipy.sparse:

1. per field, a page × word matrix of counts (built once);
2. for one setting of the knobs, one matrix of contributions
   idf(t) · f·(k1 + 1) / (f + k1·(1 − b + b·|D|/avgdl)) — computed once per
   setting and kept (a sweep reuses it for every query);
3. a query is then the sum of a few of its columns.

Nothing else changes: the same tokenizer, idf formulas, length conventions,
matching rule, repeat rule and tie-break, so the results equal the readable
``search`` to 1e-9 relative (the unit tests check it on generated corpora for
every preset). The readable module stays the one the notebooks explain.

``ColumnBM25`` is the same arithmetic for one query at a time: it computes
only the columns of the query's words, from counts kept as plain numpy arrays
(no scipy, no matrix for a whole setting). It is what a one-query process
wants — ``python -m rungs search`` over your folder loads it from the counts
``index`` stored (``rungs.yours.keywords``) — and it gives ``FastBM25``'s hits
exactly: the same ids, scores and parts, float for float (tested).

Cost: the count matrices (about 12 bytes per distinct (page, word) pair per
field), one contribution matrix per setting kept (a few are cached), and per
query a gather of a few sparse columns. scipy is imported only to build the
matrices: its import costs a one-query process more than its search (measured
with ``python -X importtime``), hence ``ColumnBM25``.
"""

from __future__ import annotations

from collections import Counter, OrderedDict

import numpy as np

from . import bm25
from .core.documents import check_documents
from .core.errors import BadArgument, check_names
from .core.retrieval import Hit, Retriever, best_first, id_ranks
from .core.text import tokenise


def lengths_of(per_field: dict, weight: dict, kind: str, fields) -> np.ndarray:
    """|D| of every page: each field's words times the field's weight (``"weighted"``) or counted once."""
    return sum((weight[name] if kind == "weighted" else 1.0) * per_field[name] for name in fields)


def saturated(tf, dl, avg: float, idf, k1: float, b: float, saturation: str):
    """idf · f·(k1 + 1) / (f + k1·(1 − b + b·|D|/avgdl)), element by element (``saturation="plain"``: no k1 + 1)."""
    norm = tf + k1 * (1 - b + b * dl / avg)
    return idf * ((tf * (k1 + 1.0)) / norm) if saturation == "k1+1" else idf * (tf / norm)


def check_explain(knobs: dict, fields) -> dict:
    """N1's knobs (``rungs.bm25.check_knobs``) and ``explain``, a boolean: the knobs of both fast paths."""
    explain = knobs["explain"]
    if not isinstance(explain, bool):
        raise BadArgument(f"explain must be True or False, not {explain!r}")
    return {**bm25.check_knobs(knobs, fields), "explain": explain}


class FastBM25(Retriever):
    """Sparse count matrices for a collection; ``search`` takes the same knobs as ``rungs.bm25.Index``.

    One more knob, ``explain``: ``False`` skips the per-word parts (a sweep does not read them).
    """

    name = "BM25 (fast path)"
    defaults = {**bm25.KNOBS, "explain": True}

    def __init__(self, ids, fields, counts, vocabulary, titles, tokenizer):
        super().__init__()
        self.ids = list(ids)
        self.fields = tuple(fields)
        self.counts = counts                      # field → CSC matrix (pages × words) of counts
        self.vocabulary = vocabulary              # word → column
        self.titles = titles
        self.tokenizer = tokenizer
        self.lengths = {f: np.asarray(m.sum(axis=1)).ravel() for f, m in counts.items()}
        presence = sum((m > 0).astype(np.int8) for m in counts.values())
        self.presence = (presence > 0).astype(np.float64).tocsc()  # does the page hold the word anywhere?
        self.df = np.asarray(self.presence.sum(axis=0)).ravel()
        self.id_rank = id_ranks(self.ids)  # ties are broken on the identifier
        self._cache: OrderedDict = OrderedDict()
        self._idf: dict[str, np.ndarray] = {}   # per formula: the knobs k1, b, weights never change it
        self._lucene_lengths: np.ndarray | None = None

    @property
    def n_docs(self) -> int:
        return len(self.ids)

    @classmethod
    def from_index(cls, index: bm25.Index) -> "FastBM25":
        """The same collection as a readable ``Index``, as matrices."""
        if not isinstance(index, bm25.Index):
            raise BadArgument(f"index must be a rungs.bm25.Index (build_index), not {type(index).__name__}")
        from scipy import sparse

        vocabulary = {w: j for j, w in enumerate(sorted(index.postings))}
        row = {doc_id: i for i, doc_id in enumerate(index.ids)}
        counts = {}
        for f in index.fields:
            rows, cols, vals = [], [], []
            for word, per_doc in index.postings.items():
                for doc_id, per_field in per_doc.items():
                    if f in per_field:
                        rows.append(row[doc_id]); cols.append(vocabulary[word]); vals.append(per_field[f])
            counts[f] = sparse.csc_matrix((np.array(vals, dtype=np.float64), (rows, cols)),
                                          shape=(len(index.ids), len(vocabulary)))
        return cls(index.ids, index.fields, counts, vocabulary, index.titles, index.tokenizer)

    @classmethod
    def from_documents(cls, documents, *, fields=("title", "body"), stopwords=None, stem=None) -> "FastBM25":
        """Build straight from documents, without the readable index (for large collections)."""
        fields = check_names(fields, "fields")
        if not fields:
            raise BadArgument("fields must name at least one field to index, like ('title', 'body')")
        # A field may also be a list of words already cut (the tuning lab's CACM, stemmed in English).
        documents = check_documents(documents, fields=fields, tokens=True)
        tokenise("", stopwords=stopwords, stem=stem)  # the tokenizer's options are checked before any work
        ids = [str(d["id"]) for d in documents]
        tokenizer = {"stopwords": stopwords, "stem": stem}
        vocabulary: dict[str, int] = {}
        triples = {f: ([], [], []) for f in fields}
        for i, doc in enumerate(documents):
            for f in fields:
                words = doc[f] if isinstance(doc.get(f), list) else tokenise(doc.get(f), **tokenizer)
                rows, cols, vals = triples[f]
                for word, n in Counter(words).items():
                    rows.append(i); cols.append(vocabulary.setdefault(word, len(vocabulary))); vals.append(n)
        from scipy import sparse

        counts = {}
        for f, (rows, cols, vals) in triples.items():
            counts[f] = sparse.csc_matrix((np.array(vals, dtype=np.float64), (rows, cols)),
                                          shape=(len(ids), len(vocabulary)))
        titles = {doc_id: str(d.get("title") or "") for doc_id, d in zip(ids, documents)}
        return cls(ids, fields, counts, vocabulary, titles, tokenizer)

    # ------------------------------------------------------------------ one setting of the knobs
    def contributions(self, *, k1=1.2, b=0.75, weights=None, idf="lucene", lengths="weighted",
                      saturation="k1+1") -> "sparse.csc_matrix":
        """Every (page, word) contribution for one setting; cached, so a sweep computes it once."""
        # Checked here too, not only in search: a NaN k1 would fill the whole matrix with NaN.
        knobs = bm25.check_knobs({**bm25.KNOBS, "k1": k1, "b": b, "weights": weights, "idf": idf,
                                  "lengths": lengths, "saturation": saturation}, self.fields)
        k1, b, weight, idf, lengths, saturation = (knobs[k] for k in ("k1", "b", "weights", "idf", "lengths",
                                                                    "saturation"))
        key = (k1, b, tuple(sorted(weight.items())), idf, lengths, saturation)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        from scipy import sparse

        f = sum(weight[name] * self.counts[name] for name in self.fields).tocsc()
        dl = lengths_of(self.lengths, weight, lengths, self.fields)
        avg = dl.sum() / self.n_docs
        if lengths == "lossy":  # Lucene: each length stored in one byte, the average kept exact
            dl = self.lucene_lengths(dl)
        avg = avg if avg > 0 else 1.0
        cols = np.repeat(np.arange(f.shape[1]), np.diff(f.indptr))
        data = saturated(f.data, dl[f.indices], avg, self.idf(idf)[cols], k1, b, saturation)
        matrix = sparse.csc_matrix((data, f.indices, f.indptr), shape=f.shape)
        self._cache[key] = matrix
        if len(self._cache) > 4:
            self._cache.popitem(last=False)
        return matrix

    def idf(self, kind: str) -> np.ndarray:
        """``rungs.bm25.idf`` for every word, computed once per formula (once per distinct count, in fact)."""
        if kind not in self._idf:
            counts, where = np.unique(self.df, return_inverse=True)
            values = np.array([bm25.idf(self.n_docs, int(n), kind) for n in counts], dtype=np.float64)
            self._idf[kind] = values[where]
        return self._idf[kind]

    def lucene_lengths(self, exact: np.ndarray) -> np.ndarray:
        """Every page's length as Lucene stores it (computed once: it does not depend on the knobs)."""
        if self._lucene_lengths is None:
            self._lucene_lengths = np.array([bm25.lucene_length(n) for n in exact], dtype=np.float64)
        return self._lucene_lengths

    # ------------------------------------------------------------------ queries
    def check_knobs(self, knobs: dict) -> dict:
        return check_explain(knobs, self.fields)

    def _search(self, query, limit, knobs):
        words = tokenise(query, **self.tokenizer)
        if knobs["repeats"] == "once":
            words = list(dict.fromkeys(words))
        counts = Counter(words)
        if not words or not self.ids:
            return []
        match, weights = knobs["match"], knobs["weights"]
        known = [w for w in counts if w in self.vocabulary]
        if match == "all" and len(known) < len(counts):
            return []  # a word no page holds: no page holds them all
        if not known:
            return []
        cols = [self.vocabulary[w] for w in known]
        mult = np.array([counts[w] for w in known], dtype=np.float64)
        matrix = self.contributions(k1=knobs["k1"], b=knobs["b"], weights=weights, idf=knobs["idf"],
                                    lengths=knobs["lengths"], saturation=knobs["saturation"])
        sub = matrix[:, cols]
        scores = sub @ mult
        if match == "any" and all(w > 0 for w in weights.values()):
            # Every contribution of a held word is then positive: the pages holding one are those scoring > 0.
            candidates = np.flatnonzero(scores > 0)
        else:
            held = self.presence[:, cols] @ np.ones(len(cols))
            candidates = np.flatnonzero(held >= len(cols) if match == "all" else held > 0)
        top = best_first(candidates, scores[candidates], self.id_rank, limit)
        # Every returned row's parts at once: one slice of the matrix, not one per hit (200 hits: 80 ms → 1).
        rows = sub[top].toarray() * mult if knobs["explain"] and top.size else None
        return _hits(self, top, scores, words, known, rows)

    def search_many(self, queries: list[str], **knobs) -> list[list[Hit]]:
        """One ranking per query, with the contribution matrix computed once for all of them."""
        if isinstance(queries, (str, bytes)):  # iterated, a string would be one query per letter
            raise BadArgument("queries must be a list of queries, not one string")
        knobs.setdefault("explain", False)
        return [self.search(q, **knobs) for q in queries]



def _hits(fast, top, scores, words, known, rows) -> list[Hit]:
    """The hits of rows ``top`` (best first), with each word's part when ``rows`` holds them (``explain``)."""
    hits = []
    for n, i in enumerate(top.tolist()):
        parts = None
        if rows is not None:
            parts = dict.fromkeys(dict.fromkeys(words), 0.0)
            parts.update({w: float(v) for w, v in zip(known, rows[n])})
        hits.append(Hit(id=fast.ids[i], title=fast.titles.get(fast.ids[i], ""), score=float(scores[i]),
                        parts=parts, why="" if parts is not None else "searched with explain=False"))
    return hits


def by_column(counts, cols, starts, n_words: int) -> tuple:
    """Counts by row (page) — ``counts``, their columns ``cols``, each row's ``starts`` — turned by column (word):
    ``(starts, pages, counts)``, each word's pages ascending: what ``ColumnBM25`` reads."""
    pages = np.repeat(np.arange(len(starts) - 1, dtype=np.int64), np.diff(starts))
    order = np.argsort(cols, kind="stable")  # by word; a stable sort keeps each word's pages ascending
    return (np.concatenate(([0], np.cumsum(np.bincount(cols, minlength=n_words)))).astype(np.int64), pages[order],
            np.asarray(counts, dtype=np.float64)[order])


class ColumnBM25(Retriever):
    """``FastBM25``'s knobs and hits, computed for the query's columns only, from counts kept as numpy arrays.

    ``columns`` maps a field to its counts by word (``by_column``): ``(starts, pages, counts)`` — the pages
    holding word j in that field are ``pages[starts[j]:starts[j + 1]]``, ascending; ``words[j]`` is word j
    (``rungs.yours.keywords`` stores them so; ``from_fast`` reads a FastBM25's).
    The words in ``drop`` (stop words) are left out: never looked up, and not counted in a page's length.
    """

    name = "BM25 (one query's columns)"
    defaults = FastBM25.defaults

    def __init__(self, ids, fields, columns: dict, words: list[str], titles: dict, tokenizer: dict, *,
                 drop=frozenset()):
        super().__init__()
        self.ids, self.fields, self.counts = list(ids), tuple(fields), columns
        self.titles, self.tokenizer = titles, tokenizer
        self.vocabulary = dict(zip(words, range(len(words))))
        dropped = [self.vocabulary.pop(w) for w in drop if w in self.vocabulary]
        # A page's words in a field: integer counts added up (the dropped words' taken away again), so exactly
        # what FastBM25's row sums over the words it keeps give.
        self.lengths = {}
        for f, (starts, pages, counts) in columns.items():
            total = np.bincount(pages, weights=counts, minlength=len(self.ids))
            if dropped:
                out = np.concatenate([np.arange(starts[j], starts[j + 1]) for j in dropped])
                total = total - np.bincount(pages[out], weights=counts[out], minlength=len(self.ids))
            self.lengths[f] = total
        self.id_rank = id_ranks(self.ids)
        self._lengths: dict = {}  # (weights, length rule) → (|D| of every page, the average): one query at a time

    @classmethod
    def from_fast(cls, fast: FastBM25) -> "ColumnBM25":
        """The same collection as a ``FastBM25``: its count matrices are already by word (CSC), read as arrays."""
        if not isinstance(fast, FastBM25):
            raise BadArgument(f"fast must be a FastBM25 (FastBM25.from_documents), not {type(fast).__name__}")
        words = [""] * len(fast.vocabulary)
        for word, j in fast.vocabulary.items():
            words[j] = word
        columns = {}
        for f in fast.fields:
            m = fast.counts[f].tocsc(copy=True)
            m.sort_indices()  # each word's pages ascending
            columns[f] = (m.indptr.astype(np.int64), m.indices.astype(np.int64), m.data.astype(np.float64))
        return cls(fast.ids, fast.fields, columns, words, fast.titles, fast.tokenizer)

    def check_knobs(self, knobs: dict) -> dict:
        return check_explain(knobs, self.fields)

    def _lengths_for(self, weight: dict, kind: str):
        key = (tuple(weight[f] for f in self.fields), kind)
        if key not in self._lengths:
            dl = lengths_of(self.lengths, weight, kind, self.fields)
            avg = dl.sum() / len(self.ids)
            if kind == "lossy":  # Lucene: each length stored in one byte, the average kept exact
                dl = np.array([bm25.lucene_length(n) for n in dl], dtype=np.float64)
            self._lengths = {key: (dl, avg if avg > 0 else 1.0)}  # one kept: a slider moves one knob at a time
        return self._lengths[key]

    def _column(self, j: int, weight: dict):
        """Word j's pages (in any field) and its f on each: the fields' counts times their weights, added up."""
        held = []
        for f in self.fields:
            starts, pages, counts = self.counts[f]
            held.append((pages[starts[j]:starts[j + 1]], counts[starts[j]:starts[j + 1]], weight[f]))
        pages = np.unique(np.concatenate([p for p, _, _ in held]))
        tf = None
        for p, counts, w in held:
            part = np.zeros(pages.size)
            part[np.searchsorted(pages, p)] = w * counts
            tf = part if tf is None else tf + part  # in field order, as the matrices add them
        return pages, tf

    def _search(self, query, limit, knobs):
        words = tokenise(query, **self.tokenizer)
        if knobs["repeats"] == "once":
            words = list(dict.fromkeys(words))
        counts = Counter(words)
        known = [w for w in counts if w in self.vocabulary]
        if not known or not self.ids or (knobs["match"] == "all" and len(known) < len(counts)):
            return []  # nothing known, or a word no page holds: no page holds them all
        weight = knobs["weights"]
        dl, avg = self._lengths_for(weight, knobs["lengths"])
        scores, held = np.zeros(len(self.ids)), np.zeros(len(self.ids), dtype=np.int64)
        parts = {}
        for w in known:  # the query's order, as a matrix-vector product adds the columns
            pages, tf = self._column(self.vocabulary[w], weight)
            idf = bm25.idf(len(self.ids), int(pages.size), knobs["idf"])
            nonzero = tf != 0  # a field weighted 0 adds no entry, as in the matrices
            part = saturated(tf[nonzero], dl[pages[nonzero]], avg, idf, knobs["k1"], knobs["b"],
                             knobs["saturation"]) * float(counts[w])
            scores[pages[nonzero]] += part
            held[pages] += 1
            parts[w] = (pages[nonzero], part)
        if knobs["match"] == "any" and all(x > 0 for x in weight.values()):
            candidates = np.flatnonzero(scores > 0)
        else:
            candidates = np.flatnonzero(held >= len(known) if knobs["match"] == "all" else held > 0)
        top = best_first(candidates, scores[candidates], self.id_rank, limit)
        rows = None
        if knobs["explain"]:
            rows = np.zeros((top.size, len(known)))
            for c, w in enumerate(known):
                pages, part = parts[w]
                at = np.searchsorted(pages, top)
                found = (at < pages.size) & (pages[np.minimum(at, pages.size - 1)] == top) if pages.size else at < 0
                rows[found, c] = part[at[found]]
        return _hits(self, top, scores, words, known, rows)

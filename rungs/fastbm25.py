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

Cost: the count matrices (about 12 bytes per distinct (page, word) pair per
field), one contribution matrix per setting kept (a few are cached), and per
query a gather of a few sparse columns.
"""

from __future__ import annotations

from collections import Counter, OrderedDict

import numpy as np
from scipy import sparse

from . import bm25
from .core.documents import check_documents
from .core.errors import BadArgument, check_names
from .core.retrieval import Hit, Retriever
from .core.text import tokenise


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
        # Ties are broken on the identifier: the position of each id in sorted order.
        self.id_rank = np.empty(len(self.ids), dtype=np.int64)
        self.id_rank[np.argsort(np.array(self.ids, dtype=object), kind="stable")] = np.arange(len(self.ids))
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
        counts = {}
        for f, (rows, cols, vals) in triples.items():
            counts[f] = sparse.csc_matrix((np.array(vals, dtype=np.float64), (rows, cols)),
                                          shape=(len(ids), len(vocabulary)))
        titles = {doc_id: str(d.get("title") or "") for doc_id, d in zip(ids, documents)}
        return cls(ids, fields, counts, vocabulary, titles, tokenizer)

    # ------------------------------------------------------------------ one setting of the knobs
    def contributions(self, *, k1=1.2, b=0.75, weights=None, idf="lucene", lengths="weighted",
                      saturation="k1+1") -> sparse.csc_matrix:
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
        f = sum(weight[name] * self.counts[name] for name in self.fields).tocsc()
        dl = sum((weight[name] if lengths == "weighted" else 1.0) * self.lengths[name] for name in self.fields)
        avg = dl.sum() / self.n_docs
        if lengths == "lossy":  # Lucene: each length stored in one byte, the average kept exact
            dl = self.lucene_lengths(dl)
        avg = avg if avg > 0 else 1.0
        idf_t = self.idf(idf)
        rows = f.indices
        cols = np.repeat(np.arange(f.shape[1]), np.diff(f.indptr))
        tf = f.data
        norm = tf + k1 * (1 - b + b * dl[rows] / avg)
        data = idf_t[cols] * ((tf * (k1 + 1.0)) / norm) if saturation == "k1+1" else idf_t[cols] * (tf / norm)
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
        explain = knobs["explain"]
        if not isinstance(explain, bool):
            raise BadArgument(f"explain must be True or False, not {explain!r}")
        return {**bm25.check_knobs(knobs, self.fields), "explain": explain}

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
        if candidates.size == 0:
            return []
        cand_scores = scores[candidates]
        if candidates.size > limit:
            # Keep every page scoring at least the limit-th best, so that ties at the cut are ordered by id.
            kth = np.partition(cand_scores, candidates.size - limit)[candidates.size - limit]
            keep = cand_scores >= kth
            candidates, cand_scores = candidates[keep], cand_scores[keep]
        order = np.lexsort((self.id_rank[candidates], -cand_scores))[:limit]
        # Every returned row's parts at once: one slice of the matrix, not one per hit (200 hits: 80 ms → 1).
        rows = sub[candidates[order]].toarray() * mult if knobs["explain"] else None
        hits = []
        for n, i in enumerate(candidates[order]):
            parts = None
            if knobs["explain"]:
                parts = dict.fromkeys(dict.fromkeys(words), 0.0)
                parts.update({w: float(v) for w, v in zip(known, rows[n])})
            hits.append(Hit(id=self.ids[i], title=self.titles.get(self.ids[i], ""), score=float(scores[i]),
                            parts=parts, why="" if parts is not None else "searched with explain=False"))
        return hits

    def search_many(self, queries: list[str], **knobs) -> list[list[dict]]:
        """One ranking per query, with the contribution matrix computed once for all of them."""
        if isinstance(queries, (str, bytes)):  # iterated, a string would be one query per letter
            raise BadArgument("queries must be a list of queries, not one string")
        knobs.setdefault("explain", False)
        return [self.search(q, **knobs) for q in queries]


"""Eager BM25: every (word, page) contribution computed once, at index time; a query is a sum of columns.

What it is for: the first lesson of notebook 08, *Lazy and eager*. The fast
path (``rungs.fastbm25``) is *lazy*: it keeps counts and lengths, and the knobs
(k1, b, field weights) are search-time arguments. ``freeze`` is *eager*: it
takes one setting of the knobs and turns the counts into **impacts**, the
finished contribution of each word to each page,

    impact(t, D) = idf(t) · f·(k1 + 1) / (f + k1·(1 − b + b·|D|/avgdl))

stored in one sparse matrix (CSC, pages × words: column t *is* word t's posting
list, page numbers ascending, impacts alongside). A query is then the sum of a
few columns; nothing is computed at search time but additions. That is what
bm25s does at index time and what Lucene does in part (it stores counts and
one-byte lengths, and keeps per-block maximum impacts to skip pages).

What it costs: one float64 and one int32 per (page, word) pair, and a knob
change means freezing again: ``refreeze(k1=…)`` from the kept counts (as long
as one lazy contribution matrix), or rebuilding from the text if the counts
were thrown away (what bm25s asks). A slider wants the lazy path; a production
engine, which serves millions of queries with one setting, wants the eager one;
a sweep sits in between (one freeze per setting, reused for every question).

What it teaches: where the arithmetic happens decides what is cheap. Scores
equal the readable ``rungs.bm25.Index.search`` to 1e-9 relative (tested),
because the same formula is applied in the same order of operations.

Collection statistics (number of pages, how many pages hold each word, total
lengths) can be passed in: ``rungs.engine.shards`` freezes each shard with the
*global* statistics, Elasticsearch's ``dfs_query_then_fetch``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from .. import bm25
from ..core.errors import BadArgument, RungsError, check_choice
from ..core.retrieval import Hit, Retriever, best_first, id_ranks
from ..core.text import tokenise
from ..fastbm25 import FastBM25

#: The knobs that decide the impacts; they are fixed by ``freeze`` and refused by ``search``.
SETTING_KNOBS = ("k1", "b", "weights", "idf", "lengths", "saturation")


class StatisticsMismatch(RungsError, ValueError):
    """Collection statistics that cannot describe this collection (fewer pages or holders than it has)."""


@dataclass(frozen=True)
class Stats:
    """What BM25 needs to know about the whole collection: its size, each word's holders, total lengths.

    ``df`` maps a word to the number of pages holding it; ``field_totals`` maps
    a field to the number of words all pages hold in it (lengths are sums of
    these, weighted or not, so the average follows any weights).
    """

    n_docs: int
    df: dict
    field_totals: dict

    @classmethod
    def of(cls, collection) -> "Stats":
        """The statistics of one collection (one shard, or the whole collection)."""
        return as_counts(collection).stats

    @classmethod
    def merge(cls, parts: list["Stats"]) -> "Stats":
        """The statistics of a collection cut into parts: counts add up (integers, so exactly)."""
        if not parts or not all(isinstance(p, Stats) for p in parts):
            raise BadArgument("merge needs a list of at least one Stats (one per shard)")
        df: dict = {}
        for part in parts:
            for word, n in part.df.items():
                df[word] = df.get(word, 0) + n
        fields = parts[0].field_totals.keys()
        return cls(n_docs=sum(p.n_docs for p in parts), df=df,
                   field_totals={f: sum(p.field_totals.get(f, 0) for p in parts) for f in fields})


class Counts:
    """Everything freezing reads from a collection, computed once: counts per field, lengths, holders.

    A knob change then costs only the arithmetic of one matrix (``refreeze``), as the lazy path's does.
    """

    def __init__(self, fast: FastBM25):
        self.fast = fast
        self.ids, self.fields, self.titles = list(fast.ids), tuple(fast.fields), fast.titles
        self.vocabulary, self.tokenizer = fast.vocabulary, fast.tokenizer
        self.words = [""] * len(fast.vocabulary)  # the word of each column
        for word, column in fast.vocabulary.items():
            self.words[column] = word
        self.per_page = {f: np.asarray(fast.counts[f].sum(axis=1)).ravel() for f in self.fields}
        # Holders: a page holds a word if any field does (a weight of 0 does not make it stop holding it).
        held = sum((fast.counts[f] > 0).astype(np.int8) for f in self.fields)
        self.df = np.diff((held > 0).astype(np.int8).tocsc().indptr)
        self.stats = Stats(n_docs=len(self.ids), df=dict(zip(self.words, self.df.tolist())),
                           field_totals={f: int(self.per_page[f].sum()) for f in self.fields})
        self.id_rank = id_ranks(self.ids)
        self._f: dict = {}          # weights → weighted counts: a sweep over k1 and b reuses one
        self._lossy: np.ndarray | None = None

    def weighted(self, weight: dict) -> sparse.csc_matrix:
        """f for every (page, word): field counts times field weights, added up; a zero stays a posting."""
        key = tuple(weight[f] for f in self.fields)
        if key not in self._f:
            self._f = {key: _weighted_counts(self.fast, weight)}  # one kept: weights change rarely
        return self._f[key]

    def lossy(self) -> np.ndarray:
        """Every page's length (all fields, unweighted) as Lucene stores it, in one byte."""
        if self._lossy is None:
            exact = sum(self.per_page[f] for f in self.fields)
            self._lossy = np.array([bm25.lucene_length(int(n)) for n in exact], dtype=np.float64)
        return self._lossy

    def df_from(self, stats: Stats) -> np.ndarray:
        """The holders of each column's word according to ``stats`` (this collection's own: no look-up)."""
        if stats is self.stats:
            return self.df
        return np.array([stats.df.get(w, 0) for w in self.words], dtype=np.int64)


def as_counts(collection) -> Counts:
    """The counts of a collection: from a readable ``bm25.Index``, a ``FastBM25``, or ``Counts`` already made."""
    if isinstance(collection, Counts):
        return collection
    if isinstance(collection, (FastBM25, bm25.Index)):
        return Counts(as_fast(collection))
    raise BadArgument("freeze needs a rungs.bm25.Index (build_index), a rungs.fastbm25.FastBM25 or "
                      f"impacts.Counts, not {type(collection).__name__}")


def as_fast(index_or_fast) -> FastBM25:
    """The counts of a collection as the lazy path keeps them (a ``FastBM25`` is kept as it is)."""
    if isinstance(index_or_fast, FastBM25):
        return index_or_fast
    if isinstance(index_or_fast, bm25.Index):
        return FastBM25.from_index(index_or_fast)
    if isinstance(index_or_fast, Counts):
        return index_or_fast.fast
    raise BadArgument("expected a rungs.bm25.Index (build_index) or a rungs.fastbm25.FastBM25, "
                      f"not {type(index_or_fast).__name__}")


def freeze(collection, *, k1=1.2, b=0.75, weights=None, idf="lucene", lengths="weighted",
           saturation="k1+1", stats: Stats | None = None) -> "Frozen":
    """One setting of the knobs baked into a matrix of impacts; ``stats``: another collection's statistics."""
    counts = as_counts(collection)
    # The same checks as the readable index: a NaN k1 would fill the whole matrix with NaN.
    knobs = bm25.check_knobs({**bm25.KNOBS, "k1": k1, "b": b, "weights": weights, "idf": idf,
                              "lengths": lengths, "saturation": saturation}, counts.fields)
    setting = {k: knobs[k] for k in SETTING_KNOBS}
    stats = counts.stats if stats is None else _checked_stats(stats, counts)
    return Frozen(counts, setting, _impacts(counts, setting, stats), stats)


def _checked_stats(stats: Stats, counts: Counts) -> Stats:
    if not isinstance(stats, Stats):
        raise BadArgument(f"stats must be an impacts.Stats (Stats.of, Stats.merge), not {type(stats).__name__}")
    # Global statistics cover this collection: at least as many pages, at least as many holders per word.
    if stats.n_docs < counts.stats.n_docs:
        raise StatisticsMismatch(f"stats count {stats.n_docs} pages; this collection alone has "
                                 f"{counts.stats.n_docs}")
    short = np.flatnonzero(counts.df_from(stats) < counts.df)
    if short.size:
        raise StatisticsMismatch("stats give fewer holders than this collection has for "
                                 f"{[counts.words[i] for i in short[:5]]}")
    if set(stats.field_totals) != set(counts.fields):
        raise StatisticsMismatch(f"stats describe fields {sorted(stats.field_totals)}, not {list(counts.fields)}")
    return stats


def _impacts(counts: Counts, setting: dict, stats: Stats) -> sparse.csc_matrix:
    """The contribution of every (page, word) pair for one setting, in the readable index's order of operations."""
    k1, b, weight = setting["k1"], setting["b"], setting["weights"]
    f = counts.weighted(weight)
    # A page's length: each field's words, weighted (the default) or counted once ("unweighted", "lossy").
    w = {name: 1.0 if setting["lengths"] != "weighted" else weight[name] for name in counts.fields}
    dl = sum(w[name] * counts.per_page[name] for name in counts.fields)
    # The average from the totals (integers), so that a shard given global totals computes the same float.
    total = sum(w[name] * stats.field_totals[name] for name in counts.fields)
    avg = total / stats.n_docs if stats.n_docs else 0.0
    avg = avg if avg > 0 else 1.0  # an empty collection: no length to normalise by
    if setting["lengths"] == "lossy":  # Lucene keeps each length in one byte, the average exact
        dl = counts.lossy()
    idf_t = _idf(counts.df_from(stats), stats.n_docs, setting["idf"])
    pages = f.indices
    words = np.repeat(np.arange(f.shape[1]), np.diff(f.indptr))
    tf = f.data
    norm = tf + k1 * (1 - b + b * dl[pages] / avg)
    with np.errstate(invalid="ignore", divide="ignore"):  # 0/0 where f = 0 and k1 = 0: replaced just below
        if setting["saturation"] == "k1+1":
            data = idf_t[words] * ((tf * (k1 + 1.0)) / norm)
        else:
            data = idf_t[words] * (tf / norm)
    if counts.fields and any(weight[name] == 0 for name in counts.fields):
        # A page holding the word only in a field weighted 0 takes part in the match and adds 0 (as in bm25).
        data = np.where(tf > 0, data, 0.0)
    return sparse.csc_matrix((data, f.indices, f.indptr), shape=f.shape)


def _weighted_counts(fast: FastBM25, weight: dict) -> sparse.csc_matrix:
    shape = (len(fast.ids), len(fast.vocabulary))
    if len(fast.fields) == 1:  # one field: its counts times its weight (the structure, zeros too, is kept)
        f = (weight[fast.fields[0]] * fast.counts[fast.fields[0]]).tocsc()
    else:
        rows, cols, vals = [], [], []
        for name in fast.fields:  # in the index's field order, the order the readable index adds them in
            part = fast.counts[name].tocoo()
            rows.append(part.row); cols.append(part.col); vals.append(weight[name] * part.data)
        # COO → CSC adds duplicates and keeps explicit zeros (a sum of sparse matrices would drop them).
        f = sparse.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                              shape=shape).tocsc()
    f.sort_indices()  # page numbers ascending in every column: the posting lists MaxScore walks
    return sparse.csc_matrix((f.data, f.indices.astype(np.int32), f.indptr.astype(np.int64)), shape=shape)


def upper_bounds(impacts: sparse.csc_matrix) -> np.ndarray:
    """The largest impact of each word (0 for a word no page holds): the bound MaxScore skips with."""
    upper = np.zeros(impacts.shape[1])
    held = np.flatnonzero(np.diff(impacts.indptr))
    if held.size:
        upper[held] = np.maximum.reduceat(impacts.data, impacts.indptr[held])
    return upper


def _idf(df: np.ndarray, n_docs: int, kind: str) -> np.ndarray:
    """``rungs.bm25.idf`` for every word (once per distinct count: a few hundred calls, not a vocabulary's)."""
    values, where = np.unique(df, return_inverse=True)
    idfs = np.array([bm25.idf(n_docs, int(n), kind) for n in values], dtype=np.float64)
    return idfs[where].reshape(-1)


class Frozen(Retriever):
    """A retriever over frozen impacts: ``search`` takes ``match``, ``repeats`` and ``explain``, nothing else.

    Asking for ``k1`` at search time is refused (``BadArgument``: no such knob):
    the point of freezing is that the setting is no longer a choice. Call
    ``refreeze(k1=…)`` for another setting.
    """

    name = "BM25 (frozen impacts)"
    defaults = {"match": "any", "repeats": "once", "explain": True}

    def __init__(self, counts: Counts, setting: dict, impacts: sparse.csc_matrix, stats: Stats):
        super().__init__()
        self.counts = counts            # kept, so that another setting can be frozen without re-reading
        self.setting = dict(setting)
        self.impacts = impacts          # pages × words; column t = word t's postings and impacts
        self.stats = stats
        self.ids, self.fields, self.titles = counts.ids, counts.fields, counts.titles
        self.vocabulary, self.tokenizer = counts.vocabulary, counts.tokenizer
        self.id_rank = counts.id_rank
        self.upper = upper_bounds(impacts)  # per word: what MaxScore may assume at most (rungs.engine.maxscore)

    @property
    def n_docs(self) -> int:
        return len(self.ids)

    def refreeze(self, **changes) -> "Frozen":
        """The same collection frozen with other knobs (the cost of a knob change on an eager index)."""
        unknown = sorted(set(changes) - set(SETTING_KNOBS))
        if unknown:
            raise BadArgument(f"refreeze takes {', '.join(SETTING_KNOBS)}, not {', '.join(unknown)}")
        return freeze(self.counts, **{**self.setting, **changes},
                      stats=None if self.stats is self.counts.stats else self.stats)

    def check_knobs(self, knobs: dict) -> dict:
        if not isinstance(knobs["explain"], bool):
            raise BadArgument(f"explain must be True or False, not {knobs['explain']!r}")
        return {"match": check_choice(knobs["match"], "match", ("any", "all")),
                "repeats": check_choice(knobs["repeats"], "repeats", ("once", "count")),
                "explain": knobs["explain"]}

    def columns(self, words: list[str], repeats: str = "once") -> tuple[list[str], np.ndarray, np.ndarray]:
        """The query's words the index knows, their columns and how many times each counts."""
        if repeats == "once":  # a word typed twice is not twice as important, unless told (Lucene counts it)
            words = list(dict.fromkeys(words))
        counts: dict[str, int] = {}
        for w in words:
            counts[w] = counts.get(w, 0) + 1
        known = [w for w in counts if w in self.vocabulary]
        cols = np.array([self.vocabulary[w] for w in known], dtype=np.int64)
        return known, cols, np.array([counts[w] for w in known], dtype=np.float64)

    def _search(self, query, limit, knobs):
        words = tokenise(query, **self.tokenizer)
        known, cols, mult = self.columns(words, knobs["repeats"])
        distinct = len(dict.fromkeys(words))
        if not known or (knobs["match"] == "all" and len(known) < distinct):
            return []  # no word known, or one word no page holds: no page holds them all
        sub = self.impacts[:, cols]
        scores = sub @ mult  # the whole query: a sum of columns
        # The pages taking part: those holding any word (or every word), from the postings themselves.
        pages, held = np.unique(sub.indices, return_counts=True)
        if knobs["match"] == "all":
            pages = pages[held == len(cols)]
        return self._hits(pages, scores, limit, sub, known, mult, words, knobs["explain"])

    def _hits(self, pages, scores, limit, sub, known, mult, words, explain):
        if pages.size == 0:
            return []
        top = best_first(pages, scores[pages], self.id_rank, limit)
        hits = []
        for i in top:
            parts = None
            if explain:
                parts = dict.fromkeys(dict.fromkeys(words), 0.0)
                parts.update({w: float(v) for w, v in zip(known, sub[i].toarray().ravel() * mult)})
            hits.append(Hit(id=self.ids[i], title=self.titles.get(self.ids[i], ""), score=float(scores[i]),
                            parts=parts, why="" if explain else "searched with explain=False"))
        return hits


def same_ranking(a: list[Hit], b: list[Hit], *, rel: float = 1e-9) -> bool:
    """Two rankings with the same ids in the same order and scores equal to ``rel`` relative."""
    return [h.id for h in a] == [h.id for h in b] and all(
        math.isclose(x.score, y.score, rel_tol=rel, abs_tol=1e-12) for x, y in zip(a, b))

"""N1, compiled: frozen impacts walked by numba loops — a fast path level with the compiled peers.

What it is for: the queries-per-second column of notebook 08, and the
benchmark against bm25s' numba backend and tantivy (``benchmarks/bench_peers.py``).
``Compiled`` holds one frozen setting (``rungs.engine.impacts.freeze``) as the
arrays the compiled loops of ``rungs.engine.loops`` walk: ``top_k`` (one query
of words), ``top_k_many`` (a batch in one call), ``maxscore`` (the same top k,
skipping). ``FastEngine`` is the retriever: the knobs at search time, as the
lazy path (``rungs.fastbm25``) has them; a new setting is frozen on first use
and the last few are kept.

What it costs: building is ``freeze`` (one float64 and one int32 per posting)
plus three arrays of one entry per page reused by every query (so one engine
serves one thread at a time). Per query: the postings of its words, a heap of k,
and a few microseconds of Python around the compiled call (token → column
look-ups, two small arrays out); a batch pays the call once. The first call
compiles the loops (seconds, then cached on disk): ``warm_up()`` does it ahead.

What it teaches: an engine is fast because of where the arithmetic happens
(index time), what it does not touch (pages outside the postings, pages that
cannot reach the top k) and the language of its inner loop — not because its
formula is different: the scores equal the readable N1's to 1e-9 and bm25s'
lucene variant to 1e-6 (``tests/test_engine_compiled.py``). The readable path
stays the reference; ask it (``rungs.bm25``) to explain a hit word by word.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from .. import bm25
from ..core.errors import BadArgument, check_choice, check_int, check_limit
from ..core.retrieval import Hit, Retriever
from ..core.text import tokenise
from ..fastbm25 import FastBM25
from . import impacts, loops

# ---------------------------------------------------------------- one setting, compiled

def _counts(words) -> dict:
    """How many times each word occurs, in order of first occurrence (``repeats="count"``)."""
    counts: dict = {}
    for w in words:
        counts[w] = counts.get(w, 0) + 1
    return counts


class Compiled:
    """One frozen setting, ready for the compiled loops: ``top_k``, ``top_k_many``, ``maxscore``.

    Inputs are words already cut (the benchmark feeds every system the same
    tokens); ``FastEngine.search`` is the text-in, hits-out retriever.
    """

    def __init__(self, frozen: impacts.Frozen):
        if not isinstance(frozen, impacts.Frozen):
            raise BadArgument(f"Compiled needs an impacts.Frozen (impacts.freeze), not {type(frozen).__name__}")
        m = frozen.impacts
        self.frozen = frozen
        # One more column, empty, after the last word: a word the index does not know points there,
        # so a query needs no filtering in Python (it adds nothing, and MaxScore bounds it by 0).
        self.unknown = m.shape[1]
        self.indptr = np.append(m.indptr.astype(np.int64, copy=False), m.nnz)
        self.pages = m.indices.astype(np.int32, copy=False)
        self.impacts = m.data.astype(np.float64, copy=False)
        self.upper = np.append(frozen.upper, 0.0)
        self.once = np.empty(0)  # « every word counts once »: no multiplicities to pass
        self.id_rank = frozen.id_rank
        self.vocabulary = frozen.vocabulary
        n = len(frozen.ids)
        # Scratch space reused by every query (reset after each): one engine serves one thread at a time.
        self.scores = np.zeros(n, np.float64)
        self.held = np.zeros(n, np.int32)
        self.touched = np.empty(n + 1, np.int32)  # + 1: the branchless append writes one past the last page
        # Impacts of exactly 0 (a field weighted 0) need the counting loop to know which pages take part.
        self.zeros = bool((self.impacts == 0.0).any())
        self.counters = np.zeros(2, np.int64)
        self.merge_pages = loops.MERGE_PAGES  # from how many pages short queries are merged (a test sets 0)

    def columns(self, words, repeats="once"):
        """The query's columns (an unknown word → the empty column) and multiplicities (``once``: none)."""
        if isinstance(words, str) or not isinstance(words, (list, tuple)):
            # A string would be iterated letter by letter: a query here is its words, already cut.
            raise BadArgument(f"words must be a list of words (rungs.core.text.tokenise cuts a text), "
                              f"not {type(words).__name__}")
        check_choice(repeats, "repeats", ("once", "count"))
        get, unknown = self.vocabulary.get, self.unknown
        if repeats == "once":
            return np.array([get(w, unknown) for w in dict.fromkeys(words)], np.int64), self.once
        counts = _counts(words)
        return (np.array([get(w, unknown) for w in counts], np.int64),
                np.array(list(counts.values()), np.float64))

    def top_k(self, words, k=10, match="any", repeats="once"):
        """The k best pages for a list of words: (page numbers, scores), best first, ties by id."""
        k, every = check_limit(k), check_choice(match, "match", ("any", "all")) == "all"
        terms, mult = self.columns(words, repeats)
        if k == 0 or (every and self.unknown in terms):
            return np.empty(0, np.int64), np.empty(0)  # a word no page holds: no page holds them all
        out_pages, out_scores = np.empty(k, np.int64), np.empty(k, np.float64)
        n = loops.exhaustive(terms, mult, terms.size if every else 1, every or self.zeros, self.merge_pages,
                             self.indptr, self.pages, self.impacts, self.id_rank, self.scores, self.held,
                             self.touched, k, out_pages, out_scores)
        return out_pages[:n], out_scores[:n]

    def top_k_many(self, queries, k=10, match="any", repeats="once"):
        """A batch of word lists in one compiled call: pages (q × k), scores (q × k), how many per query."""
        k = max(check_limit(k), 1)  # a heap of at least one
        every = check_choice(match, "match", ("any", "all")) == "all"
        check_choice(repeats, "repeats", ("once", "count"))
        if isinstance(queries, str) or not all(isinstance(q, (list, tuple)) for q in queries):
            raise BadArgument("queries must be a list of queries, each a list of words")
        get, unknown = self.vocabulary.get, self.unknown
        flat, mults, starts = [], [], [0]
        for words in queries:
            counts = dict.fromkeys(words, 1) if repeats == "once" else _counts(words)
            cols = [get(w, unknown) for w in counts]
            if every and unknown in cols:
                cols, counts = [], {}  # a word no page holds: nothing matches them all
            flat.extend(cols)
            if repeats != "once":
                mults.extend(counts.values())
            starts.append(len(flat))
        starts = np.array(starts, np.int64)
        needs = np.diff(starts) if every else np.ones(len(queries), np.int64)
        out_pages = np.empty((len(queries), k), np.int64)
        out_scores = np.empty((len(queries), k), np.float64)
        out_n = np.empty(len(queries), np.int64)
        loops.exhaustive_many(np.array(flat, np.int64), np.array(mults, np.float64) if mults else self.once,
                              starts, needs, every or self.zeros, self.merge_pages, self.indptr, self.pages,
                              self.impacts, self.id_rank, self.scores, self.held, self.touched, k, out_pages,
                              out_scores, out_n)
        return out_pages, out_scores, out_n

    def maxscore(self, words, k=10, repeats="once"):
        """``top_k`` by MaxScore (match any): the same answer; ``self.counters``: pages scored, abandoned."""
        k = check_limit(k)
        terms, mult = self.columns(words, repeats)
        if k == 0:
            return np.empty(0, np.int64), np.empty(0)
        out_pages, out_scores = np.empty(k, np.int64), np.empty(k, np.float64)
        n = loops.maxscore(terms, mult, self.indptr, self.pages, self.impacts, self.upper, self.id_rank, k,
                           out_pages, out_scores, self.counters)
        return out_pages[:n], out_scores[:n]


# ---------------------------------------------------------------- the retriever: knobs at search time

class FastEngine(Retriever):
    """N1's knobs at search time over compiled frozen impacts; a new setting is frozen once and kept.

    ``method``: ``"exhaustive"`` or ``"maxscore"`` (match any only); both give
    the same hits. Parts (``explain``) are not computed here: ask the readable
    index to explain a hit.
    """

    name = "BM25 (compiled impacts)"
    defaults = {**bm25.KNOBS, "method": "exhaustive"}

    def __init__(self, index_or_fast, *, keep: int = 4):
        super().__init__()
        self.counts = impacts.as_counts(index_or_fast)  # read once; each setting is frozen from it
        self.ids, self.titles, self.tokenizer = self.counts.ids, self.counts.titles, self.counts.tokenizer
        self.keep = check_int(keep, "keep", low=1, high=64)  # each kept setting is a copy of the postings
        self._cache: OrderedDict = OrderedDict()

    def check_knobs(self, knobs: dict) -> dict:
        clean = bm25.check_knobs(knobs, self.counts.fields)
        clean["method"] = check_choice(knobs["method"], "method", ("exhaustive", "maxscore"))
        if clean["method"] == "maxscore" and clean["match"] != "any":
            raise BadArgument("method='maxscore' skips pages holding only some words: it needs match='any'")
        return clean

    def at(self, **knobs) -> Compiled:
        """The compiled index for one setting (frozen on first use, the last ``keep`` settings kept)."""
        return self._at(self._settings(knobs))

    def _at(self, clean: dict) -> Compiled:
        # The setting's knobs, already checked, as a key (weights: a dict, made a tuple).
        key = tuple(tuple(sorted(clean[k].items())) if k == "weights" else clean[k] for k in impacts.SETTING_KNOBS)
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = Compiled(impacts.freeze(self.counts, **{k: clean[k]
                                                                               for k in impacts.SETTING_KNOBS}))
            if len(self._cache) > self.keep:
                self._cache.popitem(last=False)
        self._cache.move_to_end(key)
        return found

    def _search(self, query, limit, knobs):
        compiled = self._at(knobs)  # the knobs were checked once, at the door
        words = tokenise(query, **self.tokenizer)
        if knobs["method"] == "maxscore":
            pages, scores = compiled.maxscore(words, limit, knobs["repeats"])
        else:
            pages, scores = compiled.top_k(words, limit, knobs["match"], knobs["repeats"])
        return [Hit(id=self.ids[p], title=self.titles.get(self.ids[p], ""), score=float(s), parts=None,
                    why="compiled path: parts are not kept (the readable index explains a hit)")
                for p, s in zip(pages.tolist(), scores.tolist())]


def warm_up() -> None:
    """Compile (or load from numba's cache) every loop once, on a two-page collection."""
    tiny = FastBM25.from_documents([{"id": "a", "body": "x y"}, {"id": "b", "body": "y"}], fields=("body",))
    c = Compiled(impacts.freeze(tiny))
    c.top_k(["y"], 1), c.top_k_many([["y"], ["x"]], 1), c.maxscore(["x", "y"], 1)
    c.merge_pages = 0  # and the merge, which only large collections choose
    c.top_k(["y"], 1), c.top_k_many([["y"]], 1)

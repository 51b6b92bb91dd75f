"""The retrieval contract as checks: one small named function per promise, run over every retriever.

What it is for: ``rungs.core.retrieval`` states what every retriever promises;
these functions check it, each on its own, the way scikit-learn's estimator
checks do (``check_xxx(retriever)``). The suite discovers every ``Retriever``
subclass of the package and runs every check on it, so a new rung is held to
the contract without anyone adding it to a list. A curious reader can run them
on a retriever of their own.

Each check raises ``ContractBroken`` (never a bare ``assert``: the checks must
still check under ``python -O``) with what was promised and what was seen.

Some functions rank and are not retrievers, on purpose: ``NOT_RETRIEVERS``
names each with the reason (arrays out for a benchmark, counters for a lesson,
a batch of searches, FTS5's own syntax). The suite finds every public function
named like a search (``is_a_search_name``) and fails on one that is neither
a retriever's ``search`` nor named there, so none escapes the contract unseen.

Cost: a few searches per check.
"""

from __future__ import annotations

import math
import re

from .errors import BadArgument, RungsError
from .retrieval import Hit, Retriever, ordered


class ContractBroken(RungsError, AssertionError):
    """A retriever broke a promise of the retrieval contract; the message says which and how."""


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ContractBroken(message)


def check_hits(hits, *, tolerance: float = 1e-9) -> None:
    """A ranking keeps the contract: hits, ids unique, finite scores, best first with ties by id, parts add up."""
    _require(isinstance(hits, list) and all(isinstance(h, Hit) for h in hits),
             f"search must return a list of Hit, not {type(hits).__name__}")
    ids = [h.id for h in hits]
    _require(len(ids) == len(set(ids)), f"an id appears twice: {ids}")
    _require(all(isinstance(h.score, float) and math.isfinite(h.score) for h in hits), "a score is not a finite float")
    _require(hits == ordered(hits), f"not best first with ties broken by id: {[(h.id, h.score) for h in hits]}")
    for h in hits:
        if h.parts is None:
            _require(bool(h.why), f"{h.id}: no parts and no reason why")
        else:
            total = math.fsum(h.parts.values())
            _require(math.isclose(total, h.score, rel_tol=tolerance, abs_tol=tolerance),
                     f"{h.id}: its parts add up to {total!r}, its score is {h.score!r}")


class Counted:
    """Counts the calls that reach a retriever's own ranking code (its ``_search``), from inside it.

    ``with Counted(r) as calls: r.search(...)`` — then ``calls.n`` is how many rankings ``r`` itself
    computed; a promise « before any work » is that this stays 0.
    """

    def __init__(self, retriever: Retriever):
        self.retriever, self.n = retriever, 0

    def __enter__(self) -> "Counted":
        inner = self.retriever._search

        def counted(*args, **kwargs):
            self.n += 1
            return inner(*args, **kwargs)

        self.retriever._search = counted  # on the instance: the class and every other instance are untouched
        return self

    def __exit__(self, *exc) -> None:
        del self.retriever._search


def check_ranking(retriever: Retriever, query: str) -> None:
    """A real query returns hits that keep the contract, and ``limit`` cuts the same ranking."""
    hits = retriever.search(query, limit=10)
    _require(bool(hits), f"{retriever!r} found nothing for {query!r}: the check needs a query that matches")
    check_hits(hits)
    shorter = retriever.search(query, limit=2)
    _require([h.id for h in shorter] == [h.id for h in hits[:2]], "limit=2 is not the first two of limit=10")


def check_costs_nothing(retriever: Retriever, query: str) -> None:
    """``limit=0`` and an empty or blank query return ``[]`` without the retriever ranking anything."""
    with Counted(retriever) as calls:
        for q, limit in ((query, 0), ("", 5), ("   ", 5)):
            got = retriever.search(q, limit=limit)
            _require(got == [], f"search({q!r}, limit={limit}) returned {got!r}, not []")
    _require(calls.n == 0, f"limit=0 or a blank query reached the ranking code {calls.n} time(s)")


def check_bad_arguments_named(retriever: Retriever, query: str) -> None:
    """A bad limit, a query that is not text or too long, an unknown knob: ``BadArgument`` first, no work."""
    cases = [({"limit": -1}, "limit"), ({"limit": 2.5}, "limit"), ({"limit": True}, "limit"),
             ({"limit": 2**63}, "limit"), ({"colour": "blue"}, "has no knob")]
    with Counted(retriever) as calls:
        for knobs, expected in cases:
            for q in (query, ""):
                try:
                    retriever.search(q, **knobs)
                except BadArgument as err:
                    _require(expected in str(err), f"{knobs}: the error {err} does not name {expected!r}")
                else:
                    raise ContractBroken(f"search({q!r}, **{knobs}) was accepted")
        for bad in (42, None, ["badge"], "mot " * 1000):
            try:
                retriever.search(bad)
            except BadArgument as err:
                _require("query" in str(err), f"the error {err} does not name the query")
            else:
                raise ContractBroken(f"search({str(bad)[:20]!r}…) was accepted")
    _require(calls.n == 0, f"a refused argument reached the ranking code {calls.n} time(s)")


def check_with_knobs(retriever: Retriever, query: str) -> None:
    """``with_knobs()`` keeps the index (the same ranking with the same knobs) and checks its knobs at once."""
    same = retriever.with_knobs(**retriever.knobs)
    _require([(h.id, h.score) for h in same.search(query)] == [(h.id, h.score) for h in retriever.search(query)],
             "with_knobs(the same knobs) ranks differently")
    try:
        retriever.with_knobs(colour="blue")
    except BadArgument:
        pass
    else:
        raise ContractBroken("with_knobs(colour='blue') was accepted")


#: Every check, by name: what the suite runs over every retriever it finds.
CHECKS = {"ranking": check_ranking, "costs nothing": check_costs_nothing,
          "bad arguments named": check_bad_arguments_named, "with_knobs": check_with_knobs}


#: What a function that ranks is called: ``search``, ``raw_search``, ``search_many``, ``top_k``, ``maxscore``…
SEARCH_NAME = re.compile(r"(search|\w+_search|search_\w+|top_k\w*|maxscore|exhaustive)")


def is_a_search_name(name: str) -> bool:
    """Is a public function or method of this name a search (one the contract holds, or names in ``NOT_RETRIEVERS``)?"""
    return not name.startswith("_") and SEARCH_NAME.fullmatch(name) is not None


_COMPILED = ("words already cut in, arrays of page numbers and scores out: what benchmarks/bench_peers.py times "
             "against bm25s and tantivy on the same tokens (a Hit per result would be timed instead of the engine); "
             "rungs.engine.compiled.FastEngine is its retriever")

#: Functions that rank but are not retrievers, each with the reason. Everything else named like a search is a
#: retriever's ``search``, checked by every check above (tests/test_contract.py finds both by walking the package).
NOT_RETRIEVERS = {
    "rungs.engine.compiled.Compiled.top_k": _COMPILED,
    "rungs.engine.compiled.Compiled.top_k_many": _COMPILED + " (a batch of queries in one compiled call)",
    "rungs.engine.compiled.Compiled.maxscore": _COMPILED + " (with method='maxscore')",
    "rungs.engine.loops.exhaustive": "a compiled inner loop (numba) over plain arrays: no Python object goes in or out",
    "rungs.engine.loops.maxscore": "a compiled inner loop (numba) over plain arrays: no Python object goes in or out",
    "rungs.engine.maxscore.search": "returns a Result: the hits and the counters notebook 08 reads (pages matching, "
                                    "scored, abandoned, skipped); its hits are held to check_hits "
                                    "(tests/test_engine_maxscore.py); FastEngine(method='maxscore') is the retriever",
    "rungs.engine.maxscore.exhaustive": "the reference MaxScore is compared with: impacts.Frozen.search (a retriever) "
                                        "with match='any' and explain=False, named for the lesson",
    "rungs.fastbm25.FastBM25.search_many": "a batch: one FastBM25.search per query (each inside the contract), "
                                           "explain off, the contribution matrix computed once for all",
    "rungs.fts.FtsIndex.raw_search": "FTS5's own MATCH syntax, for notebook 00's lesson on syntax: the contract's "
                                     "search never reads a query as syntax",
    "rungs.tools.cli.search": "the command python -m rungs search: it prints a folder retriever's hits",
}


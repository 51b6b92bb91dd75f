"""The retrieval contract as checks: one small named function per promise, run over every retriever.

What it is for: ``rungs.core.retrieval`` states what every retriever promises;
these functions check it, each on its own, the way scikit-learn's estimator
checks do (``check_xxx(retriever)``). The suite discovers every ``Retriever``
subclass of the package and runs every check on it, so a new rung is held to
the contract without anyone adding it to a list. A curious reader can run them
on a retriever of their own.

Each check raises ``ContractBroken`` (never a bare ``assert``: the checks must
still check under ``python -O``) with what was promised and what was seen.

Cost: a few searches per check.
"""

from __future__ import annotations

import math

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

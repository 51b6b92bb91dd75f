"""The retrieval contract: every rung that ranks answers ``search(query, *, limit) -> list[Hit]``.

What it is for: one way to call a retriever, whichever rung built it — FTS5
(N0), the readable BM25 and its fast path (N1), the vector leg, the hybrid
(N2), a judge that reranks (N4), passages rolled up to documents. A notebook
can swap one for another, the hybrid can fuse any of them, and the research
loop (N5) can take any of them.

The contract, checked here once for every retriever:

- a retriever is built from a collection once; every knob that only changes
  the ranking is a *search-time* argument (a slider must not rebuild);
- ``search(query, *, limit=5, **knobs)``: ``query`` is text (at most
  ``MAX_QUERY_CHARS``), ``limit`` an integer ≥ 0; unknown or bad knobs raise
  ``BadArgument`` *before any work*, even when nothing would match;
- an empty query or ``limit=0`` returns ``[]`` without touching the index;
- results are ``Hit`` records, best first, ties broken by id, ids unique;
- a hit's ``parts`` add up to its ``score`` (what each word, leg or passage
  contributed), or ``parts`` is ``None`` and ``why`` says plainly why there is
  no breakdown.

Cost: a dictionary merge and a few checks per call.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from .errors import BadArgument, check_limit, check_query


@dataclass(frozen=True)
class Hit:
    """One ranked result: what was found, how well it scored, and why."""

    id: str
    score: float
    title: str = ""
    parts: Mapping[str, float] | None = None  # what each word / leg / passage contributed; sums to score
    why: str = ""                              # when parts is None: why this score has no breakdown
    extra: Mapping[str, Any] = field(default_factory=dict)  # what a rung adds: snippet, ranks, doc, position…

    # Read access by name as well (hit["id"]), so a hit drops into code written for dicts.
    def __getitem__(self, key: str):
        if key in _FIELDS:
            return getattr(self, key)
        return self.extra[key]

    def get(self, key: str, default=None):
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key: str) -> bool:
        return key in _FIELDS or key in self.extra

    def as_dict(self) -> dict:
        """A plain dict (for pandas, JSON): id, title, score, then the parts and extras flattened."""
        out = {"id": self.id, "title": self.title, "score": self.score}
        out.update({f"part: {k}": v for k, v in (self.parts or {}).items()})
        out.update(self.extra)
        return out


_FIELDS = ("id", "score", "title", "parts", "why", "extra")


def ordered(hits: list[Hit]) -> list[Hit]:
    """Best first; ties are broken on the identifier, so two runs give the same order."""
    return sorted(hits, key=lambda h: (-h.score, h.id))


class Retriever:
    """The base every retriever shares: the checks, the empty cases, the knobs' defaults.

    A subclass sets ``name`` and ``defaults`` (its search-time knobs and their
    default values), and writes ``check_knobs`` (validate, return the clean
    values) and ``_search(query, limit, knobs)`` (the ranking itself).
    """

    name = "retriever"
    defaults: dict = {}

    def __init__(self) -> None:
        self.knobs = dict(self.defaults)

    def search(self, query: str, *, limit: int = 5, **knobs) -> list[Hit]:
        """The ``limit`` best hits for ``query``; the knobs override this retriever's defaults for one call."""
        query = check_query(query)
        limit = check_limit(limit)
        settings = self._settings(knobs)  # bad knobs are named before any work, whatever the query
        if limit == 0 or not query.strip():
            return []
        hits = self._search(query, limit, settings)
        return hits[:limit]

    def _settings(self, knobs: dict) -> dict:
        unknown = sorted(set(knobs) - set(self.knobs))
        if unknown:
            known = ", ".join(sorted(self.knobs)) or "none"
            raise BadArgument(f"{self.name} has no knob {', '.join(unknown)} (its knobs: {known})")
        return self.check_knobs({**self.knobs, **knobs})

    def check_knobs(self, knobs: dict) -> dict:
        return knobs

    def _search(self, query: str, limit: int, knobs: dict) -> list[Hit]:  # pragma: no cover - abstract
        raise NotImplementedError

    def with_knobs(self, **knobs) -> "Retriever":
        """The same retriever (same index, nothing rebuilt) with other default knobs, checked now."""
        other = copy.copy(self)
        other.knobs = self._settings(knobs)
        return other

    def __repr__(self) -> str:
        knobs = ", ".join(f"{k}={v!r}" for k, v in self.knobs.items())
        return f"{type(self).__name__}({self.name!r}{', ' if knobs else ''}{knobs})"


def check_hits(hits: list[Hit], *, tolerance: float = 1e-9) -> None:
    """The contract's promises about a ranking, as assertions a test (or a curious reader) can run."""
    ids = [h.id for h in hits]
    assert len(ids) == len(set(ids)), f"an id appears twice: {ids}"
    assert all(math.isfinite(h.score) for h in hits), "a score is not finite"
    assert hits == ordered(hits), "not best first with ties by id"
    for h in hits:
        if h.parts is None:
            assert h.why, f"{h.id}: no parts and no reason why"
        else:
            total = math.fsum(h.parts.values())
            assert math.isclose(total, h.score, rel_tol=tolerance, abs_tol=tolerance), (h.id, total, h.score)

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

The checks that every retriever keeps these promises live beside it, in
``rungs.core.contract``; the suite runs them over every retriever the
package defines.

Cost: a dictionary merge and a few checks per call.
"""

from __future__ import annotations

import copy
import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Mapping

from .errors import BadArgument, short_repr, check_limit, check_number, check_query

#: A weight beyond this is a typo, not a preference: it would drown every other field or leg.
MAX_WEIGHT = 1000.0


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


def id_ranks(ids) -> "np.ndarray":
    """Each id's place among the ids sorted as text: what a ranking held in arrays breaks its ties on."""
    import numpy as np  # here, not at the top: the rungs that rank dicts of hits never pay for numpy

    rank = np.empty(len(ids), dtype=np.int64)
    rank[np.argsort(np.array(ids, dtype=object), kind="stable")] = np.arange(len(ids))
    return rank


def best_first(rows, scores, id_rank, limit: int) -> "np.ndarray":
    """``ordered`` for rankings held in arrays — the one top-k cut of the array rungs (the fast path, frozen impacts,
    the vector leg): the ``limit`` best of ``rows``, by ``scores`` (aligned with ``rows``), ties broken by
    ``id_rank`` (``id_ranks``). A partial sort, then a sort of the few kept."""
    import numpy as np

    if limit <= 0:
        return rows[:0]
    if rows.size > limit:
        # Keep every row scoring at least the limit-th best, so that ties at the cut are ordered by id.
        kth = np.partition(scores, rows.size - limit)[rows.size - limit]
        keep = scores >= kth
        rows, scores = rows[keep], scores[keep]
    return rows[np.lexsort((id_rank[rows], -scores))[:limit]]


class Retriever(ABC):
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

    @abstractmethod
    def _search(self, query: str, limit: int, knobs: dict) -> list[Hit]:
        """The ranking itself: at most ``limit`` hits, best first, for clean knobs (each retriever writes it)."""

    def with_knobs(self, **knobs) -> "Retriever":
        """The same retriever (same index, nothing rebuilt) with other default knobs, checked now."""
        other = copy.copy(self)
        other.knobs = self._settings(knobs)
        return other

    def __repr__(self) -> str:
        knobs = ", ".join(f"{k}={v!r}" for k, v in self.knobs.items())
        return f"{type(self).__name__}({self.name!r}{', ' if knobs else ''}{knobs})"


class OnFirstSearch(Retriever):
    """A retriever without knobs of its own, made by ``build()`` on its first search (then kept): what is refused —
    a bad knob, a query that is not text — or costs nothing — a blank query, ``limit=0`` — never waits for the
    build (a folder's vector leg: the encoder loaded, the passages without a vector encoded)."""

    defaults: dict = {}

    def __init__(self, name: str, build):
        super().__init__()
        self.name, self._build, self._made = name, build, {}  # one dict, shared by with_knobs' copies

    def _search(self, query, limit, knobs):
        if "retriever" not in self._made:
            self._made["retriever"] = self._build()
        return self._made["retriever"].search(query, limit=limit)


def ranking_ids(ranking) -> list[str]:
    """The ids of a ranking, best first, as text: a ranking is a list of hits (or dicts with an id) or of ids."""
    if isinstance(ranking, (str, bytes)):
        raise BadArgument("a ranking is a list of ids or hits, not a string")
    if isinstance(ranking, Mapping) or not isinstance(ranking, Iterable):
        raise BadArgument(f"a ranking is a list of ids or hits, not {type(ranking).__name__} {short_repr(ranking)}")
    return [one_id(r, i) for i, r in enumerate(ranking)]


def one_id(r, i: int = 0) -> str:
    """One entry of a ranking as an id (text): an id itself, or a hit / dict carrying one."""
    if isinstance(r, str) or (isinstance(r, int) and not isinstance(r, bool) and r.bit_length() <= 63):
        return str(r)
    if not isinstance(r, (str, int)) and hasattr(r, "get") and isinstance(r.get("id"), (str, int)) \
            and not isinstance(r.get("id"), bool):
        return one_id(r.get("id"), i)
    # True would pass as page 1, a float as a page named "1.0": neither is an id.
    raise BadArgument(f"ranking[{i}] is {type(r).__name__} {short_repr(r)}: a ranking holds ids "
                      "(strings or integers) or hits (with an 'id')")


def check_scored(hit, name: str = "hit", *, parts: bool = False):
    """One result to show: a ``Hit``, or a dict with an ``id`` (text or an integer) and a ``score`` (a number);
    ``parts``: it has ``parts`` too, a dict of name → number or None (``rungs.core.display`` shows them)."""
    rid, score = (hit.get("id"), hit.get("score")) if isinstance(hit, (Hit, Mapping)) else (None, None)
    if isinstance(rid, bool) or not isinstance(rid, (str, int)) or isinstance(score, bool) \
            or not isinstance(score, numbers.Real):
        raise BadArgument(f"{name} must be a hit (or a dict) with an 'id' and a 'score' that is a number, "
                          f"not {short_repr(hit)}")
    if parts and "parts" not in hit:
        raise BadArgument(f"{name} has no 'parts' (what each word or leg contributed): pass a hit a rung returned")
    given = hit.get("parts") if parts else None
    if given is not None and (not isinstance(given, Mapping) or not all(
            isinstance(v, numbers.Real) and not isinstance(v, bool) for v in given.values())):
        raise BadArgument(f"{name}'s parts must be a dict of name → number (or None: no parts), not {short_repr(given)}")
    return hit


def check_scored_ranking(ranking, name: str = "ranking") -> list:
    """A ranking to show: a list of results, each one ``check_scored`` (a bare string or a dict is no ranking)."""
    if isinstance(ranking, (str, bytes, Mapping)) or not isinstance(ranking, Iterable):
        raise BadArgument(f"{name} must be a list of hits, not {type(ranking).__name__} {short_repr(ranking)}")
    return [check_scored(r, f"{name}[{i}]") for i, r in enumerate(ranking)]


def check_hit_list(hits, name: str = "hits") -> list[Hit]:
    """Hits as a retriever returns them: ``Hit`` objects, ids as text, scores and parts as numbers (what a
    roll-up sums and ``hits_table`` shows); a dict is refused here, not where its ``.score`` is read."""
    if isinstance(hits, (str, bytes, Mapping)) or not isinstance(hits, Iterable):
        raise BadArgument(f"{name} must be a list of Hit (what a retriever returns), not {type(hits).__name__}")
    hits = list(hits)
    for i, h in enumerate(hits):
        if not isinstance(h, Hit) or not isinstance(h.id, str):
            raise BadArgument(f"{name}[{i}] must be a Hit (rungs.core.retrieval.Hit) with a text id, not {short_repr(h)}")
        check_scored(h, f"{name}[{i}]", parts=True)
    return hits


def check_weights(weights, names, *, what: str = "field", high: float = MAX_WEIGHT,
                  need_one: bool = False) -> dict[str, float]:
    """The one check for weights, of fields (BM25, FTS5) or of legs (a fusion): name → finite number ≥ 0.

    A name not given weighs 1.0; a name that is not a field (a leg) is refused, naming the ones there
    are. ``need_one``: at least one weight above 0 (a fusion of legs that all weigh 0 ranks nothing).
    """
    names = list(names)
    weights = weights or {}
    if not isinstance(weights, Mapping):
        raise BadArgument(f"weights must be a dict of {what} name → weight, like {{{names[0] if names else 'title'!r}: "
                          f"2.0}}, not {short_repr(weights)}")
    unknown = sorted(set(weights) - set(names), key=str)
    if unknown:
        missing = "the index does not have" if what == "field" else "that are not given"
        raise BadArgument(f"weights name {what}s {missing}: {unknown} (the {what}s: {names})")
    clean = {n: check_number(weights.get(n, 1.0), f"weights[{n!r}]", low=0.0, high=high) for n in names}
    if need_one and not any(clean.values()):
        raise BadArgument(f"at least one {what} needs a weight above 0")
    return clean

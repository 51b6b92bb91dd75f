"""N2 — hybrid search: the keyword ranking and the vector ranking, fused by reciprocal rank fusion.

What it is for: keywords are exact and blind to paraphrase; vectors see
meaning and blur exact terms. Reciprocal rank fusion (Cormack, Clarke and
Büttcher, SIGIR 2009) needs no score calibration — it uses ranks only:

    fused(d) = Σ over rankings L of  weight_L / (k + rank_L(d))      (ranks from 1)

A page absent from a list gets nothing from it. The constant ``k`` is the
knob: small k lets the very top of each list dominate, large k flattens the
ranks so that pages found by *both* legs win. 60 is the paper's value and
Elasticsearch's default (``rank_constant``); Qdrant and Chroma count ranks from
0, so their k is off by one from ours.

The alternative a learner can compare, ``convex``: rescale each leg's scores
to [0, 1] and mix them, alpha × keyword + (1 − alpha) × vector. It uses the
scores' sizes, which RRF throws away — better when the scores are meaningful,
worse when one leg's scale drifts.

Cost: a few dictionary operations per page; the vector leg costs one query
encoding.
"""

from __future__ import annotations

from .evaluate import ranking_ids
from .vectors import Encoder, VectorCache, vector_ranking


def rrf(rankings: dict, *, k: float = 60, weights: dict | None = None, window: int | None = None) -> list[dict]:
    """Fuse named rankings (lists of ids or of results, best first).

    Each result: ``id``, ``score`` (fused), ``ranks`` (1-based rank in every
    list, ``None`` where absent) and ``terms`` (what each list contributed).
    ``window``: only the first ``window`` of each list take part.
    """
    if k < 1:
        raise ValueError(f"k must be 1 or more (ranks start at 1), not {k}")
    if window is not None and window < 1:
        raise ValueError(f"window must be 1 or more, not {window}")
    weights = weights or {}
    unknown = set(weights) - set(rankings)
    if unknown:
        raise ValueError(f"weights name rankings that are not given: {sorted(unknown)}")
    lists = {name: ranking_ids(r)[:window] if window else ranking_ids(r) for name, r in rankings.items()}
    for name, ids in lists.items():
        if len(set(ids)) != len(ids):
            raise ValueError(f"ranking {name!r} lists the same id twice")
    fused: dict[str, dict] = {}
    for name, ids in lists.items():
        for rank, doc_id in enumerate(ids, start=1):
            entry = fused.setdefault(doc_id, {"id": doc_id, "score": 0.0,
                                              "ranks": dict.fromkeys(lists), "terms": dict.fromkeys(lists, 0.0)})
            part = weights.get(name, 1.0) / (k + rank)
            entry["ranks"][name] = rank
            entry["terms"][name] = part
            entry["score"] += part
    # Ties are broken on the identifier, so two runs give the same order.
    return sorted(fused.values(), key=lambda r: (-r["score"], r["id"]))


def hybrid_search(query: str, documents: list[dict], keyword_ids, encoder: Encoder | None = None, *,
                  limit: int = 5, k: float = 60, cache: VectorCache | None = None) -> list[dict]:
    """Fuse what the keyword rung returned (``keyword_ids``, best first) with a vector ranking of ``documents``.

    Pages the keywords did not find are simply not in the keyword list: they
    can still come in through the vector leg.
    """
    if limit < 0:
        raise ValueError(f"limit must be 0 or more, not {limit}")
    if k < 1:
        raise ValueError(f"k must be 1 or more (ranks start at 1), not {k}")
    if not documents or limit == 0:
        return []
    vector = vector_ranking(query, documents, encoder, cache=cache)
    titles = {str(d["id"]): d.get("title", "") for d in documents}
    fused = rrf({"keyword": keyword_ids, "vector": vector}, k=k)
    for r in fused:
        r["title"] = titles.get(r["id"], "")
    return fused[:limit]


def _minmax(results) -> dict[str, float]:
    if not results:
        return {}
    scores = [r["score"] for r in results]
    low, high = min(scores), max(scores)
    # One result, or all equal: they are all "the best" of their leg.
    return {str(r["id"]): (r["score"] - low) / (high - low) if high > low else 1.0 for r in results}


def convex(keyword_results: list[dict], vector_results: list[dict], *, alpha: float = 0.5,
           limit: int | None = None) -> list[dict]:
    """alpha × (keyword score rescaled to [0, 1]) + (1 − alpha) × (vector score rescaled); absent = 0."""
    if not 0 <= alpha <= 1:
        raise ValueError(f"alpha must be between 0 and 1, not {alpha}")
    kw, vec = _minmax(keyword_results), _minmax(vector_results)
    titles = {str(r["id"]): r.get("title", "") for r in [*vector_results, *keyword_results]}
    out = [{"id": i, "title": titles[i], "score": alpha * kw.get(i, 0.0) + (1 - alpha) * vec.get(i, 0.0),
            "terms": {"keyword": alpha * kw.get(i, 0.0), "vector": (1 - alpha) * vec.get(i, 0.0)}}
           for i in set(kw) | set(vec)]
    out.sort(key=lambda r: (-r["score"], r["id"]))
    return out if limit is None else out[:limit]

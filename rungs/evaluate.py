"""The metrics, in one place: how good is a ranking, measured against graded judgments.

Conventions are trec_eval's: a page with grade > 0 is relevant; ranks start at
1; a question with no relevant page is skipped by every metric here (there is
nothing to find), and ``evaluate`` says how many were skipped; nDCG uses the
grades as gains (rel / log2(rank + 1)), the ideal ranking sorted by grade.

Cost: nothing worth measuring.
"""

from __future__ import annotations

import math

from .errors import BadArgument, check_int
from .handbook import duplicates


def ranking_ids(ranking) -> list[str]:
    """The ids of a ranking, best first, as text: a ranking is a list of hits (or dicts with an id) or of ids."""
    if isinstance(ranking, (str, bytes)):
        raise BadArgument("a ranking is a list of ids or hits, not a string")
    return [str(r) if isinstance(r, (str, int)) else str(r["id"]) for r in ranking]


def _ids(ranking, k=None) -> list[str]:
    """The first k ids of a ranking; a ranking that lists a page twice is refused (it would be counted twice)."""
    if k is not None:
        check_int(k, "k", low=1)
    ids = ranking_ids(ranking)
    dup = duplicates(ids)
    if dup:
        raise BadArgument(f"the ranking lists {dup[:3]} more than once: a page has one rank")
    return ids[:k]



def reciprocal_rank(ranking, relevant: dict, k: int | None = None) -> float:
    """1 / rank of the first relevant page (0 if none in the first k)."""
    for rank, doc_id in enumerate(_ids(ranking, k), start=1):
        if relevant.get(doc_id, 0) > 0:
            return 1.0 / rank
    return 0.0


def recall(ranking, relevant: dict, k: int) -> float:
    """Share of the relevant pages found in the first k."""
    wanted = {d for d, g in relevant.items() if g > 0}
    return len(wanted & set(_ids(ranking, k))) / len(wanted) if wanted else 0.0


def precision(ranking, relevant: dict, k: int) -> float:
    """Share of the first k that are relevant (the missing ranks count as misses, as trec_eval's P@k)."""
    return sum(1 for d in _ids(ranking, k) if relevant.get(d, 0) > 0) / k


def average_precision(ranking, relevant: dict, k: int | None = None) -> float:
    """Mean of the precision at each relevant page's rank, over all relevant pages."""
    wanted = {d for d, g in relevant.items() if g > 0}
    if not wanted:
        return 0.0
    found, total = 0, 0.0
    for rank, doc_id in enumerate(_ids(ranking, k), start=1):
        if doc_id in wanted:
            found += 1
            total += found / rank
    return total / len(wanted)


def ndcg(ranking, relevant: dict, k: int) -> float:
    """Discounted cumulative gain of the first k, divided by the best possible."""
    gain = sum(relevant.get(d, 0) / math.log2(rank + 1) for rank, d in enumerate(_ids(ranking, k), start=1))
    ideal = sorted((g for g in relevant.values() if g > 0), reverse=True)[:k]
    best = sum(g / math.log2(rank + 1) for rank, g in enumerate(ideal, start=1))
    return gain / best if best else 0.0


METRICS = {"MRR": lambda r, rel: reciprocal_rank(r, rel), "recall@5": lambda r, rel: recall(r, rel, 5),
           "nDCG@5": lambda r, rel: ndcg(r, rel, 5)}


def evaluate(run, questions: list[dict], metrics: dict | None = None) -> dict:
    """Average each metric over the questions that have a relevant page.

    ``run`` is a function from a question's text to a ranking, or a dict from
    question id to a ranking.
    """
    metrics = metrics or METRICS
    judged = [q for q in questions if any(g > 0 for g in q["relevant"].values())]
    totals = dict.fromkeys(metrics, 0.0)
    for q in judged:
        ranking = run[q["id"]] if isinstance(run, dict) else run(q["question"])
        for name, metric in metrics.items():
            totals[name] += metric(ranking, q["relevant"])
    out = {name: total / len(judged) if judged else 0.0 for name, total in totals.items()}
    out["questions"] = len(judged)
    out["skipped"] = len(questions) - len(judged)
    return out

"""Two systems on the same judged questions, side by side: what each question did, and whether the whole is luck.

What it is for: a table of means says that one system is a little ahead of
another; a reader needs to see *which* questions moved, where each system put
the first relevant page, by how much each question changed, and the paired
test's verdict on the lot. ``compare(a, b, questions)`` shows exactly that:
one line per question that moved (the largest moves first, ties by id), then
the one-row table of ``metrics.comparison_table`` for the paired randomization
test and bootstrap interval of ``metrics.paired_test`` — the collection's one
paired test, not a second. Taught in the primer (notebook 01a, section 5) and in
the tuning lab (notebook 06, section 4).

A system is what ``metrics.evaluate`` takes: a function from a question's text
to a ranking, or a dict from question id to a ranking.

Cost: each system ranks every judged question once (nothing, given a dict of
rankings), then the paired test's sign flips.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.display import Table, cut_text
from ..core.errors import BadArgument, check_int
from ..core.retrieval import ranking_ids
from . import metrics


@dataclass(frozen=True)
class Comparison:
    """What ``compare`` found: each judged question's two values, the paired test, and the table a reader sees."""

    labels: tuple
    metric: str
    per_question: list   # one dict per judged question: id, question, a, b, diff, and each side's first relevant page
    test: dict           # metrics.paired_test(a, b)
    table: Table

    def __repr__(self) -> str:
        return str(self.table)

    def moved(self) -> list[dict]:
        """The questions whose value changed, the largest change first (ties by id)."""
        return [r for r in self.per_question if r["diff"]]


def _first_relevant(ranking, relevant: dict) -> tuple[int | None, str | None]:
    """The rank (from 1) and id of the first page graded above 0, or (None, None) if the ranking holds none."""
    for rank, doc_id in enumerate(ranking_ids(ranking), start=1):
        if relevant.get(doc_id, 0) > 0:
            return rank, doc_id
    return None, None


def _where(rank, doc_id, width: int = 28) -> str:
    return f"rank {rank:<2} {cut_text(doc_id, width - 8)}" if rank is not None else "not found"


def compare(a, b, questions: list[dict], *, metric: str = "MRR", labels: tuple = ("a", "b"), limit: int = 10,
            trials: int = 10_000) -> Comparison:
    """System ``b`` against system ``a`` on the judged ``questions``, question by question, then the paired test.

    ``metric``: a name of ``metrics.METRICS``. ``limit``: how many moved questions are listed (the
    largest moves; the rest are counted). The questions no page answers are skipped, as every metric does.
    """
    if metric not in metrics.METRICS:
        raise BadArgument(f"metric must be one of {list(metrics.METRICS)}, not {metric!r}")
    if not (isinstance(labels, (tuple, list)) and len(labels) == 2 and all(isinstance(x, str) and x for x in labels)):
        raise BadArgument(f"labels must be two names, one for each system, not {labels!r}")
    check_int(limit, "limit", low=0, high=10_000)
    judged = [q for q in metrics.check_questions(questions) if any(g > 0 for g in q["relevant"].values())]
    # Each system ranks each question once: the metric and the table read the same rankings.
    ranked = [{q["id"]: metrics.ranking_of(run, q) for q in judged} for run in (a, b)]
    values = [metrics.per_question(r, judged, metric) for r in ranked]
    test = metrics.paired_test(values[0], values[1], trials=trials)
    rows = []
    for q in judged:
        qid = q["id"]
        rows.append({"id": qid, "question": q["question"], "a": values[0][qid], "b": values[1][qid],
                     "diff": values[1][qid] - values[0][qid],
                     "first_a": _first_relevant(ranked[0][qid], q["relevant"]),
                     "first_b": _first_relevant(ranked[1][qid], q["relevant"])})
    rows.sort(key=lambda r: (-abs(r["diff"]), r["id"]))
    return Comparison(tuple(labels), metric, rows, test, _table(rows, test, tuple(labels), metric, limit))


def _table(rows: list[dict], test: dict, labels: tuple, metric: str, limit: int) -> Table:
    moved = [r for r in rows if r["diff"]]
    a, b = (cut_text(x, 28) for x in labels)
    lines = [f"{metric} on {len(rows)} judged questions, « {labels[1]} » against « {labels[0]} », question by "
             f"question ({len(moved)} moved; each side: the first relevant page, then the question's {metric}):",
             f"{'question':<9} {a:<28} {b:<28} {'a':>6} {'b':>6} {'b − a':>7}"]
    for r in moved[:limit]:
        lines.append(f"{r['id']:<9} {_where(*r['first_a']):<28} {_where(*r['first_b']):<28} "
                     f"{r['a']:>6.3f} {r['b']:>6.3f} {r['diff']:>+7.3f}  {cut_text(r['question'], 30)}")
    if len(moved) > limit:
        lines.append(f"… and {len(moved) - limit} more moved (Comparison.moved() lists them all)")
    lines.append(f"{test['equal']} questions equal, {test['improved']} improved, {test['degraded']} degraded. "
                 "The paired test over all of them:")
    # One comparison: the table's p Holm is its p; the verdict and the interval's note are comparison_table's.
    base = {"system": labels[0], "mean": test["mean_a"], "diff": None, "ci95": None, "p": None, "p_holm": None,
            "improved": None, "degraded": None, "n": test["n"]}
    other = {"system": labels[1], "mean": test["mean_b"], "diff": test["diff"], "ci95": test["ci95"],
             "p": test["p"], "p_holm": test["p"], "improved": test["improved"], "degraded": test["degraded"],
             "n": test["n"]}
    table = metrics.comparison_table([base, other], metric=metric).split("\n")
    for line in table:
        if line.startswith("The interval and the verdict disagree"):
            # One comparison: the interval is not « uncorrected », it is a bootstrap, narrow on few questions.
            line = ("The interval and the verdict disagree: the interval is a bootstrap of the mean difference, a "
                    "little narrow on few questions that move; the verdict is the sign-flip test's.")
        if not line.startswith("p Holm:"):
            lines.append(line)
    lines.append("(one comparison: nothing to correct for, so p Holm is p)")
    return Table("\n".join(lines))

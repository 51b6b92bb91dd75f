"""The metrics, in one place: how good is a ranking, measured against graded judgments.

Conventions are trec_eval's: a page with grade > 0 is relevant; ranks start at
1; a question with no relevant page is skipped by every metric here (there is
nothing to find), and ``evaluate`` says how many were skipped; nDCG uses the
grades as gains (rel / log2(rank + 1)), the ideal ranking sorted by grade.

Each metric is named for what it computes (``METRICS``):

- ``MRR``: 1 / the rank of the first relevant page (graded 1 or 2), averaged;
- ``recall@5``: the share of *all* the relevant pages (those that answer and
  those that help) found in the first 5 — not « is a page that answers among
  the first five? »;
- ``nDCG@5``: the grades of the first 5, discounted by rank, over the best possible;
- ``answer@4``: is a page that answers (grade 2) among the first 4 — the
  passages N3 sends (``rag.MAX_PASSAGES``)? Success at the number sent: what
  the answer rungs consume.

``judged_share`` says how much of a top k was judged at all: an unjudged page
counts as not relevant, so a low share is where a metric could be wrong.

``wilson`` is a share's 95 % interval (N3's answers, the abstention tables).

Cost: nothing worth measuring.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping

from ..core.documents import duplicates
from ..core.errors import BadArgument, short_repr, check_choice, check_int, check_number
from ..core.retrieval import one_id, ranking_ids
from ..rag import MAX_PASSAGES


def check_relevant(relevant) -> dict[str, float]:
    """Judgments: page id → grade, a finite number ≥ 0 (0: judged not relevant). Ids compared as text."""
    if not isinstance(relevant, Mapping):
        raise BadArgument(f"relevant must be a dict of page id → grade, not {type(relevant).__name__}")
    out = {}
    for doc_id, grade in relevant.items():
        # A negative or infinite grade would push nDCG outside [0, 1]; True is not a grade.
        out[one_id(doc_id, 0)] = check_number(grade, f"relevant[{doc_id!r}]", low=0.0, high=1e6)
    if len(out) != len(relevant):
        raise BadArgument("relevant names one page twice (3 and '3' are the same id)")
    return out


def _ids(ranking, at=None) -> list[str]:
    """The first ``at`` ids of a ranking; a ranking that lists a page twice is refused (it would be counted twice)."""
    if at is not None:
        check_int(at, "at", low=1)
    ids = ranking_ids(ranking)
    dup = duplicates(ids)
    if dup:
        raise BadArgument(f"the ranking lists {dup[:3]} more than once: a page has one rank")
    return ids[:at]



def reciprocal_rank(ranking, relevant: dict, at: int | None = None) -> float:
    """1 / rank of the first relevant page (0 if none in the first ``at``)."""
    relevant = check_relevant(relevant)
    for rank, doc_id in enumerate(_ids(ranking, at), start=1):
        if relevant.get(doc_id, 0) > 0:
            return 1.0 / rank
    return 0.0


def recall(ranking, relevant: dict, at: int) -> float:
    """Share of the relevant pages found in the first ``at``."""
    relevant = check_relevant(relevant)
    wanted = {d for d, g in relevant.items() if g > 0}
    return len(wanted & set(_ids(ranking, at))) / len(wanted) if wanted else 0.0


def precision(ranking, relevant: dict, at: int) -> float:
    """Share of the first ``at`` that are relevant (the missing ranks count as misses, as trec_eval's P@k)."""
    at = check_int(at, "at", low=1)  # P@k divides by k: there is no « all » here
    relevant = check_relevant(relevant)
    return sum(1 for d in _ids(ranking, at) if relevant.get(d, 0) > 0) / at


def average_precision(ranking, relevant: dict, at: int | None = None) -> float:
    """Mean of the precision at each relevant page's rank, over all relevant pages."""
    relevant = check_relevant(relevant)
    wanted = {d for d, g in relevant.items() if g > 0}
    if not wanted:
        return 0.0
    found, total = 0, 0.0
    for rank, doc_id in enumerate(_ids(ranking, at), start=1):
        if doc_id in wanted:
            found += 1
            total += found / rank
    return total / len(wanted)


def ndcg(ranking, relevant: dict, at: int) -> float:
    """Discounted cumulative gain of the first ``at``, divided by the best possible."""
    relevant = check_relevant(relevant)
    gain = sum(relevant.get(d, 0) / math.log2(rank + 1) for rank, d in enumerate(_ids(ranking, at), start=1))
    ideal = sorted((g for g in relevant.values() if g > 0), reverse=True)[:at]
    best = sum(g / math.log2(rank + 1) for rank, g in enumerate(ideal, start=1))
    return gain / best if best else 0.0


def success(ranking, relevant: dict, at: int, *, grade: float = 1) -> float:
    """1 if a page graded at least ``grade`` is among the first ``at``, else 0 (success@k; ``grade=2``: a page that answers)."""
    at = check_int(at, "at", low=1)
    grade = check_number(grade, "grade", low=0.0, low_open=True)
    relevant = check_relevant(relevant)
    return float(any(relevant.get(d, 0) >= grade for d in _ids(ranking, at)))


def judged(ranking, judgments: dict, at: int) -> float:
    """Share of the first ``at`` that a judge read (any grade, 0 included): judged@k. The missing ranks count as judged."""
    at = check_int(at, "at", low=1)
    judgments = check_relevant(judgments)
    ids = _ids(ranking, at)
    return (sum(d in judgments for d in ids) + at - len(ids)) / at


#: The metrics every sweep reports, each named for what it computes (the module's docstring says it in words).
METRICS = {"MRR": lambda r, rel: reciprocal_rank(r, rel), "recall@5": lambda r, rel: recall(r, rel, 5),
           "nDCG@5": lambda r, rel: ndcg(r, rel, 5),
           f"answer@{MAX_PASSAGES}": lambda r, rel: success(r, rel, MAX_PASSAGES, grade=2)}


def judged_share(run, questions: list[dict], at: int = 5) -> float:
    """judged@k averaged over the questions with a relevant page: how much of what a metric reads was judged."""
    return mean(judged(ranking_of(run, q), q.get("judged", q["relevant"]), at)
                for q in check_questions(questions) if any(g > 0 for g in q["relevant"].values()))


def mean(values) -> float:
    """The mean of finite numbers, finite too (0.0 for none): the sum over their number, unless that sum
    passes the largest float (two scores of 1.7e308 add up to infinity) — then each is divided first."""
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise BadArgument(f"values must be a list of numbers, not {type(values).__name__} {short_repr(values)}")
    values = [check_number(v, "values[…]") for v in values]
    if not values:
        return 0.0
    total = sum(values)
    return total / len(values) if math.isfinite(total) else math.fsum(v / len(values) for v in values)


def evaluate(run, questions: list[dict], metrics: dict | None = None) -> dict:
    """Average each metric over the questions that have a relevant page.

    ``run`` is a function from a question's text to a ranking, or a dict from
    question id to a ranking.
    """
    metrics = _check_metrics(metrics or METRICS)
    questions = check_questions(questions)  # a list from here on: a generator is read once
    judged = [q for q in questions if any(g > 0 for g in q["relevant"].values())]
    values = {name: [] for name in metrics}
    for q in judged:
        ranking = ranking_of(run, q)
        for name, metric in metrics.items():
            values[name].append(_value(metric(ranking, q["relevant"]), name, q))
    out = {name: mean(v) for name, v in values.items()}
    out["questions"] = len(judged)
    out["skipped"] = len(questions) - len(judged)
    return out


def _check_metrics(metrics) -> dict:
    if not isinstance(metrics, Mapping) or not all(isinstance(n, str) and callable(m) for n, m in metrics.items()):
        raise BadArgument("metrics must be a dict of name → function(ranking, relevant), like evaluate.METRICS")
    return dict(metrics)


def check_questions(questions) -> list[dict]:
    """Questions as load_questions returns them: each a dict with an 'id', a 'question' and 'relevant'."""
    if isinstance(questions, (str, bytes, Mapping)) or not isinstance(questions, Iterable):
        raise BadArgument(f"questions must be a list of questions, not {type(questions).__name__}")
    questions = list(questions)
    for i, q in enumerate(questions):
        if not isinstance(q, Mapping) or not isinstance(q.get("id"), str) or not isinstance(q.get("question"), str):
            raise BadArgument(f"questions[{i}] must be a dict with a text 'id' and 'question' (see load_questions)")
        check_relevant(q.get("relevant"))
    return questions


def ranking_of(run, q):
    """What ``run`` ranked for question ``q``: a dict looked up by id, or a function called on the text."""
    if isinstance(run, Mapping):
        if q["id"] not in run:
            raise BadArgument(f"run has no ranking for question {q['id']!r}")
        return run[q["id"]]
    if not callable(run):
        raise BadArgument(f"run must be a function of the question's text or a dict of rankings, "
                          f"not {type(run).__name__}")
    return run(q["question"])


def _value(value, name, q) -> float:
    # A metric that returns NaN or text would poison the mean without a word.
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise BadArgument(f"metric {name!r} returned {short_repr(value)} for question {q['id']!r}: "
                          "a metric returns a finite number")
    return float(value)


# ---------------------------------------------------------------- is a difference real?

def per_question(run, questions: list[dict], metric=None) -> dict[str, float]:
    """One metric's value for every judged question (question id → value): what a paired test compares.

    ``metric``: a function (ranking, relevant) → value, or a name of ``METRICS`` (default ``"MRR"``).
    """
    if metric is None or isinstance(metric, str):
        metric = METRICS[check_choice(metric or "MRR", "metric", METRICS)]
    elif not callable(metric):
        raise BadArgument(f"metric must be a name of METRICS or a function, not {type(metric).__name__}")
    out = {}
    for q in check_questions(questions):
        if any(g > 0 for g in q["relevant"].values()):
            out[q["id"]] = _value(metric(ranking_of(run, q), q["relevant"]), "metric", q)
    return out


def paired_test(a: dict[str, float], b: dict[str, float], *, trials: int = 10_000, seed: int = 0) -> dict:
    """Is system b better than system a on the same questions, or is the difference luck?

    Two tools a reader can check by hand, both on the per-question differences b − a:

    - a **sign-flip randomization test** (Fisher's, as in ranx and Smucker et
      al., CIKM 2007): if the two systems were interchangeable, each
      difference would be as likely positive as negative; flip the signs at
      random ``trials`` times and count how often the mean difference is at
      least as far from 0 as the one observed. Two-sided p-value.
    - a **95 % bootstrap interval** of the mean difference (questions drawn
      with replacement): how large the difference may be. It answers another
      question than the test, by another approximation, so near the edge
      the two can disagree (``comparison_table`` says so when they do); the
      verdict is the test's.

    Also: how many questions improved, degraded, stayed equal. Deterministic (``seed``).
    """
    import numpy as np

    for name, scores in (("a", a), ("b", b)):
        if not isinstance(scores, Mapping):
            raise BadArgument(f"{name} must be a dict of question id → score (see per_question)")
    # every score as its float: a Decimal is a number too, and would not mix with numpy's floats below
    a, b = ({q: check_number(v, f"{name}[{q!r}]") for q, v in scores.items()} for name, scores in (("a", a), ("b", b)))
    common = sorted(set(a) & set(b))
    if set(a) != set(b):
        raise BadArgument("the two systems must be scored on the same questions")
    check_int(trials, "trials", low=100, high=1_000_000)
    check_int(seed, "seed")
    # Scores over 1 are divided by the largest first, and the answer scaled back: a difference of two
    # finite scores is then finite (1.7e308 − 0 is; its square in the deviation is not). Scores in [0, 1]
    # are divided by 1: the same numbers as ever, bit for bit.
    scale = max([1.0, *(abs(float(v)) for v in (*a.values(), *b.values()))])
    diff = np.array([b[q] / scale - a[q] / scale for q in common], dtype=np.float64)
    n = len(diff)
    out = {"n": n, "mean_a": float(np.mean([a[q] / scale for q in common])) * scale if n else 0.0,
           "mean_b": float(np.mean([b[q] / scale for q in common])) * scale if n else 0.0,
           "diff": float(diff.mean()) * scale if n else 0.0,
           "improved": int((diff > 1e-12).sum()), "degraded": int((diff < -1e-12).sum())}
    out["equal"] = n - out["improved"] - out["degraded"]
    if n == 0 or not diff.any():
        return {**out, "p": 1.0, "ci95": (0.0, 0.0), "sd": 0.0}
    rng = np.random.default_rng(seed)
    signs = rng.choice([-1.0, 1.0], size=(trials, n))
    flipped = np.abs((signs * diff).mean(axis=1))
    # +1 on both sides: the observed assignment is one of the possible ones (never p = 0).
    out["p"] = float((np.sum(flipped >= abs(diff.mean()) - 1e-12) + 1) / (trials + 1))
    boot = diff[rng.integers(0, n, size=(trials, n))].mean(axis=1)
    out["ci95"] = (float(np.quantile(boot, 0.025)) * scale, float(np.quantile(boot, 0.975)) * scale)
    out["sd"] = float(diff.std(ddof=1)) * scale if n > 1 else 0.0
    if not all(map(math.isfinite, (out["diff"], out["sd"], *out["ci95"]))):
        raise BadArgument(f"b − a is too large for a float (the scores reach {scale:.3g}): a paired test "
                          "compares scores such as a metric gives, not numbers near ±1.8e308")
    return out


def p_text(p: float) -> str:
    """A p-value as the tables print it: three decimals, and « < 0.001 » where that would round to 0.000."""
    p = check_number(p, "p", low=0.0, high=1.0)
    return "< 0.001" if p < 0.0005 else f"{p:.3f}"


def holm_across(tables: dict) -> dict:
    """Holm over every comparison of several ``compare`` tables read together (one cell, several metrics).

    ``compare`` corrects for the systems of one table; a cell that prints three metrics makes three
    times as many comparisons, and its verdicts must be corrected for all of them. Returns the same
    tables with ``p_holm`` recomputed over the whole family and ``family`` (its size) on each row.
    """
    if not isinstance(tables, Mapping):
        raise BadArgument("tables must be a dict of name → rows (what compare returns)")
    tables = {name: _check_rows(rows) for name, rows in tables.items()}
    pvalues = {(name, i): r["p"] for name, rows in tables.items() for i, r in enumerate(rows) if r.get("p") is not None}
    adjusted = holm(pvalues) if pvalues else {}
    out = {}
    for name, rows in tables.items():
        out[name] = [dict(r, p_holm=adjusted[name, i], family=len(pvalues)) if (name, i) in adjusted else dict(r)
                     for i, r in enumerate(rows)]
    return out


def holm(pvalues: dict[str, float]) -> dict[str, float]:
    """Holm–Bonferroni: p-values adjusted for testing several systems against one baseline."""
    if not isinstance(pvalues, Mapping):
        raise BadArgument("pvalues must be a dict of system → p-value")
    pvalues = {name: check_number(p, f"pvalues[{name!r}]", low=0.0, high=1.0) for name, p in pvalues.items()}
    order = sorted(pvalues, key=pvalues.get)
    adjusted, running = {}, 0.0
    for i, name in enumerate(order):
        running = max(running, min(1.0, (len(order) - i) * pvalues[name]))
        adjusted[name] = running
    return adjusted


def questions_needed(diff: float, sd: float, *, alpha: float = 0.05, power: float = 0.8) -> int | None:
    """About how many questions a paired test needs to detect a mean difference ``diff`` (normal approximation).

    n ≈ ((z₁₋α/₂ + z_power) · sd / diff)²; None when the difference is 0.
    """
    from statistics import NormalDist

    # Strictly between 0 and 1, with room for a float: 1 − 1e-300 is 1, and no test is always right.
    alpha = check_number(alpha, "alpha", low=1e-10, high=1 - 1e-10)
    power = check_number(power, "power", low=1e-10, high=1 - 1e-10)
    for name, value in (("diff", diff), ("sd", sd)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise BadArgument(f"{name} must be a number, not {type(value).__name__}")
    try:
        diff, sd = float(diff), abs(float(sd))
    except OverflowError:  # an integer of hundreds of digits: no test needs more than 2 questions for it
        return 2
    if not diff or not math.isfinite(diff) or not math.isfinite(sd):
        return None
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    ratio = z * sd / abs(diff)
    n = ratio * ratio  # not ** 2: a float power that overflows raises, a product is infinite
    # A difference so small that no number of questions would show it: the same answer as a difference of 0.
    return max(2, math.ceil(n)) if math.isfinite(n) else None


def compare(runs: dict, questions: list[dict], *, baseline: str, metric=None, trials: int = 10_000) -> list[dict]:
    """Every system against a baseline, on the same questions: means, the difference, its 95 % interval,
    the paired test's p-value (and Holm's adjustment for the number of systems), improved / degraded.

    Like PyTerrier's ``pt.Experiment``: a table of means alone invites the reader to over-read a 0.01.
    """
    if not isinstance(runs, Mapping):
        raise BadArgument("runs must be a dict of system name → run (a function or a dict of rankings)")
    if not isinstance(baseline, str) or baseline not in runs:
        raise BadArgument(f"baseline {baseline!r} is not one of the runs {list(runs)}")
    scores = {name: per_question(run, questions, metric) for name, run in runs.items()}
    tests = {name: paired_test(scores[baseline], s, trials=trials) for name, s in scores.items() if name != baseline}
    adjusted = holm({name: t["p"] for name, t in tests.items()}) if tests else {}
    base = scores[baseline]
    rows = [{"system": baseline, "mean": mean(base.values()), "diff": None,
             "ci95": None, "p": None, "p_holm": None, "improved": None, "degraded": None, "n": len(base)}]
    for name, t in tests.items():
        rows.append({"system": name, "mean": t["mean_b"], "diff": t["diff"], "ci95": t["ci95"], "p": t["p"],
                     "p_holm": adjusted[name], "improved": t["improved"], "degraded": t["degraded"], "n": t["n"]})
    return rows


def comparison_table(rows: list[dict], *, metric: str = "MRR", alpha: float = 0.05) -> str:
    """``compare``'s rows as fixed-width text; a difference is called significant only when Holm's p < alpha.

    Below the rows, one sentence wherever a row's 95 % interval and its verdict disagree, saying why.
    """
    from ..core.display import Table

    rows = _check_rows(rows)
    alpha = check_number(alpha, "alpha", low=0.0, high=1.0)
    family = max((r.get("family") or 0 for r in rows), default=0) or sum(1 for r in rows if r["diff"] is not None)
    lines = [f"{'system':<28} {metric:>8} {'diff':>7}  {'95% interval':<17} {'p':>7} {'p Holm':>7} {'+/-':>7}  verdict"]
    split = []
    for r in rows:
        if r["diff"] is None:
            lines.append(f"{r['system'][:28]:<28} {r['mean']:>8.3f} {'':>7}  {'(baseline)':<17} {'':>7} {'':>7} {'':>7}")
            continue
        low, high = r["ci95"]
        significant = r["p_holm"] < alpha
        verdict = ("better" if r["diff"] > 0 else "worse") if significant else "no measurable difference"
        if (low > 0 or high < 0) != significant:
            split.append(r["system"])
        lines.append(f"{r['system'][:28]:<28} {r['mean']:>8.3f} {r['diff']:>+7.3f}  [{low:+.3f}, {high:+.3f}]  "
                     f"{p_text(r['p']):>7} {p_text(r['p_holm']):>7} {r['improved']:>3}/{r['degraded']:<3}  {verdict}")
    lines.append(f"p Holm: corrected for the {family} comparison{'s' if family != 1 else ''} read together.")
    if split:
        lines.append(f"The interval and the verdict disagree for {', '.join(split)}: the interval is a bootstrap of "
                     f"the mean difference, uncorrected for the {family} comparisons and a little narrow on few "
                     "questions; the verdict is the sign-flip test's, corrected.")
    return Table("\n".join(lines))


def _check_rows(rows) -> list[dict]:
    """What ``compare`` (or ``holm_across``) returned: a system, its mean, and, except for the baseline, its test."""
    if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Iterable):
        raise BadArgument(f"rows must be the list compare returns, not {type(rows).__name__} {short_repr(rows)}")
    rows = list(rows)
    tested = {"ci95": (tuple, list), "p": numbers.Real, "p_holm": numbers.Real, "improved": int, "degraded": int}
    for i, r in enumerate(rows):
        if not isinstance(r, Mapping) or not isinstance(r.get("system"), str) \
                or not _real(r.get("mean")) or not (r.get("diff") is None or _real(r["diff"])):
            raise BadArgument(f"rows[{i}] must be a row of compare (a 'system', its 'mean', its 'diff'), not {short_repr(r)}")
        missing = [k for k, kind in tested.items() if r["diff"] is not None and not isinstance(r.get(k), kind)]
        if missing or (r["diff"] is not None and not (len(r["ci95"]) == 2 and all(map(_real, r["ci95"])))):
            raise BadArgument(f"rows[{i}] ({r['system']!r}) lacks its test ({', '.join(missing) or 'ci95'}): "
                              "pass what compare returns")
    return rows


def _real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def wilson(k: int, n: int) -> tuple[float, float]:
    """The 95 % Wilson interval of a share ``k`` of ``n`` (right where a share is near 0 or 1, unlike ± 2 sd)."""
    n = check_int(n, "n", low=1)
    k = check_int(k, "k", low=0, high=n)
    z, p = 1.959964, k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def kappa(a, b) -> float:
    """Cohen's κ: how far two readers' verdicts (any labels, one per item) agree beyond what chance would give."""
    a, b = _verdicts(a), _verdicts(b)
    if not a or len(a) != len(b):
        raise BadArgument(f"kappa needs two equally long, non-empty lists of verdicts, not {len(a)} and {len(b)}")
    n, labels = len(a), set(a) | set(b)
    observed = sum(x == y for x, y in zip(a, b)) / n
    by_chance = sum(a.count(label) * b.count(label) for label in labels) / n ** 2
    return 1.0 if by_chance == 1 else (observed - by_chance) / (1 - by_chance)


def _verdicts(values) -> list:
    """A list of verdicts, each a label (a word, a number, ``True``/``False``, ``None``), or a named refusal."""
    if not isinstance(values, (list, tuple)):
        raise BadArgument(f"kappa's verdicts are a list of labels, one per item, not {type(values).__name__}")
    odd = [v for v in values if not isinstance(v, (str, int, float, bool, type(None)))]
    if odd:
        raise BadArgument(f"kappa's verdicts are labels (words, numbers), not {type(odd[0]).__name__}")
    return list(values)

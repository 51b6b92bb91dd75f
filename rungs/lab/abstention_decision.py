"""The stored decision runs read without a model: where an answer is lost, readers × decisions, risk–coverage,
and the coverage knob.

What it is for: notebook 03 (« Deciding apart from reading ») and benchmarks/README.md
read where an answer is lost, stage by stage (``benchmarks/bench_loss.py``,
``results/loss.json``: what the passages and the sentences shown hold, what the
copy and the model made of them), and what ``benchmarks/bench_decision.py``
measured (``benchmarks/results/decision.json``):
which decision the protocol chose on the deciding half, how each decision reads
on the reporting half and the folder (paired tests against pointing-lead and
the copy, Holm), each decision's **risk–coverage** curve (accuracy among the
questions answered, against the share answered) beside the model's own
« aucune », and, for any coverage a learner picks, what the shipped decision
would have done on the reporting half — from stored probabilities, no call.

Cost: reading one JSON file of a few hundred kB.
"""

from __future__ import annotations

import functools

import numpy as np

from ..core.display import Table
from ..core.errors import BadArgument, RungsError, check_number, short_repr
from ..grounding.cut import passes
from ..grounding.deciding import check_coverage
from ..grounding.showing import share_said
from ..rag.decision import Shipped
from . import stored
from .abstention_summary import NoSummary

#: The decisions bench_decision.py measures, in the order they are shown.
DECISIONS = ("gate", "signals (no model)", "gate + signals")
PARTS = ("choice", "auc", "report", "deciding", "folder", "curves", "rows", "shipped", "goal")


def load(path=None, *, name: str = "decision.json", parts=PARTS, bench: str = "bench_decision.py") -> dict:
    """``benchmarks/results/decision.json`` (or ``path``), its parts present: a ``NoSummary`` names what is not."""
    data = stored.read_json(path, name=name, what="a stored study of the answer half",
                            remake=f"benchmarks/{bench} (no model)", error=NoSummary)
    missing = [p for p in parts if not isinstance(data, dict) or p not in data]
    if missing:
        raise NoSummary(f"the study {name} has no {', '.join(missing)}: run benchmarks/{bench}")
    return data


def _reads_the_study(fn):
    """A view of the study: handed a dict ``load()`` did not make (a key missing, a part of the wrong type), it
    refuses by name (``NoSummary``) instead of a raw KeyError or TypeError from deep in a table."""
    @functools.wraps(fn)
    def read(data, *args, **kwargs):
        try:
            return fn(data, *args, **kwargs)
        except RungsError:
            raise
        except KeyError as err:  # the key is the one thing a learner can look for
            raise NoSummary(f"{fn.__name__}: the study has no {short_repr(err.args[0] if err.args else None)}: "
                            f"pass what {_loader(fn)} returns") from None
        except (TypeError, ValueError, IndexError, AttributeError) as err:
            raise NoSummary(f"{fn.__name__}: a part of the study is not what {_loader(fn)} writes "
                            f"({type(err).__name__}: {short_repr(str(err))}): pass what it returns") from None
    return read


def _loader(fn) -> str:
    return "abstention_decision.load_loss()" if fn.__name__ == "loss_table" else "abstention_decision.load()"


def load_loss(path=None) -> dict:
    """``benchmarks/results/loss.json`` (or ``path``): where an answer is lost, half by half."""
    return load(path, name="loss.json", parts=("decide", "report"), bench="bench_loss.py")


@_reads_the_study
def loss_table(loss: dict) -> Table:
    """Stage by stage, both halves: the share of the answerable questions still held (or answered right)."""
    labels = list(loss["report"]["stages"])
    head = f"{'of the answerable questions, the share that':<56} {'deciding':>9} {'reporting':>10}"
    out = [head, f"{'(answerable questions)':<56} {loss['decide']['answerable']:>9} {loss['report']['answerable']:>10}"]
    for label in labels:
        cells = [loss[h]["stages"].get(label, {}).get("share") for h in ("decide", "report")]
        out.append(f"{label:<56} {_or(cells[0], 9)} {_or(cells[1], 10)}")
    return Table("\n".join(out))


@_reads_the_study
def choice_lines(data: dict) -> list[str]:
    """What the protocol chose on the deciding half, and its cross-validated gain over the floor."""
    best, cv = data["choice"]["best"], data["choice"]["cv"]
    kept = "the floor kept" if data["choice"]["kept_default"] else "it beats the floor"
    return [f"chosen on the deciding half: « {best['decision']} » at coverage {best['coverage']:g} ({kept})",
            f"  cross-validated gain over the copy answering everything: {cv['gain']:+.3f} "
            f"[{cv['ci95'][0]:+.3f}, {cv['ci95'][1]:+.3f}], p {cv['p']:.3f}"]


@_reads_the_study
def readers_table(data: dict) -> Table:
    """Each reader × decision: share right on the deciding half (cross-fitted) and the reporting half (once),
    the share answered and the AUC there, paired tests against pointing-lead and the copy; then the folder."""
    sweep = {(r["decision"], r["coverage"]): r["right"] for r in data["choice"]["sweep"]}
    rows = [("pointing-lead (its own « aucune »)", data["deciding"]["pointing-lead"],
             data["report"]["pointing-lead"]["right"], None, None, "", ""),
            ("copy, no decision (the floor)", data["deciding"]["copy"], data["report"]["copy"]["right"], 1.0, None,
             "", "")]
    for label, r in data["report"].items():
        if "decision" in r:
            rows.append((f"copy + {label}", sweep.get((r["decision"], r["coverage"])), r["right"], r["answered"],
                         data["auc"][r["decision"]]["report"], _test(r["vs pointing-lead"]), _test(r["vs copy"])))
    head = f"reporting half, {len(data['rows'])} questions"
    out = [f"{'share right':<36} {'deciding':>8} {'reporting':>9} {'answered':>9} {'AUC':>6}  "
           f"{'vs pointing-lead':<24} vs the copy", f"{'':<36} {'(cv)':>8} {'':>9} {'(the reporting half)':>26}"]
    for name, decide, report, answered, auc, vs_model, vs_copy in rows:
        out.append(f"{name:<36} {_or(decide, 8)} {report:>9.3f} {_or(answered, 9)} {_or(auc, 6)}  {vs_model:<24} "
                   f"{vs_copy}".rstrip())
    folder = data["folder"]
    out.append(f"\n({head}; paired tests on it, Holm over the two.) benchmarks/folder, {folder['questions']} "
               "questions, the handbook's fit at coverage 0.8:")
    out.append(f"  pointing-lead {folder['pointing-lead']:.3f} · copy {folder['copy']:.3f} · " + " · ".join(
        f"{d} {folder[d]['right at 0.8']:.3f} (AUC {folder[d]['auc']:.3f})" for d in DECISIONS))
    return Table("\n".join(out))


def _test(t: dict) -> str:
    return f"{t['diff']:+.3f}, p Holm {t['p_holm']:.3f}"


def _or(value, width: int) -> str:
    return f"{value:>{width}.3f}" if value is not None else f"{'—':>{width}}"


@_reads_the_study
def risk_coverage_table(data: dict, half: str = "report") -> Table:
    """Each decision's accuracy among the answered at a few coverages, and the area under its curve."""
    curves = _curves(data, half)
    marks = (0.2, 0.4, 0.6, 0.8, 1.0)
    out = [f"{'accuracy among the answered, ' + _half(half):<44}" + "".join(f"{m:>7.0%}" for m in marks) + "   area"]
    for name in DECISIONS:
        points = np.array(curves[name]["points"])
        at = [points[min(len(points) - 1, max(0, int(np.ceil(m * len(points))) - 1)), 1] for m in marks]
        out.append(f"{name:<44}" + "".join(f"{a:>7.3f}" for a in at) + f" {curves[name]['area']:>6.3f}")
    own = curves["pointing-lead's own « aucune »"]
    out.append(f"pointing-lead's own « aucune »: answers {own['coverage']:.0%}, right among them {own['accuracy']:.3f}")
    return Table("\n".join(out))


def _half(half: str) -> str:
    if half not in ("decide", "report"):
        raise BadArgument(f"half must be 'decide' or 'report', not {half!r}")
    return "deciding half (cross-fitted)" if half == "decide" else "reporting half"


def _curves(data: dict, half: str) -> dict:
    _half(half)
    return data["curves"][half]


def plot_risk_coverage(data: dict, half: str = "report", *, ax=None):
    """The curves of ``risk_coverage_table`` and the model's own point, on one axis."""
    import matplotlib.pyplot as plt  # only when a figure is drawn: the tables need no matplotlib

    lines, own = _drawn(data, half)  # the study read first, whole: a bad one is refused before any figure
    ax = ax or plt.subplots(figsize=(6.4, 4))[1]
    for name, points, area in lines:
        ax.plot(points[:, 0], points[:, 1], label=f"{name} (area {area:.3f})")
    ax.scatter([own[0]], [own[1]], color="black", zorder=3, label="pointing-lead's own « aucune »")
    ax.set_xlabel("share of the questions answered (coverage)")
    ax.set_ylabel("share right among the answered")
    ax.set_title(f"risk–coverage, {_half(half)}")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=8, loc="lower left")
    return ax


@_reads_the_study
def _drawn(data: dict, half: str):
    curves = _curves(data, half)
    lines = [(name, np.array(curves[name]["points"], dtype=float), float(curves[name]["area"])) for name in DECISIONS]
    for name, points, _ in lines:
        if points.ndim != 2 or points.shape[1] != 2:
            raise NoSummary(f"plot_risk_coverage: the study's curve « {name} » is not (coverage, accuracy) pairs: "
                            "pass what abstention_decision.load() returns")
    own = curves["pointing-lead's own « aucune »"]
    return lines, (float(own["coverage"]), float(own["accuracy"]))


@_reads_the_study
def at_coverage(data: dict, coverage: float) -> dict:
    """What the shipped decision does on the reporting half at ``coverage``, from stored probabilities: its
    threshold (read from the deciding half, as ``ask`` reads it), the share answered, right among them, right
    of all (a « je ne sais pas » is right on a question no page answers)."""
    coverage = check_coverage(coverage)
    try:
        shipped = Shipped(data["shipped"])
    except BadArgument as err:  # the study's copy of the decision, not an argument of the learner's
        raise NoSummary(f"at_coverage: the study has no 'shipped' decision it can read ({err}): pass what "
                        "abstention_decision.load() returns") from None
    cut, rows = shipped.threshold(coverage), _rows(data, shipped.name)
    shown = [passes(r["p"][shipped.name], cut) for r in rows]
    answered = [r for r, s in zip(rows, shown) if s]
    right = sum(r["right"] if s else not r["answerable"] for r, s in zip(rows, shown))
    return {"coverage": coverage, "threshold": cut, "answered": len(answered) / len(rows),
            "right_answered": sum(r["right"] for r in answered) / len(answered) if answered else None,
            "right": right / len(rows), "questions": len(rows)}


def _rows(data: dict, name: str) -> list[dict]:
    """The study's reporting rows, each with its P under ``name``, right and answerable; else one ``NoSummary``."""
    rows = data.get("rows") if isinstance(data, dict) else None
    if not isinstance(rows, list) or not rows:
        raise NoSummary("the study's rows are missing or empty: run benchmarks/bench_decision.py (no model)")
    for i, r in enumerate(rows):
        p = r.get("p") if isinstance(r, dict) else None
        if not (isinstance(p, dict) and name in p and {"right", "answerable"} <= set(r)):
            raise NoSummary(f"the study's rows[{i}] has no P under « {name} », right and answerable: run "
                            "benchmarks/bench_decision.py (no model)")
        check_number(p[name], f"the study's rows[{i}]['p'][{name!r}]")  # a NaN P is never shown: named instead
    return rows


@_reads_the_study
def coverage_line(data: dict, coverage: float) -> str:
    """``at_coverage`` as one line a slider prints."""
    c = at_coverage(data, coverage)
    among = "—" if c["right_answered"] is None else f"{c['right_answered']:.3f}"
    return (f"coverage {share_said(c['coverage'])} → threshold P(right) ≥ {c['threshold']:.3f}: answers {c['answered']:.0%} "
            f"of the {c['questions']} reporting questions, right among them {among}, right of all {c['right']:.3f}")


#: The issue's measures, in the order the goal lists them.
GOAL = (("right", "right, of all"), ("right_answerable", "right, of the answerable"),
        ("idk_unanswerable", "« je ne sais pas », of the unanswerable"),
        ("wrong_idk", "« je ne sais pas », of the answerable (wrong)"),
        ("citation_precision", "citation precision (answerable, cited)"), ("unsupported_shown", "unsupported figure shown"))


@_reads_the_study
def goal_table(data: dict) -> Table:
    """The chosen decision at its coverage beside pointing-lead: each measure of the goal, the reporting half
    and the folder (the handbook's threshold applied as is), and the paired test of the share right."""
    goal = data["goal"]
    out = [f"{'':<46} {'reporting half':>27} {'benchmarks/folder':>27}",
           f"{'':<46} {'the choice':>13} {'pointing-lead':>13} {'the choice':>13} {'pointing-lead':>13}"]
    for key, label in GOAL:
        cells = [goal[w][s].get(key) for w in ("report", "folder") for s in ("the choice", "pointing-lead")]
        out.append(f"{label:<46} " + " ".join(f"{c:>13}" if isinstance(c, int) else _or(c, 13) for c in cells))
    for w in ("report", "folder"):
        t = goal[w]["right, the choice vs pointing-lead"]
        out.append(f"right, the choice − pointing-lead, {w}: {t['diff']:+.3f} [{t['ci95'][0]:+.3f}, "
                   f"{t['ci95'][1]:+.3f}], p {t['p']:.3f}, {t['improved']} better / {t['degraded']} worse")
    return Table("\n".join(out))

"""Deciding apart from reading: « copy » answers, a decision says when to show it — chosen by the protocol.

The reader is « copy » (no model: the 3 best sentences, copied; ``results/abstain.jsonl``, system ``copy``).
Whether to show its answer or say « je ne sais pas » is decided by one of:

    gate                 the sufficient-context gate's P(yes) alone (one model call, one token; stored with
                         pointing-lead's row: the same question over the same numbered sentences)
    signals (no model)   P(right) by logistic regression (``rungs.lab.selective``) on signals that cost no call:
                         the share of the question's words (stemmed, stop words out) in the best copied sentence
                         and in the three together, and whether the keyword leg found the top passage at all
    gate + signals       the same regression with the gate's P(yes) as one more signal

at a **coverage** — the share of questions answered — from 0.5 to 1.0 (1.0: answer everything, the floor
itself). On the deciding half every probability is cross-fitted (5 folds: a question is scored by a model
that never saw it) and ``tuning.choose`` picks decision × coverage (cross-validated, the floor kept unless a
gain passes the corrected test). The reporting half is scored once: the regression fitted on the whole
deciding half, the threshold the deciding half's own probabilities give at the chosen coverage; paired tests
against pointing-lead and the floor, Holm over them. The folder is scored with the handbook's fit: nothing is
chosen on it.

    .venv/bin/python benchmarks/bench_decision.py     # writes results/decision.json, the fit the package
                                                      # ships (rungs/rag/decision.json) and risk_coverage.png

Cost: reading the stored runs; a few hundred logistic fits of a few hundred rows.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from rungs.grounding.cut import passes  # noqa: E402
from rungs.lab import metrics, selective, tuning  # noqa: E402
from rungs.lab.handbook import load_questions  # noqa: E402
from rungs.rag import decision  # noqa: E402

import bench_abstain  # noqa: E402
import bench_modes  # noqa: E402
from bench_modes import halves  # noqa: E402

OUT = HERE / "results" / "decision.json"
COVERAGES = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
SIGNALS = {"gate": ["gate"], "signals (no model)": list(decision.SIGNALS[1:]), "gate + signals": list(decision.SIGNALS)}


def signals(q: dict, model_row: dict, copy_row: dict) -> dict:
    """One question's signals, by the package's own rule (``rungs.rag.decision.signals``): the gate's P(yes)
    stored with pointing-lead's row, the copy's sentences, the hits pointing-lead's retriever found."""
    return decision.signals(q["question"], copy_row["quotes"], (model_row.get("gate") or {}).get("p"),
                            model_row.get("hits"))


def table(done: dict, questions: list[dict]) -> list[dict]:
    """Per question: its signals, whether copy's answer is right, and both systems' marks."""
    rows = []
    for q in questions:
        model, copy = done.get(("pointing-lead", q["id"])), done.get(("copy", q["id"]))
        if model and copy:
            m = bench_abstain.mark(copy, q)
            rows.append({"id": q["id"], "answerable": q["kind"] != "unanswerable", "right": bool(m["correct"]),
                         "model_right": bool(bench_abstain.mark(model, q)["correct"]),
                         "model_answered": model["status"] == "answered",
                         **signals(q, model, copy)})
    return rows


def probabilities(rows, name, *, fitted=None, cross=False):
    """Each row's P(right) under decision ``name``: the gate's P(yes) itself, or the regression's."""
    x = np.array([[r[s] for s in SIGNALS[name]] for r in rows])
    if name == "gate":
        return x[:, 0], None
    y = [r["right"] for r in rows]
    if cross:
        return selective.cross_fitted(x, y, SIGNALS[name]), None
    model = fitted or selective.fit(x, y, SIGNALS[name])
    return model.probability(x), model


def decided(rows, p, cut) -> dict:
    """Right or not, question by question, when copy's answer is shown where P ≥ cut and « je ne sais pas » else."""
    return {r["id"]: float(r["right"] if passes(p_i, cut) else not r["answerable"]) for r, p_i in zip(rows, p)}


def deciding(rows) -> dict:
    """Every decision × coverage on the deciding half, from cross-fitted probabilities."""
    out = {}
    for name in SIGNALS:
        p, _ = probabilities(rows, name, cross=True)
        for c in COVERAGES:
            out[name, c] = decided(rows, p, selective.threshold(p, c))
    return out


def choose(rows, questions) -> dict:
    marks = deciding(rows)
    pool = [{**q, "relevant": {"(every question counts)": 1}} for q in questions if q["id"] in {r["id"] for r in rows}]
    by_text = {q["question"]: q["id"] for q in pool}
    run_fn = lambda text, decision, coverage: {"correct": marks[decision, coverage][by_text[text]]}
    grid = {"decision": list(SIGNALS), "coverage": list(COVERAGES)}
    right = {"right": lambda m, relevant: float(m["correct"])}
    out = tuning.choose(grid, run_fn, pool, default={"decision": "gate", "coverage": 1.0}, metric="right",
                        metrics=right, final=False)
    return {k: out[k] for k in ("best", "kept_default", "sweep_best", "cv")} | {"sweep": out["sweep"].to_dict("records")}


def reporting(fits, report_rows, decision, coverage) -> tuple[dict, float, float]:
    """The reporting half scored once: fitted on the deciding half (``fits``), its threshold at ``coverage``."""
    p_decide, model = fits[decision]
    p_report, _ = probabilities(report_rows, decision, fitted=model)
    cut = selective.threshold(p_decide, coverage)
    return decided(report_rows, p_report, cut), cut, float(np.mean(p_report >= cut))


def summary() -> dict:
    questions = load_questions()
    decide_ids, report_ids = halves(questions)
    done = bench_abstain.stored()  # the stored runs, read once: every reading below is of these
    on_folder = stored_folder()
    rows = {r["id"]: r for r in table(done, questions)}
    decide_rows, report_rows = [rows[i] for i in decide_ids], [rows[i] for i in report_ids]
    choice = choose(decide_rows, [q for q in questions if q["id"] in set(decide_ids)])
    best = choice["best"]
    out = {"choice": choice, "auc": {}, "report": {}, "folder": {}}
    fits = {name: probabilities(decide_rows, name) for name in SIGNALS}  # each decision fitted once, on the deciding half
    for name in SIGNALS:  # how well each decision orders right answers above wrong ones, out of sample
        out["auc"][name] = {"decide (cross-fitted)": selective.auc(probabilities(decide_rows, name, cross=True)[0],
                                                                   [r["right"] for r in decide_rows]),
                            "report": selective.auc(probabilities(report_rows, name, fitted=fits[name][1])[0],
                                                    [r["right"] for r in report_rows])}
    shown = {"the choice": (best["decision"], best["coverage"]), "gate + signals at 0.8": ("gate + signals", 0.8),
             "signals (no model) at 0.8": ("signals (no model)", 0.8), "gate at 0.8": ("gate", 0.8)}
    model = {r["id"]: float(r["model_right"]) for r in report_rows}
    floor = {r["id"]: float(r["right"]) for r in report_rows}
    for label, (name, c) in shown.items():
        marks, cut, answered = reporting(fits, report_rows, name, c)
        tests = {"vs pointing-lead": metrics.paired_test(model, marks), "vs copy": metrics.paired_test(floor, marks)}
        for key, p in metrics.holm({k: t["p"] for k, t in tests.items()}).items():
            tests[key]["p_holm"] = p
        out["report"][label] = {"decision": name, "coverage": c, "threshold": cut, "right": float(np.mean(list(marks.values()))),
                                "answered": answered, **tests}
    out["report"]["pointing-lead"] = {"right": float(np.mean(list(model.values())))}
    out["deciding"] = {"pointing-lead": float(np.mean([r["model_right"] for r in decide_rows])),
                       "copy": float(np.mean([r["right"] for r in decide_rows]))}
    out["report"]["copy"] = {"right": float(np.mean(list(floor.values())))}
    out["folder"] = folder(fits, on_folder[2])
    out["curves"] = {"decide": curves(decide_rows, {n: probabilities(decide_rows, n, cross=True)[0] for n in SIGNALS}),
                     "report": curves(report_rows, {n: probabilities(report_rows, n, fitted=fits[n][1])[0]
                                                    for n in SIGNALS})}
    out["rows"] = [{k: r[k] for k in ("id", "answerable", "right", "model_right", "model_answered")}
                   | {"p": {n: float(probabilities([r], n, fitted=fits[n][1])[0][0]) for n in SIGNALS}}
                   for r in report_rows]
    out["shipped"] = shipped(fits, best, len(decide_rows))
    out["goal"] = goal(fits, best, {"report": ([q for q in questions if q["id"] in set(report_ids)], done,
                                               report_rows), "folder": on_folder})
    return json.loads(json.dumps(out, default=float))


def stored_folder() -> tuple[list[dict], dict, list[dict]]:
    """benchmarks/folder's questions, its stored runs and their rows of signals, read once."""
    questions = load_questions(bench_abstain.FOLDER / "questions.jsonl")
    done = bench_abstain.stored(bench_abstain.FOLDER_LOG)
    return questions, done, table(done, questions)


def goal(fits, best: dict, where_read: dict) -> dict:
    """The issue's measures for the chosen decision at its coverage (the copy shown where P ≥ the deciding half's
    threshold, « je ne sais pas » elsewhere) beside pointing-lead's, on the reporting half and on the folder
    (``where_read``: each one's questions, stored runs and rows of signals)."""
    p_decide, model = fits[best["decision"]]
    cut = selective.threshold(p_decide, best["coverage"])
    out = {"threshold": cut}
    for where, (qs, done, table_rows) in where_read.items():
        rows = {r["id"]: r for r in table_rows}
        p = dict(zip(rows, probabilities(list(rows.values()), best["decision"], fitted=model)[0]))
        kept = [q for q in qs if q["id"] in rows]
        copy = [bench_abstain.gated({**bench_abstain.mark(done["copy", q["id"]], q), "p": float(p[q["id"]])}, cut)
                for q in kept]
        lead = [bench_abstain.mark(done["pointing-lead", q["id"]], q) for q in kept]
        right = lambda marks: {q["id"]: float(m["correct"]) for q, m in zip(kept, marks)}
        out[where] = {"the choice": bench_modes.measures(copy), "pointing-lead": bench_modes.measures(lead),
                      "right, the choice vs pointing-lead": metrics.paired_test(right(lead), right(copy))}
    return out


def risk_coverage(rows, p) -> dict:
    """Accuracy among the answered against the share answered, the questions answered best-P first (ties by
    id): every cut from 1 question to all, and the area under the curve (its mean: 1.0 only if every answer
    shown is right at every coverage)."""
    order = sorted(range(len(rows)), key=lambda i: (-p[i], rows[i]["id"]))
    right, points = 0, []
    for k, i in enumerate(order, 1):
        right += rows[i]["right"]
        points.append([k / len(rows), right / k])
    return {"points": points, "area": float(np.mean([a for _, a in points]))}


def curves(rows, ps: dict) -> dict:
    """Each decision's risk–coverage curve on ``rows``, and the model's own « aucune » as one point: the share
    pointing-lead answered, and the share right among those (what its own decision buys)."""
    out = {name: risk_coverage(rows, p) for name, p in ps.items()}
    answered = [r for r in rows if r["model_answered"]]
    out["pointing-lead's own « aucune »"] = {"coverage": len(answered) / len(rows),
                                             "accuracy": float(np.mean([r["model_right"] for r in answered]))}
    return out


def shipped(fits, best: dict, n: int) -> dict:
    """What the package ships (``rungs/rag/decision.json``): the chosen decision fitted on the whole deciding
    half, that half's probabilities (a coverage's threshold is read from them) and where it all came from."""
    p_decide, model = fits[best["decision"]]
    if model is None:  # the gate alone: P(right) is its P(yes), as a fit of weight 1 on the probability's logit
        raise SystemExit("the protocol chose the gate alone: ship it as a threshold on P(yes), not as a fit")
    return {"decision": best["decision"], "coverage": best["coverage"], "fit": model.to_dict(),
            "probabilities": sorted(float(v) for v in p_decide),
            "source": f"the handbook's deciding half ({n} questions): « {best['decision']} » at coverage "
                      f"{best['coverage']:g}, chosen by tuning.choose (benchmarks/bench_decision.py)"}


def folder(fits, rows: list[dict]) -> dict:
    """The folder's rows of signals, the handbook's fit and threshold (``fits``): each decision's AUC and share right."""
    out = {"questions": len(rows)}
    for name in SIGNALS:
        p_decide, model = fits[name]
        p, _ = probabilities(rows, name, fitted=model)
        cut = selective.threshold(p_decide, 0.8)
        marks = decided(rows, p, cut)
        out[name] = {"auc": selective.auc(p, [r["right"] for r in rows]), "right at 0.8": float(np.mean(list(marks.values()))),
                     "answered at 0.8": float(np.mean(p >= cut))}
    out["copy"] = float(np.mean([r["right"] for r in rows]))
    out["pointing-lead"] = float(np.mean([r["model_right"] for r in rows]))
    return out


def figure(result: dict, path: Path = HERE / "risk_coverage.png") -> None:
    """The risk–coverage curves of both halves, side by side (benchmarks/README.md shows it)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from rungs.lab import abstention_decision

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2), sharey=True)
    for ax, half in zip(axes, ("decide", "report")):
        abstention_decision.plot_risk_coverage(result, half, ax=ax)
    fig.tight_layout()
    fig.savefig(path, dpi=90, metadata={"Software": None})
    plt.close(fig)


if __name__ == "__main__":
    result = summary()
    OUT.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    decision.SHIPPED.write_text(json.dumps(result["shipped"], indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    figure(result)
    print(json.dumps({k: result[k] for k in ("auc", "report", "folder")}, indent=1, ensure_ascii=False)[:6000])
    print(json.dumps({k: result["choice"][k] for k in ("best", "kept_default", "sweep_best", "cv")}, indent=1))

"""N3's three modes over every judged question: pointing, quoted, free — raw answers kept, marked again on demand.

Run by ``bench_answers.py --modes`` (and ``--summary``): this file holds the run and the tables, so the
older configurations' code stays as it was. Every answer is one line of ``results/answers_modes.jsonl``
with what was sent, every raw reply, the answer shown (or the refusal), its quotes, tokens in and out and
seconds; the mark is applied afterwards from those lines (``summarise``), so a new mark needs no model.
The « free » rows are read from ``results/answers.jsonl`` (configuration « notebook 03 ») unless the free
mode was run here too (``--modes free``).

Decided on one half of the questions (``tuning.halves``, seed 0, answerable and not), reported on the other.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from rungs import hybrid, rag
from rungs.core.documents import passage_text
from rungs.core.errors import RungsError
from rungs.grounding.figures import unsupported
from rungs.lab import answers, tuning
from rungs.lab import metrics as evaluate

HERE = Path(__file__).resolve().parent
LOG = HERE / "results" / "answers_modes.jsonl"
OLD_LOG = HERE / "results" / "answers.jsonl"
MODES = {"pointing": {"mode": "pointing"}, "pointing-lead": {"mode": "pointing-lead"}, "quoted": {"mode": "quoted"},
         "free": {"mode": "free", "check_figures": False},
         # Today's free answer again, on a few questions, on this machine now: its seconds, beside the modes'.
         "free-now": {"mode": "free", "check_figures": False}}


def halves(questions):
    decide, report = tuning.halves(questions, seed=0, answerable_only=False)
    return [q["id"] for q in decide], [q["id"] for q in report]


def stored(path=None) -> dict:
    """The stored answers by (configuration, question): ``path``, or ``LOG`` as it is when called (a run pointed at
    another log, a test's scratch file, resumes from that one)."""
    path, done = LOG if path is None else path, {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            done[r["config"], r["id"]] = r
    return done


def run(names, questions, pages, client, *, half="all", limit=None) -> None:
    """Answer every question (the deciding half first) in each mode; append one line per answer; resume."""
    by_id = {p["id"]: p for p in pages}
    by_q = {q["id"]: q for q in questions}
    decide, report = halves(questions)
    order = {"decide": decide, "report": report, "all": decide + report}[half][:limit]
    retriever = hybrid.answer_retriever(pages)
    done = stored()
    LOG.parent.mkdir(exist_ok=True)
    with LOG.open("a", encoding="utf-8") as log:
        for name in names:
            started, fresh = time.perf_counter(), 0
            for i, qid in enumerate(order, 1):
                if (name, qid) in done:
                    continue
                q = by_q[qid]
                hits = retriever.search(q["question"], limit=4)
                record = {"config": name, "id": qid, "sent": [h.id for h in hits],
                          "half": "decide" if qid in decide else "report"}
                record.update(stored_answer(rag.answer(q["question"], [by_id[h.id] for h in hits], client,
                                                       collection=rag.HANDBOOK, **MODES[name])))
                log.write(json.dumps(record, ensure_ascii=False) + "\n")
                log.flush()
                done[name, qid] = record
                fresh += 1
                print(f"{name}: {i}/{len(order)} {qid} {record['seconds']} s "
                      f"({time.perf_counter() - started:.0f} s for {fresh})", flush=True)


def stored_answer(out) -> dict:
    """One ``Answer`` as a line of the log keeps it: what was shown (None when unavailable or refused, with the
    error that says why), every raw reply, what was refused on the way, and what it cost."""
    try:
        out.raise_for_status()
        record = {"answer": out.text, "sources": list(out.cited),
                  "quotes": [{"source": q.source, "text": q.text} for q in out.quotes], "error": None}
    except RungsError as err:  # refused: the learner sees a named error, never the answer
        record = {"answer": None, "sources": [], "quotes": [], "error": f"{type(err).__name__}: {str(err)[:300]}"}
    return {**record, "replies": list(out.replies), "refused": list(out.trail.refused), "repairs": out.trail.repairs,
            "calls": out.cost.calls, "input_tokens": out.cost.prompt_tokens,
            "output_tokens": out.cost.output_tokens, "seconds": round(out.cost.seconds, 2)}


SUMMARY = HERE / "results" / "answers_modes.json"
#: The goal of the collection's issue « Answers checked claim by claim », with the bundled model.
GOAL = {"right": (">=", 0.75), "wrong_idk": ("<=", 0.10), "idk_unanswerable": (">=", 0.75),
        "citation_precision": (">=", 0.90), "unsupported_shown": ("<=", 0)}


def rows_for(name, done, old):
    """The stored rows of one system: the modes' log, or, for « free », the older log's « notebook 03 »."""
    if name == "free" and not any(k[0] == "free" for k in done):
        return {qid: {**r, "quotes": [], "built": "fast"} for (c, qid), r in old.items() if c == "notebook 03"}
    return {qid: r for (c, qid), r in done.items() if c == name}


def mark(r, q, pages) -> dict:
    """One stored answer marked now: today's mark, plus whether it was shown with a figure nothing cited holds."""
    m = answers.score_answer(r["answer"], q, r["sources"])
    shown = r["answer"] is not None and not m["abstained"]
    held = [passage_text(pages[s])[:rag.MAX_CHARS] for s in r["sources"] if s in pages] + [q["question"]]
    m["unsupported"] = unsupported(r["answer"], held) if shown else []
    m["unsupported_shown"] = bool(m["unsupported"])
    m["refused"] = r["answer"] is None
    m["seconds"] = r.get("seconds")
    m["tokens_in"], m["tokens_out"], m["repairs"] = r.get("input_tokens"), r.get("output_tokens"), r.get("repairs")
    return m


def measures(marks: list[dict]) -> dict:
    mean = lambda xs: sum(xs) / len(xs) if xs else None
    answerable = [m for m in marks if m["answerable"]]
    unanswerable = [m for m in marks if not m["answerable"]]
    secs = sorted(m["seconds"] for m in marks if m["seconds"] is not None)
    return {"n": len(marks), "right": mean([m["correct"] for m in marks]),
            "right_answerable": mean([m["correct"] for m in answerable]),
            "idk_unanswerable": mean([m["abstained"] for m in unanswerable]),
            "wrong_idk": mean([m["abstained"] for m in answerable]),
            "citation_precision": mean([m["citation_precision"] for m in answerable
                                        if m["citation_precision"] is not None]),
            "unsupported_shown": sum(m["unsupported_shown"] for m in marks),
            "refused": sum(m["refused"] for m in marks),
            "seconds_median": secs[len(secs) // 2] if secs else None, "seconds_mean": mean(secs),
            "tokens_in": mean([m["tokens_in"] for m in marks if m["tokens_in"]]),
            "tokens_out": mean([m["tokens_out"] for m in marks if m["tokens_out"]]),
            "repairs": sum(m["repairs"] or 0 for m in marks)}


#: The paired comparisons, per question: what is compared, and on which questions it is defined.
PAIRED = {"right": (lambda m: float(m["correct"]), lambda m: True),
          "right_answerable": (lambda m: float(m["correct"]), lambda m: m["answerable"]),
          "idk_unanswerable": (lambda m: float(m["abstained"]), lambda m: not m["answerable"]),
          "wrong_idk": (lambda m: float(m["abstained"]), lambda m: m["answerable"]),
          "citation_precision": (lambda m: m["citation_precision"], lambda m: m["citation_precision"] is not None),
          "unsupported_shown": (lambda m: float(m["unsupported_shown"]), lambda m: True),
}  # seconds are compared on the same machine, at the same time, only (free-now): not against the stored run


def paired(base: dict, other: dict, ids: list[str]) -> dict:
    """Each measure, question by question, other − base, on the questions both define it; Holm over the family."""
    tests = {}
    for name, (value, defined) in PAIRED.items():
        common = [q for q in ids if q in base and q in other and defined(base[q]) and defined(other[q])]
        if len(common) < 2:
            continue
        tests[name] = {**evaluate.paired_test({q: value(base[q]) for q in common},
                                              {q: value(other[q]) for q in common}), "questions": len(common)}
    adjusted = evaluate.holm({n: t["p"] for n, t in tests.items()}) if tests else {}
    for name, t in tests.items():
        t["p_holm"] = adjusted[name]
    return tests


def summarise(questions, pages_list, names=("free", "pointing", "pointing-lead", "quoted", "free-now")) -> dict:
    pages = {p["id"]: p for p in pages_list}
    by_q = {q["id"]: q for q in questions}
    decide, report = halves(questions)
    done, old = stored(), stored(OLD_LOG)
    marks = {}
    for name in names:
        rows = rows_for(name, done, old)
        if rows:
            marks[name] = {qid: mark(r, by_q[qid], pages) for qid, r in rows.items() if qid in by_q}
    out = {"halves": {"decide": decide, "report": report}, "systems": {}, "paired": {}, "goal": GOAL}
    for name, m in marks.items():
        out["systems"][name] = {half: measures([m[q] for q in ids if q in m])
                                for half, ids in (("decide", decide), ("report", report), ("all", decide + report))}
        out["systems"][name]["unsupported"] = {q: v["unsupported"] for q, v in m.items() if v["unsupported_shown"]}
    if "free-now" in marks:  # seconds compare only on the same questions, the same machine, the same afternoon
        same = sorted(marks["free-now"])
        cost = {name: measures([m[q] for q in same]) for name, m in marks.items()
                if name != "free" and all(q in m for q in same)}
        out["cost_same_questions"] = {name: {"questions": len(same), **{k: c[k] for k in
                                             ("seconds_median", "tokens_in", "tokens_out")}} for name, c in cost.items()}
    for name in marks:
        if name not in ("free", "free-now") and "free" in marks:
            out["paired"][name] = {half: paired(marks["free"], marks[name], ids)
                                   for half, ids in (("decide", decide), ("report", report), ("all", decide + report))}
    show(out)
    SUMMARY.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return out


def show(out) -> None:
    cols = ["n", "right", "right_answerable", "idk_unanswerable", "wrong_idk", "citation_precision",
            "unsupported_shown", "refused", "seconds_median"]
    for half in ("decide", "report", "all"):
        print(f"\n{half} half" if half != "all" else "\nall 155 questions")
        print(f"{'system':<10}" + "".join(f"{c[:14]:>15}" for c in cols))
        for name, s in out["systems"].items():
            r = s[half]
            print(f"{name:<10}" + "".join(f"{'—' if r[c] is None else (f'{r[c]:.3f}' if isinstance(r[c], float) else r[c]):>15}"
                                          for c in cols))
        for name, halves_ in out["paired"].items():
            for measure, t in halves_[half].items():
                print(f"  {name} − free  {measure:<20} {t['diff']:+.3f} [{t['ci95'][0]:+.3f}, {t['ci95'][1]:+.3f}] "
                      f"p {t['p']:.4f}  Holm {t['p_holm']:.4f}  n {t['questions']}  "
                      f"{t['improved']} up / {t['degraded']} down")


LABELS = {"right": "right (all)", "right_answerable": "right, answerable", "idk_unanswerable": "« je ne sais pas », unanswerable",
          "wrong_idk": "wrong « je ne sais pas » (answerable)", "citation_precision": "citation precision",
          "unsupported_shown": "answers shown with an unsupported figure", "refused": "refused",
          "seconds_median": "seconds per answer (median)", "tokens_in": "tokens in (mean)", "tokens_out": "tokens out (mean)"}


def paired_table(title: str, tests: dict, labels: dict) -> list[str]:
    """One family of paired tests as markdown rows (``paired``'s output), under its title."""
    p = lambda v: "< 0.001" if v < 0.001 else f"{v:.3f}"
    lines = [f"\n{title}, paired, question by question (Holm over the {len(tests)} measures):\n",
             "| measure | questions | difference | 95 % interval | p | p (Holm) | up / down |",
             "| --- | ---: | ---: | --- | ---: | ---: | ---: |"]
    for key, t in tests.items():
        lines.append(f"| {labels.get(key, key)} | {t['questions']} | {t['diff']:+.3f} | "
                     f"[{t['ci95'][0]:+.3f}, {t['ci95'][1]:+.3f}] | {p(t['p'])} | {p(t['p_holm'])} | "
                     f"{t['improved']} / {t['degraded']} |")
    return lines


def markdown(out) -> str:
    """The tables of benchmarks/README.md, written from the summary (so every number there comes from it)."""
    fmt = lambda v: "—" if v is None else (f"{v:.3f}" if isinstance(v, float) and v <= 1.5 else
                                          (f"{v:.1f}" if isinstance(v, float) else str(v)))
    lines = []
    for half, title in (("decide", "deciding half"), ("report", "reporting half"), ("all", "all questions")):
        names = [n for n in out["systems"] if out["systems"][n][half]["n"]]
        counts = ", ".join(f"{n}: {out['systems'][n][half]['n']}" for n in names)
        lines += [f"\n**{title}** ({counts} answers)\n",
                  "| | " + " | ".join(names) + " |", "| --- |" + " ---: |" * len(names)]
        for key, label in LABELS.items():
            lines.append(f"| {label} | " + " | ".join(fmt(out["systems"][n][half][key]) for n in names) + " |")
        for name, halves_ in out["paired"].items():
            tests = halves_[half]
            if not tests:
                continue
            lines += paired_table(f"{name} − free", tests, LABELS)
    if out.get("cost_same_questions"):
        cost = out["cost_same_questions"]
        lines += [f"\n**cost on the same questions, the same machine, the same afternoon** (free-now's "
                  f"{next(iter(cost.values()))['questions']} questions)\n", "| | " + " | ".join(cost) + " |",
                  "| --- |" + " ---: |" * len(cost)]
        for key in ("seconds_median", "tokens_in", "tokens_out"):
            lines.append(f"| {LABELS[key]} | " + " | ".join(fmt(cost[n][key]) for n in cost) + " |")
    return "\n".join(lines)

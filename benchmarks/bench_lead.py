"""A lead that cannot borrow: pointing-lead's stored replies re-read under the old lead rule and the new one.

The old rule showed a lead-in (« Deux mois. ») when its figures appeared in some sentence or passage shown
with it; the new one (``rungs.rag.read.point``) shows it only when it says no more than the sentence it rests
on (every figure, its yes or no: ``rungs.rag.pointing.borrowed``) and the shipped decision judges that
sentence to answer (``rungs.rag.decision.judges_answer``, on the gate's stored P(yes)). Three answers per
question, from the same stored reply, no new call:

    old lead        the stored answer, as the old rule showed it (``results/abstain.jsonl``, system pointing-lead)
    new lead        the stored reply read again by today's ``rag.point`` with the decision as its judge
    sentences alone the same reply with its lead-in left out: the sentences the model pointed at, copied

each marked by the collection's one mark (``bench_abstain.mark`` → ``rungs.lab.answers.score_answer``).
Nothing is chosen here (the rule's threshold is the shipped decision's, fitted on the deciding half), so both
halves are reported; the reporting half is the one to quote. Paired tests (``metrics.paired_test``) of the new
lead against the old and against the sentences alone, Holm over the two (``metrics.holm``).

    .venv/bin/python benchmarks/bench_lead.py      # writes results/lead.json (no model; the encoder, a minute)

Cost: the encoder's first load (the sentences are ranked again), then milliseconds a question.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from rungs import rag  # noqa: E402
from rungs.grounding import figures  # noqa: E402
from rungs.lab import metrics  # noqa: E402
from rungs.lab.handbook import load_pages, load_questions  # noqa: E402
from rungs.rag.decision import judges_answer  # noqa: E402

import bench_abstain  # noqa: E402
from bench_modes import halves  # noqa: E402

OUT = HERE / "results" / "lead.json"
SYSTEMS = ("old lead", "new lead", "sentences alone")


def reread(q: dict, row: dict, by_id: dict) -> dict:
    """The stored answer under each rule: (system → a row ``bench_abstain.mark`` reads). A stored answer with no
    lead shown (none written, or the old rule dropped it) is the same under all three."""
    out = {name: row for name in SYSTEMS}
    if row["status"] != "answered" or "\n" not in row["text"]:
        return out
    sent = rag.prepare_passages([by_id[i] for i in row["sent"]])
    numbered = rag.sentences_for(q["question"], sent)
    reply = rag.decode(row["replies"][-1], "pointing-lead")
    gate_p = (row.get("gate") or {}).get("p")
    judge = lambda quotes: judges_answer(q["question"], quotes, gate_p, row.get("hits"))
    for name, read in (("new lead", rag.point(reply, numbered, q["question"], judge)),
                       ("sentences alone", rag.point(rag.PointingReply(reply.chosen), numbered, q["question"]))):
        out[name] = {**row, "text": read["answer"], "cited": read["sources"], "quotes": read["quotes"],
                     "figures": [], "dropped": read["dropped"]}
    return out


def borrowed_figure(r: dict) -> bool:
    """A lead-in shown with a figure none of the sentences shown under it holds."""
    if r["status"] != "answered" or "\n" not in r["text"]:
        return False
    return bool(figures.unsupported(r["text"].split("\n", 1)[0], [q["text"] for q in r["quotes"]]))


#: Why the new rule dropped a lead the old one showed, as ``rag.point``'s note says it.
WHY = {"a figure not in its sentence": "figure(s)", "a yes or no its sentence does not say": "is not what the sentence",
       "its sentence not judged to answer": "not judged to answer", "it restates the question": "restates the question"}


def drops(rows, marks) -> dict:
    """Per reason the new rule dropped a lead: how many, and how many of those answers the mark then found
    right where it had not (gained) or no longer right (lost)."""
    out = {why: {"dropped": 0, "gained": 0, "lost": 0} for why in WHY}
    for q, r in rows:
        note = r["new lead"].get("dropped") or ""
        for why, said in WHY.items():
            if said in note:
                change = marks["new lead"][q["id"]] - marks["old lead"][q["id"]]
                out[why]["dropped"] += 1
                out[why]["gained"] += change > 0
                out[why]["lost"] += change < 0
    return out


def measure(rows: list[tuple[dict, dict]]) -> dict:
    """Per system: right, right on the answerable, leads shown, leads with a borrowed figure; then the tests."""
    out, marks = {}, {}
    for name in SYSTEMS:
        m = [(q, r[name], bench_abstain.mark(r[name], q)) for q, r in rows]
        marks[name] = {q["id"]: float(s["correct"]) for q, _, s in m}
        answerable = [s["correct"] for _, _, s in m if s["answerable"]]
        leads = [(x, s) for _, x, s in m if x["status"] == "answered" and "\n" in x["text"]]
        out[name] = {"right": sum(marks[name].values()) / len(m),
                     "right_answerable": _share(answerable),
                     "leads_shown": len(leads), "leads_on_a_wrong_answer": sum(not s["correct"] for _, s in leads),
                     "leads_with_a_borrowed_figure": sum(borrowed_figure(x) for x, _ in leads)}
    tests = {"new lead vs old lead": metrics.paired_test(marks["old lead"], marks["new lead"]),
             "new lead vs sentences alone": metrics.paired_test(marks["sentences alone"], marks["new lead"])}
    for key, p in metrics.holm({k: t["p"] for k, t in tests.items()}).items():
        tests[key]["p_holm"] = p
    return {"questions": len(rows), "answerable": sum(q["kind"] != "unanswerable" for q, _ in rows),
            "systems": out, "drops": drops(rows, marks), "tests": tests}


def _share(xs: list) -> float | None:
    return sum(xs) / len(xs) if xs else None


def summary(limit: int | None = None) -> dict:
    """Both halves measured (``limit``: the first questions of each, for a quick check)."""
    questions = {q["id"]: q for q in load_questions()}
    by_id = {p["id"]: p for p in load_pages()}
    done = bench_abstain.stored()
    out = {}
    for half, ids in zip(("decide", "report"), halves(list(questions.values()))):
        ids = [i for i in ids if ("pointing-lead", i) in done][:limit]
        out[half] = measure([(questions[i], reread(questions[i], done["pointing-lead", i], by_id)) for i in ids])
        # The floor beside them, for scale: « copy », no model, from the same passages (its stored row).
        floor = [bench_abstain.mark(done["copy", i], questions[i]) for i in ids if ("copy", i) in done]
        out[half]["copy (no model)"] = {"right": sum(m["correct"] for m in floor) / len(floor) if floor else None,
                                        "right_answerable": _share([m["correct"] for m in floor if m["answerable"]])}
    return json.loads(json.dumps(out, default=float))


if __name__ == "__main__":
    result = summary()
    OUT.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    for half, r in result.items():
        print(half, {k: {m: v[m] for m in ("right", "right_answerable", "leads_shown", "leads_with_a_borrowed_figure")}
                     for k, v in r["systems"].items()}, {k: round(t["p_holm"], 3) for k, t in r["tests"].items()})

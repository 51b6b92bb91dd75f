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

The folder (« folder »: ``results/abstain_folder.jsonl``, pointing-lead's 50 stored replies over
benchmarks/folder, each question once) is measured the same way, every question, and never tuned on: the rule
and its threshold are the handbook's shipped decision, unchanged. Its passages are the folder indexed afresh in
a scratch file, keywords only (the ids the run sent, their texts as ``python -m rungs ask`` sent them).
``results/abstain_folder_blind.jsonl`` holds no reply (a blind reader's verdict on each stored folder answer):
there is nothing in it to read again.

    .venv/bin/python benchmarks/bench_lead.py      # writes results/lead.json (no model; the encoder, a minute)

Cost: the encoder's first load (the sentences are ranked again), the folder's keyword index (seconds), then
milliseconds a question.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from rungs import rag  # noqa: E402
from rungs.grounding import figures  # noqa: E402
from rungs.lab import metrics  # noqa: E402
from rungs.lab.handbook import load_pages, load_questions  # noqa: E402
from rungs.rag.decision import judges_answer  # noqa: E402
from rungs.yours.index import index_folder  # noqa: E402

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


def measured(questions: dict, ids: list, done: dict, by_id: dict) -> dict:
    """``ids`` measured on their stored pointing-lead replies, with « copy » (no model) beside them for scale."""
    rows = [(questions[i], reread(questions[i], done["pointing-lead", i], by_id)) for i in ids]
    out = measure(rows)
    # The sentences are numbered again today: where they no longer give back the ones stored, say how often.
    out["leads_reread_on_other_sentences"] = sum(
        [x["text"] for x in r["sentences alone"]["quotes"]] != [x["text"] for x in r["old lead"]["quotes"]]
        for _, r in rows if r["sentences alone"] is not r["old lead"])
    # The floor, from the same passages (its stored row).
    floor = [bench_abstain.mark(done["copy", i], questions[i]) for i in ids if ("copy", i) in done]
    out["copy (no model)"] = {"right": sum(m["correct"] for m in floor) / len(floor) if floor else None,
                              "right_answerable": _share([m["correct"] for m in floor if m["answerable"]])}
    return out


def folder_passages() -> dict:
    """The folder's passages by id as its reader sent them (``rungs.tools.cli._reader``: title and body from the
    retriever's meta), from a scratch index without vectors: nothing here searches, only the texts are read."""
    with tempfile.TemporaryDirectory() as scratch:
        index = index_folder(bench_abstain.FOLDER / "documents", index=Path(scratch) / "folder.sqlite", vectors=False)
        try:
            meta = index.retriever("bm25").meta
        finally:
            index.close()
    return {i: {"id": i, "title": m.get("title") or "", "body": m["body"]} for i, m in meta.items()}


def summary(limit: int | None = None) -> dict:
    """Both halves and the folder measured (``limit``: the first questions of each, for a quick check)."""
    questions = {q["id"]: q for q in load_questions()}
    by_id = {p["id"]: p for p in load_pages()}
    done = bench_abstain.stored()
    out = {}
    for half, ids in zip(("decide", "report"), halves(list(questions.values()))):
        out[half] = measured(questions, [i for i in ids if ("pointing-lead", i) in done][:limit], done, by_id)
    # The folder: every question, interleaved so a quick check's first few hold both kinds.
    asked = bench_abstain.interleaved(load_questions(bench_abstain.FOLDER / "questions.jsonl"))
    done = bench_abstain.stored(bench_abstain.FOLDER_LOG)
    ids = [q["id"] for q in asked if ("pointing-lead", q["id"]) in done][:limit]
    out["folder"] = measured({q["id"]: q for q in asked}, ids, done, folder_passages())
    return json.loads(json.dumps(out, default=float))


def folder_table(part: dict) -> list[str]:
    """The folder's rows as benchmarks/README.md prints them (one column of right: the folder has no halves)."""
    out = []
    for name, r in {**part["systems"], "copy (no model)": part["copy (no model)"]}.items():
        counts = [str(r[k]) if k in r else "—" for k in ("leads_shown", "leads_on_a_wrong_answer",
                                                          "leads_with_a_borrowed_figure")]
        out.append(f"{name:<20}{r['right']:>6.3f}{r['right_answerable']:>13.3f}{counts[0]:>8}{counts[1]:>11}"
                   f"{counts[2]:>10}")
    return out


if __name__ == "__main__":
    result = summary()
    OUT.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    for part, r in result.items():
        print(part, {k: {m: v[m] for m in ("right", "right_answerable", "leads_shown", "leads_with_a_borrowed_figure")}
                     for k, v in r["systems"].items()}, {k: round(t["p_holm"], 3) for k, t in r["tests"].items()})

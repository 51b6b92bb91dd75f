"""Knowing when not to answer: the sufficient-context gate, the modes, and baselines that split where an answer is lost.

Every judged question of the handbook is answered by N3 with the real model, and every answer is kept
(``results/abstain.jsonl``, one line per system and question) so that everything below is computed from
stored runs, without a model:

    free                  the shipped retriever (hybrid.answer_retriever, 4 passages), mode « free »
    pointing-lead         the same passages, mode « pointing-lead » (numbered sentences, « aucune » allowed)
    closed-book           no passage at all: what the model « knows » of a company it has never seen
    oracle-free           the judged passages — every page graded 2, at most 4 — in mode « free »
    oracle-pointing-lead  the same, in mode « pointing-lead »
    copy                  no model: the 3 sentences the hybrid over sentences ranks first, among the 12
                          pointing-lead was shown (``rag.answer(mode="copy")``), from pointing-lead's stored passages
    oracle-copy           the same, from the judged passages

« copy » is the floor every model mode is measured against. It asks no model, so it is computed from the
stored passages in seconds (``run --systems copy oracle-copy``, no server); its gate is pointing-lead's stored
P(yes) — the gate asks the very same question over the very same numbered sentences in both
(``rag.answer(mode="copy", gate=t)`` asks it so), so « copy, gate t » is what the rung gives at that threshold.

Each retrieved or oracle answer is asked with the sufficient-context gate at threshold 0 (``gate=0.0``):
the gate's question is asked first and its P(yes) stored, and the answer is always asked after it, over
the same prompt start (reused from the server's cache). A system « with the gate at t » is then read
from the stored run: « je ne sais pas » where P(yes) < t, the stored answer elsewhere — the same answer
the rung gives with ``gate=t``, since the gate's call comes first either way.

The default — mode × gate threshold, today's default (pointing-lead, no gate) the default of the
search — is chosen by ``rungs.lab.tuning.choose`` on the deciding half (cross-validated, the default
kept unless a gain passes the corrected test) and reported once on the reporting half, with paired
tests and Holm's correction. The halves are ``tuning.halves`` (seed 0, every question, unanswerable ones
included, each kind split evenly; the questions added later are split in a second pass, so the old
questions keep their halves).

    .venv/bin/python benchmarks/bench_abstain.py run [--half decide|report|all] [--systems ...] [--limit N]
    .venv/bin/python benchmarks/bench_abstain.py summary      # marks, choice, tables → results/abstain.json
    .venv/bin/python benchmarks/bench_abstain.py tables       # the markdown of benchmarks/README.md

Cost: about two prompt reads per question and system (the gate's; the answer's reuses it), 10–40 s a
question and system on one thread of a 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from rungs import hybrid, rag  # noqa: E402
from rungs.grounding import Status  # noqa: E402
from rungs.grounding.cut import below, passes  # noqa: E402
from rungs.lab import answers, tuning  # noqa: E402
from rungs.lab import metrics as evaluate  # noqa: E402
from rungs.lab.metrics import kappa  # noqa: E402
from rungs.lab.handbook import load_pages, load_questions  # noqa: E402

sys.path.insert(0, str(HERE))
from bench_modes import halves, paired_table  # noqa: E402  (the same two halves as N3's modes: seed 0, every question)

LOG = HERE / "results" / "abstain.jsonl"
SUMMARY = HERE / "results" / "abstain.json"
SYSTEMS = ("pointing-lead", "free", "pointing-lead-norule", "free-norule", "oracle-pointing-lead", "oracle-free",
           "closed-book", "copy", "oracle-copy")
#: The systems that ask no model: each is read from the stored run of the model system it copies from.
COPIES = {"copy": "pointing-lead", "oracle-copy": "oracle-pointing-lead"}
#: The modes the protocol chooses among: each mode with its own no-answer rule (the model may decline), and
#: each without it (« -norule »: the model must answer — no « aucune » offered — and only the gate declines).
CHOICES = ("pointing-lead", "free", "pointing-lead-norule", "free-norule", "copy")
#: What the model reads when it reads nothing: the closed-book baseline's whole prompt.
CLOSED_BOOK = ("Question d'un salarié de l'entreprise : {question}\n\nRéponds en français, en une ou deux phrases. "
               "Si tu ne connais pas la réponse, réponds exactement « Je ne sais pas. »")
#: The thresholds the protocol may choose among (0: the gate off — every P(yes) is at least 0).
THRESHOLDS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
GOAL = {"right": 0.75, "idk_unanswerable": 0.75, "wrong_idk": 0.10, "citation_precision": 0.90, "unsupported_shown": 0}


def stored(path=None) -> dict:
    """The stored answers by (system, question): ``path``, or ``LOG`` as it is when called (a run pointed at
    another log, a test's scratch file, resumes from that one)."""
    path, done = LOG if path is None else path, {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            done[r["system"], r["id"]] = r
    return done


def _oracle(q, by_id):
    """The judged passages: every page graded 2 (best first by id), at most 4; none for an unanswerable question."""
    return [by_id[p] for p, g in sorted(q["relevant"].items()) if g >= 2 and p in by_id][:rag.MAX_PASSAGES]


def _record(system, q, out, hits=None) -> dict:
    """One stored line: the answer in its one shape, without the texts sent (rebuilt from the ids)."""
    d, gate = out.to_dict(), out.gate
    return {"system": system, "id": q["id"], "status": d["status"], "text": d["text"], "cited": d["cited"],
            "quotes": d["quotes"], "figures": d["figures"], "notes": d["notes"], "reason": d["reason"],
            "cost": d["cost"], "sent": list(d["sent"]), "replies": list(out.replies),
            "gate": gate and {"p": gate.p, "coverage": gate.coverage, "trusted": gate.trusted, "note": gate.note},
            "hits": [{"id": h.id, "score": h.score, "parts": h.parts} for h in (hits or [])]}


def copied(system, q, by_id, done) -> dict:
    """« copy » from the passages the model system it stands beside was sent (stored), with that system's stored
    gate: the same question over the same numbered sentences. No model."""
    base = done[COPIES[system], q["id"]]
    out = rag.answer(q["question"], [by_id[i] for i in base["sent"]], None, mode="copy", decision=None,
                     collection=rag.HANDBOOK)  # the floor alone: its gate is pointing-lead's stored P(yes)
    return {**_record(system, q, out), "gate": base["gate"], "hits": base["hits"]}


def ask(system, q, retriever, by_id, client):
    if system == "closed-book":
        started = time.perf_counter()
        result = client.chat([{"role": "user", "content": CLOSED_BOOK.format(question=q["question"])}], max_tokens=120)
        took = time.perf_counter() - started
        from rungs.grounding import Answer, Cost
        text = result.text.strip()
        status = Status.NO_ANSWER if rag.is_no_answer(text) else Status.ANSWERED
        out = Answer(question=q["question"], status=status, text=rag.NO_ANSWER if status is Status.NO_ANSWER else text,
                     cost=Cost.of_call(result, took), by="closed book")
        return _record(system, q, out)
    mode = system.replace("oracle-", "").replace("-norule", "")
    if system.startswith("oracle"):
        passages, hits = _oracle(q, by_id), None
    else:
        hits = retriever.search(q["question"], limit=rag.MAX_PASSAGES)
        passages = [by_id[h.id] for h in hits]
    out = rag.answer(q["question"], passages, client, mode=mode, gate=0.0, collection=rag.HANDBOOK,
                     no_answer_rule=not system.endswith("-norule"))
    return _record(system, q, out, hits)


FOLDER = HERE / "folder"
FOLDER_LOG = HERE / "results" / "abstain_folder.jsonl"
FOLDER_SUMMARY = HERE / "results" / "abstain_folder.json"
#: A blind second reading of pointing-lead's folder answers: a careful reader who wrote neither the questions
#: nor the mark, reading each answer against the files (RIGHT, PARTLY, WRONG, IDK_OK, IDK_WRONG,
#: ANSWERED_UNANSWERABLE, a reason each).
FOLDER_BLIND = HERE / "results" / "abstain_folder_blind.jsonl"
#: Where the folder is indexed for this benchmark: a cache of this machine, never the folder itself.
FOLDER_INDEX = Path.home() / ".cache" / "rungs" / "bench" / "folder-index.sqlite"


def ask_folder(system, q, reader_for, client):
    """A folder question as ``python -m rungs ask`` answers it (default options; the prompt names the folder)."""
    out = reader_for(system, client).ask(q["question"])
    return _record(system, q, out, out.hits)


def _folder_readers():
    """``python -m rungs ask``'s reader over benchmarks/folder, in each mode, the gate at 0 (its P(yes) kept)."""
    from rungs.tools import cli
    from rungs.yours.index import index_folder, open_index

    FOLDER_INDEX.parent.mkdir(parents=True, exist_ok=True)
    index_folder(FOLDER / "documents", index=FOLDER_INDEX).close()  # incremental: a rerun reads nothing again
    store = open_index(FOLDER_INDEX)
    parser = cli._parser("ask")

    def reader_for(system, client):
        args = parser.parse_args(["?", "--mode", system.replace("-norule", "")])
        reader = cli._reader(args, store, None)
        reader.client = client
        reader.knobs = {**reader.knobs, "gate": 0.0, "no_answer_rule": not system.endswith("-norule")}
        return reader
    return reader_for


def run(systems, *, half="all", limit=None, collection="handbook") -> None:
    """Answer every question (the deciding half first) with each system; one line per answer; a rerun resumes."""
    from rungs.model import default_client

    if collection == "folder":
        return run_folder([s for s in systems if s in CHOICES], limit=limit)
    pages, questions = load_pages(), load_questions()
    by_id, by_q = {p["id"]: p for p in pages}, {q["id"]: q for q in questions}
    decide, report = halves(questions)
    order = {"decide": decide, "report": report, "all": decide + report}[half][:limit]
    done = stored()
    client = default_client() if set(systems) - set(COPIES) else None  # a copy asks no model: no server
    retriever = hybrid.answer_retriever(pages)
    LOG.parent.mkdir(exist_ok=True)
    with LOG.open("a", encoding="utf-8") as log:
        for system in systems:
            todo = [qid for qid in order if (system, qid) not in done]
            started = time.perf_counter()
            for n, qid in enumerate(todo, 1):
                r = copied(system, by_q[qid], by_id, done) if system in COPIES else ask(
                    system, by_q[qid], retriever, by_id, client)
                log.write(json.dumps(r, ensure_ascii=False) + "\n")
                log.flush()
                done[system, qid] = r  # a copy later in this run reads the model system's line just written
                left = (time.perf_counter() - started) / n * (len(todo) - n)
                print(f"{system} {qid} {n}/{len(todo)} {r['status']:<11} gate {(r['gate'] or {}).get('p')} "
                      f"{r['cost']['seconds']:.1f} s, ~{left / 60:.0f} min left", flush=True)


def interleaved(questions: list[dict]) -> list[dict]:
    """Answerable and unanswerable questions in proportion, in file order within each kind: any prefix
    (``--limit``) keeps the kinds' shares, so a run cut short is still a fair sample of both."""
    kinds = [[q for q in questions if (q["kind"] == "unanswerable") == u] for u in (False, True)]
    place = lambda i, n: (i + 0.5) / n  # each question at the middle of its share of the run
    return [q for _, _, q in sorted((place(i, len(k)), q["id"], q) for k in kinds for i, q in enumerate(k))]


def copied_folder(q, reader_for, done) -> dict:
    """« copy » of a folder question from the passages pointing-lead was sent there (stored), its gate too."""
    base = done["pointing-lead", q["id"]]
    reader = reader_for("copy", None)
    meta = reader.retriever.meta
    passages = [{"id": i, "title": meta[i].get("title") or "", "body": meta[i]["body"]} for i in base["sent"]]
    out = rag.answer(q["question"], passages, None, **{**reader.knobs, "gate": None, "sink": None, "on_event": None})
    return {**_record("copy", q, out), "gate": base["gate"], "hits": base["hits"]}


def run_folder(systems, *, limit=None) -> None:
    """The folder's questions, every one (the folder is not tuned on: it is reported, never decided on)."""
    from rungs.model import default_client

    questions = interleaved(load_questions(FOLDER / "questions.jsonl"))[:limit]
    done = stored(FOLDER_LOG)
    reader_for, client = _folder_readers(), default_client() if set(systems) - {"copy"} else None
    with FOLDER_LOG.open("a", encoding="utf-8") as log:
        for system in systems:
            todo = [q for q in questions if (system, q["id"]) not in done]
            for n, q in enumerate(todo, 1):
                r = copied_folder(q, reader_for, done) if system == "copy" else ask_folder(system, q, reader_for, client)
                log.write(json.dumps(r, ensure_ascii=False) + "\n")
                log.flush()
                done[system, q["id"]] = r  # « copy » later in this run reads pointing-lead's line just written
                print(f"folder {system} {q['id']} {n}/{len(todo)} {r['status']:<11} gate {(r['gate'] or {}).get('p')} "
                      f"{r['cost']['seconds']:.1f} s", flush=True)


# ---------------------------------------------------------------- marks, from the stored runs only

def mark(r, q) -> dict:
    """One stored answer marked now (the lab's mark), in the shape bench_modes.measures reads."""
    shown = r["status"] in ("answered", "no answer")
    m = answers.score_answer(r["text"] if shown else None, q, r["cited"] if r["status"] == "answered" else [])
    m["unsupported_shown"] = r["status"] == "answered" and (
        r["system"] == "closed-book" and bool(r["figures"] or _has_figure(r["text"]))
        or any(not f["held_by"] for f in r["figures"]))
    m["refused"] = r["status"] in ("refused", "unavailable")
    m["seconds"] = r["cost"]["seconds"]
    m["tokens_in"] = r["cost"]["evaluated_tokens"] + r["cost"]["reused_tokens"]
    m["tokens_out"], m["repairs"] = r["cost"]["output_tokens"], 0
    m["reused"] = r["cost"]["reused_tokens"]
    m["p"] = (r.get("gate") or {}).get("p")
    return m


def _has_figure(text: str) -> bool:
    from rungs.grounding import figures

    return bool(figures.figures(text or ""))


def gated(m: dict, t: float) -> dict:
    """The same answer behind the gate at threshold ``t``: « je ne sais pas » where P(yes) < t."""
    if not below(m["p"], t):  # the one rule (rungs.grounding.cut); a P not read keeps the answer
        return m
    return {**m, "abstained": True, "correct": not m["answerable"], "correct_and_cited": not m["answerable"],
            "citation_precision": None, "citation_recall": None, "unsupported_shown": False, "refused": False}


def with_gates(marks: dict, systems, gates) -> dict:
    """Each system behind the gate at each threshold, read from its stored answers: « NAME, gate T » → marks."""
    return {f"{s}, gate {t:.1f}": {q: gated(m, t) for q, m in marks[s].items()} for t in gates for s in systems}


def marks_of(done, questions) -> dict:
    by_q = {q["id"]: q for q in questions}
    out = {}
    for (system, qid), r in done.items():
        if qid in by_q:
            out.setdefault(system, {})[qid] = mark(r, by_q[qid])
    return out


def choose(marks, questions) -> dict:
    """The default among mode × gate threshold, by the protocol: cross-validated on the deciding half."""
    pool = [{**q, "relevant": {"(every question counts)": 1}} for q in questions]  # unanswerable ones too
    decide, _ = halves(questions)
    assert [q["id"] for q in tuning.halves(pool, seed=0)[0]] == decide  # the same halves as the report's
    by_text = {q["question"]: q["id"] for q in questions}
    run_fn = lambda text, system, gate: gated(marks[system][by_text[text]], gate)
    grid = {"system": [c for c in CHOICES if c in marks and all(q in marks[c] for q in decide)],
            "gate": list(THRESHOLDS)}
    default = {"system": "pointing-lead", "gate": 0.0}
    right = {"right": lambda m, relevant: float(m["correct"])}
    out = tuning.choose(grid, run_fn, pool, default=default, metric="right", metrics=right, final=False)
    return {k: out[k] for k in ("best", "kept_default", "sweep_best", "default", "cv")} | {
        "sweep": out["sweep"].to_dict("records")}


def gate_auc(marks: dict) -> float | None:
    """How well P(yes) orders answerable above unanswerable questions: the chance that an answerable one drawn
    at random gets a higher P(yes) than an unanswerable one (ties count half; 0.5 is chance, 1 a perfect order)."""
    from rungs.lab.selective import auc  # the collection's one AUC

    said = [m for m in marks.values() if m["p"] is not None]
    return auc([m["p"] for m in said], [m["answerable"] for m in said]) if said else None


def threshold_table(marks, questions, system="pointing-lead") -> list[dict]:
    """Precision and recall of « answerable » at each threshold of P(yes), from stored probabilities."""
    rows = []
    for t in THRESHOLDS[1:]:
        said = [qid for qid, m in marks[system].items() if passes(m["p"], t)]
        answerable = [qid for qid, m in marks[system].items() if m["answerable"]]
        rows.append({"threshold": t, "passes": len(said),
                     "precision": sum(marks[system][q]["answerable"] for q in said) / len(said) if said else None,
                     "recall": sum(q in said for q in answerable) / len(answerable) if answerable else None})
    return rows


def summarise() -> dict:
    """The summary of the stored runs, written to results/abstain.json."""
    out = summary()
    SUMMARY.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return out


def summary() -> dict:
    """Every mark, measure, choice and paired test, computed from the stored runs alone (no model)."""
    import bench_modes

    questions = load_questions()
    marks = marks_of(stored(), questions)
    decide, report = halves(questions)
    out = {"halves": {"decide": len(decide), "report": len(report)}, "goal": GOAL, "systems": {}, "paired": {}}
    complete = all(s in marks and all(q in marks[s] for q in decide) for s in ("pointing-lead", "free"))
    # (the protocol chooses among the modes run on the whole deciding half; pointing-lead and free at least)
    out["complete"] = {s: len(marks.get(s, {})) for s in SYSTEMS}
    if complete:  # the protocol needs every question of the deciding half, in both modes
        out["choice"] = choose(marks, questions)
        best = out["choice"]["best"]
        name = best["system"] if best["gate"] == 0.0 else f"{best['system']}, gate {best['gate']:.1f}"
        marks.setdefault(name, {q: gated(m, best["gate"]) for q, m in marks[best["system"]].items()})
        runner_up = out["choice"]["sweep_best"]["gate"]  # the sweep's favourite, shown: the test kept the default
        shown_gates = sorted({0.3, 0.5, runner_up} - {0.0})  # the gate at fixed thresholds, to show what it does
        ran = [c for c in CHOICES if c in marks and all(q in marks[c] for q in decide)]
        marks |= {n: m for n, m in with_gates(marks, ran, shown_gates).items() if n not in marks}  # the choice's kept
        own = [s for s in CHOICES if s in marks and s not in COPIES]  # a copy's gate is its model's: not again
        out["thresholds"] = {s: threshold_table(marks, questions, s) for s in own}
        out["gate_auc"] = {s: gate_auc(marks[s]) for s in own}
        out["chosen"] = name
    for system, m in marks.items():
        out["systems"][system] = {half: bench_modes.measures([m[q] for q in ids if q in m])
                                  for half, ids in (("decide", decide), ("report", report), ("all", decide + report))}
    base = marks.get("pointing-lead")
    for system, m in marks.items():
        if base is not None and system != "pointing-lead":
            out["paired"][system] = {half: bench_modes.paired(base, m, ids)
                                     for half, ids in (("decide", decide), ("report", report), ("all", decide + report))}
    out["paired_floor"] = {floor: {half: bench_modes.paired(marks[model], marks[floor], ids)
                                   for half, ids in (("decide", decide), ("report", report), ("all", decide + report))}
                           for floor, model in COPIES.items() if floor in marks and model in marks}
    folder = marks_of(stored(FOLDER_LOG), load_questions(FOLDER / "questions.jsonl")) if FOLDER_LOG.exists() else {}
    out["folder"], out["folder_paired"] = summarise_folder(folder, shown_gates if complete else ())
    out["folder_blind"] = blind_agreement(folder.get("pointing-lead", {}))
    return json.loads(json.dumps(out, ensure_ascii=False))  # as the file holds it (tuples become lists)


def summarise_folder(folder: dict, gates=()) -> tuple[dict, dict]:
    """The folder's questions (``folder``: their marks, system by system), and behind the gate at the handbook's
    shown thresholds with each one's paired test against the system without it: reported only (nothing is chosen
    on the folder)."""
    import bench_modes

    ids = [q["id"] for q in load_questions(FOLDER / "questions.jsonl")]
    # Only a system that answered every question is a column: a share over another set would not compare.
    run = {s: m for s, m in folder.items() if len(m) == len(ids)}
    marks = run | with_gates(run, run, gates)  # thresholds read off the handbook's runs, never off the folder's
    paired = {name: bench_modes.paired(run[name.split(",")[0]], m, ids) for name, m in marks.items() if name not in run}
    if "copy" in run and "pointing-lead" in run:  # the floor against the model, on the folder too
        paired["copy − pointing-lead"] = bench_modes.paired(run["pointing-lead"], run["copy"], ids)
    out = {system: bench_modes.measures(list(m.values())) for system, m in marks.items()}
    for system in (s for s in run if s not in COPIES):  # the gate's separation, as on the handbook: one a system
        out[system]["gate_auc"] = gate_auc(run[system])
    return out, paired


def blind_agreement(marks: dict, system: str = "pointing-lead") -> dict:
    """The mark (``marks``: ``system``'s on the folder) against the blind reader: right or not, question by
    question, and Cohen's κ."""
    if not (FOLDER_BLIND.exists() and marks):
        return {}
    read = {r["id"]: r["verdict"] for r in map(json.loads, FOLDER_BLIND.read_text(encoding="utf-8").splitlines())}
    ids = sorted(set(read) & set(marks))
    mark, human = [bool(marks[q]["correct"]) for q in ids], [read[q] in ("RIGHT", "IDK_OK") for q in ids]
    n, agree = len(ids), sum(a == b for a, b in zip(mark, human))
    return {"system": system, "n": n, "agree": agree, "kappa": kappa(mark, human),
            "right_by_mark": sum(mark), "right_by_reader": sum(human),
            "verdicts": {v: sum(1 for q in ids if read[q] == v) for v in sorted(set(read[q] for q in ids))},
            "disagree": [{"id": q, "mark": "right" if m else "not right", "reader": read[q]}
                         for q, m, h in zip(ids, mark, human) if m != h]}


#: The rows of the README's tables: the measure, its label, and whether it is a share (with a Wilson interval).
ROWS = (("right", "right (all)", "n"), ("right_answerable", "right, answerable", "answerable"),
        ("idk_unanswerable", "« je ne sais pas », unanswerable", "unanswerable"),
        ("wrong_idk", "wrong « je ne sais pas » (answerable)", "answerable"),
        ("citation_precision", "citation precision (answerable, cited)", None),
        ("unsupported_shown", "answers shown with an unsupported figure", None),
        ("seconds_median", "seconds per answer (median)", None))


def _share(m: dict, key: str, base: str | None, counts: dict) -> str:
    """A share with its 95 % Wilson interval where its denominator is a count of questions; « — » when undefined."""
    from rungs.lab.metrics import wilson

    v = m.get(key)
    if v is None:
        return "—"
    if key == "unsupported_shown":
        return str(v)
    if key == "seconds_median":
        return f"{v:.1f}"
    if base is None:
        return f"{v:.3f}"
    n = counts[base]
    lo, hi = wilson(round(v * n), n)
    return f"{v:.3f} [{lo:.2f}, {hi:.2f}]"


def table(systems: dict, names: list[str], counts: dict) -> list[str]:
    lines = ["| | " + " | ".join(names) + " |", "| --- |" + " ---: |" * len(names)]
    for key, label, base in ROWS:
        lines.append(f"| {label} | " + " | ".join(_share(systems[n], key, base, counts[n]) for n in names) + " |")
    return lines


def readme(out: dict) -> str:
    """Both halves' tables: the deciding half (the choice), then the reporting half (the choice reported once)."""
    return tables(out, "decide") + "\n" + tables(out, "report")


def tables(out: dict, half: str = "decide") -> str:
    """The markdown of benchmarks/README.md's « Knowing when not to answer », from results/abstain.json only."""
    questions = {q["id"]: q for q in load_questions()}
    decide, report = halves(list(questions.values()))
    ids = {"decide": decide, "report": report, "all": decide + report}[half]
    kinds = lambda names_: {n: {"n": out["systems"][n][half]["n"],
                                "answerable": sum(1 for q in ids if questions[q]["kind"] != "unanswerable"),
                                "unanswerable": sum(1 for q in ids if questions[q]["kind"] == "unanswerable")}
                            for n in names_}
    run = [n for n in ("closed-book", "oracle-pointing-lead", "oracle-copy", "pointing-lead", "copy", "free",
                       "pointing-lead-norule")
           if out["systems"].get(n, {}).get(half, {}).get("n") == len(ids)]
    gated = [n for n in out["systems"] if ", gate " in n and n.split(",")[0] in run]
    lines = [f"\n**{half} half, {len(ids)} questions** (every system on every question; 95 % Wilson intervals)\n"]
    lines += table({n: out["systems"][n][half] for n in run + gated}, run + gated, kinds(run + gated))
    if "choice" in out and half == "decide":
        c = out["choice"]
        lines += ["", f"The protocol (`tuning.choose`, cross-validated on the deciding half, the default kept unless a "
                      f"gain passes the corrected test) chose **{c['best']['system']}, gate {c['best']['gate']:.1f}** "
                      f"({'the default kept' if c['kept_default'] else 'a change from the default'}; the sweep's best "
                      f"was {c['sweep_best']['system']}, gate {c['sweep_best']['gate']:.1f})."]
    # Paired tables for the other mode, the sweep's favourite and the choice only: the rest are in the table above.
    shown = {"free", "closed-book", "oracle-pointing-lead", "copy", "oracle-copy"}
    if "choice" in out:
        sweep_best = out["choice"]["sweep_best"]
        shown |= {out["chosen"], f"{sweep_best['system']}, gate {sweep_best['gate']:.1f}"}
    for name, halves_ in out["paired"].items():
        tests = halves_.get(half) or {}
        if name not in shown or name.split(",")[0] not in run or not tests:
            continue
        base = COPIES.get(name, "pointing-lead")  # a copy against the model it copies from, on the same passages
        tests = (out.get("paired_floor", {}).get(name) or {}).get(half) or tests if name in COPIES else tests
        lines += paired_table(f"{name} − {base}", tests, {k: label for k, label, _ in ROWS})
    for system, rows in out.get("thresholds", {}).items():
        if system not in run:
            continue
        auc = (out.get("gate_auc") or {}).get(system)
        lines += [f"\nThe gate on {system}'s passages: « answerable » said when P(yes) ≥ threshold "
                  f"(all {out['complete'][system]} stored answers"
                  + (f"; P(yes) orders an answerable question above an unanswerable one with a chance of "
                     f"{auc:.2f}, 0.5 being none" if auc is not None else "") + ")\n",
                  "| threshold | passes | precision | recall |", "| ---: | ---: | ---: | ---: |"]
        lines += [f"| {r['threshold']:.1f} | {r['passes']} | "
                  + " | ".join("—" if r[k] is None else f"{r[k]:.3f}" for k in ("precision", "recall")) + " |"
                  for r in rows]
    if out.get("folder") and half == "report":  # reported once, under the reporting half
        folder = load_questions(FOLDER / "questions.jsonl")
        names = list(out["folder"])
        counts = {n: {"n": out["folder"][n]["n"],
                      "answerable": sum(1 for q in folder if q["kind"] != "unanswerable"),
                      "unanswerable": sum(1 for q in folder if q["kind"] == "unanswerable")} for n in names}
        lines += [f"\n**benchmarks/folder, {len(folder)} questions** (`python -m rungs ask`'s reader; the gate at "
                  "the handbook's thresholds, read from the same stored answers; reported only, nothing chosen on "
                  "it)\n"] + table(out["folder"], names, counts)
        aucs = [f"{n} {out['folder'][n]['gate_auc']:.2f}" for n in names if out["folder"][n].get("gate_auc") is not None]
        if aucs:
            lines += ["", "On the folder, P(yes) orders an answerable question above an unanswerable one with a chance "
                          "of " + ", ".join(aucs) + " (0.5 being none)."]
        if out.get("folder_blind"):
            b = out["folder_blind"]
            lines += ["", f"The mark against a blind reading ({b['system']}'s {b['n']} answers read against the files "
                          f"by a reader who wrote neither the questions nor the mark, `results/abstain_folder_blind.jsonl`): "
                          f"right or not, the same on {b['agree']} of {b['n']} (Cohen's κ {b['kappa']:.2f}); right "
                          f"{b['right_by_mark']} by the mark, {b['right_by_reader']} by the reader; the reader's verdicts "
                          + ", ".join(f"{k} {v}" for k, v in b["verdicts"].items()) + "; where they differ: "
                          + ", ".join(f"{d['id']} (mark {d['mark']}, reader {d['reader']})" for d in b["disagree"]) + "."]
        favourite = out.get("choice", {}).get("sweep_best", {})
        for name, tests in out.get("folder_paired", {}).items():  # the handbook's favourite and the floor, as above
            if name == "copy − pointing-lead":
                lines += paired_table(f"folder: {name}", tests, {k: label for k, label, _ in ROWS})
            elif name == f"{favourite.get('system')}, gate {favourite.get('gate', 0):.1f}":
                lines += paired_table(f"folder: {name} − {name.split(',')[0]}", tests,
                                      {k: label for k, label, _ in ROWS})
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("what", choices=("run", "summary", "tables"))
    p.add_argument("--half", choices=("decide", "report", "all"), default="all")
    p.add_argument("--systems", nargs="+", choices=SYSTEMS, default=list(SYSTEMS))
    p.add_argument("--limit", type=int)
    p.add_argument("--collection", choices=("handbook", "folder"), default="handbook")
    a = p.parse_args(argv)
    if a.what == "run":
        run(a.systems, half=a.half, limit=a.limit, collection=a.collection)
    elif a.what == "summary":
        out = summarise()
        print(json.dumps({k: out[k] for k in ("halves", "choice") if k in out}, indent=1, ensure_ascii=False,
                         default=str)[:4000])
    else:
        print(readme(json.loads(SUMMARY.read_text(encoding="utf-8"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())

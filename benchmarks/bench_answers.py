"""N3 over every question: how often is the answer right, for a handful of configurations?

Each of the handbook's 155 questions is answered by `rungs.rag` with the real
model, and each answer is marked against its reference by `answers.score_answer`
(the key facts, after normalisation; « je ne sais pas » is right exactly where
no page answers). Configurations, one knob changed at a time from notebook 03's:

    notebook 03   the answer retriever (hybrid.answer_retriever), 4 passages, the no-answer rule, PROMPT
    bm25          BM25 alone (any word, stop words out) instead of the hybrid
    2 passages    the 2 best instead of 4
    no rule       without the sentence that asks for « je ne sais pas »
    rewritten     rag.PROMPT_REWRITTEN instead of rag.PROMPT

Then N4 checks N3 (`judges.support`, a logprob yes/no): for every answer of the
notebook's configuration that is not an abstention, does the cited passage
support it? Crossed with right/wrong: what the check buys and what it costs.
And N4 grades N3 (`judges.matches_reference`): does each answer say what the
reference says? Its agreement with the key-fact rule is reported (Cohen's κ).

How far to trust the rule, and the judge: `results/careful_reading.jsonl` holds
150 stored answers drawn at random (30 per configuration) and read one by one
against the question, the reference and the passages by a reader who never saw
the rule or the key facts, with a verdict and a note per answer. The summary
gives the agreement and Cohen's κ of the rule as it stood before it was checked
(`rule_before`, the honest figure); of the rule when the held-out part was
scored (`rule_when_held_scored`: every fix of the « fix » part's disagreements
made, the « held » part's answers not yet looked at — its figure on « held » is
the fair check of the fixed rule); of the rule now (optimistic: every
disagreement it was wrong on, fixed); of « right and cited »; and of N4's judge.

    .venv/bin/python benchmarks/bench_answers.py [--only NAME] [--limit N] [--summary]
    .venv/bin/python benchmarks/bench_answers.py --modes pointing-lead [--half decide|report|all]

``--modes`` runs N3's modes (``bench_modes.py``: pointing, pointing-lead, quoted, free) into
results/answers_modes.jsonl, the deciding half of the questions first (a rerun resumes); ``--summary``
marks every stored answer again with the mark as it is now — the older configurations' and the modes' —
and writes results/answers.json and results/answers_modes.json, without a model.

Results are appended per answer to benchmarks/results/answers.jsonl (a rerun
resumes where it stopped; delete the file to start again) and summed up in
benchmarks/results/answers.json. Cost: one model call per answer (two when the
first reply is refused): about 10–25 s each on one thread of a 2-core laptop.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from rungs import bm25, decide, hybrid, rag# noqa: E402

from rungs.lab import metrics as evaluate

from rungs import model as llm
from rungs.core.errors import RungsError# noqa: E402
from rungs.lab.handbook import load_pages, load_questions# noqa: E402
from rungs.lab import judges
from rungs.lab import answers

import bench_modes  # noqa: E402  (beside this file)

CONFIGS = {
    "notebook 03": {"retriever": "answer", "passages": 4, "no_answer_rule": True, "prompt": "given"},
    "bm25": {"retriever": "bm25", "passages": 4, "no_answer_rule": True, "prompt": "given"},
    "2 passages": {"retriever": "answer", "passages": 2, "no_answer_rule": True, "prompt": "given"},
    "no rule": {"retriever": "answer", "passages": 4, "no_answer_rule": False, "prompt": "given"},
    "rewritten": {"retriever": "answer", "passages": 4, "no_answer_rule": True, "prompt": "rewritten"},
}
PROMPTS = {"given": rag.PROMPT, "rewritten": rag.PROMPT_REWRITTEN}
#: The rung these configurations were run with (results/answers.jsonl): the free answer and the ids it cites,
#: before the claim checks, over extracts named as the handbook's — ``bench_modes``' « free », which reads these
#: rows as its own. An unavailable or refused answer is stored as the error that says why
#: (``Answer.raise_for_status``), no answer shown.
RUNG = {"mode": "free", "check_figures": False, "collection": rag.HANDBOOK}
LOG = HERE / "results" / "answers.jsonl"
SUMMARY = HERE / "results" / "answers.json"
READING = HERE / "results" / "careful_reading.jsonl"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", action="append", choices=list(CONFIGS) + ["support", "judge"])
    p.add_argument("--limit", type=int, default=None, help="the first N questions only (a quick look)")
    p.add_argument("--summary", action="store_true", help="no model call: mark the stored answers again and sum up")
    p.add_argument("--modes", nargs="+", choices=list(bench_modes.MODES),
                   help="run N3's modes (pointing, quoted, free) into results/answers_modes.jsonl")
    p.add_argument("--half", choices=("decide", "report", "all"), default="all",
                   help="with --modes: the deciding half, the reporting half, or both (deciding first)")
    a = p.parse_args(argv)
    if a.modes and not a.summary:
        bench_modes.run(a.modes, load_questions(), load_pages(), llm.default_client(), half=a.half, limit=a.limit)
        return 0
    pages, questions = load_pages(), load_questions()[: a.limit]
    by_id = {pg["id"]: pg for pg in pages}
    retrievers = {"answer": hybrid.answer_retriever(pages), "bm25": bm25.build_index(pages, stopwords=True)}
    client = llm.default_client()
    done = {}
    if LOG.exists():
        for line in LOG.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            done[r["config"], r["id"]] = r
    LOG.parent.mkdir(exist_ok=True)
    if a.summary:
        bench_modes.summarise(questions, pages)
        summarise(questions, done)
        # The log too, marked again and one line per answer, so that what reads it (notebooks 03 and 04, their
        # exercises) agrees with the summary. Only with --summary: a run in progress may still be appending.
        tmp = LOG.with_suffix(".tmp")
        tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in done.values()), encoding="utf-8")
        tmp.replace(LOG)
        return 0
    names = [n for n in CONFIGS if not a.only or n in a.only]
    with LOG.open("a", encoding="utf-8") as log:
        for name in names:
            c = CONFIGS[name]
            started = time.perf_counter()
            for i, q in enumerate(questions, 1):
                if (name, q["id"]) in done:
                    continue
                hits = retrievers[c["retriever"]].search(q["question"], limit=c["passages"])
                record = {"config": name, "id": q["id"], "sent": [h.id for h in hits]}
                try:
                    out = rag.answer(q["question"], [by_id[h.id] for h in hits], client, **RUNG,
                                     max_passages=c["passages"], no_answer_rule=c["no_answer_rule"],
                                     prompt=PROMPTS[c["prompt"]]).raise_for_status()
                    record.update(answer=out.text, sources=list(out.cited), calls=out.cost.calls,
                                  seconds=round(out.cost.seconds, 2), error=None)
                except RungsError as err:  # refused by the rung: the learner sees a named error, not an answer
                    record.update(answer=None, sources=[], calls=None, seconds=None,
                                  error=f"{type(err).__name__}: {str(err)[:200]}")
                record.update(answers.score_answer(record["answer"], q, record["sources"]))
                log.write(json.dumps(record, ensure_ascii=False) + "\n")
                log.flush()
                done[name, q["id"]] = record
                if i % 10 == 0:
                    print(f"{name}: {i}/{len(questions)} ({time.perf_counter() - started:.0f} s)", flush=True)
        if not a.only or "support" in a.only:
            for q in questions:
                r = done.get(("notebook 03", q["id"]))
                if not r or r["abstained"] or r.get("support") is not None or not r["sources"]:
                    continue
                cited = [by_id[s] for s in r["sources"]]
                try:
                    s = judges.support(q["question"], r["answer"], cited, client)
                    r["support"] = {"p": s["p"], "supported": s["supported"]}
                except RungsError as err:
                    r["support"] = {"p": None, "supported": None, "error": f"{type(err).__name__}"}
                log.write(json.dumps({**r, "config": "notebook 03"}, ensure_ascii=False) + "\n")
                log.flush()
        if not a.only or "judge" in a.only:
            # A second opinion on the key-fact rule: N4 asked whether each answer says what the reference says.
            for q in questions:
                r = done.get(("notebook 03", q["id"]))
                if not r or r.get("judge") is not None or not q["relevant"] or r["abstained"]:
                    continue
                try:
                    j = judges.matches_reference(q["question"], r["answer"], q["answer"], client)
                    r["judge"] = {"p": j["p"], "same": j["same"]}
                except RungsError as err:
                    r["judge"] = {"p": None, "same": None, "error": f"{type(err).__name__}"}
                log.write(json.dumps({**r, "config": "notebook 03"}, ensure_ascii=False) + "\n")
                log.flush()
    summarise(questions, done)
    return 0


def summarise(questions, done) -> None:
    # Marked again from the stored answers, with the answer key as it is now: a better key needs no model run.
    by_q = {q["id"]: q for q in questions}
    for (name, qid), r in done.items():
        if qid in by_q:
            r.update(answers.score_answer(r["answer"], by_q[qid], r["sources"]))
    rows = {}
    for name in CONFIGS:
        scored = [done[name, q["id"]] for q in questions if (name, q["id"]) in done]
        if not scored:
            continue
        report = answers.answer_report(scored)
        report["errors"] = sum(1 for s in scored if s.get("error"))
        # What retrieval handed the model: a page that answers (grade 2) among those sent, and what became of it.
        sent = [(s, by_q[s["id"]]) for s in scored if by_q[s["id"]]["relevant"]]
        answering = [s for s, q in sent if any(q["relevant"].get(p, 0) >= 2 for p in s.get("sent", []))]
        report["answering_page_sent"] = len(answering)
        report["answering_page_sent_share"] = len(answering) / len(sent) if sent else None
        report["answering_page_sent_but_wrong"] = sum(1 for s in answering if not s["correct"])
        secs = sorted(s["seconds"] for s in scored if s.get("seconds"))
        report["median_seconds"] = secs[len(secs) // 2] if secs else None
        rows[name] = report
    print(f"\n{'configuration':<14} {'n':>4} {'right':>6} {'right, cited':>13} {'right (answerable)':>19} "
          f"{'abstains: wrongly':>18} {'rightly':>8} {'cit. prec.':>10} {'errors':>7}")
    for name, r in rows.items():
        print(f"{name:<14} {r['answers']:>4} {r['accuracy']:>6.3f} {r['correct_and_cited']:>13.3f} "
              f"{r['correct_answerable']:>19.3f} {r['abstained_when_answerable']:>18.3f} "
              f"{r['abstained_when_unanswerable'] or 0:>8.3f} {r['citation_precision'] or 0:>10.3f} {r['errors']:>7}")
    print("\na page that answers among those sent (answerable questions), and how many of those answers were wrong:")
    for name, r in rows.items():
        print(f"  {name:<12} {r['answering_page_sent']:>4} of {r['answerable']} ({r['answering_page_sent_share']:.3f}), "
              f"wrong anyway {r['answering_page_sent_but_wrong']}")
    # Paired comparison of each configuration with notebook 03's, question by question (right = 1).
    base = {q["id"]: float(done["notebook 03", q["id"]]["correct"]) for q in questions if ("notebook 03", q["id"]) in done}
    tests = {}
    for name in rows:
        if name == "notebook 03":
            continue
        other = {qid: float(done[name, qid]["correct"]) for qid in base if (name, qid) in done}
        if set(other) == set(base):
            tests[name] = evaluate.paired_test(base, other)
    if tests:
        adjusted = evaluate.holm({n: t["p"] for n, t in tests.items()})
        print("\nagainst notebook 03 (share of questions answered right, paired):")
        for name, t in tests.items():
            verdict = ("better" if t["diff"] > 0 else "worse") if adjusted[name] < 0.05 else "no measurable difference"
            print(f"  {name:<12} {t['diff']:+.3f} [{t['ci95'][0]:+.3f}, {t['ci95'][1]:+.3f}]  p {evaluate.p_text(t['p'])}  "
                  f"Holm {evaluate.p_text(adjusted[name])}  {t['improved']} better / {t['degraded']} worse  {verdict}")
            rows[name]["vs_notebook"] = {**t, "p_holm": adjusted[name], "verdict": verdict}
    checked = [done["notebook 03", q["id"]] for q in questions if ("notebook 03", q["id"]) in done
               and (done["notebook 03", q["id"]].get("support") or {}).get("supported") is not None]
    support = None
    if checked:
        table = {(r["correct"], r["support"]["supported"]): 0 for r in checked}
        cells = {f"{'right' if right else 'wrong'}, {'supported' if sup else 'flagged'}":
                 sum(1 for r in checked if r["correct"] == right and r["support"]["supported"] == sup)
                 for right in (True, False) for sup in (True, False)}
        del table
        support = {"checked": len(checked), "cells": cells,
                   "unsure": sum(1 for q in questions if (done.get(("notebook 03", q["id"])) or {}).get("support")
                                 and done["notebook 03", q["id"]]["support"].get("supported") is None)}
        print(f"\nN4 checks N3 (P(supported) < 0.5 → flagged), {len(checked)} answers that were not « je ne sais pas »:")
        print(f"                 supported  flagged")
        print(f"  right answers  {cells['right, supported']:>9}  {cells['right, flagged']:>7}")
        print(f"  wrong answers  {cells['wrong, supported']:>9}  {cells['wrong, flagged']:>7}")
        from scipy.stats import fisher_exact
        odds, p = fisher_exact([[cells["wrong, flagged"], cells["wrong, supported"]],
                                [cells["right, flagged"], cells["right, supported"]]])
        support.update(fisher_p=float(p), odds_ratio=float(odds))
        print(f"  a flag against a wrong answer: Fisher's exact test p = {evaluate.p_text(p)}, odds ratio {odds:.2f}")
    judged = [done["notebook 03", q["id"]] for q in questions if ("notebook 03", q["id"]) in done
              and (done["notebook 03", q["id"]].get("judge") or {}).get("same") is not None]
    judge = None
    if judged:
        cells = {f"rule {'right' if rule else 'wrong'}, judge {'same' if same else 'different'}":
                 sum(1 for r in judged if r["correct"] == rule and r["judge"]["same"] == same)
                 for rule in (True, False) for same in (True, False)}
        agree = cells["rule right, judge same"] + cells["rule wrong, judge different"]
        n = len(judged)
        p_rule = sum(r["correct"] for r in judged) / n
        p_judge = sum(r["judge"]["same"] for r in judged) / n
        expected = p_rule * p_judge + (1 - p_rule) * (1 - p_judge)
        kappa = (agree / n - expected) / (1 - expected) if expected < 1 else 1.0
        judge = {"checked": n, "cells": cells, "agreement": agree / n, "kappa": kappa}
        print(f"\nthe key-fact rule against N4's judge (same as the reference?), {n} answers:")
        print(f"                 judge: same  different")
        print(f"  rule: right    {cells['rule right, judge same']:>11}  {cells['rule right, judge different']:>9}")
        print(f"  rule: wrong    {cells['rule wrong, judge same']:>11}  {cells['rule wrong, judge different']:>9}")
        print(f"  agreement {agree / n:.3f}, Cohen's kappa {kappa:.3f}")
    reading = careful_reading(done) if READING.exists() else None
    SUMMARY.write_text(json.dumps({"configs": CONFIGS, "rows": rows, "support": support, "judge": judge,
                                   "careful_reading": reading,
                                   "model": llm.default_client().model}, indent=1, ensure_ascii=False, default=str)
                       + "\n", encoding="utf-8")


def agreement(pairs: list[tuple[bool, bool]]) -> dict:
    """Two marks of the same answers: how often they agree, and Cohen's κ (agreement beyond chance)."""
    n = len(pairs)
    if not n:
        return {"n": 0, "agreement": None, "kappa": None}
    agree = sum(a == b for a, b in pairs) / n
    p_a, p_b = sum(a for a, _ in pairs) / n, sum(b for _, b in pairs) / n
    expected = p_a * p_b + (1 - p_a) * (1 - p_b)
    return {"n": n, "agreement": agree, "kappa": (agree - expected) / (1 - expected) if expected < 1 else 1.0,
            "both right": sum(a and b for a, b in pairs), "both wrong": sum(not a and not b for a, b in pairs),
            "only the mark right": sum(a and not b for a, b in pairs),
            "only the reader right": sum(b and not a for a, b in pairs)}


def careful_reading(done: dict) -> dict:
    """The rule, « right and cited » and N4's judge held against the careful reading of 150 stored answers."""
    items = [json.loads(line) for line in READING.read_text(encoding="utf-8").splitlines() if line.strip()]
    reader = {i["sample_id"]: i["verdict"] in ("right", "right_abstention") for i in items}
    cited_right = {i["sample_id"]: reader[i["sample_id"]] and (i["verdict"] == "right_abstention"
                                                                 or bool(i["supported_by_citation"])) for i in items}
    mark = {i["sample_id"]: done[i["config"], i["id"]] for i in items}
    out = {}
    for part in ("all", "fix", "held"):
        chosen = [i for i in items if part == "all" or i["part"] == part]
        out[part] = {"rule before": agreement([(i["rule_before"], reader[i["sample_id"]]) for i in chosen]),
                     "rule when held scored": agreement([(i["rule_when_held_scored"], reader[i["sample_id"]])
                                                         for i in chosen]),
                     "rule now": agreement([(mark[i["sample_id"]]["correct"], reader[i["sample_id"]]) for i in chosen]),
                     "right and cited": agreement([(mark[i["sample_id"]]["correct_and_cited"], cited_right[i["sample_id"]])
                                                   for i in chosen])}
    judged = [i for i in items if (mark[i["sample_id"]].get("judge") or {}).get("same") is not None]
    out["judge"] = agreement([(mark[i["sample_id"]]["judge"]["same"], reader[i["sample_id"]]) for i in judged])
    out["rule, where the judge answered"] = agreement([(mark[i["sample_id"]]["correct"], reader[i["sample_id"]])
                                                       for i in judged])
    out["disagreements now"] = [{"sample_id": i["sample_id"], "id": i["id"], "config": i["config"], "part": i["part"],
                                 "rule": mark[i["sample_id"]]["correct"], "reader": i["verdict"]}
                                for i in items if mark[i["sample_id"]]["correct"] != reader[i["sample_id"]]]
    print(f"\nthe mark against a careful reading of {len(items)} stored answers (agreement, Cohen's κ):")
    for part in ("all", "fix", "held"):
        for name, a in out[part].items():
            print(f"  {part:<4} {name:<21} n {a['n']:>3}  agreement {a['agreement']:.3f}  κ {a['kappa']:.3f}")
    for name in ("judge", "rule, where the judge answered"):
        a = out[name]
        print(f"  {name:<35} n {a['n']:>3}  agreement {a['agreement']:.3f}  κ {a['kappa']:.3f}")
    return out


if __name__ == "__main__":
    sys.exit(main())

"""The mark checked against a careful reading: 72 stored answers read blind, held against ``score_answer``.

A fresh sample (seed 20261203) of stored answers — 22 whose reference opens « Oui » or « Non », 16 whose
lead-in states a figure, 20 from ``benchmarks/folder``, 14 others (abstentions, unanswerable questions,
the free mode), from ``results/abstain.jsonl`` and ``results/abstain_folder.jsonl`` — was shown to a
careful reader who wrote neither the questions nor the mark, exactly as a user sees each answer
(``results/mark_check_shown.jsonl``: the question, the reference answer, the answer shown, the passages
cited), never the mark's verdict. The reader graded each RIGHT, PARTLY, WRONG, IDK_OK, IDK_WRONG or
ANSWERED_UNANSWERABLE with a reason (``results/mark_check.jsonl``, beside which stored answer it was).
This script marks the same stored answers with today's mark and counts the agreement (right = RIGHT
or IDK_OK), Cohen's κ, per stratum, and lists every disagreement.

    .venv/bin/python benchmarks/mark_check.py      # writes results/mark_check.json

Cost: reading the stored runs; no model.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from rungs.lab import answers  # noqa: E402
from rungs.lab.handbook import load_questions  # noqa: E402
from rungs.lab.metrics import kappa  # noqa: E402

READING = HERE / "results" / "mark_check.jsonl"
RESULT = HERE / "results" / "mark_check.json"
RUNS = {"handbook": HERE / "results" / "abstain.jsonl", "folder": HERE / "results" / "abstain_folder.jsonl"}
QUESTIONS = {"handbook": None, "folder": HERE / "folder" / "questions.jsonl"}


def _stored() -> dict:
    rows = {}
    for collection, path in RUNS.items():
        for line in path.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            rows[collection, r["system"], r["id"]] = r
    return rows


def check() -> dict:
    reading = [json.loads(line) for line in READING.read_text(encoding="utf-8").splitlines()]
    questions = {c: {q["id"]: q for q in load_questions(p)} for c, p in QUESTIONS.items()}
    stored, out = _stored(), []
    for item in reading:
        r, q = stored[item["collection"], item["system"], item["id"]], questions[item["collection"]][item["id"]]
        shown = r["status"] in ("answered", "no answer")
        m = answers.score_answer(r["text"] if shown else None, q, r["cited"] if r["status"] == "answered" else [])
        out.append({**item, "mark": bool(m["correct"]), "reader": item["verdict"] in ("RIGHT", "IDK_OK")})
    summary = {"n": len(out), "agree": sum(o["mark"] == o["reader"] for o in out),
               "kappa": kappa([o["mark"] for o in out], [o["reader"] for o in out]),
               "right_by_mark": sum(o["mark"] for o in out), "right_by_reader": sum(o["reader"] for o in out),
               "verdicts": {v: sum(o["verdict"] == v for o in out) for v in sorted({o["verdict"] for o in out})},
               "strata": {}, "disagree": [{k: o[k] for k in ("item", "collection", "system", "id", "stratum", "mark",
                                                           "verdict", "why")} for o in out if o["mark"] != o["reader"]]}
    for stratum in sorted({o["stratum"] for o in out}):
        rows = [o for o in out if o["stratum"] == stratum]
        summary["strata"][stratum] = {"n": len(rows), "agree": sum(o["mark"] == o["reader"] for o in rows)}
    return summary


if __name__ == "__main__":
    result = check()
    RESULT.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print({k: v for k, v in result.items() if k != "disagree"})
    for d in result["disagree"]:
        print(d)

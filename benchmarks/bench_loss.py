"""Where an answer is lost, stage by stage, from the stored runs: what the reader was shown, then what it made of it.

For each half of the judged questions, over the answerable ones (a page answers them), the share that:

    passages hold        the 4 passages the shipped retriever sent hold every key fact (``sending.what_is_sent``, free)
    sentences hold       the 12 numbered sentences cut from them hold every key fact (pointing-lead's view)
    copy right           « copy » — the 3 best sentences, no model — states every key fact (the collection's mark)
    pointing-lead right  the model's answer does
    judged: …            the same three with the pages judged to answer sent instead (an oracle retriever)
    closed book right    the model with no passage

Each stage can only lose what the one before it held: the gap between two lines is what that stage lost. Read
from ``results/abstain.jsonl`` (the passages each system was sent, its answer) and the handbook's pages; the
sentences are cut again by ``rag.sentences_for`` (the encoder ranks them: deterministic, no model).

    .venv/bin/python benchmarks/bench_loss.py      # writes results/loss.json (no model; the encoder, a minute)

Cost: the encoder's first load, then a few milliseconds a question.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from rungs import rag  # noqa: E402
from rungs.lab import sending  # noqa: E402
from rungs.lab.handbook import load_pages, load_questions  # noqa: E402

import bench_abstain  # noqa: E402
from bench_modes import halves  # noqa: E402

OUT = HERE / "results" / "loss.json"
#: The stages, in the order an answer passes them: (label, system whose stored row is read, what is read).
STAGES = (("the 4 passages sent hold every key fact", "pointing-lead", "passages"),
          ("the 12 sentences shown hold every key fact", "pointing-lead", "sentences"),
          ("copy (3 sentences, no model) right", "copy", "mark"),
          ("pointing-lead (the model) right", "pointing-lead", "mark"),
          ("judged passages: the 4 hold every key fact", "oracle-pointing-lead", "passages"),
          ("judged passages: the 12 sentences hold every key fact", "oracle-pointing-lead", "sentences"),
          ("judged passages: copy right", "oracle-copy", "mark"),
          ("judged passages: pointing-lead right", "oracle-pointing-lead", "mark"),
          ("closed book (no passage) right", "closed-book", "mark"))


def reading(q: dict, row: dict, what: str, by_id: dict) -> bool:
    """One answerable question at one stage: held (what was shown holds every key fact) or right (the mark)."""
    if what == "mark":
        return bool(bench_abstain.mark(row, q)["correct"])
    passages = [by_id[i] for i in row["sent"]]
    if not passages:
        return False
    mode = "free" if what == "passages" else rag.MODEL_MODE  # free sends the passages whole; pointing, 12 sentences
    return bool(sending.what_is_sent(q, passages, mode=mode)["facts_sent"])


def summary() -> dict:
    questions = {q["id"]: q for q in load_questions()}
    by_id = {p["id"]: p for p in load_pages()}
    done = bench_abstain.stored()
    out = {}
    for half, ids in zip(("decide", "report"), halves(list(questions.values()))):
        answerable = [questions[i] for i in ids if questions[i].get("key_facts")]
        out[half] = {"answerable": len(answerable), "stages": {}}
        for label, system, what in STAGES:
            rows = [(q, done.get((system, q["id"]))) for q in answerable]
            shares = [reading(q, row, what, by_id) for q, row in rows if row is not None]
            out[half]["stages"][label] = {"system": system, "share": sum(shares) / len(shares) if shares else None,
                                          "questions": len(shares)}
    return out


if __name__ == "__main__":
    result = summary()
    OUT.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    for half, r in result.items():
        print(f"{half}: {r['answerable']} answerable")
        for label, s in r["stages"].items():
            print(f"  {label:<56} {s['share']:.3f}  ({s['questions']})")

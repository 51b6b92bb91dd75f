"""The folder judged by two: two careful readers' blind judgments of benchmarks/folder's 50 questions, their agreement.

Two readers who wrote none of the questions, saw neither each other's verdicts nor the committed
judgments nor the mark, each read all 50 questions (``folder/judgments/asked.jsonl``: the id and the
question, nothing else) against the text of all 79 files (as ``rungs.yours.readers`` reads them, PDFs
page by page), searching with several wordings, and wrote for each question whether a file answers it,
a grade per file (2 answers, 1 helps), the PDF pages, an answer, verbatim evidence and key facts
(``folder/judgments/judge_A.jsonl``, ``judge_B.jsonl``). This script compares the two readers with each
other, with the judgments as they stood before (``folder/judgments/before.jsonl``) and with the
committed ones (``folder/questions.jsonl``, settled after reading both):
Cohen's κ on « answerable » and on every (question, file) grade any of the three gave, and every
disagreement, listed.

    .venv/bin/python benchmarks/folder_judgments.py     # writes results/folder_judgments.json

Cost: reading three small files; no model, no index.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from rungs.lab.metrics import kappa  # noqa: E402

JUDGMENTS = HERE / "folder" / "judgments"
QUESTIONS = HERE / "folder" / "questions.jsonl"
RESULT = HERE / "results" / "folder_judgments.json"


def _read(path: Path) -> dict:
    rows = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        grades = r["judgments"]
        if isinstance(grades, list):  # one reader wrote [{"file", "grade"}], the other {file: grade}
            grades = {g["file"]: g["grade"] for g in grades}
        answerable = r.get("answerable")
        if answerable is None:  # the committed questions: answerable when a page answers and a reference exists
            answerable = r.get("answer") is not None and any(g > 0 for g in grades.values())
        rows[r["id"]] = {"answerable": bool(answerable), "grades": {f: int(g) for f, g in grades.items() if g}}
    return rows


def agreement() -> dict:
    readers = {"A": _read(JUDGMENTS / "judge_A.jsonl"), "B": _read(JUDGMENTS / "judge_B.jsonl"),
               "before": _read(JUDGMENTS / "before.jsonl"), "committed": _read(QUESTIONS)}
    ids = sorted(readers["committed"])
    assert all(sorted(r) == ids for r in readers.values()), "every reader judged every question"
    pairs = [(q, f) for q in ids for f in sorted(set().union(*(r[q]["grades"] for r in readers.values())))]
    out = {"questions": len(ids), "graded_pairs": len(pairs), "answerable": {n: sum(r[q]["answerable"] for q in ids)
                                                                              for n, r in readers.items()}}
    for x, y in (("A", "B"), ("A", "before"), ("B", "before"), ("before", "committed"), ("A", "committed")):
        a, b = readers[x], readers[y]
        out[f"{x} vs {y}"] = {
            "answerable_agree": sum(a[q]["answerable"] == b[q]["answerable"] for q in ids),
            "answerable_kappa": kappa([a[q]["answerable"] for q in ids], [b[q]["answerable"] for q in ids]),
            "grade_agree": sum(a[q]["grades"].get(f, 0) == b[q]["grades"].get(f, 0) for q, f in pairs),
            "grade_kappa": kappa([a[q]["grades"].get(f, 0) for q, f in pairs], [b[q]["grades"].get(f, 0) for q, f in pairs]),
            "differ": [{"id": q, "file": f, x: a[q]["grades"].get(f, 0), y: b[q]["grades"].get(f, 0)}
                       for q, f in pairs if a[q]["grades"].get(f, 0) != b[q]["grades"].get(f, 0)]}
    return out


if __name__ == "__main__":
    result = agreement()
    RESULT.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in result.items() if not isinstance(v, dict) or "differ" not in v}, indent=1))
    for k, v in result.items():
        if isinstance(v, dict) and "differ" in v:
            print(k, {m: v[m] for m in v if m != "differ"}, len(v["differ"]), "differ")

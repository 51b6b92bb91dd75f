"""benchmarks/README.md's « Knowing when not to answer » is the committed abstention runs, marked now.

The tables between the markers are what ``bench_abstain.py tables`` writes from
``results/abstain.json``, and that file is what ``bench_abstain.py summary``
computes from the stored answers (``results/abstain.jsonl``) with today's mark:
a claim in the README cannot drift from the runs it reports. No model.
"""

import importlib.util
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
spec = importlib.util.spec_from_file_location("bench_abstain", REPO / "benchmarks" / "bench_abstain.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)
BEGIN = "<!-- BEGIN abstain: written by benchmarks/bench_abstain.py tables from results/abstain.json -->"
END = "<!-- END abstain -->"


def block(text: str) -> str:
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip()


def committed() -> dict:
    return json.loads(bench.SUMMARY.read_text(encoding="utf-8"))


def test_the_readme_shows_the_tables_of_the_committed_summary():
    readme = (REPO / "benchmarks" / "README.md").read_text(encoding="utf-8")
    assert block(readme) == bench.readme(committed()).strip()


def test_the_committed_summary_is_what_the_stored_answers_give_marked_today():
    assert bench.summary() == committed(), "re-run: .venv/bin/python benchmarks/bench_abstain.py summary"


def test_the_gate_read_from_a_stored_probability_is_the_gate_the_rung_applies():
    # A stored answer « behind the gate at t » is « je ne sais pas » exactly when P(yes) < t, as rag.answer(gate=t) is.
    m = {"p": 0.4, "answerable": True, "correct": True, "abstained": False}
    assert bench.gated(m, 0.4) is m and bench.gated(m, 0.3) is m
    closed = bench.gated(m, 0.5)
    assert closed["abstained"] and not closed["correct"]
    assert bench.gated({**m, "answerable": False, "correct": False}, 0.5)["correct"]
    assert bench.gated({**m, "p": None}, 0.9)["abstained"] is False  # no probability: the gate stands aside

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


def test_kappa_the_folder_reading_uses_is_one_for_one_reading_and_zero_for_chance():
    from rungs.lab.metrics import kappa  # the one home of Cohen's κ (the blind readings of the mark use it)

    assert kappa([True, False, True], [True, False, True]) == 1.0
    # Two readers who each say yes half the time and agree half the time agree no better than chance.
    assert kappa([True, True, False, False], [True, False, True, False]) == 0.0
    # A worked case: 20 yes-yes, 5 yes-no, 10 no-yes, 15 no-no of 50 gives κ 0.4.
    a = [True] * 25 + [False] * 25
    b = [True] * 20 + [False] * 5 + [True] * 10 + [False] * 15
    assert abs(kappa(a, b) - 0.4) < 1e-9


def test_gate_auc_is_the_chance_an_answerable_question_ranks_above_an_unanswerable_one():
    m = lambda p, answerable: {"p": p, "answerable": answerable}  # noqa: E731
    assert bench.gate_auc({1: m(0.9, True), 2: m(0.1, False)}) == 1.0
    assert bench.gate_auc({1: m(0.1, True), 2: m(0.9, False)}) == 0.0
    assert bench.gate_auc({1: m(0.5, True), 2: m(0.5, False), 3: m(None, False)}) == 0.5  # a tie counts half
    # Two answerable (0.8, 0.3) against two not (0.6, 0.2): three of the four pairs in order.
    assert bench.gate_auc({1: m(0.8, True), 2: m(0.3, True), 3: m(0.6, False), 4: m(0.2, False)}) == 0.75
    assert bench.gate_auc({1: m(0.8, True)}) is None  # nothing to order against

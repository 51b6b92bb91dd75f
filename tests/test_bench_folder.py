"""benchmarks/bench_folder.py reads ``python -m rungs ask``'s last line back as the seconds it reports.

That line ends with the answer's ``Cost`` as ``rungs.grounding.Cost`` prints it; when the print changes,
the benchmark must read the new one or stop, never record a wrong figure. No model: the lines are built
from ``Cost`` itself, so a change to its format reaches this test.
"""

import importlib.util
from pathlib import Path

import pytest

from rungs.grounding import Cost

REPO = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("bench_folder", REPO / "benchmarks" / "bench_folder.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def last_line(cost: Cost, first: float | None = None) -> str:
    # The shape of cli.ask's last line: the passages read, then the cost, then the first sentence's wait.
    reading = f", {first:.1f} s before the first sentence" if first is not None else ""
    return f"(2 passage(s) read: a.pdf p. 3 · b.md; {cost}{reading})"


@pytest.mark.parametrize("cost, first", [
    (Cost(1, 700, 0, 40, 12.34), None),
    (Cost(2, 812, 300, 41, 9.0), 5.1),
    (Cost(3, 1500, 0, 120, 61.0), None),
])
def test_said_cost_reads_back_calls_seconds_and_first_sentence(cost, first):
    said = bench.said_cost(last_line(cost, first))
    assert said == {"calls": cost.calls, "model_s": round(cost.seconds, 1), "first_sentence_s": first}


def test_no_model_call_reads_as_zero_calls():
    assert bench.said_cost(last_line(Cost())) == {"calls": 0, "model_s": 0.0, "first_sentence_s": None}


def test_a_line_in_another_format_stops_the_benchmark():
    with pytest.raises(SystemExit, match="does not say its cost"):
        bench.said_cost("(2 passage(s) read; 1 model call(s), 12.3 s)")

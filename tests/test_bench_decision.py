"""benchmarks/bench_decision.py: the committed decision study is what the stored answers give today. No model.

The study reads ``results/abstain.jsonl`` (copy's and pointing-lead's stored answers, the gate's P(yes)) and
``rungs.lab.selective``; its summary, ``results/decision.json``, is what benchmarks/README.md's « Deciding
apart from reading » quotes — recomputed here, it must not have drifted.
"""

import importlib.util
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
spec = importlib.util.spec_from_file_location("bench_decision", REPO / "benchmarks" / "bench_decision.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def _to_digits(value, digits: int = 9):
    # A logistic fit's last bits follow the CPU's vector kernels (AVX2 or AVX-512): compared to 9 digits.
    if isinstance(value, float):
        return float(f"{value:.{digits}g}")
    if isinstance(value, dict):
        return {k: _to_digits(v, digits) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_digits(v, digits) for v in value]
    return value


def test_the_committed_decision_study_is_what_the_stored_answers_give():
    assert _to_digits(bench.summary()) == _to_digits(json.loads(bench.OUT.read_text(encoding="utf-8"))), \
        "re-run: .venv/bin/python benchmarks/bench_decision.py"


def test_the_comparison_to_nine_digits_still_sees_a_changed_figure():
    assert _to_digits({"p": [0.41645502093908404]}) == _to_digits({"p": [0.4164550209390841]})
    assert _to_digits({"p": [0.4164550209]}) != _to_digits({"p": [0.4164551209]})


def test_a_decision_shows_the_copy_where_it_is_sure_and_says_je_ne_sais_pas_elsewhere():
    rows = [{"id": "a", "right": True, "answerable": True}, {"id": "b", "right": False, "answerable": False},
            {"id": "c", "right": False, "answerable": True}]
    # Shown where P ≥ the cut: a is right; b said « je ne sais pas » is right (nothing answers it); c declined is wrong.
    assert bench.decided(rows, [0.9, 0.1, 0.2], 0.5) == {"a": 1.0, "b": 1.0, "c": 0.0}
    assert bench.decided(rows, [0.9, 0.9, 0.9], 0.5) == {"a": 1.0, "b": 0.0, "c": 0.0}  # the floor: answer everything

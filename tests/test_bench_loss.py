"""benchmarks/bench_loss.py: where an answer is lost, as the stored runs give it today. No model (the encoder).

``results/loss.json`` is what notebook 03 (« Deciding apart from reading ») and benchmarks/README.md print:
recomputed here from ``results/abstain.jsonl`` and the handbook, it must not have drifted; and each stage can
only lose what the one before it held, which the numbers must show.
"""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from rungs.lab import abstention_decision

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
spec = importlib.util.spec_from_file_location("bench_loss", REPO / "benchmarks" / "bench_loss.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


@pytest.mark.encoder  # the sentences shown are ranked by the hybrid over sentences: the encoder loads
def test_the_committed_loss_table_is_what_the_stored_runs_give():
    assert bench.summary() == json.loads(bench.OUT.read_text(encoding="utf-8")), \
        "re-run: .venv/bin/python benchmarks/bench_loss.py"


def test_each_stage_holds_no_more_than_the_one_before_it_showed():
    loss = abstention_decision.load_loss()
    for half in ("decide", "report"):
        s = {label: v["share"] for label, v in loss[half]["stages"].items()}
        assert s["the 12 sentences shown hold every key fact"] <= s["the 4 passages sent hold every key fact"]
        assert s["judged passages: the 12 sentences hold every key fact"] <= s["judged passages: the 4 hold every key fact"]
        # A right answer states every key fact, so it cannot be right where what it was shown held none of them:
        # the copy shows 3 of the 12 sentences, the model copies or points at them.
        assert s["copy (3 sentences, no model) right"] <= s["the 12 sentences shown hold every key fact"]
        assert s["judged passages: copy right"] <= s["judged passages: the 12 sentences hold every key fact"]
        assert all(v["questions"] == loss[half]["answerable"] for v in loss[half]["stages"].values())
    table = str(abstention_decision.loss_table(loss))
    assert f"{loss['report']['stages']['pointing-lead (the model) right']['share']:.3f}" in table

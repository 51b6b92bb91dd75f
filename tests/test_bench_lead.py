"""benchmarks/bench_lead.py: the old lead rule against the new on pointing-lead's stored replies. No model.

``results/lead.json`` is what benchmarks/README.md (« A lead that cannot borrow ») prints: recomputed here from
``results/abstain.jsonl``, it must not have drifted; and the new rule, stricter, never shows more leads.
"""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
spec = importlib.util.spec_from_file_location("bench_lead", REPO / "benchmarks" / "bench_lead.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def test_two_questions_of_each_half_run_and_hold_the_committed_shape():
    quick, committed = bench.summary(limit=2), json.loads(bench.OUT.read_text(encoding="utf-8"))
    for half in ("decide", "report"):
        assert quick[half]["questions"] == 2 and set(quick[half]) == set(committed[half])
        assert set(quick[half]["systems"]) == set(bench.SYSTEMS) == set(committed[half]["systems"])
        assert set(quick[half]["tests"]) == set(committed[half]["tests"])


@pytest.mark.encoder  # the sentences are ranked again by the hybrid over sentences: the encoder loads
def test_the_committed_lead_table_is_what_the_stored_replies_give():
    assert bench.summary() == json.loads(bench.OUT.read_text(encoding="utf-8")), \
        "re-run: .venv/bin/python benchmarks/bench_lead.py"


def test_the_new_rule_never_shows_a_lead_the_old_one_did_not():
    for half in json.loads(bench.OUT.read_text(encoding="utf-8")).values():
        s = half["systems"]
        assert s["new lead"]["leads_shown"] <= s["old lead"]["leads_shown"] and s["sentences alone"]["leads_shown"] == 0

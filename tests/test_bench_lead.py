"""benchmarks/bench_lead.py: the old lead rule against the new on pointing-lead's stored replies. No model.

``results/lead.json`` is what benchmarks/README.md (« A lead that cannot borrow ») prints: recomputed here from
``results/abstain.jsonl`` (the handbook's halves) and ``results/abstain_folder.jsonl`` (« folder »), it must not
have drifted, part by part; the README's folder rows are the file's; and the new rule, stricter, never shows more
leads.
"""

import importlib.util
import json
import sys
from pathlib import Path

import copy

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
spec = importlib.util.spec_from_file_location("bench_lead", REPO / "benchmarks" / "bench_lead.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)
PARTS = ("decide", "report", "folder")
README = REPO / "benchmarks" / "README.md"


def committed() -> dict:
    return json.loads(bench.OUT.read_text(encoding="utf-8"))


def drifted(stored: dict, computed: dict) -> list[str]:
    """The parts of the stored table that a re-computation no longer gives."""
    return [part for part in PARTS if stored.get(part) != computed.get(part)]


@pytest.fixture(scope="module")
def recomputed():
    return bench.summary()


def test_two_questions_of_each_part_run_and_hold_the_committed_shape():
    quick, stored = bench.summary(limit=2), committed()
    assert set(quick) == set(stored) == set(PARTS)
    for part in PARTS:
        assert quick[part]["questions"] == 2 and set(quick[part]) == set(stored[part])
        assert set(quick[part]["systems"]) == set(bench.SYSTEMS) == set(stored[part]["systems"])
        assert set(quick[part]["tests"]) == set(stored[part]["tests"])


@pytest.mark.encoder  # the sentences are ranked again by the hybrid over sentences: the encoder loads
def test_the_committed_lead_table_is_what_the_stored_replies_give(recomputed):
    assert not drifted(committed(), recomputed), "re-run: .venv/bin/python benchmarks/bench_lead.py"


@pytest.mark.encoder
def test_a_tampered_folder_part_is_seen(recomputed):
    tampered = copy.deepcopy(committed())
    tampered["folder"]["systems"]["new lead"]["leads_shown"] += 1
    assert drifted(tampered, recomputed) == ["folder"]
    del tampered["folder"]
    assert drifted(tampered, recomputed) == ["folder"]


def test_the_readme_prints_the_folder_rows_of_the_file():
    readme = README.read_text(encoding="utf-8")
    missing = [row for row in bench.folder_table(committed()["folder"]) if row not in readme.splitlines()]
    assert not missing, f"benchmarks/README.md's folder rows are not results/lead.json's: {missing}"
    assert f"{committed()['folder']['questions']} stored" in readme


def test_the_new_rule_never_shows_a_lead_the_old_one_did_not():
    for half in committed().values():
        s = half["systems"]
        assert s["new lead"]["leads_shown"] <= s["old lead"]["leads_shown"] and s["sentences alone"]["leads_shown"] == 0

"""The decision that ships (rungs.rag.decision): what ``rag.answer`` and ``ask`` do by default.

The default reader is « copy »; whether its answer is shown is the shipped decision's: the gate's one call,
P(the copy is right) from the gate's P(yes) and how well the copied sentences match, « je ne sais pas » below
the threshold that answers the chosen coverage of the handbook's deciding half. Checked here: the fit shipped
is the one benchmarks/bench_decision.py fits from the stored runs; the decision is wired as it says (one call,
its verdict in the trace, its reason); the coverage knob moves it; bad knobs and bad files are refused by name;
the view notebook 03 reads agrees with the study it reads. Scripted clients only: no model.
"""

import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

from rungs import rag
from rungs.core.errors import BadArgument
from rungs.grounding import Status
from rungs.grounding.contract import check_answer
from rungs.lab import abstention_decision
from rungs.model import ScriptedClient
from rungs.rag.decision import Shipped

REPO = Path(__file__).resolve().parent.parent

BADGE = [{"id": "badge", "text": "Badge perdu. Le remplacement du badge coûte 10 €. Prévenez l'accueil le jour même."},
         {"id": "repas", "text": "Le restaurant ouvre de 11 h 30 à 14 h. Les menus changent chaque lundi. "
                                 "Le parking du siège compte 80 places."}]
ON_TOPIC = "Combien coûte le remplacement d'un badge perdu ?"
OFF_TOPIC = "Quand a lieu le séminaire annuel des managers ?"


def said(p_yes):
    top = {"Oui": math.log(p_yes), "Non": math.log(1 - p_yes)}
    return {"text": "Oui", "logprobs": [{"token": "Oui", "logprob": top["Oui"], "top": top}]}


def test_the_shipped_fit_is_the_one_the_study_fits_from_the_stored_runs():
    sys.path.insert(0, str(REPO / "benchmarks"))
    spec = importlib.util.spec_from_file_location("bench_decision", REPO / "benchmarks" / "bench_decision.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    study = json.loads(bench.OUT.read_text(encoding="utf-8"))
    assert json.loads(rag.decision.SHIPPED.read_text(encoding="utf-8")) == study["shipped"], \
        "re-run: .venv/bin/python benchmarks/bench_decision.py"
    best = study["choice"]["best"]
    assert rag.shipped().name == best["decision"] and rag.shipped().coverage == best["coverage"]


@pytest.mark.encoder  # the sentences are ranked by the hybrid: the vector leg loads
def test_by_default_the_copy_is_shown_only_where_the_decision_says_and_it_says_why():
    client = ScriptedClient([said(0.95)])
    shown = rag.answer(ON_TOPIC, BADGE, client)
    assert shown.by == "rag copy" and shown.status is Status.ANSWERED and shown.cost.calls == 1
    verdict = shown.trace["decision"]
    assert verdict["answer"] and verdict["p"] >= verdict["threshold"] and verdict["coverage"] == rag.shipped().coverage
    assert verdict["signals"]["gate"] == pytest.approx(0.95) and verdict["signals"]["overlap_best"] > 0.5
    assert client.calls[0]["logprobs"] and client.calls[0]["max_tokens"] == 1  # the gate's one token, nothing else
    declined = rag.answer(OFF_TOPIC, BADGE, ScriptedClient([said(0.05)]))
    assert declined.status is Status.NO_ANSWER and not declined.quotes and declined.cost.calls == 1
    assert declined.reason.startswith("the decision: P(the copy is right) = ") and "the copy was not shown" in declined.reason
    assert not declined.trace["decision"]["answer"]
    check_answer(shown), check_answer(declined)


@pytest.mark.encoder
def test_the_coverage_knob_moves_the_threshold_and_what_is_shown():
    everything = rag.answer(OFF_TOPIC, BADGE, ScriptedClient([said(0.05)]), coverage=1.0)
    assert everything.answered and everything.trace["decision"]["threshold"] == -math.inf  # the floor itself
    strict = rag.answer(ON_TOPIC, BADGE, ScriptedClient([said(0.95)]), coverage=0.01)
    loose = rag.answer(ON_TOPIC, BADGE, ScriptedClient([said(0.95)]), coverage=0.9)
    assert strict.trace["decision"]["threshold"] > loose.trace["decision"]["threshold"]
    assert strict.trace["decision"]["p"] == loose.trace["decision"]["p"]  # the knob moves the cut, not P


@pytest.mark.encoder
def test_a_gate_that_cannot_tell_leaves_the_decision_its_other_signals_and_says_so():
    out = rag.answer(ON_TOPIC, BADGE, ScriptedClient(["Oui"]))  # an endpoint without log-probabilities
    assert out.trace["decision"]["signals"]["gate"] == rag.decision.UNKNOWN_GATE
    assert any("no log-probabilities" in n for n in out.notes)


def test_the_decisions_knobs_are_refused_by_name_before_any_call():
    none = ScriptedClient([])
    for knobs, said_ in (({"decision": "handbook", "mode": "pointing-lead"}, "fitted on the copy's answers"),
                         ({"decision": "mine"}, "decision must be one of"),
                         ({"coverage": 0}, "coverage"), ({"coverage": 1.5}, "coverage"),
                         ({"coverage": "half"}, "coverage")):
        with pytest.raises(BadArgument, match=said_):
            rag.answer(ON_TOPIC, BADGE, none, **knobs)
    assert not none.calls
    # The model's modes have no decision by default: « auto » is the handbook's for the copy only.
    lead = ScriptedClient([json.dumps({"reponse": "10 €.", "phrases": [2]})])
    assert "decision" not in rag.answer(ON_TOPIC, BADGE, lead, mode="pointing-lead").trace


def test_the_keyword_signal_reads_the_hybrids_parts_and_assumes_found_when_not_told():
    from rungs.core.retrieval import Hit
    assert rag.decision.keyword_found([Hit("a", 0.5, parts={"keyword": 0.0, "vector": 0.5})]) == 0.0
    assert rag.decision.keyword_found([{"id": "a", "parts": {"keyword": 0.2}}]) == 1.0
    assert rag.decision.keyword_found(None) == 1.0 and rag.decision.keyword_found([Hit("a", 1.0)]) == 1.0


def test_a_shipped_decision_that_is_not_whole_is_refused_by_name():
    good = json.loads(rag.decision.SHIPPED.read_text(encoding="utf-8"))
    for broken, said_ in (({k: v for k, v in good.items() if k != "fit"}, "holds fit"),
                          ({**good, "fit": {**good["fit"], "signals": ["gate", "moon", "x", "y"]}}, "some of the signals"),
                          ({**good, "fit": {**good["fit"], "scale": [0, 1, 1, 1]}}, "above 0"),
                          ({**good, "probabilities": ["x"]}, "probabilities")):
        with pytest.raises(BadArgument, match=said_):
            Shipped(broken)


def test_the_view_notebook_03_reads_agrees_with_the_study():
    data = abstention_decision.load()
    best = data["choice"]["best"]
    chosen = abstention_decision.at_coverage(data, best["coverage"])
    assert chosen["right"] == pytest.approx(data["report"]["the choice"]["right"])
    assert chosen["answered"] == pytest.approx(data["report"]["the choice"]["answered"])
    assert abstention_decision.at_coverage(data, 1.0)["right"] == pytest.approx(data["report"]["copy"]["right"])
    with pytest.raises(BadArgument):
        abstention_decision.at_coverage(data, 0.0)
    table = str(abstention_decision.readers_table(data))
    assert f"{data['report']['the choice']['right']:.3f}" in table and "vs the copy" in table


def test_a_missing_decision_summary_is_one_named_error(tmp_path):
    (tmp_path / "d.json").write_text(json.dumps({"choice": {}}), encoding="utf-8")
    with pytest.raises(abstention_decision.NoSummary, match="has no auc"):
        abstention_decision.load(tmp_path / "d.json")
    with pytest.raises(abstention_decision.NoSummary, match="cannot be read"):
        abstention_decision.load(tmp_path / "missing.json")

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


# Hostile inputs (hE): the decision's knobs, its file and its view, each refused by name.

@pytest.mark.parametrize("hits, said_", [
    ({"id": "a", "parts": {"keyword": 0.0}}, "hits must be"), (5, "hits must be"), ("abc", "hits must be"),
    ({1, 2}, "hits must be"), ([None, {"id": "a"}], r"hits\[0\]"), (["a"], r"hits\[0\]"),
    ([{"id": "a", "parts": "keyword"}], "parts"), ([{"id": "a", "parts": {"keyword": None}}], "keyword"),
    ([{"id": "a", "parts": {"keyword": "0.3"}}], "keyword"), ([{"id": "a", "parts": {"keyword": float("nan")}}], "keyword"),
    ([{"id": "a", "parts": {"keyword": 1j}}], "keyword")])
def test_hits_of_odd_shapes_are_refused_by_name_before_the_gates_call(hits, said_):
    # hE: a dict, an int, a set, a NaN keyword score… raised KeyError/TypeError after the gate's call was paid,
    # or (NaN) read silently as « the keyword leg did not find it ».
    client = ScriptedClient([said(0.9)])
    with pytest.raises(BadArgument, match=said_):
        rag.answer(ON_TOPIC, BADGE, client, hits=hits)
    assert not client.calls


def test_hits_as_any_iterable_of_hits_are_read_as_a_list():
    # hE: a generator or a tuple of hits is hits too (a generator raised TypeError: not subscriptable).
    gen = ({"id": "a", "parts": {"keyword": 0.0}} for _ in range(1))
    out = rag.answer(ON_TOPIC, BADGE, ScriptedClient([said(0.9)]), hits=gen)
    assert out.trace["decision"]["signals"]["keyword_found"] == 0.0


@pytest.mark.parametrize("text", ["", "{", "\ufeff{}", None, "dir"])
def test_a_shipped_decision_file_that_cannot_be_read_is_one_named_error_before_any_call(tmp_path, monkeypatch, text):
    # hE: an empty, truncated or missing decision.json raised JSONDecodeError / FileNotFoundError, after the call.
    path = tmp_path / "decision.json"
    if text == "dir":
        path.mkdir()
    elif text is not None:
        path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(rag.decision, "SHIPPED", path)
    rag.decision.shipped.cache_clear()
    client = ScriptedClient([said(0.9)])
    try:
        with pytest.raises(BadArgument, match="decision.json cannot be read"):
            rag.answer(ON_TOPIC, BADGE, client)
    finally:
        rag.decision.shipped.cache_clear()
    assert not client.calls


def test_a_hand_edited_shipped_decision_that_would_decide_wrongly_is_refused_by_name():
    # hE: probabilities outside [0, 1] (a threshold of 5: never answers), a bias "1" or true, no signal, a signal
    # twice, a source that is not text: each was accepted and decided silently.
    good = json.loads(rag.decision.SHIPPED.read_text(encoding="utf-8"))
    fit = good["fit"]
    for broken, said_ in (({**good, "probabilities": [5.0, 0.5, -3.0]}, "between 0 and 1"),
                          ({**good, "probabilities": ["0.5", "0.2"]}, "probabilities"),
                          ({**good, "fit": {**fit, "bias": "1"}}, "bias"), ({**good, "fit": {**fit, "bias": True}}, "bias"),
                          ({**good, "fit": {**fit, "signals": [], "mean": [], "scale": [], "weights": []}}, "signals"),
                          ({**good, "fit": {**fit, "signals": ["gate"] * 4}}, "twice"),
                          ({**good, "source": None}, "source"), ({**good, "decision": {"a": 1}}, "decision")):
        with pytest.raises(BadArgument, match=said_):
            Shipped(broken)


def test_a_decision_whose_probability_is_not_a_number_is_refused_not_shown():
    # hE: a scale of 1e-320 with a weight of 0 gave P(right) = nan: never shown, « P = nan » in the reason.
    good = json.loads(rag.decision.SHIPPED.read_text(encoding="utf-8"))
    odd = Shipped({**good, "fit": {**good["fit"], "scale": [1e-320, 1, 1, 1], "weights": [0.0, 1, 1, 1]}})
    found = {"gate": 0.9, "overlap_best": 0.5, "overlap_all": 0.5, "keyword_found": 1.0}
    with pytest.raises(BadArgument, match="not a number"):
        odd.judge(found)


def test_judge_names_the_signals_it_lacks_and_takes_a_coverage_of_any_real_type():
    # hE: judge({"gate": 0.5}) raised KeyError; threshold(np.float32(0.5)) was refused as « not a share ».
    import numpy as np
    from fractions import Fraction
    with pytest.raises(BadArgument, match="overlap_best"):
        rag.shipped().judge({"gate": 0.5})
    with pytest.raises(BadArgument, match="signals"):
        rag.shipped().judge(None)
    with pytest.raises(BadArgument, match="gate"):
        rag.shipped().judge({"gate": "0.5", "overlap_best": 0.1, "overlap_all": 0.1, "keyword_found": 1.0})
    half = rag.shipped().threshold(0.5)
    assert rag.shipped().threshold(np.float32(0.5)) == rag.shipped().threshold(Fraction(1, 2)) == half
    assert rag.shipped().threshold(np.int64(1)) == -math.inf


def test_a_study_with_no_rows_is_a_named_error_not_a_division_by_zero():
    # hE: at_coverage on a study whose rows are empty raised ZeroDivisionError; a row without its P, KeyError.
    data = abstention_decision.load()
    with pytest.raises(abstention_decision.NoSummary, match="rows"):
        abstention_decision.at_coverage({**data, "rows": []}, 0.5)
    with pytest.raises(abstention_decision.NoSummary, match="rows"):
        abstention_decision.at_coverage({**data, "rows": [{"p": {}}]}, 0.5)


def test_signals_name_quotes_without_text_and_a_gate_that_is_not_a_probability():
    # hE: signals(q, "abc", …) raised AttributeError, a quote without "text" KeyError; a gate_p of 2.0 or "0.9"
    # was read as a probability.
    for quotes, gate_p, said_ in (("abc", 0.5, "quotes"), ([{"source": "a"}], 0.5, r"quotes\[0\]"),
                                  ([{"text": None}], 0.5, r"quotes\[0\]"), ([{"text": "x"}], 2.0, "gate_p"),
                                  ([{"text": "x"}], "0.9", "gate_p"), ([{"text": "x"}], float("nan"), "gate_p")):
        with pytest.raises(BadArgument, match=said_):
            rag.decision.signals(ON_TOPIC, quotes, gate_p)
    assert rag.decision.signals(ON_TOPIC, [], None)["gate"] == rag.decision.UNKNOWN_GATE


VIEWS = {"loss_table": lambda d: abstention_decision.loss_table(d), "choice_lines": abstention_decision.choice_lines,
         "readers_table": abstention_decision.readers_table,
         "risk_coverage_table": abstention_decision.risk_coverage_table,
         "plot_risk_coverage": lambda d: _closed(abstention_decision.plot_risk_coverage(d)),
         "at_coverage": lambda d: abstention_decision.at_coverage(d, 0.5),
         "coverage_line": lambda d: abstention_decision.coverage_line(d, 0.5), "goal_table": abstention_decision.goal_table}


def _closed(ax):
    import matplotlib.pyplot as plt
    plt.close(ax.figure)  # a figure a loop of probes opens is closed: pyplot keeps every one


#: A key each view reads, to see it named when it is missing.
READS = {"loss_table": "report", "choice_lines": "choice", "readers_table": "folder", "risk_coverage_table": "curves",
         "plot_risk_coverage": "curves", "at_coverage": "shipped", "coverage_line": "shipped", "goal_table": "goal"}


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_a_view_handed_a_dict_load_did_not_make_names_the_key_it_lacks(view):
    # Issue 43: loss_table({}) raised KeyError 'report', readers_table(None) TypeError, a part of the wrong
    # type TypeError or ValueError from deep in a table; each now says which key, and to pass what load() returns.
    import matplotlib
    matplotlib.use("Agg")
    whole = abstention_decision.load_loss() if view == "loss_table" else abstention_decision.load()
    VIEWS[view](whole)  # what load() makes is read
    with pytest.raises(abstention_decision.NoSummary, match=f"no '{READS[view]}': pass what abstention_decision.load"):
        VIEWS[view]({k: v for k, v in whole.items() if k != READS[view]})
    for part in whole:  # any part of the wrong type: read (the view does not use it) or refused by name
        for junk in (3, "x", None, [1]):
            try:
                VIEWS[view]({**whole, part: junk})
            except abstention_decision.NoSummary:
                pass
    for junk in ({}, None, [1], "x"):
        with pytest.raises(abstention_decision.NoSummary):
            VIEWS[view](junk)

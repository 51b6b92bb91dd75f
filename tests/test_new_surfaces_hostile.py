"""A hostile probe of this round's new surfaces — the typed trail, check_answerer, the readers' table, « lend »,
an answer shown as text — each finding a test seen failing before its fix (issue 43's way)."""

from __future__ import annotations

from enum import Enum

import numpy as np
import pytest

from rungs import hybrid, rag
from rungs.core.errors import BadArgument, RungsError
from rungs.core.retrieval import Hit
from rungs.grounding.answer import Answer, Status
from rungs.grounding.contract import check_answerer
from rungs.grounding.doubles import Behaving
from rungs.grounding.trail import Gate

PASSAGES = [{"id": "a", "body": "On a 2,5 jours de congés par mois."}]

HOSTILE_TRACES = [{"hits": 5}, {"hits": "abc"}, {"plan": "xyz"}, {"rounds": {"a": 1}}, {"calls": True},
                  {"withheld": 3}, {"seconds": 10**400}, {"seconds": float("nan")}, {"seconds": -5},
                  {"seconds": float("inf")}, {"replies": [None, 5]}, {"fences": [None]}, {"prompt": 5},
                  {"stopped_by": 5}, {"mode": np.array([1, 2])}]


@pytest.mark.parametrize("trace", HOSTILE_TRACES, ids=lambda t: f"{next(iter(t))}={str(next(iter(t.values())))[:12]}")
def test_a_trace_of_the_wrong_shape_is_refused_by_name_never_split_or_raw(trace):
    answer = Answer(question="q", status=Status.UNAVAILABLE, reason="r", trace=trace)
    with pytest.raises(RungsError, match=f"trace's {next(iter(trace))}"):
        answer.trail


def test_a_gate_note_that_is_no_text_is_refused():
    with pytest.raises(BadArgument, match="note"):
        Gate.of({"p": 0.5, "note": np.array([1, 2])})


@pytest.mark.parametrize("factory, question, behaviours, said", [
    (5, "Combien ?", None, "factory must be a function"),
    (lambda c: None, "   ", None, "question must have words"),
    (lambda c: None, None, None, "question must be a string"),
    (lambda c: None, "Combien ?", [], "none were given"),
    (lambda c: None, "Combien ?", "faithful", "list of names"),
    (lambda c: None, "Combien ?", 5, "list of names"),
    (lambda c: None, "Combien ?", ["faithful", "nope"], "'nope'"),
])
def test_check_answerer_refuses_the_callers_mistakes_before_any_run(factory, question, behaviours, said):
    with pytest.raises(BadArgument, match=said):
        check_answerer(factory, question, behaviours)


def test_an_answer_shown_as_text_escapes_what_a_terminal_would_run():
    answer = Answer(question="q", status=Status.UNAVAILABLE, reason="le serveur \x1bc\x1b[2J")
    assert "\x1b" not in str(answer) and "\\x1b" in str(answer)


def test_the_trace_records_the_readers_name_not_the_callers_object():
    class Mode(str, Enum):
        FREE = "free"

    out = rag.answer("Combien de jours ?", PASSAGES, Behaving("faithful"), mode=Mode.FREE)
    assert out.by == "rag free" and out.trail.mode == "free"


def test_a_mode_whose_hash_lies_is_still_its_reader():
    class Lying(str):
        def __hash__(self):
            return 1

    assert rag.reader(Lying("free")).name == "free"
    with pytest.raises(BadArgument, match="model"):
        rag.reader("free", model=None)


@pytest.mark.parametrize("keyword", [["a", "b"], "ab", {"a": 1}, 5, [Hit(id="a", score=1.0, parts={"x": None})]])
def test_lend_refuses_a_keyword_ranking_it_cannot_read_by_name(keyword):
    with pytest.raises(BadArgument, match="lend"):
        hybrid.lend({"keyword": keyword, "vector": []})

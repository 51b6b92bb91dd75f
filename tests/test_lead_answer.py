"""N3: the lead rule on the live path — rag.answer in pointing-lead passes the shipped decision to rag.point.

Written by hand, as tests/test_lead_borrow.py; these go through ``rag.answer`` and a scripted model."""

import json

from rungs import rag
from rungs.grounding import Status
from rungs.model import ScriptedClient

from test_lead_borrow import CONGES, DISCIPLINE, TELETRAVAIL


def lead_answer(question, passages, reply):
    return rag.answer(question, passages, ScriptedClient([json.dumps(reply, ensure_ascii=False)]),
                      mode="pointing-lead", collection=rag.HANDBOOK)


def test_answer_a_lead_whose_figure_is_borrowed_from_another_sentence_is_dropped():
    question = "Combien de temps mon chef a-t-il pour répondre à ma demande de télétravail ?"
    out = lead_answer(question, [TELETRAVAIL, DISCIPLINE], {"reponse": "Deux mois.", "phrases": [1]})
    assert out.status == Status.ANSWERED
    assert "deux mois" not in out.text.split("\n")[0].lower() or "\n" not in out.text, out.text
    assert out.text == TELETRAVAIL["text"] and out.cited == ("teletravail",)  # the model's own sentence, alone
    assert any("lead-in dropped" in n and "Deux mois" in n for n in out.notes), out.notes


def test_answer_a_no_over_a_sentence_that_says_yes_is_dropped():
    question = "Le télétravail est-il ouvert à tout salarié ?"
    out = lead_answer(question, [TELETRAVAIL, DISCIPLINE], {"reponse": "Non.", "phrases": [1]})
    assert out.text == TELETRAVAIL["text"], out.text
    assert any("lead-in dropped" in n and "non" in n for n in out.notes), out.notes


def test_answer_a_lead_held_by_the_sentence_that_answers_is_shown():
    out = lead_answer("Combien de jours de congés payés par mois ?", [CONGES, DISCIPLINE],
                      {"reponse": "2,5 jours.", "phrases": [1]})
    assert out.text == "2,5 jours.\n" + CONGES["text"], out.text
    assert not any("lead-in dropped" in n for n in out.notes)

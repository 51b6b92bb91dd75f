"""N3: a reply decoded once into its reader's typed shape, and a lead-in that cannot borrow (issue 37).

The passages are written by hand, so what a lead rests on is known: « deux mois » from a sentence on
disciplinary delays must not become the answer to a remote-work question."""

import dataclasses
import json

import pytest

from rungs import rag
from rungs.rag.decision import judges_answer

TELETRAVAIL = {"id": "teletravail", "text": "Le télétravail est ouvert à tout salarié après accord écrit du responsable."}
DISCIPLINE = {"id": "discipline", "text": "La sanction disciplinaire est notifiée dans un délai de deux mois après l'entretien."}
CONGES = {"id": "conges", "text": "Chaque salarié acquiert 2,5 jours ouvrables de congés payés par mois de travail effectif."}


def pointed(question, passages, reply):
    """``reply`` read by ``rag.point`` as the new rule reads it: the shipped decision judges what a lead rests on."""
    numbered = rag.sentences_for(question, rag.prepare_passages(passages))
    judge = lambda quotes: judges_answer(question, quotes)
    return rag.point(rag.decode(json.dumps(reply, ensure_ascii=False), "pointing-lead"), numbered, question, judge)


def test_each_reply_is_its_readers_typed_shape_decoded_once():
    for mode, text in (("pointing-lead", '{"reponse": "Non.", "phrases": ["2", 2, 1]}'),
                       ("pointing", '{"phrases": [3]}'), ("free", '{"answer": "x", "sources": [1]}'),
                       ("quoted", '{"answer": "x", "quotes": [{"source": "a", "text": "y"}]}')):
        reply = rag.decode(text, mode)
        assert type(reply) is rag.reader(mode).reply and dataclasses.is_dataclass(reply)
        with pytest.raises(dataclasses.FrozenInstanceError):
            reply.lead = "?"
    assert rag.decode('{"reponse": "Non.", "phrases": ["2", 2, 1]}', "pointing-lead") == rag.PointingReply((2, 1), "Non.")
    assert rag.decode('{"phrases": "aucune"}', "pointing").chosen == ()
    assert rag.decode('{"answer": "x", "quotes": [{"source": 4, "text": "y"}]}', "quoted").sources == ("4",)


def test_a_lead_whose_figure_is_borrowed_from_another_sentence_is_dropped():
    question = "Combien de temps mon chef a-t-il pour répondre à ma demande de télétravail ?"
    out = pointed(question, [TELETRAVAIL, DISCIPLINE], {"reponse": "Deux mois.", "phrases": [1]})
    assert out["answer"] == TELETRAVAIL["text"] and out["sources"] == ["teletravail"]  # the model's own sentence
    assert "lead-in dropped" in out["dropped"] and "Deux mois" in out["dropped"], out["dropped"]


def test_a_no_over_a_sentence_that_says_yes_is_dropped():
    out = pointed("Le télétravail est-il ouvert à tout salarié ?", [TELETRAVAIL, DISCIPLINE],
                  {"reponse": "Non.", "phrases": [1]})
    assert out["answer"] == TELETRAVAIL["text"] and "non" in out["dropped"], out


def test_a_lead_held_by_the_sentence_that_answers_is_shown():
    out = pointed("Combien de jours de congés payés par mois ?", [CONGES, DISCIPLINE],
                  {"reponse": "2,5 jours.", "phrases": [1]})
    assert out["answer"] == "2,5 jours.\n" + CONGES["text"] and not out["dropped"], out


def test_the_borrow_check_reads_the_anchored_sentence_only():
    assert rag.pointing.borrowed("Deux mois.", [TELETRAVAIL["text"]])
    assert not rag.pointing.borrowed("Deux mois.", [DISCIPLINE["text"]])
    assert rag.pointing.borrowed("Oui.", ["Le salarié ne peut pas refuser."])
    assert not rag.pointing.borrowed("Non, jamais.", ["Le salarié ne peut pas refuser."])

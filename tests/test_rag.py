"""N3: the decoder and the grounding check, with scripted replies (a test double, never the default).

What was an exception is now a status: an unusable reply after every attempt is
an answer **unavailable**, an id never sent or an answer citing nothing is
**refused**, and ``Answer.raise_for_status()`` gives back the named error.
"""

import json

import pytest

from rungs import rag
from rungs.core.errors import BadArgument
from rungs.grounding import Status
from rungs.model import ScriptedClient, EmptyCompletion
from rungs.lab import judges

PASSAGES = [{"id": "p1", "text": "Un." * 1000}, {"id": 2, "text": "Deux."}]


def ask(*replies, mode="free", **kw):
    # The free mode's reply shape ({"answer", "sources"}): the decoder and the id check, case by case.
    client = ScriptedClient(list(replies))
    out = rag.answer("Question ?", PASSAGES, client, mode=mode, **kw)
    return out, client


def test_bare_and_fenced_json_are_read_and_ids_compared_as_text():
    out = ask('{"answer": "Oui.", "sources": ["p1", 2]}')[0]
    assert (out.status, out.text, out.cited) == (Status.ANSWERED, "Oui.", ("p1", "2"))
    assert ask('```json\n{"answer": "Oui.", "sources": ["2"]}\n```')[0].cited == ("2",)
    assert ask('```\n{"answer": "Oui.", "sources": ["p1"]}```')[0].cited == ("p1",)


@pytest.mark.parametrize("reply, reason", [
    ('Voici : {"answer": "x", "sources": ["p1"]}', "not JSON"),
    ('```json\n{"answer": "x", "sources": []}\n```\n```json\n{}\n```', "more than one"),
    ('```json\n{"answer": "x", "sources": ["p1"]}', "never closed"),
    ('```json\n{"answer": "x", "sources": ["p1"]}\n``` merci', "after the closing"),
    ('{"answer": "x", "sources": [true]}', "not a passage id"),
    ('{"answer": "x", "sources": "p1"}', "not a list"),
    ('["x"]', "not an object"),
    ('   ', "empty completion"),
    ('{"answer": "<extrait id=\\"p1\\"> x", "sources": ["p1"]}', "fence"),
])
def test_unusable_replies_are_retried_then_named(reply, reason):
    out, client = ask(reply, reply)
    assert out.status is Status.UNAVAILABLE and reason in out.reason and out.text == ""
    assert out.cost.calls == 2 and len(client.calls) == 2
    with pytest.raises(rag.AnswerUnavailable, match=reason):
        out.raise_for_status()


def test_a_retry_can_succeed():
    out, client = ask("prose", '{"answer": "Oui.", "sources": ["p1"]}')
    assert out.cited == ("p1",) and len(client.calls) == 2 and out.cost.calls == 2
    assert out.notes and "not JSON" in out.notes[0]  # the refused first reply is said


def test_empty_completion_counts_as_an_unusable_attempt():
    out, _ = ask({"text": ""}, {"text": "", "finish_reason": "length"})
    assert out.status is Status.UNAVAILABLE and "EmptyCompletion" in out.reason


def test_citations_outside_the_sent_set_or_missing_are_refused():
    out, _ = ask('{"answer": "x", "sources": ["p9"]}')
    assert out.status is Status.REFUSED and "never sent" in out.reason and out.text == ""
    with pytest.raises(rag.AnswerNotGrounded, match="never sent"):
        out.raise_for_status()
    assert "cites no passage" in ask('{"answer": "x", "sources": []}')[0].reason
    # A passage beyond max_passages was never sent either.
    assert ask('{"answer": "x", "sources": ["2"]}', max_passages=1)[0].status is Status.REFUSED


def test_je_ne_sais_pas_is_the_no_answer_and_claims_nothing():
    out = ask('{"answer": "Je ne sais pas.", "sources": []}')[0]
    assert (out.status, out.text, out.cited) == (Status.NO_ANSWER, "je ne sais pas", ())
    out = ask('{"answer": "JE NE SAIS PAS !", "sources": ["p1"]}')[0]
    assert out.status is Status.NO_ANSWER and out.cited == ()


def test_limits_and_no_call_cases():
    client = ScriptedClient([])
    for question, passages in (("  ", PASSAGES), ("Q ?", [])):
        out = rag.answer(question, passages, client)
        assert (out.status, out.text, out.cost.calls) == (Status.NO_ANSWER, "je ne sais pas", 0)
        assert out.reason.startswith("nothing to ask")
    with pytest.raises(BadArgument, match="question has 1001 characters; the limit is 1000"):
        rag.answer("x" * 1001, PASSAGES, client)
    assert client.calls == []
    rag.answer("x" * 1000, PASSAGES, ScriptedClient(['{"reponse": "Je ne sais pas.", "phrases": []}']))


def test_passages_are_cut_in_code_points_and_capped_at_four():
    sent = rag.prepare_passages([{"id": i, "text": "é" * 2000} for i in range(6)])
    assert len(sent) == 4 and all(len(p["text"]) == 1500 for p in sent)
    with pytest.raises(BadArgument, match="max_passages must be 4 or less"):
        rag.prepare_passages(PASSAGES, max_passages=5)
    out, client = ask('{"answer": "Oui.", "sources": ["p1"]}')
    prompt = client.calls[0]["messages"][0]["content"]
    assert "Un." * 500 in prompt and "Un." * 501 not in prompt
    assert client.calls[0]["json_schema"]["properties"]["sources"]["items"]["enum"] == ["p1", "2"]
    assert list(out.sent) == ["p1", "2"] and len(out.sent["p1"]) == 1500


def test_the_prompt_puts_what_stays_first_and_what_varies_last():
    # The server reuses the longest common start of the previous prompt: the extracts come before the
    # question, and the question before the instructions a knob turns.
    one = rag.build_prompt("Première question ?", PASSAGES, mode="free")
    two = rag.build_prompt("Seconde question ?", PASSAGES, mode="free")
    turned = rag.build_prompt("Première question ?", PASSAGES, mode="free", prompt=rag.PROMPT_REWRITTEN)
    common = lambda a, b: next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
    assert one.index("Un.") < one.index("Première question") < one.index("JSON")
    assert common(one, two) == one.index("Première question")
    assert common(one, turned) > one.index("Première question ?")
    for mode in rag.MODES:  # every mode's template starts the same way
        assert rag.PROMPTS[mode].startswith("Voici des extraits {collection}")


def test_the_prompt_names_the_collection_it_is_given_and_no_handbook_otherwise():
    assert "livret" not in rag.build_prompt("Q ?", PASSAGES) and "extraits de documents" in rag.build_prompt("Q ?", PASSAGES)
    assert "extraits du dossier debian" in rag.build_prompt("Q ?", PASSAGES, collection="du dossier debian")
    for template in rag.PROMPTS.values():
        assert "livret" not in template


def test_scripted_client_says_what_it_is_and_raises_scripted_errors():
    client = ScriptedClient([EmptyCompletion("boom")])
    assert "teaching prop" in repr(client)
    with pytest.raises(EmptyCompletion):
        client.chat([{"role": "user", "content": "x"}])


def test_the_prompt_is_a_knob_checked_before_any_call():
    passages = [{"id": "a", "text": "Le préavis est de trois mois."}]
    client = ScriptedClient(['{"answer": "Trois mois.", "sources": ["a"]}'])
    out = rag.answer("Quel préavis ?", passages, client, prompt=rag.PROMPT_REWRITTEN, mode="free")
    assert out.text == "Trois mois." and "Consignes" in out.trace["prompt"] and "Recopie les chiffres" in out.trace["prompt"]
    assert [(f.figure, f.held_by) for f in out.figures] == [("3 mois", ("a",))]
    for bad, message in [("no places at all", "must contain"), ("{passages} {question} {oops}", "only"),
                         (42, "template string"), ("{passages}{question}{question.nope}", "only")]:
        silent = ScriptedClient([])
        with pytest.raises(BadArgument, match=message):
            rag.answer("Quel préavis ?", passages, silent, prompt=bad)
        assert silent.calls == []


def test_the_source_support_check_reads_a_yes_probability():
    from rungs import decide

    def said(top):
        return {"text": "Oui", "logprobs": [{"token": "Oui", "logprob": -0.1, "top": top}]}

    passages = [{"id": "a", "text": "Le préavis est de trois mois."}]
    yes = judges.support("Quel préavis ?", "Trois mois.", passages, ScriptedClient([said({"Oui": -0.1, "Non": -2.5})]))
    assert yes["supported"] is True and yes["p"] > 0.9
    no = judges.support("Quel préavis ?", "Deux mois.", passages, ScriptedClient([said({"Oui": -3.0, "Non": -0.06})]))
    assert no["supported"] is False and no["p"] < 0.1
    unsure = judges.support("Quel préavis ?", "Deux mois.", passages, ScriptedClient([said({"Le": -0.01})]))
    assert unsure["supported"] is None and unsure["trusted"] is False
    assert judges.support("Quel préavis ?", "x", [], ScriptedClient([]))["supported"] is False


# ---------------------------------------------------------------- the sufficient-context gate

def said(p_yes):
    import math
    top = {"Oui": math.log(p_yes), "Non": math.log(1 - p_yes)}
    return {"text": "Oui", "logprobs": [{"token": "Oui", "logprob": top["Oui"], "top": top}]}


def test_the_gate_below_its_threshold_says_je_ne_sais_pas_without_the_answers_call():
    client = ScriptedClient([said(0.2)])
    out = rag.answer("Question ?", PASSAGES, client, mode="free", gate=0.5)
    assert out.status is Status.NO_ANSWER and "0.20, below its threshold 0.50" in out.reason
    assert len(client.calls) == 1 and client.calls[0]["logprobs"] and client.calls[0]["max_tokens"] == 1
    assert out.cost.calls == 1 and out.trace["gate"]["p"] == pytest.approx(0.2)


def test_the_gate_above_its_threshold_lets_the_answer_be_asked_over_the_same_start():
    client = ScriptedClient([said(0.9), '{"answer": "Oui.", "sources": ["p1"]}'])
    out = rag.answer("Question ?", PASSAGES, client, mode="free", gate=0.5)
    assert out.status is Status.ANSWERED and out.cost.calls == 2
    gate, answer = (c["messages"][0]["content"] for c in client.calls)
    head = answer[:answer.index("Question ?") + len("Question ?")]
    assert gate.startswith(head)  # the answer's prompt starts as the gate's did: the server reuses it
    assert "répondre à la question ? Réponds uniquement par Oui ou par Non" in gate


def test_a_gate_that_cannot_tell_is_said_and_the_answer_goes_on():
    no_logprobs = {"text": "Oui"}
    client = ScriptedClient([no_logprobs, '{"answer": "Oui.", "sources": ["p1"]}'])
    out = rag.answer("Question ?", PASSAGES, client, mode="free", gate=0.5)
    assert out.answered and any("no log-probabilities" in n for n in out.notes)
    with pytest.raises(BadArgument, match="gate"):
        rag.answer("Question ?", PASSAGES, ScriptedClient([]), gate=1.5)


def test_the_gates_figures_never_contradict_its_decision():
    """Finding: P(yes) = 0.4999 against 0.5 was said « 0.50, below its threshold 0.50 »."""
    out = rag.answer("Question ?", PASSAGES, ScriptedClient([said(0.4999)]), mode="free", gate=0.5)
    assert out.status is Status.NO_ANSWER and "0.4999, below its threshold 0.5000" in out.reason


# ---------------------------------------------------------------- « copy »: the floor, with no model

BADGE = [{"id": "badge", "text": "Badge perdu. Le remplacement du badge coûte 10 €. Prévenez l'accueil le jour même."},
         {"id": "repas", "text": "Le restaurant ouvre de 11 h 30 à 14 h. Les menus changent chaque lundi. "
                                 "Le parking du siège compte 80 places."}]


class _NoModel:
    """A client that fails the test the moment anything of it is used: « copy » must never ask."""

    def __getattr__(self, name):
        raise AssertionError(f"copy asked the model ({name})")


@pytest.mark.encoder  # the sentences are ranked by the hybrid: the vector leg loads
def test_copy_asks_no_model_and_copies_the_sentences_ranked_first():
    question = "Combien coûte le remplacement d'un badge perdu ?"
    out = rag.answer(question, BADGE, _NoModel(), mode="copy", decision=None)  # the floor alone: no decision
    numbered = rag.sentences_for(question, rag.prepare_passages(BADGE))
    best = sorted(sorted(numbered, key=lambda s: s["rank"])[:rag.COPIED], key=lambda s: s["n"])
    assert out.status is Status.ANSWERED and out.cost.calls == 0 and out.by == "rag copy"
    assert [q.text for q in out.quotes] == [s["text"] for s in best]
    assert out.text == " ".join(s["text"] for s in best) and "Le remplacement du badge coûte 10 €." in out.text
    assert "Le parking du siège compte 80 places." not in out.text  # what matches nothing is not copied
    assert out.cited[0] == "badge" and [f.held_by for f in out.figures if f.figure.startswith("10")] == [("badge",)]
    from rungs.grounding.contract import check_answer
    check_answer(out)


@pytest.mark.encoder
def test_copy_behind_the_gate_asks_one_question_the_pointing_modes_gate_asks_and_copies_only_above_it():
    question = "Combien coûte le remplacement d'un badge perdu ?"
    closed = rag.answer(question, BADGE, ScriptedClient([said(0.2)]), mode="copy", gate=0.5, decision=None)
    assert closed.status is Status.NO_ANSWER and closed.cost.calls == 1 and not closed.quotes
    assert "0.20, below its threshold 0.50" in closed.reason
    client = ScriptedClient([said(0.9)])
    opened = rag.answer(question, BADGE, client, mode="copy", gate=0.5, decision=None)
    assert opened.answered and opened.cost.calls == 1 and len(client.calls) == 1
    assert opened.text == rag.answer(question, BADGE, _NoModel(), mode="copy", decision=None).text  # the gate decides, copy reads
    # The gate's question is the one pointing-lead's gate asks over the same numbered sentences (its stored P(yes)).
    lead = ScriptedClient([said(0.9), json.dumps({"reponse": "10 €.", "phrases": [2]})])
    rag.answer(question, BADGE, lead, mode="pointing-lead", gate=0.5)
    assert client.calls[0]["messages"] == lead.calls[0]["messages"]
    from rungs.grounding.contract import check_answer
    check_answer(closed), check_answer(opened)


def test_copy_says_je_ne_sais_pas_with_nothing_to_copy_and_asks_nothing():
    out = rag.answer("Combien ?", [], _NoModel(), mode="copy")  # the decision too asks nothing: nothing to decide
    assert out.status is Status.NO_ANSWER and out.cost.calls == 0


def test_a_threshold_of_another_number_type_is_read_as_its_float():
    """Finding (issue 43): a Fraction threshold passed the check, then broke the reason's « {:.2f} »."""
    from fractions import Fraction

    out = rag.answer("Question ?", PASSAGES, ScriptedClient([said(0.2)]), mode="free", gate=Fraction(1, 2))
    assert out.status is Status.NO_ANSWER and "0.20, below its threshold 0.50" in out.reason


def test_an_answer_with_the_hits_that_found_its_passages_is_json():
    """Finding (issue 43): json.dumps(answer.to_dict()) raised on the hits a retriever leaves in the trace."""
    from rungs import bm25

    pages = [{"id": "p1", "title": "Un", "body": "Le badge perdu se signale à l'accueil."}]
    reply = '{"answer": "À l\'accueil.", "sources": ["p1"]}'
    out = rag.Rag(bm25.build_index(pages), pages, ScriptedClient([reply]), mode="free").ask("badge perdu ?")
    data = json.loads(json.dumps(out.to_dict()))
    assert out.answered and data["trace"]["hits"][0]["id"] == "p1" and data["cited"] == ["p1"]


@pytest.mark.parametrize("logprobs", [{"top": {"Oui": -0.1}}, ["Oui"], [None], [{"token": "Oui", "top": ["Oui"]}],
                                      ("x",), [{"token": "Oui", "top": {"Oui": "-0.1"}}]])
def test_the_gate_fed_logprobs_of_the_wrong_shape_says_so_and_the_answer_goes_on(logprobs):
    # Finding (issue 43): a dict, or a list of text, for the logprobs raised KeyError/AttributeError from the gate.
    client = ScriptedClient([{"text": "Oui", "logprobs": logprobs}, '{"answer": "Oui.", "sources": ["p1"]}'])
    out = rag.answer("Question ?", PASSAGES, client, mode="free", gate=0.5)
    assert out.answered and out.trace["gate"]["p"] is None
    assert any("answered without the gate" in n for n in out.notes), out.notes

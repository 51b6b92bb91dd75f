"""N3: the decoder and the grounding check, with scripted replies (a test double, never the default)."""

import pytest

from rungs import rag
from rungs.core.errors import BadArgument
from rungs.model import ScriptedClient, EmptyCompletion
from rungs.lab import judges

PASSAGES = [{"id": "p1", "text": "Un." * 1000}, {"id": 2, "text": "Deux."}]


def ask(*replies, mode="free", **kw):
    # The free mode's reply shape ({"answer", "sources"}): the decoder and the id check, case by case.
    client = ScriptedClient(list(replies))
    out = rag.answer("Question ?", PASSAGES, client, mode=mode, **kw)
    return {k: v for k, v in out.items() if k != "quotes"}, client


def test_bare_and_fenced_json_are_read_and_ids_compared_as_text():
    assert ask('{"answer": "Oui.", "sources": ["p1", 2]}')[0] == {"answer": "Oui.", "sources": ["p1", "2"]}
    assert ask('```json\n{"answer": "Oui.", "sources": ["2"]}\n```')[0]["sources"] == ["2"]
    assert ask('```\n{"answer": "Oui.", "sources": ["p1"]}```')[0]["sources"] == ["p1"]


@pytest.mark.parametrize("reply, reason", [
    ('Voici : {"answer": "x", "sources": ["p1"]}', "not JSON"),
    ('```json\n{"answer": "x", "sources": []}\n```\n```json\n{}\n```', "more than one"),
    ('```json\n{"answer": "x", "sources": ["p1"]}', "never closed"),
    ('```json\n{"answer": "x", "sources": ["p1"]}\n``` merci', "after the closing"),
    ('{"answer": "x", "sources": [true]}', "not a passage id"),
    ('{"answer": "x", "sources": "p1"}', "not a list"),
    ('["x"]', "not an object"),
    ('   ', "empty completion"),
])
def test_unusable_replies_are_retried_then_named(reply, reason):
    with pytest.raises(rag.AnswerUnavailable, match=reason):
        ask(reply, reply)


def test_a_retry_can_succeed():
    out, client = ask("prose", '{"answer": "Oui.", "sources": ["p1"]}')
    assert out["sources"] == ["p1"] and len(client.calls) == 2


def test_empty_completion_counts_as_an_unusable_attempt():
    with pytest.raises(rag.AnswerUnavailable, match="EmptyCompletion"):
        ask({"text": ""}, {"text": "", "finish_reason": "length"})


def test_citations_outside_the_sent_set_or_missing_are_not_grounded():
    with pytest.raises(rag.AnswerNotGrounded, match="never sent"):
        ask('{"answer": "x", "sources": ["p9"]}')
    with pytest.raises(rag.AnswerNotGrounded, match="cites no passage"):
        ask('{"answer": "x", "sources": []}')
    # A passage beyond max_passages was never sent either.
    with pytest.raises(rag.AnswerNotGrounded):
        ask('{"answer": "x", "sources": ["2"]}', max_passages=1)


def test_je_ne_sais_pas_is_the_no_answer_with_its_sources():
    assert ask('{"answer": "Je ne sais pas.", "sources": []}')[0] == {"answer": "je ne sais pas", "sources": []}
    assert ask('{"answer": "JE NE SAIS PAS !", "sources": ["p1"]}')[0]["sources"] == ["p1"]


def test_limits_and_no_call_cases():
    client = ScriptedClient([])
    assert rag.answer("  ", PASSAGES, client) == {"answer": "je ne sais pas", "sources": [], "quotes": []}
    assert rag.answer("Q ?", [], client) == {"answer": "je ne sais pas", "sources": [], "quotes": []}
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


def test_scripted_client_says_what_it_is_and_raises_scripted_errors():
    client = ScriptedClient([EmptyCompletion("boom")])
    assert "teaching prop" in repr(client)
    with pytest.raises(EmptyCompletion):
        client.chat([{"role": "user", "content": "x"}])


def test_the_prompt_is_a_knob_checked_before_any_call():
    passages = [{"id": "a", "text": "Le préavis est de trois mois."}]
    client = ScriptedClient(['{"answer": "Trois mois.", "sources": ["a"]}'])
    out = rag.answer_with_details("Quel préavis ?", passages, client, prompt=rag.PROMPT_REWRITTEN, mode="free")
    assert out["answer"] == "Trois mois." and "Consignes" in out["prompt"] and "Recopie les chiffres" in out["prompt"]
    for bad, message in [("no places at all", "must contain"), ("{passages} {question} {oops}", "only"),
                         (42, "template string")]:
        silent = ScriptedClient([])
        with pytest.raises(BadArgument, match=message):
            rag.answer_with_details("Quel préavis ?", passages, silent, prompt=bad)
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

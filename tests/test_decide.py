"""N4: the validator, the repair round trip, the logprob reading — with scripted replies (test doubles)."""

import json
import math

import pytest

from rungs import decide
from rungs.core.errors import BadArgument
from rungs.model import ScriptedClient, TruncatedCompletion
from rungs.grounding import replies
from rungs import rerank

QUESTIONS = {
    "answers": {"type": "noul", "instructions": "Le passage répond-il à la question ?",
                "criteria": {"true": "il donne la réponse", "false": "il ne la donne pas"}},
    "section": {"type": "choice", "instructions": "Quelle section ?", "criteria": {"conges": "congés", "paie": None}},
    "relevance": {"type": "score", "instructions": "Pertinence ?", "criteria": ["nulle", "faible", "bonne", "parfaite"]},
}
GOOD = {"answers": 0.8, "section": {"choice": "conges", "probs": {"conges": 0.9, "paie": 0.1}},
        "relevance": {"score": 2.5, "probs": {"0": 0.0, "1": 0.1, "2": 0.3, "3": 0.6}, "confidence": 0.7}}


def bad(**changes):
    reply = json.loads(json.dumps(GOOD))
    for key, value in changes.items():
        if value is None:
            reply.pop(key)
        else:
            reply[key] = value
    return reply


@pytest.mark.parametrize("reply, issue", [
    (bad(answers=None), "answers: missing"),
    (bad(extra=0.5), "extra: not a question that was asked"),
    (bad(section={"choice": "rh", "probs": {"conges": 0.5, "paie": 0.5}}), "not one of"),
    (bad(section={"choice": "paie", "probs": {"conges": 0.8, "paie": 0.5}}), "sum to 1.300"),
    (bad(section={"choice": "paie", "probs": {"paie": 1.0}}), "missing ['conges']"),
    (bad(relevance={"score": 4, "probs": {"0": 0, "1": 0, "2": 0, "3": 1}}), "score must be a number in [0, 3]"),
    (bad(relevance={"score": 1, "probs": {"0": 0, "1": 1, "2": 0, "3": 0}, "confidence": 1.5}), "confidence"),
    (bad(answers=1.2), "noul answer is a number in [0, 1]"),
    (bad(answers=True), "noul answer"),
])
def test_conform_names_each_issue(reply, issue):
    answers, issues = decide.conform(reply, QUESTIONS)
    assert answers == {} and any(issue in i for i in issues), issues


def test_conform_accepts_and_normalises_small_drift():
    reply = bad(section={"choice": "conges", "probs": {"conges": 0.66, "paie": 0.33}})
    answers, issues = decide.conform(reply, QUESTIONS)
    assert issues == []
    assert math.isclose(sum(answers["section"]["probs"].values()), 1.0, abs_tol=1e-6)
    assert answers["relevance"]["expected"] == pytest.approx(0.1 + 0.6 + 1.8)
    assert answers["section"]["confidence"] is None and answers["relevance"]["confidence"] == 0.7
    assert "renormalised" in answers["_notes"][0]


def test_extract_reads_bare_fenced_and_prose_wrapped_objects():
    assert replies.extract_answer_object('{"a": 1}') == {"a": 1}
    assert replies.extract_answer_object('```json\n{"a": 1}\n```') == {"a": 1}
    assert replies.extract_answer_object('Voici : {"a": "} pas fini", "b": {"c": 1}} voilà') == {"a": "} pas fini", "b": {"c": 1}}
    assert replies.extract_answer_object('x {"a": "\\"}"} y') == {"a": '"}'}
    with pytest.raises(replies.NoAnswerObject):
        replies.extract_answer_object("aucun objet ici")


def test_one_repair_round_trip_then_success():
    client = ScriptedClient([json.dumps(bad(answers=None)), "Corrigé : " + json.dumps(GOOD)])
    result = decide.ask("état", QUESTIONS, client)
    assert result.repaired and result.cost.calls == 2 and result.backend == "chat"
    repair = client.calls[1]["messages"]
    assert repair[-2]["role"] == "assistant" and "answers: missing" in repair[-1]["content"]
    assert result.answers["answers"]["p"] == 0.8


def test_issues_after_the_repair_raise_decision_invalid_with_the_list():
    client = ScriptedClient([json.dumps(bad(extra=1)), json.dumps(bad(answers=3))])
    with pytest.raises(decide.DecisionInvalid, match="noul answer") as info:
        decide.ask("état", QUESTIONS, client)
    assert len(client.calls) == 2 and info.value.issues


def test_budget_spent_without_an_object_is_named():
    client = ScriptedClient([{"text": '{"answers": 0.8, "section": {"choi', "finish_reason": "length"}])
    with pytest.raises(decide.DecisionBudgetExhausted, match="budget of 400 tokens"):
        decide.ask("état", QUESTIONS, client)
    with pytest.raises(decide.DecisionBudgetExhausted):
        decide.ask("état", QUESTIONS, ScriptedClient([{"text": "", "finish_reason": "length"}]))


@pytest.mark.parametrize("questions, message", [
    ({"q": {"type": "rank", "instructions": "x"}}, "unknown type"),
    ({"q": {"type": "score", "instructions": "x", "criteria": []}}, "ordered list"),
    ({"q": {"type": "choice", "instructions": "x", "criteria": ["a", "a", "b"]}}, "duplicate option keys"),
    ({"q": {"type": "noul", "instructions": " "}}, "instructions are empty"),
    ({}, "non-empty"),
])
def test_bad_questions_are_refused_before_any_call(questions, message):
    client = ScriptedClient([])
    with pytest.raises(BadArgument, match=message):
        decide.ask("état", questions, client)
    assert client.calls == []


def test_a_state_over_budget_is_refused_before_any_call():
    client = ScriptedClient([])
    with pytest.raises(BadArgument, match="budget is 100"):
        decide.ask("x" * 101, QUESTIONS, client, max_state_chars=100)
    assert client.calls == []


def lp(top):
    return [{"token": max(top, key=top.get), "logprob": max(top.values()), "top": top}]


def test_logprob_noul_maps_prefixes_and_reports_coverage():
    top = {"O": math.log(0.6), "Oui": math.log(0.1), "Non": math.log(0.2), " ": math.log(0.05), "Peut": math.log(0.05)}
    result = decide.ask("état", {"a": QUESTIONS["answers"]}, ScriptedClient([{"text": "O", "logprobs": lp(top)}]),
                        backend="logprobs")
    answer = result.answers["a"]
    assert answer["coverage"] == pytest.approx(0.9) and answer["p"] == pytest.approx(0.7 / 0.9)
    assert result.cost.calls == 1 and result.backend == "logprobs"


def test_logprob_choice_and_score_are_distributions_summing_to_one():
    choice = {"A": math.log(0.7), "B": math.log(0.2), "C": math.log(0.1)}
    score = {"3": math.log(0.5), "2": math.log(0.3), "0": math.log(0.1), "x": math.log(0.1)}
    client = ScriptedClient([{"text": "A", "logprobs": lp(choice)}, {"text": "3", "logprobs": lp(score)}])
    out = decide.ask("état", {"s": QUESTIONS["section"], "r": QUESTIONS["relevance"]}, client, backend="logprobs").answers
    assert out["s"]["choice"] == "conges" and math.isclose(sum(out["s"]["probs"].values()), 1.0)
    assert math.isclose(sum(out["r"]["probs"].values()), 1.0) and out["r"]["coverage"] == pytest.approx(0.9)
    assert out["r"]["expected"] == pytest.approx((3 * 0.5 + 2 * 0.3) / 0.9)


def test_low_coverage_is_reported_not_invented():
    top = {"Peut": math.log(0.8), "Oui": math.log(0.1)}
    answer = decide.ask("état", {"a": QUESTIONS["answers"]}, ScriptedClient([{"text": "P", "logprobs": lp(top)}]),
                        backend="logprobs").answers["a"]
    assert answer["trusted"] is False and "p" not in answer and "10%" in answer["note"]


def test_rerank_reorders_by_the_judge_and_breaks_ties_by_id():
    def score_reply(digit):
        return {"text": digit, "logprobs": lp({digit: 0.0})}

    pages = [{"id": p, "title": p, "body": "…"} for p in ("c", "b", "a")]
    client = ScriptedClient([score_reply("1"), score_reply("3"), score_reply("1")])
    ranked = rerank.rerank("question ?", pages, client=client)
    assert [r.id for r in ranked] == ["b", "a", "c"]
    assert ranked[0].parts == {"judge": 3.0} and ranked[0].extra["first_rank"] == 2
    assert len(client.calls) == 3


def test_reranker_is_a_retriever_over_a_first_stage():
    from rungs import bm25

    docs = [{"id": "a", "title": "badge", "body": "badge perdu"}, {"id": "b", "title": "repas", "body": "badge"},
            {"id": "c", "title": "congés", "body": "vacances"}]
    replies = [{"text": "0", "logprobs": lp({"0": 0.0})}, {"text": "3", "logprobs": lp({"3": 0.0})}]
    reranker = rerank.Reranker(bm25.build_index(docs), docs, client=ScriptedClient(replies), depth=2)
    hits = reranker.search("badge perdu", limit=5)
    assert [h.id for h in hits] == ["b", "a"] and [h.extra["first_rank"] for h in hits] == [2, 1]


def test_rerank_with_the_chat_backend_reads_written_scores():
    # The happy path of the chat backend: one call per page, the written score and its distribution.
    def written(score, probs):
        return json.dumps({"judge": {"score": score, "probs": probs}})

    pages = [{"id": p, "title": p, "body": "…"} for p in ("a", "b")]
    client = ScriptedClient([written(1, {"0": 0.2, "1": 0.8, "2": 0, "3": 0}),
                             written(3, {"0": 0, "1": 0, "2": 0.1, "3": 0.9})])
    ranked = rerank.rerank("question ?", pages, client=client, backend="chat")
    assert [r.id for r in ranked] == ["b", "a"]
    assert ranked[0].score == pytest.approx(2.9) and ranked[1].score == pytest.approx(0.8)
    assert all(c["json_schema"] for c in client.calls)  # the chat backend asks for the answer object's shape


@pytest.mark.parametrize("probs", [{"conges": 0.01, "paie": 0.99}, {"conges": 0.4, "paie": 0.6}])
def test_a_choice_that_contradicts_its_own_probabilities_is_refused(probs):
    """Finding: choice « conges » with 0.01 for it and 0.99 for « paie » was accepted as it came."""
    answers, issues = decide.conform(bad(section={"choice": "conges", "probs": probs}), QUESTIONS)
    assert answers == {} and any("section: choice 'conges'" in i and "most probable" in i for i in issues), issues


def test_a_choice_tied_for_the_most_probable_is_its_own_to_make():
    answers, issues = decide.conform(bad(section={"choice": "paie", "probs": {"conges": 0.5, "paie": 0.5}}),
                                     QUESTIONS)
    assert issues == [] and answers["section"]["choice"] == "paie"


def test_a_contradicting_choice_gets_its_one_repair():
    first = bad(section={"choice": "conges", "probs": {"conges": 0.01, "paie": 0.99}})
    client = ScriptedClient([json.dumps(first), json.dumps(GOOD)])
    result = decide.ask("état", QUESTIONS, client)
    assert result.repaired and result.answers["section"]["choice"] == "conges"
    assert "most probable" in client.calls[1]["messages"][-1]["content"]


def test_a_score_its_own_probabilities_contradict_is_refused_and_reranking_never_ranks_by_it():
    # Finding C8: {"score": 0, "probs": {"0": 0, "1": 0, "2": 1}} was accepted as a score of 0.
    rel = {"r": {"type": "score", "instructions": "Pertinence ?", "criteria": ["non", "un peu", "oui"]}}
    answers, issues = decide.conform({"r": {"score": 0, "probs": {"0": 0, "1": 0, "2": 1.0}}}, rel)
    assert answers == {} and "mean level at 2.00" in issues[0]
    answers, issues = decide.conform({"r": {"score": 1.5, "probs": {"0": 0, "1": 0.5, "2": 0.5}}}, rel)
    assert issues == [] and answers["r"]["score"] == 1.5  # within one level of what its probabilities say


def test_a_decision_carries_its_cost_and_a_client_that_miscounts_is_named():
    from rungs.model import ChatModel, ChatResult
    from rungs.model.contract import BadResponse

    class Miscounts(ChatModel):  # a client of one's own (A18): its token counts are not counts
        def chat(self, messages, **kw):
            return ChatResult(text='{"answers": 0.8}', model="m", input_tokens="abc", output_tokens=3,
                              finish_reason="stop", latency=0.0)

        def stream(self, messages, **kw):
            yield ""

    with pytest.raises(BadResponse, match="input_tokens"):
        decide.ask("état", {"answers": QUESTIONS["answers"]}, Miscounts())
    out = decide.ask("état", {"answers": QUESTIONS["answers"]}, ScriptedClient(['{"answers": 0.8}']))
    assert out.cost.calls == 1 and out.cost.prompt_tokens > 0 and out.notes == ()

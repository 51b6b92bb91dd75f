"""rungs.lab.noticing: each statement a notebook prints after a live answer is computed from that answer.

Each case is an answer built by hand (no model), with the one thing there is to notice in it; the
negative control is an answer with nothing to notice.
"""

from rungs.grounding import Answer, Quote, Status
from rungs.lab.noticing import notice

QUESTION = {"id": "q1", "question": "Qui a droit aux chèques-vacances ?", "kind": "lexical",
            "relevant": {"faq": 2, "cse": 0}, "key_facts": ["trois mois | 3 mois"], "evidence": [{"page": "faq"}]}
FAQ = "Qui a droit aux chèques-vacances ? Tous, après trois mois d'ancienneté. Comment s'inscrire ?"


def _answer(text, quotes, sent=None, **kw):
    sent = {"faq": FAQ, "cse": "Le comité social et économique."} if sent is None else sent
    return Answer("Qui a droit aux chèques-vacances ?", Status.ANSWERED, text, sent=sent,
                  cited=tuple(dict.fromkeys(q.source for q in quotes)), quotes=tuple(quotes), **kw)


def test_a_right_answer_well_cited_has_nothing_to_notice():
    said = "Tous, après trois mois d'ancienneté."
    assert notice(_answer(said, [Quote("faq", said)]), QUESTION) == []


def test_a_quote_that_asks_is_noticed():
    said = "Comment s'inscrire ? Tous, après trois mois d'ancienneté."
    out = notice(_answer(said, [Quote("faq", "Comment s'inscrire ?"), Quote("faq", "Tous, après trois mois d'ancienneté.")]),
                 QUESTION)
    assert len(out) == 1 and out[0].startswith("quote [1]") and "is a question" in out[0]


def test_a_citation_to_a_page_judged_useless_and_a_claim_not_on_its_page_are_noticed():
    said = "Tous, après trois mois d'ancienneté. Les demandes se font dans l'outil RH."
    out = notice(_answer(said, [Quote("faq", "Tous, après trois mois d'ancienneté."),
                                Quote("cse", "Le comité social et économique.",
                                      claim="Les demandes se font dans l'outil RH.")]), QUESTION)
    assert any(s.startswith("citation [2] is « cse »") for s in out), out
    assert any(s.startswith("claim [2]") and "0 of its" in s for s in out), out
    assert not any("[1]" in s for s in out), out


def test_a_key_fact_sent_but_not_shown_and_one_never_sent():
    out = notice(_answer("Tous les salariés.", [Quote("faq", "Qui a droit aux chèques-vacances ?")]), QUESTION)
    assert any("« trois mois | 3 mois » is in « faq », sent, but not in what is shown" in s for s in out), out
    out = notice(_answer("Tous les salariés.", [Quote("cse", "Le comité social et économique.")],
                         sent={"cse": "Le comité social et économique."}), QUESTION)
    assert any("is in no passage sent: retrieval lost it" in s for s in out), out


def test_i_do_not_know_where_the_passages_hold_every_key_fact():
    idk = Answer("Qui a droit ?", Status.NO_ANSWER, "je ne sais pas", sent={"faq": FAQ})
    assert notice(idk, QUESTION) == ["« je ne sais pas », though the passages sent hold every key fact: "
                                     "« trois mois | 3 mois » in « faq »"]
    assert notice(Answer("Qui a droit ?", Status.NO_ANSWER, "je ne sais pas", sent={"cse": "Rien."}), QUESTION) == [
        "« je ne sais pas »: the key fact « trois mois | 3 mois » is in no passage sent"]


def test_a_report_cut_by_its_budget_and_a_sentence_withheld():
    said = "Tous, après trois mois d'ancienneté."
    trace = {"withheld": [{"text": "Un taxi est remboursé la nuit entre", "reason": "unfinished: the report was cut"},
                          {"text": "Avant le 1er mars.", "reason": "the figure « 1er mars » is in no source"}]}
    out = notice(_answer(said, [Quote("faq", said)], trace=trace), QUESTION)
    assert out == ["the report was cut by its token budget mid-sentence: « Un taxi est remboursé la nuit entre » "
                   "was never shown",
                   "a sentence was withheld, never shown: « Avant le 1er mars. » (the figure « 1er mars » is in no source)"]


def test_an_answer_to_a_question_no_page_answers():
    unanswerable = {**QUESTION, "kind": "unanswerable", "relevant": {}, "key_facts": [], "evidence": []}
    said = "Tous, après trois mois d'ancienneté."
    assert notice(_answer(said, [Quote("faq", said)]), unanswerable) == [
        "no page answers this question, and an answer was shown anyway"]

"""Answers scored against their reference: the rule a learner can read, and what it refuses to count."""

import pytest

from rungs.core.errors import BadArgument

from rungs.lab import answers
from rungs.lab import metrics as ev
from rungs.lab.handbook import load_questions

QUESTION = {"id": "q", "relevant": {"conges-payes": 2, "cet": 1}, "key_facts": ["2,5 jours", "3 mois | trois mois"],
            "evidence": [{"page": "conges-payes", "text": "…"}]}
UNANSWERABLE = {"id": "u", "relevant": {}, "key_facts": [], "evidence": []}


@pytest.mark.parametrize("answer, fact, found", [
    ("Vous acquérez 2.5 jours par mois", "2,5 jours", True),
    ("Vous acquérez 2,5 jours par mois", "2,5 jours", True),
    ("Vous acquérez 2 jours par mois", "2,5 jours", False),
    ("12,5 jours", "5 jours", False),                     # a decimal part is not a number of its own
    ("un préavis de trois mois", "3 mois", True),         # number words are digits
    ("une prime de 1 500 €", "1500", True),               # thousands separated by a space
    ("Le premier mai est chômé", "1er mai", True),
    ("LES CONGÉS PAYÉS", "congés payés", True),           # case folded
    ("du CET", "compte épargne-temps | CET", True),       # variants
    ("", "2,5 jours", False),
    # Units and numbers as people write them.
    ("La durée collective est de 35 h", "35 heures", True),
    ("35h par semaine", "35 heures", True),
    ("2.50 euros par jour", "2,50 €", True),
    ("2,5 € par jour", "2,50 €", True),
    ("dans les vingt-quatre heures", "24 h", True),
    ("quatre-vingt-dix jours", "90 jours", True),
    ("mille cinq cents euros", "1 500 €", True),
    ("deux jours et demi par mois", "2,5 jours", True),
    ("à 8:30", "8 h 30", True),
    ("25 ans", "25 %", False),                            # a number keeps its unit
    ("2,50 jours", "50 jours", False),
    # Inflections through the collection's stemmer, synonyms written in the key.
    ("des sanctions disciplinaires", "sanction | disciplinaire", True),
    ("Prévenez votre chef", "responsable | manager | chef", True),
    ("Prévenez un collègue", "responsable | manager | chef", False),
    # « ^ »: the variant must open the answer.
    ("Non, ils sont perdus.", "^non", True),
    ("Les RTT non pris sont reportés.", "^non", False),
])
def test_key_facts_are_found_after_normalisation(answer, fact, found):
    assert answers.has_fact(fact, answer) is found


def test_an_answer_is_right_only_with_every_key_fact():
    right = answers.score_answer("2,5 jours par mois, préavis de 3 mois [1]", QUESTION, ["conges-payes#1"])
    assert right["correct"] and right["citation_precision"] == 1.0 and right["citation_recall"] == 1.0
    half = answers.score_answer("2,5 jours par mois", QUESTION, ["cet"])
    assert not half["correct"] and half["facts"] == {"2,5 jours": True, "3 mois | trois mois": False}
    assert half["citation_precision"] == 1.0 and half["citation_recall"] == 0.0  # a page that helps, not the evidence
    wrong_page = answers.score_answer("2,5 jours, 3 mois", QUESTION, ["cantine", "conges-payes"])
    assert wrong_page["correct"] and wrong_page["citation_precision"] == 0.5


def test_the_mark_that_asks_for_a_citation_too():
    # Right, citing a page that answers: both marks agree.
    cited_well = answers.score_answer("2,5 jours, 3 mois", QUESTION, ["conges-payes"])
    assert cited_well["correct"] and cited_well["correct_and_cited"]
    # Right by the key facts, citing only a page judged to say nothing of it: right, not right-and-cited.
    cited_badly = answers.score_answer("2,5 jours, 3 mois", QUESTION, ["cantine"])
    assert cited_badly["correct"] and not cited_badly["correct_and_cited"]
    assert answers.score_answer("2,5 jours, 3 mois", QUESTION, ["cet"])["correct_and_cited"]  # a page that helps
    assert not answers.score_answer("2,5 jours", QUESTION, ["conges-payes"])["correct_and_cited"]
    assert answers.score_answer("Je ne sais pas.", UNANSWERABLE)["correct_and_cited"]
    report = answers.answer_report([cited_well, cited_badly])
    assert report["accuracy"] == 1.0 and report["correct_and_cited"] == 0.5


def test_key_facts_given_as_one_string_are_refused():
    # One string would be read as one fact per letter: « 3 mois » would ask for « 3 », « m », « o »…
    with pytest.raises(answers.BadArgument, match="key_facts must be a list"):
        answers.score_answer("3 mois", {**QUESTION, "key_facts": "3 mois"})
    with pytest.raises(answers.BadArgument, match="non-empty text"):
        answers.score_answer("3 mois", {**QUESTION, "key_facts": ["3 mois", 3]})


def test_abstention_is_right_only_where_no_page_answers():
    assert answers.score_answer("Je ne sais pas.", UNANSWERABLE)["correct"]
    assert not answers.score_answer("Il faut demander au CSE.", UNANSWERABLE)["correct"]
    abstained = answers.score_answer("je ne sais pas", QUESTION)
    assert abstained["abstained"] and not abstained["correct"] and abstained["citation_precision"] is None
    assert answers.score_answer(None, QUESTION)["abstained"]


def test_report_sums_up_accuracy_abstention_and_citations():
    scored = [answers.score_answer("2,5 jours, 3 mois", QUESTION, ["conges-payes"]),
              answers.score_answer("je ne sais pas", QUESTION),
              answers.score_answer("je ne sais pas", UNANSWERABLE),
              answers.score_answer("oui", UNANSWERABLE)]
    report = answers.answer_report(scored)
    assert report["accuracy"] == 0.5 and report["correct_answerable"] == 0.5
    assert report["abstained_when_answerable"] == 0.5 and report["abstained_when_unanswerable"] == 0.5
    assert report["citation_precision"] == 1.0


def test_every_reference_answer_scores_right_against_itself():
    # The rule is only as good as the key facts: each reference answer must pass its own.
    for q in load_questions():
        cited = [e["page"] for e in q["evidence"]]
        scored = answers.score_answer(q["answer"] if q["relevant"] else "Je ne sais pas.", q, cited)
        assert scored["correct"], (q["id"], scored["facts"])


# ---------------------------------------------------------------- the edges (issue 32) and the one Answer

def test_a_number_of_thousands_of_digits_is_read_not_refused_by_pythons_limit():
    # A25: int() refuses more than 4,300 digits; the mark read every number through it.
    huge = "1" * 5000
    assert answers.answer_words(f"Il faut {huge} jours.")[2] == huge
    assert answers.score_answer(f"Il faut {huge} jours.", QUESTION)["correct"] is False


def test_a_file_name_may_hold_a_hash_and_only_a_final_number_names_a_passage():
    # C10: « a#1.md#2 » was cut at the first « # »: its precision read 0.
    q = {"id": "x", "relevant": {"a#1.md": 2}, "key_facts": ["trois mois"], "evidence": [{"page": "a#1.md", "text": "."}]}
    marked = answers.score_answer("Trois mois.", q, ["a#1.md#2"])
    assert marked["citation_precision"] == 1.0 and marked["correct_and_cited"]


def test_judgments_of_zero_or_a_near_miss_that_only_helps_are_unanswerable():
    # C10: judgments that are all 0 counted as answerable, so abstaining was marked wrong.
    zeros = {"id": "z", "relevant": {"a": 0}, "key_facts": []}
    assert answers.score_answer("Je ne sais pas.", zeros)["correct"] is True
    near = {"id": "n", "kind": "unanswerable", "relevant": {"a": 1}, "key_facts": []}
    assert answers.score_answer("Je ne sais pas.", near)["correct"] is True


def test_wrong_shapes_are_named():
    # A22: answer_report on a dict lacking the mark's keys, evidence lacking its page.
    with pytest.raises(BadArgument, match="lacks"):
        answers.answer_report([{"answerable": True}])
    with pytest.raises(BadArgument, match="evidence"):
        answers.score_answer("x", {**QUESTION, "evidence": [{"text": "no page"}]})


def test_the_mark_reads_the_one_answer_shape():
    from rungs.grounding import Answer, Cost, Status

    shown = Answer(question="?", status=Status.ANSWERED, text="2,5 jours par mois, 3 mois d'ancienneté.",
                   sent={"conges-payes": "t"}, cited=("conges-payes",), cost=Cost(1))
    refused = shown.with_(status=Status.REFUSED, text="", cited=(), reason="a figure")
    assert answers.score_answer(shown, QUESTION)["correct"] is True
    assert answers.score_answer(shown, QUESTION)["citation_precision"] == 1.0
    assert answers.score_answer(refused, QUESTION)["abstained"] is True  # nothing shown: nothing stated
    # One unit vocabulary with the figure check: « 22 euros » and « 22 € », « 3 années » and « 3 ans ».
    assert answers.has_fact("22 €", "Le repas coûte 22 euros.") and answers.has_fact("3 ans", "Trois années.")


# ---------------------------------------------------------------- the third audit (issue 38): polarity, whole figures, one reader

YES_NO = {"id": "yn", "relevant": {"rtt": 2}, "answer": "Non : les RTT non pris au 31 décembre sont perdus.",
          "key_facts": ["^non | perdus | ne se reportent pas"], "evidence": [{"page": "rtt", "text": "…"}]}
RTT = "Les RTT non pris au 31 décembre sont perdus : ils ne se reportent pas à l’année suivante."


@pytest.mark.parametrize("shown, right", [
    (f"Oui\n{RTT}", False),                         # q005's stored row: a false « Oui » above a right quote
    (f"Oui, ils sont reportés.\n{RTT}", False),
    (f"Non\n{RTT}", True),
    (RTT, True),                                    # no lead-in: the copied sentence opens, and says it
    ("Oui. Les RTT sont perdus.", False),           # the first sentence is the opening of a free answer
    ("Non.", True),
])
def test_the_opening_must_agree_with_a_yes_no_reference(shown, right):
    marked = answers.score_answer(shown, YES_NO, ["rtt"])
    assert marked["correct"] is right, marked
    assert marked["polarity"]["reference"] == "non"


def test_a_lead_in_whose_figure_the_reference_contradicts_is_wrong():
    q = {"id": "f", "relevant": {"conges-payes": 2}, "answer": "Au moins 12 jours ouvrables consécutifs.",
         "key_facts": ["12 jours"], "evidence": [{"page": "conges-payes", "text": "…"}]}
    quote = "Le congé principal d’été dure au moins douze jours ouvrables consécutifs."
    wrong = answers.score_answer(f"24 jours.\n{quote}", q, ["conges-payes"])
    assert not wrong["correct"] and wrong["contradicts"] == ["24 jours"]
    assert answers.score_answer(f"12 jours.\n{quote}", q, ["conges-payes"])["correct"]
    # a figure of another unit than the reference's cannot be checked: it is not called a contradiction
    assert answers.score_answer(f"En été, sur 2 mois.\n{quote}", q, ["conges-payes"])["contradicts"] == []


@pytest.mark.parametrize("fact, shown, found", [
    ("7 h", "du lundi au vendredi, de 7 h 30 à 19 h", False),   # q061: « 7 h » inside « 7 h 30 »
    ("7 h", "du lundi au vendredi, de 7 h à 19 h", True),
    ("19 h", "de 7 h 30 à 19 h", True),
    ("30", "à 8 h 30", False),                                 # the minutes of a time are not a count
    ("2 jours", "12 jours", False),
    ("500 €", "1 500 €", False),
])
def test_a_figure_is_found_only_whole(fact, shown, found):
    assert answers.has_fact(fact, shown) is found


@pytest.mark.parametrize("one, other", [
    ("1.500 €", "1 500 €"), ("8:30", "8 h 30"), ("25 pour cent", "25 %"), ("premier mars", "1er mars"),
])
def test_one_number_reader_for_the_mark_and_the_checks(one, other):
    from rungs.grounding import figures
    assert answers.answer_words(one) == answers.answer_words(other)
    assert figures.keys(one) == figures.keys(other)
    # the checks: an answer faithful to « 25 % » or « 1er mars » is supported by the other spelling
    assert figures.unsupported(one, [other]) == [] and figures.unsupported(other, [one]) == []

"""Exercises of notebook 02 (hybrid search): the fusion constant, a strict keyword leg, the answer retriever.

Each check recomputes the truth with ``rungs`` (the encoder is loaded once, on the first check).
"""

from __future__ import annotations

from functools import cache

from . import as_integer as _integer, as_number, Exercise, ExerciseBroken


def _fraction(answer) -> float:
    return as_number(answer, "a number between 0 and 1")


@cache
def _setup():
    from ..bm25 import build_index
    from ..lab.handbook import load_pages, load_questions
    from ..hybrid import Hybrid
    from ..vectors import VectorIndex

    pages, questions = load_pages(), load_questions()
    keyword = build_index(pages, stopwords=True)
    vector = VectorIndex(pages)
    return pages, questions, keyword, Hybrid({"keyword": keyword, "vector": vector})


# ---------------------------------------------------------------- 1 · where k flips the order

QUESTION_ID, FIRST_SMALL_K, FIRST_LARGE_K = "q002", "organisation", "conges-payes"


def _smallest_k() -> int:
    _, questions, _, fusion = _setup()
    question = next(q["question"] for q in questions if q["id"] == QUESTION_ID)
    for k in range(0, 1001):
        scores = {h.id: h.score for h in fusion.search(question, k=k, limit=70)}
        if scores.get(FIRST_LARGE_K, 0.0) > scores.get(FIRST_SMALL_K, 0.0):
            return k
    raise ExerciseBroken("no k up to 1000 puts the page ahead")  # pragma: no cover - the data changed


def _judge_smallest_k(answer):
    answer = _integer(answer)
    truth = _smallest_k()
    if answer == truth:
        return True, (f"at k = {answer} the page found 4th and 2nd outscores the page that only the keyword leg "
                      "ranks 1st; below it, each leg's favourite dominates")
    if answer < truth:
        return False, "at that k Organisation still scores at least as much: print both fused scores"
    return False, "at that k Congés payés is ahead, but it already was at a smaller k"


SMALLEST_K = Exercise(
    name="smallest_k",
    question="The smallest whole k at which Congés payés's fused score beats Organisation's for q002.",
    judge=_judge_smallest_k,
    hint_text=("loop k over 0, 1, 2, … and print {h.id: h.score for h in fusion.search(question, k=k, limit=70)} "
               "for the two pages; compare the scores, not only the ranks."),
    solution_code="""
for k in range(0, 100):
    scores = {h.id: h.score for h in fusion.search(question, k=k, limit=70)}
    if scores["conges-payes"] > scores["organisation"]:
        print(k)  # Congés payés: ranks 4 and 2; Organisation: ranks 1 and far down the vector leg
        break
# By hand: 1/(k+4) + 1/(k+2) > 1/(k+1) + 1/(k+47) from k = 1 on (0.533 against 0.521); at k = 0, 0.750 against 1.021.""",
    solution_value=_smallest_k,
    wrong_answers=[0, 2, 60],
)


# ---------------------------------------------------------------- 2 · how often a strict keyword leg speaks

def _all_leg_count() -> int:
    _, questions, keyword, _ = _setup()
    return sum(bool(keyword.search(q["question"], match="all")) for q in questions
               if any(g > 0 for g in q["relevant"].values()))


def _judge_all_leg_count(answer):
    answer = _integer(answer)
    truth = _all_leg_count()
    if answer == truth:
        return True, ("so on every other question a fusion with this leg is the vector leg alone: "
                      "the keyword evidence is almost never there")
    _, questions, _, _ = _setup()
    answerable = sum(1 for q in questions if any(g > 0 for g in q["relevant"].values()))
    if answer >= answerable:
        return False, "that counts every answerable question; count only those where the search returns a page"
    return False, "not that many: count the questions whose search(..., match='all') is not empty"


ALL_LEG_COUNT = Exercise(
    name="all_leg_count",
    question="On how many answerable questions does the keyword leg matching all words return a page?",
    judge=_judge_all_leg_count,
    hint_text="an answerable question has a page graded above 0 in q['relevant']; an empty list is falsy.",
    solution_code="""
sum(bool(keyword.search(q["question"], match="all")) for q in questions
    if any(grade > 0 for grade in q["relevant"].values()))""",
    solution_value=_all_leg_count,
    wrong_answers=[139, 0, 100],
)


# ---------------------------------------------------------------- 3 · the answer retriever on paraphrases

def _answer_paraphrase_sent() -> float:
    from ..hybrid import answer_retriever
    from ..lab.metrics import evaluate
    from ..lab.tuning import halves

    pages, questions, _, _ = _setup()
    development, _ = halves(questions)
    paraphrase = [q for q in development if q["kind"] == "paraphrase"]
    retriever = answer_retriever(pages)
    return evaluate(lambda text: retriever.search(text, limit=4), paraphrase)["answer@4"]


def _judge_answer_paraphrase_sent(answer):
    answer = _fraction(answer)
    truth = _answer_paraphrase_sent()
    if abs(answer - truth) <= 0.0015:
        return True, ("for more than half of the paraphrases a page that answers is among the four passages sent; "
                      "BM25 alone sends one for none of them")
    if answer > truth:
        return False, ("too high: did you keep only the paraphrase questions of the development half? "
                       "The lexical ones lift the average")
    return False, "too low: was it the answer retriever (hybrid.answer_retriever(pages)) that ranked, with limit=4?"


ANSWER_PARAPHRASE_SENT = Exercise(
    name="answer_paraphrase_sent",
    question="answer@4 of hybrid.answer_retriever(pages) on the development half's paraphrase questions.",
    judge=_judge_answer_paraphrase_sent,
    hint_text=("development = tuning.halves(questions)[0]; keep q['kind'] == 'paraphrase'; "
               "ev.evaluate(lambda t: answers.search(t, limit=4), those)['answer@4']."),
    solution_code="""
answers = hybrid.answer_retriever(pages)
development_paraphrase = [q for q in tuning.halves(questions)[0] if q["kind"] == "paraphrase"]
ev.evaluate(lambda t: answers.search(t, limit=4), development_paraphrase)["answer@4"]""",
    solution_value=_answer_paraphrase_sent,
    wrong_answers=[0.0, 1.0],
)


EXERCISES = {ex.name: ex for ex in (SMALLEST_K, ALL_LEG_COUNT, ANSWER_PARAPHRASE_SENT)}

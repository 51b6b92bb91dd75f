"""Exercises of notebook 02 (hybrid search): a sentence's lead, RRF by hand, k, a leg's weight, a strict leg, the answer retriever.

Each check recomputes the truth with ``rungs`` (the encoder is loaded once, on the first check):
nothing here is a stored number. The first five sit in the core, beside the idea they check.
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
    from ..hybrid import from_legs
    from ..vectors import VectorIndex

    pages, questions = load_pages(), load_questions()
    keyword = build_index(pages, stopwords=True)
    vector = VectorIndex(pages)
    return pages, questions, keyword, from_legs(keyword, vector), vector


# ---------------------------------------------------------------- 0 · a sentence's lead

TAXI_WORD, TAXI_SENTENCE = "taxi", "Qui rembourse le taxi ?"  # English: who pays back the taxi?


def _lead(text: str) -> float:
    first, second = _setup()[4].search(text, limit=2)
    return first.score - second.score


def _judge_sentence_lead(answer):
    answer = as_number(answer, "a number: the first cosine minus the second, e.g. 0.012")
    truth, bare = _lead(TAXI_SENTENCE), _lead(TAXI_WORD)
    if abs(answer - truth) <= 1.5e-3:
        return True, (f"the sentence's first page leads by {truth:.3f}, the bare word's by {bare:.3f}: "
                      "the question says what is asked, and the right page pulls ahead")
    if abs(answer - bare) <= 1.5e-3:
        return False, "that is the bare word's lead: search the whole question"
    if answer < 0:
        return False, "the first cosine is the larger one: subtract the second from the first"
    return False, "not that lead: print the first two hits of vector.search(...) and subtract their scores"


SENTENCE_LEAD = Exercise(
    name="sentence_lead",
    question="The lead of the vector leg's first page over its second for « Qui rembourse le taxi ? ».",
    judge=_judge_sentence_lead,
    hint_text="hits = vector.search(\"Qui rembourse le taxi ?\", limit=2); hits[0].score - hits[1].score.",
    solution_code="""
for text in ("taxi", "Qui rembourse le taxi ?"):
    first, second = vector.search(text, limit=2)
    print(f"{text:<25} {first.id} leads {second.id} by {first.score - second.score:.3f}")""",
    solution_value=lambda: _lead(TAXI_SENTENCE),
    wrong_answers=[lambda: _lead(TAXI_WORD), lambda: -_lead(TAXI_SENTENCE), 1.0],
)


# ---------------------------------------------------------------- 1 · RRF by hand

BY_HAND_PAGE, BY_HAND_K = "conges-payes", 10


def _fused(page: str, k: float) -> float:
    _, questions, _, fusion, _ = _setup()
    question = next(q["question"] for q in questions if q["id"] == QUESTION_ID)
    return next(h.score for h in fusion.search(question, k=k, limit=70) if h.id == page)


def _judge_fused_by_hand(answer):
    answer = as_number(answer, "a number: the fused score, e.g. 0.0123")
    truth = _fused(BY_HAND_PAGE, BY_HAND_K)
    if abs(answer - truth) <= 5e-4:
        return True, f"{truth:.4f}: what fusion.search gives Congés payés at k = 10 — two fractions, nothing else"
    if abs(answer - _fused(BY_HAND_PAGE, 60)) <= 5e-4:
        return False, "that is its score at the textbook k = 60: put 10 in the denominators"
    return False, "not its fused score at k = 10: 1/(k + its keyword rank) + 1/(k + its vector rank)"


FUSED_BY_HAND = Exercise(
    name="fused_by_hand",
    question="Congés payés's fused score for q002 at k = 10, from its two ranks.",
    judge=_judge_fused_by_hand,
    hint_text="the table gives its ranks: 4 in the keyword leg, 2 in the vector leg; each weight is 1.",
    solution_code="""
1 / (10 + 4) + 1 / (10 + 2)   # check it: [h.score for h in fusion.search(question, k=10) if h.id == "conges-payes"]""",
    solution_value=lambda: _fused(BY_HAND_PAGE, BY_HAND_K),
    wrong_answers=[lambda: _fused(BY_HAND_PAGE, 60), 1 / 4 + 1 / 2],
)


# ---------------------------------------------------------------- 2 · where k flips the order

QUESTION_ID, FIRST_SMALL_K, FIRST_LARGE_K = "q002", "organisation", "conges-payes"


def _smallest_k() -> int:
    _, questions, _, fusion, _ = _setup()
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


# ---------------------------------------------------------------- 3 · how much to trust the vector leg

HOME_ID, HOME_PAGE, HOME_K, HOME_TOP = "q083", "teletravail", 5, 2


def _home_in_top(weight: float) -> bool:
    _, questions, _, fusion, _ = _setup()
    question = next(q["question"] for q in questions if q["id"] == HOME_ID)
    hits = fusion.search(question, k=HOME_K, leg_weights={"keyword": 1.0, "vector": weight}, limit=HOME_TOP)
    return HOME_PAGE in [h.id for h in hits]


def _smallest_weight() -> float:
    for step in range(0, 41):
        if _home_in_top(step * 0.25):
            return step * 0.25
    raise ExerciseBroken("no vector weight up to 10 puts Télétravail in the top 2")  # pragma: no cover


def _judge_vector_weight(answer):
    answer = as_number(answer, "a weight, a multiple of 0.25, e.g. 1.25")
    if answer < 0 or abs(answer / 0.25 - round(answer / 0.25)) > 1e-9:
        return False, f"{answer} is not a multiple of 0.25 from 0 up"
    truth = _smallest_weight()
    if answer == truth:
        return True, (f"at {answer} Télétravail is in the top 2, at {answer - 0.25} it is not: "
                      "the vector leg has to outweigh the keyword leg's stray « maison » and « depuis »")
    if _home_in_top(answer):
        return False, f"at {answer} it is in the top 2, but it already was at a smaller weight"
    return False, f"at {answer} Télétravail is not yet in the top 2: weigh the vector leg more"


VECTOR_WEIGHT = Exercise(
    name="vector_weight",
    question="The smallest vector weight (steps of 0.25, keyword weight 1, k = 5) with Télétravail in the top 2 for q083.",
    judge=_judge_vector_weight,
    hint_text=("loop over w = 1.0, 1.25, 1.5, … and print the ids of fusion.search(home['question'], k=5, "
               "leg_weights={'keyword': 1.0, 'vector': w}, limit=2)."),
    solution_code="""
for step in range(0, 41):
    w = step * 0.25
    top = [h.id for h in fusion.search(home["question"], k=5, leg_weights={"keyword": 1.0, "vector": w}, limit=2)]
    if "teletravail" in top:
        print(w, top)
        break""",
    solution_value=_smallest_weight,
    wrong_answers=[1.0, 2.0, lambda: _smallest_weight() + 0.25],
)


# ---------------------------------------------------------------- 4 · how often a strict keyword leg speaks

def _all_leg_count() -> int:
    _, questions, keyword, _, _ = _setup()
    return sum(bool(keyword.search(q["question"], match="all")) for q in questions
               if any(g > 0 for g in q["relevant"].values()))


def _judge_all_leg_count(answer):
    answer = _integer(answer)
    truth = _all_leg_count()
    if answer == truth:
        return True, ("so on every other question a fusion with this leg is the vector leg alone: "
                      "the keyword evidence is almost never there")
    _, questions, _, _, _ = _setup()
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
    wrong_answers=[185, 0, 100],   # every answerable question, none, a guess
)


# ---------------------------------------------------------------- 5 · the answer retriever on paraphrases

def _answer_paraphrase_sent() -> float:
    from ..hybrid import answer_retriever
    from ..lab.metrics import evaluate
    from ..lab.tuning import halves

    pages, questions, _, _, _ = _setup()
    # Section 10's development half: of the questions the answer retriever was chosen on (its chosen_on).
    development, _ = halves([q for q in questions if not q.get("added")])
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
    hint_text=("development = tuning.halves(chosen_on)[0]; keep q['kind'] == 'paraphrase'; "
               "ev.evaluate(lambda t: answers.search(t, limit=4), those)['answer@4']."),
    solution_code="""
answers = hybrid.answer_retriever(pages)
development_paraphrase = [q for q in tuning.halves(chosen_on)[0] if q["kind"] == "paraphrase"]
ev.evaluate(lambda t: answers.search(t, limit=4), development_paraphrase)["answer@4"]""",
    solution_value=_answer_paraphrase_sent,
    wrong_answers=[0.0, 1.0],
)


EXERCISES = {ex.name: ex for ex in (SENTENCE_LEAD, FUSED_BY_HAND, SMALLEST_K, VECTOR_WEIGHT, ALL_LEG_COUNT,
                                    ANSWER_PARAPHRASE_SENT)}

"""Exercises of the tuning lab (notebook 06): metrics by hand, one knob at a time, the protocol on it, how many questions a test needs.

Each check recomputes the truth with ``rungs`` (the encoder is loaded only by the exercise that needs it).
"""

from __future__ import annotations

from functools import cache

from . import Exercise, as_integer as _integer, as_number


def _number(answer) -> float:
    return as_number(answer)


@cache
def _handbook():
    from ..bm25 import build_index
    from ..fastbm25 import FastBM25
    from ..lab.handbook import load_pages, load_questions

    pages, questions = load_pages(), load_questions()
    index = build_index(pages)
    # The lab's choices are made on the questions that were there when they were made (section 2's chosen_on).
    chosen_on = [q for q in questions if not q.get("added")]
    return pages, chosen_on, index, FastBM25.from_index(index)


# ---------------------------------------------------------------- 1 · average precision by hand

def _average_precision() -> float:
    from ..lab.metrics import average_precision

    _, questions, index, _ = _handbook()
    q = next(q for q in questions if q["id"] == "q014")
    return average_precision(index.search(q["question"], limit=5), q["relevant"])


def _judge_average_precision(answer):
    answer = _number(answer)
    truth = _average_precision()
    if abs(answer - truth) <= 0.001:
        return True, ("the first relevant page is at rank 1 (precision 1/1), the second at rank 3 "
                      "(precision 2/3); their mean over the relevant pages")
    if abs(answer - 1.0) <= 0.001:
        return False, "that is the reciprocal rank: average precision looks at every relevant page, not the first"
    if abs(answer - 0.4) <= 0.001:
        return False, "that is precision@5: average precision takes the precision at each relevant page's rank"
    return False, "list the ranks of the relevant pages; at each, precision = relevant so far / rank; then average"


AVERAGE_PRECISION = Exercise(
    name="average_precision",
    question="The average precision of the q014 ranking of section 1, computed by hand.",
    judge=_judge_average_precision,
    hint_text="find where the two judged pages are in the ranking; precision@rank at each; mean over the judged pages.",
    solution_code="""
# conge-enfant-malade at rank 1: 1/1; don-de-jours at rank 3: 2/3
answer = (1 / 1 + 2 / 3) / 2
assert abs(answer - ev.average_precision(ranking, q["relevant"])) < 1e-12""",
    solution_value=_average_precision,
    wrong_answers=[1.0, 0.4, 0.95],
)


# ---------------------------------------------------------------- recall at a cut

RECALL_AT = 2


def _recall_at() -> float:
    from ..lab.metrics import recall

    _, questions, index, _ = _handbook()
    q = next(q for q in questions if q["id"] == "q014")
    return recall(index.search(q["question"], limit=5), q["relevant"], RECALL_AT)


def _judge_recall_at(answer):
    from ..lab.metrics import precision

    answer, truth = _number(answer), _recall_at()
    if abs(answer - truth) <= 0.001:
        return True, (f"of the relevant pages (grade 1 counts too), the share in the first {RECALL_AT}: "
                      "recall counts what was found among all there is to find")
    _, questions, index, _ = _handbook()
    q = next(q for q in questions if q["id"] == "q014")
    if abs(answer - precision(index.search(q["question"], limit=5), q["relevant"], RECALL_AT)) <= 0.001:
        return False, f"that is precision@{RECALL_AT}: the share of the first {RECALL_AT} that is relevant"
    return False, f"count the relevant pages in the first {RECALL_AT}, divide by the number of relevant pages"


RECALL_AT_2 = Exercise(
    name="recall_at_2",
    question=f"The recall@{RECALL_AT} of the q014 ranking of section 1.",
    judge=_judge_recall_at,
    hint_text="q['relevant'] holds two pages; how many of them are in the ranking's first two?",
    solution_code="""
# conge-enfant-malade at rank 1 is in the first two, don-de-jours at rank 3 is not
answer = 1 / 2
assert abs(answer - ev.recall(ranking, q["relevant"], 2)) < 1e-12""",
    solution_value=_recall_at,
    wrong_answers=[1.0, 0.0, 0.25],
)


# ---------------------------------------------------------------- 2 · one knob at a time

K1_VALUES = [1.2, 0.0, 0.3, 0.6, 0.9, 1.5, 2.0, 3.0, 5.0, 8.0, 12.0, 20.0, 50.0]


def _k1_alone() -> float:
    from ..lab.tuning import halves, sweep

    _, questions, _, fast = _handbook()
    development, _ = halves(questions)

    def run(question, k1):
        return fast.search(question, limit=10, explain=False, k1=k1, b=0.75, weights={"title": 1.0, "body": 1.0})

    frame = sweep({"k1": K1_VALUES}, run, development, progress=False)
    return float(frame.sort_values("MRR", ascending=False, kind="stable").iloc[0]["k1"])


def _judge_k1_alone(answer):
    answer = _number(answer)
    truth = _k1_alone()
    if answer == truth:
        return True, ("with b = 0.75 a moderate k1 is best, where the full sweep's best, with b at its bottom, has a "
                      "larger one: the knobs interact, so the best k1 depends on where b is")
    if answer == 1.2:
        return False, "1.2 is the default; does the sweep of k1 alone, at b = 0.75 and title 1, agree?"
    return False, "sweep k1 over the section-3 list with b = 0.75 and title weight 1, on the development half, by MRR"


K1_ALONE = Exercise(
    name="k1_alone",
    question="With b = 0.75 and title weight 1 fixed, the k1 of the section-3 grid with the best development-half MRR.",
    judge=_judge_k1_alone,
    hint_text=("tuning.sweep({'k1': grid['k1']}, lambda t, k1: run(t, k1=k1, b=0.75, title=1), development, progress=False), "
               "then the row with the largest MRR (the first in grid order among ties)."),
    solution_code="""
alone = tuning.sweep({"k1": grid["k1"]}, lambda t, k1: run(t, k1=k1, b=0.75, title=1), development, progress=False)
alone.sort_values("MRR", ascending=False, kind="stable").iloc[0]["k1"]""",
    solution_value=_k1_alone,
    wrong_answers=[12.0, 1.2, 50.0],
)


# ---------------------------------------------------------------- the protocol on one knob

@cache
def _k1_choice() -> dict:
    from ..lab.tuning import choose

    _, questions, _, fast = _handbook()

    def run(question, k1):
        return fast.search(question, limit=10, explain=False, k1=k1, b=0.75, weights={"title": 1.0, "body": 1.0})

    return choose({"k1": K1_VALUES}, run, questions, default={"k1": 1.2}, metric="MRR", final=False)


def _judge_k1_out_of_fold(answer):
    answer, choice = _number(answer), _k1_choice()
    cv = choice["cv"]
    if abs(answer - cv["gain"]) <= 0.0005:
        held = "the default holds" if choice["kept_default"] else "the default gives way"
        return True, (f"out of fold, « take the best k1 » buys {cv['gain']:+.3f} MRR (p = {cv['p']:.3f}): {held}, "
                      f"though the sweep's own best is k1 = {choice['sweep_best']['k1']:g}")
    if abs(answer - -cv["gain"]) <= 0.0005:
        return False, "the sign: the gain is the chosen setting's MRR minus the default's"
    return False, "tuning.choose(...)['cv']['gain'], with final=False: the decision needs no final half"


K1_OUT_OF_FOLD = Exercise(
    name="k1_out_of_fold",
    question="Run the protocol on k1 alone (b = 0.75, title weight 1, default k1 = 1.2): what out-of-fold MRR gain "
             "does « take the sweep's best k1 » buy?",
    judge=_judge_k1_out_of_fold,
    hint_text=("tuning.choose({'k1': grid['k1']}, lambda t, k1: run(t, k1=k1, b=0.75, title=1), chosen_on, "
               "default={'k1': 1.2}, metric='MRR', final=False), then its ['cv']['gain']."),
    solution_code="""
alone = tuning.choose({"k1": grid["k1"]}, lambda t, k1: run(t, k1=k1, b=0.75, title=1), chosen_on,
                      default={"k1": 1.2}, metric="MRR", final=False)
print(alone["sweep_best"], alone["best"], alone["cv"]["p"])
answer = alone["cv"]["gain"]""",
    solution_value=lambda: _k1_choice()["cv"]["gain"],
    wrong_answers=[lambda: -_k1_choice()["cv"]["gain"] if abs(_k1_choice()["cv"]["gain"]) > 0.001 else 1.0, 0.06, 0.0],
)


# ---------------------------------------------------------------- 3 · how many questions would it take?

def _fusion_needed() -> int:
    from ..bm25 import build_index
    from ..lab.metrics import paired_test, per_question, questions_needed
    from ..hybrid import rrf
    from ..lab.tuning import halves
    from ..vectors import VectorIndex

    pages, questions, _, _ = _handbook()
    development, _ = halves(questions)
    keyword, vector = build_index(pages, stopwords=True), VectorIndex(pages)
    legs = {q["question"]: {"keyword": keyword.search(q["question"], limit=70),
                            "vector": vector.search(q["question"], limit=70)} for q in development}
    test = paired_test(per_question(lambda t: rrf(legs[t], k=60), development),
                       per_question(lambda t: rrf(legs[t], k=0), development))
    return questions_needed(test["diff"], test["sd"])


def _judge_fusion_needed(answer):
    answer = _integer(answer)
    truth = _fusion_needed()
    if abs(answer - truth) <= max(1, truth // 100):
        return True, ("more questions than a half holds for a difference that small: the protocol found it "
                      "by its 50 folds, not by one paired test on the half")
    if answer in (69, 70, 139):
        return False, "that is the size of a half (or of both): the question is how many a test would need"
    return False, ("paired_test(per_question(k = 60), per_question(k = 0)) on the development half, "
                   "then questions_needed(its diff, its sd)")


FUSION_NEEDED = Exercise(
    name="fusion_needed",
    question="How many questions would a paired test need to detect the development-half MRR difference between k = 0 and k = 60?",
    judge=_judge_fusion_needed,
    hint_text=("ev.paired_test(ev.per_question(lambda t: fuse(t, k=60), development), ev.per_question(lambda t: fuse(t, k=0), development)) "
               "gives diff and sd; ev.questions_needed(diff, sd) turns them into a number of questions."),
    solution_code="""
test = ev.paired_test(ev.per_question(lambda t: fuse(t, k=60), development), ev.per_question(lambda t: fuse(t, k=0), development))
ev.questions_needed(test["diff"], test["sd"])""",
    solution_value=_fusion_needed,
    wrong_answers=[70, 69, 139],
)


EXERCISES = {ex.name: ex for ex in (AVERAGE_PRECISION, RECALL_AT_2, K1_ALONE, K1_OUT_OF_FOLD, FUSION_NEEDED)}

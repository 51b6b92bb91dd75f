"""Exercises of notebook 01a (the primer: measuring a ranking).

Every check recomputes its truth with ``rungs.lab.metrics`` over the handbook
(N1's plain index, the judged questions) or, for the statistics, over the
small numbers the question gives: nothing here is a stored number.
"""

from __future__ import annotations

import itertools
from functools import lru_cache

from . import Exercise, as_integer, as_number


@lru_cache(maxsize=1)
def _handbook():
    from ..bm25 import build_index
    from ..lab.handbook import load_pages, load_questions

    return build_index(load_pages()), {q["id"]: q for q in load_questions()}


def _ranking(qid: str) -> list[str]:
    """The first ten ids of N1's plain index for a question: the rankings the notebook measures."""
    index, questions = _handbook()
    return [h.id for h in index.search(questions[qid]["question"], limit=10)]


def _close(answer, truth: float, what: str, tolerance: float = 5e-3) -> bool:
    return abs(as_number(answer, what) - truth) <= tolerance


# ---------------------------------------------------------------- MRR over three questions

MRR_QUESTIONS = ("q011", "q077", "q080")


def _mrr_truth() -> float:
    from ..lab.metrics import reciprocal_rank

    _, questions = _handbook()
    return sum(reciprocal_rank(_ranking(q), questions[q]["relevant"]) for q in MRR_QUESTIONS) / len(MRR_QUESTIONS)


def _judge_mrr(answer):
    truth = _mrr_truth()
    if _close(answer, truth, "a number: the mean of three reciprocal ranks"):
        return True, f"the three reciprocal ranks average to {truth:.3f}"
    _, questions = _handbook()
    found = [q for q in MRR_QUESTIONS if set(_ranking(q)) & set(questions[q]["relevant"])]
    if len(found) < len(MRR_QUESTIONS) and _close(answer, truth * len(MRR_QUESTIONS) / len(found), "a number"):
        return False, "a question whose ranking holds no relevant page counts, with a reciprocal rank of 0"
    return False, "not the mean of the three reciprocal ranks: 1 / the rank of each question's first relevant page"


# ---------------------------------------------------------------- recall@5 against success@5

RECALL_QUESTION = "q025"


def _recall_truth() -> float:
    from ..lab.metrics import recall

    return recall(_ranking(RECALL_QUESTION), _handbook()[1][RECALL_QUESTION]["relevant"], 5)


def _judge_recall(answer):
    from ..lab.metrics import success

    truth = _recall_truth()
    if _close(answer, truth, "a number between 0 and 1: recall@5"):
        return True, f"recall@5 is {truth:.3f}: of all the pages graded 1 or 2, that share is in the first five"
    hit = success(_ranking(RECALL_QUESTION), _handbook()[1][RECALL_QUESTION]["relevant"], 5)
    if _close(answer, hit, "a number"):
        return False, "that is success@5 (is at least one relevant page in the first five?), not recall@5"
    return False, "not recall@5: count the relevant pages in the first five, over all the relevant pages"


# ---------------------------------------------------------------- nDCG@5 by hand

NDCG_QUESTION = "q025"


def _ndcg_truth() -> float:
    from ..lab.metrics import ndcg

    return ndcg(_ranking(NDCG_QUESTION), _handbook()[1][NDCG_QUESTION]["relevant"], 5)


def _judge_ndcg(answer):
    from ..lab.metrics import average_precision

    truth = _ndcg_truth()
    if _close(answer, truth, "a number between 0 and 1: nDCG@5"):
        return True, f"nDCG@5 is {truth:.3f}: the discounted gains of the first five over the best possible five"
    relevant = _handbook()[1][NDCG_QUESTION]["relevant"]
    if _close(answer, average_precision(_ranking(NDCG_QUESTION), relevant), "a number"):
        return False, "that is AP; nDCG uses the grades as gains, each divided by log2(rank + 1)"
    if as_number(answer) > 1:
        return False, "nDCG is at most 1: divide the ranking's DCG by the ideal ranking's"
    return False, "not nDCG@5: gains grade / log2(rank + 1) over the first five, over the same for the ideal order"


# ---------------------------------------------------------------- the sign-flip test by hand

FLIP_DIFFS = (0.5, 0.5, 1.0, -0.5, 0.25, 0.0, 0.0)  # b − a on seven questions


def flip_p(diffs) -> float:
    """The exact two-sided sign-flip p-value: every sign pattern of the non-zero differences, counted."""
    nonzero = [d for d in diffs if d]
    observed = abs(sum(nonzero))
    patterns = list(itertools.product((1, -1), repeat=len(nonzero)))
    extreme = sum(abs(sum(s * d for s, d in zip(signs, nonzero))) >= observed - 1e-12 for signs in patterns)
    return extreme / len(patterns)


def _judge_flip(answer):
    truth = flip_p(FLIP_DIFFS)
    if _close(answer, truth, "a p-value between 0 and 1", tolerance=0.01):
        return True, (f"p = {truth:.4f}: that share of the sign patterns gives a mean difference at least as far "
                      "from 0 (paired_test's random flips land within a hair of it)")
    if _close(answer, truth / 2, "a number", tolerance=0.01):
        return False, "that is one side only: a pattern as far below 0 is as extreme as one above"
    return False, "not the share of sign patterns (zeros left out) whose mean is at least as far from 0"


# ---------------------------------------------------------------- Holm by hand

HOLM_FAMILY = {"A": 0.01, "B": 0.03, "C": 0.035}
HOLM_ASKED = "C"


def _holm_truth() -> float:
    from ..lab.metrics import holm

    return holm(HOLM_FAMILY)[HOLM_ASKED]


def _judge_holm(answer):
    truth = _holm_truth()
    if _close(answer, truth, "an adjusted p-value between 0 and 1", tolerance=1e-4):
        return True, f"{truth:.3f}: no adjusted p may be smaller than the one before it in the order"
    if _close(answer, HOLM_FAMILY[HOLM_ASKED], "a number", tolerance=1e-4):
        return False, "the last p is multiplied by 1, but Holm keeps the adjusted values in order: look at B's"
    if _close(answer, min(1.0, len(HOLM_FAMILY) * HOLM_FAMILY[HOLM_ASKED]), "a number", tolerance=1e-4):
        return False, "that is Bonferroni (every p times 3); Holm multiplies by 3, 2, 1 in order of p"
    return False, "not Holm's adjusted p: sort, multiply by 3, 2, 1, then carry the largest so far"


# ---------------------------------------------------------------- questions needed

NEEDED = {"diff": 0.02, "sd": 0.15}


def _needed_truth() -> int:
    from ..lab.metrics import questions_needed

    return questions_needed(NEEDED["diff"], NEEDED["sd"])


def _judge_needed(answer):
    truth = _needed_truth()
    n = as_integer(answer)
    if abs(n - truth) <= 2:
        return True, f"about {truth} questions: the ratio sd / diff, times 2.8, squared"
    if abs(n * n - truth) <= 2 * n + 2:
        return False, "not squared: n ≈ ((1.96 + 0.84) · sd / diff)²"
    return False, "not n ≈ ((1.96 + 0.84) · sd / diff)², rounded up"


EXERCISES = {
    "mrr": Exercise(
        name="mrr",
        question="The MRR of N1's plain index over q011, q077 and q080 (the first ten of each ranking).",
        judge=_judge_mrr,
        hint_text="One reciprocal rank a question (1 / the rank of the first page graded 1 or 2; 0 if there is "
                  "none in the ten), then their mean.",
        solution_code="""
rrs = [metrics.reciprocal_rank(first_ten(q), by_id[q]["relevant"]) for q in ("q011", "q077", "q080")]
answer = sum(rrs) / len(rrs)   # (1 + 1/3 + 0) / 3""",
        solution_value=_mrr_truth,
        wrong_answers=[lambda: _mrr_truth() * 3 / 2, 1.0, 0.0],
    ),
    "recall": Exercise(
        name="recall",
        question="recall@5 of N1's plain index for q025.",
        judge=_judge_recall,
        hint_text="show_graded(\"q025\") shows the first ten with their grades; count every page graded 1 or 2.",
        solution_code="""
show_graded("q025")
answer = metrics.recall(first_ten("q025"), by_id["q025"]["relevant"], 5)   # 2 of its 3 relevant pages""",
        solution_value=_recall_truth,
        wrong_answers=[1.0, lambda: _recall_truth() / 2],
    ),
    "ndcg": Exercise(
        name="ndcg",
        question="nDCG@5 of N1's plain index for q025, by hand.",
        judge=_judge_ndcg,
        hint_text="Reuse section 3's cell with q025: its gains at ranks 1 and 5, its ideal order 2, 1, 1.",
        solution_code="""
dcg = 2 / math.log2(1 + 1) + 1 / math.log2(5 + 1)               # arret-de-travail at 1, reglement-interieur at 5
ideal = 2 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)  # grades 2, 1, 1 in the best order
answer = dcg / ideal""",
        solution_value=_ndcg_truth,
        wrong_answers=[lambda: _ndcg_truth() * 3.131, 2 / 3],
    ),
    "sign_flip": Exercise(
        name="sign_flip",
        question=f"The exact two-sided sign-flip p-value of the differences {list(FLIP_DIFFS)}.",
        judge=_judge_flip,
        hint_text="The two zeros cannot change sign. Enumerate the 2⁵ sign patterns of the other five "
                  "(itertools.product((1, -1), repeat=5)) and count those whose sum is at least as far from 0.",
        solution_code="""
seven = [0.5, 0.5, 1.0, -0.5, 0.25, 0.0, 0.0]
nonzero = [d for d in seven if d]
observed = abs(sum(nonzero))
patterns = list(itertools.product((1, -1), repeat=len(nonzero)))
answer = sum(abs(sum(s * d for s, d in zip(p, nonzero))) >= observed for p in patterns) / len(patterns)""",
        solution_value=lambda: flip_p(FLIP_DIFFS),
        wrong_answers=[lambda: flip_p(FLIP_DIFFS) / 2, 0.05, 1.0],
    ),
    "holm": Exercise(
        name="holm",
        question=f"Three comparisons gave p = {HOLM_FAMILY}. What is {HOLM_ASKED}'s p after Holm's correction?",
        judge=_judge_holm,
        hint_text="In order of p: multiply by 3, 2, 1; each adjusted p is at least the one before it.",
        solution_code="""
# A: 0.01 × 3 = 0.03; B: 0.03 × 2 = 0.06; C: 0.035 × 1 = 0.035, raised to B's 0.06
answer = metrics.holm({"A": 0.01, "B": 0.03, "C": 0.035})["C"]""",
        solution_value=_holm_truth,
        wrong_answers=[HOLM_FAMILY[HOLM_ASKED], 3 * HOLM_FAMILY[HOLM_ASKED]],
    ),
    "needed": Exercise(
        name="needed",
        question=f"About how many questions does a paired test need to see a mean difference of {NEEDED['diff']} "
                 f"when the per-question differences have a standard deviation of {NEEDED['sd']}?",
        judge=_judge_needed,
        hint_text="n ≈ ((z for 95 % two-sided + z for 80 % power) · sd / diff)², z's 1.96 and 0.84.",
        solution_code="""
answer = metrics.questions_needed(0.02, 0.15)   # ((1.96 + 0.84) × 7.5)², rounded up""",
        solution_value=_needed_truth,
        wrong_answers=[21, 100, 1000],
    ),
}

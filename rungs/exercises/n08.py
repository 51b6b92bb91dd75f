"""Exercises of notebook 08 (why search engines are fast): an impact, what MaxScore may skip, what shards change, RRF's k elsewhere.

Each check recomputes the truth with ``rungs`` itself: the frozen impacts and MaxScore for the first three,
``rungs.engine.shards`` for the fourth, ``rungs.hybrid.rrf`` for the fifth. No encoder, no model.
"""

from __future__ import annotations

import math
from functools import cache

from . import Exercise, as_integer as _integer, as_number

QUESTION = "Combien de jours de congés payés par an ?"   # how many days of paid leave a year?


@cache
def _handbook():
    from ..bm25 import build_index
    from ..lab.handbook import load_pages, load_questions

    pages = load_pages()
    return pages, [q for q in load_questions() if q["judged"]], build_index(pages, stopwords=True)


@cache
def _frozen():
    from ..engine import impacts

    return impacts.freeze(_handbook()[2])


# ---------------------------------------------------------------- reading a posting list

IMPACT_WORD, IMPACT_PAGE = "conges", "conges-payes"


def _impact() -> float:
    frozen = _frozen()
    return float(frozen.impacts[frozen.ids.index(IMPACT_PAGE), frozen.vocabulary[IMPACT_WORD]])


def _judge_impact(answer):
    from ..bm25 import idf

    answer, truth, frozen = as_number(answer), _impact(), _frozen()
    if math.isclose(answer, truth, abs_tol=5e-4):
        return True, (f"{truth:.3f}: the finished contribution of « {IMPACT_WORD} » to {IMPACT_PAGE}, computed once at "
                      "index time; a query holding the word adds it, nothing more")
    if math.isclose(answer, float(frozen.upper[frozen.vocabulary[IMPACT_WORD]]), abs_tol=5e-4):
        return False, "that is the word's largest impact over every page (section 2's bound), not this page's"
    index = _handbook()[2]
    if math.isclose(answer, idf(index.n_docs, len(index.postings[IMPACT_WORD])), abs_tol=5e-4):
        return False, "that is the word's idf alone: the impact multiplies it by the saturated, normalised count"
    return False, (f"the row of {IMPACT_PAGE} (frozen.ids.index) and the column of « {IMPACT_WORD} » "
                   "(frozen.vocabulary) in frozen.impacts")


IMPACT = Exercise(
    name="impact",
    question=f"In the handbook frozen with the defaults, the impact of « {IMPACT_WORD} » on {IMPACT_PAGE}.",
    judge=_judge_impact,
    hint_text="frozen.impacts is a sparse matrix, pages × words: index it with the page's row and the word's column.",
    solution_code="""
answer = frozen.impacts[frozen.ids.index("conges-payes"), frozen.vocabulary["conges"]]""",
    solution_value=_impact,
    wrong_answers=[lambda: float(_frozen().upper[_frozen().vocabulary[IMPACT_WORD]]), 0.0,
                   lambda: float(_frozen().refreeze(k1=0.5).impacts[_frozen().ids.index(IMPACT_PAGE),
                                                                    _frozen().vocabulary[IMPACT_WORD]])],
)


# ---------------------------------------------------------------- 1 · the bound

def _bound() -> float:
    from ..core.text import tokenise

    frozen = _frozen()
    words = dict.fromkeys(tokenise(QUESTION, **frozen.tokenizer))
    return float(sum(frozen.upper[frozen.vocabulary[w]] for w in words if w in frozen.vocabulary))


def _judge_bound(answer):
    answer, truth = as_number(answer), _bound()
    if math.isclose(answer, truth, abs_tol=5e-4):  # three decimals, as the scores are printed
        return True, ("no page can score more: each word gives a page at most its largest impact U(t), and the "
                      "bound adds them up; the best page scores less, because no page holds every word at its best")
    best = _frozen().search(QUESTION, limit=1, explain=False)[0].score
    if math.isclose(answer, best, abs_tol=5e-4):
        return False, "that is the best page's score: the bound is what a page *could* score, word by word at best"
    return False, "add up frozen.upper[frozen.vocabulary[w]] over the question's words as the index cuts them"


BOUND = Exercise(
    name="bound",
    question=f"On the handbook frozen with the defaults, what is the most any page could score for « {QUESTION} »?",
    judge=_judge_bound,
    hint_text="cut the question as the index does (tokenise with frozen.tokenizer), look each word up in "
              "frozen.vocabulary, and add up frozen.upper at those columns.",
    solution_code="""
from rungs.core.text import tokenise
words = dict.fromkeys(tokenise(QUESTION, **frozen.tokenizer))
sum(frozen.upper[frozen.vocabulary[w]] for w in words if w in frozen.vocabulary)""",
    solution_value=_bound,
    wrong_answers=[0.0, 1.0, lambda: round(_bound() + 0.01, 3)],  # a hundredth off is not the bound
)


# ---------------------------------------------------------------- 2 · what MaxScore skipped

def _skipped_at_3() -> int:
    from ..engine import maxscore

    return maxscore.search(_frozen(), QUESTION, limit=3).skipped


def _judge_skipped(answer):
    from ..engine import maxscore

    answer, truth = _integer(answer), _skipped_at_3()
    result = maxscore.search(_frozen(), QUESTION, limit=3)
    if answer == truth:
        return True, ("with only three pages to keep, the bar θ rises fast: most pages holding only common words "
                      "can no longer reach it, and are looked up or abandoned, never fully scored")
    if answer == result.scored:
        return False, "that is how many were fully scored: skipped is matching minus scored"
    if answer == result.abandoned:
        return False, "that is how many were abandoned half-way; skipped also counts those never started"
    return False, "run maxscore.search(frozen, QUESTION, limit=3) and read .skipped (matching − scored)"


SKIPPED = Exercise(
    name="skipped",
    question=f"MaxScore with limit=3 over the frozen handbook: how many matching pages for « {QUESTION} » are "
             "never fully scored?",
    judge=_judge_skipped,
    hint_text="maxscore.search returns the hits and its counters: matching, scored, abandoned, skipped.",
    solution_code="""
maxscore.search(frozen, QUESTION, limit=3).skipped""",
    solution_value=_skipped_at_3,
    wrong_answers=[0, 70],
)


# ---------------------------------------------------------------- 3 · eight shards, first hits

def _first_changed_at_8() -> int:
    from ..engine import shards

    pages, questions, _ = _handbook()
    return shards.compare(pages, questions, shard_counts=(8,), stopwords=True)[0]["first_changed"]


def _judge_first(answer):
    answer, truth = _integer(answer), _first_changed_at_8()
    if answer == truth:
        return True, ("each shard weighs a word by its own few pages: a word rare on one shard and common on another "
                      "moves the first hit; gathered first, the statistics give the one-machine ranking back")
    if answer == 0:
        return False, "that is with global statistics: each shard's own idf does move first hits"
    if answer == len(_handbook()[1]):
        return False, "not every question: a first hit far ahead of the second survives a small change of idf"
    return False, "shards.compare(pages, questions, shard_counts=(8,), stopwords=True)[0]['first_changed']"


FIRST_CHANGED = Exercise(
    name="first_changed",
    question="Over 8 shards, each with its own idf, how many judged handbook questions change their first hit?",
    judge=_judge_first,
    hint_text="shards.compare gives, per number of shards, order_changed, set_changed and first_changed.",
    solution_code="""
shards.compare(pages, questions, shard_counts=(8,), stopwords=True)[0]["first_changed"]""",
    solution_value=_first_changed_at_8,
    wrong_answers=[0, 155],
)


# ---------------------------------------------------------------- 4 · RRF's k, counted from 0

def _judge_qdrant(answer):
    from ..hybrid import rrf

    answer = as_number(answer, "the k to give Qdrant (a number)")
    ids = [f"p{i}" for i in range(20)]
    ours = [h.score for h in rrf({"leg": ids}, k=60)]  # rungs: 1 / (k + rank), ranks from 1
    theirs = [1 / (answer + rank) for rank in range(len(ids))]  # Qdrant: 1 / (k + rank), ranks from 0
    if all(math.isclose(a, b, rel_tol=1e-12) for a, b in zip(ours, theirs)):
        return True, "ranks from 0 make every rank one smaller: the constant must be one larger to give the same sum"
    if answer < 60:
        return False, "counting from 0 makes every denominator smaller: the constant must grow, not shrink"
    return False, "write the first page's share both ways: 1/(60 + 1) in rungs, 1/(k + 0) in Qdrant"


def _qdrant_k() -> int:
    return 61


QDRANT_K = Exercise(
    name="qdrant_k",
    question="Qdrant counts ranks from 0. What RRF k must you give it to fuse as rungs does with k = 60?",
    judge=_judge_qdrant,
    hint_text="rungs' first page gets 1/(k + 1); Qdrant's first page gets 1/(k' + 0). Make them equal.",
    solution_code="""
# 1/(60 + rank from 1) = 1/(60 + 1 + rank from 0)
61""",
    solution_value=_qdrant_k,
    wrong_answers=[59, 60, 0],
)


EXERCISES = {ex.name: ex for ex in (IMPACT, BOUND, SKIPPED, FIRST_CHANGED, QDRANT_K)}

"""Exercises of notebook 09 (the capstone): the halves by kind, a reciprocal rank by hand, a comparison's +/−.

Each check recomputes the truth with ``rungs`` on the folder and the questions the notebook works on: the
notebook hands them over with ``use(index, questions)`` once it has them, so a learner who points the
capstone at their own folder is checked on their own folder and questions. Until then (and in the suite),
the committed ones: ``benchmarks/folder`` indexed for the keyword rungs only (no vector is encoded: a few
seconds), into a temporary directory outside the folder, and ``benchmarks/folder/questions.jsonl``. No model,
no encoder.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from . import Exercise, as_integer as _integer, as_number

#: What the checks read: the notebook's index and questions once ``use`` was called, else the committed ones.
_IN_USE: dict = {}
_KEPT: list = []   # the temporary directory of the committed folder's index, kept as long as the index is


def use(index, questions: list[dict]) -> None:
    """Check this notebook's exercises against ``index`` (a ``FolderIndex``) and ``questions`` (loaded, kept)."""
    from ..core.errors import BadArgument

    if not hasattr(index, "retriever") or not isinstance(questions, list):
        raise BadArgument("use(index, questions): the folder's index (index_folder's) and the list of questions")
    _IN_USE.update(index=index, questions=questions)


@cache
def _committed() -> tuple:
    import tempfile

    from ..core import paths
    from ..lab.handbook import load_questions
    from ..yours.index import index_folder

    folder = paths.in_checkout("benchmarks", "folder", what="the capstone's committed folder")
    # Outside the folder, so that it stays as shipped; the directory goes when the process ends.
    _KEPT.append(tempfile.TemporaryDirectory(prefix="rungs-n09-"))
    index = index_folder(folder / "documents", index=Path(_KEPT[-1].name) / "index.sqlite", vectors=False)
    held = {d["id"] for d in index.documents()}
    questions = [q for q in load_questions(folder / "questions.jsonl") if not q["relevant"] or set(q["relevant"]) & held]
    return index, questions


def _context() -> tuple:
    return (_IN_USE["index"], _IN_USE["questions"]) if _IN_USE else _committed()


def _halves() -> tuple[list, list]:
    from ..lab import tuning

    return tuning.halves(_context()[1], seed=0)   # the notebook's halves: the same seed


# ---------------------------------------------------------------- 2 · the halves, by kind

def _paraphrases_in_development() -> int:
    return sum(q["kind"] == "paraphrase" for q in _halves()[0])


def _judge_halves(answer):
    answer, truth = _integer(answer), _paraphrases_in_development()
    if answer == truth:
        return True, ("each kind is dealt between the halves on its own, so both halves hold about half the "
                      "paraphrases: neither half is easier for the keyword rungs")
    if answer == sum(q["kind"] == "paraphrase" and bool(q["relevant"]) for q in _context()[1]):
        return False, "that counts the paraphrases of both halves: count those of the development half only"
    if answer == sum(q["kind"] == "paraphrase" for q in _halves()[1]):
        return False, "that is the final half's count: the development half is the first of the two"
    return False, "count the questions of the development half whose 'kind' is 'paraphrase'"


HALVES = Exercise(
    name="paraphrases_in_development",
    question="How many paraphrase questions are in the development half?",
    judge=_judge_halves,
    hint_text="development, final = tuning.halves(questions, seed=0); each question has q['kind'].",
    solution_code="""
answer = sum(q["kind"] == "paraphrase" for q in development)""",
    solution_value=_paraphrases_in_development,
    wrong_answers=[lambda: sum(q["kind"] == "paraphrase" and bool(q["relevant"]) for q in _context()[1]),
                   lambda: _paraphrases_in_development() + 1],
)


# ---------------------------------------------------------------- 3 · a reciprocal rank by hand

def _missed() -> tuple[dict, list]:
    """The question the notebook shows: the first of the development half whose file BM25 ranks below first
    (in its top 10; the final half is not looked at before it is scored), chosen by the notebook's own
    function, ``capstone.worked_example``: on a folder where BM25 ranks every file first or misses it, the
    first it ranks first, else the first it misses.
    """
    from ..lab import capstone

    example = capstone.worked_example(_context()[0].retriever("bm25"), _halves()[0], limit=10)
    return example["question"], example["hits"]


def _reciprocal_rank() -> float:
    from ..lab import metrics

    q, hits = _missed()
    return metrics.reciprocal_rank(hits, q["relevant"])


def _judge_rr(answer):
    answer, truth = as_number(answer, "a number between 0 and 1"), _reciprocal_rank()
    if abs(answer - truth) < 5e-4:
        return True, "one over the rank of the first judged file: the question's share of the MRR"
    if truth and abs(answer - 1 / truth) < 1e-9:
        return False, "that is the rank itself: the reciprocal rank is one over it"
    return False, "find the first file of the ranking that the question judges (✓), and take one over its rank"


RECIPROCAL_RANK = Exercise(
    name="reciprocal_rank",
    question="For the question shown, what is BM25's reciprocal rank, to 3 decimals?",
    judge=_judge_rr,
    hint_text="the ranking is printed with ✓ beside each judged file: the first ✓ is at rank r; the answer is 1/r.",
    solution_code="""
answer = metrics.reciprocal_rank(missed_hits, missed["relevant"])""",
    solution_value=_reciprocal_rank,
    wrong_answers=[lambda: 1 / r if (r := _reciprocal_rank()) else 0.5, 1.0, 0.0],
)


# ---------------------------------------------------------------- 4 · what +/− counts

def _fts_against_bm25() -> dict:
    from ..lab import metrics

    index, final = _context()[0], _halves()[1]
    fts, bm25 = index.retriever("fts"), index.retriever("bm25")
    return metrics.paired_test(metrics.per_question(lambda t: bm25.search(t, limit=10), final),
                               metrics.per_question(lambda t: fts.search(t, limit=10), final))


def _judge_improved(answer):
    answer, test = _integer(answer), _fts_against_bm25()
    if answer == test["improved"]:
        return True, (f"and {test['degraded']} the other way: the +/− column counts questions, not points of MRR, "
                      "and says whether a difference of means is one question or many")
    if answer == test["degraded"]:
        return False, "that is how many FTS5 ranks *lower* than BM25 (the number after the slash)"
    if answer == test["n"] - test["improved"] - test["degraded"]:
        return False, "that counts the questions where both put the file at the same rank"
    return False, "count the final-half questions whose reciprocal rank is higher with FTS5 than with BM25"


FTS_IMPROVED = Exercise(
    name="fts_improved",
    question="On the final half, on how many questions does FTS5 put the judged file higher than BM25?",
    judge=_judge_improved,
    hint_text=("the +/− column of FTS5's row: improved / degraded against the baseline, BM25; or compare "
               "metrics.per_question(...) of the two rungs question by question."),
    solution_code="""
fts_rr = metrics.per_question(lambda t: fts.search(t, limit=10), final)
bm25_rr = metrics.per_question(lambda t: bm25.search(t, limit=10), final)
answer = sum(fts_rr[q] > bm25_rr[q] for q in fts_rr)""",
    solution_value=lambda: _fts_against_bm25()["improved"],
    wrong_answers=[lambda: _fts_against_bm25()["degraded"] if _fts_against_bm25()["degraded"] != _fts_against_bm25()["improved"]
                   else _fts_against_bm25()["improved"] + 1,
                   lambda: _fts_against_bm25()["n"]],
)


EXERCISES = {ex.name: ex for ex in (HALVES, RECIPROCAL_RANK, FTS_IMPROVED)}

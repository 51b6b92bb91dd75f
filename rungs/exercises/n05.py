"""Exercises of notebook 05 (the research loop): the citation check as a reader meets it, the gather's share,
the fusion constant that decides which pages are read.

Each check recomputes the truth with ``rungs.research`` (``check_citations``, ``GATHER_SHARE``) or
``rungs.hybrid.rrf`` (the fusion the loop uses) and never calls a model.
"""

from __future__ import annotations

import math
import numbers

from . import AnswerShape, Exercise

TEXT = "Les RTT non pris sont perdus [1]. Voir [source 2], [1, 7] et [[2]]. Fin [2]."
ALLOWED = {1, 2}
TOKENS = 2000


def _checked():
    from ..research import check_citations

    return check_citations(TEXT, ALLOWED)


# ---------------------------------------------------------------- 1 · what does the reader see?

def _judge_reader(answer):
    if not isinstance(answer, str):
        raise AnswerShape(f"give the text as a string, not {type(answer).__name__} {answer!r}")
    shown = _checked()[0]
    if answer == shown:
        return True, ("[source 2] looks like a citation and [1, 7] names a source never gathered: both go; "
                      "[[2]] is [2] in extra brackets and stays as [2]; the words around them stay")
    if " ".join(answer.split()) == " ".join(shown.split()):
        return False, "the right words, but not the exact spacing: a removed citation leaves the spaces around it"
    if "[1, 7]" in answer or "[1]" in answer.replace("[1].", "", 1):
        return False, "a citation is kept only if every number in it was gathered: 7 was not"
    if "[source 2]" in answer:
        return False, "« [source 2] » looks like a citation without being one of the numbered forms: it is removed"
    if "[[2]]" in answer:
        return False, "the inner [2] is judged first and kept; the outer brackets then hold nothing of their own"
    return False, "run research.check_citations(text, {1, 2}) and compare its first element with yours"


READER_SEES = Exercise(
    name="reader_sees",
    question="What the reader sees of the exercise's text when sources 1 and 2 were gathered.",
    judge=_judge_reader,
    hint_text=("each bracket is judged when it closes: kept if it holds only numbers that were all gathered, removed "
               "if it looks like a citation (a digit, « source », « page »), kept as text otherwise."),
    solution_code="""
shown, cited, removed = research.check_citations(text, {1, 2})
shown   # 'Les RTT non pris sont perdus [1]. Voir ,  et [2]. Fin [2].'""",
    solution_value=lambda: _checked()[0],
    wrong_answers=[TEXT, "Les RTT non pris sont perdus [1]. Voir, et [2]. Fin [2].",
                   "Les RTT non pris sont perdus [1]. Voir ,  et [[2]]. Fin [2]."],
)


# ---------------------------------------------------------------- 2 · which sources are listed?

def _judge_cited(answer):
    if isinstance(answer, (str, bytes)) or not isinstance(answer, (list, tuple)):
        raise AnswerShape(f"give a list of source numbers, not {type(answer).__name__} {answer!r}")
    if not all(isinstance(n, numbers.Integral) and not isinstance(n, bool) for n in answer):
        raise AnswerShape("every source number must be an integer")
    cited = _checked()[1]
    if list(answer) == cited:
        return True, "each source once, in the order of its first valid citation; 7 was never gathered, so never listed"
    if 7 in answer:
        return False, "[1, 7] was removed whole: 7 was never gathered, and a removed citation cites nothing"
    if sorted(answer) == sorted(cited):
        return False, "the right sources, in the wrong order: the order is that of their first citation"
    return False, "each source is listed once, even when it is cited several times"


CITED_NUMBERS = Exercise(
    name="cited_numbers",
    question="The source numbers the loop lists as cited for the exercise's text.",
    judge=_judge_cited,
    hint_text="the second element of research.check_citations(text, {1, 2}).",
    solution_code="""
research.check_citations(text, {1, 2})[1]""",
    solution_value=lambda: _checked()[1],
    wrong_answers=[[1, 7, 2], [1, 1, 2, 2], [2, 1]],
)


# ---------------------------------------------------------------- 3 · the gather's share

def _gather_tokens() -> float:
    from ..research import GATHER_SHARE

    return GATHER_SHARE * TOKENS


def _judge_gather(answer):
    if isinstance(answer, bool) or not isinstance(answer, numbers.Real) or not math.isfinite(answer):
        raise AnswerShape(f"give a number of tokens, not {type(answer).__name__} {answer!r}")
    truth = _gather_tokens()
    if abs(answer - truth) < 1e-6:
        return True, "the gather may spend 70 % of the ceiling; the rest is kept for the synthesis"
    if abs(answer - TOKENS) < 1e-6:
        return False, "that is the whole ceiling: the gather stops earlier, to leave the synthesis its share"
    if abs(answer - (TOKENS - truth)) < 1e-6:
        return False, "that is the synthesis's reserve; the gather's share is the other part"
    return False, "research.GATHER_SHARE is the gather's share of the ceiling"


GATHER_TOKENS = Exercise(
    name="gather_tokens",
    question="With tokens=2000, from how many tokens spent does the gather stop starting new rounds?",
    judge=_judge_gather,
    hint_text="the ledger compares the tokens spent with research.GATHER_SHARE × the ceiling after each round.",
    solution_code="""
research.GATHER_SHARE * 2000""",
    solution_value=_gather_tokens,
    wrong_answers=[2000, 600, 1000],
)


# ---------------------------------------------------------------- 4 · agreement against a winner

#: Two queries' rankings: « agreed » is 4th in one and 2nd in the other; « winner » is first in one only.
FUSED = {"first query": ["winner", "x1", "x2", "agreed"], "second query": ["y1", "agreed", "y2", "y3"]}


def _agreed_first(k: float) -> bool:
    from ..hybrid import rrf

    return rrf(FUSED, k=k)[0].id == "agreed"


def _smallest_k() -> int:
    return next(k for k in range(0, 1001) if _agreed_first(k))


def _judge_k(answer):
    from . import as_integer

    k = as_integer(answer)
    if k < 0:
        return False, "RRF's constant is 0 or more"
    if not _agreed_first(k):
        return False, f"at k = {k} the page first in one list still leads: 1/(k+1) beats 1/(k+4) + 1/(k+2); raise k"
    if k > 0 and _agreed_first(k - 1):
        return False, f"at k = {k} agreement wins, but it already does at k = {k - 1}: the question asks for the smallest"
    return True, (f"from k = {k}, being found 4th and 2nd outscores being found first once; research mode ships "
                  "k = 0 (research.FUSION_K), below that point, so each query's best page leads — measured, on "
                  "questions of several parts, to gather more of the pages that answer than 60")


RRF_K = Exercise(
    name="rrf_k",
    question=("Two queries' rankings: page « agreed » is 4th in one and 2nd in the other, « winner » first in one only. "
              "The smallest whole k at which RRF puts « agreed » first."),
    judge=_judge_k,
    hint_text=("hybrid.rrf({'first query': [...], 'second query': [...]}, k=k)[0].id for k = 0, 1, 2, …; "
               "or solve 1/(k+4) + 1/(k+2) > 1/(k+1) by hand."),
    solution_code="""
lists = {"first query": ["winner", "x1", "x2", "agreed"], "second query": ["y1", "agreed", "y2", "y3"]}
answer = next(k for k in range(100) if hybrid.rrf(lists, k=k)[0].id == "agreed")""",
    solution_value=_smallest_k,
    wrong_answers=[0, 60, 2],
)


EXERCISES = {ex.name: ex for ex in (READER_SEES, CITED_NUMBERS, GATHER_TOKENS, RRF_K)}

"""Exercises of notebook 05 (the research loop): what the reader is shown of a report whose citations were
forged, the gather's share, the fusion constant that decides which pages are read.

Each check recomputes the truth with ``rungs.research`` (``research.run`` on a scripted report, its two gates —
the citation filter, then the sentence gate —; ``GATHER_SHARE``) or ``rungs.hybrid.rrf`` (the fusion the loop
uses) and never calls a model: the report is written by hand (``ScriptedClient``).
"""

from __future__ import annotations

import math
import numbers
from functools import lru_cache

from . import AnswerShape, Exercise

#: The report a prop streams: one sentence cites a gathered source, one forges three citations, one cites 1.
TEXT = "Les RTT non pris sont perdus [1]. Voir [source 2], [1, 7] et [[2]]. Fin [1]."
QUESTION = "Que deviennent les RTT non pris ?"
SOURCES = ("rtt", "compte-epargne-temps")  # gathered as sources 1 and 2 (the sentences hold no figure to check)
TOKENS = 2000


@lru_cache(maxsize=1)
def _checked():
    """The prop's report run through the loop: (what the reader is shown, the numbers it cites, what the
    citation filter alone lets through)."""
    from ..core.retrieval import Hit, Retriever
    from ..grounding.citations import cited_numbers
    from ..lab.handbook import load_pages
    from ..model import ScriptedClient
    from ..research import check_citations, run

    pages = [p for p in load_pages() if p["id"] in SOURCES]

    class Two(Retriever):  # finds the two sources, in SOURCES' order, for any query
        name = "two"

        def _search(self, query, limit, knobs):
            return [Hit(id=pid, score=1.0 / n, parts={"two": 1.0 / n}) for n, pid in enumerate(SOURCES, 1)]

    out = run(QUESTION, pages=pages, retriever=Two(), client=ScriptedClient([TEXT]), follow_ups=False)
    return out.text, cited_numbers(out.text), check_citations(TEXT, {1, 2})[0]


# ---------------------------------------------------------------- 1 · what does the reader see?

def _judge_reader(answer):
    if not isinstance(answer, str):
        raise AnswerShape(f"give the text as a string, not {type(answer).__name__} {answer!r}")
    shown, _, filtered = _checked()
    if answer == shown:
        return True, ("the citation filter removes « [source 2] » and « [1, 7] » (7 was never gathered); the "
                      "sentence they were removed from is then withheld whole, its « [[2]] » with it; the two "
                      "sentences around it cite source 1 and are shown")
    if " ".join(answer.split()) == " ".join(shown.split()):
        return False, "the right sentences, but not the exact spacing: shown sentences are joined by one space"
    if answer == filtered or " ".join(answer.split()) == " ".join(filtered.split()):
        return False, ("that is what the citation filter lets through, the first gate; the sentence gate then "
                       "withholds a sentence a citation was removed from")
    if "[1, 7]" in answer or "[source 2]" in answer or "[[2]]" in answer:
        return False, ("a citation is kept only if every number in it was gathered, and « [source 2] » is no "
                       "numbered citation: both are removed, and the sentence that held them is not shown")
    if "Voir" in answer:
        return False, "the middle sentence held two forged citations: its other words cannot vouch for it"
    return False, "run the prop's report through research.run and compare its text with yours"


READER_SEES = Exercise(
    name="reader_sees",
    question="What the reader is shown of the exercise's report when sources 1 and 2 were gathered.",
    judge=_judge_reader,
    hint_text=("two gates: each bracket is judged when it closes (kept if it holds only numbers that were all "
               "gathered, removed if it looks like a citation); then each whole sentence is shown, or withheld "
               "if a citation was removed from it."),
    solution_code="""
prop = research.run("Que deviennent les RTT non pris ?", pages=pages, retriever=retriever, max_sources=2,
                    client=ScriptedClient([text]), follow_ups=False)
prop.text   # 'Les RTT non pris sont perdus [1]. Fin [1].'""",
    solution_value=lambda: _checked()[0],
    wrong_answers=[TEXT, lambda: _checked()[2], "Les RTT non pris sont perdus [1]. Voir et [2]. Fin [1].",
                   "Les RTT non pris sont perdus [1].  Fin [1]."],
)


# ---------------------------------------------------------------- 2 · which sources does the answer cite?

def _judge_cited(answer):
    if isinstance(answer, (str, bytes)) or not isinstance(answer, (list, tuple)):
        raise AnswerShape(f"give a list of source numbers, not {type(answer).__name__} {answer!r}")
    if not all(isinstance(n, numbers.Integral) and not isinstance(n, bool) for n in answer):
        raise AnswerShape("every source number must be an integer")
    cited = _checked()[1]
    if list(answer) == cited:
        return True, ("only what is shown cites: the one valid citation of source 2, « [[2]] », was in the "
                      "withheld sentence, so source 2 is not cited")
    if 7 in answer:
        return False, "7 was never gathered: its citation was removed, and a removed citation cites nothing"
    if 2 in answer:
        return False, "source 2 was cited only in a sentence that is not shown: a withheld sentence cites nothing"
    return False, "each source is listed once, in the order of its first citation in the text shown"


CITED_NUMBERS = Exercise(
    name="cited_numbers",
    question="The source numbers the answer cites, for the exercise's report.",
    judge=_judge_cited,
    hint_text="the citations of the text shown — only of the text shown (rungs.grounding.citations.cited_numbers).",
    solution_code="""
from rungs.grounding.citations import cited_numbers
cited_numbers(prop.text)   # prop: the run of the exercise above""",
    solution_value=lambda: _checked()[1],
    wrong_answers=[[1, 2], [1, 7, 2], [1, 1]],
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

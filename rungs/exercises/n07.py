"""Exercises of notebook 07 (your own documents): passage size, and where a word is in a long PDF.

Each check recomputes the truth with ``rungs`` from the bundled folder (``notebooks/data/my-documents``):
the PDF reader and ``passages.split`` for the first, a BM25 index over the Règlement's passages (and the
pages its hits cite) for the second. No encoder, no model.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from . import AnswerShape, as_integer as _integer, Exercise

RULES = "reglement-interieur.pdf"


def _folder() -> Path:
    from ..core import paths

    return paths.in_checkout("notebooks", "data", "my-documents", what="the notebooks' folder of documents")


@cache
def _rules() -> dict:
    from ..yours.readers import read_file

    return read_file(_folder() / RULES, _folder())


# ---------------------------------------------------------------- 1 · passages of 500 characters

def _passages_at_500() -> int:
    from ..passages import split

    return len(split([_rules()], size=500, overlap=200))


def _judge_passages(answer):
    answer, truth = _integer(answer), _passages_at_500()
    if answer == truth:
        return True, ("a third of the size, more than three times the passages: each keeps up to 200 characters "
                      "of its neighbour, and closes early at a paragraph break once half full")
    if answer == round(len(_rules()["body"]) / 500):
        return False, "that is the length divided by 500: passages overlap and close at paragraph breaks"
    return False, ("count the Règlement's passages in the new index: "
                   "sum(p['doc'] == 'reglement-interieur.pdf' for p in idx.passages())")


PASSAGES_AT_500 = Exercise(
    name="passages_at_500",
    question="How many passages does the Règlement intérieur make with passages of 500 characters?",
    judge=_judge_passages,
    hint_text=("index a copy of the bundled folder with index_folder(copy, size=500, index=…) and count "
               "the passages whose 'doc' is the Règlement; or cut it yourself: passages.split([document], "
               "size=500, overlap=200)."),
    solution_code="""
from rungs import passages
from rungs.yours.readers import read_file
rules = read_file(bundled / "reglement-interieur.pdf", bundled)
len(passages.split([rules], size=500, overlap=200))""",
    solution_value=_passages_at_500,
    wrong_answers=[6, 14, 0],
)


# ---------------------------------------------------------------- 2 · where « sanction » is

def _sanction_pages() -> list[int]:
    from ..bm25 import build_index
    from ..passages import PassageRetriever, split

    cut = split([_rules()], size=1500, overlap=200)
    found = PassageRetriever(build_index(cut, stopwords=True), cut).search("sanction", level="passage", limit=len(cut))
    return sorted({h["page"] for h in found})  # the page of each hit's best sentence, as a hit cites it


def _judge_pages(answer):
    if isinstance(answer, (str, bytes)) or not isinstance(answer, (list, tuple, set)):
        raise AnswerShape(f"give a list of page numbers, not {type(answer).__name__} {answer!r}")
    given = sorted({_integer(a) for a in answer})
    truth = _sanction_pages()
    if given == truth:
        return True, ("the disciplinary articles sit at the end of the PDF; each hit cites the page of its best "
                      "sentence, even when its passage starts on the page before")
    if set(given) > set(truth):
        return False, "one of these pages has no passage that matches: look at each hit's h['page']"
    return False, "a page is missing: search with a limit large enough to list every matching passage"


SANCTION_PAGES = Exercise(
    name="sanction_pages",
    question="On which pages of the Règlement are the sentences matching « sanction » (BM25, level='passage')?",
    judge=_judge_pages,
    hint_text=("index.retriever('bm25').search('sanction', level='passage', limit=20) lists passages; keep "
               "those of the Règlement and read h['page'] (BM25 stems, so « sanctions » matches too)."),
    solution_code="""
hits = index.retriever("bm25").search("sanction", level="passage", limit=20)
sorted({h["page"] for h in hits if h["path"] == "reglement-interieur.pdf"})""",
    solution_value=_sanction_pages,
    wrong_answers=[[1, 2, 3], [2], [3]],
)


EXERCISES = {ex.name: ex for ex in (PASSAGES_AT_500, SANCTION_PAGES)}

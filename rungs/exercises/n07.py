"""Exercises of notebook 07 (your own documents): what was read, passage size, where a word is in a long PDF, the vector weight.

Each check recomputes the truth with ``rungs`` from the bundled folder (``notebooks/data/my-documents``):
``read_folder`` for the first, the PDF reader and ``passages.split`` for the second, a BM25 index over the
Règlement's passages (and the pages its hits cite) for the third, and for the fourth a folder index written
to a temporary file, outside the folder (its 21 passages encoded once, a few seconds). No model.
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


# ---------------------------------------------------------------- what was read

def _pdf_documents() -> int:
    from ..yours.walk import read_folder

    docs, _ = read_folder(_folder())
    return sum(d["format"] == "pdf" for d in docs)


def _judge_pdfs(answer):
    from ..yours.walk import read_folder

    answer, truth = _integer(answer), _pdf_documents()
    if answer == truth:
        return True, "the broken PDF is a file of the folder, not a document: it is in the skipped list, with its reason"
    files = sum(1 for p in _folder().rglob("*.pdf"))
    if answer == files:
        return False, "that counts the .pdf files; one of them could not be read: is it a document?"
    if answer == len(read_folder(_folder())[0]):
        return False, "that is every document, whatever its format: count those whose d['format'] is 'pdf'"
    return False, "count the documents read_folder returns whose d['format'] is 'pdf'"


PDF_DOCUMENTS = Exercise(
    name="pdf_documents",
    question="How many PDF documents did read_folder return (documents, not files)?",
    judge=_judge_pdfs,
    hint_text="docs, skipped = read_folder(workspace): the first list holds what was read; each has d['format'].",
    solution_code="""
answer = sum(d["format"] == "pdf" for d in docs)""",
    solution_value=_pdf_documents,
    wrong_answers=[lambda: sum(1 for p in _folder().rglob("*.pdf")), 15, 0],
)


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


# ---------------------------------------------------------------- the vector weight

HOLIDAYS = "Combien de vacances ai-je par an ?"   # how much holiday do I get a year?
HOLIDAYS_PAGE = "conges/conges-payes.pdf"
_KEPT: list = []   # the temporary directory of the index below, kept alive as long as the index is


@cache
def _folder_hybrid():
    import tempfile

    from ..yours.index import index_folder

    # Outside the folder, so that it stays as shipped; the directory goes when the process ends.
    _KEPT.append(tempfile.TemporaryDirectory(prefix="rungs-n07-"))
    return index_folder(_folder(), index=Path(_KEPT[-1].name) / "index.sqlite").retriever("hybrid")


def _first_at(weight: float) -> bool:
    hits = _folder_hybrid().search(HOLIDAYS, limit=1, leg_weights={"keyword": 1.0, "vector": weight})
    return bool(hits) and hits[0].id == HOLIDAYS_PAGE


def _smallest_weight() -> float:
    from . import ExerciseBroken

    for step in range(1, 81):   # 0.05 to 4
        if _first_at(step * 0.05):
            return round(step * 0.05, 2)
    raise ExerciseBroken("no vector weight up to 4 puts Congés payés first")


def _judge_weight(answer):
    from . import as_number

    answer = as_number(answer, "a vector weight, in steps of 0.05")
    steps = answer / 0.05
    if answer <= 0 or abs(steps - round(steps)) > 1e-6:
        return False, f"{answer} is not a positive multiple of 0.05"
    w = round(steps) * 0.05
    if not _first_at(w):
        return False, f"at vector weight {w:.2f} the keyword leg still wins: Congés payés is not first"
    if w > 0.05 + 1e-9 and _first_at(w - 0.05):
        return False, f"at {w:.2f} Congés payés is first, but it already is at {w - 0.05:.2f}: go lower"
    return True, (f"from {w:.2f} on the vector leg's vote outweighs the keyword leg's first place: below it, "
                  "BM25 leads, as the shipped 0.25 means it to")


VECTOR_WEIGHT = Exercise(
    name="vector_weight",
    question=f"For « {HOLIDAYS} », the smallest vector weight (in steps of 0.05, keyword leg 1.0) at which the "
             f"hybrid puts {HOLIDAYS_PAGE} first.",
    judge=_judge_weight,
    hint_text=("loop over weights 0.05, 0.10, … and print hybrid.search(question, limit=1, "
               "leg_weights={'keyword': 1.0, 'vector': w})[0].id; the table above says between which two to look."),
    solution_code="""
for step in range(1, 41):
    w = step * 0.05
    if hybrid.search(question, limit=1, leg_weights={"keyword": 1.0, "vector": w})[0].id == "conges/conges-payes.pdf":
        answer = round(w, 2)
        break""",
    solution_value=_smallest_weight,
    wrong_answers=[0.25, lambda: round(_smallest_weight() + 0.05, 2), 4.0],
)


EXERCISES = {ex.name: ex for ex in (PDF_DOCUMENTS, PASSAGES_AT_500, SANCTION_PAGES, VECTOR_WEIGHT)}

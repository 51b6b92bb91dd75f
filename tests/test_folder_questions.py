"""benchmarks/folder/questions.jsonl: the real folder's questions, complete enough to mark an answer.

What is pinned (the format is in ``benchmarks/folder/README.md``): the file loads as the handbook's
questions do; enough questions, and enough the folder does not answer, to measure abstention; each
answerable one has a reference answer, key facts and evidence copied from its file (for a PDF, from
its page, as ``rungs.yours.readers`` reads it); each key fact is stated in its evidence and in its
reference answer (``has_fact``, the mark's own rule); and ``score_answer`` marks the reference right
and « je ne sais pas » right exactly where no file answers.
"""

import json
import re
import unicodedata
from functools import lru_cache
from pathlib import Path

from rungs.lab import answers
from rungs.lab.handbook import load_questions
from rungs.yours import readers

FOLDER = Path(__file__).resolve().parent.parent / "benchmarks" / "folder"
QUESTIONS = load_questions(FOLDER / "questions.jsonl")
RAW = [json.loads(line) for line in (FOLDER / "questions.jsonl").read_text(encoding="utf-8").split("\n") if line]


def flat(text: str) -> str:
    """As the README compares: NFC, whitespace collapsed, ’ read as '."""
    return " ".join(unicodedata.normalize("NFC", text).replace("\u2019", "'").split())


@lru_cache(maxsize=None)
def pages_of(rel: str) -> tuple[str, ...]:
    """A file's text, one string a page for a PDF, else one string."""
    doc = readers.read_file(FOLDER / "documents" / rel, FOLDER / "documents")
    starts = doc.get("page_starts") or [0]
    return tuple(flat(doc["body"][a:b]) for a, b in zip(starts, starts[1:] + [len(doc["body"])]))


def test_enough_questions_and_enough_that_no_file_answers():
    unanswerable = [q for q in QUESTIONS if not q["relevant"]]
    assert len(QUESTIONS) >= 30 and len(unanswerable) >= 8
    assert [q["id"] for q in QUESTIONS] == sorted(q["id"] for q in QUESTIONS)
    assert all(re.fullmatch(r"q\d{2}", q["id"]) for q in QUESTIONS)
    assert {r["written"] for r in RAW} == {"issue 20", "issue 30"}
    for r in RAW:
        if r["judgments"]:
            assert r["answer"] and 1 <= len(r["key_facts"]) <= 3 and r["evidence"], r["id"]
        else:
            assert (r["kind"], r["answer"], r["key_facts"], r["evidence"]) == ("unanswerable", None, [], []), r["id"]


def test_evidence_is_copied_from_its_file_and_page():
    for q in QUESTIONS:
        for ev in q["evidence"]:
            assert ev["page"] in q["relevant"], (q["id"], ev["page"])
            pages = pages_of(ev["page"])
            found = [i + 1 for i, text in enumerate(pages) if flat(ev["text"]) in text]
            if len(pages) > 1 or "pdf_page" in ev:  # a PDF: on its page, and on no other
                assert found == [ev["pdf_page"]], (q["id"], ev["text"][:60], found)
            else:
                assert found, (q["id"], ev["text"][:60])


def test_each_key_fact_is_stated_in_the_evidence_and_in_the_reference_answer():
    for q in QUESTIONS:
        said = " ".join(ev["text"] for ev in q["evidence"])
        for fact in answers.key_facts(q):
            assert answers.has_fact(fact, said), (q["id"], fact)
            assert answers.has_fact(fact, q["answer"]), (q["id"], fact)


def test_the_mark_holds_the_reference_right_and_abstaining_right_only_where_nothing_answers():
    for q in QUESTIONS:
        cited = [ev["page"] for ev in q["evidence"]]
        reference = answers.score_answer(q["answer"] or "Je ne sais pas.", q, cited)
        assert reference["correct"] and reference["citation_precision"] in (1.0, None), (q["id"], reference)
        assert answers.score_answer("Je ne sais pas.", q)["correct"] == (not q["relevant"]), q["id"]

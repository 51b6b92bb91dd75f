"""The capstone (notebook 09) on the folders and question files a learner makes (issues 41 and 43).

Run as committed on plausible folders of one's own, its cells raised a bare ``StopIteration`` (section 3's
worked example on a folder of one file, only unreadable files, all unanswerable questions, an empty
questions file; section 5's ``ASKED`` id not in the file), a ``ZeroDivisionError`` (section 6 when no
question names a page) and an ``IndexError`` (section 7 with no known-item question). Each case is held
twice here, on a folder made up in ``tmp_path``: through the package functions the cells call
(``rungs.lab.capstone``), and through the notebook's own code cells, executed in order on that folder
with the letters encoder and an answering test double (the lines a learner changes — ``FOLDER``,
``QUESTIONS``, ``ASKED``, ``INDEX``, ``llm`` — replaced). No model, no encoder; the folder is never written.
The index is kept between runs, outside the folder (``paths.folder_index``): a second run over an unchanged
folder reads and encodes nothing; the suite's own runs of the notebook are first readings.
"""

import contextlib
import io
import json
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - the backend first: no window, ever
import pytest  # noqa: E402

from answer_doubles import Behaving  # noqa: E402
from doubles import Letters  # noqa: E402
from rungs.core import paths  # noqa: E402
from rungs.core.errors import RungsError  # noqa: E402
from rungs.core.retrieval import Hit  # noqa: E402
from rungs.lab import capstone  # noqa: E402
from rungs.lab.handbook import load_questions  # noqa: E402
from rungs.yours import index as folder_index  # noqa: E402
from rungs.yours.index import index_folder  # noqa: E402

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "09_capstone_your_folder.ipynb"

#: Six pages of a small handbook, each with a heading of several words (known-item questions come from them).
PAGES = {
    "conges.md": "# Congés payés des salariés\n\nChaque salarié acquiert deux jours et demi de congés par mois.",
    "badge.md": "# Badge perdu ou volé\n\nUn badge perdu se signale à l'accueil, qui en remet un nouveau.",
    "repas.md": "# Tickets restaurant du personnel\n\nLe ticket restaurant vaut neuf euros, payé pour moitié.",
    "teletravail.md": "# Télétravail à domicile\n\nLe télétravail est possible deux jours par semaine.",
    "mutuelle.md": "# Mutuelle santé obligatoire\n\nLa mutuelle rembourse les lunettes une fois tous les deux ans.",
    "velo.md": "# Forfait mobilités durables\n\nLe vélo pour venir travailler ouvre droit à un forfait annuel.",
}
#: Two questions a page: a lexical one, and one in another page's words but for one of its own (BM25 ranks
#: that other page first, its own below: section 3 has a rank to work by hand). 12 answerable questions.
ASKED_OF = {
    "conges.md": ("Combien de jours de congés acquiert un salarié par mois ?",
                  "En télétravail à domicile, combien de congés ?"),
    "badge.md": ("Que faire d'un badge perdu ?", "Un ticket restaurant du personnel sur le badge ?"),
    "repas.md": ("Combien vaut le ticket restaurant ?", "La mutuelle santé obligatoire paie-t-elle le restaurant ?"),
    "teletravail.md": ("Combien de jours de télétravail par semaine ?",
                       "Le forfait mobilités durables vaut-il en télétravail ?"),
    "mutuelle.md": ("Quand la mutuelle rembourse-t-elle les lunettes ?",
                    "Les congés payés des salariés couvrent-ils la mutuelle ?"),
    "velo.md": ("Le vélo ouvre-t-il droit à un forfait ?", "Un badge perdu ou volé à vélo ?"),
}


def question_lines(judged_to=None, *, unanswerable: int = 2, answerable: bool = True) -> list[dict]:
    """The learner's questions: two for each page (judged to ``judged_to`` when given), and some nothing answers."""
    out = []
    for path, pair in ASKED_OF.items():
        for kind, text in zip(("lexical", "paraphrase"), pair):
            out.append({"id": f"q{len(out) + 1:02d}", "question": text, "kind": kind,
                        "judgments": {judged_to or path: 2} if answerable else {},
                        "answer": PAGES[path].split("\n\n")[1], "key_facts": []})
    for i in range(unanswerable):
        out.append({"id": f"q{len(out) + 1:02d}", "question": f"Quelle est la couleur du parking numéro {i} ?",
                    "kind": "unanswerable", "judgments": {}, "answer": None, "key_facts": []})
    return out


def make(tmp_path: Path, files: dict, questions: list[dict] | None) -> tuple[Path, Path]:
    folder = tmp_path / "mes-documents"
    folder.mkdir()
    for name, body in files.items():
        (folder / name).write_bytes(body if isinstance(body, bytes) else body.encode("utf-8"))
    path = tmp_path / "mes-questions.jsonl"
    path.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions or []), encoding="utf-8")
    return folder, path


def listing(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


#: The lines of the first code cell a learner changes: replaced, whatever they hold as committed.
LEARNER_LINES = ("FOLDER", "QUESTIONS", "ASKED", "INDEX", "llm")


def capstone_cells(keep=()) -> list[str]:
    cells = [c["source"] for c in json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
             if c["cell_type"] == "code"]
    cells = ["".join(c) if isinstance(c, list) else c for c in cells]
    pattern = re.compile(rf"^({'|'.join(n for n in LEARNER_LINES if n not in keep)}) = .*$", re.M)
    assert all(re.search(rf"^{name} = ", cells[0], re.M) for name in LEARNER_LINES)
    cells[0] = pattern.sub(lambda m: f"{m.group(1)} = LEARNER[{m.group(1)!r}]", cells[0])
    return cells


def run_notebook(monkeypatch, tmp_path: Path, folder: Path, questions: Path, asked: str = "q01", keep=()) -> str:
    """Every code cell of notebook 09, in order, on ``folder``: what it printed (or the first cell's error,
    annotated with the cell's number among the code cells). ``keep``: learner lines run as committed."""
    monkeypatch.setattr(folder_index, "_default_encoder", Letters)
    from rungs.exercises import n09
    # The notebook hands its index to the exercises (n09.use) and closes it at the end: the exercises of the
    # tests that follow must check the committed folder again, not an index closed here.
    monkeypatch.setattr(n09, "_IN_USE", {})
    before = listing(folder)
    namespace = {"LEARNER": {"FOLDER": folder, "QUESTIONS": questions, "ASKED": asked,
                             "INDEX": tmp_path / "index" / "index.sqlite", "llm": Behaving("faithful")}}
    printed = io.StringIO()
    try:
        for number, source in enumerate(capstone_cells(keep), start=1):
            try:
                with contextlib.redirect_stdout(printed):
                    exec(compile(source, f"<notebook 09, code cell {number}>", "exec"), namespace)
            except Exception as err:
                err.add_note(f"in code cell {number}:\n{source[:300]}")
                raise
    finally:
        plt.close("all")
        assert listing(folder) == before, "the learner's folder was written"
    return printed.getvalue()


# ---------------------------------------------------------------- the notebook's cells on each folder

def test_a_folder_that_works_runs_through(monkeypatch, tmp_path):
    folder, questions = make(tmp_path, PAGES, question_lines())
    out = run_notebook(monkeypatch, tmp_path, folder, questions)
    assert "14 questions; set aside (no judged file in the index): none" in out
    assert "development half: 6 questions, final half: 6" in out
    assert "no question names its PDF page" in out and "page recall is not defined" in out
    assert "known-item questions, e.g." in out


@pytest.mark.parametrize("case, files, lines, message", [
    ("empty folder", {}, question_lines(), "the index holds no document"),
    ("only unreadable files", {"rapport.docx": b"PK\x03\x04 pas un zip", "scan.pdf": b"%PDF-1.4 rien"},
     question_lines(), "the index holds no document"),
    ("only an empty file", {"vide.md": b""}, question_lines(), "12 set aside, as no file they judge is in the index"),
    ("all unanswerable", PAGES, question_lines(answerable=False), "all of them are unanswerable"),
    ("an empty questions file", PAGES, [], "the questions file holds no question"),
    ("judged files not in the folder", PAGES, question_lines("absent.md"), "set aside"),
    ("too few answerable questions", PAGES, question_lines()[:4], "the protocol needs at least 4"),
])
def test_a_folder_the_protocol_cannot_use_is_refused_in_section_2_with_what_to_do(monkeypatch, tmp_path, case,
                                                                                   files, lines, message):
    folder, questions = make(tmp_path, files, lines)
    with pytest.raises(capstone.CapstoneError, match=message) as caught:
        run_notebook(monkeypatch, tmp_path, folder, questions)
    assert "load_questions(QUESTIONS)" in caught.value.__notes__[0], case   # section 2's cell, not a later one


def test_a_folder_of_one_file_shows_a_question_it_ranks_first(monkeypatch, tmp_path):
    folder, questions = make(tmp_path, {"conges.md": PAGES["conges.md"]}, question_lines("conges.md"))
    out = run_notebook(monkeypatch, tmp_path, folder, questions)
    assert "here is one whose file is first (reciprocal rank 1)" in out
    assert "  1 ✓ conges.md" in out


def test_one_word_titles_make_no_known_item_question_and_say_so(monkeypatch, tmp_path):
    flat = {name: f"# {name[:-3].capitalize()}\n\n{text.split(chr(10) * 2)[1]}" for name, text in PAGES.items()}
    lines = question_lines()
    lines[0]["pages"] = {"conges.md": 1}   # section 6 then has a question to score (a Markdown file has no page)
    folder, questions = make(tmp_path, flat, lines)
    out = run_notebook(monkeypatch, tmp_path, folder, questions)
    assert "1 questions name their PDF page" in out
    assert "no known-item question: no title or heading of two words or more" in out


def test_an_asked_id_not_in_the_file_is_refused_by_name(monkeypatch, tmp_path):
    folder, questions = make(tmp_path, PAGES, question_lines())
    with pytest.raises(capstone.CapstoneError, match=r"ASKED = 'q99' is the id of none of your questions \(q01, q02"):
        run_notebook(monkeypatch, tmp_path, folder, questions, asked="q99")


def test_questions_that_name_their_page_are_scored_to_the_page(monkeypatch, tmp_path):
    lines = question_lines()
    for q in lines[:3]:
        q["pages"] = {next(iter(q["judgments"])): 1}
    folder, questions = make(tmp_path, PAGES, lines)
    out = run_notebook(monkeypatch, tmp_path, folder, questions)
    assert "3 questions name their PDF page" in out
    # A Markdown file has no page: no hit is on the right page. The committed cell counted a hit from a file the
    # question does not name, with no page, as on it (None == None): 4 of the committed folder's 17 questions.
    rows = [line for line in out.split("\n") if "passage MRR: the right file" in line]
    assert len(rows) == 3 and all(row.endswith("the right page 0.000") for row in rows), rows


def test_a_second_run_over_an_unchanged_folder_reads_and_encodes_nothing(monkeypatch, tmp_path):
    """The committed ``INDEX`` line, run twice: the index is kept (outside the folder) and only brought up to date."""
    monkeypatch.setenv("RUNGS_CACHE", str(tmp_path / "cache"))
    folder, questions = make(tmp_path, PAGES, question_lines())
    first = run_notebook(monkeypatch, tmp_path, folder, questions, keep=("INDEX",))
    assert "this run: 6 added" in first and "6 read, 6 passages encoded" in first
    second = run_notebook(monkeypatch, tmp_path, folder, questions, keep=("INDEX",))
    assert "0 added, 0 changed, 0 removed, 6 unchanged; 0 read, 0 passages encoded" in second
    kept = paths.folder_index(folder)
    assert kept.is_file() and folder not in kept.parents and (tmp_path / "cache") in kept.parents
    assert "the index is kept in the rungs cache" in second


def test_a_folder_s_kept_index_is_one_place_per_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("RUNGS_CACHE", str(tmp_path / "cache"))
    a, b = tmp_path / "a" / "docs", tmp_path / "b" / "docs"
    assert paths.folder_index(a) == paths.folder_index(tmp_path / "a" / ".." / "a" / "docs") != paths.folder_index(b)
    assert paths.folder_index(a).parent.name.startswith("docs-")
    with pytest.raises(RungsError, match="folder must be a folder's path"):
        paths.folder_index(3)
    monkeypatch.setenv("RUNGS_INDEXES", str(tmp_path / "elsewhere"))
    assert paths.folder_index(a).parent.parent == tmp_path / "elsewhere"


def test_the_suite_s_runs_of_notebook_09_are_first_readings(tmp_path):
    """A kept index would make a recorded or replayed run print « 74 unchanged », not the committed report."""
    import sys

    sys.path.insert(0, str(NOTEBOOK.parent.parent / "scripts"))
    import run_notebooks

    one, two = run_notebooks.conditions()["RUNGS_INDEXES"], run_notebooks.conditions()["RUNGS_INDEXES"]
    assert one != two and Path(one).is_dir() and not any(Path(one).iterdir())


# ---------------------------------------------------------------- the package functions the cells call

def loaded(tmp_path, files=PAGES, lines=None):
    folder, path = make(tmp_path, files, question_lines() if lines is None else lines)
    index = index_folder(folder, index=tmp_path / "index.sqlite", vectors=False)
    return index, load_questions(path)


def test_split_questions_keeps_sets_aside_and_halves(tmp_path):
    index, questions = loaded(tmp_path)
    held = {d["id"] for d in index.documents()}
    mine = capstone.split_questions(questions + [{"id": "q99", "question": "Où ?", "relevant": {"absent.md": 2},
                                                  "kind": "lexical"}], held)
    assert mine["aside"] == ["q99"] and len(mine["questions"]) == 14
    assert mine["kinds"] == {"lexical": 6, "paraphrase": 6, "unanswerable": 2}
    assert (len(mine["development"]), len(mine["final"])) == (6, 6)
    index.close()


@pytest.mark.parametrize("questions, held, message", [
    ([], {"a.md"}, "holds no question"),
    ([{"id": "q1", "question": "x", "relevant": {"a.md": 2}}], set(), "no document"),
    ([{"id": "q1", "question": "x", "relevant": {}}], {"a.md"}, "all of them are unanswerable"),
    ([{"id": "q1", "question": "x", "relevant": {"b.md": 2}}], {"a.md"}, "1 set aside, as no file they judge"),
    ([{"id": f"q{i}", "question": "x", "relevant": {"a.md": 2}} for i in range(7)], {"a.md"}, "half of 3"),
])
def test_split_questions_refuses_what_the_protocol_cannot_use(questions, held, message):
    with pytest.raises(capstone.CapstoneError, match=message):
        capstone.split_questions(questions, held)


class Ranked:
    """A retriever double: the same ranking for every question (documents, or passages with a path and page)."""

    def __init__(self, ids, pages=None):
        self.ids, self.pages = ids, pages or {}

    def search(self, text, limit=10, level="document"):
        return [Hit(id=f"{i}#1" if level == "passage" else i, score=1.0,
                    extra={"path": i, **({"page": self.pages[i]} if i in self.pages else {})})
                for i in self.ids[:limit]]


QS = [{"id": "q1", "question": "un", "relevant": {"a.md": 2}},
      {"id": "q2", "question": "deux", "relevant": {"b.md": 2}}]


def test_worked_example_prefers_a_file_below_first_then_one_first_then_one_missed():
    assert capstone.worked_example(Ranked(["a.md", "b.md"]), QS)["question"]["id"] == "q2"
    first = capstone.worked_example(Ranked(["a.md"]), QS)
    assert (first["question"]["id"], first["rr"]) == ("q1", 1.0) and "reciprocal rank 1" in first["note"]
    missed = capstone.worked_example(Ranked(["c.md"]), QS)
    assert (missed["question"]["id"], missed["rr"]) == ("q1", 0.0) and "reciprocal rank 0" in missed["note"]
    with pytest.raises(capstone.CapstoneError, match="no development question names a file"):
        capstone.worked_example(Ranked(["a.md"]), [{"id": "q1", "question": "x", "relevant": {}}])


def test_find_question_names_the_ids_there_are():
    assert capstone.find_question(QS, "q2")["id"] == "q2"
    with pytest.raises(capstone.CapstoneError, match=r"'q9' is the id of none of your questions \(q1, q2\)"):
        capstone.find_question(QS, "q9")
    with pytest.raises(capstone.CapstoneError, match="was set aside in section 2"):
        capstone.find_question(QS, "q7", aside=["q7"])
    with pytest.raises(RungsError, match="asked must be a question's id"):
        capstone.find_question(QS, 6)


def test_page_scores_without_a_named_page_say_page_recall_is_not_defined():
    none = capstone.page_scores({"BM25": Ranked(["a.md"])}, QS)
    assert none["questions"] == 0 and not none["scores"] and "page recall is not defined" in none["text"]
    paged = [{**QS[0], "pages": {"a.md": 3}}, {**QS[1], "pages": {"b.md": 2}}]
    got = capstone.page_scores({"BM25": Ranked(["a.md", "b.md"], pages={"a.md": 3, "b.md": 5})}, paged)
    assert got["scores"]["BM25"] == {"file": (1 + 1 / 2) / 2, "page": 1 / 2}
    # A hit with no page, from a file the question does not name, is not on the right page.
    assert got["text"].startswith("2 questions name their PDF page")
    got = capstone.page_scores({"BM25": Ranked(["c.md", "a.md"], pages={"a.md": 3})}, paged[:1])
    assert got["scores"]["BM25"] == {"file": 1 / 2, "page": 1 / 2}


def test_load_questions_keeps_the_pages_a_question_names(tmp_path):
    lines = question_lines()
    lines[0]["pages"] = {"conges.md": 2}
    _, path = make(tmp_path, {}, lines)
    questions = load_questions(path)
    assert questions[0]["pages"] == {"conges.md": 2} and "pages" not in questions[1]


def test_known_items_with_one_word_titles_say_there_is_nothing_to_compare():
    docs = [{"id": "a.md", "title": "Congés", "headings": []}, {"id": "b.md", "title": "Badge", "headings": []}]
    got = capstone.known_items(docs, {"BM25": lambda t: ["a.md"]}, QS)
    assert got["known"] == [] and "no known-item question" in got["text"]
    docs[0]["headings"] = ["Congés payés des salariés"]
    got = capstone.known_items(docs, {"BM25": lambda t: ["a.md"]}, QS)
    assert got["scores"]["BM25"] == {"known": 1.0, "final": 0.5}
    assert got["text"].startswith("1 known-item questions, e.g. 'Congés payés des salariés' → a.md")


def test_section_8_asks_a_few_of_each_kind_and_tallies_what_the_decision_said():
    from rungs.lab import capstone

    qs = [{"id": f"q{i}", "question": f"Question {i} ?", "kind": kind, "relevant": rel, "key_facts": facts}
          for i, (kind, rel, facts) in enumerate([("unanswerable", {}, []), ("lexical", {"a.md": 2}, ["3 jours"]),
                                                   ("unanswerable", {}, []), ("paraphrase", {"b.md": 2}, []),
                                                   ("lexical", {"c.md": 2}, ["10 €"])])]
    final = [q for q in qs if q["kind"] != "unanswerable"]
    picked = capstone.abstention_sample(qs, final, each=1)
    assert [q["id"] for q in picked] == ["q0", "q1"]  # the first unanswerable, the first markable of the final half
    assert [q["id"] for q in capstone.abstention_sample(qs, final, each=5)] == ["q0", "q2", "q1", "q4"]
    rows = [{"kind": "unanswerable", "status": "no answer", "right": True},
            {"kind": "unanswerable", "status": "answered", "right": False},
            {"kind": "lexical", "status": "answered", "right": True}]
    assert capstone.abstention_tally(rows).splitlines() == [
        "unanswerable: 2 asked, « je ne sais pas » to 1, right on 1",
        "answerable: 1 asked, « je ne sais pas » to 0, right on 1"]
    assert "add a few that nothing in the folder answers" in capstone.abstention_tally(rows[2:])
    with pytest.raises(capstone.CapstoneError.__mro__[1]):  # a RungsError, naming what rows must be
        capstone.abstention_tally("rows")


def test_pages_written_as_text_in_ones_questions_are_refused_by_name_before_any_score(monkeypatch, tmp_path):
    # Issue 43 (C): « "pages": "guide.pdf" » broke the capstone's page test instead of being refused on load.
    lines = question_lines()
    lines[0]["pages"] = next(iter(lines[0]["judgments"]))
    folder, questions = make(tmp_path, PAGES, lines)
    with pytest.raises(RungsError, match=r"q01.*pages"):
        run_notebook(monkeypatch, tmp_path, folder, questions)

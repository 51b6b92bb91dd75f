"""rungs.yours: real files read by the libraries made for them, an index on disk kept up to date.

Readers on each format (titles, PDF pages, unreadable files reported by name
with the reason), the incremental index on a temporary folder (add, change,
delete, touch, unreadable; what was read and what was encoded, counted with a
test-double encoder), interruption (an exception, and a process killed with
SIGKILL: the previous index answers the same), a change of passage size, and
the retrievers over the index checked against the retrieval contract.
"""

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rungs import vectors

from rungs.yours import index as documents
from rungs.core.errors import BadArgument
from rungs.lab.handbook import load_questions
from rungs.core.contract import check_hits
from rungs.yours import walk
from rungs.yours import readers
from rungs.yours import update as update_module
import unicodedata
from rungs.lab import questions
from rungs.core import display
from rungs import passages

REPO = Path(__file__).resolve().parent.parent
BUNDLED = REPO / "notebooks" / "data" / "my-documents"


class Counting(vectors.Encoder):
    """A test double, not a model: a bag of letters, and a record of every text it was asked to encode."""

    name, dim = "counting-bag-of-letters", 27

    def __init__(self):
        self.texts: list[str] = []
        self.calls = 0

    def _documents(self, texts):
        self.calls += 1
        self.texts += list(texts)
        return _bag(texts)

    def _queries(self, texts):  # a query is not an index-time encoding: not counted
        return _bag(texts)


def _bag(texts):
    out = np.zeros((len(texts), 27), dtype=np.float32)
    for row, text in enumerate(texts):
        for ch in unicodedata.normalize("NFKD", text.lower()):
            if "a" <= ch <= "z":
                out[row, ord(ch) - 97] += 1
        out[row, 26] = 1.0  # never all zero
    return out


def write(folder: Path, rel: str, text: str) -> Path:
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))  # « the last index » is remembered there
    root = tmp_path / "docs"
    write(root, "conges.md", "---\ntitle: Congés payés\n---\nChaque salarié acquiert 2,5 jours de congés payés "
                             "par mois. Les congés d'été se posent avant le 1er mars.")
    write(root, "rh/badge.txt", "Badge perdu\n\nUn badge perdu se signale le jour même à l'accueil.")
    write(root, "rh/repas.html", "<html><head><title>Repas</title></head><body><h1>Le restaurant</h1>"
                                 "<p>Le restaurant d'entreprise ouvre à 11 h 30.</p></body></html>")
    return root


def ids(hits):
    return [h.id for h in hits]


# ---------------------------------------------------------------- readers

def test_markdown_title_from_front_matter_then_first_heading_then_name(tmp_path):
    a = readers.read_file(write(tmp_path, "a.md", "---\ntitle: Le titre\nsection: x\n---\n# Autre\n\nTexte."), tmp_path)
    b = readers.read_file(write(tmp_path, "b.md", "Intro.\n\n## Premier titre ##\n\nTexte.\n\n# Second"), tmp_path)
    c = readers.read_file(write(tmp_path, "notes-de-frais.md", "Juste du texte."), tmp_path)
    assert (a["title"], a["body"], a["format"]) == ("Le titre", "# Autre\n\nTexte.", "markdown")
    assert b["title"] == "Premier titre" and b["headings"] == ["Premier titre", "Second"]
    assert c["title"] == "notes de frais" and c["id"] == c["path"] == "notes-de-frais.md"


def test_text_title_is_its_first_line_and_a_bom_is_not_a_character(tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes("\ufeff\n  Horaires d’été  \n\nLe siège ferme à 17 h.\r\n".encode("utf-8"))
    doc = readers.read_file(path, tmp_path)
    assert doc["title"] == "Horaires d’été" and doc["body"].endswith("17 h.") and "\r" not in doc["body"]


def test_html_title_headings_and_only_visible_text(tmp_path):
    page = write(tmp_path, "p.html", """<html><head><title> Mutuelle &amp; santé </title>
        <style>p {color: red}</style><script>var secret = "caché";</script></head>
        <body><nav>Accueil › RH</nav><div class="navheader">Précédent Suivant</div>
        <h1>Mutuelle</h1><p>Prise en charge   à 50&nbsp;%<br>par l'employeur.</p><h2>Lunettes</h2><p>Tous les deux ans.</p>
        </body></html>""")
    doc = readers.read_file(page, tmp_path)
    assert doc["title"] == "Mutuelle & santé" and doc["headings"] == ["Mutuelle", "Lunettes"]
    for hidden in ("caché", "color", "Accueil", "Précédent"):
        assert hidden not in doc["body"]
    assert "Prise en charge à 50 %" in doc["body"] and "Tous les deux ans." in doc["body"]
    untitled = write(tmp_path, "u.htm", "<body><p>Avant.</p><h2>Premier <b>titre</b></h2></body>")
    assert readers.read_file(untitled, tmp_path)["title"] == "Premier titre"
    latin = tmp_path / "l.html"
    latin.write_bytes('<meta charset="iso-8859-1"><title>Congés</title><p>Été</p>'.encode("latin-1"))
    assert readers.read_file(latin, tmp_path)["title"] == "Congés"


def test_docx_title_rules_paragraphs_and_tables(tmp_path):
    import docx

    d = docx.Document()
    d.core_properties.title = "Titre des propriétés"
    d.add_heading("Frais de déplacement", level=1)
    d.add_paragraph("Le train est remboursé en seconde classe.")
    table = d.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text, table.rows[0].cells[1].text = "Repas", "20 €"
    d.save(tmp_path / "a.docx")
    a = readers.read_file(tmp_path / "a.docx", tmp_path)
    assert a["title"] == "Titre des propriétés" and a["headings"] == ["Frais de déplacement"]
    assert "seconde classe" in a["body"] and "Repas · 20 €" in a["body"]
    d.core_properties.title = ""
    d.save(tmp_path / "b.docx")
    assert readers.read_file(tmp_path / "b.docx", tmp_path)["title"] == "Frais de déplacement"
    plain = docx.Document()
    plain.add_paragraph("Première ligne, sans style de titre.")
    plain.save(tmp_path / "c.docx")
    assert readers.read_file(tmp_path / "c.docx", tmp_path)["title"] == "Première ligne, sans style de titre."


def test_pdf_pages_become_passage_pages_and_the_title_comes_from_metadata_or_first_line():
    doc = readers.read_file(BUNDLED / "reglement-interieur.pdf", BUNDLED)
    assert doc["title"] == "Règlement intérieur" and doc["format"] == "pdf"
    starts = doc["page_starts"]
    assert len(starts) == 3 and starts[0] == 0 and starts == sorted(starts)
    pieces = passages.split([doc], size=1500, overlap=200)
    pages = [p["page"] for p in pieces]
    assert pages[0] == 1 and pages[-1] == 3 and pages == sorted(pages)
    # A passage starting on page 2 holds text printed on page 2.
    second = next(p for p in pieces if p["page"] == 2)
    assert starts[1] <= second["start"] < starts[2]
    untitled = readers.read_file(BUNDLED / "temps-de-travail" / "teletravail.pdf", BUNDLED)
    assert untitled["title"] == "Télétravail" and untitled["path"] == "temps-de-travail/teletravail.pdf"


def test_every_unreadable_file_is_named_with_its_reason_and_the_rest_are_read(tmp_path):
    from pypdf import PdfWriter

    root = tmp_path / "docs"
    write(root, "ok.md", "# Bon\n\nLisible.")
    shutil.copy(BUNDLED / "avantages" / "accord-interessement.pdf", root / "coupe.pdf")
    (root / "latin.txt").write_bytes("Été".encode("latin-1"))  # read: Latin-1 is detected
    (root / "binaire.txt").write_bytes(bytes(range(256)) * 3)  # no text encoding makes words of this
    writer = PdfWriter()
    writer.add_blank_page(200, 200)
    writer.encrypt("secret")
    with open(root / "secret.pdf", "wb") as f:
        writer.write(f)
    blank = PdfWriter()
    blank.add_blank_page(200, 200)
    with open(root / "scan.pdf", "wb") as f:
        blank.write(f)
    (root / "faux.docx").write_bytes(b"not a zip at all")
    (root / "vieux.doc").write_bytes(b"\xd0\xcf\x11\xe0")
    (root / "gros.txt").write_text("x" * 30_000)
    docs, skipped = walk.read_folder(root, max_bytes=20_000)
    assert [d["id"] for d in docs] == ["latin.txt", "ok.md"]
    assert docs[0]["body"] == "Été" and docs[0]["notes"] == ["read as Windows-1252 (not UTF-8)"]
    reasons = {s.path: s.reason for s in skipped}
    assert set(reasons) == {"coupe.pdf", "binaire.txt", "secret.pdf", "scan.pdf", "faux.docx", "vieux.doc", "gros.txt"}
    assert reasons["coupe.pdf"].startswith("not a readable PDF")
    assert reasons["binaire.txt"].startswith("not UTF-8 (byte 128 is 0x80), and not Windows-1252")
    assert reasons["secret.pdf"].startswith("encrypted")
    assert "OCR" in reasons["scan.pdf"]
    assert reasons["faux.docx"].startswith("not a readable Word file")
    assert "save it as .docx" in reasons["vieux.doc"]
    assert reasons["gros.txt"].startswith("30.0 kB, over the limit of 20.0 kB per file")


def test_hidden_files_are_skipped_and_links_do_not_lead_out(tmp_path):
    root, outside = tmp_path / "docs", tmp_path / "outside"
    write(root, "a.md", "# A\n\ntexte a")
    write(root, ".cache/b.md", "# B")
    write(root, ".brouillon.md", "# C")
    write(outside, "secret.md", "# Secret\n\nhors du dossier")
    (root / "dehors.md").symlink_to(outside / "secret.md")
    (root / "dedans.md").symlink_to(root / "a.md")
    (root / "lien-dossier").symlink_to(outside, target_is_directory=True)
    docs, skipped = walk.read_folder(root)
    assert sorted(d["id"] for d in docs) == ["a.md", "dedans.md"]
    assert {s.path: s.reason for s in skipped} == {"dehors.md": "a link to a file outside the folder: not followed",
                                                    "lien-dossier/": "a link to a folder: not followed"}


def test_a_file_name_that_is_not_utf8_is_reported_not_fatal(folder):
    with open(os.path.join(os.fsencode(folder), b"caf\xe9.md"), "wb") as f:
        f.write(b"# Caf\xc3\xa9\n\ntexte")
    idx = documents.index_folder(folder, vectors=False)
    assert idx.count() == 3 and [s.reason for s in idx.report.skipped] == [
        "a file name that is not UTF-8 text: rename the file"]
    assert idx.update(vectors=False).skipped[0].path == "caf\ufffd.md"


def test_a_folder_that_is_not_there_or_not_a_folder_says_so(tmp_path):
    with pytest.raises(walk.FolderNotFound, match="no such folder"):
        documents.index_folder(tmp_path / "nope")
    with pytest.raises(BadArgument, match="is a file"):
        documents.index_folder(write(tmp_path, "f.md", "x"))


# ---------------------------------------------------------------- the incremental index

def test_add_change_delete_touch_and_what_each_costs(folder, monkeypatch):
    enc = Counting()
    idx = documents.index_folder(folder, encoder=enc, size=200, overlap=0)
    r = idx.report
    assert sorted(r.added) == ["conges.md", "rh/badge.txt", "rh/repas.html"] and r.read == 3
    assert (idx.path == folder / ".rungs" / "index.sqlite") and idx.vector_folder.is_dir()
    first = len(enc.texts)
    assert first == r.passages == r.encoded

    # Unchanged: one stat per file; nothing is read, parsed or encoded.
    parsed, opened = [], []
    real_document, real_read = readers.document_from, update_module.read_bytes
    monkeypatch.setattr(update_module, "document_from", lambda *a: parsed.append(a[0]) or real_document(*a))
    # The one way the update opens a file (readers.read_bytes: never waits on a pipe).
    monkeypatch.setattr(update_module, "read_bytes", lambda path, *a: opened.append(Path(path).name) or real_read(path, *a))
    r = idx.update(encoder=enc)
    assert (r.unchanged, r.read, r.encoded, parsed, opened) == (3, 0, 0, [], [])

    # A new date on the same bytes: read to hash it, not parsed, not encoded.
    badge = folder / "rh" / "badge.txt"
    os.utime(badge, ns=(1, 1))
    r = idx.update(encoder=enc)
    assert r.touched == ["rh/badge.txt"] and opened == ["badge.txt"] and parsed == [] and r.encoded == 0

    # Changed: that file only is parsed, and only its passages whose text changed are encoded.
    write(folder, "conges.md", "---\ntitle: Congés payés\n---\nChaque salarié acquiert 2,5 jours de congés payés "
                               "par mois. Les congés d'été se posent avant le 15 février.")
    before = len(enc.texts)
    r = idx.update(encoder=enc)
    assert r.changed == ["conges.md"] and parsed == ["conges.md"] and r.read == 1
    assert enc.texts[before:] and all("15 février" in t for t in enc.texts[before:])
    assert ids(idx.retriever("fts", level="passage").search("février")) == ["conges.md#1"]
    assert idx.retriever("fts").search("mars") == []  # the old text is gone from the index

    # Added and removed.
    write(folder, "teletravail.md", "# Télétravail\n\nDeux jours de télétravail par semaine.")
    badge.unlink()
    r = idx.update(encoder=enc)
    assert r.added == ["teletravail.md"] and r.removed == ["rh/badge.txt"] and r.unchanged == 2
    for rung in ("fts", "bm25", "vectors", "hybrid"):
        found = ids(idx.retriever(rung, encoder=enc).search("badge perdu", limit=10))
        assert "rh/badge.txt" not in found, rung
    assert ids(idx.retriever("bm25").search("télétravail")) == ["teletravail.md"]
    # The vector cache forgets what the index no longer holds.
    cache = idx.cache(enc)
    assert len(cache.vectors) == idx.db.execute("SELECT count(*) FROM passages").fetchone()[0]


def test_an_unreadable_file_is_reported_each_time_but_read_once(folder, monkeypatch):
    idx = documents.index_folder(folder, vectors=False)
    (folder / "rh" / "badge.txt").write_bytes(b"Badge \x81\x8d\x8f\x90\x9d perdu" * 20)  # no Western text
    r = idx.update(vectors=False)
    assert r.removed == ["rh/badge.txt"] and [s.path for s in r.skipped] == ["rh/badge.txt"]
    assert idx.retriever("fts").search("badge") == []  # its old text must not be found any more
    parsed = []
    monkeypatch.setattr(update_module, "document_from", lambda *a: parsed.append(a[0]))
    r = idx.update(vectors=False)
    assert parsed == [] and [s.reason[:12] for s in r.skipped] == ["not UTF-8 (b"]
    assert [s.path for s in idx.skipped()] == ["rh/badge.txt"]


def _answers(idx):
    return {q: [(h.id, round(h.score, 9)) for h in idx.retriever("fts", level="passage").search(q, limit=10)]
            for q in ("congés", "badge perdu", "restaurant", "télétravail", "février")}


def test_an_exception_in_the_middle_leaves_the_previous_index_answering_the_same(folder, monkeypatch):
    idx = documents.index_folder(folder, vectors=False)
    before = _answers(idx)
    write(folder, "conges.md", "# Congés\n\nDésormais avant le 15 février.")
    write(folder, "teletravail.md", "# Télétravail\n\nDeux jours.")
    (folder / "rh" / "repas.html").unlink()
    real = readers.document_from
    calls = []

    def fail_on_second(*args):
        calls.append(args[0])
        if len(calls) == 2:
            raise KeyboardInterrupt  # Ctrl-C, halfway through the folder
        return real(*args)

    monkeypatch.setattr(update_module, "document_from", fail_on_second)
    with pytest.raises(KeyboardInterrupt):
        idx.update(vectors=False)
    monkeypatch.setattr(update_module, "document_from", real)
    reopened = documents.open_index(folder)
    assert _answers(reopened) == before and reopened.count() == 3
    r = reopened.update(vectors=False)
    assert (r.changed, r.added, r.removed) == (["conges.md"], ["teletravail.md"], ["rh/repas.html"])


def test_an_encoder_failure_rolls_back_and_keeps_what_was_encoded(folder):
    class Failing(Counting):
        name = "failing-bag"

        def _documents(self, texts):
            if any("restaurant" in t for t in texts):
                raise RuntimeError("out of memory")
            return super()._documents(texts)

    enc = Failing()
    with pytest.raises(vectors.EncodingFailed):
        documents.index_folder(folder, encoder=enc, batch=1)
    with pytest.raises(documents.IndexMismatch, match="no finished index"):
        documents.open_index(folder)  # the first run never finished: no index to trust, said so
    (folder / "rh" / "repas.html").unlink()
    idx = documents.index_folder(folder, encoder=enc, batch=1)
    assert idx.report.encoded == 0 and enc.calls == 2  # both passages came from the cache kept by the failed run


KILLER = """
import os, signal, sys
import numpy as np
sys.path.insert(0, {repo!r})
from rungs import vectors
from rungs.yours import index as documents

class Killer(vectors.Encoder):
    name, dim = "killer-bag", 2
    calls = 0
    def _documents(self, texts):
        Killer.calls += 1
        if Killer.calls == 2:
            os.kill(os.getpid(), signal.SIGKILL)  # the machine dies halfway: no except, no finally
        return np.ones((len(texts), 2), dtype=np.float32)

documents.index_folder({folder!r}, encoder=Killer(), batch=1)
"""


def test_a_killed_indexing_run_leaves_the_previous_index_whole(folder, tmp_path):
    idx = documents.index_folder(folder, vectors=False)
    before = _answers(idx)
    idx.close()
    write(folder, "conges.md", "# Congés\n\nDésormais avant le 15 février.")
    write(folder, "rh/badge.txt", "Badge\n\nLe badge perdu coûte 10 euros.")
    write(folder, "zz.md", "# Nouveau\n\ntexte")
    script = tmp_path / "killer.py"
    script.write_text(KILLER.format(repo=str(REPO), folder=str(folder)))
    run = subprocess.run([sys.executable, str(script)], capture_output=True, timeout=120)
    assert run.returncode == -signal.SIGKILL, run.stderr.decode()[-2000:]
    reopened = documents.open_index(folder)
    assert _answers(reopened) == before and reopened.count() == 3
    r = reopened.update(vectors=False)
    assert sorted(r.changed) == ["conges.md", "rh/badge.txt"] and r.added == ["zz.md"]


def test_changing_the_passage_size_reads_everything_again_and_says_so(folder):
    idx = documents.index_folder(folder, vectors=False, size=1500, overlap=200)
    assert idx.report.rebuilt == "" and (idx.size, idx.overlap) == (1500, 200)
    same = documents.index_folder(folder, vectors=False)  # no size given: the index keeps its own
    assert same.report.read == 0 and same.size == 1500
    small = documents.index_folder(folder, vectors=False, size=60, overlap=10)
    assert small.report.rebuilt.startswith("the passages were 1500 characters with 200 of overlap, now 60 with 10")
    assert small.report.read == 3 and "every file read again" in str(small.report)
    assert small.report.passages > 3 and documents.open_index(folder).size == 60


def test_an_index_of_another_folder_is_not_overwritten(folder, tmp_path):
    other = tmp_path / "other"
    write(other, "x.md", "# X")
    documents.index_folder(folder, vectors=False, index=tmp_path / "shared.sqlite")
    with pytest.raises(documents.IndexMismatch, match="index of another folder"):
        documents.index_folder(other, vectors=False, index=tmp_path / "shared.sqlite")


def test_an_index_kept_inside_the_folder_does_not_index_itself(folder):
    idx = documents.index_folder(folder, encoder=Counting(), index=folder / "index.sqlite")
    again = idx.update(encoder=Counting())
    assert again.skipped == [] and again.unchanged == 3 and idx.count() == 3


def test_open_index_finds_the_folder_the_file_the_current_folder_and_the_last_one(folder, tmp_path, monkeypatch):
    idx = documents.index_folder(folder, vectors=False, remember=True)
    assert documents.open_index(folder).path == idx.path == documents.open_index(idx.path).path
    assert documents.open_index(folder / ".rungs").path == idx.path
    monkeypatch.chdir(folder)
    assert documents.open_index().path.resolve() == idx.path.resolve()
    monkeypatch.chdir(tmp_path)
    assert documents.open_index().path.resolve() == idx.path.resolve()  # the last one indexed
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "elsewhere"))
    with pytest.raises(documents.IndexNotFound, match="python -m rungs index FOLDER"):
        documents.open_index()
    with pytest.raises(documents.IndexNotFound):
        documents.open_index(tmp_path / "nothing.sqlite")
    (tmp_path / "junk.sqlite").write_bytes(b"this is not a database, just bytes" * 100)
    with pytest.raises(documents.IndexMismatch, match="not a rungs index"):
        documents.open_index(tmp_path / "junk.sqlite")


# ---------------------------------------------------------------- retrievers over the index

@pytest.fixture
def indexed(folder):
    write(folder, "long.md", "# Règlement\n\n" + "\n\n".join(
        f"Article {i}. Le badge perdu et les congés sont traités ici, paragraphe {i}." for i in range(12)))
    return documents.index_folder(folder, encoder=Counting(), size=120, overlap=0)


@pytest.mark.parametrize("rung", ["fts", "bm25", "vectors", "hybrid"])
@pytest.mark.parametrize("level", ["document", "passage"])
def test_retrievers_over_the_index_keep_the_contract(indexed, rung, level):
    r = indexed.retriever(rung, encoder=Counting(), level=level)
    hits = r.search("badge perdu congés", limit=10)
    assert hits
    check_hits(hits)
    for h in hits:
        assert h["path"] in {"conges.md", "rh/badge.txt", "rh/repas.html", "long.md"}
        assert ("#" in h.id) == (level == "passage")
    assert r.search("badge", limit=0) == [] and r.search("   ") == []
    with pytest.raises(BadArgument, match="has no knob"):
        r.search("badge", colour="blue")
    with pytest.raises(BadArgument, match="rollup"):
        r.search("badge", rollup="mean")


def test_search_time_knobs_stay_search_time_and_the_legs_are_built_once(indexed):
    a = indexed.retriever("hybrid", encoder=Counting())
    b = indexed.retriever("hybrid", encoder=Counting())
    assert a.inner.legs["vector"] is b.inner.legs["vector"]  # encoded once, kept
    assert a.inner.legs["keyword"].counts is b.inner.legs["keyword"].counts  # loaded once, kept
    by_max = a.search("badge perdu congés", limit=4)
    by_sum = a.search("badge perdu congés", limit=4, rollup="sum", top=3)
    long_max = next(h for h in by_max if h.id == "long.md")
    long_sum = next(h for h in by_sum if h.id == "long.md")
    assert len(long_max.parts) == 1 and len(long_sum.parts) == 3 and long_sum.score > long_max.score
    fused = a.search("badge perdu", limit=3, level="passage", k=1, leg_weights={"keyword": 1.0, "vector": 0.0})
    check_hits(fused)
    assert all(set(h.parts) == {"keyword", "vector"} and h.parts["vector"] == 0 for h in fused)
    explained = display.explanation(a.search("badge perdu", limit=1)[0])
    assert "best: passage" in explained and "keyword leg, rank" in explained


def test_another_passage_size_is_cut_in_memory_without_touching_the_disk(indexed):
    before = indexed.db.execute("SELECT count(*) FROM passages").fetchone()[0]
    big = indexed.retriever("fts", size=2000, level="passage")
    assert {h.id for h in big.search("badge", limit=20)} <= {"long.md#1", "rh/badge.txt#1", "conges.md#1"}
    assert indexed.db.execute("SELECT count(*) FROM passages").fetchone()[0] == before


def test_a_pdf_passage_hit_says_its_page(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    root = tmp_path / "docs"
    root.mkdir()
    shutil.copy(BUNDLED / "reglement-interieur.pdf", root)
    idx = documents.index_folder(root, vectors=False)
    hit = idx.retriever("bm25", level="passage").search("clause nulle de plein droit", limit=1)[0]
    assert hit["page"] == 3 and display.where(hit) == "reglement-interieur.pdf, p. 3"
    doc = idx.retriever("bm25").search("clause nulle de plein droit", limit=1)[0]
    assert doc["page"] == 3 and 3 in doc["pages"]
    assert "p. 3" in display.hits_table([doc], explain=True)


# ---------------------------------------------------------------- questions of your own

def test_known_item_questions_come_from_unique_headings_and_load_as_the_handbooks(tmp_path):
    docs = [{"id": "a.html", "title": "3.2. Calques et masques", "headings": ["Options", "Activer le filtre"]},
            {"id": "b.html", "title": "Flou gaussien", "headings": ["Options", "Activer le filtre", "Rayon du flou"]},
            {"id": "c.html", "title": "X", "headings": []}]
    qs = questions.known_item_questions(docs, per_document=5)
    assert {(q["question"], tuple(q["relevant"])) for q in qs} == {
        ("Calques et masques", ("a.html",)), ("Flou gaussien", ("b.html",)), ("Rayon du flou", ("b.html",))}
    questions.write_questions(qs, tmp_path / "q.jsonl")
    loaded = load_questions(tmp_path / "q.jsonl")
    assert [q["relevant"] for q in loaded] == [q["relevant"] for q in qs] and loaded[0]["kind"] == "known-item"


def test_the_bundled_questions_judge_files_of_the_bundled_folder():
    qs = load_questions(REPO / "notebooks" / "data" / "my-questions.jsonl")
    files = {p.relative_to(BUNDLED).as_posix() for p in BUNDLED.rglob("*") if p.is_file()}
    assert len(qs) >= 30 and all(set(q["relevant"]) <= files for q in qs)


@pytest.mark.encoder
def test_the_real_encoder_finds_paid_leave_for_vacances_in_the_bundled_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    shutil.copytree(BUNDLED, tmp_path / "docs")
    idx = documents.index_folder(tmp_path / "docs")
    top = ids(idx.retriever("vectors").search("Combien de jours de vacances ai-je par an ?", limit=3))
    assert "conges/conges-payes.pdf" in top


def test_the_fts_rung_on_disk_follows_an_update_made_after_it_was_asked_for(folder):
    # FTS5 reads the table that update() rewrites: a file added later is found, with its title and path,
    # instead of a passage « that belongs to no known document »; a file removed is gone.
    idx = documents.index_folder(folder, encoder=Counting())
    fts = idx.retriever("fts")
    assert ids(fts.search("restaurant", limit=3)) == ["rh/repas.html"]
    write(folder, "it/vpn.md", "# Accès VPN\n\nLe VPN se lance avec GlobalConnect.")
    (folder / "rh" / "repas.html").unlink()
    idx.update()
    found = fts.search("GlobalConnect", limit=3)
    assert ids(found) == ["it/vpn.md"] and found[0].title == "Accès VPN" and found[0]["path"] == "it/vpn.md"
    assert fts.search("restaurant", limit=3) == []
    assert ids(fts.search("GlobalConnect", limit=3, level="passage")) == ["it/vpn.md#1"]
    idx.close()

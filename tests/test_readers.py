"""rungs.yours.readers and what the passages make of them: real files of every format, pages, sections, snippets.

The real files are the benchmark folder's (``benchmarks/folder/documents/``: from Debian, PyPI and npm
packages, their sources and licences in its README) and three encrypted PDFs of pypdf's source
(``tests/data/encrypted/``). What is pinned: each format read with its headings as sections; the
encodings a real folder holds (Latin-1, Windows-1252, a page whose charset lies); boilerplate left out
and counted; identical files indexed once; a PDF hit citing the page of its best sentence when its
passage starts a page earlier; and every reader and the passage cutter linear on hostile input
(``doubles.growth``, which fails when a call is too fast to time).
"""

import json
import os
import shutil
from pathlib import Path

import pytest

import hostile_files as hf
from doubles import growth
from rungs import passages
from rungs.core import display
from rungs.core.errors import MAX_TEXT_CHARS, BadArgument
from rungs.yours import index as documents
from rungs.yours import keywords, readers, store
from rungs.yours.readers import markup, pdf, text

REPO = Path(__file__).resolve().parent.parent
FOLDER = REPO / "benchmarks" / "folder" / "documents"
ENCRYPTED = Path(__file__).resolve().parent / "data" / "encrypted"


def read(rel: str) -> dict:
    return readers.read_file(FOLDER / rel, FOLDER)


def linear(fn, make, n):
    """time(4n) / time(n) < 8: a linear path gives about 4, a quadratic one 16, a cubic one 64."""
    growth(fn, make(n), make(n), repeat=1)  # warm up
    ratios = []
    for _ in range(3):  # a super-linear path is slow every time; a busy machine only now and then
        ratios.append(growth(fn, make(n), make(4 * n)))
        if ratios[-1] < 8:
            return
    raise AssertionError(f"time(4n) / time(n) = {ratios}")


def copy(tmp_path, *rels) -> Path:
    root = tmp_path / "docs"
    for rel in rels:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(FOLDER / rel, root / rel)
    return root


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))  # « the last index » is noted there


# ---------------------------------------------------------------- linear on anything a file can hold

def test_a_markdown_heading_followed_by_thousands_of_spaces_is_read_in_linear_time():
    linear(lambda data: text.read_markdown(data, Path("x.md")), lambda n: b"# Titre" + b" " * n + b"x", 20_000)
    assert text.read_markdown(b"# Titre" + b" " * 3000 + b"x ##", Path("x.md"))["sections"] == [[0, "Titre x"]]


@pytest.mark.parametrize("unit", [b"<a ", b'<a x="', b"<!-- ", b"<![", b"</", b"<a b=c "])
def test_the_html_reader_stays_linear_on_unclosed_markup(unit):
    # 20,000 units: below a few thousand, a call is short enough for the machine's noise to decide the ratio.
    linear(lambda data: markup.read_html(data, Path("x.html")), lambda n: unit * n, 20_000)


def test_one_sentence_of_megabytes_is_cut_into_passages_in_linear_time():
    # 1 MB against 4 MB: the size where copying the rest of the sentence at every cut (the bug) shows.
    linear(lambda t: passages.split_text(t, size=1500, overlap=200), lambda n: "mot " * n, 250_000)
    pieces = passages.split_text("mot " * 1_000_000, size=1500, overlap=200)  # 4 MB, no sentence end
    assert all(len(p) <= 1500 for _, p in pieces) and sum(p.count("mot") for _, p in pieces) == 1_000_000


def test_the_best_sentence_is_found_in_linear_time():
    linear(lambda t: display.best_sentence(t, "badge perdu"), lambda n: "Un badge perdu se signale. " * n, 2000)


# ---------------------------------------------------------------- HTML: what issue 19's probes found

def test_a_void_element_with_a_chrome_class_does_not_swallow_the_rest_of_the_page():
    page = b'<p>Avant.</p><br class="navheader"><p>Le badge perdu se signale.</p><div class="navfooter">Suivant</div>'
    doc = markup.read_html(page, Path("x.html"))
    assert doc["body"] == "Avant.\n\nLe badge perdu se signale." and doc["dropped"]["navigation"] == len("Suivant")


def test_a_charset_that_is_not_a_text_encoding_is_said_and_the_page_read():
    doc = markup.read_html('<meta charset="rot13"><p>Congés payés</p>'.encode("utf-8"), Path("x.html"))
    assert doc["body"] == "Congés payés"
    assert doc["notes"] == ["declares charset « rot13 », which is not a text encoding: read as UTF-8"]


@pytest.mark.parametrize("section", [b"<![", b"<![>", b"<![if !supportLists]>", b"<![CDATA[x]]>", b"<!DOCTYPE x>",
                                     b"<?xml version='1.0'?>", b"<!-- -->"])
def test_a_malformed_declaration_or_section_is_skipped_up_to_its_end(section):
    doc = markup.read_html(b"<p>Avant</p>" + section + b" <p>Le badge perdu.</p>", Path("x.html"))
    assert doc["body"] == "Avant\n\nLe badge perdu."


def test_a_page_whose_charset_lies_is_read_in_the_encoding_its_bytes_are_in():
    doc = read("html/e-french/changements.html")  # declares UTF-8, is ISO-8859-1
    assert "é" in doc["body"] and "\ufffd" not in doc["body"]
    assert doc["notes"] == ["declares charset « UTF-8 » but its bytes are not: read as Windows-1252"]


def test_site_chrome_and_pilcrows_are_left_out_and_counted():
    sphinx = read("html/sphinx/usage/installation.html")
    assert "Quick search" not in sphinx["body"] and "¶" not in sphinx["body"] and "Navigation" not in sphinx["body"]
    assert sphinx["dropped"]["pilcrows"] > 0 and sphinx["dropped"]["navigation"] > 0
    assert "Installing Sphinx" in sphinx["headings"]
    docbook = read("html/docbook-xsl/generate.toc.html")
    assert "Prev" not in docbook["body"].split("\n\n")[0] and docbook["dropped"]["navigation"] > 0


# ---------------------------------------------------------------- encodings of real text files

def test_latin1_and_windows1252_text_files_are_read_and_the_encoding_said():
    latin = read("texte/booktabs-fr-README.txt")  # ISO-8859-1, 1995
    cp1252 = read("texte/docmafr.tex.txt")        # Windows-1252: a € as byte 0x80
    assert "é" in latin["body"] and latin["notes"] == ["read as Windows-1252 (not UTF-8)"]
    assert "€" in cp1252["body"] and "\x80" not in cp1252["body"]
    assert readers.read_file(FOLDER / "texte/man/tar.1.txt", FOLDER)["notes"] == []  # UTF-8 needs no word


def test_bytes_that_are_no_western_text_are_refused_with_the_fix():
    with pytest.raises(readers.Unreadable, match=r"not UTF-8 \(byte 0 is 0x81\), and not Windows-1252"):
        text.read_text(b"\x81\x8d\x8f\x90\x9d" * 40, Path("x.txt"))


# ---------------------------------------------------------------- formats

def test_epub_odt_and_pptx_are_read_with_their_headings_as_sections():
    epub = read("epub/calibre-demarrage-rapide.fra.epub")
    assert epub["title"] == "Guide de démarrage rapide" and len(epub["sections"]) > 10 and "calibre" in epub["body"]
    odt = read("odt/api-for-odfpy.odt")
    assert odt["format"] == "odt" and len(odt["sections"]) > 100 and odt["dropped"]["contents"] > 0
    poem = read("odt/serious_poem.odt")
    assert "The boy stood on the burning deck, Whence all but him had fled." in poem["body"]  # text:tab is a space
    pptx = read("pptx/txt-fit-text.pptx")
    assert "type designers" in pptx["body"] and pptx["sections"] == [[0, "Slide 1"]]
    assert not pptx["body"].startswith("Slide 1")  # a made-up section name is not text of the slide


def test_a_word_heading_starts_a_section_and_strict_ooxml_is_refused_by_name():
    doc = read("word/par-known-styles.docx")
    assert doc["sections"] and doc["sections"][0][1] == "Heading 1"
    assert doc["body"][doc["sections"][0][0]:].startswith("Heading 1")
    with pytest.raises(readers.Unreadable, match="Strict Open XML .* save it as « Word Document"):
        read("word/strict-format.docx")
    with pytest.raises(readers.Unreadable, match="old PowerPoint format: save it as .pptx"):
        readers.file_format(Path("slides.ppt"))


# ---------------------------------------------------------------- PDF

def test_pdfs_encrypted_with_an_empty_password_open_and_a_real_password_is_said():
    for name in ("r6-empty-password.pdf", "r4-aes-v2-no-key-length.pdf"):  # AES-256 and AES-128
        assert readers.read_file(ENCRYPTED / name, ENCRYPTED)["body"].startswith("pdf encryption test")
    with pytest.raises(readers.Unreadable, match="encrypted with a password: export it without a password"):
        readers.read_file(ENCRYPTED / "r6-user-password.pdf", ENCRYPTED)


def test_a_tex_pdf_is_read_with_its_spaces_its_accents_its_outline_and_without_its_contents_pages():
    doc = read("pdf/l2tabufr.pdf")
    assert len(doc["page_starts"]) == 29 and doc["notes"][0].endswith("pages 3–4")
    starts = doc["page_starts"]
    assert doc["body"][starts[2]:starts[4]].strip() == ""  # contents pages 3–4: not indexed
    assert "On ne devrait plus utiliser aucune de ces deux extensions." in doc["body"]
    assert ["a4.sty, a4wide.sty"] == [t for _, t in doc["sections"] if t.startswith("a4.sty")]
    latex2e = read("pdf/latex2e-fr.pdf")  # old TeX fonts draw accents apart: put back on their letters
    assert "fran¸c" not in latex2e["body"] and "´e" not in latex2e["body"] and "français" in latex2e["body"]


def test_a_pdf_without_a_unicode_map_or_a_text_layer_is_said():
    assert any("no Unicode map" in n for n in read("pdf/fepslatex.pdf")["notes"])
    with pytest.raises(readers.Unreadable, match="run OCR"):
        read("pdf/pypdf-resources/git.pdf")
    assert pdf.verdict(["a" * 40 + " mot"] * 10)[0].startswith("93 % of its letters sit in « words » of 25")


def test_clean_page_joins_pdfium_hyphens_and_puts_loose_accents_back():
    assert pdf.clean_page("pé\ufffe\nnalités, r´ealiser, fran¸caise, ﬁchier, contr^ole, \\^{o}") == \
        "pénalités, réaliser, française, fichier, contrôle, \\^{o}"


# ---------------------------------------------------------------- passages: the page and the section of every part

def test_a_passage_that_crosses_a_page_carries_the_page_of_each_part():
    doc = {"id": "d", "title": "D", "body": "Premier. " * 30 + "\n\nSecond badge perdu.",
           "page_starts": [0, 272], "sections": [[0, "Un"], [272, "Deux"]]}
    (p,) = passages.split([doc], size=1500, overlap=0)
    assert (p["page"], p["section"], p["places"]) == (1, "Un", [[272, 2, "Deux"]])
    assert passages.place_of(p, 271) == (1, "Un") and passages.place_of(p, 280) == (2, "Deux")


def test_a_hit_cites_the_page_of_its_best_sentence_not_the_page_its_passage_starts_on(tmp_path):
    idx = documents.index_folder(copy(tmp_path, "pdf/l2tabufr.pdf"), vectors=False)
    question = "valeurs proposées pour \\tolerance et \\emergencystretch"  # its answer is on PDF page 9
    hit = idx.retriever("bm25").search(question, limit=1, level="passage")[0]
    passage = next(p for p in idx.passages() if p["id"] == hit.id)
    assert passage["page"] == 8 and hit["page"] == 9  # the passage starts on page 8
    assert "[emergencystretch]" in hit["snippet"] and hit["section"]
    idx.close()


def test_the_snippet_is_the_best_sentence_with_the_query_words_marked():
    body = "Le restaurant ouvre à midi. Un badge perdu se signale à l'accueil le jour même. Le badge est gratuit."
    best = display.best_sentence(body, "Que faire d'un badge perdu ?")
    assert best.snippet == "Un [badge] [perdu] se signale à l'accueil le jour même."
    assert body[best.start:best.end].startswith("Un badge") and best.matched == ("badge", "perdu")
    long = " ".join(f"mot{i}" for i in range(200)) + " badge perdu " + " ".join(f"fin{i}" for i in range(200))
    shown = display.best_sentence(long, "badge perdu").snippet
    assert shown.startswith("…") and shown.endswith("…") and "[badge] [perdu]" in shown and len(shown.split()) <= 28


# ---------------------------------------------------------------- the folder: once, said, fast to load

def test_identical_files_are_indexed_once_and_the_copy_is_read_when_its_original_goes(tmp_path):
    root = copy(tmp_path, "pdf/impnattypo-fr.pdf", "telechargements/impnattypo-fr (1).pdf")
    idx = documents.index_folder(root, vectors=False)
    assert idx.report.same == [("telechargements/impnattypo-fr (1).pdf", "pdf/impnattypo-fr.pdf")]
    assert "telechargements/impnattypo-fr (1).pdf: same as pdf/impnattypo-fr.pdf" in str(idx.report)
    assert [d["id"] for d in idx.documents()] == ["pdf/impnattypo-fr.pdf"]
    assert idx.update(vectors=False).same == [("telechargements/impnattypo-fr (1).pdf", "pdf/impnattypo-fr.pdf")]
    (root / "pdf" / "impnattypo-fr.pdf").unlink()
    report = idx.update(vectors=False)
    assert report.same == [] and [d["id"] for d in idx.documents()] == ["telechargements/impnattypo-fr (1).pdf"]
    idx.close()


def test_a_text_over_the_character_cap_is_one_line_and_the_rest_is_indexed(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "ok.md").write_text("# Bon\n\nLisible.", encoding="utf-8")
    (root / "gros.txt").write_bytes(b"mot " * (MAX_TEXT_CHARS // 4 + 250_000))  # 11 MB, under 20 MB
    idx = documents.index_folder(root, vectors=False)
    assert [d["id"] for d in idx.documents()] == ["ok.md"]
    assert [(s.path, s.reason) for s in idx.report.skipped] == [
        ("gros.txt", "11.0 M characters of text, over the limit of 10 M per file: split it into smaller files")]
    idx.close()


def test_the_report_summarises_by_reason_and_writes_every_name_to_a_file(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    for i in range(30):
        (root / f"image{i:02}.png").write_bytes(b"\x89PNG")
        (root / f"note{i:02}.md").write_text(f"# Note {i}\n\nTexte {i}.", encoding="utf-8")
    idx = documents.index_folder(root, vectors=False)
    summary = str(idx.report)
    assert "added (30):\n  note00.md, note01.md, note02.md and 27 more" in summary
    assert "30 × unsupported type .png" in summary and "image00.png, image01.png, image02.png and 27 more" in summary
    full = idx.path.with_name(idx.report.written).read_text(encoding="utf-8")  # beside the index
    assert all(f"image{i:02}.png: unsupported type .png" in full for i in range(30)) and len(summary) < len(full) / 3
    idx.close()


def test_bm25_is_loaded_from_what_index_stored_and_scores_as_n1_built_anew(tmp_path):
    from rungs.bm25 import build_index

    root = copy(tmp_path, "html/sphinx/faq.html", "markdown/babel-french-README.md", "texte/man/tar.1.txt")
    idx = documents.index_folder(root, vectors=False)
    loaded = idx.retriever("bm25", level="passage")
    built = build_index(idx.passages(), stopwords=True)
    for query in ("archive compressée gzip", "Sphinx LaTeX PDF", "babel french"):
        a = [(h.id, h.score) for h in loaded.search(query, limit=5)]
        b = [(h.id, h.score) for h in built.search(query, limit=5)]
        assert [i for i, _ in a] == [i for i, _ in b] and all(abs(x - y) < 1e-9 * max(1, y) for (_, x), (_, y) in
                                                               zip(a, b))
    # A matrix file of another state of the index is never used: made again from the stored counts.
    target = keywords.matrix_file(idx.path)
    idx.db.execute("UPDATE meta SET value = 'another state' WHERE key = 'passages_changed'")
    stale = target.stat().st_mtime_ns
    fresh = documents.open_index(idx.path).retriever("bm25", level="passage")
    assert [h.id for h in fresh.search("gzip", limit=3)] == [h.id for h in built.search("gzip", limit=3)]
    assert target.stat().st_mtime_ns != stale
    idx.close()


def test_an_index_of_the_previous_layout_is_rebuilt_by_the_next_run(tmp_path):
    root = copy(tmp_path, "markdown/babel-french-README.md")
    idx = documents.index_folder(root, vectors=False)
    idx.db.execute("UPDATE meta SET value = '2' WHERE key = 'schema'")
    idx.db.execute("ALTER TABLE passages DROP COLUMN places")
    idx.close()
    again = documents.index_folder(root, vectors=False)
    assert again.report.rebuilt.startswith("the index was written by another version of rungs (layout 2)")
    assert again.report.added == ["markdown/babel-french-README.md"] and again.passages()
    assert again.db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()[0] == str(store.SCHEMA)
    again.close()


def test_encoding_knows_its_total_before_it_starts(tmp_path):
    from doubles import Letters

    class Bar:
        def __init__(self):
            self.totals, self.done = [], 0

        def reset(self, total=None):
            self.totals.append(total)

        def update(self, n):
            self.done += n

        def close(self):
            pass

    bars = {"reading": Bar(), "encoding": Bar()}
    root = copy(tmp_path, "markdown/babel-french-README.md", "texte/man/tar.1.txt")
    idx = documents.FolderIndex(tmp_path / "i.sqlite", create=True, folder=root)
    from rungs.yours import update

    report = update.run(idx, size=1500, overlap=200, rebuilt="", cache=idx.cache(Letters()), max_bytes=10**7,
                        batch=8, bars=bars)
    passages_stored = idx.db.execute("SELECT count(*) FROM passages").fetchone()[0]
    assert bars["reading"].totals == [2] and bars["encoding"].totals == [passages_stored] == [bars["encoding"].done]
    assert report.read == 2
    idx.close()


def test_an_index_made_without_vectors_is_encoded_whole_by_the_next_run_that_has_them(tmp_path):
    from doubles import Letters

    root = copy(tmp_path, "markdown/babel-french-README.md", "texte/man/nice.1.txt")
    idx = documents.index_folder(root, vectors=False)
    report = idx.update(encoder=Letters())  # nothing changed: every passage is still encoded, once
    stored = idx.db.execute("SELECT count(*) FROM passages").fetchone()[0]
    assert report.read == 0 and report.encoded == stored > 0
    assert idx.update(encoder=Letters()).encoded == 0
    idx.close()


# ---------------------------------------------------------------- the public function's door (issue 32)

def _docx_declaring(version: int) -> bytes:
    """A real Word file whose main part's zip entry says it needs zip version ``version`` / 10 to unpack."""
    import io

    import docx

    made = docx.Document()
    made.add_paragraph("Bonjour")
    out = io.BytesIO()
    made.save(out)
    data, at = bytearray(out.getvalue()), 0
    while (at := data.find(b"PK\x01\x02", at + 1)) > 0:  # each central-directory entry
        length = int.from_bytes(data[at + 28:at + 30], "little")
        if bytes(data[at + 46:at + 46 + length]) == b"word/document.xml":
            data[at + 6:at + 8] = version.to_bytes(2, "little")
    return bytes(data)


def test_a_docx_whose_zip_entry_needs_an_unsupported_version_is_unreadable_by_name(tmp_path):
    # A24: zipfile raised NotImplementedError (« zip file version 9.9 ») out of open_zip.
    (tmp_path / "futur.docx").write_bytes(_docx_declaring(99))
    with pytest.raises(readers.Unreadable, match=r"not a readable Word file .*zip file version 9\.9.*save it again"):
        readers.read_file(tmp_path / "futur.docx")


def test_a_meta_charset_that_no_codec_can_read_with_is_read_as_the_other_lying_charsets_are():
    # A1: the « undefined » codec passes codecs.lookup and fails every decode with a bare UnicodeError.
    doc = markup.read_html(b'<html><head><meta charset="undefined"></head><body><p>Les cong\xc3\xa9s.</p></body></html>',
                           Path("x.html"))
    assert doc["body"] == "Les congés."
    assert doc["notes"] == ["declares charset « undefined », which is not a text encoding: read as UTF-8"]


def _unix_socket(path: Path) -> Path:
    import socket

    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
    return path


@pytest.mark.parametrize("what, make, said", [
    ("missing", lambda d: d / "absent.md", "no such file"),
    ("a folder", lambda d: (d / "dossier.md").mkdir() or d / "dossier.md", "a folder, not a file"),
    ("a link loop", lambda d: os.symlink(d / "boucle.md", d / "boucle.md") or d / "boucle.md", "link loop"),
    ("a socket", lambda d: _unix_socket(d / "prise.txt"), "a socket, not a file"),
])
def test_read_file_says_unreadable_for_what_is_not_a_file(tmp_path, what, make, said):
    # A11: FileNotFoundError, IsADirectoryError, OSError (ELOOP, ENXIO) came out of the documented Unreadable.
    with pytest.raises(readers.Unreadable, match=said):
        readers.read_file(make(tmp_path))


def test_read_file_names_a_path_outside_its_folder_a_nul_and_a_path_that_is_no_path(tmp_path):
    # A11: ValueError from relative_to and from os.stat, AttributeError from a str or an int.
    (tmp_path / "a.md").write_text("# A\n")
    with pytest.raises(BadArgument, match="path .* is not inside folder"):
        readers.read_file(tmp_path / "a.md", tmp_path / "ailleurs")
    with pytest.raises(BadArgument, match="path holds a NUL"):
        readers.read_file(str(tmp_path / "a\0.md"))
    with pytest.raises(BadArgument, match="path must be a path"):
        readers.read_file(5)
    with pytest.raises(BadArgument, match="folder must be a path"):
        readers.read_file(tmp_path / "a.md", 3.5)
    assert readers.file_format("notes.MD") == "markdown"  # a str is a path too
    with pytest.raises(BadArgument, match="path must be a path"):
        readers.file_format(5)


@pytest.mark.parametrize("limit", [float("nan"), float("inf"), 1.5, "20", True, 0, -1])
def test_max_bytes_that_is_no_size_is_refused_not_taken_for_no_limit(tmp_path, limit):
    # C13: a NaN compared false with every size, so max_bytes=nan read a file of any size.
    (tmp_path / "a.md").write_text("# A\n\nUn texte.\n")
    with pytest.raises(BadArgument, match="max_bytes"):
        readers.read_file(tmp_path / "a.md", max_bytes=limit)


def test_read_file_on_a_fifo_says_so_at_once_instead_of_waiting_for_a_writer(tmp_path):
    # B4: the walk skips a FIFO by its type; the public function opened it and waited forever.
    import threading

    pipe = tmp_path / "tube.txt"
    os.mkfifo(pipe)
    got = []
    reader = threading.Thread(target=lambda: got.append(_outcome(lambda: readers.read_file(pipe))), daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():  # unblock the stuck reader, then fail
        with open(pipe, "wb"):
            pass
        reader.join(10)
        pytest.fail("read_file waited for a writer on a FIFO")
    assert isinstance(got[0], readers.Unreadable) and "named pipe (FIFO), not a file" in str(got[0]), got


def _outcome(call):
    try:
        return call()
    except Exception as err:  # noqa: BLE001 - the test looks at what came out
        return err


def test_a_docx_whose_deflated_part_is_damaged_is_unreadable_by_name():
    # Found by the nightly shapes run: one byte zeroed inside a deflated part made zlib.error escape member().
    data = bytearray((hf.BUNDLED / "avantages" / "mutuelle.docx").read_bytes())
    data[495] = 0
    with pytest.raises(readers.Unreadable, match=r"not a readable Word file .*cannot be unpacked"):
        readers.READERS["docx"](bytes(data), Path("mutuelle.docx"))


@pytest.mark.parametrize("name", ["\ud800.md", "a\udfff"])
def test_a_path_holding_a_lone_surrogate_is_no_file_name(name):
    # Found by the nightly shapes run: os.open could not encode « \ud800 » (UnicodeEncodeError).
    with pytest.raises(BadArgument, match="path holds"):
        readers.read_bytes(name)
    with pytest.raises(BadArgument, match="path holds"):
        readers.read_file(name)


@pytest.mark.parametrize("limit", [2**63, 10**30])
def test_a_limit_far_above_the_file_reads_the_file_without_setting_the_limit_aside(tmp_path, limit):
    # Found by the nightly shapes run on read_bytes as first written: read(max_bytes + 1) reserved the limit
    # (OverflowError past 2**63 - 1, a MemoryError below where memory is short) before reading a file of a few bytes.
    (tmp_path / "a.md").write_text("# A\n\nUn texte.\n")
    assert readers.read_bytes(tmp_path / "a.md", limit) == b"# A\n\nUn texte.\n"
    assert readers.read_file(tmp_path / "a.md", max_bytes=limit)["title"] == "A"

"""rungs.yours.readers.pdf: running headers and footers (a title, « Page 3 / 6 », a chapter's name) left out.

A line repeated at the top or bottom of most pages is furniture, not content: it must reach neither
the passages nor the quotes nor the figure check, while every page keeps its number. Pinned on PDFs
built here with pypdf (one line of Helvetica per line of text, so PDFium reads them back line by
line) and on the benchmark folder's real ones (``benchmarks/folder/documents/``, see its README):
what goes (folios, titles, chapter heads), what stays (a heading on two pages, a two-page PDF, a
line repeated lower on a page), and what the reader and the folder's report say about it.
"""

import shutil
from pathlib import Path

from rungs.yours import index as documents
from rungs.yours import readers
from rungs.yours.readers import pdf

FOLDER = Path(__file__).resolve().parent.parent / "benchmarks" / "folder" / "documents"


def built(tmp_path, pages: list[list[str]], name: str = "built.pdf") -> Path:
    """A PDF whose page i shows the lines of ``pages[i]``, top to bottom (Helvetica, WinAnsi)."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    font = DictionaryObject({NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
                             NameObject("/BaseFont"): NameObject("/Helvetica"),
                             NameObject("/Encoding"): NameObject("/WinAnsiEncoding")})
    for lines in pages:
        page = writer.add_blank_page(595, 842)
        ops = []
        for i, line in enumerate(lines):
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)").encode("cp1252")
            ops.append(b"BT /F1 11 Tf 56 %d Td (" % (790 - 24 * i) + escaped + b") Tj ET")
        stream = DecodedStreamObject()
        stream.set_data(b"\n".join(ops))
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})})
        page.replace_contents(stream)
    path = tmp_path / name
    with open(path, "wb") as f:
        writer.write(f)
    return path


#: Words that make every page's text its own (a number would not: digits are read as one placeholder).
WORDS = ["congés", "badge", "cantine", "parking", "mutuelle", "horaires", "télétravail", "formation", "retraite"]


def page_texts(doc: dict) -> list[str]:
    starts = doc["page_starts"] + [len(doc["body"])]
    return [doc["body"][a:b].strip() for a, b in zip(starts, starts[1:])]


def body_lines(doc: dict) -> list[str]:
    return [" ".join(line.split()) for line in doc["body"].split("\n")]


def test_a_title_and_a_folio_on_every_page_are_left_out_and_each_page_keeps_its_number(tmp_path):
    pages = [["Guide du stagiaire", f"Le point {w} se lit ici.", f"Une phrase sur le {w} encore.",
              f"Page {i} / 6"] for i, w in enumerate(WORDS[:6], start=1)]
    doc = readers.read_file(built(tmp_path, pages), tmp_path)
    texts = page_texts(doc)
    assert len(doc["page_starts"]) == 6
    assert all(f"Le point {w} se lit ici." in texts[i] for i, w in enumerate(WORDS[:6]))  # still on its page
    assert "Guide du stagiaire" not in doc["body"] and "/ 6" not in doc["body"]  # « 3 / 6 » is « 4 / 6 »
    assert doc["dropped"] == {"running header/footer lines": 12}
    assert doc["notes"] == ["running headers and footers not indexed: 2 distinct lines, 12 in all, "
                            "on 6 of 6 pages (« Guide du stagiaire », « Page 1 / 6 »)"]


def test_a_heading_on_two_pages_and_a_two_page_pdf_keep_every_line(tmp_path):
    two = readers.read_file(built(tmp_path, [["Consignes", "Premier point."], ["Consignes", "Second point."]],
                                  "deux.pdf"), tmp_path)
    assert two["body"].count("Consignes") == 2 and not two["dropped"] and not two["notes"]
    seven = [[f"Texte sur le {w}.", f"Encore le {w}.", f"{i}"] for i, w in enumerate(WORDS[:7], start=1)]
    seven[2].insert(0, "Exemple")
    seven[5].insert(0, "Exemple")  # a real heading opening two of seven pages
    for page in (1, 3, 5):
        seven[page].insert(-1, "412")  # a number alone above the folio, that does not follow the pages
    doc = readers.read_file(built(tmp_path, seven, "sept.pdf"), tmp_path)
    assert doc["body"].count("Exemple") == 2 and doc["dropped"] == {"running header/footer lines": 7}
    lines = body_lines(doc)
    assert "7" not in lines and lines.count("412") == 3 and "Encore le parking." in lines  # the folios went
    four = [[f"Texte sur le {w}."] for w in WORDS[:4]]
    for page in (0, 1, 3):
        four[page].insert(0, "Exemple")  # the known false drop: a heading opening most pages of a short PDF
    assert "Exemple" not in readers.read_file(built(tmp_path, four, "quatre.pdf"), tmp_path)["body"]


def test_chapter_heads_go_and_a_line_repeated_lower_on_its_pages_stays(tmp_path):
    heads = ["Chapitre 1 : Alpha"] * 3 + ["Chapitre 2 : Bêta"] * 3 + ["Chapitre 3 : Gamma"] * 3
    pages = [[head, f"Contenu sur le {w}.", "Remplacez :" if i in (1, 4, 6) else f"Suite sur le {w}.",
              f"Dernière phrase sur le {w}."] for i, (head, w) in enumerate(zip(heads, WORDS))]
    doc = readers.read_file(built(tmp_path, pages), tmp_path)
    # each head is on a third of the pages, not most: it goes because the first line of every page is one
    assert "Chapitre" not in doc["body"] and doc["body"].count("Remplacez :") == 3
    assert doc["dropped"] == {"running header/footer lines": 9} and len(doc["page_starts"]) == 9


def test_real_folios_and_chapter_heads_go_and_the_text_stays_on_its_page():
    guide = readers.read_file(FOLDER / "pdf/reportlab-userguide.pdf", FOLDER)
    lines = body_lines(guide)
    assert len(guide["page_starts"]) == 134
    assert not any(line.startswith("Page ") and line[5:].isdigit() for line in lines)  # « Page 12 » went
    heads = [line for line in lines if line.startswith("User Guide Chapter ")]
    assert heads == ["User Guide Chapter 8 Programming Flowables"]  # a one-page chapter: its head is no repeat
    latex2e = readers.read_file(FOLDER / "pdf/latex2e-fr.pdf", FOLDER)
    page = page_texts(latex2e)[115]  # PDF page 116, printed 105: q07 of the folder's questions
    assert "La commande \\nocite ne produit aucun texte en sortie" in page and "Chapitre 12" not in page
    assert not page.startswith("105") and latex2e["dropped"]["running header/footer lines"] > 250


def test_a_running_head_goes_and_the_same_words_as_the_section_heading_stay():
    doc = readers.read_file(FOLDER / "pdf/l2tabufr.pdf", FOLDER)
    # pages 10–20 open with « 2. Commandes, … » above their text; page 10 has the heading itself below it
    assert body_lines(doc).count("2. Commandes, classes et extensions obsolètes") == 1


def test_the_folder_report_counts_the_lines_left_out(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    root = tmp_path / "docs"
    root.mkdir()
    shutil.copy(FOLDER / "pdf/l2tabufr.pdf", root / "l2tabufr.pdf")
    idx = documents.index_folder(root, vectors=False)
    said = str(idx.report)
    assert "running header/footer lines in 1 file" in said and "running headers and footers not indexed" in said
    idx.close()


def test_running_lines_names_each_line_by_page_and_line():
    pages = ["Titre\nun\n1", "Titre\ndeux\n2", "Titre\ntrois\n3", "Titre\nquatre\n4"]
    assert pdf.running_lines(pages) == {(p, line) for p in range(4) for line in (0, 2)}
    assert pdf.running_lines(pages[:2]) == set()  # two pages: a repeated line may be a real heading

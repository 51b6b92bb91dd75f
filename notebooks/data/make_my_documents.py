"""Write ``notebooks/data/my-documents/``: handbook pages as the files a real folder holds.

Run:  .venv/bin/python notebooks/data/make_my_documents.py      (needs LibreOffice for the PDFs)

What it makes, for notebook 07 and tests/test_documents.py (the files are
committed: neither needs this script, nor LibreOffice, to run):

- 14 pages of ``handbook/pages/`` in five formats, in sub-folders the way a
  department's shared drive is: Markdown (one with front matter, one with only
  a ``#`` heading), plain text, HTML, Word (.docx, written with python-docx)
  and PDF (the .docx converted by LibreOffice headless — Debian's
  ``libreoffice-writer-nogui`` — so the PDFs are the real thing: embedded
  fonts, metadata, a long page spread over several pages);
- two awkward files, on purpose: a PDF cut in the middle (as a download that
  stopped: it cannot be read), and a note saved in Latin-1, not UTF-8 (read once
  its encoding is detected, and said);
- a hidden LibreOffice lock file, which the reader must skip without a word;
- ``my-questions.jsonl`` beside the folder: the handbook's judged questions
  whose answer is in one of these pages, judgments re-keyed to file paths.

Deterministic apart from the PDFs' creation dates (LibreOffice stamps them).
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
OUT = HERE / "my-documents"
QUESTIONS = HERE / "my-questions.jsonl"

# page id → where it goes, and in which format (the extension says it).
LAYOUT = {
    "reglement-interieur": "reglement-interieur.pdf",
    "conges-payes": "conges/conges-payes.pdf",
    "rtt": "conges/rtt.md",
    "conge-paternite": "conges/conge-paternite.md",
    "jours-feries": "conges/jours-feries.txt",
    "horaires": "temps-de-travail/horaires.html",
    "heures-supplementaires": "temps-de-travail/heures-supplementaires.html",
    "teletravail": "temps-de-travail/teletravail.pdf",
    "pointage": "temps-de-travail/pointage.txt",
    "frais-de-deplacement": "avantages/frais-de-deplacement.docx",
    "mutuelle": "avantages/mutuelle.docx",
    "titres-restaurant": "avantages/titres-restaurant.html",
    "arret-de-travail": "sante/arret-de-travail.docx",
    "mot-de-passe": "informatique/mot-de-passe.md",
}
# Markdown without front matter: its title must come from its first heading.
HEADING_ONLY = {"conge-paternite"}
# A PDF whose document title is left empty: its title must come from its first line.
NO_PDF_TITLE = {"teletravail"}
# « Article 3 – Accès aux locaux. Le texte… »: the article's name becomes a heading.
ARTICLE = re.compile(r"^(Article \d+ – [^.]+)\.\s+(.*)$", re.DOTALL)


def load(page_id: str) -> dict:
    sys.path.insert(0, str(REPO))
    from rungs.lab.handbook import load_pages

    return next(p for p in load_pages() if p["id"] == page_id)


def blocks(body: str) -> list[tuple[str, str]]:
    """The body as ("heading" | "paragraph", text) blocks."""
    out = []
    for para in re.split(r"\n\s*\n", body or ""):
        para = " ".join(para.split())
        if not para:
            continue
        m = ARTICLE.match(para)
        if m:
            out += [("heading", m.group(1)), ("paragraph", m.group(2))]
        else:
            out.append(("paragraph", para))
    return out


def write_markdown(page, path: Path) -> None:
    parts = [] if page["id"] in HEADING_ONLY else ["---", f"title: {page['title']}", f"section: {page['section']}", "---", ""]
    if page["id"] in HEADING_ONLY:
        parts += [f"# {page['title']}", ""]
    for kind, text in blocks(page["body"]):
        parts += [f"## {text}" if kind == "heading" else text, ""]
    path.write_text("\n".join(parts), encoding="utf-8")


def write_text(page, path: Path) -> None:
    parts = [page["title"], ""] + [text + "\n" for _, text in blocks(page["body"])]
    path.write_text("\n".join(parts), encoding="utf-8")


def write_html(page, path: Path) -> None:
    title = html.escape(page["title"])
    body = "\n".join(f"    <h2>{html.escape(t)}</h2>" if k == "heading" else f"    <p>{html.escape(t)}</p>"
                     for k, t in blocks(page["body"]))
    path.write_text(f"""<!DOCTYPE html>
<html lang="fr">
  <head>
    <meta charset="utf-8">
    <title>{title} — Boréal Logistique</title>
    <style>body {{ font-family: sans-serif; }}</style>
  </head>
  <body>
    <nav><a href="../index.html">Livret d'accueil</a> › {html.escape(page['section'])}</nav>
    <h1>{title}</h1>
{body}
    <script>console.log("analytics");</script>
  </body>
</html>
""", encoding="utf-8")


def write_docx(page, path: Path, *, core_title: bool = True) -> None:
    import docx
    from docx.shared import Pt

    document = docx.Document()
    document.styles["Normal"].font.size = Pt(11)
    props = document.core_properties
    props.title = page["title"] if core_title else ""
    props.author = "Boréal Logistique — Ressources humaines"
    props.subject = page["section"]
    # Fixed dates: the .docx is the same bytes on every run.
    import datetime as dt
    props.created = props.modified = dt.datetime(2025, 1, 6, 9, 0, 0)
    props.last_modified_by = props.author
    props.revision = 1
    if core_title:
        document.add_heading(page["title"], level=1)
    else:
        document.add_paragraph(page["title"]).runs[0].bold = True  # a bold line, not a heading style
    for kind, text in blocks(page["body"]):
        if kind == "heading":
            document.add_heading(text, level=2)
        else:
            document.add_paragraph(text)
    document.save(path)


def write_pdf(page, path: Path) -> None:
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if not soffice:
        raise SystemExit("LibreOffice is needed for the PDFs: apt-get install -y libreoffice-writer-nogui")
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / (path.stem + ".docx")
        write_docx(page, source, core_title=page["id"] not in NO_PDF_TITLE)
        subprocess.run([soffice, f"-env:UserInstallation=file://{tmp}/profile", "--headless", "--convert-to", "pdf",
                        "--outdir", tmp, str(source)], check=True, capture_output=True, timeout=180)
        shutil.copy(Path(tmp) / (path.stem + ".pdf"), path)


def main() -> int:
    if OUT.exists():
        shutil.rmtree(OUT)
    for page_id, rel in LAYOUT.items():
        page, path = load(page_id), OUT / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        {".md": write_markdown, ".txt": write_text, ".html": write_html, ".docx": write_docx,
         ".pdf": write_pdf}[path.suffix](page, path)
    # Two awkward files, on purpose: a cut PDF nobody can read, a Latin-1 note the reader must detect.
    interessement = OUT / "avantages" / "accord-interessement.pdf"
    write_pdf(load("interessement"), interessement)
    data = interessement.read_bytes()
    interessement.write_bytes(data[: len(data) * 2 // 5])  # a download that stopped at 40 %
    old = OUT / "archives" / "note-1998.txt"
    old.parent.mkdir(parents=True, exist_ok=True)
    old.write_bytes("Note de service - horaires d'été 1998\n\nLes bureaux ferment à 17 h en août. "
                    "Pensez à prévenir votre équipe.\n".encode("latin-1"))
    # What an open document leaves beside it in LibreOffice: hidden, and not a document.
    (OUT / "conges" / ".~lock.conges-payes.docx#").write_text("Boréal RH,localhost,06.01.2025 09:00;\n", encoding="utf-8")

    # The handbook's questions whose best page is here, judgments re-keyed to the files' paths.
    lines = []
    for line in (REPO / "handbook" / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        q = json.loads(line)
        judged = {LAYOUT[p]: g for p, g in (q.get("judgments") or {}).items() if p in LAYOUT}
        best = [p for p, g in (q.get("judgments") or {}).items() if g == 2]
        if best and all(p in LAYOUT for p in best):
            lines.append(json.dumps({"id": q["id"], "question": q["question"], "kind": q.get("kind", "lexical"),
                                     "judgments": judged}, ensure_ascii=False))
    QUESTIONS.write_text("\n".join(lines) + "\n", encoding="utf-8")
    total = sum(f.stat().st_size for f in OUT.rglob("*") if f.is_file())
    print(f"{sum(1 for f in OUT.rglob('*') if f.is_file())} files, {total / 1e3:.0f} kB in {OUT.relative_to(REPO)}; "
          f"{len(lines)} questions in {QUESTIONS.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

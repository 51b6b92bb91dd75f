"""Files a real folder holds and a reader chokes on, made on demand: each maker writes one into a folder.

Shared by ``test_folder_hostile`` (one of each, beside good files, through the API and the command line)
and ``test_properties_surfaces`` (random mixes). Nothing here is a rungs module: these are test doubles of
a learner's folder. The AES-encrypted PDF is written by hand (PDF 2.0's AES-256 handler, revision 5,
empty user password), the cipher itself done by the ``openssl`` command.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import struct
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BUNDLED = REPO / "notebooks" / "data" / "my-documents"


def write(folder: Path, rel: str, data) -> Path:
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


# ---------------------------------------------------------------- good files

GOOD = {
    "notes.md": "# Congés payés\n\nChaque salarié acquiert deux jours et demi de congés par mois.\n",
    "equipe/reunion.txt": "Réunion d'équipe\n\nLa réunion du lundi commence à neuf heures.\n",
    "page.html": "<html><head><title>Restaurant</title></head><body><h1>Restaurant</h1>"
                 "<p>Le restaurant d'entreprise ouvre à midi.</p></body></html>",
    "vide.md": "",
    "profond/a/b/c/badge.md": "# Badge\n\nUn badge perdu se déclare à l'accueil.\n",
    "espaces et accents é.md": "# Télétravail\n\nDeux jours de télétravail par semaine.\n",
    "index.md": "# Sommaire\n\nLe sommaire du dossier des ressources humaines.\n",
    "index.html": "<h1>Accueil</h1><p>La page d'accueil de l'intranet.</p>",
    "indexation.txt": "Indexation des salaires\n\nLes salaires sont indexés chaque janvier.\n",
}
#: Real files of the bundled folder, copied as they are.
COPIED = {"conges-payes.pdf": BUNDLED / "conges" / "conges-payes.pdf",
          "mutuelle.docx": BUNDLED / "avantages" / "mutuelle.docx"}


def good_folder(folder: Path) -> list[str]:
    for rel, text in GOOD.items():
        write(folder, rel, text)
    for rel, source in COPIED.items():
        shutil.copyfile(source, folder / rel)
    return sorted([*GOOD, *COPIED])


# ---------------------------------------------------------------- hostile files: each returns the name(s) it made

def link_loop(folder: Path) -> list[str]:
    (folder / "boucle").mkdir(parents=True, exist_ok=True)
    os.symlink("b.md", folder / "boucle" / "a.md")
    os.symlink("a.md", folder / "boucle" / "b.md")
    return ["boucle/a.md", "boucle/b.md"]


def fifo(folder: Path) -> list[str]:
    os.mkfifo(folder / "pipe.txt")  # opening it would wait forever for a writer
    return ["pipe.txt"]


def unix_socket(folder: Path) -> list[str]:
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(folder / "socket.md"))
    return ["socket.md"]


def latin1_folder(folder: Path) -> list[str]:
    raw = os.fsencode(folder) + b"/Dossier-\xe9t\xe9"
    os.mkdir(raw)
    with open(raw + b"/dedans.md", "wb") as f:
        f.write(b"# Dedans\n\nUn fichier dans un dossier au nom Latin-1.\n")
    return ["Dossier-\ufffdt\ufffd/"]


def latin1_name(folder: Path) -> list[str]:
    with open(os.fsencode(folder) + b"/r\xe9sum\xe9.md", "wb") as f:
        f.write(b"# R\xc3\xa9sum\xc3\xa9\n")
    return ["r\ufffdsum\ufffd.md"]


def link_outside(folder: Path) -> list[str]:
    os.symlink("/etc/hostname", folder / "dehors.txt")
    return ["dehors.txt"]


def dangling_link(folder: Path) -> list[str]:
    os.symlink("disparu.md", folder / "lien-mort.md")
    return ["lien-mort.md"]


def folder_link(folder: Path) -> list[str]:
    (folder / "vrai-dossier").mkdir(exist_ok=True)
    write(folder, "vrai-dossier/x.md", "# X\n\nUn fichier atteint par son vrai chemin.\n")
    os.symlink("vrai-dossier", folder / "raccourci")
    return ["raccourci/"]


def unreadable_folder(folder: Path) -> list[str]:
    write(folder, "prive/secret.md", "# Secret\n\nCe dossier ne peut pas être lu.\n")
    os.chmod(folder / "prive", 0)
    return ["prive/"]


def broken_docx(folder: Path) -> list[str]:
    write(folder, "casse.docx", b"PK\x03\x04 this is not a whole zip file")
    return ["casse.docx"]


def truncated_pdf(folder: Path) -> list[str]:
    write(folder, "coupe.pdf", (BUNDLED / "conges" / "conges-payes.pdf").read_bytes()[:700])
    return ["coupe.pdf"]


def not_utf8_text(folder: Path) -> list[str]:
    write(folder, "latin1.txt", "Congés en été\n".encode("latin-1"))
    return ["latin1.txt"]


def rot13_charset(folder: Path) -> list[str]:
    write(folder, "rot13.html", '<html><head><meta charset="rot13"><title>Paie</title></head>'
                                "<body><p>Le bulletin de paie arrive le dernier jour du mois.</p></body></html>")
    return ["rot13.html"]


def marked_section(folder: Path) -> list[str]:
    write(folder, "section.html", "<html><body><p>Avant la section.</p><![ une section mal formée"
                                  "<p>Les primes sont versées en juin.</p></body></html>")
    return ["section.html"]


def navheader_void(folder: Path) -> list[str]:
    write(folder, "nav.html", '<html><body><p>Début</p><br class="navheader">'
                              "<p>La mutuelle rembourse les lunettes.</p></body></html>")
    return ["nav.html"]


def heading_spaces(folder: Path) -> list[str]:
    write(folder, "titre.md", "# Titre" + " " * 3000 + "x\n\nLe titre suivi de trois mille espaces.\n")
    return ["titre.md"]


def unclosed_markup(folder: Path) -> list[str]:
    write(folder, "balises.html", "<p>Des balises jamais fermées.</p>" + "<a " * 20_000)
    return ["balises.html"]


def over_the_character_cap(folder: Path) -> list[str]:
    # 11 MB: under the 20 MB file limit, over the 10 M characters one document may hold.
    write(folder, "enorme.txt", ("Une ligne de texte ordinaire.\n" * 380_000).encode())
    return ["enorme.txt"]


def aes_pdf(folder: Path) -> list[str]:
    write(folder, "chiffre.pdf", encrypted_pdf("Un document chiffre en AES"))
    return ["chiffre.pdf"]


# ---------------------------------------------------------------- an AES-256 PDF, by hand

def _openssl(mode: str, key: bytes, data: bytes, iv: bytes | None = None, pad: bool = True) -> bytes:
    cmd = ["openssl", "enc", f"-aes-256-{mode}", "-K", key.hex()] + (["-iv", iv.hex()] if iv else []) + \
          ([] if pad else ["-nopad"])
    return subprocess.run(cmd, input=data, capture_output=True, check=True).stdout


def encrypted_pdf(text: str) -> bytes:
    """One page saying ``text`` (ASCII), encrypted with AES-256 (/V 5 /R 5) and an empty user password."""
    key, zero = os.urandom(32), bytes(16)
    content = f"BT /F1 24 Tf 72 720 Td ({text}) Tj ET".encode("ascii")
    iv = os.urandom(16)
    stream = iv + _openssl("cbc", key, content, iv)
    u_salt, u_key_salt, o_salt, o_key_salt = (os.urandom(8) for _ in range(4))
    u = hashlib.sha256(u_salt).digest() + u_salt + u_key_salt          # the empty password, hashed with its salt
    ue = _openssl("cbc", hashlib.sha256(u_key_salt).digest(), key, zero, pad=False)
    o = hashlib.sha256(o_salt + u).digest() + o_salt + o_key_salt
    oe = _openssl("cbc", hashlib.sha256(o_key_salt + u).digest(), key, zero, pad=False)
    perms = _openssl("ecb", key, struct.pack("<i", -4) + b"\xff\xff\xff\xffTadb" + os.urandom(4), pad=False)
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
               b"/Resources << /Font << /F1 5 0 R >> >> >>",
               b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
               b"<< /Filter /Standard /V 5 /R 5 /Length 256 /CF << /StdCF << /AuthEvent /DocOpen /CFM /AESV3 "
               b"/Length 32 >> >> /StmF /StdCF /StrF /StdCF /P -4 /EncryptMetadata true "
               + b" ".join(b"/%s <%s>" % (name, value.hex().encode())
                           for name, value in ((b"O", o), (b"U", u), (b"OE", oe), (b"UE", ue), (b"Perms", perms)))
               + b" >>"]
    out, offsets = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"), []
    for n, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    doc_id = os.urandom(16).hex().encode()
    out += b"trailer\n<< /Size %d /Root 1 0 R /Encrypt 6 0 R /ID [<%s> <%s>] >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, doc_id, doc_id, xref)
    return bytes(out)

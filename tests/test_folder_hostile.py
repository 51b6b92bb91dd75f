"""A real folder never breaks the index: good files beside one of each hostile file a real folder holds.

Built once, indexed twice — through the API and through ``python -m rungs index`` in a process of its own —
and each time: the run ends, every good file is indexed, every hostile file is indexed or reported by name
with a reason a learner can act on, and no traceback is printed. A hostile file whose proper reading belongs
to the readers (``rungs/yours/readers/``) carries its own expectation of what is read from it.

Run as root (a container), ``chmod 000`` hides nothing: the unreadable folder is then a stand-in — the
process's ``os.scandir`` refuses that one folder, as the kernel would for anyone else.
"""

import os
import re
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import hostile_files as hf
from rungs.yours import index as yours
from rungs.yours import walk

ROOT = os.geteuid() == 0 if hasattr(os, "geteuid") else False
BUDGET = "3"  # RUNGS_FILE_SECONDS: the two pathological files stop here instead of taking half a minute


def reported(pattern):
    return lambda kind, text: kind == "skipped" and re.search(pattern, text, re.I) is not None


def either(kind, text):
    return kind in ("indexed", "skipped") and bool(text.strip())


def indexed_saying(words):
    return lambda kind, text: kind == "indexed" and words in text


def no_python_in(kind, text):
    """Indexed, or a reason in words: no exception's class name quoted (« (BadArgument: … »), no « took more than »."""
    return kind == "indexed" or not re.search(r"\([A-Z][A-Za-z]+(: |\))|took more than", text)


#: name → (maker, what each of its names must become, whose fix it is)
HOSTILE = {
    "a link loop": (hf.link_loop, reported(r"link loop"), None),
    "a FIFO named pipe.txt": (hf.fifo, reported(r"named pipe"), None),
    "a socket": (hf.unix_socket, reported(r"socket"), None),
    "a folder named in Latin-1": (hf.latin1_folder, reported(r"not UTF-8"), None),
    "a file named in Latin-1": (hf.latin1_name, reported(r"not UTF-8"), None),
    "a link out of the folder": (hf.link_outside, reported(r"outside the folder"), None),
    "a dangling link": (hf.dangling_link, reported(r"link to nothing"), None),
    "a link to a folder": (hf.folder_link, reported(r"link to a folder"), None),
    "an unreadable sub-folder": (hf.unreadable_folder, reported(r"cannot be read"), None),
    "a damaged Word file": (hf.broken_docx, reported(r"Word"), None),
    "a truncated PDF": (hf.truncated_pdf, reported(r"PDF"), None),
    "a Latin-1 text": (hf.not_utf8_text, either, None),
    "an AES-encrypted PDF": (hf.aes_pdf, lambda k, t: k == "indexed" or "encrypt" in t.lower(), "readers"),
    "a page whose charset is rot13": (hf.rot13_charset, indexed_saying("bulletin de paie"), "readers"),
    "a malformed <![ section": (hf.marked_section, indexed_saying("primes"), "readers"),
    "a <br class=navheader>": (hf.navheader_void, indexed_saying("lunettes"), "readers"),
    "a heading and 3000 spaces": (hf.heading_spaces, lambda k, t: k == "indexed", "readers"),
    "60 kB of unclosed markup": (hf.unclosed_markup, no_python_in, "readers"),
    "11 MB of text": (hf.over_the_character_cap, no_python_in, "readers"),
}


class Hidden:
    """Where root reads through chmod 000: ``os.scandir`` refuses this one folder, as the kernel would."""

    def __init__(self, folder: Path):
        self.folder = os.path.realpath(folder)

    def scandir(self, real):
        def scandir(path="."):
            if os.path.realpath(os.fsdecode(path)) == self.folder:
                raise PermissionError(13, "Permission denied", os.fsdecode(path))
            return real(path)
        return scandir


# The same module as ``python -m rungs``, run as __main__, with the stand-in above when root runs the suite.
WRAPPER = """
import os, runpy, sys
hidden = os.path.realpath(os.environ.pop("RUNGS_TEST_UNREADABLE"))
real = os.scandir
def scandir(path="."):
    if os.path.realpath(os.fsdecode(path)) == hidden:
        raise PermissionError(13, "Permission denied", os.fsdecode(path))
    return real(path)
os.scandir = scandir
sys.argv = ["rungs", *sys.argv[1:]]
runpy.run_module("rungs", run_name="__main__", alter_sys=True)
"""


def python_m_rungs(*args, env):
    if ROOT:
        return subprocess.run([sys.executable, "-c", WRAPPER, *args], capture_output=True, text=True, env=env,
                              timeout=300)
    return subprocess.run([sys.executable, "-m", "rungs", *args], capture_output=True, text=True, env=env,
                          timeout=300)


def outcomes(index_path: Path) -> dict[str, tuple[str, str]]:
    """Every name the index knows: ("indexed", its text) or ("skipped", its reason)."""
    idx = yours.FolderIndex(index_path)
    try:
        found = {d["path"]: ("indexed", f"{d['title']}\n{d['body'] or ''}") for d in idx.documents()}
        found.update({s.path: ("skipped", s.reason) for s in idx.skipped()})
    finally:
        idx.close()
    return found


@pytest.fixture(scope="module")
def hostile_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile") / "dossier"
    folder.mkdir()
    good = hf.good_folder(folder)
    names = {what: maker(folder) for what, (maker, _, _) in HOSTILE.items()}
    yield folder, good, names
    os.chmod(folder / "prive", stat.S_IRWXU)  # so that the folder can be removed


@pytest.fixture(scope="module")
def runs(hostile_folder, tmp_path_factory):
    """The folder indexed through the API and through the command line; what each run made of every name."""
    folder, _, _ = hostile_folder
    out = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RUNGS_FILE_SECONDS", BUDGET)
        if ROOT:
            mp.setattr(os, "scandir", Hidden(folder / "prive").scandir(os.scandir))
        api_index = tmp_path_factory.mktemp("api") / "index"
        idx = yours.index_folder(folder, index=api_index, vectors=False)
        out["api"] = {"found": outcomes(api_index), "printed": str(idx.report), "rc": 0, "stderr": "",
                      "listed": (api_index.parent / (api_index.name + ".report.txt")).read_text(encoding="utf-8")}
        idx.close()
    cache = tmp_path_factory.mktemp("cache")
    env = {**os.environ, "RUNGS_FILE_SECONDS": BUDGET, "XDG_CACHE_HOME": str(cache),
           "PYTHONPATH": os.pathsep.join([str(hf.REPO), os.environ.get("PYTHONPATH", "")]),
           "RUNGS_TEST_UNREADABLE": str(folder / "prive")}
    # --index FOLDER/index: the index sits among the files, and is named like index.md and index.html.
    done = python_m_rungs("index", str(folder), "--index", str(folder / "index"), "--no-vectors", env=env)
    listed = folder / "index.report.txt"  # the summary names the first few; this file, every one
    out["cli"] = {"found": outcomes(folder / "index"), "printed": done.stdout, "rc": done.returncode,
                  "stderr": done.stderr, "listed": listed.read_text(encoding="utf-8") if listed.exists() else ""}
    return out


@pytest.mark.parametrize("run", ["api", "cli"])
def test_one_bad_file_is_one_line_and_every_good_file_is_indexed(hostile_folder, runs, run):
    folder, good, names = hostile_folder
    result = runs[run]
    assert result["rc"] == 0, result["stderr"]
    assert "Traceback" not in result["printed"] + result["stderr"], result["stderr"][-2000:]
    found = result["found"]
    for rel in good:
        assert found.get(rel, ("missing",))[0] == "indexed", (rel, found.get(rel))
    for what, made in names.items():
        for rel in made:
            kind, text = found.get(rel, ("missing", ""))
            assert either(kind, text), f"{what}: {rel} is {kind}"
            if kind == "skipped":  # said in the full report beside the index, by name, with its reason
                assert f"  {rel}: {text}" in result["listed"], (rel, result["listed"][-3000:])
    skipped = [rel for rel, (kind, _) in found.items() if kind == "skipped"]
    assert f"not indexed ({len(skipped)}):" in result["printed"]  # and counted in the summary printed
    assert "every file, one a line: index.report.txt (beside the index)" in result["printed"]
    assert not any(rel.startswith("index") and rel not in good for rel in found), sorted(found)  # not its own files


def _cases():
    for what in HOSTILE:
        for run in ("api", "cli"):
            yield pytest.param(what, run, id=f"{what}-{run}")


@pytest.mark.parametrize("what, run", list(_cases()))
def test_each_hostile_file_gets_what_it_should(hostile_folder, runs, what, run):
    _, _, names = hostile_folder
    expect = HOSTILE[what][1]
    for rel in names[what]:
        kind, text = runs[run]["found"].get(rel, ("missing", ""))
        assert expect(kind, text), f"{rel}: {kind}: {text[:300]}"


# ---------------------------------------------------------------- the walk, one hostile thing at a time

def test_an_unreadable_folder_keeps_what_was_indexed_from_it(tmp_path, monkeypatch):
    folder = tmp_path / "dossier"
    hf.write(folder, "a.md", "# A\n\nLe premier fichier.\n")
    hf.write(folder, "prive/secret.md", "# Secret\n\nLe mot de passe du coffre.\n")
    idx = yours.index_folder(folder, vectors=False)
    assert {d["path"] for d in idx.documents()} == {"a.md", "prive/secret.md"}
    os.chmod(folder / "prive", 0)
    try:
        if ROOT:
            monkeypatch.setattr(os, "scandir", Hidden(folder / "prive").scandir(os.scandir))
        report = idx.update(vectors=False)
    finally:
        os.chmod(folder / "prive", stat.S_IRWXU)
    assert report.removed == [] and {d["path"] for d in idx.documents()} == {"a.md", "prive/secret.md"}
    assert [s.path for s in report.skipped] == ["prive/"] and "cannot be read" in report.skipped[0].reason
    assert "prive/: a folder that cannot be read" in str(report)
    idx.close()


def test_a_fifo_is_skipped_without_being_opened(tmp_path, monkeypatch):
    hf.fifo(tmp_path)
    opened = []
    real_open = Path.open
    monkeypatch.setattr(Path, "open", lambda self, *a, **k: opened.append(self) or real_open(self, *a, **k))
    entries = list(walk.Walk(tmp_path))
    assert [(e.rel, e.path) for e in entries] == [("pipe.txt", None)] and "named pipe" in entries[0].reason
    assert not opened


def test_a_file_that_takes_too_long_is_one_line_and_the_run_goes_on(tmp_path, monkeypatch):
    monkeypatch.setenv("RUNGS_FILE_SECONDS", "1")
    hf.heading_spaces(tmp_path)
    hf.write(tmp_path, "ok.md", "# Ok\n\nUn fichier ordinaire.\n")
    from rungs.yours import readers

    slow = readers.READERS["markdown"]

    def sometimes_slow(data, path):
        if path.name == "titre.md":
            while True:  # stands for any pathological reading, whatever the reader becomes
                pass
        return slow(data, path)

    monkeypatch.setitem(readers.READERS, "markdown", sometimes_slow)
    idx = yours.index_folder(tmp_path, vectors=False)
    assert [d["path"] for d in idx.documents()] == ["ok.md"]
    assert [(s.path, s.reason) for s in idx.skipped()] == [("titre.md", "took more than 1 s to read")]
    idx.close()


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "vite"])
def test_a_file_budget_that_is_no_budget_is_refused_by_name(tmp_path, monkeypatch, value):
    from rungs.core.paths import BadSetting

    monkeypatch.setenv("RUNGS_FILE_SECONDS", value)
    hf.write(tmp_path, "a.md", "# A\n")
    with pytest.raises(BadSetting, match="RUNGS_FILE_SECONDS"):
        yours.index_folder(tmp_path, vectors=False)
    assert not (tmp_path / ".rungs").exists()  # refused before anything was written


def test_the_vector_cache_is_written_once_per_run_however_many_batches(tmp_path, monkeypatch):
    from doubles import Letters
    from rungs import vectors

    for n in range(12):
        hf.write(tmp_path, f"f{n:02d}.md", f"# Fichier {n}\n\n" + f"Paragraphe {n} sur les congés. " * 40)
    saves = []
    real = vectors.VectorCache.save
    monkeypatch.setattr(vectors.VectorCache, "save", lambda self: saves.append(1) or real(self))
    idx = yours.index_folder(tmp_path, encoder=Letters(), batch=2)
    assert idx.report.encoded >= 12 and len(saves) == 1, (idx.report.encoded, len(saves))
    idx.close()


def test_an_interrupted_run_writes_the_vector_cache_once(tmp_path, monkeypatch):
    from doubles import Letters
    from rungs import vectors

    for n in range(6):
        hf.write(tmp_path, f"f{n}.md", f"# F{n}\n\nTexte {n} pour le cache. " * 30)
    saves, calls = [], []
    real_save, real_vectors = vectors.VectorCache.save, vectors.VectorCache.vectors_of

    def interrupted(self, texts, **kw):
        calls.append(len(texts))
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real_vectors(self, texts, **kw)

    monkeypatch.setattr(vectors.VectorCache, "save", lambda self: saves.append(1) or real_save(self))
    monkeypatch.setattr(vectors.VectorCache, "vectors_of", interrupted)
    with pytest.raises(KeyboardInterrupt):
        yours.index_folder(tmp_path, encoder=Letters(), batch=1)
    assert len(saves) == 1  # interrupted, the vectors already computed are kept, once


def test_the_folder_really_holds_each_hostile_kind(hostile_folder):
    # A guard on the test itself: the files are what their names say.
    folder, _, names = hostile_folder
    assert stat.S_ISFIFO(os.lstat(folder / "pipe.txt").st_mode) and os.path.islink(folder / "boucle" / "a.md")
    assert any(os.fsencode(n).startswith(b"Dossier-\xe9") for n in os.listdir(os.fsencode(folder)))
    assert (folder / "enorme.txt").stat().st_size > 11_000_000 and shutil.which("openssl")


def _encode_as_an_update_does(texts):
    """What ``Update.encode`` does over a run: batches encoded without saving, the file written at the end."""
    import tempfile

    from doubles import Letters
    from rungs import vectors
    from rungs.yours.update import Update

    with tempfile.TemporaryDirectory() as folder:
        cache = vectors.VectorCache(Letters(), folder=Path(folder))
        run = Update.__new__(Update)  # only its encoding step: the cache, the pending texts, a silent bar
        run.cache, run.pending, run.bars = cache, [], {"encoding": type("Bar", (), {"update": lambda *a: None,
                                                                                    "reset": lambda *a, **k: None})()}
        run.batch, run.db = 256, sqlite3.connect(":memory:")  # no stored passage: only the pending are looked at
        run.db.execute("CREATE TABLE passages (title, body)")
        for start in range(0, len(texts), 256):
            run.pending = texts[start:start + 256]
            run.encode()
        cache.save()


def test_the_vector_cache_costs_in_proportion_to_the_passages():
    from doubles import growth

    texts = [f"passage {n} sur les congés payés" for n in range(24_000)]
    # Measured here: 4.3 for 4 times the passages; 12.4 with the file rewritten after every batch.
    ratio = growth(_encode_as_an_update_does, texts[:6_000], texts, repeat=3)
    assert ratio < 8, ratio


def test_an_index_inside_the_folder_never_reads_its_own_files(tmp_path):
    """Its database, its report, BM25's counts and its vectors sit among the learner's files: none is a document."""
    hf.write(tmp_path, "index.md", "# Index\n\nLa page d'accueil du dossier.\n")
    idx = yours.index_folder(tmp_path, index=tmp_path / "index", vectors=False)
    assert (tmp_path / "index.report.txt").exists() and (tmp_path / "index.bm25.npz").exists()
    again = idx.update(vectors=False)
    assert again.added == again.changed == [] and [d["path"] for d in idx.documents()] == ["index.md"], str(again)
    idx.close()

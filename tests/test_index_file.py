"""The index's file: the learner's own files are never written, and an index that is locked, read-only or
damaged gets its own sentence. Through the API and the command line; bytes compared before and after."""

import hashlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import hostile_files as hf
from rungs import fts
from rungs.core.errors import BadArgument, RungsError
from rungs.tools import cli
from rungs.yours import index as yours
from rungs.yours import store

DELETE = ("delete", "remove", "rm ")


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    docs = tmp_path / "docs"
    hf.write(docs, "a.md", "# Congés\n\nChaque salarié acquiert des congés payés.\n")
    hf.write(docs, "b.md", "# Badge\n\nUn badge perdu se déclare à l'accueil.\n")
    return docs


def fingerprint(path: Path):
    info = path.stat()
    return hashlib.sha256(path.read_bytes()).hexdigest(), info.st_size, info.st_mtime_ns


def learners_db(path: Path) -> Path:
    db = sqlite3.connect(path)
    db.executescript("CREATE TABLE meta (k, v); CREATE TABLE files (name, size); INSERT INTO files VALUES ('x', 1);")
    db.commit()
    db.close()
    return path


def holding(data: bytes):
    def make(path: Path) -> Path:
        path.write_bytes(data)
        return path
    return make


YOURS = {
    "a SQLite database of yours": (learners_db, "a SQLite database with tables files, meta"),
    "an empty notes.md": (holding(b""), "an empty file"),
    "a PDF": (holding((hf.BUNDLED / "conges" / "conges-payes.pdf").read_bytes()), "a PDF"),
    "a text file": (holding(b"mes notes\n"), "a text file of 10 bytes"),
}


@pytest.mark.parametrize("what", sorted(YOURS))
def test_index_never_writes_a_file_of_yours_through_the_api(folder, tmp_path, what):
    make, said = YOURS[what]
    target = make(tmp_path / ("mine.db" if "SQLite" in what else "notes.md" if "notes" in what else "file.bin"))
    before = fingerprint(target)
    with pytest.raises(store.NotAnIndex) as info:
        yours.index_folder(folder, index=target, vectors=False)
    assert said in str(info.value) and "not touched" in str(info.value)
    assert not any(word in str(info.value).lower() for word in DELETE), str(info.value)
    assert fingerprint(target) == before
    assert not list(tmp_path.glob("*-journal")) and not list(tmp_path.glob("*-wal"))


@pytest.mark.parametrize("what", sorted(YOURS))
def test_index_never_writes_a_file_of_yours_from_the_command_line(folder, tmp_path, what, capsys):
    make, said = YOURS[what]
    target = make(tmp_path / ("mine.db" if "SQLite" in what else "notes.md"))
    before = fingerprint(target)
    assert cli.main(["index", str(folder), "--index", str(target), "--no-vectors"]) == 1
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert fingerprint(target) == before
    if "SQLite" in what:
        db = sqlite3.connect(f"{target.as_uri()}?mode=ro", uri=True)
        assert [r[0] for r in db.execute("SELECT name FROM sqlite_master ORDER BY name")] == ["files", "meta"]
        db.close()


def test_a_file_where_the_index_folder_goes_is_refused_and_kept(folder):
    (folder / ".rungs").write_text("my own notes, not a folder")
    with pytest.raises(store.NotAnIndex, match=r"\.rungs is a file.*--index") as info:
        yours.index_folder(folder, vectors=False)
    assert not any(word in str(info.value).lower() for word in DELETE)
    assert (folder / ".rungs").read_text() == "my own notes, not a folder"


def test_fts_changes_nothing_in_a_database_it_refuses(tmp_path):
    path = tmp_path / "mine.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE rungs_pages (my_column)")
    db.commit()
    db.close()
    before = fingerprint(path)
    with pytest.raises(fts.IndexConflict, match="nothing was changed"):
        fts.FtsIndex([{"id": "a", "body": "x"}], path=str(path))
    assert fingerprint(path) == before  # not even rungs' bookkeeping table
    db = sqlite3.connect(path)
    assert [r[0] for r in db.execute("SELECT name FROM sqlite_master")] == ["rungs_pages"]
    db.close()


@pytest.mark.parametrize("content, said", [(b"", "an empty file"), (b"mes notes\n", "not a SQLite database")])
def test_fts_never_turns_a_file_of_yours_into_a_database(tmp_path, content, said):
    path = tmp_path / "notes.md"
    path.write_bytes(content)
    with pytest.raises(RungsError, match=said) as info:
        fts.FtsIndex([{"id": "a", "body": "x"}], path=str(path))
    assert path.read_bytes() == content and not any(w in str(info.value).lower() for w in DELETE)


# ---------------------------------------------------------------- an index that is ours, but busy, closed or damaged

@pytest.fixture
def indexed(folder):
    idx = yours.index_folder(folder, vectors=False)
    idx.close()
    return folder, yours.default_index_path(folder)


@pytest.mark.parametrize("lock", ["BEGIN IMMEDIATE", "BEGIN EXCLUSIVE"])
def test_an_index_another_run_is_writing_says_wait_and_retry(indexed, monkeypatch, lock, capsys):
    folder, path = indexed
    monkeypatch.setattr(store, "BUSY_SECONDS", 0.2)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute(lock)
    other.execute("INSERT INTO meta VALUES ('other run', 'writing')")
    try:
        before = fingerprint(path)
        with pytest.raises(store.IndexLocked, match="another indexing run.*wait") as info:
            yours.index_folder(folder, vectors=False)
        assert not any(word in str(info.value).lower() for word in DELETE)
        assert cli.main(["index", str(folder), "--no-vectors"]) == 1
        assert "another indexing run" in capsys.readouterr().err
        assert fingerprint(path) == before
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_an_index_that_cannot_be_written_says_so(indexed, monkeypatch):
    folder, path = indexed
    # SQLite's own read-only mode: what a read-only file or folder gives (root writes through chmod).
    real = store.sqlite3.connect
    monkeypatch.setattr(store.sqlite3, "connect", lambda p, **k: real(f"{Path(p).resolve().as_uri()}?mode=ro",
                                                                      uri=True, **k))
    hf.write(folder, "c.md", "# Nouveau\n\nUn fichier ajouté.\n")
    with pytest.raises(store.IndexReadOnly, match="cannot be written.*--index") as info:
        yours.index_folder(folder, vectors=False)
    assert not any(word in str(info.value).lower() for word in DELETE)


@pytest.mark.parametrize("damage", ["truncated", "pages overwritten", "meta that is not a number"])
def test_a_damaged_index_says_how_to_rebuild_it(indexed, damage, capsys):
    folder, path = indexed
    data = bytearray(path.read_bytes())
    if damage == "truncated":
        path.write_bytes(bytes(data[:len(data) // 3]))
    elif damage == "pages overwritten":
        data[4096:] = os.urandom(len(data) - 4096)
        path.write_bytes(bytes(data))
    else:
        db = sqlite3.connect(path)
        db.execute("UPDATE meta SET value = 'abc' WHERE key = 'size'")
        db.commit()
        db.close()
    with pytest.raises(store.IndexDamaged, match=r"damaged.*index again"):
        idx = yours.open_index(path)
        idx.update(vectors=False)
        idx.documents()
    assert cli.main(["index", str(folder), "--no-vectors"]) == 1
    err = capsys.readouterr().err
    assert "damaged" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------- the note of the last index

@pytest.mark.parametrize("note", [b"\xff\xfe/not/utf8", b"", b"/nonexistent/index.sqlite\n", b"\x00\x00",
                                  b"/etc/hostname\n"])
def test_a_damaged_note_of_the_last_index_is_no_note(tmp_path, monkeypatch, note):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    last = tmp_path / "cache" / "rungs" / "last-index"
    last.parent.mkdir(parents=True)
    last.write_bytes(note)
    with pytest.raises((store.IndexNotFound, store.NotAnIndex)):
        yours.open_index()


def test_a_note_of_the_last_index_that_cannot_be_written_does_not_stop_indexing(folder, tmp_path, monkeypatch):
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "rungs").write_text("a file where a folder should be")
    idx = yours.index_folder(folder, vectors=False, remember=True)
    assert idx.count() == 2
    idx.close()


# ---------------------------------------------------------------- the command line's door

@pytest.mark.parametrize("value", ["inf", "nan", "1e308", "-1", "0"])
def test_max_mb_that_is_no_size_is_refused_in_one_line(folder, value, capsys):
    assert cli.main(["index", str(folder), "--max-mb", value, "--no-vectors"]) == 1
    err = capsys.readouterr().err
    assert "--max-mb" in err and len(err.strip().splitlines()) == 1


def test_index_never_prints_a_traceback_whatever_goes_wrong(folder, monkeypatch, capsys):
    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug of ours, deep inside")

    monkeypatch.setattr(yours, "index_folder", broken)
    assert cli.main(["index", str(folder)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "ZeroDivisionError" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and "report" in err


def test_index_in_a_real_process_prints_no_traceback_for_a_refusal(folder, tmp_path):
    target = learners_db(tmp_path / "mine.db")
    done = subprocess.run([sys.executable, "-m", "rungs", "index", str(folder), "--index", str(target)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join([str(hf.REPO), os.environ.get("PYTHONPATH", "")])})
    assert done.returncode == 1 and "Traceback" not in done.stderr and "tables files, meta" in done.stderr


# ---------------------------------------------------------------- a retriever kept across an update

def test_an_fts_retriever_kept_across_an_update_shows_the_new_text(folder):
    idx = yours.index_folder(folder, vectors=False)
    retriever = idx.retriever("fts")
    assert retriever.search("badge", limit=1, level="passage")
    hf.write(folder, "b.md", "# Parking\n\nLe parking du personnel ferme à vingt heures.\n")  # same path, new text
    idx.update(vectors=False)
    hits = retriever.search("parking", limit=1, level="passage")
    assert [h.id for h in hits] == ["b.md#1"]
    assert "vingt heures" in retriever.meta[hits[0].id]["body"] and hits[0].title == "Parking"
    assert retriever.search("badge", limit=1) == []
    idx.close()


def test_an_fts_retriever_follows_an_update_made_by_another_run(folder):
    mine = yours.index_folder(folder, vectors=False)
    retriever = mine.retriever("fts")
    assert retriever.search("congés", limit=1)
    hf.write(folder, "a.md", "# Astreintes\n\nUne astreinte de nuit est payée double.\n")
    other = yours.open_index(mine.path)  # another kernel, another connection
    other.update(vectors=False)
    other.close()
    hits = retriever.search("astreinte", limit=1, level="passage")
    assert [h.id for h in hits] == ["a.md#1"] and "payée double" in retriever.meta["a.md#1"]["body"]
    mine.close()


@pytest.mark.parametrize("where", [b"CREATE TABLE", b"Chaque"])
def test_a_byte_flipped_inside_a_text_of_the_index_is_damage_said(folder, tmp_path, where):
    """Found by the nightly property run: a byte 0x80 in the schema's text made SQLite's own message not
    UTF-8 (UnicodeDecodeError, not sqlite3.Error); in a passage's text, reading it does the same."""
    path = tmp_path / "index.sqlite"
    yours.index_folder(folder, index=path, vectors=False).close()
    data = bytearray(path.read_bytes())
    at = data.find(where)
    assert at > 0
    data[at + 3] = 0x80
    path.write_bytes(bytes(data))
    try:
        idx = yours.open_index(path)
        idx.passages()
        idx.retriever("bm25").search("congés", limit=3)
    except RungsError as err:
        assert type(err).__name__ == "IndexDamaged" and "remove that one file" in str(err), err


# ---------------------------------------------------------------- a folder's own name, a folder that cannot be written (issue 32)

def _latin1_folder(tmp_path) -> Path:
    raw = os.fsencode(tmp_path) + b"/caf\xe9"  # an old archive's name, in Latin-1: not UTF-8
    os.mkdir(raw)
    folder = Path(os.fsdecode(raw))
    hf.write(folder, "a.md", "# Congés\n\nChaque salarié acquiert des congés payés.\n")
    return folder


def test_a_folder_whose_own_name_is_not_utf8_is_indexed_its_name_kept_as_bytes(tmp_path, monkeypatch):
    # A5: the folder's name went into the meta table as text SQLite cannot hold (UnicodeEncodeError).
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = _latin1_folder(tmp_path)
    idx = yours.index_folder(folder, vectors=False, remember=True)
    assert [d["id"] for d in idx.documents()] == ["a.md"]
    assert [h.id for h in idx.retriever("fts").search("congés")] == ["a.md"]
    assert "caf\ufffd" in repr(idx)  # shown with a replacement character
    idx.close()
    db = sqlite3.connect(yours.default_index_path(folder))
    assert db.execute("SELECT value FROM meta WHERE key = 'folder'").fetchone()[0] == os.fsencode(folder.resolve())
    db.close()
    again = yours.open_index(folder)  # the bytes read back are the folder's name: the same folder
    assert again.folder == folder and again.update(vectors=False).read == 0
    again.close()
    monkeypatch.chdir(tmp_path)
    last = yours.open_index()  # remembered as bytes too
    assert last.folder.resolve() == folder.resolve()
    last.close()


def test_a_folder_that_cannot_be_written_says_where_to_put_the_index(folder, tmp_path, monkeypatch):
    # A9: as a user who may not write the folder, making FOLDER/.rungs raised a raw PermissionError. We run as
    # root, whom no mode stops: the refusal a non-root user gets is made by mkdir itself, in its own words.
    real = Path.mkdir

    def refused(self, *args, **kwargs):
        if self.is_relative_to(folder):
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", refused)
    with pytest.raises(store.IndexReadOnly, match=r"\.rungs cannot be made \(Permission denied\).*index=") as info:
        yours.index_folder(folder, vectors=False)
    assert not any(word in str(info.value).lower() for word in DELETE)
    assert not (folder / ".rungs").exists()
    idx = yours.index_folder(folder, index=tmp_path / "elsewhere.sqlite", vectors=False)  # what it says works
    assert idx.count() == 2
    idx.close()


def test_a_note_of_the_last_index_holding_a_path_too_long_for_the_system_is_no_note(tmp_path, monkeypatch):
    # A10: Path.is_file() on a 10 kB name raised « OSError: File name too long » out of open_index().
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    last = tmp_path / "cache" / "rungs" / "last-index"
    last.parent.mkdir(parents=True)
    last.write_text("/" + "a" * 10_000 + "\n")
    with pytest.raises(store.IndexNotFound, match="none indexed before"):
        yours.open_index()


@pytest.mark.parametrize("rung", ["vectors", "hybrid"])
@pytest.mark.parametrize("encoder", [5, "use", object()])
def test_a_retriever_over_an_index_names_an_encoder_that_is_not_one(folder, rung, encoder):
    # A22: FolderIndex.retriever("vectors", encoder=5) read 5.fingerprint (AttributeError).
    idx = yours.index_folder(folder, vectors=False)
    with pytest.raises(BadArgument, match="encoder must be a rungs.vectors.Encoder"):
        idx.retriever(rung, encoder=encoder)
    with pytest.raises(BadArgument, match="encoder must be a rungs.vectors.Encoder"):
        idx.update(encoder=encoder)
    idx.close()


def test_a_closed_index_used_again_says_it_was_closed_not_damaged(folder):
    # Finding (issue 43): a closed index used again said « its file is damaged … remove that one file ».
    idx = yours.index_folder(folder, vectors=False)
    retriever = idx.retriever("fts")
    idx.close()
    for use in (idx.passages, idx.documents, lambda: retriever.search("badge"), lambda: idx.update(vectors=False)):
        with pytest.raises(store.IndexClosed, match=r"was closed \(close\(\)\) and used again: its file is fine") as err:
            use()
        assert not any(word in str(err.value) for word in DELETE) and "damaged" not in str(err.value)
    assert yours.open_index(idx.path).passages()  # the file was never touched

"""The index's file on disk: a SQLite database rungs creates, recognises by a mark, and never confuses with yours.

What it is for: ``--index PATH`` can point anywhere, and a learner's folder
holds databases, PDFs and notes of their own. Before anything is written,
``open_store`` looks at what the path holds: nothing (a new index is created
and marked), a rungs index (recognised by the SQLite header's
``application_id``, which only rungs writes), or something else — which is
refused, naming what it is (« a SQLite database with tables x, y », « a PDF »),
and never opened for writing. A locked, read-only or damaged index each gets
its own sentence and what to do.

The tables: ``meta`` (schema, passage size, folder), ``files`` (what was read,
when, its hash, its sections and the notes on it), ``skipped`` (what was not,
and why), ``duplicates`` (files whose content another file already holds:
indexed once), ``passages`` (with their section, the places where their page
or section changes, and their words counted for BM25) and their FTS5 table
``passages_fts``, whose text goes through the one normalisation
(``rungs.core.text.fts_text``). An index of an older layout is rebuilt by the
next indexing run (``reset``).

Cost: one header read and one connection.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections import Counter
from pathlib import Path

from ..core import paths
from ..core.errors import RungsError
from ..core.text import fts_text, tokenise

#: Written in the SQLite header of every index rungs creates: « RUNG ». A database without it is not ours.
APPLICATION_ID = 0x52554E47
#: The layout of the tables; an index of another layout is rebuilt by indexing again.
SCHEMA = 3
INDEX_DIR = ".rungs"
INDEX_FILE = "index.sqlite"
#: How long a run waits for another run that holds the index before saying so.
BUSY_SECONDS = 10.0

TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, sha256 TEXT,
    format TEXT, title TEXT, body TEXT, page_starts TEXT, headings TEXT, passages INTEGER,
    sections TEXT, notes TEXT);
CREATE TABLE IF NOT EXISTS skipped (path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, sha256 TEXT, reason TEXT);
CREATE TABLE IF NOT EXISTS duplicates (path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, sha256 TEXT,
    same_as TEXT);
CREATE TABLE IF NOT EXISTS passages (
    n INTEGER PRIMARY KEY, id TEXT UNIQUE, doc TEXT REFERENCES files(path) ON DELETE CASCADE,
    position INTEGER, start INTEGER, page INTEGER, title TEXT, body TEXT,
    section TEXT, places TEXT, words TEXT);
CREATE INDEX IF NOT EXISTS passages_doc ON passages(doc);
CREATE VIRTUAL TABLE IF NOT EXISTS passages_fts USING fts5(
    id UNINDEXED, title, body, tokenize = 'unicode61 remove_diacritics 2');
"""


class IndexNotFound(RungsError, FileNotFoundError):
    """There is no index where one was looked for; the message says how to make one."""


class IndexMismatch(RungsError, ValueError):
    """The index belongs to another folder, or was written by another layout of rungs."""


class NotAnIndex(IndexMismatch):
    """The path holds a file that is not a rungs index (yours, probably): it was not touched."""


class IndexLocked(RungsError, RuntimeError):
    """Another run is writing the index right now."""


class IndexReadOnly(RungsError, PermissionError):
    """The index (or its folder) cannot be written."""


class IndexDamaged(RungsError, RuntimeError):
    """The index is a rungs index, but its file is damaged."""


class IndexClosed(RungsError, RuntimeError):
    """The index was closed (``close()``) and used again: its file is fine, open it again."""


_MAGIC = [(b"%PDF", "a PDF"), (b"PK\x03\x04", "a ZIP archive (a Word, OpenDocument or EPUB file is one)"),
          (b"\xd0\xcf\x11\xe0", "an old Office document"), (b"\x89PNG", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"),
          (b"{", "a JSON file"), (b"<", "an HTML or XML file")]


def describe(path: Path) -> str:
    """What a file that is not a rungs index is, in a few words: « a PDF », « a SQLite database with tables x, y »."""
    try:
        size = path.stat().st_size
        head = path.open("rb").read(100)
    except OSError as err:
        return f"a file that cannot be read ({err.strerror or err})"
    if size == 0:
        return "an empty file"
    if head.startswith(b"SQLite format 3\x00"):
        return f"a SQLite database{_tables(path)}"
    kind = next((what for magic, what in _MAGIC if head.lstrip().startswith(magic)), None)
    if kind:
        return kind
    try:
        head.decode("utf-8")
        return f"a text file of {size:,} bytes"
    except UnicodeDecodeError:
        return f"a file of {size:,} bytes that is not a database"


def _tables(path: Path) -> str:
    # Read-only and immutable: listing someone's tables must not even take a lock on their database.
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
        try:
            names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        finally:
            db.close()
    except sqlite3.Error:
        return " (its tables cannot be listed)"
    if not names:
        return " with no tables"
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return f" with table{'s' if len(names) > 1 else ''} {shown}"


def _application_id(path: Path) -> int | None:
    """The header's application_id (bytes 68–71), or None if the file is not a SQLite database."""
    try:
        head = path.open("rb").read(100)
    except OSError:
        return None
    if len(head) < 72 or not head.startswith(b"SQLite format 3\x00"):
        return None
    return int.from_bytes(head[68:72], "big")


def _ours_to_create(path: Path) -> bool:
    # An empty file where rungs keeps its index is a run that stopped before its first write.
    return path.stat().st_size == 0 and path.name == INDEX_FILE and path.parent.name == INDEX_DIR


def check_target(path: Path) -> bool:
    """True if ``path`` is a rungs index, False if nothing is there yet; ``NotAnIndex`` for anything else."""
    for parent in path.parents:  # a file where a folder of the path should be (FOLDER/.rungs, yours)
        if parent.exists():
            if not parent.is_dir():
                raise NotAnIndex(f"{parent} is a file, where the index needs a folder: it was not touched. "
                                 "Give --index another path (for example notes.rungs.sqlite beside it)")
            break
    if not path.exists():
        return False
    if path.is_dir():
        raise NotAnIndex(f"{path} is a folder: give the index's file (for example {path / INDEX_FILE})")
    if not path.is_file():
        raise NotAnIndex(f"{path} is not a regular file: give another --index")
    if _application_id(path) == APPLICATION_ID:
        return True
    if _ours_to_create(path):
        return False
    raise NotAnIndex(f"{path} is {describe(path)}, not a rungs index: it was not touched. "
                     "Give --index a new file name (for example notes.rungs.sqlite)")


def _said(err: Exception, path: Path) -> RungsError:
    """A SQLite error on the index, in the sentence that says what to do."""
    text = str(err).lower()
    if isinstance(err, sqlite3.ProgrammingError) and "closed" in text:  # this handle, not the file
        return IndexClosed(f"this index of {path} was closed (close()) and used again: its file is fine; "
                           f"open it again, open_index({str(path)!r}), and search that one")
    if "locked" in text or "busy" in text:
        return IndexLocked(f"{path} is being written by another indexing run: wait for it to finish, then run again")
    if "readonly" in text or "read-only" in text or "unable to open" in text or "permission" in text:
        return IndexReadOnly(f"{path} cannot be written ({err}): give --index a path in a folder you can write")
    return IndexDamaged(f"{path} is a rungs index, but its file is damaged ({err}). It holds nothing that rungs "
                        f"cannot rebuild from your files: remove that one file (rm {path}) and index again")


def connect(path: Path, *, create: bool) -> sqlite3.Connection:
    """The index's connection; ``create``: make (and mark) a new index if nothing is there. Refuses any other file."""
    exists = check_target(path)
    if not exists and not create:
        raise IndexNotFound(f"no index at {path}: run  python -m rungs index FOLDER  first")
    try:
        # isolation_level=None: rungs says BEGIN and COMMIT itself, so one run is one transaction.
        # check_same_thread=False: a notebook's widgets may search from another thread than the one that opened it.
        db = sqlite3.connect(path, isolation_level=None, timeout=BUSY_SECONDS, check_same_thread=False)
        db.execute("PRAGMA foreign_keys = ON")
        if not exists:
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")  # the mark, before any table
            db.executescript(TABLES)
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()  # a damaged file fails here, not later
    except (sqlite3.Error, UnicodeDecodeError) as err:  # a flipped byte can make SQLite's own message not UTF-8
        raise _said(err, path) from None
    return db


@contextlib.contextmanager
def said(path: Path):
    """Inside: a SQLite error on the index becomes its sentence (locked, read-only, damaged)."""
    try:
        yield
    except (sqlite3.Error, UnicodeDecodeError) as err:  # a text stored as bytes that are not UTF-8 is damage too
        raise _said(err, path) from None


def make_room(path: Path) -> None:
    """The folder the index's file goes in, made if missing; one that cannot be made is said, with where else to go."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:  # a folder of yours that you may read but not write (an archive, a shared drive)
        raise IndexReadOnly(f"{path.parent} cannot be made ({err.strerror or err}): give index= (--index on the "
                            "command line) a path in a folder you can write, for example notes.rungs.sqlite "
                            "in your home folder") from None


def remember(path: Path) -> None:
    """Note ``path`` as the last index made on this machine (``open_index()`` with no path finds it)."""
    try:
        last = paths.last_index()
        last.parent.mkdir(parents=True, exist_ok=True)
        last.write_bytes(os.fsencode(path.resolve()) + b"\n")  # the system's bytes: a name need not be UTF-8
    except OSError:
        pass  # remembering the last index is a convenience, never a reason to fail


def remembered() -> Path | None:
    """The last index noted, if its file is still there; a note that cannot be used is no note."""
    try:
        text = os.fsdecode(paths.last_index().read_bytes().strip())
        return Path(text) if text and Path(text).is_file() else None
    except OSError:  # unreadable, or a name too long for the system (a 10 kB path): no note
        return None


def read_meta(db: sqlite3.Connection, path: Path) -> dict:
    with said(path):
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    if isinstance(meta.get("folder"), bytes):  # a folder whose name is not UTF-8, kept as the system's bytes
        meta["folder"] = os.fsdecode(meta["folder"])
    for key in ("size", "overlap"):  # written by rungs as numbers: anything else is damage
        if key in meta and not str(meta[key]).isdigit():
            raise IndexDamaged(f"{path} is a rungs index, but its file is damaged (meta {key} is {meta[key]!r}). "
                               f"It holds nothing that rungs cannot rebuild from your files: remove that one file "
                               f"(rm {path}) and index again")
    return meta


def write_meta(db: sqlite3.Connection, *, size: int, overlap: int, folder: Path) -> None:
    """What the index was made with: its layout, the passages' size and overlap, the folder (and when).

    The folder is text, unless its name is not UTF-8 (an old archive's « caf\\xe9 »): then its bytes, as the
    system gives them, which SQLite keeps as they are and ``read_meta`` turns back into the same path.
    """
    import time

    kept = str(folder)
    try:
        kept.encode("utf-8")
    except UnicodeEncodeError:  # the surrogates Python reads such bytes as: SQLite holds no such text
        kept = os.fsencode(folder)
    db.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                   [("schema", str(SCHEMA)), ("size", str(size)), ("overlap", str(overlap)),
                    ("folder", kept), ("updated", str(time.time()))])


def mark_changed(db: sqlite3.Connection) -> None:
    """Note that the passages changed in this run: what is made from them (BM25's matrices) names this state."""
    import time

    db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('passages_changed', ?)", (str(time.time_ns()),))


def store_passages(db: sqlite3.Connection, doc: dict, stat, digest: str, pieces: list[dict]) -> None:
    """Write one document and its passages (its old rows removed first); each passage's words are counted
    once here (``words_of``), so that BM25 is loaded at search time, never tokenised again."""
    remove(db, doc["id"])
    notes = {"notes": doc.get("notes") or [], "dropped": doc.get("dropped") or {}}
    db.execute("INSERT INTO files(path, size, mtime_ns, sha256, format, title, body, page_starts, headings, "
               "passages, sections, notes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
               (doc["id"], stat.st_size, stat.st_mtime_ns, digest, doc["format"], doc["title"], doc["body"],
                json.dumps(doc["page_starts"]) if doc.get("page_starts") else None,
                json.dumps(doc.get("headings") or [], ensure_ascii=False), len(pieces),
                json.dumps(doc.get("sections") or [], ensure_ascii=False), json.dumps(notes, ensure_ascii=False)))
    for p in pieces:
        n = db.execute("INSERT INTO passages(id, doc, position, start, page, title, body, section, places, words) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (p["id"], p["doc"], p["position"], p["start"], p.get("page"), p["title"], p["body"],
                        p.get("section"), json.dumps(p["places"], ensure_ascii=False) if p.get("places") else None,
                        json.dumps(words_of(p), ensure_ascii=False))).lastrowid
        # Through the one normalisation, so that FTS5 on disk cuts the words N1 cuts.
        db.execute("INSERT INTO passages_fts(rowid, id, title, body) VALUES (?, ?, ?, ?)",
                   (n, p["id"], fts_text(p["title"]), fts_text(p["body"])))


def words_of(passage: dict) -> dict:
    """What BM25 needs of one passage: each field's words and their counts (every word kept, none stemmed:
    stop words are dropped when the index is loaded, as ``tokenise`` would drop them)."""
    return {field: dict(Counter(tokenise(passage.get(field)))) for field in ("title", "body")}


def record_duplicate(db: sqlite3.Connection, rel: str, stat, digest: str, same_as: str) -> None:
    remove(db, rel)
    db.execute("DELETE FROM skipped WHERE path = ?", (rel,))
    db.execute("INSERT OR REPLACE INTO duplicates(path, size, mtime_ns, sha256, same_as) VALUES (?, ?, ?, ?, ?)",
               (rel, stat.st_size, stat.st_mtime_ns, digest, same_as))


def reset(db: sqlite3.Connection) -> None:
    """An index of an older layout, emptied and made again in this layout (its files are read again)."""
    names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                      "AND name NOT LIKE 'passages_fts_%' AND name NOT LIKE 'sqlite_%'")]
    for name in names:
        db.execute(f'DROP TABLE IF EXISTS "{name}"')
    db.executescript(TABLES)


def remove(db: sqlite3.Connection, rel: str) -> None:
    db.execute("DELETE FROM duplicates WHERE path = ?", (rel,))
    db.execute("DELETE FROM passages_fts WHERE rowid IN (SELECT n FROM passages WHERE doc = ?)", (rel,))
    db.execute("DELETE FROM passages WHERE doc = ?", (rel,))
    db.execute("DELETE FROM files WHERE path = ?", (rel,))


def record_skip(db: sqlite3.Connection, rel: str, stat, digest: str | None, reason: str) -> None:
    db.execute("INSERT OR REPLACE INTO skipped(path, size, mtime_ns, sha256, reason) VALUES (?, ?, ?, ?, ?)",
               (rel, stat.st_size if stat else None, stat.st_mtime_ns if stat else None, digest, reason))

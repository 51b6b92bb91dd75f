"""Bringing an index up to date with its folder: scan what changed, then apply it, one file at a time.

What it is for: ``FolderIndex.update`` in steps a reader can follow. ``scan``
walks the folder and decides, for each file, what to do — nothing (same size
and modification time), skip it again (it could not be read before and has not
changed), or read it. ``apply`` reads each file on its own: anything at all
that goes wrong with one file — an exception from a reader, a file over the
size limit, one that takes longer than ``FILE_SECONDS`` (``RUNGS_FILE_SECONDS``)
— makes it « not indexed » with its name and the reason, inside a savepoint,
and every other file is indexed. A failure of the index itself (locked,
read-only, damaged) is not one file's: it stops the run with its sentence. A
file whose content hash is unchanged is not parsed again; only passages whose
text changed are encoded again. A file whose bytes another file of the folder
already holds (a second download, a copy) is indexed once: it is recorded
« same as » the first (in path order), and read again only if that one changes
or goes.

Encoding comes after reading, so that its progress bar knows its total: the
passages whose text the vector cache does not hold yet.

The whole run is one transaction: interrupted (Ctrl-C, the machine killed),
the previous index stays exactly as it was. The vectors already encoded are
saved even then, once, so the next run does not pay for them again.

Cost: a ``stat`` per unchanged file; reading and encoding the changed ones.
"""

from __future__ import annotations

import contextlib
import hashlib
import signal
import sqlite3
import threading
from pathlib import Path

from ..core import paths
from ..core.documents import passage_text
from ..core.errors import RungsError
from ..passages import split
from . import store
from .readers import Unreadable, check_size, document_from, file_format, read_bytes
from .report import IndexReport
from .walk import Skipped, Walk

#: The longest one file may take to read: past it, the file is « not indexed » and the run goes on.
FILE_SECONDS = 120.0


def file_seconds() -> float:
    """The per-file budget: ``RUNGS_FILE_SECONDS`` (a slow machine may want more), else ``FILE_SECONDS``."""
    return paths.setting_number("RUNGS_FILE_SECONDS", FILE_SECONDS, low=0.01, high=86_400)


class TookTooLong(RungsError, TimeoutError):
    """One file took longer to read than its budget."""


@contextlib.contextmanager
def budget(seconds: float):
    """Raise ``TookTooLong`` inside the block after ``seconds`` (in the main thread; elsewhere, no budget)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def expired(signum, frame):
        raise TookTooLong(f"took more than {seconds:g} s to read")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def reason(err: BaseException) -> str:
    """Why one file was not indexed, in words a learner can act on."""
    if isinstance(err, (Unreadable, TookTooLong)):
        return str(err)
    if isinstance(err, OSError):
        return f"cannot be read ({err.strerror or err})"
    said = " ".join(str(err).split())[:120]
    return (f"could not be read ({type(err).__name__}{': ' + said if said else ''}); if it opens in its own "
            "program, save it again in the same format")


class Update:
    """One run over the folder: what is known, what is seen, what is pending encoding, and the report."""

    def __init__(self, index, *, size: int, overlap: int, cache, max_bytes: int, batch: int, bars,
                 seconds: float = FILE_SECONDS):
        self.index, self.db, self.size, self.overlap, self.seconds = index, index.db, size, overlap, seconds
        self.cache, self.max_bytes, self.batch, self.bars = cache, max_bytes, batch, bars
        self.report = IndexReport()
        self.known = {p: (s, m, h) for p, s, m, h in self.db.execute("SELECT path, size, mtime_ns, sha256 FROM files")}
        self.known_skipped = {p: (s, m, h, r) for p, s, m, h, r in
                              self.db.execute("SELECT path, size, mtime_ns, sha256, reason FROM skipped")}
        self.known_same = {p: (s, m, h, o) for p, s, m, h, o in
                           self.db.execute("SELECT path, size, mtime_ns, sha256, same_as FROM duplicates")}
        self.by_digest = {h: p for p, (_, _, h) in sorted(self.known.items(), reverse=True)}
        self.seen: set[str] = set()
        self.pending: list[str] = []
        self.entries: dict = {}  # rel → entry, to read a copy again when its original goes

    # ------------------------------------------------------------ scan: what to do with each file

    def scan(self, entries):
        """Each entry of the folder with the action it needs: ``skip``, ``unchanged``, ``skipped-again`` or ``read``."""
        for entry in entries:
            if entry.path is not None and self.index.owns(entry.path):
                continue  # the index's own files, when --index put them inside the folder
            self.seen.add(entry.rel)
            if entry.path is None:
                yield "skip", entry
                continue
            stamp = (entry.stat.st_size, entry.stat.st_mtime_ns)
            self.entries[entry.rel] = entry
            if not self.report.rebuilt and self.known.get(entry.rel, (None, None))[:2] == stamp:
                yield "unchanged", entry
            elif not self.report.rebuilt and self.known_same.get(entry.rel, (None, None))[:2] == stamp:
                yield "same-again", entry
            elif not self.report.rebuilt and self.known_skipped.get(entry.rel, (None, None))[:2] == stamp:
                yield "skipped-again", entry
            else:
                yield "read", entry

    # ------------------------------------------------------------ apply

    def apply(self, action: str, entry) -> None:
        if action == "unchanged":
            self.report.unchanged += 1
        elif action == "skipped-again":
            self.report.skipped.append(Skipped(entry.rel, self.known_skipped[entry.rel][3]))
        elif action == "same-again":
            self.report.same.append((entry.rel, self.known_same[entry.rel][3]))
        elif action == "skip":
            self.skip(entry.rel, None, None, entry.reason)
        else:
            self.db.execute("SAVEPOINT one_file")  # what one file writes is undone if that file fails
            try:
                self.read(entry)
            except sqlite3.Error:
                raise  # the index itself failed (locked, full, damaged): that is the run's, not this file's
            except Exception as err:  # noqa: BLE001 - one bad file is one line in the report, never a failed run
                self.db.execute("ROLLBACK TO one_file")
                self.skip(entry.rel, entry.stat, None, reason(err))
            self.db.execute("RELEASE one_file")

    def read(self, entry) -> None:
        rel, stat = entry.rel, entry.stat
        kind = file_format(entry.path)
        check_size(stat.st_size, self.max_bytes)
        with budget(self.seconds):
            data = read_bytes(entry.path, self.max_bytes)  # the one way a file is opened: never waits on a pipe
            digest = hashlib.sha256(data).hexdigest()
            if self.unchanged_content(rel, stat, digest) or self.copy_of(rel, stat, digest):
                return
            doc = document_from(rel, kind, data, entry.path)
        self.report.read += 1
        pieces = split([doc], size=self.size, overlap=self.overlap)
        store.store_passages(self.db, doc, stat, digest, pieces)
        self.by_digest.setdefault(digest, rel)
        self.report.noted(rel, doc)
        (self.report.changed if rel in self.known else self.report.added).append(rel)
        self.db.execute("DELETE FROM skipped WHERE path = ?", (rel,))
        if self.cache is not None:
            self.pending += [passage_text(p) for p in pieces]

    def copy_of(self, rel: str, stat, digest: str) -> bool:
        """Another file of the folder holds these very bytes: this one is « same as » it, not indexed twice."""
        original = self.by_digest.get(digest)
        if original is None or original == rel:
            return False
        if rel in self.known:
            self.report.removed.append(rel)  # indexed before, a copy now: its passages go
        store.record_duplicate(self.db, rel, stat, digest, original)
        self.report.same.append((rel, original))
        return True

    def unchanged_content(self, rel: str, stat, digest: str) -> bool:
        """A new date on the same content (a copy, a checkout): the hash says nothing changed."""
        stamp = (stat.st_size, stat.st_mtime_ns)
        if self.report.rebuilt:
            return False
        if rel in self.known and self.known[rel][2] == digest:
            self.db.execute("UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?", (*stamp, rel))
            self.report.touched.append(rel)
            self.report.unchanged += 1
            return True
        if rel in self.known_skipped and self.known_skipped[rel][2] == digest:
            self.db.execute("UPDATE skipped SET size = ?, mtime_ns = ? WHERE path = ?", (*stamp, rel))
            self.report.skipped.append(Skipped(rel, self.known_skipped[rel][3]))
            return True
        return False

    def skip(self, rel: str, stat, digest, why: str) -> None:
        if rel in self.known:
            store.remove(self.db, rel)  # it was readable before; now it is not: its old text must not be found
            self.report.removed.append(rel)
        store.record_skip(self.db, rel, stat, digest, why)
        self.report.skipped.append(Skipped(rel, why))

    def encode(self) -> None:
        """Encode what is pending, in batches, the bar's total known (kept in memory; the cache file is
        written once, at the end of the run) — and every stored passage that has no vector yet, when there
        are fewer vectors than passages (a run with ``vectors=False`` before this one)."""
        stored = self.db.execute("SELECT count(*) FROM passages").fetchone()[0]
        if len(self.cache.vectors) + len(self.pending) < stored:  # some passage has no vector: indexed without
            self.pending = [passage_text({"title": t, "body": b})  # vectors, or its cache was lost: all are looked at
                            for t, b in self.db.execute("SELECT title, body FROM passages")]
        missing = list(dict.fromkeys(t for t in self.pending if self.cache.key(t) not in self.cache.vectors))
        self.pending = []
        if not missing:
            return
        from .encoding import encode

        self.bars["encoding"].reset(total=len(missing))  # before the workers start: their start-up is time spent
        encode(self.cache, missing, batch=self.batch, bar=self.bars["encoding"])  # on every core (rungs.yours.encoding)

    def copies_left_alone(self) -> None:
        """A copy whose original went away or changed this run is read now, in its place."""
        indexed = dict(self.db.execute("SELECT path, sha256 FROM files"))
        for rel, original, digest in self.db.execute("SELECT path, same_as, sha256 FROM duplicates").fetchall():
            if indexed.get(original) != digest and rel in self.entries:
                self.by_digest = {h: p for p, h in sorted(indexed.items(), reverse=True)}
                self.report.same = [(r, o) for r, o in self.report.same if r != rel]
                self.db.execute("DELETE FROM duplicates WHERE path = ?", (rel,))
                self.apply("read", self.entries[rel])
                indexed = dict(self.db.execute("SELECT path, sha256 FROM files"))

    def forget_gone(self, unreadable: list[str]) -> None:
        """Files no longer in the folder are removed, except those in a folder that merely could not be read."""
        hidden = tuple(rel.rstrip("/") + "/" for rel in unreadable)
        for rel in sorted(set(self.known) - self.seen):
            if not rel.startswith(hidden):
                store.remove(self.db, rel)
                self.report.removed.append(rel)
        for rel in sorted(set(self.known_skipped) - self.seen):  # a skipped file that is gone is no longer news
            self.db.execute("DELETE FROM skipped WHERE path = ?", (rel,))
        for rel in sorted(set(self.known_same) - self.seen):
            self.db.execute("DELETE FROM duplicates WHERE path = ?", (rel,))


def run(index, *, size: int, overlap: int, rebuilt: str, cache, max_bytes: int, batch: int, bars) -> IndexReport:
    """Scan the folder and apply what changed, in one transaction; returns the report (its counts not yet final).

    A SQLite error on the index itself (another run holds it, it cannot be written, it is damaged) stops
    the run with its sentence (``rungs.yours.store``); the previous index stays as it was.
    """
    seconds = file_seconds()  # a budget that is no budget is refused before the run begins
    walk = Walk(index.folder)
    found = list(walk)  # walked first: the bars know their total, and can show the time left
    bars["reading"].reset(total=len(found))
    with store.said(index.path):
        index.db.execute("BEGIN IMMEDIATE")  # one run, one transaction: interrupted, the previous index stays whole
    try:
        with store.said(index.path):
            update = Update(index, size=size, overlap=overlap, cache=cache, max_bytes=max_bytes, batch=batch,
                            bars=bars, seconds=seconds)
            update.report.rebuilt = rebuilt
            for action, entry in update.scan(found):
                update.apply(action, entry)
                bars["reading"].update(1)
            update.forget_gone(walk.unreadable)
            update.copies_left_alone()
            if cache is not None:
                update.encode()
            store.write_meta(index.db, size=size, overlap=overlap, folder=Path(index.folder).resolve())
            if update.report.read or update.report.removed or rebuilt:
                store.mark_changed(index.db)  # in the transaction: what is stored from the passages knows their state
            index.db.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):  # a damaged file may refuse even this: the run's error is the news
            index.db.execute("ROLLBACK")  # Ctrl-C included: what was committed before this run is what stays
        raise
    finally:
        if cache is not None:
            cache.save()  # once per run, interrupted or not: the vectors computed are never computed twice
    return update.report

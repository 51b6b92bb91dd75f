"""Your folder's index on disk: one SQLite file, kept up to date incrementally, searched by every rung.

What it is for: the handbook is a teaching set; your folder is the point.
``index_folder`` reads a folder (``rungs.yours.readers``), cuts every file into
passages (``rungs.passages``) and keeps one SQLite database — FTS5 for the
keyword leg, the passages, what was read when — with the vector cache beside
it. ``FolderIndex.retriever(rung)`` then gives any rung of the ladder over it,
through the one contract (``search(query, *, limit) -> list[Hit]``).

Incrementally: a file whose size and modification time are unchanged costs
one ``stat``; if they changed, its content hash decides; only a file whose
content changed is read again, and only its passages whose text changed are
encoded again (the vector cache is keyed by the text). A removed file is
removed. The whole update is **one transaction**: an indexing run that is
interrupted — Ctrl-C, an error, the machine killed — leaves the previous index
exactly as it was, and the vectors it had already encoded are kept in the
cache, so the next run does not pay for them again.

Four decisions are yours:

- ``size`` and ``overlap`` of the passages (recorded in the index; changing
  them means reading every file again, and ``index_folder`` says so);
- the rung: ``fts`` (SQLite's bm25(), on disk), ``bm25`` (N1, every word's
  part shown), ``vectors``, ``hybrid`` (both, fused by RRF);
- the level: documents (passages rolled up, ``rollup="max"`` or ``"sum"``) or
  the passages themselves — a search-time knob;
- ``max_bytes``, the largest file read (default 20 MB).

Cost: encoding dominates (USE, one thread: about 46 passages of 1,500 characters
a second on ``benchmarks/folder``, ``results/folder.json``, as ``index --help`` says;
``rungs.yours.encoding`` runs one encoder per physical core;
PDFium reads a few hundred pages a second); an unchanged folder of a thousand files
is re-checked in well under a second. A search loads what the run stored — BM25's
counts, the vectors — and imports neither the readers nor anything the query does not use.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import display
from ..core.documents import passage_text
from ..core.errors import check_bool, check_choice, check_int
from ..core.retrieval import OnFirstSearch, Retriever
from ..fts import FtsIndex
from ..passages import DEFAULT_OVERLAP, DEFAULT_SIZE, PassageRetriever, split
from . import keywords, store
from .store import INDEX_DIR, INDEX_FILE, IndexMismatch, IndexNotFound

if TYPE_CHECKING:  # the readers, the walk and the update are imported where a run needs them: a search never does
    from .report import IndexReport
    from .walk import Skipped


def default_index_path(folder) -> Path:
    """Where a folder's index lives unless you say otherwise: ``FOLDER/.rungs/index.sqlite``."""
    return Path(folder) / INDEX_DIR / INDEX_FILE


def index_folder(folder, *, index=None, size: int | None = None, overlap: int | None = None,
                 encoder=None, vectors: bool = True, max_bytes: int | None = None, progress: bool = False,
                 batch: int = 256, remember: bool = False) -> "FolderIndex":
    """Index ``folder`` (or bring its index up to date) and return the index; ``.report`` says what was done.

    ``index``: the database file (default ``FOLDER/.rungs/index.sqlite``); an existing file that is not
    a rungs index is refused and left as it was. ``size``/``overlap``: the passages' (default: what the
    index already has, else 1,500 and 200). ``encoder``: the vector leg's encoder (default USE
    multilingual); ``vectors=False`` skips encoding (the keyword rungs work at once; the vector leg
    encodes on first use). ``progress``: bars with totals and time left (in a terminal).
    ``remember``: note this index as the last one (``open_index()`` with no path finds it; the CLI does).
    """
    from . import update
    from .readers import MAX_BYTES
    from .walk import check_folder

    folder = check_folder(folder)
    max_bytes = check_int(MAX_BYTES if max_bytes is None else max_bytes, "max_bytes", low=1)
    batch = check_int(batch, "batch", low=1)
    check_bool(vectors, "vectors")
    update.file_seconds()  # a setting that cannot be used is refused before anything is written
    path = Path(index) if index is not None else default_index_path(folder)
    store.check_target(path)  # before any folder is made or any byte written: a file of yours is never touched
    store.make_room(path)  # a folder you may not write is said so, with where else the index can go
    found = FolderIndex(path, create=True, folder=folder)
    found.update(size=size, overlap=overlap, encoder=encoder, vectors=vectors, max_bytes=max_bytes,
                 progress=progress, batch=batch)
    if remember:
        store.remember(path)
    return found


def open_index(where=None) -> "FolderIndex":
    """An index that exists: a database file, a folder holding ``.rungs/index.sqlite``, or (``None``)
    the one in the current folder, else the last one indexed on this machine."""
    if where is None:
        here = default_index_path(Path.cwd())
        if here.exists():
            return FolderIndex(here)
        last = store.remembered()
        if last is not None:
            return FolderIndex(last)
        raise IndexNotFound("no index here and none indexed before: run  python -m rungs index FOLDER  first "
                            "(or pass --index PATH)")
    path = Path(where)
    if path.is_dir():
        candidate = default_index_path(path)
        if not candidate.exists() and path.name == INDEX_DIR:
            candidate = path / INDEX_FILE
        path = candidate
    if not path.exists():
        raise IndexNotFound(f"no index at {where}: run  python -m rungs index FOLDER  first")
    return FolderIndex(path)


class FolderIndex:
    """One folder's index on disk: the SQLite database (files, passages, FTS5) and its vector cache.

    ``update(...)`` brings it up to date with the folder; ``retriever(rung, ...)`` gives a retriever of any
    rung over it, built once and kept (search-time knobs stay search-time); ``passages()``,
    ``documents()`` and ``skipped()`` read what it holds.
    """

    def __init__(self, path, *, create: bool = False, folder=None):
        self.path = Path(path)
        self.db = store.connect(self.path, create=create)
        meta = store.read_meta(self.db, self.path)
        self.reset = ""  # why this run reads every file again, when the index was of an older layout
        if meta.get("schema") not in (None, str(store.SCHEMA)):
            if not create:
                raise IndexMismatch(f"{self.path} was written by another version of rungs (layout {meta['schema']}): "
                                    "index the folder again (python -m rungs index FOLDER) to rebuild it")
            self.reset = f"the index was written by another version of rungs (layout {meta['schema']})"
            meta = {"folder": meta["folder"]} if meta.get("folder") else {}
        if not create and "folder" not in meta:
            raise IndexMismatch(f"{self.path} holds no finished index: run  python -m rungs index FOLDER  again")
        self.folder = self._folder(meta, folder)
        self.size = int(meta.get("size", DEFAULT_SIZE))
        self.overlap = int(meta.get("overlap", DEFAULT_OVERLAP))
        self.report: IndexReport | None = None
        self._built: dict = {}  # what a retriever needs, built once: passages, a BM25 index, vectors

    def _folder(self, meta: dict, folder) -> Path:
        stored = meta.get("folder")
        if folder is not None:
            folder = Path(folder)
            if stored and Path(stored).resolve() != folder.resolve() and Path(stored).exists():
                raise IndexMismatch(f"{self.path} is the index of another folder ({stored}); "
                                    "give --index another file for this one")
            return folder
        if stored and Path(stored).exists():
            return Path(stored)
        if self.path.parent.name == INDEX_DIR:  # the folder was moved with its index inside it
            return self.path.parent.parent
        return Path(stored or ".")

    def __repr__(self) -> str:
        from .walk import shown

        return f"FolderIndex({shown(self.folder.name)!r}: {self.count()} documents, passages of {self.size} characters)"

    # ------------------------------------------------------------ reading what the index holds

    def count(self) -> int:
        with store.said(self.path):
            return self.db.execute("SELECT count(*) FROM files").fetchone()[0]

    @property
    def vector_folder(self) -> Path:
        """The vector cache beside the database: ``index.vectors/`` next to ``index.sqlite``."""
        return self.path.with_suffix(".vectors")

    def owns(self, path: Path) -> bool:
        """Is ``path`` one of the index's own files (when ``--index`` put them inside the folder)?

        Its database, SQLite's files (``-journal``, ``-wal``, ``-shm``), BM25's counts, the full report and
        the vector cache: exactly those names — an index called ``index`` must not hide ``index.html``.
        """
        path, db = path.resolve(), self.path.resolve()
        own = {db.name + s for s in ("", "-journal", "-wal", "-shm", ".report.txt")} | {keywords.matrix_file(db).name}
        return (path.parent == db.parent and path.name in own) or path.is_relative_to(self.vector_folder.resolve())

    def cache(self, encoder):
        """This index's vector cache for ``encoder`` (one file per encoder, keyed by each passage's text)."""
        from ..vectors import Encoder, VectorCache

        key = ("cache", encoder.fingerprint if isinstance(encoder, Encoder) else None)
        if key not in self._built:  # VectorCache refuses, by name, an encoder that is not one
            self._built[key] = VectorCache(encoder, folder=self.vector_folder)
        return self._built[key]

    def documents(self) -> list[dict]:
        """Every indexed document: ``id``, ``path``, ``title``, ``body``, ``format``, ``headings``, ``sections``,
        ``notes``, ``dropped`` and ``page_starts`` (PDF)."""
        out = []
        with store.said(self.path):
            rows = self.db.execute("SELECT path, format, title, body, page_starts, headings, sections, notes "
                                   "FROM files ORDER BY path").fetchall()
        for path, fmt, title, body, starts, headings, sections, notes in rows:
            noted = json.loads(notes or "{}")
            doc = {"id": path, "path": path, "format": fmt, "title": title, "body": body,
                   "headings": json.loads(headings or "[]"), "sections": json.loads(sections or "[]"),
                   "notes": noted.get("notes", []), "dropped": noted.get("dropped", {})}
            if starts:
                doc["page_starts"] = json.loads(starts)
            out.append(doc)
        return out

    def passages(self) -> list[dict]:
        """Every passage, in document order: ``id`` (``path#n``), ``doc``, ``path``, ``position``, ``start``,
        ``page`` (PDF), ``section`` (a document with headings), ``places`` (where either changes inside it),
        ``title``, ``body``."""
        out = []
        with store.said(self.path):
            rows = self.db.execute("SELECT id, doc, position, start, page, title, body, section, places "
                                   "FROM passages ORDER BY doc, position").fetchall()
        for pid, doc, position, start, page, title, body, section, places in rows:
            p = {"id": pid, "doc": doc, "path": doc, "position": position, "start": start, "title": title,
                 "body": body}
            for key, value in (("page", page), ("section", section), ("places", json.loads(places) if places else None)):
                if value is not None:
                    p[key] = value
            out.append(p)
        return out

    def skipped(self) -> list[Skipped]:
        """The files that were not indexed at the last run, and why."""
        from .walk import Skipped

        with store.said(self.path):
            return [Skipped(p, r) for p, r in self.db.execute("SELECT path, reason FROM skipped ORDER BY path")]

    def duplicates(self) -> dict[str, str]:
        """The files indexed once because another file holds the same bytes: file → the one indexed."""
        with store.said(self.path):
            return dict(self.db.execute("SELECT path, same_as FROM duplicates ORDER BY path"))

    # ------------------------------------------------------------ bringing it up to date

    def update(self, *, size: int | None = None, overlap: int | None = None, encoder=None, vectors: bool = True,
               max_bytes: int | None = None, progress: bool = False, batch: int = 256) -> IndexReport:
        """Compare the folder with the index and apply the difference, in one transaction (``rungs.yours.update``)."""
        import time

        from . import update
        from .readers import MAX_BYTES

        max_bytes = MAX_BYTES if max_bytes is None else max_bytes
        size = self.size if size is None else check_int(size, "size", low=50, high=1_000_000)
        overlap = min(self.overlap, size // 2) if overlap is None else overlap
        overlap = check_int(overlap, "overlap", low=0, high=size // 2)
        if vectors and encoder is None:
            encoder = _default_encoder()
        cache = self.cache(encoder) if vectors else None  # an encoder that is not one: refused before any write
        started = time.perf_counter()
        meta = store.read_meta(self.db, self.path)
        rebuilt = self.reset
        if self.reset:
            store.reset(self.db)
            meta, self.reset = {}, ""
        if "size" in meta and (int(meta["size"]), int(meta["overlap"])) != (size, overlap):
            rebuilt = (f"the passages were {meta['size']} characters with {meta['overlap']} of overlap, "
                       f"now {size} with {overlap}")
        encoded_before = cache.encoded if cache else 0
        # A terminal's bars go when the run ends: the report that follows says what was done.
        bars = {"reading": display.progress(desc="reading", unit="file", enabled=progress, leave=False),
                "encoding": display.progress(desc="encoding", unit="passage", leave=False,
                                             enabled=progress and cache is not None)}
        try:
            report = update.run(self, size=size, overlap=overlap, rebuilt=rebuilt, cache=cache,
                                max_bytes=max_bytes, batch=batch, bars=bars)
        finally:
            for bar in bars.values():
                bar.close()
        self.size, self.overlap = size, overlap
        self._built = {k: v for k, v in self._built.items() if k[0] == "cache"}  # legs see the new passages
        if report.read or report.removed or report.same or rebuilt or not keywords.matrix_file(self.path).exists():
            keywords.write(self.db, self.path)  # what BM25 loads at search time, for this state of the index
        self._finish(report, cache, encoded_before, started)
        self._write_report(report)
        return report

    def _write_report(self, report: IndexReport) -> None:
        """Every file of the run, one a line, beside the index (the summary names only the first few)."""
        target = self.path.with_name(self.path.name + ".report.txt")
        try:
            target.write_text(report.full() + "\n", encoding="utf-8")
            report.written = target.name
        except OSError:
            report.written = ""  # the summary is what a learner reads; the full list is a convenience

    def _finish(self, report: IndexReport, cache, encoded_before: int, started: float) -> None:
        import time

        report.documents = self.count()
        with store.said(self.path):
            report.passages = self.db.execute("SELECT count(*) FROM passages").fetchone()[0]
        if cache is not None:
            self._prune(cache)
            report.encoded = cache.encoded - encoded_before
        for found in (report.added, report.changed, report.removed, report.touched):
            found.sort()
        report.skipped.sort(key=lambda s: s.path)
        report.seconds = time.perf_counter() - started
        self.report = report

    def _prune(self, cache) -> None:
        """Forget the vectors of passages the index no longer holds (a removed file, an edited paragraph)."""
        cache.keep_only(passage_text(p) for p in self.passages())

    # ------------------------------------------------------------ retrievers over it

    def retriever(self, rung: str = "hybrid", *, encoder=None, size: int | None = None, overlap: int | None = None,
                  stopwords=True, stem=None, keyword_knobs: dict | None = None, progress: bool = False,
                  **knobs) -> PassageRetriever:
        """A retriever of ``rung`` (``fts``, ``bm25``, ``vectors``, ``hybrid``) over this index's passages,
        rolled up to documents unless ``level="passage"``. The heavy parts (a BM25 index, the passages'
        vectors) are built once per index and kept; asking again costs nothing.

        ``size``/``overlap`` other than the index's: the stored documents are cut again in memory (to
        compare passage sizes without touching the index on disk). ``stopwords``/``stem``: the BM25
        tokenizer (build-time). ``keyword_knobs``: the hybrid's keyword leg's knobs (``k1``, ``b``,
        ``match``…; default: match any word). ``progress``: say so, with a bar, when the vector leg must
        first encode passages the index holds no vector for (on its first search: a refused knob waits for
        nothing). ``knobs``: default search-time knobs, e.g. ``k=30``, ``rollup="sum"``, ``level="passage"`` —
        each can also be given to ``search``.
        """
        from ..hybrid import YOUR_DOCUMENTS, from_legs

        rung = check_choice(rung, "rung", ("fts", "bm25", "vectors", "hybrid"))
        size = self.size if size is None else check_int(size, "size", low=50, high=1_000_000)
        if overlap is None:
            overlap = self.overlap if size == self.size else min(self.overlap, size // 2)
        overlap = check_int(overlap, "overlap", low=0, high=size // 2)
        passages = self._passages_at(size, overlap)
        if rung == "fts":
            inner = self._fts(size, overlap)
        elif rung == "bm25":
            inner = self._bm25(size, overlap, stopwords, stem)
        else:
            vector = self._vectors(size, overlap, encoder or _default_encoder(), progress)
            if rung == "vectors":
                inner = vector
            else:  # the one hybrid recipe, with the setting for a collection nobody has tuned
                inner = from_legs(self._bm25(size, overlap, stopwords, stem), vector, YOUR_DOCUMENTS,
                                  keyword_knobs=keyword_knobs)
        if rung == "fts" and (size, overlap) == (self.size, self.overlap):
            retriever = _OnDisk(inner, self, passages)
        else:
            retriever = PassageRetriever(inner, passages, titles=self._titles())
        return retriever.with_knobs(**knobs) if knobs else retriever

    def _stamp(self) -> str | None:
        """When the index was last updated, by any run: what tells a retriever that its passages changed."""
        with store.said(self.path):
            row = self.db.execute("SELECT value FROM meta WHERE key = 'updated'").fetchone()
        return row[0] if row else None

    def _once(self, key, build):
        if key not in self._built:
            self._built[key] = build()
        return self._built[key]

    def _titles(self) -> dict:
        return self._once(("titles",), lambda: dict(self.db.execute("SELECT path, title FROM files")))

    def _passages_at(self, size, overlap) -> list[dict]:
        if (size, overlap) == (self.size, self.overlap):
            return self._once(("passages", size, overlap), self.passages)
        return self._once(("passages", size, overlap),
                          lambda: split(self.documents(), size=size, overlap=overlap))

    def _fts(self, size, overlap) -> Retriever:
        if (size, overlap) == (self.size, self.overlap):
            return FtsIndex.open(self.db, "passages_fts", snippets=False)  # made for the hits shown (passages)
        # Another passage size: an FTS5 table in memory, built from the stored documents cut again.
        return self._once(("fts", size, overlap), lambda: FtsIndex(self._passages_at(size, overlap)))

    def _bm25(self, size, overlap, stopwords, stem) -> Retriever:
        from ..bm25 import build_index

        key = ("bm25", size, overlap, repr(stopwords), repr(stem))
        if (size, overlap) == (self.size, self.overlap) and stem is None:
            # Counted by `index`, loaded here: no passage is cut into words again (rungs.yours.keywords).
            return self._once(key, lambda: keywords.load(self.db, self.path, self._titles(), stopwords=stopwords))
        return self._once(key, lambda: build_index(self._passages_at(size, overlap), stopwords=stopwords, stem=stem))

    def _vectors(self, size, overlap, encoder, progress: bool = False) -> Retriever:
        from ..vectors import VectorIndex

        cache = self.cache(encoder)  # before encoder.fingerprint is read below: 5 is refused by name
        def build():
            passages = self._passages_at(size, overlap)
            self._encode_missing(passages, encoder, progress)
            return VectorIndex(passages, encoder, cache=cache)

        # Made on its first search: a refused knob or a blank query never waits for the encoder or an encoding.
        return self._once(("vectors", size, overlap, encoder.fingerprint),
                          lambda: OnFirstSearch(f"vectors ({encoder.name})", build))

    def _encode_missing(self, passages: list[dict], encoder, progress: bool) -> None:
        """Passages the cache has no vector for yet (indexed with ``vectors=False``): encoded now, in batches, once
        — said before the wait, with a bar that knows its total (``progress``), and kept in the cache."""
        import sys

        cache = self.cache(encoder)
        missing = list(dict.fromkeys(t for t in map(passage_text, passages) if cache.key(t) not in cache.vectors))
        if not missing:
            return
        if progress:
            print(f"encoding {len(missing):,} passages for the vector leg first (the index was made without "
                  "vectors): once, then kept", file=sys.stderr, flush=True)
        bar = display.progress(desc="encoding", unit="passage", total=len(missing), enabled=progress, leave=True)
        try:
            from .encoding import encode

            encode(cache, missing, batch=256, bar=bar)  # on every core when it pays (rungs.yours.encoding)
        finally:
            bar.close()
            cache.save()  # interrupted or not, what was encoded is kept

    def close(self) -> None:
        self.db.close()


class _OnDisk(PassageRetriever):
    """The FTS5 table on disk, rolled up to documents: FTS5 reads the table an update rewrites, so the
    passages' text and titles are read again whenever the index was updated since (by this kernel or
    another) — a hit never carries the text its passage had before the update."""

    def __init__(self, inner, index: "FolderIndex", passages: list[dict]):
        self._index, self._seen = index, index._stamp()
        super().__init__(inner, passages, titles=index._titles())

    def _search(self, query, limit, knobs):
        stamp = self._index._stamp()
        if stamp != self._seen:
            with store.said(self._index.path):
                titles = dict(self._index.db.execute("SELECT path, title FROM files"))
            self._know(self._index.passages(), titles)
            self._seen = stamp
        return super()._search(query, limit, knobs)


def _default_encoder():
    from ..vectors import default_encoder
    return default_encoder()

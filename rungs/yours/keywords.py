"""BM25 over your folder, loaded rather than rebuilt: every passage's words, counted once, as sparse matrices.

What it is for: a ``search`` command is one query in a fresh process. Building
N1's index there means cutting every passage into words again, every time,
at a cost that grows with the folder (seconds for a few thousand passages). Instead, ``index`` counts each
passage's words once, when it stores the passage (``store.words_of``), and at
the end of the run writes them as one word × page count matrix per field
(``index.sqlite.bm25.npz``, beside the database); a search loads that file
into N1's fast path for one query (``rungs.fastbm25.ColumnBM25``: FastBM25's
scores, every word's part kept, computed for the query's words only, with numpy
alone — scipy's import would cost a one-query process more than its search).
French stop words are dropped when the counts are loaded, exactly as
``tokenise`` drops them.

The file names the state of the index it was made from (the time of the last
run that changed a passage, written in ``meta`` in that run's transaction): a
file of another state — an interrupted write, a copy — is never used; the
matrices are made again from the stored counts (no passage is cut again) and
written for the next search.

Cost: one pass over the passages' stored counts at the end of a run that
changed something, stored by word so that a search reads one file and sorts nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from ..core.text import stopset

FIELDS = ("title", "body")


def matrix_file(index_path: Path) -> Path:
    return index_path.with_name(index_path.name + ".bm25.npz")


def _stamp(db) -> str:
    row = db.execute("SELECT value FROM meta WHERE key = 'passages_changed'").fetchone()
    return row[0] if row else ""


def build(db) -> dict:
    """The count matrices' parts from the stored counts, in passage order: ids, vocabulary, per field CSR parts."""
    ids, vocabulary = [], {}
    parts = {f: ([], [], [0]) for f in FIELDS}  # data, columns, row starts (CSR)
    for pid, words in db.execute("SELECT id, words FROM passages ORDER BY doc, position"):
        ids.append(pid)
        counted = json.loads(words or "{}")
        for f in FIELDS:
            data, cols, starts = parts[f]
            for word, n in (counted.get(f) or {}).items():
                cols.append(vocabulary.setdefault(word, len(vocabulary)))
                data.append(n)
            starts.append(len(cols))
    return {"ids": ids, "vocabulary": list(vocabulary), "parts": parts}


def _texts(texts: list[str]):
    import numpy as np

    # One NUL-joined UTF-8 buffer: an array of fixed-width strings would be as wide as the longest word, per word.
    return np.frombuffer("\0".join(texts).encode("utf-8"), dtype=np.uint8)


def _untexts(buffer) -> list[str]:
    return buffer.tobytes().decode("utf-8").split("\0") if buffer.size else []


def _arrays_of(made: dict, stamp: str) -> dict:
    """What the file holds: the stamp, the ids, the words, and per field the counts by word (``by_column``), so
    that a search reads them as they are, with nothing to sort."""
    import numpy as np

    from ..fastbm25 import by_column

    arrays = {"stamp": _texts([stamp]), "ids": _texts(made["ids"]), "vocabulary": _texts(made["vocabulary"])}
    for f, (data, cols, starts) in made["parts"].items():
        starts_by_word, pages, counts = by_column(np.array(data, dtype=np.float64), np.array(cols, dtype=np.int32),
                                                  np.array(starts, dtype=np.int64), len(made["vocabulary"]))
        arrays.update({f"{f}_word_starts": starts_by_word, f"{f}_pages": pages.astype(np.int32), f"{f}_counts": counts})
    return arrays


def _columns(arrays: dict, f: str, n_words: int) -> tuple:
    if f"{f}_pages" in arrays:
        return arrays[f"{f}_word_starts"], arrays[f"{f}_pages"], arrays[f"{f}_counts"]
    from ..fastbm25 import by_column  # a file an older rungs wrote: its counts by page, turned by word here

    return by_column(arrays[f"{f}_data"], arrays[f"{f}_cols"], arrays[f"{f}_starts"], n_words)


def write(db, index_path: Path) -> None:
    """The matrices of the index as it is now, written whole and renamed into place (never half a file)."""
    import numpy as np  # imported here, as scipy is: a search with FTS5 does not pay for them

    arrays = _arrays_of(build(db), _stamp(db))
    target = matrix_file(index_path)
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial.npz")
    try:
        np.savez(partial, **arrays)
        os.replace(partial, target)
    except OSError:  # a folder that cannot be written: searches build the matrices in memory instead
        with contextlib.suppress(OSError):
            partial.unlink()


def _arrays(db, index_path: Path) -> dict | None:
    """The stored matrices if they are of this state of the index, else None."""
    import numpy as np

    target = matrix_file(index_path)
    try:
        with np.load(target, allow_pickle=False) as stored:
            if _untexts(stored["stamp"]) != [_stamp(db)]:
                return None
            return {k: stored[k] for k in stored.files}
    except Exception:  # noqa: BLE001 - missing, truncated, foreign: made again from the stored counts
        return None


def load(db, index_path: Path, titles: dict, *, stopwords=True):
    """N1 over the index's passages, from the stored counts (made again if they are stale): ``ColumnBM25``, the
    fast path's scores computed for a query's columns only — numpy alone, no scipy, nothing cut into words."""
    from ..fastbm25 import ColumnBM25

    arrays = _arrays(db, index_path)
    if arrays is None:
        write(db, index_path)
        arrays = _arrays(db, index_path)
    if arrays is None:  # could not be written: from the stored counts, in memory
        arrays = _arrays_of(build(db), _stamp(db))
    ids, words = _untexts(arrays["ids"]), _untexts(arrays["vocabulary"])
    columns = {f: _columns(arrays, f, len(words)) for f in FIELDS}
    doc_of = {pid: pid.rsplit("#", 1)[0] for pid in ids}
    return ColumnBM25(ids, FIELDS, columns, words, {pid: titles.get(doc_of[pid], "") for pid in ids},
                      {"stopwords": stopwords, "stem": None}, drop=stopset(stopwords))

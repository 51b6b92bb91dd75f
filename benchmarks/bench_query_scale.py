"""Queries in one process, up to 100,000 passages: how long each rung takes once its retriever is loaded.

Run:  .venv/bin/python benchmarks/bench_query_scale.py [--sizes 2448,10000,25000,100000]

The passages are real: the benchmark folder (``benchmarks/folder/documents/``) indexed once
with the default encoder, then copied inside the index's SQLite file as many times as a size
needs (documents ``copy-K/...``, the same text: the vector cache, keyed by text, holds every
copy's vector, so nothing is encoded again), and BM25's matrices written for them as ``index``
writes them (``rungs.yours.keywords``). Every posting list is then that many times longer, as
in a folder that size; the vocabulary is not (a real folder's grows), so BM25 is measured on
long posting lists, not on a large vocabulary.

Per size and rung (``FolderIndex.retriever``, defaults): the time to load the retriever, the
first query (BM25 computes its contribution matrix for the default knobs then), and the median
and 95th percentile of the folder's 34 answerable questions after it, documents rolled up (the
``search`` command's default). Results: ``benchmarks/results/query_scale.json``.
"""

from __future__ import annotations

import os

# One BLAS thread, as `python -m rungs search` runs (rungs.tools.cli.ONE_THREAD): set before numpy is imported.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from rungs.yours import keywords, store  # noqa: E402
from rungs.yours.index import FolderIndex, index_folder  # noqa: E402

RUNGS = ("fts", "bm25", "vectors", "hybrid")


def grow(path: Path, first: int, last: int) -> None:
    """Copies ``first``…``last`` of every document and passage, inside the index (FTS5 table included)."""
    db = FolderIndex(path).db
    db.execute("BEGIN")
    for k in range(first, last + 1):
        prefix = f"copy-{k}/"
        db.execute("INSERT INTO files(path, size, mtime_ns, sha256, format, title, body, page_starts, headings, "
                   "passages, sections, notes) SELECT ? || path, size, mtime_ns, sha256 || ?, format, title, body, "
                   "page_starts, headings, passages, sections, notes FROM files WHERE path NOT LIKE 'copy-%'",
                   (prefix, f"-{k}"))
        db.execute("INSERT INTO passages(id, doc, position, start, page, title, body, section, places, words) "
                   "SELECT ? || id, ? || doc, position, start, page, title, body, section, places, words "
                   "FROM passages WHERE doc NOT LIKE 'copy-%'", (prefix, prefix))
        # The FTS5 rows of the copies: the originals' (already through fts_text), under the copies' rowids.
        db.execute("INSERT INTO passages_fts(rowid, id, title, body) SELECT p.n, p.id, f.title, f.body "
                   "FROM passages p JOIN passages o ON o.id = substr(p.id, ?) JOIN passages_fts f ON f.rowid = o.n "
                   "WHERE p.doc LIKE ?", (len(prefix) + 1, prefix + "%"))
    store.mark_changed(db)
    db.execute("COMMIT")
    keywords.write(db, path)
    db.close()


def measure(path: Path, questions: list[str]) -> dict:
    out = {}
    index = FolderIndex(path)
    out["passages"] = index.db.execute("SELECT count(*) FROM passages").fetchone()[0]
    for rung in RUNGS:
        started = time.perf_counter()
        retriever = index.retriever(rung)
        load = time.perf_counter() - started
        started = time.perf_counter()
        retriever.search(questions[0], limit=5)
        first = time.perf_counter() - started
        times = []
        for q in questions[1:] + questions[:1]:
            started = time.perf_counter()
            retriever.search(q, limit=5)
            times.append(time.perf_counter() - started)
        times.sort()
        out[rung] = {"load_s": round(load, 2), "first_ms": round(1000 * first, 1),
                     "median_ms": round(1000 * statistics.median(times), 1),
                     "p95_ms": round(1000 * times[int(0.95 * (len(times) - 1))], 1)}
        print(f"{out['passages']:>7} {rung:<8} {out[rung]}", flush=True)
    index.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="2448,10000,25000,100000", help="passages (approximately: whole copies)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "query_scale.json")
    args = parser.parse_args()
    questions = [json.loads(line)["question"] for line in
                 (HERE / "folder" / "questions.jsonl").read_text(encoding="utf-8").splitlines()
                 if line.strip() and json.loads(line)["judgments"]]
    work = Path(tempfile.mkdtemp(prefix="rungs-scale-"))
    os.environ["XDG_CACHE_HOME"] = str(work / "xdg")
    try:
        shutil.copytree(HERE / "folder" / "documents", work / "documents")
        path = work / "index.sqlite"
        index_folder(work / "documents", index=path).close()
        base = FolderIndex(path).db.execute("SELECT count(*) FROM passages").fetchone()[0]
        results, copies = [], 0
        for size in (int(s) for s in args.sizes.split(",")):
            wanted = max(0, round(size / base) - 1)
            if wanted > copies:
                grow(path, copies + 1, wanted)  # copies of the originals only
                copies = wanted
            results.append(measure(path, questions))
        args.out.write_text(json.dumps({"date": time.strftime("%Y-%m-%d"), "questions": len(questions),
                                        "results": results}, indent=1) + "\n", encoding="utf-8")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

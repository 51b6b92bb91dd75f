"""How fast does a knob re-rank? The slider promise of N1, measured.

Run:  .venv/bin/python benchmarks/bench_rerank.py

For every handbook question, one re-rank of the whole handbook per knob value
(k1, b, title weight), with the index built once; compared in the same run with
FTS5 answering the same query (which cannot change k1 or b at all) and with
rebuilding N1's index per setting (what a slider would cost if weights were a
build-time choice).
"""

import statistics
import time

from rungs import bm25, fts
from rungs.lab.handbook import load_pages, load_questions


def timed(fn, repeat=5):
    best = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best.append(time.perf_counter() - start)
    return min(best)


def main():
    pages, questions = load_pages(), [q["question"] for q in load_questions()]
    index, db = bm25.build_index(pages), fts.FtsIndex(pages)
    knobs = [dict(k1=k1) for k1 in (0.0, 0.6, 1.2, 2.0)] + [dict(b=b) for b in (0.0, 0.5, 1.0)] + \
            [dict(weights={"title": t, "body": 1.0}) for t in (0.0, 1.0, 3.0, 10.0)]
    n = len(questions) * len(knobs)
    ours = timed(lambda: [index.search(q, limit=10, **kw) for q in questions for kw in knobs]) / n
    sqlite = timed(lambda: [db.search(q, limit=10, match="any") for q in questions for _ in knobs]) / n
    rebuild = timed(lambda: [bm25.build_index(pages) for _ in range(10)], repeat=3) / 10
    per_question = []
    for q in questions:
        start = time.perf_counter()
        index.search(q, limit=10)
        per_question.append(time.perf_counter() - start)
    print(f"N1 re-rank (index kept)        {ours * 1e3:7.3f} ms per query and setting")
    print(f"FTS5 query (match any)         {sqlite * 1e3:7.3f} ms   ratio N1/FTS5 {ours / sqlite:5.2f}")
    print(f"N1 rebuild of the index        {rebuild * 1e3:7.3f} ms   ratio rebuild/re-rank {rebuild / ours:5.0f}")
    print(f"N1 worst single question       {max(per_question) * 1e3:7.3f} ms   "
          f"(median {statistics.median(per_question) * 1e3:.3f} ms); budget for a slider: 20 ms")


if __name__ == "__main__":
    main()

"""Pool the top 10 of several different systems for every question: the pages a judge must read.

How test collections are made (TREC's pooling): no single system decides
which pages get judged. Every question is run through systems that fail in
different ways — FTS5 matching any word and all words, BM25 with two
settings, two encoders alone, the hybrid — and the union of their top
``DEPTH`` is judged by hand (0 / 1 / 2 against handbook/README.md's guide).
A page no system retrieved stays unjudged; a page judged 0 is kept: it is
information.

    .venv/bin/python benchmarks/pool_judgments.py > /tmp/pool.json

Writes one JSON object: question id → sorted list of pooled page ids, plus
the systems and the depth. Cost: about a minute (two encoders over 70 pages).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rungs import bm25, fts, hybrid, vectors# noqa: E402
from rungs.lab.handbook import load_pages, load_questions# noqa: E402

DEPTH = 10


def systems(pages):
    keyword = bm25.build_index(pages, stopwords=True)
    stemmed = bm25.build_index(pages, stopwords=True, stem=True)
    use = vectors.VectorIndex(pages, vectors.USEEncoder())
    e5 = vectors.VectorIndex(pages, vectors.E5Encoder())
    full_text = fts.FtsIndex(pages)
    return {
        "N0 FTS5, any word": full_text.with_knobs(match="any"),
        "N0 FTS5, all words": full_text.with_knobs(match="all"),
        "N1 BM25 k1=1.2 b=0.75, stop words": keyword,
        "N1 BM25 k1=0.5 b=0.3 title×3, stop words + stems": stemmed.with_knobs(k1=0.5, b=0.3, weights={"title": 3}),
        "vectors, USE multilingual": use,
        "vectors, multilingual-e5-small": e5,
        "hybrid RRF k=60 (BM25 + USE)": hybrid.Hybrid({"keyword": keyword, "vector": use}),
    }


def main():
    pages, questions = load_pages(), load_questions()
    runs = systems(pages)
    pool = {}
    for q in questions:
        found = set()
        for retriever in runs.values():
            found |= {h.id for h in retriever.search(q["question"], limit=DEPTH)}
        pool[q["id"]] = sorted(found | set(q["judged"]))  # what was judged before stays in the pool
    sizes = [len(v) for v in pool.values()]
    json.dump({"depth": DEPTH, "systems": list(runs), "pool": pool,
               "pooled_pairs": sum(sizes), "mean_per_question": sum(sizes) / len(sizes)},
              sys.stdout, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()

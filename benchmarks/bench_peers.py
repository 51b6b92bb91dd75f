"""N1's fast path against the BM25 a learner would otherwise pick, measured in one run.

Run:  .venv/bin/python benchmarks/bench_peers.py [--sizes 10000 100000 1000000]

Peers: bm25s (method "lucene", the same tokens), rank_bm25 (BM25Okapi), SQLite
FTS5 (terms OR-ed). Collections: CACM (real, 3,204 abstracts, 64 queries) and a
synthetic corpus — Zipf-distributed words (exponent 1.1, 100,000-word
vocabulary, lengths log-normal around 30 words) — at each size; no real text
of a million passages ships in the registries this machine reaches. Every
system gets the same tokens (pre-tokenised; FTS5 gets them joined by spaces).

Each (system, collection) runs in its own process, one thread, so that its
peak memory is its own. Reported: index time, query latency p50/p95, queries
per second (top 10), peak memory added by indexing and querying, and a
100-setting k1 × b sweep: ours computes one contribution matrix per setting;
bm25s precomputes scores at index time, so a new setting means a new index
(timed over a few settings and scaled to 100; said so in the table).
Scores are compared with bm25s' to 1e-6 relative (bm25s computes in float32).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def zipf_corpus(n_docs: int, n_queries: int = 100, seed: int = 0):
    import numpy as np

    rng = np.random.default_rng(seed)
    vocab = 100_000
    ranks = np.arange(1, vocab + 1)
    p = 1.0 / ranks ** 1.1
    p /= p.sum()
    lengths = np.clip(rng.lognormal(np.log(30), 0.5, n_docs).astype(int), 3, 300)
    words = rng.choice(vocab, size=int(lengths.sum()), p=p)
    docs, start = [], 0
    for n in lengths:
        docs.append([f"w{w}" for w in words[start:start + n]])
        start += n
    # Queries of 2–5 words from the middle of the distribution, as people's queries are.
    queries = [[f"w{w}" for w in rng.integers(30, 20_000, size=rng.integers(2, 6))] for _ in range(n_queries)]
    return docs, queries


def cacm_corpus():
    sys.path.insert(0, str(HERE.parent))
    from rungs.lab import cacm
    docs = [cacm.english(d["body"]) for d in cacm.load_documents()]
    queries = [cacm.english(q["question"]) for q in cacm.load_queries()]
    return docs, [q for q in queries if q]


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(system: str, collection: str, sweep: bool) -> dict:
    import numpy as np

    docs, queries = cacm_corpus() if collection == "cacm" else zipf_corpus(int(collection))
    base = peak_mb()
    out = {"system": system, "collection": collection, "docs": len(docs), "queries": len(queries)}
    start = time.perf_counter()
    if system == "rungs":
        from rungs import bm25
        from rungs.fastbm25 import FastBM25
        index = FastBM25.from_documents([{"id": f"d{i}", "body": d} for i, d in enumerate(docs)], fields=("body",))
        index.tokenizer = {}
        texts = [" ".join(q) for q in queries]
        knobs = {**bm25.LUCENE, "k1": 0.9, "b": 0.4}
        index.contributions(**{k: v for k, v in knobs.items() if k not in ("match", "repeats")})
        ask = lambda i: index.search(texts[i], limit=10, explain=False, **knobs)
    elif system in ("bm25s", "bm25s-numba"):
        import bm25s
        # The numba backend compiles bm25s' retrieval loops (numba comes with ranx here); numpy is its default.
        index = bm25s.BM25(method="lucene", k1=0.9, b=0.4, backend="numba" if system == "bm25s-numba" else "numpy")
        index.index(docs, show_progress=False)
        index.retrieve(queries[:2], k=10, show_progress=False, n_threads=1)  # compile before timing
        ask = lambda i: index.retrieve([queries[i]], k=10, show_progress=False, n_threads=1)
    elif system == "rank_bm25":
        from rank_bm25 import BM25Okapi
        index = BM25Okapi(docs, k1=0.9, b=0.4)
        ask = lambda i: np.argsort(-index.get_scores(queries[i]))[:10]
    elif system == "fts5":
        import sqlite3
        index = sqlite3.connect(":memory:")
        index.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
        index.executemany("INSERT INTO t(body) VALUES (?)", ((" ".join(d),) for d in docs))
        index.commit()
        exprs = [" OR ".join(f'"{w}"' for w in q) for q in queries]
        ask = lambda i: index.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 10",
                                      (exprs[i],)).fetchall()
    out["index_s"] = time.perf_counter() - start
    ask(0)  # warm
    latencies = []
    for i in range(len(queries)):
        t = time.perf_counter()
        ask(i)
        latencies.append(time.perf_counter() - t)
    latencies = np.array(latencies)
    out.update(p50_ms=float(np.percentile(latencies, 50) * 1e3), p95_ms=float(np.percentile(latencies, 95) * 1e3),
               qps=float(len(latencies) / latencies.sum()))
    out["peak_mb"] = peak_mb() - base
    if system.startswith("bm25s"):
        # bm25s is built for batches: all queries in one call is its best case, so we report it too.
        t = time.perf_counter()
        index.retrieve(queries, k=10, show_progress=False, n_threads=1)
        out["qps_batch"] = len(queries) / (time.perf_counter() - t)

    if system == "rungs":
        # Scores against bm25s on the same tokens (top 10 of every query).
        import bm25s
        ref = bm25s.BM25(method="lucene", k1=0.9, b=0.4)
        ref.index(docs, show_progress=False)
        worst = 0.0
        for i, q in enumerate(queries):
            # bm25s counts a repeated query word once (Lucene, and our LUCENE preset, count it each time).
            ours = index.search(texts[i], limit=10, explain=False, **{**knobs, "repeats": "once"})
            found, scores = ref.retrieve([list(dict.fromkeys(q))], k=10, show_progress=False, n_threads=1)
            theirs = {f"d{j}": float(s) for j, s in zip(found[0], scores[0])}
            for r in ours:
                if r["id"] in theirs:
                    worst = max(worst, abs(r["score"] - theirs[r["id"]]) / abs(r["score"]))
        out["max_rel_diff_vs_bm25s"] = worst
        del ref
    if sweep and system in ("rungs", "bm25s"):
        settings = [(k1, b) for k1 in np.linspace(0.3, 2.1, 10) for b in np.linspace(0.0, 0.9, 10)]
        if system == "rungs":
            timed = settings if len(docs) <= 200_000 else settings[:10]
            start = time.perf_counter()
            for k1, b in timed:
                index._cache.clear()
                for i in range(len(queries)):
                    index.search(texts[i], limit=10, explain=False, **{**knobs, "k1": float(k1), "b": float(b)})
        else:
            timed = settings[:3]
            start = time.perf_counter()
            for k1, b in timed:
                fresh = bm25s.BM25(method="lucene", k1=float(k1), b=float(b))
                fresh.index(docs, show_progress=False)
                for i in range(len(queries)):
                    fresh.retrieve([queries[i]], k=10, show_progress=False, n_threads=1)
        out["sweep_settings_timed"] = len(timed)
        out["sweep100_s"] = (time.perf_counter() - start) * 100 / len(timed)
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", nargs="*", type=int, default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--one", nargs=2, metavar=("SYSTEM", "COLLECTION"))
    parser.add_argument("--systems", nargs="*", default=["rungs", "bm25s", "bm25s-numba", "fts5", "rank_bm25"])
    parser.add_argument("--no-sweep", action="store_true", help="skip the sweeps (keep earlier sweep numbers)")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one[0], args.one[1], sweep=not args.no_sweep)))
        return
    RESULTS.mkdir(exist_ok=True)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "NUMBA_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}
    previous = json.loads((RESULTS / "peers.json").read_text()) if (RESULTS / "peers.json").exists() else []
    rows = [r for r in previous if r["system"] not in args.systems]
    for collection in ["cacm"] + [str(n) for n in args.sizes]:
        for system in args.systems:
            if system == "rank_bm25" and collection not in ("cacm", "10000", "100000"):
                continue  # pure Python: a million passages would take hours and many GB
            done = subprocess.run([sys.executable, __file__, "--one", system, collection]
                                  + (["--no-sweep"] if args.no_sweep else []), env=env, capture_output=True, text=True)
            if done.returncode != 0:
                print(f"{system} on {collection} failed: {done.stderr.strip().splitlines()[-1:]}")
                continue
            row = json.loads(done.stdout.strip().splitlines()[-1])
            earlier = next((r for r in previous if r["system"] == system and r["collection"] == collection), {})
            row = {**{k: v for k, v in earlier.items() if k.startswith("sweep")}, **row}
            rows.append(row)
            print(json.dumps(row))
    (RESULTS / "peers.json").write_text(json.dumps(rows, indent=1))
    plot(rows)


def plot(rows):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for system in ("rungs", "bm25s", "bm25s-numba", "fts5", "rank_bm25"):
        mine = sorted((r for r in rows if r["system"] == system and r["collection"] != "cacm"), key=lambda r: r["docs"])
        if not mine:
            continue
        axes[0].plot([r["docs"] for r in mine], [r["index_s"] for r in mine], marker="o", label=system)
        axes[1].plot([r["docs"] for r in mine], [r["p50_ms"] for r in mine], marker="o", label=system)
    for ax, title in zip(axes, ["index time (s)", "query latency p50 (ms), top 10"]):
        ax.set_xscale("log"); ax.set_yscale("log"); ax.set_xlabel("passages (Zipf corpus)"); ax.set_title(title)
        ax.grid(alpha=0.3, which="both"); ax.legend()
    fig.tight_layout()
    fig.savefig(HERE / "cost_vs_size.png", dpi=110)


if __name__ == "__main__":
    main()

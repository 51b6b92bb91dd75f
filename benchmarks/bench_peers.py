"""N1's fast paths against the BM25 a learner would otherwise pick, measured side by side in one run.

Run:  .venv/bin/python benchmarks/bench_peers.py [--sizes 10000 100000 1000000] [--rounds 7]

Systems, every one fed the same tokens, top 10, one thread:

- ``rungs``: the lazy fast path, ``rungs.fastbm25.FastBM25`` (knobs at search time; text in, hits out);
- ``rungs-compiled``: ``rungs.engine.compiled`` — one setting frozen into impacts, walked by numba loops
  (words in, page numbers and scores out, as bm25s takes and gives them); batched too;
- ``rungs-engine``: the same through the retriever, ``FastEngine.search`` (text in, hits out);
- ``bm25s`` and ``bm25s-numba``: bm25s ``method="lucene"``, one index, its numpy and numba backends;
- ``tantivy``: tantivy (Rust, Lucene's design), a whitespace tokenizer over the same words, one segment,
  its query objects built outside the timing, ``count=False`` (counting every match switches skipping off);
- ``fts5``: SQLite FTS5, the words double-quoted and OR-ed; ``rank_bm25``: BM25Okapi (not at 1M).

Collections: CACM (real, 3,204 abstracts, 64 queries; lower-case alphanumeric, Lucene's 33 stop words,
Porter) and a synthetic corpus — Zipf-distributed words (exponent 1.1, 100,000-word vocabulary, lengths
log-normal around 30 words, queries of 2–5 mid-frequency words) — at each size; no real text of a million
passages ships in the registries this machine reaches. Every query's words once (bm25s counts a repeated
word once; here every system gets each word once).

Each collection runs in its own process. In it every system is built (index time; memory: the resident
set added by building it, after the ones before — the rungs paths share rungs' counts), warmed on every
query, then timed in ``--rounds`` rounds: the systems' order rotates each round, each measurement lasts at
least ``--seconds`` (as many passes over the queries as that takes), every query timed on its own. Kept:
the median over rounds of queries per second, p50/p95 latency over every timed query, and the per-round
times (so that a ratio can be paired within a round). The machine's load average is recorded before and
after each collection. Then the checks — scores against the readable N1 (1e-9), bm25s (1e-6) and, where
the settings agree, tantivy — and a 100-setting k1 × b sweep: rungs computes one contribution matrix per
setting, rungs-compiled freezes once per setting, bm25s bakes k1 and b into its index (a rebuild per
setting; a few timed and scaled to 100, said so in the table).
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import peer_engines  # noqa: E402  PISA and Lucene: an optional extra, in their own module

SYSTEMS = ("rungs", "rungs-compiled", "rungs-engine", "bm25s", "bm25s-numba", "tantivy", "fts5", "rank_bm25",
           *peer_engines.SYSTEMS)
K = 10
#: The setting every rungs path and bm25s run with: Lucene's BM25 (bm25s' « lucene »), CACM's k1 and b.
KNOBS = {"idf": "lucene", "lengths": "weighted", "saturation": "plain", "k1": 0.9, "b": 0.4}
#: tantivy's BM25, fixed in its Python bindings: k1 = 1.2, b = 0.75, the (k1 + 1) factor, one-byte lengths.
TANTIVY = {"idf": "lucene", "lengths": "lossy", "saturation": "k1+1", "k1": 1.2, "b": 0.75}
THREADS = {v: "1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")}


def zipf_corpus(n_docs: int, n_queries: int = 100, seed: int = 0):
    import numpy as np

    rng = np.random.default_rng(seed)
    vocab = 100_000
    ranks = np.arange(1, vocab + 1)
    p = 1.0 / ranks ** 1.1
    p /= p.sum()
    lengths = np.clip(rng.lognormal(np.log(30), 0.5, n_docs).astype(int), 3, 300)
    words = rng.choice(vocab, size=int(lengths.sum()), p=p)
    # Each word one shared string (« w17 » is one object however often it occurs): 1M passages fit in 0.4 GB.
    names = np.array([f"w{w}" for w in range(vocab)], dtype=object)
    docs = [part.tolist() for part in np.split(names[words], np.cumsum(lengths)[:-1])]
    # Queries of 2–5 words from the middle of the distribution, as people's queries are.
    queries = [[f"w{w}" for w in rng.integers(30, 20_000, size=rng.integers(2, 6))] for _ in range(n_queries)]
    return docs, queries


def cacm_corpus():
    from rungs.lab import cacm
    docs = [cacm.english(d["body"]) for d in cacm.load_documents()]
    queries = [cacm.english(q["question"]) for q in cacm.load_queries()]
    return docs, [q for q in queries if q]


def rss_mb() -> float:
    """The resident set now (not the peak: what a system still holds after building)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


# ---------------------------------------------------------------- the systems, each built from the same words

def build(system: str, docs, queries, shared: dict):
    """(one(i), batch() or None, top(i) → [(page, score)]) for one system; its parts kept in ``shared``."""
    import numpy as np

    texts = [" ".join(q) for q in queries]  # the text-in paths cut it back into the same words
    as_pairs = lambda pages, scores: list(zip(pages.tolist(), scores.tolist()))  # noqa: E731
    if system in peer_engines.SYSTEMS:
        return peer_engines.build(system, docs, queries, shared)
    if system == "rungs":
        from rungs.fastbm25 import FastBM25
        index = FastBM25.from_documents([{"id": f"d{i}", "body": d} for i, d in enumerate(docs)], fields=("body",))
        index.tokenizer = {}
        index.contributions(**KNOBS)  # the setting's matrix, as a slider's first query computes it
        shared["fast"] = index
        one = lambda i: index.search(texts[i], limit=K, explain=False, **KNOBS)  # noqa: E731
        return one, None, lambda i: [(int(h.id[1:]), h.score) for h in one(i)]
    if system in ("rungs-compiled", "rungs-engine"):
        from rungs.engine import compiled
        if "engine" not in shared:
            compiled.warm_up()  # numba's loops: compiled once per machine, loaded from its cache after
            shared["engine"] = compiled.FastEngine(shared["fast"])
            shared["compiled"] = shared["engine"].at(**KNOBS)
        engine, c = shared["engine"], shared["compiled"]
        if system == "rungs-engine":
            one = lambda i: engine.search(texts[i], limit=K, **KNOBS)  # noqa: E731
            return one, None, lambda i: [(int(h.id[1:]), h.score) for h in one(i)]
        return (lambda i: c.top_k(queries[i], K), lambda: c.top_k_many(queries, K),
                lambda i: as_pairs(*c.top_k(queries[i], K)))
    if system in ("bm25s", "bm25s-numba"):
        import bm25s
        if "bm25s" not in shared:
            shared["bm25s"] = bm25s.BM25(method="lucene", k1=KNOBS["k1"], b=KNOBS["b"], backend="numpy")
            shared["bm25s"].index(docs, show_progress=False)
        model = shared["bm25s"]
        if system == "bm25s-numba":
            # One index, the other backend: bm25s reads ``backend`` at each retrieve (its scores do not change).
            model = copy.copy(model)
            model.backend = "numba"
        model.retrieve(queries[:2], k=K, show_progress=False, n_threads=1)  # numba compiles here
        one = lambda i: model.retrieve([queries[i]], k=K, show_progress=False, n_threads=1)  # noqa: E731

        def top(i):
            found, scores = one(i)
            # bm25s always returns k pages: when fewer match, the rest score 0 (they are not matches).
            return [(p, s) for p, s in zip(found[0].tolist(), scores[0].astype(float).tolist()) if s > 0]

        return one, lambda: model.retrieve(queries, k=K, show_progress=False, n_threads=1), top
    if system == "tantivy":
        return _tantivy(docs, queries, shared)
    if system == "fts5":
        import sqlite3
        db = sqlite3.connect(":memory:")
        db.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
        db.executemany("INSERT INTO t(rowid, body) VALUES (?, ?)", ((i, " ".join(d)) for i, d in enumerate(docs)))
        db.commit()
        exprs = [" OR ".join(f'"{w}"' for w in q) for q in queries]
        sql = "SELECT rowid, -bm25(t) FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 10"
        one = lambda i: db.execute(sql, (exprs[i],)).fetchall()  # noqa: E731
        return one, None, one
    if system == "rank_bm25":
        from rank_bm25 import BM25Okapi
        model = BM25Okapi(docs, k1=KNOBS["k1"], b=KNOBS["b"])
        one = lambda i: np.argsort(-model.get_scores(queries[i]))[:K]  # noqa: E731
        return one, None, None
    raise SystemExit(f"unknown system {system!r}")


def _tantivy(docs, queries, shared):
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("body", stored=False, tokenizer_name="ws", index_option="freq")
    builder.add_unsigned_field("n", stored=True)
    schema = builder.build()
    shared["tantivy_dir"] = tempfile.TemporaryDirectory(prefix="bench-tantivy-")
    index = tantivy.Index(schema, path=shared["tantivy_dir"].name)  # on disk (memory-mapped), as tantivy is used
    index.register_tokenizer("ws", tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build())
    writer = index.writer(heap_size=200_000_000, num_threads=1)
    for i, d in enumerate(docs):
        writer.add_document(tantivy.Document(body=" ".join(d), n=i))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    searcher = index.searcher()
    shared["tantivy_segments"] = searcher.num_segments
    # Query objects built outside the timing: its query parser is not what is compared.
    should = tantivy.Occur.Should
    built = [tantivy.Query.boolean_query([(should, tantivy.Query.term_query(schema, "body", w)) for w in q])
             for q in queries]
    one = lambda i: searcher.search(built[i], K, count=False).hits  # noqa: E731
    return one, None, lambda i: [(searcher.doc(a)["n"][0], s) for s, a in one(i)]


# ---------------------------------------------------------------- timing: interleaved rounds, medians

def time_all(systems: dict, n: int, rounds: int, seconds: float) -> dict:
    """Every (system, mode) measured once per round, the order rotating; per round, seconds per query."""
    import numpy as np

    runs = {}
    for name, (one, batch, _) in systems.items():
        for i in range(n):  # warm-up: every query once (caches, compiled code, pages read in)
            one(i)
        t = time.perf_counter()
        for i in range(n):
            one(i)
        runs[(name, "one")] = (one, max(1, math.ceil(seconds / max(time.perf_counter() - t, 1e-6))))
        if batch is not None:
            batch()
            t = time.perf_counter()
            batch()
            runs[(name, "batch")] = (batch, max(1, math.ceil(seconds / max(time.perf_counter() - t, 1e-6))))
    per_round = {key: [] for key in runs}
    latencies = {key: [] for key in runs if key[1] == "one"}
    keys = list(runs)
    for r in range(rounds):
        shift = r % len(keys)  # no system always runs right after the same neighbour
        for key in keys[shift:] + keys[:shift]:
            fn, passes = runs[key]
            if key[1] == "batch":
                t = time.perf_counter()
                for _ in range(passes):
                    fn()
                per_round[key].append((time.perf_counter() - t) / (passes * n))
                continue
            spent = 0.0
            for _ in range(passes):
                for i in range(n):  # each query timed on its own: p50 and p95 come from these
                    t = time.perf_counter()
                    fn(i)
                    dt = time.perf_counter() - t
                    spent += dt
                    latencies[key].append(dt)
            per_round[key].append(spent / (passes * n))
    out = {}
    for (name, mode), values in per_round.items():
        row = out.setdefault(name, {})
        row[f"qps_{'batch' if mode == 'batch' else 'one'}"] = float(1 / np.median(values))
        row[f"us_per_query_{mode}"] = [round(v * 1e6, 3) for v in values]
        if mode == "one":
            lat = np.array(latencies[(name, mode)])
            row.update(p50_ms=float(np.percentile(lat, 50) * 1e3), p95_ms=float(np.percentile(lat, 95) * 1e3),
                       timed_queries=int(lat.size))
    return out


# ---------------------------------------------------------------- scores: where the settings agree

def differences(ours, theirs) -> dict:
    """The largest relative score difference over the pages both top-10s hold; rankings alike in order, in scores.

    ``same_scores``: the same ten scores (1e-6), what a system breaking ties otherwise than by id still owes.
    """
    worst, same_order, same_scores = 0.0, 0, 0
    for a, b in zip(ours, theirs):
        mine, other = dict(a), dict(b)
        same_order += [p for p, _ in a] == [p for p, _ in b]
        x, y = sorted(s for _, s in a), sorted(s for _, s in b)
        same_scores += len(x) == len(y) and all(math.isclose(u, v, rel_tol=1e-6) for u, v in zip(x, y))
        for p in set(mine) & set(other):
            worst = max(worst, abs(mine[p] - other[p]) / max(abs(mine[p]), 1e-300))
    return {"max_rel_diff": worst, "same_order": same_order, "same_scores": same_scores, "queries": len(ours)}


def checks(docs, queries, systems, shared) -> dict:
    """rungs and rungs-compiled against the readable N1 (or the lazy path), bm25s; tantivy with its own setting."""
    from rungs import bm25
    from rungs.engine import compiled, impacts

    n, out = len(queries), {}
    top = {name: [s[2](i) for i in range(n)] for name, s in systems.items() if s[2] is not None}
    if "rungs-compiled" in top:
        if len(docs) <= 10_000:  # the readable N1, on the same words joined by spaces
            readable = bm25.build_index([{"id": f"d{i}", "body": " ".join(d)} for i, d in enumerate(docs)],
                                        fields=("body",))
            reference = [[(int(h.id[1:]), h.score) for h in readable.search(" ".join(q), limit=K, **KNOBS)]
                         for q in queries]
            out["compiled_vs_readable_n1"] = differences(top["rungs-compiled"], reference)
        out["compiled_vs_rungs"] = differences(top["rungs-compiled"], top["rungs"])
    for name in ("rungs", "rungs-compiled"):
        if name in top and "bm25s" in top:
            out[f"{name}_vs_bm25s"] = differences(top[name], top["bm25s"])
    if "tantivy" in top and "engine" in shared:
        for label, setting in (("lossy", TANTIVY), ("exact", {**TANTIVY, "lengths": "weighted"})):
            c = compiled.Compiled(impacts.freeze(shared["engine"].counts, **setting))  # not kept after the check
            mine = [list(zip(*(a.tolist() for a in c.top_k(queries[i], K)))) for i in range(n)]
            out[f"tantivy_vs_rungs_{label}_lengths"] = differences(mine, top["tantivy"])
            del c
    return out


def sweep(system: str, docs, queries, shared) -> dict:
    """Time 100 settings of k1 × b over every query (a few timed where each costs a rebuild, scaled to 100)."""
    import numpy as np

    settings = [(float(k1), float(b)) for k1 in np.linspace(0.3, 2.1, 10) for b in np.linspace(0.0, 0.9, 10)]
    texts = [" ".join(q) for q in queries]
    if system == "bm25s":
        import bm25s
        timed = settings[:3]
        start = time.perf_counter()
        for k1, b in timed:
            fresh = bm25s.BM25(method="lucene", k1=k1, b=b)
            fresh.index(docs, show_progress=False)
            for q in queries:
                fresh.retrieve([q], k=K, show_progress=False, n_threads=1)
    else:
        timed = settings if len(docs) <= 200_000 else settings[:10]
        start = time.perf_counter()
        for k1, b in timed:
            knobs = {**KNOBS, "k1": k1, "b": b}
            if system == "rungs":
                shared["fast"]._cache.clear()
                for text in texts:
                    shared["fast"].search(text, limit=K, explain=False, **knobs)
            else:
                shared["engine"]._cache.clear()  # a setting never asked before (and only one kept in memory)
                c = shared["engine"].at(**knobs)  # one freeze per setting, reused by every query
                for q in queries:
                    c.top_k(q, K)
    return {"sweep_settings_timed": len(timed), "sweep100_s": (time.perf_counter() - start) * 100 / len(timed)}


# ---------------------------------------------------------------- one collection, in its own process

def measure(collection: str, wanted, rounds: int, seconds: float) -> list[dict]:
    docs, queries = cacm_corpus() if collection == "cacm" else zipf_corpus(int(collection))
    queries = [list(dict.fromkeys(q)) for q in queries]  # each query's words once, for every system
    load_before = os.getloadavg()
    shared, systems, rows = {}, {}, {}
    absent = {name: peer_engines.missing(name) for name in peer_engines.SYSTEMS if name in wanted}
    for name in SYSTEMS:
        if name not in wanted or (name == "rank_bm25" and len(docs) > 100_000) or absent.get(name):
            continue  # rank_bm25 is pure Python: a million passages would take hours and many GB
        gc.collect()
        base, t = rss_mb(), time.perf_counter()
        systems[name] = build(name, docs, queries, shared)
        index_s = time.perf_counter() - t
        gc.collect()
        rows[name] = {"system": name, "collection": collection, "docs": len(docs), "queries": len(queries),
                      "index_s": index_s, "rss_added_mb": rss_mb() - base}
    scores = {**checks(docs, queries, systems, shared),
              **peer_engines.checks(collection, queries, systems, shared, differences)}
    timing = time_all(systems, len(queries), rounds, seconds)
    for name in ("rungs", "rungs-compiled", "bm25s"):
        if name in rows:
            rows[name].update(sweep(name, docs, queries, shared))
    meta = {"load_before": load_before, "load_after": os.getloadavg(), "checks": scores,
            "tantivy_segments": shared.get("tantivy_segments"), "rounds": rounds, "seconds": seconds,
            "peers_missing": {name: why for name, why in absent.items() if why}}
    return [{**row, **timing[name], **({"collection_meta": meta} if name == next(iter(rows)) else {})}
            for name, row in rows.items()]


# ---------------------------------------------------------------- the run, and its tables

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", nargs="*", type=int, default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--systems", nargs="*", default=list(SYSTEMS))
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=0.3, help="the least one measurement lasts")
    parser.add_argument("--one", metavar="COLLECTION", help="measure one collection here and print its rows")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, set(args.systems), args.rounds, args.seconds)))
        return
    RESULTS.mkdir(exist_ok=True)
    env = {**os.environ, **THREADS, "PYTHONHASHSEED": "0"}
    meta = {"started": time.strftime("%Y-%m-%d %H:%M"), "load_at_start": os.getloadavg(),
            "machine": f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}",
            "rounds": args.rounds, "seconds": args.seconds, "collections": {}}
    rows = []
    for collection in ["cacm"] + [str(n) for n in args.sizes]:
        t = time.perf_counter()
        done = subprocess.run([sys.executable, __file__, "--one", collection, "--rounds", str(args.rounds),
                               "--seconds", str(args.seconds), "--systems", *args.systems],
                              env=env, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"{collection} failed:\n{done.stderr[-3000:]}", file=sys.stderr)
            continue
        got = json.loads(done.stdout.strip().splitlines()[-1])
        meta["collections"][collection] = {**got[0].pop("collection_meta"), "wall_s": time.perf_counter() - t}
        rows += got
        print(json.dumps([{k: r.get(k) for k in ("system", "collection", "index_s", "qps_one", "qps_batch")}
                          for r in got]), flush=True)
    meta.update(finished=time.strftime("%Y-%m-%d %H:%M"), load_at_end=os.getloadavg())
    rows, meta = keep_unmeasured(rows, meta)
    (RESULTS / "peers.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    print(markdown(rows, meta))
    plot(rows)


def keep_unmeasured(rows, meta):
    """The committed rows of collections this run did not measure, kept and dated (``kept_from``)."""
    old = json.loads((RESULTS / "peers.json").read_text()) if (RESULTS / "peers.json").exists() else None
    if old:
        for collection, m in old["meta"]["collections"].items():
            if collection not in meta["collections"]:
                meta["collections"][collection] = {**m, "kept_from": m.get("kept_from", old["meta"]["started"])}
                rows += [r for r in old["rows"] if r["collection"] == collection]
    rank = {c: i for i, c in enumerate(LABEL)}  # CACM, then the sizes, whichever run measured them
    rows.sort(key=lambda r: rank.get(r["collection"], len(rank)))
    meta["collections"] = dict(sorted(meta["collections"].items(), key=lambda kv: rank.get(kv[0], len(rank))))
    return rows, meta


LABEL = {"cacm": "CACM (3,204)", "10000": "Zipf 10k", "100000": "Zipf 100k", "1000000": "Zipf 1M"}


def _qps(value) -> str:
    return "—" if not value else f"{value:,.0f}"


def markdown(rows: list[dict], meta: dict) -> str:
    """The peers table, then the goal: rungs-compiled against bm25s-numba and tantivy, ratio of medians
    and, in brackets, the median of the per-round ratios (both timed in the same round, seconds apart)."""
    lines = ["| collection | system | index s | p50 ms | p95 ms | q/s, one query per call | q/s, batched "
             "| memory MB | 100-setting k1 × b sweep |", "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    by = {(r["collection"], r["system"]): r for r in rows}
    for r in rows:
        index_s, memory = f"{r['index_s']:.2f}", f"{r['rss_added_mb']:,.0f}"
        counts = by.get((r["collection"], "rungs"))
        if r["system"] == "rungs-compiled" and counts:
            # Built on rungs' counts (which it keeps, to freeze another setting): the total from the text.
            index_s = f"{counts['index_s'] + r['index_s']:.2f}"
            memory = f"{counts['rss_added_mb'] + r['rss_added_mb']:,.0f}"
        elif r["system"] == "rungs-engine":
            index_s, memory = "(shared)", "(shared)"  # it reads rungs-compiled's frozen index
        swept = "" if "sweep100_s" not in r else (f"{r['sweep100_s']:.1f} s" + (
            "" if r["sweep_settings_timed"] == 100 else f" ({r['sweep_settings_timed']} timed, ×100/{r['sweep_settings_timed']})"))
        bold = "**" if r["system"] == "rungs-compiled" else ""
        lines.append(f"| {LABEL.get(r['collection'], r['collection'])} | {bold}{r['system']}{bold} | {index_s} "
                     f"| {r['p50_ms']:.3f} | {r['p95_ms']:.3f} | {_qps(r.get('qps_one'))} | {_qps(r.get('qps_batch'))} "
                     f"| {memory} | {swept} |")
    peers = peer_engines.markdown(rows, meta, LABEL)
    return "\n".join(lines) + "\n\n" + markdown_goal(rows, meta) + ("\n" + peers if peers else "")


def markdown_goal(rows: list[dict], meta: dict) -> str:
    """rungs-compiled ÷ bm25s-numba and ÷ tantivy per collection; where below 1, by how much."""
    import numpy as np

    lines = ["| collection | ÷ bm25s-numba, one per call | ÷ bm25s-numba, batched | ÷ tantivy, one per call "
             "| reached | load average before → after |", "| --- | ---: | ---: | ---: | --- | --- |"]
    by = {(r["collection"], r["system"]): r for r in rows}
    for collection in dict.fromkeys(r["collection"] for r in rows):
        ours, numba, tan = (by.get((collection, s)) for s in ("rungs-compiled", "bm25s-numba", "tantivy"))
        if not (ours and numba and tan):
            continue
        cells, missed = [], []
        for label, peer, mode in (("one", numba, "one"), ("batched", numba, "batch"), ("tantivy", tan, "one")):
            ratio = ours[f"qps_{mode}"] / peer[f"qps_{mode}"]
            paired = float(np.median(np.array(peer[f"us_per_query_{mode}"]) / np.array(ours[f"us_per_query_{mode}"])))
            cells.append(f"{ratio:.2f} ({paired:.2f})")
            if ratio < 1:
                missed.append(f"{label} by {100 * (1 - ratio):.0f} %")
        load = meta["collections"][collection]
        lines.append(f"| {LABEL.get(collection, collection)} | " + " | ".join(cells)
                     + f" | {'yes' if not missed else 'no: ' + ', '.join(missed)} "
                     f"| {load['load_before'][0]:.1f} → {load['load_after'][0]:.1f} |")
    return "\n".join(lines) + "\n"


def plot(rows):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for system in SYSTEMS:
        mine = sorted((r for r in rows if r["system"] == system and r["collection"] != "cacm"), key=lambda r: r["docs"])
        if not mine:
            continue
        axes[0].plot([r["docs"] for r in mine], [r["index_s"] for r in mine], marker="o", label=system)
        axes[1].plot([r["docs"] for r in mine], [r["p50_ms"] for r in mine], marker="o", label=system)
    for ax, title in zip(axes, ["index time (s)", "query latency p50 (ms), top 10"]):
        ax.set_xscale("log"); ax.set_yscale("log"); ax.set_xlabel("passages (Zipf corpus)"); ax.set_title(title)
        ax.grid(alpha=0.3, which="both"); ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(HERE / "cost_vs_size.png", dpi=110)


if __name__ == "__main__":
    main()

"""PISA and Lucene, the engines a search engineer would name, as two more peers of ``bench_peers.py``.

What it is for: ``bench_peers.py`` builds, times and checks every system in one interleaved run; this
module gives it three more systems, built from the same words, and the checks their BM25 owes:

- ``pisa``: PISA (``pyterrier-pisa``), block-max WAND over its compressed index, BM25 computed at query
  time in float32 (k1 = 0.9, b = 0.4; its BM25 is Robertson's idf floored at 1e-6, with the (k1 + 1)
  factor and exact lengths: rungs' ``idf="fts5", saturation="k1+1"``);
- ``pisa-quantised``: the same index, its scores precomputed and quantised to integers
  (``precompute_impact=True``), PISA's fastest path: ranks by integers, so ties and near-ties move;
- ``lucene``: Lucene 10 through Anserini's ``SimpleSearcher`` (what pyserini's ``LuceneSearcher`` wraps),
  over an index that pyserini's indexer builds from JSON documents (``--pretokenized``: whitespace, the
  same words). Lucene's BM25: idf ln(1 + (N − n + 0.5)/(n + 0.5)), no (k1 + 1) factor, each length kept
  in one byte (rungs' ``lengths="lossy"``). Queries: a BooleanQuery of SHOULD TermQuery, built outside
  the timing; every call crosses from Python into the JVM through pyjnius, which the timing includes.

Both are an optional extra (``pip install -e .[peers]``, see pyproject.toml), never installed by
``run.sh``; Lucene needs Java 21 or later (``JAVA_HOME``). ``missing(system)`` says why one cannot run;
``bench_peers.py`` leaves it out of the run and says so in the results.

Checks (``checks``): each engine's top 10 against rungs' BM25 at its own setting (the same scores, to
float32) and its top-10 overlap with N1 at the bench's setting (Lucene's BM25 with exact lengths, k1 0.9,
b 0.4); on CACM, MAP over the 52 judged queries at depth 1000 (``rungs.lab.metrics``), N1's own beside it.

Cost (results/peers.json): PISA builds CACM in 1.6 s, Zipf 100k in 8.1 s; pyserini's indexer takes 13.1 s
on CACM, most of it starting Python and a JVM (Anserini's own clock: 3 s), and a JVM starts in the bench's
process to search. Taught in: benchmarks/README.md (« N1's fast paths against the peers »).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

SYSTEMS = ("pisa", "pisa-quantised", "lucene")
K = 10
#: PISA's BM25 in rungs' knobs (bench_peers' k1 and b): Robertson's idf floored, the (k1 + 1) factor.
PISA = {"idf": "fts5", "lengths": "weighted", "saturation": "k1+1", "k1": 0.9, "b": 0.4}
#: Lucene's BM25Similarity(0.9, 0.4): Lucene's idf, no (k1 + 1) factor, one-byte lengths.
LUCENE = {"idf": "lucene", "lengths": "lossy", "saturation": "plain", "k1": 0.9, "b": 0.4}
SETTING = {"pisa": PISA, "pisa-quantised": PISA, "lucene": LUCENE}
JAVA = "/usr/lib/jvm/temurin-25-jdk-amd64"  # where this machine keeps a Java 21+; JAVA_HOME wins


def missing(system: str) -> str | None:
    """Why ``system`` cannot run here (a sentence naming what to install), or None."""
    import importlib.util
    if system.startswith("pisa") and importlib.util.find_spec("pyterrier_pisa") is None:
        return "pyterrier-pisa is not installed (pip install -e .[peers])"
    if system == "lucene":
        if importlib.util.find_spec("pyserini") is None:
            return "pyserini is not installed (pip install -e .[peers])"
        if not Path(_java_home(), "bin", "java").exists():
            return "no Java 21+ found: set JAVA_HOME (Lucene 10 needs it)"
    return None


def _java_home() -> str:
    return os.environ.get("JAVA_HOME") or JAVA


def size_mb(folder) -> float:
    return sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file()) / 2**20


def build(system: str, docs, queries, shared: dict):
    """(one(i), batch(), top(i) → [(page, score)]) for one engine, as ``bench_peers.build`` returns them."""
    if system.startswith("pisa"):
        return _pisa(system, docs, queries, shared)
    if system == "lucene":
        return _lucene(docs, queries, shared)
    raise SystemExit(f"unknown system {system!r}")


def _pisa(system, docs, queries, shared):
    import numpy as np
    import pyterrier_pisa as pp

    if "pisa_dir" not in shared:
        shared["pisa_dir"] = tempfile.TemporaryDirectory(prefix="bench-pisa-")
        index = pp.PisaIndex(shared["pisa_dir"].name + "/idx", stemmer="none", stops="none", threads=1)
        # The words are already cut (and stemmed for CACM): PISA's tokenizer only splits them on spaces.
        index.indexer(text_field="text").index({"docno": str(i), "text": " ".join(d)} for i, d in enumerate(docs))
        shared["pisa_index"] = index
    retrieve = shared["pisa_index"].bm25(k1=PISA["k1"], b=PISA["b"], num_results=K, threads=1,
                                         precompute_impact=system == "pisa-quantised")
    retrieve.reset_retrieval_context()
    ctx, algorithm = retrieve._ctxt, retrieve.query_algorithm.value
    texts = [(0, " ".join(q)) for q in queries]
    many = [(i, t) for i, (_, t) in enumerate(texts)]

    def call(inp, k):
        # What PisaRetrieve.transform does, without building a pandas frame around it.
        n = len(inp) * k
        out = (np.empty(n, np.int32), np.empty(n, object), np.empty(n, np.int32), np.empty(n, np.float32))
        size = pp._pisathon.retrieve(ctx, algorithm, inp, k=k, threads=1, query_weighted=0, pretokenised=False,
                                     result_qidxs=out[0], result_docnos=out[1], result_ranks=out[2],
                                     result_scores=out[3])
        return out[1][:size], out[3][:size]

    shared[f"{system}_deep"] = lambda i, k: [int(p) for p in call([texts[i]], k)[0]]
    return (lambda i: call([texts[i]], K), lambda: call(many, K),
            lambda i: [(int(p), float(s)) for p, s in zip(*call([texts[i]], K))])


def _lucene(docs, queries, shared):
    os.environ.setdefault("JAVA_HOME", _java_home())
    shared["lucene_dir"] = tempfile.TemporaryDirectory(prefix="bench-lucene-")
    root = Path(shared["lucene_dir"].name)
    (root / "json").mkdir()
    with open(root / "json" / "docs.jsonl", "w") as f:
        for i, d in enumerate(docs):
            f.write(json.dumps({"id": str(i), "contents": " ".join(d)}) + "\n")
    # pyserini's indexer, as its documentation runs it (a JVM of its own; its start is in the index time).
    done = subprocess.run([sys.executable, "-m", "pyserini.index.lucene", "--collection", "JsonCollection",
                           "--input", str(root / "json"), "--index", str(root / "index"), "--generator",
                           "DefaultLuceneDocumentGenerator", "--threads", "1", "--pretokenized"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"pyserini's indexer failed:\n{done.stderr[-2000:]}")
    # Anserini's own clock (to the second), beside the wall time that holds the JVM's start.
    said = re.search(r"indexed in (\d+):(\d+):(\d+)", done.stdout + done.stderr)
    shared["lucene_own_index_s"] = said and int(said[1]) * 3600 + int(said[2]) * 60 + int(said[3])
    shared["lucene_mb"] = size_mb(root / "index")
    from pyserini.pyclass import autoclass

    searcher = autoclass("io.anserini.search.SimpleSearcher")(str(root / "index"))
    searcher.set_bm25(LUCENE["k1"], LUCENE["b"])
    term, TermQuery = autoclass("org.apache.lucene.index.Term"), autoclass("org.apache.lucene.search.TermQuery")
    should = autoclass("org.apache.lucene.search.BooleanClause$Occur").SHOULD
    Builder = autoclass("org.apache.lucene.search.BooleanQuery$Builder")
    built = []
    for q in queries:  # built outside the timing, as tantivy's are: the query parser is not what is compared
        b = Builder()
        for w in q:
            b.add(TermQuery(term("contents", w)), should)
        built.append(b.build())
    # Batched: Anserini's batch_search, over the words as text through a whitespace analyzer (the same
    # SHOULD terms; its parsing is inside the timing), on one thread.
    searcher.set_analyzer(autoclass("org.apache.lucene.analysis.core.WhitespaceAnalyzer")())
    texts, ids = autoclass("java.util.ArrayList")(), autoclass("java.util.ArrayList")()
    for i, q in enumerate(queries):
        texts.add(" ".join(q))
        ids.add(str(i))
    shared["lucene_searcher"] = searcher
    shared["lucene_deep"] = lambda i, k: [int(h.docid) for h in searcher.search(built[i], k)]
    return (lambda i: searcher.search(built[i], K), lambda: searcher.batch_search(texts, ids, K, 1),
            lambda i: [(int(h.docid), float(h.score)) for h in searcher.search(built[i], K)])


def overlap(ours, theirs) -> float:
    """The mean share of N1's top 10 that the engine's top 10 holds too."""
    shares = [len({p for p, _ in a} & {p for p, _ in b}) / max(len(a), 1) for a, b in zip(ours, theirs)]
    return sum(shares) / max(len(shares), 1)


def checks(collection, queries, systems, shared, differences) -> dict:
    """Each engine against rungs at its own setting (``differences`` is bench_peers'), its overlap with N1."""
    from rungs.engine import compiled, impacts

    out, n = {}, len(queries)
    if "engine" not in shared or "rungs-compiled" not in systems:
        return out
    top = {name: [systems[name][2](i) for i in range(n)] for name in ("rungs-compiled", *SYSTEMS) if name in systems}
    for system in (s for s in SYSTEMS if s in top):
        c = compiled.Compiled(impacts.freeze(shared["engine"].counts, **SETTING[system]))
        mine = [list(zip(*(a.tolist() for a in c.top_k(queries[i], K)))) for i in range(n)]
        out[f"{system}_vs_rungs_own_setting"] = differences(top[system], mine)
        out[f"{system}_top10_overlap_with_n1"] = overlap(top["rungs-compiled"], top[system])
        # PISA's folder: its index and the block-max data of both scorers (float and quantised), shared.
        out[f"{system}_index_mb"] = shared["lucene_mb"] if system == "lucene" else size_mb(shared["pisa_dir"].name)
        if collection == "cacm":
            out[f"{system}_map"] = cacm_map(shared[f"{system}_deep"])
        del c
    if "lucene" in top:
        out["lucene_own_index_s"] = shared.get("lucene_own_index_s")
    if collection == "cacm":
        frozen = shared["compiled"]
        out["n1_map"] = cacm_map(lambda i, k: frozen.top_k(queries[i], k)[0].tolist())
        out["n1_map_words_repeated"] = _map_words_repeated()
    return out


def _map_words_repeated() -> float:
    """N1's MAP when a query's repeated words count each time (as Anserini's published run counts them)."""
    from rungs import bm25
    from rungs.lab import cacm

    index = bm25.build_index([{"id": f"d{i}", "body": " ".join(cacm.english(d["body"]))}
                              for i, d in enumerate(cacm.load_documents())], fields=("body",))
    asked = [words for words in (cacm.english(q["question"]) for q in cacm.load_queries()) if words]
    knobs = {**bm25.LUCENE, "k1": PISA["k1"], "b": PISA["b"], "repeats": "count"}
    return cacm_map(lambda i, k: [int(h.id[1:]) for h in index.search(" ".join(asked[i]), limit=k, **knobs)])


def cacm_map(ranked, depth: int = 1000) -> float:
    """MAP at ``depth`` over CACM's judged queries; ``ranked(i, k)`` gives the i-th bench query's page numbers."""
    from rungs.lab import cacm, metrics

    ids = [d["id"] for d in cacm.load_documents()]
    asked = [q for q in cacm.load_queries() if cacm.english(q["question"])]  # bench_peers drops empty ones
    judged = [(i, q["relevant"]) for i, q in enumerate(asked) if q["relevant"]]
    return sum(metrics.average_precision([ids[p] for p in ranked(i, depth)], rel) for i, rel in judged) / len(judged)


def markdown(rows: list[dict], meta: dict, label=None) -> str:
    """The new peers' table: their BM25 against rungs' at their setting and N1's, their size on disk, and
    rungs-compiled ÷ each (ratio of medians, one query a call and batched); then who was not run, and why."""
    lines = ["| collection | engine | largest relative difference from rungs at its BM25 | same top-10 order "
             "| top-10 overlap with N1 | MAP (CACM) | index on disk MB | rungs-compiled ÷ it, one per call "
             "| ÷ it, batched |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    by, notes = {(r["collection"], r["system"]): r for r in rows}, []
    for collection, m in meta["collections"].items():
        checked, ours = m.get("checks", {}), by.get((collection, "rungs-compiled"))
        name = (label or {}).get(collection, collection)
        notes += [f"{name}: {system} not run ({why})." for system, why in (m.get("peers_missing") or {}).items()]
        if "n1_map" in checked and any((collection, s) in by for s in SYSTEMS):
            lines.append(f"| {name} | N1 (rungs-compiled) | — | — | 1.000 | {checked['n1_map']:.4f} "
                         f"(words repeated: {checked['n1_map_words_repeated']:.4f}) | — | — | — |")
        for system in SYSTEMS:
            r = by.get((collection, system))
            if not (r and ours):
                continue
            same = checked[f"{system}_vs_rungs_own_setting"]
            # PISA's quantised scores are integers: no score of it compares with a float one.
            worst = "(integers)" if system == "pisa-quantised" else f"{same['max_rel_diff']:.1e}"
            ratio = [f"{ours[f'qps_{mode}'] / r[f'qps_{mode}']:.2f}" if r.get(f"qps_{mode}") else "—"
                     for mode in ("one", "batch")]
            mean_ap = f"{checked[f'{system}_map']:.4f}" if f"{system}_map" in checked else "—"
            lines.append(f"| {name} | {system} | {worst} | {same['same_order']}/{same['queries']} "
                         f"| {checked[f'{system}_top10_overlap_with_n1']:.3f} | {mean_ap} "
                         f"| {checked[f'{system}_index_mb']:.1f} | {ratio[0]} | {ratio[1]} |")
    if len(lines) == 2 and not notes:
        return ""  # a results file from before PISA and Lucene ran: nothing to add to its tables
    return "\n".join(lines) + "\n" + "".join(f"\n{note}" for note in notes) + ("\n" if notes else "")


if __name__ == "__main__":
    print({s: missing(s) or "ready" for s in SYSTEMS})

"""benchmarks/bench_peers.py: its synthetic corpus is the one earlier runs measured, its goal table says by how
much, and PISA and Lucene (an optional extra, benchmarks/peer_engines.py) run on a tiny slice where installed."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

PEERS = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_peers.py"


def peers():
    spec = importlib.util.spec_from_file_location("bench_peers", PEERS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def drawn_word_by_word(n_docs, n_queries=100, seed=0):
    # The corpus as the benchmark first drew it: one new string per token (the sizes of earlier runs mean this).
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, 100_001) ** 1.1
    p /= p.sum()
    lengths = np.clip(rng.lognormal(np.log(30), 0.5, n_docs).astype(int), 3, 300)
    words = rng.choice(100_000, size=int(lengths.sum()), p=p)
    docs, start = [], 0
    for n in lengths:
        docs.append([f"w{w}" for w in words[start:start + n]])
        start += n
    queries = [[f"w{w}" for w in rng.integers(30, 20_000, size=rng.integers(2, 6))] for _ in range(n_queries)]
    return docs, queries


def test_the_zipf_corpus_is_the_one_earlier_runs_drew_and_shares_its_words():
    docs, queries = peers().zipf_corpus(2000)
    assert (docs, queries) == drawn_word_by_word(2000)
    flat = [w for d in docs for w in d]
    assert len({id(w) for w in flat}) == len(set(flat))  # each distinct word is one string, however often it occurs


def test_the_goal_table_says_by_how_much_a_goal_is_missed():
    def row(system, qps_one, qps_batch=None):
        r = {"system": system, "collection": "cacm", "qps_one": qps_one, "us_per_query_one": [1e6 / qps_one] * 3}
        if qps_batch:
            r.update(qps_batch=qps_batch, us_per_query_batch=[1e6 / qps_batch] * 3)
        return r

    rows = [row("rungs-compiled", 800, 2000), row("bm25s-numba", 1000, 1000), row("tantivy", 400)]
    meta = {"collections": {"cacm": {"load_before": [2.0], "load_after": [3.0]}}}
    goal = peers().markdown_goal(rows, meta)
    assert "| CACM (3,204) | 0.80 (0.80) | 2.00 (2.00) | 2.00 (2.00) | no: one by 20 % | 2.0 → 3.0 |" in goal


# ---------------------------------------------------------------- PISA and Lucene (benchmarks/peer_engines.py)

def engines():
    return peers().peer_engines  # the module bench_peers imports from beside it


@pytest.mark.parametrize("system", ["pisa", "pisa-quantised", "lucene"])
def test_a_peer_engine_builds_searches_and_is_checked_on_a_tiny_slice(system):
    # Runs only where the optional extra is installed (pip install -e .[peers]); says what is missing otherwise.
    bench = peers()
    why = bench.peer_engines.missing(system)
    if why:
        pytest.skip(why)
    docs, queries = bench.zipf_corpus(400, n_queries=8)
    queries = [list(dict.fromkeys(q)) for q in queries]
    shared = {}
    systems = {name: bench.build(name, docs, queries, shared) for name in ("rungs", "rungs-compiled", system)}
    one, batch, _ = systems[system]
    one(0), batch()  # the two timed calls run
    checked = bench.peer_engines.checks("400", queries, systems, shared, bench.differences)
    same = checked[f"{system}_vs_rungs_own_setting"]
    if system != "pisa-quantised":  # its scores are integers: its order is what can be compared
        assert same["max_rel_diff"] < 1e-4 and same["same_order"] == len(queries), same
    assert 0 < checked[f"{system}_top10_overlap_with_n1"] <= 1 and checked[f"{system}_index_mb"] > 0


def test_a_peer_engine_not_installed_is_left_out_of_the_run_and_the_table_says_why(monkeypatch):
    bench = peers()
    monkeypatch.setattr(bench.peer_engines, "missing", lambda system: f"{system} is not installed here")
    rows = bench.measure("300", {"rungs", "rungs-compiled", "pisa", "lucene"}, rounds=1, seconds=0.001)
    assert [r["system"] for r in rows] == ["rungs", "rungs-compiled"]
    meta = {"collections": {"300": rows[0]["collection_meta"]}}
    assert meta["collections"]["300"]["peers_missing"] == {"pisa": "pisa is not installed here",
                                                           "lucene": "lucene is not installed here"}
    assert "300: lucene not run (lucene is not installed here)." in bench.peer_engines.markdown(rows, meta)


def test_a_run_keeps_the_collections_it_did_not_measure_and_dates_them(tmp_path, monkeypatch):
    bench = peers()
    old = {"meta": {"started": "2026-12-01 10:40", "collections": {"cacm": {"load_before": [1.0]},
                                                                  "1000000": {"load_before": [2.0]}}},
           "rows": [{"collection": "cacm", "system": "rungs", "qps_one": 1.0},
                    {"collection": "1000000", "system": "rungs", "qps_one": 2.0}]}
    (tmp_path / "peers.json").write_text(json.dumps(old))
    monkeypatch.setattr(bench, "RESULTS", tmp_path)
    rows = [{"collection": "100000", "system": "rungs", "qps_one": 3.0},
            {"collection": "cacm", "system": "rungs", "qps_one": 4.0}]
    meta = {"started": "2026-12-08 00:31",
            "collections": {"100000": {"load_before": [3.0]}, "cacm": {"load_before": [4.0]}}}
    rows, meta = bench.keep_unmeasured(rows, meta)
    assert [(r["collection"], r["qps_one"]) for r in rows] == [("cacm", 4.0), ("100000", 3.0), ("1000000", 2.0)]
    assert list(meta["collections"]) == ["cacm", "100000", "1000000"]
    assert meta["collections"]["1000000"]["kept_from"] == "2026-12-01 10:40"
    assert "kept_from" not in meta["collections"]["cacm"]  # measured again: this run's, not the old one's

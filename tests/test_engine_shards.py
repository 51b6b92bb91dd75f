"""Shards (rungs.engine.shards): each shard's own idf changes rankings; global statistics give them back exactly."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from engine_data import CACM_KNOBS, cacm, pages, questions

from rungs.core.errors import BadArgument
from rungs.engine import impacts, shards
from rungs.fastbm25 import FastBM25

CACM_SETTING = {k: v for k, v in CACM_KNOBS.items() if k in impacts.SETTING_KNOBS}


def test_every_page_lands_on_exactly_one_shard_the_same_way_every_time():
    for n in (1, 2, 4, 8):
        parts = shards.split(pages(), n)
        assert sorted(p["id"] for part in parts for p in part) == sorted(p["id"] for p in pages())
        assert parts == shards.split(pages(), n)
        assert all(shards.shard_of(p["id"], n) == i for i, part in enumerate(parts) for p in part)


@pytest.mark.parametrize("n", [2, 4, 8])
def test_global_statistics_restore_the_one_machine_ranking_on_the_handbook(n):
    setting = {"k1": 0.9, "b": 0.4, "weights": {"title": 2.0}}
    one = impacts.freeze(FastBM25.from_documents(pages(), stopwords=True), **setting)
    sharded = shards.Sharded(pages(), n, stopwords=True, **setting)
    changed = 0
    for q in questions():
        reference = [(h.id, h.score) for h in one.search(q["question"], limit=10, explain=False)]
        assert [(h.id, h.score) for h in sharded.search(q["question"], limit=10, stats="global")] == reference
        changed += [(h.id, h.score) for h in sharded.search(q["question"], limit=10)] != reference
    assert changed > 0  # per-shard idf does change rankings: the lesson has something to show


def test_compare_on_cacm_restores_the_one_machine_ranking_and_reports_the_changes():
    data = cacm()
    rows = shards.compare(data["docs"], data["judged"], shard_counts=(1, 2, 4, 8), fields=("body",), **CACM_SETTING)
    assert rows[0]["order_changed"] == 0 and rows[0]["local"] == rows[0]["one"]
    assert rows[-1]["order_changed"] > 0 and rows[-1]["set_changed"] > 0
    assert all(r["global"] == r["one"] for r in rows)  # compare itself raises if the floats differ
    assert [sum(r["pages_per_shard"]) for r in rows] == [len(data["docs"])] * 4


def test_a_gathering_that_misses_a_shard_is_caught(monkeypatch):
    sharded = shards.Sharded(pages(), 4)
    with pytest.raises(impacts.StatisticsMismatch):  # one shard's statistics for another: refused, not wrong
        impacts.freeze(sharded.counts[1], stats=sharded.counts[0].stats)
    # Shards that score with their own statistics under « global »: compare must refuse to report it.
    real = shards.Sharded.search
    monkeypatch.setattr(shards.Sharded, "search", lambda self, query, *, limit=10, stats="local", match="any":
                        real(self, query, limit=limit, stats="local", match=match))
    with pytest.raises(shards.GlobalStatsMismatch):
        shards.compare(pages(), questions(), shard_counts=(4,), stopwords=True)


def test_bad_shard_counts_and_questions_are_named():
    with pytest.raises(BadArgument):
        shards.split(pages(), 0)
    with pytest.raises(BadArgument):
        shards.compare(pages(), [], shard_counts=(0,))
    with pytest.raises(BadArgument):
        shards.compare(pages(), ["congés"])
    with pytest.raises(BadArgument):
        shards.Sharded(pages(), 2).search("congés", stats="dfs")
    with pytest.raises(BadArgument, match="no 'id'"):
        shards.split([{"body": "x"}], 2)


def test_the_assignment_does_not_depend_on_the_process():
    # Python's hash() of a string changes with PYTHONHASHSEED: two processes must still agree.
    code = "from rungs.engine import shards; print([shards.shard_of(f'page-{i}', 8) for i in range(50)])"
    root = str(Path(__file__).resolve().parent.parent)
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root,
                           env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": root}).stdout
            for seed in ("1", "2")}
    assert len(runs) == 1

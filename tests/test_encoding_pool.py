"""The encoding pool (rungs.yours.encoding): the same vectors as one process, bit for bit; the cap; a worker that
dies is a named error; no process outlives a run; and benchmarks/bench_encoding.py's run path on a tiny slice.

Cost: a few seconds — real USE workers (each starts in about a second), on a dozen short passages.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import sys
from pathlib import Path

import numpy as np
import pytest

from rungs.core.paths import BadSetting
from rungs.vectors import EncodingFailed, USEEncoder, VectorCache
from rungs.yours import encoding
from rungs.yours.index import index_folder

REPO = Path(__file__).resolve().parent.parent
TEXTS = [f"Les congés payés de l'année {2000 + i} se posent avant le {1 + i % 28} mai, dit la page {i}."
         for i in range(12)]


@pytest.fixture
def started(monkeypatch):
    """Every worker process the pool starts, by pid (spied on subprocess.Popen inside rungs.yours.encoding)."""
    pids = []
    real = encoding.subprocess.Popen

    def spied(*args, **kwargs):
        proc = real(*args, **kwargs)
        pids.append(proc.pid)
        return proc

    monkeypatch.setattr(encoding.subprocess, "Popen", spied)
    return pids


def gone(pid: int) -> bool:
    """True when no process has this pid any more (ended and reaped: not even a zombie)."""
    return not Path(f"/proc/{pid}").exists() if Path("/proc").is_dir() else _no_signal(pid)


def _no_signal(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_the_pool_gives_the_vectors_of_one_process_bit_for_bit(monkeypatch, started):
    monkeypatch.setenv("RUNGS_ENCODER_PROCESSES", "2")
    encoder = USEEncoder(threads=1)
    pooled = VectorCache(encoder, folder=None)
    encoding.encode(pooled, TEXTS, batch=4)  # three batches: over two workers
    assert len(started) == 2
    alone = np.concatenate([encoder.encode_documents(TEXTS[at:at + 4]) for at in range(0, 12, 4)])
    assert np.array_equal(pooled.vectors_of(TEXTS, save=False), alone)
    assert pooled.encoded == len(TEXTS)
    assert all(gone(pid) for pid in started)


def test_index_folder_encodes_on_the_pool_by_default_and_stores_the_same_vectors(tmp_path, monkeypatch, started):
    folder = tmp_path / "docs"
    folder.mkdir()
    for i, text in enumerate(TEXTS):
        (folder / f"page{i}.txt").write_text(text, encoding="utf-8")
    monkeypatch.delenv("RUNGS_ENCODER_PROCESSES", raising=False)
    monkeypatch.setattr(encoding, "processes", lambda: 2)  # the default, as on a two-core machine
    pooled = index_folder(folder, index=tmp_path / "a.sqlite", batch=4)
    assert len(started) == 2 and all(gone(pid) for pid in started)
    monkeypatch.setenv("RUNGS_ENCODER_PROCESSES", "1")
    monkeypatch.setattr(encoding, "processes", lambda: 1)
    alone = index_folder(folder, index=tmp_path / "b.sqlite", batch=4)
    assert len(started) == 2  # one process: no worker started
    a, b = (pooled.cache(USEEncoder()).vectors, alone.cache(USEEncoder()).vectors)
    assert sorted(a) == sorted(b) and len(a) == len(TEXTS)
    assert all(np.array_equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("cap, batches, workers", [("1", 3, 0), ("2", 3, 2), ("3", 3, 3), ("3", 2, 2), ("8", 1, 0)])
def test_the_cap_is_respected(monkeypatch, started, cap, batches, workers):
    monkeypatch.setenv("RUNGS_ENCODER_PROCESSES", cap)
    assert encoding.workers_for(USEEncoder(), 4 * batches, 4) == workers
    encoding.encode(VectorCache(USEEncoder(), folder=None), TEXTS[:4 * batches], batch=4)
    assert len(started) == workers and all(gone(pid) for pid in started)


def test_a_cap_that_is_not_a_count_is_refused_by_name(monkeypatch):
    monkeypatch.setenv("RUNGS_ENCODER_PROCESSES", "two")
    with pytest.raises(BadSetting, match="RUNGS_ENCODER_PROCESSES"):
        encoding.encode(VectorCache(USEEncoder(), folder=None), TEXTS, batch=4)


def test_a_worker_that_dies_is_a_named_error_and_no_worker_is_left(started):
    pool = encoding.EncoderPool(USEEncoder(threads=1), 2)
    batches = [TEXTS[at:at + 3] for at in range(0, 12, 3)]
    with pytest.raises(encoding.EncoderWorkerDied, match=r"worker 2 of 2 \(process \d+\) was killed by SIGKILL"):
        with pool:
            os.kill(pool.pids[1], signal.SIGKILL)
            list(pool.encode(batches))
    assert len(started) == 2 and all(gone(pid) for pid in started)


def test_a_workers_own_failure_comes_back_as_the_error_of_one_process(started):
    broken = USEEncoder(threads=1)
    broken.threads = "none"  # the worker's encoder cannot load: its EncodingFailed is sent back
    with pytest.raises(EncodingFailed, match="use-multilingual-v3 failed on a batch of 6") as caught:
        with encoding.EncoderPool(broken, 2) as pool:
            list(pool.encode([TEXTS[:6], TEXTS[6:]]))
    assert not isinstance(caught.value, encoding.EncoderWorkerDied)
    assert all(gone(pid) for pid in started)


def test_bench_encoding_runs_on_a_tiny_slice_and_writes_the_committed_shape(tmp_path, started):
    spec = importlib.util.spec_from_file_location("bench_encoding", REPO / "benchmarks" / "bench_encoding.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = tmp_path / "encoding.json"
    assert bench.main(["--limit", "8", "--batch", "4", "--rounds", "1", "--workers", "2", "--out", str(out)]) == 0
    got = json.loads(out.read_text(encoding="utf-8"))
    committed = json.loads((REPO / "benchmarks" / "results" / "encoding.json").read_text(encoding="utf-8"))
    assert set(got) == set(committed)
    assert got["pool_vectors_identical"] is True and got["passages"] == 8
    assert set(got["ratio_to_in_process"]) == set(bench.WAYS)
    assert all(gone(pid) for pid in started)
    sys.modules.pop("bench_encoding", None)


def test_index_help_quotes_the_pools_ratio_from_its_results():
    from rungs.tools import cli

    measured = json.loads((REPO / "benchmarks" / "results" / "encoding.json").read_text(encoding="utf-8"))
    assert cli.POOL_TIME == {"pool": f"{measured['ratio_to_in_process']['pool']:.1f}×",
                             "pool_measured": measured["measured"]}
    shown = " ".join(cli._parser("index").format_help().split())
    assert all(value in shown for value in cli.POOL_TIME.values())

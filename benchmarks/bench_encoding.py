"""Encoding a folder's passages three ways, in one interleaved run: one process, the pool, two BLAS threads.

Run:  .venv/bin/python benchmarks/bench_encoding.py --limit 1024      # what results/encoding.json holds; alone on the machine
      .venv/bin/python benchmarks/bench_encoding.py --limit 24 --batch 8 --out /tmp/e.json   # seconds: a check

The passages are ``benchmarks/folder/documents/``'s, cut as ``python -m rungs index`` cuts them (the folder
is indexed without vectors into a temporary folder; the committed one is never written). Each round
encodes all of them, from nothing (a cache in memory), three ways, in an order that turns each round so
that a drift of the machine touches every way alike:

- ``in_process``: USE with one BLAS thread in this process, batch after batch (the one-process path);
- ``pool``: ``rungs.yours.encoding.encode`` — one worker per physical core (``RUNGS_ENCODER_PROCESSES``),
  its start-up counted (it is what an index run pays);
- ``blas_threads``: USE with as many BLAS threads as workers, in this process.

The in-process encoders are loaded before the clock starts; the pool's workers load theirs on the clock.
Recorded: passages a second per way and round, the ratios of the medians to ``in_process``, whether the
pool's vectors are bitwise the in-process ones, the machine's load (``os.getloadavg()``) before and after,
and how honest the encoding bar's « time left » was on the pool: at a quarter, half and three quarters
of the passages, the time left it said (the notebook line's average rate, and tqdm's smoothed rate in a
terminal) over the time that was really left. Results: ``benchmarks/results/encoding.json``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")  # as run.sh sets them: one thread unless a way asks for more
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from rungs.core.documents import passage_text  # noqa: E402
from rungs.model.launch import physical_cores  # noqa: E402
from rungs.vectors import USEEncoder, VectorCache  # noqa: E402
from rungs.yours import encoding  # noqa: E402
from rungs.yours.index import index_folder  # noqa: E402

HERE = Path(__file__).resolve().parent
FOLDER = HERE / "folder" / "documents"
WAYS = ("in_process", "pool", "blas_threads")


def passages(limit: int | None) -> list[str]:
    """The folder's passages' texts, as an index run encodes them (distinct, in index order)."""
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "documents"
        shutil.copytree(FOLDER, copy)
        found = index_folder(copy, index=Path(scratch) / "index.sqlite", vectors=False)
        texts = list(dict.fromkeys(passage_text(p) for p in found.passages()))
        found.close()
    return texts[:limit] if limit else texts


class Watched:
    """A bar that remembers when each batch came, and what tqdm's smoothed rate said then."""

    def __init__(self, total: int):
        from tqdm.std import tqdm

        self.total, self.start, self.seen = total, time.perf_counter(), []
        self.tqdm = tqdm(total=total, file=io.StringIO(), mininterval=0, miniters=1)

    def update(self, n: int) -> None:
        self.tqdm.update(n)
        rate = self.tqdm.format_dict.get("rate")
        self.seen.append((time.perf_counter() - self.start, self.tqdm.n, rate))

    def honesty(self, end: float) -> dict:
        """At 1/4, 1/2, 3/4 of the passages: the time left said (two ways) over the time really left."""
        out = {}
        for share in (0.25, 0.5, 0.75):
            t, n, rate = next(s for s in self.seen if s[1] >= share * self.total)
            left, really = (self.total - n) * t / n, end - t
            out[f"{share:g}"] = {"said_average_over_real": round(left / really, 2) if really > 0 else None,
                                 "said_tqdm_over_real": round((self.total - n) / rate / really, 2)
                                 if rate and really > 0 else None}
        self.tqdm.close()
        return out


def run_way(way: str, texts: list[str], batch: int, workers: int, encoders: dict) -> tuple[float, dict, dict]:
    """Seconds to encode ``texts`` one way, the vectors made (by text), and (pool) the bar's honesty."""
    encoder = encoders["blas" if way == "blas_threads" else "one"]
    cache = VectorCache(encoder, folder=None)
    bar = Watched(len(texts)) if way == "pool" else None
    started = time.perf_counter()
    if way == "pool":
        before = os.environ.get("RUNGS_ENCODER_PROCESSES")
        os.environ["RUNGS_ENCODER_PROCESSES"] = str(workers)
        try:
            encoding.encode(cache, texts, batch=batch, bar=bar)
        finally:
            os.environ.pop("RUNGS_ENCODER_PROCESSES") if before is None else os.environ.update(
                RUNGS_ENCODER_PROCESSES=before)
    else:
        for at in range(0, len(texts), batch):
            cache.vectors_of(texts[at:at + batch], save=False)
    seconds = time.perf_counter() - started
    return seconds, cache.vectors, (bar.honesty(seconds) if bar else {})


def measure(texts: list[str], *, batch: int, rounds: int, workers: int) -> dict:
    encoders = {"one": USEEncoder(threads=1), "blas": USEEncoder(threads=workers)}
    for enc in encoders.values():
        enc.encode_documents(texts[:2])  # loaded before any clock starts
    load_before = os.getloadavg()
    per_second = {w: [] for w in WAYS}
    honesty, identical = [], True
    for r in range(rounds):
        order = WAYS[r % 3:] + WAYS[:r % 3]
        made = {}
        for way in order:
            seconds, made[way], said = run_way(way, texts, batch, workers, encoders)
            per_second[way].append(round(len(texts) / seconds, 2))
            if said:
                honesty.append(said)
            print(f"round {r + 1}, {way}: {len(texts) / seconds:.1f} passages/s", file=sys.stderr, flush=True)
        identical &= all(np.array_equal(made["pool"][k], made["in_process"][k]) for k in made["in_process"])
    medians = {w: round(statistics.median(v), 2) for w, v in per_second.items()}
    return {"passages": len(texts), "batch": batch, "rounds": rounds, "workers": workers,
            "physical_cores": physical_cores(), "cpus": os.cpu_count(),
            "load_before": [round(x, 2) for x in load_before], "load_after": [round(x, 2) for x in os.getloadavg()],
            "passages_per_s": per_second, "median_passages_per_s": medians,
            "ratio_to_in_process": {w: round(medians[w] / medians["in_process"], 2) for w in WAYS},
            "pool_vectors_identical": bool(identical), "time_left_honesty": honesty,
            "measured": time.strftime("%Y-%m-%d")}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="the first N passages only (a quick check)")
    parser.add_argument("--batch", type=int, default=256, help="passages a batch (index's default: 256)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", type=int, default=None, help="default: the physical cores (at least 2)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "encoding.json")
    args = parser.parse_args(argv)
    workers = args.workers or max(2, physical_cores())
    result = measure(passages(args.limit), batch=args.batch, rounds=args.rounds, workers=workers)
    args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result["ratio_to_in_process"]), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

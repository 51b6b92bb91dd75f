"""``python -m rungs search``, timed as a learner waits for it: whole processes, repeated, every rung beside FTS5.

Run:  .venv/bin/python benchmarks/bench_commands.py --label after
      .venv/bin/python benchmarks/bench_commands.py --label before --code /tmp/rungs-before   # an older rungs
      .venv/bin/python benchmarks/bench_commands.py --table                                   # the README's table

(``git archive COMMIT rungs | tar -x -C /tmp/rungs-before`` gives an older rungs.)

The folder is ``benchmarks/folder/documents/`` (79 files; ``benchmarks/folder/README.md``), copied to a
temporary folder and indexed there by ``python -m rungs index`` of the code measured (its own index
format, the default encoder, one thread) — the committed folder is never written. Then ``--rounds``
rounds: each round runs, for each of ``--questions`` questions spread over ``questions.jsonl``, the four
rungs one after the other (fts, bm25, vectors, hybrid), each a fresh process

    python -m rungs search QUESTION --index INDEX --rung RUNG

so that a drift of the machine's speed touches every rung alike; one warm-up round is not counted. Per
process: the wall seconds (a monotonic clock around it) and its CPU seconds (the operating system's
accounting of the finished child, ``resource.getrusage(RUSAGE_CHILDREN)``). Per rung: the median, the
least and the most of both, and the ratio to FTS5's wall time taken pair by pair (the same question in
the same round), its median: the figure the target « within 2× of FTS5 » is read on.

``--against DIR`` (another rungs, the one before a change) then searches a copy of the same index with
that code — each question, each rung, once, in its own cache folder (an older rungs writes its own
files) — and counts the questions whose printed results are the same, byte for byte: a change meant to
be faster must not change what a learner reads.

Python keeps its compiled modules as an installed package does (``PYTHONPYCACHEPREFIX`` points them
into the temporary folder: the checkout is not written). Results are merged into
``benchmarks/results/commands.json`` under ``--label``. Measured on a shared machine: read the
medians and the ratios, not one run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FOLDER = HERE / "folder"
RUNGS = ("fts", "bm25", "vectors", "hybrid")
#: One BLAS thread and nothing from a hub, as run.sh sets them; the rest of the environment is the caller's.
ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1",
       "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "PYTHONHASHSEED": "0"}


def questions(count: int) -> list[str]:
    """``count`` questions spread over the file (not its first few, all on one PDF)."""
    rows = [json.loads(line) for line in (FOLDER / "questions.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()]
    step = max(len(rows) // count, 1)
    return [r["question"] for r in rows[::step][:count]]


def timed(argv: list[str], env: dict, cwd: Path) -> tuple[float, float, str]:
    """One whole process: (wall s, cpu s, what it printed); a failure stops the benchmark with its stderr."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"{' '.join(argv[3:5])} failed: {done.stderr[-800:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


#: The default encoder loaded in a fresh process, timed inside it: what the vector rungs pay before their query.
LOAD = ("import time; from rungs.vectors import default_encoder; e = default_encoder(); t = time.perf_counter(); "
        "e.encode_queries(['x']); print(time.perf_counter() - t)")


def encoder_load(env: dict, cwd: Path, runs: int = 5) -> dict:
    """Loading the encoder (from its snapshot, written by the index run) and one query, median of fresh processes."""
    seconds = [float(subprocess.run([sys.executable, "-c", LOAD], env=env, cwd=cwd, capture_output=True, text=True,
                                    check=True).stdout) for _ in range(runs)]
    return spread(seconds)


def spread(values: list[float]) -> dict:
    return {"median": round(statistics.median(values), 3), "min": round(min(values), 3),
            "max": round(max(values), 3)}


def same_output(against: Path, work: Path, env: dict, qs: list[str], printed: dict) -> dict:
    """The same index searched by ``against``: how many questions print exactly what this code printed, per rung."""
    other = work / "against"
    other.mkdir()
    shutil.copy2(work / "index.sqlite", other / "index.sqlite")
    shutil.copytree(work / "index.vectors", other / "index.vectors")  # the counts file: ``against`` writes its own
    env = {**env, "PYTHONPATH": str(against), "XDG_CACHE_HOME": str(other / "xdg"),
           "PYTHONPYCACHEPREFIX": str(other / "pycache")}
    python = [sys.executable, "-m", "rungs", "search"]
    same = {rung: sum(hashlib.sha256(timed([*python, q, "--index", str(other / "index.sqlite"), "--rung", rung],
                                           env, other)[2].encode("utf-8")).hexdigest()[:16] == printed[rung][q]
                      for q in qs) for rung in RUNGS}
    return {"against": str(against), "questions": len(qs), "rungs": same}


def run(label: str, code: Path, rounds: int, count: int, against: Path | None = None) -> dict:
    work = Path(tempfile.mkdtemp(prefix="rungs-commands-"))
    try:
        shutil.copytree(FOLDER / "documents", work / "documents")
        env = {**os.environ, **ENV, "PYTHONPATH": str(code), "XDG_CACHE_HOME": str(work / "xdg"),
               "PYTHONPYCACHEPREFIX": str(work / "pycache")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # compiled once, as a learner's install keeps them
        index = work / "index.sqlite"
        python = [sys.executable, "-m", "rungs"]
        started = time.perf_counter()
        subprocess.run([*python, "index", str(work / "documents"), "--index", str(index)], env=env, cwd=work,
                       check=True, capture_output=True)
        indexing = time.perf_counter() - started
        qs = questions(count)
        walls = {r: [] for r in RUNGS}
        cpus = {r: [] for r in RUNGS}
        ratios = {r: [] for r in RUNGS}
        printed = {r: {} for r in RUNGS}
        for number in range(rounds + 1):  # round 0 warms up: the encoder's snapshot, the page cache
            for q in qs:
                this = {}
                for rung in RUNGS:
                    wall, cpu, out = timed([*python, "search", q, "--index", str(index), "--rung", rung], env, work)
                    this[rung] = wall
                    printed[rung][q] = hashlib.sha256(out.encode("utf-8")).hexdigest()[:16]
                    if number:
                        walls[rung].append(wall)
                        cpus[rung].append(cpu)
                for rung in RUNGS:
                    if number:
                        ratios[rung].append(this[rung] / this["fts"])
            print(f"round {number}{' (warm-up)' if not number else ''}: "
                  + ", ".join(f"{r} {statistics.median(walls[r] or [0]):.2f} s" for r in RUNGS), flush=True)
        result = {"label": label, "date": time.strftime("%Y-%m-%d"), "code": str(code), "rounds": rounds,
                "questions": qs, "index_s": round(indexing, 1), "cores": os.cpu_count(),
                "encoder_load_s": encoder_load(env, work),
                "rungs": {r: {"wall_s": spread(walls[r]), "cpu_s": spread(cpus[r]),
                              "vs_fts": round(statistics.median(ratios[r]), 2), "runs": len(walls[r]),
                              "output": printed[r]} for r in RUNGS}}
        if against is not None:
            result["same_output"] = same_output(against, work, env, qs, printed)
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


def table(results: dict) -> str:
    """One row per rung: each label's median wall (min–max), CPU, and ratio to FTS5; whether the output held."""
    labels = [k for k in ("before", "after") if k in results] + [k for k in results if k not in ("before", "after")]
    checked = next((results[label]["same_output"] for label in labels if "same_output" in results[label]), None)
    head = "| rung | " + " | ".join(f"{label}: wall s, median (min–max) | {label}: cpu s | {label}: × FTS5"
                                     for label in labels)
    lines = [head + (" | same output as before |" if checked else " |"),
             "|---|" + "---:|" * (3 * len(labels)) + ("---|" if checked else "")]
    for rung in RUNGS:
        cells = []
        for label in labels:
            r = results[label]["rungs"][rung]
            w = r["wall_s"]
            cells += [f"{w['median']:.2f} ({w['min']:.2f}–{w['max']:.2f})", f"{r['cpu_s']['median']:.2f}",
                      f"{r['vs_fts']:.2f}"]
        if checked:
            cells.append(f"{checked['rungs'][rung]}/{checked['questions']} questions")
        lines.append(f"| {rung} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--label", default="after")
    parser.add_argument("--code", type=Path, default=HERE.parent, help="the folder holding the rungs package")
    parser.add_argument("--rounds", type=int, default=5, help="counted rounds (one more warms up)")
    parser.add_argument("--questions", type=int, default=5, help="questions per round, spread over the file")
    parser.add_argument("--against", type=Path, default=None,
                        help="another rungs (the one before): the same index searched by it, outputs compared")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "commands.json")
    parser.add_argument("--table", action="store_true", help="print the table of the results file and stop")
    args = parser.parse_args()
    stored = json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
    if not args.table:
        stored[args.label] = run(args.label, args.code.resolve(), args.rounds, args.questions,
                                 args.against.resolve() if args.against else None)
        args.out.write_text(json.dumps(stored, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(table(stored))


if __name__ == "__main__":
    main()

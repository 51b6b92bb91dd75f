"""One model server for a room: how many N3 answers a minute, and how long each learner waits.

Run:  .venv/bin/python benchmarks/bench_room.py            (nothing else busy; ~10 minutes on 2 cores)
      .venv/bin/python benchmarks/bench_room.py --clients 1 4 8 --per-client 2 --threads 2

It starts ``python -m rungs.model serve`` on 127.0.0.1 (the room server, every
core), then plays 1, 4 and 8 learners at once: each is a thread with its own
``rungs.model.Client`` pointed at the server exactly as a learner's exported
OPENAI_BASE_URL and RUNGS_MODEL would, and asks ``rungs.rag.answer`` its
questions back to back (the handbook page that answers it plus pages around
it: four passages, as N3 sends). Measured per level: answers completed per
minute (first request sent to last answer back) and the median and slowest
wait (one question, from sending it to reading the answer). An answer that
rag refuses (ungrounded, unusable) is counted apart: it still cost the server.
"""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from rungs import rag# noqa: E402

from rungs import model as llm
from rungs.core.errors import RungsError
from rungs.lab.handbook import load_pages, load_questions# noqa: E402
from rungs.core.documents import page_text
from rungs.model import processes

RESULTS = REPO / "benchmarks" / "results" / "room.json"


def questions_with_passages(n: int) -> list[tuple[str, list[dict]]]:
    """``n`` handbook questions, each with four passages: the page(s) that answer it, then its neighbours."""
    pages = load_pages()
    order = [p["id"] for p in pages]
    by_id = {p["id"]: p for p in pages}
    chosen, seen = [], set()
    for q in load_questions():
        relevant = q.get("relevant") or {}
        page = max(relevant, key=relevant.get) if relevant else None
        if q.get("kind") != "lexical" or page not in by_id or page in seen:
            continue  # one question per page: no two learners share a prompt (no prefix cache luck)
        seen.add(page)
        at = order.index(page)
        ids = [page] + [i for i in order[at + 1:] + order[:at] if i != page][:3]
        chosen.append((q["question"], [{"id": i, "text": page_text(by_id[i])} for i in ids]))
        if len(chosen) == n:
            break
    return chosen


def play(base_url: str, clients: int, per_client: int, work: list) -> dict:
    """``clients`` learners at once, each asking ``per_client`` questions back to back."""
    waits, refused, lock = [], [], threading.Lock()

    def learner(i: int):
        client = llm.Client(base_url=base_url, model=llm.LOCAL_MODEL_NAME, timeout=1800, retries=0)
        for j in range(per_client):
            question, passages = work[(i * per_client + j) % len(work)]
            start = time.perf_counter()
            try:  # an answer unavailable or refused is counted, named below; the server did the work anyway
                rag.answer(question, passages, client, mode=rag.MODEL_MODE).raise_for_status()  # as measured
                outcome = None
            except RungsError as err:
                outcome = type(err).__name__
            with lock:
                waits.append(time.perf_counter() - start)
                if outcome:
                    refused.append(outcome)

    threads = [threading.Thread(target=learner, args=(i,)) for i in range(clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    return {"clients": clients, "answers": len(waits), "refused": refused, "seconds": elapsed,
            "per_minute": len(waits) / elapsed * 60, "median_wait": statistics.median(waits),
            "max_wait": max(waits)}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--clients", type=int, nargs="+", default=[1, 4, 8])
    p.add_argument("--per-client", type=int, default=2)
    p.add_argument("--questions", type=int, default=12)
    p.add_argument("--threads", type=int, default=None, help="the server's threads (default: every core)")
    a = p.parse_args()
    work = questions_with_passages(a.questions)
    port = processes.free_port()
    cmd = [sys.executable, "-m", "rungs.model", "serve", "--host", "127.0.0.1", "--port", str(port)]
    room = subprocess.Popen(cmd + (["--threads", str(a.threads)] if a.threads else []),
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=REPO)
    try:
        base_url = None
        for line in room.stdout:
            if line.startswith("export OPENAI_BASE_URL="):
                base_url = line.strip().split("=", 1)[1]
            if line.startswith("export RUNGS_MODEL="):
                break
        if not base_url:
            sys.exit("the room server did not start")
        threads = a.threads or os.cpu_count()
        print(f"room server {base_url}, {threads} thread(s); {len(work)} questions, 4 passages each")
        rag.answer(*work[-1], llm.Client(base_url=base_url, model=llm.LOCAL_MODEL_NAME, timeout=600),
                   mode=rag.MODEL_MODE)  # warm-up
        rows = []
        print(f"{'clients':>7} {'answers':>7} {'per min':>8} {'median wait s':>14} {'max wait s':>11}  refused")
        for n in a.clients:
            row = play(base_url, n, a.per_client if n > 1 else max(a.per_client, 4), work)
            rows.append(row)
            print(f"{n:>7} {row['answers']:>7} {row['per_minute']:8.2f} {row['median_wait']:14.1f} "
                  f"{row['max_wait']:11.1f}  {', '.join(row['refused']) or '-'}", flush=True)
        RESULTS.parent.mkdir(exist_ok=True)
        RESULTS.write_text(json.dumps({"measured": time.strftime("%Y-%m-%d"), "threads": threads, "rows": rows},
                                      indent=1))
    finally:
        room.send_signal(signal.SIGTERM)
        room.wait(30)


if __name__ == "__main__":
    main()

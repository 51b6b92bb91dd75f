"""A real folder, indexed and searched as a learner would: per rung, the right file and the right page.

Run:  .venv/bin/python benchmarks/bench_folder.py --label after
      .venv/bin/python benchmarks/bench_folder.py --label before --code /tmp/rungs-before   # an older rungs
      .venv/bin/python benchmarks/bench_folder.py --table                                   # the README's tables

The folder is ``benchmarks/folder/documents/`` (79 files from Debian, PyPI and npm
packages; ``benchmarks/folder/README.md`` says what each is and its licence), copied
to a temporary folder and indexed there with ``index_folder`` (the default encoder,
USE, one thread), in two steps so that reading and encoding are timed apart. The
questions are ``benchmarks/folder/questions.jsonl``: known-item questions written by
reading the files, each judging the file (and, for a PDF, the page) that holds its
answer; « unanswerable » ones judge nothing and are not scored.

Per rung (``fts``, ``bm25``, ``vectors``, ``hybrid``, each as ``FolderIndex.retriever``
gives it, defaults untouched), on the answerable questions:

- **file**: documents (passages rolled up by their best), MRR@10 and how many have a
  judged file in the top 5;
- **page** (the questions whose file is a PDF): passages, MRR@10 of the first passage
  of a judged file whose cited page (``hit["page"]``) is the judged page, and how many
  have one in the top 5;
- **query time in one process** (median and 95th percentile over the questions, the
  retriever already built);
- **command time**: ``python -m rungs search QUESTION --rung R`` in a fresh process,
  median over ``--commands`` questions (what a learner waits for at a terminal).

``--ask N`` (alone, it keeps every other result of ``--label``) indexes the folder the same way and
times ``python -m rungs ask QUESTION`` in a fresh process (the default rung and mode, the bundled
model on one thread, its server already started: starting it is once a session, not once a
question) on N answerable questions spread over the file and one unanswerable, then on the
bundled folder (``notebooks/data/my-documents``, the two questions of ``ask --help`` and one
more; what ``ask --help`` quotes): the wall time,
the model's seconds and the seconds before the first sentence, as ``ask`` prints them, and the
answer's first line (timed, not marked: the marks are the handbook's, in « N3's modes »).

``--code DIR`` imports rungs from DIR instead of this checkout (``git archive COMMIT rungs
| tar -x -C DIR`` gives an older one), so the same script measures before and after.
Results are merged into ``benchmarks/results/folder.json`` under ``--label``.
"""

from __future__ import annotations

import os

# One BLAS thread, as `python -m rungs search` runs (rungs.tools.cli.ONE_THREAD): set before numpy is imported.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FOLDER = HERE / "folder"
RUNGS = ("fts", "bm25", "vectors", "hybrid")


def questions() -> list[dict]:
    out = []
    for line in (FOLDER / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            out.append(json.loads(line))
    return out


def first_rank(hits, good) -> int | None:
    return next((rank for rank, h in enumerate(hits, start=1) if good(h)), None)


def score(ranks: list) -> dict:
    """MRR@10 and top-5 count of a list of ranks (None: not in the top 10)."""
    return {"n": len(ranks), "mrr": round(sum(1 / r for r in ranks if r) / max(len(ranks), 1), 3),
            "top5": sum(1 for r in ranks if r and r <= 5)}


def measure_rung(index, rung: str, qs: list[dict]) -> dict:
    retriever = index.retriever(rung)
    retriever.search("warm up", limit=1)  # the encoder, the first SQLite page: not a question's time
    per, times = [], []
    for q in qs:
        judged = set(q["judgments"])
        started = time.perf_counter()
        docs = retriever.search(q["question"], limit=10)
        times.append(time.perf_counter() - started)
        passages = retriever.search(q["question"], limit=10, level="passage")
        row = {"id": q["id"], "kind": q["kind"], "file": first_rank(docs, lambda h: h.id in judged)}
        pages = q.get("pages") or {}
        if pages:
            row["page"] = first_rank(passages, lambda h: pages.get(h.get("path")) is not None
                                     and h.get("page") == pages[h.get("path")])
            top = passages[0] if passages else None
            row["top_passage"] = [top.get("path"), top.get("page")] if top else None
        per.append(row)
    times.sort()
    out = {"file": score([r["file"] for r in per]),
           "page": score([r["page"] for r in per if "page" in r]),
           "query_ms": {"median": round(1000 * statistics.median(times), 1),
                        "p95": round(1000 * times[int(0.95 * (len(times) - 1))], 1)},
           "questions": per}
    for kind in ("lexical", "paraphrase"):
        out[f"file_{kind}"] = score([r["file"] for r in per if r["kind"] == kind])
        out[f"page_{kind}"] = score([r["page"] for r in per if r["kind"] == kind and "page" in r])
    return out


def command_times(code: Path, index_path: Path, qs: list[dict], count: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code), "XDG_CACHE_HOME": str(index_path.parent / "xdg")}
    out = {}
    for rung in RUNGS:
        seconds = []
        for q in qs[:count]:
            started = time.perf_counter()
            # cwd: the index's folder, never a checkout (``-m`` would import the rungs found there first)
            done = subprocess.run([sys.executable, "-m", "rungs", "search", q["question"], "--index",
                                   str(index_path), "--rung", rung], env=env, capture_output=True, text=True,
                                  cwd=index_path.parent)
            seconds.append(time.perf_counter() - started)
            if done.returncode:
                raise SystemExit(f"search --rung {rung} failed: {done.stderr[-500:]}")
        out[rung] = {"median_s": round(statistics.median(seconds), 2), "max_s": round(max(seconds), 2),
                     "runs": len(seconds)}
    return out


@contextlib.contextmanager
def copied(source: Path):
    """A throwaway copy of ``source`` as ``WORK/documents`` (never the committed files), removed afterwards."""
    work = Path(tempfile.mkdtemp(prefix="rungs-folder-"))
    try:
        shutil.copytree(source, work / "documents")
        os.environ["XDG_CACHE_HOME"] = str(work / "xdg")  # « the last index » is noted there, not in yours
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def said_cost(last: str) -> dict:
    """``ask``'s last line read back: « (… ; 2 calls · 812 prompt tokens (300 reused) · 40 written · 12.3 s,
    5.1 s before the first sentence) », or « no model call » (the gate alone said no)."""
    if "no model call" in last:
        return {"calls": 0, "model_s": 0.0, "first_sentence_s": None}
    said = re.search(r"(\d+) calls? · .*? · ([\d.]+) s(?:, ([\d.]+) s before the first sentence)?\)$", last)
    if not said:
        raise SystemExit(f"ask's last line does not say its cost as Cost prints it: {last[-200:]!r}")
    return {"calls": int(said.group(1)), "model_s": float(said.group(2)),
            "first_sentence_s": float(said.group(3)) if said.group(3) else None}


def ask_times(code: Path, index_path: Path, qs: list[dict]) -> dict:
    """``python -m rungs ask`` per question in a fresh process: wall, model and first-sentence seconds."""
    env = {**os.environ, "PYTHONPATH": str(code), "XDG_CACHE_HOME": str(index_path.parent / "xdg")}
    rows = []
    for q in qs:
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "rungs", "ask", q["question"], "--index", str(index_path)],
                              env=env, capture_output=True, text=True, cwd=index_path.parent)
        wall = time.perf_counter() - started
        if done.returncode:
            raise SystemExit(f"ask failed on {q['id']}: {done.stderr[-500:]}")
        said = said_cost(done.stdout.strip().splitlines()[-1])
        answer = next((line.split(":", 1)[1].strip() for line in done.stdout.splitlines()  # the one printer's head
                       if line.startswith(("answer:", "no answer:"))), "")
        rows.append({"id": q["id"], "answerable": bool(q["judgments"]), "wall_s": round(wall, 1),
                     **said, "answer": answer[:200]})
        print(f"ask {q['id']}: {wall:.1f} s ({said['model_s']} s model, {said['calls']} call(s))", flush=True)
    walls = [r["wall_s"] for r in rows]
    firsts = [r["first_sentence_s"] for r in rows if r["first_sentence_s"] is not None]
    return {"median_s": round(statistics.median(walls), 1), "max_s": max(walls), "min_s": min(walls),
            "model_median_s": round(statistics.median(r["model_s"] for r in rows), 1),
            "first_sentence_median_s": round(statistics.median(firsts), 1) if firsts else None,
            "runs": len(rows), "date": time.strftime("%Y-%m-%d"), "questions": rows}


#: The bundled folder's questions for ``ask``: the two of ``ask --help`` and one more, each answered there.
BUNDLED_QUESTIONS = [{"id": "help-1", "question": "Avant quelle date faut-il poser ses congés d'été ?", "judgments": 1},
                     {"id": "help-2", "question": "Combien de jours de RTT ?", "judgments": 1},
                     {"id": "taxi", "question": "Qui paie mon taxi ?", "judgments": 1}]


def ask_only(code: Path, count: int) -> dict:
    """Index each folder (reading and encoding), then time ``ask``: this folder's questions, the bundled one's."""
    sys.path.insert(0, str(code))
    from rungs.yours.index import index_folder

    answerable = [q for q in questions() if q["judgments"]]
    step = max(len(answerable) // count, 1)  # spread over the file: not its first few, all on one PDF
    chosen = answerable[::step][:count] + [q for q in questions() if not q["judgments"]][:1]
    out = {}
    for name, source, qs in (("ask", FOLDER / "documents", chosen),
                             ("ask_bundled", code / "notebooks" / "data" / "my-documents", BUNDLED_QUESTIONS)):
        with copied(source) as work:
            index_folder(work / "documents", index=work / "index.sqlite").close()
            out[name] = ask_times(code, work / "index.sqlite", qs)
    return out


def run(label: str, code: Path, commands: int) -> dict:
    sys.path.insert(0, str(code))
    from rungs.yours.index import index_folder

    with copied(FOLDER / "documents") as work:
        folder = work / "documents"
        started = time.perf_counter()
        index = index_folder(folder, index=work / "index.sqlite", vectors=False)  # reading alone
        reading = time.perf_counter() - started
        report = index.report
        started = time.perf_counter()
        index.update()  # then encoding alone: every passage, the cache being empty
        encoding = time.perf_counter() - started
        result = {"label": label, "date": time.strftime("%Y-%m-%d"), "code": str(code),
                  "index": {"seconds": round(reading + encoding, 1), "reading_s": round(reading, 1),
                            "encoding_s": round(encoding, 1),
                            "passages_per_s": round(report.passages / encoding, 1), "documents": report.documents,
                            "passages": report.passages, "not_indexed": len(report.skipped),
                            "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)},
                  "report": str(report)}
        answerable = [q for q in questions() if q["judgments"]]
        result["questions"] = {"answerable": len(answerable),
                               "with_page": sum(1 for q in answerable if q.get("pages"))}
        result["rungs"] = {rung: measure_rung(index, rung, answerable) for rung in RUNGS}
        index.close()
        result["commands"] = command_times(code, work / "index.sqlite", answerable, commands)
        return result


def table(results: dict) -> str:
    labels = [k for k in ("before", "after") if k in results] + [k for k in results if k not in ("before", "after")]
    lines = ["| rung | " + " | ".join(f"{x} {label}" for label in labels
                                       for x in ("file MRR", "file top 5", "page MRR", "page top 5")) + " |",
             "|---|" + "---|" * (4 * len(labels))]
    for rung in RUNGS:
        cells = []
        for label in labels:
            r = results[label]["rungs"][rung]
            cells += [f"{r['file']['mrr']:.3f}", f"{r['file']['top5']}/{r['file']['n']}",
                      f"{r['page']['mrr']:.3f}", f"{r['page']['top5']}/{r['page']['n']}"]
        lines.append(f"| {rung} | " + " | ".join(cells) + " |")
    lines += ["", "| rung | " + " | ".join(f"{label}: command s (median) | {label}: in-process ms (median / p95)"
                                           for label in labels) + " |", "|---|" + "---|" * (2 * len(labels))]
    for rung in RUNGS:
        cells = []
        for label in labels:
            c, q = results[label]["commands"][rung], results[label]["rungs"][rung]["query_ms"]
            cells += [f"{c['median_s']:.2f}", f"{q['median']:.1f} / {q['p95']:.1f}"]
        lines.append(f"| {rung} | " + " | ".join(cells) + " |")
    lines += ["", "| | " + " | ".join(labels) + " |", "|---|" + "---|" * len(labels)]
    for key, name in (("seconds", "index s"), ("reading_s", "of which reading, s"),
                      ("encoding_s", "of which encoding, s"), ("passages_per_s", "passages encoded a second"),
                      ("documents", "documents"), ("passages", "passages"), ("not_indexed", "not indexed"),
                      ("peak_mb", "peak MB")):
        lines.append(f"| {name} | " + " | ".join(str(results[label]["index"].get(key, "—")) for label in labels)
                     + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--label", default="after")
    parser.add_argument("--code", type=Path, default=HERE.parent, help="the folder holding the rungs package")
    parser.add_argument("--commands", type=int, default=5, help="questions timed as commands, per rung")
    parser.add_argument("--ask", type=int, default=0, help="time `ask` on this many questions (and one "
                        "unanswerable), keeping the label's other results")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "folder.json")
    parser.add_argument("--table", action="store_true", help="print the tables of the results file and stop")
    args = parser.parse_args()
    stored = json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
    if args.table:
        print(table(stored))
        return
    if args.ask:
        stored.setdefault(args.label, {}).update(ask_only(args.code.resolve(), args.ask))
    else:
        stored[args.label] = {**run(args.label, args.code.resolve(), args.commands),
                              **{k: v for k, v in stored.get(args.label, {}).items() if k.startswith("ask")}}
    args.out.write_text(json.dumps(stored, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(table(stored))


if __name__ == "__main__":
    main()

"""Which fusion should a folder nobody tuned get (``hybrid.YOUR_DOCUMENTS``)? Candidates × collections × kinds.

What it is for: the folder default is used on collections nobody measured, so it must serve both kinds of
question — worded like their page (lexical) and asked in one's own words (paraphrase) — and never do
measurably worse than BM25 alone anywhere. Each collection is indexed as a learner's folder
(``index_folder``, the default encoder) and searched as ``python -m rungs search --passages --limit 4`` does:
the four best passages of each candidate; the measure is answer@4 (a passage of a page that answers, grade 2;
for a PDF, of the judged page).

Collections: the handbook's 70 pages copied into a folder (its 110 lexical and 75 paraphrase questions),
``benchmarks/folder`` (79 real files; its lexical and paraphrase questions) and, with ``--gimp DIR``, GIMP's
user manual in French (Debian's ``gimp-help-fr``; its known-item questions, headings: lexical only). Candidates: BM25 alone, vectors
alone, the fusions in ``CANDIDATES`` (RRF, convex, and ``method="lend"``: the keyword leg lends the share of
its weight its best hit did not match to the vector leg).

The protocol: a candidate is eligible only if the paired test (``metrics.paired_test``, Holm over the
collections × kinds) never finds it worse than BM25 on any cell (all questions); among the eligible,
``tuning.choose`` decides on the development half (each collection × kind split evenly) against the
shipped default, and scores the choice once on the final half.

    apt-get download gimp-help-fr && dpkg -x gimp-help-fr_*.deb /tmp/gimp                 # once, outside the repository
    PYTHONPATH=. .venv/bin/python benchmarks/bench_folder_default.py --gimp /tmp/gimp/usr/share/gimp/2.0/help/fr
    PYTHONPATH=. .venv/bin/python benchmarks/bench_folder_default.py --command . --label before   # through the command
    PYTHONPATH=. .venv/bin/python benchmarks/bench_folder_default.py --table    # the README's tables

Cost: indexing both folders (a minute, the vectors cached after), then one search per question per candidate
(a few seconds in all). Writes ``benchmarks/results/folder_default.json`` with every question's top four.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from rungs import hybrid  # noqa: E402
from rungs.lab import metrics as ev, tuning  # noqa: E402
from rungs.lab.handbook import load_questions  # noqa: E402

OUT = HERE / "results" / "folder_default.json"
KINDS = ("lexical", "paraphrase")
#: name → (rung, fusion knobs); the keyword leg matches any word, as YOUR_DOCUMENTS' keyword leg does.
CANDIDATES = {
    "BM25": ("bm25", {}),
    "vectors": ("vectors", {}),
    "rrf k=60, vector 0.25 (YOUR_DOCUMENTS before)": ("hybrid", {"method": "rrf", "k": 60, "leg_weights": {"keyword": 1.0, "vector": 0.25}}),
    "rrf k=60, vector 1": ("hybrid", {"method": "rrf", "k": 60, "leg_weights": {"keyword": 1.0, "vector": 1.0}}),
    "rrf k=5, vector 2 (ANSWER_RETRIEVER)": ("hybrid", {"method": "rrf", "k": 5, "leg_weights": {"keyword": 1.0, "vector": 2.0}}),
    "convex, vector 1": ("hybrid", {"method": "convex", "leg_weights": {"keyword": 1.0, "vector": 1.0}}),
    "convex, vector 0.25": ("hybrid", {"method": "convex", "leg_weights": {"keyword": 1.0, "vector": 0.25}}),
    "lend k=60, vector 0.25": ("hybrid", {"method": "lend", "k": 60, "leg_weights": {"keyword": 1.0, "vector": 0.25}}),
    "lend k=60, vector 1": ("hybrid", {"method": "lend", "k": 60, "leg_weights": {"keyword": 1.0, "vector": 1.0}}),
    "lend k=5, vector 1": ("hybrid", {"method": "lend", "k": 5, "leg_weights": {"keyword": 1.0, "vector": 1.0}}),
}
BASELINE, SHIPPED = "BM25", "rrf k=60, vector 0.25 (YOUR_DOCUMENTS before)"


def handbook_collection(work: Path) -> tuple[Path, list[dict]]:
    """The handbook's pages as files of a folder; its answerable lexical and paraphrase questions."""
    folder = work / "handbook"
    shutil.copytree(HERE.parent / "handbook" / "pages", folder)
    qs = [{"id": f"handbook/{q['id']}", "question": q["question"], "kind": q["kind"],
           "relevant": {f"{page}.md": g for page, g in q["relevant"].items()}}
          for q in load_questions() if q["kind"] in KINDS and q["relevant"]]
    return folder, qs


def folder_collection(work: Path) -> tuple[Path, list[dict]]:
    """``benchmarks/folder``: its answerable questions; a PDF's answer counts on its judged page only."""
    folder = work / "folder"
    shutil.copytree(HERE / "folder" / "documents", folder)
    qs = []
    for line in (HERE / "folder" / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        q = json.loads(line) if line.strip() else None
        if q and q["kind"] in KINDS and q["judgments"]:
            qs.append({"id": f"folder/{q['id']}", "question": q["question"], "kind": q["kind"],
                       "relevant": dict(q["judgments"]), "pages": q.get("pages") or {}})
    return folder, qs


def gimp_collection(work: Path, source: Path) -> tuple[Path, list[dict]]:
    """GIMP's user manual in French (Debian's gimp-help-fr, ``apt-get download`` then ``dpkg -x``: its
    ``usr/share/gimp/2.0/help/fr``) with known-item questions (a heading, its page judged): lexical only."""
    from rungs.lab.questions import known_item_questions
    from rungs.yours.index import index_folder

    folder = work / "gimp"
    shutil.copytree(source, folder)
    index = index_folder(folder, index=work / "gimp-questions.sqlite", vectors=False)
    known = known_item_questions(index, per_document=1, seed=0)
    index.close()
    return folder, [{"id": f"gimp/{q['id']}", "question": q["question"], "kind": "lexical",
                     "relevant": q["relevant"]} for q in known]


def page_of(hit, q: dict) -> str:
    """A passage as the judgments name it: its file, or (a PDF judged on a page) its file on the wrong page."""
    path = hit.get("path")
    wanted = q.get("pages", {}).get(path)
    return path if wanted is None or hit.get("page") == wanted else f"{path} (page {hit.get('page')})"


def measure(index, qs: list[dict]) -> dict:
    """candidate → question id → the four passages' pages, as the folder's retriever ranks them."""
    out = {}
    for name, (rung, knobs) in CANDIDATES.items():
        retriever = index.retriever(rung, level="passage", **knobs)
        out[name] = {q["id"]: [page_of(h, q) for h in retriever.search(q["question"], limit=4)] for q in qs}
    return out


def cells(questions: list[dict]) -> dict[str, list[dict]]:
    return {c: [q for q in questions if q["cell"] == c] for c in sorted({q["cell"] for q in questions})}


def scores(runs: dict, questions: list[dict]) -> dict:
    metric = ev.METRICS["answer@4"]
    return {name: {q["id"]: metric(list(dict.fromkeys(run[q["id"]])), q["relevant"]) for q in questions}
            for name, run in runs.items()}


def against_bm25(per: dict, questions: list[dict]) -> dict:
    """candidate → cell → paired test against BM25, Holm over the cells of that candidate."""
    out = {}
    for name in CANDIDATES:
        tests = {cell: ev.paired_test({q["id"]: per[BASELINE][q["id"]] for q in qs},
                                      {q["id"]: per[name][q["id"]] for q in qs})
                 for cell, qs in cells(questions).items()}
        adjusted = ev.holm({c: t["p"] for c, t in tests.items()})
        out[name] = {c: {"mean": t["mean_b"], "diff": t["diff"], "p": t["p"], "p_holm": adjusted[c],
                         "worse": t["diff"] < 0 and adjusted[c] < 0.05} for c, t in tests.items()}
    return out


def protocol(runs: dict, questions: list[dict], eligible: list[str]) -> dict:
    """``tuning.choose`` over the eligible candidates, the shipped default as the default, kinds = cells."""
    by_text = {q["question"]: q for q in questions}
    run_fn = lambda text, candidate: list(dict.fromkeys(runs[candidate][by_text[text]["id"]]))
    grid = {"candidate": [SHIPPED] + [c for c in eligible if c != SHIPPED]}
    qs = [{"id": q["id"], "question": q["question"], "relevant": q["relevant"], "kind": q["cell"]} for q in questions]
    got = tuning.choose(grid, run_fn, qs, default={"candidate": SHIPPED}, metric="answer@4")
    return {"chosen": got["best"]["candidate"], "kept_default": got["kept_default"],
            "sweep_best": got["sweep_best"]["candidate"], "cv_gain": got["cv"]["gain"], "cv_p": got["cv"]["p"],
            "final": {"chosen": got["final"]["chosen"], "default": got["final"]["default"],
                      "p": got["final"]["test"]["p"]}, "development_questions": got["development_questions"],
            "final_questions": got["final_questions"]}


def run(gimp: Path | None = None) -> dict:
    from rungs.yours.index import index_folder

    work = Path(tempfile.mkdtemp(prefix="rungs-folder-default-"))
    try:
        runs, questions = {name: {} for name in CANDIDATES}, []
        makers = [("handbook", handbook_collection), ("folder", folder_collection)]
        if gimp:
            makers.append(("gimp", lambda work: gimp_collection(work, gimp)))
        for collection, make in makers:
            folder, qs = make(work)
            index = index_folder(folder, index=work / f"{collection}.sqlite")
            for name, got in measure(index, qs).items():
                runs[name].update(got)
            index.close()
            questions += [{**q, "cell": f"{collection}/{q['kind']}"} for q in qs]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    per = scores(runs, questions)
    tests = against_bm25(per, questions)
    eligible = [name for name in CANDIDATES if not any(t["worse"] for t in tests[name].values())]
    missed = sorted(q["id"] for q in questions if not any(per[name][q["id"]] for name in CANDIDATES))
    return {"date": time.strftime("%Y-%m-%d"), "measure": "answer@4 over the four passages of search --passages",
            "candidates": {name: {"rung": r, **k} for name, (r, k) in CANDIDATES.items()},
            "tests": tests, "eligible": eligible, "protocol": protocol(runs, questions, eligible),
            "no_candidate_finds": missed,
            # hits: answer@4 per candidate, in the order of "candidates"; the four pages only where none finds it
            "questions": [{"id": q["id"], "cell": q["cell"], "question": q["question"],
                           "hits": [int(per[name][q["id"]]) for name in CANDIDATES],
                           **({"top4": {name: runs[name][q["id"]] for name in CANDIDATES}} if q["id"] in missed else {})}
                          for q in questions]}


def command_shares(code: Path) -> dict:
    """``python -m rungs index`` of the handbook as a folder, then ``search --passages --limit 4`` per question, in a
    fresh process each, with the rungs found in ``code`` (its own YOUR_DOCUMENTS): the answer@4 share per kind."""
    import os
    import re
    import subprocess

    work = Path(tempfile.mkdtemp(prefix="rungs-folder-command-"))
    env = {**os.environ, "PYTHONPATH": str(code), "XDG_CACHE_HOME": str(work / "xdg")}
    rungs = lambda *a: subprocess.run([sys.executable, "-m", "rungs", *a], env=env, capture_output=True, text=True,
                                      cwd=work, check=True).stdout
    try:
        folder, qs = handbook_collection(work)
        rungs("index", str(folder), "--index", str(work / "index.sqlite"))
        rows = {}
        for q in qs:
            shown = rungs("search", q["question"], "--passages", "--limit", "4", "--index", str(work / "index.sqlite"))
            pages = re.findall(r"^ *\d+ +[\d.]+ +(\S+?)#\d+", shown, flags=re.M)
            rows[q["id"]] = int(any(q["relevant"].get(p, 0) >= 2 for p in pages[:4]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"per_question": rows, **{kind: round(sum(rows[q["id"]] for q in qs if q["kind"] == kind)
                                                 / sum(1 for q in qs if q["kind"] == kind), 3) for kind in KINDS}}


def disguise(k: float = hybrid.RRF_K, weight: float = 0.25) -> int:
    """The largest keyword rank r whose 1/(k + r) still beats the vector leg's rank 1, weight/(k + 1)."""
    r = 1
    while 1 / (k + r + 1) > weight / (k + 1):
        r += 1
    return r


def table(results: dict) -> str:
    cellnames = sorted(next(iter(results["tests"].values())))
    counts = {c: sum(1 for q in results["questions"] if q["cell"] == c) for c in cellnames}
    lines = ["| candidate | " + " | ".join(f"{c} ({counts[c]})" for c in cellnames) + " | eligible |",
             "|---|" + "---:|" * len(cellnames) + "---|"]
    for name, row in results["tests"].items():
        shown = [f"{row[c]['mean']:.3f}" + ("" if name == BASELINE else f" (p_Holm {ev.p_text(row[c]['p_holm'])})")
                 for c in cellnames]
        lines.append(f"| {name} | " + " | ".join(shown) + f" | {'yes' if name in results['eligible'] else 'no'} |")
    p = results["protocol"]
    lines += ["", f"chosen: {p['chosen']} (kept the default: {p['kept_default']}; development best "
              f"{p['sweep_best']}, out-of-fold gain {p['cv_gain']:+.3f}, p = {ev.p_text(p['cv_p'])}); final half "
              f"({p['final_questions']}): {p['final']['chosen']:.3f} against {p['final']['default']:.3f}, "
              f"p = {ev.p_text(p['final']['p'])}",
              f"no candidate finds ({len(results['no_candidate_finds'])}): {', '.join(results['no_candidate_finds'])}",
              *[f"without the GIMP manual: chosen {w['protocol']['chosen']}, final half {w['protocol']['final']['chosen']:.3f} "
                f"against {w['protocol']['final']['default']:.3f}, p = {ev.p_text(w['protocol']['final']['p'])}"
                for w in [results.get("without_gimp")] if w],
              *[f"through `python -m rungs search --passages --limit 4`, handbook as a folder, {label}: lexical "
                f"{row['lexical']:.3f}, paraphrase {row['paraphrase']:.3f}" for label, row in results.get("command", {}).items()],
              f"RRF k = {hybrid.RRF_K}, vector leg 0.25: a keyword rank r beats the vector leg's rank 1 for every "
              f"r ≤ {disguise()}"]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--table", action="store_true", help="print the tables of the results file and stop")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--command", type=Path, help="the folder holding a rungs package: time nothing, measure the "
                        "handbook's shares through `python -m rungs search` with it, stored under --label")
    parser.add_argument("--label", default="after")
    parser.add_argument("--gimp", type=Path, help="the unpacked gimp-help-fr's usr/share/gimp/2.0/help/fr: a third "
                        "collection, known-item questions")
    args = parser.parse_args(argv)
    if args.command:
        stored = json.loads(args.out.read_text(encoding="utf-8"))
        stored.setdefault("command", {})[args.label] = command_shares(args.command.resolve())
        args.out.write_text(json.dumps(stored, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print({k: v for k, v in stored["command"][args.label].items() if k != "per_question"})
        return 0
    if not args.table:
        stored = json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
        # The command's shares and the earlier two-collection decision are kept: a rerun does not measure them.
        result = {**run(args.gimp), **{k: stored[k] for k in ("without_gimp", "command") if k in stored}}
        args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(table(json.loads(args.out.read_text(encoding="utf-8"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())

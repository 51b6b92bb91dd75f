"""How research mode's ``fusion_k`` was chosen: the fusion of several queries' rankings, measured without a model.

Research mode searches every query of its plan (``per_query`` hits each), fuses
the rankings by RRF with ``fusion_k``, and keeps the best ``max_sources`` pages,
at most ``per_section`` of one section (``rungs.research.loop``). Which pages it
gathers is decided before any model writes a word, so the constant can be
measured without one: the loop itself is run (``research.run``, research mode,
one round) with a scripted plan — the queries below — and a scripted report,
and what it gathered is scored against the handbook's judgments.

The queries, written by code (no stored plan exists in ``benchmarks/results``):
for each handbook question, the question itself, its content words (French stop
words dropped), and — with four content words or more — each half of them:
what a plan's short queries look like. Two sets of judged questions:

- **single** — the 139 answerable handbook questions, one topic each;
- **compound** — the same questions dealt, with a fixed seed, into questions of
  three parts from three different sections (« …? ; …? ; …? », each part one
  topic of the plan, as notebook 05 §4 does by hand), judgments the union of the
  parts': 46 questions, each handbook question in one of them.

Each set is measured at research mode's shipped ``per_query`` (3 hits a query)
and at 8 (quick mode's, and notebook 05 §4's): the more hits each query brings,
the more pages several queries share, and the more the constant decides.

Metrics: ``answer@gathered`` (a page graded 2 — one that answers — is among the
pages gathered), ``recall@gathered`` (the share of the pages graded 1 or 2
gathered), ``answering@gathered`` (the share of the pages graded 2 gathered: for
a compound question, about the share of its parts that can be answered). The
choice is ``rungs.lab.tuning.choose``'s protocol: each set split once into a
development half and a final half; repeated 5-fold cross-validation on the
development half, where the default (``hybrid.RRF_K`` = 60, the value shipped
unmeasured) gives way only to a gain that passes the corrected t-test; the
final half scored once for the setting chosen. Single questions decide on
``answer@gathered``, compound ones on ``answering@gathered``.

    .venv/bin/python benchmarks/bench_research_fusion.py        # writes results/research_fusion.json

Cost: about 30 s of CPU on 2 cores (the hybrid's encoder, one search per query and limit, cached).
"""

from __future__ import annotations

import json
import random
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rungs import hybrid, research  # noqa: E402
from rungs.core.retrieval import Retriever  # noqa: E402
from rungs.core.text import tokenise  # noqa: E402
from rungs.lab import metrics as ev  # noqa: E402
from rungs.lab import tuning  # noqa: E402
from rungs.lab.handbook import load_pages, load_questions  # noqa: E402
from rungs.model import ScriptedClient  # noqa: E402

RESULT = Path(__file__).resolve().parent / "results" / "research_fusion.json"
#: The grid; the default first (a tie goes to it, then to the grid's order).
GRID = [hybrid.RRF_K, 0, 1, 2, 5, 10, 20, 30, 100, 1000]
#: The research mode's other bounds, as shipped: what the fusion is cut to.
BOUNDS = {k: research.DEFAULTS["research"][k] for k in ("per_query", "per_section", "max_sources")}
#: The fusion is measured at the shipped per_query and at quick mode's 8 (notebook 05 §4 turns it up to 8):
#: the more hits each query brings, the more pages several queries share, and the more the constant decides.
PER_QUERY = [BOUNDS["per_query"], research.DEFAULTS["quick"]["per_query"]]
AT = research.MAX_SOURCES  # the gathered list is at most max_sources long: every metric reads all of it
METRICS = {"answer@gathered": lambda r, rel: ev.success(r, rel, AT, grade=2),
           "recall@gathered": lambda r, rel: ev.recall(r, rel, AT),
           "answering@gathered": lambda r, rel: (  # r: the ids gathered, at most max_sources
               sum(1 for d in r[:AT] if rel.get(d, 0) >= 2) / max(1, sum(g >= 2 for g in rel.values())))}


class Cached(Retriever):
    """The loop's retriever, each (query, limit) searched once: the fusion is what varies, not the searches."""

    name = "cached"

    def __init__(self, inner):
        super().__init__()
        self.inner, self.memo = inner, {}

    def _search(self, query, limit, knobs):
        if (query, limit) not in self.memo:
            self.memo[(query, limit)] = self.inner.search(query, limit=limit)
        return self.memo[(query, limit)]


def queries(question: str) -> list[str]:
    """The question, its content words, and each half of them (four content words or more)."""
    words = [w for w in re.findall(r"\w[\w’'-]*", question) if tokenise(w, stopwords=True)]
    out = [question, " ".join(words)]
    if len(words) >= 4:
        half = len(words) // 2
        out += [" ".join(words[:half]), " ".join(words[half:])]
    return list(dict.fromkeys(q for q in out if q.strip()))


def compound(questions: list[dict], section_of, seed: int = 0, parts: int = 3) -> list[dict]:
    """Questions of ``parts`` parts from different sections, each handbook question used once (fixed seed)."""
    pool = sorted(questions, key=lambda q: q["id"])
    random.Random(seed).shuffle(pool)
    out = []
    while len(pool) >= parts:
        group, rest = [pool.pop(0)], []
        while pool and len(group) < parts:
            q = pool.pop(0)
            taken = {section_of(x) for x in group}
            (group if section_of(q) not in taken else rest).append(q)
        pool = rest + pool
        if len(group) < parts:
            break
        relevant = {}
        for q in group:
            for page, grade in q["relevant"].items():
                relevant[page] = max(grade, relevant.get(page, 0))
        out.append({"id": "+".join(q["id"] for q in group), "question": " ; ".join(q["question"] for q in group),
                    "kind": "compound", "relevant": relevant, "parts": [q["question"] for q in group]})
    return out


def gather(plan: list[list[str]], pages, retriever, fusion_k, per_query) -> list[str]:
    """What research mode gathers for this plan (one topic per list of queries), run through the loop itself."""
    topics = {"topics": [{"title": f"partie {i + 1}", "todos": todos} for i, todos in enumerate(plan)]}
    out = research.run("question", pages=pages, retriever=retriever, mode="research", rounds=1, follow_ups=False,
                       fusion_k=fusion_k, client=ScriptedClient([json.dumps(topics), "Réponse [1]."]),
                       **{**BOUNDS, "per_query": per_query})
    return list(out.trail.gathered)


def protocol(name, questions, plans, pages, retriever, decide_on, per_query) -> dict:
    run = lambda text, fusion_k: gather(plans[text], pages, retriever, fusion_k, per_query)
    started = time.perf_counter()
    result = tuning.choose({"fusion_k": GRID}, run, questions, default={"fusion_k": hybrid.RRF_K},
                           metric=decide_on, metrics=METRICS, folds=5, repeats=10, seed=0)
    # Every metric on every question, for the record (read after the choice, not used to make it); and k = 0
    # against the default on all of them, paired, for the metric that decides.
    whole = {k: ev.evaluate(lambda t, k=k: run(t, k), questions, METRICS) for k in GRID}
    zero, default = (ev.per_question(lambda t, k=k: run(t, k), questions, METRICS[decide_on]) for k in (0, hybrid.RRF_K))
    against = ev.paired_test(default, zero)
    cv = result["cv"]
    out = {"questions": len(questions), "development": result["development_questions"],
           "final_questions": result["final_questions"], "decides_on": decide_on,
           "chosen": result["best"]["fusion_k"], "kept_default": result["kept_default"],
           "development_best": result["sweep_best"]["fusion_k"],
           "cv": {"gain": cv["gain"], "ci95": list(cv["ci95"]), "p": cv["p"],
                  "picks": [{"fusion_k": p["setting"]["fusion_k"], "folds": p["folds"]} for p in cv["picks"]]},
           "development_means": {str(row["fusion_k"]): {m: round(float(row[m]), 4) for m in METRICS}
                                 for row in result["sweep"].to_dict("records")},
           "final": {"chosen": result["final"]["chosen"], "default": result["final"]["default"],
                     "p": result["final"]["test"]["p"], "diff": result["final"]["test"]["diff"]},
           "all_questions": {str(k): {m: round(v[m], 4) for m in METRICS} for k, v in whole.items()},
           "k0_against_default_all_questions": {"diff": against["diff"], "p": against["p"],
                                                "ci95": list(against.get("ci95", ())),
                                                "improved": against["improved"], "degraded": against["degraded"]},
           "seconds": round(time.perf_counter() - started, 1)}
    print(f"\n{name}, per_query {per_query}: {len(questions)} questions, decided on {decide_on}")
    print(f"  chosen fusion_k = {out['chosen']} ({'default kept' if out['kept_default'] else 'moved'}); "
          f"development best {out['development_best']}; out-of-fold gain {cv['gain']:+.3f} "
          f"[{cv['ci95'][0]:+.3f}, {cv['ci95'][1]:+.3f}], p = {cv['p']:.3f}")
    print(f"  final half ({out['final_questions']}): chosen {out['final']['chosen']:.3f} against the default "
          f"{out['final']['default']:.3f} (p = {out['final']['p']:.3f})")
    print(f"  k = 0 against {hybrid.RRF_K} on every question ({decide_on}): {against['diff']:+.3f}, p = {against['p']:.3f}")
    print("  every question:  k  " + "  ".join(f"{m:>18}" for m in METRICS))
    for k in GRID:
        print(f"  {k:>17}  " + "  ".join(f"{whole[k][m]:>18.3f}" for m in METRICS))
    return out


def notebook_example(pages, retriever) -> dict:
    """Notebook 05 §4's three-part question and its three queries, per_query 8, max_sources 3: gathered per k."""
    qs = ["indemnité de télétravail", "congés payés acquis par mois", "remboursement d'un taxi"]
    topics = {"topics": [{"title": q, "todos": [q]} for q in qs]}
    out = {}
    for k in (hybrid.RRF_K, 0, 5, 10, 20):
        got = research.run("question", pages=pages, retriever=retriever, mode="research", rounds=1, per_query=8,
                           max_sources=3, per_section=12, fusion_k=k, follow_ups=False,
                           client=ScriptedClient([json.dumps(topics), "Réponse [1]."]))
        out[str(k)] = list(got.trail.gathered)
    return out


def main() -> int:
    pages, judged = load_pages(), [q for q in load_questions() if q["relevant"]]
    section = {p["id"]: p.get("section") or "" for p in pages}
    # A question's section: its best page's (the first graded 2, by id), so the parts of a compound differ.
    section_of = lambda q: section[min(p for p, g in q["relevant"].items() if g == max(q["relevant"].values()))]
    retriever = Cached(research.default_retriever(pages))
    single = [{**q} for q in judged]
    plans = {q["question"]: [queries(q["question"])] for q in single}
    triples = compound(judged, section_of)
    plans.update({q["question"]: [queries(part) for part in q["parts"]] for q in triples})
    result = {"grid": GRID, "default": hybrid.RRF_K, "bounds": BOUNDS, "metrics": list(METRICS),
              "queries_per_question": {"single": sum(len(plans[q["question"]][0]) for q in single) / len(single),
                                       "compound": sum(sum(map(len, plans[q["question"]])) for q in triples)
                                       / len(triples)}}
    for per_query in PER_QUERY:
        result[f"per_query={per_query}"] = {
            "single": protocol("single", single, plans, pages, retriever, "answer@gathered", per_query),
            "compound": protocol("compound (three parts)", triples, plans, pages, retriever, "answering@gathered",
                                 per_query)}
    result["notebook_05_section_4"] = notebook_example(pages, retriever)
    RESULT.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"\nnotebook 05 §4 (per_query 8, max_sources 3): {result['notebook_05_section_4']}")
    print(f"written {RESULT.relative_to(Path.cwd()) if RESULT.is_relative_to(Path.cwd()) else RESULT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

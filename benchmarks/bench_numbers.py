"""Which reader of French number words should rungs use?  Measured on spans read by hand, not guessed.

The gold (``benchmarks/data/numbers_gold.jsonl``, one span a line: ``source``, ``doc``, ``text``, ``span``,
``at``, ``values``, ``kind``) holds number words of the handbook and of ``benchmarks/folder`` (each in
its sentence, as the package reads it) and hard cases written for what those two lack; ``held_out``
marks folder spans drawn at random (seed 29) after the fixes proposed in issue 29 were written, so
mostly « un »/« une »: the mix of real text. ``values`` is
what a careful reader reads in the span, in order: « vingt et un » [21], « deux jours et demi » [2.5],
« un mois » [1], « un salarié » [] (an article), « neuf » in « un ordinateur neuf » [] (an adjective),
« premier » [1] (an ordinal), « les huit premières heures » [8].

The readers, each applied to the whole sentence:

    figures          rungs' figure reader (``rungs.grounding.figures``, before that ``rungs.core.figures``):
                     the numbers in the values of ``figures(text)``
    answers          the answer mark's reader (``rungs.lab.answers.answer_words``): its numeric words
    text2num         ``text_to_num.alpha2digit(text, "fr")`` as shipped (a lone number up to 3 is left
                     as a word: « deux jours » stays « deux jours »), then the numbers in its text
    text2num-0       the same with ``threshold=0`` (every lone number is read, « un » included)

What a reader reads *in the span* is what it reads in the sentence less what it reads in the same
sentence with the span replaced by a neutral word (« ce »): numbers written in digits nearby cancel
out. A span is right when that difference is exactly ``values`` (as a multiset, to 0.001).

Measured: accuracy per reader, per source and per kind; every error with what was read; the spans one
reader gets right and another wrong, both ways; a paired sign-flip test per span against ``figures``
(``rungs.lab.metrics.paired_test``); speed (sentences a second, one thread, best of three).

Usage (text2num is not a rungs dependency: ``.venv/bin/python -m pip install text2num``):

    .venv/bin/python benchmarks/bench_numbers.py            # measure, write results/numbers.json
    .venv/bin/python benchmarks/bench_numbers.py --tables   # the README's tables, from the results
    .venv/bin/python benchmarks/bench_numbers.py --errors text2num   # a reader's errors, from the results
    .venv/bin/python benchmarks/bench_numbers.py --candidate /tmp/figures.py  # a patched copy beside them

Cost: a few seconds.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys
import time
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
GOLD = HERE / "data" / "numbers_gold.jsonl"
RESULT = HERE / "results" / "numbers.json"
BASELINE = "figures"
#: What replaces the span: a determiner no reader takes for a number.
NEUTRAL = "ce"
_DIGITS = re.compile(r"\d+(?:[.,]\d+)?")


def _numbers(text: str) -> list[float]:
    return [float(n.replace(",", ".")) for n in _DIGITS.findall(text)]


def _figures():
    try:
        from rungs.grounding import figures as module
    except ImportError:  # before issue 29 the reader lived in core
        from rungs.core import figures as module
    return lambda text: [n for f in module.figures(text) for n in _numbers(f.value)]


def _answers():
    from rungs.lab.answers import answer_words
    return lambda text: [float(w) for w in answer_words(text) if re.fullmatch(r"\d+(?:\.\d+)?", w)]


def _text2num(threshold: float | None):
    def make():
        from text_to_num import alpha2digit
        if threshold is None:
            return lambda text: _numbers(alpha2digit(text, "fr"))
        return lambda text: _numbers(alpha2digit(text, "fr", threshold=threshold))
    return make


def _candidate(path: str):
    """The figure reader of a file (a patched copy of ``rungs/grounding/figures.py``), measured beside the rest."""
    def make():
        import importlib.util
        # Named inside rungs.grounding, so that a copy's relative imports (« from ..core.text import … ») resolve.
        spec = importlib.util.spec_from_file_location("rungs.grounding.candidate_figures", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return lambda text: [n for f in module.figures(text) for n in _numbers(f.value)]
    return make


#: name → (a function making the reader, the distribution it comes from)
READERS = {
    "figures": (_figures, None),
    "answers": (_answers, None),
    "text2num": (_text2num(None), "text2num"),
    "text2num-0": (_text2num(0), "text2num"),
}


def load_gold() -> list[dict]:
    gold = [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines() if line.strip()]
    for i, g in enumerate(gold):
        assert g["text"][g["at"]:g["at"] + len(g["span"])] == g["span"], g
        g["key"] = f"{i:03d} {g['source']} {g['doc']} « {g['span']} »"
    return gold


def read_span(read, item: dict) -> list[float]:
    """What ``read`` reads in the span: in the sentence, less in the sentence without the span (may be < 0)."""
    text, at, span = item["text"], item["at"], item["span"]
    full = collections.Counter(round(x, 3) for x in read(text))
    rest = collections.Counter(round(x, 3) for x in read(text[:at] + NEUTRAL + text[at + len(span):]))
    out = []
    for value in sorted(set(full) | set(rest)):
        n = full[value] - rest[value]
        out += [value] * n if n > 0 else [-value - 1e6] * -n  # a number lost elsewhere shows as a negative
    return out


def right(got: list[float], want: list[float]) -> bool:
    return sorted(got) == sorted(round(v, 3) for v in want)


def speed(read, texts: list[str]) -> dict:
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        for text in texts:
            read(text)
        best = min(best, time.perf_counter() - t)
    return {"seconds": best, "sentences_per_s": len(texts) / best}


def version(dist: str | None) -> str | None:
    from importlib import metadata
    try:
        return metadata.version(dist) if dist else None
    except metadata.PackageNotFoundError:
        return None


def run() -> dict:
    from rungs.lab.metrics import paired_test
    gold = load_gold()
    texts = [g["text"] for g in gold]
    readers, marks, results, skipped = {}, {}, {}, {}
    for name, (make, dist) in READERS.items():
        try:
            readers[name] = make()
        except ImportError as err:
            skipped[name] = f"not installed: {err}"
            continue
        got = {g["key"]: read_span(readers[name], g) for g in gold}
        marks[name] = {g["key"]: right(got[g["key"]], g["values"]) for g in gold}
        by = lambda field: {v: sum(marks[name][g["key"]] for g in gold if g[field] == v)
                            / sum(g[field] == v for g in gold) for v in sorted({g[field] for g in gold})}
        held = [marks[name][g["key"]] for g in gold if g.get("held_out")]
        results[name] = {"accuracy": sum(marks[name].values()) / len(gold), "right": sum(marks[name].values()),
                         "held_out": sum(held) / len(held) if held else None,
                         "held_out_right": sum(held), "by_source": by("source"), "by_kind": by("kind"),
                         "speed": speed(readers[name], texts),
                         "version": version(dist),
                         "errors": [{"key": g["key"], "text": g["text"], "want": g["values"], "read": got[g["key"]]}
                                    for g in gold if not marks[name][g["key"]]]}
    if BASELINE in marks:
        base = {k: float(v) for k, v in marks[BASELINE].items()}
        for name in marks:
            if name != BASELINE:
                test = paired_test(base, {k: float(v) for k, v in marks[name].items()}, trials=10_000, seed=0)
                results[name]["paired_vs_figures"] = {k: test[k] for k in ("n", "diff", "p", "ci95", "improved",
                                                                            "degraded", "equal")}
    versus = {f"{a} right, {b} wrong": [k for k in marks[a] if marks[a][k] and not marks[b][k]]
              for a in marks for b in marks if a != b}
    meta = {"gold": {"spans": len(gold), "held_out": sum(bool(g.get("held_out")) for g in gold),
                     "by_source": dict(collections.Counter(g["source"] for g in gold)),
                     "by_kind": dict(collections.Counter(g["kind"] for g in gold))},
            "python": sys.version.split()[0], "skipped": skipped, "date": time.strftime("%Y-%m-%d")}
    return {"meta": meta, "readers": results, "versus": versus}


def tables(data: dict) -> str:
    rows = data["readers"]
    sources = sorted({s for r in rows.values() for s in r["by_source"]})
    kinds = sorted({k for r in rows.values() for k in r["by_kind"]}, key=lambda k: -data["meta"]["gold"]["by_kind"][k])
    out = ["| reader | version | right | " + " | ".join(sources) + " | held out | vs figures (Δ, p) | sentences/s |",
           "|---|---|---|" + "---|" * len(sources) + "---|---|---|"]
    for name, r in rows.items():
        pair = r.get("paired_vs_figures")
        vs = f"{pair['diff']:+.3f}, p {p_text(pair['p'])}" if pair else "—"
        out.append(f"| {name} | {r['version'] or '(rungs)'} | {r['right']}/{data['meta']['gold']['spans']} "
                   f"({r['accuracy']:.1%}) | " + " | ".join(f"{r['by_source'][s]:.1%}" for s in sources)
                   + f" | {r['held_out_right']}/{data['meta']['gold']['held_out']} | {vs} "
                   f"| {r['speed']['sentences_per_s']:,.0f} |")
    out += ["", "| kind (spans) | " + " | ".join(rows) + " |", "|---|" + "---|" * len(rows)]
    for k in kinds:
        out.append(f"| {k} ({data['meta']['gold']['by_kind'][k]}) | "
                   + " | ".join(f"{r['by_kind'][k]:.0%}" for r in rows.values()) + " |")
    return "\n".join(out)


def p_text(p: float) -> str:
    from rungs.lab.metrics import p_text as text
    return text(p)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", action="store_true", help="print the README's tables from the results and stop")
    ap.add_argument("--errors", metavar="READER", help="list a reader's errors from the results and stop")
    ap.add_argument("--candidate", metavar="FILE.py", help="also measure figures() of this file (a patched copy of "
                    "rungs/grounding/figures.py), named « candidate »; the results file is then not written")
    a = ap.parse_args()
    if a.candidate:
        READERS["candidate"] = (_candidate(a.candidate), None)
    if a.tables or a.errors:
        data = json.loads(RESULT.read_text(encoding="utf-8"))
        if a.errors:
            for e in data["readers"][a.errors]["errors"]:
                print(f"{e['key']}: want {e['want']}, read {e['read']}")
        else:
            print(tables(data))
        return
    data = run()
    if a.candidate:  # the committed results hold the package's readers and the peers only
        for e in data["readers"]["candidate"]["errors"]:
            print(f"candidate wrong: {e['key']}: want {e['want']}, read {e['read']}".replace("\n", " "))
    else:
        RESULT.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(tables(data))


if __name__ == "__main__":
    main()

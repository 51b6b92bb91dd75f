"""Property-based tests of the doors a notebook cell opens directly: readers, the lab's helpers, the display.

Issue 32 found its raw exceptions where a learner calls a public function with what they happen to have
— ``file_format("x.md")``, a FIFO named ``*.txt``, ``max_bytes=nan``, ``ranking_table([{"id": "a"}])``,
``evaluate(run, <generator>)``, ``heatmap`` of an empty sweep. This file closes the class rather than
the cases: every public function of ``rungs.yours.readers`` (and its format modules), of ``rungs.lab``
(but ``answers``, the answer half's) and of ``rungs.core.display`` is *discovered* from its module, as
scikit-learn's estimator checks discover estimators, and each is fed generated arguments — mostly
wrong shapes (every numeric edge, wrong types, text from the whole of Unicode, dicts missing their
keys, generators, files that are FIFOs, sockets, link loops, folders, bytes of any kind). The one
invariant: a result, or a ``RungsError`` (a ``BadArgument`` naming the argument). A function the
discovery finds and no door covers fails ``test_every_public_function_has_a_door``, so a new helper
cannot escape the suite.

Bounded, as the rest of the property suites: the profiles of ``test_properties`` (``ci``, the default:
derandomised, twice ``n`` examples; ``nightly``: randomised, twenty times ``n``), selected by
``RUNGS_HYPOTHESIS_PROFILE``, and on top a deadline per example (``DEADLINE``) and an alarm (``HANG``)
that turns a call that never returns — a blocking open — into a failure instead of a stuck run::

    python -m pytest tests/test_properties_shapes.py -o addopts=""                                 # CI, ~1 min
    RUNGS_HYPOTHESIS_PROFILE=nightly python -m pytest tests/test_properties_shapes.py -o addopts=""  # nightly
"""

import contextlib
import datetime
import importlib
import inspect
import json
import io
import os
import pkgutil
import shutil
import signal
import socket
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - the backend first: no window, ever
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from rungs import lab  # noqa: E402
from rungs.core import display  # noqa: E402
from rungs.core.errors import RungsError  # noqa: E402
from rungs.core.retrieval import Hit  # noqa: E402
from rungs.grounding import Answer, Quote, Status  # noqa: E402
from rungs.lab import (cacm, capstone, compare, folder_default, handbook, judges, metrics, noticing,  # noqa: E402
                       questions, selective, sending, stored, tuning)
from rungs.model import ScriptedClient  # noqa: E402
from rungs.yours import readers  # noqa: E402
from test_properties import EDGES, JUNK, QUESTION, RANKING, RELEVANT, SCALE, TEXT, WORDY, maybe, outcome  # noqa: E402

#: The longest one example may take (a PDF parsed, a figure drawn), and the alarm that stops a call that hangs.
DEADLINE, HANG = datetime.timedelta(seconds=10), 30


def bounded(n: int):
    """``n`` examples scaled by the profile (2n in CI, 20n nightly), each under ``DEADLINE``."""
    return settings(max_examples=n * SCALE, deadline=DEADLINE)


class Hung(AssertionError):
    """A call that did not return within ``HANG`` seconds (a blocking open, a loop that never ends)."""


@contextlib.contextmanager
def alarm(seconds: int = HANG):
    def ring(*_):
        raise Hung(f"no answer after {seconds} s")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# ---------------------------------------------------------------- a folder of everything a path can be

ZOO = Path(tempfile.mkdtemp(prefix="rungs-shapes-"))
REPO = Path(__file__).resolve().parent.parent
BUNDLED = REPO / "notebooks" / "data" / "my-documents"


def _zoo() -> dict[str, Path]:
    """Once per run: regular files of every format, and every kind of name that is not a file to read."""
    made = {"notes.md": b"# Conges\n\nLes conges payes.\n", "page.html": b"<h1>Badge</h1><p>Le badge.</p>",
            "texte.txt": "Réunion\n\nLe lundi.".encode("cp1252"), "vide.md": b"", "x.xlsx": b"PK\x03\x04",
            "sans-extension": b"texte", "casse.docx": b"PK\x03\x04 pas un zip", "casse.pdf": b"%PDF-1.4 rien"}
    for name, data in made.items():
        (ZOO / name).write_bytes(data)
    for name, source in (("conges.pdf", BUNDLED / "conges" / "conges-payes.pdf"),
                         ("mutuelle.docx", BUNDLED / "avantages" / "mutuelle.docx")):
        shutil.copyfile(source, ZOO / name)
    (ZOO / "dossier.md").mkdir()
    os.mkfifo(ZOO / "tube.txt")  # a blocking open waits forever for a writer
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(ZOO / "prise.md"))
    os.symlink("boucle.md", ZOO / "boucle.md")
    os.symlink("disparu.md", ZOO / "lien-mort.md")
    os.symlink("/etc/hostname", ZOO / "dehors.txt")
    with open(os.fsencode(ZOO) + b"/r\xe9sum\xe9.md", "wb") as f:  # a Latin-1 name
        f.write(b"# R\xc3\xa9sum\xc3\xa9\n")
    names = [p.name for p in ZOO.iterdir()] + ["absent.md", "n" * 300 + ".md", "a\0b.md", "dossier.md/x.md"]
    return {n: ZOO / n for n in names}


PLACES = _zoo()
PATH = st.one_of(st.sampled_from(sorted(PLACES)).map(PLACES.get),
                 st.sampled_from(sorted(PLACES)).map(lambda n: str(PLACES[n])), JUNK, TEXT)
FOLDER = st.one_of(st.none(), st.just(ZOO), st.just(str(ZOO)), st.just(ZOO / "dossier.md"), st.just(Path("/usr")),
                   st.just(Path("relatif")), JUNK)
MAX_BYTES = maybe(st.integers(1, 10**8), st.one_of(EDGES, JUNK, st.integers(-3, 0)))
FORMATS_BYTES = st.one_of(st.binary(max_size=300), TEXT.map(lambda t: t.encode("utf-8", "surrogatepass")),
                          st.sampled_from(sorted(PLACES)).map(lambda n: _bytes_of(PLACES[n])),
                          st.tuples(st.sampled_from(["conges.pdf", "mutuelle.docx"]), st.integers(0, 5000),
                                    st.integers(0, 255)).map(lambda t: _flipped(*t)))


def _bytes_of(path: Path) -> bytes:
    try:
        return path.read_bytes() if path.is_file() and not path.is_symlink() else b""
    except (OSError, ValueError):
        return b""


def _flipped(name: str, at: int, byte: int) -> bytes:
    data = bytearray((ZOO / name).read_bytes())
    data[at % len(data)] = byte
    return bytes(data)


# ---------------------------------------------------------------- the doors: one per public function

def _q():
    return maybe(st.lists(QUESTION, max_size=4, unique_by=lambda q: q["id"]).flatmap(
        lambda qs: st.sampled_from([qs, iter(qs), (q for q in qs), tuple(qs)])), JUNK)


RUN = maybe(st.sampled_from([lambda q: ["a", "b"], lambda q: list("fedcba"), lambda q: []]),
            st.one_of(st.just(lambda q: None), st.just(lambda q: [1.5]), st.just({"q1": ["a"]}), JUNK))
SCORES = maybe(st.dictionaries(st.sampled_from(["q1", "q2", "q3"]), maybe(st.floats(0, 1), st.floats(allow_nan=False)),
                               max_size=3), st.one_of(st.dictionaries(st.text(max_size=2), st.one_of(EDGES, JUNK),
                                                                      max_size=3), JUNK))
HIT = st.one_of(st.builds(Hit, id=st.sampled_from(["a", "b", "c"]), score=st.floats(-2, 2), title=WORDY,
                          parts=st.one_of(st.none(), st.dictionaries(st.sampled_from(["badge", "congés"]),
                                                                     st.floats(0, 2), max_size=2)),
                          why=st.sampled_from(["", "une cosinus"]),
                          extra=st.fixed_dictionaries({}, optional={"path": st.just("a.md"), "page": st.integers(1, 9),
                                                                    "section": WORDY, "snippet": WORDY})),
                st.fixed_dictionaries({"id": st.sampled_from(["a", "b"]), "score": st.floats(0, 2)},
                                      optional={"title": WORDY, "parts": JUNK, "why": JUNK}),
                st.fixed_dictionaries({}, optional={"id": JUNK, "score": JUNK, "title": JUNK}), JUNK)
HITS = maybe(st.lists(HIT, max_size=4), JUNK)
ROW = st.one_of(st.fixed_dictionaries({"system": st.sampled_from(["base", "other"]), "mean": st.floats(0, 1),
                                       "diff": st.none()}),
                st.fixed_dictionaries({"system": st.just("other"), "mean": st.floats(0, 1), "diff": st.floats(-1, 1),
                                       "ci95": st.tuples(st.floats(-1, 0), st.floats(0, 1)), "p": st.floats(0, 1),
                                       "p_holm": st.floats(0, 1), "improved": st.integers(0, 5),
                                       "degraded": st.integers(0, 5)}),
                st.dictionaries(st.sampled_from(["system", "mean", "diff", "ci95", "p"]), JUNK, max_size=4), JUNK)
FRAME = st.one_of(
    st.lists(st.fixed_dictionaries({"k1": st.sampled_from([0.9, 1.2, 2.0]), "b": st.sampled_from([0.4, 0.75])},
                                   optional={"MRR": maybe(st.floats(0, 1), JUNK), "match": st.just("any")}),
             max_size=5).map(pd.DataFrame),
    st.just(pd.DataFrame()), JUNK)
COLUMN = maybe(st.sampled_from(["k1", "b", "MRR"]), st.one_of(st.sampled_from(["match", "nope", ""]), JUNK))
GRID = maybe(st.dictionaries(st.sampled_from(["k1", "b"]), st.lists(st.sampled_from([0.5, 1.2, 0.75]), min_size=1,
                                                                    max_size=2), min_size=1, max_size=2), JUNK)
DOCUMENTS = maybe(st.lists(st.fixed_dictionaries({"id": st.sampled_from(["a", "b", 3])},
                                                 optional={"title": maybe(WORDY, JUNK),
                                                           "headings": maybe(st.lists(WORDY, max_size=3), JUNK)}),
                           max_size=4, unique_by=lambda d: str(d["id"])), JUNK)

#: Two readers' verdicts: equal or unequal lengths, labels of any hashable kind, or junk (a dict, a list in a list).
VERDICTS = maybe(st.lists(st.sampled_from(["right", "wrong", "partly", 1, True]), max_size=6),
                 st.one_of(st.lists(st.lists(st.integers(), max_size=1), min_size=1, max_size=2), JUNK))

#: Three questions' signals (two a question), their 0/1 rights and the signals' names, or junk.
SIGNAL_ROWS = maybe(st.lists(st.lists(st.floats(-3, 3), min_size=2, max_size=2), min_size=3, max_size=3),
                    st.one_of(st.lists(st.lists(st.floats(), max_size=3), max_size=3), JUNK))
RIGHTS = maybe(st.lists(st.sampled_from([0, 1, True, False]), min_size=3, max_size=3), JUNK)
SIGNAL_NAMES = maybe(st.just(["gate", "overlap"]), st.one_of(st.just(["gate"]), JUNK))


class Fixed:
    """A retriever double for the capstone's doors: the same hits (or junk) for any question, at any level."""

    def __init__(self, hits):
        self.hits = hits

    def search(self, text, limit=10, level="document"):
        return self.hits


RETRIEVER = maybe(st.one_of(RANKING, HITS).map(Fixed), JUNK)
PAGED = maybe(st.lists(st.tuples(QUESTION, maybe(st.dictionaries(st.sampled_from(["a.md", "a"]), st.integers(1, 9),
                                                                 max_size=2), JUNK)).map(
    lambda t: {**t[0], "pages": t[1]}), max_size=3, unique_by=lambda q: q["id"]), JUNK)
IDS = maybe(st.lists(st.sampled_from(["a", "b", "c", "q1", "q9"]), max_size=3), JUNK)


#: Answers a notebook cell may hold (a quote that asks, a page sent or not, a cut note, a withheld sentence, odd parts).
ANSWERS = maybe(st.sampled_from([
    Answer("q", Status.ANSWERED, "Oui ? 2,5 jours", sent={"a": "congés 2,5 jours", "b": "badge"}, cited=("a", "b"),
           quotes=(Quote("a", "Comment ?"), Quote("b", "badge", claim="repas payés 3 €")),
           notes=("synthesis: the report was cut by its token budget (400 tokens)",),
           trace={"withheld": [{"text": "Un taxi", "reason": "unfinished: cut"}, "junk"]}),
    Answer("q", Status.NO_ANSWER, "je ne sais pas", sent={"a": "jours", "c": 5}),
    Answer("q", Status.REFUSED, reason="x", trace={"withheld": "not a list"}),
    Answer("q", Status.ANSWERED, "x", sent={"a": "x"}, cited=("a",), quotes=(Quote(5, None),))]), JUNK)


def yes(p_yes: float) -> dict:
    import math

    top = {"Oui": math.log(p_yes), "Non": math.log(1 - p_yes)}
    return {"text": "Oui", "logprobs": [{"token": "Oui", "logprob": top["Oui"], "top": top}]}


def _run_of(setting_run):
    return lambda q, **setting: ["a", "b"] if setting.get("k1", 0) > 1 else ["b", "a"]


def _stored(d):
    path = ZOO / "answers.jsonl"
    path.write_bytes(d.draw(st.one_of(st.binary(max_size=80), st.sampled_from([
        b'{"config": "notebook 03", "id": "q1", "correct": true, "support": {"p": 0.7}}\n',
        b'{"config": "notebook 03", "id": "q1"}\n', b"[1, 2]\n", b'{"config": 5}\n', b"not json\n"]))))
    return d.draw(maybe(st.just(path), st.one_of(st.just(ZOO / "absent.jsonl"), st.just(ZOO / "dossier.md"), JUNK)))


#: A stored measurement of the folder default in its smallest shape, and the same with one part damaged.
FOLDER_RUNS = {"candidates": {"BM25": {}, "vectors": {}}, "eligible": ["BM25"], "protocol": {"chosen": "BM25"},
               "tests": {n: {"a/lexical": {"mean": 0.5, "diff": 0.0, "p_holm": 1.0}} for n in ("BM25", "vectors")},
               "questions": [{"id": "a/q1", "cell": "a/lexical", "question": "congés ?", "hits": [1, 0]},
                             {"id": "a/q2", "cell": "a/lexical", "question": "RTT ?", "hits": [0, 0]}]}


def _folder_runs(d):
    part = d.draw(st.sampled_from([None, "candidates", "tests", "eligible", "questions", "protocol"]))
    if part is None:
        return d.draw(maybe(st.just(FOLDER_RUNS), JUNK))
    damaged = {**FOLDER_RUNS, part: d.draw(st.one_of(JUNK, st.just({"id": {}}), st.just([{"hits": [True, 0.5]}])))}
    return damaged


def _folder_file(d):
    path = ZOO / "folder_default.json"
    path.write_bytes(d.draw(st.one_of(st.binary(max_size=80), st.sampled_from([
        json.dumps(FOLDER_RUNS).encode(), b'{"candidates": {}}', b"[1, 2]", b"not json"]))))
    return d.draw(maybe(st.just(path), st.one_of(st.just(ZOO / "absent.json"), st.just(ZOO), JUNK)))


# Each door: draw its arguments from ``d`` (hypothesis' data), return the call and the names a refusal may give.
DOORS = {
    # ---- rungs.yours.readers
    "readers.file_format": lambda d: (lambda p=d.draw(PATH): readers.file_format(p), ("path",)),
    "readers.read_file": lambda d: (lambda p=d.draw(PATH), f=d.draw(FOLDER), m=d.draw(MAX_BYTES):
                                    readers.read_file(p, f, max_bytes=m), ("path", "folder", "max_bytes")),
    "readers.read_bytes": lambda d: (lambda p=d.draw(PATH), m=d.draw(MAX_BYTES): readers.read_bytes(p, m),
                                     ("path", "max_bytes")),
    # ---- rungs.lab.metrics
    "metrics.check_relevant": lambda d: (lambda r=d.draw(RELEVANT): metrics.check_relevant(r), ("relevant",)),
    "metrics.check_questions": lambda d: (lambda q=d.draw(maybe(st.lists(QUESTION, max_size=3), JUNK)):
                                          metrics.check_questions(q), ("questions", "relevant")),
    "metrics.ranking_of": lambda d: (lambda r=d.draw(maybe(st.dictionaries(st.sampled_from(["q1", "q2"]), RANKING),
                                                            JUNK)), q=d.draw(QUESTION): metrics.ranking_of(r, q),
                                     ("run",)),
    "metrics.reciprocal_rank": lambda d: (lambda r=d.draw(RANKING), j=d.draw(RELEVANT),
                                          a=d.draw(maybe(st.none(), EDGES)): metrics.reciprocal_rank(r, j, a),
                                          ("ranking", "relevant", "at", "once")),
    "metrics.recall": lambda d: (lambda r=d.draw(RANKING), j=d.draw(RELEVANT), a=d.draw(maybe(st.integers(1, 5), EDGES)):
                                 metrics.recall(r, j, a), ("ranking", "relevant", "at", "once")),
    "metrics.precision": lambda d: (lambda r=d.draw(RANKING), j=d.draw(RELEVANT), a=d.draw(maybe(st.integers(1, 5), EDGES)):
                                    metrics.precision(r, j, a), ("ranking", "relevant", "at", "once")),
    "metrics.average_precision": lambda d: (lambda r=d.draw(RANKING), j=d.draw(RELEVANT):
                                            metrics.average_precision(r, j), ("ranking", "relevant", "once")),
    "metrics.ndcg": lambda d: (lambda r=d.draw(RANKING), j=d.draw(RELEVANT), a=d.draw(maybe(st.integers(1, 5), EDGES)):
                               metrics.ndcg(r, j, a), ("ranking", "relevant", "at", "once")),
    "metrics.success": lambda d: (lambda r=d.draw(RANKING), j=d.draw(RELEVANT), a=d.draw(maybe(st.integers(1, 5), EDGES)),
                                  g=d.draw(maybe(st.sampled_from([1, 2]), EDGES)): metrics.success(r, j, a, grade=g),
                                  ("ranking", "relevant", "at", "grade", "once")),
    "metrics.judged": lambda d: (lambda r=d.draw(RANKING), j=d.draw(RELEVANT), a=d.draw(maybe(st.integers(1, 5), EDGES)):
                                 metrics.judged(r, j, a), ("ranking", "relevant", "at", "once")),
    "metrics.judged_share": lambda d: (lambda q=d.draw(_q()), r=d.draw(RUN): metrics.judged_share(r, q),
                                       ("questions", "run", "ranking", "relevant", "once")),
    "metrics.mean": lambda d: (lambda v=d.draw(maybe(st.lists(st.floats(allow_nan=False, allow_infinity=False),
                                                              max_size=5), JUNK)): metrics.mean(v), ("values",)),
    "metrics.evaluate": lambda d: (lambda q=d.draw(_q()), r=d.draw(RUN): metrics.evaluate(r, q),
                                   ("questions", "run", "ranking", "relevant", "metric", "once")),
    "metrics.per_question": lambda d: (lambda q=d.draw(_q()), r=d.draw(RUN),
                                       m=d.draw(maybe(st.sampled_from([None, "MRR", "nDCG@5"]), JUNK)):
                                       metrics.per_question(r, q, m), ("questions", "run", "ranking", "relevant",
                                                                       "metric", "once")),
    "metrics.paired_test": lambda d: (lambda a=d.draw(SCORES), b=d.draw(SCORES),
                                      t=d.draw(maybe(st.integers(100, 300), EDGES)):
                                      metrics.paired_test(a, b, trials=t), ("a", "b", "same questions", "trials")),
    "metrics.wilson": lambda d: (lambda k=d.draw(maybe(st.integers(0, 60), EDGES)),
                                 n=d.draw(maybe(st.integers(1, 60), EDGES)): metrics.wilson(k, n), ("k", "n")),
    "metrics.p_text": lambda d: (lambda p=d.draw(maybe(st.floats(0, 1), EDGES)): metrics.p_text(p), ("p",)),
    "metrics.holm": lambda d: (lambda p=d.draw(SCORES): metrics.holm(p), ("pvalues",)),
    "metrics.holm_across": lambda d: (lambda t=d.draw(maybe(st.dictionaries(st.sampled_from(["MRR", "nDCG"]),
                                                                            st.lists(ROW, max_size=3), max_size=2),
                                                            JUNK)): metrics.holm_across(t), ("tables", "rows")),
    "metrics.kappa": lambda d: (lambda a=d.draw(VERDICTS), b=d.draw(VERDICTS): metrics.kappa(a, b),
                                ("verdicts",)),
    # ---- rungs.lab.selective
    "selective.fit": lambda d: (lambda x=d.draw(SIGNAL_ROWS), y=d.draw(RIGHTS), n=d.draw(SIGNAL_NAMES):
                                selective.fit(x, y, n), ("rows", "right", "names")),
    "selective.cross_fitted": lambda d: (lambda x=d.draw(SIGNAL_ROWS), y=d.draw(RIGHTS), n=d.draw(SIGNAL_NAMES),
                                         k=d.draw(maybe(st.integers(2, 3), EDGES)):
                                         selective.cross_fitted(x, y, n, folds=k), ("rows", "right", "names", "folds")),
    "selective.auc": lambda d: (lambda p=d.draw(maybe(st.lists(st.floats(0, 1), min_size=3, max_size=3), JUNK)),
                                y=d.draw(RIGHTS): selective.auc(p, y), ("scores", "right")),
    "metrics.questions_needed": lambda d: (lambda a=d.draw(maybe(st.floats(-1, 1), EDGES)),
                                           b=d.draw(maybe(st.floats(0, 1), EDGES)): metrics.questions_needed(a, b),
                                           ("diff", "sd", "alpha", "power")),
    "metrics.compare": lambda d: (lambda q=d.draw(_q()), r=d.draw(maybe(st.just({"x": lambda q: ["a"],
                                                                                 "y": lambda q: ["b", "a"]}), JUNK)),
                                  b=d.draw(maybe(st.just("x"), JUNK)): metrics.compare(r, q, baseline=b, trials=100),
                                  ("runs", "baseline", "questions", "ranking", "relevant", "run", "once")),
    "metrics.comparison_table": lambda d: (lambda r=d.draw(maybe(st.lists(ROW, max_size=3), JUNK)),
                                           a=d.draw(maybe(st.just(0.05), EDGES)): metrics.comparison_table(r, alpha=a),
                                           ("rows", "alpha")),
    # ---- rungs.lab.tuning (halves: tested by test_properties.test_a_split_is_a_deterministic_partition too)
    "tuning.halves": lambda d: (lambda q=d.draw(_q()), s=d.draw(maybe(st.integers(), EDGES)): tuning.halves(q, seed=s),
                                ("questions", "seed", "relevant", "kind", "once")),
    "tuning.sweep": lambda d: (lambda g=d.draw(GRID), q=d.draw(_q()): tuning.sweep(g, _run_of(None), q, progress=False),
                               ("param_grid", "questions", "relevant", "ranking", "once")),
    "tuning.check_grid": lambda d: (lambda g=d.draw(GRID): tuning.check_grid(g), ("param_grid",)),
    "tuning.heatmap": lambda d: (lambda f=d.draw(FRAME), x=d.draw(COLUMN), y=d.draw(COLUMN), v=d.draw(COLUMN):
                                 tuning.heatmap(f, x, y, v), ("frame", "x, y and value")),
    "tuning.line": lambda d: (lambda f=d.draw(FRAME), x=d.draw(COLUMN),
                              v=d.draw(maybe(st.lists(COLUMN, min_size=1, max_size=2), JUNK)):
                              tuning.line(f, x, v), ("frame", "values")),
    "tuning.held_out": lambda d: (lambda g=d.draw(GRID), q=d.draw(_q()): tuning.held_out(g, _run_of(None), q),
                                  ("param_grid", "questions", "relevant", "ranking", "default", "once")),
    "tuning.choose": lambda d: (lambda g=d.draw(GRID), q=d.draw(_q()), f=d.draw(maybe(st.just(2), EDGES)):
                                tuning.choose(g, _run_of(None), q, default={k: v[0] for k, v in g.items()}
                                              if isinstance(g, dict) and all(isinstance(v, list) and v for v in g.values())
                                              else g, folds=f, repeats=2),
                                ("param_grid", "questions", "default", "folds", "development", "relevant", "once")),
    "tuning.decide": lambda d: (lambda r=d.draw(JUNK), m=d.draw(maybe(st.just("MRR"), JUNK)):
                                tuning.decide(r, metric=m, default={}), ("result", "metric", "default")),
    # ---- rungs.lab.capstone: notebook 09's steps, on any folder and any question file
    "capstone.split_questions": lambda d: (lambda q=d.draw(_q()), h=d.draw(IDS), s=d.draw(maybe(st.integers(), EDGES)):
                                           capstone.split_questions(q, h, seed=s),
                                           ("questions", "held", "seed", "relevant", "kind", "once")),
    "capstone.worked_example": lambda d: (lambda r=d.draw(RETRIEVER), q=d.draw(_q()),
                                          n=d.draw(maybe(st.integers(1, 10), EDGES)):
                                          capstone.worked_example(r, q, limit=n),
                                          ("retriever", "questions", "limit", "ranking", "relevant", "once")),
    "capstone.find_question": lambda d: (lambda q=d.draw(_q()), a=d.draw(maybe(st.sampled_from(["q1", "q9"]), JUNK)),
                                         s=d.draw(IDS): capstone.find_question(q, a, aside=s),
                                         ("questions", "asked", "aside", "relevant", "once")),
    "capstone.page_scores": lambda d: (lambda r=d.draw(maybe(st.dictionaries(st.sampled_from(["BM25", 3]), RETRIEVER,
                                                                             max_size=2), JUNK)),
                                       q=d.draw(PAGED), n=d.draw(maybe(st.integers(1, 10), EDGES)):
                                       capstone.page_scores(r, q, limit=n),
                                       ("retrievers", "questions", "limit", "pages", "relevant", "hits", "once")),
    "capstone.known_items": lambda d: (lambda docs=d.draw(DOCUMENTS), r=d.draw(maybe(st.dictionaries(
        st.sampled_from(["BM25", "vectors"]), RUN, max_size=2), JUNK)), f=d.draw(_q()): capstone.known_items(docs, r, f),
        ("documents", "runs", "questions", "run", "ranking", "relevant", "headings", "metric", "once")),
    "capstone.abstention_sample": lambda d: (lambda q=d.draw(_q()), f=d.draw(_q()),
                                             n=d.draw(maybe(st.integers(1, 5), EDGES)):
                                             capstone.abstention_sample(q, f, each=n),
                                             ("questions", "each", "relevant", "kind", "once")),
    "capstone.abstention_tally": lambda d: (lambda r=d.draw(maybe(st.lists(st.fixed_dictionaries(
        {"kind": st.sampled_from(["lexical", "unanswerable"]), "status": st.sampled_from(["answered", "no answer"]),
         "right": st.booleans()}), max_size=4), JUNK)): capstone.abstention_tally(r), ("rows",)),
    # ---- rungs.lab.questions, rungs.lab.judges
    "questions.known_item_questions": lambda d: (lambda docs=d.draw(DOCUMENTS), n=d.draw(maybe(st.integers(1, 3), EDGES)),
                                                 w=d.draw(maybe(st.integers(1, 3), EDGES)):
                                                 questions.known_item_questions(docs, per_document=n, min_words=w),
                                                 ("documents", "per_document", "min_words", "headings")),
    "questions.write_questions": lambda d: (lambda q=d.draw(_q()), p=d.draw(maybe(st.builds(lambda: ZOO / "out.jsonl"),
                                                                                  st.one_of(st.just(ZOO),
                                                                                            st.just(ZOO / "n" / "x"),
                                                                                            JUNK))):
                                            questions.write_questions(q, p), ("questions", "path", "relevant")),
    "judges.support": lambda d: (lambda a=d.draw(maybe(WORDY, JUNK)),
                                 p=d.draw(maybe(st.lists(st.fixed_dictionaries({"id": st.sampled_from(["a", "b"]),
                                                                                "text": WORDY}), max_size=2,
                                                         unique_by=lambda x: x["id"]), JUNK)),
                                 t=d.draw(maybe(st.floats(0, 1), EDGES)), m=d.draw(maybe(st.integers(1, 900), EDGES)):
                                 judges.support("Quel préavis ?", a, p, ScriptedClient([yes(0.8)]), threshold=t,
                                                max_chars=m),
                                 ("answer", "passages", "threshold", "max_chars")),
    "judges.matches_reference": lambda d: (lambda a=d.draw(maybe(WORDY, JUNK)), r=d.draw(maybe(WORDY, JUNK)),
                                           t=d.draw(maybe(st.floats(0, 1), EDGES)):
                                           judges.matches_reference("Quel préavis ?", a, r, ScriptedClient([yes(0.3)]),
                                                                    threshold=t), ("answer", "reference", "threshold")),
    "judges.stored_support": lambda d: (lambda c=d.draw(maybe(st.just("notebook 03"), JUNK)), p=_stored(d):
                                        judges.stored_support(c, p), ("config", "path")),
    "judges.threshold_table": lambda d: (lambda r=d.draw(maybe(st.lists(st.fixed_dictionaries(
        {"correct": st.booleans(), "p": maybe(st.floats(0, 1), EDGES)}), max_size=3), st.lists(JUNK, max_size=2))),
        t=d.draw(maybe(st.lists(st.floats(0, 1), max_size=3), JUNK)): judges.threshold_table(r, t),
        ("rows", "P(supported)", "threshold", "thresholds")),
    # ---- rungs.lab.handbook, rungs.lab.cacm: the shipped data, or a folder of one's own
    "handbook.load_pages": lambda d: (lambda p=d.draw(st.one_of(st.none(), FOLDER, PATH)): handbook.load_pages(p),
                                      ("path",)),
    "handbook.load_questions": lambda d: (lambda p=d.draw(st.one_of(st.none(), PATH)): handbook.load_questions(p),
                                          ("path",)),
    "cacm.find": lambda d: (lambda p=d.draw(st.one_of(st.none(), FOLDER, PATH)): cacm.find(p), ("path",)),
    "cacm.english": lambda d: (lambda t=d.draw(maybe(TEXT, JUNK)): cacm.english(t), ("text",)),
    "cacm.load_documents": lambda d: (lambda p=d.draw(st.one_of(FOLDER, PATH)): cacm.load_documents(p), ("path",)),
    "cacm.load_queries": lambda d: (lambda p=d.draw(st.one_of(FOLDER, PATH)): cacm.load_queries(p), ("path",)),
    # ---- rungs.lab.noticing
    "noticing.notice": lambda d: (lambda a=d.draw(ANSWERS), q=d.draw(maybe(QUESTION.map(
        lambda q: {**q, "key_facts": ["2,5 jours", "badge | repas"]}), st.one_of(QUESTION, JUNK))):
        noticing.notice(a, q), ("answer", "question", "key_facts", "relevant", "evidence", "trace")),
    # ---- rungs.lab.sending, rungs.lab.compare
    "sending.what_is_sent": lambda d: (lambda q=d.draw(maybe(QUESTION.map(lambda q: {**q, "key_facts": []}), JUNK)),
                                       p=d.draw(maybe(st.lists(st.fixed_dictionaries({"id": st.sampled_from(["a", "b"]),
                                                                                      "text": WORDY}), max_size=2,
                                                               unique_by=lambda x: x["id"]), JUNK)),
                                       m=d.draw(maybe(st.integers(1, 4), EDGES)):
                                       sending.what_is_sent(q, p, max_passages=m, mode="free"),
                                       ("question", "passages", "max_passages", "relevant", "key_facts")),
    "sending.sweep": lambda d: (lambda q=d.draw(_q()), s=d.draw(maybe(st.just([{"max_passages": 2, "max_chars": 300}]),
                                                                      JUNK)):
                                sending.sweep(q, {}, s, mode="free"), ("questions", "passages", "settings", "relevant", "once")),
    "sending.stored_answers": lambda d: (lambda n=d.draw(maybe(st.just("answers.jsonl"), st.one_of(TEXT, JUNK))):
                                         sending.stored_answers(n), ("name", "path")),
    "sending.read_log": lambda d: (lambda p=_stored(d): sending.read_log(p), ("path",)),
    "compare.compare": lambda d: (lambda q=d.draw(_q()), a=d.draw(RUN), b=d.draw(RUN),
                                  lim=d.draw(maybe(st.integers(0, 5), EDGES)):
                                  str(compare.compare(a, b, q, limit=lim, trials=100)),
                                  ("questions", "run", "ranking", "relevant", "limit", "metric", "labels", "once")),
    # ---- rungs.lab.stored
    "stored.read_json": lambda d: (lambda p=_folder_file(d): stored.read_json(
        p, name="folder_default.json", what="a results file", remake="it", error=folder_default.NoResults), ("path",)),
    # ---- rungs.lab.folder_default
    "folder_default.load": lambda d: (lambda p=_folder_file(d): folder_default.load(p), ("path",)),
    "folder_default.check": lambda d: (lambda r=_folder_runs(d): folder_default.check(r), ("results",)),
    "folder_default.table": lambda d: (lambda r=_folder_runs(d), m=d.draw(maybe(st.sampled_from(folder_default.MEASURES),
                                                                              JUNK)):
                                       folder_default.table(r, measure=m), ("results", "measure")),
    "folder_default.per_question": lambda d: (lambda r=_folder_runs(d), c=d.draw(maybe(st.just("a/lexical"), JUNK)):
                                              folder_default.per_question(r, cell=c), ("results", "cell")),
    "folder_default.unfound": lambda d: (lambda r=_folder_runs(d), c=d.draw(maybe(st.just("a/lexical"), JUNK)):
                                         folder_default.unfound(r, cell=c), ("results", "cell")),
    # ---- rungs.core.display
    "display.ranking_table": lambda d: (lambda h=d.draw(HITS), w=d.draw(maybe(st.integers(1, 60), EDGES)):
                                        display.ranking_table(h, id_width=w), ("ranking", "id_width")),
    "display.show": lambda d: (lambda h=d.draw(HITS): display.show(h), ("ranking",)),
    "display.parts_table": lambda d: (lambda h=d.draw(HIT): display.parts_table(h), ("hit",)),
    "display.side_by_side": lambda d: (lambda a=d.draw(HITS), b=d.draw(HITS): display.side_by_side(a, b),
                                       ("before", "after", "labels")),
    "display.bump_chart": lambda d: (lambda r=d.draw(maybe(st.dictionaries(st.sampled_from([0.5, 1.2, "x"]), HITS,
                                                                           max_size=3), JUNK)),
                                     t=d.draw(maybe(st.integers(1, 6), EDGES)): display.bump_chart(r, top=t),
                                     ("rankings", "top")),
    "display.best_sentence": lambda d: (lambda t=d.draw(maybe(TEXT, JUNK)), q=d.draw(maybe(WORDY, JUNK)),
                                        p=d.draw(maybe(st.none(), JUNK)): display.best_sentence(t, q, parts=p),
                                        ("text", "query", "parts")),
    "display.cut_text": lambda d: (lambda t=d.draw(maybe(TEXT, JUNK)), w=d.draw(maybe(st.integers(1, 80), EDGES)):
                                   display.cut_text(t, w), ("text", "width")),
    "display.where": lambda d: (lambda h=d.draw(HIT): display.where(h), ("hit",)),
    "display.safe_text": lambda d: (lambda t=d.draw(maybe(TEXT, JUNK)): display.safe_text(t), ("text",)),
    "display.hits_table": lambda d: (lambda h=d.draw(HITS), e=d.draw(maybe(st.booleans(), JUNK)):
                                     display.hits_table(h, explain=e), ("hits", "explain")),
    "display.explanation": lambda d: (lambda h=d.draw(HIT): display.explanation(h), ("hit",)),
}


def _reader_door(fn, data):
    return lambda d: (lambda b=d.draw(data), p=d.draw(maybe(st.just(Path("x")), JUNK)): fn(b, p), ("data", "path"))


# Every reader the registry holds (``readers.READERS``: where a new format is added), fed any bytes and any type.
for _kind, _fn in readers.READERS.items():
    # pdf.py is the PDF helper's (issue 32): read_pdf takes a str for a file name (pypdfium2 opens it) and
    # raises TypeError on None; until it calls common.check_data, its door is fed bytes only.
    DOORS[f"READERS[{_kind!r}]"] = _reader_door(_fn, FORMATS_BYTES if _kind == "pdf" else maybe(FORMATS_BYTES, JUNK))

#: Public names that are not doors, each with the reason (a class of values, a stream, another's room).
NOT_DOORS = {
    "display.Table": "a str subclass: any text is one",
    "display.Sentence": "a frozen dataclass best_sentence returns, not a door",
    "compare.Comparison": "the frozen dataclass compare returns, not a door",
    "selective.Decision": "the fitted decision fit returns, not a door",
}

def _public(module) -> set[str]:
    """A module's public functions and classes: its ``__all__`` when it declares one, else every name
    without a leading underscore defined in it (exceptions are names, not doors)."""
    names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
    short = module.__name__.rsplit(".", 1)[-1]
    return {f"{short}.{n}" for n in names if (inspect.isfunction(getattr(module, n)) or inspect.isclass(getattr(module, n)))
            and not (inspect.isclass(getattr(module, n)) and issubclass(getattr(module, n), BaseException))
            and (hasattr(module, "__all__") or getattr(module, n).__module__ == module.__name__)}


#: Where the doors are found: the readers' package (its ``__all__``, and every reader of ``READERS``), every
#: module of the lab but ``answers`` (the answer half's, with property tests of its own) and ``abstention`` with
#: ``abstention_summary`` (they read one committed summary, refused whole by ``check_summary`` when malformed:
#: tests/test_abstention.py), ``abstention_decision`` (one committed study, its parts checked by ``load``:
#: tests/test_decision_default.py), and
#: the display.
MODULES = [readers, display] + [importlib.import_module(f"rungs.lab.{m.name}") for m in pkgutil.iter_modules(lab.__path__)
                                if m.name not in ("answers", "abstention", "abstention_summary", "abstention_decision")]


def test_every_public_function_has_a_door():
    """Discovered, never listed by hand: a public function of these modules without a door fails here."""
    found = set().union(*map(_public, MODULES)) | {f"READERS[{k!r}]" for k in readers.READERS}
    missing = sorted(found - set(DOORS) - set(NOT_DOORS))
    assert not missing, f"public functions without a door in this file: {missing}"
    assert not sorted(set(DOORS) - found), "a door for a function that is not there"


@bounded(60)
@given(door=st.sampled_from(sorted(DOORS)), data=st.data())
def test_every_public_door_returns_a_result_or_a_named_refusal(door, data):
    """The class of issue 32's raw exceptions: any argument gives a result or a RungsError, never a crash."""
    call, names = DOORS[door](data)
    try:
        with alarm(), contextlib.redirect_stdout(io.StringIO()):
            outcome(call, *names)
    finally:
        plt.close("all")


# ---------------------------------------------------------------- each door on its own, for a failure that says which

@pytest.mark.parametrize("door", sorted(DOORS))
@bounded(4)
@given(data=st.data())
def test_each_door_alone(door, data):
    call, names = DOORS[door](data)
    try:
        with alarm(), contextlib.redirect_stdout(io.StringIO()):
            outcome(call, *names)
    finally:
        plt.close("all")


def teardown_module():
    shutil.rmtree(ZOO, ignore_errors=True)


@pytest.mark.parametrize("data", [None, 5, "conges.pdf"])
def test_read_pdf_names_data_that_is_not_bytes(data):
    with pytest.raises(RungsError, match="data must be the file's bytes"):
        readers.READERS["pdf"](data, Path("x.pdf"))

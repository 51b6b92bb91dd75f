"""N3's decision: whether to show the copy's answer or say « je ne sais pas », at a coverage you pick.

What it is for: the reader (« copy », ``rungs.rag.copying``) always has an
answer to show; it has no way to know whether the passages hold the answer.
The model's own « aucune » was a coin with the same odds on answerable and
unanswerable questions (benchmarks/README.md, « Deciding apart from reading »),
so the decision is taken apart from the reading, from four signals of the
question:

    gate            the sufficient-context gate's P(yes) (``rungs.rag.gate``: one call, one token;
                    0.5 where the endpoint gives no probability it can trust)
    overlap_best    the share of the question's words (stemmed, stop words out) in the best copied sentence
    overlap_all     … in the copied sentences together
    keyword_found   whether the keyword leg found the top passage at all (1 when the retriever does not say)

A logistic fit of « the copy's answer is right » on those signals
(``rungs.grounding.deciding.Decision``) gives P(right); the answer is shown at
or above the threshold that answers ``coverage`` of the questions it was fitted
on. The fit ships with the package (``decision.json``, written by
benchmarks/bench_decision.py from the handbook's deciding half, where
``tuning.choose`` picked the signals and the coverage); ``source`` says so, and
``python -m rungs ask`` prints it beside every decision. On another folder it is
applied as is: benchmarks/README.md says how well it orders that folder's
questions. Taught in notebook 03, « Deciding apart from reading ».

Cost: the gate's one call (the prompt is the copy's twelve sentences); the rest,
microseconds.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from ..core.errors import BadArgument, check_number
from ..core.text import tokenise
from ..grounding.deciding import Decision, numbers_of, threshold

#: Where the shipped fit lives (package data), and what ``answer(decision=…)`` calls it.
SHIPPED = Path(__file__).with_name("decision.json")
HANDBOOK_DECISION = "handbook"
#: The signals, in the order the fit reads them.
SIGNALS = ("gate", "overlap_best", "overlap_all", "keyword_found")
#: The gate's P(yes) where it could not tell: halfway, saying nothing either way.
UNKNOWN_GATE = 0.5


def signals(question: str, quotes, gate_p: float | None, hits=None) -> dict:
    """One question's signals (``SIGNALS``) from what the copy shows (``quotes``: dicts or ``Quote``s with a
    text), the gate's P(yes) (None: it could not tell) and the retriever's hits, best first (None: not known)."""
    words = set(tokenise(question, stopwords=True, stem=True))
    said = [set(tokenise(q["text"] if isinstance(q, dict) else q.text, stopwords=True, stem=True)) for q in quotes]
    share = lambda found: len(words & found) / len(words) if words else 0.0
    return {"gate": UNKNOWN_GATE if gate_p is None else float(gate_p),
            "overlap_best": max((share(s) for s in said), default=0.0),
            "overlap_all": share(set().union(*said)) if said else 0.0,
            "keyword_found": keyword_found(hits)}


def keyword_found(hits) -> float:
    """1.0 if the keyword leg scored the top hit (a hybrid's ``parts``), or the retriever does not say; else 0.0."""
    if not hits:
        return 1.0
    top = hits[0]
    parts = (top.get("parts") if isinstance(top, dict) else getattr(top, "parts", None)) or {}
    return float(parts["keyword"] > 0) if "keyword" in parts else 1.0


class Shipped:
    """A fitted decision with what it was fitted on: P(right) for a question's signals, and the threshold
    that answers a given coverage of the questions it was fitted on (their probabilities are kept)."""

    def __init__(self, data: dict):
        missing = [k for k in ("fit", "probabilities", "coverage", "source", "decision")
                   if not isinstance(data, dict) or k not in data]
        if missing:
            raise BadArgument(f"a shipped decision holds fit, probabilities, coverage, source and decision "
                              f"(not {', '.join(missing)})")
        self.fit = Decision.from_dict(data["fit"])
        self.probabilities = numbers_of(data["probabilities"], "probabilities")
        self.coverage = check_number(data["coverage"], "coverage", low=0.0, high=1.0)
        self.source, self.name = str(data["source"]), str(data["decision"])
        if not set(self.fit.names) <= set(SIGNALS):
            raise BadArgument(f"a shipped decision reads some of the signals {', '.join(SIGNALS)}, not {self.fit.names}")

    def threshold(self, coverage: float | None = None) -> float:
        """The P(right) at or above which ``coverage`` (default: the chosen one) of the fitted questions answer."""
        return threshold(self.probabilities, self.coverage if coverage is None else coverage)

    def judge(self, found: dict, coverage: float | None = None) -> dict:
        """The decision on one question's signals: ``{"p", "threshold", "coverage", "answer", "signals", ...}``."""
        coverage = self.coverage if coverage is None else coverage
        cut = self.threshold(coverage)
        p = float(self.fit.probability([[found[s] for s in self.fit.names]])[0])
        return {"p": p, "threshold": cut, "coverage": coverage, "answer": p >= cut, "signals": dict(found),
                "decision": self.name, "source": self.source}


@lru_cache(maxsize=1)
def shipped() -> Shipped:
    """The decision that ships with the package (read once)."""
    return Shipped(json.loads(SHIPPED.read_text(encoding="utf-8")))


def check_coverage(coverage) -> float | None:
    """A coverage as ``answer`` takes it: a share of the questions in (0, 1], or None (the shipped one)."""
    if coverage is None:
        return None
    return check_number(coverage, "coverage (the share of questions to answer)", low=0.0, high=1.0, low_open=True)

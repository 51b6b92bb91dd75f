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
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path

from ..core.errors import BadArgument, check_number, short_repr
from ..core.text import tokenise
from ..grounding import deciding
from ..grounding.cut import passes
from ..grounding.deciding import Decision, numbers_of, threshold
from ..grounding.showing import share_said  # noqa: F401 - its home is the printer; said here in messages

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
    said = [set(tokenise(_text(q, i), stopwords=True, stem=True)) for i, q in enumerate(_quotes(quotes))]
    share = lambda found: len(words & found) / len(words) if words else 0.0
    gate_p = UNKNOWN_GATE if gate_p is None else check_number(gate_p, "gate_p (the gate's P(yes))", low=0.0, high=1.0)
    return {"gate": gate_p,
            "overlap_best": max((share(s) for s in said), default=0.0),
            "overlap_all": share(set().union(*said)) if said else 0.0,
            "keyword_found": keyword_found(hits)}


def _quotes(quotes) -> list:
    if isinstance(quotes, (str, bytes, Mapping)) or not isinstance(quotes, Iterable):
        raise BadArgument(f"quotes must be a list of what the copy shows, not {type(quotes).__name__}")
    return list(quotes)


def _text(quote, i: int) -> str:
    text = quote.get("text") if isinstance(quote, Mapping) else getattr(quote, "text", None)
    if not isinstance(text, str):
        raise BadArgument(f"quotes[{i}] must be a Quote or a dict with a 'text', not {short_repr(quote)}")
    return text


def keyword_found(hits) -> float:
    """1.0 if the keyword leg scored the top hit (a hybrid's ``parts``), or the retriever does not say; else 0.0."""
    hits = check_hits(hits)
    if not hits:
        return 1.0
    parts = _parts(hits[0])
    return float(parts["keyword"] > 0) if "keyword" in parts else 1.0


def check_hits(hits) -> list | None:
    """The retriever's hits as the decision reads them: None (not known), or a list — any iterable of ``Hit``s
    or dicts, best first — whose top hit's ``parts``, if any, is a mapping with a finite « keyword » score."""
    if hits is None:
        return None
    if isinstance(hits, (str, bytes, Mapping, set, frozenset)) or not isinstance(hits, Iterable):
        raise BadArgument(f"hits must be the retriever's hits, best first (a list of Hits or dicts), not "
                          f"{type(hits).__name__} {short_repr(hits)}")
    hits = list(hits)
    for i, hit in enumerate(hits):
        if not isinstance(hit, Mapping) and not hasattr(hit, "parts"):
            raise BadArgument(f"hits[{i}] must be a hit (a rungs Hit, or a dict with an id), not "
                              f"{type(hit).__name__} {short_repr(hit)}")
    if hits:
        parts = _parts(hits[0])
        if "keyword" in parts:
            check_number(parts["keyword"], "hits[0]'s parts['keyword'] (the keyword leg's score)")
    return hits


def _parts(hit) -> Mapping:
    parts = (hit.get("parts") if isinstance(hit, Mapping) else getattr(hit, "parts", None)) or {}
    if not isinstance(parts, Mapping):
        raise BadArgument(f"hits[0]'s parts must be a dict of each leg's score, not {type(parts).__name__} "
                          f"{short_repr(parts)}")
    return parts


class Shipped:
    """A fitted decision with what it was fitted on: P(right) for a question's signals, and the threshold
    that answers a given coverage of the questions it was fitted on (their probabilities are kept)."""

    def __init__(self, data: dict):
        missing = [k for k in ("fit", "probabilities", "coverage", "source", "decision")
                   if not isinstance(data, dict) or k not in data]
        if missing:
            raise BadArgument(f"a shipped decision holds fit, probabilities, coverage, source and decision "
                              f"(this one lacks {', '.join(missing)})")
        self.fit = Decision.from_dict(data["fit"])
        self.probabilities = numbers_of(data["probabilities"], "probabilities")
        if ((self.probabilities < 0) | (self.probabilities > 1)).any():  # a threshold of 5 would never answer
            raise BadArgument("a shipped decision's probabilities must be between 0 and 1, one a question it was "
                              "fitted on")
        self.coverage = check_number(data["coverage"], "coverage", low=0.0, high=1.0)
        for key in ("source", "decision"):
            if not isinstance(data[key], str):
                raise BadArgument(f"a shipped decision's {key} is text, not {type(data[key]).__name__}")
        self.source, self.name = data["source"], data["decision"]
        if not set(self.fit.names) <= set(SIGNALS):
            raise BadArgument(f"a shipped decision reads some of the signals {', '.join(SIGNALS)}, not {self.fit.names}")

    def threshold(self, coverage: float | None = None) -> float:
        """The P(right) at or above which ``coverage`` (default: the chosen one) of the fitted questions answer."""
        return threshold(self.probabilities, self.coverage if coverage is None else coverage)

    def judge(self, found: dict, coverage: float | None = None) -> dict:
        """The decision on one question's signals: ``{"p", "threshold", "coverage", "answer", "signals", ...}``."""
        coverage = self.coverage if coverage is None else check_coverage(coverage)
        cut = self.threshold(coverage)
        missing = [s for s in self.fit.names if not isinstance(found, Mapping) or s not in found]
        if missing:
            raise BadArgument(f"judge needs the signals {', '.join(self.fit.names)} (a dict), not without "
                              f"{', '.join(missing)}")
        # every signal is a share or a 0/1 (``signals``): a gate of 2 would decide silently
        p = float(self.fit.probability([[check_number(found[s], f"the signal {s}", low=0.0, high=1.0)
                                         for s in self.fit.names]])[0])
        return {"p": p, "threshold": cut, "coverage": coverage, "answer": passes(p, cut), "signals": dict(found),
                "decision": self.name, "source": self.source}


@lru_cache(maxsize=1)
def shipped() -> Shipped:
    """The decision that ships with the package (read once)."""
    try:
        data = json.loads(SHIPPED.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:  # a package data file removed or hand-edited
        raise BadArgument(f"the shipped decision {SHIPPED.name} cannot be read ({type(err).__name__}): reinstall "
                          "rungs, or write it again with benchmarks/bench_decision.py (no model); or decision=None"
                          ) from None
    return Shipped(data)


def check_coverage(coverage) -> float | None:
    """A coverage as ``answer`` takes it: a share of the questions in (0, 1], or None (the shipped one)."""
    return None if coverage is None else deciding.check_coverage(coverage)


def judges_answer(question: str, quotes, gate_p: float | None = None, hits=None) -> bool:
    """Does the shipped decision judge ``quotes`` to answer ``question`` (P(right) at or above its threshold)?
    What a pointing-lead lead-in must rest on to be shown (``rungs.rag.read.point``); no call: the gate's P(yes)
    if it was asked, else halfway (``UNKNOWN_GATE``)."""
    return bool(shipped().judge(signals(question, quotes, gate_p, hits))["answer"])

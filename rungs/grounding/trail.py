"""What a rung did on the way to an answer, typed: the gate's reading, the decision, the hits, the replies.

What it is for: a rung writes its record in ``Answer.trace`` (a dict, for the
curious and for JSON). Consumers — the command line, the benchmarks, the
contract, a notebook cell — read it here instead, as frozen, typed fields:
``answer.gate`` (P(yes) and its threshold), ``answer.decision`` (P(right), its
threshold, what was taken), ``answer.hits``, ``answer.replies``,
``answer.fences``, ``answer.error`` and ``answer.trail`` (all of it, N5's
rounds and timings too). This is the one place the trace's keys are read; a
trace of the wrong shape (a hand-built answer's, a hostile one) is refused here
by name, never half-read. Taught in notebook 03 (the gate, the decision) and 05.

Cost: nothing; read on demand from the trace, a copy each time (the trace is not changed).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..core.errors import BadArgument, RungsError, check_number, short_repr
from .cut import below


def _share(value, name: str, *, optional: bool = True) -> float | None:
    # A probability, a threshold or a coverage: a real number in [0, 1] (None where the rung could not tell).
    if value is None and optional:
        return None
    return check_number(value, f"the trace's {name}", low=0.0, high=1.0)  # the one check of a number


def _mapping(value, name: str) -> Mapping:
    if not isinstance(value, Mapping):
        raise BadArgument(f"the trace's {name} must be a dict, not {type(value).__name__} {short_repr(value)}")
    return value


def _texts(value, name: str) -> tuple[str, ...]:
    # tuple("abc") is three replies of one letter: a text where a list belongs is refused, not split.
    items = _items(value, name)
    wrong = [v for v in items if not isinstance(v, str)]
    if wrong:  # str(None) would be a fence « None » that every « none » in an answer trips
        raise BadArgument(f"the trace's {name} must hold texts only, not {short_repr(wrong[0])}")
    return items


def _items(value, name: str) -> tuple:
    # A list of records (hits, rounds, calls…): a text or a dict where a list belongs is refused, never split.
    if value is None:
        return ()
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (list, tuple)):
        raise BadArgument(f"the trace's {name} must be a list, not {type(value).__name__} {short_repr(value)}")
    return tuple(value)


def _text(value, name: str, default: str | None = "") -> str | None:
    # One text (a mode, a note, a reason to stop); ``or`` is not used: a numpy array has no single truth value.
    if value is None:
        return default
    if not isinstance(value, str):
        raise BadArgument(f"the trace's {name} must be a text, not {type(value).__name__} {short_repr(value)}")
    return value


@dataclass(frozen=True)
class Gate:
    """The gate's reading: P(the extracts answer the question), or None when it could not tell; its threshold
    (None when asked for the decision only); the share of the first token on « Oui »/« Non »; why it failed."""

    p: float | None
    threshold: float | None = None
    coverage: float = 0.0
    note: str = ""

    @property
    def trusted(self) -> bool:
        """Whether the first token's probabilities could be read as a P(yes) at all."""
        return self.p is not None

    @property
    def closed(self) -> bool:
        """The one rule of the gate: « je ne sais pas » when P(yes) is read and below the threshold."""
        return below(self.p, self.threshold) is True  # the one rule (rungs.grounding.cut)

    @classmethod
    def of(cls, data) -> "Gate":
        data = _mapping(data, "gate")
        return cls(_share(data.get("p"), "gate's p"), _share(data.get("threshold"), "gate's threshold"),
                   _share(data.get("coverage", 0.0), "gate's coverage", optional=False), _text(data.get("note"), "gate's note"))


@dataclass(frozen=True)
class Decided:
    """The decision on a copy: P(the copy is right), the threshold its coverage sets, whether the copy is shown
    (``shown``), the signals it read, and which decision it was (``name``) fitted on what (``source``)."""

    p: float
    threshold: float
    coverage: float
    shown: bool
    signals: dict = field(default_factory=dict, compare=False)
    name: str = ""
    source: str = ""

    @classmethod
    def of(cls, data) -> "Decided":
        data = _mapping(data, "decision")
        if not isinstance(data.get("answer"), bool):
            raise BadArgument(f"the trace's decision must say whether the copy is shown (answer: True or False), "
                              f"not {short_repr(data.get('answer'))}")
        return cls(_share(data.get("p"), "decision's p", optional=False),
                   _share(data.get("threshold"), "decision's threshold", optional=False),
                   _share(data.get("coverage"), "decision's coverage", optional=False), data["answer"],
                   dict(_mapping({} if data.get("signals") is None else data["signals"], "decision's signals")),
                   _text(data.get("decision"), "decision's name"), _text(data.get("source"), "decision's source"))


@dataclass(frozen=True)
class Trail:
    """Everything a rung recorded, typed; a key the rung did not write is empty (None, 0, ())."""

    mode: str = ""
    prompt: str | None = None
    replies: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()
    repairs: int = 0
    fences: tuple[str, ...] = ()
    hits: tuple = ()
    gate: Gate | None = None
    decision: Decided | None = None
    error: RungsError | None = None
    # N5's record: the plan, each round, why it stopped, the pages gathered, every call, the stages' seconds.
    plan: tuple = ()
    rounds: tuple = ()
    stopped_by: str | None = None
    gathered: tuple[str, ...] = ()
    calls: tuple = ()
    withheld: tuple = ()
    seconds: float | None = None
    timings: dict = field(default_factory=dict, compare=False)

    @classmethod
    def of(cls, trace: Mapping) -> "Trail":
        t = _mapping(trace, "record")
        error = t.get("error")
        if error is not None and not isinstance(error, RungsError):
            raise BadArgument(f"the trace's error must be a RungsError, not {type(error).__name__}")
        repairs = t.get("repairs", 0)
        if isinstance(repairs, bool) or not isinstance(repairs, numbers.Integral) or repairs < 0:
            raise BadArgument(f"the trace's repairs must be a count, not {short_repr(repairs)}")
        gate, decision, timings = t.get("gate"), t.get("decision"), t.get("timings")
        return cls(_text(t.get("mode"), "mode"), _text(t.get("prompt"), "prompt", None),
                   _texts(t.get("replies"), "replies"), _texts(t.get("refused"), "refused"), int(repairs),
                   _texts(t.get("fences"), "fences"), _items(t.get("hits"), "hits"),
                   None if gate is None else Gate.of(gate), None if decision is None else Decided.of(decision), error,
                   _items(t.get("plan"), "plan"), _items(t.get("rounds"), "rounds"),
                   _text(t.get("stopped_by"), "stopped_by", None), _texts(t.get("gathered"), "gathered"),
                   _items(t.get("calls"), "calls"), _items(t.get("withheld"), "withheld"),
                   _seconds(t.get("seconds")), dict(_mapping({} if timings is None else timings, "timings")))


def _seconds(value) -> float | None:
    # What a run took: a finite count of seconds, never negative (Cost refuses the same).
    return None if value is None else check_number(value, "the trace's seconds", low=0.0)

"""One shape for every answer, and one for what it cost: ``Answer``, ``Status`` and ``Cost``.

What it is for: N3 (``rungs.rag``), N4's reranker and decisions (``rungs.decide``,
``rungs.rerank``) and N5 (``rungs.research``) all end in a model's words. A
reader, the command line, the answer mark and the benchmarks read them the
same way, so they come in one shape:

- ``status`` — one of four, never a magic string: **answered**; **no answer**
  (« je ne sais pas »: nothing was claimed); **unavailable** (no usable reply:
  the model was unreachable, or every reply was unreadable); **refused** (a
  reply was read, but it broke a check — a quote not in its passage, a figure
  nothing cited holds — and is never shown);
- ``text`` — what a reader is shown: the answer, or « je ne sais pas »; empty
  when the status is unavailable or refused (``reason`` says why);
- ``sent`` (passage id → the text the model read), ``cited`` (a subset of it),
  ``quotes`` (words of a cited passage, each found in it) and ``figures`` (each
  figure of the answer and what holds it);
- ``notes`` — every degradation, in words; ``cost`` — calls, prompt tokens
  evaluated and reused, tokens written, seconds; ``trace`` — what the rung did
  on the way (its prompt, the raw replies, why one was refused), for the curious.

``rungs.grounding.contract`` checks these promises on every answerer the
package defines (found by discovery). Taught in notebook 03, used in 04 and 05.

Cost: nothing; a dataclass.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass, field, replace
from enum import Enum

from ..core.display import safe_text
from ..core.errors import BadArgument, RungsError, check_number
from ..model.contract import BadResponse
from .showing import answer_lines
from .trail import Decided, Gate, Trail


class Status(str, Enum):
    """What became of a question: answered, no answer, unavailable, refused."""

    ANSWERED = "answered"
    NO_ANSWER = "no answer"
    UNAVAILABLE = "unavailable"
    REFUSED = "refused"

    def __str__(self) -> str:
        return self.value


class AnswerUnavailable(RungsError, RuntimeError):
    """No usable reply after every attempt (or no model to ask); the message lists why each was refused."""


class AnswerNotGrounded(RungsError, RuntimeError):
    """The answer cites a passage that was never sent, or cites nothing at all: it is refused."""


class QuoteNotFound(AnswerNotGrounded):
    """A quote is not in the passage it cites (or a cited passage has no quote), after one repair round trip."""


class UnsupportedFigure(AnswerNotGrounded):
    """The answer holds a figure that no quote, cited passage or the question holds, after one repair round trip."""


#: The most a count of calls or tokens may be: past it a number is a client's bug, not a cost (and one of
#: 5,000 digits cannot even be printed).
MAX_COUNT = 10 ** 15
#: The most seconds a cost may say: about 32 years.
MAX_SECONDS = 1e9


def _count(value, name: str) -> int:
    # A client of one's own may report « abc », NaN or None: a cost is counted, never guessed.
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 0 <= value <= MAX_COUNT:
        said = "a number that large" if isinstance(value, int) and abs(value) > MAX_COUNT else f"{value!r:.40}"
        raise BadArgument(f"{name} must be a whole number from 0 to {MAX_COUNT:,}, not {type(value).__name__} {said}")
    return int(value)  # numpy's integers are counts too, kept as Python's


def _seconds(value) -> float:
    # The one check of a number (an int, a float, numpy's, a Fraction, a Decimal; 10**400 and NaN named).
    return check_number(value, "seconds", low=0.0, high=MAX_SECONDS)


@dataclass(frozen=True)
class Cost:
    """What answering took: model calls, prompt tokens the model evaluated and reused, tokens written, seconds.

    ``reused_tokens`` are prompt tokens the server did not have to read again (the start of the prompt was
    the same as the previous call's: llama.cpp keeps it in its cache; a hosted API reports it as
    ``cached_tokens``). Costs add up: ``cost_a + cost_b``, ``sum(costs, Cost())``.
    """

    calls: int = 0
    evaluated_tokens: int = 0
    reused_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0

    def __post_init__(self):
        for name in ("calls", "evaluated_tokens", "reused_tokens", "output_tokens"):
            object.__setattr__(self, name, _count(getattr(self, name), name))
        object.__setattr__(self, "seconds", _seconds(self.seconds))

    @property
    def prompt_tokens(self) -> int:
        """Every prompt token sent: evaluated plus reused."""
        return self.evaluated_tokens + self.reused_tokens

    @classmethod
    def of_counts(cls, input_tokens, output_tokens, reused_tokens=0, seconds: float = 0.0) -> "Cost":
        """The cost of one call from the counts a client reported, every number checked.

        A client of one's own that reports a token count that is not a count (« abc », NaN, None, a
        negative number) is named: ``BadResponse`` says which field, instead of a wrong sum later.
        """
        try:
            prompt, reused = _count(input_tokens, "input_tokens"), _count(reused_tokens, "reused_tokens")
            written = _count(output_tokens, "output_tokens")
        except BadArgument as err:
            raise BadResponse(f"the model client returned a result whose {err}: a ChatModel reports token "
                              "counts as whole numbers") from None
        if reused > prompt:
            raise BadResponse(f"the model client reported {reused} reused prompt tokens of {prompt}: "
                              "more than were sent")
        return cls(1, prompt - reused, reused, written, seconds)

    @classmethod
    def of_call(cls, result, seconds: float | None = None) -> "Cost":
        """The cost of one call, read from what a client returned (a ``ChatResult``)."""
        return cls.of_counts(getattr(result, "input_tokens", None), getattr(result, "output_tokens", None),
                             getattr(result, "reused_tokens", 0),
                             getattr(result, "latency", 0.0) if seconds is None else seconds)

    def __add__(self, other: "Cost") -> "Cost":
        if not isinstance(other, Cost):
            return NotImplemented
        return Cost(self.calls + other.calls, self.evaluated_tokens + other.evaluated_tokens,
                    self.reused_tokens + other.reused_tokens, self.output_tokens + other.output_tokens,
                    self.seconds + other.seconds)

    def __radd__(self, other):
        return self if other == 0 else self.__add__(other)  # sum(costs) starts from 0

    def __str__(self) -> str:
        if not self.calls:
            return "no model call"
        reused = f" ({self.reused_tokens} reused)" if self.reused_tokens else ""
        return (f"{self.calls} call{'s' if self.calls != 1 else ''} · {self.prompt_tokens} prompt tokens{reused} · "
                f"{self.output_tokens} written · {self.seconds:.1f} s")


@dataclass(frozen=True)
class Quote:
    """Words of a cited passage, found in it (``source``: its id); ``claim``: the answer's sentence it backs."""

    source: str
    text: str
    claim: str = ""


@dataclass(frozen=True)
class FigureCheck:
    """One figure of the answer, as read (``rungs.grounding.figures``), and what holds it.

    ``held_by``: the cited passages (ids) whose text holds it, or ``("question",)``; empty when nothing
    does — an unsupported figure, which a shown answer never has.
    """

    figure: str
    held_by: tuple[str, ...] = ()

    @property
    def supported(self) -> bool:
        return bool(self.held_by)


_ITEMS = {"cited": "passage ids", "quotes": "Quote", "figures": "FigureCheck", "notes": "notes in words"}


def _items(value, name: str) -> tuple:
    # None or 5 is no list (tuple() would raise a bare TypeError); a citation of 5 or a quote of 1 is no item
    kind = {"cited": str, "quotes": Quote, "figures": FigureCheck, "notes": str}[name]
    if isinstance(value, dict) or not hasattr(value, "__iter__"):
        raise BadArgument(f"{name} must be a list or tuple (of {_ITEMS[name]}), not {type(value).__name__} "
                          f"{value!r:.40}")
    value = tuple(value)
    wrong = [v for v in value if not isinstance(v, kind)]
    if wrong:
        raise BadArgument(f"{name} must hold {_ITEMS[name]} only, not {type(wrong[0]).__name__} {wrong[0]!r:.40}")
    return value


@dataclass(frozen=True)
class Answer:
    """An answer, in the one shape every answering rung returns (the module docstring says each field)."""

    question: str
    status: Status
    text: str = ""
    sent: dict = field(default_factory=dict)
    cited: tuple[str, ...] = ()
    quotes: tuple[Quote, ...] = ()
    figures: tuple[FigureCheck, ...] = ()
    notes: tuple[str, ...] = ()
    cost: Cost = Cost()
    by: str = ""
    reason: str = ""
    trace: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        for name in ("question", "text", "by", "reason"):  # None or bytes would print as « None », « b'…' »
            if not isinstance(getattr(self, name), str):
                raise BadArgument(f"{name} must be text (a str), not {type(getattr(self, name)).__name__} "
                                  f"{getattr(self, name)!r:.40}")
        for name in ("sent", "trace"):
            if not isinstance(getattr(self, name), dict):  # sent: id → the text sent; a list has no ids
                raise BadArgument(f"{name} must be a dict, not {type(getattr(self, name)).__name__}")
        if not isinstance(self.status, Status):
            raise BadArgument(f"status must be a Status ({', '.join(s.value for s in Status)}), not {self.status!r}")
        if not isinstance(self.cost, Cost):
            raise BadArgument(f"cost must be a Cost, not {type(self.cost).__name__}")
        for name in ("cited", "quotes", "figures", "notes"):
            value = getattr(self, name)
            if isinstance(value, (str, bytes)):  # tuple("a.md#1") is five citations of one letter each
                raise BadArgument(f"{name} must be a list or tuple (of {_ITEMS[name]}), not the text {value!r:.40}: "
                                  f"write {name}=({value!r:.40},)")
            object.__setattr__(self, name, _items(value, name))

    @property
    def answered(self) -> bool:
        return self.status is Status.ANSWERED

    @property
    def unsupported(self) -> list[str]:
        """The figures of the answer that nothing cited holds (a shown answer has none)."""
        return [f.figure for f in self.figures if not f.supported]

    # Typed reads of the trace (``rungs.grounding.trail``): what consumers read, never its keys.
    @property
    def trail(self) -> Trail:
        """Everything the rung recorded on the way, typed (a trace of the wrong shape is refused by name)."""
        return Trail.of(self.trace)

    @property
    def gate(self) -> Gate | None:
        """The gate's P(yes) and its threshold; None when no gate was asked."""
        return self.trail.gate

    @property
    def decision(self) -> Decided | None:
        """The decision on a copy: P(right), its threshold, whether the copy is shown; None when none was taken."""
        return self.trail.decision

    @property
    def hits(self) -> tuple:
        """The retriever's hits the passages sent came from (empty when passages were handed in)."""
        return self.trail.hits

    @property
    def replies(self) -> tuple[str, ...]:
        """Every raw reply of the model, in order, readable or not."""
        return self.trail.replies

    @property
    def fences(self) -> tuple[str, ...]:
        """The marks of the prompt's fences the rung declares (the contract finds fences in the text itself)."""
        return self.trail.fences

    @property
    def error(self) -> RungsError | None:
        """The error that says why an answer is unavailable or refused (None otherwise)."""
        return self.trail.error

    def with_(self, **changes) -> "Answer":
        """A copy with some fields changed (an answer is never edited in place)."""
        unknown = sorted(set(changes) - set(self.__dataclass_fields__))
        if unknown:  # replace() would say « unexpected keyword argument », not what an answer holds
            raise BadArgument(f"an Answer has no field {', '.join(unknown)}: it holds "
                              f"{', '.join(self.__dataclass_fields__)}")
        return replace(self, **changes)

    def raise_for_status(self) -> "Answer":
        """The answer itself if it is answered or « je ne sais pas »; else the error that says why."""
        if self.status is Status.UNAVAILABLE:
            raise self.error or AnswerUnavailable(self.reason or "no usable reply")
        if self.status is Status.REFUSED:
            raise self.error or AnswerNotGrounded(self.reason or "the answer broke a check")
        return self

    def to_dict(self) -> dict:
        """The answer as JSON data (what the benchmarks store), the trace without its error object."""
        out = asdict(replace(self, trace={}))
        out["status"] = self.status.value
        try:
            out["trace"] = _plain({k: v for k, v in self.trace.items() if k != "error"})
        except RecursionError:  # a trace that holds itself (or nests past the stack) has no JSON
            raise BadArgument("the answer's trace holds itself, or nests too deep, to be written as JSON: "
                              "put copies in it, not the trace itself") from None
        return out

    def lines(self) -> list[str]:
        """The answer as a reader sees it, in the one printer's wording (``rungs.grounding.showing``)."""
        return answer_lines(self)

    def __str__(self) -> str:  # a model's or a document's control characters shown as escapes, never run
        return safe_text("\n".join(self.lines()))

    def _repr_pretty_(self, printer, cycle) -> None:  # IPython shows this, not the dataclass repr
        printer.text(str(self))


def _plain(value):
    """A trace as JSON data: a hit (a dataclass) as its fields, a tuple as a list, anything else as its text."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "__dataclass_fields__") and not isinstance(value, type):
        return _plain(asdict(value))
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)  # JSON has no NaN
    return str(value)

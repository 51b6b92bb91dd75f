"""A fitted decision, applied: P(right) from a few signals, and the threshold a coverage asks for.

What it is for: a reader always has an answer to show; whether to show it is
decided apart (« je ne sais pas » otherwise). ``Decision`` is a logistic
regression already fitted — standardised signals, weights, a bias — that turns
each question's signals into P(the answer shown would be right); ``threshold``
turns a **coverage** (the share of questions to answer) into the probability
above which to answer, from the probabilities of questions where it was fitted.
It lives on the ground floor of the answer half so that N3 can apply the
decision it ships (``rungs.rag.decision``) and the lab can fit it
(``rungs.lab.selective``: ``fit``, ``cross_fitted``, ``auc``), one home for both.

Cost: a product of a few numbers a question: microseconds.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.errors import BadArgument, check_number


def _floats(values, bools: bool = True) -> np.ndarray:
    # numpy reads "0.5" as 0.5: a number written as text (a hand-edited file) is named, not read
    if np.asarray(values).dtype.kind in "USa":
        raise BadArgument("text, not numbers")  # caught by the caller, which names the argument
    # JSON's true is Python's 1 (bool is an int): where a number belongs, a true/false is a slip, named
    if not bools and (np.asarray(values).dtype.kind == "b" or _has_bool(values)):
        raise BadArgument("true/false, not numbers")
    return np.asarray(values, dtype=float)


def _has_bool(values) -> bool:
    return isinstance(values, (list, tuple)) and any(isinstance(v, (bool, np.bool_)) or _has_bool(v) for v in values)


def rows_of(rows, name: str = "rows") -> np.ndarray:
    """Rows of finite numbers, one row a question, as a float matrix; anything else refused by name."""
    try:
        x = _floats(rows)
    except (TypeError, ValueError):
        raise BadArgument(f"{name} must be rows of numbers, one row a question") from None
    if x.ndim != 2 or not len(x) or not x.shape[1] or not np.isfinite(x).all():
        raise BadArgument(f"{name} must be a non-empty table of finite numbers, one row a question")
    return x


class Decision:
    """A fitted logistic decision: ``probability(rows)`` is P(right) for each row of signals."""

    def __init__(self, names, mean, scale, weights, bias):
        self.names, self.mean, self.scale = list(names), np.asarray(mean), np.asarray(scale)
        self.weights, self.bias = np.asarray(weights), float(bias)

    def probability(self, rows) -> np.ndarray:
        """P(right) for each row of signals, in the order ``names`` gives."""
        x = rows_of(rows)
        if x.shape[1] != len(self.names):
            raise BadArgument(f"rows must hold {len(self.names)} signals ({', '.join(self.names)}), not {x.shape[1]}")
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # an overflow is named just below
            z = ((x - self.mean) / self.scale) @ self.weights + self.bias
        if not np.isfinite(z).all():  # NaN is never at or above a threshold, inf an overflow: both decide silently
            raise BadArgument("the decision's P(right) is not a number for these signals: its mean, scale or weights "
                              "overflow (a scale far below the signals' spread?); fit it again")
        return 1 / (1 + np.exp(-np.clip(z, -30, 30)))

    def to_dict(self) -> dict:
        return {"signals": self.names, "mean": self.mean.tolist(), "scale": self.scale.tolist(),
                "weights": self.weights.tolist(), "bias": self.bias}

    @classmethod
    def from_dict(cls, data: dict) -> "Decision":
        """The decision ``to_dict`` wrote, every field checked (a hand-edited file is refused by name)."""
        if not isinstance(data, dict) or not {"signals", "mean", "scale", "weights", "bias"} <= set(data):
            raise BadArgument("a decision is a dict of signals, mean, scale, weights and bias")
        names, mean, scale, weights, bias = (data[k] for k in ("signals", "mean", "scale", "weights", "bias"))
        if not isinstance(names, (list, tuple)):
            raise BadArgument(f"a decision's signals must be a list of their names, not {type(names).__name__}")
        n = len(names_of(names, len(names)))
        mean, scale, weights = (numbers_of(v, k, n) for v, k in ((mean, "mean"), (scale, "scale"), (weights, "weights")))
        if (scale <= 0).any():
            raise BadArgument("a decision's scales must be above 0")
        return cls(names, mean, scale, weights, check_number(bias, "a decision's bias"))


def numbers_of(values, name: str, length: int | None = None, *, bools: bool = False) -> np.ndarray:
    """One finite number a question, as a float vector; anything else (a true/false unless ``bools``: a
    label) refused by name."""
    try:
        v = _floats(values, bools)
    except (TypeError, ValueError) as err:
        said = f" ({err})" if isinstance(err, BadArgument) else ""
        raise BadArgument(f"{name} must be numbers, one a question{said}") from None
    if v.ndim != 1 or not np.isfinite(v).all() or (length is not None and len(v) != length):
        raise BadArgument(f"{name} must be finite numbers, one a question" + (f" ({length})" if length else ""))
    return v


def names_of(names, n: int) -> list[str]:
    if not isinstance(names, (list, tuple)) or len(names) != n or not all(isinstance(x, str) for x in names):
        raise BadArgument(f"names must be a list naming the {n} signals, one a column")
    if not names:
        raise BadArgument("names must name at least one of the signals: a decision on none says the same to "
                          "every question")
    twice = sorted({x for x in names if names.count(x) > 1})
    if twice:
        raise BadArgument(f"names must name each signal once, not {', '.join(twice)} twice")
    return list(names)


def check_coverage(coverage) -> float:
    """A coverage — the share of the questions to answer, in (0, 1] — as the float it stands for: any real
    number (a numpy float, a Fraction) is one; NaN, a bool, a string are named."""
    return check_number(coverage, "coverage (the share of the questions to answer)", low=0.0, high=1.0,
                        low_open=True)


def threshold(probabilities, coverage: float) -> float:
    """The probability at or above which ``coverage`` of these questions are answered (1.0: all of them)."""
    coverage = check_coverage(coverage)
    p = np.sort(numbers_of(probabilities, "probabilities"))[::-1]
    if not len(p):
        raise BadArgument("threshold needs the probabilities of at least one question")
    return float(p[max(0, math.ceil(coverage * len(p)) - 1)]) if coverage < 1 else -math.inf

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

from ..core.errors import BadArgument


def rows_of(rows, name: str = "rows") -> np.ndarray:
    """Rows of finite numbers, one row a question, as a float matrix; anything else refused by name."""
    try:
        x = np.asarray(rows, dtype=float)
    except (TypeError, ValueError):
        raise BadArgument(f"{name} must be rows of numbers, one row a question") from None
    if x.ndim != 2 or not len(x) or not np.isfinite(x).all():
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
        z = ((x - self.mean) / self.scale) @ self.weights + self.bias
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
        n = len(names_of(names, len(names) if isinstance(names, list) else -1))
        mean, scale, weights = (numbers_of(v, k, n) for v, k in ((mean, "mean"), (scale, "scale"), (weights, "weights")))
        if (scale <= 0).any():
            raise BadArgument("a decision's scales must be above 0")
        return cls(names, mean, scale, weights, float(numbers_of([bias], "bias", 1)[0]))


def numbers_of(values, name: str, length: int | None = None) -> np.ndarray:
    """One finite number a question, as a float vector; anything else refused by name."""
    try:
        v = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise BadArgument(f"{name} must be numbers, one a question") from None
    if v.ndim != 1 or not np.isfinite(v).all() or (length is not None and len(v) != length):
        raise BadArgument(f"{name} must be finite numbers, one a question" + (f" ({length})" if length else ""))
    return v


def names_of(names, n: int) -> list[str]:
    if not isinstance(names, (list, tuple)) or len(names) != n or not all(isinstance(x, str) for x in names):
        raise BadArgument(f"names must be a list naming the {n} signals, one a column")
    return list(names)


def threshold(probabilities, coverage: float) -> float:
    """The probability at or above which ``coverage`` of these questions are answered (1.0: all of them)."""
    if isinstance(coverage, bool) or not isinstance(coverage, (int, float)) or not 0 < coverage <= 1:
        raise BadArgument(f"coverage must be a share of the questions, above 0 and at most 1, not {coverage!r}")
    p = np.sort(numbers_of(probabilities, "probabilities"))[::-1]
    if not len(p):
        raise BadArgument("threshold needs the probabilities of at least one question")
    return float(p[max(0, math.ceil(coverage * len(p)) - 1)]) if coverage < 1 else -math.inf

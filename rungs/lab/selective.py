"""Selective answering: when to say « je ne sais pas », decided apart from the reading, at a coverage you pick.

What it is for: a reader (the model, or « copy », which reads nothing) always has
an answer to show; the decision is whether to show it. ``fit`` learns P(the
answer shown would be right) from a few signals of each question — the gate's
P(yes), how well the best passage and the copied sentences match the question —
by logistic regression (Newton's method, standardised signals, a small ridge:
deterministic, no library); ``cross_fitted`` gives every question a probability
from a model that never saw it; ``threshold`` turns a **coverage** — the share
of questions to answer, the knob a user understands — into the probability
above which to answer; ``auc`` says how well the probabilities order right
answers above wrong ones (0.5: chance). Measured in benchmarks/bench_decision.py
(benchmarks/README.md, « Deciding apart from reading »).

Cost: a few Newton steps on a few hundred rows: milliseconds.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.errors import BadArgument

#: The ridge on the standardised weights: enough to keep a separable fold finite, too little to matter otherwise.
RIDGE = 1.0
STEPS = 50


def _matrix(rows, name: str = "rows") -> np.ndarray:
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
        x = _matrix(rows)
        if x.shape[1] != len(self.names):
            raise BadArgument(f"rows must hold {len(self.names)} signals ({', '.join(self.names)}), not {x.shape[1]}")
        z = ((x - self.mean) / self.scale) @ self.weights + self.bias
        return 1 / (1 + np.exp(-np.clip(z, -30, 30)))

    def to_dict(self) -> dict:
        return {"signals": self.names, "mean": self.mean.tolist(), "scale": self.scale.tolist(),
                "weights": self.weights.tolist(), "bias": self.bias}


def _vector(values, name: str, length: int | None = None) -> np.ndarray:
    """One finite number a question, as a float vector; anything else refused by name."""
    try:
        v = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise BadArgument(f"{name} must be numbers, one a question") from None
    if v.ndim != 1 or not np.isfinite(v).all() or (length is not None and len(v) != length):
        raise BadArgument(f"{name} must be finite numbers, one a question" + (f" ({length})" if length else ""))
    return v


def _labels(right, n: int) -> np.ndarray:
    y = _vector(right, "right", n)
    if not set(np.unique(y)) <= {0.0, 1.0}:
        raise BadArgument("right must be one 0/1 (or False/True) a row")
    return y


def _names(names, n: int) -> list[str]:
    if not isinstance(names, (list, tuple)) or len(names) != n or not all(isinstance(x, str) for x in names):
        raise BadArgument(f"names must be a list naming the {n} signals, one a column")
    return list(names)


def fit(rows, right, names) -> Decision:
    """P(right) by logistic regression on standardised signals (``names`` says which column is which)."""
    x = _matrix(rows)
    y, names = _labels(right, len(x)), _names(names, x.shape[1])
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0  # a constant signal says nothing: its weight stays 0
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    penalty = np.diag([RIDGE] * x.shape[1] + [0.0])  # the bias is not shrunk
    for _ in range(STEPS):  # Newton's method on the penalised log-likelihood: a handful of steps converge
        p = 1 / (1 + np.exp(-np.clip(z @ w, -30, 30)))
        gradient = z.T @ (p - y) + penalty @ w
        hessian = z.T @ (z * (p * (1 - p))[:, None]) + penalty + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    return Decision(names, mean, scale, w[:-1], w[-1])


def cross_fitted(rows, right, names, *, folds: int = 5, seed: int = 0) -> np.ndarray:
    """Every row's P(right) from a model fitted on the other folds: a score the row never helped to make."""
    x = _matrix(rows)
    y, names = _labels(right, len(x)), _names(names, x.shape[1])
    if isinstance(folds, bool) or not isinstance(folds, int) or not 2 <= folds <= len(x):
        raise BadArgument(f"folds must be between 2 and the number of rows ({len(x)}), not {folds}")
    order = np.random.default_rng(seed).permutation(len(x))
    out = np.empty(len(x))
    for k in range(folds):
        held = order[k::folds]
        kept = np.setdiff1d(order, held)
        out[held] = fit(x[kept], y[kept], names).probability(x[held])
    return out


def threshold(probabilities, coverage: float) -> float:
    """The probability at or above which ``coverage`` of these questions are answered (1.0: all of them)."""
    if isinstance(coverage, bool) or not isinstance(coverage, (int, float)) or not 0 < coverage <= 1:
        raise BadArgument(f"coverage must be a share of the questions, above 0 and at most 1, not {coverage!r}")
    p = np.sort(_vector(probabilities, "probabilities"))[::-1]
    if not len(p):
        raise BadArgument("threshold needs the probabilities of at least one question")
    return float(p[max(0, math.ceil(coverage * len(p)) - 1)]) if coverage < 1 else -math.inf


def auc(scores, labels) -> float | None:
    """The chance that a right answer drawn at random scores above a wrong one (ties half); None if one is missing."""
    s = _vector(scores, "scores")
    y = _labels(labels, len(s)).astype(bool)
    pos, neg = s[y], s[~y]
    if not (len(pos) and len(neg)):
        return None
    above = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(above / (len(pos) * len(neg)))

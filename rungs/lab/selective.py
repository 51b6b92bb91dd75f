"""Selective answering: when to say « je ne sais pas », decided apart from the reading, at a coverage you pick.

What it is for: a reader (the model, or « copy », which reads nothing) always has
an answer to show; the decision is whether to show it. ``fit`` learns P(the
answer shown would be right) from a few signals of each question — the gate's
P(yes), how well the best passage and the copied sentences match the question —
by logistic regression (Newton's method, standardised signals, a small ridge:
deterministic, no library); ``cross_fitted`` gives every question a probability
from a model that never saw it; ``threshold`` turns a **coverage** — the share
of questions to answer, the knob a user understands — into the probability
above which to answer (it and the fitted ``Decision`` live in
``rungs.grounding.deciding``, where N3 applies the decision it ships); ``auc``
says how well the probabilities order right answers above wrong ones (0.5: chance). Measured in benchmarks/bench_decision.py
(benchmarks/README.md, « Deciding apart from reading »).

Cost: a few Newton steps on a few hundred rows: milliseconds.
"""

from __future__ import annotations

import numpy as np

from ..core.errors import BadArgument, check_int
from ..grounding.deciding import Decision, names_of, numbers_of, rows_of, threshold  # noqa: F401 (threshold: the lab's door too)

#: The ridge on the standardised weights: enough to keep a separable fold finite, too little to matter otherwise.
RIDGE = 1.0
STEPS = 50


def _labels(right, n: int) -> np.ndarray:
    y = numbers_of(right, "right", n, bools=True)  # a label: True is right
    if not set(np.unique(y)) <= {0.0, 1.0}:
        raise BadArgument("right must be one 0/1 (or False/True) a row")
    return y


def fit(rows, right, names) -> Decision:
    """P(right) by logistic regression on standardised signals (``names`` says which column is which)."""
    x = rows_of(rows)
    y, names = _labels(right, len(x)), names_of(names, x.shape[1])
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is named just below
        mean, scale = x.mean(axis=0), x.std(axis=0)
    if not (np.isfinite(mean).all() and np.isfinite(scale).all()):
        raise BadArgument("rows hold numbers too large to standardise (their mean or spread overflows): rescale them")
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
    x = rows_of(rows)
    y, names = _labels(right, len(x)), names_of(names, x.shape[1])
    folds = check_int(folds, f"folds (from 2 to the number of rows, {len(x)})", low=2, high=len(x))
    # A seed, always: None would draw the folds afresh each run, and the study would not repeat.
    order = np.random.default_rng(check_int(seed, "seed", low=0)).permutation(len(x))
    out = np.empty(len(x))
    for k in range(folds):
        held = order[k::folds]
        kept = np.setdiff1d(order, held)
        out[held] = fit(x[kept], y[kept], names).probability(x[held])
    return out


def auc(scores, labels) -> float | None:
    """The chance that a right answer drawn at random scores above a wrong one (ties half); None if one is missing."""
    s = numbers_of(scores, "scores")
    y = _labels(labels, len(s)).astype(bool)
    pos, neg = s[y], s[~y]
    if not (len(pos) and len(neg)):
        return None
    above = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(above / (len(pos) * len(neg)))

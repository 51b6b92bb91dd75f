"""The one rule of deciding at a threshold: a probability below it says no, at or above it yes.

What it is for: the gate (« je ne sais pas » below its threshold), the shipped decision on a copy (shown at
or above the threshold its coverage sets), the judges (an answer flagged below the support threshold) and
the benchmarks that replay those thresholds over stored probabilities all decide the same way — a P equal
to the threshold passes. Written once here, so that a second copy cannot put the equal case on the other
side. A P that could not be read (None) gives no verdict (None): each caller says what that means.

Cost: one comparison. Taught in notebook 03 (the gate and the decision), used in 04 (the support check).
"""

from __future__ import annotations


def below(p: float | None, threshold: float | None) -> bool | None:
    """Whether ``p`` is below ``threshold`` (« no »: abstain, flag); None when either was not read."""
    if p is None or threshold is None:
        return None
    return p < threshold


def passes(p: float | None, threshold: float | None) -> bool | None:
    """Whether ``p`` is at or above ``threshold`` (« yes »: answer, show, supported); None when either was not read."""
    said = below(p, threshold)
    return None if said is None else not said

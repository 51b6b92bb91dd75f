"""A probability read from a model's first token: « Oui » or « Non », a letter, a digit.

What it is for: a typed decision need not be *written* by the model. Ask for
one token; the endpoint returns the first token's ``top_logprobs``; every token
that begins a candidate answer (« O » for « Oui ») counts for it, and the shares
are renormalised over the candidates. N4 teaches it (``rungs.decide``'s logprob
backend); N3's sufficient-context gate (``rungs.rag``) uses it to decide whether
the passages answer before paying for an answer. ``coverage`` — the share of
the probability that fell on candidates at all — says how far to trust it.

Cost: nothing beyond the one-token call.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from ..core.errors import BadArgument, short_repr, check_number

#: The words that may begin « yes » and « no », in French and in English (the model answers either).
YES_NO = {"true": ("Oui", "oui", "Yes", "yes"), "false": ("Non", "non", "No", "no")}


def distribution(top: dict[str, float], candidates: dict[str, list[str]]) -> tuple[dict, float]:
    """Map first-token log-probabilities to answers by prefix; renormalise; return (probs, coverage)."""
    if not isinstance(top, Mapping):
        raise BadArgument(f"top must be a dict of token → log-probability, not {type(top).__name__}")
    for token, logprob in top.items():
        # A log-probability is ≤ 0 (a hair above, from rounding, is tolerated): exp of anything else is no share.
        if not isinstance(token, str):
            raise BadArgument(f"top's tokens must be text, not {type(token).__name__} {short_repr(token)}")
        check_number(logprob, f"top[{token!r}]", high=1e-6)
    mass = dict.fromkeys(candidates, 0.0)
    for token, logprob in top.items():
        word = token.strip()
        if not word:
            continue
        owners = {answer for answer, forms in candidates.items() if any(f.startswith(word) for f in forms)}
        # A token that begins answers of two kinds says nothing about which: it is not counted.
        if len(owners) == 1:
            mass[owners.pop()] += math.exp(logprob)
    coverage = sum(mass.values())
    if coverage > 1 + 1e-6:  # the shares of one distribution cannot add up to more than all of it
        raise BadArgument(f"top's probabilities add up to {coverage:.3f}, more than 1: not one distribution")
    if coverage == 0:
        return {}, 0.0
    return {a: m / coverage for a, m in mass.items()}, min(coverage, 1.0)

"""N3's sufficient-context gate: before paying for an answer, ask whether the extracts can answer at all.

What it is for: a small model handed four passages that brush the topic will
usually say *something* — a sentence from a nearby page — rather than « je ne
sais pas ». The field's remedy (CRAG's retrieval evaluator; « sufficient
context », Joren et al., ICLR 2025) is a separate yes/no question about the
passages, asked first: « Ces extraits permettent-ils de répondre à la
question ? ». Its answer is read as a probability from the first token's
log-probabilities (N4's logprob path, ``rungs.grounding.logprobs``); below the
threshold the answer is « je ne sais pas » (status: no answer) and the
answer's own call is never made.

The gate's prompt is the answer's prompt up to the question — the same
extracts, numbered the same way — so the answer that follows reuses what the
server has just read (``Answer.cost.reused_tokens``): the gate costs the
prompt once, plus one token.

Whether it is on, and its threshold, are knobs chosen like any other: by
``rungs.lab.tuning.choose`` on the deciding half of the judged questions,
reported once on the other half (``benchmarks/README.md``, « Knowing when not
to answer »). Its threshold table — precision and recall of « answerable » at
each threshold, from stored probabilities, no model — is in notebook 03.

Cost: one call of one output token (the prompt is the answer's, reused).
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from ..core.errors import BadArgument, short_repr
from ..grounding.answer import Cost
from ..grounding.logprobs import YES_NO, distribution
from ..grounding.showing import figures_of  # noqa: F401 - printed with the gate's refusals; its home is the printer
from ..model import ModelError
from .build import build_prompt
from .prompts import GATE_PROMPT, GATE_PROMPT_NUMBERED
from .readers import reader

#: Below this share of the first token's probability on « Oui »/« Non », the gate says it cannot tell.
MIN_COVERAGE = 0.5
TOP_LOGPROBS = 10


def sufficiency(question: str, sent: list[dict], client, *, mode: str, sentences: list[dict] | None,
                collection: str | None) -> dict:
    """P(the extracts answer the question), read from the first token: ``{"p", "coverage", "trusted",
    "cost", "prompt", "note"}``; ``p`` is None when the endpoint gives no probability the gate can trust."""
    template = GATE_PROMPT_NUMBERED if reader(mode).numbered else GATE_PROMPT
    prompt = build_prompt(question, sent, prompt=template, mode=mode, sentences=sentences, collection=collection)
    started = time.perf_counter()
    try:
        result = client.chat([{"role": "user", "content": prompt}], max_tokens=1, logprobs=TOP_LOGPROBS)
    except ModelError as err:  # a failed call still took its seconds; the answer's call will say what is wrong
        return {"p": None, "coverage": 0.0, "trusted": False, "prompt": prompt, "error": err,
                "cost": Cost(calls=1, seconds=time.perf_counter() - started),
                "note": "the gate's call failed: answered without it"}
    cost = Cost.of_call(result, time.perf_counter() - started)
    top = _first_top(result.logprobs)
    if top is _MISSHAPEN:  # an endpoint's (or a double's) own shape: said, and the answer goes on
        return {"p": None, "coverage": 0.0, "trusted": False, "cost": cost, "prompt": prompt,
                "note": f"the endpoint's log-probabilities are not a list of tokens, each with its « top » "
                        f"alternatives ({short_repr(result.logprobs)}): answered without the gate"}
    if not top:
        return {"p": None, "coverage": 0.0, "trusted": False, "cost": cost, "prompt": prompt,
                "note": "the endpoint returned no log-probabilities: answered without the gate"}
    try:
        probs, coverage = distribution(top, {k: list(v) for k, v in YES_NO.items()})
    except BadArgument as err:  # the endpoint's numbers, not the caller's: said, and the answer goes on
        return {"p": None, "coverage": 0.0, "trusted": False, "cost": cost, "prompt": prompt,
                "note": f"the endpoint's log-probabilities cannot be read ({err}): answered without the gate"}
    if coverage < MIN_COVERAGE:
        return {"p": None, "coverage": coverage, "trusted": False, "cost": cost, "prompt": prompt,
                "note": f"the gate could not tell (only {coverage:.0%} of the first token on « Oui »/« Non »): "
                        "answered without it"}
    return {"p": probs["true"], "coverage": coverage, "trusted": True, "cost": cost, "prompt": prompt, "note": ""}


_MISSHAPEN = object()


def _first_top(logprobs):
    """The first token's alternatives (``{token: logprob}``), None when there are none, ``_MISSHAPEN`` when
    what came is not ``[{"token", "logprob", "top"}, …]`` (a dict, a list of text, a token that is not a dict)."""
    if not logprobs:
        return None
    if not isinstance(logprobs, (list, tuple)) or not isinstance(logprobs[0], Mapping):
        return _MISSHAPEN
    return logprobs[0].get("top")

"""N5 — a bounded research loop: plan, search, read, rank, synthesize, cite, follow up.

Rooms, one concept each:

- ``loop``       the bounds, the ledger of what was spent, the chain of models, the stages, and ``run``
- ``ground``     citations checked against the sources gathered as the report streams (``CitationFilter``)
- ``report``     the report streamed a checked sentence at a time (``SentenceGate``), model after model
- ``checks``     what a sentence must pass before it is shown, and the quote behind each citation
- ``settle``     what became of the run: the ``Answer``
- ``answerers``  ``Researcher``: N5 as an ``Answerer``, built once
- ``prompts``    what each stage asks the model, and the reading of a plan

``research.run(question, pages=…)`` is the rung in one call and returns a
``rungs.grounding.Answer``; the names below are what notebook 05 uses. What a run says while it runs
(``ListSink``, ``printing_sink``) is the one event type of N3 and N5, ``rungs.grounding.events``.
"""

from ..grounding.events import ListSink, printing_sink
from .answerers import Researcher
from .ground import QUOTE_CHARS, CitationFilter, check_citations
from .loop import (DEFAULTS, FUSION_K, GATHER_SHARE, MAX_ROUNDS, MAX_SOURCES, SOURCE_CHARS, STAGE_TOKENS, Ledger, ModelChain,
                   check_bounds, default_retriever, run)
from .prompts import CONTINUE_PROMPT, FOLLOW_PROMPT, PLAN_PROMPT, SYNTH_PROMPT, parse_plan
from .report import MAX_SENTENCE_CHARS, SentenceGate

__all__ = ["CONTINUE_PROMPT", "CitationFilter", "DEFAULTS", "FOLLOW_PROMPT", "FUSION_K", "GATHER_SHARE", "Ledger", "ListSink",
           "MAX_ROUNDS", "MAX_SENTENCE_CHARS", "MAX_SOURCES", "ModelChain", "PLAN_PROMPT", "QUOTE_CHARS",
           "Researcher", "SOURCE_CHARS", "STAGE_TOKENS", "SYNTH_PROMPT", "SentenceGate", "check_bounds",
           "check_citations", "default_retriever", "parse_plan", "printing_sink", "run"]

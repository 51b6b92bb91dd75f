"""N5 — a bounded research loop: plan, search, read, rank, synthesize, cite, follow up.

Rooms, one concept each:

- ``loop``     the bounds, the ledger of what was spent, the chain of models, and the run itself (``run``)
- ``ground``   citations checked while the report streams, against the sources gathered (``CitationFilter``)
- ``prompts``  what each stage asks the model, and the reading of a plan
- ``events``   what a run says while it runs, collected or shown

``research.run(question, pages=…)`` is the rung in one call; the names below
are what notebook 05 uses.
"""

from .events import ListSink, printing_sink
from .ground import QUOTE_CHARS, CitationFilter, check_citations
from .loop import (DEFAULTS, GATHER_SHARE, MAX_ROUNDS, MAX_SOURCES, NO_ANSWER, SOURCE_CHARS, STAGE_TOKENS, Ledger,
                   ModelChain, check_bounds, default_retriever, run)
from .prompts import CONTINUE_PROMPT, FOLLOW_PROMPT, PLAN_PROMPT, SYNTH_PROMPT, parse_plan

__all__ = ["CONTINUE_PROMPT", "CitationFilter", "DEFAULTS", "FOLLOW_PROMPT", "GATHER_SHARE", "Ledger", "ListSink",
           "MAX_ROUNDS", "MAX_SOURCES", "ModelChain", "NO_ANSWER", "PLAN_PROMPT", "QUOTE_CHARS", "SOURCE_CHARS",
           "STAGE_TOKENS", "SYNTH_PROMPT", "check_bounds", "check_citations", "default_retriever", "parse_plan",
           "printing_sink", "run"]

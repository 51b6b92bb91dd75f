"""N5 as an ``Answerer``: pages and a retriever, built once; ``ask(question)`` runs the research loop.

What it is for: ``research.run`` takes everything at every call; a reader with
a collection has questions. ``Researcher`` is built once from the pages it
reads (and a retriever over them — by default the answer rungs' hybrid, built
here once, not per question), a client (or a fallback chain), a mode and its
bounds, and answers in the one shape. The suite checks it against the answer
contract (``rungs.grounding.contract``) with every other answerer it finds.

Cost: the retriever's build (the hybrid encodes every page: seconds), then
``research.run``'s calls per question.
"""

from __future__ import annotations

import time

from ..core.documents import check_documents
from ..core.errors import BadArgument
from ..core.retrieval import Retriever
from ..grounding.answer import Answer
from ..grounding.answerer import Answerer
from .loop import check_bounds, default_retriever, run
from .prompts import check_synth_prompt


class Researcher(Answerer):
    """Research ``question`` over ``pages`` in ``mode`` (``"quick"`` or ``"research"``) within its bounds.

    ``retriever``: any retriever over the pages (default: ``hybrid.answer_retriever(pages)``);
    ``models``: a fallback chain instead of one ``client``; ``sink``: told every event of every run;
    ``prompt``: the synthesis prompt (``research.run``'s);
    ``bounds``: overrides of the mode's (``research.DEFAULTS``), checked here, once.
    """

    name = "research"

    def __init__(self, pages, client=None, *, retriever: Retriever | None = None, mode: str = "quick",
                 models: list | None = None, sink=None, clock=time.monotonic, prompt: str | None = None,
                 **bounds):
        check_bounds(mode, bounds)  # refused here, not at the first question
        self.prompt = check_synth_prompt(prompt) if prompt is not None else None
        self.pages = check_documents(pages, name="pages")
        if retriever is not None and not isinstance(retriever, Retriever):
            raise BadArgument(f"retriever must be a rungs retriever (search(query, *, limit)), "
                              f"not {type(retriever).__name__}")
        self.retriever = retriever if retriever is not None else default_retriever(self.pages)
        self.client, self.models, self.sink, self.clock = client, models, sink, clock
        self.mode, self.bounds = mode, dict(bounds)
        self.name = f"research {mode}"

    def _ask(self, question: str) -> Answer:
        return run(question, pages=self.pages, retriever=self.retriever, client=self.client, mode=self.mode,
                   sink=self.sink, models=self.models, clock=self.clock, prompt=self.prompt, **self.bounds)

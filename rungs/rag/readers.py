"""N3's readers in one table: what each mode sends, what its reply holds, what is checked — read in one place.

What it is for: a mode used to be a string tested wherever it mattered
(« startswith("pointing") », « == "quoted" », in five modules), so a new reader
meant finding every test of the old ones. Here each reader is one row, a
``Reader`` whose fields say what differs: whether a model reads at all
(``model``: « copy », the floor, asks none), whether the extracts go as
numbered sentences the reply points at (``numbered``), whether a few words
come first (``lead``), whether each cited extract's words must be copied into
the reply (``quotes``), whether sentences stream as they are chosen
(``streams``), and the typed shape its reply is read into (``reply``:
``rungs.rag.replies``). ``reader(mode)`` is the one place a mode's name is read; the
prompt, the schema, the decoder, the gate and the answer read its fields.

A new reader is a new row (and, if it needs one, a template in
``rungs.rag.prompts``): ``rag.READERS``, ``python -m rungs ask --mode`` and the
answer contract (``rungs.grounding.contract``) find it from here.

Taught in notebook 03 (« Four ways to read », and the floor beside them).

Cost: nothing; a lookup.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import check_bool, check_choice
from .replies import FreeReply, PointingReply, QuotedReply

#: The floor's name, as ``rag.answer(mode=…)`` and ``python -m rungs ask --mode`` take it (``rungs.rag.copying``).
COPY = "copy"


@dataclass(frozen=True)
class Reader:
    """One way to read the passages: its name, and the few facts every step of the answer asks of it."""

    name: str
    reply: type  # the shape its reply is decoded into, once, and read by field (``rungs.rag.replies``)
    model: bool  # a model reads (False: the copy, no call but the decision's)
    numbered: bool  # the extracts go as numbered sentences, and the reply points at their numbers
    lead: bool = False  # a few words first (« Non. », « 12 jours. »), then the sentences that say them
    quotes: bool = False  # each cited extract's words must be copied into the reply, and are checked
    streams: bool = False  # each chosen sentence can be shown as its number arrives (nothing to check first)

    @property
    def empty(self) -> str:
        """The no-answer, written in this reader's reply's shape (what a repair message offers)."""
        return '{"answer": "Je ne sais pas.", "quotes": []}' if self.quotes else \
            '{"answer": "Je ne sais pas.", "sources": []}'


#: Every reader, in the order the notebooks and the CLI list them: the four model modes, then the floor.
TABLE = {r.name: r for r in (
    Reader("pointing", PointingReply, model=True, numbered=True, streams=True),
    Reader("pointing-lead", PointingReply, model=True, numbered=True, lead=True),
    Reader("quoted", QuotedReply, model=True, numbered=False, quotes=True),
    Reader("free", FreeReply, model=True, numbered=False),
    Reader(COPY, PointingReply, model=False, numbered=True),  # what it copies is read as a choice of numbers
)}
#: The readers' names (``rag.answer(mode=…)``, ``ask --mode``); ``MODES``: those a model reads.
READERS = tuple(TABLE)
MODES = tuple(name for name, r in TABLE.items() if r.model)


def reader(mode, name: str = "mode", *, model: bool = False) -> Reader:
    """The reader called ``mode`` (one of ``READERS``; of ``MODES`` when ``model``), or ``BadArgument`` naming them."""
    check_bool(model, "model")
    check_choice(mode, name, MODES if model else READERS)
    return next(r for n, r in TABLE.items() if n == mode)  # as check_choice compared: a str's hash may lie

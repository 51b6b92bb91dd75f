"""N3's replies, typed: what each reader's reply holds once read, one frozen shape per row of ``rungs.rag.readers``.

What it is for: a reply used to be read into a dict (« phrases », « lead », « answer »…) that every
later step read by key, so a key misspelt was a ``KeyError`` three modules away. A reply is now
decoded once (``rungs.rag.read.decode``; the JSON itself is read in its one home,
``rungs.grounding.replies``) into the shape its reader's row names (``Reader.reply``), and read by
field from there on:

    PointingReply   « pointing », « pointing-lead », « copy »: the sentence numbers chosen (none: « aucune »),
                    and the few words first (« pointing-lead »; else "")
    QuotedReply     « quoted »: the answer, each cited extract's words, the sources
    FreeReply       « free »: the answer and the ids it cites

Taught in notebook 03 (« The decoder, case by case »).

Cost: nothing; a few small objects.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..grounding.answer import Quote


@dataclass(frozen=True)
class PointingReply:
    """The numbers a pointing reply chose, in its order, each once (empty: « aucune », no sentence answers),
    and its lead-in as shown (``rungs.rag.pointing.cut_lead``; "" when the reader writes none)."""

    chosen: tuple[int, ...]
    lead: str = ""


@dataclass(frozen=True)
class QuotedReply:
    """A quoted reply: the answer, the extracts' words it copies (``Quote``), the ids cited (the quotes' first)."""

    answer: str
    quotes: tuple[Quote, ...]
    sources: tuple[str, ...]


@dataclass(frozen=True)
class FreeReply:
    """A free reply: the answer, and the ids of the passages it cites (as text)."""

    answer: str
    sources: tuple[str, ...]

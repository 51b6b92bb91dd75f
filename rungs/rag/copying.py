"""N3's floor: « copy », a reader with no model — the sentences that match the question best, copied, cited.

What it is for: every model reader is measured against it on the same
questions. ``copy`` shows the ``COPIED`` sentences the collection's hybrid over
sentences ranks first (``rungs.rag.pointing.sentences_for``'s ``rank``: BM25 and
the vector leg fused by RRF), each cited to the passage it comes from, in the
passages' order. It never says « je ne sais pas » on its own: it has no way to
know. On the judged handbook it holds every key fact of more answerable
questions than the 1.5B model's pointing-lead answer does (benchmarks/README.md,
« The floor: a copy with no model »), which is why it sits beside every model
mode in notebook 03 and in ``python -m rungs ask --mode copy``.

Its answer goes through what every reader's does — the figure checks, the
``Answer`` — so it is compared like for like.

Cost: ranking the sentences sent (milliseconds, and the encoder's first load);
no call, no token.
"""

from __future__ import annotations

from .read import point
from .readers import COPY  # noqa: F401  the floor's name lives with every reader's
from .replies import PointingReply
#: How many sentences the copy shows. Three: the deciding half's best of 1, 2, 3 (benchmarks/bench_copy.py),
#: and the most the pointing modes may show (``MAX_SENTENCES``), so the two are read alike.
COPIED = 3


def copy(numbered: list[dict], copied: int = COPIED) -> dict:
    """The ``copied`` sentences of ``numbered`` ranked first (their ``rank``; ties by number), read as a
    pointing reply that chose them is (``rungs.rag.read.point``): copied in the passages' order, with their sources."""
    ranked = sorted(numbered, key=lambda s: (s.get("rank", s["n"]), s["n"]))[:copied]
    return point(PointingReply(tuple(sorted(s["n"] for s in ranked))), numbered)

"""N3 as an ``Answerer``: a retriever finds the passages, ``rag.answer`` answers from them.

What it is for: ``rag.answer`` takes passages; a reader with a folder has a
question. ``Rag`` is built once from a retriever (any rung: the hybrid, BM25,
your folder's) and the documents it ranks, and answers ``ask(question)`` in the
one shape. It is what ``python -m rungs ask`` runs and what the benchmarks
measure, and the suite checks it against the answer contract
(``rungs.grounding.contract``) with every other answerer it finds.

Cost: one search (milliseconds), then ``rag.answer``'s calls.
"""

from __future__ import annotations

import inspect

from ..core.documents import check_documents
from ..core.errors import BadArgument, check_int, short_repr
from ..core.retrieval import Retriever
from ..grounding.answer import Answer
from ..grounding.answerer import Answerer
from .answering import answer
from .build import MAX_PASSAGES
from .readers import reader

#: The knobs ``Rag`` passes on to ``rag.answer``: its keyword arguments but the hits, which ``Rag`` finds itself.
KNOBS = tuple(name for name, p in inspect.signature(answer).parameters.items()
              if p.kind is p.KEYWORD_ONLY and name != "hits")


class Rag(Answerer):
    """Retrieve ``passages`` passages for the question, then answer from them (``rag.answer``'s knobs).

    ``documents``: what the retriever's ids stand for — a list of documents, a dict id → document, or a
    function of an id — so the model reads their text. ``search``: knobs for the retriever's search.
    """

    name = "rag"

    def __init__(self, retriever: Retriever, documents, client=None, *, passages: int = MAX_PASSAGES,
                 search: dict | None = None, **knobs):
        if not isinstance(retriever, Retriever):
            raise BadArgument(f"retriever must be a rungs retriever (search(query, *, limit)), "
                              f"not {type(retriever).__name__}")
        if callable(documents):
            self.document = documents
        else:
            listed = check_documents(list(documents.values()) if isinstance(documents, dict) else documents)
            by_id = {str(d["id"]): d for d in listed}
            self.document = by_id.get
        unknown = sorted(set(knobs) - set(KNOBS))
        if unknown:  # said at construction, not at the first question (as a bare TypeError)
            raise BadArgument(f"Rag has no knob {unknown[0]!r}: rag.answer's knobs are {', '.join(KNOBS)}")
        if "mode" in knobs:  # the reader, named now: one of rag.READERS
            knobs = {**knobs, "mode": reader(knobs["mode"]).name}
        self.retriever, self.client, self.knobs = retriever, client, knobs
        self.passages = check_int(passages, "passages", low=1, high=MAX_PASSAGES)
        if search is not None and not isinstance(search, dict):  # dict("abc") would raise a bare ValueError
            raise BadArgument(f"search must be a dict of the retriever's knobs (name → value), not "
                              f"{type(search).__name__} {short_repr(search)}")
        self.search = dict(search or {})
        self.name = f"rag {knobs.get('mode', 'default mode')}"

    def _ask(self, question: str) -> Answer:
        hits = self.retriever.search(question, limit=self.passages, **self.search) if question.strip() else []
        found = [self.document(h.id) for h in hits]
        missing = [h.id for h, d in zip(hits, found) if d is None]
        if missing:  # the model can only read what it was given
            raise BadArgument(f"the retriever found {missing[:3]}, which are not among the documents: "
                              "build both from the same documents")
        out = answer(question, found, self.client, hits=hits, **self.knobs)
        return out.with_(trace={**out.trace, "hits": hits})

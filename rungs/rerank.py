"""N4 at work: a model's typed judgement of each first-stage page, and the pages reordered by it.

What it is for: a cheap first stage (BM25, the hybrid) finds candidates; a
model reads each one with the question and answers a typed question —
« how far does the passage answer it, 0–3? » (``RELEVANCE``) or a yes/no —
through ``rungs.decide.ask``, validated like every decision. ``rerank`` orders
pages by that value; ``Reranker`` is the same as a retriever, so it drops into
every place a retriever goes (a fusion, the research loop, the contract).

What it cost is carried with what it found: each judged hit holds its
judgement's ``Cost`` in ``extra["cost"]``; ``rerank`` returns a ``Reranked``
list whose ``cost`` is the sum, and a ``Reranker`` keeps its last search's
total in ``last_cost`` (a ranking stays a list of hits, as every retriever's).

Cost: one short model call per page judged (``depth`` of them per search):
seconds each on the local model, so judge the top few, not the collection.
"""

from __future__ import annotations

from .core.documents import check_documents, passage_text
from .core.errors import BadArgument, check_choice, check_int, check_query
from .core.retrieval import Hit, Retriever, ordered
from .decide import MAX_STATE_CHARS, ask, check_questions
from .grounding.answer import Cost

RELEVANCE = {"type": "score", "instructions": "Dans quelle mesure le passage répond-il à la question ?",
             "criteria": ["hors sujet", "même thème, ne répond pas", "répond en partie", "répond exactement"]}


class Reranked(list):
    """The reranked hits, a list like every ranking, with ``cost``: what judging them all took."""

    cost: Cost = Cost()


def rerank(question: str, pages: list, judge: dict | None = None, client=None, *, backend: str = "logprobs",
           max_chars: int = 600) -> Reranked:
    """Ask one question per page (``judge``: a score or noul question) and reorder by the judged value.

    ``pages`` are documents (dicts with ``id`` and text) in their first-stage
    order. Each hit: ``score`` = the judged value (expected score or P(yes)),
    ``parts`` = ``{"judge": value}``, ``extra["first_rank"]`` = where the page
    stood before. Ties are broken by id, as everywhere. A judgement the model
    would not give with enough certainty (logprobs below ``min_coverage``)
    scores −1: below every real judgement, and said in ``why``.
    """
    judge = judge or RELEVANCE
    if not isinstance(judge, dict) or judge.get("type") not in ("score", "noul"):
        raise BadArgument("judge must be a 'score' or 'noul' question (see rerank.RELEVANCE)")
    check_query(question, name="question")
    pages = check_documents(pages, name="pages")  # ids unique: a page has one judgement and one rank
    check_int(max_chars, "max_chars", low=1, high=MAX_STATE_CHARS)
    check_choice(backend, "backend", ("logprobs", "chat"))
    check_questions({"judge": judge})
    hits = []
    for rank, page in enumerate(pages, start=1):
        state = {"question": question, "passage": passage_text(page)[:max_chars]}
        decision = ask(state, {"judge": judge}, client, backend=backend)
        answer = decision.answers["judge"]
        value = answer.get("expected", answer.get("score", answer.get("p")))
        extra = {"first_rank": rank, "cost": decision.cost}
        if value is None:
            hits.append(Hit(id=str(page["id"]), title=str(page.get("title") or ""), score=-1.0,
                            why="the judge was not sure enough to give a value; ranked last", extra=extra))
        else:
            hits.append(Hit(id=str(page["id"]), title=str(page.get("title") or ""), score=float(value),
                            parts={"judge": float(value)}, extra=extra))
    out = Reranked(ordered(hits))
    out.cost = sum((h.extra["cost"] for h in hits), Cost())
    return out


class Reranker(Retriever):
    """A first-stage retriever, then a model's judgement of each of its top ``depth`` pages, in that order.

    ``documents`` gives the text the judge reads (id → document, or the list).
    Knobs: ``depth`` (how many first-stage hits are judged: one model call each),
    ``backend`` (``"logprobs"`` or ``"chat"``). The judge is a build-time choice.
    """

    name = "reranker"
    defaults = {"depth": 10, "backend": "logprobs"}

    def __init__(self, first_stage: Retriever, documents, *, judge: dict | None = None, client=None, **knobs):
        super().__init__()
        if not isinstance(first_stage, Retriever):
            raise BadArgument("first_stage must be a retriever (anything with search(query, *, limit))")
        self.first_stage, self.judge, self.client = first_stage, judge or RELEVANCE, client
        if not isinstance(self.judge, dict) or self.judge.get("type") not in ("score", "noul"):
            raise BadArgument("judge must be a 'score' or 'noul' question (see rerank.RELEVANCE)")
        check_questions({"judge": self.judge})
        listed = check_documents(list(documents.values()) if isinstance(documents, dict) else documents)
        self.documents = {str(d["id"]): d for d in listed}
        self.knobs = self._settings(knobs)
        self.last_cost = Cost()  # what the last search's judgements took

    def check_knobs(self, knobs: dict) -> dict:
        return {"depth": check_int(knobs["depth"], "depth", low=1, high=100),
                "backend": check_choice(knobs["backend"], "backend", ("logprobs", "chat"))}

    def _search(self, query, limit, knobs):
        first = self.first_stage.search(query, limit=knobs["depth"])
        unknown = [h.id for h in first if h.id not in self.documents]
        if unknown:  # the judge can only read what it was given
            raise BadArgument(f"the first stage found {unknown[:3]}, which are not among the reranker's documents: "
                              "build both from the same documents")
        pages = [self.documents[h.id] for h in first]
        judged = rerank(query, pages, self.judge, self.client, backend=knobs["backend"])
        self.last_cost = judged.cost
        return judged[:limit]

"""N1's answer to vocabulary mismatch: pseudo-relevance feedback (RM3) — the query grows with the top pages' words.

What it is for: a learner asks for « vacances », the page says « congés
payés ». N2 answers with an encoder; the keyword side has its own, older
answer: search once, *assume* the first pages are relevant, and add their
characteristic words to the query. RM3 (Lavrenko and Croft's relevance model,
interpolated with the query as Abdul-Jaleel et al. did for TREC 2004, the
variant Anserini and Pyserini ship):

    P(w | R) ∝ Σ over the fb_docs first pages d of  P(w | d) · P(q | d)
    weight(w) = λ · P(w | q) + (1 − λ) · P(w | R),   the fb_terms heaviest words kept

where P(w | d) is the word's share of the page's words, P(q | d) the page's
first-pass score normalised over the pages taken, P(w | q) the word's share of
the query, and λ = ``original_weight``. The second pass is BM25 with each word
counted ``weight(w)`` times: every hit's ``parts`` say what each word —
typed or added — contributed, and ``extra["expansion"]`` lists the words
added with their weights.

Three decisions are yours, all search-time knobs: ``fb_docs`` (how many first
pages are trusted), ``fb_terms`` (how many words are kept), ``original_weight``
(how much the typed words keep). Its failure is as instructive as its success:
*topic drift* — when the first pages are wrong, feedback pulls the query
further from what was asked.

Cost: two BM25 searches and one pass over the words of the ``fb_docs`` pages.
Taught in notebook 01 (« Feedback: the query learns from its first answers »).
"""

from __future__ import annotations

from collections import Counter

from .bm25 import Index
from .core.errors import BadArgument, check_int, check_number
from .core.retrieval import Hit, Retriever, ordered


class RM3(Retriever):
    """BM25 with RM3 query expansion, over a readable ``bm25.Index`` (its knobs come along as they are set).

    Knobs: ``fb_docs`` (10), ``fb_terms`` (10), ``original_weight`` (0.5): Anserini's defaults.
    ``original_weight=1.0`` is plain BM25 over the typed words (the expansion weighs nothing).
    """

    name = "BM25 + RM3"
    defaults = {"fb_docs": 10, "fb_terms": 10, "original_weight": 0.5}

    def __init__(self, index: Index, **knobs):
        if not isinstance(index, Index):
            raise BadArgument(f"index must be a rungs.bm25.Index (build_index), not {type(index).__name__}")
        super().__init__()
        self.index = index
        self.knobs = self._settings(knobs)
        # Each page's words and length, counted once (the feedback reads pages, not postings).
        self._words: dict[str, Counter] = {doc_id: Counter() for doc_id in index.ids}
        for word, per_doc in index.postings.items():
            for doc_id, per_field in per_doc.items():
                self._words[doc_id][word] += sum(per_field.values())

    def check_knobs(self, knobs: dict) -> dict:
        return {"fb_docs": check_int(knobs["fb_docs"], "fb_docs", low=1, high=1000),
                "fb_terms": check_int(knobs["fb_terms"], "fb_terms", low=1, high=1000),
                "original_weight": check_number(knobs["original_weight"], "original_weight", low=0.0, high=1.0)}

    def expansion(self, query: str, **knobs) -> dict[str, float]:
        """The weighted query RM3 searches with: word → weight (typed and added words; they sum to 1)."""
        settings = self._settings(knobs)
        return self._expand(query, settings)

    def _expand(self, query: str, knobs: dict) -> dict[str, float]:
        typed = Counter(self.index.query_words(query, self.index.knobs["repeats"]))
        if not typed:
            return {}
        first = self.index.search(query, limit=knobs["fb_docs"])
        total = sum(h.score for h in first)
        relevance: Counter = Counter()
        for h in first if total > 0 else ():
            words = self._words[h.id]
            size = sum(words.values())
            for w, n in words.items():
                # P(w | d) · P(q | d): the word's share of the page, times the page's share of the first scores.
                relevance[w] += (n / size) * (h.score / total)
        # The fb_terms heaviest words, renormalised; ties by word, so two runs give the same query.
        kept = sorted(relevance.items(), key=lambda item: (-item[1], item[0]))[:knobs["fb_terms"]]
        mass = sum(p for _, p in kept)
        lam = knobs["original_weight"]
        weights = {w: lam * n / sum(typed.values()) for w, n in typed.items()}
        for w, p in kept:
            weights[w] = weights.get(w, 0.0) + (1 - lam) * p / mass
        return {w: v for w, v in weights.items() if v > 0}

    def _search(self, query, limit, knobs):
        weights = self._expand(query, knobs)
        if not weights:
            return []
        parts_of = self.index.term_scores(list(weights))  # word → page → what the word adds to it
        scores: dict[str, dict[str, float]] = {}
        for w, per_doc in parts_of.items():
            for doc_id, part in per_doc.items():
                scores.setdefault(doc_id, {})[w] = weights[w] * part
        typed = set(self.index.query_words(query))
        added = {w: round(v, 6) for w, v in weights.items() if w not in typed}
        hits = [Hit(id=d, title=self.index.titles.get(d, ""), score=sum(parts.values()), parts=parts,
                    extra={"expansion": added}) for d, parts in scores.items()]
        return ordered(hits)[:limit]

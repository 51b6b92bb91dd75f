"""The retrieval contract, checked over every retriever of the collection with one parametrised test.

Every retriever answers ``search(query, *, limit) -> list[Hit]``: best first,
ties by id, ids unique, parts that add up to the score (or a reason why
there are none), ``limit=0`` and an empty query cost nothing, and a bad
argument is named before any work is done.
"""

import json

import numpy as np
import pytest

from rungs import bm25, decide, fastbm25, fts, hybrid, passages, vectors
from rungs.errors import BadArgument, RungsError
from rungs.llm import ScriptedClient
from rungs.retrieval import Hit, Retriever, check_hits

# Ties on purpose: a, b and c hold the same words; d and e differ.
DOCS = [{"id": i, "title": t, "body": b} for i, t, b in [
    ("c", "badge", "perdu le badge au travail"), ("a", "badge", "perdu le badge au travail"),
    ("b", "badge", "perdu le badge au travail"), ("e", "congés", "les congés payés et le badge"),
    ("d", "repas", "le restaurant et les titres restaurant"),
]]


class Bag(vectors.Encoder):
    """A test double, not a model: a bag of letters, so equal texts get equal vectors (ties)."""

    name, dim = "bag-of-letters", 26

    def _documents(self, texts):
        out = np.zeros((len(texts), 26), dtype=np.float32)
        for row, text in enumerate(texts):
            for ch in text.lower():
                if "a" <= ch <= "z":
                    out[row, ord(ch) - 97] += 1
            out[row, 0] += 1  # never all zero
        return out


class Spy(Retriever):
    """Wraps a retriever and counts the searches that reach it: « before any work » is checked with it."""

    name = "spy"

    def __init__(self, inner):
        super().__init__()
        self.inner, self.calls = inner, 0

    def _search(self, query, limit, knobs):
        self.calls += 1
        return self.inner.search(query, limit=limit)


def _judge_replies(n):
    # A scripted judge (test double): the same level for every page, so the reranker's ties show.
    return [{"text": "2", "logprobs": [{"token": "2", "logprob": 0.0, "top": {"2": -0.1, "1": -2.5}}]}] * n


def build(kind, tmp_path):
    if kind == "fts":
        return fts.FtsIndex(DOCS)
    if kind == "bm25":
        return bm25.build_index(DOCS)
    if kind == "fast":
        return fastbm25.FastBM25.from_documents(DOCS)
    if kind == "vectors":
        return vectors.VectorIndex(DOCS, Bag(), cache=vectors.VectorCache(Bag(), folder=tmp_path))
    if kind == "hybrid":
        vec = vectors.VectorIndex(DOCS, Bag(), cache=vectors.VectorCache(Bag(), folder=tmp_path))
        return hybrid.Hybrid({"keyword": bm25.build_index(DOCS), "vector": vec})
    if kind == "passages":
        ps = passages.split(DOCS, size=60, overlap=0)
        return passages.PassageRetriever(bm25.build_index(ps), ps)
    if kind == "reranker":
        return decide.Reranker(bm25.build_index(DOCS), DOCS, client=ScriptedClient(_judge_replies(50)), depth=5)
    raise AssertionError(kind)


KINDS = ["fts", "bm25", "fast", "vectors", "hybrid", "passages", "reranker"]


@pytest.mark.parametrize("kind", KINDS)
def test_hits_are_ordered_with_ties_by_id_and_explained(kind, tmp_path):
    r = build(kind, tmp_path)
    hits = r.search("perdu badge", limit=10)
    assert hits and all(isinstance(h, Hit) for h in hits)
    check_hits(hits)
    assert {h.id for h in hits} <= {d["id"] for d in DOCS}
    tied = [h.id for h in hits if h.id in "abc"]
    assert tied == sorted(tied)  # a, b, c score the same: the id decides
    assert len(r.search("perdu badge", limit=2)) == 2


@pytest.mark.parametrize("kind", KINDS)
def test_limit_zero_and_empty_query_cost_nothing(kind, tmp_path):
    r = build(kind, tmp_path)
    spy = Spy(r)
    assert spy.search("badge", limit=0) == [] and spy.search("", limit=5) == [] and spy.search("  ", limit=5) == []
    assert spy.calls == 0
    assert r.search("badge", limit=0) == [] and r.search("") == []


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("limit, message", [(-1, "limit must be 0 or more"), (2.5, "limit must be an integer"),
                                            (True, "limit must be an integer"), (2**63, "limit must be"),
                                            ("3", "limit must be an integer")])
def test_a_bad_limit_is_named(kind, limit, message, tmp_path):
    with pytest.raises(BadArgument, match=message):
        build(kind, tmp_path).search("badge", limit=limit)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("query, message", [(42, "query must be a string"), (["badge"], "query must be a string"),
                                            (None, "query must be a string"), ("mot " * 300_000, "characters")])
def test_a_bad_query_is_named_at_once(kind, query, message, tmp_path):
    with pytest.raises(BadArgument, match=message):
        build(kind, tmp_path).search(query)


@pytest.mark.parametrize("kind", KINDS)
def test_an_unknown_knob_is_named_before_any_work(kind, tmp_path):
    r = build(kind, tmp_path)
    client = getattr(r, "client", None)
    before = len(client.calls) if client else 0
    with pytest.raises(BadArgument, match="has no knob"):
        r.search("badge", limit=3, colour="blue")
    with pytest.raises(BadArgument, match="has no knob"):
        r.search("", limit=0, colour="blue")
    assert (len(client.calls) if client else 0) == before  # no model was asked


def test_hybrid_names_a_bad_fusion_knob_before_asking_its_legs(tmp_path):
    spy = Spy(bm25.build_index(DOCS))
    h = hybrid.Hybrid({"keyword": spy, "again": bm25.build_index(DOCS)})
    for knobs, message in [({"k": -1}, "k must be at least 0"), ({"k": float("nan")}, "finite"),
                           ({"weights": {"nope": 1}}, "not given"), ({"weights": {"keyword": 0, "again": 0}}, "above 0"),
                           ({"method": "sum"}, "method"), ({"window": 0}, "window")]:
        with pytest.raises(BadArgument, match=message):
            h.search("badge", **knobs)
    assert spy.calls == 0


def test_with_knobs_keeps_the_index_and_checks_at_once():
    index = bm25.build_index(DOCS)
    strict = index.with_knobs(match="all")
    assert strict.postings is index.postings  # nothing rebuilt
    assert [h.id for h in strict.search("restaurant badge")] == []
    assert [h.id for h in index.search("restaurant badge")][:1] == ["d"]
    with pytest.raises(BadArgument, match="match"):
        index.with_knobs(match="most")


def test_every_error_of_the_collection_has_one_root():
    import inspect

    import rungs
    from rungs import cacm, evaluate, handbook, llm, rag, research, retrieval, text, tuning  # noqa: F401

    classes = [c for m in list(vars(rungs).values()) if inspect.ismodule(m)
               for c in vars(m).values() if inspect.isclass(c) and issubclass(c, BaseException)
               and c.__module__.startswith("rungs")]
    assert len(classes) >= 20
    assert all(issubclass(c, RungsError) for c in classes), [c for c in classes if not issubclass(c, RungsError)]


def test_hit_reads_like_a_dict_and_flattens():
    h = Hit(id="a", score=1.5, title="T", parts={"x": 1.0, "y": 0.5}, extra={"snippet": "s"})
    assert h["id"] == "a" and h["snippet"] == "s" and h.get("nope") is None and "snippet" in h
    assert json.dumps(h.as_dict())

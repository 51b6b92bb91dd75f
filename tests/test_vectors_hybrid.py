"""N2: the vector cache, the encoder contract, fusion. Real encoder where it matters, test doubles for faults."""

import numpy as np
import pytest

from rungs import bm25, hybrid, vectors
from rungs.core.errors import BadArgument
from rungs.core.retrieval import Hit
from rungs.lab.metrics import evaluate, ndcg, average_precision, precision, recall, reciprocal_rank


class Counting(vectors.Encoder):
    """A test double, not a model: a deterministic vector from the text, and a count of what it encoded."""

    name, dim = "counting", 4

    def __init__(self):
        self.seen = []

    def _documents(self, texts):
        self.seen.extend(texts)
        return [[len(t), t.count("a") + 1, t.count("e") + 1, 1.0] for t in texts]


def test_cache_encodes_only_changed_pages_and_survives_a_new_kernel(tmp_path):
    enc = Counting()
    cache = vectors.VectorCache(enc, folder=tmp_path)
    cache.vectors_of(["page a", "page b", "page c"])
    assert len(enc.seen) == 3
    cache.vectors_of(["page a", "page b CHANGED", "page c"])
    assert enc.seen[3:] == ["page b CHANGED"]
    again = vectors.VectorCache(enc, folder=tmp_path)  # as a new kernel would: read from disk
    again.vectors_of(["page a", "page b CHANGED", "page c"])
    assert len(enc.seen) == 4 and again.hits == 3


@pytest.mark.parametrize("bad", [
    lambda texts: [[1.0, 2.0, 3.0, 4.0]] * (len(texts) - 1),          # wrong count
    lambda texts: [[1.0, 2.0]] * len(texts),                            # wrong size
    lambda texts: [[np.nan, 1.0, 1.0, 1.0]] * len(texts),               # NaN
    lambda texts: [[np.inf, 1.0, 1.0, 1.0]] * len(texts),               # inf
    lambda texts: [[0.0, 0.0, 0.0, 0.0]] * len(texts),                  # no direction
])
def test_unusable_vectors_raise_and_leave_the_cache_unchanged(tmp_path, bad):
    good = vectors.VectorCache(Counting(), folder=tmp_path)
    good.vectors_of(["kept page"])
    before = dict(good.vectors), good.file.read_bytes()

    class Bad(Counting):
        def _documents(self, texts):
            return bad(texts)

    cache = vectors.VectorCache(Bad(), folder=tmp_path)
    with pytest.raises(vectors.EncodingFailed):
        cache.vectors_of(["kept page", "new page", "another"])
    assert set(cache.vectors) == set(before[0])
    assert good.file.read_bytes() == before[1]


def test_an_encoder_that_raises_is_wrapped_with_its_cause():
    class Raising(Counting):
        def _documents(self, texts):
            raise RuntimeError("out of memory")

    with pytest.raises(vectors.EncodingFailed, match="out of memory") as info:
        Raising().encode_documents(["x"])
    assert isinstance(info.value.__cause__, RuntimeError)


def test_rows_are_unit_length_float32():
    out = Counting().encode_queries(["abc", "eee"])
    assert out.dtype == np.float32 and np.allclose(np.linalg.norm(out, axis=1), 1.0)


def test_real_default_encoder_finds_conges_payes_for_vacances():
    from rungs.lab.handbook import load_pages
    pages = load_pages()
    index = vectors.VectorIndex(pages)
    ranking = index.search("Combien de vacances ai-je par an ?", limit=len(pages))
    assert ranking[0].id == "conges-payes"
    assert len(ranking) == len(pages)
    assert index.search("?!")[0].score is not None  # punctuation still gets a ranking
    assert vectors.VectorIndex([], vectors.default_encoder()).search("x") == []


def test_missing_sentence_transformer_model_is_named_with_the_fix():
    with pytest.raises(vectors.EncoderUnavailable, match="not available offline"):
        vectors.SentenceTransformerEncoder("no-such-org/no-such-model")


def test_rrf_scores_ranks_and_ties():
    fused = hybrid.rrf({"a": ["x", "y"], "b": ["y", "z"]}, k=60)
    assert [r.id for r in fused] == ["y", "x", "z"]
    y = fused[0]
    assert y.extra["ranks"] == {"a": 2, "b": 1} and y.score == pytest.approx(1 / 62 + 1 / 61)
    assert y.parts == {"a": pytest.approx(1 / 62), "b": pytest.approx(1 / 61)}
    assert hybrid.rrf({"a": ["q"], "b": ["p"]})[0].id == "p"  # tie broken by id
    weighted = hybrid.rrf({"a": ["x"], "b": ["z"]}, leg_weights={"b": 2.0})
    assert weighted[0].id == "z"
    assert [r.id for r in hybrid.rrf({"a": ["x", "y", "z"]}, window=2)] == ["x", "y"]
    # k = 0 is well defined (ranks start at 1): the first rank is worth 1.
    assert hybrid.rrf({"a": ["x"]}, k=0)[0].score == 1.0


@pytest.mark.parametrize("call, message", [
    (lambda: hybrid.rrf({"a": ["x"]}, k=-1), "k must be at least 0"),
    (lambda: hybrid.rrf({"a": ["x", "x"]}), "same id twice"),
    (lambda: hybrid.rrf({"a": ["x"]}, leg_weights={"c": 1}), "not given"),
    (lambda: hybrid.rrf({"a": "abc"}), "not a string"),
    (lambda: hybrid.Hybrid({"a": ["x"]}), "not a retriever"),
    (lambda: hybrid.convex({"a": []}, leg_weights={"a": -1}), "weights"),
])
def test_fusion_bad_input_is_named(call, message):
    with pytest.raises(BadArgument, match=message):
        call()


def test_convex_rescales_each_leg():
    kw = [Hit(id="a", score=10.0), Hit(id="b", score=0.0)]
    vec = [Hit(id="b", score=0.9), Hit(id="c", score=0.1)]
    out = {r.id: r.score for r in hybrid.convex({"keyword": kw, "vector": vec})}
    assert out == {"a": 0.5, "b": 0.5, "c": 0.0}
    out = {r.id: r.score for r in hybrid.convex({"keyword": kw, "vector": vec}, leg_weights={"keyword": 3, "vector": 1})}
    assert out == {"a": 0.75, "b": 0.25, "c": 0.0}


def test_hybrid_search_fuses_its_legs_with_search_time_knobs(tmp_path):
    docs = [{"id": "x", "title": "badge perdu", "body": "badge"}, {"id": "y", "title": "congés", "body": "vacances"},
            {"id": "z", "title": "repas", "body": "cantine"}]
    keyword = bm25.build_index(docs)
    vector = vectors.VectorIndex(docs, Counting(), cache=vectors.VectorCache(Counting(), folder=tmp_path))
    h = hybrid.Hybrid({"keyword": keyword, "vector": vector})
    hits = h.search("badge", limit=3)
    assert hits[0].id == "x" and set(hits[0].parts) == {"keyword", "vector"}
    assert hits[0].extra["ranks"]["keyword"] == 1
    legs = h.leg_rankings("badge")
    expected = hybrid.rrf(legs, k=60)
    assert [r.id for r in hits] == [r.id for r in expected][:3]
    # k and the leg weights are search-time: nothing is rebuilt, the order follows.
    only_vector = h.search("badge", limit=3, leg_weights={"keyword": 0, "vector": 1})
    assert [r.id for r in only_vector] == [r.id for r in legs["vector"]][:3]


def test_metrics_by_hand():
    rel = {"a": 2, "c": 1}
    run = ["b", "a", "c"]
    assert reciprocal_rank(run, rel) == 0.5
    assert recall(run, rel, 2) == 0.5 and precision(run, rel, 2) == 0.5
    assert average_precision(run, rel) == pytest.approx((1 / 2 + 2 / 3) / 2)
    ideal = 2 + 1 / np.log2(3)
    assert ndcg(run, rel, 3) == pytest.approx((2 / np.log2(3) + 1 / 2) / ideal)
    out = evaluate({"q1": run, "q2": []}, [{"id": "q1", "question": "", "relevant": rel},
                                           {"id": "q2", "question": "", "relevant": {}}])
    assert out["questions"] == 1 and out["skipped"] == 1 and out["MRR"] == 0.5


@pytest.mark.parametrize("call, message", [
    (lambda: average_precision(["a", "a", "a"], {"a": 1}), "more than once"),
    (lambda: ndcg(["a", "a"], {"a": 2}, 5), "more than once"),
    (lambda: precision(["a"], {"a": 1}, -1), "at must be 1 or more"),
    (lambda: precision(["a"], {"a": 1}, 0), "at must be 1 or more"),
    (lambda: recall(["a"], {"a": 1}, -1), "at must be 1 or more"),
    (lambda: reciprocal_rank("abc", {"a": 1}), "not a string"),
])
def test_metrics_refuse_what_would_make_them_lie(call, message):
    with pytest.raises(BadArgument, match=message):
        call()

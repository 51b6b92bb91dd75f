"""N2: the vector cache, the encoder contract, fusion. Real encoder where it matters, test doubles for faults."""

import numpy as np
import pytest

from rungs import hybrid, vectors
from rungs.evaluate import evaluate, ndcg, average_precision, precision, recall, reciprocal_rank


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
    cache.documents(["page a", "page b", "page c"])
    assert len(enc.seen) == 3
    cache.documents(["page a", "page b CHANGED", "page c"])
    assert enc.seen[3:] == ["page b CHANGED"]
    again = vectors.VectorCache(enc, folder=tmp_path)  # as a new kernel would: read from disk
    again.documents(["page a", "page b CHANGED", "page c"])
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
    good.documents(["kept page"])
    before = dict(good.vectors), (tmp_path / "counting.npz").read_bytes()

    class Bad(Counting):
        def _documents(self, texts):
            return bad(texts)

    cache = vectors.VectorCache(Bad(), folder=tmp_path)
    with pytest.raises(vectors.EncodingFailed):
        cache.documents(["kept page", "new page", "another"])
    assert set(cache.vectors) == set(before[0])
    assert (tmp_path / "counting.npz").read_bytes() == before[1]


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
    from rungs.handbook import load_pages
    pages = load_pages()
    ranking = vectors.vector_ranking("Combien de vacances ai-je par an ?", pages, vectors.default_encoder())
    assert ranking[0]["id"] == "conges-payes"
    assert len(ranking) == len(pages)
    assert vectors.vector_ranking("?!", pages)[0]["score"] is not None  # punctuation still gets a ranking
    assert vectors.vector_ranking("x", []) == []


def test_missing_sentence_transformer_model_is_named_with_the_fix():
    with pytest.raises(vectors.EncoderUnavailable, match="not available offline"):
        vectors.SentenceTransformerEncoder("no-such-org/no-such-model")


def test_rrf_scores_ranks_and_ties():
    fused = hybrid.rrf({"a": ["x", "y"], "b": ["y", "z"]}, k=60)
    assert [r["id"] for r in fused] == ["y", "x", "z"]
    y = fused[0]
    assert y["ranks"] == {"a": 2, "b": 1} and y["score"] == pytest.approx(1 / 62 + 1 / 61)
    assert hybrid.rrf({"a": ["q"], "b": ["p"]})[0]["id"] == "p"  # tie broken by id
    weighted = hybrid.rrf({"a": ["x"], "b": ["z"]}, weights={"b": 2.0})
    assert weighted[0]["id"] == "z"
    assert [r["id"] for r in hybrid.rrf({"a": ["x", "y", "z"]}, window=2)] == ["x", "y"]


@pytest.mark.parametrize("call, message", [
    (lambda: hybrid.rrf({"a": ["x"]}, k=0), "k must be 1"),
    (lambda: hybrid.rrf({"a": ["x", "x"]}), "same id twice"),
    (lambda: hybrid.rrf({"a": ["x"]}, weights={"c": 1}), "not given"),
    (lambda: hybrid.hybrid_search("q", [{"id": "a", "text": "t"}], [], Counting(), limit=-1), "limit"),
    (lambda: hybrid.convex([], [], alpha=2), "alpha"),
])
def test_fusion_bad_input_is_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_convex_rescales_each_leg():
    kw = [{"id": "a", "score": 10.0}, {"id": "b", "score": 0.0}]
    vec = [{"id": "b", "score": 0.9}, {"id": "c", "score": 0.1}]
    out = {r["id"]: r["score"] for r in hybrid.convex(kw, vec, alpha=0.5)}
    assert out == {"a": 0.5, "b": 0.5, "c": 0.0}


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

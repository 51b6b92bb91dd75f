"""RM3 pseudo-relevance feedback (N1): the weights computed by hand, the plain-BM25 limit, determinism."""

import math

import pytest

from rungs import bm25
from rungs.core.contract import check_hits
from rungs.core.errors import BadArgument
from rungs.feedback import RM3

DOCS = [{"id": "a", "title": "", "body": "congés payés congés été"},
        {"id": "b", "title": "", "body": "congés vacances"},
        {"id": "c", "title": "", "body": "badge accueil"}]


def test_the_expansion_is_rm3_computed_by_hand():
    index = bm25.build_index(DOCS)
    rm3 = RM3(index, fb_docs=2, fb_terms=3, original_weight=0.5)
    first = index.search("congés", limit=2)
    sa, sb = (h.score for h in first)          # a and b hold « congés »
    pa, pb = sa / (sa + sb), sb / (sa + sb)    # P(q | d): the first scores, normalised
    # P(w | R) = Σ_d P(w | d) P(q | d); a has 4 words (congés ×2), b has 2.
    relevance = {"conges": 2 / 4 * pa + 1 / 2 * pb, "payes": 1 / 4 * pa, "ete": 1 / 4 * pa, "vacances": 1 / 2 * pb}
    kept = sorted(relevance.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    mass = sum(p for _, p in kept)
    want = {w: 0.5 * p / mass for w, p in kept}
    want["conges"] = want.get("conges", 0) + 0.5   # the typed word keeps original_weight
    got = rm3.expansion("congés")
    assert got.keys() == want.keys() and all(math.isclose(got[w], want[w], rel_tol=1e-12) for w in want)
    assert math.isclose(sum(got.values()), 1.0)


def test_the_second_pass_is_bm25_with_each_word_weighted():
    index = bm25.build_index(DOCS)
    rm3 = RM3(index, fb_docs=2, fb_terms=3)
    weights = rm3.expansion("congés")
    parts = index.term_scores(list(weights))
    hits = rm3.search("congés", limit=3)
    check_hits(hits)
    for h in hits:
        assert h.parts == {w: weights[w] * parts[w][h.id] for w in weights if h.id in parts[w]}
    assert hits[0].extra["expansion"] and "conges" not in hits[0].extra["expansion"]  # added words only


def test_original_weight_one_is_plain_bm25():
    index = bm25.build_index(DOCS)
    plain = [h.id for h in index.search("congés vacances", limit=3)]
    assert [h.id for h in RM3(index, original_weight=1.0).search("congés vacances", limit=3)] == plain


def test_feedback_pulls_in_a_page_the_typed_words_miss_and_can_drift():
    index = bm25.build_index(DOCS)
    assert [h.id for h in index.search("payés")] == ["a"]
    # « vacances » is on b only; a shares b's « congés »: feedback reaches a.
    assert {h.id for h in RM3(index, fb_docs=1).search("vacances", limit=5)} == {"a", "b"}


@pytest.mark.parametrize("knobs, name", [({"fb_docs": 0}, "fb_docs"), ({"fb_terms": -1}, "fb_terms"),
                                         ({"original_weight": 1.5}, "original_weight"),
                                         ({"original_weight": float("nan")}, "original_weight")])
def test_bad_knobs_are_named(knobs, name):
    with pytest.raises(BadArgument, match=name):
        RM3(bm25.build_index(DOCS)).search("congés", **knobs)


def test_rm3_needs_the_readable_index():
    with pytest.raises(BadArgument, match="rungs.bm25.Index"):
        RM3("not an index")

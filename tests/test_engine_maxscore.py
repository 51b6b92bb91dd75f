"""MaxScore (rungs.engine.maxscore) finds exhaustive scoring's top k — ids, scores, ties by id — while skipping."""

import pytest
from engine_data import CACM_KNOBS, cacm, generated, handbook_index, questions

from rungs import bm25
from rungs.core.errors import BadArgument
from rungs.engine import impacts, maxscore


def exact_same(a, b):
    # Both sum the same impacts in the query's order: the same floats, not only close ones.
    return [(h.id, h.score) for h in a] == [(h.id, h.score) for h in b]


@pytest.mark.parametrize("k", [1, 10])
def test_maxscore_equals_exhaustive_on_every_judged_handbook_question(k):
    index = handbook_index()
    frozen = impacts.freeze(index)
    for q in questions():
        result = maxscore.search(frozen, q["question"], limit=k)
        assert exact_same(result.hits, maxscore.exhaustive(frozen, q["question"], limit=k)), q["question"]
        assert [h.id for h in result.hits] == [h.id for h in index.search(q["question"], limit=k)]


@pytest.mark.parametrize("k", [1, 10, 100])
def test_maxscore_equals_exhaustive_on_every_cacm_query(k):
    data = cacm()
    frozen = impacts.freeze(data["index"], **{x: v for x, v in CACM_KNOBS.items() if x in impacts.SETTING_KNOBS})
    skipped = 0
    for q in data["queries"]:
        result = maxscore.search(frozen, q, limit=k)
        assert exact_same(result.hits, maxscore.exhaustive(frozen, q, limit=k)), q
        skipped += result.skipped
    assert skipped > 0  # the point: it does not score every matching page


@pytest.mark.parametrize("seed", range(4))
def test_ties_are_broken_by_id_as_exhaustive_scoring_does(seed):
    docs, queries = generated(seed)
    frozen = impacts.freeze(bm25.build_index(docs))
    for q in queries:
        for k in (1, 2, 5):
            assert exact_same(maxscore.search(frozen, q, limit=k).hits, maxscore.exhaustive(frozen, q, limit=k))


@pytest.mark.parametrize("seed", range(4))
def test_repeated_words_count_when_asked(seed):
    docs, queries = generated(seed)
    frozen = impacts.freeze(bm25.build_index(docs))
    for q in queries:
        twice = q + " " + q.split()[0]
        got = maxscore.search(frozen, twice, limit=5, repeats="count").hits
        assert exact_same(got, frozen.search(twice, limit=5, repeats="count", explain=False))


def test_the_counters_add_up():
    frozen = impacts.freeze(handbook_index())
    for q in questions():
        r = maxscore.search(frozen, q["question"], limit=3)
        assert r.scored + r.skipped == r.matching
        assert r.abandoned <= r.skipped
        assert len(r.hits) == min(3, r.matching)


def test_nothing_to_find_and_bad_arguments():
    frozen = impacts.freeze(handbook_index())
    assert maxscore.search(frozen, "zzzz qqqq").hits == []
    assert maxscore.search(frozen, "congés", limit=0).hits == []
    with pytest.raises(BadArgument):
        maxscore.search(handbook_index(), "congés")
    with pytest.raises(BadArgument):
        maxscore.search(frozen, "congés", limit=-1)

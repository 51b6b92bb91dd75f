"""Frozen impacts (rungs.engine.impacts): the readable N1's scores to 1e-9, for every preset; the setting frozen."""

import math

import numpy as np
import pytest
from engine_data import CACM_KNOBS, SETTINGS, cacm, generated, handbook_index, pages, questions

from rungs import bm25
from rungs.core.errors import BadArgument
from rungs.engine import impacts
from rungs.fastbm25 import FastBM25

SEARCH_KNOBS = ("match", "repeats")


def frozen_for(index, knobs):
    return impacts.freeze(index, **{k: v for k, v in knobs.items() if k in impacts.SETTING_KNOBS})


def search_knobs(knobs):
    return {k: v for k, v in knobs.items() if k in SEARCH_KNOBS}


def assert_same(slow, fast):
    assert [h.id for h in slow] == [h.id for h in fast]
    for a, b in zip(slow, fast):
        assert math.isclose(a.score, b.score, rel_tol=1e-9, abs_tol=1e-12), (a.id, a.score, b.score)


@pytest.mark.parametrize("knobs", SETTINGS)
def test_frozen_equals_the_readable_index_on_the_handbook(knobs):
    index = handbook_index()
    frozen = frozen_for(index, knobs)
    for q in questions():
        assert_same(index.search(q["question"], limit=10, **knobs),
                    frozen.search(q["question"], limit=10, **search_knobs(knobs)))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("knobs", SETTINGS)
def test_frozen_equals_the_readable_index_on_generated_collections(seed, knobs):
    docs, queries = generated(seed)
    index = bm25.build_index(docs)
    frozen = frozen_for(index, knobs)
    for q in queries:
        for limit in (1, 3, 100):
            assert_same(index.search(q, limit=limit, **knobs), frozen.search(q, limit=limit, **search_knobs(knobs)))


def test_frozen_equals_the_readable_index_on_cacm():
    data = cacm()
    frozen = frozen_for(data["index"], CACM_KNOBS)
    for q in data["queries"]:
        assert_same(data["index"].search(q, limit=10, **CACM_KNOBS),
                    frozen.search(q, limit=10, **search_knobs(CACM_KNOBS)))


def test_parts_add_up_to_the_score():
    frozen = impacts.freeze(handbook_index(), weights={"title": 2.0})
    for q in questions()[:20]:
        for hit in frozen.search(q["question"], limit=5):
            assert math.isclose(sum(hit.parts.values()), hit.score, rel_tol=1e-12)


def test_a_knob_change_is_refused_at_search_time_and_done_by_refreezing():
    index = handbook_index()
    frozen = impacts.freeze(index, k1=1.2)
    with pytest.raises(BadArgument, match="no knob k1"):
        frozen.search("congés", k1=0.5)
    again = frozen.refreeze(k1=0.5, b=0.3)
    assert again.setting["k1"] == 0.5 and again.counts is frozen.counts  # the counts are read once
    assert_same(index.search("congés payés", k1=0.5, b=0.3), again.search("congés payés"))
    with pytest.raises(BadArgument, match="refreeze takes"):
        frozen.refreeze(match="all")


def test_freeze_from_the_lazy_path_or_the_readable_index_gives_the_same_impacts():
    index = bm25.build_index(pages())
    a = impacts.freeze(index, k1=0.7).impacts
    b = impacts.freeze(FastBM25.from_index(index), k1=0.7).impacts
    assert (a != b).nnz == 0


@pytest.mark.parametrize("bad", [{"k1": float("nan")}, {"b": 1.5}, {"weights": {"nope": 1.0}}, {"idf": "bm11"}])
def test_bad_settings_are_named_before_any_work(bad):
    with pytest.raises(BadArgument):
        impacts.freeze(handbook_index(), **bad)


def test_freeze_names_what_it_cannot_freeze():
    with pytest.raises(BadArgument, match="freeze needs"):
        impacts.freeze([{"id": "a", "body": "x"}])


def test_statistics_merge_exactly_and_refuse_a_smaller_collection():
    half = [FastBM25.from_documents(pages()[i::2]) for i in range(2)]
    whole = impacts.Stats.of(FastBM25.from_documents(pages()))
    merged = impacts.Stats.merge([impacts.Stats.of(h) for h in half])
    assert merged == whole
    with pytest.raises(impacts.StatisticsMismatch):
        impacts.freeze(half[1], stats=impacts.Stats.of(half[0]))


def test_upper_bounds_are_the_largest_impact_of_each_word():
    frozen = impacts.freeze(handbook_index())
    assert np.array_equal(frozen.upper, frozen.impacts.toarray().max(axis=0))

"""Selective answering (rungs.lab.selective) on data whose truth is known: a planted signal is found, noise is not."""

import math

import numpy as np
import pytest

from rungs.core.errors import BadArgument
from rungs.lab import selective


def planted(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    p = 1 / (1 + np.exp(-(2 * x[:, 0] - x[:, 1])))  # the third signal is noise
    return x, (rng.random(n) < p).astype(int)


def test_a_planted_signal_is_found_with_its_sign_and_the_noise_left_near_zero():
    x, y = planted()
    d = selective.fit(x, y, ["a", "b", "noise"])
    w = d.weights * 1  # on standardised signals, the planted 2 : −1, the noise about 0
    assert w[0] > 1.5 and -1.4 < w[1] < -0.6 and abs(w[2]) < 0.15, w
    assert selective.auc(d.probability(x), y) > 0.8


def test_signals_that_say_nothing_are_worth_chance_out_of_fold():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(400, 4)), rng.integers(0, 2, 400)
    inside = selective.auc(selective.fit(x, y, list("abcd")).probability(x), y)
    outside = selective.auc(selective.cross_fitted(x, y, list("abcd")), y)
    assert abs(outside - 0.5) < 0.08 and inside > outside  # fitted and scored on the same rows flatters: not out of fold


def test_a_separable_set_stays_finite_and_ordered():
    x, y = np.array([[0.0], [1.0], [2.0], [3.0]]), [0, 0, 1, 1]
    p = selective.fit(x, y, ["s"]).probability(x)
    assert np.isfinite(p).all() and list(p) == sorted(p) and p[0] < 0.5 < p[-1]


def test_coverage_is_the_share_answered():
    p = [0.9, 0.6, 0.8, 0.7]
    assert selective.threshold(p, 0.5) == 0.8 and sum(v >= 0.8 for v in p) == 2
    assert selective.threshold(p, 0.75) == 0.7 and selective.threshold(p, 1.0) == -math.inf
    for bad in (0, 1.5, True, "0.8"):
        with pytest.raises(BadArgument, match="coverage"):
            selective.threshold(p, bad)


def test_auc_is_the_chance_a_right_answer_scores_above_a_wrong_one():
    assert selective.auc([0.9, 0.8, 0.3], [1, 0, 1]) == 0.5
    assert selective.auc([0.2, 0.2], [1, 0]) == 0.5 and selective.auc([1, 0], [1, 0]) == 1.0
    assert selective.auc([0.3], [1]) is None


def test_bad_rows_and_labels_are_named():
    with pytest.raises(BadArgument, match="rows"):
        selective.fit([[1.0, float("nan")]], [1], ["a", "b"])
    with pytest.raises(BadArgument, match="right"):
        selective.fit([[1.0], [2.0]], [1, 2], ["a"])
    with pytest.raises(BadArgument, match="names"):
        selective.fit([[1.0], [2.0]], [1, 0], ["a", "b"])
    with pytest.raises(BadArgument, match="signals"):
        selective.fit([[1.0], [2.0]], [1, 0], ["a"]).probability([[1.0, 2.0]])


def test_hostile_knobs_are_named_not_raw():
    # hE: seed "x" / -1 / 0.5 raised numpy's TypeError/ValueError; folds=np.int64(2) was refused as « not 2 »;
    # numbers written as text were read as numbers; a constant 1e308 column gave a scale of inf (not JSON).
    x, y = planted(40)
    for seed in ("x", -1, 0.5, None):
        with pytest.raises(BadArgument, match="seed"):
            selective.cross_fitted(x, y, ["a", "b", "c"], folds=2, seed=seed)
    assert len(selective.cross_fitted(x, y, ["a", "b", "c"], folds=np.int64(2))) == 40
    with pytest.raises(BadArgument, match="rows"):
        selective.fit([["0.1", "0.2"]] * 4, [0, 1, 1, 0], ["a", "b"])
    with pytest.raises(BadArgument, match="scores"):
        selective.auc(["0.1", "0.9"], [0, 1])
    with pytest.raises(BadArgument, match="names"):
        selective.fit(x, y, ["a", "a", "b"])
    with pytest.raises(BadArgument, match="rows"):
        selective.fit([[1e308], [-1e308], [0.0], [1.0]], [0, 1, 0, 1], ["a"])
    assert selective.threshold([0.1, 0.9], np.float32(0.5)) == 0.9

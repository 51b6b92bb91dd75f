"""Test doubles and measures shared by the tests: a letters encoder, speed as a ratio, a sweep where nothing is better."""

import gc
import time

import numpy as np

from rungs import vectors

from rungs.core import text
from rungs.core.errors import RungsError


class TooFastToTime(AssertionError):
    """The call returns before the clock can tell small from large, even called a million times in a row."""


#: Each side of a ratio is timed over enough calls to last at least this long: below it, timer noise decides.
MEASURABLE = 0.005


def _timed(fn, arg, loops: int) -> float:
    start = time.perf_counter()
    for _ in range(loops):
        try:
            fn(arg)
        except RungsError:
            pass
    return time.perf_counter() - start


def growth(fn, small, large, repeat=5) -> float:
    """time(fn(large)) / time(fn(small)), each side the best of ``repeat`` timings taken in turn (small,
    large, small…), so that a busy machine slows both sides alike; the collector is off (its pauses are
    noise). A side too fast to time is called ``loops`` times in a row, ``loops`` chosen so that the small
    input takes at least ``MEASURABLE`` seconds; a call that stays too fast to time even so is an error
    (``TooFastToTime``), never a ratio of 1 that lets any growth test pass."""
    gc.disable()
    try:
        loops = 1
        while _timed(fn, small, loops) < MEASURABLE:
            if loops >= 1_000_000:
                raise TooFastToTime(f"{getattr(fn, '__name__', fn)} takes under {MEASURABLE / loops * 1e9:.0f} ns a "
                                    "call: time a larger input, or the growth says nothing")
            loops *= 10
        best = {"small": float("inf"), "large": float("inf")}
        for _ in range(repeat):
            for side, arg in (("small", small), ("large", large)):
                best[side] = min(best[side], _timed(fn, arg, loops))
    finally:
        gc.enable()
    return best["large"] / best["small"]


class Letters(vectors.Encoder):
    """A test double, not a model: a bag of letters (accents folded), so equal texts get equal vectors."""

    name, dim = "letters-test-double", 27

    def _documents(self, texts):
        out = np.zeros((len(texts), 27), dtype=np.float32)
        for row, t in enumerate(texts):
            for ch in text.fold(t):
                if "a" <= ch <= "z":
                    out[row, ord(ch) - 97] += 1
            out[row, 26] = 1.0  # never all zero
        return out


# ---------------------------------------------------------------- a sweep where no setting is better

FILLER = [f"x{j}" for j in range(9)]


def coin_toss(draw, settings=30, questions=80, pages=20, better=None, lift=0.0):
    """A sweep of ``settings`` settings over ``questions`` questions, each with one page that answers it.

    Every setting ranks every question by a coin toss: the answer lands at a rank drawn uniformly among
    ``pages`` (not in the top 10 half the time). No setting is better than the default (setting 0) —
    unless ``better`` names one that puts the answer first on a share ``lift`` of the questions.
    """
    qs = [{"id": f"n{i:03d}", "question": f"question {i}", "kind": "lexical", "relevant": {"answer": 2}}
          for i in range(questions)]
    rng = np.random.default_rng(draw)
    ranks = rng.integers(0, pages, size=(settings, questions))
    if better is not None:
        ranks[better] = np.where(rng.random(questions) < lift, 0, ranks[better])
    number = {q["question"]: i for i, q in enumerate(qs)}

    def run(question, setting):
        r = ranks[setting, number[question]]
        return FILLER[:r] + ["answer"] + FILLER[r:] if r < 10 else FILLER + ["x9"]
    return {"setting": list(range(settings))}, run, qs

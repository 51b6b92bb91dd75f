"""Processes and files of the shared local server: is this pid alive, is that port open, one lock, one state file.

What it is for: the small, careful operations the supervisor and the clients
share — a process is alive only if its pid exists, is not a zombie and was
started when we recorded (a recycled pid is not our server); a state file is
written aside and renamed, so nobody reads half of one; a lock file makes
sure two kernels never start two servers.

Cost: a few system calls each.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

from ..core import paths


class _Paths:
    """The files of one server, all named after its key (model, threads, context, build, Python)."""

    def __init__(self, key: str, directory: Path | None = None):
        self.key, self.dir = key, Path(directory or paths.servers())
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


def _child_env() -> dict:
    env = dict(os.environ)
    # So `python -m rungs.model` finds this very package, installed or not (a benchmark's other venv).
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(paths.package().parent), env.get("PYTHONPATH", "")) if p)
    return env


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

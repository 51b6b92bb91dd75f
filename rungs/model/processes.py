"""Processes and files of the shared local server: is this pid alive, is that port open, one lock, one state file.

What it is for: the small, careful operations the supervisor and the clients
share — a process is alive only if its pid exists, is not a zombie and was
started when we recorded (a recycled pid is not our server); a process is
*ours* only if its command line says so — the supervisor's holds the token
written in the state file, the server is its child and listens on the port
the state file names — so a stale state file never leads a signal or a
prompt to someone else's program; a state file is read whole and of the
right shape, or not at all, and written aside and renamed, so nobody reads
half of one; a lock file makes sure two kernels never start two servers;
the folder is the user's own (``0o700``) and every file in it private (``0o600``),
whatever the umask.

Cost: a few system calls each.
"""

from __future__ import annotations

import json
import math
import os
import signal
import socket
import stat
import subprocess
import time
import urllib.request
from pathlib import Path

from ..core import paths
from .contract import ModelUnavailable


class ServerFiles:
    """The files of one server, all named after its key (model, threads, context, build, Python)."""

    def __init__(self, key: str, directory: Path | None = None):
        self.key, self.dir = key, Path(directory or paths.servers())
        self.state = self.dir / f"{key}.json"      # port, pids, model, build: written by the supervisor
        self.lock = self.dir / f"{key}.lock"       # held while a server is being found or started
        self.users = self.dir / f"{key}.users"     # one empty file per process that uses it, named by pid
        self.exit = self.dir / f"{key}.exit.json"  # how the last server ended, for the clients to read
        self.log = self.dir / f"{key}.log"         # the llama.cpp server's own output
        self.supervisor_log = self.dir / f"{key}.supervisor.log"


class ServerFolderUnusable(ModelUnavailable):
    """The server folder (``RUNGS_SERVER_DIR``) or one of its files cannot be used: a file where a folder
    should be, a folder where a file should be, no permission, a full disk."""


def unusable(path: Path, err: OSError) -> ServerFolderUnusable:
    """An OSError on the server folder, said with the path and the fix."""
    what = {FileExistsError: "is a file, where a folder is needed", NotADirectoryError: "is inside a file, not a folder",
            IsADirectoryError: "is a folder, where a file is needed",
            PermissionError: "may not be written by this user"}.get(type(err), f"cannot be used ({err.strerror or err})")
    return ServerFolderUnusable(f"the model server's {path} {what}: remove it, or set RUNGS_SERVER_DIR to a folder "
                                "of your own (the local model server keeps its state, lock and logs there)")


def private_dir(path: Path) -> Path:
    """A folder only this user may enter: made ``0o700`` (or closed again to it); another user's is refused."""
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        info = path.stat()
    except OSError as err:
        raise unusable(path, err) from None
    if not stat.S_ISDIR(info.st_mode):  # a link to a file: mkdir(exist_ok) says nothing
        raise unusable(path, FileExistsError())
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise ModelUnavailable(f"{path} belongs to another user: set RUNGS_SERVER_DIR to a folder of your own")
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(path, 0o700)  # made by hand, or by an older rungs: what it holds is a key to a server
    return path


def _private(file: str, flags: int) -> int:
    try:
        fd = os.open(file, flags, 0o600)
    except OSError as err:
        raise unusable(Path(file), err) from None
    os.fchmod(fd, 0o600)  # a file that existed before keeps its mode otherwise
    return fd


def private_open(path: Path, mode: str = "ab"):
    """Open a file of the server folder for writing, readable by this user only (``0o600``)."""
    private_dir(path.parent)
    return open(path, mode, opener=_private)


def _read_json(path: Path):
    """A JSON file's value, or None: absent, half-written, not UTF-8, not JSON, nested past the stack."""
    try:
        return json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None


def write_json(path: Path, data: dict) -> None:
    # Written aside then renamed: a reader never sees half a state file.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with private_open(tmp, "w") as out:
        out.write(json.dumps(data, indent=1))
    try:
        os.replace(tmp, path)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise unusable(path, err) from None


def remove(path: Path) -> None:
    """Remove a file of the server folder if it is there; a folder in its place is said, not raised raw."""
    try:
        path.unlink(missing_ok=True)
    except OSError as err:
        raise unusable(path, err) from None


def _whole(value, low: int = 1, high: int = 2**31) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def _text(value) -> bool:
    return isinstance(value, str) and 0 < len(value) <= 4096


#: What each field of a state file must be; a file with any field wrong is no state file.
_STATE = {"status": lambda v: v in ("starting", "ready"), "token": _text, "supervisor": _whole, "pid": _whole,
          "port": lambda v: _whole(v, 1, 65535), "model": _text, "threads": _whole, "n_ctx": _whole,
          "grace": _finite, "idle": _finite, "started_at": _finite,
          "started_in": lambda v: v is None or _finite(v),
          "supervisor_start": lambda v: v is None or _text(v), "pid_start": lambda v: v is None or _text(v)}
_OPTIONAL = {"started_in", "supervisor_start", "pid_start"}


def read_state(path: Path) -> dict | None:
    """A server's state file, whole and of the right shape — or None (absent, damaged, or not one at all)."""
    data = _read_json(path)
    if not isinstance(data, dict):
        return None
    for name, ok in _STATE.items():
        if (name in data or name not in _OPTIONAL) and not ok(data.get(name)):
            return None
    return data


_EXIT = {"pid": lambda v: v is None or _whole(v), "returncode": lambda v: v is None or _whole(v, -255, 255),
         "signal": lambda v: v is None or _text(v), "during": lambda v: v is None or _text(v),
         "stopped": lambda v: v is None or _text(v), "log": lambda v: v is None or _text(v),
         "tail": lambda v: v is None or (isinstance(v, list) and all(isinstance(line, str) for line in v)),
         "token": lambda v: v is None or _text(v), "model": lambda v: v is None or _text(v)}


def read_exit(path: Path) -> dict | None:
    """How the last server ended (written by its supervisor), whole and of the right shape — or None."""
    data = _read_json(path)
    if not isinstance(data, dict) or not all(ok(data.get(name)) for name, ok in _EXIT.items()):
        return None
    return data


def proc_start(pid: int) -> str | None:
    """When a process started (Linux), so a recycled pid is not mistaken for the one we registered."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def alive(pid: int | None, start: str | None = None) -> bool:
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


def _cmdline(pid: int) -> list[str] | None:
    """A process's command line, word by word (Linux: /proc; elsewhere: ps), or None if it cannot be read."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except FileNotFoundError:
        if Path("/proc/self").exists():
            return None  # Linux, and the process is gone
    except OSError:
        return None
    try:
        out = subprocess.run(["ps", "-o", "args=", "-p", str(int(pid))], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.split() or None


#: The module names a rungs supervisor or server runs under: today's, and the one before the package had rooms.
RUNGS_MODULES = {"rungs.model", "rungs.llm"}


def is_supervisor(pid, token: str, start: str | None = None) -> bool:
    """Is ``pid`` the supervisor that holds ``token`` — alive, started when recorded, its command line ours?"""
    if not alive(pid, start):
        return False
    argv = _cmdline(pid) or []
    return bool(RUNGS_MODULES & set(argv)) and "supervise" in argv and \
        any(a == "--token" and b == token for a, b in zip(argv, argv[1:]))


def _parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _listening(pid: int, port: int) -> bool | None:
    """Does ``pid`` hold the socket listening on ``port``? None where this cannot be read (not Linux)."""
    try:
        inodes = {os.readlink(f"/proc/{pid}/fd/{fd}")[8:-1] for fd in os.listdir(f"/proc/{pid}/fd")}
        tables = [Path(f"/proc/net/{name}").read_text().splitlines()[1:] for name in ("tcp", "tcp6")
                  if Path(f"/proc/net/{name}").exists()]
    except OSError:
        return None
    for line in (row for table in tables for row in table):
        fields = line.split()
        # local address « 0100007F:1F90 », state 0A (LISTEN), the socket's inode tenth.
        if len(fields) > 9 and fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
            if fields[9] in inodes:
                return True
    return False


def ours(state: dict) -> bool:
    """Is the server this state file names the one rungs started? Its supervisor holds the file's token,
    the server is that supervisor's child, and the port is the server's own. A stale file whose pids were
    recycled, or whose port another program holds, is not ours: nothing is sent there, nothing signalled."""
    if not is_supervisor(state.get("supervisor"), state.get("token"), state.get("supervisor_start")):
        return False
    pid = state.get("pid")
    argv = _cmdline(pid) or []
    if not alive(pid, state.get("pid_start")) or "llama-server" not in argv:
        return False
    if _parent(pid) not in (None, state["supervisor"]):
        return False
    return _listening(pid, state.get("port")) is not False


def port_open(port: int | None, host: str = "127.0.0.1") -> bool:
    # A TCP connect, not an HTTP request: a busy llama.cpp server holds its lock and answers nothing
    # until the current generation ends, but the kernel still accepts the connection.
    if not port:
        return False
    try:
        with socket.create_connection((host, int(port)), timeout=1.0):
            return True
    except OSError:
        return False


def http_ready(port: int, host: str = "127.0.0.1", api_key: str | None = None) -> bool:
    """The one readiness probe: does the server at ``host:port`` list its models (with ``api_key``, if it wants one)?"""
    request = urllib.request.Request(f"http://{host}:{port}/v1/models",
                                     headers={"Authorization": f"Bearer {api_key}"} if api_key else {})
    try:
        with urllib.request.urlopen(request, timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def free_port() -> int:
    with socket.socket() as s:  # ask the OS for a free port
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def log_tail(path: Path, lines: int = 8) -> list[str]:
    try:
        text = path.read_bytes()[-20000:].decode(errors="replace")
    except OSError:
        return []
    kept = [line.rstrip()[:240] for line in text.splitlines() if line.strip()]
    return kept[-lines:]


class FileLock:
    """An exclusive fcntl lock on a file: two kernels can never start two servers for the same key."""

    def __init__(self, path: Path):
        self.path, self.fd = path, None

    def acquire(self, timeout: float) -> bool:
        import fcntl

        private_dir(self.path.parent)
        self.fd = _private(str(self.path), os.O_RDWR | os.O_CREAT)
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


def child_env() -> dict:
    env = dict(os.environ)
    # So `python -m rungs.model` finds this very package, installed or not (a benchmark's other venv).
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(paths.package().parent), env.get("PYTHONPATH", "")) if p)
    return env


def stop_child(child: subprocess.Popen, timeout: float = 15.0) -> None:
    """Ask a child process to stop (SIGTERM), and kill it if it has not within ``timeout`` seconds."""
    if child.poll() is None:
        child.terminate()
        try:
            child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def signal_name(returncode: int | None) -> str | None:
    if returncode is None or returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"

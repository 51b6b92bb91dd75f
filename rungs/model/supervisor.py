"""The supervisor: a tiny process that owns one llama.cpp server and stops it when nobody needs it.

What it is for: a kernel killed with SIGKILL cannot stop the server it
started, so no kernel owns it. The first client spawns a supervisor (its own
session, detached); the supervisor starts the llama.cpp server, writes the
state file, counts the processes using it (one file per user, named by pid
and start time), and stops the server when none of them is alive for the
grace period, or nobody called for the idle period. It records how the
server ended, so a client can say « killed by SIGSEGV » with the log and the
fix (``crashed``).

Cost: one small Python process per running server, waking twice a second.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from .bundle import build_id, llama_build, rebuild_command
from .contract import ModelServerCrashed
from .launch import llama_args
from ..core import paths as settings
from ..core.secrets import redact
from .processes import (alive, child_env, FileLock, free_port, http_ready, log_tail, ServerFiles, proc_start,
                        signal_name, stop_child, write_json, private_dir, private_open, read_state)


_SIGNAL_WORDS = {"SIGSEGV": "segmentation fault", "SIGILL": "illegal instruction", "SIGBUS": "bus error",
                 "SIGABRT": "aborted", "SIGFPE": "arithmetic error"}


def how_it_ended(record: dict) -> str:
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
        return (f"the model file could not be loaded ({record.get('model')}): `python -m rungs.model prepare` "
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


def crashed(record: dict, when: str) -> ModelServerCrashed:
    tail = [redact(line) for line in record.get("tail") or []]  # a log line can quote a request's header
    hint = _hint(record)
    shown = "\n".join("    " + line for line in tail) or "    (empty)"
    message = (f"the local model server (pid {record.get('pid')}) {how_it_ended(record)} {when}.\n"
               f"Last lines of its log ({record.get('log')}):\n{shown}\n"
               f"What to do: {hint}\n"
               + ("The next call tries to start it again." if record.get("during") == "starting"
                  else "The next call starts a new server."))
    return ModelServerCrashed(message, returncode=record.get("returncode"), signal=record.get("signal"),
                              log_tail=tail, hint=hint, log=record.get("log"))


def _arguments(argv: list[str]):
    import argparse

    p = argparse.ArgumentParser(prog="python -m rungs.model supervise")
    for name in ("--dir", "--key", "--token", "--user", "--model"):
        p.add_argument(name, required=True)
    for name in ("--grace", "--idle", "--threads", "--n-ctx"):
        p.add_argument(name, required=True)
    p.add_argument("--start-timeout", default="600")
    a = p.parse_args(argv)
    # The one checker, as for the variables they come from: a grace of nan would never end.
    for name, high in (("grace", 86_400), ("idle", 30 * 86_400), ("start_timeout", 86_400)):
        setattr(a, name, settings.read_number(getattr(a, name), f"--{name.replace('_', '-')}", low=0, high=high))
    for name, high in (("threads", 256), ("n_ctx", 1 << 20)):
        setattr(a, name, int(settings.read_number(getattr(a, name), f"--{name.replace('_', '-')}", low=1, high=high,
                                                  whole=True)))
    return a


class Supervisor:
    """One llama.cpp server, owned: started, watched, stopped when unused, and how it ended written down."""

    def __init__(self, a):
        self.a, self.paths = a, ServerFiles(a.key, Path(a.dir))
        self.stop_reason: list[str] = []
        self.child: subprocess.Popen | None = None
        self.port = 0

    def start(self) -> None:
        """Count the first user, start the server on a free port, write the state file (« starting »)."""
        a, paths = self.a, self.paths
        private_dir(paths.users)
        pid, _, start = a.user.partition(":")
        with private_open(paths.users / pid, "w") as f:
            f.write(start)
        self.port = free_port()
        cmd = [sys.executable, "-m", "rungs.model", "llama-server",
               *llama_args(Path(a.model), host="127.0.0.1", port=self.port, threads=a.threads, n_ctx=a.n_ctx)]
        self.began = time.time()
        with private_open(paths.log, "wb") as log:
            self.child = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                          env=child_env())
        # The start times let a client tell these processes from later ones given the same pids.
        self.state = {"status": "starting", "token": a.token, "supervisor": os.getpid(), "pid": self.child.pid,
                      "port": self.port, "model": a.model, "threads": a.threads, "n_ctx": a.n_ctx,
                      "python": sys.executable, "build": build_id(), "grace": a.grace, "idle": a.idle,
                      "started_at": self.began, "started_in": None, "supervisor_start": proc_start(os.getpid()),
                      "pid_start": proc_start(self.child.pid)}
        write_json(paths.state, self.state)
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda s, _f: self.stop_reason.append(f"asked to stop ({signal.Signals(s).name})"))
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    def record(self, during: str, stopped: str | None = None) -> None:
        returncode = self.child.returncode
        write_json(self.paths.exit, {"pid": self.child.pid, "port": self.port, "token": self.a.token,
                                      "returncode": returncode, "signal": signal_name(returncode), "during": during,
                                      "stopped": stopped, "tail": log_tail(self.paths.log), "log": str(self.paths.log),
                                      "model": self.a.model, "at": time.time()})

    def _drop_state(self) -> None:
        if (read_state(self.paths.state) or {}).get("token") == self.a.token:
            self.paths.state.unlink(missing_ok=True)

    def finish(self, during: str, reason: str) -> int:
        """Stop the server (asked, or no users): the state file goes first, so no client adopts a dying server."""
        self._drop_state()
        stop_child(self.child)
        self.record(during, stopped=reason)
        return 0

    def died(self, during: str) -> int:
        self.record(during)
        self._drop_state()
        return 0

    def wait_ready(self) -> int | None:
        """Until the server answers: None once it does, else how the run ended (it died, was stopped, timed out)."""
        while True:
            if self.child.poll() is not None:
                return self.died("starting")
            if self.stop_reason:
                return self.finish("starting", self.stop_reason[0])
            if time.time() - self.began > self.a.start_timeout:
                return self.finish("starting", f"it did not answer within {self.a.start_timeout:.0f} s")
            if http_ready(self.port):
                self.state.update(status="ready", started_in=round(time.time() - self.began, 2))
                write_json(self.paths.state, self.state)
                return None
            time.sleep(0.2)

    def users(self) -> tuple[int, float]:
        """How many registered users are alive, and when any of them last called; the dead are forgotten."""
        alive_users, last_use = 0, 0.0
        for f in self.paths.users.glob("*"):
            try:
                living = f.name.isdigit() and alive(int(f.name), f.read_text().strip() or None)
                last_use = max(last_use, f.stat().st_mtime)
            except (OSError, ValueError):  # gone while we looked, or not a file we wrote (not UTF-8)
                continue
            if living:
                alive_users += 1
            else:
                f.unlink(missing_ok=True)  # a kernel that died without saying goodbye (SIGKILL)
        return alive_users, last_use

    def confirm(self, reason: str, users: int) -> str | None:
        """Stop only while holding the lock: a kernel registering at this instant either comes before (and
        is counted next round) or after (and finds no state file: starts a new one)."""
        lock = FileLock(self.paths.lock)
        if not lock.acquire(timeout=0):
            return None
        try:
            fresh = [f for f in self.paths.users.glob("*") if f.name.isdigit() and alive(int(f.name))]
            if users == 0 and fresh:
                return None
            self.paths.state.unlink(missing_ok=True)
            return reason
        finally:
            lock.release()

    def serve(self) -> int:
        """Watch the server and its users twice a second until it must stop."""
        empty_since = None
        while True:
            if self.child.poll() is not None:
                return self.died("serving")
            if self.stop_reason:
                return self.finish("serving", self.stop_reason[0])
            now, (users, last_use) = time.time(), self.users()
            reason = None
            if users == 0:
                empty_since = empty_since or now
                if now - empty_since >= self.a.grace:
                    reason = f"no process used it for {self.a.grace:g} s"
            else:
                empty_since = None
                if self.a.idle and now - last_use >= self.a.idle:
                    reason = f"no call for {self.a.idle:g} s"
            if reason and self.confirm(reason, users):
                return self.finish("serving", reason)
            time.sleep(0.5)


def supervise(argv: list[str]) -> int:
    """Own one llama.cpp server; stop it when its users are gone or idle; record how it ended.

    Run as ``python -m rungs.model supervise --dir D --key K --token T --user PID:START
    --grace G --idle I --model M --threads N --n-ctx C`` by the first client; detaches at once.
    """
    supervisor = Supervisor(_arguments(argv))
    # Detach: the kernel that started us never has to reap us, and its death does not touch us.
    if os.fork() > 0:
        os._exit(0)
    supervisor.start()
    ended = supervisor.wait_ready()
    return ended if ended is not None else supervisor.serve()

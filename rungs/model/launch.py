"""How rungs launches a llama.cpp server: its arguments, its threads, and the process it runs in.

What it is for: one home for the launch, shared by the per-user server (started by the
supervisor) and the room server (``python -m rungs.model serve``), so both run the model the
same way. The choices, each measured in ``benchmarks/results/speed.json`` (the table is in
``benchmarks/README.md``, « Answers in seconds »):

- logits for the last position only (``--logits_all False``), with logprobs still answered:
  ``rungs.model.patches``, pinned to llama-cpp-python 0.3.36; another version is served as
  shipped, with every position's logits (slower, never wrong);
- threads: the physical cores this process may use (a hyperthread's sibling is not a core;
  ``sched_getaffinity`` and a container's CPU quota limit them), at most ``MAX_THREADS``;
  ``RUNGS_LLM_THREADS`` overrides. Measured here (two cores, ``benchmarks/results/speed.json``):
  both threads answer a prompt of four passages in 0.60 of one thread's time on a quiet machine,
  in about the same time with one busy process beside them (and 1.40 of its CPU: llama.cpp's
  threads spin while they wait for each other), and slower under the heavier load of several busy
  processes. A machine shared that way is better served by ``RUNGS_LLM_THREADS=1``;
- a context of ``N_CTX`` tokens: the prompts a rung sends with their answers (four passages are
  about 760 tokens); a smaller context was measured no faster.

Cost: a few small files read under /sys, once per server start.
"""

from __future__ import annotations

import math
import os
import runpy
import subprocess
import sys
import threading
import time
from pathlib import Path

from ..core import paths
from .bundle import LOCAL_MODEL_NAME

#: The context, in tokens: N5's longest synthesis prompt and its answer fit with room to spare.
N_CTX = 4096
#: More threads than this buy little: generation is bound by memory bandwidth long before, and on laptops with
#: efficiency cores a thread placed on one makes every step wait for it.
MAX_THREADS = 8


def _cgroup_cpus() -> float | None:
    """The CPUs a container's quota allows (cgroup v2 ``cpu.max``: « 200000 100000 » is 2), or None."""
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        return None


def physical_cores() -> int:
    """The physical cores this process may run on: hyperthread siblings counted once, affinity and quota honoured."""
    allowed = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    if allowed is None:  # macOS: no affinity; the kernel says how many physical cores there are
        try:
            out = subprocess.run(["sysctl", "-n", "hw.physicalcpu"], capture_output=True, text=True, timeout=5)
            cores = int(out.stdout.strip())
        except (OSError, ValueError, subprocess.SubprocessError):
            cores = os.cpu_count() or 1
    else:
        siblings = set()
        for cpu in allowed:
            topology = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
            for name in ("core_cpus_list", "thread_siblings_list"):
                try:
                    siblings.add((topology / name).read_text().strip())
                    break
                except OSError:
                    continue
            else:
                siblings.add(str(cpu))  # no topology (some containers): every CPU counted as a core
        cores = len(siblings)
    quota = _cgroup_cpus()
    if quota is not None:
        cores = min(cores, max(1, math.floor(quota)))
    return max(1, cores)


def default_threads() -> int:
    """The server's threads: ``RUNGS_LLM_THREADS`` if set (checked), else the physical cores, at most MAX_THREADS."""
    return paths.setting_int("RUNGS_LLM_THREADS", min(physical_cores(), MAX_THREADS), low=1, high=256)


def llama_args(model: Path, *, host: str, port: int, threads: int, n_ctx: int = N_CTX,
               api_key: str | None = None) -> list[str]:
    """The command line of ``python -m rungs.model llama-server``, the same for a kernel's server and a room's."""
    args = ["--model", str(model), "--model_alias", LOCAL_MODEL_NAME, "--host", host, "--port", str(port),
            "--n_threads", str(threads), "--n_threads_batch", str(threads), "--n_ctx", str(n_ctx),
            "--seed", "0", "--verbose", "False",
            # Logits for the last position only: rungs.model.patches keeps logprobs working (and the
            # server process turns this back on where the patches do not apply).
            "--logits_all", "False",
            # A shared server must finish one learner's stream even when another learner asks meanwhile.
            "--interrupt_requests", "False"]
    return args + (["--api_key", api_key] if api_key else [])


def _every_logit(argv: list[str]) -> list[str]:
    """The same command line with logits for every position (llama_cpp.server's own default)."""
    out = list(argv)
    for i, arg in enumerate(out[:-1]):
        if arg == "--logits_all":
            out[i + 1] = "True"
    return out


def llama_server(argv: list[str]) -> None:
    """llama_cpp.server, patched (``rungs.model.patches``), plus a watchdog: if our parent dies (even by
    SIGKILL), we exit too."""
    from .patches import install

    parent = os.getppid()

    def watch():
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch, daemon=True, name="rungs-parent-watchdog").start()
    # Unpatched, logprobs need every logit: a version the patches were not read from keeps the shipped default.
    if not install():
        argv = _every_logit(argv)
    sys.argv = ["llama_cpp.server", *argv]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)

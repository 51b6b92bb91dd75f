"""Every place rungs reads or writes, and every ``RUNGS_*`` setting, in one module.

What it is for: a reader who wants to know where the model file, the vector
cache or the server's state live, or what an environment variable changes,
reads this one page. Nothing here is computed from where a module happens to
sit, except ``checkout()``, which says whether the package runs from a clone
of the repository (the notebooks and the benchmarks live there, not in the
installed package).

Settings are read when they are used, not at import, so a notebook that sets
a variable and calls again sees it. A setting that cannot be used — not a
number, not finite, out of range, bytes that are not UTF-8 — is a
``BadSetting`` naming the variable and what it accepts, never a traceback
from deep inside.

Cost: a few dictionary look-ups.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from pathlib import Path

from .errors import BadArgument, RungsError

#: The variables rungs reads, and what each one changes (the README lists the same).
SETTINGS = {
    "RUNGS_CACHE": "where the assembled model and the vector caches live (default ~/.cache/rungs)",
    "RUNGS_LOCAL_MODEL": "another .gguf file to serve instead of the bundled model",
    "RUNGS_LLM_THREADS": "threads of the local model server and of a room's (default: the physical cores, at most 8)",
    "RUNGS_LLM_TIMEOUT": "seconds a model call waits for its answer (default 120; 1 to 3600)",
    "RUNGS_REPLAY": "replay: answer a notebook's model calls from its recorded run (no model); record: write one",
    "RUNGS_REPLAY_FILE": "the replay file to use instead of notebooks/replays/<notebook>.jsonl",
    "RUNGS_ENCODER_THREADS": "threads of the sentence encoder (default 1)",
    "RUNGS_ENCODER_PROCESSES": "processes that encode a folder's passages while indexing (default: the physical cores)",
    "RUNGS_SERVER_DIR": "where local model servers register (default ~/.cache/rungs/server)",
    "RUNGS_SERVER_GRACE": "seconds a local server outlives its last user (default 60)",
    "RUNGS_SERVER_IDLE": "seconds without a call before a local server stops (default 1800; 0: never)",
    "RUNGS_MODEL": "the model name to ask a hosted endpoint for",
    "RUNGS_CACM": "a folder holding the CACM collection, instead of the one shipped with rungs",
    "RUNGS_SCRIPTED_REPLIES": "a JSON file of scripted replies for `python -m rungs ask` (a teaching prop)",
    "RUNGS_ROOM_KEY": "the key a room server requires (python -m rungs.model serve)",
    "RUNGS_FILE_SECONDS": "the longest one file may take to read while indexing (default 120)",
    "RUNGS_INDEXES": "where notebook 09 keeps each folder's index between runs (default ~/.cache/rungs/indexes)",
}


class BadSetting(RungsError, ValueError):
    """A setting (an environment variable, a header) holds a value rungs cannot use; the message names it."""


class NotInCheckout(RungsError, FileNotFoundError):
    """What was asked for lives in the repository (notebooks, benchmarks), and rungs runs from an install."""


def _raw(name: str) -> str | None:
    value = os.environ.get(name)
    if value is None or not value.strip():
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # bytes the system kept as surrogates: no request, log or JSON file can carry them
        from .secrets import SECRET_VARIABLES  # a key is never shown, not even the bytes of a broken one

        shown = "(a key: not shown)" if name in SECRET_VARIABLES else repr(printable(value)[:60])
        raise BadSetting(f"{name}={shown} holds bytes that are not UTF-8 (shown as « \ufffd »): "
                         f"rungs writes it into requests, logs and JSON files, which are UTF-8. Set it to a UTF-8 "
                         f"value (a path: rename it, or link to it from a UTF-8 name with ln -s), or unset it") from None
    return value


def setting_text(name: str, default: str | None = None) -> str | None:
    """A variable's text, or ``default`` when it is unset or blank."""
    return _raw(name) or default


def read_number(raw: str, name: str, *, low: float, high: float, whole: bool = False) -> float:
    """The one checker of a number written as text — an environment variable, a header: finite, within
    [low, high] (``whole``: an integer), else ``BadSetting`` naming it and what it accepts."""
    span = f"{low:,.10g} to {high:,.10g}"
    try:
        value = int(raw.strip()) if whole else float(raw)
    except (ValueError, TypeError, AttributeError):
        raise BadSetting(f"{name}={str(raw)[:40]!r} is not a {'whole ' if whole else ''}number: "
                         f"set it to a number from {span}, or unset it") from None
    # « nan » and « inf » parse as floats: a grace of nan seconds would never end.
    if not math.isfinite(value) or not low <= value <= high:
        raise BadSetting(f"{name}={str(raw)[:40]!r} is out of range: set it to a number from {span}, or unset it")
    return value


def setting_number(name: str, default: float, *, low: float = 0.0, high: float = 1e9) -> float:
    """A variable read as a finite number within [low, high]; unset or blank gives ``default``."""
    raw = _raw(name)
    return default if raw is None else read_number(raw, name, low=low, high=high)


def setting_int(name: str, default: int, *, low: int = 1, high: int = 1024) -> int:
    """A variable read as a whole number within [low, high] (« two » and « 1.5 » are refused by name)."""
    raw = _raw(name)
    return default if raw is None else int(read_number(raw, name, low=low, high=high, whole=True))


def printable(name: str) -> str:
    """A file name as it can be printed: bytes that are not UTF-8 (kept by Python as surrogates) shown as
    « \ufffd », so that a strict terminal prints a user's old archive instead of failing on it."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def cache_home() -> Path:
    """The user's cache folder: ``$XDG_CACHE_HOME`` or ``~/.cache``."""
    return Path(setting_text("XDG_CACHE_HOME") or Path.home() / ".cache")


def cache() -> Path:
    """Where rungs keeps what it makes once per machine: ``$RUNGS_CACHE`` or ``~/.cache/rungs``."""
    return Path(setting_text("RUNGS_CACHE") or cache_home() / "rungs")


def models() -> Path:
    """Where the bundled chat model is assembled from its packages."""
    return cache() / "models"


def vectors() -> Path:
    """Where the vector caches of the handbook (and of any collection without its own) live."""
    return cache() / "vectors"


def servers() -> Path:
    """Where local model servers register (state, lock, users, logs): one folder per user."""
    return Path(setting_text("RUNGS_SERVER_DIR") or cache_home() / "rungs" / "server")


def replays() -> Path:
    """Where the notebooks' recorded model replies live (``RUNGS_REPLAY``): one file per notebook."""
    return in_checkout("notebooks", "replays", what="the notebooks' replay files")


def folder_index(folder) -> Path:
    """Where notebook 09 keeps ``folder``'s index between runs, outside the folder (which is never written):
    ``$RUNGS_INDEXES`` (default ``cache()/indexes``) ``/<its name>-<12 hex of its absolute path>/index.sqlite``,
    the same for the same folder, so a re-run brings it up to date (an unchanged file costs one stat).
    Removing that folder is safe. The suite's kernels set ``RUNGS_INDEXES`` afresh: a committed run is a first reading."""
    if not isinstance(folder, (str, os.PathLike)):
        raise BadArgument(f"folder must be a folder's path (text or a Path), not {type(folder).__name__}")
    where = Path(folder).expanduser().resolve()
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", where.name).strip("-")[:40] or "folder"
    key = hashlib.sha256(str(where).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return Path(setting_text("RUNGS_INDEXES") or cache() / "indexes") / f"{name}-{key}" / "index.sqlite"


def last_index() -> Path:
    """The file that remembers the last folder indexed, for ``python -m rungs search`` with no ``--index``."""
    return cache_home() / "rungs" / "last-index"


def package() -> Path:
    """The installed ``rungs`` package itself (its data travel with it)."""
    return Path(__file__).resolve().parent.parent


def data(*parts: str) -> Path:
    """A file or folder of the data shipped inside the package (the handbook, CACM)."""
    return package().joinpath("lab", "data", *parts)


def checkout() -> Path | None:
    """The repository this package runs from, or ``None`` when it was installed (``pip install .``).

    The notebooks, their data and the benchmarks' results live in the repository, not in the package.
    """
    root = package().parent
    return root if (root / "run.sh").is_file() and (root / "notebooks").is_dir() else None


def in_checkout(*parts: str, what: str = "this file") -> Path:
    """A path inside the repository; outside a checkout, ``NotInCheckout`` saying where to run from."""
    root = checkout()
    if root is None:
        raise NotInCheckout(f"{what} lives in the repository, not in the installed package: run this from a clone "
                         "of the repository (git clone …, then bash run.sh lab)")
    return root.joinpath(*parts)

"""A stored results file, read for a notebook: found, refused by name when it is not one, never waited on.

What it is for: notebooks 02, 03 and 07 read committed runs (``benchmarks/results/*.json``)
through ``rungs.lab.abstention_summary``, ``abstention_decision`` and ``folder_default``.
Each used to find, open and refuse its file in its own words, and one of them
opened whatever it was given — a FIFO would have been waited on forever. Here,
once: the file found through ``rungs.core.paths`` (a workshop copy has it too),
anything that is not a regular file refused before it is opened, an unreadable
or non-JSON one refused with the command that makes it again. What the file
must hold is each reader's own check.

Cost: reading one JSON file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..core import paths
from ..core.display import safe_text
from ..core.errors import BadArgument, RungsError


def read_json(path, *, name: str, what: str, remake: str, error: type[RungsError], check=None):
    """The JSON in ``path`` (``None``: ``benchmarks/results/<name>``), passed through ``check`` if given (its
    ``BadArgument`` becomes ``error``); ``error`` says what is wrong and ``remake``."""
    if path is None:
        path = paths.in_checkout("benchmarks", "results", name, what=what)
    if not isinstance(path, (str, os.PathLike)):
        raise BadArgument(f"path must be {what} (a path), not {type(path).__name__}")
    path = Path(path)
    shown = safe_text(path.name[:80])  # a file's name may hold terminal controls
    try:
        regular = path.is_file()  # a FIFO would be waited on forever, a folder cannot be read
    except (OSError, ValueError):  # a name the system refuses: too long, a NUL in it
        regular = False
    if not regular:
        raise error(f"{shown} cannot be read (no such file, or not a regular file): run {remake}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as err:
        reason = getattr(err, "strerror", None) or type(err).__name__
        raise error(f"{shown} cannot be read ({reason}): run {remake}") from None
    try:
        return data if check is None else check(data)
    except BadArgument as err:
        raise error(f"{shown} is not {what} ({err}): run {remake}") from None

"""Walking a folder: every file to read, in order, and every one not to read, with the reason.

What it is for: a real folder holds hidden files, links, pipes, names that are
not text, sub-folders nobody may open. ``walk`` yields each entry once, sorted,
with its ``stat`` or with the reason it is not read:

- hidden files and folders (a leading dot: ``.git``, ``.rungs``) are not looked at;
- only regular files are read: a FIFO, a socket or a device is skipped by type,
  before anything opens it (opening a FIFO waits forever for a writer);
- a link is followed only when it leads to a regular file inside the folder; a
  linked folder is not entered, and a link loop is said to be one;
- a name that is not UTF-8 text is reported (SQLite and a citation could not hold it);
- a sub-folder that cannot be opened is reported, and ``Walk.unreadable`` lists
  it, so that the index keeps what it had from it instead of calling it removed.

``read_folder`` reads every file of a folder into documents, without an index.

Cost: one ``stat`` per file.
"""

from __future__ import annotations

import os
import stat as stat_kind
from dataclasses import dataclass
from pathlib import Path

from ..core import paths
from ..core.errors import BadArgument, RungsError, check_int
from .readers import LINK_LOOP, MAX_BYTES, Unreadable, kind_of, read_file


class FolderNotFound(RungsError, FileNotFoundError):
    """The folder to read does not exist; the message names it."""


@dataclass(frozen=True)
class Skipped:
    """A file that was not indexed, and why."""

    path: str
    reason: str


@dataclass(frozen=True)
class Entry:
    """One file of the folder: ``path`` and ``stat`` to read it, or ``reason`` it is not read."""

    rel: str
    path: Path | None = None
    stat: os.stat_result | None = None
    reason: str | None = None


def _text_name(rel: str) -> str | None:
    """The name as text, or None when its bytes are no UTF-8 text (os.walk keeps them as surrogates)."""
    try:
        rel.encode("utf-8")
        return rel
    except UnicodeEncodeError:
        return None


def shown(rel: str) -> str:
    """A name as it can be printed: bytes that are not UTF-8 shown as « \ufffd » (``core.paths.printable``)."""
    return paths.printable(rel)


def _file(root: Path, path: Path, rel: str) -> Entry:
    """One name of the folder, looked at without opening it."""
    try:
        if path.is_symlink():
            try:
                target = path.resolve(strict=True)
            except RuntimeError:  # Python before 3.13 says « Symlink loop » this way
                return Entry(rel, reason=LINK_LOOP)
            except OSError as err:
                looped = "loop" in str(err).lower() or getattr(err, "errno", None) == 40
                return Entry(rel, reason=LINK_LOOP if looped else "a link to nothing (its target is gone)")
            if not target.is_relative_to(root):
                return Entry(rel, reason="a link to a file outside the folder: not followed")
        info = path.stat()
    except OSError as err:
        return Entry(rel, reason=f"cannot be opened ({err.strerror or err})")
    if not stat_kind.S_ISREG(info.st_mode):
        return Entry(rel, reason=f"{kind_of(info.st_mode)}, not a file: skipped without opening it")
    return Entry(rel, path=path, stat=info)


class Walk:
    """Every entry under ``folder``, sorted; after iterating, ``unreadable`` lists the folders that could not be read."""

    def __init__(self, folder: Path):
        self.folder, self.unreadable = Path(folder), []

    def __iter__(self):
        root = self.folder.resolve()

        def refused(err: OSError) -> None:  # os.walk would skip such a folder without a word
            rel = Path(err.filename).relative_to(self.folder).as_posix() if err.filename else "?"
            self.unreadable.append(rel)

        for current, dirs, files in os.walk(self.folder, onerror=refused, followlinks=False):
            base = Path(current)
            yield from self._folders(base, dirs)
            for name in sorted(files):
                if name.startswith("."):
                    continue
                rel = (base / name).relative_to(self.folder).as_posix()
                if _text_name(rel) is None:
                    yield Entry(shown(rel), reason="a file name that is not UTF-8 text: rename the file")
                    continue
                yield _file(root, base / name, rel)
        for rel in self.unreadable:
            yield Entry(shown(rel) + "/", reason="a folder that cannot be read (no permission): its files "
                                                 "are not indexed, and what was indexed from it is kept")

    def _folders(self, base: Path, dirs: list[str]):
        """Prune the sub-folders not to enter, saying why for each one a reader would expect to be read."""
        keep = []
        for d in sorted(dirs):
            if d.startswith("."):
                continue
            rel = (base / d).relative_to(self.folder).as_posix()
            if _text_name(rel) is None:
                yield Entry(shown(rel) + "/", reason="a folder name that is not UTF-8 text: rename the folder")
            elif (base / d).is_symlink():
                yield Entry(rel + "/", reason="a link to a folder: not followed")
            else:
                keep.append(d)
        dirs[:] = keep


def read_folder(folder, *, max_bytes: int = MAX_BYTES) -> tuple[list[dict], list[Skipped]]:
    """Every readable file of ``folder`` as a document, and every other file with the reason (nothing indexed)."""
    folder = check_folder(folder)
    max_bytes = check_int(max_bytes, "max_bytes", low=1)  # before any file is read: NaN would mean no limit
    documents, skipped = [], []
    for entry in Walk(folder):
        if entry.path is None:
            skipped.append(Skipped(entry.rel, entry.reason))
            continue
        try:
            documents.append(read_file(entry.path, folder, max_bytes=max_bytes))
        except Unreadable as err:
            skipped.append(Skipped(entry.rel, str(err)))
    return documents, skipped


def check_folder(folder) -> Path:
    """A folder that exists (not a file), as a ``Path``."""
    if not isinstance(folder, (str, os.PathLike)):
        raise BadArgument(f"folder must be a path, not {type(folder).__name__}")
    path = Path(folder)
    if not path.exists():
        raise FolderNotFound(f"{folder}: no such folder")
    if not path.is_dir():
        raise BadArgument(f"{folder} is a file: give the folder that holds your documents")
    return path

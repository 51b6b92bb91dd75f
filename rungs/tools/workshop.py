"""``python -m rungs workshop DIR``: a learner's own copy of the notebooks, never overwriting an edit.

A room of learners must not edit the originals (the next ``git pull`` would
fight them), and an instructor who fixes a notebook mid-workshop must be able
to hand the fix out without anyone losing what they typed. So the notebooks
are copied into a workspace, outputs and execution counts cleared, and a
manifest (``.rungs-workshop.json``) records a hash of what was copied. On the
next run, for each notebook:

- not there yet: **copied**;
- the same as the collection's: **unchanged** (nothing is written);
- untouched by the learner since the copy: **updated** to the new version;
- changed by the learner: **kept**, and the new version is written beside it
  (``02_hybrid_search.new.ipynb``); the learner merges what they want.

What counts as a change is what a learner *writes*: the cells' kinds, sources,
metadata (a tag, « editable: false ») and attachments (an image pasted into a
markdown cell), and the notebook's own metadata (a title). Running a notebook
and saving it is not a change (outputs and execution timings are not lost work:
running the cells again brings them back; the kernel's name and language are
written by Jupyter), so an opened-and-run notebook still receives updates, and
the line says its outputs were cleared. A manifest that cannot
be read — damaged, not JSON, not the shape it should have — only means an
edit cannot be told from a copy: every existing file is then kept.

``--reset NOTEBOOK`` gives a clean copy of one notebook on request; the
learner's version is kept beside it as ``NAME.backup.ipynb``, never deleted.

What a notebook needs besides itself: ``notebooks/data/`` is copied too when
the collection has one (a file the learner changed is kept the same way). The
handbook is not copied: ``rungs.lab.handbook`` reads it from the installed
``rungs`` package's own checkout, wherever the notebook runs, so a workspace
works from any folder with the collection's environment.

Cost: a few milliseconds per notebook; the network is never used.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
from pathlib import Path

from ..core import paths
from ..core.display import safe_text
from ..core.errors import RungsError

def notebooks() -> Path:
    """The collection's notebooks: in the repository this package runs from (they are not installed with it)."""
    return paths.in_checkout("notebooks", what="the notebooks")
MANIFEST = ".rungs-workshop.json"


class WorkshopError(RungsError, ValueError):
    """The workspace cannot be made or updated; the message says what to do."""


# ------------------------------------------------------------------ what is copied

def clean(notebook: dict) -> dict:
    """The notebook as a learner receives it: no outputs, no execution counts, no saved widget state."""
    notebook = json.loads(json.dumps(notebook))  # a deep copy; the original is never touched
    notebook.get("metadata", {}).pop("widgets", None)  # slider values of the last run, not the learner's
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        # Timings of the committed run would be someone else's machine.
        cell.get("metadata", {}).pop("execution", None)
    return notebook


def dumps(notebook: dict) -> bytes:
    """The same bytes nbformat writes: keys sorted, one-space indent, UTF-8 kept as is."""
    return (json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


#: What the manifest's hashes are of: 1, the cells' kinds and sources; 2, their metadata too; 3, the cells'
#: attachments and the notebook's own metadata too.
FINGERPRINT = 3
#: Cell metadata that running a notebook writes by itself: not the learner's.
_WRITTEN_BY_RUNNING = {"execution", "collapsed", "scrolled"}
#: Notebook metadata that Jupyter writes by itself (the kernel picked, its language, saved widgets).
_WRITTEN_BY_JUPYTER = {"kernelspec", "language_info", "widgets"}


def _mine(cell: dict, version: int) -> list:
    if version == 1:
        return [cell.get("cell_type"), _source(cell)]
    meta = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
    mine = [cell.get("cell_type"), _source(cell), {k: v for k, v in meta.items() if k not in _WRITTEN_BY_RUNNING}]
    return mine if version == 2 else mine + [cell.get("attachments") or {}]


def _written(notebook: dict, version: int):
    """What a learner wrote in a notebook: its cells (``_mine``) and, from version 3, its own metadata."""
    cells = [_mine(c, version) for c in notebook["cells"]]
    if version < 3:
        return cells
    meta = notebook.get("metadata") if isinstance(notebook.get("metadata"), dict) else {}
    return {"cells": cells, "metadata": {k: v for k, v in meta.items() if k not in _WRITTEN_BY_JUPYTER}}


def fingerprint(path_or_bytes, *, notebook: bool, version: int = FINGERPRINT) -> str:
    """A hash of what the learner can change: the cells' kinds, sources, metadata and attachments and the
    notebook's metadata for a notebook, the bytes otherwise (``version`` 1: kinds and sources only; 2: and
    the cells' metadata — as workspaces made by an older rungs recorded).

    A notebook that does not parse any more is hashed as bytes: it differs from any copy, so it is kept.
    """
    data = path_or_bytes.read_bytes() if isinstance(path_or_bytes, Path) else path_or_bytes
    if notebook:
        try:
            data = json.dumps(_written(json.loads(data.decode("utf-8")), version), ensure_ascii=False,
                              sort_keys=True, default=str).encode("utf-8")
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            pass
    return hashlib.sha256(data).hexdigest()


def _has_outputs(path: Path) -> bool:
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        return any(isinstance(c, dict) and c.get("outputs") for c in cells)
    except (ValueError, KeyError, TypeError, OSError, RecursionError):
        return False


def planned(source: Path | None = None, workspace: Path | None = None) -> dict[str, bytes]:
    """Relative path → the bytes a learner receives: every notebook, cleaned, and notebooks/data/ as is
    (without ``workspace``, when a learner put it inside the data: it must not copy itself)."""
    source = Path(source) if source is not None else notebooks()
    inside = Path(workspace).resolve() if workspace is not None else None
    if not source.is_dir():
        raise WorkshopError(f"no notebooks folder at {source}: run this from the collection's environment "
                            "(pip install -e . in its checkout), or pass --source")
    files = {}
    for path in sorted(source.glob("*.ipynb")):
        if re.search(r"\.(new|backup)(-\d+)?\.ipynb$", path.name):
            continue  # a workspace used as a source must not hand out its own side files
        try:
            notebook = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, RecursionError) as err:
            raise WorkshopError(f"{path.name} is not a readable notebook ({err}); fix it in the collection") from None
        if not isinstance(notebook, dict):
            raise WorkshopError(f"{path.name} is not a readable notebook (a JSON {type(notebook).__name__}, not an "
                                "object); fix it in the collection")
        files[path.name] = dumps(clean(notebook))
    data = source / "data"
    if data.is_dir():
        for path in sorted(p for p in data.rglob("*") if p.is_file()):
            if any(part.startswith(".") or part == "__pycache__" for part in path.relative_to(data).parts):
                continue  # caches and checkpoints are not material
            if inside is not None and path.resolve().is_relative_to(inside):
                continue  # the workspace itself, made inside the data: copying it would copy itself every run
            files[path.relative_to(source).as_posix()] = path.read_bytes()
    if not any(name.endswith(".ipynb") for name in files):
        raise WorkshopError(f"no notebook in {source}")
    return files


# ------------------------------------------------------------------ the manifest

def _read_manifest(workspace: Path) -> dict:
    """The manifest, whole and of the right shape; anything else is no manifest (every existing file is kept)."""
    path = workspace / MANIFEST
    empty = {"files": {}, "beside": {}, "version": FINGERPRINT}
    if not path.exists():
        return empty
    try:
        manifest = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return empty
    if not isinstance(manifest, dict):
        return empty
    files, beside = manifest.get("files", {}), manifest.get("beside", {})
    if not (isinstance(files, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in files.items())):
        return empty
    if not (isinstance(beside, dict) and all(isinstance(k, str) and isinstance(v, list)
                                             and all(isinstance(h, str) for h in v) for k, v in beside.items())):
        beside = {}
    version = manifest.get("version", 1)  # a manifest without one was written before metadata counted
    return {"files": files, "beside": beside, "version": version if version in (1, 2, FINGERPRINT) else FINGERPRINT}


def _write_manifest(workspace: Path, manifest: dict) -> None:
    # A file name whose bytes are not UTF-8 holds surrogates: written as JSON's « \udce9 », read back the same.
    data = (json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8", "backslashreplace")
    path = workspace / MANIFEST
    if not path.exists() or path.read_bytes() != data:  # compared as bytes: a damaged one may not be text
        path.write_bytes(data)


def _beside(path: Path, tag: str) -> Path:
    """``02_x.ipynb`` → ``02_x.new.ipynb`` (or ``.backup``); ``data/a.csv`` → ``data/a.new.csv``."""
    return path.with_name(f"{path.stem}.{tag}{path.suffix}")


def _free(path: Path, ours: set[str], wanted: bytes, is_notebook: bool) -> Path:
    """Where a side file may go: its usual name, unless the learner put something else of their own there."""
    candidate, n = path, 1
    while candidate.exists():
        fp = fingerprint(candidate, notebook=is_notebook)
        if fp in ours or fp == fingerprint(wanted, notebook=is_notebook):
            return candidate  # ours, or already what we would write
        n += 1
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
    return candidate


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


# ------------------------------------------------------------------ the two actions

def _check_workspace(workspace: Path) -> None:
    """Before anything is written: the workspace is a folder (or nothing yet), its manifest a file (or nothing)."""
    if workspace.exists() and not workspace.is_dir():
        raise WorkshopError(f"{workspace} is a file, not a folder: give the workspace a folder's path "
                            "(a new one is made), the file was not touched")
    manifest = workspace / MANIFEST
    if manifest.exists() and not manifest.is_file():
        raise WorkshopError(f"{manifest} is not a file: the workspace keeps its record of what was copied there. "
                            "Move it away (rungs never wrote it), then run this again; nothing was copied")


def sync(workspace: Path, source: Path | None = None) -> list[tuple[str, str]]:
    """Copy or update every file; returns (relative path, what happened), one per file."""
    files = planned(source, workspace)
    _check_workspace(workspace)
    workspace.mkdir(parents=True, exist_ok=True)
    manifest = _read_manifest(workspace)
    was = manifest["version"]
    report = []
    for rel, data in files.items():
        is_nb = rel.endswith(".ipynb")
        target = workspace / rel
        new = fingerprint(data, notebook=is_nb)
        copied = manifest["files"].get(rel)
        if not target.exists():
            _write(target, data)
            report.append((rel, "copied" if copied is None else "copied again (it was missing)"))
        else:
            current = fingerprint(target, notebook=is_nb)
            if current == new:
                report.append((rel, "unchanged"))
            elif copied is not None and (current if was == FINGERPRINT else
                                         fingerprint(target, notebook=is_nb, version=was)) == copied:
                had_outputs = is_nb and _has_outputs(target)
                _write(target, data)
                report.append((rel, "updated" + (" (your outputs were cleared; none of your cells had changed)"
                                                 if had_outputs else "")))
            else:
                ours = set(manifest["beside"].get(rel, []))
                side = _free(_beside(target, "new"), ours, data, is_nb)
                already = side.exists() and fingerprint(side, notebook=is_nb) == new
                if not already:
                    _write(side, data)
                manifest["beside"].setdefault(rel, [])
                if new not in manifest["beside"][rel]:
                    manifest["beside"][rel].append(new)
                shown = side.relative_to(workspace).as_posix()
                report.append((rel, f"kept your version, the new one is beside it: {shown}" if not already
                               else f"kept your version (the new one is already beside it: {shown})"))
        manifest["files"][rel] = new
    manifest["version"] = FINGERPRINT
    _write_manifest(workspace, manifest)
    return report


def _match(name: str, files: dict[str, bytes]) -> str:
    notebooks = [rel for rel in files if rel.endswith(".ipynb")]
    name = Path(name).name
    exact = [rel for rel in notebooks if rel in (name, name + ".ipynb")]
    if exact:
        return exact[0]
    found = [rel for rel in notebooks if rel.startswith(name)]
    if len(found) == 1:
        return found[0]
    listing = ", ".join(notebooks)
    if not found:
        raise WorkshopError(f"no notebook called {name!r}; the notebooks are: {listing}")
    raise WorkshopError(f"{name!r} could be {', '.join(found)}: give more of the name")


def reset(workspace: Path, name: str, source: Path | None = None) -> list[tuple[str, str]]:
    """A clean copy of one notebook; the learner's version, if it differs, is kept as ``NAME.backup.ipynb``."""
    files = planned(source, workspace)
    _check_workspace(workspace)
    rel = _match(name, files)
    data, target = files[rel], workspace / rel
    manifest = _read_manifest(workspace)
    if target.exists() and target.read_bytes() == data:
        what = "already a clean copy"
    elif target.exists():
        mine, backup, n = target.read_bytes(), _beside(target, "backup"), 1
        while backup.exists() and backup.read_bytes() != mine:  # an older backup is never overwritten
            n += 1
            backup = _beside(target, f"backup-{n}")
        if not backup.exists():
            shutil.copy2(target, backup)
        _write(target, data)
        what = f"reset to a clean copy; your version is kept as {backup.relative_to(workspace).as_posix()}"
    else:
        _write(target, data)
        what = "copied (there was no copy to reset)"
    # In the manifest's own version: its other entries were hashed that way (the next update moves them on).
    manifest["files"][rel] = fingerprint(data, notebook=True, version=manifest["version"])
    workspace.mkdir(parents=True, exist_ok=True)
    _write_manifest(workspace, manifest)
    return [(rel, what)]


# ------------------------------------------------------------------ the command line

def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m rungs workshop",
        description="Copy the collection's notebooks into a learner's workspace (outputs cleared), or update\n"
                    "one made before. A notebook you changed is never overwritten: the new version is written\n"
                    "beside it as NAME.new.ipynb. The handbook is read from the installed rungs package,\n"
                    "not copied.",
        epilog="examples:  python -m rungs workshop ~/atelier          (first copy, or update later)\n"
               "           python -m rungs workshop ~/atelier --reset 02 (a clean 02_…; yours kept as .backup)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("workspace", metavar="DIR", help="the learner's folder (created if missing)")
    p.add_argument("--reset", metavar="NOTEBOOK",
                   help="give a clean copy of this notebook (name or unique prefix, e.g. 02); yours is kept as a backup")
    p.add_argument("--source", metavar="NOTEBOOKS", type=Path, default=None,
                   help="where the notebooks come from (default: the collection's notebooks/ folder)")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(argv or [])
    args = parser().parse_args(argv)
    workspace = Path(args.workspace).expanduser()
    try:
        report = reset(workspace, args.reset, args.source) if args.reset else sync(workspace, args.source)
    except (WorkshopError, OSError) as err:
        print(f"workshop: {safe_text(str(err))}")
        return 1
    # Names as a terminal may print them (bytes not UTF-8, escapes in a name), aligned as printed.
    shown = [(safe_text(rel), safe_text(what)) for rel, what in report]
    width = max(len(rel) for rel, _ in shown)
    for rel, what in shown:
        print(f"{rel:<{width}}  {what}")
    if not args.reset:
        print(safe_text(f"(the handbook is read from the rungs package, not copied: open {workspace}/ in JupyterLab "
                        "with the collection's environment)"))
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))

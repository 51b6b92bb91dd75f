"""How long each notebook takes, top to bottom, in a clean kernel: the numbers an instructor plans with.

Each notebook is executed by nbclient in a fresh kernel of this environment
(the way ``jupyter nbconvert --execute`` does), one at a time, from its own
folder, outputs kept in memory only (the committed notebooks are never
touched). Writes ``benchmarks/results/notebook_times.json`` — one row a
notebook, merged into what is there, so running a few notebooks updates
theirs and keeps the others' — and prints the Markdown table of every row:
notebook, seconds, code cells, and the slowest cell; a notebook that fails
says where and keeps going. ``--tables`` also writes that table into the
README and ``docs/instructor.md`` (between their ``notebook_times`` markers);
``tests/test_prose_numbers.py`` fails while either differs from the file.

    .venv/bin/python benchmarks/notebook_times.py --tables        # all of them, the tables rewritten
    .venv/bin/python benchmarks/notebook_times.py 00 01 02 06     # the model-free ones
    .venv/bin/python benchmarks/notebook_times.py --no-model      # same: skips 03, 04, 05
    .venv/bin/python benchmarks/notebook_times.py --tables-only   # the tables again from the results file

The model notebooks (03–05) start the local model server (or use
``OPENAI_BASE_URL``); run them with nothing else busy on a 2-core machine, or
the timings measure the contention.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO / "notebooks"
RESULTS = REPO / "benchmarks" / "results" / "notebook_times.json"
#: Where the table is shown: each between a line starting ``<!-- BEGIN notebook_times`` and ``<!-- END notebook_times -->``.
SHOWN_IN = (REPO / "README.md", REPO / "docs" / "instructor.md")
MODEL_NOTEBOOKS = ("03_", "04_", "05_")


def run_one(path: Path, timeout: int, *, write: bool = False) -> dict:
    """One notebook in a fresh kernel, cell by cell, timed; ``write``: save its outputs if it ran to the end
    (``scripts/run_notebooks.py --times``: the committed outputs and their times from one run)."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError

    notebook = nbformat.read(path, as_version=4)
    code = [i for i, c in enumerate(notebook.cells) if c.cell_type == "code"]
    # coalesce_streams: one print's pieces kept as one output, as a reader (and the prose guard) sees them.
    client = NotebookClient(notebook, timeout=timeout, kernel_name="python3", store_widget_state=False,
                            coalesce_streams=True, resources={"metadata": {"path": str(path.parent)}})
    per_cell, error = {}, None
    start = time.perf_counter()
    with client.setup_kernel():
        ready = time.perf_counter()
        for index in code:
            t0 = time.perf_counter()
            try:
                client.execute_cell(notebook.cells[index], index)
            except (CellExecutionError, CellTimeoutError) as err:
                last = re.sub(r"\x1b\[[0-9;]*m", "", str(err)).strip().splitlines()[-1]
                error = f"cell {index}: {last[:120]}"
                per_cell[index] = time.perf_counter() - t0
                break
            per_cell[index] = time.perf_counter() - t0
    total = time.perf_counter() - start
    if write and error is None:
        nbformat.write(notebook, path)
    slowest = max(per_cell, key=per_cell.get) if per_cell else None
    return {"notebook": path.name, "seconds": round(total, 1), "kernel_start": round(ready - start, 1),
            "cells": len(code), "slowest_cell": slowest,
            "slowest_seconds": round(per_cell[slowest], 1) if slowest is not None else None, "error": error}


def table(rows: list[dict]) -> str:
    lines = ["| notebook | seconds | code cells | slowest cell | result |", "| --- | ---: | ---: | --- | --- |"]
    for r in rows:
        slow = f"cell {r['slowest_cell']}: {r['slowest_seconds']} s" if r["slowest_cell"] is not None else "—"
        lines.append(f"| `{r['notebook']}` | {r['seconds']} | {r['cells']} | {slow} | "
                     f"{'✗ ' + r['error'] if r['error'] else 'ran to the end'} |")
    return "\n".join(lines)


def lessons() -> list[Path]:
    """The committed notebooks, in order (a workshop's ``.new`` or ``.backup`` copies are not lessons)."""
    return sorted(p for p in NOTEBOOKS.glob("*.ipynb") if not any(t in p.name for t in (".new", ".backup")))


def merged(rows: list[dict], path: Path = RESULTS) -> list[dict]:
    """The stored rows with these replacing theirs, in the notebooks' order; a notebook no longer there is dropped."""
    stored = json.loads(path.read_text(encoding="utf-8"))["rows"] if path.exists() else []
    by_name = {r["notebook"]: r for r in stored} | {r["notebook"]: r for r in rows}
    return [by_name[p.name] for p in lessons() if p.name in by_name]


def replace_block(text: str, block: str) -> str:
    """``text`` with the lines between its ``notebook_times`` markers replaced by ``block``."""
    lines = text.split("\n")
    begin = next(i for i, line in enumerate(lines) if line.startswith("<!-- BEGIN notebook_times"))
    end = next(i for i, line in enumerate(lines) if line.startswith("<!-- END notebook_times"))
    return "\n".join(lines[:begin + 1] + block.split("\n") + lines[end:])


def write_tables(rows: list[dict]) -> None:
    for path in SHOWN_IN:
        path.write_text(replace_block(path.read_text(encoding="utf-8"), table(rows)), encoding="utf-8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("only", nargs="*", help="notebook name prefixes (00, 06_tuning…); default: all")
    parser.add_argument("--no-model", action="store_true", help="skip the notebooks that need a chat model (03–05)")
    parser.add_argument("--timeout", type=int, default=900, help="seconds one cell may take (default 900)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="the results file rows are merged into")
    parser.add_argument("--tables", action="store_true", help="also write the table into the README and docs/instructor.md")
    parser.add_argument("--tables-only", action="store_true", help="run nothing: the tables from the results file")
    args = parser.parse_args(argv)
    if args.tables_only:
        write_tables(merged([], args.out))
        return 0
    paths = lessons()
    if args.only:
        paths = [p for p in paths if any(p.name.startswith(prefix) for prefix in args.only)]
    if args.no_model:
        paths = [p for p in paths if not p.name.startswith(MODEL_NOTEBOOKS)]
    rows = []
    for path in paths:
        print(f"running {path.name} …", file=sys.stderr, flush=True)
        rows.append(run_one(path, args.timeout))
        print(f"  {rows[-1]['seconds']} s" + (f"  ✗ {rows[-1]['error']}" if rows[-1]["error"] else ""),
              file=sys.stderr, flush=True)
    return record(rows, args.out, tables=args.tables)


def record(rows: list[dict], out: Path = RESULTS, *, tables: bool = False) -> int:
    """Merge ``rows`` into the results file, print the table, and write it where it is shown if asked."""
    where = f"{os.cpu_count()} cores, Python {platform.python_version()}"
    for row in rows:
        row["measured"] = f"{time.strftime('%Y-%m-%d')}, {where}"  # each row its own: a partial run keeps the others'
    every = merged(rows, out)
    out.write_text(json.dumps({"rows": every}, indent=1) + "\n", encoding="utf-8")
    print(f"<!-- measured by benchmarks/notebook_times.py ({where}); each notebook in a fresh kernel, "
          f"kernel start included; rows in {out.name} -->")
    print(table(every))
    if tables:
        write_tables(every)
    return 1 if any(r["error"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())

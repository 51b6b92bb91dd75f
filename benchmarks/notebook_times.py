"""How long each notebook takes, top to bottom, in a clean kernel: the numbers an instructor plans with.

Each notebook is executed by nbclient in a fresh kernel of this environment
(the way ``jupyter nbconvert --execute`` does), one at a time, from its own
folder, outputs kept in memory only (the committed notebooks are never
touched). Prints a Markdown table — notebook, seconds, code cells, and the
slowest cell — ready for ``docs/instructor.md``; a notebook that fails says
where and keeps going.

    .venv/bin/python benchmarks/notebook_times.py                 # all of them
    .venv/bin/python benchmarks/notebook_times.py 00 01 02 06     # the model-free ones
    .venv/bin/python benchmarks/notebook_times.py --no-model      # same: skips 03, 04, 05
    .venv/bin/python benchmarks/notebook_times.py --json out.json

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

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
MODEL_NOTEBOOKS = ("03_", "04_", "05_")


def run_one(path: Path, timeout: int) -> dict:
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError

    notebook = nbformat.read(path, as_version=4)
    code = [i for i, c in enumerate(notebook.cells) if c.cell_type == "code"]
    client = NotebookClient(notebook, timeout=timeout, kernel_name="python3", store_widget_state=False,
                            resources={"metadata": {"path": str(path.parent)}})
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("only", nargs="*", help="notebook name prefixes (00, 06_tuning…); default: all")
    parser.add_argument("--no-model", action="store_true", help="skip the notebooks that need a chat model (03–05)")
    parser.add_argument("--timeout", type=int, default=900, help="seconds one cell may take (default 900)")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    paths = sorted(p for p in NOTEBOOKS.glob("*.ipynb") if not any(t in p.name for t in (".new", ".backup")))
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
    print(f"<!-- measured {time.strftime('%Y-%m-%d')} by benchmarks/notebook_times.py on {os.cpu_count()} cores, "
          f"Python {platform.python_version()}; each notebook in a fresh kernel, kernel start included -->")
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 1 if any(r["error"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())

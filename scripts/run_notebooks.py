"""Execute notebooks top to bottom in a fresh kernel and save them: how committed outputs are made.

The suite compares the cells marked ``# NBVAL_CHECK_OUTPUT`` with what is
committed, so the committed outputs must come from one clean run, in the
suite's conditions: ``PYTHONHASHSEED=0`` set before the kernel starts, the
offline guard on, one thread per heavy component, widget state not stored
(a static view would show a stale slider). Each notebook runs from its own
folder, as JupyterLab runs it.

    .venv/bin/python scripts/run_notebooks.py notebooks/00_full_text_search.ipynb …
    .venv/bin/python scripts/run_notebooks.py --all
    .venv/bin/python scripts/run_notebooks.py --all --times   # and their times (benchmarks/notebook_times.py)

A notebook whose run fails is not written: the error is printed and the
committed file stays as it was.
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def conditions() -> dict:
    """The environment of ``bash run.sh test``, for the kernels this script starts."""
    env = {"PYTHONHASHSEED": "0", "RUNGS_SOCKET_GUARD": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    # Notebook 09 keeps a folder's index between runs (paths.folder_index): here, a fresh place, gone when this
    # process ends, so every committed or replayed run is a first reading and prints the same report.
    env["RUNGS_INDEXES"] = tempfile.mkdtemp(prefix="rungs-indexes-")
    atexit.register(shutil.rmtree, env["RUNGS_INDEXES"], True)
    paths = [str(REPO / "tests" / "offline"), str(REPO), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env


def run(path: Path, timeout: int) -> bool:
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, timeout=timeout, kernel_name="python3", store_widget_state=False,
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    try:
        client.execute()
    except CellExecutionError as err:
        print(f"{path.name}: FAILED, not written\n{str(err)[-2000:]}", file=sys.stderr)
        return False
    nbformat.write(notebook, path)
    print(f"{path.name}: ran in {time.perf_counter() - start:.1f} s, written", flush=True)
    return True


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("notebooks", nargs="*", type=Path)
    p.add_argument("--all", action="store_true", help="every notebook of notebooks/")
    p.add_argument("--timeout", type=int, default=900, help="seconds a cell may take (default 900)")
    p.add_argument("--times", action="store_true", help="time each cell as benchmarks/notebook_times.py does, "
                   "and write its results file and tables from this same run")
    args = p.parse_args(argv)
    chosen = lessons() if args.all else args.notebooks
    if not chosen:
        p.error("name notebooks, or --all")
    os.environ.update(conditions())  # before any kernel starts: a kernel inherits this environment
    if args.times:  # one run gives both the committed outputs and the times an instructor plans with
        sys.path.insert(0, str(REPO / "benchmarks"))
        import notebook_times

        rows = []
        for path in chosen:
            rows.append(notebook_times.run_one(path.resolve(), args.timeout, write=True))
            print(f"{path.name}: {rows[-1]['seconds']} s" + (f", FAILED at {rows[-1]['error']}, not written"
                                                             if rows[-1]["error"] else ", written"), flush=True)
        return notebook_times.record(rows, tables=True)
    ok = [run(path.resolve(), args.timeout) for path in chosen]
    return 0 if all(ok) else 1


def lessons() -> list[Path]:
    """Every lesson of notebooks/, the primer (01a) included; a workshop's ``.new`` or ``.backup`` copies are not."""
    return sorted(p for p in (REPO / "notebooks").glob("[0-9][0-9]*_*.ipynb")
                  if not any(t in p.name for t in (".new", ".backup")))


if __name__ == "__main__":
    sys.exit(main())

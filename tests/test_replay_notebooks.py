"""A room without a model: every notebook that has a recorded run replays it, output for output.

For each ``notebooks/replays/<notebook>.jsonl`` (written by a run with
``RUNGS_REPLAY=record``), the notebook is executed top to bottom in a fresh
kernel with ``RUNGS_REPLAY=replay`` — no model, no server — and every code
cell's outputs are compared with the committed ones: the text a reader sees
(streams, ``text/plain``) and the pictures (``image/png``). Only the clock is
masked: a replayed call takes no time, so « 7.1 s » and « about 6 minutes »
are not compared, and nothing else is. A call the recording does not hold
stops the run with ``NotRecorded`` (a prompt changed since the recording:
record again).

Cost: one kernel per notebook with a replay file (its encoders load; its
model calls are read from the file), tens of seconds each.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
REPLAYS = REPO / "notebooks" / "replays"
RECORDED = sorted(REPO / "notebooks" / f"{p.stem}.ipynb" for p in REPLAYS.glob("*.jsonl")
                  if (REPO / "notebooks" / f"{p.stem}.ipynb").exists())
#: A duration as a cell prints it: « 7.1 s », « in 0.0 s », « 54 s », « about 6 minutes », « 0:12 left ».
CLOCK = re.compile(r"\d+(?:[.,]\d+)?(?= ?(?:s|ms|seconds?|minutes?)\b)|\d+:\d\d(?= left)")


def shown(cell: dict) -> list[tuple]:
    """What a reader sees under a code cell, the clock masked: streams joined by name, text, pictures."""
    out: list[tuple] = []
    for o in cell.get("outputs", []):
        kind = o.get("output_type")
        if kind == "stream":
            text = CLOCK.sub("…", "".join(o["text"]))
            if out and out[-1][0] == "stream" and out[-1][1] == o["name"]:  # one print's pieces, one output
                out[-1] = ("stream", o["name"], out[-1][2] + text)
            else:
                out.append(("stream", o["name"], text))
        elif kind in ("display_data", "execute_result"):
            data = o.get("data", {})
            if "text/plain" in data:
                out.append(("text", CLOCK.sub("…", "".join(data["text/plain"]))))
            if "image/png" in data:
                out.append(("png", "".join(data["image/png"]).strip()))
        elif kind == "error":
            out.append(("error", o.get("ename"), o.get("evalue")))
    return out


def differences(committed: dict, replayed: dict) -> list[str]:
    """Each code cell whose outputs differ between two runs of one notebook, named by its index and first line."""
    found = []
    for i, (a, b) in enumerate(zip(committed["cells"], replayed["cells"])):
        if a["cell_type"] != "code":
            continue
        if shown(a) != shown(b):
            first = "".join(a["source"]).splitlines()[0][:60] if a["source"] else ""
            found.append(f"cell {i} ({first!r}): committed {str(shown(a))[:300]} · replayed {str(shown(b))[:300]}")
    if len(committed["cells"]) != len(replayed["cells"]):
        found.append(f"{len(committed['cells'])} cells committed, {len(replayed['cells'])} replayed")
    return found


def replayed(path: Path) -> dict:
    """The notebook executed top to bottom with RUNGS_REPLAY=replay, in the suite's conditions."""
    import nbformat
    from nbclient import NotebookClient

    sys.path.insert(0, str(REPO / "scripts"))
    import run_notebooks

    notebook = nbformat.read(path, as_version=4)
    saved = dict(os.environ)
    os.environ.update({**run_notebooks.conditions(), "RUNGS_REPLAY": "replay"})
    os.environ.pop("RUNGS_REPLAY_FILE", None)  # the notebook's own file, as its first cell names it
    try:
        NotebookClient(notebook, timeout=300, kernel_name="python3", store_widget_state=False, coalesce_streams=True,
                       resources={"metadata": {"path": str(path.parent)}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return notebook


@pytest.mark.encoder
@pytest.mark.parametrize("path", RECORDED, ids=[p.stem for p in RECORDED])
def test_a_recorded_notebook_replays_its_committed_outputs(path):
    import nbformat

    found = differences(nbformat.read(path, as_version=4), replayed(path))
    assert not found, f"{path.name} replayed differs from its committed run (re-run it with RUNGS_REPLAY=record):\n" \
                      + "\n".join(found)


def test_only_the_clock_is_masked():
    # A negative control: a changed probability is a difference; a changed duration is not.
    def notebook(*texts):
        return {"cells": [{"cell_type": "code", "source": ["print(x)"],
                           "outputs": [{"output_type": "stream", "name": "stdout", "text": [t]} for t in texts]}]}

    committed = notebook("P(oui) 0.60 → supported\n", "cost: 1 call · 328 prompt tokens · 1 written · 7.1 s\n")
    assert differences(committed, notebook("P(oui) 0.60 → supported\n",
                                           "cost: 1 call · 328 prompt tokens · 1 written · 0.0 s\n")) == []
    assert differences(committed, notebook("P(oui) 0.60 → supported\ncost: 1 call · 328 prompt tokens · 1 written "
                                           "· 0.0 s\n")) == []  # one print's pieces, or one piece: the same text
    assert differences(committed, notebook("P(oui) 0.58 → supported\n",
                                           "cost: 1 call · 328 prompt tokens · 1 written · 7.1 s\n"))
    assert differences(committed, notebook("P(oui) 0.60 → supported\n",
                                           "cost: 1 call · 329 prompt tokens · 1 written · 7.1 s\n"))
    assert CLOCK.sub("…", "12 calls in 54 s (4.5 s a call here): about 6 minutes; 3/5 (60 %) · 0:12 left") == \
        "12 calls in … s (… s a call here): about … minutes; 3/5 (60 %) · … left"

"""Committed outputs are read by people who never run the notebook: on GitHub, in the book, in a room.

A committed notebook fails here when one of its outputs shows something a
reader should not see or cannot trust:

- a machine path (``/home/…``, ``/root/…``, ``/tmp/…``, ``/work/…``, ``C:\\…``,
  ``site-packages``): someone's machine, not the lesson;
- a key-like string (``sk-…``, a long hex or base64 secret, an ``api_key``
  with a value): never print a secret, even a fake one;
- a traceback (an ``error`` output, or ``Traceback`` in text): a failure the
  reader should see is caught and shown as a sentence;
- stderr (any stream named ``stderr``): warnings and progress noise;
- a streamed text split into more than ``MAX_STREAMS`` outputs in one cell: a
  paragraph of one token per line in a static view (write it through
  ``rungs.core.display.LiveText``: one output, updated);
- widget state that a static view shows stale: a widget view with no
  ``text/plain`` that says what it is, slider values saved in the notebook's
  metadata, a progress bar frozen below 100 %;
- execution counts missing on a cell with outputs, out of order, or with gaps
  (the outputs are not those of one clean top-to-bottom run).

One test per notebook; each failure names the cell (its 0-based index, as
``nb["cells"][i]``) and what was found.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
MAX_STREAMS = 5
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
TEXT_MIMES = ("text/plain", "text/html", "text/markdown", "text/latex", "application/json")

PATH = re.compile(r"/home/|/root/|/tmp/|/work/|/Users/|/var/folders/|\b[A-Za-z]:\\|site-packages|dist-packages")
SECRETS = [
    ("an OpenAI-style key", re.compile(r"\bsk-[A-Za-z0-9_-]{16,}")),
    ("a bearer token", re.compile(r"\bBearer\s+[A-Za-z0-9._~+/-]{16,}")),
    # A digest labelled as one (sha256 …) is a checksum, not a secret.
    ("a long hex string", re.compile(r"(?<!sha256 )(?<!sha256: )(?<!sha256=)\b[0-9a-fA-F]{32,}\b")),
    ("a long base64 string", re.compile(r"(?<![A-Za-z0-9+/])(?=[A-Za-z0-9+/]*\d)(?=[A-Za-z0-9+/]*[a-z])"
                                        r"(?=[A-Za-z0-9+/]*[A-Z])[A-Za-z0-9+/]{40,}={0,2}")),
]
API_KEY = re.compile(r"(?i)api[_-]?key[\"']?\s*[=:]\s*[\"']?([^\s\"',)}]*)")
# What a careful repr prints instead of a key.
NOT_A_KEY = re.compile(r"(?i)^(none|null|unset|not set|hidden|redacted|\*+|•+|…|<[^>]*>|)$")
PROGRESS = re.compile(r"(\d{1,3})%\|")
BARE_WIDGET = re.compile(r"^\s*[A-Za-z]*\(\)\s*$")  # "Output()", "VBox()": names a class, says nothing


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _texts(output: dict) -> list[str]:
    """What a reader sees of one output, as text (images and widget models left out)."""
    kind = output.get("output_type")
    if kind == "stream":
        return [_text(output.get("text", ""))]
    if kind == "error":
        return [f"{output.get('ename', '')}: {output.get('evalue', '')}", "\n".join(output.get("traceback", []))]
    data = output.get("data", {})
    return [_text(data[m]) if m != "application/json" else json.dumps(data[m]) for m in TEXT_MIMES if m in data]


def _clip(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= width else text[: width - 1] + "…")


def _around(text: str, match: re.Match, width: int = 50) -> str:
    return _clip(text[max(0, match.start() - 15): match.end() + 15], width)


def problems(notebook: dict) -> list[str]:
    """Every hygiene problem of one notebook, as 'cell N: what was found'."""
    found = []
    state = notebook.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    if state:
        kinds = sorted({m.get("model_name", "?") for m in state.values()})
        found.append(f"notebook metadata: saved widget state ({len(state)} models: {', '.join(kinds[:4])}"
                     f"{'…' if len(kinds) > 4 else ''}); a static view shows these values as if they were live "
                     "(execute with store_widget_state=False, e.g. jupyter nbconvert --execute "
                     "--ExecutePreprocessor.store_widget_state=False; in JupyterLab untick "
                     "Settings → Save Widget State Automatically)")
    last_count = None
    for index, cell in enumerate(notebook.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        where = f"cell {index}"
        outputs = cell.get("outputs", [])
        count = cell.get("execution_count")
        if outputs and count is None:
            found.append(f"{where}: has outputs but no execution count")
        if count is not None:
            if last_count is not None and count <= last_count:
                found.append(f"{where}: execution count {count} comes after {last_count} (out of order)")
            elif last_count is not None and count != last_count + 1:
                found.append(f"{where}: execution count jumps from {last_count} to {count} "
                             "(cells were re-run; commit the outputs of one clean top-to-bottom run)")
            elif last_count is None and count != 1:
                found.append(f"{where}: the first execution count is {count}, not 1 (not a clean run)")
            last_count = count
        streams = [o for o in outputs if o.get("output_type") == "stream"]
        if len(streams) > MAX_STREAMS:
            sample = "".join(_text(o.get("text", "")) for o in streams[:6])
            found.append(f"{where}: streamed text split into {len(streams)} outputs (more than {MAX_STREAMS}), "
                         f"starting {_clip(sample)}: a static view shows fragments; use rungs.core.display.LiveText")
        for number, output in enumerate(outputs):
            at = f"{where}, output {number}"
            if output.get("output_type") == "error":
                found.append(f"{at}: an error output ({output.get('ename')}: {_clip(str(output.get('evalue')))})")
            if output.get("output_type") == "stream" and output.get("name") == "stderr":
                found.append(f"{at}: stderr {_clip(_text(output.get('text', '')))}")
            data = output.get("data", {})
            if WIDGET_VIEW in data and BARE_WIDGET.match(_text(data.get("text/plain", ""))):
                found.append(f"{at}: a widget view with no text/plain saying what it is "
                             "(a static view shows nothing, or a stale value)")
            for text in _texts(output):
                if "Traceback" in text and output.get("output_type") != "error":
                    found.append(f"{at}: a traceback in the text ({_around(text, re.search('Traceback', text))})")
                path = PATH.search(text)
                if path:
                    found.append(f"{at}: a machine path {_around(text, path)}")
                for what, pattern in SECRETS:
                    secret = pattern.search(text)
                    if secret:
                        found.append(f"{at}: {what} {_around(text, secret)}")
                for key in API_KEY.finditer(text):
                    if not NOT_A_KEY.match(key.group(1)):
                        found.append(f"{at}: an api_key with a value {_around(text, key)}")
                bars = PROGRESS.findall(text)
                if bars and int(bars[-1]) < 100:
                    found.append(f"{at}: a progress bar frozen at {bars[-1]}% in a static view "
                                 "(use rungs.core.display.progress, or a bar that ends at 100%)")
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_outputs_are_clean(path):
    found = problems(json.loads(path.read_text(encoding="utf-8")))
    if found:
        pytest.fail(f"{path.name}: {len(found)} problem(s)\n  " + "\n  ".join(found), pytrace=False)


# ---------------------------------------------------------------- each rule catches what it is for

def _nb(*outputs_per_cell, counts=None, metadata=None):
    cells = []
    for n, outputs in enumerate(outputs_per_cell, start=1):
        cells.append({"cell_type": "code", "source": "", "metadata": {}, "outputs": list(outputs),
                      "execution_count": (counts[n - 1] if counts else n)})
    return {"cells": [{"cell_type": "markdown", "source": "# t", "metadata": {}}, *cells],
            "metadata": metadata or {}, "nbformat": 4, "nbformat_minor": 5}


def _out(text, name="stdout"):
    return {"output_type": "stream", "name": name, "text": text}


def _result(**data):
    return {"output_type": "execute_result", "execution_count": 1, "metadata": {},
            "data": {k.replace("_", "/", 1): v for k, v in data.items()}}


def test_a_clean_notebook_passes():
    ok = _nb([_out("# id score\n 1 conges-payes 3.210\n")],
             [_result(text_plain="Client(model='qwen', endpoint='local server on 127.0.0.1', api_key=none)")],
             [_out("model file: sha256 cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046\n")],
             [_out("sweep: 100%|██████████| 200/200\n")])
    assert problems(ok) == []


@pytest.mark.parametrize("output, expected", [
    (_out("cache in /home/ana/.cache/rungs\n"), "cell 1, output 0: a machine path"),
    (_out(r"C:\Users\ana\rungs" + "\n"), "a machine path"),
    (_out("/opt/venv/lib/python3.11/site-packages/x.py:3: Warning\n"), "a machine path"),
    (_out("key sk-abcdefghijklmnopqrstuvwxyz123456\n"), "an OpenAI-style key"),
    (_out("token 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n"), "a long hex string"),
    (_out("secret QWxhZGRpbjpvcGVuIHNlc2FtZQ9xYWxhZGRpbjpvcGVuIHNlc2Ft\n"), "a long base64 string"),
    (_result(text_plain="{'api_key': 'abc123xyz'}"), "an api_key with a value"),
    ({"output_type": "error", "ename": "KeyError", "evalue": "'x'", "traceback": []}, "an error output"),
    (_out("Traceback (most recent call last):\n  File x\n"), "a traceback in the text"),
    (_out("UserWarning: careful\n", name="stderr"), "stderr"),
    (_result(text_plain="sweep:   0%|          | 0/200 [00:00<?, ?it/s]"), "a progress bar frozen at 0%"),
    (_result(**{"text_plain": "Output()", "application/vnd.jupyter.widget-view+json": {"model_id": "ab"}}),
     "a widget view with no text/plain"),
])
def test_each_rule_names_the_cell_and_what_it_found(output, expected):
    found = problems(_nb([output]))
    assert any(expected in line and line.startswith("cell 1") for line in found), found


def test_token_by_token_streams_are_caught():
    found = problems(_nb([_out(t) for t in ["Je", " pars", " en", " vac", "ances", " le", " 3"]]))
    assert found and "split into 7 outputs" in found[0]
    assert problems(_nb([_out(t) for t in ["a\n", "b\n", "c\n"]])) == []


def test_widget_state_in_metadata_is_caught():
    state = {WIDGET_STATE: {"state": {"1": {"model_name": "FloatSliderModel", "state": {"value": 1.2}}}}}
    assert "saved widget state (1 models: FloatSliderModel)" in problems(_nb([], metadata={"widgets": state}))[0]


@pytest.mark.parametrize("counts, expected", [
    ([1, 3], "jumps from 1 to 3"), ([2, 1], "out of order"), ([None, 2], "no execution count"),
    ([4, 5], "not 1"),
])
def test_execution_counts(counts, expected):
    found = problems(_nb([_out("a\n")], [_out("b\n")], counts=counts))
    assert any(expected in line for line in found), found


# ---------------------------------------------------------------- the fix side, executed in a real kernel

def test_live_text_and_progress_save_one_clean_output_each():
    """What a notebook saves when it streams through rungs.core.display: one output per cell, final text, no bar at 0%."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("from rungs.core.display import LiveText, progress\n"
                                  "with LiveText(every=0) as live:\n"
                                  "    for token in ['Je', ' pars', ' en', ' vacances', ' le', ' 3', ' mai.']:\n"
                                  "        live.write(token)"),
        nbformat.v4.new_code_cell("for _ in progress(range(50), desc='sweep', every=0):\n    pass"),
        nbformat.v4.new_code_cell("from rungs.research import printing_sink\n"
                                  "printing_sink({'type': 'status', 'stage': 'searching', 'detail': 'round 1'})\n"
                                  "for token in ['[1]', ' Je', ' pars', ' en', ' vacances', '.']:\n"
                                  "    printing_sink({'type': 'delta', 'text': token})\n"
                                  "printing_sink({'type': 'done', 'seconds': 1.0})"),
    ]
    NotebookClient(nb, timeout=60, kernel_name="python3", store_widget_state=False).execute()
    saved = json.loads(nbformat.writes(nb))
    assert problems(saved) == []
    first, second, third = (cell["outputs"] for cell in saved["cells"])
    assert len(first) == 1 and _text(first[0]["data"]["text/plain"]) == "Je pars en vacances le 3 mai."
    assert len(second) == 1 and _text(second[0]["data"]["text/plain"]).startswith("sweep: 50/50 (100 %) in ")
    assert len(third) == 1 and _text(third[0]["data"]["text/plain"]) == \
        "· searching: round 1\n[1] Je pars en vacances.\n· done in 1.0 s\n"

"""The walk of one question through ``python -m rungs ask``: the rooms it passes through, the checks of its text.

Run:  .venv/bin/python benchmarks/walk_ask.py --label after
      PYTHONPATH=/tmp/rungs-before .venv/bin/python benchmarks/walk_ask.py --label before   # an older rungs

(``git archive COMMIT rungs | tar -x -C /tmp/rungs-before`` gives an older rungs.)

What it measures: the bundled folder (``notebooks/data/my-documents``) is indexed in a temporary folder
(no vectors), then ``ask`` runs in this process on the default reader — the copy and its decision, the
gate's one call answered by a scripted client (``rungs.model.ScriptedClient``: no model), ``--rung bm25``
(the hybrid would add the encoder, not a room the question text enters). Python's profiler hook sees every
call of a ``rungs`` function; a call is the question's when one of its arguments *is* the question text
(the very string, or a string equal to it). **Rooms**: the modules of ``rungs`` whose functions the question
text is handed to. **Checks**: the calls, among those, of a function that validates a text
(``check_query``, ``check_text``, ``check_question`` — any ``check_…`` or ``_check…`` of rungs handed the
question) that read it; a check handed the question as the door's ``Checked`` text returns at once, without
reading it, and is counted apart (``passed_on``). Each room and each check is listed by name, with how many
times it ran.

Cost: about a second (no model, no encoder). Results are merged into ``benchmarks/results/walk.json``
under ``--label``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "walk.json"
QUESTION = "Que faire d'un badge perdu ?"


def _gate_reply(yes: float) -> dict:
    """The gate's one-token reply, its log-probabilities as the server returns them."""
    top = {"Oui": math.log(yes), "Non": math.log(1 - yes)}
    return {"text": "Oui", "logprobs": [{"token": "Oui", "logprob": top["Oui"], "top": top}]}


def walk(question: str = QUESTION) -> dict:
    """One ``ask`` of ``question``, watched: the rooms its text enters and the checks of it, by name."""
    import rungs
    from rungs.tools import cli

    package = str(Path(rungs.__file__).resolve().parent)
    rooms, checks, passed = Counter(), Counter(), Counter()

    def held(frame):
        code = frame.f_code
        names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        return next((frame.f_locals[n] for n in names
                     if isinstance(frame.f_locals.get(n), str) and frame.f_locals[n] == question), None)

    def watch(frame, event, arg):
        if event != "call" or not frame.f_code.co_filename.startswith(package):
            return
        text = held(frame)
        if text is None:
            return
        module = Path(frame.f_code.co_filename).resolve().relative_to(package).with_suffix("").as_posix()
        rooms[module] += 1
        name = frame.f_code.co_name
        if name.startswith(("check_", "_check")):  # a text checked at the door is passed on unread
            (passed if type(text).__name__ == "Checked" else checks)[f"{module}.{name}"] += 1

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "docs"
        shutil.copytree(HERE.parent / "notebooks" / "data" / "my-documents", folder)
        argv = ["--index", str(folder), "--rung", "bm25", "--scripted-replies", json.dumps([_gate_reply(0.9)])]
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert cli.main(["index", str(folder), "--no-vectors"]) == 0
            sys.setprofile(watch)
            try:
                code = cli.main(["ask", question, *argv])
            finally:
                sys.setprofile(None)
        if code != 0:
            raise SystemExit(f"ask did not answer (exit {code})")
    return {"question": question, "command": "python -m rungs ask QUESTION --rung bm25 (the copy and its decision, "
            "the gate's call scripted)", "rooms": len(rooms), "checks": sum(checks.values()),
            "passed_on": sum(passed.values()), "room_calls": dict(sorted(rooms.items())),
            "check_calls": dict(sorted(checks.items())), "passed_on_calls": dict(sorted(passed.items()))}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--label", required=True, help="before or after (the code measured is the one imported)")
    args = p.parse_args(argv)
    done = walk()
    stored = json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.exists() else {}
    stored[args.label] = done
    RESULTS.write_text(json.dumps(stored, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{args.label}: {done['rooms']} rooms, {done['checks']} checks of the question "
          f"({done['passed_on']} passed on unread: checked at the door)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

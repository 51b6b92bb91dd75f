"""Lessons sized for a room: a stated core, exercises beside their idea, sections an instructor can skip.

Each notebook opens with its time: « Core, sections …: about N minutes » and
« Going further, …: about M minutes », and a « ## Going further » heading
separates the two. These tests hold the promises a workshop relies on:

- the stated core time is honest: within reach of an estimate made from the
  core's own prose (words at 170 a minute) and its checked exercises;
- exercises sit beside the idea they check: several ✎ exercises in the core,
  in more than one section, none greeting a learner with an error;
- an instructor can skip any section of « Going further »: no section uses a
  name that only an earlier « Going further » section defines (read from the
  code, as a reader would, without running it).
"""

import ast
import builtins
import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LESSONS = sorted((REPO / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
SIZED = LESSONS  # every lesson: a stated core, exercises beside their idea, sections that can be skipped

WORDS_A_MINUTE = 170
MINUTES_AN_EXERCISE = 1.5
CORE = re.compile(r"\*\*Core[^*]*: about (\d+) minutes\*\*")
FURTHER = re.compile(r"\*\*Going further[^*]*: about (\d+) minutes\*\*")


def cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def text(cell) -> str:
    return "".join(cell["source"])


def split(path):
    """(core cells, going-further sections as lists of cells) — the sections cut at their ``## `` headings."""
    all_cells = cells(path)
    at = next(i for i, c in enumerate(all_cells) if c["cell_type"] == "markdown" and "## Going further" in text(c))
    sections, current = [], []
    for c in all_cells[at + 1:]:
        if c["cell_type"] == "markdown" and re.match(r"## \d+ · ", text(c)):
            sections.append(current)
            current = []
        current.append(c)
    sections.append(current)
    return all_cells[:at], [s for s in sections if s]


def exercises(cells_) -> list[str]:
    return [text(c) for c in cells_ if c["cell_type"] == "code" and re.search(r"ex\[\"\w+\"\]\.check\(answer\)", text(c))]


@pytest.mark.parametrize("path", SIZED, ids=[p.stem for p in SIZED])
def test_the_core_time_is_stated_and_honest(path):
    head = text(cells(path)[0])
    core, further = CORE.search(head), FURTHER.search(head)
    assert core and further, f"{path.name}: the first cell must state the core's and going further's times"
    core_cells, _ = split(path)
    words = sum(len(re.findall(r"\w+", text(c))) for c in core_cells[1:] if c["cell_type"] == "markdown")
    running = sum(run_seconds(c) for c in core_cells) / 60  # what the committed run took: a model's cells count
    estimate = words / WORDS_A_MINUTE + MINUTES_AN_EXERCISE * len(exercises(core_cells)) + running
    stated = int(core.group(1))
    # Never below the estimate (a fresh reader found every core longer than stated when it was 0.7 of it).
    assert estimate - 1 <= stated <= 2 * estimate + 5, f"{path.name}: core stated {stated} min, estimated {estimate:.1f}"


def run_seconds(cell) -> float:
    """How long the committed run spent on a code cell, from the times Jupyter records in its metadata."""
    from datetime import datetime

    times = cell.get("metadata", {}).get("execution", {})
    if "iopub.execute_input" not in times or "shell.execute_reply" not in times:
        return 0.0
    start, end = (datetime.fromisoformat(times[k].replace("Z", "+00:00"))
                  for k in ("iopub.execute_input", "shell.execute_reply"))
    return max(0.0, (end - start).total_seconds())


@pytest.mark.parametrize("path", SIZED, ids=[p.stem for p in SIZED])
def test_exercises_sit_beside_their_idea_and_ask_before_they_judge(path):
    core_cells, _ = split(path)
    found, sections, section = exercises(core_cells), set(), None
    for c in core_cells:
        if c["cell_type"] == "markdown" and re.match(r"## \d+ · ", text(c)):
            section = text(c).splitlines()[0]
        if c in [x for x in core_cells if x["cell_type"] == "code" and text(x) in found]:
            sections.add(section)
    assert len(found) >= 3 and len(sections) >= 2, f"{path.name}: {len(found)} core exercises in {len(sections)} sections"
    for c in cells(path):
        if c["cell_type"] == "code" and text(c) in exercises(cells(path)):
            shown = "".join("".join(o.get("data", {}).get("text/plain", "")) + "".join(o.get("text", ""))
                            for o in c.get("outputs", []))
            assert shown.startswith("… your answer here") and "Error" not in shown, (path.name, shown[:80])


def _defined_and_used(cells_) -> tuple[set, set]:
    defined, used = set(), set()
    for c in cells_:
        if c["cell_type"] != "code":
            continue
        tree = ast.parse("\n".join(line for line in text(c).splitlines() if not line.startswith(("%", "!"))))
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                (defined if isinstance(node.ctx, (ast.Store, ast.Del)) else used).add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                defined.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                defined |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif isinstance(node, ast.arg):
                defined.add(node.arg)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                defined.add(node.name)  # « except RungsError as err » defines err
    return defined, used


@pytest.mark.parametrize("path", SIZED, ids=[p.stem for p in SIZED])
def test_every_going_further_section_stands_on_the_core_alone(path):
    core_cells, sections = split(path)
    core_defined, _ = _defined_and_used(core_cells)
    known = core_defined | set(dir(builtins)) | {"display", "get_ipython"}
    for section in sections:
        defined, used = _defined_and_used(section)
        missing = sorted(used - defined - known)
        title = text(section[0]).splitlines()[0]
        assert not missing, f"{path.name}, « {title} » uses what only another optional section defines: {missing}"


def test_the_skip_check_sees_a_section_that_leans_on_another(tmp_path):
    # A negative control: the second optional section uses a name only the first defines.
    nb = {"cells": [{"cell_type": "markdown", "source": ["# T\n"]}, {"cell_type": "code", "source": ["a = 1\n"]},
                    {"cell_type": "markdown", "source": ["## Going further\n"]},
                    {"cell_type": "markdown", "source": ["## 2 · One\n"]}, {"cell_type": "code", "source": ["b = a + 1\n"]},
                    {"cell_type": "markdown", "source": ["## 3 · Two\n"]}, {"cell_type": "code", "source": ["print(b)\n"]}]}
    path = tmp_path / "09_test.ipynb"
    path.write_text(json.dumps(nb))
    core, sections = split(path)
    assert len(sections) == 2
    known = _defined_and_used(core)[0] | set(dir(builtins))
    defined, used = _defined_and_used(sections[1])
    assert sorted(used - defined - known) == ["b"]


def test_the_skip_check_reads_an_except_clause_as_a_definition():
    # « except RungsError as err: print(err) » defines err in its own section: not a name borrowed from another.
    cells_ = [{"cell_type": "code", "source": ["try:\n    f()\nexcept ValueError as err:\n    print(err)\n"]}]
    defined, used = _defined_and_used(cells_)
    assert "err" in used and "err" in defined

"""Lessons sized for a room: a stated core, exercises beside their idea, sections an instructor can skip.

Each notebook opens with its time: « Core, sections …: about N minutes » and
« Going further, …: about M minutes », and a « ## Going further » heading
separates the two. These tests hold the promises a workshop relies on:

- the stated core time is honest: the core fits in it, as a learner spends it
  (below), and it is not padded (at most ``PADDING`` minutes above that);
- exercises sit beside the idea they check: several ✎ exercises in the core,
  in more than one section, none greeting a learner with an error;
- an instructor can skip any section of « Going further »: no section uses a
  name that only an earlier « Going further » section defines (read from the
  code, as a reader would, without running it).

**A core as a learner spends it.** Everything after the first cell (the
plan's opening covers it) and before « ## Going further »: the prose read
(words of the markdown), the code read (non-blank lines of each code cell),
the outputs read (non-blank lines of text; a figure counts as
``FIGURE_LINES`` lines), each ✎ exercise answered (its cell's code and output
not counted again), plus what the committed run's cells took (the times
Jupyter writes in each cell's metadata: a model's answer is waited for).

**The rates are fitted, not guessed.** A fresh reader (a learner who had not
read these notebooks) timed every core as committed at ``be15571`` (issue
31): 00 22, 01 24, 01a 28, 02 31, 03 33, 04 33, 05 30, 06 26, 07 24, 08 21
minutes. Those ten times, less each core's run, fitted by non-negative least
squares on the four counts of the same cores, give 169 words, 29.0 lines of
code and 42.5 lines of output a minute and 2.32 minutes an exercise; rounded,
the rates below: 170 words, 29 code lines, 42 output lines a minute, 2.3
minutes an exercise. Their error on the ten cores: 0.25 minutes
root-mean-square, 0.35 at most; fitted without one core and tested on it, one
core at a time, 0.37 and 0.67. ``test_the_rates_are_the_fit_of_the_readers_minutes``
fits them again from the notebooks at that commit;
``python tests/test_lessons.py`` prints each core's estimate beside its stated time.
"""

import ast
import builtins
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LESSONS = sorted((REPO / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
SIZED = LESSONS  # every lesson: a stated core, exercises beside their idea, sections that can be skipped

#: How a learner spends a core (the module's docstring says where these come from).
WORDS_A_MINUTE = 170
CODE_LINES_A_MINUTE = 29
OUTPUT_LINES_A_MINUTE = 42
FIGURE_LINES = 10
MINUTES_AN_EXERCISE = 2.3
#: A stated time may exceed the estimate by this much (rounding to five minutes, a pause), no more.
PADDING = 5
#: The fresh reader's minutes for each core, and the commit of the notebooks they read (issue 31).
#: A second fresh reader, after the change (issue 31's check), timed the cores of 03–05 on 2026-12-03: the
#: notebooks as committed in the commit that adds this line, before its fixes to their prose, their opening
#: cell and the committed model waits included. The estimate came to 22.3, 18.8 and 18.8 minutes: the rates do
#: not predict this reader, so a stated time may not be more than ``PADDING`` below what a reader measured.
SECOND_READER_MINUTES = {"03": 34, "04": 32, "05": 31}
READER_MINUTES = {"00": 22, "01": 24, "01a": 28, "02": 31, "03": 33, "04": 33, "05": 30, "06": 26, "07": 24, "08": 21}
CALIBRATED_AT = "be15571"

CORE = re.compile(r"\*\*Core[^*]*: about (\d+) minutes\*\*")
FURTHER = re.compile(r"\*\*Going further[^*]*: about (\d+) minutes\*\*")
EXERCISE = re.compile(r"ex\[\"\w+\"\]\.check\(answer\)")


def cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def text(cell) -> str:
    return "".join(cell["source"])


def split(path, all_cells=None):
    """(core cells, going-further sections as lists of cells) — the sections cut at their ``## `` headings."""
    all_cells = cells(path) if all_cells is None else all_cells
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
    return [text(c) for c in cells_ if c["cell_type"] == "code" and EXERCISE.search(text(c))]


def _lines(value) -> int:
    value = "".join(value) if isinstance(value, list) else str(value)
    return sum(1 for line in value.splitlines() if line.strip())


def output_lines(cell) -> int:
    """The lines of output a reader reads under a code cell; a figure counts as FIGURE_LINES."""
    total = 0
    for out in cell.get("outputs", []):
        data = out.get("data", {})
        if any(kind.startswith("image/") for kind in data):
            total += FIGURE_LINES  # its text/plain (« <Figure size …> ») is not read
        elif "text" in out:
            total += _lines(out["text"])
        elif "text/plain" in data:
            total += _lines(data["text/plain"])
    return total


def spent(core_cells) -> dict:
    """What a learner reads and does in a core (its first cell left out): the counts the rates apply to."""
    counts = {"words": 0, "code": 0, "outputs": 0, "exercises": 0, "seconds": 0.0}
    for c in core_cells[1:]:
        if c["cell_type"] == "markdown":
            counts["words"] += len(re.findall(r"\w+", text(c)))
            continue
        if c["cell_type"] != "code":
            continue
        counts["seconds"] += run_seconds(c)  # what the committed run took: a model's cells count
        if EXERCISE.search(text(c)):
            counts["exercises"] += 1
            continue
        counts["code"] += sum(1 for line in text(c).splitlines() if line.strip())
        counts["outputs"] += output_lines(c)
    return counts


def minutes(counts: dict) -> float:
    """A core's counts as a learner's minutes, at the calibrated rates."""
    return (counts["words"] / WORDS_A_MINUTE + counts["code"] / CODE_LINES_A_MINUTE
            + counts["outputs"] / OUTPUT_LINES_A_MINUTE + MINUTES_AN_EXERCISE * counts["exercises"]
            + counts["seconds"] / 60)


def core_problem(path, all_cells=None) -> str | None:
    """Why a notebook's stated core time is not honest, or None."""
    all_cells = cells(path) if all_cells is None else all_cells
    head = text(all_cells[0])
    core, further = CORE.search(head), FURTHER.search(head)
    if not (core and further):
        return f"{path.name}: the first cell must state the core's and going further's times"
    estimate, stated = minutes(spent(split(path, all_cells)[0])), int(core.group(1))
    timed = SECOND_READER_MINUTES.get(path.name.split("_")[0])
    if estimate > stated:
        return (f"{path.name}: the core takes a learner about {estimate:.1f} minutes, more than the {stated} stated: "
                "cut it (move a section to « going further ») rather than restate the time")
    if timed and stated < timed - PADDING:  # a measurement beats a model of one
        return (f"{path.name}: a fresh reader took {timed} minutes over the core, far more than the {stated} stated: "
                "cut it, or state what was measured")
    if stated > max(estimate, timed or 0) + PADDING:
        return f"{path.name}: the core takes a learner about {estimate:.1f} minutes, far less than the {stated} stated"
    return None


@pytest.mark.parametrize("path", SIZED, ids=[p.stem for p in SIZED])
def test_the_core_time_is_stated_and_honest(path):
    problem = core_problem(path)
    assert problem is None, problem


def _core(words: int, stated: int = 20) -> list[dict]:
    """A lesson of one core section of ``words`` words and two exercises, its core stated at ``stated`` minutes."""
    return [{"cell_type": "markdown", "source": [f"**Core, sections 1–2: about {stated} minutes** "
                                                 "**Going further, section 3: about 5 minutes**"]},
            {"cell_type": "markdown", "source": ["## 1 · One\n\n" + "mot " * words]},
            {"cell_type": "code", "source": ['ex["a"].check(answer)'], "outputs": []},
            {"cell_type": "code", "source": ['ex["b"].check(answer)'], "outputs": []},
            {"cell_type": "markdown", "source": ["## Going further\n"]}]


def test_a_core_longer_than_its_stated_time_is_caught(tmp_path):
    # A negative control: a core of 3,400 words of prose and two exercises, stated at 20 minutes.
    path = tmp_path / "09_long.ipynb"
    assert "more than the 20 stated" in core_problem(path, _core(3400))
    assert core_problem(path, _core(2550)) is None  # 15 + 4.6 minutes: it fits
    assert "far less than the 20 stated" in core_problem(path, _core(100))  # 5.2 minutes stated as 20: padded


def test_a_stated_time_a_fresh_reader_contradicts_is_caught(tmp_path, monkeypatch):
    # The estimate says 19.6 minutes; a reader who took 40 contradicts « about 20 »: it must say at least 35.
    path = tmp_path / "09_long.ipynb"
    assert core_problem(path, _core(2550)) is None
    monkeypatch.setitem(SECOND_READER_MINUTES, "09", 40)
    assert "a fresh reader took 40 minutes" in core_problem(path, _core(2550))
    assert core_problem(path, _core(2550, stated=40)) is None  # the reader's minutes justify it: not padding
    assert "far less than the 50 stated" in core_problem(path, _core(2550, stated=50))


def test_code_outputs_and_figures_are_read():
    cell = {"cell_type": "code", "source": ["show(x)\n", "\n", "plot()\n"],
            "outputs": [{"output_type": "stream", "text": ["a\n", "\n", "b\n"]},
                        {"output_type": "display_data", "data": {"image/png": "…", "text/plain": ["<Figure>"]}}]}
    assert spent([{"cell_type": "markdown", "source": ["head"]}, cell]) == \
        {"words": 0, "code": 2, "outputs": 2 + FIGURE_LINES, "exercises": 0, "seconds": 0.0}


def _notebooks_at(commit: str) -> dict:
    """The reader's ten lessons as committed at ``commit`` (number → (path, cells)), read with git; {} where
    this clone does not hold that commit."""
    def git(*args):
        return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, timeout=30,
                              check=True).stdout

    try:
        listing = git("ls-tree", "--name-only", commit, "notebooks/").split()
        out = {}
        for number in READER_MINUTES:
            name = next(n for n in listing if re.match(rf"notebooks/{number}_", n))
            out[number] = (Path(name), json.loads(git("show", f"{commit}:{name}"))["cells"])
        return out
    except (OSError, subprocess.SubprocessError, StopIteration):
        return {}


def fit(commit: str = CALIBRATED_AT) -> dict:
    """The rates, fitted again on the reader's minutes: non-negative least squares on the four counts."""
    import numpy as np
    from scipy.optimize import nnls

    notebooks = _notebooks_at(commit)
    if not notebooks:
        return {}
    counts = {n: spent(split(path, all_cells)[0]) for n, (path, all_cells) in notebooks.items()}
    X = np.array([[c["words"], c["code"], c["outputs"], c["exercises"]] for c in counts.values()], dtype=float)
    y = np.array([READER_MINUTES[n] - c["seconds"] / 60 for n, c in counts.items()])
    rates, _ = nnls(X, y)
    error = np.array([minutes(c) - READER_MINUTES[n] for n, c in counts.items()])  # at the rounded rates
    return {"per_minute": tuple(float(1 / r) for r in rates[:3]), "exercise": float(rates[3]),
            "rms": float(np.sqrt((error ** 2).mean())), "worst": float(np.abs(error).max()),
            "estimates": {n: round(minutes(c), 1) for n, c in counts.items()}}


def test_the_rates_are_the_fit_of_the_readers_minutes():
    fitted = fit()
    if not fitted:
        pytest.skip(f"the notebooks at {CALIBRATED_AT} are not in this clone's history (a shallow clone)")
    words, code, outputs = fitted["per_minute"]
    # The rates in use are the fitted ones, rounded: within 3 % of the fit.
    for name, used, found in [("words a minute", WORDS_A_MINUTE, words), ("code lines", CODE_LINES_A_MINUTE, code),
                              ("output lines", OUTPUT_LINES_A_MINUTE, outputs),
                              ("minutes an exercise", MINUTES_AN_EXERCISE, fitted["exercise"])]:
        assert abs(used - found) <= 0.03 * found, f"{name}: {used} in use, {found:.2f} fitted"
    assert fitted["rms"] <= 0.3 and fitted["worst"] <= 0.5, fitted  # what the docstring says of the rounded rates


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


if __name__ == "__main__":
    if "--fit" in sys.argv:
        print(fit())
    for path in LESSONS:
        core = CORE.search(text(cells(path)[0]))
        counts = spent(split(path)[0])
        print(f"{path.stem:<30} estimate {minutes(counts):5.1f}  stated {core.group(1) if core else '-':>3}   {counts}")

"""docs/instructor.md's two plans, made from the notebooks' own stated times and held to them.

Every sized notebook opens with its times, in the form ``tests/test_lessons.py``
parses and holds to the notebook's prose: « **Core, sections 1–N: about X
minutes** » and « **Going further, …: about Y minutes** ». The plans are those
lines laid end to end, never typed by hand:

- **a 3-hour session** on the cores alone, in the notebooks' order, after an
  opening quarter of an hour and with one break, keeping its last ``SLACK``
  (20) minutes free; a core that would end in them is not cut short: it and
  every core after it are named as homework (or a second session);
- **a full day** (9:00–17:30, a break mid-morning, lunch, a break mid-afternoon):
  every notebook's core, in order, the capstone's last; each core followed by
  its « going further » sections only while every core after it still fits
  before the end of the day. A « going further » left out is named, and so is
  a core that does not fit (it and every core after it).

A notebook whose first cell states no time yet (not restructured) is left out of
both plans and named as not sized; its own test is skipped until it has one.
When a notebook's stated time changes, the plan in the doc no longer matches and
the test fails: rewrite it with

    .venv/bin/python tests/test_instructor_plan.py
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from test_lessons import CORE, FURTHER  # the stated times, read exactly as the lessons' own test reads them

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "instructor.md"
LESSONS = sorted((REPO / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
BEGIN, END = "<!-- BEGIN lesson_plan", "<!-- END lesson_plan -->"

#: The 3-hour session: its length, the opening (workspaces, JupyterLab), and one break once this much has passed.
SESSION, OPENING, BREAK, BREAK_AFTER = 180, 15, 10, 80
#: Minutes the 3-hour plan keeps free at its end (issue 31): a room runs late, and the model's queue with it.
SLACK = 20
#: The full day, in minutes after midnight: start, end, the opening, and each pause (not before its time).
DAY_START, DAY_END, DAY_OPENING = 9 * 60, 17 * 60 + 30, 30
PAUSES = [(10 * 60 + 30, 15, "break"), (12 * 60, 60, "lunch"), (15 * 60, 15, "break")]


def stated(path: Path):
    """(core part, core minutes, further part, further minutes) from the first cell, or None when not sized yet."""
    head = "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"])
    core, further = CORE.search(head), FURTHER.search(head)
    if not (core and further):
        return None
    return _part(core), int(core.group(1)), _part(further), int(further.group(1))


def _part(match) -> str:
    # « **Core, sections 1–6: about 15 minutes** » → « Core, sections 1–6 »
    return re.sub(r": about \d+ minutes\*\*$", "", match.group(0)).lstrip("*")


def clock(minutes: int) -> str:
    return f"{minutes // 60}:{minutes % 60:02d}"


def _row(start: int, length: int, lesson: str, part: str, said: str) -> str:
    return f"| {clock(start)}–{clock(start + length)} | {lesson} | {part} | {said} |"


def three_hours(lessons: dict) -> list[str]:
    """The cores end to end after the opening, one break, until the session is full; the rest is homework."""
    rows = ["| time | notebook | part | stated |", "| --- | --- | --- | --- |",
            _row(0, OPENING, "—", "workspaces (`rungs workshop`), JupyterLab, the first cell", "")]
    at, rested, left = OPENING, False, []
    for name, (core, minutes, _, _) in lessons.items():
        if not rested and at >= BREAK_AFTER and at + BREAK + minutes <= SESSION - SLACK:
            rows.append(_row(at, BREAK, "—", "break", ""))
            at, rested = at + BREAK, True
        if left or at + minutes > SESSION - SLACK:
            left.append(f"`{name}`")  # in order: a core is never taught before the one it follows
            continue
        rows.append(_row(at, minutes, f"`{name}`", core.lower(), f"about {minutes} minutes"))
        at += minutes
    rows.append(_row(at, SESSION - at, "—", "slack: questions, the model's queue, a late start", ""))
    if left:
        rows.append(f"| after {clock(at)} | {', '.join(left)} | their cores: homework, or a second session | |")
    return rows


def full_day(lessons: dict) -> list[str]:
    """Every core in order, the capstone's last; a « going further » only where the cores after it still fit."""
    rows = ["| time | notebook | part | stated |", "| --- | --- | --- | --- |",
            _row(DAY_START, DAY_OPENING, "—", "workspaces, JupyterLab, the room server's two lines", "")]
    at, pauses, left, cut = DAY_START + DAY_OPENING, list(PAUSES), [], False
    names = list(lessons)
    for i, name in enumerate(names):
        core, c, further, f = lessons[name]
        cores_after = [lessons[n][1] for n in names[i + 1:]]
        for part, minutes, optional in ((core, c, False), (further, f, True)):
            at = _pause(rows, at, pauses)
            # A core is never taught before the one it follows; a going further never costs a later core its place.
            if cut or _ends(at, [minutes, *(cores_after if optional else [])], pauses) > DAY_END:
                left.append(f"`{name}` ({part.lower()})")
                cut = cut or not optional
                continue
            rows.append(_row(at, minutes, f"`{name}`", part.lower(), f"about {minutes} minutes"))
            at += minutes
    # The day's slack runs to the day's end (it once ran to the 3-hour session's: « 17:29–3:00 »).
    rows.append(_row(at, DAY_END - at, "—", "slack: questions, the model's queue, a late start", ""))
    if left:
        rows.append(f"| after {clock(at)} | {', '.join(left)} | not in the day | |")
    return rows


def _pause(rows: list, at: int, pauses: list) -> int:
    """The pauses due by ``at`` (each not before its time), written as rows; returns when work resumes."""
    while pauses and at >= pauses[0][0]:
        _, length, what = pauses.pop(0)
        rows.append(_row(at, length, "—", what, ""))
        at += length
    return at


def _ends(at: int, parts: list[int], pauses: list) -> int:
    """When these parts would end, laid out from ``at`` with the pauses still to come."""
    pauses = list(pauses)
    for minutes in parts:
        at = _pause([], at, pauses) + minutes
    return at


def plan(paths=LESSONS) -> str:
    """The block between the doc's lesson_plan markers, made from the notebooks as they are now."""
    sized = {p.stem: stated(p) for p in paths}
    lessons = {name: times for name, times in sized.items() if times}
    waiting = [f"`{name}`" for name, times in sized.items() if not times]
    out = ["**A 3-hour session: the cores alone.**", "", *three_hours(lessons), "",
           "**A full day: every core, the capstone last; each « going further » while the cores after it still fit.**", "", *full_day(lessons)]
    if waiting:
        out += ["", "Not sized yet (no stated time in the first cell, so in neither plan): " + ", ".join(waiting) + "."]
    return "\n".join(out)


def block(text: str) -> str:
    lines = text.split("\n")
    begin = next(i for i, line in enumerate(lines) if line.startswith(BEGIN))
    end = next(i for i, line in enumerate(lines) if line.startswith(END))
    return "\n".join(lines[begin + 1:end])


def write(doc: Path = DOC) -> None:
    text = doc.read_text(encoding="utf-8")
    lines = text.split("\n")
    begin = next(i for i, line in enumerate(lines) if line.startswith(BEGIN))
    end = next(i for i, line in enumerate(lines) if line.startswith(END))
    doc.write_text("\n".join(lines[:begin + 1] + plan().split("\n") + lines[end:]), encoding="utf-8")


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_each_lesson_states_the_times_the_plan_is_made_of(path):
    times = stated(path)
    if times is None:
        pytest.skip(f"{path.name} is not restructured yet: its first cell states no core time")
    _, core, _, further = times
    # Up to 30: a fresh reader took 31 to 34 minutes over the model rungs' cores (tests/test_lessons.py).
    assert 10 <= core <= 30 and further > 0, f"{path.name}: a core of {core} minutes is not a lesson's core"


def test_the_plan_in_the_doc_is_the_one_the_notebooks_state():
    assert block(DOC.read_text(encoding="utf-8")) == plan(), (
        "docs/instructor.md's plan no longer matches the notebooks' stated times: "
        "rewrite it with `python tests/test_instructor_plan.py`")


# ---------------------------------------------------------------- negative controls

def _lesson(tmp_path, name, head):
    path = tmp_path / f"{name}.ipynb"
    path.write_text(json.dumps({"cells": [{"cell_type": "markdown", "source": [head]}]}), encoding="utf-8")
    return path


def test_a_changed_stated_time_changes_the_plan(tmp_path):
    a = _lesson(tmp_path, "00_a", "**Core, sections 1–4: about 15 minutes** **Going further, sections 5–6: about 10 minutes**")
    b = _lesson(tmp_path, "01_b", "**Core, sections 1–5: about 20 minutes** **Going further, sections 6–7: about 25 minutes**")
    before = plan([a, b])
    assert "| 0:15–0:30 | `00_a` | core, sections 1–4 | about 15 minutes |" in before
    assert "| 0:30–0:50 | `01_b` | core, sections 1–5 | about 20 minutes |" in before
    _lesson(tmp_path, "00_a", "**Core, sections 1–4: about 18 minutes** **Going further, sections 5–6: about 10 minutes**")
    assert plan([a, b]) != before  # the doc, written from the old time, would now fail the test above


def test_a_core_past_the_third_hour_is_homework_not_squeezed(tmp_path):
    paths = [_lesson(tmp_path, f"0{i}_x", "**Core, sections 1–3: about 20 minutes** **Going further, section 4: about 5 minutes**")
             for i in range(9)]
    rows = three_hours({p.stem: stated(p) for p in paths})
    # 0:15 + 6 × 20 + the break ends at 2:25: a seventh core would end in the slack
    assert rows[-1].startswith("| after 2:25 | `06_x`, `07_x`, `08_x` |"), rows[-1]
    assert sum("break" in r for r in rows) == 1


def test_the_full_day_keeps_every_core_and_gives_up_a_going_further_first(tmp_path):
    # Ten lessons of 20 + 25 minutes cannot all fit between 9:30 and 17:30: the cores (the capstone's, last,
    # included) are all taught; what is left out is going further, and never a core.
    paths = [_lesson(tmp_path, f"0{i}_x", "**Core, sections 1–3: about 20 minutes** **Going further, section 4: about 25 minutes**")
             for i in range(9)] + [_lesson(tmp_path, "09_capstone", "**Core, sections 1–5: about 25 minutes** "
                                                                     "**Going further, sections 6–7: about 10 minutes**")]
    rows = full_day({p.stem: stated(p) for p in paths})
    taught = [r.split(" | ") for r in rows if "| about " in r]   # [« | 9:30–9:50 », notebook, part, stated]
    assert [t[1] for t in taught if t[2].startswith("core")] == [f"`{p.stem}`" for p in paths]
    ends = [int(h) * 60 + int(m) for h, m in (t[0].split("–")[1].split(":") for t in taught)]
    assert max(ends) <= DAY_END
    assert "not in the day" in rows[-1] and "going further" in rows[-1] and "(core" not in rows[-1], rows[-1]


def test_an_unsized_notebook_is_named_not_planned(tmp_path):
    a = _lesson(tmp_path, "00_a", "**Core, sections 1–4: about 15 minutes** **Going further, sections 5–6: about 10 minutes**")
    b = _lesson(tmp_path, "02_b", "# Hybrid search, with its exercises at the end")
    out = plan([a, b])
    assert out.endswith("Not sized yet (no stated time in the first cell, so in neither plan): `02_b`.")
    assert "| `02_b` |" not in out


if __name__ == "__main__":
    write()
    print(f"{DOC.relative_to(REPO)}: plan rewritten from {sum(1 for p in LESSONS if stated(p))} sized notebooks",
          file=sys.stderr)


def test_the_three_hour_plan_keeps_twenty_minutes_of_slack():
    # Six cores of 30 minutes: after the opening and the break, five would end at 2:55; four leave the slack.
    lessons = {f"0{i}_x": ("Core, sections 1–3", 30, "Going further, sections 4–5", 10) for i in range(6)}
    rows = three_hours(lessons)
    taught = [r for r in rows if r.startswith("| ") and "`0" in r and "homework" not in r]
    assert len(taught) == 4, rows
    assert any("slack" in r for r in rows) and "`04_x`, `05_x`" in rows[-1], rows


def test_every_row_of_both_plans_runs_forward_and_the_day_ends_at_its_end():
    # The full day's slack was once written « 17:29–3:00 »: its length counted to the 3-hour session's end.
    lessons = {f"0{i}_x": ("Core, sections 1–3", 25, "Going further, sections 4–5", 20) for i in range(9)}
    for rows, end in ((three_hours(lessons), SESSION), (full_day(lessons), DAY_END)):
        spans = [r.split(" | ")[0].lstrip("| ").split("–") for r in rows if re.match(r"\| \d+:\d\d–", r)]
        minutes = [[int(h) * 60 + int(m) for h, m in (t.split(":") for t in span)] for span in spans]
        assert all(a < b for a, b in minutes), spans
        assert minutes[-1][1] == end, spans[-1]

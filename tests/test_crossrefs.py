"""Every « section N » a reader follows leads to a heading that exists.

A lesson's sections are its ``## N · Title`` headings. The tests hold:

- **the numbering**: in every notebook the numbered headings run 1, 2, 3 …
  in order, each once (N4 once had a core section headed « ## 6 » between
  its 3 and its going further's 5 and 6);
- **the head's ranges**: « Core, sections 1–6 » and « Going further, sections
  7–8 » in the first cell are exactly the numbered headings before and after
  « ## Going further »;
- **every reference**: « section 4 », « sections 7–10 », « §5 », « N4
  section 6 », « N2, section 10 », « notebook 03, section 4 », « [N4](04_….ipynb),
  section 6 », « [section 5](06_….ipynb) », « the tuning lab, section 4 » — in
  every notebook's markdown and code comments, in ``docs/``, the READMEs, the
  package's docstrings and the exercises' texts — names a numbered heading of
  the notebook it points to. A reference that names no notebook points to its
  own notebook (an exercise module: to its notebook); in a doc or a
  docstring, it must name one. An anchor link (``01a_….ipynb#Holm``, ``#MRR``)
  must name a heading of that notebook.

The « Further reading » sections are left out: « section 11.4.3 » of a
textbook is not ours. The negative controls at the end plant each kind of
broken reference and check that it is caught.
"""

from __future__ import annotations

import ast
import json
import re
from functools import lru_cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
DOCS = [REPO / "README.md", REPO / "benchmarks" / "README.md", *sorted((REPO / "docs").glob("*.md"))]
MODULES = sorted((REPO / "rungs").rglob("*.py"))

NUMBERED = re.compile(r"^## (\d+) · ", re.M)
#: « section 4 », « sections 7–10 », « sections 5 and 6 », « §5 » (the numbers a reference names follow it).
REFERENCE = re.compile(r"(?:\bsections?|§)\s*(\d+(?:\s*(?:–|-|,|and|to)\s*\d+)*)(?!\d|\.\d)", re.I)
#: What may name the notebook a reference points to, written just before it…
BEFORE = [re.compile(p + r"\s*$", re.I) for p in (
    r"\bN(\d)(?:'s|’s)?,?\s*\(?",                                     # N1 §5, N4 section 6, N3's section 3, N2, section 10
    r"\bnotebook\s+(\d\d[a-z]?)(?:'s|’s)?,?\s*\(?",                   # notebook 03, section 4 · notebook 02 (section 10)
    r"\]\((\d\d[a-z]?)_[\w.-]*?\.ipynb(?:#[^)]*)?\),?\s*\(?",         # [N4](04_typed_decisions.ipynb), section 6
    r"`(\d\d[a-z]?)_\w+`\s*(?:\|\s*|\()?(?:core|going further),",    # a plan's row: `00_full_text_search` | core, sections 1–6
    r"\b(the primer|the tuning lab)(?:'s|’s)?,?\s*\(?",              # the tuning lab, section 4
)]
#: … or just after it: « [section 5](06_tuning_lab.ipynb) ».
AFTER = re.compile(r"^\]\((\d\d[a-z]?)_[\w.-]*?\.ipynb", re.I)
NAMES = {"the primer": "01a", "the tuning lab": "06"}
ANCHOR = re.compile(r"\]\((?:(\d\d[a-z]?_[\w.-]*?\.ipynb))?#([^)\s]+)\)")


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def source(cell) -> str:
    return "".join(cell["source"])


def prose(cell) -> str:
    """What a reader reads as prose in a cell: markdown, or a code cell's comments (not its code, nor its output)."""
    text = source(cell)
    if cell["cell_type"] == "markdown":
        return re.split(r"^#+ *(?:Further reading|References)\b", text, flags=re.M)[0]
    return "\n".join(line.split("#", 1)[1] for line in text.splitlines() if "#" in line)


def key(path: Path) -> str:
    """A notebook's number as references write it: « 00 », « 01a », « 06 »."""
    return re.match(r"\d\d[a-z]?", path.name).group(0)


@lru_cache(maxsize=None)
def headings(number: str) -> tuple:
    """The numbered headings of a notebook, in order (the numbers as written)."""
    path = next((p for p in NOTEBOOKS if key(p) == number), None)
    if path is None:
        return ()
    return tuple(int(m.group(1)) for c in cells(path) if c["cell_type"] == "markdown"
                 for m in NUMBERED.finditer(source(c)))


def anchors(path: Path) -> set[str]:
    """The anchors JupyterLab gives a notebook's headings: the heading's text, spaces as hyphens."""
    out = set()
    for c in cells(path):
        if c["cell_type"] == "markdown":
            for m in re.finditer(r"^#+ +(.+?)\s*$", source(c), flags=re.M):
                out.add(m.group(1).replace(" ", "-"))
    return out


def numbers(text: str) -> list[int]:
    """« 7–10 » → 7, 8, 9, 10; « 5 and 6 » → 5, 6."""
    out, parts = [], re.split(r"\s*(–|-|to|,|and)\s*", text)
    values, ops = [int(p) for p in parts[::2]], parts[1::2]
    out.append(values[0])
    for op, value in zip(ops, values[1:]):
        out.extend(range(out[-1] + 1, value + 1) if op in ("–", "-", "to") else [value])
    return out


def references(text: str, *, home: str | None) -> list[tuple[str | None, int, str]]:
    """(the notebook pointed to, the section number, the words quoted) for every reference in ``text``.

    ``home``: the notebook a reference that names none points to (None: it must name one).
    """
    found = []
    for m in REFERENCE.finditer(text):
        before, after = text[max(0, m.start() - 90):m.start()], text[m.end():m.end() + 60]
        target = next((g for p in BEFORE for g in [p.search(before)] if g), None)
        number = None
        if target:
            number = target.group(1).lower()
            number = NAMES.get(number, number if not number.isdigit() or len(number) > 1 else f"0{number}")
        elif AFTER.match(after):
            number = AFTER.match(after).group(1)
        quoted = text[max(0, m.start() - 20):m.end()].replace("\n", " ")
        for n in numbers(m.group(1)):
            found.append((number or home, n, quoted))
    return found


def broken(refs, where: str) -> list[str]:
    out = []
    for number, n, quoted in refs:
        if number is None:
            out.append(f"{where}: « …{quoted} » names no notebook: write « notebook NN, section {n} »")
        elif n not in headings(number):
            out.append(f"{where}: « …{quoted} » points to section {n} of notebook {number}, which has "
                       f"sections {list(headings(number)) or 'none'}")
        elif headings(number).count(n) > 1:  # N4 had two « ## 6 »: a reader cannot tell which is meant
            out.append(f"{where}: « …{quoted} » points to section {n} of notebook {number}, which has two")
    return out


def notebook_problems(path: Path) -> list[str]:
    problems = []
    for i, c in enumerate(cells(path)):
        text = prose(c)
        problems += broken(references(text, home=key(path)), f"{path.name} cell {i}")
        for target, anchor in ANCHOR.findall(text if c["cell_type"] == "markdown" else ""):
            page = next((p for p in NOTEBOOKS if p.name == target), None) if target else path
            if page is not None and anchor not in anchors(page):
                problems.append(f"{path.name} cell {i}: the link #{anchor} names no heading of {page.name}")
    return problems


def numbering_problems(path: Path) -> list[str]:
    all_cells = cells(path)
    found = [(i, int(m.group(1))) for i, c in enumerate(all_cells) if c["cell_type"] == "markdown"
             for m in NUMBERED.finditer(source(c))]
    problems = [f"{path.name} cell {i}: heading « ## {n} · » where section {k} was due"
                for k, (i, n) in enumerate(found, start=1) if n != k]
    head = source(all_cells[0]) if all_cells else ""
    split = next((i for i, c in enumerate(all_cells) if c["cell_type"] == "markdown" and "## Going further" in source(c)), None)
    for part, pattern in (("Core", r"\*\*Core, sections? ([^:*]+):"), ("Going further", r"\*\*Going further, sections? ([^:*]+):")):
        stated = re.search(pattern, head)
        if stated is None or split is None:
            continue
        said = numbers(stated.group(1))
        actual = [n for i, n in found if (i < split) == (part == "Core")]
        if said != actual:
            problems.append(f"{path.name} cell 0: « {part}, sections {stated.group(1)} » but its headings are {actual}")
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_the_sections_are_numbered_in_order_once_each(path):
    problems = numbering_problems(path)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_reference_in_a_notebook_resolves(path):
    problems = notebook_problems(path)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", DOCS, ids=[str(p.relative_to(REPO)) for p in DOCS])
def test_every_reference_in_the_docs_resolves(path):
    text = re.split(r"^#+ *(?:Further reading|References)\b", path.read_text(encoding="utf-8"), flags=re.M)[0]
    problems = broken(references(text, home=None), str(path.relative_to(REPO)))
    assert not problems, "\n".join(problems)


def package_texts(path: Path) -> list[tuple[str, str]]:
    """(where, text): every docstring of a module; for an exercise module, every string it shows a learner."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if path.parent.name == "exercises" and path.name != "__init__.py":
        return [(f"line {n.lineno}", n.value) for n in ast.walk(tree)
                if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return [(getattr(n, "name", "module"), ast.get_docstring(n, clean=False))
            for n in ast.walk(tree) if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and ast.get_docstring(n, clean=False)]


def test_every_reference_in_the_package_resolves():
    problems = []
    for path in MODULES:
        exercise = re.fullmatch(r"n(\d\d[a-z]?)\.py", path.name) if path.parent.name == "exercises" else None
        for where, text in package_texts(path):
            problems += broken(references(text, home=exercise.group(1) if exercise else None),
                               f"{path.relative_to(REPO)} ({where})")
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------- negative controls: each kind of break, planted

def test_the_forms_of_a_reference_are_read():
    text = ("N1 §5; N3's section 3; N2, section 10; notebook 03, section 4; notebook 02 (section 10); "
            "[N4](04_typed_decisions.ipynb), section 6; [section 5](06_tuning_lab.ipynb); the tuning lab, section 4; "
            "the primer's section 7; section 2; sections 7–9; sections 5 and 6")
    got = [(number, n) for number, n, _ in references(text, home="00")]
    assert got == [("01", 5), ("03", 3), ("02", 10), ("03", 4), ("02", 10), ("04", 6), ("06", 5), ("06", 4),
                   ("01a", 7), ("00", 2), ("00", 7), ("00", 8), ("00", 9), ("00", 5), ("00", 6)]


def test_a_reference_to_a_missing_section_is_caught():
    # N3 cell 19 once pointed to « N5 section 4 » for the fences, which N5 teaches in its section 2: that one
    # exists, so the planted break is a section no notebook has.
    assert broken(references("see N2 section 40", home="00"), "x") == [
        f"x: « …see N2 section 40 » points to section 40 of notebook 02, which has sections {list(headings('02'))}"]
    assert broken(references("as section 99 showed", home="01"), "x")
    assert broken(references("(notebook 08, section 2)", home=None), "x") == []
    headings.cache_clear()


def test_a_doc_reference_must_name_its_notebook():
    [problem] = broken(references("as section 4 shows", home=None), "docs/x.md")
    assert "names no notebook" in problem


def test_a_misnumbered_heading_and_a_stale_range_are_caught(tmp_path):
    nb = {"cells": [{"cell_type": "markdown", "source": ["**Core, sections 1–3: about 9 minutes**"]},
                    {"cell_type": "markdown", "source": ["## 1 · One\n"]},
                    {"cell_type": "markdown", "source": ["## 6 · Two\n"]},   # N4's « ## 6 » in its core
                    {"cell_type": "markdown", "source": ["## Going further\n"]},
                    {"cell_type": "markdown", "source": ["## 3 · Three\n"]}]}
    path = tmp_path / "09_x.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    problems = numbering_problems(path)
    assert "09_x.ipynb cell 2: heading « ## 6 · » where section 2 was due" in problems
    assert any("« Core, sections 1–3 » but its headings are [1, 6]" in p for p in problems)


def test_a_broken_anchor_is_caught(tmp_path):
    nb = {"cells": [{"cell_type": "markdown", "source": ["# T\n\n### Holm\n\nSee [it](#Holm) and [that](#Bonferroni)."]}]}
    path = tmp_path / "09_x.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    assert notebook_problems(path) == ["09_x.ipynb cell 0: the link #Bonferroni names no heading of 09_x.ipynb"]

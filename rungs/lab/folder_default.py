"""The folder default against paraphrases: issue 39's stored measurement, read as tables for notebooks 02 and 07.

``benchmarks/bench_folder_default.py`` ranks every judged question of several
collections indexed as a learner's folder (the handbook as a folder, lexical
and paraphrase; ``benchmarks/folder``; the GIMP manual) with each fusion
candidate, as ``python -m rungs search --passages --limit 4`` does, and writes
``benchmarks/results/folder_default.json``: each question's hit per candidate,
each cell's share with its paired test against BM25 (Holm), which candidates
are eligible and what the protocol kept. ``load`` finds the file and checks the
parts read here once (a damaged file is one ``NoResults`` naming the part);
``table`` is candidates × collection/kind, ``per_question`` every question's
hits, ``unfound`` the questions no candidate finds. Taught in notebook 02
(going further, « A folder nobody tuned ») and notebook 07, section 5.

Cost: reading one JSON file of about 250 kB; no model, no index.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..core.errors import BadArgument, RungsError, check_number, short_repr
from . import stored

#: What ``table`` can show per cell: the share found, its difference from BM25, the Holm-adjusted p.
MEASURES = ("mean", "diff", "p_holm")


class NoResults(RungsError, LookupError):
    """``results/folder_default.json`` is missing or damaged: ``benchmarks/bench_folder_default.py`` writes it."""


def load(path=None) -> dict:
    """The stored measurement (``benchmarks/results/folder_default.json``, or ``path``), its parts checked."""
    remake = "benchmarks/bench_folder_default.py (it indexes each collection as a folder, no model)"
    return stored.read_json(path, name="folder_default.json", what="the folder default's runs", remake=remake,
                            error=NoResults, check=check)


def _mapping(value, where: str) -> Mapping:
    if not isinstance(value, Mapping) or not value:
        raise BadArgument(f"results{where} must be a non-empty dict, not {short_repr(value)}: pass what "
                          "folder_default.load() returns")
    return value


def check(results) -> dict:
    """``results`` as ``load`` returns it, every part read here checked; else a ``BadArgument`` naming the part."""
    names = list(_mapping(_mapping(results, "").get("candidates"), "['candidates']"))
    odd = [n for n in names if not isinstance(n, str) or n in ("id", "cell", "question")]
    if odd:  # a candidate is a column beside a question's id, cell and text
        raise BadArgument(f"results['candidates'] must be named by texts other than id, cell and question, "
                          f"not {short_repr(odd[0])}")
    tests = _mapping(results.get("tests"), "['tests']")
    if list(tests) != names:
        raise BadArgument("results['tests'] must hold one entry per candidate, in the candidates' order")
    cells = None
    for name in names:
        row = _mapping(tests[name], f"['tests'][{name!r}]")
        if cells is not None and list(row) != cells:
            raise BadArgument(f"results['tests'][{name!r}] must hold the same cells as the first candidate")
        cells = list(row)
        for cell, test in row.items():
            test = _mapping(test, f"['tests'][{name!r}][{cell!r}]")
            for key, low in (("mean", 0.0), ("diff", -1.0), ("p_holm", 0.0)):
                check_number(test.get(key), f"results['tests'][{name!r}][{cell!r}][{key!r}]", low=low, high=1.0)
    eligible = results.get("eligible")
    if not isinstance(eligible, list) or not set(eligible) <= set(names):
        raise BadArgument(f"results['eligible'] must be a list of candidates, not {short_repr(eligible)}")
    questions = results.get("questions")
    if not isinstance(questions, list) or not questions:
        raise BadArgument("results['questions'] must be a non-empty list of questions")
    for i, q in enumerate(questions):
        if not isinstance(q, Mapping) or not all(isinstance(q.get(k), str) for k in ("id", "cell", "question")) \
                or q["cell"] not in cells or not isinstance(q.get("hits"), list) or len(q["hits"]) != len(names) \
                or any(type(h) is not int or h not in (0, 1) for h in q["hits"]):
            raise BadArgument(f"results['questions'][{i}] must have an id, a cell, a question and one hit "
                              f"(0 or 1) per candidate, not {short_repr(q)}")
    if not isinstance(_mapping(results.get("protocol"), "['protocol']").get("chosen"), str):
        raise BadArgument("results['protocol']['chosen'] must name the candidate the protocol kept")
    return results


def _results(results) -> dict:
    return load() if results is None else check(results)


def table(results=None, *, measure: str = "mean"):
    """Candidates × collection/kind (a pandas DataFrame): each cell's ``measure`` (the share found among the four
    passages, its difference from BM25, or the Holm-adjusted p), and whether the candidate is eligible."""
    import pandas as pd

    if measure not in MEASURES:
        raise BadArgument(f"measure must be one of {', '.join(MEASURES)}, not {short_repr(measure)}")
    results = _results(results)
    frame = pd.DataFrame({name: {cell: t[measure] for cell, t in row.items()}
                          for name, row in results["tests"].items()}).T
    frame.index.name = "candidate"
    counts = pd.Series([q["cell"] for q in results["questions"]]).value_counts()
    frame.columns = [f"{cell} ({counts.get(cell, 0)})" for cell in frame.columns]  # each cell's questions, counted
    frame["eligible"] = [name in results["eligible"] for name in frame.index]
    return frame


def per_question(results=None, *, cell: str | None = None):
    """Every stored question (or one cell's): its id, cell and text, and 1 or 0 per candidate (found or not)."""
    import pandas as pd

    results = _results(results)
    cells = {q["cell"] for q in results["questions"]}
    if cell is not None and (not isinstance(cell, str) or cell not in cells):
        raise BadArgument(f"cell must be one of {', '.join(sorted(cells))}, not {short_repr(cell)}")
    names = list(results["candidates"])
    rows = [{"id": q["id"], "cell": q["cell"], "question": q["question"], **dict(zip(names, q["hits"]))}
            for q in results["questions"] if cell is None or q["cell"] == cell]
    return pd.DataFrame(rows, columns=["id", "cell", "question", *names]).set_index("id")


def unfound(results=None, *, cell: str | None = None):
    """The questions no candidate finds among its four passages (``per_question``'s rows that are all 0)."""
    frame = per_question(results, cell=cell)
    names = list(frame.columns[2:])
    return frame.loc[frame[names].sum(axis=1) == 0, ["cell", "question"]]

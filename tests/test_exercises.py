"""Every exercise's solution passes its check, and every plausible wrong answer fails it."""

import pytest

from rungs.exercises import all_exercises

EXERCISES = all_exercises()


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_the_solution_passes_and_wrong_answers_fail(name):
    ex = EXERCISES[name]
    answer = ex.solution_value()
    assert ex.passes(answer), (name, answer, ex.check(answer))
    assert ex.wrong_answers, f"{name}: give at least one plausible wrong answer"
    # A wrong answer that depends on the data (the negated score, say) is given as a function that computes it.
    wrongs = [w() if callable(w) else w for w in ex.wrong_answers]
    for wrong in wrongs:
        assert not ex.passes(wrong), (name, wrong)
    assert ex.hint().startswith("Hint: ") and ex.solution().startswith("Solution:")
    assert "✓" in ex.check(answer) and "✗" in ex.check(wrongs[0])


def test_a_malformed_answer_is_feedback_not_a_traceback():
    for ex in EXERCISES.values():
        assert ex.check(object()).startswith("✗")


def test_an_unanswered_exercise_asks_for_an_answer_and_shows_no_error():
    # The cells are committed with answer = None: a learner opening the notebook must see a prompt, not a TypeError.
    for ex in EXERCISES.values():
        said = ex.check(None)
        assert said.startswith("… your answer here") and "Error" not in said


# ---------------------------------------------------------------- each notebook asks the exercises its module holds

import importlib.util
import json
import re
from pathlib import Path

from rungs.exercises import for_notebook

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("[0-9][0-9]*_*.ipynb"))


def asked(path: Path) -> set[str]:
    """The exercises a notebook's code cells call (``ex["name"]``)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return {name for c in cells if c["cell_type"] == "code" for name in re.findall(r'\bex\["(\w+)"\]', "".join(c["source"]))}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_a_notebook_asks_every_exercise_of_its_module_and_only_those(path):
    # An exercise moved out of a notebook (or renamed) and left in its module is code nobody runs; one asked
    # and missing from the module greets the learner with a KeyError.
    number = re.match(r"\d\d[a-z]?", path.name).group(0)
    if importlib.util.find_spec(f"rungs.exercises.n{number}") is None:
        assert not asked(path), f"{path.name} asks exercises, and rungs.exercises.n{number} does not exist"
        return
    defined = set(for_notebook(number))
    assert asked(path) <= defined, f"{path.name} asks {sorted(asked(path) - defined)}, which n{number}.py lacks"
    assert defined <= asked(path), f"n{number}.py defines {sorted(defined - asked(path))}, which {path.name} never asks"

"""Exercises with a way to know you got it right: ``check()``, ``hint()`` and ``solution()``.

What it is for: a « Try this » that stops at the question leaves a self-study
reader guessing. In the manner of Kaggle Learn's exercise helpers, each
exercise of a notebook is an ``Exercise``: the learner computes an answer in
a cell and calls ``ex.check(answer)``, which says whether it holds — by
recomputing the truth with ``rungs`` itself, never by comparing with a
hard-coded number — without giving the answer away. ``ex.hint()`` nudges,
``ex.solution()`` shows the code and the reasoning.

Every notebook's exercises live in a module of their own (``rungs.exercises.n01``
for notebook 01 …), each listing them in ``EXERCISES``. The suite runs every
solution through its check, and a plausible wrong answer too: the check must
refuse it.

Cost: each check runs a few searches, milliseconds.
"""

from __future__ import annotations

import importlib
import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Callable

from ..core.display import Table
from ..core.errors import RungsError


class AnswerShape(RungsError, TypeError):
    """A learner's answer is not of the shape the question asks for (a number, a list…); said, not raised."""


class ExerciseBroken(RungsError, RuntimeError):
    """An exercise could not compute its own answer: the data it is about changed (a bug to report)."""


def as_integer(answer) -> int:
    """A learner's answer read as a whole number (``True`` is not one), or ``AnswerShape``, which the check shows."""
    if isinstance(answer, bool) or not isinstance(answer, numbers.Integral):
        raise AnswerShape(f"give a whole number, not {type(answer).__name__} {answer!r}")
    return int(answer)


def as_number(answer, what: str = "a number") -> float:
    """A learner's answer read as a finite number, or ``AnswerShape`` saying what was expected."""
    if isinstance(answer, bool) or not isinstance(answer, numbers.Real) or not math.isfinite(answer):
        raise AnswerShape(f"give {what}, not {type(answer).__name__} {answer!r}")
    return float(answer)


def as_names(answer) -> list[str]:
    """A learner's answer read as a list of names (a bare string is not a list of them)."""
    if isinstance(answer, (str, bytes)) or not isinstance(answer, (list, tuple, set)):
        raise AnswerShape(f"give a list of names, not {type(answer).__name__} {answer!r}")
    if not all(isinstance(a, str) for a in answer):
        raise AnswerShape("every name must be text")
    return list(answer)


@dataclass
class Exercise:
    """One exercise: a question, a check that recomputes the truth, a hint and a solution."""

    name: str
    question: str
    judge: Callable[[Any], tuple[bool, str]]  # answer → (holds?, what to say; never the answer itself)
    hint_text: str
    solution_code: str                          # what the learner would type
    solution_value: Callable[[], Any]           # computes a right answer (the suite checks it passes)
    wrong_answers: list = field(default_factory=list)  # plausible wrong answers, or functions computing one
                                                       # from the data (the suite checks they fail)

    def check(self, answer) -> Table:
        """Whether ``answer`` holds: ✓ with why, or ✗ with what is wrong (never the answer itself)."""
        if answer is None:  # the cell as committed: nothing typed yet is not an error
            return Table("… your answer here: replace None with your answer, then run the cell again")
        try:
            ok, why = self.judge(answer)
        except Exception as err:  # a learner's answer of the wrong shape is feedback, not a traceback
            ok, why = False, f"could not read this answer ({type(err).__name__}: {err})"
        return Table(f"{'✓ correct' if ok else '✗ not yet'} — {why}")

    def passes(self, answer) -> bool:
        """The bare verdict (for tests)."""
        try:
            return bool(self.judge(answer)[0])
        except Exception:
            return False

    def hint(self) -> Table:
        return Table(f"Hint: {self.hint_text}")

    def solution(self) -> Table:
        return Table(f"Solution:\n{self.solution_code.strip()}")

    def __repr__(self) -> str:
        return f"Exercise {self.name}: {self.question}"


def for_notebook(number: str) -> dict[str, Exercise]:
    """The exercises of one notebook, by name: ``for_notebook("01")["k1"]``."""
    module = importlib.import_module(f"{__name__}.n{number}")
    return module.EXERCISES


def all_exercises() -> dict[str, Exercise]:
    """Every exercise of the collection, keyed « notebook/name »."""
    import pkgutil

    out = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("n"):
            for name, ex in for_notebook(info.name[1:]).items():
                out[f"{info.name[1:]}/{name}"] = ex
    return out

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
    for wrong in ex.wrong_answers:
        assert not ex.passes(wrong), (name, wrong)
    assert ex.hint().startswith("Hint: ") and ex.solution().startswith("Solution:")
    assert "✓" in ex.check(answer) and "✗" in ex.check(ex.wrong_answers[0])


def test_a_malformed_answer_is_feedback_not_a_traceback():
    for ex in EXERCISES.values():
        assert ex.check(object()).startswith("✗")

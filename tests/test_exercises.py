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

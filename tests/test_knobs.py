"""Knobs you can drag (rungs.core.knobs) and two systems side by side (rungs.lab.compare).

A panel's text is what a static view, the book and nbval see: it must be the
function's text at the knobs' values, and a drag must change it. A comparison
must show the questions that moved and the collection's one paired test.
"""

import pytest

from rungs.core.errors import BadArgument, RungsError
from rungs.core.knobs import WIDGET_VIEW, Choice, Panel, Slider, describe, reranking
from rungs.lab import metrics
from rungs.lab.compare import compare


def _hit(doc_id, score):
    from rungs.core.retrieval import Hit

    return Hit(id=doc_id, title=doc_id, score=score, why="a test double")


def _ranking(k=1.0, flip="no"):
    # Three pages whose order a knob changes: k above 2 puts c first, flip reverses the list.
    hits = [_hit("a", 3.0), _hit("b", 2.0), _hit("c", 1.0 + k)]
    hits.sort(key=lambda h: (-h.score, h.id))
    return hits[::-1] if flip == "yes" else hits


def test_a_panel_shows_the_function_at_its_knobs_and_a_drag_redraws_it():
    panel = reranking(_ranking, reference={"k": 1.0, "flip": "no"}, k=Slider(3.0, 0.0, 5.0, 0.5),
                      flip=Choice("no", ("no", "yes")))
    text = panel.text()
    assert text.splitlines()[0].split() == ["k=1", "flip=no", "k=3", "flip=no"]
    assert "c" in text.splitlines()[1] and "↑2" in text.splitlines()[1]  # c moved from 3rd to 1st
    assert repr(panel).startswith("[controls k · flip: drag them in a running notebook; shown here at k=3 flip=no]")
    bundle = panel._repr_mimebundle_()
    assert bundle["text/plain"] == repr(panel) and WIDGET_VIEW in bundle
    panel.widget()
    panel._controls["k"].value = 1.0  # what a drag does
    assert panel.values["k"] == 1.0 and "↑" not in panel._view.value
    panel.set(flip="yes")
    assert panel._controls["flip"].value == "yes" and "↑2" in panel._view.value


def test_a_knob_refuses_what_it_cannot_take_by_name():
    with pytest.raises(BadArgument, match="starts inside its range"):
        Slider(7, 0, 5, 1)
    with pytest.raises(BadArgument, match="step"):
        Slider(1.0, 0.0, 5.0, 0.0)
    with pytest.raises(BadArgument, match="one of its options"):
        Choice("maybe", ("any", "all"))
    panel = Panel(lambda k: f"k is {k}", k=Slider(60, 0, 200, 1))
    assert panel.text(k=5) == "k is 5"
    with pytest.raises(BadArgument, match="whole steps"):
        panel.text(k=2.5)  # RRF's k moves in whole steps: never cut to 2 without a word
    with pytest.raises(BadArgument, match="no knob 'q'"):
        panel.text(q=1)
    with pytest.raises(BadArgument, match="reference"):
        reranking(_ranking, reference={"window": 3}, k=Slider(1.0, 0.0, 5.0, 0.5))


def test_a_setting_the_function_refuses_is_said_in_the_tables_place():
    def render(k):
        if k > 3:
            raise BadArgument("k above 3 is refused here")
        return f"k {k}"

    panel = Panel(render, k=Slider(1.0, 0.0, 5.0, 1.0))
    panel.widget()
    panel.set(k=4.0)
    assert "BadArgument: k above 3 is refused here" in panel._view.value


def test_describe_writes_knobs_as_a_short_label():
    assert describe({"k1": 0.30, "b": 0.75, "match": "any"}) == "k1=0.3 b=0.75 match=any"


QUESTIONS = [{"id": f"q{i}", "question": f"t{i}", "relevant": {f"p{i}": 2}} for i in range(6)] + \
            [{"id": "q9", "question": "t9", "relevant": {}}]  # no page answers: skipped, as every metric does


def test_compare_shows_the_questions_that_moved_and_the_one_paired_test():
    a = {f"q{i}": [f"x{i}", f"p{i}"] for i in range(6)} | {"q9": []}   # each answer at rank 2
    b = dict(a) | {"q4": ["p4"], "q1": ["x1"], "q0": ["x0", "y0", "p0"]}  # one up, one lost, one down a rank
    seen = compare(a, b, QUESTIONS, labels=("base", "new"), limit=2)
    moved = seen.moved()
    assert [r["id"] for r in moved] == ["q1", "q4", "q0"]  # the largest change first, ties by id
    assert moved[1]["first_a"] == (2, "p4") and moved[1]["first_b"] == (1, "p4") and moved[0]["first_b"] == (None, None)
    assert seen.test == metrics.paired_test(metrics.per_question(a, QUESTIONS), metrics.per_question(b, QUESTIONS))
    text = str(seen)
    assert "q1 " in text and "q4 " in text and "q0 " not in text and "… and 1 more moved" in text
    assert "not found" in text and "3 questions equal, 1 improved, 2 degraded" in text
    assert "no measurable difference" in text


def test_compare_refuses_what_it_cannot_read():
    with pytest.raises(RungsError):
        compare({}, {}, QUESTIONS)  # no ranking for the questions: metrics says which
    with pytest.raises(BadArgument, match="metric"):
        compare({}, {}, QUESTIONS, metric="MAP@7")
    with pytest.raises(BadArgument, match="labels"):
        compare({}, {}, QUESTIONS, labels=("only one",))


def test_a_function_that_raises_is_said_in_the_tables_place_never_a_stale_table():
    # Finding (issue 43): a render raising a built-in error moved the slider and left the last table standing.
    def render(k):
        return f"k {10 // (3 - k)}"  # k = 3 divides by zero

    panel = Panel(render, k=Slider(1, 0, 5, 1))
    panel.widget()
    panel.set(k=3)
    assert panel.values["k"] == 3 and "k 5" not in panel._view.value
    assert "your function raised ZeroDivisionError at k=3" in panel._view.value
    panel.set(k=2)
    assert "k 10" in panel._view.value  # and the next move draws again


def test_a_whole_number_slider_takes_only_its_steps():
    # Finding (issue 43): a whole-number slider of step 3 took 2, a value no drag can reach.
    panel = Panel(lambda k: f"k is {k}", k=Slider(0, 0, 9, 3))
    assert panel.text(k=6) == "k is 6"
    with pytest.raises(BadArgument, match="steps of 3 from 0: give one of 0, 3, 6, 9, not 2"):
        panel.text(k=2)
    with pytest.raises(BadArgument, match="starts on one of its steps"):
        Slider(4, 0, 9, 3)
    with pytest.raises(BadArgument, match=r"0, 3, 6, 9, … 3000000000"):
        Slider(0, 0, 3 * 10**9, 3).check(1, "k")  # named without listing a billion steps


def test_a_whole_number_knob_is_labelled_as_itself_however_large():
    # Probe (issue 43): describe wrote ints with « g » (a float): 10**400 raised OverflowError from the panel.
    assert describe({"k": 60, "n": 10**7}) == "k=60 n=10000000"
    panel = Panel(lambda k: f"k {k > 1}", k=Choice(10**400, (10**400, 1)))
    assert repr(panel).startswith("[controls k: drag them in a running notebook; shown here at k=an integer of about 400")


def test_a_panel_whose_function_fails_at_its_start_still_displays_saying_so():
    # Probe (issue 43): repr(panel) (a cell's text/plain) raised the function's error: no controls drawn at all.
    panel = Panel(lambda k: f"k {10 // (3 - k)}", k=Slider(3, 0, 5, 1))
    assert "your function raised ZeroDivisionError at k=3" in repr(panel)
    assert "your function raised ZeroDivisionError" in panel._repr_mimebundle_()["text/plain"]
    refused = Panel(lambda k: (_ for _ in ()).throw(BadArgument("k is refused here")), k=Slider(1, 0, 5, 1))
    assert repr(refused).endswith("BadArgument: k is refused here")
    with pytest.raises(ZeroDivisionError):
        panel.text()  # a direct call still gives the traceback

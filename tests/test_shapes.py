"""The lab's helpers, the display and the passages, fed the wrong shape: a named refusal, never a raw exception.

One test per finding of issue 32 that sits in ``rungs.lab`` (metrics, tuning, questions, judges),
``rungs.core.display`` or ``rungs.passages``: what a learner calls from a notebook cell with what
they happen to have — a generator, a dict where a hit was expected, an empty sweep, a column
misspelt, scores near the largest float. Each was reproduced on the code before its fix (a
``KeyError``, ``TypeError``, ``AttributeError``, ``ValueError``, an infinite mean, page 0);
``test_properties_shapes`` then feeds the same doors generated shapes.
"""

import json
import math

import matplotlib
import pytest

matplotlib.use("Agg")

from rungs import bm25, passages
from rungs.core import display
from rungs.core.errors import BadArgument
from rungs.core.retrieval import Hit
from rungs.lab import judges, metrics, questions, tuning
from rungs.model import ScriptedClient

QUESTIONS = [{"id": "q1", "question": "badge perdu", "relevant": {"a": 2}},
             {"id": "q2", "question": "congés payés", "relevant": {"b": 1}}]


# ---------------------------------------------------------------- metrics

def test_evaluate_reads_questions_given_as_a_generator():
    # A22: evaluate took len() of the questions after iterating them: a generator gave a TypeError.
    run = lambda q: ["a", "b"]
    assert metrics.evaluate(run, (q for q in QUESTIONS)) == metrics.evaluate(run, QUESTIONS)
    assert metrics.per_question(run, iter(QUESTIONS)) == metrics.per_question(run, QUESTIONS)


@pytest.mark.parametrize("rows", [[{"system": "a"}], [{"system": "a", "mean": 0.5, "diff": 0.1}], [5], "rows", 3,
                                  [{"system": 3, "mean": 0.5, "diff": None}]])
def test_comparison_table_names_rows_that_are_not_what_compare_returns(rows):
    # A22: comparison_table([{"system": "a"}]) raised KeyError: 'diff'.
    with pytest.raises(BadArgument, match="rows"):
        metrics.comparison_table(rows)


def test_comparison_table_still_prints_what_compare_returns():
    runs = {"base": lambda q: ["a", "b"], "other": lambda q: ["b", "a"]}
    table = metrics.comparison_table(metrics.compare(runs, QUESTIONS, baseline="base", trials=100))
    assert table.splitlines()[1].startswith("base") and "other" in table


BIG = 1.7e308


def test_means_of_finite_scores_near_the_largest_float_stay_finite():
    # C12: a sum before the division made the mean of two scores of 1.7e308 infinite.
    big = {"big": lambda ranking, relevant: BIG}
    assert metrics.evaluate(lambda q: ["a"], QUESTIONS, metrics=big)["big"] == pytest.approx(BIG)
    rows = metrics.compare({"a": lambda q: ["a"], "b": lambda q: ["a"]}, QUESTIONS, baseline="a",
                           metric=lambda r, rel: BIG, trials=100)
    assert all(math.isfinite(r["mean"]) for r in rows)
    assert metrics.mean([BIG, BIG, BIG]) == pytest.approx(BIG) and metrics.mean([]) == 0.0


def test_a_paired_test_of_scores_near_the_largest_float_is_finite_or_says_why_not():
    # C12: mean_a inf, diff -inf, sd NaN from finite scores.
    out = metrics.paired_test({"q1": BIG, "q2": BIG, "q3": 0.0}, {"q1": BIG, "q2": 0.0, "q3": 0.0}, trials=100)
    for key in ("mean_a", "mean_b", "diff", "sd", "p"):
        assert math.isfinite(out[key]), (key, out)
    assert out["mean_a"] == pytest.approx(BIG / 3 * 2) and out["diff"] == pytest.approx(-BIG / 3)
    assert all(math.isfinite(x) for x in out["ci95"]) and out["degraded"] == 1
    # b − a of -1.7e308 and 1.7e308 is no float: said, not turned into an infinite difference.
    with pytest.raises(BadArgument, match="too large for a float"):
        metrics.paired_test({"q1": BIG, "q2": BIG}, {"q1": -BIG, "q2": -BIG}, trials=100)


def test_a_paired_test_of_ordinary_scores_is_what_it_was():
    # The scaling that keeps huge scores finite divides by 1 for scores of at most 1: the same numbers, bit for bit.
    a = {"q1": 0.5, "q2": 1.0, "q3": 0.25, "q4": 0.0}
    b = {"q1": 1.0, "q2": 1.0, "q3": 0.5, "q4": 0.2}
    out = metrics.paired_test(a, b, trials=1000)
    assert (out["n"], out["improved"], out["degraded"], out["equal"]) == (4, 3, 0, 1)
    assert out["diff"] == pytest.approx(0.2375) and out["mean_a"] == pytest.approx(0.4375)


# ---------------------------------------------------------------- tuning's drawings

def _frame(rows):
    import pandas as pd

    return pd.DataFrame(rows)


@pytest.mark.parametrize("rows, said", [([], "empty"), ([{"k1": 1.2, "b": 0.75}], "'MRR'"),
                                        ([{"k1": 1.2, "MRR": 0.5}], "'b'"),
                                        ([{"k1": 1.2, "b": 0.75, "MRR": "bien"}], "'MRR'")])
def test_a_heatmap_of_an_empty_sweep_or_a_missing_column_names_it(rows, said):
    # A22: a KeyError (the column) or a ValueError (argmax of an empty table).
    with pytest.raises(BadArgument, match=said):
        tuning.heatmap(_frame(rows), "k1", "b", "MRR")


@pytest.mark.parametrize("rows, values, said", [([], ["MRR"], "empty"), ([{"k1": 1.2}], ["MRR"], "'MRR'"),
                                                ([{"MRR": 0.5}], ["MRR"], "'k1'"), ([{"k1": 1, "MRR": 0.5}], "MRR",
                                                                                  "values")])
def test_a_line_of_an_empty_sweep_or_a_missing_column_names_it(rows, values, said):
    with pytest.raises(BadArgument, match=said):
        tuning.line(_frame(rows), "k1", values)


def test_heatmap_and_line_still_draw_a_sweep():
    frame = _frame([{"k1": k, "b": b, "MRR": k * b} for k in (0.9, 1.2) for b in (0.4, 0.75)])
    assert tuning.heatmap(frame, "k1", "b", "MRR").get_xlabel() == "k1"
    assert tuning.line(frame, "k1", ["MRR"]).get_xlabel() == "k1"
    with pytest.raises(BadArgument, match="frame must be a pandas DataFrame"):
        tuning.line([{"k1": 1}], "k1", ["MRR"])


# ---------------------------------------------------------------- questions

def test_known_item_questions_of_a_document_without_a_title_is_none_and_a_non_document_is_named():
    # A22: known_item_questions([{"id": "a"}]) raised KeyError: 'title'.
    assert questions.known_item_questions([{"id": "a"}]) == []
    made = questions.known_item_questions([{"id": "a", "headings": ["Congés payés annuels"]}])
    assert [q["question"] for q in made] == ["Congés payés annuels"]
    with pytest.raises(BadArgument, match="documents"):
        questions.known_item_questions([5])
    with pytest.raises(BadArgument, match="headings"):
        questions.known_item_questions([{"id": "a", "headings": "Congés payés"}])  # a string, not a list


def test_write_questions_names_a_question_without_its_fields_and_a_path_that_is_no_path(tmp_path):
    # A22: write_questions([{"id": "a"}]) raised KeyError: 'question' after opening (and emptying) the file.
    target = tmp_path / "q.jsonl"
    target.write_text("kept\n")
    with pytest.raises(BadArgument, match=r"questions\[0\]"):
        questions.write_questions([{"id": "a"}], target)
    assert target.read_text() == "kept\n"  # refused before the file is opened
    with pytest.raises(BadArgument, match="path"):
        questions.write_questions(QUESTIONS, 5)  # open(5, "w") would have written to file descriptor 5
    with pytest.raises(BadArgument, match="cannot be written"):
        questions.write_questions(QUESTIONS, tmp_path)  # a folder
    questions.write_questions(QUESTIONS, target)
    assert [json.loads(line)["id"] for line in target.read_text().splitlines()] == ["q1", "q2"]


# ---------------------------------------------------------------- judges

def test_support_over_more_passages_than_it_can_send_names_what_the_caller_can_change():
    # O2: 300 passages made a budget over decide's cap, refused as « max_state_chars », a knob support has not.
    cited = [{"id": f"p{i}", "text": "Le préavis est de trois mois."} for i in range(300)]
    with pytest.raises(BadArgument) as info:
        judges.support("Quel préavis ?", "Trois mois.", cited, ScriptedClient([]))
    said = str(info.value)
    assert "max_state_chars" not in said and "300 passages" in said and "max_chars" in said, said


# ---------------------------------------------------------------- the display

@pytest.mark.parametrize("ranking", [[{"id": "a"}], [{"score": 1.0}], [{"id": "a", "score": "haut"}], 5, "ab",
                                     [None]])
def test_ranking_table_names_a_ranking_that_holds_no_scores(ranking):
    # A22: ranking_table([{"id": "a"}]) raised KeyError: 'score'.
    with pytest.raises(BadArgument, match="ranking"):
        display.ranking_table(ranking)


def test_ranking_table_and_side_by_side_still_show_hits_and_dicts():
    shown = display.ranking_table([Hit(id="a", score=1.5, title="Congés"), {"id": "b", "score": 1}])
    assert "1.500" in shown and "Congés" in shown and "1.000" in shown


@pytest.mark.parametrize("hit", [{"id": "a"}, {"id": "a", "score": 1.0}, Hit(id="a", score=1.0, parts={"x": "y"}),
                                 5, {"id": "a", "score": 1.0, "parts": ["x"]}])
def test_parts_table_names_a_hit_without_its_parts(hit):
    # A22: parts_table({"id": "a"}) raised KeyError: 'parts'; parts of text a ValueError of the format.
    with pytest.raises(BadArgument, match="hit"):
        display.parts_table(hit)


@pytest.mark.parametrize("top", [-1, 0, 1.5, True, float("nan")])
def test_a_bump_chart_names_a_top_that_is_no_count(top):
    # A22: bump_chart(top=-1) failed inside matplotlib (« FixedLocator locations »).
    with pytest.raises(BadArgument, match="top"):
        display.bump_chart({"k=1": [{"id": "a", "score": 1.0}]}, top=top)


@pytest.mark.parametrize("rankings", [[], 5, {"k=1": 5}, {"k=1": [{"score": 1.0}]}])
def test_a_bump_chart_names_rankings_that_are_not_a_dict_of_rankings(rankings):
    with pytest.raises(BadArgument, match="rankings"):
        display.bump_chart(rankings)


# ---------------------------------------------------------------- passages

def test_text_before_the_first_page_start_is_on_page_1_not_page_0():
    # C15: bisect gave 0 for an offset before the first page start; pages are numbered from 1.
    body = "Avant la première page. " * 3 + "La page un commence ici."
    pieces = passages.split([{"id": "d", "body": body, "page_starts": [60]}], size=60, overlap=0)
    assert [p["page"] for p in pieces] == [1, 1]
    assert all(page >= 1 for p in pieces for _, page, _ in p.get("places") or [])
    unsorted = passages.split([{"id": "d", "body": body, "page_starts": [60, 0]}], size=60, overlap=0)
    # Page starts given out of order are taken in order: page 2 begins inside the second passage, at 60.
    assert [(p["page"], p.get("places")) for p in unsorted] == [(1, None), (1, [[12, 2, None]])]


@pytest.mark.parametrize("hits", [[{"id": "a#1", "score": 1.0}], ["a#1"], 5])
def test_rollup_names_hits_that_are_not_hits(hits):
    # A22: passages.rollup on dicts raised AttributeError: 'dict' object has no attribute 'id'.
    with pytest.raises(BadArgument, match="hits"):
        passages.rollup(hits, {"a#1": "a"})
    with pytest.raises(BadArgument, match="doc_of"):
        passages.rollup([Hit(id="a#1", score=1.0)], ["a"])


@pytest.mark.parametrize("given", [[{"id": "a#1", "body": "badge perdu"}], [{"id": "a#1", "doc": None, "body": "x"}],
                                   [5], 5])
def test_a_passage_retriever_names_passages_without_their_document(given):
    # A22: PassageRetriever over passages lacking « doc » raised KeyError: 'doc'.
    inner = bm25.build_index([{"id": "a#1", "body": "badge perdu"}])
    with pytest.raises(BadArgument, match="passages"):
        passages.PassageRetriever(inner, given)


@pytest.mark.parametrize("x, y, value", [("k1", "b", "k1"), ("k1", "b", "b"), ("k1", "k1", "MRR")])
def test_a_heatmap_of_a_column_over_itself_names_the_columns(x, y, value):
    # Found by the nightly shapes run: value == x made pandas' pivot raise « Grouper for 'k1' not 1-dimensional ».
    frame = _frame([{"k1": k, "b": b, "MRR": k * b} for k in (0.9, 1.2) for b in (0.4, 0.75)])
    with pytest.raises(BadArgument, match="two different knobs"):
        tuning.heatmap(frame, x, y, value)

"""The support check's threshold, turned over the benchmark's stored scores (notebook 04, section 4)."""

import json

import pytest

from rungs.core import paths
from rungs.core.errors import RungsError
from rungs.lab import judges


def test_the_table_counts_flags_as_support_does():
    # Four answers by hand: a flag is p < threshold, exactly as judges.support decides.
    rows = [{"correct": True, "p": 0.9}, {"correct": True, "p": 0.45},
            {"correct": False, "p": 0.5}, {"correct": False, "p": 0.1}]
    at = {r["threshold"]: r for r in judges.threshold_table(rows, (0.0, 0.5, 0.6))}
    assert (at[0.0]["flagged"], at[0.0]["precision"], at[0.0]["recall"]) == (0, None, 0.0)
    assert (at[0.5]["flagged"], at[0.5]["caught"], at[0.5]["false_alarms"]) == (2, 1, 1)  # 0.5 itself is not below 0.5
    assert (at[0.6]["caught"], at[0.6]["kept"], at[0.6]["wrong_kept"], at[0.6]["recall"]) == (2, 1, 0, 1.0)


def test_at_the_shipped_threshold_it_gives_the_benchmarks_own_table():
    # Two computations that share no code: the benchmark's summary and the sweep over its log.
    cells = json.loads(paths.in_checkout("benchmarks", "results", "answers.json").read_text(encoding="utf-8"))["support"]["cells"]
    (row,) = judges.threshold_table(judges.stored_support(), (0.5,))
    assert row["caught"] == cells["wrong, flagged"] and row["false_alarms"] == cells["right, flagged"]
    assert row["wrong_kept"] == cells["wrong, supported"] and row["kept"] - row["wrong_kept"] == cells["right, supported"]


def test_a_higher_threshold_flags_more_and_never_catches_less():
    table = judges.threshold_table(judges.stored_support())
    for low, high in zip(table, table[1:]):
        assert low["flagged"] <= high["flagged"] and low["caught"] <= high["caught"]


def test_a_score_that_is_no_probability_is_refused():
    with pytest.raises(RungsError):
        judges.threshold_table([{"correct": True, "p": 1.5}])
    with pytest.raises(RungsError):
        judges.threshold_table([{"correct": True, "p": 0.5}], (2,))


def test_a_judgement_says_what_it_cost():
    # Issue 29: every decision carries its Cost; notebook 04 prints it beside each live support check.
    from rungs.grounding import Cost
    from rungs.model import ScriptedClient

    said = {"text": "Oui", "logprobs": [{"token": "Oui", "logprob": -0.1, "top": {"Oui": -0.1, "Non": -2.5}}]}
    passages = [{"id": "a", "text": "Le préavis est de trois mois."}]
    checked = judges.support("Quel préavis ?", "Trois mois.", passages, ScriptedClient([said]))
    assert isinstance(checked["cost"], Cost) and checked["cost"].calls == 1 and checked["cost"].output_tokens == 0
    assert judges.support("Quel préavis ?", "x", [], ScriptedClient([]))["cost"] == Cost()  # no call, no cost
    same = judges.matches_reference("Quel préavis ?", "Trois mois.", "Trois mois.", ScriptedClient([said]))
    assert same["cost"].calls == 1

"""Numbers at the answer half's doors (issue 43): a threshold, a probability or a coverage of any real-number
type is read as its float, anything else is refused saying what is accepted; a JSON true/false where a
number belongs is refused by name (bool is an int in Python: read silently, it is a probability of 1).
No model: the shipped decision and the committed study only."""

import json
import math
from decimal import Decimal
from fractions import Fraction

import pytest

from rungs import rag
from rungs.core.errors import BadArgument, check_number
from rungs.grounding import deciding
from rungs.lab import abstention_decision, selective
from rungs.rag.decision import SHIPPED, Shipped

PROBS = [0.1, 0.5, 0.9, 0.3]


def test_a_decimal_threshold_or_coverage_is_read_as_its_float():
    # Issue 43: Decimal('0.5') was refused as « must be a number, not Decimal » (a Decimal is a number).
    assert deciding.threshold(PROBS, Decimal("0.5")) == deciding.threshold(PROBS, 0.5) == deciding.threshold(
        PROBS, Fraction(1, 2))
    assert rag.shipped().threshold(Decimal("0.5")) == rag.shipped().threshold(0.5)
    data = abstention_decision.load()
    assert abstention_decision.at_coverage(data, Decimal("0.5")) == abstention_decision.at_coverage(data, 0.5)
    assert rag.answering._check_knobs("Combien ?", "copy", 1, 100, 3, {}, None, (None, None), Decimal("0.5"),
                                      Decimal("0.25"))[:2] == (0.5, 0.25)
    assert rag.decision.signals("Combien ?", [], Decimal("0.75"))["gate"] == 0.75


@pytest.mark.parametrize("value, said", [(Decimal("NaN"), "finite"), (Decimal("sNaN"), "finite"),
                                         (Decimal("1e400"), r"1E\+400"), (Decimal("2"), "at most 1"),
                                         ("0.5", r"float\(\.\.\.\)"), (0.5 + 0j, "a Fraction or a Decimal"),
                                         (True, "bool")])
def test_a_number_that_is_no_share_is_refused_saying_what_is_accepted(value, said):
    with pytest.raises(BadArgument, match=said):
        check_number(value, "threshold", low=0.0, high=1.0)
    with pytest.raises(BadArgument, match=said):
        deciding.threshold(PROBS, value)


def _shipped_with(change) -> dict:
    data = json.loads(SHIPPED.read_text(encoding="utf-8"))
    change(data)
    return data


@pytest.mark.parametrize("where", ["probabilities", "weights", "mean", "scale"])
def test_a_json_true_in_the_shipped_decision_is_refused_by_name(where):
    # Issue 43: decision.json's probabilities [true, …] were read as 1.0, a weight of true as 1.
    def plant(d):
        (d if where == "probabilities" else d["fit"])[where][0] = True
    with pytest.raises(BadArgument, match=f"{where}.*true/false"):
        Shipped(_shipped_with(plant))


def test_true_and_false_are_no_probabilities_or_scores_but_still_labels():
    with pytest.raises(BadArgument, match="true/false"):
        deciding.threshold([True, False, 0.5], 0.5)
    with pytest.raises(BadArgument, match="true/false"):
        selective.auc([True, False, 0.3], [1, 0, 1])
    assert selective.auc([0.9, 0.1, 0.3], [True, False, True]) == 1.0  # right/wrong is a true/false


def test_judge_refuses_a_signal_outside_its_share():
    # Probe of issue 43: judge({"gate": 2, …}) decided on a P(yes) of 2 (every signal is a share or a 0/1).
    found = {"gate": 2, "overlap_best": 0.1, "overlap_all": 0.1, "keyword_found": 1.0}
    with pytest.raises(BadArgument, match="signal gate"):
        rag.shipped().judge(found)
    assert not math.isnan(rag.shipped().judge({**found, "gate": Decimal("0.9")})["p"])


def test_where_a_checked_number_goes_on_it_goes_on_as_its_float():
    # Once a Decimal passed the one check, a caller that kept its own value mixed it with floats:
    # Slider(0.5, Decimal(0), 1.0, …) and paired_test({… Decimal(1) …}) raised TypeError, holm returned Decimals.
    from rungs.core.knobs import Slider
    from rungs.lab import metrics

    assert Slider(0.5, Decimal(0), 1.0, Decimal("0.1")).check(Decimal("0.3"), "x") == 0.3
    a, b = {"q1": 1.0, "q2": 0.0, "q3": 1.0}, {"q1": 0.0, "q2": 0.0, "q3": 1.0}
    assert metrics.paired_test({**a, "q1": Decimal(1)}, b) == metrics.paired_test(a, b)
    assert all(type(p) is float for p in metrics.holm({"a": Decimal("0.01"), "b": 0.04}).values())

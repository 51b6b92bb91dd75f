"""Exercises of notebook 04 (typed decisions): the validator's issues, a probability and its coverage from logprobs,
the support check's threshold turned over the benchmark's stored scores.

Each check recomputes the truth with ``rungs.decide`` (``distribution``, ``conform``) or ``rungs.lab.judges``
(``stored_support``, ``threshold_table``) and never calls a model.
"""

from __future__ import annotations

import math

from . import Exercise, as_integer as _integer, as_number


def _fraction(answer) -> float:
    return as_number(answer, "a number between 0 and 1")


# The first token's five likeliest tokens of the notebook's exercise, with their log-probabilities.
TOP = {"Oui": -0.9, "O": -2.3, "Non": -1.0, "Le": -3.0, "N": -4.0}
NOUL = {"type": "noul", "instructions": "Le passage répond-il à la question ?"}


def _read() -> tuple[float, float]:
    from ..decide import candidates, check_questions, distribution

    question = check_questions({"q": NOUL})["q"]
    probs, coverage = distribution(TOP, candidates(question))
    return probs["true"], coverage


# ---------------------------------------------------------------- 1 · P(oui) by hand

def _judge_p(answer):
    answer = _fraction(answer)
    p, coverage = _read()
    if abs(answer - p) <= 0.001:
        return True, ("« Oui » and « O » both begin « Oui »; « Non » and « N » begin « Non »; « Le » begins "
                      "neither and is left out; then the yes share is divided by the candidates' total")
    if abs(answer - math.exp(TOP["Oui"])) <= 0.001:
        return False, "that is exp(-0.9) alone: « O » counts for « Oui » too, and the shares must be renormalised"
    only_full = math.exp(TOP["Oui"]) / (math.exp(TOP["Oui"]) + math.exp(TOP["Non"]))
    if abs(answer - only_full) <= 0.001:
        return False, "close: a token that is the beginning of a candidate (« O », « N ») counts for it too"
    if abs(answer - coverage) <= 0.001:
        return False, "that is the coverage (how much fell on any candidate), not the share of « oui » within it"
    return False, "exp() each log-probability, add up those that begin « Oui » and those that begin « Non », divide"


P_OUI = Exercise(
    name="p_oui",
    question="P(oui) from the first token's log-probabilities {Oui: -0.9, O: -2.3, Non: -1.0, Le: -3.0, N: -4.0}.",
    judge=_judge_p,
    hint_text=("a token counts for a candidate when it is the beginning of it (« O » of « Oui »); « Le » counts for "
               "nothing; P(oui) = yes mass / (yes mass + no mass), each mass a sum of exp(logprob)."),
    solution_code="""
import math
top = {"Oui": -0.9, "O": -2.3, "Non": -1.0, "Le": -3.0, "N": -4.0}
yes = math.exp(top["Oui"]) + math.exp(top["O"])
no = math.exp(top["Non"]) + math.exp(top["N"])
yes / (yes + no)
# or: decide.distribution(top, {"true": ["Oui", "oui"], "false": ["Non", "non"]})[0]["true"]""",
    solution_value=lambda: _read()[0],
    wrong_answers=[math.exp(-0.9), math.exp(-0.9) / (math.exp(-0.9) + math.exp(-1.0)), 0.5],
)


# ---------------------------------------------------------------- 2 · coverage

def _judge_coverage(answer):
    answer = _fraction(answer)
    p, coverage = _read()
    if abs(answer - coverage) <= 0.001:
        return True, ("about nine tenths of the first token's probability fell on a candidate: above the default "
                      "min_coverage of 0.5, so the reading is trusted")
    if abs(answer - sum(math.exp(v) for v in TOP.values())) <= 0.001:
        return False, "« Le » begins neither « Oui » nor « Non »: it is the share that did not fall on a candidate"
    if abs(answer - p) <= 0.001:
        return False, "that is P(oui), the share of « oui » within the candidates; coverage is the candidates' total"
    return False, "add exp(logprob) of every token that begins a candidate, and nothing else"


COVERAGE = Exercise(
    name="coverage",
    question="The coverage of the same first token: the share of its probability that fell on « Oui » or « Non ».",
    judge=_judge_coverage,
    hint_text="coverage = the sum of exp(logprob) over the tokens that begin a candidate (« Oui », « O », « Non », « N »).",
    solution_code="""
import math
top = {"Oui": -0.9, "O": -2.3, "Non": -1.0, "Le": -3.0, "N": -4.0}
sum(math.exp(top[t]) for t in ("Oui", "O", "Non", "N"))""",
    solution_value=lambda: _read()[1],
    wrong_answers=[sum(math.exp(v) for v in TOP.values()), 1.0, math.exp(-0.9) + math.exp(-1.0)],
)


# ---------------------------------------------------------------- 3 · how many issues?

REPLY = {"repond": "oui", "section": {"choice": "Congés", "probs": {"Congés": 0.5, "Frais": 0.5}},
         "pertinence": {"score": 2, "probs": {"0": 0.1, "1": 0.2, "2": 0.6, "3": 0.1}}, "urgence": 1}
TYPED = {
    "repond": {"type": "noul", "instructions": "Le passage répond-il à la question du salarié ?",
               "criteria": {"true": "il contient la réponse", "false": "il ne la contient pas"}},
    "section": {"type": "choice", "instructions": "À quelle section du livret ce passage appartient-il ?",
                "criteria": {"Congés": "congés, RTT, absences autorisées", "Rémunération": "paie, primes, avantages",
                             "Frais": "notes de frais, déplacements", "Autre": "tout le reste"}},
    "pertinence": {"type": "score", "instructions": "Dans quelle mesure le passage répond-il à la question ?",
                   "criteria": ["hors sujet", "même thème, ne répond pas", "répond en partie", "répond exactement"]},
}


def _issues() -> int:
    from ..decide import conform

    return len(conform(REPLY, TYPED)[1])


def _judge_issues(answer):
    answer, truth = _integer(answer), _issues()
    if answer == truth:
        return True, ("a word where a probability goes, probabilities for only two of the four options, and an id "
                      "nobody asked about; the score is fine")
    if answer < truth:
        return False, "more than that: read each answer, and the reply's keys too (is every key a question asked?)"
    return False, "fewer: the score answer is valid, and a choice's missing options are one issue, not one each"


CONFORM_ISSUES = Exercise(
    name="conform_issues",
    question="How many issues does decide.conform list for the reply of the exercise?",
    judge=_judge_issues,
    hint_text="answers, issues = decide.conform(reply, typed); len(issues) — then read each issue.",
    solution_code="""
answers, issues = decide.conform(reply, typed)
for issue in issues:
    print(issue)
len(issues)""",
    solution_value=_issues,
    wrong_answers=[1, 2, 4],
)


# ---------------------------------------------------------------- 4 · what a reader without a flag can trust

def _row(threshold: float) -> dict:
    from ..lab.judges import stored_support, threshold_table

    return threshold_table(stored_support(), (threshold,))[0]


def _kept_wrong_share() -> float:
    row = _row(0.5)
    return row["wrong_kept"] / row["kept"]


def _judge_kept(answer):
    answer, truth = _fraction(answer), _kept_wrong_share()
    row = _row(0.5)
    if abs(answer - truth) <= 0.005:
        return True, (f"{row['wrong_kept']} of the {row['kept']} answers shown without a flag are wrong, against "
                      f"{row['wrong']} of {row['wrong'] + row['right']} before the check: no flag is not a guarantee")
    if abs(answer - row["wrong"] / (row["wrong"] + row["right"])) <= 0.005:
        return False, "that is the share wrong among all checked answers, before any flag: keep only the unflagged"
    if row["flagged"] and abs(answer - row["caught"] / row["flagged"]) <= 0.005:
        return False, "that is the share wrong among the flagged answers (the precision); the question asks about the others"
    if abs(answer - row["wrong_kept"] / row["wrong"]) <= 0.005:
        return False, "that is the share of the wrong answers that slipped through; divide by the answers kept instead"
    return False, "wrong answers kept ÷ answers kept, at threshold 0.5"


KEPT_WRONG = Exercise(
    name="kept_wrong",
    question="At threshold 0.5, what share of the answers shown without a flag are wrong (to 2 decimals)?",
    judge=_judge_kept,
    hint_text="in the row of threshold 0.5: wrong_kept ÷ kept. Compare it with the share wrong before the check.",
    solution_code="""
row = judges.threshold_table(judges.stored_support(), [0.5])[0]
answer = round(row["wrong_kept"] / row["kept"], 2)""",
    solution_value=lambda: round(_kept_wrong_share(), 2),
    wrong_answers=[lambda: round(_row(0.5)["wrong"] / (_row(0.5)["wrong"] + _row(0.5)["right"]), 2),
                   lambda: round(_row(0.5)["caught"] / _row(0.5)["flagged"], 2), 0.0],
)


# ---------------------------------------------------------------- 5 · a threshold that catches most

RECALL_WANTED = 0.8


def _lowest_for_recall() -> float:
    from ..lab.judges import stored_support, threshold_table

    table = threshold_table(stored_support(), [i / 100 for i in range(101)])
    return next(r["threshold"] for r in table if r["recall"] is not None and r["recall"] >= RECALL_WANTED)


def _judge_recall(answer):
    answer = _fraction(answer)
    row, lowest = _row(answer), _lowest_for_recall()
    if row["recall"] is None or row["recall"] < RECALL_WANTED:
        return False, (f"at {answer:g} the check catches {row['caught']} of the {row['wrong']} wrong answers: "
                       f"fewer than {RECALL_WANTED:.0%}; raise it")
    if answer > lowest + 0.01 + 1e-9:
        return False, (f"at {answer:g} it catches {row['caught']} of {row['wrong']}, but a lower threshold does too, "
                       "with fewer right answers flagged: lower it in steps of 0.01")
    return True, (f"at {answer:g} it catches {row['caught']} of the {row['wrong']} wrong answers and flags "
                  f"{row['false_alarms']} of the {row['right']} right ones: most of what it catches is a false alarm")


RECALL_80 = Exercise(
    name="recall_80",
    question=(f"The lowest threshold (in steps of 0.01) at which the check catches at least {RECALL_WANTED:.0%} "
              "of the wrong answers."),
    judge=_judge_recall,
    hint_text="judges.threshold_table(stored, [i / 100 for i in range(101)]): the first row whose recall reaches 0.8.",
    solution_code="""
table = judges.threshold_table(judges.stored_support(), [i / 100 for i in range(101)])
answer = next(r["threshold"] for r in table if r["recall"] >= 0.8)""",
    solution_value=_lowest_for_recall,
    wrong_answers=[0.5, 0.3, 1.0],
)


EXERCISES = {ex.name: ex for ex in (CONFORM_ISSUES, P_OUI, COVERAGE, KEPT_WRONG, RECALL_80)}

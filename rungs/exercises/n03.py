"""Exercises of notebook 03 (answers with sources): the decoder, the marking rule, a citation that proves nothing.

Each check recomputes the truth with ``rungs`` — the decoder, ``rungs.lab.answers.score_answer``, the benchmark's log —
and never calls a model.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from . import Exercise, as_integer as _integer, as_names as _names


# ---------------------------------------------------------------- 1 · which replies does the decoder accept?

REPLIES = {"fenced": '```\n{"answer": "Oui.", "sources": ["rtt"]}\n```',
           "trailing prose": '{"answer": "Oui.", "sources": ["rtt"]} Bonne journée !',
           "number id": '{"answer": "Oui.", "sources": [3]}',
           "blank answer": '{"answer": "  ", "sources": []}',
           "null sources": '{"answer": "Oui.", "sources": null}'}


def _accepted() -> list[str]:
    from ..core.replies import UnusableReply
    from ..rag import decode

    out = []
    for name, reply in REPLIES.items():
        try:
            decode(reply)
            out.append(name)
        except UnusableReply:
            pass
    return out


def _judge_accepted(answer):
    given, truth = set(_names(answer)), set(_accepted())
    unknown = given - set(REPLIES)
    if unknown:
        return False, f"{sorted(unknown)} are not names of the five replies: {sorted(REPLIES)}"
    if given == truth:
        return True, ("one whole fence is allowed and an integer id is an id (compared as text); prose after "
                      "the object, a blank answer and sources that are not a list are unusable")
    if given > truth:
        return False, "one of these is refused: try each with rag.decode and read the UnusableReply"
    if given < truth:
        return False, "the decoder accepts more than that: a fence around the whole object is not prose"
    return False, "some of these are refused and one accepted reply is missing: try each with rag.decode"


ACCEPTED_REPLIES = Exercise(
    name="accepted_replies",
    question="Which of the five replies of the notebook does rag.decode accept?",
    judge=_judge_accepted,
    hint_text=("call rag.decode on each reply inside try/except rag.UnusableReply; a reply is accepted when "
               "no exception is raised."),
    solution_code="""
accepted = []
for name, reply in replies.items():
    try:
        rag.decode(reply)
        accepted.append(name)
    except rag.UnusableReply as err:
        print(f"{name}: {err}")
accepted""",
    solution_value=_accepted,
    wrong_answers=[["fenced", "number id", "trailing prose"], ["number id"], list(REPLIES)],
)


# ---------------------------------------------------------------- 2 · why is an answer wrong?

QUESTION_ID, MODEL_ANSWER = "q011", "5 jours par an"


@cache
def _question() -> dict:
    from ..lab.handbook import load_questions

    return next(q for q in load_questions() if q["id"] == QUESTION_ID)


def _missing() -> list[str]:
    from ..lab.answers import score_answer

    scored = score_answer(MODEL_ANSWER, _question(), [])
    return [fact for fact, found in scored["facts"].items() if not found]


def _judge_missing(answer):
    given, truth = set(_names(answer)), set(_missing())
    facts = set(_question()["key_facts"])
    if not given <= facts:
        return False, f"write the key facts exactly as q['key_facts'] lists them: {sorted(facts)}"
    if given == truth:
        return True, ("the answer states the paid-leave part of the limit (5 days) and misses the RTT part: a "
                      "right fact is not a right answer when the question's reference holds several")
    if given > truth:
        return False, "one of these is in the answer: score_answer folds case and accents, and reads « 5 jours »"
    return False, "more than that is missing: print ev.score_answer(answer, q, [])['facts']"


MISSING_FACTS = Exercise(
    name="missing_facts",
    question="Which key facts of q011 does the answer « 5 jours par an » miss?",
    judge=_judge_missing,
    hint_text="ev.score_answer('5 jours par an', by_qid['q011'], [])['facts'] maps each key fact to found or not.",
    solution_code="""
scored = ev.score_answer("5 jours par an", by_qid["q011"], [])
[fact for fact, found in scored["facts"].items() if not found]""",
    solution_value=_missing,
    wrong_answers=[["5 jours | cinq jours"], ["60 jours | soixante jours"], []],
)


# ---------------------------------------------------------------- 3 · wrong, yet well cited

def _log() -> Path:
    from ..core import paths

    return paths.in_checkout("benchmarks", "results", "answers.jsonl", what="the answer benchmark's log")


def _well_cited_wrong() -> int:
    log = {}
    for line in _log().read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        log[r["config"], r["id"]] = r  # one line per answer (config, id)
    return sum(1 for (config, _), r in log.items()
               if config == "notebook 03" and r["answerable"] and not r["abstained"] and not r["correct"]
               and r["citation_precision"] == 1)


def _judge_well_cited_wrong(answer):
    answer, truth = _integer(answer), _well_cited_wrong()
    if answer == truth:
        return True, ("each of these cites only pages that hold the evidence or help, and still says the wrong "
                      "thing: the citation check passes, the claim is not checked")
    if answer > truth:
        return False, ("too many: keep the configuration « notebook 03 » only, answers that are not « je ne sais pas », and "
                       "citation_precision == 1")
    return False, "too few: did you keep every wrong answer whose citation_precision is exactly 1?"


WRONG_BUT_WELL_CITED = Exercise(
    name="wrong_but_well_cited",
    question="In the benchmark's log, how many « notebook 03 » answers are wrong although every cited page is useful?",
    judge=_judge_well_cited_wrong,
    hint_text=("read the log line by line with json.loads, one answer per (config, id); then count "
               "answerable, not abstained, not correct, citation_precision == 1."),
    solution_code="""
log = {}
for line in paths.in_checkout("benchmarks", "results", "answers.jsonl").read_text(encoding="utf-8").splitlines():
    r = json.loads(line)
    log[r["config"], r["id"]] = r
sum(1 for (config, _), r in log.items() if config == "notebook 03" and r["answerable"]
    and not r["abstained"] and not r["correct"] and r["citation_precision"] == 1)""",
    solution_value=_well_cited_wrong,
    wrong_answers=[0, 155, -1],
)


EXERCISES = {ex.name: ex for ex in (ACCEPTED_REPLIES, MISSING_FACTS, WRONG_BUT_WELL_CITED)}

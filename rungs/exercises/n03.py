"""Exercises of notebook 03 (answers with sources): pointing, the gate's probability, a lead that restates the
question, the mark, the three checks, the passage knobs, the decoder.

Each check recomputes the truth with ``rungs`` — the prompt's numbered sentences, the gate's reading of the first
token (``rungs.grounding.logprobs``), ``rungs.rag.pointing.restates``, ``rungs.lab.answers.score_answer``, the
rung's checks run on a scripted reply, ``rungs.lab.sending`` over the judged questions, the decoder, the
benchmark's log — and never calls a model.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from . import AnswerShape, Exercise, as_integer as _integer, as_names as _names, as_number as _number


# ---------------------------------------------------------------- 1 · which replies does the decoder accept?

REPLIES = {"fenced": '```\n{"answer": "Oui.", "sources": ["rtt"]}\n```',
           "trailing prose": '{"answer": "Oui.", "sources": ["rtt"]} Bonne journée !',
           "number id": '{"answer": "Oui.", "sources": [3]}',
           "blank answer": '{"answer": "  ", "sources": []}',
           "null sources": '{"answer": "Oui.", "sources": null}'}


def _accepted() -> list[str]:
    from ..grounding.replies import UnusableReply
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
def _question(qid: str = QUESTION_ID) -> dict:
    from ..lab.handbook import load_questions

    return next(q for q in load_questions() if q["id"] == qid)


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
    return False, "more than that is missing: print answers.score_answer(answer, q, [])['facts']"


MISSING_FACTS = Exercise(
    name="missing_facts",
    question="Which key facts of q011 does the answer « 5 jours par an » miss?",
    judge=_judge_missing,
    hint_text="answers.score_answer('5 jours par an', by_qid['q011'], [])['facts'] maps each key fact to found or not.",
    solution_code="""
scored = answers.score_answer("5 jours par an", by_qid["q011"], [])
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


# ---------------------------------------------------------------- the core: point, pass the checks, turn the cut

@cache
def _handbook():
    from ..hybrid import answer_retriever
    from ..lab.handbook import load_pages, load_questions

    pages = load_pages()
    by_id = {p["id"]: p for p in pages}
    retriever = answer_retriever(pages)  # the notebook's retriever: the same passages, the same prompt
    questions = load_questions()
    return {q["id"]: q for q in questions}, {q["id"]: [by_id[h.id] for h in retriever.search(q["question"], limit=4)]
                                              for q in questions}, by_id


@cache
def _answering_sentences() -> tuple[int, ...]:
    from .. import rag
    from ..lab.answers import score_answer

    questions, passages, _ = _handbook()
    q = questions["q001"]
    sent = rag.prepare_passages(passages["q001"])
    return tuple(s["n"] for s in rag.sentences_for(q["question"], sent) if score_answer(s["text"], q, [])["correct"])


def _judge_point(answer):
    n, truth = _integer(answer), _answering_sentences()
    if n in truth:
        return True, ("that sentence states the key fact on its own: pointing at it is the whole answer, and code "
                      "copies it word for word")
    return False, "that sentence does not say how many days a month: read the numbered lines of the prompt again"


POINT = Exercise(
    name="point",
    question="Which numbered sentence of q001's prompt answers the question on its own?",
    judge=_judge_point,
    hint_text="look for the sentence that holds « 2,5 jours »: its number is in square brackets at the start of its line.",
    solution_code="""
sentences = rag.sentences_for(q["question"], sent)
[s["n"] for s in sentences if answers.score_answer(s["text"], q, [])["correct"]]""",
    solution_value=lambda: _answering_sentences()[0],
    wrong_answers=[4, 8, 0],
)


NIGHT = ("q016", ("horaires", "travail-de-nuit"))


def _outcome(reply: dict) -> tuple[str, bool]:
    """What the rung does with ``reply`` in the quoted mode for q016: refused (which check), or shown and marked."""
    from .. import rag
    from ..grounding import Status
    from ..lab.answers import score_answer
    from ..model import ScriptedClient

    questions, _, by_id = _handbook()
    q = questions[NIGHT[0]]
    text = json.dumps(reply, ensure_ascii=False)
    # The same reply twice: the repair round trip gets no better.
    out = rag.answer(q["question"], [by_id[i] for i in NIGHT[1]], ScriptedClient([text, text]),
                     mode="quoted", constrain=False)
    if out.status in (Status.REFUSED, Status.UNAVAILABLE):
        return f"refused ({out.reason})", False
    return f"shown: {out.text!r}", score_answer(out.text, q, list(out.cited))["correct"]


def _judge_passing(answer):
    if not isinstance(answer, dict):
        raise AnswerShape(f'give a dict like {{"answer": "…", "quotes": [{{"source": "…", "text": "…"}}]}}, '
                          f"not {type(answer).__name__}")
    said, right = _outcome(answer)
    if said.startswith("refused"):
        return False, f"the rung {said}: a quote must be the passage's own words, every figure in what it cites"
    if not right:
        return False, f"every check passed and the answer is still wrong ({said}): the mark caught what no check can"
    return True, f"every check passed and the mark says right ({said})"


PASSING_QUOTE = Exercise(
    name="passing_quote",
    question="Write a quoted-mode reply for q016 that the three checks accept and the mark calls right.",
    judge=_judge_passing,
    hint_text=("copy a few words of Travail de nuit or of Horaires exactly as the page writes them, and answer with a "
               "figure those words hold: the night shift at Corbas starts at 21 h."),
    solution_code="""
answer = {"answer": "À 21 h.", "quotes": [{"source": "travail-de-nuit", "text": "entre 21 h et 6 h"}]}""",
    solution_value=lambda: {"answer": "À 21 h.", "quotes": [{"source": "travail-de-nuit", "text": "entre 21 h et 6 h"}]},
    wrong_answers=[{"answer": "À 21 h.", "quotes": [{"source": "travail-de-nuit", "text": "l'équipe de nuit commence à 21 h"}]},
                   {"answer": "À 12 h 30.", "quotes": [{"source": "horaires", "text": "après-midi (12 h 30 – 20 h)"}]},
                   {"answer": "À 21 h.", "quotes": [{"source": "planning-corbas", "text": "nuit (21 h – 4 h 30)"}]}],
)


# ---------------------------------------------------------------- the core: the gate's probability, read

#: The first token's most likely tokens, as the gate's call returned them (log-probabilities): « O » begins
#: « Oui », « N » begins « Non », « Je » begins neither.
TOP = {"O": -0.22, "N": -1.83, "Oui": -4.6, "Je": -5.3, "Non": -6.1}


def _gate_p() -> float:
    from ..grounding.logprobs import YES_NO, distribution

    return distribution(TOP, {k: list(v) for k, v in YES_NO.items()})[0]["true"]


def _judge_gate_p(answer):
    import math

    p, truth = _number(answer, "a probability"), _gate_p()
    if abs(p - truth) <= 0.005:
        return True, ("every token that begins « Oui » counts for yes, every one that begins « Non » for no, and the "
                      "two are renormalised: « Je » counts for neither, so the shares add up to 1 without it")
    yes = sum(math.exp(v) for t, v in TOP.items() if "Oui".startswith(t))
    if abs(p - math.exp(TOP["O"])) <= 0.005:
        return False, "the token « Oui » counts for yes too: every token that begins the word, « O » and « Oui » alike"
    if abs(p - yes) <= 0.005:
        return False, "that is yes's share of everything; the gate renormalises over yes and no only"
    return False, "add exp(logprob) of the tokens that begin « Oui », the same for « Non », and divide yes by both"


GATE_P = Exercise(
    name="gate_p",
    question="What P(yes) does the gate read from the first token's log-probabilities TOP?",
    judge=_judge_gate_p,
    hint_text=("math.exp turns a log-probability into a probability; « O » and « Oui » begin « Oui », « N » and "
               "« Non » begin « Non »; divide yes by yes + no."),
    solution_code="""
import math
top = {"O": -0.22, "N": -1.83, "Oui": -4.6, "Je": -5.3, "Non": -6.1}
yes = sum(math.exp(v) for t, v in top.items() if "Oui".startswith(t))
no = sum(math.exp(v) for t, v in top.items() if "Non".startswith(t))
yes / (yes + no)""",
    solution_value=_gate_p,
    wrong_answers=[lambda: __import__("math").exp(TOP["O"]), 0.5, 0.17],
)


# ---------------------------------------------------------------- the core: a lead-in that says nothing

RESTATE_QUESTION = "q002"
LEADS = {"the date": "Avant le 1er mars.",
         "the question again": "Il faut poser ses congés d'été avant une date.",
         "no": "Non.",
         "a wrong season": "Avant la fin de l'hiver.",
         "its topic": "Les congés d'été."}


def _restating() -> list[str]:
    from ..rag.pointing import restates

    question = _question(RESTATE_QUESTION)["question"]
    return [name for name, lead in LEADS.items() if restates(lead, question)]


def _judge_restates(answer):
    given, truth = set(_names(answer)), set(_restating())
    if not given <= set(LEADS):
        return False, f"{sorted(given - set(LEADS))} are not names of the five leads: {sorted(LEADS)}"
    if given == truth:
        return True, ("those say only the question's own words; « Avant la fin de l'hiver. » says new words and is "
                      "kept — wrong, and no check of provenance can tell")
    if "a wrong season" in given:
        return False, "« Avant la fin de l'hiver. » is wrong, but not an echo: it holds words the question does not"
    if given > truth:
        return False, "a yes or a no, or a lead with a figure of its own, is an answer: it is never dropped"
    return False, "some lead holds only the question's words (stop words out, stemmed): call rag.pointing.restates"


RESTATES = Exercise(
    name="restates",
    question="Which of the five leads does rag.pointing.restates call an echo of q002's question?",
    judge=_judge_restates,
    hint_text=("rag.pointing.restates(lead, question) for each lead, with question = by_qid['q002']['question']; "
               "keep the names of those it returns True for."),
    solution_code="""
q = by_qid["q002"]["question"]
[name for name, lead in leads.items() if rag.pointing.restates(lead, q)]""",
    solution_value=_restating,
    wrong_answers=[list(LEADS), ["the question again"], ["the question again", "its topic", "a wrong season"]],
)


CUT = {"max_passages": 4, "max_chars": 400}


@cache
def _facts_cut() -> list[str]:
    from ..lab.sending import what_is_sent

    questions, passages, _ = _handbook()
    lost = []
    for qid, q in questions.items():
        full, cut = (what_is_sent(q, passages[qid], **setting) for setting in ({"max_passages": 4}, CUT))
        if full["facts_sent"] and not cut["facts_sent"]:
            lost.append(qid)
    return lost


@cache
def _facts_missing_at_cut() -> int:
    from ..lab.sending import what_is_sent

    questions, passages, _ = _handbook()
    return sum(what_is_sent(q, passages[qid], **CUT)["facts_sent"] is False for qid, q in questions.items())


def _solution_cut() -> int:
    # The learner's way, through the sweep's rows (the check counts question by question, with what_is_sent).
    from ..lab.sending import sweep

    questions, passages, _ = _handbook()
    rows = sweep(list(questions.values()), passages, [{"max_passages": 4, "max_chars": 1500}, CUT])
    full, cut = rows[0]["per_question"], rows[1]["per_question"]
    return sum(1 for qid in full if full[qid]["facts_sent"] and not cut[qid]["facts_sent"])


def _judge_cut(answer):
    n, truth = _integer(answer), len(_facts_cut())
    if n == truth:
        return True, ("on each of these the model read every key fact at the default cut and can no longer read one "
                      "at 400 characters: it cannot be right about what it is not sent")
    if n == _facts_missing_at_cut():
        return False, "that counts the questions already missing a key fact at 1,500: keep those held at 1,500 only"
    return False, "compare, question by question, facts_sent at the default cut and at max_chars=400"


CUT_FACTS = Exercise(
    name="cut_facts",
    question="On how many questions does cutting passages at 400 characters lose a key fact the default cut sent?",
    judge=_judge_cut,
    hint_text=("the rows of sending.sweep keep per_question: a question counts when facts_sent is True in the "
               "default row and False in the row cut at 400."),
    solution_code="""
full, cut = rows[0]["per_question"], next(r for r in rows if r["max_chars"] == 400)["per_question"]
sum(1 for qid in full if full[qid]["facts_sent"] and not cut[qid]["facts_sent"])""",
    solution_value=lambda: _solution_cut(),
    wrong_answers=[_facts_missing_at_cut, 0, 155],
)


EXERCISES = {ex.name: ex for ex in (POINT, GATE_P, RESTATES, MISSING_FACTS, PASSING_QUOTE, CUT_FACTS,
                                    ACCEPTED_REPLIES, WRONG_BUT_WELL_CITED)}

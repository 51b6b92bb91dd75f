"""Judges: N4's typed yes/no questions asked about N3's answers, as a second opinion on a mark.

What it is for: two judgements a reader may want about an answer. ``support``:
do the passages it cites say what it claims (N4 checking N3)? ``matches_reference``:
does it say what the reference answer says (N4 grading N3, beside the
key-fact rule of ``rungs.lab.answers``)? Both are one typed question each,
answered through the logprobs backend of ``rungs.decide.ask``, and both report
when the model was not sure enough to answer instead of inventing a value.

How far to trust them is measured, not assumed: ``benchmarks/bench_answers.py``
reports their agreement with the rule and with a careful reading. The support
check's threshold is a knob, and the benchmark's log keeps every P(oui):
``stored_support`` reads those scores back and ``threshold_table`` turns the
knob over them, with no model (taught in notebook 04, section 4).

Cost: one short model call (one token of answer) per judgement; the table, a
pass over the stored answers per threshold.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..core import paths
from ..core.documents import check_documents, passage_text
from ..core.errors import BadArgument, check_int, check_number, check_query, check_text
from ..decide import MAX_STATE_BUDGET, MAX_STATE_CHARS, ask
from ..grounding.answer import Cost
from ..grounding.cut import below, passes
from .sending import read_log

#: N4 checking N3: one yes/no question about an answer and the passages it cites.
SUPPORT = {"type": "noul",
           "instructions": "La réponse est-elle entièrement justifiée par les passages cités ?",
           "criteria": {"true": "chaque fait de la réponse (chiffres, délais, conditions) est écrit dans les passages",
                        "false": "la réponse dit quelque chose que les passages ne disent pas, ou le contredit"}}


def support(question: str, answer: str, passages: list, client=None, *, threshold: float = 0.5,
            max_chars: int = 600) -> dict:
    """How likely is it that the cited ``passages`` support ``answer``? P(oui), read from logprobs.

    N3 checks that a citation points at a passage that was sent; it cannot check that the passage
    says what the answer claims. This asks the model, as a typed yes/no question (``SUPPORT``), and
    flags the answer as « not supported by its source » when P(oui) < ``threshold``. A judgement
    the model would not give with enough certainty (low coverage) is reported, not invented
    (``supported`` is then None); ``cost`` is what the call took. Cost: one short call (one token of answer).
    """
    check_query(question, name="question")
    check_text(answer, "answer")
    threshold = check_number(threshold, "threshold", low=0.0, high=1.0)
    check_int(max_chars, "max_chars", low=1, high=MAX_STATE_CHARS)
    passages = check_documents(passages, name="passages")
    most = MAX_STATE_BUDGET // (max_chars + 200)  # each passage sent with up to 200 characters of framing
    if len(passages) > most:  # said in the knobs of this call, before decide refuses a budget it never saw set
        raise BadArgument(f"{len(passages)} passages are more than one support check sends: at most {most} at "
                          f"max_chars={max_chars}; pass the passages the answer cites, or a smaller max_chars")
    if not passages:
        return {"p": None, "supported": False, "trusted": True, "note": "no passage cited: nothing supports it",
                "cost": Cost()}
    state = {"question": question, "réponse": answer,
             "passages cités": [passage_text(p)[:max_chars] for p in passages]}
    decision = ask(state, {"support": SUPPORT}, client, backend="logprobs",
                   max_state_chars=max(MAX_STATE_CHARS, len(passages) * (max_chars + 200)))
    out, p = decision.answers["support"], decision.answers["support"].get("p")
    return {"p": p, "supported": passes(p, threshold), "trusted": out["trusted"],
            "note": out.get("note", ""), "cost": decision.cost}


#: N4 grading N3: does an answer say what the reference answer says? (A second opinion on the key-fact rule.)
SAME_AS_REFERENCE = {"type": "noul",
                     "instructions": "La réponse donnée dit-elle la même chose que la réponse de référence, "
                                     "pour ce qui répond à la question ?",
                     "criteria": {"true": "elle donne les mêmes faits (chiffres, délais, conditions), même en d'autres mots",
                                  "false": "elle donne un autre fait, en oublie un qui compte, ou ne répond pas"}}


def matches_reference(question: str, answer: str, reference: str, client=None, *, threshold: float = 0.5) -> dict:
    """P(the answer says what the reference says), read from logprobs: a typed judge of N3's answers.

    ``rungs.lab.answers.score_answer`` marks an answer by a rule a learner can read (the key facts); this is
    the other way, a model asked a yes/no question — cheaper to write for new questions, harder to
    trust. ``benchmarks/bench_answers.py`` reports how often the two agree. One short call.
    """
    check_query(question, name="question")
    check_text(answer, "answer")
    check_text(reference, "reference")
    threshold = check_number(threshold, "threshold", low=0.0, high=1.0)
    state = {"question": question, "réponse de référence": reference, "réponse donnée": answer}
    decision = ask(state, {"same": SAME_AS_REFERENCE}, client, backend="logprobs")
    out, p = decision.answers["same"], decision.answers["same"].get("p")
    return {"p": p, "same": passes(p, threshold), "trusted": out["trusted"], "note": out.get("note", ""),
            "cost": decision.cost}


#: The thresholds notebook 04 turns the support check over (0.5 is the shipped one).
THRESHOLDS = (0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7)


def stored_support(config: str = "notebook 03", path=None) -> list[dict]:
    """The benchmark's support checks read back: one row per checked answer, ``{"id", "correct", "p"}``.

    ``benchmarks/bench_answers.py`` appends the support check's line after the answer's own, so the
    last line of each (configuration, question) is the one that counts. An answer the check could not
    read (low coverage, ``p`` None) or that abstained is left out, as in the benchmark's own table.
    """
    check_text(config, "config")
    file = paths.in_checkout("benchmarks", "results", "answers.jsonl", what="the answer benchmark's log") \
        if path is None else path
    last = read_log(file)  # a later line replaces an earlier one: the support check's
    rows = [{"id": r["id"], "correct": r["correct"], "p": r["support"]["p"]}
            for (c, _), r in sorted(last.items()) if c == config and not r.get("abstained")
            and isinstance(r.get("support"), Mapping) and r["support"].get("p") is not None]
    for r in rows:  # what the table below divides and compares: a verdict and a probability
        if not isinstance(r["correct"], bool):
            raise BadArgument(f"path {file}: the answer {r['id']!r} has no verdict 'correct' (true or false)")
        check_number(r["p"], f"path {file}: the support check's p of {r['id']!r}", low=0.0, high=1.0)
    if not rows:
        raise BadArgument(f"no stored support check for configuration {config!r} in {file.name}: "
                          "run benchmarks/bench_answers.py --only support first")
    return rows


def threshold_table(rows: Iterable[Mapping], thresholds: Iterable[float] = THRESHOLDS) -> list[dict]:
    """The support check's threshold turned over stored scores: what each threshold flags, catches and costs.

    ``rows`` are ``{"correct": bool, "p": P(supported)}`` (``stored_support``). An answer is flagged
    when ``p < threshold``, as ``support`` does. For each threshold: ``flagged``; ``caught``, the wrong
    answers flagged, of ``wrong``; ``false_alarms``, the right answers flagged, of ``right``; ``kept``, the
    answers shown without a flag, and ``wrong_kept`` among them. ``recall`` is caught / wrong (how much
    of what is wrong the check finds), ``precision`` caught / flagged (how often a flag is deserved;
    None when nothing is flagged). No model call: the scores are the benchmark's.
    """
    if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Iterable):
        raise BadArgument(f"rows must be a list of stored support checks (stored_support), not {type(rows).__name__}")
    rows = list(rows)
    for i, r in enumerate(rows):
        if not isinstance(r, Mapping) or not isinstance(r.get("correct"), bool):
            raise BadArgument(f"rows[{i}] must be a stored support check, {{'correct': True or False, 'p': …}}")
        check_number(r.get("p"), "a stored P(supported)", low=0.0, high=1.0)
    if isinstance(thresholds, (str, bytes, Mapping)) or not isinstance(thresholds, Iterable):
        raise BadArgument(f"thresholds must be a list of numbers between 0 and 1, not {type(thresholds).__name__}")
    wrong = sum(1 for r in rows if not r["correct"])
    table = []
    for t in thresholds:
        t = check_number(t, "threshold", low=0.0, high=1.0)
        flagged = [r for r in rows if below(r["p"], t)]  # the rule of ``support``: below the threshold is a flag
        caught = sum(1 for r in flagged if not r["correct"])
        table.append({"threshold": t, "flagged": len(flagged), "caught": caught, "wrong": wrong,
                      "false_alarms": len(flagged) - caught, "right": len(rows) - wrong,
                      "kept": len(rows) - len(flagged), "wrong_kept": wrong - caught,
                      "recall": caught / wrong if wrong else None,
                      "precision": caught / len(flagged) if flagged else None})
    return table

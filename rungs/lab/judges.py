"""Judges: N4's typed yes/no questions asked about N3's answers, as a second opinion on a mark.

What it is for: two judgements a reader may want about an answer. ``support``:
do the passages it cites say what it claims (N4 checking N3)? ``matches_reference``:
does it say what the reference answer says (N4 grading N3, beside the
key-fact rule of ``rungs.lab.answers``)? Both are one typed question each,
answered through the logprobs backend of ``rungs.decide.ask``, and both report
when the model was not sure enough to answer instead of inventing a value.

How far to trust them is measured, not assumed: ``benchmarks/bench_answers.py``
reports their agreement with the rule and with a careful reading.

Cost: one short model call (one token of answer) per judgement.
"""

from __future__ import annotations

from ..core.documents import check_documents, passage_text
from ..core.errors import check_int, check_number, check_query, check_text
from ..decide import MAX_STATE_CHARS, ask

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
    (``supported`` is then None). Cost: one short call (one token of answer).
    """
    check_query(question, name="question")
    check_text(answer, "answer")
    check_number(threshold, "threshold", low=0.0, high=1.0)
    check_int(max_chars, "max_chars", low=1, high=MAX_STATE_CHARS)
    passages = check_documents(passages, name="passages")
    if not passages:
        return {"p": None, "supported": False, "trusted": True, "note": "no passage cited: nothing supports it"}
    state = {"question": question, "réponse": answer,
             "passages cités": [passage_text(p)[:max_chars] for p in passages]}
    out = ask(state, {"support": SUPPORT}, client, backend="logprobs",
              max_state_chars=max(MAX_STATE_CHARS, len(passages) * (max_chars + 200)))["answers"]["support"]
    p = out.get("p")
    return {"p": p, "supported": None if p is None else p >= threshold, "trusted": out["trusted"],
            "note": out.get("note", "")}


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
    check_number(threshold, "threshold", low=0.0, high=1.0)
    state = {"question": question, "réponse de référence": reference, "réponse donnée": answer}
    out = ask(state, {"same": SAME_AS_REFERENCE}, client, backend="logprobs")["answers"]["same"]
    p = out.get("p")
    return {"p": p, "same": None if p is None else p >= threshold, "trusted": out["trusted"], "note": out.get("note", "")}

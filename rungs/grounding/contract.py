"""The answer contract as checks: one small named function per promise, run over every answerer.

What it is for: ``rungs.grounding.answer`` says what an ``Answer`` promises; these
functions check it on an answer, each on its own, the way
``rungs.core.contract`` checks a ranking (and scikit-learn checks an
estimator). The suite discovers every ``Answerer`` subclass of the package,
drives each one with scripted model replies — good ones, hostile ones, garbage
— and runs every check on every answer it returns: whatever the model writes,
the promises hold. A reader can hold an answerer of their own to them in one
call: ``check_answerer(factory)`` drives ``factory(client)`` with every double of
``rungs.grounding.doubles`` and names each breach.

The promises:

- ``check_status`` — the status is one of the four; an answered text is words,
  not « je ne sais pas »; a no-answer shows exactly « je ne sais pas » and
  claims nothing (no citation, quote or figure);
- ``check_refusal_not_shown`` — unavailable or refused: nothing shown, a reason given;
- ``check_cost`` — a ``Cost``; a refusal took at least one call; an answer that
  took none (« copy », the floor that asks no model) shows its quotes and no
  other word; no call, no token;
- ``check_cited_were_sent`` — every cited id was sent; an answer cites something;
- ``check_quotes_found`` — every quote is in the passage it names, word for word;
- ``check_figures_supported`` — every figure of a shown answer is held by a
  cited passage, a quote or the question, and ``figures`` says so, figure by figure;
- ``check_no_scaffolding`` — no fence of the prompt (« <extrait », a nonce, a
  « <<<SOURCE 2 » line) reaches the reader: found in the text by the contract
  itself (``SCAFFOLDING``), plus any mark the answerer declares (N5's nonce).

Each raises ``AnswerContractBroken`` (never a bare ``assert``: they must still
check under ``python -O``) with what was promised and what was seen.

Cost: linear in the answer and the passages sent.
"""

from __future__ import annotations

import re

from ..core.errors import BadArgument, RungsError, check_names, check_query, short_repr
from . import claims, figures
from .abstain import NO_ANSWER, is_no_answer
from .answer import Answer, Cost, Status
from .citations import without_citations


class AnswerContractBroken(RungsError, AssertionError):
    """An answer broke a promise of the answer contract; the message says which and how."""


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise AnswerContractBroken(message)


def check_status(answer: Answer) -> None:
    _require(isinstance(answer, Answer), f"an answerer must return an Answer, not {type(answer).__name__}")
    _require(isinstance(answer.status, Status), f"status {answer.status!r} is not one of {[s.value for s in Status]}")
    if answer.status is Status.ANSWERED:
        _require(bool(answer.text.strip()), "an answered status with no text")
        _require(not is_no_answer(answer.text), "« je ne sais pas » given the status answered")
    if answer.status is Status.NO_ANSWER:
        _require(answer.text == NO_ANSWER, f"a no-answer must show « {NO_ANSWER} », not {answer.text!r:.80}")
        _require(not (answer.cited or answer.quotes or answer.figures),
                 "a no-answer claims nothing: it cites, quotes or holds figures")


def check_refusal_not_shown(answer: Answer) -> None:
    if answer.status in (Status.UNAVAILABLE, Status.REFUSED):
        _require(answer.text == "", f"a {answer.status} answer is shown: {answer.text!r:.80}")
        _require(not (answer.cited or answer.quotes), f"a {answer.status} answer cites or quotes")
        _require(bool(answer.reason.strip()), f"a {answer.status} answer gives no reason")


def check_cost(answer: Answer) -> None:
    cost = answer.cost
    _require(isinstance(cost, Cost), f"cost must be a Cost, not {type(cost).__name__}")
    if answer.status is Status.REFUSED:
        _require(cost.calls >= 1, "an answer refused without a model call")
    if answer.status is Status.ANSWERED and cost.calls == 0:  # no model: no word but the copied ones
        copied = " ".join(" ".join(q.text for q in answer.quotes).split())
        _require(bool(copied) and " ".join(answer.text.split()) == copied,
                 "an answer without a model call shows words that are not its quotes")
    if cost.calls == 0:
        _require(cost.prompt_tokens == 0 and cost.output_tokens == 0, "tokens counted without a call")


def check_cited_were_sent(answer: Answer) -> None:
    never = [c for c in answer.cited if c not in answer.sent]
    _require(not never, f"cites {never}, never sent (sent: {list(answer.sent)})")
    _require(len(set(answer.cited)) == len(answer.cited), f"cites a passage twice: {list(answer.cited)}")
    if answer.status is Status.ANSWERED:
        _require(bool(answer.cited), "an answer that cites nothing cannot be checked")


def check_quotes_found(answer: Answer) -> None:
    for q in answer.quotes:
        _require(q.source in answer.cited, f"a quote of « {q.source} », which the answer does not cite")
        _require(q.source in answer.sent and claims.found(q.text, answer.sent[q.source]),
                 f"the quote « {q.text[:80]} » is not in passage « {q.source} »")


def check_figures_supported(answer: Answer) -> None:
    if answer.status is not Status.ANSWERED:
        return
    held = [answer.sent[c] for c in answer.cited if c in answer.sent] + [q.text for q in answer.quotes] + \
        [answer.question]
    missing = figures.unsupported(without_citations(answer.text), held)
    _require(not missing, f"the answer shows figure(s) {missing} that nothing it cites holds")
    listed = {f.figure for f in answer.figures}
    said = [f.text for f in figures.figures(without_citations(answer.text))]
    _require(all(s in listed for s in said), f"figures {said} are not all listed in answer.figures {sorted(listed)}")
    _require(not answer.unsupported, f"figures listed as unsupported in a shown answer: {answer.unsupported}")


#: Every fence a prompt of the package frames a passage with — N3's « <extrait id=…> … </extrait> », N5's
#: « <<<SOURCE 2 …>>> » — found in the text by the contract itself, whatever the answerer declares; a model
#: may echo one in capitals (« <EXTRAIT »), so it is read without case.
SCAFFOLDING = re.compile(r"</?\s*extrait\b|<<<|>>>", re.IGNORECASE)


def check_no_scaffolding(answer: Answer) -> None:
    text = answer.text.casefold()
    found = [m.group(0) for m in SCAFFOLDING.finditer(answer.text)]
    declared = [m for m in answer.fences if m and str(m).casefold() in text]  # a nonce only the rung knows
    marks = list(dict.fromkeys(found + declared))
    _require(not marks, f"scaffolding: the answer shows the prompt's fences {marks}: a passage's frame is not "
                        "an answer")


CHECKS = (check_status, check_refusal_not_shown, check_cost, check_cited_were_sent, check_quotes_found,
          check_figures_supported, check_no_scaffolding)


def check_answer(answer: Answer) -> None:
    """Every check of the contract on one answer; a breach is named by its check (« check_quotes_found: … »)."""
    for check in CHECKS:
        try:
            check(answer)
        except AnswerContractBroken as err:
            raise AnswerContractBroken(f"{check.__name__}: {err}") from None


#: The question ``check_answerer`` asks by default: one the doubles' passages can answer.
QUESTION = "Combien de jours de congés par mois ?"


def check_answerer(factory, question: str = QUESTION, behaviours=None) -> dict:
    """Hold an answerer to the contract in one call: ``factory(client)`` is built once per way a model can
    behave (``rungs.grounding.doubles.BEHAVIOURS``: faithful, abstaining, forging, inventing, echoing the
    fence, garbage, nothing, down, miscounting), asked ``question``, and every check run on its answer.

    Returns ``{behaviour: answer}``; raises ``AnswerContractBroken`` naming each behaviour and breach,
    a raw exception from ``ask`` included (an answerer says what became of a question in its status).
    """
    from .doubles import BEHAVIOURS, Behaving  # the doubles import the answerer's room: read when driven only

    chosen = _check_driving(factory, question, behaviours, BEHAVIOURS)
    answers, breaches = {}, []
    for behaviour in chosen:
        try:
            answers[behaviour] = factory(Behaving(behaviour)).ask(question)
            check_answer(answers[behaviour])
        except AnswerContractBroken as err:
            breaches.append(f"{behaviour}: {err}")
        except Exception as err:  # noqa: BLE001 - any exception is the breach: ask never raises for a model
            breaches.append(f"{behaviour}: ask raised {type(err).__name__} ({str(err)[:120]}): an answerer "
                            "returns an Answer whose status says what became of the question")
    _require(not breaches, "the answerer breaks the contract —\n" + "\n".join(breaches))
    return answers


def _check_driving(factory, question, behaviours, known) -> tuple[str, ...]:
    """The caller's half, refused before any run (never blamed on the answerer): a factory to call, a question
    with words in it (a blank one is « je ne sais pas » whatever the answerer does: it would test nothing),
    and behaviours that are some of ``known``."""
    if not callable(factory):
        raise BadArgument(f"factory must be a function of a model client that returns an answerer, "
                          f"not {type(factory).__name__}")
    if not check_query(question, name="question").strip():
        raise BadArgument("question must have words: a blank question is answered « je ne sais pas » by any "
                          "answerer, so the contract would check nothing")
    chosen = known if behaviours is None else check_names(behaviours, "behaviours")
    unknown = [b for b in chosen if b not in known]
    if not chosen or unknown:
        raise BadArgument(f"behaviours must be some of {', '.join(known)}; "
                          + (f"not {short_repr(unknown[0])}" if unknown else "none were given: nothing would be checked"))
    return tuple(chosen)

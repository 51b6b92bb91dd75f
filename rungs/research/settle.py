"""What became of a research run, in the one shape: the ``Answer`` built from the loop's state and its report.

What it is for: the loop (``rungs.research.loop``) gathers and streams; this
says what the reader got, as every answering rung does
(``rungs.grounding.Answer``): the status, the text exactly as shown, the pages
sent and cited, a quote behind each citation, each figure and what holds it,
every note, the cost of every call — and, in ``trace``, N5's own record of the
run. The sink is told the end too: the quotes and the sentences withheld
(``checked``), « je ne sais pas » when that is the answer, and ``done``.

Cost: linear in the report and the sources it cites.
"""

from __future__ import annotations

from ..grounding import claims
from ..grounding.abstain import NO_ANSWER
from ..grounding.answer import Answer, AnswerNotGrounded, AnswerUnavailable, Status
from ..grounding.citations import cited_numbers
from ..grounding.events import event
from .checks import quotes as _quotes

#: How many removed citations, and withheld sentences, the notes list one by one (the rest are counted).
NOTED = 20


def settle(state, report: dict | None, mode: str, *, status: Status = Status.NO_ANSWER, reason: str = "") -> Answer:
    """The run's ``Answer``. ``report``: what ``report.write`` returned, or None when there was no synthesis
    (then ``status`` and ``reason`` say why: an empty question, no page found, a deadline already passed)."""
    trace, notes = state.trace, state.notes
    base = {"question": state.question, "by": f"research {mode}", "trace": trace}
    if report is not None:
        base["sent"] = dict(report["texts"])
        _note_removed(report, notes, trace)
        status, reason, fields = _judged(state, report)
        base.update(fields)
    if status is Status.NO_ANSWER:
        base["text"] = NO_ANSWER
        if report is None:  # what is shown is the answer, whatever it is (the gate shows a report's own)
            state.sink(event("delta", text=NO_ANSWER))
    elif status is not Status.ANSWERED:
        trace["error"] = (AnswerNotGrounded if status is Status.REFUSED else AnswerUnavailable)(reason)
    trace["seconds"] = state.ledger.elapsed()
    answer = Answer(status=status, reason=reason, notes=tuple(notes), cost=state.ledger.cost, **base)
    state.sink(event("checked", quotes=[{"n": _number(report, q.source), "source": q.source, "text": q.text}
                                              for q in answer.quotes], withheld=trace["withheld"]))
    state.sink(event("done", seconds=trace["seconds"]))
    return answer


def _judged(state, report: dict) -> tuple[Status, str, dict]:
    """The status, the reason, and the fields of a shown report (text, cited, quotes, figures)."""
    gate, numbered, texts, outcome = report["gate"], report["numbered"], report["texts"], report["outcome"]
    if outcome == "abstained":
        state.notes.append("the model found no answer in the gathered sources")
        return Status.NO_ANSWER, "the model found no answer in the gathered sources", {}
    if outcome == "refused":
        first = gate.withheld[0]["reason"] if gate.withheld else "every citation pointed at nothing gathered"
        return Status.REFUSED, f"every sentence of the report was withheld (first: {first})", {}
    if outcome != "shown":
        state.notes.append("no model produced an answer: nothing is shown rather than something invented")
        return Status.UNAVAILABLE, "no model wrote a usable report: " + "; ".join(
            n for n in state.notes if n.startswith("synthesis")), {}
    if gate.abstained:
        state.notes.append("a « je ne sais pas » among the report's sentences was left out: the others answer")
    cited = [numbered[n] for n in cited_numbers(gate.text) if n in numbered]
    quotes = tuple(q for sentence in gate.shown for q in _quotes(sentence, numbered, texts))
    figures = claims.figure_checks(gate.text, {pid: texts[pid] for pid in cited}, quotes, state.question)
    return Status.ANSWERED, "", {"text": gate.text, "cited": tuple(cited), "quotes": quotes, "figures": figures}


def _note_removed(report: dict, notes: list[str], trace: dict) -> None:
    """Every removed citation and every withheld sentence, a note each (the first ``NOTED``, then a count)."""
    gate, check = report["gate"], report["filter"]
    if gate is None:
        return
    removed = list(check.removed) + list(gate.removed)
    trace["removed"], trace["withheld"] = removed, list(gate.withheld)
    for group in removed[:NOTED]:
        notes.append(f"citation {group!r} removed: it points at nothing that was gathered")
    if len(removed) > NOTED:
        notes.append(f"… and {len(removed) - NOTED} more citations removed")
    for w in gate.withheld[:NOTED]:
        said = w["text"] if len(w["text"]) <= 80 else w["text"][:79] + "…"
        notes.append(f"sentence withheld: « {said} » — {w['reason']}")
    if len(gate.withheld) > NOTED:
        notes.append(f"… and {len(gate.withheld) - NOTED} more sentences withheld")


def _number(report, source: str) -> int | None:
    return next((n for n, pid in report["numbered"].items() if pid == source), None) if report else None

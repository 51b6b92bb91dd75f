"""N3 in one call: passages in, an ``Answer`` out — asked, read strictly, checked, repaired once, or refused.

What it is for: ``answer`` is the rung. It sends the prepared passages
(``rungs.rag.build``), reads each reply strictly (``rungs.rag.read``), asks again
up to ``attempts`` times when a reply cannot be read, checks the claims of the
one it can (``rungs.grounding.claims.faults``: quotes found in their passages,
every figure held by a cited passage, a quote or the question), sends one
repair round trip that names a fault, and says what became of the question in
the one shape, ``rungs.grounding.Answer``:

- **answered** — every check passed; ``figures`` lists what holds each figure;
- **no answer** — the model said « je ne sais pas », or there was nothing to ask
  (an empty question, no passage: no call, no cost);
- **unavailable** — no usable reply after every attempt, or no model to ask
  (the server down, a refused key): ``reason`` says which;
- **refused** — a reply cites a passage never sent, or cites nothing, or a fault
  survived the repair: never shown, and ``reason`` says what was wrong.

A bad argument (a question over 1,000 characters, an unknown mode) is the
caller's mistake and raises ``BadArgument`` before any call.

Cost: one call per attempt, one more for a repair (``Answer.cost``); « copy »
none (one, the gate's, behind the gate). Reading
the prompt dominates; the prompt's start is reused from the server's cache
when it is the previous call's (``rungs.rag.build``).
"""

from __future__ import annotations

import re
import time

from ..core.errors import (BadArgument, RungsError, check_bool, check_client, check_int, check_number,
                           check_query)
from ..grounding import claims
from ..grounding.abstain import NO_ANSWER
from ..grounding.answer import (Answer, AnswerNotGrounded, AnswerUnavailable, Cost, Quote, QuoteNotFound, Status,
                                UnsupportedFigure)
from ..grounding.answerer import MAX_QUESTION
from ..grounding.events import adapter, event
from ..grounding.replies import UnusableReply
from ..grounding.trail import Gate
from ..model import EmptyCompletion, ModelError, TruncatedCompletion, default_client, estimate_tokens
from .copying import COPY, copy
from .decision import HANDBOOK_DECISION, check_coverage, check_hits, judges_answer, share_said, shipped, signals
from .gate import figures_of, sufficiency
from .build import MAX_CHARS, MAX_PASSAGES, build_prompt, check_prompt, prepare_passages, schema_for
from .pointing import MAX_SENTENCES, SENTENCES_SENT, sentences_for
from .prompts import repair_message
from .read import decode, ground, point
from .readers import READERS, reader

MAX_ATTEMPTS = 10  # each attempt is one more call, paid in seconds or in money
# The floor is the default: no model mode beats it by a paired test on either half (benchmarks/README.md,
# « The floor »), and a mode that does not beat its floor is not a default. What decides « je ne sais pas » is
# the decision (``rungs.rag.decision``), chosen by the protocol on the deciding half.
DEFAULT_MODE = COPY
#: The model's mode when one is asked to read (``mode=MODEL_MODE``): chosen on the deciding half, where no mode
#: was measurably better, because every sentence it shows is copied from a cited passage and checked by code
#: (benchmarks/README.md, « N3's modes »).
MODEL_MODE = "pointing-lead"
#: ``decision`` by default: the shipped decision for « copy », none for the model's modes (they were measured,
#: and chosen from, with their own « aucune » and the gate; the decision was fitted on the copy's answers).
AUTO = "auto"
DECISIONS = (AUTO, HANDBOOK_DECISION, None)
#: The sufficient-context gate's threshold by default (None: off). Chosen by the protocol — ``tuning.choose`` over
#: mode × threshold on the deciding half — in benchmarks/bench_abstain.py (benchmarks/README.md, « Knowing when
#: not to answer »).
DEFAULT_GATE: float | None = None
#: What fences a passage in every prompt: a shown answer never holds it (the contract checks).
FENCES = ("<extrait", "</extrait>")


def _decision(decision, mode: str, hits):
    """``decision`` as ``answer`` applies it: « auto » read for the mode, the copy's only, refused by name else;
    with the hits it reads as a list, and the shipped fit read, before the gate's call is paid."""
    if decision is not None and (not isinstance(decision, str) or decision not in DECISIONS):
        raise BadArgument(f"decision must be one of 'auto', 'handbook' or None (off), not {decision!r}"[:200])
    copied = not reader(mode).model  # the decision was fitted on a reader no model writes for
    decision = (HANDBOOK_DECISION if copied else None) if decision == AUTO else decision
    if decision is not None and not copied:
        raise BadArgument(f"decision={decision!r} is fitted on the copy's answers (mode='copy'); the model's modes "
                          "say « je ne sais pas » by their own « aucune », or behind the gate (gate=…)")
    if decision is not None:
        hits, _ = check_hits(hits), shipped()
    return decision, hits


def _check_knobs(question, mode, attempts, max_tokens, sentences_sent, flags, prompt, sinks, gate, coverage):
    """Every knob checked once, before any call (the provider bills every character of the prompt): the gate's
    threshold and the coverage as the floats they stand for (a Fraction or a numpy float is a threshold too), the
    reader the mode names, and the one sink (``on_event``, N3's older protocol, told through ``events.adapter``)."""
    check_query(question, name="question", max_chars=MAX_QUESTION)
    read = reader(mode)
    check_int(attempts, "attempts", low=1, high=MAX_ATTEMPTS)
    check_int(max_tokens, "max_tokens", low=1, high=100_000)
    check_int(sentences_sent, "sentences_sent", low=1, high=1000)
    for name, flag in flags.items():
        check_bool(flag, name)
    if prompt is not None:
        check_prompt(prompt)
    sink, on_event = sinks
    if sink is not None and on_event is not None:
        raise BadArgument("give sink= (one event, rungs.grounding.events) or on_event= (its older form), not both")
    if sink is not None and not callable(sink):
        raise BadArgument(f"sink must be a function of one event, not {type(sink).__name__}")
    if on_event is not None and not callable(on_event):
        raise BadArgument(f"on_event must be a function of (kind, payload), not {type(on_event).__name__}")
    gate = None if gate is None else check_number(gate, "gate", low=0.0, high=1.0)
    return gate, check_coverage(coverage), read, adapter(on_event) if on_event is not None else sink  # one protocol


def answer(question: str, passages: list[dict], client=None, *, mode: str = DEFAULT_MODE, attempts: int = 2,
           max_passages: int = MAX_PASSAGES, max_chars: int = MAX_CHARS, no_answer_rule: bool = True,
           constrain: bool = True, max_tokens: int = 300, prompt: str | None = None, check_figures: bool = True,
           sentences_sent: int = SENTENCES_SENT, collection: str | None = None, gate: float | None = DEFAULT_GATE,
           decision: str | None = AUTO, coverage: float | None = None, hits=None, sink=None, on_event=None) -> Answer:
    """Answer ``question`` from ``passages`` (dicts with an id and a text, best first): an ``Answer``.

    ``mode``: ``"copy"`` (the default): no model reads — the ``COPIED`` sentences that match best, copied
    (``rungs.rag.copying``), shown or not as ``decision`` says; or a model mode, ``"pointing-lead"``,
    ``"pointing"``, ``"quoted"`` or ``"free"`` (the package docstring says each).
    ``decision``: ``"handbook"``, the decision that ships (``rungs.rag.decision``): the gate's one call, then
    P(the copy is right) from its signals, « je ne sais pas » below the threshold that answers ``coverage`` of
    the questions it was fitted on (None: the chosen one); None: off, no call; ``"auto"`` (the default):
    ``"handbook"`` for « copy », None for the model's modes.
    ``hits``: the retriever's hits, best first (a signal of the decision; ``Rag`` passes them). ``collection``:
    what the passages come from, as the prompt names it (« de documents » by default). ``check_figures=False`` turns the figure check off — notebook 03 shows what it
    then lets through; such an answer may hold a figure nothing cited holds, listed ✗ in ``figures``.
    ``gate``: a threshold in [0, 1] turns on the sufficient-context gate (``rungs.rag.gate``): a yes/no
    question first, and below the threshold « je ne sais pas » without the answer's call (None: off).
    ``sink``: told N3's events (``rungs.grounding.events``, N5's too): ``reading`` before the call, ``writing`` at
    the first token, ``sentence`` as each pointed one arrives. ``on_event``: the older ``(kind, payload)`` form.
    """
    gate, coverage, read, sink = _check_knobs(question, mode, attempts, max_tokens, sentences_sent, {
        "no_answer_rule": no_answer_rule, "constrain": constrain, "check_figures": check_figures}, prompt,
        (sink, on_event), gate, coverage)
    decision, hits = _decision(decision, mode, hits)
    sent = prepare_passages(passages if passages is not None else [], max_passages, max_chars)
    texts = {p["id"]: p["text"] for p in sent}
    trace = {"mode": read.name, "prompt": None, "replies": [], "refused": [], "repairs": 0, "fences": FENCES}
    base = dict(question=question, sent=texts, by=f"rag {read.name}", trace=trace)
    if not question.strip() or not sent:  # nothing to ask: no call, no cost
        return Answer(status=Status.NO_ANSWER, text=NO_ANSWER, reason="nothing to ask: " + (
            "the question is empty" if not question.strip() else "no passage was given"), **base)
    if not read.model:  # the floor: no model to read; a model asked only by the gate, for the gate or the decision
        return _copied(question, sent, sentences_sent, base, client, gate, collection,
                       {"coverage": coverage, "hits": hits} if decision else None)
    asker = None
    try:
        client = check_client(client) if client is not None else default_client()
        numbered = sentences_for(question, sent, sentences_sent) if read.numbered else []
        trace["prompt"] = build_prompt(question, sent, no_answer_rule=no_answer_rule, prompt=prompt, mode=mode,
                                       sentences=numbered or None, collection=collection)
        schema = schema_for(sent, mode, numbered or None, none=no_answer_rule) if constrain else None
        asker = _Asker(client, schema, max_tokens, trace, sink, numbered, list(texts), question, hits)
        if gate is not None:
            closed = _gated(asker, gate, question, sent, numbered, collection, base)
            if closed is not None:
                return closed
        out = _settle(asker, question, sent, attempts, read, check_figures)
    except (AnswerUnavailable, ModelError) as err:
        return _failed(Status.UNAVAILABLE, err, base, asker)
    except AnswerNotGrounded as err:
        return _failed(Status.REFUSED, err, base, asker)
    if out["answer"] == NO_ANSWER:
        return Answer(status=Status.NO_ANSWER, text=NO_ANSWER, cost=asker.cost, reason="the model found no answer in "
                      "the passages", notes=tuple(trace["refused"]), **base)
    quotes = tuple(Quote(q["source"], q["text"]) for q in out["quotes"])
    return Answer(status=Status.ANSWERED, text=out["answer"], cited=tuple(out["sources"]), quotes=quotes,
                  figures=claims.figure_checks(out["answer"], {c: texts[c] for c in out["sources"]}, quotes, question),
                  notes=tuple(trace["refused"]), cost=asker.cost, **base)


def _copied(question, sent, sentences_sent, base, client, gate, collection, deciding) -> Answer:
    """« copy »: the sentences ranked first, copied and cited, their figures checked as any answer's. No call,
    unless the gate or the decision (``deciding``) is on: the gate's one question, over the sentences
    pointing-lead would read, then the decision on its P(yes) and what was copied."""
    started, cost = time.perf_counter(), Cost()
    numbered = sentences_for(question, sent, sentences_sent)
    base["trace"]["sentences"] = numbered
    out = copy(numbered)
    if gate is not None or deciding is not None:
        try:
            client = check_client(client) if client is not None else default_client()
        except ModelError as err:
            return _failed(Status.UNAVAILABLE, err, base, None)
        cost, closed, failed = _gate(client, "pointing", gate, question, sent, numbered, collection, base,
                                     "nothing was copied")
        if closed is not None:
            return closed
        if failed is not None:  # no answer's call follows to say the model is down: the gate's failure says it
            return _failed(Status.UNAVAILABLE, failed, base, None).with_(cost=cost)
    if deciding is not None and out["quotes"]:
        closed = _decided(question, out["quotes"], base, cost, **deciding)
        if closed is not None:
            return closed
    if not out["quotes"]:
        return Answer(status=Status.NO_ANSWER, text=NO_ANSWER, cost=cost, reason="nothing to copy: the passages "
                      "hold no sentence", **base)
    quotes = tuple(Quote(q["source"], q["text"]) for q in out["quotes"])
    took = Cost(seconds=max(0.0, time.perf_counter() - started - cost.seconds))
    return Answer(status=Status.ANSWERED, text=out["answer"], cited=tuple(out["sources"]), quotes=quotes,
                  figures=claims.figure_checks(out["answer"], {c: base["sent"][c] for c in out["sources"]}, quotes,
                                               question), cost=cost + took, notes=tuple(base["trace"]["refused"]),
                  **base)


def _decided(question, quotes, base, cost, *, coverage, hits) -> Answer | None:
    """The decision on the gate's P(yes) and what was copied, in the trace: « je ne sais pas » below its
    threshold, else None (the copy is shown)."""
    verdict = shipped().judge(signals(question, quotes, base["trace"]["gate"]["p"], hits), coverage)
    base["trace"]["decision"] = verdict
    if verdict["answer"]:
        return None
    p, said = figures_of(verdict["p"], verdict["threshold"])
    return Answer(status=Status.NO_ANSWER, text=NO_ANSWER, cost=cost, reason=(
        f"the decision: P(the copy is right) = {p}, below {said}, the threshold that answers "
        f"{share_said(verdict['coverage'])} of the questions it was fitted on; the copy was not shown"),
        notes=tuple(base["trace"]["refused"]), **base)


def _gated(asker, threshold: float, question, sent, numbered, collection, base) -> Answer | None:
    """The gate before the answer's call: « je ne sais pas » without that call below the threshold, else None."""
    cost, closed, _ = _gate(asker.client, asker.mode, threshold, question, sent, numbered or None, collection, base,
                            "the answer was not asked for", notes=False)  # a failed call: the answer's own says so
    asker.cost += cost
    return None if closed is None else closed.with_(cost=asker.cost)


def _gate(client, mode, threshold, question, sent, numbered, collection, base, skipped, notes=True):
    """The gate's one question, its verdict in the trace: (its cost, « je ne sais pas » below the threshold or
    None, the error if its call failed). Every reader's gate is this one, so a copy behind the gate is read as
    pointing-lead's gate reads."""
    verdict = sufficiency(question, sent, client, mode=mode, sentences=numbered, collection=collection)
    cost, failed = verdict.pop("cost"), verdict.pop("error", None)
    base["trace"]["gate"] = {**verdict, "threshold": threshold}
    if verdict["note"]:
        base["trace"]["refused"].append(verdict["note"])
    if not Gate.of(base["trace"]["gate"]).closed:  # no threshold: asked for the decision only
        return cost, None, failed
    p, said = figures_of(verdict["p"], threshold)
    closed = Answer(status=Status.NO_ANSWER, text=NO_ANSWER, cost=cost, reason=(
        f"the gate: P(the extracts answer the question) = {p}, below its threshold {said}; {skipped}"),
        **({"notes": tuple(base["trace"]["refused"])} if notes else {}), **base)
    return cost, closed, None  # P(yes) was read: the call did not fail


def _failed(status: Status, err: RungsError, base: dict, asker) -> Answer:
    """Unavailable or refused: nothing shown, the reason said, the error kept for ``raise_for_status``."""
    base["trace"]["error"] = err
    return Answer(status=status, reason=f"{type(err).__name__}: {err}", cost=asker.cost if asker else Cost(),
                  notes=tuple(base["trace"]["refused"]), **base)


def _settle(asker, question, sent, attempts, read, check_figures) -> dict:
    """The first readable reply, its claims checked, one repair round trip if a fault is named."""
    def check(out):  # « je ne sais pas » claims nothing: there is nothing to check
        faults = [] if out["answer"] == NO_ANSWER else claims.faults(
            out, sent, question, quotes_required=read.quotes, check_figures=check_figures)
        return _drop_lead(out, faults, asker.trace) if faults and out.get("lead") else faults
    messages = [{"role": "user", "content": asker.trace["prompt"]}]
    out, raw = asker.first(messages, attempts)
    faults = check(out)
    if faults:  # one repair round trip, naming what was not found; the server reuses what it read
        asker.trace["refused"].append("; ".join(f["reason"] for f in faults))
        asker.trace["repairs"] = 1
        messages += [{"role": "assistant", "content": raw}, {"role": "user", "content": repair_message(faults, read.name)}]
        out, _ = asker.first(messages, 1, repair=faults)
        faults = check(out)
    if faults:
        kind = QuoteNotFound if faults[0]["kind"] == "quote" else UnsupportedFigure
        raise kind("; ".join(f["reason"] for f in faults) + " (after one repair round trip)")
    return out


def _lead_judge(question, trace, hits):
    """What a lead-in must rest on: sentences the shipped decision judges to answer (the gate's P(yes) if asked)."""
    hits = check_hits(hits)
    return lambda quotes: judges_answer(question, quotes, (trace.get("gate") or {}).get("p"), hits)


def _drop_lead(out: dict, faults: list[dict], trace: dict) -> list[dict]:
    """A lead-in with a figure nothing cited holds is dropped, said in the notes: the sentences stay the answer."""
    trace["refused"].append("lead-in dropped: " + "; ".join(f["reason"] for f in faults))
    out.update(answer=" ".join(q["text"] for q in out["quotes"]), lead="")
    return []


def _usage_cost(client, seconds: float) -> Cost:
    """A streamed call's cost, from what the client says it used (``last_usage``), every number checked."""
    usage = tuple(getattr(client, "last_usage", None) or (0, 0))
    reused = usage[2] if len(usage) > 2 else getattr(client, "last_reused", 0)
    return Cost.of_counts(usage[0], usage[1], reused, seconds)


class _Asker:
    """One call after another on the same request, each reply read and settled (grounded, or pointed)."""

    def __init__(self, client, schema, max_tokens, trace, sink, numbered, sent_ids, question="", hits=None):
        self.client, self.schema, self.max_tokens, self.trace = client, schema, max_tokens, trace
        self.sink, self.numbered, self.sent_ids = sink, numbered, sent_ids
        self.mode, self.reader = trace["mode"], reader(trace["mode"])
        self.question = question  # a lead-in is shown only on sentences the decision judges to answer
        self.judge = _lead_judge(question, trace, hits) if self.reader.lead else None
        self.cost = Cost()

    def first(self, messages, attempts, repair=None):
        """The first usable reply in ``attempts`` calls, settled: (answer object, raw text)."""
        refused = self.trace["refused"]
        for _ in range(attempts):
            try:
                text = self._call(messages)
            except (EmptyCompletion, TruncatedCompletion) as err:
                self.trace["replies"].append("")
                refused.append(f"{type(err).__name__}: {err}")
                continue
            self.trace["replies"].append(text)
            try:
                reply = decode(text, self.mode)
            except UnusableReply as err:
                refused.append(str(err))
                continue
            if self.reader.numbered:
                out = point(reply, self.numbered, self.question, self.judge)
                if out.get("dropped"):
                    refused.append(out["dropped"])
                return out, text
            return ground(reply, self.sent_ids), text
        if repair:  # the repair's reply could not be read: the fault it was asked to fix stands
            kind = QuoteNotFound if repair[0]["kind"] == "quote" else UnsupportedFigure
            raise kind("; ".join(f["reason"] for f in repair) + " (the repair's reply could not be read)")
        raise AnswerUnavailable(f"no usable reply in {attempts} attempt(s): " + "; ".join(refused))

    def _call(self, messages) -> str:
        started = time.perf_counter()
        try:
            if self.sink is None or not self.reader.numbered:
                result = self.client.chat(messages, json_schema=self.schema, max_tokens=self.max_tokens)
                self.cost += Cost.of_call(result, time.perf_counter() - started)
                return result.text
            text = self._streamed(messages)
        except ModelError:  # a call that failed was still made: its seconds count, its tokens are unknown
            self.cost += Cost(calls=1, seconds=time.perf_counter() - started)
            raise
        self.cost += _usage_cost(self.client, time.perf_counter() - started)
        if not text.strip():
            raise EmptyCompletion("the model streamed no text")
        return text

    def _streamed(self, messages) -> str:
        """Streamed: each sentence is shown as soon as its number is complete (a number is never half shown)."""
        self.sink(event("reading", tokens=estimate_tokens(messages), sentences=len(self.numbered)))
        by_n, shown, pieces = {s["n"]: s for s in self.numbered}, set(), []
        for piece in self.client.stream(messages, max_tokens=self.max_tokens, json_schema=self.schema):
            if not pieces:
                self.sink(event("writing"))
            pieces.append(piece)
            if not self.reader.streams:  # a lead-in is shown once checked, and the sentences with it
                continue
            for m in re.finditer(r"(\d+)\s*[,\]]", "".join(pieces).partition("[")[2]):
                n = int(m.group(1))
                if n in by_n and n not in shown and len(shown) < MAX_SENTENCES:
                    shown.add(n)
                    self.sink(event("sentence", source=by_n[n]["source"], text=by_n[n]["text"]))
        return "".join(pieces)

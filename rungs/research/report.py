"""The report, streamed a checked sentence at a time: nothing reaches the reader before it is checked.

What it is for: N5 writes its report from fenced, numbered sources while the
reader watches. A streamed piece cannot be taken back, so the stream goes
through two gates before the reader (the sink) sees anything:

1. ``CitationFilter`` (``rungs.research.ground``): a « [ » is held until it
   closes, then kept if every number in it was gathered, removed if not;
2. ``SentenceGate`` (here): the text is held until a **sentence is complete**
   (the collection's one splitter, ``rungs.core.sentences``: the next sentence
   has begun, or the stream ended), then its exponent citations are read
   (« illimités^9 »), its citations written the one way, and it is checked
   (``rungs.research.checks``: no fence echoed, no citation of a source never
   gathered, a gathered source cited, every figure held by a source it cites or
   the question). A sentence that passes is shown; one that fails is
   **withheld**, and the reason is a note.

So the report a reader sees holds no figure nothing cited holds, no forged
citation and no fence — and ``Answer.text`` is exactly what was shown. A
citation left alone after a sentence (« … par mois. [1] ») is that sentence's;
one that opens a sentence is that sentence's, unless the sentence before it
in the paragraph cites nothing. « Je ne sais pas » is held aside: the report is
the no-answer if nothing else is shown.

A report **cut short** — by the synthesis's token budget (the client says it
wrote ``STAGE_TOKENS["synthesis"]`` tokens) or by the cap on a reply's
characters — ends with a note, and its unfinished last sentence is not shown.
A sentence of more than ``MAX_SENTENCE_CHARS`` characters is withheld (a
run-on no reader can check); the gate holds no more than that.

Cost: linear in the report (the splitter runs on the held text only, which is
at most one sentence and the next one's start).
"""

from __future__ import annotations

import re
import time

from ..core.sentences import spans
from ..grounding.abstain import NO_ANSWER, is_no_answer
from ..grounding.answer import Cost
from ..grounding.citations import CITATION, cited_numbers, without_citations
from ..grounding.events import event
from ..grounding.replies import MAX_REPLY_CHARS
from ..model import BadResponse
from .checks import sentence_faults
from .ground import CitationFilter, canonical, exponents, piece_text

#: The longest sentence the gate holds: longer than a whole source sent (1,500 characters), it is no claim.
MAX_SENTENCE_CHARS = 1500
#: What the citation filter leaves where it removed a citation (a private-use character: never in a page, never shown).
FORGED = "\ue000"
_ENDS = re.compile(r"[.!?…\n]")
_WORD = re.compile(r"\w")
_BLANK = re.compile(r"\n[^\S\n]*\n")
_LEADING = re.compile(r"(?:\s*" + CITATION.pattern + r")+")
_FINISHED = re.compile(r"[.!?…»\"]\s*(?:" + CITATION.pattern + r"\s*)*$")


class SentenceGate:
    """Holds the filtered text until a sentence is complete, checks it, then shows it or withholds it.

    ``numbered``: source number → page id; ``texts``: page id → the text sent; ``marks``: the fences'
    marks no shown sentence may hold; ``emit``: shows a piece of text; ``told``: told of each sentence
    withheld (``{"text", "reason"}``).
    """

    def __init__(self, numbered: dict[int, str], texts: dict[str, str], question: str, marks, emit, told=None):
        self.numbered, self.question, self.marks, self.emit = numbered, question, tuple(marks), emit
        self.sources = {n: texts[pid] for n, pid in numbered.items()}
        self.told = told or (lambda _: None)
        self.pending, self.dropping, self.waiting = "", False, False
        self.carry: list[int] = []  # the citations of the last shown sentence of this paragraph
        self.new_paragraph, self.paragraph_break = True, False
        self.shown: list[str] = []  # each shown sentence, as shown
        self.withheld: list[dict] = []
        self.removed: list[str] = []  # exponent citations of sources never gathered
        self.abstained = False
        self.text = ""  # all that was shown, exactly

    def feed(self, text: str) -> None:
        self.pending += text
        if self.dropping:
            self._skip_run_on()
        elif _ENDS.search(text) or self.waiting or len(self.pending) > MAX_SENTENCE_CHARS:
            self._drain(final=False)

    def finish(self, cut: str | None = None) -> None:
        """The stream ended (``cut``: why it was cut short, or None): what is held is released or withheld."""
        if self.dropping:
            self.pending = ""
        elif cut is None:
            self._drain(final=True)
        else:
            self._drain(final=False)
            rest = self.pending.strip()
            if not self.dropping and _WORD.search(without_citations(rest)):
                if _FINISHED.search(rest):  # cut just after a full stop: the sentence was finished
                    self._drain(final=True)
                else:
                    self._withhold(rest, f"unfinished: {cut}")
        self.pending = ""
        if self.abstained and not self.shown:  # the report is the no-answer: shown as the one sentence
            self.text = NO_ANSWER
            self.emit(NO_ANSWER)

    def _drain(self, final: bool) -> None:
        """Release every complete sentence held: all of them at the end, else all before the last that has words."""
        text = self.pending
        found = spans(text) if _WORD.search(text) else []
        wordy = [i for i, (a, b) in enumerate(found) if _WORD.search(without_citations(text[a:b]))]
        stop = len(found) if final else (wordy[-1] if wordy else 0)
        cut = 0
        for i in range(stop):
            a, b = max(found[i][0], cut), found[i][1]
            if i + 1 < len(found):
                b = self._take_leading(text, a, b, found[i + 1])
            if b > a and _WORD.search(text, a, b):
                self._sentence(text[a:b], new_paragraph=bool(_BLANK.search(text, cut, a)) or not cut and
                               self.new_paragraph)
                self.new_paragraph = False
            cut = max(cut, b)
        self.pending = "" if final else text[cut:]
        if not final and stop < len(found) and found[stop][1] - found[stop][0] > MAX_SENTENCE_CHARS:
            self._withhold(text[found[stop][0]:found[stop][0] + 80] + "…",
                           f"a sentence of more than {MAX_SENTENCE_CHARS:,} characters is no claim a reader can check")
            self.pending, self.dropping = self.pending[-200:], True
        # A boundary still held may complete at the next letter: look again then, whatever the piece holds.
        self.waiting = not final and bool(_ENDS.search(self.pending))

    def _take_leading(self, text: str, a: int, b: int, following: tuple[int, int]) -> int:
        """Where this sentence ends, once it has taken the citations that open the next one, if they are its."""
        lead = _LEADING.match(text, following[0], following[1])
        if not lead:
            return b
        alone = not _WORD.search(without_citations(text[following[0]:following[1]]))
        same = not _BLANK.search(text, b, following[0])
        if alone or (same and not cited_numbers(text[a:b])):
            return lead.end()
        return b

    def _skip_run_on(self) -> None:
        """After a run-on, drop text until a sentence begins (linear: only the tail is read)."""
        found = spans(self.pending)
        if len(found) >= 2:
            self.pending, self.dropping = self.pending[found[1][0]:], False
            self.new_paragraph = True
            self._drain(final=False)
        else:
            self.pending = self.pending[-200:]

    def _sentence(self, raw: str, new_paragraph: bool) -> None:
        """One complete sentence: its exponents read, its citations written one way, checked, shown or withheld."""
        sentence, removed = exponents(re.sub(r"\s*\n\s*", " ", raw).strip(), set(self.numbered))
        forged = bool(removed) or FORGED in sentence
        sentence = canonical(re.sub(r"\s*" + FORGED, "", sentence))
        self.removed += removed
        if new_paragraph:
            self.carry, self.paragraph_break = [], True
        if is_no_answer(sentence):
            self.abstained = True  # the no-answer is the report only if nothing else is shown
            return
        own = cited_numbers(sentence)
        faults = sentence_faults(sentence, own or self.carry, self.sources, self.question, self.marks, forged)
        if faults:
            self._withhold(sentence, "; ".join(faults))
            return
        self.carry = own or self.carry
        piece = sentence if not self.shown else ("\n\n" if self.paragraph_break else " ") + sentence
        self.paragraph_break = False
        self.shown.append(sentence)
        self.text += piece
        self.emit(piece)

    def _withhold(self, sentence: str, reason: str) -> None:
        self.withheld.append({"text": sentence, "reason": reason})
        self.told(event("withheld", text=sentence, reason=reason))


# ---------------------------------------------------------------- the stream, model after model

#: What the gate says of a report, once the stream has ended.
UNCITED = "it cites none of the gathered sources"


def outcome(gate: SentenceGate, check: CitationFilter) -> str:
    """« shown » (a sentence was), « abstained » (only « je ne sais pas »), « refused » (every sentence broke a
    check), or « unusable » (nothing, or prose that cites nothing: not a report of these sources)."""
    if gate.shown:
        return "shown"
    if gate.abstained:
        return "abstained"
    broke = check.removed or gate.removed or any(w["reason"] != UNCITED for w in gate.withheld)
    return "refused" if broke else "unusable"


def stream_cost(client, seconds: float) -> Cost:
    """A stream's cost from what the client left in ``last_usage``, every number checked (« abc » is named)."""
    usage = getattr(client, "last_usage", None)
    if not isinstance(usage, (tuple, list)) or len(usage) < 2:
        raise BadResponse(f"the model client left last_usage = {usage!r:.60} after a stream: a ChatModel leaves "
                          "(tokens in, tokens out)")
    return Cost.of_counts(usage[0], usage[1], usage[2] if len(usage) > 2 else 0, seconds)


def write(chain, prompt: str, gate_for, sink, max_tokens: int) -> dict:
    """Stream the report from the first model of ``chain`` that writes a usable one.

    ``gate_for(emit)``: a fresh ``SentenceGate`` showing through ``emit``. A model that fails mid-stream, or
    whose client miscounts its tokens (``BadResponse``), is a failed call: what it showed is withdrawn (an
    event the sink shows), and the next model starts over. Returns ``{"gate", "filter", "outcome", "cut"}``
    (``outcome`` « failed » when no model wrote anything usable).
    """
    last = {"gate": None, "filter": None, "outcome": "failed", "cut": None}
    clients, notes = chain.clients, chain.notes
    for position, client in enumerate(clients):
        over = chain.ledger.over()
        if over:
            notes.append(f"synthesis: {over} before it could start")
            break
        name, more = getattr(client, "model", "a model"), position + 1 < len(clients)
        shown = []
        gate = gate_for(lambda t: (shown.append(t), sink(event("delta", text=t))))
        check = CitationFilter(set(gate.numbered), gate.feed, mark=FORGED)
        try:
            cut = _stream(client, prompt, check, gate, chain, max_tokens)
        except Exception as err:  # a model that fails mid-stream (or miscounts): the next one starts over
            notes.append(f"synthesis: {name} failed while streaming ({type(err).__name__}: {str(err)[:160]})")
            if shown or more:
                sink(event("restart" if more else "withdrawn", reason=type(err).__name__))
            continue
        last = {"gate": gate, "filter": check, "outcome": outcome(gate, check), "cut": cut}
        if last["outcome"] != "unusable":
            return last
        notes.append(f"synthesis: {name} " + ("returned nothing" if not gate.withheld else
                                              "wrote a report that cites none of the gathered sources"))
        if more:
            sink(event("restart", reason="no usable report"))
    return last


def _stream(client, prompt, check, gate, chain, max_tokens) -> str | None:
    """One model's stream through both gates; its cost recorded; returns why it was cut short, or None."""
    started, streamed, cut = time.perf_counter(), 0, None
    try:
        for delta in client.stream([{"role": "user", "content": prompt}], max_tokens=max_tokens):
            delta = piece_text(delta)
            check.feed(delta[:MAX_REPLY_CHARS - streamed])
            streamed += len(delta)
            if streamed > MAX_REPLY_CHARS:  # a stream that never ends is cut, and what came is kept
                cut = f"the report was cut at {MAX_REPLY_CHARS:,} characters"
                break
        check.finish()
        cost = stream_cost(client, time.perf_counter() - started)
    except Exception:
        check.discard()  # a half citation is dropped, never shown
        chain.ledger.record("synthesize", Cost(calls=1, seconds=time.perf_counter() - started),
                            getattr(client, "model", ""), failed=True)
        raise
    chain.ledger.record("synthesize", cost, getattr(client, "model", ""))
    if cut is None and cost.output_tokens >= max_tokens:
        cut = f"the report was cut by its token budget ({max_tokens} tokens, STAGE_TOKENS['synthesis'])"
    gate.finish(cut)
    if cut:
        chain.notes.append(f"synthesis: {cut}; its unfinished last sentence is not shown")
    return cut

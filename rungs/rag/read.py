"""How N3 reads a reply: strictly, mode by mode, and settled against what was sent.

What it is for: a reply is untrusted input. ``decode`` reads one — a bare JSON
object, or one wrapped whole in exactly one code fence (``rungs.grounding.replies``)
— in the shape of its mode; anything else is an ``UnusableReply``, and the
rung asks again. ``ground`` settles a free or quoted reply against the ids
sent (an id never sent, or an answer citing nothing, is ``AnswerNotGrounded``);
``point`` turns a pointing reply's numbers into the answer, the chosen
sentences copied by code.

Ids are compared as text (``3`` is ``"3"``); booleans are not ids; « Je ne sais
pas. » in any dress is the no-answer (``rungs.grounding.abstain``).

Cost: linear in the reply's length (capped by ``rungs.grounding.replies``).
"""

from __future__ import annotations

import re

from ..core.errors import BadArgument, short_repr
from ..grounding import claims
from ..grounding.abstain import NO_ANSWER, is_no_answer
from ..grounding.answer import AnswerNotGrounded, Quote
from ..grounding.replies import UnusableReply, parse_json, unfence
from .pointing import MAX_SENTENCES, anchor, borrowed, decode_pointing, restates
from .readers import reader
from .replies import FreeReply, PointingReply, QuotedReply


def decode(text: str, mode: str = "free") -> PointingReply | QuotedReply | FreeReply:
    """Read one reply, once, into its reader's typed shape (``Reader.reply``, ``rungs.rag.replies``): a bare JSON
    object, or one wrapped whole in exactly one code fence.

    ``free``: ``{"answer", "sources"}`` → ``FreeReply``; ``quoted``: ``{"answer", "quotes": [{"source", "text"}]}``
    → ``QuotedReply`` (its sources are the quotes' sources, with any ``sources`` it also lists); ``pointing``:
    ``{"phrases": [numbers]}`` → ``PointingReply``.
    """
    read = reader(mode, model=True)
    reply = parse_json(unfence(text))
    if not isinstance(reply, dict):
        raise UnusableReply(f"a JSON {type(reply).__name__}, not an object")
    if read.numbered:
        out = decode_pointing(reply, lead=read.lead)
        _no_fence(out.lead, '"reponse"')
        return out
    _check_answer_text(reply.get("answer"))
    _no_fence(reply["answer"], '"answer"')
    if read.quotes:
        quotes = _decode_quotes(reply.get("quotes"))
        listed = reply.get("sources", [])
        sources = _decode_sources(listed) if listed is not None else []
        return QuotedReply(reply["answer"], tuple(quotes),
                           tuple(dict.fromkeys([q.source for q in quotes] + sources)))
    return FreeReply(reply["answer"], tuple(_decode_sources(reply.get("sources"))))


def _check_answer_text(answer) -> None:
    if not isinstance(answer, str):
        raise UnusableReply('"answer" missing or not a string')
    if not answer.strip():
        raise UnusableReply('"answer" is blank: a blank answer is not an answer (nor « je ne sais pas »)')
    _text_only(answer, '"answer"')


#: The fence of an extract in the prompt: a reply that writes it copied the frame, not an answer.
_FENCE_MARK = re.compile(r"</?extrait\b", re.IGNORECASE)


def _no_fence(text: str, name: str) -> None:
    if _FENCE_MARK.search(text):
        raise UnusableReply(f"{name} copies the extracts' fence (« <extrait … »): the frame of a passage is no answer")


def _text_only(text: str, name: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a JSON escape « \ud800 » decodes to half a character: not text to show
        raise UnusableReply(f"{name} holds a lone surrogate, which is not text") from None


def _decode_sources(sources) -> list[str]:
    if not isinstance(sources, list):
        raise UnusableReply('"sources" missing or not a list')
    for s in sources:
        # bool is a subclass of int in Python: checking the type alone would let a JSON true through as an id.
        if isinstance(s, bool) or not isinstance(s, (str, int)):
            raise UnusableReply(f"{short_repr(s)} is not a passage id (ids are strings or integers)")
    return [str(s) for s in sources]


def _decode_quotes(quotes) -> list[Quote]:
    if not isinstance(quotes, list):
        raise UnusableReply('"quotes" missing or not a list')
    out = []
    for q in quotes:
        if not isinstance(q, dict) or not isinstance(q.get("text"), str):
            raise UnusableReply(f'{short_repr(q)} is not a quote ({{"source": id, "text": words}})')
        _text_only(q["text"], "a quote")
        out.append(Quote(_decode_sources([q.get("source")])[0], q["text"]))
    return out


def ground(reply: FreeReply | QuotedReply, sent_ids: list[str]) -> dict:
    """Check the citations against what was sent; return the answer in its final form."""
    if not isinstance(reply, (FreeReply, QuotedReply)):
        raise BadArgument(f"reply must be what decode returns for a free or quoted reply (a FreeReply or a "
                          f"QuotedReply), not {type(reply).__name__}")
    if not isinstance(sent_ids, (list, tuple)) or not all(isinstance(i, str) for i in sent_ids):
        raise BadArgument("sent_ids must be a list of the ids sent, as text")
    never_sent = [s for s in reply.sources if s not in sent_ids]
    if never_sent:
        raise AnswerNotGrounded(f"the answer cites {never_sent}, never sent (sent: {list(sent_ids)})")
    sources = list(dict.fromkeys(reply.sources))
    quotes = [{"source": q.source, "text": q.text} for q in getattr(reply, "quotes", ()) if q.source in sent_ids]
    if is_no_answer(reply.answer):
        return {"answer": NO_ANSWER, "sources": [], "quotes": []}
    if not sources:
        raise AnswerNotGrounded("the answer cites no passage: an answer without a source cannot be checked")
    return {"answer": reply.answer.strip(), "sources": sources, "quotes": quotes}


def point(reply: PointingReply, numbered: list[dict], question: str = "", judge=None) -> dict:
    """The pointing mode's answer: the chosen sentences, copied in the passages' order, with their sources.

    Given ``judge`` (the quotes a lead-in rests on → do they answer?), a lead-in is shown only if it cannot
    borrow: it says no more than the sentences it rests on (``anchor``; ``borrowed``: every figure, its yes or
    no) and ``judge`` says they answer; else it is dropped, said in ``"dropped"``, and the sentences the model
    pointed at stand alone (benchmarks/README.md, « A lead that cannot borrow »). A lead-in that only restates
    ``question`` is dropped so, judge or not."""
    if not isinstance(reply, PointingReply):
        raise BadArgument(f"reply must be what decode(..., 'pointing') returns (a PointingReply), not "
                          f"{type(reply).__name__}")
    if judge is not None and not callable(judge):
        raise BadArgument(f"judge must be a function of the quotes a lead-in rests on, not {type(judge).__name__}")
    by_n = {s["n"]: s for s in numbered}
    never_sent = [n for n in reply.chosen if n not in by_n]
    if never_sent:
        raise AnswerNotGrounded(f"the answer points at sentence(s) {never_sent}, never sent (sent: 1 to {len(by_n)})")
    lead, pointed = reply.lead, list(reply.chosen[:MAX_SENTENCES])  # a reply without the schema may list more
    if not reply.chosen or is_no_answer(lead):  # « je ne sais pas » in words is the no-answer, pointing or not
        return {"answer": NO_ANSWER, "sources": [], "quotes": [], "phrases": []}
    chosen = anchor(lead, pointed, numbered)
    quotes = lambda ns: [{"source": by_n[n]["source"], "text": by_n[n]["text"]} for n in ns]
    text = " ".join(q["text"] for q in quotes(chosen))
    dropped = ""
    if lead and claims.found(lead.removesuffix(" …"), text):
        lead = ""  # a lead-in copied from the sentences says nothing they do not: shown once
    elif lead and restates(lead, question):
        lead, dropped = "", f"lead-in dropped: « {lead} » restates the question, it answers nothing"
    elif lead and judge is not None:
        why = borrowed(lead, [by_n[n]["text"] for n in chosen]) or (
            "" if judge(quotes(chosen)) else "the sentence it rests on is not judged to answer")
        if why:
            lead, dropped, chosen = "", f"lead-in dropped: « {lead} »: {why}", pointed
    shown = quotes(chosen)
    text = " ".join(q["text"] for q in shown)
    # The lead-in on its own line, the sentences under it: words the model wrote, then words it pointed at.
    return {"answer": f"{lead}\n{text}" if lead else text, "sources": list(dict.fromkeys(q["source"] for q in shown)),
            "quotes": shown, "phrases": chosen, "lead": lead, "dropped": dropped}

"""N3 — answers with sources: the model answers from the passages it was sent, and must cite them.

What it is for: retrieval (N1, N2) finds passages; a model turns them into an
answer in the learner's words. The model knows of the handbook only what the
prompt carries, so the plumbing is where the bugs are: what is sent, how the
reply is read, and what is refused.

The contract, checked in code, not asked for politely:

- at most 4 passages of at most 1,500 characters each (cut in code points); a
  question over 1,000 characters is refused before any call (the provider bills
  every character of the prompt); an empty question or no passages: « je ne
  sais pas », no call made;
- the reply is one JSON object, bare or wrapped whole in one code fence;
  anything else is asked again, up to ``attempts`` times, then
  ``AnswerUnavailable``. Ids are compared as text (``3`` is ``"3"``), booleans
  are not ids; an id never sent raises ``AnswerNotGrounded``, and so does a real
  answer that cites nothing; « Je ne sais pas. » is returned as ``"je ne sais pas"``.

Three modes (``mode``), each measured on every judged question
(``benchmarks/bench_answers.py``):

- ``"pointing"``: the passages are cut into numbered sentences; under a schema
  that allows those numbers and no others, the model chooses the sentences that
  answer (at most ``MAX_SENTENCES``), or none. The answer *is* those sentences,
  copied by code;
- ``"quoted"``: the model writes the answer and, for each passage it cites, the
  words it rests on (``{"answer", "quotes": [{"source", "text"}]}``); each quote
  must be in its passage (``rungs.core.claims.found``: whitespace, case,
  quotation marks and apostrophes normalised, nothing looser);
- ``"free"``: the answer and the ids it cites (the rung before these checks).

In every mode (``check_figures=True``) every figure of the answer (amounts,
durations, times, dates, percentages, counts, phone and article numbers:
``rungs.core.figures``) must be in a quote, a cited passage or the question. A
quote not found, a cited passage not quoted, or a figure nothing cited holds is
sent back once — one repair round trip that names it — and if the second reply
has it too, the answer is **refused** (``QuoteNotFound``, ``UnsupportedFigure``,
both ``AnswerNotGrounded``): never shown, marked or not.

What the checks buy: every cited id was sent, every quote is in its passage,
every figure is in what is cited. What they cannot catch: a true quote under a
wrong conclusion, or a figure the passage holds that answers another question.
The words are checked, not the reasoning.

Cost: one call per attempt, one more for a repair. Reading the prompt dominates;
a pointing reply is a few tokens. Measured in ``benchmarks/README.md``.
"""

from __future__ import annotations

import re
import time

from ..core import claims as _claims
from ..core.documents import check_documents, passage_text
from ..core.errors import (BadArgument, RungsError, _short, check_bool, check_choice, check_client, check_int,
                           check_query)
from ..core.replies import UnusableReply, parse_json, unfence
from ..model import EmptyCompletion, TruncatedCompletion, default_client, estimate_tokens
from .pointing import MAX_LEAD_CHARS, SENTENCES_SENT, anchor, decode_pointing, numbered_blocks, sentences_for
from .prompts import (NO_ANSWER_RULE, NO_ANSWER_RULES, PROMPT, PROMPT_POINTING, PROMPT_POINTING_LEAD, PROMPT_QUOTED,  # noqa: F401
                      PROMPT_REWRITTEN, PROMPTS, _attribute, _content, repair_message)

MAX_PASSAGES = 4
MAX_CHARS = 1500
MAX_QUESTION = 1000
MAX_ATTEMPTS = 10  # each attempt is one more call, paid in seconds or in money
NO_ANSWER = "je ne sais pas"
MODES = ("pointing", "pointing-lead", "quoted", "free")
# Chosen on the deciding half, where no mode was measurably better, because every sentence it shows is copied
# from a cited passage and checked by code; on the reporting half it is behind the free answer, not measurably,
# and says « je ne sais pas » far less where nothing answers (benchmarks/README.md, « N3's modes »).
DEFAULT_MODE = "pointing-lead"
MAX_SENTENCES = 3  # the pointing mode's answer: at most three sentences, copied

class AnswerUnavailable(RungsError, RuntimeError):
    """No usable reply after every attempt; the message lists why each one was refused."""


class AnswerNotGrounded(RungsError, RuntimeError):
    """The answer cites a passage that was never sent, or cites nothing at all."""


class QuoteNotFound(AnswerNotGrounded):
    """A quote is not in the passage it cites (or a cited passage has no quote), after one repair round trip."""


class UnsupportedFigure(AnswerNotGrounded):
    """The answer holds a figure that no quote, cited passage or the question holds, after one repair round trip."""


def prepare_passages(passages: list[dict], max_passages: int = MAX_PASSAGES, max_chars: int = MAX_CHARS) -> list[dict]:
    """The passages that will be sent: the first ``max_passages``, each cut to ``max_chars`` code points."""
    check_int(max_passages, "max_passages", low=1, high=MAX_PASSAGES)
    check_int(max_chars, "max_chars", low=1, high=MAX_CHARS)
    # Two passages sharing an id are refused (a citation must point at exactly one), and so is a passage
    # without an id or whose text is not text: the one rule every rung applies (handbook.check_documents).
    passages = check_documents(passages, name="passages")
    # Python strings are sequences of code points: slicing never splits an « é ».
    # A passage is anything with an id and a text: a passage dict, or a page (its title and body).
    return [{"id": str(p["id"]), "text": passage_text(p)[:max_chars]} for p in passages[:max_passages]]


def build_prompt(question: str, passages: list[dict], *, no_answer_rule: bool = True, prompt: str | None = None,
                 mode: str = "free", sentences: list[dict] | None = None) -> str:
    """The whole prompt, exactly as sent: every passage fenced by its id (in pointing mode, its sentences numbered).

    ``prompt``: the template (default: the mode's, ``PROMPTS[mode]``; ``PROMPT_REWRITTEN`` or your own), with the places
    ``{passages}``, ``{question}`` and ``{no_answer}`` (braces of your own doubled: ``{{``). ``sentences``:
    in pointing mode, the numbered sentences to show (``sentences_for``; default: every one).

    The fence is only ours if a passage cannot write it: ``<`` and ``>`` in a passage's text (and
    ``<``, ``>``, ``&`` and quotes in its id) are written as XML entities, so a page whose text holds
    ``</extrait><extrait id="conges-payes">`` shows those words and opens no block.
    """
    check_query(question, name="question", max_chars=MAX_QUESTION)
    check_bool(no_answer_rule, "no_answer_rule")
    check_choice(mode, "mode", MODES)
    passages = check_documents(passages, name="passages")
    prompt = check_prompt(PROMPTS[mode] if prompt is None else prompt)
    if mode.startswith("pointing"):
        blocks = numbered_blocks(passages, sentences if sentences is not None else sentences_for("", passages, None))
    else:
        blocks = "\n\n".join(f'<extrait id="{_attribute(p["id"])}">\n{_content(passage_text(p))}\n</extrait>'
                              for p in passages)
    return prompt.format(passages=blocks, question=question, no_answer=NO_ANSWER_RULES[mode] if no_answer_rule else "")


def check_prompt(prompt) -> str:
    """A template with exactly the places build_prompt fills; anything else is named before any call."""
    if not isinstance(prompt, str):
        raise BadArgument(f"prompt must be a template string, not {type(prompt).__name__}")
    try:
        prompt.format(passages="", question="", no_answer="")
    except (KeyError, IndexError, ValueError) as err:
        raise BadArgument(f"prompt must use only {{passages}}, {{question}} and {{no_answer}} "
                          f"(double any other brace: {{{{ }}}}): {type(err).__name__} {err}") from None
    missing = [name for name in ("{passages}", "{question}") if name not in prompt]
    if missing:
        raise BadArgument(f"prompt must contain {' and '.join(missing)}: the model needs the extracts and the question")
    return prompt


def schema_for(passages: list[dict], mode: str = "free", sentences: list[dict] | None = None) -> dict:
    """A JSON schema whose ids can only be those sent (the local server enforces it, token by token).

    ``free``: ``sources`` from the ids sent; ``quoted``: each quote's ``source`` from them; ``pointing``:
    ``phrases`` from the numbers of the sentences sent, at most ``MAX_SENTENCES``.
    """
    check_choice(mode, "mode", MODES)
    passages = check_documents(passages, name="passages")
    ids = {"enum": [str(p["id"]) for p in passages]}
    if mode.startswith("pointing"):
        numbers = [s["n"] for s in (sentences if sentences is not None else sentences_for("", passages, None))]
        phrases = {"phrases": {"type": "array", "items": {"enum": numbers}, "maxItems": MAX_SENTENCES}}
        if mode == "pointing-lead":  # the words first, then the sentences that say them
            return {"type": "object", "properties": {"reponse": {"type": "string", "maxLength": MAX_LEAD_CHARS},
                                                     **phrases}, "required": ["reponse", "phrases"]}
        return {"type": "object", "properties": phrases, "required": ["phrases"]}
    if mode == "quoted":
        quote = {"type": "object", "properties": {"source": ids, "text": {"type": "string"}},
                 "required": ["source", "text"]}
        return {"type": "object", "properties": {"answer": {"type": "string"}, "quotes": {"type": "array", "items": quote}},
                "required": ["answer", "quotes"]}
    return {"type": "object",
            "properties": {"answer": {"type": "string"}, "sources": {"type": "array", "items": ids}},
            "required": ["answer", "sources"]}


def decode(text: str, mode: str = "free") -> dict:
    """Read one reply: a bare JSON object, or one wrapped whole in exactly one code fence.

    ``free``: ``{"answer", "sources"}``; ``quoted``: ``{"answer", "quotes": [{"source", "text"}]}`` (its
    sources are the quotes' sources, with any ``sources`` it also lists); ``pointing``: ``{"phrases": [numbers]}``.
    """
    check_choice(mode, "mode", MODES)
    reply = parse_json(unfence(text))
    if not isinstance(reply, dict):
        raise UnusableReply(f"a JSON {type(reply).__name__}, not an object")
    if mode.startswith("pointing"):
        return decode_pointing(reply, lead=mode == "pointing-lead")
    _check_answer_text(reply.get("answer"))
    if mode == "quoted":
        quotes = _decode_quotes(reply.get("quotes"))
        listed = reply.get("sources", [])
        sources = _decode_sources(listed) if listed is not None else []
        return {"answer": reply["answer"], "quotes": quotes,
                "sources": list(dict.fromkeys([q["source"] for q in quotes] + sources))}
    return {"answer": reply["answer"], "sources": _decode_sources(reply.get("sources"))}


def _check_answer_text(answer) -> None:
    if not isinstance(answer, str):
        raise UnusableReply('"answer" missing or not a string')
    if not answer.strip():
        raise UnusableReply('"answer" is blank: a blank answer is not an answer (nor « je ne sais pas »)')
    _text_only(answer, '"answer"')


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
            raise UnusableReply(f"{_short(s)} is not a passage id (ids are strings or integers)")
    return [str(s) for s in sources]


def _decode_quotes(quotes) -> list[dict]:
    if not isinstance(quotes, list):
        raise UnusableReply('"quotes" missing or not a list')
    out = []
    for q in quotes:
        if not isinstance(q, dict) or not isinstance(q.get("text"), str):
            raise UnusableReply(f'{_short(q)} is not a quote ({{"source": id, "text": words}})')
        _text_only(q["text"], "a quote")
        out.append({"source": _decode_sources([q.get("source")])[0], "text": q["text"]})
    return out


def is_no_answer(text: str) -> bool:
    """« Je ne sais pas. », « je ne sais pas », « JE NE SAIS PAS ! »: the no-answer, however it is dressed."""
    if not isinstance(text, str):
        raise BadArgument(f"text must be a string, not {type(text).__name__}")
    return re.sub(r"[\s.!…]+", " ", text.replace("’", "'")).strip().lower() == NO_ANSWER


def ground(reply: dict, sent_ids: list[str]) -> dict:
    """Check the citations against what was sent; return the answer in its final form."""
    if not (isinstance(reply, dict) and isinstance(reply.get("answer"), str) and isinstance(reply.get("sources"), list)):
        raise BadArgument("reply must be what decode returns: {'answer': text, 'sources': [ids]}")
    if not isinstance(sent_ids, (list, tuple)) or not all(isinstance(i, str) for i in sent_ids):
        raise BadArgument("sent_ids must be a list of the ids sent, as text")
    never_sent = [s for s in reply["sources"] if s not in sent_ids]
    if never_sent:
        raise AnswerNotGrounded(f"the answer cites {never_sent}, never sent (sent: {sent_ids})")
    sources = list(dict.fromkeys(reply["sources"]))
    quotes = [q for q in reply.get("quotes", []) if q["source"] in sent_ids]
    if is_no_answer(reply["answer"]):
        return {"answer": NO_ANSWER, "sources": sources, "quotes": []}
    if not sources:
        raise AnswerNotGrounded("the answer cites no passage: an answer without a source cannot be checked")
    return {"answer": reply["answer"].strip(), "sources": sources, "quotes": quotes}


def point(reply: dict, numbered: list[dict]) -> dict:
    """The pointing mode's answer: the chosen sentences, copied in the passages' order, with their sources."""
    if not (isinstance(reply, dict) and isinstance(reply.get("phrases"), list)):
        raise BadArgument("reply must be what decode(..., 'pointing') returns: {'phrases': [numbers]}")
    by_n = {s["n"]: s for s in numbered}
    never_sent = [n for n in reply["phrases"] if n not in by_n]
    if never_sent:
        raise AnswerNotGrounded(f"the answer points at sentence(s) {never_sent}, never sent (sent: 1 to {len(by_n)})")
    lead = reply.get("lead") or ""
    if not reply["phrases"] or is_no_answer(lead):  # « je ne sais pas » in words is the no-answer, pointing or not
        return {"answer": NO_ANSWER, "sources": [], "quotes": [], "phrases": []}
    chosen = anchor(lead, reply["phrases"][:MAX_SENTENCES], numbered)  # a reply without the schema may list more
    quotes = [{"source": by_n[n]["source"], "text": by_n[n]["text"]} for n in chosen]
    text = " ".join(q["text"] for q in quotes)
    if lead and _claims.found(lead, text):
        lead = ""  # a lead-in copied from the sentences says nothing they do not: shown once
    return {"answer": f"{lead} {text}" if lead else text, "sources": list(dict.fromkeys(q["source"] for q in quotes)),
            "quotes": quotes, "phrases": chosen, "lead": lead}


def answer_with_details(question: str, passages: list[dict], client=None, *, mode: str = DEFAULT_MODE,
                        attempts: int = 2, max_passages: int = MAX_PASSAGES, max_chars: int = MAX_CHARS,
                        no_answer_rule: bool = True, constrain: bool = True, max_tokens: int = 300,
                        prompt: str | None = None, check_figures: bool = True, sentences_sent: int = SENTENCES_SENT,
                        on_event=None) -> dict:
    """``answer``, plus what it took: the prompt, every raw reply, why any was refused, tokens, seconds.

    ``on_event``: a function told ``("reading", {"tokens", "sentences"})`` before the call, ``("writing", {})``
    at its first token, and, in pointing mode, ``("sentence", quote)`` as each chosen sentence arrives
    (the pointing modes' replies are streamed); what it is told has passed every check there is to pass.
    """
    # Every knob checked once, here, before any call (the provider bills every character of the prompt).
    check_query(question, name="question", max_chars=MAX_QUESTION)
    check_choice(mode, "mode", MODES)
    check_int(attempts, "attempts", low=1, high=MAX_ATTEMPTS)
    check_int(max_tokens, "max_tokens", low=1, high=100_000)
    check_int(sentences_sent, "sentences_sent", low=1, high=1000)
    for flag, name in ((no_answer_rule, "no_answer_rule"), (constrain, "constrain"), (check_figures, "check_figures")):
        check_bool(flag, name)
    if prompt is not None:
        check_prompt(prompt)
    if on_event is not None and not callable(on_event):
        raise BadArgument(f"on_event must be a function of (kind, payload), not {type(on_event).__name__}")
    sent = prepare_passages(passages if passages is not None else [], max_passages, max_chars)
    details = {"answer": NO_ANSWER, "sources": [], "quotes": [], "mode": mode, "prompt": None, "replies": [],
               "refused": [], "repairs": 0, "input_tokens": 0, "output_tokens": 0, "seconds": 0.0, "calls": 0,
               "sent": [p["id"] for p in sent]}
    if not question.strip() or not sent:
        return details  # nothing to ask: no call, no cost
    client = check_client(client) if client is not None else default_client()
    numbered = sentences_for(question, sent, sentences_sent) if mode.startswith("pointing") else None
    details["prompt"] = build_prompt(question, sent, no_answer_rule=no_answer_rule, prompt=prompt, mode=mode,
                                     sentences=numbered)
    ask = _Asker(client, schema_for(sent, mode, numbered) if constrain else None, max_tokens, details, on_event,
                 numbered or [])
    messages = [{"role": "user", "content": details["prompt"]}]
    def check(out):  # « je ne sais pas » claims nothing: there is nothing to check
        faults = [] if out["answer"] == NO_ANSWER else _claims.faults(
            out, sent, question, quotes_required=mode == "quoted", check_figures=check_figures)
        return _drop_lead(out, faults, details) if faults and out.get("lead") else faults
    start = time.perf_counter()
    try:
        out, raw = ask.first(messages, attempts)
        faults = check(out)
        if faults:  # one repair round trip, naming what was not found; the server reuses what it read
            details["refused"].append("; ".join(f["reason"] for f in faults))
            details["repairs"] = 1
            messages += [{"role": "assistant", "content": raw}, {"role": "user", "content": repair_message(faults, mode)}]
            out, _ = ask.first(messages, 1, repair=faults)
            faults = check(out)
        if faults:
            kind = QuoteNotFound if faults[0]["kind"] == "quote" else UnsupportedFigure
            raise kind("; ".join(f["reason"] for f in faults) + " (after one repair round trip)")
    except RungsError as err:
        err.details = details  # what it took to be refused: the replies, the tokens, the seconds
        raise
    finally:
        details["seconds"] = time.perf_counter() - start
    details.update(out)
    return details


def _drop_lead(out: dict, faults: list[dict], details: dict) -> list[dict]:
    """A lead-in with a figure nothing cited holds is dropped, said in ``refused``: the sentences stay the answer."""
    details["refused"].append("lead-in dropped: " + "; ".join(f["reason"] for f in faults))
    out.update(answer=" ".join(q["text"] for q in out["quotes"]), lead="")
    return []


class _Asker:
    """One call after another on the same request, each reply read and settled (grounded, or pointed)."""

    def __init__(self, client, schema, max_tokens, details, on_event, numbered):
        self.client, self.schema, self.max_tokens, self.details = client, schema, max_tokens, details
        self.on_event, self.numbered, self.mode = on_event, numbered, details["mode"]

    def first(self, messages, attempts, repair=None):
        """The first usable reply in ``attempts`` calls, settled: (answer object, raw text)."""
        d = self.details
        for _ in range(attempts):
            d["calls"] += 1
            try:
                text = self._call(messages)
            except (EmptyCompletion, TruncatedCompletion) as err:
                d["replies"].append("")
                d["refused"].append(f"{type(err).__name__}: {err}")
                continue
            d["replies"].append(text)
            try:
                reply = decode(text, self.mode)
            except UnusableReply as err:
                d["refused"].append(str(err))
                continue
            if self.mode.startswith("pointing"):
                return point(reply, self.numbered), text
            return ground(reply, d["sent"]), text
        if repair:  # the repair's reply could not be read: the fault it was asked to fix stands
            kind = QuoteNotFound if repair[0]["kind"] == "quote" else UnsupportedFigure
            raise kind("; ".join(f["reason"] for f in repair) + " (the repair's reply could not be read)")
        raise AnswerUnavailable(f"no usable reply in {attempts} attempt(s): " + "; ".join(d["refused"]))

    def _call(self, messages) -> str:
        if self.on_event is None or not self.mode.startswith("pointing"):
            result = self.client.chat(messages, json_schema=self.schema, max_tokens=self.max_tokens)
            self.details["input_tokens"] += result.input_tokens
            self.details["output_tokens"] += result.output_tokens
            return result.text
        # Streamed: each sentence is shown as soon as its number is complete (a number is never half shown).
        self.on_event("reading", {"tokens": estimate_tokens(messages), "sentences": len(self.numbered)})
        by_n, shown, pieces = {s["n"]: s for s in self.numbered}, set(), []
        for piece in self.client.stream(messages, max_tokens=self.max_tokens, json_schema=self.schema):
            if not pieces:
                self.on_event("writing", {})
            pieces.append(piece)
            if self.mode != "pointing":  # a lead-in is shown once checked, and the sentences with it
                continue
            for m in re.finditer(r"(\d+)\s*[,\]]", "".join(pieces).partition("[")[2]):
                n = int(m.group(1))
                if n in by_n and n not in shown and len(shown) < MAX_SENTENCES:
                    shown.add(n)
                    self.on_event("sentence", {"source": by_n[n]["source"], "text": by_n[n]["text"]})
        usage = getattr(self.client, "last_usage", (0, 0))
        self.details["input_tokens"] += usage[0]
        self.details["output_tokens"] += usage[1]
        text = "".join(pieces)
        if not text.strip():
            raise EmptyCompletion("the model streamed no text")
        return text


def answer(question: str, passages: list[dict], client=None, *, attempts: int = 2,
           max_passages: int = MAX_PASSAGES, **knobs) -> dict:
    """The rung in one call: ``{"answer": str, "sources": [ids that were sent], "quotes": [...]}``."""
    out = answer_with_details(question, passages, client, attempts=attempts, max_passages=max_passages, **knobs)
    return {"answer": out["answer"], "sources": out["sources"], "quotes": out["quotes"]}

"""N3 — answers with sources: the model answers from the passages it was sent, and must cite them.

What it is for: retrieval (N1, N2) finds passages; a model turns them into an
answer in the learner's words. The model knows of the handbook only what the
prompt carries, so the plumbing is where the bugs are: what is sent, how the
reply is read, and what is refused.

The contract, checked in code, not asked for politely:

- at most 4 passages of at most 1,500 characters each (cut in code points);
  a question over 1,000 characters is refused before any call (the provider
  bills every character of the prompt: refuse before any call);
- an empty question or no passages: « je ne sais pas », no call made;
- the reply must be one JSON object ``{"answer": str, "sources": [ids]}``,
  bare or wrapped whole in exactly one code fence; anything else (prose around
  it, two blocks, an unclosed fence, no text) is unusable and asked again, up to
  ``attempts`` times, then ``AnswerUnavailable``;
- source ids are compared as text (``3`` and ``"3"`` are the same id);
  booleans are not ids; citing an id that was never sent raises
  ``AnswerNotGrounded``, and so does a real answer that cites nothing;
- « Je ne sais pas. » is the no-answer, returned as ``"je ne sais pas"``.

What the check buys: every cited id is a passage the model was actually
shown, so a reader can open it. What it cannot catch: an invented sentence
hung on a real source. The citation is checked; the claim is not.

Cost: one model call per attempt (a few seconds on the local model for four
short passages); tokens grow with the passages sent.
"""

from __future__ import annotations

import json
import re
import time

from .errors import RungsError
from .handbook import duplicates, passage_text
from .llm import EmptyCompletion, TruncatedCompletion, default_client

MAX_PASSAGES = 4
MAX_CHARS = 1500
MAX_QUESTION = 1000
NO_ANSWER = "je ne sais pas"


class AnswerUnavailable(RungsError, RuntimeError):
    """No usable reply after every attempt; the message lists why each one was refused."""


class AnswerNotGrounded(RungsError, RuntimeError):
    """The answer cites a passage that was never sent, or cites nothing at all."""


class UnusableReply(RungsError, ValueError):
    """One reply could not be read as the object asked for (and will be asked again)."""


PROMPT = """Tu réponds aux questions des salariés à partir des extraits du livret d'accueil ci-dessous, et de rien d'autre.

{passages}

Question : {question}

Réponds en français, en une ou deux phrases, avec uniquement un objet JSON de la forme :
{{"answer": "ta réponse", "sources": ["id d'un extrait utilisé", ...]}}
Cite dans "sources" l'id de chaque extrait qui justifie ta réponse.{no_answer}"""

NO_ANSWER_RULE = ('\nSi les extraits ne permettent pas de répondre, réponds exactement '
                  '{"answer": "Je ne sais pas.", "sources": []}.')


def prepare_passages(passages: list[dict], max_passages: int = MAX_PASSAGES, max_chars: int = MAX_CHARS) -> list[dict]:
    """The passages that will be sent: the first ``max_passages``, each cut to ``max_chars`` code points."""
    if not 1 <= max_passages <= MAX_PASSAGES:
        raise ValueError(f"max_passages must be between 1 and {MAX_PASSAGES}, not {max_passages}")
    if not 1 <= max_chars <= MAX_CHARS:
        raise ValueError(f"max_chars must be between 1 and {MAX_CHARS}, not {max_chars}")
    dup = duplicates(str(p["id"]) for p in passages)
    if dup:
        raise ValueError(f"two passages share an id ({dup}): "
                         "a citation must point at exactly one")
    # Python strings are sequences of code points: slicing never splits an « é ».
    # A passage is anything with an id and a text: a passage dict, or a page (its title and body).
    return [{"id": str(p["id"]), "text": passage_text(p)[:max_chars]} for p in passages[:max_passages]]


def build_prompt(question: str, passages: list[dict], *, no_answer_rule: bool = True) -> str:
    """The whole prompt, exactly as sent: every passage fenced by its id."""
    blocks = "\n\n".join(f'<extrait id="{p["id"]}">\n{p["text"]}\n</extrait>' for p in passages)
    return PROMPT.format(passages=blocks, question=question, no_answer=NO_ANSWER_RULE if no_answer_rule else "")


def schema_for(passages: list[dict]) -> dict:
    """A JSON schema whose ``sources`` can only hold the ids that were sent (the local server enforces it)."""
    return {"type": "object",
            "properties": {"answer": {"type": "string"},
                           "sources": {"type": "array", "items": {"enum": [p["id"] for p in passages]}}},
            "required": ["answer", "sources"]}


_FENCE = re.compile(r"^```[A-Za-z]*[ \t]*\n(.*?)\n?```$", re.DOTALL)


def decode(text: str) -> dict:
    """Read one reply: a bare JSON object, or one wrapped whole in exactly one code fence."""
    body = (text or "").strip()
    if not body:
        raise UnusableReply("no text")
    if body.startswith("```"):
        if body.count("```") == 1:
            raise UnusableReply("a code fence that is never closed")
        if body.count("```") > 2:
            raise UnusableReply("more than one code block")
        match = _FENCE.match(body)
        if not match:
            raise UnusableReply("text after the closing code fence")
        body = match.group(1).strip()
    elif "```" in body:
        raise UnusableReply("prose around a code block")
    try:
        reply = json.loads(body)
    except json.JSONDecodeError:
        raise UnusableReply("not JSON (prose around the object, or no object at all)") from None
    if not isinstance(reply, dict):
        raise UnusableReply(f"a JSON {type(reply).__name__}, not an object")
    if not isinstance(reply.get("answer"), str):
        raise UnusableReply('"answer" missing or not a string')
    sources = reply.get("sources")
    if not isinstance(sources, list):
        raise UnusableReply('"sources" missing or not a list')
    for s in sources:
        # True == 1 in Python: without this check, a boolean would pass as passage 1.
        if isinstance(s, bool) or not isinstance(s, (str, int)):
            raise UnusableReply(f"{s!r} is not a passage id (ids are strings or integers)")
    return {"answer": reply["answer"], "sources": [str(s) for s in sources]}


def is_no_answer(text: str) -> bool:
    """« Je ne sais pas. », « je ne sais pas », « JE NE SAIS PAS ! »: the no-answer, however it is dressed."""
    return re.sub(r"[\s.!…]+", " ", text.replace("’", "'")).strip().lower() == NO_ANSWER


def ground(reply: dict, sent_ids: list[str]) -> dict:
    """Check the citations against what was sent; return the answer in its final form."""
    never_sent = [s for s in reply["sources"] if s not in sent_ids]
    if never_sent:
        raise AnswerNotGrounded(f"the answer cites {never_sent}, never sent (sent: {sent_ids})")
    sources = list(dict.fromkeys(reply["sources"]))
    if is_no_answer(reply["answer"]):
        return {"answer": NO_ANSWER, "sources": sources}
    if not sources:
        raise AnswerNotGrounded("the answer cites no passage: an answer without a source cannot be checked")
    return {"answer": reply["answer"].strip(), "sources": sources}


def answer_with_details(question: str, passages: list[dict], client=None, *, attempts: int = 2,
                        max_passages: int = MAX_PASSAGES, max_chars: int = MAX_CHARS,
                        no_answer_rule: bool = True, constrain: bool = True, max_tokens: int = 300) -> dict:
    """``answer``, plus what it took: the prompt, every raw reply, why any was refused, tokens, seconds."""
    if not isinstance(question, str):
        raise TypeError(f"question must be a string, not {type(question).__name__}")
    if len(question) > MAX_QUESTION:
        raise ValueError(f"the question has {len(question)} characters; the limit is {MAX_QUESTION}")
    if attempts < 1:
        raise ValueError(f"attempts must be 1 or more, not {attempts}")
    sent = prepare_passages(passages, max_passages, max_chars) if passages else []
    details = {"answer": NO_ANSWER, "sources": [], "prompt": None, "replies": [], "refused": [],
               "input_tokens": 0, "output_tokens": 0, "seconds": 0.0, "calls": 0, "sent": [p["id"] for p in sent]}
    if not question.strip() or not sent:
        return details  # nothing to ask: no call, no cost
    client = client or default_client()
    prompt = build_prompt(question, sent, no_answer_rule=no_answer_rule)
    details["prompt"] = prompt
    schema = schema_for(sent) if constrain else None
    start = time.perf_counter()
    for _ in range(attempts):
        details["calls"] += 1
        try:
            result = client.chat([{"role": "user", "content": prompt}], json_schema=schema, max_tokens=max_tokens)
        except (EmptyCompletion, TruncatedCompletion) as err:
            details["replies"].append("")
            details["refused"].append(f"{type(err).__name__}: {err}")
            continue
        details["replies"].append(result.text)
        details["input_tokens"] += result.input_tokens
        details["output_tokens"] += result.output_tokens
        try:
            reply = decode(result.text)
        except UnusableReply as err:
            details["refused"].append(str(err))
            continue
        details["seconds"] = time.perf_counter() - start
        details.update(ground(reply, details["sent"]))
        return details
    details["seconds"] = time.perf_counter() - start
    raise AnswerUnavailable(f"no usable reply in {attempts} attempt(s): " + "; ".join(details["refused"]))


def answer(question: str, passages: list[dict], client=None, *, attempts: int = 2,
           max_passages: int = MAX_PASSAGES, **knobs) -> dict:
    """The rung in one call: ``{"answer": str, "sources": [ids that were sent]}``."""
    out = answer_with_details(question, passages, client, attempts=attempts, max_passages=max_passages, **knobs)
    return {"answer": out["answer"], "sources": out["sources"]}

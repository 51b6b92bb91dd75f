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

import html
import re
import time

from .core.documents import check_documents, passage_text
from .core.errors import BadArgument, RungsError, _short, check_bool, check_client, check_int, check_query
from .core.replies import UnusableReply, parse_json, unfence
from .model import EmptyCompletion, TruncatedCompletion, default_client

MAX_PASSAGES = 4
MAX_CHARS = 1500
MAX_QUESTION = 1000
MAX_ATTEMPTS = 10  # each attempt is one more call, paid in seconds or in money
NO_ANSWER = "je ne sais pas"

class AnswerUnavailable(RungsError, RuntimeError):
    """No usable reply after every attempt; the message lists why each one was refused."""


class AnswerNotGrounded(RungsError, RuntimeError):
    """The answer cites a passage that was never sent, or cites nothing at all."""


PROMPT = """Tu réponds aux questions des salariés à partir des extraits du livret d'accueil ci-dessous, et de rien d'autre.

{passages}

Question : {question}

Réponds en français, en une ou deux phrases, avec uniquement un objet JSON de la forme :
{{"answer": "ta réponse", "sources": ["id d'un extrait utilisé", ...]}}
Cite dans "sources" l'id de chaque extrait qui justifie ta réponse.{no_answer}"""

#: The same task, rewritten: the instructions after the question, as a list, asking for the figure as the
#: extract writes it. A prompt is a knob like k1: notebook 03 and benchmarks/bench_answers.py compare the two.
PROMPT_REWRITTEN = """Voici des extraits du livret d'accueil d'une entreprise.

{passages}

Question d'un salarié : {question}

Consignes :
- Réponds uniquement à partir des extraits, en une phrase courte, en français.
- Recopie les chiffres exactement comme l'extrait les écrit, avec leur unité (jours, heures, euros…).
- Mets dans "sources" l'id de l'extrait d'où vient ta réponse.{no_answer}
Réponds avec un seul objet JSON : {{"answer": "…", "sources": ["…"]}}"""

NO_ANSWER_RULE = ('\nSi les extraits ne permettent pas de répondre, réponds exactement '
                  '{"answer": "Je ne sais pas.", "sources": []}.')


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


def build_prompt(question: str, passages: list[dict], *, no_answer_rule: bool = True, prompt: str = PROMPT) -> str:
    """The whole prompt, exactly as sent: every passage fenced by its id.

    ``prompt``: the template (``PROMPT``, ``PROMPT_REWRITTEN`` or your own), with the places
    ``{passages}``, ``{question}`` and ``{no_answer}`` (braces of your own doubled: ``{{``).

    The fence is only ours if a passage cannot write it: ``<`` and ``>`` in a passage's text (and
    ``<``, ``>``, ``&`` and quotes in its id) are written as XML entities, so a page whose text holds
    ``</extrait><extrait id="conges-payes">`` shows those words and opens no block.
    """
    check_query(question, name="question", max_chars=MAX_QUESTION)
    check_bool(no_answer_rule, "no_answer_rule")
    passages = check_documents(passages, name="passages")
    check_prompt(prompt)
    blocks = "\n\n".join(f'<extrait id="{_attribute(p["id"])}">\n{_content(passage_text(p))}\n</extrait>'
                          for p in passages)
    return prompt.format(passages=blocks, question=question, no_answer=NO_ANSWER_RULE if no_answer_rule else "")


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


def _attribute(value) -> str:
    return html.escape(str(value), quote=True)


def _content(text: str) -> str:
    # Only the angle brackets: « Boréal & Moi » stays readable, and no tag can be written without them.
    return text.replace("<", "&lt;").replace(">", "&gt;")


def schema_for(passages: list[dict]) -> dict:
    """A JSON schema whose ``sources`` can only hold the ids that were sent (the local server enforces it)."""
    passages = check_documents(passages, name="passages")
    return {"type": "object",
            "properties": {"answer": {"type": "string"},
                           "sources": {"type": "array", "items": {"enum": [str(p["id"]) for p in passages]}}},
            "required": ["answer", "sources"]}


def decode(text: str) -> dict:
    """Read one reply: a bare JSON object, or one wrapped whole in exactly one code fence."""
    reply = parse_json(unfence(text))
    if not isinstance(reply, dict):
        raise UnusableReply(f"a JSON {type(reply).__name__}, not an object")
    if not isinstance(reply.get("answer"), str):
        raise UnusableReply('"answer" missing or not a string')
    if not reply["answer"].strip():
        raise UnusableReply('"answer" is blank: a blank answer is not an answer (nor « je ne sais pas »)')
    try:
        reply["answer"].encode("utf-8")
    except UnicodeEncodeError:  # a JSON escape « \ud800 » decodes to half a character: not text to show
        raise UnusableReply('"answer" holds a lone surrogate, which is not text') from None
    sources = reply.get("sources")
    if not isinstance(sources, list):
        raise UnusableReply('"sources" missing or not a list')
    for s in sources:
        # bool is a subclass of int in Python: checking the type alone would let a JSON true through as an id.
        if isinstance(s, bool) or not isinstance(s, (str, int)):
            raise UnusableReply(f"{_short(s)} is not a passage id (ids are strings or integers)")
    return {"answer": reply["answer"], "sources": [str(s) for s in sources]}


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
    if is_no_answer(reply["answer"]):
        return {"answer": NO_ANSWER, "sources": sources}
    if not sources:
        raise AnswerNotGrounded("the answer cites no passage: an answer without a source cannot be checked")
    return {"answer": reply["answer"].strip(), "sources": sources}


def answer_with_details(question: str, passages: list[dict], client=None, *, attempts: int = 2,
                        max_passages: int = MAX_PASSAGES, max_chars: int = MAX_CHARS,
                        no_answer_rule: bool = True, constrain: bool = True, max_tokens: int = 300,
                        prompt: str = PROMPT) -> dict:
    """``answer``, plus what it took: the prompt, every raw reply, why any was refused, tokens, seconds."""
    # Every knob checked once, here, before any call (the provider bills every character of the prompt).
    check_query(question, name="question", max_chars=MAX_QUESTION)
    check_int(attempts, "attempts", low=1, high=MAX_ATTEMPTS)
    check_int(max_tokens, "max_tokens", low=1, high=100_000)
    check_bool(no_answer_rule, "no_answer_rule")
    check_bool(constrain, "constrain")
    check_prompt(prompt)
    if passages is None:
        passages = []
    sent = prepare_passages(passages, max_passages, max_chars)
    details = {"answer": NO_ANSWER, "sources": [], "prompt": None, "replies": [], "refused": [],
               "input_tokens": 0, "output_tokens": 0, "seconds": 0.0, "calls": 0, "sent": [p["id"] for p in sent]}
    if not question.strip() or not sent:
        return details  # nothing to ask: no call, no cost
    client = check_client(client) if client is not None else default_client()
    prompt = build_prompt(question, sent, no_answer_rule=no_answer_rule, prompt=prompt)
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

"""What N3 sends: the passages cut, the prompt laid out for reuse, the schema that allows only what was sent.

What it is for: the model knows of the documents only what the prompt carries.
``prepare_passages`` decides what is sent (at most 4 passages, 1,500 code
points each); ``build_prompt`` writes it, every passage fenced by its id;
``schema_for`` gives the local server a JSON schema whose ids can only be the
ones sent (it enforces it, token by token).

The prompt is laid out for the server's cache: what stays the same from one
call to the next comes first — the extracts — then the question, then the
instructions, which are what a knob cell turns. llama.cpp reuses the longest
common start of the previous prompt, so a second question over the same
extracts, or the answer right after the gate's question (``rungs.rag.gate``),
reads only what changed (``Answer.cost.reused_tokens`` counts it).

Cost: string work; nothing is called.
"""

from __future__ import annotations

import numbers
import string

from ..core.documents import check_documents, passage_text
from ..core.errors import BadArgument, check_bool, check_int, check_query, check_text, short_repr
from ..grounding.answerer import MAX_QUESTION
from .pointing import MAX_LEAD_CHARS, MAX_SENTENCES, NONE, numbered_blocks, sentences_for
from .prompts import COLLECTION, NO_ANSWER_RULES, OR_NONE, PROMPTS, attribute, content
from .readers import MODES, reader

MAX_PASSAGES = 4
MAX_CHARS = 1500
#: The places a template may use; ``{collection}`` is optional (what the extracts come from).
PLACES = ("passages", "question", "no_answer", "collection", "or_none")
#: How far past MAX_LEAD_CHARS the schema lets a lead-in run, so the grammar never cuts a word in two.
LEAD_SLACK = 40
#: The largest number a numbered sentence may carry: far past every sentence four passages hold.
MAX_NUMBERED = 100_000


def prepare_passages(passages: list[dict], max_passages: int = MAX_PASSAGES, max_chars: int = MAX_CHARS) -> list[dict]:
    """The passages that will be sent: the first ``max_passages``, each cut to ``max_chars`` code points."""
    check_int(max_passages, "max_passages", low=1, high=MAX_PASSAGES)
    check_int(max_chars, "max_chars", low=1, high=MAX_CHARS)
    # Two passages sharing an id are refused (a citation must point at exactly one), and so is a passage
    # without an id or whose text is not text: the one rule every rung applies (core.documents).
    passages = check_documents(passages, name="passages")
    # Python strings are sequences of code points: slicing never splits an « é ».
    # A passage is anything with an id and a text: a passage dict, or a page (its title and body).
    return [{"id": str(p["id"]), "text": passage_text(p)[:max_chars]} for p in passages[:max_passages]]


def check_prompt(prompt) -> str:
    """A template with exactly the places build_prompt fills; anything else is named before any call."""
    if not isinstance(prompt, str):
        raise BadArgument(f"prompt must be a template string, not {type(prompt).__name__}")
    only = ("prompt must use only {passages}, {question}, {no_answer}, {collection} and {or_none} "
            "(double any other brace: {{ }})")
    try:  # read, never filled: « {question:>999999999} » would be a billion spaces
        places = [(name, spec, conv) for _, name, spec, conv in string.Formatter().parse(prompt) if name is not None]
    except ValueError as err:  # a lone brace
        raise BadArgument(f"{only}: {short_repr(str(err), 120)}") from None
    for name, spec, conv in places:
        if name not in PLACES:  # « {question.nope} », « {question[0]} », « {0} », « {} »
            raise BadArgument(f"{only}, not {short_repr('{' + name + '}')}")
        if spec or conv:
            dressed = "{" + name + ("!" + conv if conv else "") + (":" + spec if spec else "") + "}"
            raise BadArgument(f"prompt writes the place {short_repr(dressed)} with a format: write each place bare, "
                              "as {question} (a width or a conversion is not a prompt's business)")
    # A place, not its letters: « {{passages}} » is the text « {passages} », and sends no extract.
    missing = ["{" + name + "}" for name in ("passages", "question") if name not in {p[0] for p in places}]
    if missing:
        raise BadArgument(f"prompt must contain {' and '.join(missing)}: the model needs the extracts and the question")
    return prompt


def check_sentences(sentences, passages: list[dict]) -> list[dict]:
    """Numbered sentences as ``sentences_for`` writes them — a list of ``{"n", "source", "text"}``, each number
    once, each source a passage sent — or ``BadArgument`` naming the first that is not (a string would be split
    into letters, and a sentence of a passage not sent would be a number the model may point at but never read)."""
    if isinstance(sentences, (str, bytes, dict)) or not isinstance(sentences, (list, tuple)):
        raise BadArgument(f"sentences must be a list of numbered sentences (rag.sentences_for), "
                          f"not {type(sentences).__name__} {short_repr(sentences)}")
    ids, seen, out = {str(p["id"]) for p in passages}, set(), []
    for s in sentences:
        if not isinstance(s, dict):
            raise BadArgument(f"each sentence must be a dict with n, source and text (rag.sentences_for), "
                              f"not {type(s).__name__} {short_repr(s)}")
        n, source = s.get("n"), s.get("source")
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or not 1 <= n <= MAX_NUMBERED or n in seen:
            raise BadArgument(f"sentence {short_repr(s)} needs its own number n, a whole number from 1 to {MAX_NUMBERED:,}")
        if not isinstance(source, str) or source not in ids:
            raise BadArgument(f"sentence {n} must name as its source one of the passages sent, not {short_repr(source)}")
        check_text(s.get("text"), f"sentence {n}'s text", max_chars=MAX_CHARS)
        seen.add(n)
        out.append({**s, "n": int(n)})  # numpy's integers are numbers too, written as Python's (a schema is JSON)
    return out


def blocks(passages: list[dict], mode: str = "free", sentences: list[dict] | None = None) -> str:
    """The extracts as the model reads them: fenced by id (in pointing modes, one numbered sentence a line).

    The fence is only ours if a passage cannot write it: ``<`` and ``>`` in a passage's text (and
    ``<``, ``>``, ``&`` and quotes in its id) are written as XML entities, so a page whose text holds
    ``</extrait><extrait id="conges-payes">`` shows those words and opens no block.
    """
    if reader(mode).numbered:
        return numbered_blocks(passages, sentences if sentences is not None else sentences_for("", passages, None))
    return "\n\n".join(f'<extrait id="{attribute(p["id"])}">\n{content(passage_text(p))}\n</extrait>'
                       for p in passages)


def build_prompt(question: str, passages: list[dict], *, no_answer_rule: bool = True, prompt: str | None = None,
                 mode: str = "free", sentences: list[dict] | None = None, collection: str | None = None) -> str:
    """The whole prompt, exactly as sent: the extracts first, then the question, then what to do.

    ``prompt``: the template (default: the mode's, ``PROMPTS[mode]``; ``PROMPT_REWRITTEN`` or your own),
    with the places ``{passages}``, ``{question}``, ``{no_answer}`` and ``{collection}`` (braces of your own
    doubled: ``{{``). ``sentences``: in pointing mode, the numbered sentences to show (``sentences_for``;
    default: every one). ``collection``: what the extracts come from, as « Voici des extraits … » goes on
    (default ``COLLECTION``, « de documents » — never a handbook the reader's folder is not).
    """
    check_query(question, name="question", max_chars=MAX_QUESTION)
    check_bool(no_answer_rule, "no_answer_rule")
    reader(mode, model=True)
    passages = check_documents(passages, name="passages")
    sentences = None if sentences is None else check_sentences(sentences, passages)  # in any mode: never ignored
    prompt = check_prompt(PROMPTS[mode] if prompt is None else prompt)
    where = COLLECTION if collection is None else check_text(collection, "collection", max_chars=200)
    return prompt.format(passages=blocks(passages, mode, sentences), question=question, collection=where,
                         no_answer=NO_ANSWER_RULES[mode] if no_answer_rule else "",
                         or_none=OR_NONE.get(mode, "") if no_answer_rule else "")


def schema_for(passages: list[dict], mode: str = "free", sentences: list[dict] | None = None, *,
               none: bool = True) -> dict:
    """A JSON schema whose ids can only be those sent (the local server enforces it, token by token).

    ``free``: ``sources`` from the ids sent; ``quoted``: each quote's ``source`` from them; ``pointing``:
    ``phrases`` from the numbers of the sentences sent, at most ``MAX_SENTENCES`` — or « aucune » while
    ``none`` (the no-answer rule is on); without it the model must point, and only the gate can decline.
    """
    read = reader(mode, model=True)
    check_bool(none, "none")
    passages = check_documents(passages, name="passages")
    sentences = None if sentences is None else check_sentences(sentences, passages)  # in any mode: never ignored
    ids = {"enum": [str(p["id"]) for p in passages]}
    if read.numbered:
        pointable = [s["n"] for s in (sentences if sentences is not None else sentences_for("", passages, None))]
        # The numbers of one to three sentences sent, or « aucune »: saying that nothing answers is a choice
        # the schema offers, not a silence the model must think of.
        pointed = {"type": "array", "items": {"enum": pointable}, "minItems": 1, "maxItems": MAX_SENTENCES}
        phrases = {"phrases": {"anyOf": [pointed, {"const": NONE}]} if none else pointed}
        if read.lead:  # the words first, then the sentences that say them
            lead = {"type": "string", "maxLength": MAX_LEAD_CHARS + LEAD_SLACK}  # cut by code, after a word
            return {"type": "object", "properties": {"reponse": lead, **phrases}, "required": ["reponse", "phrases"]}
        return {"type": "object", "properties": phrases, "required": ["phrases"]}
    if read.quotes:
        quote = {"type": "object", "properties": {"source": ids, "text": {"type": "string"}},
                 "required": ["source", "text"]}
        return {"type": "object", "properties": {"answer": {"type": "string"}, "quotes": {"type": "array", "items": quote}},
                "required": ["answer", "quotes"]}
    return {"type": "object",
            "properties": {"answer": {"type": "string"}, "sources": {"type": "array", "items": ids}},
            "required": ["answer", "sources"]}

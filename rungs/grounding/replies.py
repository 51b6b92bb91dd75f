"""Reading what a model wrote: the one home of JSON-reply parsing for N3, N4 and N5.

What it is for: a model's reply is untrusted input. Every rung that asks for
JSON reads it here, with the same limits: at most ``MAX_REPLY_CHARS``
characters, nested at most ``MAX_REPLY_DEPTH`` deep, and never a raw
``RecursionError`` or ``ValueError`` — a reply that cannot be read is an
``UnusableReply`` (the strict reading of N3: the whole reply, or one code fence
that wraps it) or a ``NoAnswerObject`` (the lenient reading of N4 and N5: the
first balanced ``{…}`` inside prose will do).

Cost: linear in the reply's length (capped).
"""

from __future__ import annotations

import itertools
import json
import re

from ..core.errors import RungsError

#: The longest reply any rung reads: far more than max_tokens lets a model write, far less than what
#: could stall a parser. An answer object is a few levels deep; one nested deeper is not an answer.
MAX_REPLY_CHARS = 100_000
MAX_REPLY_DEPTH = 32


class UnusableReply(RungsError, ValueError):
    """One reply could not be read as the object asked for (and will be asked again)."""


class NoAnswerObject(RungsError, ValueError):
    """No JSON object could be read from the reply."""


_FENCE = re.compile(r"^```[A-Za-z]*[ \t]*\n(.*?)\n?```$", re.DOTALL)


def parse_json(text: str):
    """``json.loads`` for a model's reply, which never crashes: a reply that cannot be read for any
    reason — too long, nested too deep, an integer of thousands of digits, not JSON — is an ``UnusableReply``
    (asked again, or repaired), never a raw RecursionError or ValueError."""
    if not isinstance(text, str):
        raise UnusableReply(f"the reply is {type(text).__name__}, not text")
    if len(text) > MAX_REPLY_CHARS:
        raise UnusableReply(f"a reply of {len(text):,} characters (the limit is {MAX_REPLY_CHARS:,})")
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise UnusableReply("not JSON (prose around the object, or no object at all)") from None
    except (ValueError, RecursionError) as err:  # Python's 4,300-digit limit; nesting past the stack
        raise UnusableReply(f"JSON that cannot be read ({type(err).__name__}: {str(err)[:80]})") from None
    if _depth(value) > MAX_REPLY_DEPTH:
        raise UnusableReply(f"JSON nested more than {MAX_REPLY_DEPTH} levels deep")
    return value


def _depth(value) -> int:
    """How deeply lists and objects nest (iteratively: no recursion to run out of)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, level)
            if level <= MAX_REPLY_DEPTH:
                stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def unfence(text: str) -> str:
    """The body of a strict reply: the text itself, or the inside of exactly one code fence that wraps it whole.

    Prose around a block, two blocks, an unclosed fence, no text: ``UnusableReply`` saying which."""
    if text is not None and not isinstance(text, str):
        raise UnusableReply(f"the reply is {type(text).__name__}, not text")
    if len(text or "") > MAX_REPLY_CHARS:  # before any pass over the text: refusing costs nothing
        raise UnusableReply(f"a reply of {len(text):,} characters (the limit is {MAX_REPLY_CHARS:,})")
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
    return body


def extract_answer_object(text: str) -> dict:
    """The answer object: the whole reply, a fenced block, or the first balanced {…} inside prose.

    Linear in the reply's length, which is capped (``MAX_REPLY_CHARS``): the braces are
    matched in one pass, and a reply whose braces nest deeper than ``MAX_REPLY_DEPTH`` holds
    no answer object. Anything that cannot be read is ``NoAnswerObject``, never a raw error.
    """
    if text is not None and not isinstance(text, str):
        raise NoAnswerObject(f"the reply is {type(text).__name__}, not text")
    # Measured before anything is read (strip() alone is a pass over the text): refusing costs nothing.
    if len(text or "") > MAX_REPLY_CHARS:
        raise NoAnswerObject(f"the reply has {len(text):,} characters (the limit is {MAX_REPLY_CHARS:,})")
    body = (text or "").strip()
    if not body:
        raise NoAnswerObject("the reply is empty")
    candidates = [body]
    if "```" in body:
        parts = body.split("```")
        candidates += [p.split("\n", 1)[1] if "\n" in p and not p.lstrip().startswith("{") else p
                       for p in parts[1::2]]
    # The spans are found (and cut) only if the whole reply and its fenced blocks were not the object.
    for candidate in itertools.chain(candidates, (body[s:e + 1] for s, e in _balanced(body))):
        try:
            value = parse_json(candidate)
        except UnusableReply:
            continue
        if isinstance(value, dict):
            return value
    raise NoAnswerObject("no JSON object found in the reply")


def _balanced(body: str) -> list[tuple[int, int]]:
    """Every balanced {…} of the text, in the order they open: braces counted outside strings, escapes
    respected, in one pass. Each is tried in turn; a span inside one that failed comes right after it."""
    spans, opened, in_string, escaped = [], [], False, False
    for i, ch in enumerate(body):
        if in_string:  # inside a string, braces are text; a backslash escapes the next character
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"' and opened:  # outside every brace, a quote is prose
            in_string = True
        elif ch == "{":
            opened.append(len(spans))
            spans.append([i, None])
            if len(opened) > MAX_REPLY_DEPTH:
                raise NoAnswerObject(f"braces nested more than {MAX_REPLY_DEPTH} deep: not an answer object")
        elif ch == "}" and opened:
            spans[opened.pop()][1] = i
    # Opened in this order, so each span comes before the spans inside it, as a scan from each « { » would.
    return [(s, e) for s, e in spans if e is not None]

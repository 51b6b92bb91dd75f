"""What an endpoint sent, read field by field: a completion, a streamed piece, the model list, a Retry-After.

What it is for: « OpenAI-compatible » is a promise the endpoint makes, not one
rungs can rely on — a login page answering 200, a proxy that wraps the answer
in a list, a server that counts tokens as text, a stream cut between two
pieces. ``Client`` hands every body it receives to these readers, which check
each field before it is used and turn anything unusable into ``BadResponse``
naming the field, what it held and the endpoint (its credentials removed), so
a learner reads « choices[0].message.content is a number (5) », never an
``AttributeError`` from three libraries down. A missing count (``usage:
null``) is not an error: an endpoint that does not count reports 0; the prompt tokens a server
reused from its cache are read where OpenAI puts them (``usage.prompt_tokens_details.cached_tokens``).

Cost: a dictionary walk per response.
"""

from __future__ import annotations

import email.utils
import json
import math
import numbers
import time

from ..core import paths
from ..core.errors import short_repr
from .contract import BadResponse

#: The longest wait a Retry-After header may ask for; past it, the header is not a wait but a mistake.
MAX_RETRY_AFTER = 3600.0


def _kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, numbers.Number):
        return "a number"
    return {dict: "an object", list: "a list", str: "a str"}.get(type(value), type(value).__name__)


def _bad(where: str, field: str, value, wanted: str) -> BadResponse:
    return BadResponse(f"{where} sent a response rungs cannot use: {field} is {_kind(value)} ({short_repr(value, 40)}), "
                       f"where an OpenAI-compatible endpoint sends {wanted}; is OPENAI_BASE_URL the API's root "
                       "(usually ending in /v1) and the endpoint OpenAI-compatible?")


def decode(text: str, where: str, what: str = "response"):
    """A body as JSON, or ``BadResponse`` saying it is not JSON (a web page, a proxy's error)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        start = " ".join(str(text)[:60].split())
        raise BadResponse(f"{where} sent a {what} that is not JSON ({start!r}…): is OPENAI_BASE_URL the API's root "
                          "(usually ending in /v1), and not a web page or a proxy?") from None


def _object(value, where: str, field: str) -> dict:
    if not isinstance(value, dict):
        raise _bad(where, field, value, "an object")
    return value


def _text_or_none(value, where: str, field: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise _bad(where, field, value, "text (or null)")
    return value


def _count(counts: dict, name: str, where: str, field: str = "usage.") -> int:
    value = counts.get(name)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _bad(where, f"{field}{name}", value, "a whole number of tokens, 0 or more")
    return value


def usage(data: dict, where: str) -> dict:
    """The token counts of a response's ``usage`` (absent or null: zeros): ``input_tokens``, ``output_tokens``,
    ``reused_tokens`` (OpenAI's ``prompt_tokens_details.cached_tokens``: the prompt tokens read from a cache)."""
    raw = data.get("usage")
    raw = {} if raw is None else _object(raw, where, "usage")
    details = raw.get("prompt_tokens_details")
    details = {} if details is None else _object(details, where, "usage.prompt_tokens_details")
    counts = {"input_tokens": _count(raw, "prompt_tokens", where),
              "output_tokens": _count(raw, "completion_tokens", where),
              "reused_tokens": _count(details, "cached_tokens", where, "usage.prompt_tokens_details.")}
    if counts["reused_tokens"] > counts["input_tokens"]:
        raise _bad(where, "usage.prompt_tokens_details.cached_tokens", counts["reused_tokens"],
                   f"at most the prompt's {counts['input_tokens']} tokens")
    return counts


def _first_choice(data, where: str, what: str = "a chat completion object") -> dict:
    if not isinstance(data, dict):
        raise _bad(where, "the response", data, what)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise _bad(where, "choices", choices, "a list of at least one choice")
    return _object(choices[0], where, "choices[0]")


def completion(data, where: str) -> dict:
    """A chat completion's fields, each checked: ``text``, ``finish``, ``model``, ``input_tokens``,
    ``output_tokens``, ``reused_tokens``, ``logprobs`` (per token, or None)."""
    choice = _first_choice(data, where)
    message = _object(choice.get("message"), where, "choices[0].message")
    text = _text_or_none(message.get("content"), where, "choices[0].message.content") or ""
    finish = _text_or_none(choice.get("finish_reason"), where, "choices[0].finish_reason")
    model = _text_or_none(data.get("model"), where, "model")
    return {"text": text, "finish": finish or "unknown", "model": model, **usage(data, where),
            "logprobs": _logprobs(choice.get("logprobs"), where)}


def _logprob(value, where: str, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value) or value > 0:
        raise _bad(where, field, value, "a log-probability (a number, 0 or less)")
    return float(value)


def _logprobs(raw, where: str) -> list | None:
    """Per token: {"token", "logprob", "top": {token: logprob}}; None when the endpoint sent none."""
    field = "choices[0].logprobs"
    if raw is None:
        return None
    content = _object(raw, where, field).get("content")
    if content is None:
        return None
    if not isinstance(content, list):
        raise _bad(where, f"{field}.content", content, "a list of tokens")
    out = []
    for n, item in enumerate(content):
        item = _object(item, where, f"{field}.content[{n}]")
        token = item.get("token")
        if not isinstance(token, str):
            raise _bad(where, f"{field}.content[{n}].token", token, "text")
        top = item.get("top_logprobs") or []
        if not isinstance(top, list):
            raise _bad(where, f"{field}.content[{n}].top_logprobs", top, "a list")
        alternatives = {}
        for m, alt in enumerate(top):
            alt = _object(alt, where, f"{field}.content[{n}].top_logprobs[{m}]")
            if not isinstance(alt.get("token"), str):
                raise _bad(where, f"{field}.content[{n}].top_logprobs[{m}].token", alt.get("token"), "text")
            alternatives[alt["token"]] = _logprob(alt.get("logprob"), where,
                                                  f"{field}.content[{n}].top_logprobs[{m}].logprob")
        out.append({"token": token, "logprob": _logprob(item.get("logprob"), where, f"{field}.content[{n}].logprob"),
                    "top": alternatives})
    return out or None


def piece(data, where: str) -> tuple[str, str | None, dict | None]:
    """One streamed chunk: (its text, possibly empty; its finish_reason, or None while the answer goes on;
    its token counts as ``usage`` reads them, or None when the chunk carries none)."""
    counts = usage(data, where) if isinstance(data, dict) and data.get("usage") is not None else None
    if isinstance(data, dict) and data.get("choices") == []:
        return "", None, counts  # a chunk without choices (usage alone, at the end of some streams) carries no text
    choice = _first_choice(data, where, "a chat completion chunk (an object)")
    delta = choice.get("delta")
    delta = {} if delta is None else _object(delta, where, "choices[0].delta")
    text = _text_or_none(delta.get("content"), where, "choices[0].delta.content") or ""
    return text, _text_or_none(choice.get("finish_reason"), where, "choices[0].finish_reason"), counts


def model_ids(data, where: str) -> list[str]:
    """The ids of a model list (``GET /models``)."""
    models = _object(data, where, "the response").get("data")
    if not isinstance(models, list):
        raise _bad(where, "data", models, "a list of models")
    ids = []
    for n, item in enumerate(models):
        name = _object(item, where, f"data[{n}]").get("id")
        if not isinstance(name, str):
            raise _bad(where, f"data[{n}].id", name, "text")
        ids.append(name)
    return sorted(ids)


def retry_after(raw: str | None) -> tuple[float | None, str | None]:
    """A Retry-After header as (seconds to wait, None), or (None, why it is no wait) — never an error.

    Seconds go through the one number checker (``rungs.core.paths.read_number``: finite, within
    0–3600); an HTTP date is read as the time left until it (a date gone by: 0).
    """
    if raw is None:
        return None, None
    try:
        return paths.read_number(raw, "Retry-After", low=0.0, high=MAX_RETRY_AFTER), None
    except paths.BadSetting:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError, OverflowError):
        when = None
    if when is not None and when.tzinfo is not None:
        return min(max(when.timestamp() - time.time(), 0.0), MAX_RETRY_AFTER), None
    return None, f"Retry-After {raw[:40]!r} is neither seconds from 0 to {MAX_RETRY_AFTER:g} nor a date"

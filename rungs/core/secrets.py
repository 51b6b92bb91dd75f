"""Secrets are never printed: one redaction for every message, note, ``repr``, log line and doctor line.

What it is for: an API key reaches a learner's screen in surprising ways — an
endpoint that echoes the request's ``Authorization`` header in its error, a
key written inside ``OPENAI_BASE_URL`` (``https://user:key@host/v1``), a log
line. Everything rungs shows about a model endpoint goes through ``redact``
first, which replaces what looks like a secret with ``***``: bearer tokens and
``Authorization`` headers, ``sk-…`` keys, the password part of a URL, query
parameters named like keys, and the value of ``OPENAI_API_KEY`` (and of
``RUNGS_ROOM_KEY``) wherever it appears.

Cost: a few regular expressions per message.
"""

from __future__ import annotations

import os
import re

MASK = "***"

_PATTERNS = [
    # « Authorization: Bearer abc », « 'authorization': 'Basic abc' », « Bearer abc »
    (re.compile(r"(?i)(authorization['\"]?\s*[:=]\s*['\"]?)(?:bearer\s+|basic\s+)?[^\s'\",}]+"), r"\1" + MASK),
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{4,}"), r"\1" + MASK),
    # The other headers keys travel in (Azure's api-key, Anthropic-style x-api-key).
    (re.compile(r"(?i)\b((?:x-)?api[-_]key['\"]?\s*[:=]\s*['\"]?)[^\s'\",}]+"), r"\1" + MASK),
    # OpenAI-style keys and their cousins (sk-…, sk-proj-…, rk-…).
    (re.compile(r"\b(?:sk|rk|pk)-[A-Za-z0-9_-]{8,}"), MASK),
    # A password inside a URL: scheme://user:password@host (a scheme is short: bounded, so the scan stays linear)
    (re.compile(r"(?i)([a-z][a-z0-9+.-]{0,30}://[^/\s:@]*:)[^@\s/]+@"), r"\1" + MASK + "@"),
    # A user alone inside a URL can be a token too (https://TOKEN@host).
    (re.compile(r"(?i)([a-z][a-z0-9+.-]{0,30}://)[^/\s:@]{12,}@"), r"\1" + MASK + "@"),
    # Query parameters named like secrets: ?api_key=…, &token=…, &key=…
    (re.compile(r"(?i)([?&](?:api[_-]?key|key|token|access[_-]?token|secret|password)=)[^&\s'\"]+"), r"\1" + MASK),
]

#: The variables whose values are secrets, wherever they show up.
SECRET_VARIABLES = ("OPENAI_API_KEY", "RUNGS_ROOM_KEY")


def redact(text, *also: str | None) -> str:
    """``text`` with every secret replaced by ``***`` (a non-string is made text first).

    ``also``: secrets known to the caller and found nowhere else (a key given as an argument).
    """
    text = str(text)
    for value in [os.environ.get(name) for name in SECRET_VARIABLES] + list(also):
        # A short value (« x ») would blot out every x of the message: only real keys are searched for.
        if isinstance(value, str) and len(value) >= 6:
            text = text.replace(value, MASK)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def endpoint(url: str | None) -> str:
    """An endpoint's address as it may be shown: its credentials removed (``None``: the local server)."""
    if not url:
        return "the local model server"
    return redact(url)

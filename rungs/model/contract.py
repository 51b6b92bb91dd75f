"""What every model client promises, and every way a call can fail, named.

What it is for: N3, N4 and N5 talk to « a model » — the real local server, a
hosted endpoint, or a teaching prop that replays replies written by hand.
``ChatModel`` is the one signature they all keep (``chat``, ``stream``,
``complete``, ``models``); ``ChatResult`` is what one completion returns, with
what it cost; the errors below are every way it can go wrong, each with its
own name under ``ModelError`` (and so under ``RungsError``).

Cost: nothing.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import NamedTuple

from ..core.errors import RungsError


class ModelError(RungsError, RuntimeError):
    """Something went wrong between us and the model; the subclass says what."""


class ModelFileError(ModelError):
    """The bundled model file is missing, incomplete or not the one we pinned."""


class ModelUnavailable(ModelError):
    """The endpoint cannot be reached or keeps failing after the retries."""


class ModelTimeout(ModelUnavailable):
    """The endpoint did not answer within the timeout."""


class ModelServerCrashed(ModelUnavailable):
    """The local server process died: ``signal`` (« SIGSEGV ») or ``returncode``, ``log_tail``, ``hint``.

    The next call starts a new server; if the cause is in the build (a crash
    in compiled code), it will die the same way until ``hint`` is followed.
    """

    def __init__(self, message: str, *, returncode: int | None = None, signal: str | None = None,
                 log_tail: list[str] | None = None, hint: str = "", log: str | None = None):
        super().__init__(message)
        self.returncode, self.signal, self.hint, self.log = returncode, signal, hint, log
        self.log_tail = list(log_tail or [])


class ModelRefused(ModelError):
    """The endpoint answered with an error that asking again will not fix (a wrong key, model or request)."""

    def __init__(self, status: int, message: str):
        self.status = status
        super().__init__(message)


class BadResponse(ModelError):
    """The endpoint answered, but not with an OpenAI-compatible JSON response."""


class EmptyCompletion(ModelError):
    """The model answered with no text at all."""


class TruncatedCompletion(ModelError):
    """The model spent ``max_tokens`` before it wrote an answer."""


@dataclass
class ChatResult:
    """One completion, with what it cost."""

    text: str
    model: str
    input_tokens: int  # every token of the prompt, reused or not
    output_tokens: int
    finish_reason: str
    latency: float  # seconds, the whole call including retries
    logprobs: list | None = None  # per token: {"token", "logprob", "top": {token: logprob}}
    notes: list[str] = field(default_factory=list)  # every degradation, in words
    # Of input_tokens, those the server took from its cache instead of reading them again (the longest start
    # shared with the previous prompt): what it reports as usage.prompt_tokens_details.cached_tokens, else 0.
    reused_tokens: int = 0


class Usage(NamedTuple):
    """What a stream cost, left in ``last_usage`` when it ends: ``usage[0]`` tokens in, ``usage[1]`` tokens out."""

    input_tokens: int
    output_tokens: int
    reused_tokens: int = 0  # of input_tokens, those taken from the server's cache
    seconds: float = 0.0  # the whole stream, first request to last piece


def usage_of(client) -> Usage:
    """A client's ``last_usage`` as a ``Usage``, whatever it left there (a plain pair from a client of one's own)."""
    usage = getattr(client, "last_usage", None) or (0, 0)
    return usage if isinstance(usage, Usage) else Usage(*tuple(usage)[:2])


def estimate_tokens(messages: list[dict]) -> int:
    """About 4 characters a token: for when an endpoint (or a script) reports no usage."""
    return sum(len(str(m.get("content", ""))) for m in messages) // 4


def refuse_empty(text: str, finish: str, max_tokens: int) -> None:
    """No text is never an answer: say whether the token limit or the model is to blame."""
    if text.strip():
        return
    if finish == "length":
        raise TruncatedCompletion(f"the model spent max_tokens={max_tokens} before writing any answer: "
                                  "raise max_tokens or shorten the prompt")
    raise EmptyCompletion("the model returned an empty completion: ask again, rephrase, or try another model")


class ChatModel(ABC):
    """The one signature every model client keeps: the real client, the teaching prop, your own.

    A rung calls only these. ``chat`` returns a ``ChatResult``; ``stream`` yields
    the text as it comes and leaves ``last_usage`` (a ``Usage``: tokens in, out, reused,
    seconds; a plain pair (in, out) from an older client is read by ``usage_of``); ``complete``
    is one user message in, the text out; ``models`` lists what the endpoint
    serves. ``json_schema``: ask for JSON in the strictest form the endpoint
    accepts; ``logprobs``: how many alternatives per token to report (0: none).
    """

    model = "model"
    local = False
    last_usage: Usage = Usage(0, 0)

    @abstractmethod
    def chat(self, messages: list[dict], *, temperature: float = 0.0, max_tokens: int = 512,
             json_schema: dict | None = None, logprobs: int = 0, seed: int = 0) -> ChatResult:
        """One completion."""

    @abstractmethod
    def stream(self, messages: list[dict], *, temperature: float = 0.0, max_tokens: int = 512, seed: int = 0,
               json_schema: dict | None = None):
        """The completion's text, piece by piece (``json_schema``: as ``chat``'s)."""

    def complete(self, *, prompt: str, temperature: float = 0.0, max_tokens: int = 512) -> str:
        """One user message in, the text out."""
        return self.chat([{"role": "user", "content": prompt}], temperature=temperature, max_tokens=max_tokens).text

    def models(self) -> list[str]:
        return [self.model]

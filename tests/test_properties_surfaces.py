"""Property-based tests of the surfaces a learner's machine adds: folders, index files, endpoints, settings.

The same profiles as ``test_properties`` (``ci``: bounded and derandomised; ``nightly``: ten times the
examples, randomised — ``RUNGS_HYPOTHESIS_PROFILE=nightly``), the same rule: a call returns what it
promises or raises a ``RungsError`` that says what to change; anything else fails.

- **folders**: random mixes of good files (odd names: spaces, accents, newlines, a leading dash, « index… »,
  names of 200 characters; any bytes as content) and hostile ones (links, loops, pipes, sockets, Latin-1
  names, damaged Word and PDF files, charsets that are no text encoding) — every name indexed, reported, or
  recorded as the copy of another; a second run changes nothing;
- **index files**: an index truncated, with bytes flipped, or a foreign database (any tables, with or
  without rungs' mark) — opened, updated, searched, or refused by name; a file not ours is never written;
- **endpoint responses**: a fake OpenAI-compatible server on 127.0.0.1 answering random shapes (JSON of
  any form, completions with fields dropped or replaced, event streams of junk, statuses with any
  Retry-After) — a result of the right types or a ``ModelError``; the key never in a message or note;
- **settings**: every numeric ``RUNGS_*`` variable given any text — a finite value in range, or a
  ``BadSetting`` naming the variable.
"""

import hashlib
import json
import os
import sqlite3
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

import hostile_files as hf
from doubles import growth
from rungs.core import paths, secrets
from rungs.core.errors import RungsError
from rungs.model import client as model_client
from rungs.model import contract, server
from rungs.yours import index as yours
from rungs.yours import encoding, store, update
from test_llm_faults import KEY, Fake, Raw, chunk, completion, sse
from test_properties import JSON_VALUE, TEXT, budget, outcome

# ---------------------------------------------------------------- folders

QUICK_HOSTILE = [hf.link_loop, hf.fifo, hf.unix_socket, hf.latin1_folder, hf.latin1_name, hf.link_outside,
                 hf.dangling_link, hf.folder_link, hf.broken_docx, hf.truncated_pdf, hf.not_utf8_text,
                 hf.rot13_charset, hf.marked_section, hf.navheader_void]
NAME = st.one_of(st.sampled_from(["index", "index.md", "indexation", "-tiret", "a b", "é", "\u00e9t\u00e9", "x\ny",
                                  "n" * 200, "UPPER", ".rungs-like", "#dièse", "100%", "a'b\"c"]),
                 st.text("abcdéèçABC 0123456789_-", min_size=1, max_size=12))
EXT = st.sampled_from([".md", ".txt", ".html", ".pdf", ".docx", ".xlsx", "", ".MD", ".htm"])
CONTENT = st.one_of(st.binary(max_size=200), TEXT.map(lambda t: t.encode("utf-8", "surrogatepass")),
                    st.sampled_from([b"", b"# Titre\n\nLes cong\xc3\xa9s.", b"<p>Le badge</p>", b"\xef\xbb\xbf# BOM"]))
GOOD_FILE = st.tuples(st.lists(NAME, min_size=1, max_size=3), EXT, CONTENT)
FOLDER = st.tuples(st.lists(GOOD_FILE, max_size=6), st.lists(st.sampled_from(QUICK_HOSTILE), max_size=4, unique=True))


def _make(folder: Path, files, hostile) -> set[str]:
    names = set()
    for parts, ext, content in files:
        rel = "/".join(p.strip("/").replace("\0", "") or "x" for p in parts) + ext
        if rel.split("/")[0] in (".rungs",) or any(p.startswith(".") for p in rel.split("/")):
            continue  # hidden: not looked at, by design
        path = folder / rel
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.exists() and path.is_dir():
                continue
            path.write_bytes(content)
        except (OSError, ValueError):  # a name the file system refuses (a file where a folder is), or too long
            continue
        names.add(rel)
    for maker in hostile:
        try:
            names |= set(maker(folder))
        except (FileExistsError, OSError):
            continue  # two makers wanting the same name
    return names


@budget(10)
@given(spec=FOLDER)
def test_every_name_of_a_folder_is_indexed_or_reported_and_a_second_run_changes_nothing(spec):
    files, hostile = spec
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "dossier"
        folder.mkdir()
        names = _make(folder, files, hostile)
        idx = yours.index_folder(folder, index=Path(tmp) / "idx.sqlite", vectors=False)
        try:
            found = {d["path"] for d in idx.documents()} | {s.path for s in idx.skipped()} | set(idx.duplicates())
            assert all(s.reason.strip() for s in idx.skipped())
                # A name inside a folder that is itself reported (a Latin-1 folder, a link to one) is reported with it.
            missing = [n for n in names if n not in found and not any(n.startswith(f) for f in found if f.endswith("/"))]
            assert not missing, (missing, sorted(found))
            again = idx.update(vectors=False)
            assert again.added == again.changed == again.removed == [] and again.read == 0, str(again)
        finally:
            idx.close()


# ---------------------------------------------------------------- index files

def _template() -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "d"
        hf.write(folder, "a.md", "# Congés\n\nLes congés payés sont de vingt-cinq jours ouvrés par an.\n")
        hf.write(folder, "b.txt", "Badge\n\nUn badge perdu se déclare à l'accueil du siège.\n" * 40)
        idx = yours.index_folder(folder, index=Path(tmp) / "i.sqlite", vectors=False)
        idx.close()
        return (Path(tmp) / "i.sqlite").read_bytes()


TEMPLATE = _template()
DAMAGE = st.one_of(
    st.tuples(st.just("cut"), st.integers(0, len(TEMPLATE))),
    st.tuples(st.just("flip"), st.lists(st.tuples(st.integers(0, len(TEMPLATE) - 1), st.integers(0, 255)),
                                        min_size=1, max_size=8)),
    st.tuples(st.just("foreign"), st.tuples(st.lists(st.sampled_from(["meta", "files", "skipped", "passages", "notes",
                                                                      "passages_fts"]), max_size=4, unique=True),
                                            st.booleans())))


def _damaged(path: Path, damage) -> bool:
    """Write the damaged index (or a foreign database); True if the file claims to be rungs' own."""
    kind, arg = damage
    if kind == "cut":
        path.write_bytes(TEMPLATE[:arg])
    elif kind == "flip":
        data = bytearray(TEMPLATE)
        for at, byte in arg:
            data[at] = byte
        path.write_bytes(bytes(data))
    else:
        tables, marked = arg
        db = sqlite3.connect(path)
        if marked:
            db.execute(f"PRAGMA application_id = {store.APPLICATION_ID}")  # a forged mark
        for t in tables:
            db.execute(f"CREATE TABLE {t} (x)")
        db.commit()
        db.close()
    return path.exists() and store._application_id(path) == store.APPLICATION_ID


@budget(20)
@given(damage=DAMAGE)
def test_a_damaged_or_foreign_index_is_used_or_refused_by_name_and_a_foreign_one_never_written(damage):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "d"
        hf.write(folder, "a.md", "# Congés\n\nLes congés payés.\n")
        path = Path(tmp) / "i.sqlite"
        ours = _damaged(path, damage)
        before = hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None

        def use():
            idx = yours.index_folder(folder, index=path, vectors=False)
            try:
                return [h.id for h in idx.retriever("fts").search("congés", limit=3)]
            finally:
                idx.close()

        result = outcome(use, "index")
        if not ours and before is not None and isinstance(result, RungsError):
            assert hashlib.sha256(path.read_bytes()).hexdigest() == before  # yours: refused and untouched
        if isinstance(result, list):
            assert set(result) <= {"a.md"}


# ---------------------------------------------------------------- endpoint responses

_FAKE = []


def fake_server() -> Fake:
    if not _FAKE:
        _FAKE.append(Fake([]))
    return _FAKE[0]


def _mutated(body: dict, draw) -> dict:
    body = json.loads(json.dumps(body))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from([("choices",), ("choices", 0), ("choices", 0, "message"),
                                     ("choices", 0, "message", "content"), ("choices", 0, "finish_reason"),
                                     ("usage",), ("usage", "prompt_tokens"), ("usage", "completion_tokens"),
                                     ("model",), ("choices", 0, "logprobs")]))
        node = body
        try:
            for key in path[:-1]:
                node = node[key]
            if draw(st.booleans()):
                node.pop(path[-1]) if isinstance(node, dict) else node.pop()
            else:
                node[path[-1]] = draw(JSON_VALUE)
        except (KeyError, IndexError, TypeError, AttributeError):
            pass
    return body


RETRY_AFTER = st.sampled_from(["-1", "nan", "inf", "abc", "0", "0.01", "1e999", "Wed, 21 Oct 2015 07:28:00 GMT", ""])


@st.composite
def answers(draw):
    """One scripted answer of the fake endpoint: (status, payload, headers, delay)."""
    # Mostly a completion with a field dropped or replaced: the shape an endpoint gets almost right.
    kind = draw(st.sampled_from(["completion", "completion", "completion", "json", "text", "status", "stream"]))
    if kind == "completion":
        return 200, _mutated(completion(draw(TEXT.filter(lambda t: "\ud800" not in t))), draw), {}, 0
    if kind == "json":
        return 200, Raw(json.dumps(draw(JSON_VALUE))), {}, 0
    if kind == "text":
        return 200, Raw(draw(st.binary(max_size=80)), draw(st.sampled_from(["text/html", "application/json",
                                                                           "text/event-stream"]))), {}, 0
    if kind == "status":
        return (draw(st.sampled_from([400, 401, 404, 422, 429, 500, 503])),
                Raw(json.dumps({"error": {"message": "refused: Authorization: {auth}"}}), echo=True),
                {"Retry-After": draw(RETRY_AFTER)}, 0)
    events = draw(st.lists(st.one_of(st.builds(chunk, st.one_of(st.none(), st.text(max_size=5)),
                                               st.sampled_from([None, "stop", "length"])),
                                     JSON_VALUE.map(json.dumps), st.text(max_size=10)), max_size=4))
    return 200, sse(*events, done=draw(st.booleans())), {}, 0


@budget(40)
@given(answer=answers(), streamed=st.booleans())
def test_whatever_an_endpoint_answers_the_client_returns_its_types_or_names_the_failure(answer, streamed):
    f = fake_server()
    f.script[:] = [answer]
    client = model_client.Client(base_url=f.url, api_key=KEY, model="fake", retries=0, backoff=0)
    messages = [{"role": "user", "content": "Bonjour"}]
    if streamed:
        got = outcome(lambda: list(client.stream(messages)))
        if isinstance(got, list):
            assert all(isinstance(p, str) and p for p in got) and client.last_usage[1] == len(got)
    else:
        got = outcome(lambda: client.chat(messages, logprobs=1))
        if isinstance(got, contract.ChatResult):
            assert isinstance(got.text, str) and got.text.strip() and isinstance(got.model, str)
            assert all(isinstance(n, int) and n >= 0 for n in (got.input_tokens, got.output_tokens))
            assert all(KEY not in note for note in got.notes)
    if isinstance(got, RungsError):
        assert isinstance(got, contract.ModelError) and KEY not in str(got), str(got)


# ---------------------------------------------------------------- settings

SETTING_VALUES = st.one_of(st.sampled_from(["nan", "inf", "-inf", "-1", "0", "1", "1.5", "2", "1e999", "1e3", " 3 ",
                                            "٣", "0x10", "1_000", "", " ", "two", "9" * 5000]), st.text(max_size=8))
READERS = {"RUNGS_FILE_SECONDS": update.file_seconds, "RUNGS_SERVER_GRACE": lambda: server.timers()[0],
           "RUNGS_SERVER_IDLE": lambda: server.timers()[1],
           "RUNGS_LLM_THREADS": lambda: paths.setting_int("RUNGS_LLM_THREADS", 1, low=1, high=256),
           "RUNGS_ENCODER_THREADS": lambda: paths.setting_int("RUNGS_ENCODER_THREADS", 1, low=1, high=256),
           "RUNGS_ENCODER_PROCESSES": encoding.processes}


@budget(40)
@given(name=st.sampled_from(sorted(READERS)), value=SETTING_VALUES)
def test_every_numeric_setting_is_a_finite_value_in_range_or_refused_by_name(name, value):
    previous = os.environ.get(name)
    try:
        os.environ[name] = value.replace("\0", "")
        got = outcome(READERS[name])
    finally:
        os.environ.pop(name) if previous is None else os.environ.__setitem__(name, previous)
    if isinstance(got, RungsError):
        assert isinstance(got, paths.BadSetting) and name in str(got), got
    else:
        assert isinstance(got, (int, float)) and got == got and abs(got) < float("inf") and got > 0 or \
            (name == "RUNGS_SERVER_IDLE" and got == 0) or (name == "RUNGS_SERVER_GRACE" and got == 0)


@budget(20)
@given(url=st.one_of(TEXT, st.sampled_from(["localhost:8000", "ftp://x", "http://", "https://u:p@h/v1", " "])),
       model=st.one_of(st.none(), st.text(max_size=5)))
def test_a_base_url_from_the_environment_is_a_client_or_a_bad_setting(url, model):
    env = {"OPENAI_BASE_URL": url.replace("\0", "").encode("utf-8", "replace").decode(), "RUNGS_MODEL": model}
    saved = {k: os.environ.get(k) for k in env}
    try:
        for k, v in env.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v.replace("\0", ""))
        got = outcome(model_client.Client)
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    assert not isinstance(got, RungsError) or isinstance(got, paths.BadSetting)


# ---------------------------------------------------------------- the one redaction

WRAPPERS = st.sampled_from(["Authorization: Bearer {k}", "'authorization': '{k}'", "https://me:{k}@host/v1",
                            "https://{k}@host", "?api_key={k}&x=1", "x-api-key: {k}", "key {k} refused", "{k}"])


@budget(40)
@given(before=TEXT, after=TEXT, wrapper=WRAPPERS)
def test_a_key_is_never_printed_wherever_it_sits(before, after, wrapper):
    previous = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = KEY
    try:
        shown = secrets.redact(before + wrapper.format(k=KEY) + after)
    finally:
        os.environ.pop("OPENAI_API_KEY") if previous is None else os.environ.__setitem__("OPENAI_API_KEY", previous)
    assert KEY not in shown


@budget(3)
@given(unit=st.sampled_from(["a", "a.", "http://", "a://b:", "Bearer ", "sk-", "authorization: ", "x" * 5 + "@",
                             "?key=", "api-key "]))
def test_the_redaction_is_linear_in_the_message(unit):
    n = 20_000 // len(unit)
    ratios = []
    for _ in range(3):
        ratios.append(growth(secrets.redact, unit * n, unit * (4 * n), repeat=3))
        if ratios[-1] < 8:
            return
    raise AssertionError(f"redact on {unit!r} × n: time(4n) / time(n) = {ratios}")


def test_a_cut_stream_in_the_fake_is_named_as_one():
    # A guard on the strategy above: the fake endpoint really serves what it is told to.
    import pytest

    f = fake_server()
    f.script[:] = [(200, sse(chunk("a"), done=False), {}, 0)]
    client = model_client.Client(base_url=f.url, api_key=KEY, model="fake", retries=0)
    with pytest.raises(contract.ModelUnavailable, match="cut after 1 pieces"):
        list(client.stream([{"role": "user", "content": "x"}]))

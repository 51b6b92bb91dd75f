"""A room without a model: a recorded run replays exactly, and a call it did not record is refused by name."""

import json

import pytest

from rungs.grounding import Status

from rungs import model as llm
from rungs.core.errors import BadArgument
from rungs.core.paths import BadSetting
from rungs.model import client as model_client
from rungs.model import replay

ASK = [{"role": "user", "content": "Voici des extraits du livret. Combien de jours de congés payés par mois ?"}]
OTHER = [{"role": "user", "content": "Le badge perdu est-il remplacé gratuitement ?"}]
LOGPROBS = [{"token": "O", "logprob": -0.1, "top": {"O": -0.1, "N": -2.4}}]


class Counting(llm.ScriptedClient):
    """The teaching prop, reporting usage as a real server would (reused tokens included)."""

    def chat(self, messages, **options):
        result = super().chat(messages, **options)
        result.reused_tokens, result.latency, result.notes = 7, 1.25, ["a note"]
        return result

    def stream(self, messages, **options):
        yield from super().stream(messages, **options)
        self.last_usage = llm.Usage(self.last_usage[0], self.last_usage[1], 5, 2.5)
        self.last_notes = ["streamed"]


def a_run(client) -> list:
    """What a notebook does with a model, every kind of call, and what it would print."""
    shown = [client.chat(ASK, max_tokens=40)]
    shown.append(client.chat(ASK, max_tokens=1, logprobs=10))
    shown.append(client.chat(ASK, max_tokens=40))  # the same request again: the next recorded reply
    shown.append(list(client.stream(OTHER, max_tokens=60, json_schema={"type": "object"})))
    shown.append((tuple(client.last_usage), client.last_notes))
    try:
        client.chat(OTHER, max_tokens=5)
    except llm.ModelError as err:
        shown.append(f"{type(err).__name__}: {err}")
    shown.append(client.models())
    return shown


def recorded(path):
    inner = Counting(["2,5 jours par mois.", {"text": "O", "logprobs": LOGPROBS}, "Deux jours et demi.",
                      '{"reponse": "Oui", "phrases": [1]}', llm.ModelTimeout("no answer within 120 s")])
    return replay.RecordingClient(inner, path)


def test_a_recorded_run_replays_exactly(tmp_path):
    path = tmp_path / "03_answers_with_sources.jsonl"
    live = a_run(recorded(path))
    again = a_run(llm.ReplayClient(path))
    assert again == live
    assert live[0].reused_tokens == 7 and live[1].logprobs == LOGPROBS and live[0].text != live[2].text
    assert live[5] == "ModelTimeout: no answer within 120 s" and live[4][0][2:] == (5, 2.5)


def test_a_call_it_did_not_record_is_refused_by_name(tmp_path):
    path = tmp_path / "03_answers_with_sources.jsonl"
    a_run(recorded(path))
    replayed = llm.ReplayClient(path)
    with pytest.raises(llm.NotRecorded, match=r"03_answers_with_sources\.jsonl holds no reply for this call \(chat, "
                                              r"[0-9]+-char prompt beginning « Voici des extraits du livret"):
        replayed.chat(ASK, max_tokens=41)  # one knob turned: another request
    with pytest.raises(llm.NotRecorded, match="stream"):
        list(replayed.stream(OTHER, max_tokens=60))  # the schema left out
    with pytest.raises(llm.NotRecorded, match="re-record"):
        replayed.chat(ASK, max_tokens=40, temperature=0.5)


def test_the_key_is_the_whole_request(tmp_path):
    base = replay.request_key("chat", ASK, max_tokens=40)
    assert base == replay.request_key("chat", [dict(m) for m in ASK], max_tokens=40, temperature=0, seed=0)
    for other in (dict(max_tokens=41), dict(max_tokens=40, seed=1), dict(max_tokens=40, logprobs=1),
                  dict(max_tokens=40, json_schema={"type": "object"}), dict(max_tokens=40, temperature=0.1)):
        assert replay.request_key("chat", ASK, **other) != base
    assert replay.request_key("stream", ASK, max_tokens=40) != base


def test_no_replay_file_and_a_damaged_one_are_named(tmp_path):
    with pytest.raises(llm.NotRecorded, match="no replay file .*RUNGS_REPLAY=record"):
        llm.ReplayClient(tmp_path / "absent.jsonl")
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text('{"key": "k", "reply": {}}\nnot json\n')
    with pytest.raises(llm.BadResponse, match="line 2 of the replay file damaged.jsonl"):
        llm.ReplayClient(damaged)


def test_a_recording_is_written_anew_by_each_run(tmp_path):
    path = tmp_path / "n.jsonl"
    a_run(recorded(path))
    a_run(recorded(path))
    assert len(path.read_text().splitlines()) == 6  # one run's six calls, not twelve
    assert all(json.loads(line)["call"] for line in path.read_text().splitlines())


def test_the_default_client_honours_one_setting(tmp_path, monkeypatch):
    monkeypatch.setattr(model_client, "_DEFAULT", {})
    monkeypatch.setattr(replay, "_NOTEBOOK", [])
    path = tmp_path / "04_typed_decisions.jsonl"
    a_run(recorded(path))
    monkeypatch.setenv("RUNGS_REPLAY", "replay")
    with pytest.raises(BadSetting, match=r"which notebook.*default_client\(notebook="):
        llm.default_client()
    monkeypatch.setattr(replay.paths, "replays", lambda: tmp_path)  # notebooks/replays/, here
    client = llm.default_client(notebook="04_typed_decisions")
    assert isinstance(client, llm.ReplayClient) and client.path == path and llm.default_client() is client
    assert client.chat(ASK, max_tokens=40).text == "2,5 jours par mois."
    monkeypatch.setenv("RUNGS_REPLAY_FILE", str(tmp_path / "elsewhere.jsonl"))
    with pytest.raises(llm.NotRecorded, match="elsewhere.jsonl"):
        llm.default_client()
    monkeypatch.setenv("RUNGS_REPLAY", "record")
    recording = llm.default_client()
    assert isinstance(recording, llm.RecordingClient) and isinstance(recording.inner, llm.Client)
    monkeypatch.setenv("RUNGS_REPLAY", "sometimes")
    with pytest.raises(BadSetting, match="RUNGS_REPLAY='sometimes' is not one of off, replay, record"):
        llm.default_client()
    monkeypatch.delenv("RUNGS_REPLAY")
    assert isinstance(llm.default_client(), llm.Client)


@pytest.mark.parametrize("name", ["../03", "03/x", "", ".hidden", 3, "a" * 200])
def test_a_notebook_name_that_is_not_one_is_refused(name):
    with pytest.raises(BadArgument, match="notebook"):
        llm.default_client(notebook=name)


def test_a_research_run_replays_with_its_fence_code(tmp_path):
    # N5 fences its sources with a code that is a hash of the request: a replayed run sends the same prompt and
    # gets the recorded report back, and a fresh run of the same request draws the same code (deterministic).
    from rungs import bm25, research
    from rungs.lab.handbook import load_pages

    pages = load_pages()
    search = bm25.build_index(pages, stopwords=True)
    path = tmp_path / "05_research_loop.jsonl"
    question = "Combien de jours de congés payés ?"
    inner = Counting(["Vous acquérez 2,5 jours par mois [1].", json.dumps({"questions": ["Combien de RTT ?"]})])
    live = research.run(question, pages=pages, retriever=search, client=replay.RecordingClient(inner, path))
    again = research.run(question, pages=pages, retriever=search, client=llm.ReplayClient(path))
    assert again.text == live.text == "Vous acquérez 2,5 jours par mois [1]."
    assert again.trace["prompt"] == live.trace["prompt"] and again.trace["follow_ups"] == ["Combien de RTT ?"]
    fresh = research.run(question, pages=pages, retriever=search, client=llm.ScriptedClient(["Réponse [1]."]))
    assert fresh.trace["fences"][-1] == live.trace["fences"][-1]
    unrecorded = research.run("Combien de RTT ?", pages=pages, retriever=search, client=llm.ReplayClient(path))
    assert unrecorded.status is Status.UNAVAILABLE and "NotRecorded" in repr(unrecorded.trace), unrecorded.trace


def test_a_replay_file_that_is_not_utf8_is_named(tmp_path):
    path = tmp_path / "latin.jsonl"
    path.write_bytes('{"key": "k", "kind": "chat", "reply": {"text": "congés"}}\n'.encode("latin-1"))
    with pytest.raises(llm.BadResponse, match=r"latin\.jsonl is not UTF-8 .*re-record"):
        llm.ReplayClient(path)


def test_a_record_missing_a_field_is_named_and_an_extra_one_ignored(tmp_path):
    path = tmp_path / "n.jsonl"
    a_run(recorded(path))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    lines[0]["reply"]["from_a_later_rungs"] = 1  # a reply with one more field: read what can be read
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert llm.ReplayClient(path).chat(ASK, max_tokens=40).text == "2,5 jours par mois."
    for n, field in ((0, "text"), (3, "chunks")):
        broken = [dict(line, reply=dict(line["reply"])) if line.get("reply") else line for line in lines]
        del broken[n]["reply"][field]
        path.write_text("".join(json.dumps(line) + "\n" for line in broken))
        with pytest.raises(llm.BadResponse, match=rf"line {n + 1} of the replay file n\.jsonl.*{field}"):
            llm.ReplayClient(path)
    del lines[3]["reply"]["usage"]  # a stream without its usage still replays its pieces
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert "".join(llm.ReplayClient(path).stream(OTHER, max_tokens=60, json_schema={"type": "object"}))


def test_recording_where_it_cannot_write_is_refused_before_the_call(tmp_path):
    folder_is_a_file = tmp_path / "replays"
    folder_is_a_file.write_text("")
    inner = Counting(["Oui."])
    for where in (folder_is_a_file / "n.jsonl", tmp_path):
        with pytest.raises(BadSetting, match="cannot record"):
            replay.RecordingClient(inner, where).chat(ASK)
    assert inner.calls == []  # refused before the model was paid


class Down(llm.ScriptedClient):
    """An endpoint that is down: every call refused as the real client refuses it."""

    def chat(self, messages, **options):
        raise llm.ModelUnavailable("the endpoint does not answer")


def test_a_failed_call_never_replaces_a_good_recording(tmp_path):
    path = tmp_path / "n.jsonl"
    a_run(recorded(path))
    good = path.read_text()
    with pytest.raises(llm.ModelError):
        replay.RecordingClient(Down([]), path).chat(ASK, max_tokens=40)
    assert path.read_text() == good


def test_two_recorders_on_one_file_lose_no_call(tmp_path):
    path = tmp_path / "n.jsonl"
    first, second = recorded(path), replay.RecordingClient(Counting(["Deux."]), path)
    first.chat(ASK, max_tokens=40)
    second.chat(OTHER, max_tokens=40)
    first.chat(ASK, max_tokens=1, logprobs=10)
    replayed = llm.ReplayClient(path)
    assert replayed.chat(OTHER, max_tokens=40).text == "Deux."
    assert replayed.chat(ASK, max_tokens=40).text == "2,5 jours par mois."
    assert replayed.chat(ASK, max_tokens=1, logprobs=10).logprobs == LOGPROBS


def test_not_recorded_quotes_a_prompt_safely(tmp_path):
    # Finding (issue 43): NotRecorded's message carried the prompt's raw escapes and right-to-left marks.
    path = tmp_path / "03_answers_with_sources.jsonl"
    a_run(recorded(path))
    hostile = [{"role": "user", "content": "Voici\x1b[2J un \u202eextrait\u2066 piégé\x07 ?"}]
    with pytest.raises(llm.NotRecorded) as err:
        llm.ReplayClient(path).chat(hostile, max_tokens=5)
    said = str(err.value)
    assert not any(c in said for c in "\x1b\x07\u202e\u2066"), said
    assert "Voici\\x1b[2J un \\u202eextrait\\u2066 piégé\\x07 ?" in said


@pytest.mark.parametrize("kind, reply, field", [
    ("chat", {"text": "oui", "finish_reason": "stop", "input_tokens": "abc"}, "input_tokens"),
    ("chat", {"text": "oui", "finish_reason": "stop", "output_tokens": -4}, "output_tokens"),
    ("chat", {"text": "oui", "finish_reason": "stop", "notes": "une note"}, "notes"),
    ("chat", {"text": "oui", "finish_reason": "stop", "model": 5}, "model"),
    ("chat", {"text": "oui", "finish_reason": "stop", "latency": -1}, "latency"),
    ("chat", {"text": "oui", "finish_reason": "stop", "logprobs": {"top": {}}}, "logprobs"),
    (None, {"text": 3, "finish_reason": "stop"}, "text"),
    ("stream", {"chunks": [1, 2]}, "chunks"),
    ("stream", {"chunks": ["a"], "usage": ["x", 1]}, "usage")])
def test_a_recorded_field_of_the_wrong_type_is_refused_by_line_and_field(tmp_path, kind, reply, field):
    # Probe (issue 43): a count « abc » or -4 replayed as the call's cost, notes as letters, a stream of numbers
    # yielded as they were, a text 3 raised AttributeError ('int' object has no attribute 'strip').
    messages = [{"role": "user", "content": "x"}]
    key = replay.request_key("stream" if kind == "stream" else "chat", messages, max_tokens=5)
    path = tmp_path / "n.jsonl"
    path.write_text(json.dumps({"key": key, "reply": reply, **({"kind": kind} if kind else {})}) + "\n",
                    encoding="utf-8")
    with pytest.raises(llm.BadResponse, match=f"line 1 of the replay file n.jsonl: its reply's '{field}' is not"):
        client = llm.ReplayClient(path)
        list(client.stream(messages, max_tokens=5)) if kind == "stream" else client.chat(messages, max_tokens=5)


def test_a_replay_file_nested_thousands_deep_is_refused_by_line(tmp_path):
    # Probe of issue 43: a line of 100,000 « [ » raised RecursionError from json.loads, not a refusal.
    path = tmp_path / "deep.jsonl"
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    with pytest.raises(llm.BadResponse, match="line 1 .* is not a recorded call"):
        replay.ReplayClient(path)


def test_a_replay_path_the_system_refuses_is_refused_by_name(tmp_path):
    # Probe of issue 43: a name too long for the system raised OSError (errno 36) from pathlib, in replay and
    # in record (before the call, but raw).
    long = tmp_path / ("x" * 5000)
    with pytest.raises(replay.NotRecorded, match="no replay file"):
        replay.ReplayClient(long)
    with pytest.raises(BadSetting, match="cannot record to .*shorter path"):
        replay.RecordingClient(llm.ScriptedClient(["a"]), long)


def test_a_replay_file_name_with_terminal_escapes_is_quoted_safely(tmp_path):
    # Probe of issue 43: a file named « \x1b[31m….jsonl » put its raw escape in the refusal of a bad line, of a
    # file not UTF-8, and of a folder recorded into.
    bad_line, not_utf8, folder = (tmp_path / "\x1b[31mred.jsonl", tmp_path / "\x1b[31mbin.jsonl",
                                  tmp_path / "\x1b[2Jdir")
    bad_line.write_text("not json\n", encoding="utf-8")
    not_utf8.write_bytes(b"\xff\xfe")
    folder.mkdir()
    for make in (lambda: replay.ReplayClient(bad_line), lambda: replay.ReplayClient(not_utf8),
                 lambda: replay.RecordingClient(llm.ScriptedClient(["a"]), folder)):
        with pytest.raises((llm.BadResponse, BadSetting)) as err:
            make()
        assert "\x1b" not in str(err.value), str(err.value)

"""rungs.model against a fake OpenAI-compatible server on 127.0.0.1: each fault gets its named behaviour."""

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from rungs import model as llm
from rungs.model import bundle, supervisor
from rungs.model import client as model_client
from rungs.core.errors import BadArgument
from rungs.core.paths import BadSetting

KEY = "sk-test-SECRET-never-printed"
BROKEN_STREAM = "<a stream cut in the middle>"


class Raw:
    """A body sent exactly as written, with its content type; ``cut``: chunked, and the connection dropped
    before the final chunk (a body cut in the middle); ``echo``: the request's Authorization header is
    written into the body where ``{auth}`` stands (an endpoint that quotes what it was sent)."""

    def __init__(self, body, content_type="application/json", *, cut=False, echo=False):
        self.body = body if isinstance(body, bytes) else body.encode()
        self.content_type, self.cut, self.echo = content_type, cut, echo


def sse(*events, done=True) -> Raw:
    """An event stream: each event a dict (sent as JSON) or a string (sent as written), then [DONE]."""
    lines = [f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n" for e in events]
    return Raw("".join(lines) + ("data: [DONE]\n\n" if done else ""), "text/event-stream")


def chunk(text=None, finish=None):
    delta = {} if text is None else {"content": text}
    return {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "fake",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def completion(text, finish="stop"):
    return {"id": "c", "object": "chat.completion", "created": 0, "model": "fake",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}}


class Fake:
    """A scripted HTTP server: each POST takes the next (status, body, headers, delay) from the script."""

    def __init__(self, script):
        self.script, self.requests = list(script), []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                self.do_POST()

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                fake.requests.append({"body": body, "auth": self.headers.get("Authorization")})
                status, payload, headers, delay = fake.script.pop(0)
                time.sleep(delay)
                if payload == BROKEN_STREAM:
                    return self.broken_stream()
                if isinstance(payload, Raw):
                    return self.raw(status, payload)
                data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    for k, v in {"Content-Type": "application/json", **headers}.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def raw(self, status, payload):
                body = payload.body.replace(b"{auth}", (self.headers.get("Authorization") or "").encode()) \
                    if payload.echo else payload.body
                self.protocol_version = "HTTP/1.1"
                self.send_response(status)
                self.send_header("Content-Type", payload.content_type)
                if payload.cut:
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    self.wfile.write(f"{len(body):x}\r\n".encode() + body + b"\r\n")
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                self.close_connection = True

            def broken_stream(self):
                """One streamed piece, then the connection drops in the middle of the body."""
                self.protocol_version = "HTTP/1.1"
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                piece = b'data: {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "fake", ' \
                        b'"choices": [{"index": 0, "delta": {"content": "Bonj"}, "finish_reason": null}]}\n\n'
                self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                self.wfile.flush()
                self.close_connection = True  # and no final zero-length chunk: the body is cut

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def client(self, **kw):
        return llm.Client(base_url=self.url, api_key=KEY, model="fake", backoff=0.01, **kw)


@pytest.fixture
def fake():
    servers = []

    def make(*script):
        servers.append(Fake(script))
        return servers[-1]

    yield make
    for s in servers:
        s.server.shutdown()


MESSAGES = [{"role": "user", "content": "Bonjour"}]


def test_500_then_success_is_retried_and_noted(fake):
    f = fake((500, {"error": {"message": "boom"}}, {}, 0), (200, completion("Salut"), {}, 0))
    result = f.client().chat(MESSAGES)
    assert result.text == "Salut" and len(f.requests) == 2
    assert result.notes == ["HTTP 500 on attempt 1 (ModelUnavailable); retried after 0.0 s"]  # backoff 0.01 s
    assert f.requests[0]["auth"] == f"Bearer {KEY}"


@pytest.mark.parametrize("status, hint", [(401, "OPENAI_API_KEY"), (404, "RUNGS_MODEL"), (422, "refused")])
def test_an_error_asking_again_would_not_fix_is_named_once(fake, status, hint):
    f = fake((status, {"error": {"message": "nope"}}, {}, 0))
    with pytest.raises(llm.ModelRefused, match=f"HTTP {status} \\(nope\\).*{hint}") as info:
        f.client().chat(MESSAGES)
    assert info.value.status == status and len(f.requests) == 1 and KEY not in str(info.value)


def test_429_honours_retry_after(fake):
    f = fake((429, {"error": {"message": "slow down"}}, {"Retry-After": "0.3"}, 0), (200, completion("ok"), {}, 0))
    start = time.perf_counter()
    result = f.client().chat(MESSAGES)
    assert result.text == "ok" and time.perf_counter() - start >= 0.3
    assert "0.3 s" in result.notes[0]


def test_persistent_5xx_is_model_unavailable(fake):
    f = fake(*[(503, {"error": {"message": "down"}}, {}, 0)] * 3)
    with pytest.raises(llm.ModelUnavailable, match="HTTP 503 3 times") as info:
        f.client(retries=2).chat(MESSAGES)
    assert KEY not in str(info.value)


def test_a_hung_connection_times_out_with_a_name(fake):
    f = fake((200, completion("late"), {}, 2.0))
    with pytest.raises(llm.ModelTimeout, match="within 1 s") as info:
        f.client(timeout=1.0, retries=0).chat(MESSAGES)
    assert KEY not in str(info.value)


def test_a_server_that_is_down_is_named():
    client = llm.Client(base_url="http://127.0.0.1:9/v1", api_key=KEY, model="m", retries=1, backoff=0.01)
    with pytest.raises(llm.ModelUnavailable, match="cannot connect") as info:
        client.chat(MESSAGES)
    assert KEY not in str(info.value) and KEY not in repr(client) and "***" in repr(client)


def test_a_non_json_body_is_an_error_not_a_crash(fake):
    f = fake((200, "<html>not json</html>", {}, 0))
    with pytest.raises(llm.BadResponse, match="that is not JSON") as info:
        f.client(retries=2).chat(MESSAGES)
    assert KEY not in str(info.value) and len(f.requests) == 1  # not retried: a wrong URL stays wrong


def test_finish_length_with_empty_content_is_truncated_completion(fake):
    f = fake((200, completion("", "length"), {}, 0))
    with pytest.raises(llm.TruncatedCompletion, match="max_tokens=7"):
        f.client().chat(MESSAGES, max_tokens=7)


def test_empty_completion_is_named(fake):
    f = fake((200, completion("  "), {}, 0))
    with pytest.raises(llm.EmptyCompletion):
        f.client().chat(MESSAGES)


def test_json_mode_refused_at_every_level_ends_without_it_and_says_so(fake):
    refused = (400, {"error": {"message": "response_format not supported"}}, {}, 0)
    f = fake(refused, refused, refused, (200, completion('{"a": 1}'), {}, 0))
    result = f.client().chat(MESSAGES, json_schema={"type": "object"})
    sent = [r["body"].get("response_format") for r in f.requests]
    assert [s and s["type"] for s in sent] == ["json_schema", "json_object", "json_object", None]
    assert "schema" in sent[1] and "schema" not in sent[2]
    assert "refused json_schema (HTTP 400), json_object+schema (HTTP 400), json_object (HTTP 400)" in result.notes[0]
    assert any("rejected JSON mode" in n for n in result.notes)


def test_a_llama_cpp_room_server_500_on_json_schema_steps_down_once_and_remembers(fake):
    # llama-cpp-python answers HTTP 500 to OpenAI's json_schema form: probed once, never retried three times.
    f = fake((500, {"error": {"message": "Internal Server Error"}}, {}, 0), (200, completion('{"a": 1}'), {}, 0),
             (200, completion('{"a": 2}'), {}, 0))
    client = f.client()
    first = client.chat(MESSAGES, json_schema={"type": "object"})
    assert first.text == '{"a": 1}' and len(f.requests) == 2
    assert "refused json_schema (HTTP 500); accepted json_object+schema (remembered for this endpoint)" in first.notes[0]
    second = f.client().chat(MESSAGES, json_schema={"type": "object"})  # another client, same endpoint
    assert second.text == '{"a": 2}' and len(f.requests) == 3 and second.notes == []
    assert f.requests[2]["body"]["response_format"] == {"type": "json_object", "schema": {"type": "object"}}


def test_an_outage_while_probing_is_still_model_unavailable_and_nothing_is_remembered(fake):
    f = fake(*[(500, {"error": {"message": "down"}}, {}, 0)] * 6)
    with pytest.raises(llm.ModelUnavailable, match="HTTP 500 3 times"):
        f.client(retries=2).chat(MESSAGES, json_schema={"type": "object"})
    assert len(f.requests) == 6 and (f.url, "fake") not in model_client._ACCEPTED


def test_a_stream_cut_in_the_middle_is_model_unavailable(fake):
    f = fake((200, BROKEN_STREAM, {}, 0))
    pieces = []
    with pytest.raises(llm.ModelUnavailable, match="broke after 1 pieces") as info:
        for piece in f.client().stream(MESSAGES):
            pieces.append(piece)
    assert pieces == ["Bonj"] and not isinstance(info.value, llm.ModelServerCrashed)


def test_a_crash_record_becomes_a_named_error_with_signal_log_and_fix(monkeypatch):
    monkeypatch.setattr(supervisor, "llama_build", lambda: {"kind": "other", "version": "0.3.36"})
    record = {"pid": 4242, "returncode": -11, "signal": "SIGSEGV", "during": "serving",
              "tail": ["INFO: POST /v1/chat/completions", "ggml_backend_amx_mul_mat"], "log": "/x/llama.log"}
    err = supervisor.crashed(record, "during the request")
    assert isinstance(err, llm.ModelServerCrashed) and isinstance(err, llm.ModelUnavailable)
    text = str(err)
    assert "pid 4242" in text and "SIGSEGV" in text and "ggml_backend_amx_mul_mat" in text
    assert "without native CPU flags" in err.hint and "bash run.sh lab" in err.hint and err.signal == "SIGSEGV"
    corrupt = supervisor.crashed({"pid": 7, "returncode": 1, "during": "starting", "model": "/m.gguf",
                            "tail": ["ValueError: Failed to load model from file: /m.gguf"]}, "while starting")
    assert "exited with status 1 while starting" in str(corrupt) and "python -m rungs.model prepare" in corrupt.hint


def test_hosted_endpoints_get_the_json_schema_form(fake):
    f = fake((200, completion('{"a": 1}'), {}, 0))
    f.client().chat(MESSAGES, json_schema={"type": "object"})
    assert f.requests[0]["body"]["response_format"]["type"] == "json_schema"


def test_a_base_url_without_a_model_name_is_refused(monkeypatch):
    monkeypatch.delenv("RUNGS_MODEL", raising=False)
    # A setting that cannot work is a RungsError (the CLI prints it as one line), naming what to set.
    with pytest.raises(BadSetting, match="set RUNGS_MODEL"):
        llm.Client(base_url="http://127.0.0.1:9/v1")


def test_a_corrupt_model_part_is_a_model_file_error(tmp_path, monkeypatch):
    monkeypatch.setenv("RUNGS_CACHE", str(tmp_path))
    monkeypatch.delenv("RUNGS_LOCAL_MODEL", raising=False)
    fake_part = tmp_path / "part.bin"
    fake_part.write_bytes(b"not the model")
    monkeypatch.setattr(bundle, "_part_file", lambda n: fake_part)
    with pytest.raises(llm.ModelFileError, match="sha256"):
        llm.prepare(quiet=True)
    assert not list((tmp_path / "models").glob("*.gguf"))  # nothing half-written is left as the model



# ---------------------------------------------------------------- whatever an endpoint sends, every field checked

def _with(**change):
    body = completion("Salut")
    for path, value in change.items():
        target, *keys = path.split("__")
        node = body
        for key in [target, *keys][:-1]:
            node = node[int(key)] if isinstance(node, list) else node[key]
        node[[target, *keys][-1] if not isinstance(node, list) else int([target, *keys][-1])] = value
    return body


UNUSABLE = {
    "an HTML page (text/html)": (Raw("<html><body>Welcome</body></html>", "text/html"), "not JSON"),
    "an HTML page said to be JSON": (Raw("<html>hi</html>"), "not JSON"),
    "a JSON list": ([1, 2], "a list"),
    "a JSON string": ("\"ok\"", "a str"),
    "no choices": ({**completion("x"), "choices": []}, "choices"),
    "choices that are text": ({**completion("x"), "choices": "abc"}, "choices"),
    "a choice that is a number": ({**completion("x"), "choices": [5]}, "choices[0]"),
    "a message that is null": (_with(choices__0__message=None), "choices[0].message"),
    "content that is a number": (_with(choices__0__message__content=5), "choices[0].message.content"),
    "content that is a list": (_with(choices__0__message__content=["a"]), "choices[0].message.content"),
    "a finish_reason that is a number": (_with(choices__0__finish_reason=7), "choices[0].finish_reason"),
    "prompt_tokens that is text": (_with(usage__prompt_tokens="abc"), "usage.prompt_tokens"),
    "completion_tokens below zero": (_with(usage__completion_tokens=-3), "usage.completion_tokens"),
    "prompt_tokens that is true": (_with(usage__prompt_tokens=True), "usage.prompt_tokens"),
    "usage that is text": ({**completion("x"), "usage": "lots"}, "usage"),
    "a model name that is a number": ({**completion("x"), "model": 42}, "model"),
}


@pytest.mark.parametrize("what", sorted(UNUSABLE))
def test_a_response_that_cannot_be_used_is_bad_response_naming_the_field_and_the_endpoint(fake, what):
    payload, field = UNUSABLE[what]
    f = fake((200, payload, {}, 0))
    with pytest.raises(llm.BadResponse) as info:
        f.client(retries=2).chat(MESSAGES)
    message = str(info.value)
    assert field in message and f.url in message and KEY not in message, message
    assert len(f.requests) == 1  # not retried: an endpoint that answers this will answer it again


def test_logprobs_of_the_wrong_shape_are_bad_response(fake):
    body = completion("Oui")
    body["choices"][0]["logprobs"] = {"content": [{"token": "Oui", "logprob": "high", "top_logprobs": []}]}
    with pytest.raises(llm.BadResponse, match=r"choices\[0\]\.logprobs"):
        fake((200, body, {}, 0)).client().chat(MESSAGES, logprobs=2)


def test_a_well_formed_answer_still_reads_with_its_usage_and_logprobs(fake):
    body = completion("Oui")
    body["usage"] = None  # an endpoint that does not count is not wrong: the counts are 0
    body["choices"][0]["logprobs"] = {"content": [{"token": "Oui", "logprob": -0.1,
                                                   "top_logprobs": [{"token": "Oui", "logprob": -0.1}]}]}
    result = fake((200, body, {}, 0)).client().chat(MESSAGES, logprobs=1)
    assert (result.text, result.input_tokens, result.output_tokens) == ("Oui", 0, 0)
    assert result.logprobs == [{"token": "Oui", "logprob": -0.1, "top": {"Oui": -0.1}}]


def test_the_model_list_is_checked_too(fake):
    f = fake()
    f.script.append((200, {"object": "list", "data": [{"id": "a"}, {"id": 5}]}, {}, 0))
    # GET /v1/models: the fake answers GETs from the same script.
    with pytest.raises(llm.BadResponse, match=r"data\[1\]\.id"):
        f.client().models()


@pytest.mark.parametrize("header", ["-1", "nan", "inf", "abc", "1e999", "99999999"])
def test_a_retry_after_that_is_no_wait_is_not_waited_and_says_so(fake, header):
    f = fake((429, {"error": {"message": "slow down"}}, {"Retry-After": header}, 0), (200, completion("ok"), {}, 0))
    start = time.perf_counter()
    result = f.client().chat(MESSAGES)
    assert result.text == "ok" and time.perf_counter() - start < 5
    assert f"Retry-After {header!r}" in result.notes[0] and "waited 0.0 s instead" in result.notes[0], result.notes


def test_a_retry_after_date_in_the_past_waits_nothing(fake):
    f = fake((503, {"error": {"message": "busy"}}, {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0),
             (200, completion("ok"), {}, 0))
    result = f.client().chat(MESSAGES)
    assert result.text == "ok" and "retried after 0.0 s" in result.notes[0]


def test_a_stream_reads_its_pieces_and_its_end(fake):
    f = fake((200, sse(chunk("Bon"), chunk("jour"), chunk(finish="stop")), {}, 0))
    client = f.client()
    assert list(client.stream(MESSAGES)) == ["Bon", "jour"] and client.last_usage[1] == 2


@pytest.mark.parametrize("line, field", [("{not json", "not JSON"), ("[1, 2]", "a list"),
                                         ('{"choices": [{"delta": {"content": 5}}]}', "delta.content"),
                                         ('{"choices": "x"}', "choices")])
def test_a_stream_line_that_cannot_be_used_is_bad_response(fake, line, field):
    f = fake((200, sse(chunk("Bon"), line), {}, 0))
    pieces = []
    with pytest.raises(llm.BadResponse, match=re.escape(field)) as info:
        for piece in f.client().stream(MESSAGES):
            pieces.append(piece)
    assert pieces == ["Bon"] and "stream" in str(info.value) and f.url in str(info.value)


def test_a_stream_that_ends_without_finishing_is_cut_not_answered(fake):
    # The connection closes cleanly after two pieces: no finish_reason, no [DONE]. That answer is not whole.
    f = fake((200, sse(chunk("Les congés "), chunk("sont de"), done=False), {}, 0))
    pieces = []
    with pytest.raises(llm.ModelUnavailable, match="cut after 2 pieces") as info:
        for piece in f.client().stream(MESSAGES):
            pieces.append(piece)
    assert pieces == ["Les congés ", "sont de"] and not isinstance(info.value, llm.ModelServerCrashed)


def test_a_stream_answered_with_one_whole_completion_is_read_as_one_piece(fake):
    f = fake((200, completion("Salut"), {}, 0))  # an endpoint that ignores stream=True
    assert list(f.client().stream(MESSAGES)) == ["Salut"]


def test_a_stream_answered_with_a_web_page_is_bad_response(fake):
    with pytest.raises(llm.BadResponse, match="not JSON"):
        list(fake((200, Raw("<html>login</html>", "text/html"), {}, 0)).client().stream(MESSAGES))


# ---------------------------------------------------------------- a key is never printed

def test_an_endpoint_that_echoes_the_authorization_header_never_shows_the_key(fake, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # the key given as an argument only
    f = fake((401, Raw('{"error": {"message": "invalid header Authorization: {auth}"}}', echo=True), {}, 0),
             (400, Raw('{"error": {"message": "got {auth}"}}', echo=True), {}, 0),
             (200, Raw("<html>{auth}</html>", "text/html", echo=True), {}, 0))
    for _ in range(3):
        with pytest.raises(llm.ModelError) as info:
            f.client(retries=0).chat(MESSAGES)
        assert KEY not in str(info.value) and KEY[3:] not in str(info.value), str(info.value)
    assert f.requests[0]["auth"] == f"Bearer {KEY}"  # it was sent, it was echoed, it was not shown


def test_a_key_inside_the_base_url_is_never_shown(fake, monkeypatch):
    f = fake((503, {"error": {"message": "down"}}, {}, 0), (503, {"error": {"message": "down"}}, {}, 0))
    secret_url = f.url.replace("http://", f"http://learner:{KEY}@")
    client = llm.Client(base_url=secret_url, api_key="x", model="fake", retries=1, backoff=0.01)
    with pytest.raises(llm.ModelUnavailable) as info:
        client.chat(MESSAGES)
    assert KEY not in str(info.value) and KEY not in repr(client) and "***" in str(info.value)


def test_a_base_url_that_is_not_a_web_address_is_a_bad_setting(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "localhost:8000/v1")
    with pytest.raises(BadSetting, match="OPENAI_BASE_URL.*http://"):
        llm.Client(model="m")


def test_the_rungs_that_call_a_model_name_a_broken_endpoint(fake):
    from rungs import decide, rag

    f = fake(*[(200, Raw("<html>portal</html>", "text/html"), {}, 0)] * 6)
    passages = [{"id": "a", "title": "Congés", "body": "Deux jours et demi par mois."}]
    with pytest.raises(llm.BadResponse):
        rag.answer("Combien de jours ?", passages, f.client(retries=0)).raise_for_status()
    with pytest.raises(llm.BadResponse):
        decide.ask("Le badge est perdu.", {"ok": {"type": "noul", "instructions": "Perdu ?"}}, f.client(retries=0))

@pytest.mark.model
def test_the_real_local_model_answers_through_the_sdk():
    client = llm.Client()
    assert llm.LOCAL_MODEL_NAME in client.models()
    result = client.chat([{"role": "user", "content": "Réponds par un seul mot : oui ou non. Paris est-elle en France ?"}],
                         max_tokens=5, logprobs=5)
    assert result.text.strip() and result.input_tokens > 0 and result.logprobs and result.logprobs[0]["top"]


@pytest.mark.model
def test_the_real_local_model_streams_through_the_sdk():
    # The happy path of Client.stream on the real server: pieces arrive, they make the text, usage is kept.
    client = llm.Client()
    ask = [{"role": "user", "content": "Écris seulement le mot : bonjour"}]
    pieces = list(client.stream(ask, max_tokens=8))
    assert len(pieces) >= 1 and "".join(pieces).strip()
    usage = client.last_usage  # counted by the server, on the stream's last chunk
    assert usage[0] == usage.input_tokens > 0 and usage[1] == usage.output_tokens >= len(pieces) and usage.seconds > 0
    again = list(client.stream(ask, max_tokens=8))
    assert again == pieces and 0 < client.last_usage.reused_tokens < client.last_usage.input_tokens


def test_a_crash_report_quoting_a_key_from_the_log_does_not_show_it(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    record = {"pid": 7, "returncode": -11, "signal": "SIGSEGV", "during": "serving", "log": "/x/llama.log",
              "tail": [f"INFO: headers {{'authorization': 'Bearer {KEY}'}}", f"key={KEY}"]}
    err = supervisor.crashed(record, "during the request")
    assert KEY not in str(err) and all(KEY not in line for line in err.log_tail)


@pytest.mark.parametrize("knob, value", [("temperature", float("nan")), ("temperature", float("inf")),
                                         ("temperature", -1), ("temperature", "0"), ("max_tokens", 0),
                                         ("max_tokens", 1.5), ("logprobs", -1), ("logprobs", 21), ("seed", None),
                                         ("json_schema", "{}")])
def test_a_knob_a_request_cannot_carry_is_refused_before_any_call(fake, knob, value):
    f = fake()
    with pytest.raises(BadArgument, match=knob):
        f.client().chat(MESSAGES, **{knob: value})
    if knob != "logprobs":
        with pytest.raises(BadArgument, match=knob):
            list(f.client().stream(MESSAGES, **{knob: value}))
    assert not f.requests  # nothing was sent


@pytest.mark.parametrize("messages", ["Bonjour", [], [{"role": "user"}], [{"role": "user", "content": 5}], [7]])
def test_messages_that_are_not_messages_are_refused_before_any_call(fake, messages):
    f = fake()
    with pytest.raises(BadArgument, match="messages"):
        f.client().chat(messages)
    assert not f.requests


@pytest.mark.parametrize("url", ["http://[::1", "http://[::1/v1", "http://localhost:99999/v1", "http:///v1"])
def test_an_address_that_cannot_be_read_is_a_bad_setting_at_the_door(monkeypatch, url):
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    with pytest.raises(BadSetting, match="OPENAI_BASE_URL.*brackets"):
        llm.Client(model="m")


def test_ask_with_an_unreadable_address_says_so_in_one_line(tmp_path, monkeypatch, capsys):
    from rungs.tools import cli

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "conges.md").write_text("# Congés\n\nChaque salarié acquiert 2,5 jours de congés par mois.\n")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("RUNGS_SCRIPTED_REPLIES", raising=False)
    assert cli.main(["index", str(folder), "--no-vectors"]) == 0
    monkeypatch.setenv("OPENAI_BASE_URL", "http://[::1")
    monkeypatch.setenv("RUNGS_MODEL", "m")
    code = cli.main(["ask", "Combien de congés par mois ?", "--index", str(folder), "--rung", "bm25"])
    out, err = capsys.readouterr()
    assert code == 1 and "Traceback" not in out + err and "OPENAI_BASE_URL" in err, err[-2000:]


def test_the_client_timeout_is_a_setting_the_default_client_honours(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("RUNGS_MODEL", "m")
    monkeypatch.delenv("RUNGS_REPLAY", raising=False)
    assert llm.Client().timeout == model_client.TIMEOUT_DEFAULT
    monkeypatch.setenv("RUNGS_LLM_TIMEOUT", "900")
    assert llm.Client().timeout == 900 and llm.Client(timeout=30).timeout == 30  # an argument wins
    monkeypatch.setattr(model_client, "_DEFAULT", {})
    assert llm.default_client().timeout == 900
    for bad in ("nan", "0", "-5", "3601", "soon"):
        monkeypatch.setenv("RUNGS_LLM_TIMEOUT", bad)
        with pytest.raises(BadSetting, match="RUNGS_LLM_TIMEOUT"):
            llm.Client()


def test_a_timeout_says_how_to_wait_longer(fake):
    with pytest.raises(llm.ModelTimeout, match="RUNGS_LLM_TIMEOUT"):
        fake((200, completion("Oui"), {}, 1.5)).client(timeout=0.3, retries=0).chat(MESSAGES)


def test_the_prompt_tokens_a_server_reused_are_reported(fake):
    body = completion("Oui")
    body["usage"]["prompt_tokens_details"] = {"cached_tokens": 3}
    result = fake((200, body, {}, 0)).client().chat(MESSAGES)
    assert (result.input_tokens, result.reused_tokens, result.output_tokens) == (5, 3, 2)
    end = chunk(finish="stop")
    end["usage"] = {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11,
                    "prompt_tokens_details": {"cached_tokens": 4}}
    client = fake((200, sse(chunk("Bon"), chunk("jour"), end), {}, 0)).client()
    assert list(client.stream(MESSAGES)) == ["Bon", "jour"]
    assert client.last_usage[:3] == (9, 2, 4) and client.last_usage[0] == 9 and client.last_usage.seconds > 0
    usage_alone = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "fake", "choices": [],
                   "usage": {"prompt_tokens": 7, "completion_tokens": 1, "prompt_tokens_details": None}}
    client = fake((200, sse(chunk("Oui", finish="stop"), usage_alone), {}, 0)).client()
    assert list(client.stream(MESSAGES)) == ["Oui"] and client.last_usage[:3] == (7, 1, 0)


def test_a_stream_without_counts_is_estimated_and_reuses_nothing(fake):
    client = fake((200, sse(chunk("Bon"), chunk("jour"), chunk(finish="stop")), {}, 0)).client()
    list(client.stream(MESSAGES))
    assert client.last_usage[:3] == (llm.estimate_tokens(MESSAGES), 2, 0)
    assert llm.usage_of(client) is client.last_usage
    assert llm.usage_of(llm.ScriptedClient([])) == (0, 0, 0, 0.0)


@pytest.mark.parametrize("details", [{"cached_tokens": 6}, {"cached_tokens": -1}, {"cached_tokens": "3"}, [3]])
def test_reused_tokens_that_cannot_be_are_bad_response(fake, details):
    body = completion("Oui")
    body["usage"]["prompt_tokens_details"] = details
    with pytest.raises(llm.BadResponse, match="prompt_tokens_details"):
        fake((200, body, {}, 0)).client().chat(MESSAGES)

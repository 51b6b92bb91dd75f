"""rungs.model against a fake OpenAI-compatible server on 127.0.0.1: each fault gets its named behaviour."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from rungs import model as llm
from rungs.model import bundle, supervisor
from rungs.model import client as model_client
from rungs.core.paths import BadSetting

KEY = "sk-test-SECRET-never-printed"
BROKEN_STREAM = "<a stream cut in the middle>"


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

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append({"body": body, "auth": self.headers.get("Authorization")})
                status, payload, headers, delay = fake.script.pop(0)
                time.sleep(delay)
                if payload == BROKEN_STREAM:
                    return self.broken_stream()
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
    with pytest.raises(llm.BadResponse, match="not an OpenAI-compatible JSON response") as info:
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
    err = supervisor._crashed(record, "during the request")
    assert isinstance(err, llm.ModelServerCrashed) and isinstance(err, llm.ModelUnavailable)
    text = str(err)
    assert "pid 4242" in text and "SIGSEGV" in text and "ggml_backend_amx_mul_mat" in text
    assert "without native CPU flags" in err.hint and "bash run.sh lab" in err.hint and err.signal == "SIGSEGV"
    corrupt = supervisor._crashed({"pid": 7, "returncode": 1, "during": "starting", "model": "/m.gguf",
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
    pieces = list(client.stream([{"role": "user", "content": "Écris seulement le mot : bonjour"}], max_tokens=8))
    assert len(pieces) >= 1 and "".join(pieces).strip()
    tokens_in, tokens_out = client.last_usage
    assert tokens_in > 0 and tokens_out == len(pieces)

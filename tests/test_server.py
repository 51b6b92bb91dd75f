"""The shared local model server, for real: crashes are named, kernels share one server, none is left behind.

Each test gets its own server directory (``RUNGS_SERVER_DIR``) and a short
grace, so it never touches the server a JupyterLab on this machine may be
using, and it stops everything it started (checked at teardown).
"""

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rungs import model as llm
from rungs.model import server
from rungs.model import processes

ROOT = Path(__file__).resolve().parent.parent
HELLO = [{"role": "user", "content": "Réponds par un seul mot : oui ou non. Paris est-elle en France ?"}]
LONG = [{"role": "user", "content": "Écris les nombres de 1 à 300 en toutes lettres, un par ligne."}]

needs_llama = pytest.mark.skipif(not llm.llama_build()["version"], reason="llama-cpp-python is not installed")


@pytest.fixture
def own_servers(tmp_path, monkeypatch):
    """A server directory of this test's own, a 3-second grace, and nothing left running afterwards."""
    directory = tmp_path / "servers"
    monkeypatch.setenv("RUNGS_SERVER_DIR", str(directory))
    monkeypatch.setenv("RUNGS_SERVER_GRACE", "3")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    yield directory
    server.stop_servers(directory)
    assert not server.running_servers(directory)
    # A supervisor may be finishing a stop of its own (idle, grace) at this very moment: seconds, not more.
    _wait_until(lambda: not [p for p in server._rungs_processes() if str(directory) in " ".join(p["argv"])], 20,
                "every server process of this test ends")


def _reader(proc: subprocess.Popen) -> queue.Queue:
    """The lines a child prints, as they come (a thread reads them: select() and buffered reads do not mix)."""
    lines = queue.Queue()

    def pump():
        for line in proc.stdout:
            lines.put(line)
        lines.put("")

    threading.Thread(target=pump, daemon=True).start()
    return lines


def _readline(lines: queue.Queue, timeout: float = 180.0) -> str:
    """The next line, or fail (never hang the suite)."""
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        raise AssertionError(f"no output within {timeout:.0f} s") from None


def _exports(room: subprocess.Popen, last: str) -> dict:
    """The lines a room server prints for learners to export, read until ``last`` is among them."""
    exports, lines = {}, _reader(room)
    while last not in exports:
        line = _readline(lines)
        assert line, "the room server exited before printing what learners export"
        if line.startswith("export "):
            name, _, value = line[len("export "):].strip().partition("=")
            exports[name] = value
    return exports


def _wait_until(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s")
        time.sleep(0.2)


@pytest.mark.model
def test_killed_between_calls_restarts_and_a_crash_during_a_request_or_a_stream_is_named(own_servers):
    client = llm.Client(timeout=120)
    assert client.chat(HELLO, max_tokens=3).text.strip()
    local = server.local_server()
    first_pid, first_port = local.pid, local.port

    # Killed between two calls: the next call starts a new server, and the SDK follows it to its new port.
    os.kill(first_pid, signal.SIGKILL)
    _wait_until(lambda: not processes.alive(first_pid), 5, "SIGKILL ends the server")
    again = client.chat(HELLO, max_tokens=3)
    assert again.text.strip() and local.pid != first_pid
    assert client._sdk_url == local.base_url and (local.port != first_port or local.pid != first_pid)
    assert any("SIGKILL" in n and "new one" in n for n in again.notes), again.notes

    # Dies during a request (what an AMX CPU does to a native build): named, with signal, log and fix.
    failure = []

    def long_call():
        try:
            client.chat(LONG, max_tokens=600)
        except Exception as err:  # the assertion below says which
            failure.append(err)

    worker = threading.Thread(target=long_call)
    worker.start()
    time.sleep(1.5)  # the server is reading the prompt or writing
    os.kill(local.pid, signal.SIGSEGV)
    worker.join(60)
    assert failure and isinstance(failure[0], llm.ModelServerCrashed), failure
    err = failure[0]
    assert err.signal == "SIGSEGV" and "SIGSEGV" in str(err) and "during the request" in str(err)
    assert err.log_tail and "What to do:" in str(err) and "The next call starts a new server." in str(err)

    # The same during a stream, after the first pieces arrived.
    pieces = []
    with pytest.raises(llm.ModelServerCrashed, match="SIGSEGV") as info:
        for piece in client.stream(LONG, max_tokens=600):
            pieces.append(piece)
            if len(pieces) == 2:
                os.kill(server.local_server().pid, signal.SIGSEGV)
    assert "while streaming" in str(info.value) and len(pieces) >= 2

    # And the next call simply works.
    assert client.chat(HELLO, max_tokens=3).text.strip()
    assert len(server.running_servers(own_servers)) == 1


@needs_llama
def test_a_server_that_never_starts_is_named_with_its_log_tail(own_servers, tmp_path, monkeypatch):
    corrupt = tmp_path / "corrupt.gguf"
    corrupt.write_bytes(b"GGUF" + os.urandom(4096))
    monkeypatch.setenv("RUNGS_LOCAL_MODEL", str(corrupt))
    with pytest.raises(llm.ModelServerCrashed) as info:
        llm.Client().chat(HELLO, max_tokens=3)
    text = str(info.value)
    assert "exited with status" in text and "while starting" in text and info.value.log_tail
    assert "Failed to load model" in text and "RUNGS_LOCAL_MODEL" in info.value.hint
    assert not server.running_servers(own_servers)


SHARE = ("import sys, time\nfrom rungs.model import server\ns = server.local_server()\n"
         "print(s.port, s.pid, flush=True)\ntime.sleep(300)\n")


@pytest.mark.model
def test_kernels_share_one_server_which_stops_when_they_are_all_gone(own_servers):
    def kernel():
        return subprocess.Popen([sys.executable, "-c", SHARE], stdout=subprocess.PIPE, text=True, cwd=ROOT)

    a, b = kernel(), kernel()  # at the same instant: the file lock lets only one of them start a server
    seen_a, seen_b = _readline(_reader(a)), _readline(_reader(b))
    assert seen_a == seen_b, (seen_a, seen_b)
    [state] = server.running_servers(own_servers)
    assert sorted(state["users"]) == sorted([a.pid, b.pid])

    a.kill()  # SIGKILL: no atexit, no goodbye
    a.wait()
    c = kernel()
    assert _readline(_reader(c)) == seen_a  # reused, not a second server
    _wait_until(lambda: sorted(server.running_servers(own_servers)[0]["users"]) == sorted([b.pid, c.pid]),
                10, "the killed kernel is dropped from the users")
    ours = [p for p in server._rungs_processes() if str(own_servers) in " ".join(p["argv"])
            or p["role"] == "llama-server" and p["ppid"] == state["supervisor"]]
    assert sorted(p["role"] for p in ours) == ["llama-server", "supervisor"]

    for k in (b, c):
        k.kill()
        k.wait()
    # Every user gone: the server stops by itself after its grace (3 s here).
    exit_file = own_servers / f"{state['key']}.exit.json"  # the supervisor's last act, after the server died
    _wait_until(lambda: not server.running_servers(own_servers) and not processes.alive(state["pid"]) and exit_file.exists(),
                20, "the server stops once its users are gone")
    record = json.loads(exit_file.read_text())
    assert record["stopped"] == "no process used it for 3 s"


@pytest.mark.model
def test_an_idle_server_stops_and_the_next_call_starts_it_again(own_servers, monkeypatch):
    monkeypatch.setenv("RUNGS_SERVER_IDLE", "2")
    monkeypatch.setenv("RUNGS_SERVER_GRACE", "60")
    client = llm.Client()
    client.chat(HELLO, max_tokens=3)
    _wait_until(lambda: not server.running_servers(own_servers), 15, "the idle server stops")
    result = client.chat(HELLO, max_tokens=3)
    assert any("was stopped (no call for 2 s)" in n for n in result.notes), result.notes


@pytest.mark.model
def test_a_room_server_used_as_a_remote_endpoint_gets_structured_output(own_servers, monkeypatch):
    port = processes.free_port()
    room = subprocess.Popen([sys.executable, "-m", "rungs.model", "serve", "--host", "127.0.0.1", "--port", str(port),
                             "--threads", "1"], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        exports = _exports(room, "RUNGS_MODEL")
        assert exports == {"OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "RUNGS_MODEL": llm.LOCAL_MODEL_NAME}
        for name, value in exports.items():
            monkeypatch.setenv(name, value)
        client = llm.Client()  # exactly what a learner's kernel builds from those two lines
        assert not client.local
        schema = {"type": "object", "properties": {"answer": {"type": "string"},
                                                   "sources": {"type": "array", "items": {"enum": ["p1", "p2"]}}},
                  "required": ["answer", "sources"]}
        ask = [{"role": "user", "content": 'Extrait p1 : « Les congés sont de 25 jours par an. » Question : combien '
                                           'de jours de congés ? Réponds en JSON {"answer": ..., "sources": [...]}.'}]
        first = client.chat(ask, json_schema=schema, max_tokens=60)
        reply = json.loads(first.text)
        assert set(reply) >= {"answer", "sources"} and set(reply["sources"]) <= {"p1", "p2"}
        assert any("refused json_schema (HTTP 500); accepted json_object+schema" in n for n in first.notes), first.notes
        second = client.chat(ask, json_schema=schema, max_tokens=60)
        assert not [n for n in second.notes if "structured output" in n]  # remembered: no second probe
        assert not server.running_servers(own_servers)  # the room server is not rungs' local one
    finally:
        room.send_signal(signal.SIGTERM)
        room.wait(30)
    _wait_until(lambda: not [p for p in server._rungs_processes() if f"{port}" in p["argv"]], 10,
                "the room server's llama process ends with it")


@pytest.mark.model
def test_a_room_server_on_the_network_wants_the_key_it_printed(own_servers, monkeypatch):
    port = processes.free_port()
    monkeypatch.delenv("RUNGS_ROOM_KEY", raising=False)
    room = subprocess.Popen([sys.executable, "-m", "rungs.model", "serve", "--host", "0.0.0.0", "--port", str(port),
                             "--threads", "1"], stdout=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, "RUNGS_ROOM_KEY": ""})
    try:
        exports = _exports(room, "OPENAI_API_KEY")
        assert len(exports["OPENAI_API_KEY"]) >= 20  # made up at start, printed for the room
        url = f"http://127.0.0.1:{port}/v1"
        with pytest.raises(llm.ModelRefused, match="401"):
            llm.Client(base_url=url, model=llm.LOCAL_MODEL_NAME, retries=0).models()
        assert llm.LOCAL_MODEL_NAME in llm.Client(base_url=url, api_key=exports["OPENAI_API_KEY"],
                                                  model=llm.LOCAL_MODEL_NAME).models()
    finally:
        room.send_signal(signal.SIGTERM)
        room.wait(30)


@pytest.mark.model
def test_the_local_server_runs_the_launch_rungs_chose(own_servers):
    from rungs.model import launch

    client = llm.Client()
    result = client.chat(HELLO, max_tokens=1, logprobs=3)  # logprobs, from a server computing the last logits only
    assert result.logprobs and result.logprobs[0]["top"]
    again = client.chat(HELLO, max_tokens=1, logprobs=3)
    assert again.reused_tokens == again.input_tokens and again.logprobs == result.logprobs
    local = server.local_server()
    argv = Path(f"/proc/{local.pid}/cmdline").read_bytes().decode().split("\0")
    assert argv[argv.index("--logits_all") + 1] == "False"
    assert local.threads == launch.default_threads() == int(argv[argv.index("--n_threads") + 1])


@pytest.mark.parametrize("module", ["rungs.model", "rungs.llm"])
def test_a_supervisor_started_by_either_name_is_found_by_check_stopped(module, tmp_path, capsys):
    """A server started by an older checkout (``python -m rungs.llm supervise``) must still be seen."""
    fake = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "-m", module, "supervise",
                             "--dir", str(tmp_path), "--key", "llama-test"])
    try:
        _wait_until(lambda: any(p["pid"] == fake.pid for p in server._rungs_processes()), 5, "the process list shows it")
        assert server.check_stopped(within=0.5) == 1  # no users: an orphan, named
        assert str(fake.pid) in capsys.readouterr().err
    finally:
        fake.kill()
        fake.wait()

"""The local server's files and processes, when they lie: a state file that is not one, a pid that is not ours
any more, a port another program holds, a folder others could read. No model is needed: the processes here
are stand-ins (``sleep``, a socket), and every one of them is ended by the test that started it."""

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from rungs.core.paths import BadSetting
from rungs.model import __main__ as model_main
from rungs.model import processes, server, supervisor


@pytest.fixture
def own_dir(tmp_path, monkeypatch):
    directory = tmp_path / "servers"
    monkeypatch.setenv("RUNGS_SERVER_DIR", str(directory))
    return directory


@pytest.fixture
def bystanders():
    """Processes that are not ours (what a recycled pid points at); all killed at the end, each by its id."""
    started = []

    def start():
        proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.kill()
        proc.wait()


def _state(**fields):
    base = {"status": "ready", "token": "t" * 32, "supervisor": 1, "pid": 1, "port": 1, "model": "/m.gguf",
            "threads": 1, "n_ctx": 4096, "python": sys.executable, "build": "b", "grace": 60.0, "idle": 1800.0,
            "started_at": time.time(), "started_in": 2.0}
    return {**base, **fields}


HOSTILE_STATES = {"a list": b"[1, 2]", "not UTF-8": b"\xff\xfe{\"port\": 1}", "half written": b'{"status": "rea',
                  "nested past the stack": b"[" * 100_000, "empty": b"",
                  "a port that is text": json.dumps(_state(port="abc")).encode(),
                  "a port out of range": json.dumps(_state(port=70_000)).encode(),
                  "a pid that is negative": json.dumps(_state(pid=-5)).encode(),
                  "a pid that is true": json.dumps(_state(supervisor=True)).encode(),
                  "no token": json.dumps({k: v for k, v in _state().items() if k != "token"}).encode(),
                  "a grace of nan": json.dumps(_state(grace=float("nan"))).encode()}


@pytest.mark.parametrize("what", sorted(HOSTILE_STATES))
def test_a_state_file_that_is_not_one_is_no_server(own_dir, what, capsys):
    own_dir.mkdir()
    path = own_dir / "llama-0123456789ab.json"
    path.write_bytes(HOSTILE_STATES[what])
    assert processes.read_state(path) is None
    assert server.running_servers(own_dir) == []
    assert model_main.main(["status"]) == 0 and "no rungs model server is running" in capsys.readouterr().out
    assert model_main.main(["stop"]) == 0


def test_an_exit_record_that_is_not_one_is_no_crash(own_dir):
    own_dir.mkdir()
    for raw in (b"[1]", b"\xff", json.dumps({"pid": "x", "tail": 5}).encode()):
        (own_dir / "llama-0123456789ab.exit.json").write_bytes(raw)
        assert processes.read_exit(own_dir / "llama-0123456789ab.exit.json") is None


def test_a_stale_state_file_whose_pids_were_recycled_kills_nobody(own_dir, bystanders):
    """The supervisor and the server are long gone; their pids now belong to unrelated processes, and
    another program listens on their port. Nothing is trusted, nothing is signalled."""
    own_dir.mkdir()
    sup, srv = bystanders(), bystanders()
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        state = _state(supervisor=sup.pid, pid=srv.pid, port=port)
        (own_dir / "llama-0123456789ab.json").write_text(json.dumps(state))
        assert server.running_servers(own_dir) == []
        assert server.stop_servers(own_dir, timeout=1) == []
        local = server.LocalServer(Path("/nonexistent.gguf"))
        assert not local._healthy(processes.read_state(own_dir / "llama-0123456789ab.json"))
    time.sleep(0.3)
    assert sup.poll() is None and srv.poll() is None  # both still alive: never signalled


FAKE_SUPERVISOR = textwrap.dedent("""
    import json, socket, subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c", "import socket, sys, time\\n"
                              "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\\n"
                              "print(s.getsockname()[1], flush=True); time.sleep(120)",
                              "-m", "rungs.model", "llama-server"], stdout=subprocess.PIPE, text=True)
    port = int(child.stdout.readline())
    print(json.dumps({"pid": child.pid, "port": port}), flush=True)
    try:
        time.sleep(120)
    finally:
        child.kill()
""")


@pytest.fixture
def impostor_pair(tmp_path):
    """A stand-in supervisor (its command line that of ours, with a token) and its « server » child."""
    started = []

    def start(token):
        proc = subprocess.Popen([sys.executable, "-c", FAKE_SUPERVISOR, "-m", "rungs.model", "supervise",
                                 "--dir", str(tmp_path), "--token", token], stdout=subprocess.PIPE, text=True)
        started.append(proc)
        child = json.loads(proc.stdout.readline())
        children.append(child["pid"])
        return proc, child

    children = []
    yield start
    for proc in started:
        proc.kill()  # SIGKILL: its own « finally » never runs, so its child is ended here, by its pid
        proc.wait()
    for pid in children:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_a_server_is_trusted_only_with_its_supervisors_token_and_its_own_port(own_dir, impostor_pair):
    sup, child = impostor_pair("a" * 32)
    state = _state(supervisor=sup.pid, pid=child["pid"], port=child["port"], token="a" * 32,
                   supervisor_start=processes.proc_start(sup.pid), pid_start=processes.proc_start(child["pid"]))
    assert processes.ours(state)
    assert not processes.ours({**state, "token": "b" * 32})  # a supervisor that does not hold this token
    assert not processes.ours({**state, "supervisor_start": "1"})  # the pid was recycled since it was recorded
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        # The port is held by another program: not ours, though both pids are.
        assert not processes.ours({**state, "port": other.getsockname()[1]})


def test_stop_signals_our_supervisor_and_only_it(own_dir, impostor_pair, bystanders):
    own_dir.mkdir()
    sup, child = impostor_pair("c" * 32)
    ours = _state(supervisor=sup.pid, pid=child["pid"], port=child["port"], token="c" * 32,
                  supervisor_start=processes.proc_start(sup.pid))
    (own_dir / "llama-aaaaaaaaaaaa.json").write_text(json.dumps(ours))
    stranger = bystanders()
    (own_dir / "llama-bbbbbbbbbbbb.json").write_text(json.dumps({**ours, "supervisor": stranger.pid}))
    assert [s["key"] for s in server.running_servers(own_dir)] == ["llama-aaaaaaaaaaaa"]
    assert server.stop_servers(own_dir, timeout=5) == [child["pid"]]
    assert sup.wait(timeout=5) is not None and stranger.poll() is None


def test_the_server_folder_and_its_files_are_private_whatever_the_umask(own_dir, monkeypatch):
    previous = os.umask(0)  # the loosest a learner's shell could have
    try:
        local = server.LocalServer(Path("/nonexistent.gguf"))
        paths = local.paths
        lock = processes.FileLock(paths.lock)
        assert lock.acquire(1)
        lock.release()
        processes.write_json(paths.state, {"status": "starting"})
        with processes.private_open(paths.log, "ab") as log:
            log.write(b"x")
        local._register()
    finally:
        os.umask(previous)
    mode = lambda p: stat.S_IMODE(p.stat().st_mode)  # noqa: E731
    assert mode(own_dir) == 0o700 and mode(paths.users) == 0o700
    for path in (paths.lock, paths.state, paths.log, local.users_file):
        assert mode(path) == 0o600, (path, oct(mode(path)))


def test_a_server_folder_made_open_by_someone_is_closed_again(own_dir):
    own_dir.mkdir(mode=0o755)
    os.chmod(own_dir, 0o777)
    processes.write_json(processes.ServerFiles("llama-0123456789ab").state, {"status": "starting"})
    assert stat.S_IMODE(own_dir.stat().st_mode) == 0o700


def test_the_supervisor_writes_private_files(own_dir, monkeypatch, tmp_path):
    class Child:
        pid, returncode = os.getpid(), None

        def poll(self):
            return None

    monkeypatch.setattr(supervisor.subprocess, "Popen", lambda *a, **k: Child())
    monkeypatch.setattr(supervisor.signal, "signal", lambda *a: None)
    args = supervisor._arguments(["--dir", str(own_dir), "--key", "llama-0123456789ab", "--token", "t" * 32,
                                  "--user", f"{os.getpid()}:", "--model", "/m.gguf", "--grace", "5", "--idle", "0",
                                  "--threads", "1", "--n-ctx", "512"])
    previous = os.umask(0)
    try:
        supervisor.Supervisor(args).start()
    finally:
        os.umask(previous)
    paths = processes.ServerFiles("llama-0123456789ab", own_dir)
    for path in (paths.state, paths.log, paths.users / str(os.getpid())):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    state = processes.read_state(paths.state)
    assert state["supervisor_start"] == processes.proc_start(os.getpid())


@pytest.mark.parametrize("name, value", [("RUNGS_SERVER_GRACE", "nan"), ("RUNGS_SERVER_GRACE", "-1"),
                                         ("RUNGS_SERVER_IDLE", "inf"), ("RUNGS_SERVER_IDLE", "soon")])
def test_the_servers_timers_refuse_what_would_never_end(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(BadSetting, match=name):
        server.timers()


@pytest.mark.parametrize("value", ["nan", "-1", "inf"])
def test_the_supervisor_refuses_a_grace_that_would_never_end(value, tmp_path):
    with pytest.raises(BadSetting, match="--grace"):
        supervisor._arguments(["--dir", str(tmp_path), "--key", "k", "--token", "t", "--user", "1:", "--model", "m",
                               "--grace", value, "--idle", "0", "--threads", "1", "--n-ctx", "512"])


@pytest.mark.parametrize("value", ["two", "0", "1.5", "100000"])
def test_a_thread_count_that_is_not_one_is_refused_before_the_model_is_touched(monkeypatch, value):
    monkeypatch.setenv("RUNGS_LLM_THREADS", value)
    monkeypatch.setattr(server, "prepare", lambda **k: pytest.fail("the model was prepared before the check"))
    with pytest.raises(BadSetting, match="RUNGS_LLM_THREADS"):
        server.local_server()


@pytest.mark.parametrize("where", ["the folder is a file", "the folder is inside a file", "the lock is a folder",
                                   "the state file is a folder"])
def test_a_server_folder_that_cannot_be_used_is_named_with_its_fix(own_dir, tmp_path, monkeypatch, where):
    local = server.LocalServer(tmp_path / "m.gguf")
    if where == "the folder is a file":
        own_dir.write_text("not a folder")
    elif where == "the folder is inside a file":
        own_dir.write_text("not a folder")
        monkeypatch.setenv("RUNGS_SERVER_DIR", str(own_dir / "inner"))
        local = server.LocalServer(tmp_path / "m.gguf")
    elif where == "the lock is a folder":
        local.paths.lock.mkdir(parents=True)
    else:
        local.paths.state.mkdir(parents=True)
    monkeypatch.setattr(server.LocalServer, "_spawn", lambda self: pytest.fail("a server was started"))
    with pytest.raises(processes.ServerFolderUnusable, match="remove it, or set RUNGS_SERVER_DIR") as caught:
        local.start()
    assert isinstance(caught.value, server.ModelUnavailable)  # what the rungs already say « unavailable » for


def test_the_threads_default_to_the_physical_cores_capped(monkeypatch):
    from rungs.model import launch

    monkeypatch.delenv("RUNGS_LLM_THREADS", raising=False)
    assert 1 <= launch.physical_cores() <= (os.cpu_count() or 1)
    for cores, threads in ((1, 1), (2, 2), (6, 6), (64, launch.MAX_THREADS)):
        monkeypatch.setattr(launch, "physical_cores", lambda: cores)
        assert launch.default_threads() == threads  # every physical core, at most the cap
    monkeypatch.setenv("RUNGS_LLM_THREADS", "3")
    assert launch.default_threads() == 3  # the setting wins, even above the cap


def test_hyperthread_siblings_and_a_quota_are_not_cores(monkeypatch, tmp_path):
    from rungs.model import launch

    siblings = {0: "0,4", 4: "0,4", 1: "1,5", 5: "1,5"}  # two cores, two threads each
    real_path = launch.Path

    def fake_path(name):
        name = str(name)
        for cpu, text in siblings.items():
            if name == f"/sys/devices/system/cpu/cpu{cpu}/topology":
                (tmp_path / str(cpu)).mkdir(exist_ok=True)
                (tmp_path / str(cpu) / "core_cpus_list").write_text(text)
                return tmp_path / str(cpu)
        if name == "/sys/fs/cgroup/cpu.max":
            return tmp_path / "cpu.max"
        return real_path(name)

    monkeypatch.setattr(launch.os, "sched_getaffinity", lambda pid: set(siblings), raising=False)
    monkeypatch.setattr(launch, "Path", fake_path)
    assert launch.physical_cores() == 2
    (tmp_path / "cpu.max").write_text("100000 100000\n")  # a container allowed one CPU
    assert launch.physical_cores() == 1


def test_status_says_the_threads_of_each_server(own_dir, monkeypatch, capsys):
    monkeypatch.setattr(model_main, "running_servers", lambda: [{**_state(threads=2), "key": "llama-x", "users": [7],
                                                                "idle_for": 3.0}])
    assert model_main.main(["status"]) == 0
    assert "2 thread(s)" in capsys.readouterr().out
    monkeypatch.setattr(model_main, "running_servers", lambda: [])
    monkeypatch.setenv("RUNGS_LLM_THREADS", "3")
    assert model_main.main(["status"]) == 0
    assert "one started now would use 3 thread(s)" in capsys.readouterr().out


def test_serve_listens_on_this_machine_only_unless_told(monkeypatch):
    seen = {}

    def serve(host, port, threads, key):
        """A room server that records how it was asked to serve."""
        seen.update(host=host, key=key)
        return 0

    monkeypatch.setattr(model_main, "serve", serve)
    monkeypatch.delenv("RUNGS_ROOM_KEY", raising=False)
    assert model_main.main(["serve"]) == 0 and seen == {"host": "127.0.0.1", "key": None}


@pytest.mark.parametrize("host, key, printed", [("127.0.0.1", None, None), ("0.0.0.0", None, "made up"),
                                                ("0.0.0.0", "chosen-key", "<the key you chose>"),
                                                ("192.168.1.20", None, "made up")])
def test_a_room_server_on_the_network_always_wants_a_key(host, key, printed):
    from rungs.model import room

    used, made_up = room.room_key(host, key)
    lines = room.exports(["192.168.1.20"], 8000, used, made_up)
    assert lines[:2] == ["export OPENAI_BASE_URL=http://192.168.1.20:8000/v1",
                         f"export RUNGS_MODEL={room.LOCAL_MODEL_NAME}"]
    if printed is None:
        assert used is None and len(lines) == 2
    elif printed == "made up":
        assert made_up and len(used) >= 20 and lines[2] == f"export OPENAI_API_KEY={used}"
        assert room.room_key(host, None)[0] != used  # a new one each start
    else:
        assert used == key and lines[2] == "export OPENAI_API_KEY=<the key you chose>" and key not in "".join(lines)

"""``python -m rungs doctor``: passes on this machine; each failing check is a ✗ with its fix, and exit 1."""

import pytest

from rungs.tools import doctor

from rungs import model as llm
from rungs.model import bundle


@pytest.mark.model
def test_the_doctor_passes_here(capsys):
    assert doctor.main(["doctor"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line[:1] in (doctor.OK, doctor.FAIL)]
    assert len(lines) == len(doctor.CHECKS) + 1 and all(line.startswith(doctor.OK) for line in lines), out
    assert "ready for the workshop" in out and " s  " in lines[0]  # every line carries its measured time
    completion = next(line for line in lines if " completion " in line)
    assert " thread(s), started in " in completion  # the threads the local server runs, as status says them


def test_a_missing_model_is_a_cross_with_its_fix_and_exit_1(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RUNGS_LOCAL_MODEL", str(tmp_path / "missing.gguf"))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert doctor.main(["doctor"]) == 1
    out = capsys.readouterr().out
    model_line = next(line for line in out.splitlines() if "model file" in line)
    assert model_line.startswith(doctor.FAIL) and "missing.gguf does not exist" in model_line
    assert "    fix: point RUNGS_LOCAL_MODEL at an existing .gguf file" in out
    assert any(line.startswith(f"{doctor.FAIL} completion") for line in out.splitlines())
    assert "fix each ✗" in out


def test_an_amx_cpu_with_a_native_build_is_a_cross_and_the_portable_build_is_not(monkeypatch):
    monkeypatch.setattr(doctor, "_cpu_flags", lambda: {"avx2", "amx_tile", "amx_int8", "amx_bf16"})
    monkeypatch.setattr(bundle, "llama_build", lambda: {"version": "0.3.36", "kind": "other", "key": None,
                                                     "origin": "an index (pip or conda)"})
    c = doctor.Check("llama.cpp")
    doctor.check_llama_build(c)
    assert not c.ok and "SIGSEGV" in c.detail and "bash run.sh lab" in c.fix
    monkeypatch.setattr(bundle, "llama_build", lambda: {"version": "0.3.36", "kind": "portable", "key": "k", "origin": "x"})
    c = doctor.Check("llama.cpp")
    doctor.check_llama_build(c)
    assert c.ok, c.detail


def test_a_cpu_without_avx2_is_told_how_to_build_for_it(monkeypatch):
    monkeypatch.setattr(doctor, "_cpu_flags", lambda: {"sse4_2", "avx"})
    monkeypatch.setattr(doctor.platform, "machine", lambda: "x86_64")
    c = doctor.Check("cpu")
    doctor.check_cpu(c)
    assert not c.ok and "needs AVX2" in c.detail and "RUNGS_LLAMA_BUILD=fast" in c.fix


def test_a_connection_off_this_machine_is_a_cross_and_loopback_is_not(monkeypatch):
    monkeypatch.setattr(doctor, "_SEEN", ["127.0.0.1", "::1"])
    c = doctor.Check("offline")
    doctor.check_offline(c, endpoint_host=None)
    assert c.ok and "2 connection(s), all to this machine" in c.detail
    monkeypatch.setattr(doctor, "_SEEN", ["127.0.0.1", "203.0.113.7"])  # recorded, never dialled here
    c = doctor.Check("offline")
    doctor.check_offline(c, endpoint_host=None)
    assert not c.ok and "203.0.113.7" in c.detail and "HF_HUB_OFFLINE=1" in c.fix
    c = doctor.Check("offline")
    doctor.check_offline(c, endpoint_host="203.0.113.7")  # the endpoint the learner configured is allowed
    assert c.ok


def test_hub_downloads_switched_back_on_are_a_cross(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    c = doctor.Check("offline")
    doctor.check_offline(c, endpoint_host=None)
    assert not c.ok and "HF_HUB_OFFLINE" in c.fix


def test_an_endpoint_named_by_host_is_your_endpoint_not_a_connection_away(monkeypatch):
    # The checks connect to an address; the learner named a host. The host's addresses are the endpoint's.
    real = doctor.socket.getaddrinfo
    monkeypatch.setattr(doctor.socket, "getaddrinfo", lambda host, *a, **k: [
        (2, 1, 6, "", ("203.0.113.7", 443))] if host == "llm.example.test" else real(host, *a, **k))
    monkeypatch.setattr(doctor, "_SEEN", ["127.0.0.1", "203.0.113.7"])
    c = doctor.Check("offline")
    doctor.check_offline(c, endpoint_host="llm.example.test")
    assert c.ok and "your endpoint llm.example.test" in c.detail, c.detail
    monkeypatch.setattr(doctor, "_SEEN", ["127.0.0.1", "203.0.113.7", "198.51.100.9"])
    c = doctor.Check("offline")
    doctor.check_offline(c, endpoint_host="llm.example.test")
    assert not c.ok and "198.51.100.9" in c.detail and "203.0.113.7" not in c.detail


KEY = "sk-doctor-SECRET-0123456789"


@pytest.mark.parametrize("status", [200, 401])
def test_no_doctor_line_shows_the_key(monkeypatch, status):
    from test_llm_faults import Fake, Raw, completion

    fake = Fake([(status, completion("oui") if status == 200 else
                  Raw('{"error": {"message": "bad Authorization: {auth}"}}', echo=True), {}, 0)])
    try:
        # 200: the key written inside the URL; 401: a plain URL, and the endpoint echoes the key it was sent.
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url.replace("http://", f"http://me:{KEY}@") if status == 200
                           else fake.url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("RUNGS_MODEL", "fake")
        c = doctor.Check("completion")
        doctor.check_completion(c)
        assert c.ok == (status == 200), c.line()
        assert KEY not in c.line() and "***" in c.line(), c.line()
        assert status == 200 or fake.requests[0]["auth"] == f"Bearer {KEY}"
    finally:
        fake.server.shutdown()


def test_a_check_that_breaks_on_a_secret_does_not_print_it(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)

    def leaky(c):
        raise RuntimeError(f"connection to https://u:{KEY}@host failed with Bearer {KEY}")

    monkeypatch.setattr(doctor, "CHECKS", [("leaky", leaky)])
    lines = []
    doctor.run(out=lines.append)
    assert lines and not any(KEY in line for line in lines), lines


def test_a_local_model_that_fails_says_the_notebooks_can_replay(monkeypatch):
    from rungs.model import client as model_client

    class Failing(llm.Client):
        def chat(self, *args, **kw):
            raise llm.ModelUnavailable("cannot connect to the local server")

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setattr(model_client, "Client", Failing)
    c = doctor.Check("completion")
    doctor.check_completion(c)
    assert not c.ok and "RUNGS_REPLAY=replay" in c.fix


def test_the_doctor_waits_as_long_as_the_setting_says(monkeypatch):
    from rungs.model import client as model_client

    seen = []

    class Timed(llm.Client):
        def chat(self, *args, **kw):
            seen.append(self.timeout)
            raise llm.ModelUnavailable("busy")

    monkeypatch.setenv("RUNGS_LLM_TIMEOUT", "900")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setattr(model_client, "Client", Timed)
    doctor.check_completion(doctor.Check("completion"))
    assert seen == [900]


def test_a_setting_whose_bytes_are_not_utf8_is_a_cross_naming_it(tmp_path, monkeypatch, capsys):
    # Finding (issue 43): RUNGS_LOCAL_MODEL, RUNGS_MODEL or RUNGS_CACHE not UTF-8 broke every model call with
    # a UnicodeEncodeError, and the doctor's own print in a UTF-8 terminal.
    import os

    from rungs.core import paths
    from rungs.model import server

    def no_server(*args, **kw):
        raise AssertionError("a model server was started")

    monkeypatch.setattr(server.LocalServer, "start", no_server)  # whatever happens, no server here
    odd = tmp_path / os.fsdecode(b"mod\xe8le.gguf")
    odd.write_bytes(b"GGUF")
    monkeypatch.setenv("RUNGS_LOCAL_MODEL", str(odd))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(paths.BadSetting, match="RUNGS_LOCAL_MODEL=.* holds bytes that are not UTF-8"):
        llm.Client(retries=0).chat([{"role": "user", "content": "oui ?"}], max_tokens=1)
    monkeypatch.setattr(doctor, "CHECKS", [(n, f) for n, f in doctor.CHECKS if n in ("disk", "model file", "completion")])
    assert doctor.main(["doctor"]) == 1
    out = capsys.readouterr().out
    model_line = next(line for line in out.splitlines() if "model file" in line)
    assert model_line.startswith(doctor.FAIL) and "RUNGS_LOCAL_MODEL=" in model_line and "not UTF-8" in model_line
    assert "\udce8" not in out and doctor.SETTING_FIX in out
    monkeypatch.delenv("RUNGS_LOCAL_MODEL")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens: the model's name is read first
    monkeypatch.setenv("RUNGS_MODEL", os.fsdecode(b"mod\xe8le"))
    with pytest.raises(paths.BadSetting, match="RUNGS_MODEL=.* holds bytes that are not UTF-8"):
        llm.Client(retries=0).chat([{"role": "user", "content": "oui ?"}], max_tokens=1)
    monkeypatch.setenv("RUNGS_CACHE", str(tmp_path / os.fsdecode(b"cach\xe9")))
    with pytest.raises(paths.BadSetting, match="RUNGS_CACHE=.* holds bytes that are not UTF-8"):
        bundle.model_path()  # where a local call finds the model


def test_a_broken_key_is_refused_without_its_bytes(monkeypatch):
    import os

    from rungs.core import paths

    monkeypatch.setenv("OPENAI_API_KEY", os.fsdecode(b"sk-SECRET-\xe9"))
    with pytest.raises(paths.BadSetting) as err:
        paths.setting_text("OPENAI_API_KEY")
    assert "SECRET" not in str(err.value) and "a key: not shown" in str(err.value)


def test_a_local_model_that_is_a_folder_is_a_cross_with_its_fix(tmp_path, monkeypatch):
    # Finding (issue 43): RUNGS_LOCAL_MODEL a folder made the model check itself fail (IsADirectoryError).
    monkeypatch.setenv("RUNGS_LOCAL_MODEL", str(tmp_path))
    c = doctor.Check("model file")
    doctor.check_model(c)
    assert not c.ok and "is a folder, not a .gguf file" in c.detail and "RUNGS_LOCAL_MODEL" in c.fix
    with pytest.raises(llm.ModelFileError, match="names a folder"):
        bundle.prepare()


@pytest.mark.parametrize("setting, said", [("off", False), ("replay", True), (None, False)])
def test_the_completion_line_names_the_replay_files_only_when_they_are_used(monkeypatch, setting, said):
    # Finding (issue 43): RUNGS_REPLAY=off said « the notebooks' calls go to their replay files ».
    from rungs.model import client as model_client

    class Answering(llm.Client):
        def chat(self, *args, **kw):
            return llm.ChatResult(text="oui", model="m", input_tokens=1, output_tokens=1, finish_reason="stop",
                                  latency=0.1)

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setattr(model_client, "Client", Answering)
    monkeypatch.setattr(doctor.server, "local_server", lambda: type("S", (), {"pid": 1, "threads": 1, "started_in": 0.1}))
    if setting is None:
        monkeypatch.delenv("RUNGS_REPLAY", raising=False)
    else:
        monkeypatch.setenv("RUNGS_REPLAY", setting)
    c = doctor.Check("completion")
    doctor.check_completion(c)
    assert c.ok and ("replay files" in c.detail) == said, c.detail


def test_a_local_model_that_is_a_pipe_or_unreadable_is_a_cross_with_its_fix(tmp_path, monkeypatch):
    # Probes of the same finding: a FIFO would be « does not exist » (and hang a server), an unreadable file
    # « the check itself failed: PermissionError ».
    import os

    fifo = tmp_path / "model.gguf"
    os.mkfifo(fifo)
    monkeypatch.setenv("RUNGS_LOCAL_MODEL", str(fifo))
    c = doctor.Check("model file")
    doctor.check_model(c)
    assert not c.ok and "is not a regular file" in c.detail
    with pytest.raises(llm.ModelFileError, match="not a regular file"):
        bundle.prepare()
    real = tmp_path / "mine.gguf"
    real.write_bytes(b"GGUF")
    monkeypatch.setenv("RUNGS_LOCAL_MODEL", str(real))

    def refused(*args, **kw):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(doctor, "open", refused, raising=False)
    c = doctor.Check("model file")
    doctor.check_model(c)
    assert not c.ok and "cannot be read (Permission denied)" in c.detail and "chmod a+r" in c.fix


def test_a_replay_setting_no_notebook_can_use_is_said_when_the_model_is_down_too(monkeypatch):
    # Probe of issue 43: RUNGS_REPLAY=bogus was named only after a completion that worked; with the model
    # down — when a room turns to replay — the ✗ said to read the server's log, and the first notebook cell
    # then refused the setting.
    from rungs.model import client as model_client

    class Failing(llm.Client):
        def chat(self, *args, **kw):
            raise llm.ModelUnavailable("cannot connect to the local server")

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("RUNGS_REPLAY", "bogus")
    monkeypatch.setattr(model_client, "Client", Failing)
    c = doctor.Check("completion")
    doctor.check_completion(c)
    assert not c.ok and "RUNGS_REPLAY='bogus' is not one of" in c.detail and c.fix == doctor.SETTING_FIX

"""Offline, proven: the suite refuses every connection that leaves this machine, and names who tried.

The guard (``tests/offline/netguard.py``) is installed in pytest by
``conftest.py`` and in every kernel nbval starts by ``sitecustomize.py`` on
the suite's ``PYTHONPATH``; loopback stays open for the local model server.
"""

import os
import socket
import threading
import urllib.error
import urllib.request

import netguard
import pytest

OUTSIDE = ("93.184.216.34", 80)  # example.com's historical address; never reached

pytestmark = pytest.mark.skipif(os.environ.get("RUNGS_SOCKET_GUARD") != "1",
                                reason="the socket guard is off (RUNGS_SOCKET_GUARD=0)")


def test_the_guard_is_on_in_pytest_and_handed_to_child_processes():
    assert netguard.installed()
    assert os.environ["RUNGS_SOCKET_GUARD"] == "1"
    assert os.path.join("tests", "offline") in os.environ["PYTHONPATH"]


def test_a_connection_outside_is_refused_with_the_callers_name():
    with socket.socket() as s, pytest.raises(netguard.NetworkRefused) as refused:
        s.connect(OUTSIDE)
    message = str(refused.value)
    assert "connect to 93.184.216.34:80" in message and "test_offline.py" in message
    assert "test_a_connection_outside_is_refused" in message
    with socket.socket() as s, pytest.raises(netguard.NetworkRefused, match="connect_ex to 93.184.216.34:80"):
        s.connect_ex(OUTSIDE)
    with pytest.raises(netguard.NetworkRefused, match="create_connection to 93.184.216.34:80"):
        socket.create_connection(OUTSIDE, timeout=1)


def test_a_name_lookup_outside_is_refused():
    with pytest.raises(socket.gaierror) as refused:  # what libraries already catch for a name that fails
        socket.getaddrinfo("example.com", 80)
    assert isinstance(refused.value, netguard.NetworkRefused)
    assert "name lookup of 'example.com'" in str(refused.value) and "test_offline.py" in str(refused.value)


def test_a_library_call_names_the_library_and_the_code_that_called_it():
    with pytest.raises(urllib.error.URLError) as refused:
        urllib.request.urlopen("http://example.com/", timeout=1)
    message = str(refused.value.reason)
    assert "create_connection to example.com:80" in message
    assert "urllib" in message or "http" in message  # the first caller outside socket: the library
    assert "(called from " in message and "test_offline.py" in message  # and the test that asked it


def _echo_server(host):
    server = socket.create_server((host, 0), family=socket.AF_INET6 if ":" in host else socket.AF_INET)

    def answer():
        conn, _ = server.accept()
        with conn:
            conn.sendall(conn.recv(16))

    threading.Thread(target=answer, daemon=True).start()
    return server, server.getsockname()[1]


@pytest.mark.parametrize("host, connect_to", [("127.0.0.1", "127.0.0.1"), ("127.0.0.1", "localhost")])
def test_loopback_still_works(host, connect_to):
    server, port = _echo_server(host)
    with server, socket.create_connection((connect_to, port), timeout=5) as client:
        client.sendall(b"ping")
        assert client.recv(16) == b"ping"


def test_loopback_ipv6_is_allowed():
    assert netguard.is_allowed("::1") and netguard.is_allowed("127.0.0.53") and netguard.is_allowed("localhost")
    assert not netguard.is_allowed("93.184.216.34") and not netguard.is_allowed("example.com")


def test_an_endpoint_chosen_on_purpose_is_allowed(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://10.0.0.5:8000/v1")  # the room's model server
    monkeypatch.setenv("RUNGS_SOCKET_ALLOW", "proxy.example")
    assert netguard.is_allowed("10.0.0.5") and netguard.is_allowed("proxy.example")
    assert not netguard.is_allowed("10.0.0.6")


KERNEL_CODE = """
import socket, threading
for attempt in (lambda: socket.socket().connect(("93.184.216.34", 80)),
                lambda: socket.getaddrinfo("example.com", 80)):
    try:
        attempt()
        print("REACHED")
    except OSError as err:
        print(type(err).__name__, "|", err)
server = socket.create_server(("127.0.0.1", 0))
threading.Thread(target=lambda: server.accept()[0].sendall(b"pong"), daemon=True).start()
with socket.create_connection(("127.0.0.1", server.getsockname()[1]), timeout=5) as c:
    print("LOOPBACK", c.recv(4).decode())
"""


def test_a_kernel_started_like_nbvals_refuses_it_too():
    """The kernel inherits the suite's environment (PYTHONPATH, RUNGS_SOCKET_GUARD), as nbval's do."""
    from nbval.kernel import CURRENT_ENV_KERNEL_NAME, start_new_kernel

    printed = []

    def keep(msg):
        if msg["msg_type"] == "stream":
            printed.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            printed.append("\n".join(msg["content"]["traceback"]))

    km, kc = start_new_kernel(kernel_name=CURRENT_ENV_KERNEL_NAME)
    try:
        reply = kc.execute_interactive(KERNEL_CODE, timeout=60, output_hook=keep)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    text = "".join(printed)
    assert reply["content"]["status"] == "ok", text
    assert "REACHED" not in text
    assert "NetworkRefused | network refused by the suite's socket guard" in text
    assert "connect to 93.184.216.34:80" in text
    assert "NameRefused | " in text and "name lookup of 'example.com'" in text
    assert "LOOPBACK pong" in text

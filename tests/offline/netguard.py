"""The suite's socket guard: every connection that leaves this machine is refused, and says who tried.

"Offline by construction" is a claim; this makes it a checked one. Installed,
it wraps the four doors a Python library goes through to reach a host —
``socket.socket.connect``, ``connect_ex``, ``socket.create_connection`` and
``socket.getaddrinfo`` — and refuses any host that is not loopback with
``NetworkRefused``, a ``ConnectionRefusedError`` (libraries that handle an
unreachable host handle this one too) whose message names the caller: the
first frame outside the socket machinery, and the first one outside the
standard library and site-packages when that is a different one.

Allowed: 127.0.0.0/8, ::1, ``localhost`` (the local model server listens on
127.0.0.1), Unix sockets, addresses a server binds to (0.0.0.0, ::), and the
hosts named in ``RUNGS_SOCKET_ALLOW`` (comma-separated) or in
``OPENAI_BASE_URL`` (an endpoint the user chose on purpose, e.g. the room's
server).

Where it is installed: pytest (``tests/conftest.py``) for the unit tests, and
every kernel nbval starts, through ``sitecustomize.py`` beside this file: the
suite puts this folder on ``PYTHONPATH`` with ``RUNGS_SOCKET_GUARD=1``.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
import sysconfig
from urllib.parse import urlparse

_ORIGINAL = {}
_SKIP = (os.path.abspath(__file__), os.path.abspath(socket.__file__))
_STDLIB = tuple(os.path.abspath(p) for p in {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]})


class NetworkRefused(ConnectionRefusedError):
    """A connection to a host that is not this machine, refused by the suite's socket guard."""


class NameRefused(NetworkRefused, socket.gaierror):
    """A name lookup for a host that is not this machine, refused by the suite's socket guard."""


def allowed_hosts() -> set[str]:
    hosts = {"localhost", "localhost.localdomain", "ip6-localhost", "0.0.0.0", "::", ""}
    hosts |= {h.strip().lower() for h in os.environ.get("RUNGS_SOCKET_ALLOW", "").split(",") if h.strip()}
    endpoint = os.environ.get("OPENAI_BASE_URL", "")
    if endpoint:
        host = urlparse(endpoint).hostname
        if host:
            hosts.add(host.lower())
    return hosts


def is_allowed(host) -> bool:
    if host is None:
        return True  # getaddrinfo(None, port): a server's own wildcard address
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    host = str(host).strip("[]").lower()
    if host in allowed_hosts():
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _caller() -> str:
    """The first frame outside the socket machinery, and the first outside any library if that differs."""
    frame, first, own = sys._getframe(2), None, None
    while frame is not None:
        name = frame.f_code.co_filename
        path = name if name.startswith("<") else os.path.abspath(name)
        if path not in _SKIP:
            here = f"{path}:{frame.f_lineno} in {frame.f_code.co_name}"
            first = first or here
            library = path.startswith(_STDLIB + ("<frozen",)) or "site-packages" in path
            if not library:
                own = here
                break
        frame = frame.f_back
    if own and own != first:
        return f"{first} (called from {own})"
    return first or "an unknown caller"


def _refuse(what: str, error=NetworkRefused):
    raise error(f"network refused by the suite's socket guard (offline by construction): {what}, "
                f"from {_caller()}. Loopback is allowed; allow a host on purpose with RUNGS_SOCKET_ALLOW=host.")


def _host_of(address):
    if isinstance(address, tuple) and address:
        return address[0], (address[1] if len(address) > 1 else None)
    return None, None  # a Unix socket path, or something the socket module will reject itself


def _connect(self, address):
    host, port = _host_of(address)
    if self.family in (socket.AF_INET, socket.AF_INET6) and not is_allowed(host):
        _refuse(f"connect to {host}:{port}")
    return _ORIGINAL["connect"](self, address)


def _connect_ex(self, address):
    host, port = _host_of(address)
    if self.family in (socket.AF_INET, socket.AF_INET6) and not is_allowed(host):
        _refuse(f"connect_ex to {host}:{port}")
    return _ORIGINAL["connect_ex"](self, address)


def _create_connection(address, *args, **kwargs):
    host, port = _host_of(address)
    if not is_allowed(host):
        _refuse(f"create_connection to {host}:{port}")
    return _ORIGINAL["create_connection"](address, *args, **kwargs)


def _getaddrinfo(host, *args, **kwargs):
    if not is_allowed(host):
        _refuse(f"name lookup of {host!r}", NameRefused)
    return _ORIGINAL["getaddrinfo"](host, *args, **kwargs)


def install() -> None:
    """Refuse non-loopback connections in this process from now on (installing twice is harmless)."""
    if _ORIGINAL:
        return
    _ORIGINAL.update(connect=socket.socket.connect, connect_ex=socket.socket.connect_ex,
                     create_connection=socket.create_connection, getaddrinfo=socket.getaddrinfo)
    socket.socket.connect = _connect
    socket.socket.connect_ex = _connect_ex
    socket.create_connection = _create_connection
    socket.getaddrinfo = _getaddrinfo


def uninstall() -> None:
    if not _ORIGINAL:
        return
    socket.socket.connect = _ORIGINAL["connect"]
    socket.socket.connect_ex = _ORIGINAL["connect_ex"]
    socket.create_connection = _ORIGINAL["create_connection"]
    socket.getaddrinfo = _ORIGINAL["getaddrinfo"]
    _ORIGINAL.clear()


def installed() -> bool:
    return bool(_ORIGINAL)

"""OneWrite: each response's head and body in one transport write, over real HTTP;
and the fallback to plain httptools when it is switched off or this uvicorn's
HttpToolsProtocol is not the one it hooks (uvicorn is not pinned)."""

from __future__ import annotations

import http.client
import socket
import sys
import types

import msgspec
import pytest
from tests.support.extender_fixtures import small_cluster, synced_extender

from tests.support import samples
from scheduler_build.extender import server as server_mod
from scheduler_build.extender.server import Server

NODES, PODS = small_cluster()
WANTS = samples.pod("new-1")


@pytest.fixture
def server():
    srv = Server(synced_extender(NODES, PODS)).start_background()
    yield srv
    srv.stop()


def test_one_write_sends_head_and_body_together_and_never_loses_or_reorders():
    OneWrite = server_mod.OneWrite

    class Transport:
        def __init__(self):
            self.sent, self.closed = [], False

        def write(self, data):
            self.sent.append(data)

        def is_closing(self):
            return self.closed

        def close(self):
            self.closed = True

        def get_extra_info(self, name):
            return "peer" if name == "peername" else None

    class Loop:
        def __init__(self):
            self.soon = []

        def call_soon(self, fn):
            self.soon.append(fn)

    head = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n"
    t, loop = Transport(), Loop()
    w = OneWrite(t, loop)
    w.write(head)
    assert t.sent == []  # held
    w.write(b"{}")
    assert t.sent == [head + b"{}"]  # one send
    for fn in loop.soon:
        fn()  # the safety flush finds nothing held
    assert t.sent == [head + b"{}"]
    w.write(head)  # a HEAD answer: no body follows; the loop's next turn sends it
    loop.soon[-1]()
    assert t.sent[-1] == head
    w.write(b"plain bytes")  # not a head: straight through
    assert t.sent[-1] == b"plain bytes"
    w.write(head)
    w.close()  # close flushes first
    assert t.sent[-1] == head and t.closed
    assert w.get_extra_info("peername") == "peer"  # everything else is the transport's


def test_responses_through_one_write_are_whole_on_a_keep_alive_connection(server):
    """The served protocol writes through OneWrite; each answer arrives whole, head and body."""
    assert server.config.http.__name__ == "OneWriteHttpToolsProtocol"
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    body = msgspec.json.encode(samples.filter_args(WANTS, NODES, True))
    for _ in range(3):  # keep-alive: every response on the connection
        sock.sendall(b"POST /prioritize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(body) + body)
        data = sock.recv(65536)
        head, _, rest = data.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200")
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
        assert len(rest) == length and msgspec.json.decode(rest)
    sock.close()



def _served_once(srv: Server) -> None:
    """One filter and one prioritize over a keep-alive connection, answered whole."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
    for verb in ("filter", "prioritize"):
        conn.request("POST", f"/{verb}", body=msgspec.json.encode(samples.filter_args(WANTS, NODES, True)),
                     headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        assert resp.status == 200 and msgspec.json.decode(resp.read())
    conn.close()


class _Missing(types.ModuleType):
    """A uvicorn.protocols.http.httptools_impl without HttpToolsProtocol (a future uvicorn)."""


class _OddProtocol:
    def connection_made(self, transport, extra):  # a changed signature
        pass


@pytest.mark.parametrize("case", ["env-off", "import-error", "no-class", "other-signature"])
def test_without_one_write_the_server_falls_back_to_plain_httptools_and_serves(monkeypatch, case):
    name = "sb_test_future_uvicorn_httptools_impl"  # uvicorn's own "httptools" keeps working
    monkeypatch.setattr(server_mod, "HTTPTOOLS_IMPL", name)
    if case == "env-off":
        monkeypatch.setenv(server_mod.ONE_WRITE_ENV, "0")
    elif case == "import-error":
        pass  # no such module: ImportError
    elif case == "no-class":
        monkeypatch.setitem(sys.modules, name, _Missing(name))
    else:
        odd = _Missing(name)
        odd.HttpToolsProtocol = _OddProtocol
        monkeypatch.setitem(sys.modules, name, odd)
    assert server_mod.http_protocol() == "httptools"
    srv = Server(synced_extender(NODES, PODS)).start_background()
    try:
        assert srv.config.http == "httptools"
        _served_once(srv)
    finally:
        srv.stop()


def test_one_write_is_on_by_default_and_with_the_switch_at_1(monkeypatch):
    assert server_mod.http_protocol().__name__ == "OneWriteHttpToolsProtocol"
    monkeypatch.setenv(server_mod.ONE_WRITE_ENV, "1")
    assert server_mod.http_protocol().__name__ == "OneWriteHttpToolsProtocol"

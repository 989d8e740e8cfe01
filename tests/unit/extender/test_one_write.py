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
from testkit.extender_fixtures import small_cluster, synced_extender

from testkit import samples
from scheduler_build import settings
from scheduler_build.extender import config as extender_config
from scheduler_build.extender import one_write as one_write_mod
from scheduler_build.extender.cli import parser
from scheduler_build.extender.server import Server

NODES, PODS = small_cluster()
WANTS = samples.pod("new-1")


@pytest.fixture
def server():
    srv = Server(synced_extender(NODES, PODS)).start_background()
    yield srv
    srv.stop()


def test_one_write_sends_head_and_body_together_and_never_loses_or_reorders():
    OneWrite = one_write_mod.OneWrite

    class Loop:
        def __init__(self):
            self.soon = []

        def call_soon(self, fn):
            self.soon.append(fn)

    head = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n"
    t, loop = _Transport(), Loop()
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
    assert w.get_extra_info("peername") == "peer"  # a named transport method is the transport's


class _Transport:
    def __init__(self):
        self.sent, self.eof, self.closed = [], False, False

    def write(self, data):
        self.sent.append(data)

    def write_eof(self):
        self.eof = True

    def is_closing(self):
        return self.closed

    def close(self):
        self.closed = True

    def get_extra_info(self, name):
        return "peer" if name == "peername" else None

    def sendfile(self, *args):  # a method OneWrite was never checked against
        raise AssertionError("forwarded blindly")


class _Loop:
    def call_soon(self, fn):
        pass  # the safety flush never runs here: only the explicit paths may send the head


HEAD = b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\n"


def test_writelines_sends_the_held_head_first_in_the_same_write():
    t = _Transport()
    w = one_write_mod.OneWrite(t, _Loop())
    w.write(HEAD)
    w.writelines([b"{", b"}", b"\n\n"])
    assert t.sent == [HEAD + b"{}\n\n"]  # never a body before its head
    w.writelines([])
    assert t.sent == [HEAD + b"{}\n\n"]


def test_write_eof_flushes_the_held_head_first():
    t = _Transport()
    w = one_write_mod.OneWrite(t, _Loop())
    w.write(HEAD)
    w.write_eof()
    assert t.sent == [HEAD] and t.eof


def test_an_unnamed_transport_method_is_an_attribute_error_not_a_blind_forward():
    w = one_write_mod.OneWrite(_Transport(), _Loop())
    assert "sendfile" not in one_write_mod.FORWARDED
    with pytest.raises(AttributeError, match="does not forward 'sendfile'"):
        w.sendfile
    assert w.is_closing() is False  # a named one is forwarded


def test_the_switch_is_a_setting_and_the_old_variable_still_turns_it_off(monkeypatch):
    assert settings.default("extender.one_write") is True
    # The settings layer's variable under `scheduler-build` is the one the benchmarks always used.
    assert settings.env_vars("extender.one_write")[1] == extender_config.ONE_WRITE_ENV
    monkeypatch.setenv(extender_config.ONE_WRITE_ENV, "0")
    assert parser().parse_args([]).one_write is False  # the console script (containers, bench.e2e variant e)
    assert parser().parse_args(["--one-write"]).one_write is True
    monkeypatch.setenv(extender_config.ONE_WRITE_ENV, "1")
    assert parser().parse_args([]).one_write is True
    assert parser().parse_args(["--no-one-write"]).one_write is False


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


@pytest.mark.parametrize("case", ["switched-off", "import-error", "no-class", "other-signature"])
def test_without_one_write_the_server_falls_back_to_plain_httptools_and_serves(monkeypatch, case):
    name = "sb_test_future_uvicorn_httptools_impl"  # uvicorn's own "httptools" keeps working
    monkeypatch.setattr(one_write_mod, "HTTPTOOLS_IMPL", name)
    if case == "switched-off":
        pass  # one_write=False below
    elif case == "import-error":
        pass  # no such module: ImportError
    elif case == "no-class":
        monkeypatch.setitem(sys.modules, name, _Missing(name))
    else:
        odd = _Missing(name)
        odd.HttpToolsProtocol = _OddProtocol
        monkeypatch.setitem(sys.modules, name, odd)
    on = case != "switched-off"
    assert one_write_mod.http_protocol(on) == "httptools"
    srv = Server(synced_extender(NODES, PODS), one_write=on).start_background()
    try:
        assert srv.config.http == "httptools"
        _served_once(srv)
    finally:
        srv.stop()


def test_one_write_is_on_by_default():
    assert one_write_mod.http_protocol().__name__ == "OneWriteHttpToolsProtocol"
    assert extender_config.ServeConfig().one_write is True


def test_the_extender_image_takes_its_wheels_from_the_requirement_metadata():
    from scheduler_build.image import extender as extender_image

    pinned = ["uvicorn>=0.54,<0.55", "msgspec>=0.18", "prometheus_client>=0.20", "uvloop>=0.19", "httptools>=0.6",
              "kubernetes>=29.0; python_version >= '3.10'", "pytest>=8; extra == \"test\""]
    assert extender_image.runtime_wheels(pinned) == [
        "msgspec>=0.18", "prometheus_client>=0.20", "uvicorn>=0.54,<0.55", "uvloop>=0.19", "httptools>=0.6", "kubernetes>=29.0"]
    with pytest.raises(Exception, match="lack uvloop"):  # negative control: a requirement the extender needs is gone
        extender_image.runtime_wheels([r for r in pinned if not r.startswith("uvloop")])
    assert len(extender_image.runtime_wheels()) == len(extender_image.EXTENDER_DISTRIBUTIONS)  # the installed package's


def test_uvicorn_is_pinned_to_the_tested_range_and_this_one_is_in_it():
    from pathlib import Path

    import uvicorn

    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: the same parser under its PyPI name (a test dependency there)
        import tomli as tomllib

    deps = tomllib.loads((Path(__file__).resolve().parents[3] / "pyproject.toml").read_text())["project"]["dependencies"]
    (pin,) = [d.split("#")[0].strip() for d in deps if d.startswith("uvicorn")]
    low, high = (part.lstrip("<>=") for part in pin.removeprefix("uvicorn").split(","))
    version = tuple(int(x) for x in uvicorn.__version__.split(".")[:2])
    assert tuple(int(x) for x in low.split(".")[:2]) <= version < tuple(int(x) for x in high.split(".")[:2])

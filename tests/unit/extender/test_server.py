"""The extender over real HTTP: uvicorn on 127.0.0.1, keep-alive, body cap, TLS and
mutual TLS, the console entry point as a process, and hundreds of concurrent
keep-alive clients. Nothing is mocked; the API server is the list/watch stub
(see test_cache.py for why)."""

from __future__ import annotations

import asyncio
import http.client
import os
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest
from testkit.extender_fixtures import small_cluster, synced_extender

from testkit import apistub
from testkit import samples
from scheduler_build import pki
from scheduler_build.extender.server import Server, TLSOptions

NODES, PODS = small_cluster()
WANTS = samples.pod("new-1")


@pytest.fixture
def server():
    srv = Server(synced_extender(NODES, PODS, max_body_bytes=64 * 1024)).start_background()
    yield srv
    srv.stop()


def post(conn: http.client.HTTPConnection, path: str, body: bytes, headers: dict | None = None):
    conn.request("POST", path, body=body, headers={"Content-Type": "application/json", **(headers or {})})
    resp = conn.getresponse()
    return resp, resp.read()


def test_both_modes_over_one_keep_alive_connection(server):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    for mode in (False, True):
        resp, data = post(conn, "/filter", msgspec.json.encode(samples.filter_args(WANTS, NODES, mode)))
        reply = msgspec.json.decode(data)
        assert resp.status == 200 and resp.getheader("Content-Type") == "application/json"
        assert reply["Error"] == "" and "n-full" in reply["FailedNodes"]
        resp, data = post(conn, "/prioritize", msgspec.json.encode(samples.filter_args(WANTS, NODES, mode)))
        assert [h["Score"] for h in msgspec.json.decode(data)] == [0, 7, 10, 0]
    sock = conn.sock
    resp, _ = post(conn, "/filter", b"{not json")
    assert resp.status == 200 and conn.sock is sock  # same connection throughout: keep-alive
    conn.request("GET", "/filter")
    resp = conn.getresponse()
    resp.read()
    assert resp.status == 405 and resp.getheader("Allow") == "POST"
    conn.request("GET", "/nope")
    resp = conn.getresponse()
    resp.read()
    assert resp.status == 404
    conn.close()


def test_body_cap_by_content_length_and_while_streaming(server):
    big = b'{"Pod": {}, "NodeNames": ["' + b"x" * 70000 + b'"]}'
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    resp, data = post(conn, "/filter", big)
    assert resp.status == 200
    assert "exceeds the extender's limit of 65536 bytes" in msgspec.json.decode(data)["Error"]
    # The excess was drained (under 4x the cap), so the connection stays usable.
    resp, _ = post(conn, "/prioritize", big)
    assert resp.status == 413
    resp, data = post(conn, "/filter", msgspec.json.encode(samples.filter_args(WANTS, NODES, True)))
    assert resp.status == 200 and msgspec.json.decode(data)["Error"] == ""
    conn.close()
    # Far beyond the cap (declared length): answered at once and the connection closed.
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    sock.sendall(b"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n" + b" " * 1000)
    head = sock.recv(65536)
    assert head.startswith(b"HTTP/1.1 200") and b"connection: close" in head.lower()
    sock.close()

    # Chunked upload without Content-Length: the cap applies to the running total.
    def chunks():
        for _ in range(20):
            yield b" " * 8192

    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("POST", "/prioritize", body=chunks(), encode_chunked=True,
                 headers={"Transfer-Encoding": "chunked"})
    resp = conn.getresponse()
    assert resp.status == 413
    conn.close()
    # The server is still healthy afterwards.
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("GET", "/healthz")
    assert conn.getresponse().status == 200


def _certs(tmp: Path) -> dict[str, Path]:
    """A CA, the extender's serving and the scheduler's client certificate, from scheduler_build.pki."""
    import ipaddress

    from cryptography import x509
    from cryptography.x509.oid import ExtendedKeyUsageOID

    ca = pki.new_ca("test-ca", days=1)
    issued = {"server": pki.issue(ca, pki.name("extender"), ExtendedKeyUsageOID.SERVER_AUTH,
                                  [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))], days=1),
              "client": pki.issue(ca, pki.name("kube-scheduler"), ExtendedKeyUsageOID.CLIENT_AUTH, days=1)}
    out = {"ca.crt": tmp / "ca.crt"}
    out["ca.crt"].write_bytes(ca.cert_pem)
    for label, leaf in issued.items():
        out[f"{label}.crt"], out[f"{label}.key"] = tmp / f"{label}.crt", tmp / f"{label}.key"
        out[f"{label}.crt"].write_bytes(leaf.cert_pem)
        out[f"{label}.key"].write_bytes(leaf.key_pem)
    return out


def test_tls_and_mutual_tls(tmp_path):
    certs = _certs(tmp_path)
    body = msgspec.json.encode(samples.filter_args(WANTS, NODES, True))
    srv = Server(synced_extender(NODES, PODS), tls=TLSOptions(str(certs["server.crt"]), str(certs["server.key"]),
                                                              str(certs["ca.crt"]))).start_background()
    try:
        assert srv.url.startswith("https://")
        ctx = ssl.create_default_context(cafile=str(certs["ca.crt"]))
        ctx.verify_flags |= ssl.VERIFY_X509_STRICT  # Python 3.13's default, on every Python
        ctx.load_cert_chain(str(certs["client.crt"]), str(certs["client.key"]))
        conn = http.client.HTTPSConnection("127.0.0.1", srv.port, context=ctx, timeout=10)
        resp, data = post(conn, "/filter", body)
        assert resp.status == 200 and msgspec.json.decode(data)["NodeNames"] == ["n-free", "n-default"]
        conn.close()
        # Without a client certificate the handshake (or the first read) fails.
        bare = ssl.create_default_context(cafile=str(certs["ca.crt"]))
        conn = http.client.HTTPSConnection("127.0.0.1", srv.port, context=bare, timeout=10)
        with pytest.raises((ssl.SSLError, ConnectionError, http.client.RemoteDisconnected)):
            post(conn, "/filter", body)
        conn.close()
    finally:
        srv.stop()


def test_cli_rejects_bad_settings_with_one_line():
    out = subprocess.run([sys.executable, "-m", "scheduler_build.extender", "--tls-key", "/nonexistent"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "error: extender.tls_key/tls_client_ca given without extender.tls_cert; "
        "HTTPS needs --tls-cert (and --tls-key unless the cert file holds the key)"]
    out = subprocess.run([sys.executable, "-m", "scheduler_build.extender", "--kubeconfig", "/nonexistent"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "extender.kubeconfig: /nonexistent does not exist" in out.stderr
    assert "Traceback" not in out.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(port: int, path: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", path)
        return conn.getresponse().status
    finally:
        conn.close()


def _start(args: list[str], port: int, env: dict) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "scheduler_build.extender", "--port", str(port), *args],
                            stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            _get(port, "/healthz")
            return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise AssertionError(proc.stderr.read())


async def _client(port: int, bodies: list[tuple[bytes, bytes]], rounds: int) -> list[tuple[int, bytes]]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    out = []
    try:
        for i in range(rounds):
            path, body = bodies[i % len(bodies)]
            writer.write(b"POST " + path + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
            await writer.drain()
            status = int((await reader.readline()).split()[1])
            length = 0
            while (line := await reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
                assert name.lower() != "connection" or value.strip() != "close"
            out.append((status, await reader.readexactly(length)))
    finally:
        writer.close()
    return out

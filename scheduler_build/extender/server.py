"""HTTP serving: an ASGI adapter around Extender.handle, run by uvicorn.

uvicorn with its httptools parser and the uvloop event loop was chosen by
measurement against aiohttp and granian (bench/extender/choose_server.py, the
figures are in BENCHMARKS.md): see README "extender" for the why.

The adapter enforces the body cap while reading (Content-Length first, then the
running total for chunked bodies): past the cap nothing more is kept; the rest
is drained (up to DRAIN_FACTOR x the cap) so the client reads the answer, and a
body larger still gets its answer with `Connection: close`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import ssl
import sys
import threading
import time
from typing import Any

import msgspec

from scheduler_build.extender.app import Extender
from scheduler_build.extender.one_write import http_protocol
from scheduler_build.extender.config import TLSOptions

log = logging.getLogger("scheduler_build.extender")

# Longer than Go's http.Transport IdleConnTimeout (90s): the scheduler closes idle
# connections first, so it never reuses one the server is closing (a POST on such a
# connection would fail instead of being retried).
KEEP_ALIVE_SECONDS = 120
# An oversized body is read and discarded up to this many times the cap before
# the answer; beyond that the connection is closed without reading the rest.
DRAIN_FACTOR = 4


class AsgiApp:
    """A plain ASGI callable: no framework routing or middleware on the hot path."""

    def __init__(self, extender: Extender):
        self.extender = extender
        self.max_body = extender.options.max_body_bytes

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        method, path = scope["method"], scope["path"]
        body, too_large, drained = b"", False, False
        if method == "POST":
            read = await self._read_body(scope, receive)
            if read is None:
                return  # the client went away
            body, too_large, drained = read
        resp = await self.extender.handle(method, path, body, too_large=too_large)
        if too_large and drained:
            resp.close = False
        headers = [(b"content-type", resp.content_type.encode()),
                   (b"content-length", str(len(resp.body)).encode())]
        for name, value in resp.headers.items():
            headers.append((name.lower().encode(), value.encode()))
        if resp.close:
            headers.append((b"connection", b"close"))
        await send({"type": "http.response.start", "status": resp.status, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if method == "HEAD" else resp.body})

    async def _read_body(self, scope: dict, receive: Any) -> tuple[bytes, bool, bool] | None:
        """(body, too_large, drained), or None on a disconnect. Past the cap the body is b""."""
        length = None
        for name, value in scope["headers"]:
            if name == b"content-length":
                try:
                    length = int(value)
                except ValueError:
                    length = None
                break
        chunks, size = [], 0
        more = True
        too_large = length is not None and length > self.max_body
        while more and not too_large:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            more = message.get("more_body", False)
            if size > self.max_body:
                too_large = True
                break
            chunks.append(chunk)
        if not too_large:
            return (chunks[0] if len(chunks) == 1 else b"".join(chunks)), False, False
        # Read and drop the rest, up to DRAIN_FACTOR x the cap, so the client
        # reads our answer instead of a TCP reset (closing a socket with
        # unread input resets it), and the connection stays usable.
        if length is not None and length > DRAIN_FACTOR * self.max_body:
            more = True  # not worth reading: answer now and close
            size = length
        while more and size <= DRAIN_FACTOR * self.max_body:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            size += len(message.get("body", b""))
            more = message.get("more_body", False)
        return b"", True, not more


async def _lifespan(receive: Any, send: Any) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message (+ exception)."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {"ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
                 "level": record.levelname.lower(), "logger": record.name, "msg": record.getMessage()}
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return msgspec.json.encode(entry).decode()


def setup_logging(level: str = "info") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())


def uvicorn_config(extender: Extender, host: str, port: int, tls: TLSOptions | None = None,
                   fd: int | None = None, one_write: bool = True) -> Any:
    import uvicorn  # heavy (~0.05 s + uvloop): only when a server is made

    kwargs: dict[str, Any] = {}
    if tls and tls.cert_file:
        kwargs.update(ssl_certfile=tls.cert_file, ssl_keyfile=tls.key_file or None)
        if tls.client_ca_file:
            kwargs.update(ssl_ca_certs=tls.client_ca_file, ssl_cert_reqs=ssl.CERT_REQUIRED)
    return uvicorn.Config(
        AsgiApp(extender), host=host, port=port, fd=fd, loop="uvloop", http=http_protocol(one_write),
        lifespan="off", access_log=False, log_config=None, server_header=False, date_header=False,
        timeout_keep_alive=KEEP_ALIVE_SECONDS, backlog=2048, **kwargs)


class Server:
    """uvicorn.Server that can also run in a background thread (tests, benchmarks)."""

    def __init__(self, extender: Extender, host: str = "127.0.0.1", port: int = 0,
                 tls: TLSOptions | None = None, one_write: bool = True):
        import uvicorn  # heavy (~0.05 s + uvloop): only when a server is made

        self.extender = extender
        # Bind here so port 0 resolves to a free port we can report before serving.
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.sock.listen(2048)
        self.host, self.port = host, self.sock.getsockname()[1]
        self.config = uvicorn_config(extender, host, self.port, tls, one_write=one_write)
        self.server = uvicorn.Server(self.config)
        self.scheme = "https" if tls and tls.cert_file else "http"
        self._thread: Any = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"

    def run(self, stop: "StopSignals") -> None:
        """Serve in this thread until `stop` (installed by the caller) hears SIGINT/SIGTERM."""
        self.server.capture_signals = contextlib.nullcontext  # not uvicorn's: see StopSignals
        stop.attach(self.server)
        self.server.run(sockets=[self.sock])

    def start_background(self) -> "Server":
        def target() -> None:
            import uvloop  # only when serving in a thread

            # No signal handlers outside the main thread; the owner stops us.
            self.server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
            asyncio.set_event_loop_policy(None)
            uvloop.run(self.server.serve(sockets=[self.sock]))

        self._thread = threading.Thread(target=target, name="extender-server", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)
        self.sock.close()
        self.extender.close()


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopSignals:
    """SIGINT and SIGTERM for a foreground server, from before it starts until after it has drained.

    uvicorn's own handling installs its handlers only once serving begins and re-raises the signal
    from inside the event loop, where asyncio's runner (3.11+) and uvloop each intervene: a signal
    could end the process with the wrong status. Here the first signal is recorded and asks the
    server to drain (a second SIGINT forces it, as in uvicorn); a signal before the server exists
    drains it as soon as it does. On leaving, the signal goes to the handlers found on entering:
    SIGINT raises KeyboardInterrupt (exit 130), SIGTERM's default action ends the process by it
    (143 in a shell). Where that does not end it (PID 1 ignores a default SIGTERM) it exits 128 + N.
    A signal ignored on entering (`nohup`, a shell's `&`) stays ignored."""

    def __init__(self) -> None:
        self.received: int | None = None
        self._server: Any = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> "StopSignals":
        for sig in STOP_SIGNALS:
            if signal.getsignal(sig) is not signal.SIG_IGN:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, sig: int, frame: Any) -> None:
        if self.received is None:
            self.received = sig
        if self._server is not None:
            self._server.handle_exit(sig, frame)

    def attach(self, server: Any) -> None:
        """From now on a signal drains `server` (a uvicorn.Server); one already received does at once."""
        self._server = server
        if self.received is not None:
            server.should_exit = True

    def __exit__(self, exc_type: Any, *rest: Any) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        if self.received is not None and exc_type is None:
            sys.stdout.flush()
            sys.stderr.flush()
            signal.raise_signal(self.received)
            sys.exit(128 + self.received)


def start_health_server(extender: Extender, host: str, port: int) -> Any:
    """Plain HTTP /healthz and /readyz on their own port, in a daemon thread.

    With mutual TLS the kubelet's probes cannot pass the handshake (they carry no
    client certificate), so they go here; nothing but the two probes is served.
    """
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer  # only with --health-port

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
            if self.path in ("/healthz", "/readyz"):
                answer = extender.probe(self.path)
                status, body, content_type = answer.status, answer.body, answer.content_type
            else:
                status, body, content_type = 404, b"only /healthz and /readyz here\n", "text/plain; charset=utf-8"
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the stdlib's name)
            return  # probes every few seconds: not worth a log line

    class HealthServer(ThreadingHTTPServer):
        address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        daemon_threads = True

    httpd = HealthServer((host, port), Handler)
    threading.Thread(target=httpd.serve_forever, name="extender-health", daemon=True).start()
    return httpd

"""OneWrite: each response's head and body in one transport write, failing closed.

uvicorn writes the status line and headers as soon as the app starts the
response, then the body: two sends, so kube-scheduler's Go client wakes for
the head, parses it and parks again until the body arrives, twice the
wake-ups per call on a machine whose 2 cores the API server, etcd and the
scheduler share. py-spy of the extender during `inv bench.e2e --trace` at
5000 nodes had it inside those two transport.write calls for ~1 ms per request
(BENCHMARKS.md, issue 15).

The wrapper holds a head until the next write (the body, which the app sends
without yielding to the loop), or at the latest until the loop's next turn.
Every way bytes can leave (`write`, `writelines`, `write_eof`, `close`) sends
the held head first, so nothing is reordered or left behind. Only the transport
methods uvicorn's httptools protocol is known to call are forwarded
(FORWARDED); anything else is an AttributeError, so a uvicorn that starts using
another one fails in the tests (tests/unit/extender/test_one_write.py), not on the
wire. uvicorn is pinned to the tested range in pyproject.toml.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import logging
from typing import Any, Iterable

log = logging.getLogger("scheduler_build.extender")

HTTPTOOLS_IMPL = "uvicorn.protocols.http.httptools_impl"  # the module whose HttpToolsProtocol OneWrite hooks
# What uvicorn's httptools protocol (and its flow control) calls on the transport besides the writes, and
# which cannot reorder a held head: forwarded as they are. Extend only after reading what a new one does.
FORWARDED = frozenset({"get_extra_info", "is_closing", "pause_reading", "resume_reading", "set_protocol",
                       "get_protocol", "is_reading", "get_write_buffer_size", "get_write_buffer_limits",
                       "set_write_buffer_limits", "can_write_eof", "abort"})


class OneWrite:
    """A transport wrapper that sends a response's head and body in one write."""

    __slots__ = ("transport", "loop", "held")

    def __init__(self, transport: Any, loop: Any):
        self.transport, self.loop, self.held = transport, loop, None

    def write(self, data: bytes) -> None:
        held = self.held
        if held is not None:
            self.held = None
            self.transport.write(held + data)
        elif data.startswith(b"HTTP/") and data.endswith(b"\r\n\r\n"):
            self.held = data
            self.loop.call_soon(self.flush)
        else:
            self.transport.write(data)

    def writelines(self, chunks: Iterable[bytes]) -> None:
        """The chunks as one write, after the held head (never a body before its head)."""
        data = b"".join(chunks)
        if data:
            self.write(data)

    def write_eof(self) -> None:
        self.flush()
        self.transport.write_eof()

    def flush(self) -> None:
        held = self.held
        if held is not None:
            self.held = None
            if not self.transport.is_closing():
                self.transport.write(held)

    def close(self) -> None:
        self.flush()
        self.transport.close()

    def __getattr__(self, name: str) -> Any:
        if name in FORWARDED:
            return getattr(self.transport, name)
        raise AttributeError(f"OneWrite does not forward {name!r}: this uvicorn uses a transport method OneWrite was "
                             "not checked against; read what it does and add it to one_write.FORWARDED, or serve with "
                             "OneWrite off (extender.one_write = false)")


def http_protocol(one_write: bool = True) -> Any:
    """uvicorn's httptools protocol writing each response through OneWrite, or plain "httptools" when
    OneWrite is off (the extender.one_write setting, for side-by-side measurement) or this uvicorn lacks
    what OneWrite hooks: a warning, never a crash."""
    if not one_write:
        return "httptools"
    try:
        HttpToolsProtocol = importlib.import_module(HTTPTOOLS_IMPL).HttpToolsProtocol
        params = list(inspect.signature(HttpToolsProtocol.connection_made).parameters)
    except Exception as exc:  # ImportError, AttributeError, or anything a changed module raises
        log.warning("OneWrite off: uvicorn's HttpToolsProtocol is not usable here (%s); plain httptools", exc)
        return "httptools"
    if len(params) != 2:  # (self, transport)
        log.warning("OneWrite off: HttpToolsProtocol.connection_made%s is not (self, transport); plain httptools",
                    tuple(params))
        return "httptools"

    class OneWriteHttpToolsProtocol(HttpToolsProtocol):  # type: ignore[misc, valid-type]
        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            loop = getattr(self, "loop", None) or asyncio.get_running_loop()
            super().connection_made(OneWrite(transport, loop))

    return OneWriteHttpToolsProtocol

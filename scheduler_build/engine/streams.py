"""Byte streams from the engine: a file object over chunks (archives read as they arrive) and
the split of a log stream into lines. Pure; engine.py's containers use them."""

from __future__ import annotations

import io
from typing import Callable, Iterable, Iterator


class ChunkReader(io.RawIOBase):
    """A raw file object over an iterator of byte chunks (tarfile's streaming mode reads it)."""

    def __init__(self, chunks: Iterable[bytes]):
        super().__init__()
        self._chunks: Iterator[bytes] = iter(chunks)
        self._chunk, self._offset = b"", 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while self._offset >= len(self._chunk):
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._chunk, self._offset = chunk, 0
        size = min(len(buffer), len(self._chunk) - self._offset)
        buffer[:size] = self._chunk[self._offset:self._offset + size]
        self._offset += size
        return size


def lines(chunks: Iterable[bytes], on_line: Callable[[str], None]) -> None:
    """Split a byte stream into lines for on_line (the last one may lack its newline)."""
    buffer = b""
    for chunk in chunks:
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            on_line(line.decode(errors="replace"))
    if buffer:
        on_line(buffer.decode(errors="replace"))

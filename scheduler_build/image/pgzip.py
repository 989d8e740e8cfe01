"""A deterministic, block-parallel gzip writer (the pigz scheme, on the stdlib's zlib).

The layer's compressed digest is part of every image digest, so its bytes must
depend on the input only, never on how many cores compressed it or in which
order the threads finished. The input is cut into fixed BLOCK-sized blocks;
each is deflated on its own with the previous block's last 32 KiB as the
preset dictionary (so the ratio stays within ~0.1% of one stream) and ends on
a sync flush (byte-aligned, so the pieces concatenate into one deflate
stream); the last ends the stream. Blocks are written in input order. The
output is then a function of (input, BLOCK, LEVEL, zlib's version): the thread
count only changes the speed. zlib releases the GIL while it deflates, so the
threads use every core.

The gzip header is fixed: no name, mtime 0, XFL 0, OS 255 (unknown).
"""

from __future__ import annotations

import os
import struct
import zlib
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import BinaryIO

# Pinned: changing either changes every layer digest (bump assemble.ASSEMBLY_VERSION).
LEVEL = 1
BLOCK = 1 << 20
WINDOW = 32 * 1024
HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"


def _deflate_block(data: bytes, dictionary: bytes, last: bool, level: int) -> bytes:
    """One block as a piece of a raw deflate stream, primed with the previous block's tail."""
    if dictionary:
        comp = zlib.compressobj(level, zlib.DEFLATED, -15, 8, zlib.Z_DEFAULT_STRATEGY, dictionary)
    else:
        comp = zlib.compressobj(level, zlib.DEFLATED, -15, 8, zlib.Z_DEFAULT_STRATEGY)
    return comp.compress(data) + comp.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH)


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


class ParallelGzipWriter:
    """A write-only file object: gzip of everything written, into `out`, in BLOCK pieces.

    At most 2 x workers blocks are in flight, so memory stays a few MiB whatever
    the input size. `close()` ends the stream (an empty input gives a valid gzip).
    """

    def __init__(self, out: BinaryIO, level: int = LEVEL, workers: int | None = None, block: int = BLOCK):
        self.out, self.level, self.block = out, level, block
        self.workers = workers or default_workers()
        self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="pgzip") if self.workers > 1 else None
        self._pending: deque[Future[bytes] | bytes] = deque()
        self._buffer = bytearray()
        self._tail = b""
        self._crc = 0
        self._size = 0
        self._closed = False
        out.write(HEADER)

    def write(self, data: bytes) -> int:
        self._crc = zlib.crc32(data, self._crc)
        self._size += len(data)
        self._buffer += data
        while len(self._buffer) > self.block:  # '>': the last block is only known at close
            piece = bytes(self._buffer[: self.block])
            del self._buffer[: self.block]
            self._submit(piece, last=False)
        return len(data)

    def flush(self) -> None:
        """Nothing to do: a block is only complete at BLOCK bytes (flushing early would change the bytes)."""

    def _submit(self, piece: bytes, last: bool) -> None:
        dictionary, self._tail = self._tail, piece[-WINDOW:]
        if self._pool is None:
            self._pending.append(_deflate_block(piece, dictionary, last, self.level))
        else:
            self._pending.append(self._pool.submit(_deflate_block, piece, dictionary, last, self.level))
        while len(self._pending) > 2 * self.workers:
            self._drain_one()

    def _drain_one(self) -> None:
        head = self._pending.popleft()
        self.out.write(head if isinstance(head, bytes) else head.result())

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._submit(bytes(self._buffer), last=True)
            self._buffer.clear()
            while self._pending:
                self._drain_one()
            self.out.write(struct.pack("<II", self._crc & 0xFFFFFFFF, self._size & 0xFFFFFFFF))
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> "ParallelGzipWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        elif self._pool is not None:  # a failed write: stop the workers, write no trailer
            self._closed = True
            self._pool.shutdown(wait=True, cancel_futures=True)

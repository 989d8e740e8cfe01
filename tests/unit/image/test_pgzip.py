"""The layer compressor (image/pgzip.py): valid gzip, and bytes that do not depend on threads or write sizes."""

from __future__ import annotations

import gzip
import hashlib
import io
import random
import zlib

import pytest

from scheduler_build.image import pgzip


def _sample() -> bytes:
    """4.3 MB of compressible, seeded text: several blocks, and a tail shorter than one."""
    rng = random.Random(15)
    words = [bytes(rng.randrange(97, 123) for _ in range(rng.randrange(2, 9))) for _ in range(300)]
    return b" ".join(rng.choice(words) for _ in range(700_000))


def _compress(data: bytes, workers: int, chunk: int, block: int = pgzip.BLOCK) -> bytes:
    out = io.BytesIO()
    with pgzip.ParallelGzipWriter(out, workers=workers, block=block) as writer:
        for i in range(0, len(data), chunk):
            writer.write(data[i:i + chunk])
    return out.getvalue()


def test_bytes_do_not_depend_on_threads_or_write_sizes():
    data = _sample()
    reference = _compress(data, workers=1, chunk=len(data))
    for workers, chunk in ((2, 10240), (4, 1 << 20), (3, 4097)):
        assert _compress(data, workers, chunk) == reference
    assert gzip.decompress(reference) == data
    assert reference[:10] == pgzip.HEADER  # no name, mtime 0


def test_pinned_output_for_this_zlib():
    """The layer digest is part of every image digest: this fails when the level, the block size,
    the header or zlib's output changes, so that the change is deliberate (bump ASSEMBLY_VERSION)."""
    if zlib.ZLIB_RUNTIME_VERSION != "1.2.13":
        pytest.skip(f"digest pinned for zlib 1.2.13, this is {zlib.ZLIB_RUNTIME_VERSION}")
    out = _compress(_sample(), workers=2, chunk=10240)
    assert (pgzip.LEVEL, pgzip.BLOCK) == (1, 1 << 20)
    assert hashlib.sha256(out).hexdigest() == "82a4215109c06869c38b3e61f625ed5195aa7c40e076672d01eb4675b29fcdb3"


@pytest.mark.parametrize("size", [0, 1, 100, 1000, 1024])
def test_block_boundaries_and_empty_input(size):
    data = bytes(range(256)) * 4 * size  # 0, exactly 1, 100 and 1000 small blocks, and more
    out = _compress(data, workers=2, chunk=777, block=1024)
    assert gzip.decompress(out) == data
    assert out == _compress(data, workers=1, chunk=len(data) or 1, block=1024)


def test_a_failed_write_leaves_no_trailer():
    out = io.BytesIO()
    with pytest.raises(RuntimeError):
        with pgzip.ParallelGzipWriter(out, workers=2, block=1024) as writer:
            writer.write(b"x" * 5000)
            raise RuntimeError("the tar writer failed")
    with pytest.raises((EOFError, OSError)):
        gzip.decompress(out.getvalue())

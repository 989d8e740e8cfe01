"""The scheduler image's single layer: its file system, as a deterministic tar.gz.

Sorted entries, USTAR headers, uid/gid 0, every mtime = SOURCE_DATE_EPOCH, gzip
with mtime 0 and no file name (pgzip.py: block-parallel, pinned level and block
size): the layer's digests depend on its content and zlib's version only.
The file system follows dockerfiles/scheduler.Dockerfile.
"""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path
from typing import BinaryIO, Iterable

from scheduler_build.errors import UserError
from scheduler_build.image import pgzip

CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
UID = GID = 65532
BIN_DIR = "usr/local/bin"

# (path, mode, uid, gid, content); content None = a directory.
Entry = tuple[str, int, int, int, "bytes | Path | None"]


def rootfs_entries(binary: Path, binary_name: str, ca_bundle: Path = CA_BUNDLE) -> list[Entry]:
    """(path, mode, uid, gid, content) for every entry of the single layer; None = directory."""
    if not ca_bundle.is_file():
        raise UserError(f"no CA bundle at {ca_bundle}", "apt-get install -y ca-certificates (TLS to extenders and API servers needs it)")
    passwd = f"root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:{UID}:{GID}:nonroot:/nonexistent:/sbin/nologin\n"
    group = f"root:x:0:\nnonroot:x:{GID}:\n"
    return [
        ("etc", 0o755, 0, 0, None),
        ("etc/group", 0o644, 0, 0, group.encode()),
        ("etc/passwd", 0o644, 0, 0, passwd.encode()),
        ("etc/ssl", 0o755, 0, 0, None),
        ("etc/ssl/certs", 0o755, 0, 0, None),
        ("etc/ssl/certs/ca-certificates.crt", 0o644, 0, 0, ca_bundle),
        ("tmp", 0o1777, 0, 0, None),
        ("usr", 0o755, 0, 0, None),
        ("usr/local", 0o755, 0, 0, None),
        (BIN_DIR, 0o755, 0, 0, None),
        (f"{BIN_DIR}/{binary_name}", 0o755, 0, 0, binary),
    ]


def write_layer(out: BinaryIO, entries: Iterable[Entry], epoch: int) -> None:
    """A deterministic tar: sorted entries, USTAR headers, fixed owners and mtimes."""
    with tarfile.open(fileobj=out, mode="w|", format=tarfile.USTAR_FORMAT) as tar:
        for path, mode, uid, gid, content in sorted(entries, key=lambda e: e[0]):
            info = tarfile.TarInfo(path)
            info.mode, info.uid, info.gid, info.mtime = mode, uid, gid, epoch
            info.uname = info.gname = ""
            if content is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            elif isinstance(content, Path):
                info.size = content.stat().st_size
                with open(content, "rb") as handle:
                    tar.addfile(info, handle)
            else:
                info.size = len(content)
                tar.addfile(info, io.BytesIO(content))


class HashingWriter:
    """Hash and count what passes through, optionally forwarding to a file."""

    def __init__(self, sink=None):
        self.sha = hashlib.sha256()
        self.size = 0
        self.sink = sink

    def write(self, data: bytes) -> int:
        self.sha.update(data)
        self.size += len(data)
        if self.sink is not None:
            self.sink.write(data)
        return len(data)

    def flush(self) -> None:
        if self.sink is not None:
            self.sink.flush()

    @property
    def digest(self) -> str:
        return "sha256:" + self.sha.hexdigest()


def plain_layer(entries: Iterable[Entry], epoch: int) -> tuple[str, int]:
    """(diff_id, size) of the uncompressed layer, written nowhere: one read and hash of the
    binary (~0.1 s for 73 MB), so the image config is known before the layer is compressed."""
    writer = HashingWriter()
    write_layer(writer, entries, epoch)
    return writer.digest, writer.size


def write_compressed_layer(path: Path, entries: Iterable[Entry], epoch: int) -> tuple[str, str, int]:
    """Write the gzip-compressed layer to `path`; return (diff_id, digest, size).

    One pass, streamed: the tar is hashed (diff_id) on its way into the compressor,
    whose output is hashed (digest) on its way to the file; nothing is buffered
    beyond a few blocks. The level and block size are pgzip's pinned ones
    (chosen by measurement, BENCHMARKS.md), and the gzip header is fixed, so the
    compressed digest depends on the content and zlib's version only.
    """
    with open(path, "wb") as raw:
        compressed = HashingWriter(raw)
        with pgzip.ParallelGzipWriter(compressed) as gz:
            plain = HashingWriter(gz)
            write_layer(plain, entries, epoch)
    return plain.digest, compressed.digest, compressed.size

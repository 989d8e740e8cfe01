"""Profile-guided builds: the CPU profile a compile takes as `go build -pgo` (docs/build.md).

The profile is an input like a patch: read and checked once when the build is decided (`load`), its
sha256 recorded in build-info.json and the image's provenance, its bytes put into the compile's inputs
archive at one fixed path (`IN_CONTAINER`), so the action record hashes them (a changed profile
rebuilds, the same one does not) and two builds with the same profile give the same binary: with
`-trimpath` Go records the profile's base name only, `-pgo=default.pgo`, whatever the host file was
called.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import zlib
from dataclasses import dataclass
from pathlib import Path

from scheduler_build.errors import UserError

FILE_NAME = "default.pgo"  # Go's own name for a main package's profile; what `go version -m` shows
IN_CONTAINER = f"/src/{FILE_NAME}"  # compile.SRC: the workspace's directory, cleared between builds
FLAG = f"-pgo={IN_CONTAINER}"
PREPROFILE = b"GO PREPROFILE V1\n"  # `go tool preprofile`'s output, which -pgo takes too
HINT = ("pass a CPU profile in pprof format: `inv bench.perf --profile`'s merged profile, "
        "a running scheduler's /debug/pprof/profile (docs/build.md) or `go test -cpuprofile`")
# A pprof Profile message (profile.proto) starts with one of its fields, 1 to 14, each a varint (wire type 0,
# e.g. Go's runtime writes time_nanos, field 9, first) or length-delimited (wire type 2, e.g. sample_type).
_TAGS = frozenset((n << 3) | wire for n in range(1, 15) for wire in (0, 2))
_PEEK = 4096  # bytes of the (decompressed) message walked


@dataclass(frozen=True)
class Profile:
    """A decided profile: where it was read from and the sha256 of its bytes."""

    path: Path
    sha256: str

    def to_dict(self) -> dict[str, str]:
        return {"path": str(self.path), "sha256": self.sha256, "flag": f"-pgo={FILE_NAME}"}


def looks_like_pprof(data: bytes) -> str:
    """Why `data` is not a profile `go build -pgo` takes, or "" when it is one (gzipped or plain pprof, or
    a preprocessed profile). Checks the container, not every sample: Go reads the rest."""
    if not data:
        return "it is empty"
    if data.startswith(PREPROFILE):
        return ""
    if data[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as unzipped:
                data = unzipped.read(_PEEK)
        except (OSError, EOFError, zlib.error) as err:
            return f"it is gzip but does not decompress ({err})"
        if not data:
            return "it decompresses to nothing"
    if not _fields_of_a_profile(data[:_PEEK]):
        return "it is neither gzip-compressed pprof nor a pprof protocol buffer"
    return ""


def _varint(data: bytes, at: int) -> tuple[int, int] | None:
    """(value, next offset) of the varint at `at`; None when it runs past the data or over 10 bytes."""
    value = 0
    for shift in range(10):
        if at + shift >= len(data):
            return None
        byte = data[at + shift]
        value |= (byte & 0x7F) << (7 * shift)
        if not byte & 0x80:
            return value, at + shift + 1
    return None


def _fields_of_a_profile(data: bytes) -> bool:
    """Whether `data` (the message's start) reads as Profile fields: each a known field number with a
    varint or a length-delimited value; a value cut off by the end of `data` is fine (only the start is read)."""
    at = 0
    while at < len(data):
        tag = _varint(data, at)
        if tag is None:
            return at > 0
        if tag[0] not in _TAGS:
            return False
        value = _varint(data, tag[1])
        if value is None:
            return True
        at = value[1] + (value[0] if tag[0] & 7 == 2 else 0)
    return True


def load(path: Path | str, where: str) -> Profile:
    """The profile at `path`, checked; `where` names the flag or field it came from (for the error line)."""
    path = Path(path).expanduser().resolve()
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{where}: no such profile {path}", HINT) from None
    except IsADirectoryError:
        raise UserError(f"{where}: {path} is a directory, not a profile", HINT) from None
    except OSError as err:
        raise UserError(f"{where}: cannot read the profile {path} ({err.strerror})", HINT) from None
    why = looks_like_pprof(data)
    if why:
        raise UserError(f"{where}: {path} is not a pprof CPU profile: {why}", HINT)
    return Profile(path, hashlib.sha256(data).hexdigest())


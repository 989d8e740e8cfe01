"""Whose file is it: a record of what scheduler-build wrote, by digest, and the checks every output
path passes before any work starts.

A file at an output path is ours to replace only when it is absent, already holds the bytes about
to be written, or still holds the bytes we recorded writing there. Anything else (a file the user
wrote, or one of ours the user edited since) is theirs: refused unless --force, and with --force
replaced atomically and named. File names decide nothing.

Two records:
- a directory output (config.render --plain, config.chart) holds `RECORD`, `sha256sum` lines of the
  files written there (`sha256sum -c .scheduler-build.sha256` checks them); it travels with the
  directory (a Git repository a re-render runs in, on any machine);
- a single file (image.build --oci-archive) is recorded under the cache directory, keyed by its
  absolute path (a tar has no room for a record of its own).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path

from scheduler_build import atomic
from scheduler_build.atomic import write_atomic
from scheduler_build.errors import UserError, WriteError

RECORD = ".scheduler-build.sha256"
FILES_DIR = "written"  # under paths.cache_dir: one record per single-file output


def digest(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def file_digest(path: Path) -> str:
    sha = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            sha.update(block)
    return sha.hexdigest()


def check_writable(path: Path, flag: str) -> None:
    """Before any work: `path` (a file or directory to write) can be created or replaced. The directory
    it goes in, or the nearest one that exists above it, must take a new file (a real probe: root
    passes every permission check, not a read-only mount or an immutable directory); an existing
    directory at `path` must take one too. One line naming the flag and the place otherwise."""
    path = Path(path).absolute()
    places = [path] if path.is_dir() and not path.is_symlink() else []
    above = next((p for p in path.parents if p.exists() or p.is_symlink()), Path("/"))
    if not above.is_dir():
        raise UserError(f"{flag} {path}: {above} is a file, not a directory", "choose a path under a directory")
    for place in [*places, above]:
        try:
            fd, probe = tempfile.mkstemp(prefix=".scheduler-build-probe-", dir=place)
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            raise WriteError(f"{flag} {path}: cannot write in {place} ({exc.strerror or exc})",
                             "choose a directory you can write; nothing was done") from None


def read_record(directory: Path) -> dict[str, str]:
    """name -> sha256 of what scheduler-build last wrote in `directory` ({} without a record)."""
    try:
        text = (Path(directory) / RECORD).read_text()
    except (OSError, UnicodeDecodeError):
        return {}
    record = {}
    for line in text.splitlines():
        sha, _, name = line.partition("  ")
        if len(sha) == 64 and name and not Path(name).is_absolute() and ".." not in Path(name).parts:
            record[name] = sha
    return record


def record_text(files: dict[str, str | bytes]) -> str:
    return "".join(f"{digest(files[name])}  {name}\n" for name in sorted(files))


def theirs(directory: Path, files: dict[str, str | bytes], record: dict[str, str] | None = None) -> list[str]:
    """The names in `files` whose file in `directory` would change and is not as we recorded writing it."""
    directory = Path(directory)
    record = read_record(directory) if record is None else record
    found = []
    for name in sorted(files):
        path = directory / name
        if path.is_symlink() or (path.exists() and not path.is_file()):
            found.append(name)
            continue
        if not path.exists():
            continue
        current = file_digest(path)
        if current != digest(files[name]) and current != record.get(name):
            found.append(name)
    return found


def refuse(flag: str, where: Path, names: list[str]) -> UserError:
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return UserError(f"{flag} {where}: {shown} {'is' if len(names) == 1 else 'are'} not as scheduler-build wrote "
                     f"{'it' if len(names) == 1 else 'them'} (written or edited by someone else)",
                     "move it away, or pass --force to replace it; nothing was changed")


def _single_record(cache_dir: Path, path: Path) -> Path:
    return Path(cache_dir) / FILES_DIR / digest(str(Path(path).absolute()))[:40]


def check_file(path: Path, cache_dir: Path, force: bool, flag: str) -> bool:
    """Before any work: `path` may be written (check_writable), and an existing file there is ours (its
    digest is the one recorded when we wrote it) unless --force. Returns whether --force is needed
    to replace it (the caller names it when it does)."""
    path = Path(path)
    check_writable(path, flag)
    if not path.exists() and not path.is_symlink():
        return False
    if path.is_dir() and not path.is_symlink():
        raise UserError(f"{flag} {path} is a directory", f"name a file, e.g. {path / 'image.oci.tar'}")
    try:
        ours = path.is_file() and not path.is_symlink() and \
            _single_record(cache_dir, path).read_text().strip() == file_digest(path)
    except (OSError, UnicodeDecodeError):
        ours = False
    if not ours and not force:
        raise refuse(flag, path.parent, [path.name])
    return not ours


def remember_file(path: Path, cache_dir: Path) -> None:
    """Record the digest of the file just written at `path` (its next write finds it ours)."""
    write_atomic(_single_record(cache_dir, path), file_digest(path) + "\n")


# --- which files of a published directory are ours (clean/plan.py; atomic.publish_dir keeps the rest) ---

# The names a published output's own record makes ours. A build's directory: its build-info.json names the
# component, whose binary and SBOMs (image/assemble.py writes those beside it) sit there. An image layout:
# its image-info.json, the OCI layout's index and marker, and blobs named by their digest.
_BLOB = re.compile(r"^blobs/sha256/[0-9a-f]{64}$")


def _json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def files_under(directory: Path) -> list[str]:
    """Every file, symlink and empty directory under `directory` (symlinks not followed), relative."""
    found = []
    for root, dirs, files in os.walk(directory):
        base = Path(root).relative_to(directory)
        for name in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            found.append((base / name).as_posix())
        if not dirs and not files and Path(root) != Path(directory):
            found.append(base.as_posix())
    return sorted(found)


def published_files(directory: Path) -> tuple[str, list[str], list[str]] | None:
    """(why it is ours, our files, the others) of a real directory one of our publishes wrote; None when
    none of our records is in it. A file is ours only when our record names it (a rendering's record: with
    the digest we wrote); everything else in it is someone else's, whatever its name."""
    directory = Path(directory)
    if not directory.is_dir() or directory.is_symlink():
        return None
    present = files_under(directory)
    record = read_record(directory)
    if record:
        ours = {RECORD} | {name for name, sha in record.items() if (directory / name).is_file()
                           and not (directory / name).is_symlink() and file_digest(directory / name) == sha}
        why = f"written by scheduler-build (every file as {RECORD} records)"
    elif (build := _json(directory / "build-info.json")).get("scheduler_build"):
        component = str(build.get("component") or Path((build.get("binary") or {}).get("path") or "").name)
        ours = {"build-info.json"} | ({component, f"{component}.spdx.json", f"{component}.cdx.json"} if component else set())
        why = "published output (build-info.json)"
    elif _json(directory / "image-info.json").get("inputs_key"):
        ours = {"image-info.json", "index.json", "oci-layout"} | {name for name in present if _BLOB.match(name)}
        why = "published output (image-info.json)"
    else:
        return None
    mine = [name for name in present if name in ours and not (directory / name).is_symlink()]
    return why, mine, [name for name in present if name not in mine]


def publish_dir(staging: Path, final: Path, version: str = "") -> Path:
    """atomic.publish_dir, keeping the files in the earlier output our record does not name (a user's)."""
    def theirs(directory: Path) -> list[str]:
        found = published_files(directory)
        return found[2] if found else []

    return atomic.publish_dir(staging, final, version, theirs)

"""Atomic file-system updates: an interrupted task leaves the previous good state."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from scheduler_build.errors import UserError, WriteError


def umask_mode(base: int = 0o666) -> int:
    """`base` as the process's umask leaves it: what open(2) or mkdir(2) would have given. Temporary files
    are made 0600 and directories 0700 (mkstemp, mkdtemp), so a published output is set to this."""
    try:
        with open("/proc/self/status") as status:  # read without changing it (os.umask sets as it reads)
            found = next((line.split()[1] for line in status if line.startswith("Umask:")), None)
        mask = int(found, 8) if found else None
    except OSError:
        mask = None
    if mask is None:
        mask = os.umask(0o022)
        os.umask(mask)
    return base & ~mask


def write_atomic(path: Path, data: bytes | str, mode: int | None = None) -> None:
    """Write via a temporary file in the same directory, fsync, then rename. The file gets `mode`
    (keys and secrets pass 0o600), else what the umask gives a new file.

    A path that cannot be written (a directory, a missing or read-only parent, a full
    disk) is one UserError naming it; nothing is left behind."""
    path = Path(path)
    if path.is_dir():
        raise UserError(f"{path} is a directory", "name a file to write, e.g. " + str(path / "out.yaml"))
    raw = data.encode() if isinstance(data, str) else data
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise WriteError(f"cannot write {path}: {exc.strerror or exc}", "pass a path you can write") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, umask_mode() if mode is None else mode)
        os.replace(tmp, path)
    except OSError as exc:
        _unlink_quietly(tmp)
        raise WriteError(f"cannot write {path}: {exc.strerror or exc}", "check free space and permissions; "
                        "the previous file, if any, is unchanged") from None
    except BaseException:
        _unlink_quietly(tmp)
        raise


def staging_dir(out: Path, prefix: str, flag: str = "--out") -> Path:
    """A new temporary directory beside `out` (its parent created), for a publish in one rename.

    An output path that cannot be written (under a file, on a read-only or virtual file system)
    is one UserError naming the flag and the path."""
    out = Path(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=prefix, dir=out.parent))
    except OSError as exc:
        blocker = next((p for p in (out.parent, *out.parent.parents) if p.exists() and not p.is_dir()), None)
        reason = f"{blocker} is a file, not a directory" if blocker else f"cannot write there ({exc.strerror or exc})"
        raise UserError(f"{flag} {out}: {reason}", "choose a directory you can write") from None


def publish_dir(staging: Path, final: Path, version: str) -> Path:
    """Make the complete directory `staging` visible at `final` in one step.

    `final` is a symlink to a sibling directory named after the content; the
    symlink is swapped with rename(2), so readers see the old tree or the new one,
    never a mix. Directories the symlink no longer points at are removed.
    """
    staging, final = Path(staging), Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    if final.exists() and not final.is_symlink():
        # Never delete what the tool did not publish: only an empty real directory makes way.
        if not final.is_dir() or any(final.iterdir()):
            raise UserError(f"{final} already exists and was not written by scheduler-build "
                            "(published outputs are symlinks)",
                            "move it away or choose another output directory; nothing was deleted")
        final.rmdir()
    target_name = f".{final.name}.{version}"
    target = final.parent / target_name
    if target.exists():
        if final.is_symlink() and os.readlink(final) == target_name:
            # Same content is already published: keep it, drop the new copy.
            shutil.rmtree(staging)
            return final
        shutil.rmtree(target)
    os.replace(staging, target)
    link_tmp = final.parent / f".{final.name}.link.{os.getpid()}"
    _unlink_quietly(link_tmp)
    os.symlink(target_name, link_tmp)
    os.replace(link_tmp, final)
    for sibling in final.parent.glob(f".{final.name}.*"):
        if sibling.name != target_name and sibling.is_dir() and not sibling.is_symlink():
            shutil.rmtree(sibling, ignore_errors=True)
    return final


def _unlink_quietly(path: os.PathLike | str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass

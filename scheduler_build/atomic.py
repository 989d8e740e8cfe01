"""Atomic file-system updates: an interrupted task leaves the previous good state."""

from __future__ import annotations

import ctypes
import errno
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Callable

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


def link_or_copy(src: Path | str, dst: Path | str) -> None:
    """`dst` as a hard link of `src`, or a copy (mode kept) across file systems or where the kernel
    forbids the link. Only for files nothing rewrites in place: a link shares every later write."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


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


# Files whose presence makes a real directory at a publish path one of ours (a build record, a rendering's
# index, an image layout's record): anything else there is the user's and is never replaced.
MARKERS = ("build-info.json", "kustomization.yaml", "image-info.json")


# Every staging directory a publish makes starts so (`clean` removes one whose run is gone, and no other
# hidden directory): `<STAGING><name>-p<pid>-<mkdtemp's 8>`.
STAGING = ".scheduler-build-staging-"


def staging_prefix(name: str) -> str:
    """The mkdtemp prefix of a staging directory for output `name`, carrying this run's pid."""
    return f"{STAGING}{name}-p{os.getpid()}-"


def publish_dir(staging: Path, final: Path, version: str = "",
                theirs: Callable[[Path], list[str]] | None = None) -> Path:
    """Make the complete directory `staging` visible at `final` in one step.

    `final` is a real directory, so `tar`, `cp -r` and `rsync` of the documented path get the files.
    Over an earlier output the two are swapped with renameat2(RENAME_EXCHANGE): a reader of one path sees
    the old file or the new one, never a mix and never a half-written file (a copy of the whole tree
    that runs across the swap may still read some files from each tree, or miss a file the new tree
    no longer has). Files in the earlier output that our record does not name (a user's notes beside a
    build) are carried into the new tree, never removed; then the old tree is removed. An output of the
    earlier layout (a symlink to a hidden `.X.<key>` sibling) is swapped the same way and its hidden
    directories removed. `version` is no longer part of any name (kept for callers).
    """
    staging, final = Path(staging), Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(staging, umask_mode(0o777))  # mkdtemp made it 0700
    legacy = final.is_symlink()
    check_publishable(final)
    if not os.path.lexists(final):
        os.rename(staging, final)
        return final
    old_tree = final.resolve() if legacy else final
    carried = _carry_theirs(old_tree, staging, theirs)
    exchange(staging, final)  # `staging` now names the previous output (or the earlier layout's link)
    _carry_theirs(old_tree if legacy else staging, final, theirs, move=True, skip=carried)  # written during the swap
    if legacy:
        os.unlink(staging)
        for sibling in final.parent.glob(f".{final.name}.*"):  # the tree it named, and older ones (`.X.<key>`)
            if sibling.is_dir() and not sibling.is_symlink() and (
                    sibling == old_tree or _LEGACY_KEY.match(sibling.name[len(final.name) + 2:])):
                shutil.rmtree(sibling, ignore_errors=True)
    else:
        shutil.rmtree(staging, ignore_errors=True)
    return final


_LEGACY_KEY = re.compile(r"^[0-9a-f]{16}$")  # the earlier layout's `.X.<key>`: a digest's first 16


def _carry_theirs(old: Path, new: Path, find: Callable[[Path], list[str]] | None, move: bool = False,
                  skip: list[str] = ()) -> list[str]:
    """Put the files of `old` that `find` names (owned.publish_dir: those our record does not name) into
    `new`: hard links before the swap (the new tree shows them at once), moved after it (any written
    meanwhile). A name the new output also writes is refused before anything changed."""
    theirs = [name for name in (find(old) if find else []) if name not in skip]
    clash = [name for name in theirs if os.path.lexists(new / name) and not (new / name).is_dir()]
    if clash and not move:
        raise UserError(f"{old}: {', '.join(clash[:3])} {'is' if len(clash) == 1 else 'are'} not scheduler-build's, "
                        "and the new output writes that name", "move it away and run again; nothing was changed")
    for name in theirs:
        source, target = old / name, new / name
        if os.path.lexists(target):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if move:
            os.rename(source, target)
        elif source.is_symlink():
            os.symlink(os.readlink(source), target)
        elif source.is_dir():
            target.mkdir()
        else:
            link_or_copy(source, target)
    return theirs


def check_publishable(final: Path) -> None:
    """Never replace what the tool did not publish: only a directory holding one of our records, an empty
    one or a link of the earlier layout may be at `final` (checked before the work, and again at publish)."""
    final = Path(final)
    if final.exists() and not final.is_symlink():
        if not final.is_dir() or (any(final.iterdir()) and not any((final / m).is_file() for m in MARKERS)):
            raise UserError(f"{final} already exists and was not written by scheduler-build",
                            "move it away or choose another output directory; nothing was deleted")


_RENAME_EXCHANGE = 2  # linux/fs.h
_AT_FDCWD = -100


def exchange(a: Path, b: Path) -> None:
    """Swap two paths atomically (renameat2 RENAME_EXCHANGE, Linux 3.15+). Where the kernel or the file
    system has no exchange, two renames: for a moment `b` is absent, never half-written."""
    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is not None:
        if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
            return
        err = ctypes.get_errno()
        if err not in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
            raise OSError(err, os.strerror(err), str(b))
    aside = b.parent / f".{b.name}.old-{os.getpid()}"
    os.rename(b, aside)
    os.rename(a, b)
    os.rename(aside, a)


def _unlink_quietly(path: os.PathLike | str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass

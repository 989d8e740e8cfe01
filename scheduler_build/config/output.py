"""Writing a rendering: what changed, and how it reaches the directory.

Two layouts. The default writes the whole tree beside `out` and swaps it in
(atomic.publish_dir: a real directory, readers see the old tree or the new one).
`plain` writes into `out` file by file, for a repository that Argo CD or
Flux apply: every file written atomically, only files whose bytes change are
touched, files an earlier rendering listed and this one does not are removed.
`Changes` names what differed, so `git diff --exit-code` after a re-render is a
drift check.

What is ours is decided by digest (owned.py): the plain directory holds a record of
the files written there (`.scheduler-build.sha256`). A file that is not as recorded
(the user wrote it, or edited ours since) is never replaced without `force`; with it
the file is replaced atomically and `Changes.forced` names it. A directory holding a
file this task does not write is refused (nothing changed), so `--out .` can never
touch a checkout. Both layouts keep the record; an output of the earlier layout (a
symlink to a hidden tree) was ours as a whole.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import yaml

from scheduler_build import owned
from scheduler_build.atomic import publish_dir, staging_dir, staging_prefix, write_atomic
from scheduler_build.errors import UserError


@dataclass
class Changes:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    forced: list[str] = field(default_factory=list)  # changed, though not as we wrote them: --force

    def any(self) -> bool:
        return bool(self.added or self.changed or self.removed)

    def lines(self) -> list[str]:
        return ([f"added {n}" for n in self.added]
                + [f"changed {n}" + (" (--force: it was not as scheduler-build wrote it)" if n in self.forced else "")
                   for n in self.changed]
                + [f"removed {n}" for n in self.removed])

    def as_dict(self) -> dict:
        return {"added": self.added, "changed": self.changed, "removed": self.removed, "forced": self.forced}


def _current(out: Path) -> dict[str, bytes]:
    """The files a directory (or the tree its symlink points at) holds now, by path relative to it."""
    if not out.is_dir():
        return {}
    return {p.relative_to(out.resolve()).as_posix(): p.read_bytes() for p in sorted(out.resolve().rglob("*"))
            if p.is_file() and p.name != owned.RECORD}


def _listed(kustomization: bytes | None) -> set[str]:
    """The resources an earlier rendering's kustomization.yaml names."""
    try:
        return set((yaml.safe_load(kustomization or b"") or {}).get("resources") or [])
    except (yaml.YAMLError, AttributeError):
        return set()


def diff(files: dict[str, str], current: dict[str, bytes], ours: Iterable[str]) -> Changes:
    """What writing `files` changes in a directory holding `current` (only names in `ours` are removed)."""
    ours = set(ours)
    return Changes(added=sorted(n for n in files if n not in current),
                   changed=sorted(n for n in files if n in current and current[n] != files[n].encode()),
                   removed=sorted(n for n in current if n not in files and n in ours))


def check_target(out: Path, names: set[str], plain: bool) -> None:
    """Refuse an output that is not a directory of ours (nothing is changed)."""
    if out.is_symlink() and plain:
        raise UserError(f"--out {out} is the symlink an earlier render published; --plain writes a plain directory",
                        "remove the symlink (and its .<name>.* directory) or render into a new directory")
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} exists and is not a directory", "choose a new directory")
    if out.is_dir():
        foreign = sorted(p.relative_to(out.resolve()).as_posix() for p in out.resolve().rglob("*")
                         if not p.is_dir() and p.relative_to(out.resolve()).as_posix() not in names | {owned.RECORD})
        if foreign:
            raise UserError(f"--out {out} holds files this task did not write ({', '.join(foreign[:3])})",
                            "move them away or render into a new directory; nothing was changed")


def write(files: dict[str, str], out: Path, names: set[str], plain: bool = False, force: bool = False,
          flag: str = "--out") -> Changes:
    """Write `files` to `out` (see the module docstring); return what differed from before."""
    out = Path(out)
    owned.check_writable(out, flag)
    check_target(out, names, plain)
    current = _current(out)
    changes = diff(files, current, _listed(current.get("kustomization.yaml")) | (set(current) & names))
    record = owned.read_record(out)
    if not out.is_symlink():  # an output of the earlier layout (a link to a hidden tree) was ours as a whole
        changes.forced = owned.theirs(out, files, record)
        if changes.forced and not force:
            raise owned.refuse(flag, out, changes.forced)
        # A stale file is removed only while it is as we wrote it: an edited one stays.
        changes.removed = [n for n in changes.removed if owned.file_digest(out / n) == record.get(n)]
    if plain:
        _write_in_place(files, out, changes)
    elif changes.any() or not out.is_dir() or not record:
        _publish(files, out)
    return changes


def _write_in_place(files: dict[str, str], out: Path, changes: Changes) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name in changes.added + changes.changed:
        write_atomic(out / name, files[name])
    write_atomic(out / owned.RECORD, owned.record_text(files))
    for name in changes.removed:
        (out / name).unlink()
        if (out / name).parent != out and not any((out / name).parent.iterdir()):
            (out / name).parent.rmdir()  # a sub-directory it emptied (it made it)


def _publish(files: dict[str, str], out: Path) -> None:
    """The whole tree written beside `out` and swapped in (atomic.publish_dir)."""
    staging = staging_dir(out, staging_prefix(out.name))
    try:
        for name, text in files.items():
            write_atomic(staging / name, text)
        write_atomic(staging / owned.RECORD, owned.record_text(files))
        publish_dir(staging, out)  # its own rules above: others' files refused, an edited one only with --force
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise

"""Placing a rendered scaffold in --out without ever losing a file the scaffold did not write.

The scaffold records what it wrote in `.scaffold-manifest.json` (path -> sha256). With
--force it replaces only files listed there and still unchanged; a file the user wrote
or edited, and any VCS directory, is never touched: a clash with one is an error that
lists it before anything is written. A dry run prints the same plan and stops.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from scheduler_build.atomic import write_atomic
from scheduler_build.errors import UserError

MANIFEST = ".scaffold-manifest.json"
_VCS = {".git", ".hg", ".svn", ".jj"}


@dataclass
class Plan:
    create: list[str] = field(default_factory=list)
    replace: list[str] = field(default_factory=list)
    remove: list[str] = field(default_factory=list)  # generated before, unchanged, no longer generated
    keep: list[str] = field(default_factory=list)  # generated before, edited since: left alone

    def lines(self) -> list[str]:
        return [f"{verb:8} {rel}" for verb, rels in (("create", self.create), ("replace", self.replace),
                                                    ("remove", self.remove), ("keep", self.keep)) for rel in rels]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_manifest(out: Path) -> dict[str, str]:
    """path -> sha256 of what the scaffold wrote last time ({} when there is no manifest)."""
    path = out / MANIFEST
    if not path.is_file():
        return {}
    try:
        files = json.loads(path.read_text()).get("files") or {}
    except (OSError, ValueError, AttributeError):
        raise UserError(f"--out {out}: {MANIFEST} is unreadable",
                        "restore it from version control, or scaffold into a new directory") from None
    return {rel: sha for rel, sha in files.items() if isinstance(rel, str) and _safe(rel)}


def _safe(rel: str) -> bool:
    parts = Path(rel).parts
    return bool(parts) and not Path(rel).is_absolute() and ".." not in parts and not (_VCS & set(parts))


def plan(out: Path, generated: list[str], force: bool) -> Plan:
    """What writing `generated` (relative paths) into `out` does; a UserError when it would
    overwrite a file the scaffold did not write (or that was edited since), or when `out`
    is not empty and --force was not given."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} exists and is not a directory", "choose a new directory")
    existing = out.is_dir() and any(out.iterdir())
    if existing and not force:
        raise UserError(f"--out {out} is not empty",
                        "choose a new directory, or pass --force to replace the files an earlier scaffold wrote "
                        "(--dry-run shows the plan)")
    recorded = read_manifest(out) if existing else {}
    result = Plan()
    clashes = []
    for rel in sorted(generated):
        target = out / rel
        if not target.exists():
            result.create.append(rel)
        elif target.is_file() and recorded.get(rel) == digest(target):
            result.replace.append(rel)
        else:
            clashes.append(rel + (" (edited since it was generated)" if rel in recorded else ""))
    if clashes:
        raise UserError(f"--out {out}: the scaffold would overwrite {len(clashes)} file(s) it did not write: "
                        + ", ".join(clashes[:5]) + (" ..." if len(clashes) > 5 else ""),
                        "move them away or scaffold into a new directory; nothing was written")
    for rel in sorted(set(recorded) - set(generated)):
        target = out / rel
        if target.is_file():
            (result.remove if digest(target) == recorded[rel] else result.keep).append(rel)
    return result


def apply(tmp: Path, out: Path, steps: Plan) -> None:
    """Move the finished files from `tmp` (a sibling of `out`) into place, one rename each,
    remove stale unchanged ones, then record the manifest."""
    if not out.exists():
        write_manifest(tmp)
        os.rename(tmp, out)
        return
    for rel in steps.create + steps.replace:
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp / rel, out / rel)
    for rel in steps.remove:
        (out / rel).unlink(missing_ok=True)
    write_manifest(out, steps.create + steps.replace)


def write_manifest(directory: Path, files: list[str] | None = None) -> None:
    if files is None:
        files = [str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file() and p.name != MANIFEST]
    data = {"generator": "scheduler-build scaffold.plugin",
            "note": "files the scaffold wrote; `--force` replaces only these, and only while unchanged",
            "files": {rel: digest(directory / rel) for rel in sorted(files)}}
    write_atomic(directory / MANIFEST, json.dumps(data, indent=2, sort_keys=True) + "\n")

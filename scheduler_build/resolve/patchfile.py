"""Unified diffs parsed, pure: the one patch parser (`git diff`, `git format-patch`, `diff -u`).

The build applies what it returns (build/patches.py); the in-tree name lookup reads
the names a series adds (resolve/intree.py).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from scheduler_build.errors import UserError

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")


@dataclass
class Hunk:
    header: str
    old_start: int
    old: list[str]  # context + removed lines, with their newlines
    new: list[str]  # context + added lines
    added: list[str] = field(default_factory=list)  # the added lines alone


@dataclass
class FilePatch:
    old_path: str | None  # None: the patch creates the file
    new_path: str | None  # None: the patch deletes the file
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or ""


@dataclass
class PatchFile:
    path: Path
    sha256: str
    files: list[FilePatch]


def parse(path: Path) -> PatchFile:
    """Parse one patch file (git diff, git format-patch or diff -u output)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read patch {path}: {exc.strerror}", "check the patches list of the build spec")
    text = data.decode("utf-8", errors="surrogateescape")
    lines = text.splitlines(keepends=True)
    files: list[FilePatch] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            old = _name(line[4:])
            new = _name(lines[i + 1][4:])
            current = FilePatch(old_path=old, new_path=new)
            files.append(current)
            i += 2
            while i < len(lines) and lines[i].startswith("@@"):
                hunk, i = _hunk(path, lines, i)
                current.hunks.append(hunk)
            continue
        i += 1
    if not files:
        raise UserError(f"patch {path.name} contains no unified diff", "write it with `git diff` or `git format-patch` in a kubernetes checkout")
    _strip_prefixes(files)
    return PatchFile(path=path, sha256=hashlib.sha256(data).hexdigest(), files=files)


def _name(raw: str) -> str | None:
    name = raw.rstrip("\n").split("\t")[0].strip()
    if name.startswith('"') and name.endswith('"'):
        name = name[1:-1]
    return None if name == "/dev/null" else name


def _strip_prefixes(files: list[FilePatch]) -> None:
    """git writes a/ and b/ prefixes (-p1); plain `diff -u` in the tree root does not (-p0)."""
    names = [n for f in files for n in (f.old_path, f.new_path) if n]
    if names and all(n.split("/", 1)[0] in ("a", "b") and "/" in n for n in names):
        for f in files:
            f.old_path = f.old_path.split("/", 1)[1] if f.old_path else None
            f.new_path = f.new_path.split("/", 1)[1] if f.new_path else None


def _hunk(path: Path, lines: list[str], i: int) -> tuple[Hunk, int]:
    header = lines[i].rstrip("\n")
    match = _HUNK.match(header)
    if not match:
        raise UserError(f"patch {path.name}: malformed hunk header {header!r}", "regenerate the patch with git diff")
    old_count = int(match[2]) if match[2] is not None else 1
    new_count = int(match[4]) if match[4] is not None else 1
    hunk = Hunk(header=header, old_start=int(match[1]), old=[], new=[])
    i += 1
    while (old_count > 0 or new_count > 0) and i < len(lines):
        line = lines[i]
        tag, body = line[:1], line[1:]
        if line in ("\n", "\r\n"):  # some editors strip the space of an empty context line
            tag, body = " ", line
        if tag == " ":
            hunk.old.append(body)
            hunk.new.append(body)
            old_count -= 1
            new_count -= 1
        elif tag == "-":
            hunk.old.append(body)
            old_count -= 1
        elif tag == "+":
            hunk.new.append(body)
            hunk.added.append(body)
            new_count -= 1
        elif tag == "\\":
            pass  # handled below
        else:
            raise UserError(f"patch {path.name}: hunk {header!r} ends early at line {i + 1}", "the patch is truncated or was edited by hand")
        i += 1
        # "\ No newline at end of file" refers to the line just read.
        if i < len(lines) and lines[i].startswith("\\"):
            if tag in (" ", "-"):
                hunk.old[-1] = hunk.old[-1].rstrip("\r\n")
            if tag in (" ", "+"):
                hunk.new[-1] = hunk.new[-1].rstrip("\r\n")
            i += 1
    if old_count > 0 or new_count > 0:
        raise UserError(f"patch {path.name}: hunk {header!r} is truncated", "regenerate the patch with git diff")
    return hunk, i

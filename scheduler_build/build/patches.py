"""Patch series: unified diffs against the kubernetes source tree, applied to copies.

A patch names files as `git diff` / `git format-patch` write them in a fork of
kubernetes: `pkg/...`, `cmd/...` belong to the module k8s.io/kubernetes and
`staging/src/k8s.io/<m>/...` to the staging module k8s.io/<m>. The series is
applied in memory to the sources of the resolved release (read from the Go
module cache, never written), hunk by hunk with exact context at the expected
line or the nearest offset, like `patch` without fuzz. `check()` stops there
(`inv build.check-patches`); `materialize()` then writes each touched module as
a content-addressed copy (hard links for untouched files, new files for patched
ones), which the wrapper module wires in with `replace`.

A hunk that does not apply raises PatchConflict naming the patch file, the
target file and the rejected hunk; nothing is written (the copy is built in a
temporary directory and renamed into place only when complete).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from scheduler_build.errors import UserError
from scheduler_build import gotool
from scheduler_build.resolve.versions import KUBERNETES_MODULE, Resolution

# Bump when the applier's output for the same inputs could change: it keys the copies.
APPLIER_VERSION = "1"
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
_STAGING = re.compile(r"^staging/src/(k8s\.io/[^/]+)/(.+)$")
# How far from the expected line a hunk's context is searched for (patch(1) uses the whole file).
MAX_OFFSET = 2000


class PatchConflict(UserError):
    """A hunk of the series does not apply to the resolved source."""

    exit_code = 1


@dataclass
class Hunk:
    header: str
    old_start: int
    old: list[str]  # context + removed lines, with their newlines
    new: list[str]  # context + added lines


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


@dataclass
class Target:
    module: str  # k8s.io/kubernetes or k8s.io/<staging>
    version: str
    rel: str  # path inside that module


@dataclass
class Applied:
    """The result of applying a series in memory."""

    # (module, rel) -> new text, or None for a deleted file
    changes: dict[tuple[str, str], str | None]
    versions: dict[str, str]  # module -> version the copies start from
    report: list[dict]  # per patch: file, sha256, targets, hunks, offsets


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


def target(rel: str, resolution: Resolution, patch_name: str) -> Target:
    """Map a path of the kubernetes tree to its module and the path inside it."""
    parts = rel.split("/")
    if rel.startswith("/") or ".." in parts or not rel:
        raise UserError(f"patch {patch_name}: path {rel!r} leaves the kubernetes tree", "paths are relative to the kubernetes repository root")
    match = _STAGING.match(rel)
    if match:
        module = match[1]
        if module not in resolution.replaces:
            raise UserError(
                f"patch {patch_name}: {rel} is in {module}, which is not a staging module of k8s.io/kubernetes {resolution.version}",
                "staging modules: " + ", ".join(sorted(resolution.replaces)),
            )
        return Target(module=module, version=resolution.replaces[module], rel=match[2])
    if parts[0] in ("vendor", "staging"):
        raise UserError(f"patch {patch_name}: cannot patch {rel}", "patch staging code as staging/src/k8s.io/<module>/..., not vendor/")
    return Target(module=KUBERNETES_MODULE, version=resolution.version, rel=rel)


def apply_series(patch_paths: list[Path], resolution: Resolution, source=gotool.module_dir) -> Applied:
    """Apply the series in memory, in order; raise PatchConflict on the first rejected hunk."""
    changes: dict[tuple[str, str], str | None] = {}
    versions: dict[str, str] = {}
    report: list[dict] = []
    dirs: dict[str, Path] = {}

    def current(t: Target) -> str | None:
        key = (t.module, t.rel)
        if key in changes:
            return changes[key]
        if t.module not in dirs:
            dirs[t.module] = Path(source(t.module, t.version))
        file = dirs[t.module] / t.rel
        return file.read_text(encoding="utf-8", errors="surrogateescape") if file.is_file() else None

    for patch_path in patch_paths:
        patch = parse(Path(patch_path))
        entry = {"file": patch.path.name, "sha256": patch.sha256, "targets": [], "hunks": 0, "offsets": []}
        for fp in patch.files:
            t = target(fp.path, resolution, patch.path.name)
            versions[t.module] = t.version
            where = f"{t.rel} of {t.module} {t.version}"
            text = current(t)
            if fp.old_path is None:
                if text is not None:
                    raise PatchConflict(f"patch {patch.path.name}: creates {where}, which already exists", _rebase_hint(resolution))
                text = ""
            elif text is None:
                raise PatchConflict(f"patch {patch.path.name}: {where} does not exist", _rebase_hint(resolution))
            new_text, offsets = _apply_file(text, fp, patch.path.name, where, resolution)
            changes[(t.module, t.rel)] = None if fp.new_path is None else new_text
            entry["targets"].append(f"{t.module}/{t.rel}")
            entry["hunks"] += len(fp.hunks)
            entry["offsets"] += offsets
        report.append(entry)
    return Applied(changes=changes, versions=versions, report=report)


def _rebase_hint(resolution: Resolution) -> str:
    return f"rebase the patch onto {resolution.version} in a kubernetes checkout (`git rebase`), then `inv build.check-patches`"


def _apply_file(text: str, fp: FilePatch, patch_name: str, where: str, resolution: Resolution) -> tuple[str, list[int]]:
    lines = text.splitlines(keepends=True)
    delta = 0
    offsets: list[int] = []
    for number, hunk in enumerate(fp.hunks, start=1):
        expected = max(hunk.old_start - 1 + delta, 0) if hunk.old else hunk.old_start + delta
        at = _find(lines, hunk.old, expected)
        if at is None:
            raise PatchConflict(
                f"patch {patch_name}: hunk #{number} `{hunk.header}` rejected in {where}",
                _mismatch(lines, hunk, expected) + "; " + _rebase_hint(resolution),
            )
        offsets.append(at - expected)
        lines[at : at + len(hunk.old)] = hunk.new
        delta += len(hunk.new) - len(hunk.old)
    return "".join(lines), offsets


def _mismatch(lines: list[str], hunk: Hunk, expected: int) -> str:
    """The first line where the source differs from what the hunk expects, at the expected place."""
    for k, want in enumerate(hunk.old):
        at = expected + k
        found = lines[at] if at < len(lines) else None
        if found != want:
            shown = "end of file" if found is None else repr(found.rstrip("\r\n").strip())
            return f"line {at + 1} is {shown}, the hunk expects {want.rstrip(chr(10)).strip()!r}"
    return f"its context is not at line {expected + 1} nor within {MAX_OFFSET} lines of it"


def _find(lines: list[str], old: list[str], expected: int) -> int | None:
    """Where `old` occurs: at `expected`, else the nearest offset (before first on ties)."""
    if not old:
        return min(max(expected, 0), len(lines))
    n = len(old)
    for distance in range(0, MAX_OFFSET + 1):
        for at in ((expected - distance, expected + distance) if distance else (expected,)):
            if 0 <= at <= len(lines) - n and lines[at : at + n] == old:
                return at
        if expected - distance < 0 and expected + distance > len(lines):
            break
    return None


@dataclass
class Materialized:
    root: Path  # cache/patched/<key>
    modules: dict[str, Path]  # module -> its patched copy
    report: list[dict]


def series_key(patch_paths: list[Path], resolution: Resolution) -> str:
    h = hashlib.sha256(f"applier {APPLIER_VERSION}\nkubernetes {resolution.version}\n".encode())
    for p in patch_paths:
        h.update(Path(p).name.encode() + b"\0" + hashlib.sha256(Path(p).read_bytes()).digest())
    return h.hexdigest()


def module_slug(module: str) -> str:
    return module.replace("/", "_")


def materialize(patch_paths: list[Path], resolution: Resolution, cache_root: Path, source=gotool.module_dir) -> Materialized:
    """Patched copies of every touched module under cache/patched/<key>/, built once per series."""
    key = series_key(patch_paths, resolution)
    root = Path(cache_root) / "patched" / key[:32]
    manifest = root / "series.json"
    if manifest.is_file():
        data = json.loads(manifest.read_text())
        return Materialized(root=root, modules={m: root / module_slug(m) for m in data["modules"]}, report=data["report"])
    applied = apply_series(patch_paths, resolution, source)
    root.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=root.parent))
    try:
        for module, version in sorted(applied.versions.items()):
            _copy_tree(Path(source(module, version)), tmp / module_slug(module))
        for (module, rel), text in sorted(applied.changes.items()):
            file = tmp / module_slug(module) / rel
            if file.exists() or file.is_symlink():
                file.unlink()  # a hard link into the module cache: never write through it
            if text is not None:
                file.parent.mkdir(parents=True, exist_ok=True)
                file.write_text(text, encoding="utf-8", errors="surrogateescape")
        (tmp / "series.json").write_text(json.dumps({"modules": sorted(applied.versions), "report": applied.report}, indent=2, sort_keys=True))
        try:
            os.rename(tmp, root)
        except OSError:
            pass  # a concurrent build published the same series first
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return Materialized(root=root, modules={m: root / module_slug(m) for m in applied.versions}, report=applied.report)


def _copy_tree(src: Path, dst: Path) -> None:
    """Writable directories, files hard-linked to the (read-only) module cache where possible."""
    for dirpath, dirnames, filenames in os.walk(src):
        rel = Path(dirpath).relative_to(src)
        (dst / rel).mkdir(mode=0o755, parents=True, exist_ok=True)
        for name in filenames:
            s, d = Path(dirpath) / name, dst / rel / name
            try:
                os.link(s, d)
            except OSError:
                shutil.copyfile(s, d)

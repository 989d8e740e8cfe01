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
from dataclasses import dataclass
from pathlib import Path

from scheduler_build.atomic import write_atomic
from scheduler_build.errors import UserError
from scheduler_build.golang import toolchain
from scheduler_build.resolve.patchfile import FilePatch, Hunk, PatchFile, parse  # noqa: F401 - the one patch parser
from scheduler_build.resolve import versions as k8s_versions
from scheduler_build.resolve.versions import KUBERNETES_MODULE, Resolution

# Bump when the applier's output for the same inputs could change: it keys the copies.
APPLIER_VERSION = "1"
_STAGING = re.compile(r"^staging/src/(k8s\.io/[^/]+)/(.+)$")
# How far from the expected line a hunk's context is searched for (patch(1) uses the whole file).
MAX_OFFSET = 2000


class PatchConflict(UserError):
    """A hunk of the series does not apply to the resolved source."""

    exit_code = 1


@dataclass
class Target:
    module: str  # k8s.io/kubernetes or k8s.io/<staging>
    version: str
    rel: str  # path inside that module


@dataclass
@dataclass(frozen=True)
class PatchReport:
    """What one patch of a series did: its file and digest, the files it changed, hunks and their offsets."""

    file: str
    sha256: str
    targets: tuple[str, ...]  # module/path of every file it changes
    hunks: int
    offsets: tuple[int, ...]  # lines each hunk moved from where the patch says

    def to_dict(self) -> dict:
        return {"file": self.file, "sha256": self.sha256, "targets": list(self.targets), "hunks": self.hunks,
                "offsets": list(self.offsets)}

    @classmethod
    def from_dict(cls, data: dict) -> PatchReport:
        return cls(data["file"], data["sha256"], tuple(data["targets"]), int(data["hunks"]), tuple(data["offsets"]))


@dataclass
class Applied:
    """The result of applying a series in memory."""

    # (module, rel) -> new text, or None for a deleted file
    changes: dict[tuple[str, str], str | None]
    versions: dict[str, str]  # module -> version the copies start from
    report: list[PatchReport]


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


def apply_series(patch_paths: list[Path], resolution: Resolution, source=toolchain.module_dir) -> Applied:
    """Apply the series in memory, in order; raise PatchConflict on the first rejected hunk."""
    changes: dict[tuple[str, str], str | None] = {}
    versions: dict[str, str] = {}
    report: list[PatchReport] = []
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
        targets: list[str] = []
        hunks, moved = 0, []
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
            targets.append(f"{t.module}/{t.rel}")
            hunks += len(fp.hunks)
            moved += offsets
        report.append(PatchReport(patch.path.name, patch.sha256, tuple(targets), hunks, tuple(moved)))
    return Applied(changes=changes, versions=versions, report=report)


@dataclass(frozen=True)
class PatchCheck:
    """`build.check-patches`: the spec's series against one release, applied in memory."""

    spec: Path
    kubernetes: str  # the exact release checked against
    patches: tuple[PatchReport, ...]

    def to_dict(self) -> dict:
        return {"spec": str(self.spec), "kubernetes": self.kubernetes, "patches": [p.to_dict() for p in self.patches]}


def check_series(spec_path: Path, patch_paths: list[Path], version: str, cache_dir: Path) -> PatchCheck:
    """Resolve `version` and apply the series in memory; raises PatchConflict on a rejected hunk."""
    resolution = k8s_versions.resolve(version, cache_dir)
    applied = apply_series(list(patch_paths), resolution)
    return PatchCheck(spec_path, resolution.version, tuple(applied.report))


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
    report: list[PatchReport]


def series_key(patch_paths: list[Path], resolution: Resolution) -> str:
    h = hashlib.sha256(f"applier {APPLIER_VERSION}\nkubernetes {resolution.version}\n".encode())
    for p in patch_paths:
        h.update(Path(p).name.encode() + b"\0" + hashlib.sha256(Path(p).read_bytes()).digest())
    return h.hexdigest()


def module_slug(module: str) -> str:
    return module.replace("/", "_")


def materialize(patch_paths: list[Path], resolution: Resolution, cache_root: Path, source=toolchain.module_dir) -> Materialized:
    """Patched copies of every touched module under cache/patched/<key>/, built once per series."""
    key = series_key(patch_paths, resolution)
    root = Path(cache_root) / "patched" / key[:32]
    manifest = root / "series.json"
    if manifest.is_file():
        data = json.loads(manifest.read_text())
        return Materialized(root=root, modules={m: root / module_slug(m) for m in data["modules"]}, report=[PatchReport.from_dict(r) for r in data["report"]])
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
        (tmp / "series.json").write_text(json.dumps({"modules": sorted(applied.versions), "report": [r.to_dict() for r in applied.report]},
                       indent=2, sort_keys=True))
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


def generated_patch(cache_root: Path, kind: str, file_name: str, text: str) -> Path:
    """A patch the tool adds to a series (the debuggable recorder, compare's tie-break), content-addressed
    under the cache: the build's series key hashes its name and bytes, so a changed text is a new build."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    path = Path(cache_root) / kind / digest / file_name
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text)
    return path


def stamped_suffix(suffix: str, mark: str) -> str:
    """A version suffix with the build's kind appended: the spec's suffix, then `mark` (debug, compare)."""
    suffix = suffix.strip().lstrip("-")
    return f"{suffix}.{mark}" if suffix else mark

"""Resolve and vendor the wrapper module's dependencies on the host, cached.

`go mod tidy` (on the host, with the Go module proxy) is cached by the digest of
the generated go.mod and the import set of the sources; `go mod vendor` by the
digest of the tidied go.mod, go.sum and that import set. Editing a source file
without changing its imports therefore neither tidies nor vendors again. Each
cache entry appears atomically (built in a temporary directory, then renamed).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from scheduler_build.golang import gotool
from scheduler_build.build.workspace import Workspace

_IMPORT_BLOCK = re.compile(r"^import\s*\((.*?)^\)", re.S | re.M)
_IMPORT_LINE = re.compile(r'^import\s+(?:[\w.]+\s+)?"([^"]+)"', re.M)
_QUOTED = re.compile(r'"([^"]+)"')


@dataclass
class Vendored:
    workspace_dir: Path  # go.mod, go.sum, sources and an empty vendor/ mount point
    vendor_dir: Path
    go_sum_sha256: str
    vendor_key: str
    tidy_cached: bool
    vendor_cached: bool


def go_imports(source: str) -> set[str]:
    """Import paths of one Go file (pure; enough for cache keys)."""
    found = set(_IMPORT_LINE.findall(source))
    for block in _IMPORT_BLOCK.findall(source):
        found.update(_QUOTED.findall(block))
    return found


def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(len(part).to_bytes(8, "big") + part)
    return h.hexdigest()


def _import_set(files: dict[str, str]) -> bytes:
    imports: set[str] = set()
    for name, text in files.items():
        if name.endswith(".go"):
            imports |= go_imports(text)
    return "\n".join(sorted(imports)).encode()


def _go(args: list[str], cwd: Path, go: str) -> None:
    gotool.check(args, cwd=cwd, stream=True, go=go)


def _publish(tmp: Path, final: Path) -> None:
    final.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.rename(tmp, final)
    except OSError:
        # Another build published the same content first: keep theirs.
        shutil.rmtree(tmp, ignore_errors=True)


def _tmpdir(parent: Path) -> Path:
    parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=".tmp-", dir=parent))


def _tidy(workspace: Workspace, imports: bytes, cache_root: Path, go: str) -> tuple[Path, bool]:
    """`go mod tidy`, cached by go.mod and the import set; returns (directory, was cached)."""
    tidy_dir = cache_root / "tidy" / _digest(workspace.files["go.mod"].encode(), imports)[:32]
    if (tidy_dir / "go.sum").is_file():
        return tidy_dir, True
    tmp = _tmpdir(tidy_dir.parent)
    try:
        for name, text in workspace.files.items():
            (tmp / name).write_text(text)
        _go(["mod", "tidy"], tmp, go)
        for item in list(tmp.iterdir()):
            if item.name not in ("go.mod", "go.sum"):
                item.unlink()
        _publish(tmp, tidy_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return tidy_dir, False


def _vendor(workspace: Workspace, go_mod: bytes, go_sum: bytes, vendor_dir: Path, go: str) -> bool:
    """`go mod vendor` into vendor_dir unless it is there; returns whether it was cached."""
    if (vendor_dir / "modules.txt").is_file():
        return True
    tmp = _tmpdir(vendor_dir.parent)
    # The source copy sits at the same depth below the cache root as the tidy
    # directory, so relative replace paths (../../plugins/..., plugins.py) resolve.
    src = _tmpdir(vendor_dir.parent)
    try:
        for name, text in workspace.files.items():
            if name != "go.mod":
                (src / name).write_text(text)
        (src / "go.mod").write_bytes(go_mod)
        (src / "go.sum").write_bytes(go_sum)
        _go(["mod", "vendor", "-o", str(tmp / "vendor")], src, go)
        _publish(tmp / "vendor", vendor_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(src, ignore_errors=True)
    return False


def _source_dir(workspace: Workspace, go_mod: bytes, go_sum: bytes, cache_root: Path) -> Path:
    """The source directory the compiler sees: current sources + tidied go.mod/go.sum."""
    files = {name: text.encode() for name, text in workspace.files.items() if name != "go.mod"}
    files["go.mod"], files["go.sum"] = go_mod, go_sum
    source_dir = cache_root / "src" / _digest(*(n.encode() + b"\0" + files[n] for n in sorted(files)))[:32]
    if not (source_dir / "go.sum").is_file():
        tmp = _tmpdir(source_dir.parent)
        try:
            for name, data in files.items():
                (tmp / name).write_bytes(data)
            (tmp / "vendor").mkdir()  # mount point for the cached vendor tree
            _publish(tmp, source_dir)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return source_dir


def prepare(workspace: Workspace, cache_root: Path, go: str = "") -> Vendored:
    """Tidy (cached) and vendor (cached) the rendered workspace; return the directories to mount.
    `go` is the `go` command to run (toolchain.Toolchain.go: one newer than the host's), "" for the host's."""
    imports = _import_set(workspace.files)
    tidy_dir, tidy_cached = _tidy(workspace, imports, cache_root, go)
    go_mod = (tidy_dir / "go.mod").read_bytes()
    go_sum = (tidy_dir / "go.sum").read_bytes()
    vendor_key = _digest(go_mod, go_sum, imports)
    vendor_dir = cache_root / "vendor" / vendor_key[:32]
    vendor_cached = _vendor(workspace, go_mod, go_sum, vendor_dir, go)
    return Vendored(
        workspace_dir=_source_dir(workspace, go_mod, go_sum, cache_root),
        vendor_dir=vendor_dir,
        go_sum_sha256=hashlib.sha256(go_sum).hexdigest(),
        vendor_key=vendor_key,
        tidy_cached=tidy_cached,
        vendor_cached=vendor_cached,
    )

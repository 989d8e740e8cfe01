"""Local plugin modules: a content snapshot for the compile, a shape for go.mod.

A local plugin is read twice, with different keys, so that an edit costs only
the edited packages' compile:

- its *shape* (module path, go.mod, go.sum and the set of import paths of its Go
  files) decides the wrapper's go.mod: the plugin is replaced by
  `../../plugin-modules/<shape>`, a copy of the module as first seen with that
  shape. go.mod, hence `go mod tidy` and `go mod vendor` (cached by go.mod and
  go.sum in vendor.py) and vendor/modules.txt, change only when the shape does;
- its *content* (every file, build.info's `sha256`) is snapshotted into
  `plugins/<content hash>/` and that read-only snapshot is mounted over
  `vendor/<module>/` in the compile (compile.py), so the compiler sees exactly
  the edited files and Go's content-addressed cache rebuilds only the packages
  whose files changed (and what links them).

A snapshot holds what `go mod vendor` would copy of the module's packages: no
go.mod/go.sum, no `_test.go` files, no testdata. Snapshot directories appear
atomically (a temporary directory renamed into place) and are never changed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from scheduler_build.build.vendor import go_imports

_SKIP_DIRS = {".git", ".hg", ".svn", "vendor", "node_modules", "__pycache__"}
_NOT_VENDORED = ("go.mod", "go.sum")


@dataclass(frozen=True)
class LocalModule:
    module: str
    digest: str  # sha256 of every file's relative path and content
    shape: str  # sha256 of module path, go.mod, go.sum and the import set
    content_dir: Path  # plugins/<digest>: mounted over vendor/<module> in the compile
    shape_dir: Path  # plugin-modules/<shape>: the replace target tidy and vendor read

    @property
    def replace_path(self) -> str:
        """Relative to the wrapper's go.mod, two levels below the cache root (vendor.py)."""
        return f"../../plugin-modules/{self.shape_dir.name}"


def files(directory: Path) -> list[str]:
    """Relative paths of a module's regular files, sorted (VCS and vendor dirs skipped)."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(directory):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in filenames:
            full = Path(dirpath) / name
            if full.is_file() and not full.is_symlink():
                out.append(str(full.relative_to(directory)))
    return sorted(out)


def tree_digest(directory: Path, names: list[str] | None = None) -> str:
    """sha256 over the relative paths and contents of a module's files."""
    h = hashlib.sha256()
    for rel in files(directory) if names is None else names:
        h.update(rel.encode() + b"\0")
        h.update(hashlib.sha256((directory / rel).read_bytes()).digest())
    return h.hexdigest()


def shape_digest(directory: Path, module: str, names: list[str] | None = None) -> str:
    """What go.mod, tidy and vendor depend on: module path, go.mod, go.sum and the import set."""
    imports: set[str] = set()
    for rel in files(directory) if names is None else names:
        if rel.endswith(".go"):
            imports |= go_imports((directory / rel).read_text(encoding="utf-8", errors="replace"))
    h = hashlib.sha256()
    for part in (module.encode(), *(_read(directory / n) for n in _NOT_VENDORED), "\n".join(sorted(imports)).encode()):
        h.update(len(part).to_bytes(8, "big") + part)
    return h.hexdigest()


def _read(path: Path) -> bytes:
    return path.read_bytes() if path.is_file() else b"\0absent"


def vendored(rel: str) -> bool:
    """Whether `go mod vendor` would copy this file of a dependency (roughly: never tests)."""
    parts = rel.split("/")
    return rel not in _NOT_VENDORED and not rel.endswith("_test.go") and "testdata" not in parts[:-1]


def _copy_once(directory: Path, names: list[str], final: Path) -> Path:
    """Copy `names` of `directory` to `final` unless it exists; atomic, never modified after."""
    if final.is_dir():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=final.parent))
    try:
        for rel in names:
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(directory / rel, tmp / rel)
        os.chmod(tmp, 0o755)
        try:
            os.rename(tmp, final)
        except OSError:
            pass  # published concurrently with the same content
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def snapshot(directory: Path, module: str, cache_root: Path) -> LocalModule:
    """Snapshot a local module: its content for the compile, its shape for go.mod (see above)."""
    directory = Path(directory)
    names = files(directory)
    digest = tree_digest(directory, names)
    shape = shape_digest(directory, module, names)
    cache_root = Path(cache_root)
    content_dir = _copy_once(directory, [n for n in names if vendored(n)], cache_root / "plugins" / digest[:32])
    shape_dir = _copy_once(directory, names, cache_root / "plugin-modules" / shape[:32])
    return LocalModule(module=module, digest=digest, shape=shape, content_dir=content_dir, shape_dir=shape_dir)

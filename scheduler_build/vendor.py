"""Resolve and vendor the wrapper module's dependencies on the host, cached.

`go mod tidy` runs with the network (the Go module proxy) on the host; its result
is cached by the digest of the generated files. `go mod vendor` is cached by the
digest of go.mod, go.sum and the sources (the import graph): a warm build of the
same inputs neither tidies nor vendors. Each cache entry appears atomically.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .errors import UserError
from .goproxy import NETWORK_HINT
from .progress import stream_line
from .workspace import Workspace


@dataclass
class Vendored:
    workspace_dir: Path  # go.mod, go.sum, sources and an empty vendor/ mount point
    vendor_dir: Path
    go_sum_sha256: str
    vendor_key: str
    tidy_cached: bool
    vendor_cached: bool


def _go(args: list[str], cwd: Path) -> None:
    env = dict(os.environ, GOFLAGS="-mod=mod", GOTOOLCHAIN="local", GO111MODULE="on", GOWORK="off")
    stream_line("+ go " + " ".join(args))
    proc = subprocess.Popen(["go", *args], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    tail: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        stream_line(line.rstrip("\n"))
        tail = (tail + [line.strip()])[-5:]
    if proc.wait() != 0:
        detail = tail[-1] if tail else "no output"
        hint = NETWORK_HINT if any(w in detail for w in ("dial tcp", "lookup", "proxy", "timeout")) else "the output above shows Go's own error"
        raise UserError(f"`go {' '.join(args)}` failed: {detail}", hint)


def _publish(tmp: Path, final: Path) -> None:
    final.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.rename(tmp, final)
    except OSError:
        # Another build published the same content first: keep theirs.
        shutil.rmtree(tmp, ignore_errors=True)


def prepare(workspace: Workspace, cache_root: Path) -> Vendored:
    """Tidy (cached) and vendor (cached) the rendered workspace; return the directories to mount."""
    key = workspace.digest()
    work_dir = cache_root / "work" / key[:32]
    tidy_cached = (work_dir / "go.sum").is_file()
    if not tidy_cached:
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=_mkdir(cache_root / "work")))
        try:
            for name, text in workspace.files.items():
                (tmp / name).write_text(text)
            _go(["mod", "tidy"], tmp)
            (tmp / "vendor").mkdir()
            _publish(tmp, work_dir)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    go_sum = (work_dir / "go.sum").read_bytes()
    h = hashlib.sha256()
    for name in sorted(p.name for p in work_dir.iterdir() if p.is_file()):
        h.update(name.encode() + b"\0" + (work_dir / name).read_bytes() + b"\0")
    vendor_key = h.hexdigest()
    vendor_dir = cache_root / "vendor" / vendor_key[:32]
    vendor_cached = (vendor_dir / "modules.txt").is_file()
    if not vendor_cached:
        _mkdir(vendor_dir.parent)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=vendor_dir.parent))
        try:
            # Vendor from a scratch copy: `go mod vendor -o` writes where we say, and
            # the published workspace stays untouched if this fails.
            src = tmp / "src"
            src.mkdir()
            for item in work_dir.iterdir():
                if item.is_file():
                    shutil.copy2(item, src / item.name)
            _go(["mod", "vendor", "-o", str(tmp / "vendor")], src)
            _publish(tmp / "vendor", vendor_dir)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return Vendored(
        workspace_dir=work_dir,
        vendor_dir=vendor_dir,
        go_sum_sha256=hashlib.sha256(go_sum).hexdigest(),
        vendor_key=vendor_key,
        tidy_cached=tidy_cached,
        vendor_cached=vendor_cached,
    )


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path

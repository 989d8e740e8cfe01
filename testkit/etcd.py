"""etcd at the version the target pins (hack/lib/etcd.sh), built from the Go module proxy, cached: the
performance harness (bench/perf) and the test warm-up share it.

The harness starts etcd itself from PATH; Debian's 3.4 refuses its unix-socket URL. The
server module's go.mod carries replaces, so it is built from a two-line wrapper module
(templates/perf/etcd_main.go.j2) into <cache>/tools/etcd-v<version>/etcd, once per version.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

from scheduler_build.golang import gotool
from scheduler_build.errors import UserError
from scheduler_build.progress import log
from scheduler_build.templating import render
from scheduler_build.filelock import turn

SERVER_MODULE = "go.etcd.io/etcd/server/v3"
PIN_FILE = "hack/lib/etcd.sh"
_PIN = re.compile(r"^ETCD_VERSION=\$\{ETCD_VERSION:-v?([0-9]+\.[0-9]+\.[0-9]+)\}", re.M)


def pinned_version(etcd_sh: str, where: str = PIN_FILE) -> str:
    """`ETCD_VERSION=${ETCD_VERSION:-3.6.8}` -> "3.6.8"; a UserError naming the file when absent."""
    match = _PIN.search(etcd_sh)
    if not match:
        raise UserError(f"{where}: no ETCD_VERSION=${{ETCD_VERSION:-X.Y.Z}} line",
                        "this Kubernetes version pins etcd differently; report it with the file's ETCD_VERSION line")
    return match.group(1)


def tool_dir(cache_dir: Path, version: str) -> Path:
    return Path(cache_dir) / "tools" / f"etcd-v{version}"


def binary(module_dir: Path, cache_dir: Path) -> Path:
    """The etcd the Kubernetes tree at module_dir pins, built on first use (about a minute)."""
    version = pinned_version((Path(module_dir) / PIN_FILE).read_text(), str(Path(module_dir) / PIN_FILE))
    target = tool_dir(cache_dir, version) / "etcd"
    if target.is_file():
        return target
    with turn(target.parent / ".lock", f"building etcd v{version}"):  # a concurrent build of it goes first
        if target.is_file():
            return target
        _build(version, target)
    return target


def _build(version: str, target: Path) -> None:
    log(f"    building etcd v{version} ({SERVER_MODULE}) from the Go module proxy into {target.parent} (once)")
    work = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent))
    try:
        (work / "go.mod").write_text(f"module scheduler-build.local/etcd\n\ngo 1.24\n\nrequire {SERVER_MODULE} v{version}\n")
        (work / "main.go").write_text(render("perf/etcd_main.go.j2", version=version))
        gotool.check(["mod", "tidy"], cwd=work, what=f"resolving etcd v{version}")
        gotool.compile_shown(["build", "-trimpath", "-o", str(work / "etcd"), "."], work, f"building etcd v{version}",
                             env={"CGO_ENABLED": "0"})
        (work / "etcd").replace(target)
    finally:
        shutil.rmtree(work, ignore_errors=True)

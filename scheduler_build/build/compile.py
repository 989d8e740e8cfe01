"""Compile inside the builder container: pure command construction plus one runner.

The container has no network (`--network none`): vendoring must be complete.
Go's build cache lives in a named volume so rebuilds are incremental.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable


from scheduler_build.engine import Engine, Mount
from scheduler_build.progress import stream_line

VERSION_PACKAGES = ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version")
BUILD_TAGS = ("selinux", "notest")
SRC, VENDOR, OUT, GOCACHE = "/src", "/src/vendor", "/out", "/gocache"


@dataclass(frozen=True)
class VersionStamp:
    git_version: str  # v1.36.3 or v1.36.3-acme.1
    git_major: str
    git_minor: str
    git_commit: str = ""
    git_tree_state: str = "clean"
    build_date: str = "1970-01-01T00:00:00Z"


def ldflags(stamp: VersionStamp, strip: bool = True, cgo_static: bool = False) -> str:
    """The -ldflags string: stripped, version-stamped, optionally externally linked static."""
    parts: list[str] = []
    if strip:
        parts += ["-s", "-w"]
    values = {
        "gitVersion": stamp.git_version,
        "gitMajor": stamp.git_major,
        "gitMinor": stamp.git_minor,
        "gitCommit": stamp.git_commit,
        "gitTreeState": stamp.git_tree_state,
        "buildDate": stamp.build_date,
    }
    for package in VERSION_PACKAGES:
        for key, value in values.items():
            # Values never contain spaces (validated upstream), so no quoting is needed.
            parts.append(f"-X {package}.{key}={value}")
    if cgo_static:
        parts += ["-linkmode", "external", "-extldflags", "-static"]
    return " ".join(parts)


def go_build_command(package: str, output: str, flags: str, test: bool = False) -> list[str]:
    """`go build`, or with test: `go test -c` (a test binary; same flags, so Go's cache is shared)."""
    return [
        *(("go", "test", "-c", "-vet=off") if test else ("go", "build")),
        "-trimpath",
        "-mod=vendor",
        "-buildvcs=false",
        "-tags", ",".join(BUILD_TAGS),
        "-ldflags", flags,
        "-o", output,
        package,
    ]


def build_environment(goos: str, goarch: str, cgo_static: bool, source_date_epoch: int) -> dict[str, str]:
    return {
        "CGO_ENABLED": "1" if cgo_static else "0",
        "GOOS": goos,
        "GOARCH": goarch,
        "GOFLAGS": "-mod=vendor",
        "GOPROXY": "off",
        "GOTOOLCHAIN": "local",
        "GOCACHE": GOCACHE,
        "GOMODCACHE": "/tmp/gomodcache-unused",
        "HOME": "/tmp",
        "SOURCE_DATE_EPOCH": str(source_date_epoch),
    }


@dataclass(frozen=True)
class Job:
    """One compile: inputs (cache entries), output directory and flags; both runners take it."""

    workspace: Path
    vendor: Path
    out_dir: Path
    gocache_volume: str
    package: str
    binary_name: str
    flags: str
    environment: dict[str, str]
    # module path -> a local module's content snapshot, read in place of vendor/<module>
    # (snapshot.py), so the vendor tree needs no refresh on an edit.
    overlays: dict[str, Path] = field(default_factory=dict)
    test: bool = False  # `go test -c` of job.package instead of `go build` (bench.perf's harness)


def run(engine: Engine, image: str, job: Job, network: str = "none",
        on_line: Callable[[str], None] = stream_line) -> tuple[int, list[str]]:
    """Compile job.package to job.out_dir/job.binary_name in a fresh builder container; returns (exit code, argv)."""
    argv = go_build_command(job.package, f"{OUT}/{job.binary_name}", job.flags, job.test)
    mounts = [
        Mount(SRC, str(job.workspace), read_only=True),
        Mount(VENDOR, str(job.vendor), read_only=True),
        Mount(OUT, str(job.out_dir)),
        Mount(GOCACHE, job.gocache_volume, volume=True),
    ]
    mounts += [Mount(f"{VENDOR}/{module}", str(path), read_only=True) for module, path in sorted(job.overlays.items())]
    stream_line("+ " + shlex.join(argv))
    code = engine.run(
        image, argv, mounts=mounts, environment=job.environment, workdir=SRC, network=network, on_line=on_line
    )
    return code, argv

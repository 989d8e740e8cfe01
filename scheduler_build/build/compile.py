"""Compile inside the builder container: pure command construction plus one runner.

The container has no network (`--network none`): vendoring must be complete. It
is a container of the workspace image (workspace_image.py: the builder plus the
vendored tree); the workspace's own files and the local plugin modules go in as
one archive, the binary comes out through the engine's archive API. Nothing is
mounted from the caller's file system. Go's build cache lives in a named volume
so rebuilds are incremental; the output goes to a second named volume (`<Go
cache volume>-out`), one directory per set of inputs, so Go sees its last link
and skips an unchanged one, and the binary is copied out only when its Go build
ID differs from the seed's, the last published binary (`collect`). When the whole action (image,
inputs, environment, command) is the one that made the seed, no container is started (uptodate.py).
"""

from __future__ import annotations

import hashlib
import os
import shlex
import socket
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from scheduler_build.atomic import write_atomic
from scheduler_build.build import elf, pgo as pgo_mod, uptodate
from scheduler_build.build.workspace_image import inputs_tar
from scheduler_build.engine import RUN_LABEL, Container, Engine, Volume
from scheduler_build.progress import TOTAL_MARK, log, note, stream_line
from scheduler_build.filelock import turn

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


def go_build_command(package: str, output: str, flags: str, test: bool = False, pgo: bool = False) -> list[str]:
    """`go build`, or with test: `go test -c` (a test binary; same flags, so Go's cache is shared);
    pgo: with the profile the inputs archive puts at pgo.IN_CONTAINER (without it, the command is as before)."""
    return [
        *(("go", "test", "-c", "-vet=off") if test else ("go", "build")),
        "-trimpath",
        "-mod=vendor",
        "-buildvcs=false",
        *((pgo_mod.FLAG,) if pgo else ()),
        "-tags", ",".join(BUILD_TAGS),
        "-ldflags", flags,
        "-o", output,
        package,
    ]


def with_progress(argv: list[str], package: str, count: bool = True) -> list[str]:
    """The command a container runs for `argv`: `go build -v` (each package named as it is compiled) and,
    with `count`, beside it the count of packages the build has in all (`go list -deps`, a line
    `TOTAL_MARK N`), so the progress reads packages done out of total. The recorded command
    (build-info, the action key) is `argv`: -v changes no byte of the binary. A test binary (`go test
    -c`) keeps its command."""
    if argv[:2] != ["go", "build"]:
        return argv
    build = ["go", "build", "-v", *argv[2:]]
    if not count:
        return build
    total = f"go list -deps {shlex.quote(package)} 2>/dev/null | wc -l | sed 's/^ */{TOTAL_MARK} /'"
    return ["sh", "-c", f"({total}) & exec {shlex.join(build)}"]


class PackageTotal:
    """How many packages a compile of one output has in all, for its progress line.

    `go list -deps` beside the compile loads the whole package graph a second time on the same
    cores, while `go build` does its own: on a plugin edit that is a good part of the time over a
    native `go build`. So it runs on an output's first compile only, and its answer is kept
    (`<state_dir>/<out key>.packages`, read back as a `TOTAL_MARK` line). The output's key names
    the workspace image, so new dependencies get a new count; an edit that adds imports inside the
    same vendored tree leaves it a few packages off, which a progress figure can afford."""

    def __init__(self, state_dir: Path, key: str, on_line: Callable[[str], None]):
        self.path, self.on_line, self.heard = Path(state_dir) / f"{key}.packages", on_line, 0
        try:
            self.known = int(self.path.read_text().strip())
        except (OSError, ValueError):
            self.known = 0

    def start(self) -> bool:
        """Say the kept total, if any; returns whether the compile must count (no total kept)."""
        if self.known:
            self.on_line(f"{TOTAL_MARK} {self.known}")
        return not self.known

    def __call__(self, line: str) -> None:
        words = line.split()
        if len(words) == 2 and words[0] == TOTAL_MARK and words[1].isdigit():
            self.heard = int(words[1])
        self.on_line(line)

    def keep(self) -> None:
        """After a successful compile: keep the count it heard (a fast compile may end before it)."""
        if self.heard and self.heard != self.known:
            write_atomic(self.path, f"{self.heard}\n")


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
    vendor: Path  # the vendored tree the workspace image holds (its key)
    out_dir: Path
    gocache_volume: str
    package: str
    binary_name: str
    flags: str
    environment: dict[str, str]
    # module path -> a local module's content snapshot, put in place of vendor/<module>
    # (snapshot.py), so the vendor tree (and the workspace image) need no refresh on an edit.
    overlays: dict[str, Path]
    test: bool  # `go test -c` of job.package instead of `go build` (bench.perf's harness)
    state_dir: Path  # each output directory's lock and action record (uptodate.py): <cache_dir>/builds
    pgo: Path | None = None  # a CPU profile for `-pgo` (pgo.py), checked when the build was decided
    # Seconds of each step of the compile (inputs, create, put, go, copy-out, remove), filled by
    # the runner: the build's phases show where a compile's time goes (bench.build --plugin-edit).
    timings: dict[str, float] = field(default_factory=dict, compare=False)

    def out_key(self, image: str) -> str:
        """One output directory per set of inputs, the same on every build of them (not per edit):
        Go's link-skip check is keyed by the output's path."""
        key = repr((image, Path(self.workspace).name, sorted(self.overlays), self.binary_name))
        if self.pgo is not None:  # its own output: a plain and a PGO build of the same sources both stay linked
            key += " pgo"
        return hashlib.sha256(key.encode()).hexdigest()[:32]


def profile_file(job: Job) -> dict[str, Path]:
    """The inputs archive's extra file: the profile at pgo.IN_CONTAINER (its bytes then in the action key)."""
    return {pgo_mod.IN_CONTAINER.lstrip("/"): Path(job.pgo)} if job.pgo is not None else {}


def out_volume(gocache_volume: str) -> str:
    return f"{gocache_volume}-out"


@contextmanager
def timed(job: Job, step: str) -> Iterator[None]:
    started = time.monotonic()
    try:
        yield
    finally:
        job.timings[step] = round(job.timings.get(step, 0.0) + time.monotonic() - started, 3)


@contextmanager
def output_lock(job: Job, key: str) -> Iterator[None]:
    """Concurrent builds of the same inputs take turns (they share one output directory)."""
    def shown(holder: str) -> None:
        note(f"waiting for {holder.split(' (')[0]}" if holder else "")

    with turn(Path(job.state_dir) / f"{key}.lock", "building the same output", shown):
        yield


OUTPUT_LABEL = "io.scheduler-build.output"  # the output directory (out_key) a compile container writes


def stop_orphans(engine: Engine, key: str) -> None:
    """Remove a compile container of this output left by a run that is gone (a SIGKILL skips every clean-up):
    under the output's lock, so the new compile never runs beside it."""
    host = socket.gethostname() + "/"
    for _name, _, labels in engine.containers_labelled(OUTPUT_LABEL):
        owner = labels.get(RUN_LABEL, "")
        if labels.get(OUTPUT_LABEL) == key and owner.startswith(host) and not _alive(owner[len(host):]):
            log(f"    removing the compile container a stopped run ({owner}) left on this output")
            engine.remove_containers({OUTPUT_LABEL: key, RUN_LABEL: owner})


def _alive(pid: str) -> bool:
    try:
        os.kill(int(pid), 0)
        return True
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True


def is_seed(dest: Path, size: int, build_id: str | None) -> bool:
    """Whether `dest`, the seed, already is the binary of `size` bytes and Go build ID `build_id`."""
    seed = elf.file_go_build_id(dest)
    return seed is not None and build_id == seed and dest.stat().st_size == size


def collect(box: Container, path: str, dest: Path) -> bool:
    """Copy the built `path` out to `dest` unless `dest` already is it; returns whether it was copied.

    `dest` is seeded with the last published binary (a hard link: pipeline.run). A Go build ID ends
    in the hash of the binary's content, so when the built file's ID (read from its first page, the
    start of the same archive stream) is the seed's and the sizes agree, the seed is the binary and
    the 70 MB copy is skipped. Go touches an up-to-date output's mtime, so a stat could not tell. A
    new binary goes to a new file renamed over `dest`: the seed's inode, which may be the published
    binary's, is never written."""
    def unchanged(size: int, first: bytes) -> bool:
        return is_seed(dest, size, elf.go_build_id(first))

    incoming = dest.with_name(f".{dest.name}.incoming")
    copied = box.fetch(path, incoming, skip_if=unchanged, peek=elf.BUILD_ID_READ)
    if copied:
        incoming.chmod(0o755)
        os.replace(incoming, dest)
    return copied


def run(engine: Engine, image: str, job: Job, network: str = "none",
        on_line: Callable[[str], None] = stream_line, image_id: str = "") -> tuple[int, list[str]]:
    """Compile job.package to job.out_dir/job.binary_name in a fresh container of the workspace
    image `image` (whose ID, when given, lets an unchanged action skip the container: uptodate.py);
    returns (exit code, argv)."""
    key = job.out_key(image)
    output = f"{OUT}/{key}/{job.binary_name}"
    argv = go_build_command(job.package, output, job.flags, job.test, job.pgo is not None)
    volumes = [Volume(GOCACHE, job.gocache_volume), Volume(OUT, out_volume(job.gocache_volume))]
    dest = Path(job.out_dir) / job.binary_name
    stream_line("+ " + shlex.join(argv))
    with timed(job, "inputs"):
        inputs = inputs_tar(job.workspace, job.overlays, dirs=[f"out/{key}"], files=profile_file(job))
        action = uptodate.action_key(image_id, job.environment, argv, inputs) if image_id else ""
    record = uptodate.record_path(job.state_dir, key)
    with output_lock(job, key):
        if action and uptodate.up_to_date(record, action, dest):
            stream_line("    up to date: the last compile of these inputs made this binary (no container)")
            return 0, argv
        stop_orphans(engine, key)
        total = PackageTotal(job.state_dir, key, on_line)
        command = with_progress(argv, job.package, count=total.start())
        removing = time.monotonic()
        with engine.container(image, command, volumes=volumes, environment=job.environment,
                              workdir=SRC, network=network, labels={OUTPUT_LABEL: key}) as box:
            job.timings["create"] = round(time.monotonic() - removing, 3)
            with timed(job, "put"):
                box.put("/", inputs)
            with timed(job, "go"):
                code = box.run(total)
            if code == 0:
                total.keep()
                with timed(job, "copy-out"):
                    collect(box, output, dest)
                if action:
                    uptodate.remember(record, action, dest)
            removing = time.monotonic()
        job.timings["remove"] = round(time.monotonic() - removing, 3)
    return code, argv

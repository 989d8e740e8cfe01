"""The compile in a long-lived builder container: `docker exec` instead of a container per build.

Creating, starting and removing a container is most of a no-change rebuild's fixed
cost, so one builder container per (image, Go build-cache volume, cache root) is
started once (`sleep infinity`, `--network none`) and kept; each build execs
`go build` in it. The container sees the cache root read-only at the same absolute
path as the host, and only `<cache>/builds/` writable, so every input the compile
reads is a content-addressed cache entry.

Each build gets `<cache>/builds/.tmp-*/`: `src/` (the workspace's files, copied, and
`vendor`, a tree of symlinks to the cached vendor tree with each local plugin's
content snapshot in place of vendor/<module>, snapshot.py) and `out/` (seeded with
the last good binary so an unchanged build skips the link). `-trimpath` keeps the
directory names out of the binary and of Go's cache keys, so the bytes equal a
one-shot container's (tests/test_plugin_edit_integration.py).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shlex
import shutil
from pathlib import Path
from typing import Callable

from scheduler_build.build.compile import GOCACHE, Job, go_build_command
from scheduler_build.engine import Engine, Mount
from scheduler_build.progress import stream_line

LABEL = "io.scheduler-build.builder"
VOLUME_LABEL = "io.scheduler-build.gocache-volume"


def container_name(image_id: str, gocache_volume: str, cache_root: Path) -> str:
    key = f"{image_id}\0{gocache_volume}\0{cache_root}".encode()
    return f"scheduler-build-builder-{hashlib.sha256(key).hexdigest()[:12]}"


def stop(engine: Engine, gocache_volume: str | None = None) -> int:
    """Remove the long-lived builders (of one Go cache volume), e.g. before removing that volume."""
    labels = {LABEL: "1"} | ({VOLUME_LABEL: gocache_volume} if gocache_volume else {})
    return engine.remove_containers(labels)


def vendor_view(vendor: Path, dest: Path, overrides: dict[str, Path]) -> None:
    """dest mirrors `vendor` with symlinks, except each `overrides` path (module -> directory)."""
    dest.mkdir()
    heads: dict[str, dict[str, Path]] = {}
    for rel, target in overrides.items():
        head, _, rest = rel.partition("/")
        heads.setdefault(head, {})[rest] = target
    for entry in sorted(vendor.iterdir()) if vendor.is_dir() else []:
        if entry.name not in heads:
            (dest / entry.name).symlink_to(entry)
    for head, sub in sorted(heads.items()):
        if "" in sub:
            (dest / head).symlink_to(sub[""])
        else:
            vendor_view(vendor / head, dest / head, sub)


def _prepare(root: Path, workspace: Path, vendor: Path, overlays: dict[str, Path], seed: Path | None) -> tuple[Path, Path]:
    src, out = root / "src", root / "out"
    src.mkdir()
    out.mkdir()
    for item in workspace.iterdir():
        if item.is_file():
            shutil.copyfile(item, src / item.name)
    if overlays:
        vendor_view(vendor, src / "vendor", overlays)
    else:
        (src / "vendor").symlink_to(vendor)
    if seed is not None and seed.is_file():
        shutil.copy2(seed, out / seed.name)
    return src, out


def run(engine: Engine, image: str, job: Job, *, image_id: str, cache_root: Path,
        on_line: Callable[[str], None] = stream_line) -> tuple[int, list[str]]:
    """Compile like compile.run, by exec in the long-lived builder; job.out_dir/binary_name seeds and receives."""
    cache_root = Path(cache_root).resolve()
    builds = cache_root / "builds"
    builds.mkdir(parents=True, exist_ok=True)
    mounts = [Mount(str(cache_root), str(cache_root), read_only=True), Mount(str(builds), str(builds)),
              Mount(GOCACHE, job.gocache_volume, volume=True)]
    container = engine.ensure_running(container_name(image_id, job.gocache_volume, cache_root), image, mounts=mounts,
                                      labels={LABEL: "1", VOLUME_LABEL: job.gocache_volume})
    # One directory per set of inputs, the same on every build of them: Go's link-skip
    # check is keyed by the output's path, so a fresh path would relink every time.
    key = hashlib.sha256(repr((str(job.workspace), str(job.vendor), sorted(job.overlays.items()), job.binary_name)).encode()).hexdigest()
    root = builds / key[:32]
    lock = open(builds / f"{key[:32]}.lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)  # concurrent builds of the same inputs take turns
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    try:
        src, out = _prepare(root, Path(job.workspace).resolve(), Path(job.vendor).resolve(),
                            {m: Path(p).resolve() for m, p in job.overlays.items()}, Path(job.out_dir) / job.binary_name)
        argv = go_build_command(job.package, str(out / job.binary_name), job.flags, job.test)
        stream_line(f"+ (exec in {container}) " + shlex.join(argv))
        code = engine.exec(container, argv, environment=job.environment, workdir=str(src), on_line=on_line)
        if code == 0:
            os.chmod(out / job.binary_name, 0o755)
            shutil.move(str(out / job.binary_name), str(Path(job.out_dir) / job.binary_name))
        return code, argv
    finally:
        shutil.rmtree(root, ignore_errors=True)
        lock.close()

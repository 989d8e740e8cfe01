"""The compile in a long-lived builder container: `docker exec` instead of a container per build.

The default on an engine on this machine (pipeline: `build.reuse_builder` auto). One builder
container per (workspace image, Go build-cache volume, cache directory) is started once
(`sleep infinity`, `--network none`, named volumes only) and kept: no container to create,
start and remove per build, and its file system's caches stay warm. Builds that share it take
turns by one lock in the cache directory; an unchanged action starts nothing (uptodate.py, the
same record as a one-shot compile's); a builder still running a compile of a build that is gone
is replaced. Each build puts its inputs in through the engine's archive API (the workspace's
files, the local modules' snapshots in place of vendor/<module>, after removing the previous
build's), execs `go build` in it and copies the binary out (compile.collect). The output stays
in the container, one directory per set of inputs, so Go skips an unchanged link. `-trimpath`
keeps the paths out of the binary, so the bytes equal a one-shot container's
(tests/integration/test_plugin_edit.py).
"""

from __future__ import annotations

import hashlib
import shlex
from pathlib import Path
from typing import Callable

from scheduler_build.build import uptodate
from scheduler_build.build.compile import (
    GOCACHE, OUT, SRC, VENDOR, Job, PackageTotal, collect, go_build_command, output_lock, timed, with_progress,
)
from scheduler_build.build.workspace_image import inputs_tar
from scheduler_build.engine import Container, Engine, Volume
from scheduler_build.progress import log, stream_line

LABEL = "io.scheduler-build.builder"
VOLUME_LABEL = "io.scheduler-build.gocache-volume"


def container_name(image_id: str, gocache_volume: str, state_dir: Path) -> str:
    """One builder per workspace image, Go cache volume and cache directory: the builds that take turns
    in it are those that share its lock file (in the cache directory), whoever else uses the engine."""
    key = f"{image_id}\0{gocache_volume}\0{Path(state_dir).absolute()}".encode()
    return f"scheduler-build-builder-{hashlib.sha256(key).hexdigest()[:12]}"


def stop(engine: Engine, gocache_volume: str | None = None) -> int:
    """Remove the long-lived builders (of one Go cache volume), e.g. before removing that volume."""
    labels = {LABEL: "1"} | ({VOLUME_LABEL: gocache_volume} if gocache_volume else {})
    return engine.remove_containers(labels)


def clear_command(overlays: dict[str, Path]) -> list[str]:
    """Remove the previous build's workspace files and local modules (the image's vendor tree stays)."""
    script = f"find {SRC} -maxdepth 1 -type f -exec rm -f {{}} +"
    if overlays:
        script += " && rm -rf " + " ".join(shlex.quote(f"{VENDOR}/{module}") for module in sorted(overlays))
    return ["sh", "-c", script]


def run(engine: Engine, image: str, job: Job, *, image_id: str,
        on_line: Callable[[str], None] = stream_line) -> tuple[int, list[str]]:
    """Compile like compile.run, by exec in the long-lived builder of the workspace image `image`."""
    name = container_name(image_id, job.gocache_volume, job.state_dir)
    key = job.out_key(image)
    output = f"{OUT}/{key}/{job.binary_name}"
    argv = go_build_command(job.package, output, job.flags, job.test)
    dest = Path(job.out_dir) / job.binary_name
    with timed(job, "inputs"):
        inputs = inputs_tar(job.workspace, job.overlays, dirs=["out", f"out/{key}"])
        action = uptodate.action_key(image_id, job.environment, argv, inputs)
    record = uptodate.record_path(job.state_dir, key)
    # One builder holds one workspace (/src and the local modules under vendor/) at a time: builds
    # of other outputs in the same builder take turns too, or one would compile the other's files.
    with output_lock(job, name):
        if uptodate.up_to_date(record, action, dest):  # the action record is the builder's as well
            stream_line("    up to date: the last compile of these inputs made this binary (no container)")
            return 0, argv
        with timed(job, "create"):
            box = _idle_builder(engine, name, image, job.gocache_volume)
        with timed(job, "put"):
            code = box.exec(clear_command(job.overlays), environment={}, workdir="/", on_line=on_line)
            if code != 0:
                return code, argv
            box.put("/", inputs)
        stream_line(f"+ (exec in {box.id[:12]}) " + shlex.join(argv))
        total = PackageTotal(job.state_dir, key, on_line)
        command = with_progress(argv, job.package, count=total.start())
        try:
            with timed(job, "go"):
                code = box.exec(command, environment=job.environment, workdir=SRC, on_line=total)
        except KeyboardInterrupt:
            # An exec'd process outlives its client: only removing the builder stops the compile (and
            # frees the output for the next build, which starts a new builder).
            box.remove()
            raise
        if code == 0:
            total.keep()
            with timed(job, "copy-out"):
                collect(box, output, dest)
            uptodate.remember(record, action, dest)
    return code, argv


def _idle_builder(engine: Engine, name: str, image: str, gocache_volume: str) -> Container:
    """The running builder `name`, with nothing but its `sleep` in it (called under its lock).

    A build killed outright (SIGKILL, a lost session) leaves its exec'd compile running: the engine
    does not stop an exec whose client is gone. Under the lock nothing else may run there, so a
    builder with more than its one process is replaced, never shared with that compile."""
    def start() -> Container:
        return engine.ensure_running(name, image, volumes=[Volume(GOCACHE, gocache_volume)],
                                     labels={LABEL: "1", VOLUME_LABEL: gocache_volume})

    box = start()
    if box.processes() > 1:
        log(f"    replacing the long-lived builder {name}: a compile of a build that is gone still runs in it")
        box.remove()
        box = start()
    return box

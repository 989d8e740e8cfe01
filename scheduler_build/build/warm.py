"""The compile in a long-lived builder container: `docker exec` instead of a container per build.

Creating, starting and removing a container is most of a no-change rebuild's fixed
cost, so one builder container per (workspace image, Go build-cache volume) is
started once (`sleep infinity`, `--network none`) and kept; each build puts its
inputs in through the engine's archive API (the workspace's files, the local
modules' snapshots in place of vendor/<module>, after removing the previous
build's), execs `go build` in it and copies the binary out (compile.collect). The
output stays in the container, one directory per set of inputs, so Go skips an
unchanged link. `-trimpath` keeps the paths out of the binary, so the bytes equal
a one-shot container's (tests/integration/test_plugin_edit.py).
"""

from __future__ import annotations

import hashlib
import shlex
from pathlib import Path
from typing import Callable

from scheduler_build.build.compile import (
    GOCACHE, OUT, SRC, VENDOR, Job, PackageTotal, collect, go_build_command, output_lock, timed, with_progress,
)
from scheduler_build.build.workspace_image import inputs_tar
from scheduler_build.engine import Engine, Volume
from scheduler_build.progress import stream_line

LABEL = "io.scheduler-build.builder"
VOLUME_LABEL = "io.scheduler-build.gocache-volume"


def container_name(image_id: str, gocache_volume: str) -> str:
    key = f"{image_id}\0{gocache_volume}".encode()
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
    name = container_name(image_id, job.gocache_volume)
    with timed(job, "create"):
        box = engine.ensure_running(name, image, volumes=[Volume(GOCACHE, job.gocache_volume)],
                                    labels={LABEL: "1", VOLUME_LABEL: job.gocache_volume})
    key = job.out_key(image)
    output = f"{OUT}/{key}/{job.binary_name}"
    argv = go_build_command(job.package, output, job.flags, job.test)
    # One builder holds one workspace (/src and the local modules under vendor/) at a time: builds
    # of other outputs in the same builder take turns too, or one would compile the other's files.
    with output_lock(job, name):
        with timed(job, "put"):
            code = box.exec(clear_command(job.overlays), environment={}, workdir="/", on_line=on_line)
            if code != 0:
                return code, argv
            box.put("/", inputs_tar(job.workspace, job.overlays, dirs=["out", f"out/{key}"]))
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
                collect(box, output, Path(job.out_dir) / job.binary_name)
    return code, argv

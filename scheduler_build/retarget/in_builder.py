"""Go commands of `inv plugin.retarget` in the builder container, through the engine API only.

A module (the plugin tidied for one release) is made self-contained on this side, `go mod
vendor -e`, and goes into a named volume of its own once, as one archive; each command then
runs in a fresh container of the builder with that volume at /src (`-mod=vendor`, no network)
and the builds' Go cache volume (so the compile and apidiff's export data share it). Extra
inputs go in as archives and outputs come out through the archive API: nothing of the
caller's file system is mounted, so a remote engine serves as well as the local one
(docs/remote-engine.md). `close()` removes the volumes this made.
"""

from __future__ import annotations

import tarfile
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Callable

from scheduler_build.golang import gotool
from scheduler_build.build.compile import BUILD_TAGS
from scheduler_build.build.workspace_image import add_tree
from scheduler_build.engine import LOST, Engine, Volume
from scheduler_build.errors import UserError
from scheduler_build.progress import log, phase, stream_line

SRC, GOCACHE = "/src", "/gocache"
VOLUME_PREFIX = "scheduler-build-retarget-"
# -trimpath and the build's tags: the plugin compiles as a build compiles it, and Go's cache (the same
# volume) is shared with the builds of that release instead of filled a second time.
ENV = {"GOFLAGS": f"-mod=vendor -buildvcs=false -trimpath -tags={','.join(BUILD_TAGS)}", "GOPROXY": "off", "GOSUMDB": "off", "GOTOOLCHAIN": "local",
       "GOMODCACHE": "/tmp/gomodcache-unused", "GOCACHE": GOCACHE, "CGO_ENABLED": "0", "HOME": "/tmp"}


def prepare(work: Path, label: str, go: str = "") -> None:
    """`go mod tidy -e` then `go mod vendor -e` on this side (the module cache and proxy are here):
    the module then builds with no module cache, wherever the engine runs. `go`: the toolchain's
    `go` when the host's is too old (toolchain.py), "" for the host's."""
    with phase("tidy", f"{label}: go mod tidy -e, go mod vendor -e"):
        for args in (["mod", "tidy", "-e"], ["mod", "vendor", "-e"]):
            proc = gotool.run(args, cwd=work, timeout=3600, go=go)
            for line in (proc.stdout + proc.stderr).splitlines()[-10:]:
                log(f"    {line}")
            if gotool.refused_modules(proc.stdout + proc.stderr):  # -e carries on; nothing would compile
                raise gotool.failure(f"`go {' '.join(args)}` of {label}", proc.stdout + proc.stderr, "")


def module_tar(work: Path, out: IO[bytes]) -> None:
    """The module's tree (vendor included) as an archive for /src, sorted and normalised."""
    with tarfile.open(fileobj=out, mode="w") as archive:
        add_tree(archive, work, ".")


@dataclass
class InBuilder:
    """The builder image and the engine that runs it; one volume per module put in."""

    image: str
    gocache_volume: str
    engine: Engine
    volumes: dict[Path, str] = field(default_factory=dict)

    def run(self, argv: list[str], src: Path, inputs: bytes = b"", outputs: dict[str, Path] | None = None,
            on_line: Callable[[str], None] = stream_line) -> int:
        """`argv` in /src (the module `src`); `inputs` (an archive) unpacked at /; after a success each
        of `outputs` (container path -> host path) copied out if the command made it. The exit code."""
        fresh = src not in self.volumes
        name = self.volumes.setdefault(src, f"{VOLUME_PREFIX}{uuid.uuid4().hex[:16]}")
        volumes = [Volume(SRC, name), Volume(GOCACHE, self.gocache_volume)]
        with self.engine.container(self.image, argv, volumes=volumes, environment=dict(ENV), workdir=SRC) as box:
            if fresh:
                with tempfile.TemporaryFile(prefix="sb-retarget-") as archive:
                    module_tar(src, archive)
                    archive.seek(0)
                    box.put(SRC, archive)
            if inputs:
                box.put("/", inputs)
            code = box.run(on_line)
            for path, dest in (outputs or {}).items():
                if code == 0 and box.stat(path) is not None:
                    box.fetch(path, dest)
        return code

    def close(self) -> None:
        """Remove the modules' volumes (made here, so removed here); an engine that went away leaves a
        line naming them, not a second error over the first."""
        for name in self.volumes.values():
            try:
                self.engine.remove_volume(name)
            except (UserError, *LOST) as exc:
                log(f"    could not remove volume {name} ({exc}); `docker volume rm {name}` removes it")
        self.volumes.clear()

"""The compile in a long-lived builder container: `docker exec` instead of a container per build.

The default on an engine on this machine (pipeline: `build.reuse_builder` auto). One builder
container per (workspace image, Go build-cache volume, cache directory) is started once
(`sleep infinity`, `--network none`, named volumes only) and kept: no container to create,
start and remove per build, and its file system's caches stay warm. Builds that share it take
turns by one lock in the cache directory; an unchanged action starts nothing (uptodate.py, the
same record as a one-shot compile's); a builder still running a compile of a build that is gone
is replaced. Each build puts its inputs in through the engine's archive API (the workspace's
files, the local modules' snapshots in place of vendor/<module>, after removing the previous
build's), execs `go build` in it and takes the binary out. The output stays in the builder's
/out, one directory per set of inputs, so Go skips an unchanged link. `-trimpath` keeps the
paths out of the binary, so the bytes equal a one-shot container's (tests/integration/test_plugin_edit.py).

Taking a 73 MB binary out through the archive API costs about a quarter of a second, most of it
the engine's: on the plugin developer's loop, the step that decides
whether it stays within 1.25x of a native `go build`. So a new builder's /out is a directory of
the cache (`<cache>/builds/builders/<name>-<random>`), bind-mounted, when the engine can see it:
a probe at its creation has the builder copy a random token the caller wrote, and only a builder
whose copy the caller read back ("shared", holding its container ID) is trusted with it. Then
`go build` writes the binary straight into the caller's file system, it is handed to its owner
(chown in the same exec: an engine's root otherwise owns it), and the output is hard-linked (or,
across file systems, copied) into place. Go replaces an output file by a new one rather than
rewriting it, so the link never sees a later build. Any other engine (tcp://, ssh://, a socket
whose daemon sees other files, user namespaces that forbid the write) fails the probe or the
mount and keeps the archive copy-out.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shlex
import shutil
from pathlib import Path
from typing import Callable

from scheduler_build.atomic import link_or_copy
from scheduler_build.build import elf, uptodate
from scheduler_build.build.compile import (
    GOCACHE, OUT, SRC, VENDOR, Job, PackageTotal, collect, go_build_command, is_seed, output_lock, profile_file, timed,
    with_progress,
)
from scheduler_build.build.workspace_image import inputs_tar
from scheduler_build.engine import Container, Engine, Volume
from scheduler_build.progress import log, stream_line

LABEL = "io.scheduler-build.builder"
VOLUME_LABEL = "io.scheduler-build.gocache-volume"
SHARED_LABEL = "io.scheduler-build.shared-out"  # the host directory tried as the builder's /out
SHARED_PROOF = "shared"  # in that directory: the ID of the builder whose probe proved it is shared


def container_name(image_id: str, gocache_volume: str, state_dir: Path) -> str:
    """One builder per workspace image, Go cache volume and cache directory: the builds that take turns
    in it are those that share its lock file (in the cache directory), whoever else uses the engine."""
    key = f"{image_id}\0{gocache_volume}\0{Path(state_dir).absolute()}".encode()
    return f"scheduler-build-builder-{hashlib.sha256(key).hexdigest()[:12]}"


def stop(engine: Engine, gocache_volume: str | None = None) -> int:
    """Remove the long-lived builders (of one Go cache volume), e.g. before removing that volume, and
    the shared /out directories they proved theirs (their outputs went with the container before)."""
    labels = {LABEL: "1"} | ({VOLUME_LABEL: gocache_volume} if gocache_volume else {})
    outs = [Path(host) for name, host, found in engine.containers_labelled(SHARED_LABEL)
            if all(found.get(k) == v for k, v in labels.items())
            and Path(host).name.startswith(f"{name}-") and (Path(host) / SHARED_PROOF).is_file()]
    count = engine.remove_containers(labels)
    for out in outs:
        shutil.rmtree(out, ignore_errors=True)
    return count


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
    argv = go_build_command(job.package, output, job.flags, job.test, job.pgo is not None)
    dest = Path(job.out_dir) / job.binary_name
    with timed(job, "inputs"):
        # No directory entries: `go build -o` makes the output's, and a put through a shared /out
        # would give it to the engine's root.
        inputs = inputs_tar(job.workspace, job.overlays, files=profile_file(job))
        action = uptodate.action_key(image_id, job.environment, argv, inputs)
    record = uptodate.record_path(job.state_dir, key)
    # One builder holds one workspace (/src and the local modules under vendor/) at a time: builds
    # of other outputs in the same builder take turns too, or one would compile the other's files.
    with output_lock(job, name):
        if uptodate.up_to_date(record, action, dest):  # the action record is the builder's as well
            stream_line("    up to date: the last compile of these inputs made this binary (no container)")
            return 0, argv
        with timed(job, "create"):
            box = _idle_builder(engine, name, image, job.gocache_volume, Path(job.state_dir))
            shared = shared_out(box)
            if shared:
                (shared / key).mkdir(exist_ok=True)  # the caller's, so its owner can always remove it
        with timed(job, "put"):
            code = box.exec(clear_command(job.overlays), environment={}, workdir="/", on_line=on_line)
            if code != 0:
                return code, argv
            box.put("/", inputs)
        stream_line(f"+ (exec in {box.id[:12]}) " + shlex.join(argv))
        total = PackageTotal(job.state_dir, key, on_line)
        command = with_progress(argv, job.package, count=total.start())
        if shared:
            command = shared_command(command, output)
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
                if shared:
                    link_out(shared / key / job.binary_name, dest)
                else:
                    collect(box, output, dest)
            uptodate.remember(record, action, dest)
    return code, argv


def _idle_builder(engine: Engine, name: str, image: str, gocache_volume: str, state_dir: Path) -> Container:
    """The running builder `name`, with nothing but its `sleep` in it (called under its lock).

    A build killed outright (SIGKILL, a lost session) leaves its exec'd compile running: the engine
    does not stop an exec whose client is gone. Under the lock nothing else may run there, so a
    builder with more than its one process is replaced, never shared with that compile."""
    box = _running_builder(engine, name, image, gocache_volume, state_dir)
    why = ("a compile of a build that is gone still runs in it" if box.processes() > 1 else
           "an older scheduler-build started it, without a /out to try sharing" if SHARED_LABEL not in box.labels else "")
    if why:
        log(f"    replacing the long-lived builder {name}: {why}")
        box.remove()
        box = _running_builder(engine, name, image, gocache_volume, state_dir)
    return box


def _running_builder(engine: Engine, name: str, image: str, gocache_volume: str, state_dir: Path) -> Container:
    """The builder `name`; a new one is given a new /out directory to try, and probed."""
    candidate = state_dir.absolute() / "builders" / f"{name}-{secrets.token_hex(4)}"
    candidate.mkdir(parents=True)
    box = engine.ensure_running(name, image, volumes=[Volume(GOCACHE, gocache_volume)], bind=(candidate, OUT),
                                labels={LABEL: "1", VOLUME_LABEL: gocache_volume, SHARED_LABEL: str(candidate)})
    if box.labels.get(SHARED_LABEL) != str(candidate):  # it was running already
        candidate.rmdir()
        return box
    for stale in candidate.parent.glob(f"{name}-*"):  # the /out of builders this one replaces
        if stale != candidate:
            shutil.rmtree(stale, ignore_errors=True)
    if not _probe(box, candidate):
        shutil.rmtree(candidate, ignore_errors=True)
    return box


def _probe(box: Container, host: Path) -> bool:
    """Whether the builder's /out is `host`: it copies a token written there, and the copy is read back.
    The copy is handed to /out's owner as each compile's binary will be: an engine that cannot chown
    there (a squashed or mapped root) fails here rather than on every build after it."""
    token = secrets.token_hex(16)
    (host / ".probe").write_text(token)
    script = f"cp {OUT}/.probe {OUT}/.seen && chown \"$(stat -c %u:%g {OUT})\" {OUT}/.seen"
    code = box.exec(["sh", "-c", script], environment={}, workdir="/", on_line=lambda line: None)
    seen = (host / ".seen").read_text() if code == 0 and (host / ".seen").is_file() else ""
    for name in (".probe", ".seen"):
        (host / name).unlink(missing_ok=True)
    if seen != token:
        return False
    (host / SHARED_PROOF).write_text(box.id)
    return True


def shared_out(box: Container) -> Path | None:
    """The caller's directory that is the builder's /out, when its probe proved it; else None."""
    host = box.labels.get(SHARED_LABEL)
    try:
        return Path(host) if host and (Path(host) / SHARED_PROOF).read_text() == box.id else None
    except OSError:
        return None


def shared_command(command: list[str], output: str) -> list[str]:
    """`command` writing to a shared /out: the binary handed to the owner of /out. When the engine's
    root owns /out (the caller is root, or the engine rootless) Go's work directory goes there too,
    so the link is renamed into place rather than copied (73 MB); another owner could
    not remove what a killed compile leaves there, so for it Go copies. The next compile in this
    builder (one at a time: its lock) removes a killed one's work directory first."""
    tmp = f"{OUT}/.gotmp"
    script = (f'rm -rf {tmp} && if [ "$(stat -c %u {OUT})" = 0 ]; then mkdir {tmp} && export GOTMPDIR={tmp}; fi'
              f' && "$@" && chown "$(stat -c %u:%g {OUT})" {shlex.quote(output)}')
    return ["sh", "-c", script, "sh", *command]


def link_out(built: Path, dest: Path) -> bool:
    """Put the binary Go wrote to the shared /out at `dest` unless `dest` already is it (compile.collect's
    rule), as a new file renamed over it; returns whether it did. A link is safe: Go replaces an output
    by a new file, it never rewrites one."""
    if is_seed(dest, built.stat().st_size, elf.file_go_build_id(built)):
        return False
    incoming = dest.with_name(f".{dest.name}.incoming")
    incoming.unlink(missing_ok=True)
    link_or_copy(built, incoming)
    os.replace(incoming, dest)
    return True

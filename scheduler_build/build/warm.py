"""The compile in a long-lived builder container: `docker exec` instead of a container per build.

The default on an engine on this machine (pipeline: `build.reuse_builder` auto). One builder
container per (user, workspace image, Go build-cache volume, cache directory) is started once
(`--network none`, named volumes only; its main process exits, and the engine removes it, once no build
used it for `build.builder_idle_timeout`; `build.builder_cap` keeps the newest of a user's) and kept
while in use: no container to create,
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
import re
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
from scheduler_build.filelock import try_turn
from scheduler_build.progress import log, stream_line

LABEL = "io.scheduler-build.builder"
VOLUME_LABEL = "io.scheduler-build.gocache-volume"
OWNER_LABEL = "io.scheduler-build.uid"  # whose builds use it: `clean --volume` stops only the caller's
SHARED_LABEL = "io.scheduler-build.shared-out"  # the host directory tried as its /out (shown, never trusted)
SHARED_PROOF = "shared"  # in that directory: the ID of the builder whose probe proved it is shared
USED = "/tmp/.scheduler-build-used"  # touched by each build's first exec: the idle clock starts again


def container_name(image_id: str, gocache_volume: str, state_dir: Path, uid: int | None = None) -> str:
    """One builder per user, workspace image, Go cache volume and cache directory: the builds that take
    turns in it are those that share its lock file (in the cache directory); on an engine several users
    share, each user's builders are their own (the name carries the uid)."""
    uid = os.getuid() if uid is None else uid
    key = f"{uid}\0{image_id}\0{gocache_volume}\0{Path(state_dir).absolute()}".encode()
    return f"scheduler-build-builder-u{uid}-{hashlib.sha256(key).hexdigest()[:12]}"


def idle_command(idle_seconds: int) -> list[str]:
    """The builder's main process: it exits (and the engine removes the builder) once no build used it
    for `idle_seconds`; a running exec (a compile) counts as use."""
    step = max(1, min(60, idle_seconds // 4))
    script = (f": > {USED}; while sleep {step}; do set -- /proc/[0-9]*; "
              f"if [ $# -gt 1 ]; then : > {USED}; continue; fi; "
              f"[ $(( $(date +%s) - $(stat -c %Y {USED}) )) -ge {idle_seconds} ] && exit 0; done")
    return ["sh", "-c", script]


def is_idle_command(command: list[str]) -> bool:
    """Whether `command` is a builder's main process as idle_command makes it, whatever its idle time (a
    builder started before build.builder_idle_timeout changed is still ours)."""
    return len(command) == 3 and command[:2] == ["sh", "-c"] and \
        re.sub(r"\d+", "N", command[2]) == re.sub(r"\d+", "N", idle_command(60)[2])


def _outs(state_dir: Path, name: str) -> list[Path]:
    """The /out directories our state holds for builder `name` (one per container it had)."""
    return sorted(Path(state_dir).absolute().glob(f"builders/{name}-*"))


def stop_one(engine: Engine, name: str, state_dir: Path) -> bool:
    """Remove the long-lived builder `name` and its /out directories in our state, unless a build holds
    its lock (a compile may run in it): then nothing is done and False returned."""
    with try_turn(Path(state_dir) / f"{name}.lock") as free:
        if free:
            engine.remove_container(name)
            for out in _outs(state_dir, name):
                shutil.rmtree(out, ignore_errors=True)
        return free


def stop(engine: Engine, gocache_volume: str, state_dir: Path) -> tuple[list[str], list[str]]:
    """Remove the caller's long-lived builders of one Go cache volume (e.g. before removing that volume);
    a builder a build holds the lock of is skipped. Returns (removed, busy) builder names."""
    removed, busy = [], []
    labels = {LABEL: "1", VOLUME_LABEL: gocache_volume, OWNER_LABEL: str(os.getuid())}
    for name, _ in engine.containers_created(labels):
        (removed if stop_one(engine, name, state_dir) else busy).append(name)
    return removed, busy


def _keep_newest(engine: Engine, state_dir: Path, cap: int, current: str) -> None:
    """Of the caller's builders recorded in this cache directory, keep the newest `cap` (the current one
    among them): older idle ones are removed, a busy one (its build holds the lock) stays."""
    labels = {LABEL: "1", OWNER_LABEL: str(os.getuid())}
    ours = [name for name, _ in engine.containers_created(labels) if name != current and _outs(state_dir, name)]
    for name in ours[:max(0, len(ours) - (cap - 1))]:
        with try_turn(Path(state_dir) / f"{name}.lock") as free:
            if free:
                log(f"    removing the long-lived builder {name}: more than build.builder_cap={cap} of yours")
                engine.remove_container(name)
                for out in _outs(state_dir, name):
                    shutil.rmtree(out, ignore_errors=True)


def clear_command(overlays: dict[str, Path]) -> list[str]:
    """Remove the previous build's workspace files and local modules (the image's vendor tree stays); the
    builder's idle clock starts again."""
    script = f": > {USED}; find {SRC} -maxdepth 1 -type f -exec rm -f {{}} +"
    if overlays:
        script += " && rm -rf " + " ".join(shlex.quote(f"{VENDOR}/{module}") for module in sorted(overlays))
    return ["sh", "-c", script]


def run(engine: Engine, image: str, job: Job, *, image_id: str, on_line: Callable[[str], None] = stream_line,
        idle_seconds: int = 1800, cap: int = 4) -> tuple[int, list[str]]:
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
            box = _idle_builder(engine, name, image, job.gocache_volume, Path(job.state_dir), idle_seconds, cap)
            shared = shared_out(box, Path(job.state_dir), name)
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


def _idle_builder(engine: Engine, name: str, image: str, gocache_volume: str, state_dir: Path,
                  idle_seconds: int = 1800, cap: int = 4) -> Container:
    """The running builder `name`, with nothing but its `sleep` in it (called under its lock).

    A build killed outright (SIGKILL, a lost session) leaves its exec'd compile running: the engine
    does not stop an exec whose client is gone. Under the lock nothing else may run there, so a
    builder with more than its one process is replaced, never shared with that compile."""
    box = _running_builder(engine, name, image, gocache_volume, state_dir, idle_seconds, cap)
    why = ("a compile of a build that is gone still runs in it" if box.processes() > 1 else
           "an older scheduler-build started it, without a /out to try sharing" if SHARED_LABEL not in box.labels else "")
    if why:
        log(f"    replacing the long-lived builder {name}: {why}")
        box.remove()
        box = _running_builder(engine, name, image, gocache_volume, state_dir, idle_seconds, cap)
    return box


def _running_builder(engine: Engine, name: str, image: str, gocache_volume: str, state_dir: Path,
                     idle_seconds: int = 1800, cap: int = 4) -> Container:
    """The builder `name`; a new one is given a new /out directory to try, and probed. A container of that
    name is used only when it is what we would create, its /out one our state lists (Engine.ensure_running)."""
    known = tuple(_outs(state_dir, name))
    candidate = state_dir.absolute() / "builders" / f"{name}-{secrets.token_hex(4)}"
    candidate.mkdir(parents=True)
    try:
        box = engine.ensure_running(
            name, image, volumes=[Volume(GOCACHE, gocache_volume)], bind=(candidate, OUT), known_binds=known,
            command=idle_command(idle_seconds), same_command=is_idle_command,
            labels={LABEL: "1", VOLUME_LABEL: gocache_volume, OWNER_LABEL: str(os.getuid()), SHARED_LABEL: str(candidate)})
    except BaseException:
        candidate.rmdir()
        raise
    if box.labels.get(SHARED_LABEL) != str(candidate):  # it was running already
        candidate.rmdir()
        return box
    _keep_newest(engine, state_dir, cap, name)
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


def shared_out(box: Container, state_dir: Path, name: str) -> Path | None:
    """The caller's directory that is the builder's /out, from our own state (never the container's label):
    the one of ours whose probe proved it for this container; else None."""
    for out in _outs(state_dir, name):
        try:
            if (out / SHARED_PROOF).read_text() == box.id:
                return out
        except OSError:
            continue
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

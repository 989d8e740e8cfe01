"""The vendored workspace as a keyed builder image, and the archives a compile puts into its container.

What is large and rarely changes, the vendored (and patched) dependency tree of one
wrapper module, goes into the engine once per key as an image built through the
engine's build API from a streamed context: `FROM <builder>` plus `/src/vendor`.
Its tag is the digest of its inputs (the vendor key, which covers go.mod, go.sum
and so the patch series; the builder and its Go version; the toolkit version; the
local modules left out), so a plugin edit reuses it: local plugin modules are left
out of the image and put into each compile's container with the workspace's own
small files (`inputs_tar`). Nothing is read from the caller's file system by the
engine, so this works on a remote engine, and the image can be pushed to a
registry and pulled by another worker.

The context is a deterministic tar (sorted, owner 0, each file's mtime derived from its
content: `content_mtime`), so the same inputs give the same layer on every worker.
"""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterable

from scheduler_build import __version__
from scheduler_build.engine import Engine
from scheduler_build.progress import log

REPO = "scheduler-build/workspace"
KEY_LABEL = "org.scheduler-build.workspace-key"
FORMAT = "2"  # bump when the image's layout changes (2: content-derived mtimes)
MTIME = 1  # a directory's mtime: inputs are content-addressed, dates are noise
# A file's mtime is a function of its content (`content_mtime`), not one fixed date: Go's index of
# package directories (cached in GOCACHE, keyed by path and each file's name, size and mtime) must
# see an edit that keeps a file's size, and two releases' vendor trees at the same path must not
# share entries. With one fixed mtime they did (client-go's informers/scheduling/interface.go is
# 2140 bytes in 1.36 and 1.37 with other imports: "cannot find package"), and turning the index off
# instead cost every no-change rebuild 0.47 s (docs/benchmarks/history.md, issue 19). The span keeps every date in the
# past (Go ignores files younger than 2 s) and clear of MTIME; a collision needs an edit to keep
# the name and size and hit the same one of 2**30 values.
MTIME_FLOOR, MTIME_SPAN = 86_400, 1 << 30
DOCKERFILE = b"""ARG BUILDER
FROM ${BUILDER}
COPY vendor /src/vendor
"""


@dataclass(frozen=True)
class WorkspaceImage:
    tag: str
    image_id: str
    key: str
    cached: bool


def image_key(builder_ref: str, go_version: str, vendor_key: str, excluded: Iterable[str], toolchain: str = "") -> str:
    """The digest of everything the image holds. `toolchain` is the Go toolchain module the builder was
    bootstrapped from (`module@version h1:...`), empty for the host's Go or an image's own."""
    parts = [FORMAT, __version__, builder_ref, go_version, vendor_key, *sorted(excluded), *([toolchain] if toolchain else [])]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def tag_for(key: str) -> str:
    return f"{REPO}:{key[:32]}"


def _normalised(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = MTIME
    if info.isdir():
        info.mode = 0o755
    elif info.isfile():
        info.mode = 0o755 if info.mode & 0o111 else 0o644
    return info


def content_mtime(data: bytes) -> int:
    """The mtime a file with this content gets in every archive we make (see MTIME_FLOOR)."""
    return MTIME_FLOOR + int.from_bytes(hashlib.sha256(data).digest()[:8], "big") % MTIME_SPAN


def add_file(archive: tarfile.TarFile, path: str, arcname: str) -> None:
    """Add one entry, normalised; a regular file with its content-derived mtime."""
    info = _normalised(archive.gettarinfo(path, arcname))
    if not info.isfile():
        archive.addfile(info)
        return
    data = Path(path).read_bytes()
    info.mtime = content_mtime(data)
    archive.addfile(info, io.BytesIO(data))


def add_tree(archive: tarfile.TarFile, root: Path, arcname: str, skip: frozenset[str] = frozenset()) -> None:
    """Add `root` as `arcname`, sorted and normalised, leaving out the relative paths in `skip`."""
    archive.add(str(root), arcname=arcname, recursive=False, filter=_normalised)
    for entry in sorted(os.scandir(root), key=lambda e: e.name):
        rel = f"{arcname}/{entry.name}"
        if rel in skip:
            continue
        if entry.is_dir(follow_symlinks=False):
            add_tree(archive, Path(entry.path), rel, skip)
        else:
            add_file(archive, entry.path, rel)


def context_tar(vendor_dir: Path, excluded: Iterable[str], out: IO[bytes]) -> None:
    """The build context: the Dockerfile and the vendor tree without the `excluded` modules."""
    with tarfile.open(fileobj=out, mode="w") as archive:
        info = _normalised(tarfile.TarInfo("Dockerfile"))
        info.size = len(DOCKERFILE)
        archive.addfile(info, io.BytesIO(DOCKERFILE))
        add_tree(archive, vendor_dir, "vendor", frozenset(f"vendor/{m}" for m in excluded))


# The vendored tree an image was built from: `clean --all` removes only the images of its own cache
# (on a shared engine, another checkout's images are not its to remove).
VENDOR_DIR_LABEL = "org.scheduler-build.vendor-dir"


def ensure(engine: Engine, builder_ref: str, go_version: str, vendor_dir: Path, vendor_key: str,
           excluded: Iterable[str], toolchain: str = "") -> WorkspaceImage:
    """The workspace image of these inputs, built through the engine's build API unless it is there."""
    excluded = sorted(excluded)
    key = image_key(builder_ref, go_version, vendor_key, excluded, toolchain)
    tag = tag_for(key)
    existing = engine.inspect_image(tag)
    if existing is not None and existing.labels.get(KEY_LABEL) == key:
        return WorkspaceImage(tag, existing.id, key, True)
    log(f"    building {tag} (the vendored tree, {len(excluded)} local module(s) left out)")
    with tempfile.TemporaryFile(prefix="sb-context-") as context:
        context_tar(vendor_dir, excluded, context)
        context.seek(0)
        image_id = engine.build(context, tag, labels={KEY_LABEL: key, "org.scheduler-build.vendor-key": vendor_key,
                                                      VENDOR_DIR_LABEL: str(Path(vendor_dir).absolute())},
                                buildargs={"BUILDER": builder_ref})
    return WorkspaceImage(tag, image_id, key, False)


def inputs_tar(workspace_dir: Path, overlays: dict[str, Path], dirs: Iterable[str] = (),
               files: dict[str, Path] | None = None) -> bytes:
    """What one compile puts at `/`: the workspace's files under src/, each local module under
    src/vendor/<module>, the (empty) directories `dirs`, and `files` (archive name -> host file: the
    PGO profile), normalised like the rest."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for path in dirs:
            info = _normalised(tarfile.TarInfo(path))
            info.type = tarfile.DIRTYPE
            archive.addfile(info)
        for item in sorted(Path(workspace_dir).iterdir()):
            if item.is_file():
                add_file(archive, str(item), f"src/{item.name}")
        for name, path in sorted((files or {}).items()):
            add_file(archive, str(path), name)
        for module, path in sorted(overlays.items()):
            parent = "src/vendor"
            for part in module.split("/")[:-1]:
                parent += "/" + part
                info = _normalised(tarfile.TarInfo(parent))
                info.type = tarfile.DIRTYPE
                archive.addfile(info)
            add_tree(archive, Path(path), f"src/vendor/{module}")
    return buffer.getvalue()

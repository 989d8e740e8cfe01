"""The builder image: a golang container to compile in, never requiring a pull.

Preference order: a configured image; the official `golang:<go minor>` image if
present locally or (when pulling is allowed) pullable; else a local image
bootstrapped on a static busybox root filesystem from the Go toolchain.py chose:
the host's when it is new enough, else Go's toolchain module from the Go module proxy.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from scheduler_build.golang import toolchain
from scheduler_build.atomic import link_or_copy
from scheduler_build.engine import Engine
from scheduler_build.build import elf
from scheduler_build import resources
from scheduler_build.errors import UserError
from scheduler_build.progress import detail, log, phase

GO_VERSION_LABEL = "org.scheduler-build.go-version"
TOOLCHAIN_LABEL = "org.scheduler-build.go-toolchain"  # module@version h1:..., empty for the host's Go
BOOTSTRAP_REPO = "scheduler-build/golang"
BUSYBOX_CANDIDATES = ("/bin/busybox", "/usr/bin/busybox")
CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"


@dataclass
class Builder:
    image: str
    image_id: str
    go_version: str  # e.g. 1.26.8
    source: str  # configured | official | pulled | bootstrapped | bootstrap-cached
    has_gcc: bool
    identity: str = ""  # a toolchain module's `module@version h1:...` (toolchain.Toolchain.identity)


parse_go_version = toolchain.parse
satisfies = toolchain.satisfies


def official_ref(go_required: str) -> str:
    major, minor = parse_go_version(go_required)[:2]
    return f"golang:{major}.{minor}"


def image_go_version(image) -> str:
    labels = image.labels or {}
    if labels.get(GO_VERSION_LABEL):
        return labels[GO_VERSION_LABEL]
    for entry in image.env:
        if entry.startswith("GOLANG_VERSION="):
            return entry.split("=", 1)[1]
    return ""


def host_go(goroot: str = "") -> tuple[Path, str]:
    """The host toolchain's GOROOT and version (e.g. 1.26.8)."""
    found = toolchain.host(goroot)
    return found.root, found.version


def _has_gcc(engine: Engine, image: str) -> bool:
    labels = engine.inspect_image(image).labels or {}
    if "org.scheduler-build.gcc" in labels:
        return labels["org.scheduler-build.gcc"] == "true"
    return True  # official golang images are Debian-based and ship gcc


def select(engine: Engine, go_required: str, configured: str = "", pull: bool = True, goroot: str = "",
           go: toolchain.Toolchain | None = None) -> Builder:
    """Choose (or bootstrap) a builder image whose Go is at least `go_required`. `go` is the toolchain
    chosen for this build (toolchain.choose: the host's, or one from the Go module proxy); when it
    came from `--go`, only an image with exactly its version will do."""
    go = go or toolchain.choose(go_required, goroot=goroot)
    exact = go.version if go.pinned else ""
    if configured:
        return _configured(engine, configured, go_required, pull, exact)
    official = official_ref(go_required)
    fits = (lambda v: v == exact) if exact else (lambda v: satisfies(v, go_required))
    image = engine.inspect_image(official)
    if image is not None and fits(image_go_version(image)):
        return Builder(official, image.id, image_go_version(image), "official", True)
    if pull and not exact:
        ok, reason = engine.pull(official)
        image = engine.inspect_image(official) if ok else None
        if image is not None and fits(image_go_version(image)):
            log(f"    pulled {official}")
            return Builder(official, image.id, image_go_version(image), "pulled", True)
        # Optional, and it fails on every build of an offline host: one quiet line, for -v.
        detail(f"    did not pull {official} ({pull_failure(reason)}); using a bootstrapped builder")
    return bootstrap(engine, go=go)


def _configured(engine: Engine, configured: str, go_required: str, pull: bool, exact: str) -> Builder:
    image = engine.inspect_image(configured)
    if image is None and pull:
        ok, reason = engine.pull(configured)
        image = engine.inspect_image(configured) if ok else None
    if image is None:
        raise UserError(f"builder image {configured} is not present and cannot be pulled", "run `inv builder.bootstrap` and leave builder.image empty, or load the image with `docker load`")
    version = image_go_version(image)
    if version and not satisfies(version, go_required):
        raise UserError(f"builder image {configured} has Go {version}, older than the go {go_required} required", f"use {official_ref(go_required)}, or leave builder.image empty: the builder is then bootstrapped from the Go module proxy's toolchain")
    if exact and version != exact:
        raise UserError(f"builder image {configured} has Go {version or 'of unknown version'}, not the {exact} --go asks for", "leave builder.image empty (or drop --go): the builder is then bootstrapped from that Go")
    return Builder(configured, image.id, version, "configured", _has_gcc(engine, configured))


def pull_failure(reason: str) -> str:
    """The engine's pull error in a few words (it is an HTTP 500 wrapping the registry's DNS or dial error)."""
    lowered = reason.lower()
    if "no such host" in lowered or "dial tcp" in lowered or "timeout" in lowered or "network is unreachable" in lowered:
        return "no registry reachable"
    if "not found" in lowered or "manifest unknown" in lowered:
        return "no such image in the registry"
    return reason.split(": ")[-1].strip(' ()"')[:120] or "refused"


def find_static_busybox() -> Path:
    for candidate in BUSYBOX_CANDIDATES:
        path = Path(candidate)
        if path.is_file():
            info = elf.inspect(path.read_bytes())
            if info.is_static:
                return path
    raise UserError("no statically linked busybox on the host to seed the builder's root filesystem", "apt-get install -y busybox-static")


def bootstrap(engine: Engine, goroot: str = "", force: bool = False, go: toolchain.Toolchain | None = None) -> Builder:
    """Build `scheduler-build/golang:<version>` from a GOROOT (the host's, or a toolchain module from
    the Go module proxy) and a busybox rootfs. The image is labelled with the toolchain's identity,
    so a tag bootstrapped from another Go root of the same version is rebuilt, not reused."""
    go = go or toolchain.host(goroot)
    tag = f"{BOOTSTRAP_REPO}:{go.version}"
    existing = engine.inspect_image(tag)
    if existing is not None and not force and (existing.labels or {}).get(TOOLCHAIN_LABEL, "") == go.identity:
        log(f"    {tag} is already present ({existing.short_id}); use --force to rebuild")
        return Builder(tag, existing.id, go.version, "bootstrap-cached", False, go.identity)
    busybox = find_static_busybox()
    with phase("builder.bootstrap", f"{tag} from {go.module or go.root} and {busybox}"):
        with tempfile.TemporaryDirectory(prefix="sb-builder-") as tmp:
            context = Path(tmp)
            _rootfs(context / "rootfs", busybox, go.root)
            (context / "Dockerfile").write_bytes(resources.dockerfile("builder.Dockerfile"))
            image_id = engine.build(
                context,
                tag,
                labels={
                    GO_VERSION_LABEL: go.version,
                    TOOLCHAIN_LABEL: go.identity,
                    "org.scheduler-build.gcc": "false",
                    "org.opencontainers.image.title": "scheduler-build bootstrapped golang builder",
                },
                buildargs={"GO_VERSION": go.version},
            )
    return Builder(tag, image_id, go.version, "bootstrapped", False, go.identity)


def _rootfs(rootfs: Path, busybox: Path, goroot: Path) -> None:
    for sub in ("bin", "etc/ssl/certs", "tmp", "usr/local", "root", "src", "out", "gocache"):
        (rootfs / sub).mkdir(parents=True, exist_ok=True)
    shutil.copy2(busybox, rootfs / "bin" / "busybox")
    if os.path.isfile(CA_BUNDLE):
        shutil.copy2(CA_BUNDLE, rootfs / "etc/ssl/certs/ca-certificates.crt")
    (rootfs / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")
    (rootfs / "etc/group").write_text("root:x:0:\nnogroup:x:65534:\n")
    _copy_goroot(goroot, rootfs / "usr/local/go")


def _copy_goroot(source: Path, dest: Path) -> None:
    # Hard links are instant when the temp dir shares the file system; copy otherwise.
    def ignore(directory: str, names: list[str]) -> set[str]:
        # GOROOT/test is Go's own test suite: 50 MB nobody compiles against.
        return {".git", "test"} & set(names) if Path(directory) == source else {".git"} & set(names)

    shutil.copytree(source, dest, symlinks=True, ignore=ignore, copy_function=link_or_copy)
    # The module cache's copy is read-only: the temporary tree must stay removable by any user.
    for directory, _, _ in os.walk(dest):
        os.chmod(directory, 0o755)


def find_static_busybox_or_none() -> Path | None:
    try:
        return find_static_busybox()
    except UserError:
        return None

"""The builder image: a golang container to compile in, never requiring a pull.

Preference order: a configured image; the official `golang:<go minor>` image if
present locally or (when pulling is allowed) pullable; else a local image
bootstrapped from the host's Go toolchain on a static busybox root filesystem.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from scheduler_build import gotool
from scheduler_build.engine import Engine
from scheduler_build.build import elf
from scheduler_build import resources
from scheduler_build.errors import UserError
from scheduler_build.progress import detail, log, phase

GO_VERSION_LABEL = "org.scheduler-build.go-version"
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


def parse_go_version(text: str) -> tuple[int, ...]:
    """'go1.26.8' / '1.26' / '1.26.0' -> (1, 26, 8); pre-release suffixes are ignored."""
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text or "")
    if not match:
        return ()
    return tuple(int(part) for part in match.groups(default="0"))


def satisfies(have: str, need: str) -> bool:
    return bool(parse_go_version(have)) and parse_go_version(have) >= parse_go_version(need)


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
    root = goroot or gotool.env_value("GOROOT")
    version_file = Path(root) / "VERSION"
    if not version_file.is_file():
        raise UserError(f"{root} is not a Go root (no VERSION file)", "set builder.goroot / --goroot to the directory `go env GOROOT` prints")
    version = version_file.read_text().splitlines()[0].strip().removeprefix("go")
    return Path(root), version


def _has_gcc(engine: Engine, image: str) -> bool:
    labels = engine.inspect_image(image).labels or {}
    if "org.scheduler-build.gcc" in labels:
        return labels["org.scheduler-build.gcc"] == "true"
    return True  # official golang images are Debian-based and ship gcc


def select(engine: Engine, go_required: str, configured: str = "", pull: bool = True, goroot: str = "") -> Builder:
    """Choose (or bootstrap) a builder image whose Go is at least `go_required`."""
    if configured:
        image = engine.inspect_image(configured)
        if image is None and pull:
            ok, reason = engine.pull(configured)
            image = engine.inspect_image(configured) if ok else None
        if image is None:
            raise UserError(f"builder image {configured} is not present and cannot be pulled", "run `inv builder.bootstrap` and leave builder.image empty, or load the image with `docker load`")
        version = image_go_version(image)
        if version and not satisfies(version, go_required):
            raise UserError(f"builder image {configured} has Go {version}, older than the go {go_required} required", f"use {official_ref(go_required)} or `inv builder.bootstrap` with a newer host Go")
        return Builder(configured, image.id, version, "configured", _has_gcc(engine, configured))

    official = official_ref(go_required)
    image = engine.inspect_image(official)
    if image is not None and satisfies(image_go_version(image), go_required):
        return Builder(official, image.id, image_go_version(image), "official", True)
    if pull:
        ok, reason = engine.pull(official)
        image = engine.inspect_image(official) if ok else None
        if image is not None and satisfies(image_go_version(image), go_required):
            log(f"    pulled {official}")
            return Builder(official, image.id, image_go_version(image), "pulled", True)
        # Optional, and it fails on every build of an offline host: one quiet line, for -v.
        detail(f"    did not pull {official} ({pull_failure(reason)}); using a bootstrapped builder")

    root, version = host_go(goroot)
    if not satisfies(version, go_required):
        raise UserError(
            f"the host's Go {version} is older than the go {go_required} this Kubernetes version requires",
            f"install Go {go_required} or newer, or provide {official} with `docker load`",
        )
    tag = f"{BOOTSTRAP_REPO}:{version}"
    image = engine.inspect_image(tag)
    if image is not None:
        return Builder(tag, image.id, version, "bootstrap-cached", False)
    built = bootstrap(engine, goroot=str(root))
    return Builder(built.image, built.image_id, built.go_version, "bootstrapped", False)


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


def bootstrap(engine: Engine, goroot: str = "", force: bool = False) -> Builder:
    """Build `scheduler-build/golang:<host go>` from the host GOROOT and a busybox rootfs."""
    root, version = host_go(goroot)
    tag = f"{BOOTSTRAP_REPO}:{version}"
    existing = engine.inspect_image(tag)
    if existing is not None and not force:
        log(f"    {tag} is already present ({existing.short_id}); use --force to rebuild")
        return Builder(tag, existing.id, version, "bootstrap-cached", False)
    busybox = find_static_busybox()
    with phase("builder.bootstrap", f"{tag} from {root} and {busybox}"):
        with tempfile.TemporaryDirectory(prefix="sb-builder-") as tmp:
            context = Path(tmp)
            rootfs = context / "rootfs"
            for sub in ("bin", "etc/ssl/certs", "tmp", "usr/local", "root", "src", "out", "gocache"):
                (rootfs / sub).mkdir(parents=True, exist_ok=True)
            shutil.copy2(busybox, rootfs / "bin" / "busybox")
            if os.path.isfile(CA_BUNDLE):
                shutil.copy2(CA_BUNDLE, rootfs / "etc/ssl/certs/ca-certificates.crt")
            (rootfs / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")
            (rootfs / "etc/group").write_text("root:x:0:\nnogroup:x:65534:\n")
            _copy_goroot(root, rootfs / "usr/local/go")
            (context / "Dockerfile").write_bytes(resources.dockerfile("builder.Dockerfile"))
            image_id = engine.build(
                context,
                tag,
                labels={
                    GO_VERSION_LABEL: version,
                    "org.scheduler-build.gcc": "false",
                    "org.opencontainers.image.title": "scheduler-build bootstrapped golang builder",
                },
                buildargs={"GO_VERSION": version},
            )
    return Builder(tag, image_id, version, "bootstrapped", False)


def _copy_goroot(source: Path, dest: Path) -> None:
    # Hard links are instant when the temp dir shares the file system; copy otherwise.
    def ignore(directory: str, names: list[str]) -> set[str]:
        # GOROOT/test is Go's own test suite: 50 MB nobody compiles against.
        return {".git", "test"} & set(names) if Path(directory) == source else {".git"} & set(names)

    def link_or_copy(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    shutil.copytree(source, dest, symlinks=True, ignore=ignore, copy_function=link_or_copy)


def find_static_busybox_or_none() -> Path | None:
    try:
        return find_static_busybox()
    except UserError:
        return None

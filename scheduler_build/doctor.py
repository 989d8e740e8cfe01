"""`inv doctor`: each prerequisite of a build, with the fix for each missing one."""

from __future__ import annotations

import shutil
import socket
from dataclasses import dataclass
from typing import Any

from scheduler_build.build import builder_image as builder
from scheduler_build import settings
from scheduler_build import engine
from scheduler_build import gotool
from scheduler_build.errors import UserError

MIN_FREE_GIB = 10  # a kube-scheduler build: ~0.7 GB modules, ~0.4 GB vendor, ~2 GB Go cache


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = True


def check_docker() -> Check:
    try:
        info = engine.connect(timeout=10).version()
        return Check("docker engine", True, f"{info.get('Version')} (API {info.get('ApiVersion')})")
    except Exception as exc:  # any failure means "no engine": report it, do not crash
        return Check("docker engine", False, f"not reachable: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
                     "bash ci/setup.sh (installs Debian's docker.io and starts dockerd), or set DOCKER_HOST")


def check_go(config: Any) -> Check:
    """Required: resolving, vendoring, scaffolding and SBOMs run the host's Go (PATH, else /usr/local/go)."""
    if not gotool.find():
        return Check("go toolchain", False, gotool.missing(), gotool.INSTALL_HINT)
    try:
        root, version = builder.host_go(settings.get(config, "builder.goroot"))
    except UserError as exc:
        return Check("go toolchain", False, exc.message, exc.hint or "")
    where = gotool.find()
    on_path = "" if shutil.which("go") == where else f" (not on PATH; using {where})"
    return Check("go toolchain", True, f"go{version} at {root}{on_path}")


def check_disk(config: Any) -> Check:
    path = settings.cache_dir(config)
    probe = path
    while not probe.exists():
        probe = probe.parent
    free = shutil.disk_usage(probe).free / 2**30
    ok = free >= MIN_FREE_GIB
    return Check("free disk", ok, f"{free:.1f} GiB free under {probe} (cache {path})",
                 f"free at least {MIN_FREE_GIB} GiB, or point paths.cache_dir elsewhere")


def check_builder(config: Any, go_ok: bool) -> Check:
    configured = settings.get(config, "builder.image")
    try:
        images = {tag for image in engine.connect(timeout=10).images() for tag in image.tags}
    except Exception:
        return Check("builder image", False, "cannot list images without the docker engine", "start the engine first")
    if configured:
        ok = configured in images
        return Check("builder image", ok, f"configured {configured} {'present' if ok else 'missing'}",
                     "docker load it, or clear builder.image to use a bootstrapped builder")
    local = sorted(tag for tag in images if tag.startswith(("golang:", builder.BOOTSTRAP_REPO + ":")))
    if local:
        return Check("builder image", True, "present: " + ", ".join(local))
    if go_ok and builder.find_static_busybox_or_none():
        return Check("builder image", True, "none yet; bootstrappable from the host Go (inv builder.bootstrap)")
    return Check("builder image", False, "no golang image and nothing to bootstrap one from",
                 "apt-get install -y busybox-static and install Go, then `inv builder.bootstrap`")


def check_registry(url: str) -> Check:
    hostport = url.split("/", 1)[0]
    host, _, port = hostport.partition(":")
    try:
        with socket.create_connection((host, int(port or 443)), timeout=5):
            pass
    except (OSError, ValueError) as exc:
        return Check("registry", False, f"{hostport} unreachable: {exc}", "start the registry or fix registry.url")
    return Check("registry", True, f"{hostport} answers")


def check_git() -> Check:
    ok = shutil.which("git") is not None
    return Check("git", ok, "present" if ok else "missing (image tags use the commit)", "apt-get install -y git", required=False)


def run_all(config: Any, registry: str = "") -> list[Check]:
    go = check_go(config)
    checks = [check_docker(), go, check_disk(config), check_builder(config, go.ok), check_git()]
    if registry:
        checks.append(check_registry(registry))
    return checks

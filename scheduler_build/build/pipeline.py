"""`inv build`: resolve -> workspace -> vendor -> compile -> verify -> publish.

One function per stage lives in its own module; this one strings them together
and writes dist/<name>/<k8s-version>/<os>-<arch>/ atomically.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import platform
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from scheduler_build import platforms
from scheduler_build import __version__
from scheduler_build.build import builder_image as builder
from scheduler_build.build import compile as compile_stage
from scheduler_build import engine as docker_api
from scheduler_build.resolve import versions as k8s
from scheduler_build.build import vendor
from scheduler_build.build import verify
from scheduler_build.build import plugins as plugins_stage
from scheduler_build.errors import BuildFailed, UserError
from scheduler_build.atomic import publish_dir
from scheduler_build.progress import log, phase
from scheduler_build.build.workspace import PluginImport, render_wrapper

COMPONENTS_HINT = "components are the commands under k8s.io/kubernetes/cmd, e.g. kube-scheduler, kube-apiserver, kube-controller-manager"


@dataclass
class BuildRequest:
    k8s_version: str = "1.36"
    component: str = "kube-scheduler"
    name: str = ""
    goos: str = "linux"
    arch: str = ""
    cgo_static: bool = False
    builder_image: str = ""
    pull: bool = True
    goroot: str = ""
    dist_dir: Path = Path("dist")
    cache_dir: Path = Path(".cache")
    source_date_epoch: str = ""
    version_suffix: str = ""
    gocache_volume: str = "scheduler-build-gocache"
    plugins: tuple[PluginImport, ...] = ()
    # Out-of-tree plugin sources (local directories or module@version) and the
    # patch series against the kubernetes tree, both from a build spec (plugins.py).
    plugin_sources: tuple = ()
    patches: tuple[Path, ...] = ()


@dataclass
class BuildResult:
    binary: Path
    build_info: Path
    info: dict = field(default_factory=dict)


def resolve_epoch(explicit: str, release_time: str) -> int:
    """SOURCE_DATE_EPOCH from the flag/config, the environment, else the release's own time."""
    for candidate, origin in ((explicit, "--source-date-epoch"), (os.environ.get("SOURCE_DATE_EPOCH", ""), "SOURCE_DATE_EPOCH")):
        if str(candidate).strip():
            try:
                return int(str(candidate).strip())
            except ValueError:
                raise UserError(f"{origin} must be an integer count of seconds, got {candidate!r}", "e.g. SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)")
    if release_time:
        return int(dt.datetime.fromisoformat(release_time.replace("Z", "+00:00")).timestamp())
    return 0


def iso_date(epoch: int) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def stamped_version(version: str, suffix: str) -> str:
    """v1.36.3 + 'acme.1' -> v1.36.3-acme.1 (SemVer pre-release form, no '+')."""
    suffix = suffix.strip().lstrip("-")
    if not suffix:
        return version
    if not all(part and all(ch.isalnum() or ch == "-" for ch in part) for part in suffix.split(".")):
        raise UserError(f"version suffix {suffix!r} is not dot-separated alphanumerics", "e.g. acme.1")
    return f"{version}-{suffix}" if "-" not in version else f"{version}.{suffix}"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def validate_component(component: str) -> None:
    if not component or not all(ch.isalnum() or ch == "-" for ch in component) or not component.startswith("kube"):
        raise UserError(f"unknown component {component!r}", COMPONENTS_HINT)


def run(request: BuildRequest) -> BuildResult:
    started = time.monotonic()
    validate_component(request.component)
    arch = request.arch or platforms.host_arch()
    if request.goos != "linux":
        raise UserError(f"unsupported --os {request.goos!r}", "only linux binaries are built")
    phases: dict[str, float] = {}

    with phase("resolve", request.k8s_version) as rec:
        resolution = k8s.resolve(request.k8s_version, request.cache_dir)
        log(f"    k8s.io/kubernetes {resolution.version}, go {resolution.go_version}, {len(resolution.replaces)} staging replaces")
    phases["resolve"] = rec["seconds"]

    custom = plugins_stage.Customization()
    if request.plugin_sources or request.patches:
        with phase("customize", f"{len(request.plugin_sources)} plugin(s), {len(request.patches)} patch(es)") as rec:
            custom = plugins_stage.prepare(resolution, request.plugin_sources, request.patches, request.cache_dir, request.component)
        phases["customize"] = rec["seconds"]

    engine = docker_api.connect()
    with phase("builder") as rec:
        chosen = builder.select(engine, resolution.go_version, request.builder_image, request.pull, request.goroot)
        log(f"    {chosen.image} (go {chosen.go_version}, {chosen.source})")
        if request.cgo_static and not chosen.has_gcc:
            raise UserError(
                f"--cgo-static needs gcc in the builder, and {chosen.image} has none",
                "provide the official golang image (`docker load`) and set builder.image, or build without --cgo-static",
            )
    phases["builder"] = rec["seconds"]

    workspace = render_wrapper(
        resolution, request.component, tuple(request.plugins) + custom.imports, custom.requires, custom.local_replaces
    )
    with phase("vendor") as rec:
        vendored = vendor.prepare(workspace, request.cache_dir)
        log(f"    tidy {'cached' if vendored.tidy_cached else 'ran'}, vendor {'cached' if vendored.vendor_cached else 'ran'} ({vendored.vendor_dir})")
    phases["vendor"] = rec["seconds"]

    epoch = resolve_epoch(request.source_date_epoch, resolution.release_time)
    git_version = stamped_version(resolution.version, request.version_suffix)
    major, minor = resolution.minor.split(".")
    stamp = compile_stage.VersionStamp(
        git_version=git_version, git_major=major, git_minor=minor, build_date=iso_date(epoch)
    )
    flags = compile_stage.ldflags(stamp, strip=True, cgo_static=request.cgo_static)
    env = compile_stage.build_environment(request.goos, arch, request.cgo_static, epoch)

    name = request.name or request.component
    platform_dir = f"{request.goos}-{arch}"
    final_dir = Path(request.dist_dir).resolve() / name / resolution.version / platform_dir
    final_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".tmp-{platform_dir}-", dir=final_dir.parent))
    try:
        previous = final_dir / request.component
        if previous.is_file():
            # Seed the output with the last good binary (a copy: the published one stays
            # untouched): when nothing changed, go build sees its build ID is current
            # and skips the link, the bulk of a warm rebuild.
            shutil.copy2(previous, staging / request.component)
        with phase("compile", f"{workspace.package} for {request.goos}/{arch} in {chosen.image}, network none") as rec:
            code, argv = compile_stage.run(
                engine,
                chosen.image,
                workspace=vendored.workspace_dir,
                vendor=vendored.vendor_dir,
                out_dir=staging,
                gocache_volume=request.gocache_volume,
                package=workspace.package,
                binary_name=request.component,
                flags=flags,
                environment=env,
            )
            if code != 0:
                raise BuildFailed(f"go build of {request.component} {git_version} failed (exit {code}); the compiler output is above")
        phases["compile"] = rec["seconds"]

        binary = staging / request.component
        with phase("verify", str(final_dir / request.component)) as rec:
            checked = verify.verify(binary, arch, git_version, allow_dynamic=False)
            log(f"    static {checked.arch} ELF, {checked.version_method}: {checked.version_output}")
        phases["verify"] = rec["seconds"]

        info = {
            "schema": 1,
            "scheduler_build": __version__,
            "name": name,
            "component": request.component,
            "platform": f"{request.goos}/{arch}",
            "kubernetes": {
                "requested": request.k8s_version,
                "version": resolution.version,
                "stamped_version": git_version,
                "go_version_required": resolution.go_version,
                "staging_replaces": resolution.replaces,
            },
            "builder": {"image": chosen.image, "image_id": chosen.image_id, "go_version": chosen.go_version, "source": chosen.source},
            "vendor": {"go_sum_sha256": vendored.go_sum_sha256, "key": vendored.vendor_key, "cached": vendored.vendor_cached},
            "plugins": [{"package": p.package} for p in request.plugins] + custom.plugins_info,
            "patches": custom.patches_info,
            "flags": {
                "command": argv,
                "ldflags": flags,
                "env": env,
                "network": "none",
                "cgo_static": request.cgo_static,
            },
            "source_date_epoch": epoch,
            "binary": {
                "path": str((final_dir / request.component)),
                "sha256": sha256_file(binary),
                "size": binary.stat().st_size,
                "static": checked.static,
                "elf_type": checked.elf_type,
                "version_output": checked.version_output,
                "version_check": checked.version_method,
            },
            "host": {"machine": platform.machine(), "python": platform.python_version()},
            "phases_seconds": phases,
            "duration_seconds": round(time.monotonic() - started, 3),
        }
        (staging / "build-info.json").write_text(json.dumps(info, indent=2, sort_keys=True) + "\n")
        os.chmod(staging, 0o755)
        publish_dir(staging, final_dir, info["binary"]["sha256"][:16])
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    log(f"built {final_dir / request.component} in {info['duration_seconds']:.1f}s")
    return BuildResult(binary=final_dir / request.component, build_info=final_dir / "build-info.json", info=info)

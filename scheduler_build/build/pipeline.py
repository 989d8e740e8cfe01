"""`inv build`: resolve -> customize -> builder -> vendor -> compile -> verify -> publish.

One function per stage lives in its own module; this one strings them together
and writes dist/<name>/<k8s-version>/<os>-<arch>/ (platforms.dist_dir_for)
atomically, with the binary's record (build/info.py) beside it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import platform
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from scheduler_build import __version__
from scheduler_build.engine import Engine, connect
from scheduler_build import epoch as epoch_mod
from scheduler_build import owned, platforms
from scheduler_build.golang import toolchain
from scheduler_build.atomic import check_publishable, link_or_copy, staging_prefix, umask_mode
from scheduler_build.build import builder_image as builder
from scheduler_build.build import compile as compile_stage
from scheduler_build.build import debuggable as debuggable_mod
from scheduler_build.build import k8s_agreement
from scheduler_build.build import pgo as pgo_mod
from scheduler_build.build import plugins as plugins_stage
from scheduler_build.build import shared_cache
from scheduler_build.build import vendor
from scheduler_build.build import verify
from scheduler_build.build import warm
from scheduler_build.build import workspace_image
from scheduler_build.build.info import (
    BinaryInfo, BuilderInfo, BuildInfo, FlagsInfo, HostInfo, KubernetesInfo, PgoInfo, VendorInfo, sha256_file,
)
from scheduler_build.build.workspace import compile_errors, render_wrapper
from scheduler_build.errors import BuildFailed, UserError
from scheduler_build.progress import alive, log, phase, stream_line
from scheduler_build.resolve import gomod, versions

COMPONENTS_HINT = "components are the commands under k8s.io/kubernetes/cmd, e.g. kube-scheduler, kube-apiserver, kube-controller-manager"


@dataclass(frozen=True)
class BuildRequest:
    """One build, every value decided (inputs.build.build_request: the one precedence rule over the settings'
    declared defaults); the stage applies no default of its own."""

    k8s_version: str
    component: str
    name: str  # empty: the component's name
    goos: str
    arch: str  # empty: the host's
    cgo_static: bool
    builder_image: str  # empty: official golang:<go> if present or pullable, else bootstrapped
    pull: bool
    goroot: str  # empty: `go env GOROOT` of the host
    go: str  # an exact Go release (builder.go, --go); empty: the host's Go, or the go line's (toolchain.choose)
    dist_dir: Path
    cache_dir: Path
    source_date_epoch: str  # decided (the flag, the setting, $SOURCE_DATE_EPOCH); empty: the release's commit time
    version_suffix: str
    gocache_volume: str
    reuse_builder: bool | None  # compile in the long-lived builder (warm.py); None: when the engine is local
    # Out-of-tree plugin sources (spec.PluginSource: local directories or module@version)
    # and the patch series against the kubernetes tree, both from a build spec (plugins.py).
    plugin_sources: tuple
    patches: tuple[Path, ...]
    # The registry as the shared cache (shared_cache.py): repositories, empty for none.
    cache_from: str
    cache_to: str
    # A debuggable build (build/debuggable.py): the recorder patched in, `.debug` stamped, dist/<name>-debuggable.
    debuggable: debuggable_mod.Debuggable = debuggable_mod.Debuggable()
    pgo: pgo_mod.Profile | None = None  # `go build -pgo` with this CPU profile (build/pgo.py), checked when decided
    # The long-lived builders (warm.py): how long one may stay unused, and how many of the user's are kept.
    builder_idle_seconds: int = 1800
    builder_cap: int = 4


@dataclass
class BuildResult:
    binary: Path
    build_info: Path
    info: BuildInfo  # what build-info.json holds


def resolve_epoch(explicit: str, release_time: str) -> int:
    """The decided SOURCE_DATE_EPOCH, else the release's own time."""
    chosen = epoch_mod.chosen(str(explicit or "").strip())
    if chosen is not None:
        return chosen
    if release_time:
        return int(dt.datetime.fromisoformat(release_time.replace("Z", "+00:00")).timestamp())
    return 0


def stamped_version(version: str, suffix: str) -> str:
    """v1.36.3 + 'acme.1' -> v1.36.3-acme.1 (SemVer pre-release form, no '+')."""
    suffix = check_suffix(suffix)
    if not suffix:
        return version
    return f"{version}-{suffix}" if "-" not in version else f"{version}.{suffix}"


def check_suffix(suffix: str) -> str:
    """The version suffix without a leading '-', or a UserError (checked before anything runs)."""
    suffix = suffix.strip().lstrip("-")
    if suffix and not all(part and all(ch.isalnum() or ch == "-" for ch in part) for part in suffix.split(".")):
        raise UserError(f"version suffix {suffix!r} is not dot-separated alphanumerics", "e.g. acme.1")
    return suffix


def validate_component(component: str) -> None:
    if not component or not all(ch.isalnum() or ch == "-" for ch in component) or not component.startswith("kube"):
        raise UserError(f"unknown component {component!r}", COMPONENTS_HINT)


@contextmanager
def _timed(phases: dict[str, float], name: str, detail: str = "") -> Iterator[dict]:
    """A progress phase whose seconds land in build-info's phases_seconds."""
    with phase(name, detail) as rec:
        yield rec
    phases[name] = rec["seconds"]


@dataclass
class _Plan:
    """Everything decided before the compile: inputs, tools, flags and where the result goes."""

    request: BuildRequest
    engine: Engine
    arch: str
    resolution: versions.Resolution
    custom: plugins_stage.Customization
    chosen: builder.Builder
    vendored: vendor.Vendored
    workspace_image: workspace_image.WorkspaceImage
    package: str
    epoch: int
    git_version: str
    flags: str
    env: dict[str, str]
    final_dir: Path
    phases: dict[str, float]
    module_sum: str


def _debuggable(request: BuildRequest) -> BuildRequest:
    """A debuggable request as the stages see it: the recorder last in the series, its suffix and dist name."""
    if not request.debuggable.enabled:
        return request
    if request.component != "kube-scheduler":
        raise UserError(f"--debuggable records kube-scheduler's plugins, not {request.component}",
                        "drop --debuggable or build kube-scheduler")
    check_suffix(request.version_suffix)
    return dataclasses.replace(
        request, patches=tuple(request.patches) + (debuggable_mod.recorder_patch(request.cache_dir),),
        version_suffix=debuggable_mod.stamped_suffix(request.version_suffix),
        name=debuggable_mod.dist_name(request.name or request.component))


def _plan(request: BuildRequest) -> _Plan:
    """resolve -> customize -> builder -> vendor, and the stamp and flags of the compile."""
    validate_component(request.component)
    request = _debuggable(request)
    arch = request.arch or platforms.host_arch()
    if request.goos != "linux":
        raise UserError(f"unsupported --os {request.goos!r}", "only linux binaries are built")
    platforms.arch_of(f"{platforms.OS}/{arch}", "--arch")  # before resolve, vendor and compile run
    platforms.check_dist_name(request.name or request.component)
    check_suffix(request.version_suffix)
    if request.go:
        toolchain.check_exact(request.go)
    shared_cache.check_repo(request.cache_from, "--cache-from")
    shared_cache.check_repo(request.cache_to, "--cache-to")
    owned.check_writable(Path(request.dist_dir), "--dist")  # before resolve, vendor and the workspace image
    phases: dict[str, float] = {}
    with _timed(phases, "resolve", request.k8s_version):
        resolution = versions.resolve(request.k8s_version, request.cache_dir)
        log(f"    k8s.io/kubernetes {resolution.version}, go {resolution.go_version}, {len(resolution.replaces)} staging replaces")
    final_dir = platforms.dist_dir_for(Path(request.dist_dir).resolve(), request.name or request.component, resolution.version, arch, request.goos)
    check_publishable(final_dir)  # before any build work: a directory of the user's there is refused now, not after
    custom = plugins_stage.Customization()
    if request.plugin_sources or request.patches:
        with _timed(phases, "customize", f"{len(request.plugin_sources)} plugin(s), {len(request.patches)} patch(es)"):
            custom = plugins_stage.prepare(resolution, request.plugin_sources, request.patches, request.cache_dir, request.component)
    engine = connect()
    with _timed(phases, "builder"):
        go = toolchain.choose(resolution.go_version, request.go, request.goroot, f"Kubernetes {resolution.version}")
        chosen = _select_builder(engine, request, resolution.go_version, go)
    workspace = render_wrapper(resolution, request.component, custom.imports, custom.requires, custom.local_replaces,
                               custom.registrations, request.debuggable, cache_root=request.cache_dir)
    with _timed(phases, "vendor"):
        vendored = vendor.prepare(workspace, request.cache_dir, go=go.go)
        k8s_agreement.check_tidied((vendored.workspace_dir / "go.mod").read_text(), resolution)
        log(f"    tidy {'cached' if vendored.tidy_cached else 'ran'}, vendor {'cached' if vendored.vendor_cached else 'ran'} ({vendored.vendor_dir})")
        module_sum = _module_sum(vendored, resolution)
    with _timed(phases, "workspace-image"):
        image = _workspace_image(engine, request, chosen, vendored, custom)
    epoch = resolve_epoch(request.source_date_epoch, resolution.release_time)
    git_version = stamped_version(resolution.version, request.version_suffix)
    major, minor = resolution.minor.split(".")
    stamp = compile_stage.VersionStamp(git_version=git_version, git_major=major, git_minor=minor, build_date=epoch_mod.utc_stamp(epoch))
    return _Plan(
        request=request, engine=engine, arch=arch, resolution=resolution, custom=custom, chosen=chosen, vendored=vendored,
        workspace_image=image, package=workspace.package, epoch=epoch, git_version=git_version,
        flags=compile_stage.ldflags(stamp, strip=True, cgo_static=request.cgo_static),
        env=compile_stage.build_environment(request.goos, arch, request.cgo_static, epoch),
        final_dir=final_dir, phases=phases, module_sum=module_sum,
    )


def _module_sum(vendored: vendor.Vendored, resolution: versions.Resolution) -> str:
    """go.sum's hash of k8s.io/kubernetes, recorded for the provenance: from the tidied go.sum, else (a patched
    build replaces the module with a local copy) from the module cache the patches were read from."""
    go_sum = (vendored.workspace_dir / "go.sum").read_text()
    found = gomod.go_sum_hash(go_sum, versions.KUBERNETES_MODULE, resolution.version)
    return found or toolchain.mod_download(versions.KUBERNETES_MODULE, resolution.version).get("Sum", "")


def _workspace_image(engine: Engine, request: BuildRequest, chosen: builder.Builder,
                     vendored: vendor.Vendored, custom: plugins_stage.Customization) -> workspace_image.WorkspaceImage:
    """The workspace image: local, else from the registry cache (--cache-from), else built."""
    key = workspace_image.image_key(chosen.image, chosen.go_version, vendored.vendor_key, custom.overlays, chosen.identity)
    if request.cache_from and engine.inspect_image(workspace_image.tag_for(key)) is None:
        shared_cache.pull_workspace(engine, request.cache_from, key)
    if request.cache_from:
        shared_cache.seed_gocache(engine, request.cache_from, key, request.gocache_volume)
    image = workspace_image.ensure(engine, chosen.image, chosen.go_version, vendored.vendor_dir, vendored.vendor_key,
                                   custom.overlays, chosen.identity)
    log(f"    {image.tag} ({'cached' if image.cached else 'built'})")
    return image


def _select_builder(engine: Engine, request: BuildRequest, go_version: str, go: toolchain.Toolchain) -> builder.Builder:
    chosen = builder.select(engine, go_version, request.builder_image, request.pull, request.goroot, go)
    log(f"    {chosen.image} (go {chosen.go_version}, {chosen.source})")
    if request.cgo_static and not chosen.has_gcc:
        raise UserError(
            f"--cgo-static needs gcc in the builder, and {chosen.image} has none",
            "provide the official golang image (`docker load`) and set builder.image, or build without --cgo-static",
        )
    return chosen


def _compile(plan: _Plan, out_dir: Path) -> list[str]:
    """go build in the builder, network none, into out_dir; returns the command it ran."""
    request = plan.request
    output: list[str] = []
    detail = f"{plan.package} for {request.goos}/{plan.arch} in {plan.workspace_image.tag}, network none"
    with _timed(plan.phases, "compile", detail), alive("compile") as progress:
        def capture(line: str) -> None:  # packages counted; the rest streamed and kept to map errors to spec fields
            if progress.take(line):
                return
            line = plugins_stage.host_paths(line, plan.custom.plugins_info)  # a local plugin's files: host paths
            output.append(line)
            stream_line(line)

        job = compile_stage.Job(
            workspace=plan.vendored.workspace_dir, vendor=plan.vendored.vendor_dir, out_dir=out_dir,
            gocache_volume=request.gocache_volume, package=plan.package, binary_name=request.component,
            flags=plan.flags, environment=plan.env, overlays=dict(plan.custom.overlays),
            test=False, state_dir=Path(request.cache_dir) / "builds", pgo=request.pgo.path if request.pgo else None,
        )
        image = plan.workspace_image
        if plan.engine.local if request.reuse_builder is None else request.reuse_builder:
            code, argv = warm.run(plan.engine, image.tag, job, image_id=image.image_id, on_line=capture,
                                  idle_seconds=request.builder_idle_seconds, cap=request.builder_cap)
        else:
            code, argv = compile_stage.run(plan.engine, image.tag, job, on_line=capture, image_id=image.image_id)
        plan.phases.update({f"compile.{step}": seconds for step, seconds in job.timings.items()})
        if code != 0:
            _explain_compile_failure(plan, output)
            raise BuildFailed(f"go build of {request.component} {plan.git_version} failed (exit {code}); the compiler output is above")
    return argv


def _explain_compile_failure(plan: _Plan, output: list[str]) -> None:
    """A compiler error on a main.go line a plugin registration produced names that spec field."""
    main_go = plan.vendored.workspace_dir / "main.go"
    found = compile_errors(main_go.read_text(), output) if main_go.is_file() else []
    if found:
        field, message = found[0]
        raise BuildFailed(f"{field}: {message}",
                          "fix that field of the build spec (the compiler output is above)")


def _record(plan: _Plan, argv: list[str], binary: Path, checked: verify.Verified, started: float,
            sha256: str) -> BuildInfo:
    """The build's record (build-info.json), describing the binary as it will be published."""
    request, resolution, chosen, vendored = plan.request, plan.resolution, plan.chosen, plan.vendored
    return BuildInfo(
        scheduler_build=__version__,
        name=request.name or request.component,
        component=request.component,
        platform=f"{request.goos}/{plan.arch}",
        kubernetes=KubernetesInfo(
            requested=request.k8s_version, version=resolution.version, stamped_version=plan.git_version,
            go_version_required=resolution.go_version, staging_replaces=resolution.replaces, module_sum=plan.module_sum,
        ),
        builder=BuilderInfo(image=chosen.image, image_id=chosen.image_id, go_version=chosen.go_version, source=chosen.source,
                            toolchain=chosen.identity),
        vendor=VendorInfo(go_sum_sha256=vendored.go_sum_sha256, key=vendored.vendor_key, cached=vendored.vendor_cached),
        plugins=list(plan.custom.plugins_info),
        patches=list(plan.custom.patches_info),
        flags=FlagsInfo(command=argv, ldflags=plan.flags, env=plan.env, network="none", cgo_static=request.cgo_static),
        source_date_epoch=plan.epoch,
        binary=BinaryInfo(
            path=str(plan.final_dir / request.component), sha256=sha256, size=binary.stat().st_size,
            static=checked.static, elf_type=checked.elf_type, version_output=checked.version_output,
            version_check=checked.version_method,
        ),
        host=HostInfo(machine=platform.machine(), python=platform.python_version()),
        phases_seconds=plan.phases,
        duration_seconds=round(time.monotonic() - started, 3),
        debuggable=request.debuggable.to_dict() if request.debuggable.enabled else {},
        pgo=PgoInfo(**request.pgo.to_dict()) if request.pgo else None,
    )


def run(request: BuildRequest) -> BuildResult:
    started = time.monotonic()
    plan = _plan(request)
    final_dir, component = plan.final_dir, request.component
    final_dir.parent.mkdir(parents=True, exist_ok=True)
    # The pid in the name: `clean` removes a staging directory whose build is gone, never a running one's.
    staging = Path(tempfile.mkdtemp(prefix=staging_prefix(final_dir.name), dir=final_dir.parent))
    try:
        if (final_dir / component).is_file():
            # Seed the output with the last good binary: when nothing changed, the compile finds its
            # build ID current and copies nothing out. A hard link, not a 73 MB copy on every build:
            # nothing writes the seed's inode (a new binary is renamed over it: compile.collect).
            link_or_copy(final_dir / component, staging / component)
        argv = _compile(plan, staging)
        binary = staging / component
        # The record's digest of the binary (73 MB) is taken on another core while verify runs it: hashlib
        # lets go of the GIL, and the two were a fifth of a second end to end on the plugin-edit loop.
        with ThreadPoolExecutor(max_workers=1) as pool:
            digest = pool.submit(sha256_file, binary)
            with _timed(plan.phases, "verify", str(final_dir / component)):
                checked = verify.verify(binary, plan.arch, plan.git_version, allow_dynamic=False)
                if plan.chosen.go_version:  # a configured image may not say which Go it has
                    verify.check_go(binary, plan.chosen.go_version)
                log(f"    static {checked.arch} ELF, {checked.version_method}: {checked.version_output}")
            sha256 = digest.result()
        if request.cache_to:
            with _timed(plan.phases, "cache-to", request.cache_to):
                shared_cache.push_workspace(plan.engine, request.cache_to, plan.workspace_image.key)
                shared_cache.push_gocache(plan.engine, request.cache_to, plan.workspace_image.key, request.gocache_volume)
        info = _record(plan, argv, binary, checked, started, sha256)
        info.write(staging)
        os.chmod(staging, umask_mode(0o777))
        owned.publish_dir(staging, final_dir, info.binary.sha256[:16])
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    log(f"built {final_dir / component} in {info.duration_seconds:.1f}s")
    return BuildResult(binary=final_dir / component, build_info=final_dir / "build-info.json", info=info)

"""The scheduler_perf harness of a spec's build: wrapper test module, vendor, `go test -c`, etcd.

The wrapper is a Go test module on the spec's exact k8s.io/kubernetes version, with the
build's derived staging replaces, its plugins (and patched modules) wired in exactly as
`inv build` wires them (build.plugins), and upstream's `RunBenchmarkPerfScheduling` called
with the spec's plugins in the out-of-tree registry (templates/perf/perf_test.go.j2).
It is tidied and vendored by build.vendor (cached by go.mod and import set) and compiled
in the builder container with no network, sharing Go's build-cache volume with `inv build`
(same -trimpath, tags and environment), so most packages are already compiled. The test
binary is kept under <cache>/perf-harness/<inputs key>/: an unchanged spec compiles nothing,
a plugin edit gives a new key and Go recompiles only what changed.

The debuggable harness (the `debuggable` variant) is the same with the recorder patch after the
spec's own (build/debuggable.py, as `build --debuggable` applies it) and the recorder switched on
with the spec's `debuggable` settings in the test's main: other inputs, so a binary of its own key.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from scheduler_build.engine import connect
from scheduler_build.golang import toolchain
from scheduler_build import platforms
from scheduler_build.build import builder_image as builder
from scheduler_build.build import debuggable as debuggable_mod
from scheduler_build.build import compile as compile_stage
from scheduler_build.build import pgo as pgo_mod
from scheduler_build.build import plugins as plugins_stage
from scheduler_build.build import vendor, workspace_image
from scheduler_build.build.workspace import WRAPPER_MODULE, Workspace
from scheduler_build.errors import BuildFailed
from scheduler_build.progress import alive, log, phase
from scheduler_build.resolve import versions
from scheduler_build.spec import Spec
from scheduler_build.spec.model import Debuggable
from scheduler_build.templating import render

MODULE = WRAPPER_MODULE + "/perf"
BINARY = "perf.test"
KUBERNETES_MODULE = "k8s.io/kubernetes"
UPSTREAM_DIR = "test/integration/scheduler_perf"


@dataclass(frozen=True)
class Harness:
    binary: Path
    kubernetes: str  # exact version, e.g. v1.36.3
    module_dir: Path  # k8s.io/kubernetes's source (module cache): upstream's workload files
    plugin_names: tuple[str, ...]  # the spec's out-of-tree plugins (collected in plugin metrics)
    compiled: bool  # False: the cached binary was reused
    compile_seconds: float
    debuggable: bool = False  # the recorder patched in and on (it takes -sb-record-sizes)
    pgo_sha256: str = ""  # compiled with the PGO profile of this sha256

    @property
    def misc_dir(self) -> Path:
        return self.module_dir / UPSTREAM_DIR / "misc"


def render_workspace(resolution: versions.Resolution, custom: plugins_stage.Customization,
                     debuggable: Debuggable | None = None) -> Workspace:
    """go.mod (the build's wrapper template: staging and local replaces) and perf_test.go. Pure.

    debuggable: the recorder's settings, switched on in the test's main (the recorder patch must be
    among the customization's patches)."""
    context = dict(
        requires=dict(custom.requires), local_replaces=dict(custom.local_replaces), module=MODULE,
        k8s_version=resolution.version, go_version=resolution.go_version, replaces=resolution.replaces,
        component="scheduler_perf", plugins=list(custom.imports), registrations=list(custom.registrations),
        debuggable=debuggable if debuggable is not None and debuggable.enabled else None,
    )
    files = {"go.mod": render("wrapper/go.mod.j2", **context), "perf_test.go": render("perf/perf_test.go.j2", **context)}
    return Workspace(component="scheduler_perf", package=".", files=files)


def inputs_key(vendored: vendor.Vendored, overlays: dict[str, Path], image_id: str, pgo_sha256: str = "") -> str:
    """What the test binary depends on: sources + go.mod/go.sum, vendor tree, plugin snapshots, builder,
    and the PGO profile's bytes when it is compiled with one."""
    text = repr((vendored.workspace_dir.name, vendored.vendor_key, sorted((m, str(p)) for m, p in overlays.items()), image_id))
    if pgo_sha256:
        text += " pgo " + pgo_sha256
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def harness_patches(spec: Spec, cache_dir: Path, debuggable: bool) -> tuple[Path, ...]:
    """The spec's patch series, and for the debuggable harness the recorder patch last (as build applies it)."""
    return tuple(spec.patches) + ((debuggable_mod.recorder_patch(cache_dir),) if debuggable else ())


def prepare(spec: Spec, cache_dir: Path, gocache_volume: str, builder_image: str = "", pull: bool = True,
            check: Callable[[Path], object] = lambda module_dir: None, debuggable: bool = False,
            pgo: pgo_mod.Profile | None = None) -> Harness:
    """The compiled harness for the spec (cached), and where upstream's workload files are.

    check: called with the Kubernetes tree before the compile (e.g. that the workloads exist);
    debuggable: the recorder patched in and on, with the spec's `debuggable` settings;
    pgo: compiled with this CPU profile (`go test -c -pgo`, as `build --pgo` compiles)."""
    cache_dir = Path(cache_dir).resolve()
    with phase("resolve", spec.kubernetes_version):
        resolution = versions.resolve(spec.kubernetes_version, cache_dir)
    custom = plugins_stage.Customization()
    patches = harness_patches(spec, cache_dir, debuggable)
    if spec.plugins or patches:
        with phase("customize", f"{len(spec.plugins)} plugin(s), {len(patches)} patch(es)"
                   + (", the recorder's last" if debuggable else "")):
            custom = plugins_stage.prepare(resolution, spec.plugins, patches, cache_dir)
    module_dir = source_dir(resolution.version, custom.local_replaces, cache_dir)
    check(module_dir)
    go = toolchain.choose(resolution.go_version, what=f"Kubernetes {resolution.version}")  # the host's, else the proxy's
    with phase("vendor", "the harness's wrapper test module"):
        recorder = dataclasses.replace(spec.debuggable, enabled=True) if debuggable else None
        vendored = vendor.prepare(render_workspace(resolution, custom, recorder), cache_dir, go=go.go)
    engine = connect()
    chosen = builder.select(engine, resolution.go_version, builder_image, pull, go=go)
    key = inputs_key(vendored, dict(custom.overlays), chosen.image_id, pgo.sha256 if pgo else "")
    out_dir = cache_dir / "perf-harness" / key
    names = tuple(n for info in custom.plugins_info for n in info.names)
    if (out_dir / BINARY).is_file():
        log(f"    harness {out_dir / BINARY} (cached)")
        return Harness(out_dir / BINARY, resolution.version, module_dir, names, False, 0.0, debuggable,
                       pgo.sha256 if pgo else "")
    out_dir.mkdir(parents=True, exist_ok=True)
    arch = platforms.host_arch()
    job = compile_stage.Job(
        workspace=vendored.workspace_dir, vendor=vendored.vendor_dir, out_dir=out_dir, gocache_volume=gocache_volume,
        package=".", binary_name=BINARY, flags="", environment=compile_stage.build_environment("linux", arch, False, 0),
        overlays=dict(custom.overlays), test=True, state_dir=cache_dir / "builds", pgo=pgo.path if pgo else None,
    )
    image = workspace_image.ensure(engine, chosen.image, chosen.go_version, vendored.vendor_dir, vendored.vendor_key,
                                   custom.overlays, chosen.identity)
    started = time.monotonic()
    with phase("compile", f"go test -c (scheduler_perf {resolution.version}{', -pgo' if pgo else ''}) in {image.tag}, "
               "network none"), \
            alive("compile"):  # minutes cold: a heartbeat every 10 s of silence
        # A container of its own (not the long-lived builder): the harness compiles once per key, and
        # nothing of it keeps running afterwards.
        code, _ = compile_stage.run(engine, image.tag, job)
    if code != 0:
        raise BuildFailed(f"go test -c of the scheduler_perf harness failed (exit {code}); the compiler output is above")
    seconds = round(time.monotonic() - started, 1)
    log(f"    compiled {out_dir / BINARY} in {seconds}s")
    return Harness(out_dir / BINARY, resolution.version, module_dir, names, True, seconds, debuggable,
                   pgo.sha256 if pgo else "")


def source_dir(version: str, local_replaces: dict[str, str], cache_dir: Path) -> Path:
    """k8s.io/kubernetes's tree the harness was compiled from: the patched copy when a patch touched it."""
    relative = local_replaces.get(KUBERNETES_MODULE)
    if relative:  # relative to <cache>/<stage>/<digest>/ (plugins.py)
        return (Path(cache_dir) / "x" / "y" / relative).resolve()
    return toolchain.module_dir(KUBERNETES_MODULE, version)


def executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)

"""The inputs of every build (`build`, image.build's missing platforms, dev.run, the cluster's components)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any


from scheduler_build import platforms, settings
from scheduler_build.build import pgo
from scheduler_build.build.debuggable import Debuggable
from scheduler_build.build.pipeline import BuildRequest
from scheduler_build.errors import UserError
from scheduler_build.inputs.common import cache_dir, load_spec, option
from scheduler_build.inputs.common import source_date_epoch as source_date_epoch_of
from scheduler_build.spec.model import Spec


def build_request(c: Any, *, k8s_version: str | None = None, arch: str | None = None, os: str | None = None,
                  component: str | None = None, name: str | None = None, cgo_static: bool = False,
                  builder_image: str | None = None, no_pull: bool = False, dist: Any = None,
                  source_date_epoch: str | None = None, version_suffix: str | None = None,
                  gocache_volume: str | None = None, cache_from: str | None = None, cache_to: str | None = None,
                  spec: Spec | None = None, debuggable: bool = False, go: str | None = None,
                  pgo_profile: str | None = None) -> BuildRequest:
    """A BuildRequest by the one precedence rule (flag > spec > environment > settings file > default) over
    `k8s.*`, `build.*`, `builder.*`, `paths.dist_dir`, with the spec's plugins and patches when one is given."""
    def spec_value(field: str) -> Any:
        return getattr(spec, field) if spec is not None else None

    component = option(c, "build.component", component)
    request = BuildRequest(
        k8s_version=option(c, "k8s.version", k8s_version, spec_value("kubernetes_version"), "kubernetes.version"),
        component=component,
        name=option(c, "build.name", name, spec_value("name"), "name"),
        goos=option(c, "build.os", os),
        arch=option(c, "build.arch", arch),
        cgo_static=option(c, "build.cgo_static", cgo_static),
        builder_image=option(c, "builder.image", builder_image),
        pull=False if no_pull else option(c, "builder.pull"),
        goroot=option(c, "builder.goroot"),
        go=str(option(c, "builder.go", go) or ""),
        dist_dir=Path(option(c, "paths.dist_dir", dist)),
        cache_dir=cache_dir(c),
        source_date_epoch=source_date_epoch_of(c, source_date_epoch),
        version_suffix=option(c, "build.version_suffix", version_suffix, spec_value("version_suffix"), "versionSuffix"),
        gocache_volume=settings.gocache_volume(option(c, "build.gocache_volume", gocache_volume)),
        reuse_builder={"auto": None, "true": True, "false": False}[str(option(c, "build.reuse_builder")).lower()],
        builder_idle_seconds=int(option(c, "build.builder_idle_timeout")),
        builder_cap=int(option(c, "build.builder_cap")),
        cache_from=option(c, "build.cache_from", cache_from),
        cache_to=option(c, "build.cache_to", cache_to),
        plugin_sources=(), patches=(),
        # docs/explain.md: --debuggable, a spec that enables it, build.debuggable; the spec says what is recorded.
        debuggable=Debuggable(enabled=bool(option(c, "build.debuggable", debuggable,
                                                  True if spec is not None and spec.debuggable.enabled else None,
                                                  "debuggable.enabled"))),
        # the spec's and the setting's profile are kube-scheduler's (not the cluster's API server's); --pgo any one's
        pgo=pgo_decided(c, pgo_profile, spec) if pgo_profile or component == "kube-scheduler" else None,
    )
    return apply_spec(request, spec) if spec is not None else request


def apply_spec(request: BuildRequest, loaded: Spec) -> BuildRequest:
    """The spec's plugins, patches and recorder settings on a request whose values are already decided: whether
    the recorder is on was decided once, above (--debuggable / --no-debuggable, the spec, build.debuggable)."""
    if request.component != "kube-scheduler":
        raise UserError(f"a build spec builds kube-scheduler, not {request.component}", "drop --component or pass --no-spec")
    recorder = dataclasses.replace(loaded.debuggable, enabled=request.debuggable.enabled)
    return dataclasses.replace(request, plugin_sources=tuple(loaded.plugins), patches=tuple(loaded.patches),
                               debuggable=recorder)


def spec_arches(loaded: Spec, all_platforms: bool) -> list[str]:
    """The host's architecture when the spec lists it (or lists none), else its first platform."""
    listed = [platforms.arch_of(p, "platforms") for p in loaded.platforms]
    if all_platforms and listed:
        return listed
    host = platforms.host_arch()
    if not listed or host in listed:
        return [host]
    return [listed[0]]


@dataclass(frozen=True)
class BuildInputs:
    """`inv build`: the spec (None: a plain build), one request per platform, and the cache directory."""

    spec: Spec | None
    requests: tuple[BuildRequest, ...]
    cache_dir: Path


def build_inputs(c: Any, *, spec: str | None = None, no_spec: bool = False, all_platforms: Any = False,
                 arch: str | None = None, **flags: Any) -> BuildInputs:
    """The spec by the one spec load, the platforms (--arch, else the spec's: the host's when it lists it, every
    one with --all-platforms), and each platform's request by `build_request`."""
    loaded = load_spec(c, spec, no_spec, plain_flags=bool(flags.get("k8s_version") or flags.get("component")))
    arches = [option(c, "build.arch", arch)]
    if loaded is not None and not arch:
        arches = spec_arches(loaded, option(c, "build.all_platforms", all_platforms))
    requests = tuple(build_request(c, arch=target_arch, spec=loaded, **flags) for target_arch in arches)
    return BuildInputs(loaded, requests, cache_dir(c))


def pgo_decided(c: Any, flag: str | None, spec: Spec | None) -> pgo.Profile | None:
    """The profile of a profile-guided build (--pgo > the spec's pgo > build.pgo), read and checked now."""
    from_spec = spec.pgo if spec is not None else None
    chosen = option(c, "build.pgo", flag, str(from_spec) if from_spec else None, "pgo")
    if not chosen:
        return None
    where = "--pgo" if flag else f"{spec.path}: pgo" if from_spec else "build.pgo"
    return pgo.load(chosen, where)


def default_request(**given: Any) -> BuildRequest:
    """A BuildRequest of the declared defaults (no settings file or variable read), with `given` fields
    replaced: for benchmarks and tests that drive the build stage directly."""
    return dataclasses.replace(build_request({}), **given)

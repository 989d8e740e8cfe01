"""The inputs of every build (`build`, image.build's missing platforms, dev.run, the cluster's components)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from invoke import Context

from scheduler_build import settings
from scheduler_build.build import from_spec
from scheduler_build.build.debuggable import Debuggable
from scheduler_build.build.pipeline import BuildRequest
from scheduler_build.inputs.common import option
from scheduler_build.spec.model import Spec


def build_request(c: Any, *, k8s_version: str | None = None, arch: str | None = None, os: str | None = None,
                  component: str | None = None, name: str | None = None, cgo_static: bool = False,
                  builder_image: str | None = None, no_pull: bool = False, dist: Any = None,
                  source_date_epoch: str | None = None, version_suffix: str | None = None,
                  gocache_volume: str | None = None, cache_from: str | None = None, cache_to: str | None = None,
                  spec: Spec | None = None, debuggable: bool = False, go: str | None = None) -> BuildRequest:
    """A BuildRequest by the one precedence rule (flag > spec > environment > settings file > default) over
    `k8s.*`, `build.*`, `builder.*`, `paths.dist_dir`, with the spec's plugins and patches when one is given."""
    def spec_value(field: str) -> Any:
        return getattr(spec, field) if spec is not None else None

    request = BuildRequest(
        k8s_version=option(c, "k8s.version", k8s_version, spec_value("kubernetes_version"), "kubernetes.version"),
        component=option(c, "build.component", component),
        name=option(c, "build.name", name, spec_value("name"), "name"),
        goos=option(c, "build.os", os),
        arch=option(c, "build.arch", arch),
        cgo_static=option(c, "build.cgo_static", cgo_static),
        builder_image=option(c, "builder.image", builder_image),
        pull=False if no_pull else option(c, "builder.pull"),
        goroot=option(c, "builder.goroot"),
        go=str(option(c, "builder.go", go) or ""),
        dist_dir=Path(option(c, "paths.dist_dir", dist)),
        cache_dir=settings.cache_dir(c.config if isinstance(c, Context) else c),
        source_date_epoch=str(option(c, "build.source_date_epoch", source_date_epoch) or ""),
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
    )
    return from_spec.apply_spec(request, spec) if spec is not None else request


def default_request(**given: Any) -> BuildRequest:
    """A BuildRequest of the declared defaults (no settings file or variable read), with `given` fields
    replaced: for benchmarks and tests that drive the build stage directly."""
    return dataclasses.replace(build_request({}), **given)

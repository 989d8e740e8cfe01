"""build: compile kube-scheduler (or another component) hermetically in a golang container."""

import json as json_lib
from pathlib import Path

from invoke import Collection, task

from .. import build as build_stage
from .. import settings
from ._common import emit, user_errors


@task(
    default=True,
    help={
        "k8s-version": "Kubernetes version: 1.36, v1.36.2, latest (default: k8s.version)",
        "arch": "target architecture, e.g. amd64 or arm64 (default: build.arch, else the host's)",
        "os": "target OS (default: build.os = linux)",
        "component": "command under k8s.io/kubernetes/cmd to build (default: build.component = kube-scheduler)",
        "name": "dist/<name>/... directory name (default: build.name, else the component)",
        "cgo-static": "link with cgo, -linkmode external -extldflags -static (needs gcc in the builder)",
        "builder-image": "compile in this image instead of the official or bootstrapped golang image",
        "no-pull": "never try pulling the official golang image (default: builder.pull decides)",
        "dist": "output root (default: paths.dist_dir = dist)",
        "source-date-epoch": "build date stamp in seconds (default: $SOURCE_DATE_EPOCH, else the release time)",
        "version-suffix": "appended to the stamped version, e.g. acme.1 -> v1.36.3-acme.1",
        "gocache-volume": "docker volume holding Go's build cache (default: build.gocache_volume)",
        "json": "print build-info.json on stdout instead of the binary path",
    },
)
@user_errors
def build(c, k8s_version=None, arch=None, os=None, component=None, name=None, cgo_static=False,
          builder_image=None, no_pull=False, dist=None, source_date_epoch=None, version_suffix=None,
          gocache_volume=None, json=False):
    """Build a static, version-stamped kube-scheduler in a golang container with no network."""
    cfg = c.config
    request = build_stage.BuildRequest(
        k8s_version=settings.get(cfg, "k8s.version", k8s_version),
        component=settings.get(cfg, "build.component", component),
        name=settings.get(cfg, "build.name", name),
        goos=settings.get(cfg, "build.os", os),
        arch=settings.get(cfg, "build.arch", arch),
        cgo_static=bool(settings.get(cfg, "build.cgo_static", cgo_static or None)),
        builder_image=settings.get(cfg, "builder.image", builder_image),
        pull=False if no_pull else bool(settings.get(cfg, "builder.pull")),
        goroot=settings.get(cfg, "builder.goroot"),
        dist_dir=Path(settings.get(cfg, "paths.dist_dir", dist)),
        cache_dir=settings.cache_dir(cfg),
        source_date_epoch=str(settings.get(cfg, "build.source_date_epoch", source_date_epoch) or ""),
        version_suffix=settings.get(cfg, "build.version_suffix", version_suffix),
        gocache_volume=settings.get(cfg, "build.gocache_volume", gocache_volume),
    )
    result = build_stage.run(request)
    emit(json_lib.dumps(result.info, indent=2, sort_keys=True) if json else str(result.binary))


ns = Collection("build", build)

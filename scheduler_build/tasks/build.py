"""build: compile kube-scheduler (or another component) hermetically in a golang container."""

import json as json_lib
from pathlib import Path

from invoke import Collection, task

from scheduler_build.build import pipeline as build_stage
from scheduler_build import settings
from scheduler_build.build import from_spec as spec_build
from scheduler_build.tasks._common import emit, user_errors


@task(
    default=True,
    auto_shortflags=False,  # with many flags invoke's generated short ones collide (`--, --no-pull`)
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
        "spec": "build spec (plugins, patches, version, suffix); default: buildspec.path = examples/underlay/scheduler.yaml "
                "unless --k8s-version or --component asks for a plain build",
        "no-spec": "plain build: no plugins, no patches, even with buildspec.path set",
        "all-platforms": "with a spec, build every platform it lists (default: the host's, else its first)",
    },
)
@user_errors
def build(c, k8s_version=None, arch=None, os=None, component=None, name=None, cgo_static=False,
          builder_image=None, no_pull=False, dist=None, source_date_epoch=None, version_suffix=None,
          gocache_volume=None, json=False, spec=None, no_spec=False, all_platforms=False):
    """Build a static, version-stamped kube-scheduler in a golang container with no network.

    With a build spec (the default: the bundled example), its out-of-tree plugins and
    patch series are compiled into the same hermetic build.
    """
    cfg = c.config
    loaded = None
    spec_path = spec_build.choose_spec(spec, no_spec, settings.get(cfg, "buildspec.path"), plain_flags=bool(k8s_version or component))
    if spec_path is not None:
        loaded = spec_build.load_spec(spec_path)
    arches = [settings.get(cfg, "build.arch", arch)]
    if loaded is not None and not arch:
        arches = spec_build.spec_arches(loaded, bool(settings.get(cfg, "buildspec.all_platforms", all_platforms or None)))
    results = []
    for target_arch in arches:
        request = _request(c, k8s_version, target_arch, os, component, name, cgo_static, builder_image, no_pull, dist,
                           source_date_epoch, version_suffix, gocache_volume)
        if loaded is not None:
            request = spec_build.apply_spec(request, loaded, k8s_version=k8s_version, name=name, version_suffix=version_suffix)
        results.append(build_stage.run(request))
    if json:
        infos = [r.info for r in results]
        emit(json_lib.dumps(infos[0] if len(infos) == 1 else infos, indent=2, sort_keys=True))
    else:
        emit("\n".join(str(r.binary) for r in results))


def _request(c, k8s_version, arch, os, component, name, cgo_static, builder_image, no_pull, dist,
             source_date_epoch, version_suffix, gocache_volume):
    cfg = c.config
    return build_stage.BuildRequest(
        k8s_version=settings.get(cfg, "k8s.version", k8s_version),
        component=settings.get(cfg, "build.component", component),
        name=settings.get(cfg, "build.name", name),
        goos=settings.get(cfg, "build.os", os),
        arch=arch,
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


@task(
    name="check-patches",
    help={
        "spec": "build spec whose patch series to check (default: buildspec.path)",
        "k8s-version": "check against this Kubernetes version instead of the spec's, e.g. 1.37 before an upgrade",
        "json": "print the per-patch report as JSON",
    },
)
@user_errors
def check_patches(c, spec=None, k8s_version=None, json=False):
    """Dry-run the spec's patch series against a Kubernetes version; nothing is written."""
    spec_path = spec_build.choose_spec(spec, False, settings.get(c.config, "buildspec.path"), plain_flags=False)
    loaded = spec_build.load_spec(spec_path)
    version = k8s_version or loaded.kubernetes_version
    report = spec_build.check_patches(loaded, version, settings.cache_dir(c.config))
    if json:
        emit(json_lib.dumps(report, indent=2, sort_keys=True))
    else:
        lines = [f"kubernetes {report['kubernetes']}: {len(report['patches'])} patch(es) apply cleanly"]
        for entry in report["patches"]:
            moved = [o for o in entry["offsets"] if o]
            lines.append(f"  ok  {entry['file']}  {entry['hunks']} hunk(s) in {len(entry['targets'])} file(s)"
                         + (f", offsets {moved}" if moved else ""))
        emit("\n".join(lines))


ns = Collection("build", build, check_patches)

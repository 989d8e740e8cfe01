"""image: reproducible FROM-scratch images with SBOMs, pushed to a registry by digest."""

import dataclasses
import json as json_lib
from pathlib import Path

from invoke import Collection, task

from scheduler_build import platforms
from scheduler_build.build import pipeline as build_stage
from scheduler_build.image import assemble as image_stage
from scheduler_build.image import request as image_request
from scheduler_build.publish import daemon as daemon_stage
from scheduler_build.publish import registry as registry_stage
from scheduler_build import settings
from scheduler_build.build import from_spec as spec_build
from scheduler_build.errors import UserError
from scheduler_build.progress import phase
from scheduler_build.tasks._common import emit, user_errors


def _options(c, spec, no_spec, k8s_version, platforms, dist, name, version, repository, source_date_epoch, force) -> image_request.Options:
    cfg = c.config
    # The same choice as `inv build`: --spec, else buildspec.path unless --no-spec/--k8s-version.
    chosen = spec_build.choose_spec(spec, no_spec, settings.get(cfg, "buildspec.path"), plain_flags=bool(k8s_version))
    return image_request.Options(
        spec_path=str(chosen) if chosen else "",
        k8s_version=k8s_version or "",
        k8s_default=settings.get(cfg, "k8s.version"),
        platforms=settings.get(cfg, "image.platforms", platforms) or "",
        name=settings.get(cfg, "build.name", name) or "",
        spec_version=settings.get(cfg, "image.version", version) or "",
        repository=settings.get(cfg, "image.repository", repository) or "",
        dist_dir=Path(settings.get(cfg, "paths.dist_dir", dist)),
        cache_dir=settings.cache_dir(cfg),
        source_date_epoch=str(settings.get(cfg, "build.source_date_epoch", source_date_epoch) or ""),
        licenses=settings.get(cfg, "image.licenses"),
        source=settings.get(cfg, "image.source"),
        pull=bool(settings.get(cfg, "builder.pull")),
        force=bool(settings.get(cfg, "image.force", force or None)),
    )


def _build_missing(opts: image_request.Options, plan: image_request.Plan) -> None:
    """`inv build` of every platform dist/ lacks, with the spec's plugins, patches and suffix."""
    for plat, arch in plan.missing():
        with phase("image.binary", f"building {plat} (no binary under {plan.platform_dir(arch)}): {plan.build_command(arch)}"):
            request = build_stage.BuildRequest(
                k8s_version=plan.requested, arch=arch, name=plan.name, dist_dir=Path(opts.dist_dir), cache_dir=opts.cache_dir,
                pull=opts.pull, source_date_epoch=opts.source_date_epoch)
            if plan.spec is not None:
                request = spec_build.apply_spec(request, plan.spec, k8s_version=opts.k8s_version or None, name=plan.name, version_suffix=None)
                request = dataclasses.replace(request, arch=arch)
            build_stage.run(request)


def _plan(opts: image_request.Options) -> image_request.Plan:
    # A module-level helper: the tasks' `platforms` parameter shadows the module.
    return image_request.plan(opts, platforms.host_arch())


def _package(opts: image_request.Options) -> tuple[image_request.ImageRequest, image_stage.ImageResult]:
    """Build the platforms dist/ lacks, then package what it holds and load it into the engine."""
    host = platforms.host_arch()
    _build_missing(opts, _plan(opts))
    request = image_request.prepare(opts, host)
    result = image_stage.build(request, host)
    daemon_stage.publish(result)
    return request, result


COMMON_HELP = {
    "spec": "build spec (name, version, kubernetes.version, platforms, image.repository); default: buildspec.path "
            "unless --no-spec or --k8s-version asks for a plain kube-scheduler",
    "no-spec": "plain kube-scheduler images: no spec, even with buildspec.path set",
    "k8s-version": "Kubernetes version of the binaries under dist/ (default: the spec's, else k8s.version)",
    "platforms": "comma-separated, e.g. linux/amd64,linux/arm64 (default: the spec's, else image.platforms, else the host's)",
    "dist": "output root holding dist/<name>/<k8s-version>/ (default: paths.dist_dir = dist)",
    "name": "dist/<name>/... and the image title (default: the spec's name, else build.name, else kube-scheduler)",
    "version": "the spec version in the tag <k8s-version>-<version> (default: the spec's, else image.version = 0.1.0)",
    "repository": "local image repository (default: the spec's image.repository, else scheduler-build/<name>)",
    "source-date-epoch": "image creation time in seconds (default: $SOURCE_DATE_EPOCH, else the binary's build date)",
}


@task(
    auto_shortflags=False,
    help={
        **COMMON_HELP,
        "force": "rebuild even when an identical image (same inputs) is already present",
        "json": "print the result as JSON instead of one tag per line",
    },
)
@user_errors
def build(c, spec=None, no_spec=False, k8s_version=None, platforms=None, dist=None, name=None, version=None, repository=None,
          source_date_epoch=None, force=False, json=False):
    """Assemble reproducible FROM-scratch images (one per platform), their SPDX SBOMs and an OCI index."""
    opts = _options(c, spec, no_spec, k8s_version, platforms, dist, name, version, repository, source_date_epoch, force)
    with phase("image.build"):
        request, result = _package(opts)
    if json:
        emit(json_lib.dumps(result.as_dict(), indent=2, sort_keys=True))
    else:
        emit("\n".join(f"{request.repository}:{tag}" for tag in result.tags))


@task(
    auto_shortflags=False,
    help={
        **COMMON_HELP,
        "registry": "HOST[:PORT]/REPO to push to (default: registry.url, else the spec's image.repository)",
        "retries": "retries per request on transient failures, with exponential backoff (default: push.retries = 4)",
        "insecure": "allow plain HTTP to a non-loopback registry (loopback registries may always use it)",
        "ca-cert": "CA bundle for the registry's TLS (default: /etc/docker/certs.d/<host:port>/ca.crt, else the system's)",
        "no-build": "push what dist/ holds; do not run image.build first",
        "json": "print the result as JSON instead of one repo@sha256:... line per manifest",
    },
)
@user_errors
def push(c, registry=None, spec=None, no_spec=False, k8s_version=None, platforms=None, dist=None, name=None, version=None,
         repository=None, source_date_epoch=None, retries=None, insecure=False, ca_cert=None, no_build=False, json=False):
    """Push the image index, every platform image and their SBOMs; print each by digest."""
    cfg = c.config
    opts = _options(c, spec, no_spec, k8s_version, platforms, dist, name, version, repository, source_date_epoch, False)
    plan = _plan(opts)
    spec_obj = plan.spec
    if no_build:
        layout = image_stage.layout_dir(opts.dist_dir, plan.name, plan.version)
    else:
        layout = _package(opts)[1].layout
    # Where to: --registry, else registry.url, else the spec's image.repository.
    fallback_repo = spec_obj.image.repository if spec_obj else ""
    target = registry_stage.parse_target(settings.get(cfg, "registry.url", registry) or fallback_repo)
    try:
        retries_n = int(settings.get(cfg, "push.retries", retries))
    except ValueError:
        raise UserError(f"--retries must be a whole number, got {retries!r}", "e.g. --retries 4") from None
    client = registry_stage.Client(
        target=target,
        creds=registry_stage.credentials(target.host),
        ca_cert=settings.get(cfg, "push.ca_cert", ca_cert) or "",
        insecure=bool(settings.get(cfg, "push.insecure", insecure or None)),
        retries=max(0, retries_n),
        backoff=float(settings.get(cfg, "push.backoff")),
    )
    with phase("image.push", target.name):
        pushed = registry_stage.push(layout, client)
    if json:
        emit(json_lib.dumps(pushed.as_dict(), indent=2, sort_keys=True))
    else:
        emit("\n".join(pushed.references))


@task(
    help={
        "tag": "image tag (default: image.extender_tag, else scheduler-build/extender:<toolkit version>)",
        "mirror": "Debian mirror for debootstrap (default: image.debian_mirror = http://deb.debian.org/debian)",
        "force": "rebuild even when the tag exists on the same cached base",
    },
)
@user_errors
def extender(c, tag=None, mirror=None, force=False):
    """The reference extender's image: Python on a debootstrapped Debian base (cached, never pulled), non-root."""
    from scheduler_build import __version__
    from scheduler_build.image import extender as extender_image

    cfg = c.config
    chosen = settings.get(cfg, "image.extender_tag", tag) or f"scheduler-build/extender:{__version__}"
    with phase("image.extender", chosen):
        result = extender_image.build(settings.cache_dir(cfg), chosen, platforms.host_arch(), bool(force),
                                      mirror=settings.get(cfg, "image.debian_mirror", mirror))
    emit(f"{result.tag}")


ns = Collection("image", build, push, extender)

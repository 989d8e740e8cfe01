"""The inputs of image.build / image.push / image.verify --rebuild: one frozen Options, decided once."""

from __future__ import annotations

from pathlib import Path

from scheduler_build.build import debuggable as debuggable_mod
from scheduler_build.errors import UserError
from scheduler_build.image import request as image_request
from scheduler_build.inputs.common import cache_dir, load_spec, option
from scheduler_build.inputs.common import source_date_epoch as source_date_epoch_of
from scheduler_build.platforms import check_dist_name
from scheduler_build.spec.formats import IMAGE_REPO


def _repository(repository: str) -> str:
    """--repository / image.repository: checked before binaries are built for it."""
    if repository and not IMAGE_REPO.match(repository):
        raise UserError(f"--repository {repository!r}: not an image repository",
                        "lower-case, e.g. scheduler-build/kube-scheduler or registry.example.com/acme/kube-scheduler (no tag)")
    return repository


def image_inputs(c, *, spec=None, no_spec=False, k8s_version=None, platforms=None, dist=None, name=None, version=None,
           repository=None, source_date_epoch=None, force=False, debuggable=False) -> image_request.Options:
    """Every value decided once, by the one precedence rule (flag > spec > environment > settings file >
    default), the same as `inv build`'s: image.build finds the binary `inv build` wrote."""
    # The same choice as `inv build`: --spec, else spec.path unless --no-spec/--k8s-version; loaded once.
    loaded = load_spec(c, spec, no_spec, plain_flags=bool(k8s_version))

    def spec_value(get) -> str | None:
        return (get(loaded) or None) if loaded is not None else None

    chosen_name = option(c, "build.name", check_dist_name(name) if name else None, spec_value(lambda s: s.name), "name")
    recorder = bool(option(c, "build.debuggable", debuggable,
                           True if loaded is not None and loaded.debuggable.enabled else None, "debuggable.enabled"))
    spec_version = option(c, "image.version", version, spec_value(lambda s: s.version), "version")
    if recorder:  # beside the release image, never mistaken for it (docs/explain.md)
        chosen_name, spec_version = debuggable_mod.dist_name(chosen_name or "kube-scheduler"), f"{spec_version}-{debuggable_mod.SUFFIX}"
    return image_request.Options(
        spec=loaded,
        k8s_version=option(c, "k8s.version", k8s_version, spec_value(lambda s: s.kubernetes_version), "kubernetes.version"),
        k8s_flag=bool(k8s_version),
        platforms=option(c, "image.platforms", platforms, spec_value(lambda s: ",".join(s.platforms)), "platforms") or "",
        name=chosen_name or "kube-scheduler",
        spec_version=spec_version,
        version_flag=bool(version),
        repository=_repository(option(c, "image.repository", repository,
                                      spec_value(lambda s: s.image.repository), "image.repository") or ""),
        dist_dir=Path(option(c, "paths.dist_dir", dist)),
        cache_dir=cache_dir(c),
        source_date_epoch=source_date_epoch_of(c, source_date_epoch),
        licenses=option(c, "image.licenses"),
        source=option(c, "image.source"),
        force=option(c, "image.force", force),
        debuggable=recorder,
    )

"""The exact Kubernetes release a spec's configuration targets (shared by `config.*` and `deploy`)."""

from __future__ import annotations

from pathlib import Path

from scheduler_build.progress import phase
from scheduler_build.resolve import versions
from scheduler_build.spec import Spec


def kubernetes_release(spec: Spec, override: str | None, cache_dir: Path) -> str:
    """The exact release (v1.36.3) of `override` or else the spec's kubernetes.version.

    An exact version is returned as is; a minor or `latest` is resolved (network, cached under cache_dir).
    """
    requested = override or spec.kubernetes_version
    parsed = versions.parse_request(requested)
    if parsed.exact:
        return parsed.exact
    with phase("resolve", f"Kubernetes {requested}"):
        return versions.resolve(requested, cache_dir).version

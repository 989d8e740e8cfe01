"""The exact Kubernetes release a spec's configuration targets (shared by `config.*` and `deploy`)."""

from __future__ import annotations

from pathlib import Path

from scheduler_build.errors import UserError, WriteError
from scheduler_build.progress import phase
from scheduler_build.resolve import versions
from scheduler_build.spec import Spec


def kubernetes_release(spec: Spec, override: str | None, cache_dir: Path) -> str:
    """The exact release (v1.36.3) of `override` or else the spec's kubernetes.version.

    An exact version is confirmed to exist (cached); a minor or `latest` is resolved (network,
    cached under cache_dir). Errors name where the version came from (flag or spec field).
    """
    requested = override or spec.kubernetes_version
    where = "--k8s-version" if override else f"{spec.path}: kubernetes.version"
    try:
        parsed = versions.parse_request(requested)
        with phase("resolve", f"Kubernetes {requested}"):
            if parsed.exact:  # exists? (cached, offline-friendly)
                return versions.check_exact(requested, cache_dir)
            return versions.resolve(requested, cache_dir).version
    except WriteError as exc:  # the cache directory is at fault, not the version asked for
        raise UserError(exc.message, f"make {cache_dir} writable, or set paths.cache_dir elsewhere") from None
    except UserError as exc:
        raise UserError(f"{where}: {exc.message}", exc.hint) from None

"""The inputs of the release tasks: one frozen record each, decided and checked before any work."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler_build import settings
from scheduler_build.errors import UserError
from scheduler_build.inputs.common import load_spec, option, project_dir
from scheduler_build.spec.model import Spec


@dataclass(frozen=True)
class MatrixInputs:
    spec: Spec
    k8s_versions: str  # comma-separated: --k8s-versions, else the spec's kubernetes.version (then k8s.version)


@dataclass(frozen=True)
class StepImageInputs:
    tag: str | None  # None: the CI step image's own tag (image/ci_step.TAG)
    force: bool
    cache_dir: Path
    project_dir: Path
    mirror: str  # image.debian_mirror: debootstrap's mirror for the step image's base


def matrix_inputs(c: Any, *, spec: str | None = None, k8s_versions: str | None = None) -> MatrixInputs:
    """The spec (the one spec load; none is refused) and the versions by the one precedence rule."""
    loaded = load_spec(c, spec)
    if loaded is None:
        raise UserError("release.matrix: no build spec", "pass --spec PATH or set spec.path")
    versions = k8s_versions or option(c, "k8s.version", None, loaded.kubernetes_version, "kubernetes.version")
    return MatrixInputs(loaded, str(versions))


def step_image_inputs(c: Any, *, tag: str | None = None, force: bool = False) -> StepImageInputs:
    config = c.config if hasattr(c, "config") else c
    return StepImageInputs(tag or None, bool(force), settings.cache_dir(config), project_dir(config),
                           option(c, "image.debian_mirror"))

"""The inputs the config tasks decide before any work: `config.render`'s spec (the one spec load) and where it
writes; `config.validate`'s spec and how it is checked."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler_build import settings
from scheduler_build.errors import UserError
from scheduler_build.inputs.common import load_spec, option
from scheduler_build.progress import phase
from scheduler_build.spec.model import Spec


@dataclass(frozen=True)
class RenderTarget:
    spec: Spec
    out_dir: Path  # --out, else config.out, else <paths.dist_dir>/config/<the spec's name>


def spec_of(c: Any, spec: str | None, what: str) -> Spec:
    """The task's spec by the one spec load; none at all is one line."""
    loaded = load_spec(c, spec)
    if loaded is None:
        raise UserError(f"{what}: no build spec", "pass --spec PATH or set spec.path (`inv init` writes one)")
    return loaded


def render_target(c: Any, *, spec: str | None = None, out: str | None = None) -> RenderTarget:
    loaded = spec_of(c, spec, "config.render")
    out_dir = Path(option(c, "config.out", out) or Path(option(c, "paths.dist_dir")) / "config" / loaded.name)
    return RenderTarget(loaded, out_dir)


@dataclass(frozen=True)
class ValidateInputs:
    """config.validate: the spec (the one spec load) and how it is checked, refused before any check runs."""

    spec: Spec
    spec_path: str  # as the flag or setting names it, for messages
    k8s_version: str | None  # --k8s-version; None: the spec's kubernetes.version
    binary: Path | None  # --binary; None: dist/<name>/<version>/linux-<arch>/kube-scheduler of `inv build --spec`
    fields_only: bool
    write_config_to: Path | None
    require_batching: bool
    runner_image: str  # empty: the newest local scheduler-build/golang:*
    dist_dir: Path
    cache_dir: Path


def validate_inputs(c: Any, *, spec: str | None = None, binary: str | None = None, k8s_version: str | None = None,
                    fields_only: Any = False, write_config_to: str | None = None,
                    require_batching: Any = False) -> ValidateInputs:
    """Every value by the one precedence rule; contradicting flags are refused before the spec is read."""
    only = option(c, "config.fields_only", fields_only)
    if write_config_to and only:  # the binary writes that file: with --fields-only nothing would
        raise UserError("--write-config-to needs the real kube-scheduler's check, which --fields-only skips",
                        "drop one of the two flags")
    if write_config_to and Path(write_config_to).is_dir():
        raise UserError(f"--write-config-to {write_config_to} is a directory", "name a file, e.g. defaulted.yaml")
    spec_path = str(option(c, "spec.path", spec))
    with phase("spec", spec_path):
        loaded = spec_of(c, spec, "config.validate")
    return ValidateInputs(
        spec=loaded, spec_path=spec_path, k8s_version=k8s_version or None, binary=Path(binary) if binary else None, fields_only=only,
        write_config_to=Path(write_config_to) if write_config_to else None,
        require_batching=option(c, "config.require_batching", require_batching),
        runner_image=option(c, "config.runner_image") or "", dist_dir=Path(option(c, "paths.dist_dir")),
        cache_dir=settings.cache_dir(c.config if hasattr(c, "config") else c))

"""The inputs the config tasks decide before any work: `config.render`'s spec (the one spec load) and where it
writes; `config.validate`'s spec and how it is checked."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler_build.errors import UserError
from scheduler_build.inputs.common import cache_dir, load_spec, option
from scheduler_build.progress import phase
from scheduler_build.spec.model import Spec


@dataclass(frozen=True)
class RenderInputs:
    """config.render and config.chart: the spec, where the output goes, and where the image layout and cache are."""

    spec: Spec
    out_dir: Path  # render: --out, else config.out, else <paths.dist_dir>/config/<name>; chart: <dist>/chart/<name>
    dist_dir: Path  # the image layout --pin-digest reads
    cache_dir: Path


def spec_of(c: Any, spec: str | None, what: str) -> Spec:
    """The task's spec by the one spec load; none at all is one line."""
    loaded = load_spec(c, spec)
    if loaded is None:
        raise UserError(f"{what}: no build spec", "pass --spec PATH or set spec.path (`inv init` writes one)")
    return loaded


def render_inputs(c: Any, *, spec: str | None = None, out: str | None = None, dist: str | None = None) -> RenderInputs:
    loaded = spec_of(c, spec, "config.render")
    dist_dir = Path(option(c, "paths.dist_dir", dist))
    out_dir = Path(option(c, "config.out", out) or dist_dir / "config" / loaded.name)
    return RenderInputs(loaded, out_dir, dist_dir, cache_dir(c))


def chart_inputs(c: Any, *, spec: str | None = None, out: str | None = None, dist: str | None = None) -> RenderInputs:
    loaded = spec_of(c, spec, "config.chart")
    dist_dir = Path(option(c, "paths.dist_dir", dist))
    return RenderInputs(loaded, Path(out or dist_dir / "chart" / loaded.name), dist_dir, cache_dir(c))


def spec_path(c: Any, spec: str | None) -> str:
    """The spec a config task names in its messages (--spec, else spec.path), before it is loaded."""
    return str(option(c, "spec.path", spec))


def scheduler_name(c: Any, flag: str | None) -> str:
    """migrate-policy's profile name: --scheduler-name, else config.scheduler_name."""
    return option(c, "config.scheduler_name", flag)


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
                    require_batching: Any = False, dist: str | None = None) -> ValidateInputs:
    """Every value by the one precedence rule; contradicting flags are refused before the spec is read."""
    only = option(c, "config.fields_only", fields_only)
    if write_config_to and only:  # the binary writes that file: with --fields-only nothing would
        raise UserError("--write-config-to needs the real kube-scheduler's check, which --fields-only skips",
                        "drop one of the two flags")
    if write_config_to and Path(write_config_to).is_dir():
        raise UserError(f"--write-config-to {write_config_to} is a directory", "name a file, e.g. defaulted.yaml")
    named = spec_path(c, spec)
    with phase("spec", named):
        loaded = spec_of(c, spec, "config.validate")
    return ValidateInputs(
        spec=loaded, spec_path=named, k8s_version=k8s_version or None, binary=Path(binary) if binary else None, fields_only=only,
        write_config_to=Path(write_config_to) if write_config_to else None,
        require_batching=option(c, "config.require_batching", require_batching),
        runner_image=option(c, "config.runner_image") or "", dist_dir=Path(option(c, "paths.dist_dir", dist)),
        cache_dir=cache_dir(c))

"""The inputs of `deploy`: one frozen record, decided and checked before anything is rendered or applied."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler_build.config import render
from scheduler_build.errors import UserError
from scheduler_build.inputs.common import cache_dir, load_spec, option
from scheduler_build.inputs.explain import required_kubeconfig
from scheduler_build.spec.model import Spec


@dataclass(frozen=True)
class DeployInputs:
    kubeconfig: Path
    context: str  # empty: the kubeconfig's current-context
    directory: Path | None  # a config.render output to apply; None: render `spec` in memory
    spec: Spec | None  # loaded when `directory` is None
    image: str | None  # --image: the scheduler image when rendering; None: the spec's image and tag
    dry_run: bool
    wait: bool
    timeout: float  # seconds
    rotate_certs: bool
    allow_skew: bool  # deploy a scheduler outside Kubernetes' skew policy with the API server
    cache_dir: Path


def deploy_inputs(c: Any, *, kubeconfig: str | None = None, context: str | None = None, dry_run: bool = False,
                  dir: str | None = None, spec: str | None = None, image: str | None = None, no_wait: Any = False,
                  timeout: Any = None, rotate_certs: bool = False, allow_version_skew: Any = False) -> DeployInputs:
    """Every value by the one precedence rule; a missing kubeconfig or spec, or a bad image, is refused here."""
    chosen = required_kubeconfig(c, kubeconfig)
    loaded = None if dir else load_spec(c, spec)
    if not dir and loaded is None:
        raise UserError("deploy: no build spec to render and no --dir", "pass --spec PATH or --dir DIR, or set spec.path")
    return DeployInputs(
        kubeconfig=Path(chosen), context=option(c, "deploy.context", context), directory=Path(dir) if dir else None,
        spec=loaded, image=render.check_image_flag(image) if image else None, dry_run=bool(dry_run),
        wait=not option(c, "deploy.no_wait", no_wait), timeout=float(option(c, "deploy.timeout", timeout)),
        rotate_certs=bool(rotate_certs), allow_skew=option(c, "deploy.allow_version_skew", allow_version_skew),
        cache_dir=cache_dir(c))

"""The inputs `config.render` decides before rendering: the spec (the one spec load) and where it writes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler_build.errors import UserError
from scheduler_build.inputs.common import load_spec, option
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

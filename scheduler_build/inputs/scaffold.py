"""The inputs of `scaffold.plugin` and `init`: the plugin module a scaffold writes, decided before any file is."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler_build import settings
from scheduler_build.errors import UserError
from scheduler_build.inputs.common import cache_dir, option
from scheduler_build.scaffold.generate import ScaffoldRequest


def scaffold_inputs(c: Any, *, name: str, points: str, module: str, k8s_version: str | None, out: str,
                    force: Any = False, tidy: bool = True, dry_run: bool = False) -> ScaffoldRequest:
    """--k8s-version, else scaffold.k8s_version, else k8s.version; --out is required."""
    if not out:
        raise UserError("--out is required", "name a new directory, e.g. --out plugins/underlay")
    version = option(c, "scaffold.k8s_version", k8s_version) or option(c, "k8s.version")
    return ScaffoldRequest(name=name, points=points, module=module, k8s_version=version, out=Path(out),
                           cache_dir=cache_dir(c), force=option(c, "scaffold.force", force), tidy=tidy,
                           dry_run=dry_run)


@dataclass(frozen=True)
class InitInputs:
    """`init`: where the starter spec goes, the version it targets, the cache a plugin's scaffold uses."""

    directory: Path
    spec_file: str  # the file name spec.path's default finds, so the next commands need no --spec
    k8s_version: str
    cache_dir: Path


def init_inputs(c: Any, *, dir: str, k8s_version: str | None) -> InitInputs:
    return InitInputs(Path(dir), Path(settings.default("spec.path")).name, option(c, "k8s.version", k8s_version),
                      cache_dir(c))

"""What `inv build --spec` and `inv build.check-patches` take from a build spec.

Glue between the spec package (loading, validation) and the build stage
(build.pipeline's BuildRequest, build.patches): which spec a build uses, which
platforms, and how the spec's fields fill a BuildRequest (flags still win).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from scheduler_build import platforms
from scheduler_build import spec as spec_mod
from scheduler_build.build import patches
from scheduler_build.build.pipeline import BuildRequest
from scheduler_build.errors import UserError
from scheduler_build.spec.errors import SPEC_HINT
from scheduler_build.resolve import versions


def choose_spec(flag: str | None, no_spec: bool, configured: str | None, plain_flags: bool) -> Path | None:
    """--spec wins; --no-spec, or --k8s-version/--component without --spec, mean a plain build."""
    if flag:
        return Path(flag)
    if no_spec or plain_flags or not configured:
        return None
    return Path(configured)


def load_spec(path: Path) -> spec_mod.Spec:
    """The spec at `path`; a missing file says where it was looked for and how to build without one."""
    if not spec_mod.is_stdin(path) and not Path(path).is_file():
        raise UserError(
            f"build spec {path} not found (relative to {Path.cwd()})",
            f"pass --spec PATH to an existing build spec; {SPEC_HINT}; --no-spec builds a plain kube-scheduler",
        )
    return spec_mod.load(path)


def spec_arches(loaded: spec_mod.Spec, all_platforms: bool) -> list[str]:
    """The host's architecture when the spec lists it (or lists none), else its first platform."""
    listed = [platforms.arch_of(p, "platforms") for p in loaded.platforms]
    if all_platforms and listed:
        return listed
    host = platforms.host_arch()
    if not listed or host in listed:
        return [host]
    return [listed[0]]


def apply_spec(request: BuildRequest, loaded: spec_mod.Spec) -> BuildRequest:
    """The spec's plugins and patches on a request whose values are already decided (settings.decide)."""
    if request.component != "kube-scheduler":
        raise UserError(f"a build spec builds kube-scheduler, not {request.component}", "drop --component or pass --no-spec")
    return dataclasses.replace(request, plugin_sources=tuple(loaded.plugins), patches=tuple(loaded.patches))


@dataclass(frozen=True)
class PatchCheck:
    """`build.check-patches`: the spec's series against one release, applied in memory."""

    spec: Path
    kubernetes: str  # the exact release checked against
    patches: tuple[patches.PatchReport, ...]

    def to_dict(self) -> dict:
        return {"spec": str(self.spec), "kubernetes": self.kubernetes, "patches": [p.to_dict() for p in self.patches]}


def check_patches(loaded: spec_mod.Spec, version: str, cache_dir: Path) -> PatchCheck:
    """Resolve `version` and apply the spec's series in memory; raises PatchConflict on a rejected hunk."""
    resolution = versions.resolve(version, cache_dir)
    applied = patches.apply_series(list(loaded.patches), resolution)
    return PatchCheck(loaded.path, resolution.version, tuple(applied.report))

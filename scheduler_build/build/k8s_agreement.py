"""Version agreement between plugin modules and the target Kubernetes release (pure).

A plugin module's go.mod requires k8s.io/kubernetes and staging modules
(k8s.io/api v0.36.3 stands for Kubernetes v1.36.3). Go's minimal version
selection would silently raise k8s.io/kubernetes to a plugin's newer requirement
while the wrapper keeps the staging modules pinned to the target's: a mixed tree.
So before tidying: a newer patch or minor than the target is an error naming
both versions and the fixes, an older minor a warning (the compile then proves
or refutes it). After tidying, `check_tidied` refuses any tree where
k8s.io/kubernetes is not the target.
"""

from __future__ import annotations

import re

from scheduler_build.errors import UserError
from scheduler_build.resolve import gomod
from scheduler_build.resolve.versions import Resolution

_SEMVER = re.compile(r"^v([01])\.(\d+)\.(\d+)")
KUBERNETES = "k8s.io/kubernetes"


def as_kubernetes(module: str, version: str) -> tuple[int, int] | None:
    """(minor, patch) of Kubernetes a requirement stands for; None for v0.0.0 placeholders and non-releases."""
    match = _SEMVER.match(version)
    if not match:
        return None
    major, minor, patch = (int(g) for g in match.groups())
    if (module == KUBERNETES and major != 1) or (module != KUBERNETES and major != 0) or minor == 0:
        return None
    return minor, patch


def kubernetes_requirements(go_mod_text: str, staging: set[str] | dict) -> list[tuple[str, str, tuple[int, int]]]:
    """(module, version, (minor, patch)) for k8s.io/kubernetes and every staging module the go.mod requires."""
    found = []
    for module, version in sorted(gomod.parse(go_mod_text).requires.items()):
        if module == KUBERNETES or module in staging:
            release = as_kubernetes(module, version)
            if release:
                found.append((module, version, release))
    return found


def check_plugin(label: str, go_mod_text: str, resolution: Resolution) -> list[str]:
    """Raise on a plugin needing a newer Kubernetes than the target; return warnings for an older minor."""
    target = as_kubernetes(KUBERNETES, resolution.version)
    required = kubernetes_requirements(go_mod_text, resolution.replaces)
    if not target or not required:
        return []
    module, version, newest = max(required, key=lambda r: r[2])
    wanted = f"v1.{newest[0]}.{newest[1]}"
    if newest[0] > target[0]:
        raise UserError(
            f"{label} requires {module} {version} (Kubernetes {wanted}), a newer minor than the target {resolution.version}",
            f"set kubernetes.version to \"1.{newest[0]}\", or use a release of the plugin written for {resolution.minor}",
        )
    if newest[0] == target[0] and newest[1] > target[1]:
        raise UserError(
            f"{label} requires {module} {version} (Kubernetes {wanted}), newer than the target {resolution.version}",
            f"raise kubernetes.version to {wanted}, or lower the plugin's go.mod requirement to {resolution.version} or older",
        )
    oldest = min(required, key=lambda r: r[2])
    if oldest[2][0] < target[0]:
        return [f"{label} was written for Kubernetes 1.{oldest[2][0]} ({oldest[0]} {oldest[1]}); "
                f"building it against {resolution.version} (the compile proves or refutes it); "
                f"`inv plugin.retarget --path <its module> --k8s-version {resolution.version}` carries it there "
                "and names each API change"]
    return []


def check_tidied(go_mod_text: str, resolution: Resolution) -> None:
    """The tidied wrapper must require k8s.io/kubernetes at the target itself (staging is pinned by replace)."""
    got = gomod.parse(go_mod_text).requires.get(KUBERNETES)
    if got != resolution.version:
        raise UserError(
            f"go mod tidy selected {KUBERNETES} {got} instead of the target {resolution.version}: "
            "a plugin module's requirement raised it, and the staging modules stay pinned to the target",
            f"raise kubernetes.version to {got}, or lower the plugin's requirement",
        )

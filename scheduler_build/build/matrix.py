"""The release fan-out of a build spec: one build per platform and per Kubernetes version.

`inv release.matrix --json` prints it for a CI system's own matrix (GitHub Actions:
`strategy.matrix: ${{ fromJSON(needs.matrix.outputs.matrix) }}`), so the platform
and version lists live in the spec, not copied into pipeline YAML. The keys are the
flags the jobs pass on: `arch` to `inv build --arch`, `kubernetes` to
`--k8s-version`; the CI system crosses them.
"""

from __future__ import annotations

from scheduler_build import platforms
from scheduler_build import spec as spec_mod
from scheduler_build.errors import UserError
from scheduler_build.resolve import versions as k8s


def release_matrix(loaded: spec_mod.Spec, k8s_versions: str | None = None) -> dict[str, list[str]]:
    """{"arch": [...], "kubernetes": [...]}: the spec's platforms (else the host's) × its version, or `k8s_versions`."""
    arches = [platforms.arch_of(p, f"{loaded.path}: platforms") for p in loaded.platforms] or [platforms.host_arch()]
    versions = _versions(k8s_versions) if k8s_versions else [loaded.kubernetes_version]
    return {"arch": list(dict.fromkeys(arches)), "kubernetes": versions}


def _versions(text: str) -> list[str]:
    """'1.35, 1.36' -> ['1.35', '1.36'] (order kept, duplicates dropped), each a version `inv build` accepts."""
    versions: list[str] = []
    for item in (v.strip() for v in text.split(",")):
        if not item:
            continue
        try:
            k8s.parse_request(item)
        except UserError as err:
            raise UserError(f"--k8s-versions: {err.message}", err.hint) from None
        if item not in versions:
            versions.append(item)
    if not versions:
        raise UserError("--k8s-versions is empty", "e.g. --k8s-versions 1.35,1.36")
    return versions


def table(matrix: dict[str, list[str]]) -> str:
    """One line per job: `linux/<arch>  <kubernetes version>`."""
    return "\n".join(f"{platforms.OS}/{arch}  {version}" for version in matrix["kubernetes"] for arch in matrix["arch"])

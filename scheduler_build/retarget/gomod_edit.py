"""A plugin module's go.mod carried to another Kubernetes release (pure planning; `go mod edit` applies it).

The same derivation as a build of the target: k8s.io/kubernetes at the release, every
staging module it replaces with ./staging/src pinned to v0.N.P (resolve.gomod). Replaces
that point outside the module (a checkout on the author's machine) are dropped and said;
requirements of staging modules the target no longer has are dropped and said.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

from scheduler_build.resolve import gomod
from scheduler_build.resolve.versions import KUBERNETES_MODULE, Resolution, semver_key


@dataclass
class Rewrite:
    flags: list[str] = field(default_factory=list)  # `go mod edit` flags, in order
    notes: list[str] = field(default_factory=list)  # what was dropped, and why


def kubernetes_version_of(mod: gomod.GoMod) -> str | None:
    """The Kubernetes release a module was written for: its k8s.io/kubernetes requirement, else its
    newest k8s.io/* v0.N.P requirement read as v1.N.P; None when it requires neither."""
    required = mod.requires.get(KUBERNETES_MODULE)
    if required and required.startswith("v1.") and not required.startswith("v1.0.0"):
        return required
    staging = [v for m, v in mod.requires.items() if m.startswith("k8s.io/") and v.startswith("v0.")
               and not v.startswith("v0.0.")]
    return "v1." + max(staging, key=lambda v: semver_key("v1." + v[3:]))[3:] if staging else None


def _outside(module_dir: Path, target: str) -> bool:
    resolved = (module_dir / target).resolve() if not Path(target).is_absolute() else Path(target).resolve()
    root = module_dir.resolve()
    return resolved != root and root not in resolved.parents


def plan(mod: gomod.GoMod, module_dir: Path, target: Resolution, old_staging: set[str] | frozenset[str] = frozenset()) -> Rewrite:
    """The edits that make `mod` build against `target`."""
    out = Rewrite()
    new_staging = set(target.replaces)
    kube = {KUBERNETES_MODULE} | new_staging | set(old_staging)
    for old, (new, version) in sorted(mod.replaces.items()):
        if not version and _outside(Path(module_dir), new):
            out.flags.append(f"-dropreplace={old}")
            out.notes.append(f"dropped `replace {old} => {new}`: it points outside the module "
                             f"({'the target pins it' if old in kube else 'vendor or publish that module instead'})")
        elif old in kube and old not in new_staging:
            out.flags.append(f"-dropreplace={old}")
        # A replace the target pins too is rewritten where it stands (`go mod edit -replace` updates the line
        # in place), so a grouped `replace ( ... )` block and its comments keep their layout.
    for module, version in sorted(mod.requires.items()):
        if module == KUBERNETES_MODULE:
            out.flags.append(f"-require={module}@{target.version}")
        elif module in new_staging:
            out.flags.append(f"-require={module}@{target.staging_version}")
        elif module in old_staging:
            out.flags.append(f"-droprequire={module}")
            out.notes.append(f"dropped the requirement {module} {version}: "
                             f"Kubernetes {target.version} has no such staging module")
    if KUBERNETES_MODULE not in mod.requires:
        out.flags.append(f"-require={KUBERNETES_MODULE}@{target.version}")
    for module, version in sorted(target.replaces.items()):
        out.flags.append(f"-replace={module}={module}@{version}")
    if mod.go and semver_key(f"v{_three(mod.go)}") < semver_key(f"v{_three(target.go_version)}"):
        out.flags.append(f"-go={target.go_version}")
    return out


def _three(go: str) -> str:
    parts = (go.split(".") + ["0", "0"])[:3]
    return ".".join(parts)


def unified_diff(old: str, new: str, name: str = "go.mod") -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=f"a/{name}", tofile=f"b/{name}"))

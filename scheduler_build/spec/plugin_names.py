"""The check that needs the target Kubernetes source: every plugin a profile names exists.

Not part of `load` (which never reads Kubernetes sources): `inv config.validate`
calls it with the in-tree names derived from the resolved source.
"""

from __future__ import annotations

from typing import Any

from scheduler_build.spec.checks_registrations import CLASH_HINT, in_tree_clashes
from scheduler_build.spec.errors import SpecError
from scheduler_build.spec.fields import suggest
from scheduler_build.spec.model import Spec


def check_plugin_names(spec: Spec, in_tree: set[str] | frozenset[str], k8s_version: str) -> None:
    """Every plugin a profile names must be in-tree in ``k8s_version`` or one of the spec's own,
    and no name the spec's plugins register may clash with an in-tree one.

    Raises SpecError listing every unknown name with its field path.
    """
    known = set(in_tree) | set(spec.plugin_names)
    errors = [(field, f"{problem}: {CLASH_HINT}") for field, problem in in_tree_clashes(spec.plugins, in_tree, k8s_version)]
    for i, profile in enumerate(spec.profiles):
        base = f"profiles[{i}]"
        for point, plugin_set in (profile.get("plugins") or {}).items():
            for kind in ("enabled", "disabled"):
                for j, entry in enumerate(plugin_set.get(kind) or []):
                    name = entry.get("name")
                    if name == "*" and kind == "disabled":
                        continue
                    if name not in known:
                        errors.append((f"{base}.plugins.{point}.{kind}[{j}].name", _unknown(name, known, k8s_version)))
        for j, entry in enumerate(profile.get("pluginConfig") or []):
            if entry.get("name") not in known:
                errors.append((f"{base}.pluginConfig[{j}].name", _unknown(entry.get("name"), known, k8s_version)))
    if errors:
        raise SpecError(str(spec.path), errors)


def _unknown(name: Any, known: set[str], k8s_version: str) -> str:
    return (f"unknown plugin {name!r}: not in-tree in Kubernetes {k8s_version} "
            f"and not registered by the spec's plugins or patches{suggest(name, known)}")

"""Pure parsing of go.mod text: the parts the build needs (go, require, replace)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_LINE_COMMENT = re.compile(r"//.*$")


@dataclass
class GoMod:
    module: str = ""
    go: str = ""
    toolchain: str = ""
    requires: dict[str, str] = field(default_factory=dict)
    # old path -> (new path, new version or "" for a local directory)
    replaces: dict[str, tuple[str, str]] = field(default_factory=dict)


def parse(text: str) -> GoMod:
    """Parse go.mod text; blocks (`require ( ... )`) and single-line forms alike."""
    mod = GoMod()
    block: str | None = None
    for raw in text.splitlines():
        line = _LINE_COMMENT.sub("", raw).strip()
        if not line:
            continue
        if block:
            if line == ")":
                block = None
                continue
            _directive(mod, block, line)
            continue
        verb, _, rest = line.partition(" ")
        rest = rest.strip()
        if rest == "(":
            block = verb
            continue
        _directive(mod, verb, rest)
    return mod


def _directive(mod: GoMod, verb: str, rest: str) -> None:
    words = rest.split()
    if verb == "module" and words:
        mod.module = words[0].strip('"')
    elif verb == "go" and words:
        mod.go = words[0]
    elif verb == "toolchain" and words:
        mod.toolchain = words[0]
    elif verb == "require" and len(words) >= 2:
        mod.requires[words[0]] = words[1]
    elif verb == "replace" and "=>" in words:
        arrow = words.index("=>")
        old = words[0]
        new = words[arrow + 1 :]
        mod.replaces[old] = (new[0], new[1] if len(new) > 1 else "")


def staging_modules(mod: GoMod) -> list[str]:
    """Modules that k8s.io/kubernetes replaces with its own ./staging/src tree."""
    return sorted(
        old
        for old, (new, version) in mod.replaces.items()
        if not version and new.startswith("./staging/src/")
    )


def staging_version(kubernetes_version: str) -> str:
    """k8s.io/kubernetes v1.36.3 publishes its staging modules as v0.36.3."""
    if not kubernetes_version.startswith("v1."):
        raise ValueError(f"not a Kubernetes 1.x version: {kubernetes_version}")
    return "v0." + kubernetes_version[len("v1.") :]


def staging_replaces(mod: GoMod, kubernetes_version: str) -> dict[str, str]:
    """One `replace k8s.io/x => k8s.io/x v0.N.P` pin per staging module of that version."""
    pin = staging_version(kubernetes_version)
    return {name: pin for name in staging_modules(mod)}


def go_sum_hash(go_sum: str, module: str, version: str) -> str:
    """The `h1:` hash go.sum records for module@version's tree (not its /go.mod line), or "" when absent."""
    for line in go_sum.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == module and parts[1] == version:
            return parts[2]
    return ""

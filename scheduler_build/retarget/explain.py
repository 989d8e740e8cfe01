"""Compile errors beside the API changes that explain them (pure).

A change explains an error when the error line names the changed identifier: the
package-qualified name (`framework.Handle`), the bare name, or a changed method's name
(`missing method Score`). What the plugin uses is read from its source (`alias.Name`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from scheduler_build.build.vendor import go_imports
from scheduler_build.retarget.apidiff import Change

_ERROR = re.compile(r"^(?:\./)?[^\s:]+\.go:\d+(?::\d+)?: ")
_IMPORT_ALIAS = re.compile(r'^\s*(?:import\s+)?([A-Za-z_][A-Za-z0-9_]*|\.)?\s*"([^"]+)"', re.M)
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass
class Explained:
    error: str
    changes: list[Change] = field(default_factory=list)


def compile_errors(output: list[str]) -> list[str]:
    """The `file.go:line:col: message` lines of go build / go vet output."""
    return [line.strip() for line in output if _ERROR.match(line.strip())]


def used_names(sources: list[str], prefix: str = "k8s.io/") -> dict[str, set[str]]:
    """Import path -> the exported names the sources use from it (`alias.Name`), for paths under prefix."""
    used: dict[str, set[str]] = {}
    for text in sources:
        imported = go_imports(text)
        for alias, path in _IMPORT_ALIAS.findall(text):
            if path not in imported or not path.startswith(prefix) or alias in ("_", "."):
                continue
            name = alias or path.rsplit("/", 1)[-1]
            used.setdefault(path, set()).update(re.findall(rf"\b{re.escape(name)}\.([A-Z][A-Za-z0-9_]*)", text))
    return used


def explain(errors: list[str], changes: list[Change]) -> list[Explained]:
    """Each error with the changes whose identifiers it names."""
    out = []
    for error in errors:
        message = _ERROR.sub("", error)
        words = set(WORD.findall(message))
        hits = [c for c in changes if (c.top in words or c.name.rsplit(".", 1)[-1] in words) and c.what != "added"]
        out.append(Explained(error, hits))
    return out


def report(explained: list[Explained], changes: list[Change], old: str, new: str) -> list[str]:
    """The lines printed: each error and its explanation, then every change the plugin meets."""
    lines = []
    for item in explained:
        lines.append(item.error)
        for change in item.changes:
            lines.append(f"    <- {change.line()}")
    if changes:
        lines.append(f"API changes the plugin meets (Kubernetes {old} -> {new}, from apidiff):")
        lines += [f"  {change.line()}" for change in changes]
    return lines

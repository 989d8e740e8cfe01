"""The plugin API changes between two releases, read from both frameworks' sources, and where a plugin meets them.

No compile is needed (a pre-release whose dependencies the proxy refuses still has a readable framework):
resolve.framework_surface of the plugin's release and of the target give every interface's method set;
compared by types (parameter names and the package qualifier set aside), they give

- a method whose signature changed (`Handle.NominatedPodsForNode` gained a `klog.Logger`);
- a method gone and one added with the same signature: a rename (`GetPodGroupSchedulingCycle` ->
  `GetPodGroupCycleState`); otherwise each is said as removed or added;
- an interface added (a new extension point when it is a `<X>Plugin`) or gone; a type whose package moved.

`uses` then names, at file:line of the plugin's sources, each call of a changed, renamed or removed method,
and each plugin-side type that implemented an interface whole (a hand-written fake `Handle`) and lacks a
method the target adds. Pure: surfaces and source texts in, findings out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scheduler_build.resolve.framework_surface import FrameworkSurface
from scheduler_build.scaffold import signatures

_QUALIFIER = re.compile(r"\b(?:fwk|framework)\.")
_RECEIVER_METHOD = re.compile(r"^func\s+\(\s*\w*\s*\*?\s*([A-Za-z_]\w*)\s*\)\s+([A-Z]\w*)\s*\(", re.M)


@dataclass(frozen=True)
class ApiChange:
    interface: str
    method: str  # "" when the change is the interface's (added, removed, moved)
    kind: str  # changed | renamed | removed | added | interface added | interface removed | moved
    before: str = ""
    after: str = ""

    def line(self) -> str:
        name = f"{self.interface}.{self.method}" if self.method else self.interface
        if self.kind == "changed":
            return f"{name}: {self.before} -> {self.after}"
        if self.kind == "renamed":
            return f"{name}: renamed {self.after.split('(')[0]} ({self.after})"
        if self.kind == "moved":
            return f"{name}: moved from {self.before} to {self.after}"
        if self.kind == "interface added":
            point = " (a new extension point)" if self.interface.endswith("Plugin") else ""
            return f"{name}: new interface{point}"
        return f"{name}: {self.kind}" + (f" ({self.after or self.before})" if self.method else "")


def _shape(declaration: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Parameter and result types, unqualified: what a caller or implementer must match."""
    method = signatures.parse(declaration, lambda t: _QUALIFIER.sub("", t))
    return tuple(t for _, t in method.params), method.results


def _by_name(surface: FrameworkSurface, interface: str) -> dict[str, str]:
    return {sig.split("(", 1)[0]: sig for sig in surface.method_set(interface)}


def diff(old: FrameworkSurface, new: FrameworkSurface) -> list[ApiChange]:
    """Every interface change from `old` to `new`, interface by interface (sorted)."""
    out: list[ApiChange] = []
    for interface in sorted(set(old.interfaces) | set(new.interfaces)):
        if interface not in new.interfaces:
            out.append(ApiChange(interface, "", "interface removed"))
            continue
        if interface not in old.interfaces:
            out.append(ApiChange(interface, "", "interface added"))
            continue
        if old.homes.get(interface) and new.homes.get(interface) and old.homes[interface] != new.homes[interface]:
            out.append(ApiChange(interface, "", "moved", old.homes[interface], new.homes[interface]))
        before, after = _by_name(old, interface), _by_name(new, interface)
        for name in sorted(set(before) & set(after)):
            if _shape(before[name]) != _shape(after[name]):
                out.append(ApiChange(interface, name, "changed", before[name], after[name]))
        gone, added = sorted(set(before) - set(after)), sorted(set(after) - set(before))
        for name in gone:
            twin = next((a for a in added if _shape(after[a]) == _shape(before[name])), None)
            if twin:
                added.remove(twin)
                out.append(ApiChange(interface, name, "renamed", before[name], after[twin]))
            else:
                out.append(ApiChange(interface, name, "removed", before[name]))
        out += [ApiChange(interface, name, "added", "", after[name]) for name in added]
    return out


@dataclass(frozen=True)
class Use:
    where: str  # file:line, or the plugin-side type
    change: ApiChange
    text: str

    def line(self) -> str:
        return f"{self.where}: {self.text}"


def uses(sources: dict[str, str], old: FrameworkSurface, new: FrameworkSurface,
         changes: list[ApiChange] | None = None) -> list[Use]:
    """Where the plugin's code meets the changes: calls (file:line), and types that implemented an interface
    whole in `old` (a hand-written fake `Handle`) and lack what the target adds or changed."""
    changes = diff(old, new) if changes is None else changes
    found: list[Use] = []
    called: dict[str, ApiChange] = {}
    for c in changes:  # the first interface declaring it (sorted: Handle before PodNominator)
        if c.kind in ("changed", "renamed", "removed") and c.method:
            called.setdefault(c.method, c)
    if called:
        call = re.compile(r"\.(" + "|".join(map(re.escape, sorted(called))) + r")\(")
        for name, text in sorted(sources.items()):
            for number, line in enumerate(text.splitlines(), 1):
                if line.lstrip().startswith(("//", "func ")):
                    continue
                for method in dict.fromkeys(call.findall(line)):
                    change = called[method]
                    found.append(Use(f"{name}:{number}", change, f"calls {change.line()} in Kubernetes {new.version}"))
    methods: dict[str, set[str]] = {}
    for text in sources.values():
        for receiver, method in _RECEIVER_METHOD.findall(text):
            methods.setdefault(receiver, set()).add(method)
    touched = sorted({c.interface for c in changes if c.method and c.kind != "removed"})
    for receiver, has in sorted(methods.items()):
        for interface in touched:
            before, after = set(_by_name(old, interface)), set(_by_name(new, interface))
            if not before or not before <= has:
                continue
            lacking = sorted((after - has) | {c.method for c in changes if c.interface == interface
                                              and c.kind == "changed" and c.method in has})
            if lacking:
                first = next(c for c in changes if c.interface == interface and c.method)
                found.append(Use(receiver, first, f"implements {interface} of Kubernetes {old.version}; in "
                                                  f"{new.version} it needs {', '.join(lacking)} (new or changed)"))
    return found

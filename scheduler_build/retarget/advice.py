"""What a plugin leaves on the table in its target release: optional interfaces and deprecated names.

Read from the target's framework source (resolve.framework_surface), never from a list:

- an interface the framework asks implementers of another to add ("Plugins that implement
  FilterPlugin should also implement SignPlugin to enable batching optimizations"): when a plugin
  type implements the first and not the second, the advice names it and what it costs, in the
  framework's own words;
- an identifier the framework documents `Deprecated:` that the plugin's code uses through the
  framework package (`fwk.MaxNodeScore`), with the advice that follows `Deprecated:`.

A plugin type is a receiver with a `Name()` method; it implements an interface when it has all of
that interface's own methods. Pure: source texts in, lines out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scheduler_build.resolve.framework_surface import FrameworkSurface

_METHOD = re.compile(r"^func\s+\(\s*\w*\s*\*?\s*([A-Z]\w*)\s*\)\s+([A-Z]\w*)\s*\(", re.M)
_FRAMEWORK_IMPORT = re.compile(r'^\s*(\w+\s+)?"k8s\.io/(?:kube-scheduler/framework|kubernetes/pkg/scheduler/framework)"',
                               re.M)


@dataclass(frozen=True)
class Advice:
    kind: str  # "missing" | "deprecated"
    where: str  # the plugin type, or file:line
    text: str

    def line(self) -> str:
        return f"{self.where}: {self.text}"


def plugin_methods(sources: dict[str, str]) -> dict[str, set[str]]:
    """Receiver type -> its exported methods, for the types that have Name() (plugins)."""
    methods: dict[str, set[str]] = {}
    for text in sources.values():
        for receiver, method in _METHOD.findall(text):
            methods.setdefault(receiver, set()).add(method)
    return {t: m for t, m in methods.items() if "Name" in m}


def missing_interfaces(sources: dict[str, str], surface: FrameworkSurface) -> list[Advice]:
    out: list[Advice] = []
    for plugin, methods in sorted(plugin_methods(sources).items()):
        implemented = [i for i in surface.interfaces
                       if surface.methods.get(i) and set(surface.methods[i]) <= methods]
        wanted: dict[str, list[str]] = {}
        for interface in implemented:
            for extra in surface.wanted_by(interface):
                if extra not in implemented:
                    wanted.setdefault(extra, []).append(interface)
        for extra, because in sorted(wanted.items()):
            cost = surface.purpose.get(extra, "")
            out.append(Advice("missing", plugin, (
                f"implements {', '.join(because)} but not {extra} ({'/'.join(surface.methods.get(extra, ()))})"
                + (f", which the framework asks for to {cost}" if cost else "")
                + (": without it, opportunistic batching is off for every profile that enables this plugin"
                   if extra == "SignPlugin" else ""))))
    return out


def deprecated_uses(sources: dict[str, str], surface: FrameworkSurface) -> list[Advice]:
    out: list[Advice] = []
    for name, text in sorted(sources.items()):
        aliases = {(m.group(1) or "").strip() or "framework" for m in _FRAMEWORK_IMPORT.finditer(text)}
        if not aliases or not surface.deprecated:
            continue
        use = re.compile(r"\b(" + "|".join(map(re.escape, sorted(aliases))) + r")\.([A-Z]\w*)\b")
        for number, line in enumerate(text.splitlines(), 1):
            if line.lstrip().startswith("//"):
                continue
            for alias, ident in use.findall(line):
                if ident in surface.deprecated:
                    out.append(Advice("deprecated", f"{name}:{number}",
                                      f"{alias}.{ident} is deprecated in Kubernetes {surface.version}: "
                                      f"{surface.deprecated[ident]}"))
    return out


def advise(sources: dict[str, str], surface: FrameworkSurface) -> list[Advice]:
    """Everything worth saying about a plugin module's sources (path -> text) against the target."""
    return missing_interfaces(sources, surface) + deprecated_uses(sources, surface)

"""Extension points a target release defines beyond the ones the scaffold has templates for.

A release's extension points are its framework interfaces `<X>Plugin` whose `<x>` is a plugin set
of its configuration API (`plugins.podGroupPostFilter` in 1.37): both read from the release's own
source (resolve.framework_surface, resolve.vocabulary), so a new minor's points need no code
change. `--points` spells them like the templated ones (`podgrouppostfilter`). For these the
scaffold writes each method of the interface (and of the extension interfaces it returns) with
the framework's own signature and zero results: a compiling starting point, not a policy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scheduler_build.resolve.framework_surface import FrameworkSurface

_SIGNATURE = re.compile(r"^(\w+)\((.*?)\)\s*(.*)$")
_EXPORTED = re.compile(r"(?<![\w.])([A-Z]\w*)")


@dataclass(frozen=True)
class GenericPoint:
    key: str  # what --points accepts: podgrouppostfilter
    interface: str  # PodGroupPostFilterPlugin
    config: str  # the profile's plugin set: podGroupPostFilter
    methods: tuple[str, ...]  # Go method declarations, qualified with `fwk.`, bodies included

    @property
    def weighted(self) -> bool:
        """A scoring point (a method returning an int64 score): its config entry needs a weight."""
        return any(") (int64, *fwk.Status) {" in m for m in self.methods)


def available(surface: FrameworkSurface, config_points: tuple[str, ...], templated: tuple[str, ...],
              receiver: str) -> dict[str, GenericPoint]:
    """key -> point, for the release's configurable points the scaffold has no template for."""
    points: dict[str, GenericPoint] = {}
    for interface in surface.interfaces:
        if not interface.endswith("Plugin") or interface == "Plugin":
            continue
        stem = interface[: -len("Plugin")]
        config = stem[:1].lower() + stem[1:]
        key = stem.lower()
        if config not in config_points or key in templated or key in points:
            continue
        points[key] = GenericPoint(key, interface, config, tuple(_methods(surface, interface, receiver)))
    return points


def _methods(surface: FrameworkSurface, interface: str, receiver: str) -> list[str]:
    out: list[str] = []
    for signature in surface.signatures.get(interface, ()):
        match = _SIGNATURE.match(signature)
        if not match:
            continue
        name, params, results = match.groups()
        results = _qualify(results.strip())
        listed = [r.strip() for r in results.strip("()").split(",") if r.strip()] if results else []
        body = _body(name, listed, surface)
        out.append(f"func (pl *{receiver}) {name}({_qualify(params)}) {results} {{\n\t{body}\n}}".replace(" ) {", ") {")
                   .replace(")  {", ") {"))
        for returned in listed:  # an extension interface it returns (PlacementScoreExtensions): implement it too
            bare = returned.removeprefix("fwk.")
            if bare in surface.interfaces and bare != interface and bare.endswith("Extensions"):
                body_self = "return pl"
                out[-1] = f"func (pl *{receiver}) {name}({_qualify(params)}) {results} {{\n\t{body_self}\n}}"
                out.extend(_methods(surface, bare, receiver))
    return out


def _body(name: str, results: list[str], surface: FrameworkSurface) -> str:
    values = [_zero(r, surface) for r in results]
    if values and values[-1] == "nil" and results[-1] == "*fwk.Status" and "PostFilter" in name:
        values[-1] = f'fwk.NewStatus(fwk.Unschedulable, Name+": {name} is a generated stub")'
    return "return " + ", ".join(values) if values else "// generated from the framework's interface: fill in"


def _zero(go_type: str, surface: FrameworkSurface) -> str:
    if go_type.startswith(("*", "[]", "map[", "func", "chan")) or go_type in ("error", "any"):
        return "nil"
    if go_type.removeprefix("fwk.") in surface.interfaces:
        return "nil"
    if re.match(r"^u?int\d*$|^float\d+$", go_type):
        return "0"
    return {"string": '""', "bool": "false"}.get(go_type, f"*new({go_type})")


def _qualify(text: str) -> str:
    """The framework package's own exported names, as the plugin's file spells them (`fwk.Status`)."""
    return _EXPORTED.sub(r"fwk.\1", text)

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
        name, params, results = match.group(1), _qualify(match.group(2)), _qualify(match.group(3).strip())
        listed = [r.strip() for r in results.strip("()").split(",") if r.strip()]
        # An extension interface it returns (PlacementScoreExtensions): the plugin implements it too.
        extensions = [r.removeprefix("fwk.") for r in listed
                      if r.removeprefix("fwk.").endswith("Extensions") and r.removeprefix("fwk.") in surface.interfaces]
        body = "return pl" if extensions and len(listed) == 1 else _body(name, listed, surface)
        head = f"func (pl *{receiver}) {name}({params})" + (f" {results}" if results else "")
        out.append(f"{head} {{\n\t{body}\n}}")
        for extension in extensions:
            if extension != interface:
                out.extend(_methods(surface, extension, receiver))
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

"""What `inv scaffold.plugin` accepts: the plugin's name, its extension points, the module path, --out.

Pure checks that run before anything is resolved or written; each failure is one UserError naming
the flag and the fix. The templated points are listed here in scheduling-cycle order; a target's
other points come from its own framework source (framework_points.py).
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from pathlib import Path

from scheduler_build.errors import UserError
from scheduler_build.resolve.framework_surface import FrameworkSurface

@dataclass(frozen=True)
class Point:
    key: str  # what --points accepts
    interface: str  # the Go interface the plugin asserts (the target's own)
    config: str  # the profile's plugins.<config> set enabling it ("" = not configurable)
    doc: str


# The points the scaffold has templates for, in scheduling-cycle order (generated code and configs follow it),
# with their help text. Each one's interface and plugin set are the target's own (points_of).
POINT_HELP: dict[str, str] = {
    "preenqueue": "gate pods before they enter the active queue",
    "queuesort": "order the scheduling queue (one per scheduler)",
    "prefilter": "pre-compute cycle state; with PreFilterExtensions",
    "filter": "reject nodes that cannot run the pod",
    "postfilter": "react when no node fits (e.g. preemption)",
    "prescore": "pre-compute scoring state",
    "score": "rank feasible nodes; with NormalizeScore",
    "reserve": "Reserve/Unreserve: keep state between scheduling and binding",
    "permit": "approve, deny or delay binding",
    "prebind": "prepare binding (with PreBindPreFlight)",
    "bind": "bind the pod (Skip lets the next binder do it)",
    "postbind": "clean up after a successful bind",
    "enqueueextensions": "queueing hints: which cluster events may make a rejected pod schedulable",
}
POINT_KEYS = tuple(POINT_HELP)


def points_of(surface: FrameworkSurface) -> tuple[Point, ...]:
    """The templated points as the target's framework declares them: the interface `<Key>Plugin` (or the one
    named like the key: EnqueueExtensions), its plugin set the interface's stem in camelCase (none without
    the Plugin suffix). A point the target does not declare is left out."""
    by_lower = {i.lower(): i for i in surface.interfaces}
    found = []
    for key, doc in POINT_HELP.items():
        interface = by_lower.get(key + "plugin") or by_lower.get(key)
        if interface is None:
            continue
        stem = interface.removesuffix("Plugin")
        config = stem[:1].lower() + stem[1:] if interface.endswith("Plugin") else ""
        found.append(Point(key, interface, config, doc))
    return tuple(found)


_ALIASES = {
    "prefilterextensions": "prefilter",
    "normalizescore": "score",
    "unreserve": "reserve",
    "queueinghints": "enqueueextensions",
    "enqueue": "enqueueextensions",
}

_GO_KEYWORDS = {
    "break", "case", "chan", "const", "continue", "default", "defer", "else", "fallthrough", "for",
    "func", "go", "goto", "if", "import", "interface", "map", "package", "range", "return", "select",
    "struct", "switch", "type", "var",
}
_EXPORTED = re.compile(r"^[A-Z][A-Za-z0-9]*$")
# Module path rules from golang.org/x/mod/module.CheckPath, the parts that matter:
# a first element with a dot (a domain), lower-case, elements of [a-z0-9._~-] / [A-Za-z0-9._~-].
_FIRST_ELEMENT = re.compile(r"^[a-z0-9][a-z0-9.-]*\.[a-z0-9.-]*[a-z0-9]$")
_ELEMENT = re.compile(r"^[A-Za-z0-9._~-]+$")



def validate_name(name: str) -> str:
    if not name or not _EXPORTED.match(name) or name.lower() in _GO_KEYWORDS or keyword.iskeyword(name):
        raise UserError(
            f"--name {name!r} is not an exported Go identifier",
            "use CamelCase starting with an upper-case ASCII letter, letters and digits only, e.g. UnderlayIPLimit",
        )
    return name


def parse_points(text: str, extra: tuple[str, ...] = (), target: str = "") -> tuple[str, ...]:
    """Comma-separated, case-insensitive; returned in scheduling-cycle order (then `extra`'s), deduplicated.

    extra: the target's own further points (framework_points.available), accepted as well."""
    known = POINT_KEYS + tuple(k for k in extra if k not in POINT_KEYS)
    wanted: set[str] = set()
    unknown: list[str] = []
    for raw in (text or "").split(","):
        item = raw.strip().lower().replace("-", "").replace("_", "")
        if not item:
            continue
        item = _ALIASES.get(item, item)
        if item in known:
            wanted.add(item)
        else:
            unknown.append(raw.strip())
    where = f" of Kubernetes {target}" if target else ""
    if unknown:
        raise UserError(
            f"unknown extension point(s) in --points: {', '.join(unknown)}",
            f"valid points{where}: " + ", ".join(known),
        )
    if not wanted:
        raise UserError("--points names no extension point", f"valid points{where}: " + ", ".join(known))
    return tuple(k for k in known if k in wanted)


def split_points(text: str) -> tuple[tuple[str, ...], list[str]]:
    """The templated points named (validated) and the other names, left for the target's framework to judge."""
    templated: list[str] = []
    others: list[str] = []
    for raw in (text or "").split(","):
        item = _ALIASES.get(raw.strip().lower().replace("-", "").replace("_", ""), raw.strip().lower())
        (templated if item in POINT_KEYS else others).append(raw.strip())
    return parse_points(",".join(templated)) if templated else (), [o for o in others if o]


def validate_module(module: str) -> str:
    elements = (module or "").split("/")
    bad = (
        not module
        or module != module.strip()
        or not _FIRST_ELEMENT.match(elements[0])
        or any(not _ELEMENT.match(e) or e.startswith(".") or e.endswith(".") for e in elements)
    )
    if bad:
        raise UserError(
            f"--module {module!r} is not a valid Go module path",
            "start with a lower-case domain and use letters, digits and ._~- in each element, e.g. example.com/acme/underlay",
        )
    return module


def check_out_dir(out: Path, force: bool) -> None:
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} exists and is not a directory", "choose a new directory")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise UserError(f"--out {out} is not empty",
                        "choose a new directory, or pass --force to replace the files an earlier scaffold wrote")

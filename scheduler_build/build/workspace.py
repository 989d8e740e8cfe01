"""The wrapper Go module: its files rendered from templates/wrapper/ (pure), kept per their inputs in the
cache when asked (a plugin edit leaves them all alone, so its build renders nothing).

Every plugin import and `app.WithPlugin` line of main.go ends with a comment
naming the build-spec field that produced it (`// plugins[0].register[1].factory`),
so `compile_errors` can turn the compiler's `./main.go:L:C: msg` into an error
about that field.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from scheduler_build.build.debuggable import Debuggable
from scheduler_build.resolve.versions import Resolution
from scheduler_build.atomic import write_atomic
from scheduler_build.templating import render, source

WRAPPER_MODULE = "scheduler-build.local/wrapper"
RENDERED_FORMAT = "rendered-wrapper/1"  # bumped when what a kept rendering holds changes


@dataclass(frozen=True)
class PluginImport:
    package: str  # Go import path of the plugin package
    alias: str  # Go identifier used in main.go; "_" for an import for side effects only
    field: str = ""  # the spec field that asked for it


@dataclass(frozen=True)
class WrapperRegistration:
    """`app.WithPlugin(<name_expr>, <alias>.<factory>)`."""

    name_expr: str  # a Go string literal, or `<alias>.Name` (the short form)
    alias: str
    factory: str
    field: str = ""

    @classmethod
    def of(cls, name: str, alias: str, factory: str, field: str, name_ident: str = "") -> "WrapperRegistration":
        expr = f"{alias}.{name_ident}" if name_ident else json.dumps(name)  # a JSON string is a valid Go literal here
        return cls(name_expr=expr, alias=alias, factory=factory, field=field)


@dataclass
class Workspace:
    component: str
    package: str  # what `go build` compiles
    files: dict[str, str] = field(default_factory=dict)

    def digest(self) -> str:
        h = hashlib.sha256()
        for name in sorted(self.files):
            h.update(name.encode() + b"\0" + self.files[name].encode() + b"\0")
        return h.hexdigest()


def render_wrapper(
    resolution: Resolution,
    component: str = "kube-scheduler",
    plugins: tuple[PluginImport, ...] = (),
    requires: dict[str, str] | None = None,
    local_replaces: dict[str, str] | None = None,
    registrations: tuple[WrapperRegistration, ...] = (),
    debuggable: Debuggable | None = None,
    cache_root: Path | None = None,
) -> Workspace:
    """requires: extra module -> version; local_replaces: module -> directory (plugins.py);
    debuggable: the recorder's settings, compiled into main.go (build/debuggable.py).
    cache_root: keep the rendering under <cache>/src/rendered/, keyed by the templates' text and every
    value they read, and reuse it: a plugin edit keeps all of them, and renders (and imports Jinja) no more."""
    context = dict(
        requires=dict(requires or {}),
        local_replaces=dict(local_replaces or {}),
        module=WRAPPER_MODULE,
        k8s_version=resolution.version,
        go_version=resolution.go_version,
        replaces=resolution.replaces,
        component=component,
        plugins=list(plugins),
        registrations=list(registrations),
        debuggable=debuggable if debuggable is not None and debuggable.enabled else None,
    )
    if component == "kube-scheduler":
        templates, package = {"go.mod": "wrapper/go.mod.j2", "main.go": "wrapper/main.go.j2"}, "."
    else:
        if plugins or registrations or (debuggable is not None and debuggable.enabled):
            raise ValueError("plugins only apply to kube-scheduler")
        templates = {"go.mod": "wrapper/go.mod.j2", "tools.go": "wrapper/tools.go.j2"}
        package = f"k8s.io/kubernetes/cmd/{component}"
    kept = _rendered_path(Path(cache_root), templates, context) if cache_root is not None else None
    files = _read_rendered(kept, set(templates)) if kept is not None else None
    if files is None:
        files = {name: render(template, **context) for name, template in templates.items()}
        if kept is not None:
            kept.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(kept, json.dumps(files, sort_keys=True))
    return Workspace(component=component, package=package, files=files)


def _rendered_path(cache_root: Path, templates: dict[str, str], context: dict) -> Path:
    """Where a rendering is kept: keyed by each template's text and the context, as JSON (pure data)."""
    digest = hashlib.sha256(RENDERED_FORMAT.encode())
    for name, template in sorted(templates.items()):
        digest.update(f"\0{name}\0{template}\0".encode() + source(template).encode())
    digest.update(json.dumps(context, sort_keys=True, default=dataclasses.asdict).encode())
    return cache_root / "src" / "rendered" / f"{digest.hexdigest()[:32]}.json"


def _read_rendered(path: Path, names: set[str]) -> dict[str, str] | None:
    """A kept rendering, or None (none yet, unreadable, or not the files asked for: rendered again)."""
    try:
        files = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    ok = isinstance(files, dict) and set(files) == names and all(isinstance(v, str) for v in files.values())
    return files if ok else None


_COMPILER_LINE = re.compile(r"^(?:\./)?main\.go:(\d+):(?:\d+:)?\s*(.*)$")
_FIELD_COMMENT = re.compile(r"//\s*(plugins\[\d+\]\S*)\s*$")


def compile_errors(main_go: str, output_lines: list[str]) -> list[tuple[str, str]]:
    """(spec field, compiler message) for each compiler error on a line a spec field produced."""
    fields = {}
    for number, line in enumerate(main_go.splitlines(), start=1):
        match = _FIELD_COMMENT.search(line)
        if match:
            fields[number] = match.group(1)
    found: list[tuple[str, str]] = []
    for raw in output_lines:
        match = _COMPILER_LINE.match(raw.strip())
        if match and int(match.group(1)) in fields:
            found.append((fields[int(match.group(1))], f"main.go:{match.group(1)}: {match.group(2)}"))
    return found

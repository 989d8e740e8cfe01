"""The wrapper Go module: pure rendering of its files from templates/wrapper/."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from scheduler_build.resolve.versions import Resolution
from scheduler_build.templating import render

WRAPPER_MODULE = "scheduler-build.local/wrapper"


@dataclass(frozen=True)
class PluginImport:
    package: str  # Go import path of the plugin package
    alias: str  # Go identifier used in main.go


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
) -> Workspace:
    """requires: extra module -> version; local_replaces: module -> directory (plugins.py)."""
    context = dict(
        requires=dict(requires or {}),
        local_replaces=dict(local_replaces or {}),
        module=WRAPPER_MODULE,
        k8s_version=resolution.version,
        go_version=resolution.go_version,
        replaces=resolution.replaces,
        component=component,
        plugins=list(plugins),
    )
    files = {"go.mod": render("wrapper/go.mod.j2", **context)}
    if component == "kube-scheduler":
        files["main.go"] = render("wrapper/main.go.j2", **context)
        package = "."
    else:
        if plugins:
            raise ValueError("plugins only apply to kube-scheduler")
        files["tools.go"] = render("wrapper/tools.go.j2", **context)
        package = f"k8s.io/kubernetes/cmd/{component}"
    return Workspace(component=component, package=package, files=files)

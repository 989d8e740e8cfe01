"""Out-of-tree plugins and patches -> what the wrapper module needs to compile them.

A local plugin (a directory holding a Go module) is wired in with `require` +
`replace` to a copy keyed by its shape (go.mod, go.sum, import set), and its
content snapshot is mounted over vendor/<module> in the compile (snapshot.py):
an edit that keeps the shape re-runs neither tidy nor vendor, and the build
reads the snapshot, not a tree that may change while it runs. A `module@version` plugin is a plain `require` resolved
through the Go module proxy. Patched modules (patches.py) are wired in the same
way. Replace paths are relative (`../../patched/...`): the wrapper's go.mod sits
two levels below the cache root both when tidying and when vendoring, and a
relative path keeps the recorded build info free of the machine's cache path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from scheduler_build.build import patches as patches_mod
from scheduler_build.build import snapshot
from scheduler_build.build.info import PatchInfo, PluginInfo
from scheduler_build.errors import UserError
from scheduler_build.resolve.versions import Resolution
from scheduler_build.progress import log
from scheduler_build.build.workspace import PluginImport
from scheduler_build.spec import PluginSource

# A local module's placeholder version in the wrapper's require line.
LOCAL_VERSION = "v0.0.0-00010101000000-000000000000"


@dataclass
class Customization:
    imports: tuple[PluginImport, ...] = ()
    requires: dict[str, str] = field(default_factory=dict)  # module -> version
    local_replaces: dict[str, str] = field(default_factory=dict)  # module -> relative dir
    plugins_info: list[PluginInfo] = field(default_factory=list)
    patches_info: list[PatchInfo] = field(default_factory=list)
    overlays: dict[str, Path] = field(default_factory=dict)  # local module -> content snapshot (snapshot.py)


def read_module(directory: Path) -> str:
    gomod = directory / "go.mod"
    if not gomod.is_file():
        raise UserError(f"plugin directory {directory} has no go.mod", "a local plugin must be a Go module (go mod init <path>)")
    match = re.search(r"(?m)^module\s+(\S+)", gomod.read_text(encoding="utf-8", errors="replace"))
    if not match:
        raise UserError(f"{gomod} has no module line", "add `module <path>` to it")
    return match.group(1).strip('"')


_EXPORTS_NAME = re.compile(r"(?m)^\s*(?:const\s+)?Name\s*(?:string\s*)?=")
_EXPORTS_NEW = re.compile(r"(?m)^func\s+New\s*\(")


def check_local_package(directory: Path, module: str, package: str) -> None:
    """The package exists in the module and exports Name and New, which main.go registers.

    A cheap source check so a typo fails in a second, not after tidy, vendor and compile.
    """
    rel = package[len(module):].lstrip("/")
    pkg_dir = directory / rel
    sources = [p for p in sorted(pkg_dir.glob("*.go")) if not p.name.endswith("_test.go")] if pkg_dir.is_dir() else []
    if not sources:
        raise UserError(f"plugin package {package} has no Go files at {pkg_dir}", "check plugins[].package in the build spec")
    text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in sources)
    missing = [ident for ident, pattern in (("Name", _EXPORTS_NAME), ("New", _EXPORTS_NEW)) if not pattern.search(text)]
    if missing:
        raise UserError(
            f"plugin package {package} does not export {' and '.join(missing)}",
            "the build registers app.WithPlugin(<pkg>.Name, <pkg>.New); `inv scaffold.plugin` generates both",
        )


def _alias(package: str, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_]", "_", package.rsplit("/", 1)[-1]).lower() or "plugin"
    if base[0].isdigit():
        base = "p" + base
    alias, n = base, 2
    while alias in taken or alias in ("app", "cli", "os", "main"):
        alias, n = f"{base}{n}", n + 1
    taken.add(alias)
    return alias


def _wire_plugin(plugin: PluginSource, cache_root: Path, custom: Customization) -> PluginInfo:
    """Require (and for a local module, snapshot and replace) one plugin's module."""
    info = PluginInfo(package=plugin.package, names=list(plugin.names))
    if plugin.path is not None:
        directory = Path(plugin.path)
        module = plugin.module or read_module(directory)
        if not (plugin.package == module or plugin.package.startswith(module + "/")):
            raise UserError(f"plugin package {plugin.package} is not inside module {module} ({directory})", "package must start with the module path")
        check_local_package(directory, module, plugin.package)
        local = snapshot.snapshot(directory, module, cache_root)
        digest = local.digest
        custom.requires[module] = LOCAL_VERSION
        custom.local_replaces[module] = local.replace_path
        custom.overlays[module] = local.content_dir
        info.source, info.path, info.module, info.sha256 = "path", str(directory), module, digest
        log(f"    plugin {plugin.package} from {directory} (sha256 {digest[:12]})")
    else:
        custom.requires[plugin.module] = plugin.version
        info.source, info.module, info.version = "module", plugin.module, plugin.version
        log(f"    plugin {plugin.package} from {plugin.module}@{plugin.version}")
    return info


def prepare(
    resolution: Resolution,
    plugins: Iterable[PluginSource],
    patch_paths: Iterable[Path],
    cache_root: Path,
    component: str = "kube-scheduler",
) -> Customization:
    """Snapshot local plugins, apply the patch series, and describe both for the wrapper."""
    plugins = list(plugins)
    patch_paths = [Path(p) for p in patch_paths]
    custom = Customization()
    if plugins and component != "kube-scheduler":
        raise UserError(f"plugins only apply to kube-scheduler, not {component}", "drop the plugins or build kube-scheduler")
    taken: set[str] = set()
    imports: list[PluginImport] = []
    for plugin in plugins:
        custom.plugins_info.append(_wire_plugin(plugin, cache_root, custom))
        imports.append(PluginImport(package=plugin.package, alias=_alias(plugin.package, taken)))
    custom.imports = tuple(imports)
    if patch_paths:
        done = patches_mod.materialize(patch_paths, resolution, cache_root)
        for module in sorted(done.modules):
            custom.local_replaces[module] = f"../../patched/{done.root.name}/{patches_mod.module_slug(module)}"
        custom.patches_info = [PatchInfo(file=r["file"], sha256=r["sha256"], targets=r["targets"]) for r in done.report]
        log(f"    {len(patch_paths)} patch(es) applied to {', '.join(sorted(done.modules))}")
    return custom

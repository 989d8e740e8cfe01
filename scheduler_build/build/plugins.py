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
from typing import Callable, Iterable

from scheduler_build.golang import toolchain
from scheduler_build.build import k8s_agreement as agreement
from scheduler_build.build import patches as patches_mod
from scheduler_build.build import snapshot
from scheduler_build.build.info import PatchInfo, PluginInfo
from scheduler_build.build.workspace import PluginImport, WrapperRegistration
from scheduler_build.resolve import intree
from scheduler_build.errors import UserError
from scheduler_build.progress import log
from scheduler_build.resolve.versions import Resolution
from scheduler_build.spec import PluginSource
from scheduler_build.spec import checks_registrations as registrations

# A local module's placeholder version in the wrapper's require line.
LOCAL_VERSION = "v0.0.0-00010101000000-000000000000"


@dataclass
class Customization:
    imports: tuple[PluginImport, ...] = ()
    registrations: tuple[WrapperRegistration, ...] = ()
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


def _package_sources(directory: Path, module: str, package: str, field: str) -> str:
    """The non-test Go sources of a package inside a local module, joined; raise naming the field when none."""
    pkg_dir = directory / package[len(module):].lstrip("/")
    sources = [p for p in sorted(pkg_dir.glob("*.go")) if not p.name.endswith("_test.go")] if pkg_dir.is_dir() else []
    if not sources:
        raise UserError(f"{field}: package {package} has no Go files at {pkg_dir}",
                        "name a package of the module (its import path)")
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in sources)


def _declares(text: str, ident: str) -> bool:
    """A top-level func, var or const named `ident` (a cheap check; the compile proves the type)."""
    name = re.escape(ident)
    return bool(re.search(rf"(?m)^func\s+{name}\s*[\[(]", text)
                or re.search(rf"(?m)^(?:var|const)\s+{name}\b", text)
                or re.search(rf"(?ms)^(?:var|const)\s*\((?:(?!^\)).)*?^\s*{name}\b", text))


def check_local_plugin(directory: Path, module: str, plugin: PluginSource) -> None:
    """Every package an entry names exists in the module's source and declares what main.go uses.

    A cheap source check so a typo fails in a second, naming the spec field, not after
    tidy, vendor and compile; the compile still proves each factory's signature.
    """
    for reg in plugin.registrations:
        if reg.name_ident:  # the short form: plugins[i].package exports Name and New
            wanted, field = [reg.name_ident, reg.factory], reg.field
            hint = ("the short form registers app.WithPlugin(<pkg>.Name, <pkg>.New) (`inv scaffold.plugin` generates both); "
                    "for other identifiers list the plugin under register: [{name, factory}]")
            text = _package_sources(directory, module, reg.package, field)
        else:
            wanted, field = [reg.factory], f"{reg.field}.factory"
            hint = f"check the spelling: an exported constructor declared in {reg.package}"
            text = _package_sources(directory, module, reg.package, f"{reg.field}.package")
        missing = [ident for ident in wanted if not _declares(text, ident)]
        if missing:
            raise UserError(f"{field}: package {reg.package} does not export {' and '.join(missing)}", hint)
    for k, package in enumerate(plugin.imports):
        _package_sources(directory, module, package, f"{plugin.field}.imports[{k}]")


def check_local_package(directory: Path, module: str, package: str) -> None:
    """The short form's check alone: `package` exists in the module and exports Name and New."""
    check_local_plugin(directory, module, PluginSource(package=package, names=("X",), field="plugins[?]"))


def _alias(package: str, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_]", "_", package.rsplit("/", 1)[-1]).lower() or "plugin"
    if base[0].isdigit():
        base = "p" + base
    alias, n = base, 2
    while alias in taken or alias in ("app", "cli", "os", "main"):
        alias, n = f"{base}{n}", n + 1
    taken.add(alias)
    return alias


def module_source(plugin: PluginSource) -> Path:
    """The plugin module's root: its local directory, or its copy in the Go module cache (via the proxy)."""
    if plugin.path is not None:
        return Path(plugin.path)
    return Path(toolchain.mod_download(plugin.module, plugin.version)["Dir"])


def _wire_plugin(plugin: PluginSource, resolution: Resolution, cache_root: Path, custom: Customization,
                 source_of: Callable[[PluginSource], Path]) -> PluginInfo:
    """Check, then require (and for a local module, snapshot and replace) one plugin's module."""
    info = PluginInfo(package=plugin.package or plugin.module, names=list(plugin.plugin_names))
    directory = source_of(plugin)
    module = plugin.module or read_module(directory)
    outside = [p for p in [r.package for r in plugin.registrations] + list(plugin.imports)
               if not (p == module or p.startswith(module + "/"))]
    if outside:
        raise UserError(f"plugin package {outside[0]} is not inside module {module} ({directory})", "package must start with the module path")
    check_local_plugin(directory, module, plugin)
    go_mod = (directory / "go.mod").read_text(encoding="utf-8", errors="replace") if (directory / "go.mod").is_file() else ""
    for warning in agreement.check_plugin(f"{plugin.field or 'plugin'} ({module})", go_mod, resolution):
        log(f"    warning: {warning}")
    if plugin.path is not None:
        local = snapshot.snapshot(directory, module, cache_root)
        digest = local.digest
        custom.requires[module] = LOCAL_VERSION
        custom.local_replaces[module] = local.replace_path
        custom.overlays[module] = local.content_dir
        info.source, info.path, info.module, info.sha256 = "path", str(directory), module, digest
        log(f"    plugin {module} from {directory} (sha256 {digest[:12]})")
    else:
        custom.requires[plugin.module] = plugin.version
        info.source, info.module, info.version = "module", plugin.module, plugin.version
        log(f"    plugin {plugin.module}@{plugin.version}")
    return info


def _main_go_lines(plugins: list[PluginSource], custom: Customization) -> None:
    """main.go's imports (one unique alias per package) and WithPlugin lines, each naming its spec field."""
    taken: set[str] = set()
    aliases: dict[str, str] = {}
    imports: list[PluginImport] = []
    registrations: list[WrapperRegistration] = []
    for plugin in plugins:
        for reg in plugin.registrations:
            if reg.package not in aliases:
                aliases[reg.package] = _alias(reg.package, taken)
                field = reg.field if reg.name_ident else f"{reg.field}.package"
                imports.append(PluginImport(package=reg.package, alias=aliases[reg.package], field=field))
            field = reg.field if reg.name_ident else f"{reg.field}.factory"
            registrations.append(WrapperRegistration.of(reg.name, aliases[reg.package], reg.factory, field, reg.name_ident))
    for plugin in plugins:
        for k, package in enumerate(plugin.imports):
            if package not in aliases:
                aliases[package] = "_"
                imports.append(PluginImport(package=package, alias="_", field=f"{plugin.field}.imports[{k}]"))
    custom.imports, custom.registrations = tuple(imports), tuple(registrations)


def prepare(
    resolution: Resolution,
    plugins: Iterable[PluginSource],
    patch_paths: Iterable[Path],
    cache_root: Path,
    component: str = "kube-scheduler",
    in_tree: frozenset[str] | None = None,
    source_of: Callable[[PluginSource], Path] = module_source,
) -> Customization:
    """Check and snapshot plugins, apply the patch series, and describe both for the wrapper.

    in_tree: the target's in-tree plugin names (default: read from its source);
    source_of: a plugin module's root directory (default: its path, or its download through the proxy).
    """
    plugins = list(plugins)
    patch_paths = [Path(p) for p in patch_paths]
    custom = Customization()
    if plugins and component != "kube-scheduler":
        raise UserError(f"plugins only apply to kube-scheduler, not {component}", "drop the plugins or build kube-scheduler")
    if plugins:
        names = in_tree if in_tree is not None else intree.in_tree_plugins(resolution.version, cache_root)
        registrations.check_in_tree(plugins, names, resolution.version)
    for plugin in plugins:
        custom.plugins_info.append(_wire_plugin(plugin, resolution, cache_root, custom, source_of))
    _main_go_lines(plugins, custom)
    if patch_paths:
        done = patches_mod.materialize(patch_paths, resolution, cache_root)
        for module in sorted(done.modules):
            custom.local_replaces[module] = f"../../patched/{done.root.name}/{patches_mod.module_slug(module)}"
        custom.patches_info = [PatchInfo(file=r.file, sha256=r.sha256, targets=list(r.targets)) for r in done.report]
        log(f"    {len(patch_paths)} patch(es) applied to {', '.join(sorted(done.modules))}")
    return custom


def host_paths(line: str, plugins_info: list[PluginInfo]) -> str:
    """A compiler line that names a local plugin's file where the builder sees it (`vendor/<module>/x.go:89:19`,
    a path that exists nowhere on this host) names it in the plugin's own directory, so an editor can jump there."""
    for info in plugins_info:
        if info.source == "path" and info.path and info.module:
            place = re.compile(r"(?:(?<=^)|(?<=[\s(\"']))(?:/src/|\./)?vendor/" + re.escape(info.module) + "/")
            line = place.sub(lambda _: info.path.rstrip("/") + "/", line)
    return line

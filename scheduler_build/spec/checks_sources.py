"""What the build compiles: out-of-tree plugins, patches against the tree, target platforms."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from scheduler_build import platforms
from scheduler_build.spec.fields import Fields, show
from scheduler_build.spec import checks_registrations as regs
from scheduler_build.spec.formats import GO_IMPORT_PATH, GO_MODULE_VERSION
from scheduler_build.spec.model import PluginSource


def check_plugins(f: Fields, value: Any, base_dir: Path, check_files: bool) -> list[PluginSource]:
    out: list[PluginSource] = []
    if value is None or f.seq("plugins", value) is None:
        return out
    seen_names: dict[str, str] = {}  # plugin name -> the field registering it
    for i, item in enumerate(value):
        p = f"plugins[{i}]"
        if f.mapping(p, item, ("path", "module", "version", "package", "names", "register", "imports")) is None:
            continue
        local, module, version = _source(f, p, item, base_dir, check_files)
        package = _package(f, p, item, module)
        names = regs.check_names(f, p, item, seen_names)
        if item.get("names") is not None and item.get("package") is None:
            f.err(f"{p}.package", "is required with names (the package exporting Name and New)")
        if item.get("names") is None and item.get("register") is None:
            f.err(p, "registers nothing: give package + names (<package>.Name, <package>.New) "
                     "or register: [{name, factory, package}]")
        register = regs.check_register(f, p, item, module, package, seen_names)
        imports = regs.check_imports(f, p, item, module)
        out.append(PluginSource(package=package, names=tuple(names), path=local, module=module, version=version,
                                register=tuple(register), imports=tuple(imports), field=p))
    return out


def _source(f: Fields, p: str, item: dict, base_dir: Path, check_files: bool) -> tuple[Path | None, str, str]:
    """(local directory, module path, module version): a local path or module + version, not both."""
    has_path, has_module = item.get("path") is not None, item.get("module") is not None
    if has_path and has_module and item.get("version") is not None:
        f.err(f"{p}.module", "give either path (a local module) or module + version, not both")
    elif not has_path and not has_module:
        f.err(p, "needs a source: path (a local Go module directory) or module + version")
    local: Path | None = None
    module = ""
    version = ""
    if has_path:
        raw = f.string(f"{p}.path", item["path"])
        if raw:
            local = (base_dir / raw).resolve()
            module = _local_module(f, f"{p}.path", raw, local, check_files)
        if has_module:
            # A path may also state its module; it must agree with go.mod.
            stated = f.string(f"{p}.module", item["module"], GO_IMPORT_PATH, "a Go module path")
            if stated and module and stated != module:
                f.err(f"{p}.module", f"{stated!r} differs from the module {module!r} in {raw}/go.mod")
            module = module or stated or ""
        if item.get("version") is not None and not has_module:
            f.err(f"{p}.version", "only applies to module plugins; a local path is used as it is")
    elif has_module:
        module = f.string(f"{p}.module", item["module"], GO_IMPORT_PATH,
                          "a Go module path such as example.com/acme/underlay") or ""
        if item.get("version") is None:
            f.err(f"{p}.version", "is required with module (a module version such as v1.2.3)")
        else:
            version = f.string(f"{p}.version", item["version"], GO_MODULE_VERSION,
                               "a Go module version such as v1.2.3") or ""
    return local, module, version


def _local_module(f: Fields, path: str, raw: str, directory: Path, check_files: bool) -> str:
    """The module path in the directory's go.mod ("" when there is none to read)."""
    gomod = directory / "go.mod"
    if not directory.is_dir():
        if check_files:
            f.err(path, f"{raw!r} is not a directory (resolved to {directory})")
        return ""
    if not gomod.is_file():
        if check_files:
            f.err(path, f"{raw!r} has no go.mod; a local plugin must be a Go module")
        return ""
    match = re.search(r"(?m)^module\s+(\S+)", gomod.read_text(encoding="utf-8", errors="replace"))
    return match.group(1).strip('"') if match else ""


def _package(f: Fields, p: str, item: dict, module: str) -> str:
    if item.get("package") is None:
        return ""
    return regs.import_path(f, f"{p}.package", item["package"], module)


def check_patches(f: Fields, value: Any, base_dir: Path, check_files: bool) -> list[Path]:
    """Patch files, resolved against the spec's directory, in the order they apply."""
    out: list[Path] = []
    if value is None or f.seq("patches", value) is None:
        return out
    seen: set[Path] = set()
    for i, item in enumerate(value):
        raw = f.string(f"patches[{i}]", item)
        if raw is None:
            continue
        resolved = (base_dir / raw).resolve()
        if resolved in seen:
            f.err(f"patches[{i}]", f"{raw!r} is listed twice")
            continue
        seen.add(resolved)
        if check_files and not resolved.is_file():
            f.err(f"patches[{i}]", f"no such patch file {raw!r} (resolved to {resolved})")
        out.append(resolved)
    return out


def check_platforms(f: Fields, value: Any) -> list[str]:
    """os/arch names from `platforms.SUPPORTED`, the one table every stage reads."""
    out: list[str] = []
    if value is None or f.seq("platforms", value) is None:
        return out
    for i, item in enumerate(value):
        got = f.string(f"platforms[{i}]", item)
        if got is None:
            continue
        if not platforms.is_supported(got):
            f.err(f"platforms[{i}]", f"unsupported platform {show(got)}; {platforms.HINT}")
            continue
        if got in out:
            f.err(f"platforms[{i}]", f"{got!r} is listed twice")
            continue
        out.append(got)
    return out

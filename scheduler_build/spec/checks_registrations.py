"""`plugins[].register` and `plugins[].imports`: what main.go registers and imports, checked as data.

Every identifier and import path is checked before anything runs: packages lie
inside the entry's module, factories are exported Go identifiers, and no plugin
name is registered twice (`in_tree_clashes` adds the target version's in-tree
names once the build has resolved it).
"""

from __future__ import annotations

from typing import Any

from scheduler_build.errors import UserError
from scheduler_build.spec.fields import Fields
from scheduler_build.spec.formats import GO_IDENT, GO_IMPORT_PATH
from scheduler_build.spec.model import PluginSource, Registration

IMPORT_WHAT = "a Go import path such as example.com/acme/collection/pkg/gang"


def inside(package: str, module: str) -> bool:
    return package == module or package.startswith(module + "/")


def import_path(f: Fields, path: str, value: Any, module: str) -> str:
    """An import path inside `module` ("" when invalid; the error is recorded)."""
    package = f.string(path, value, GO_IMPORT_PATH, IMPORT_WHAT) or ""
    if any(part.startswith(".") or part.endswith(".") for part in package.split("/")):
        # Go refuses such elements ("malformed import path"); `..` would also leave the module.
        f.err(path, f"{package!r}: an element begins or ends with '.'; write the full import path, e.g. {module or 'example.com/acme/collection'}/pkg/gang")
        return ""
    if package and module and not inside(package, module):
        f.err(path, f"{package!r} is not inside module {module!r}")
        return ""
    return package


def check_register(f: Fields, p: str, item: dict, module: str, package: str,
                   seen: dict[str, str]) -> list[Registration]:
    """`register: [{name, factory, package}]`; package defaults to the entry's."""
    out: list[Registration] = []
    if item.get("register") is None or f.seq(f"{p}.register", item["register"]) is None:
        return out
    if not item["register"]:
        f.err(f"{p}.register", "must list at least one {name, factory} entry")
    for j, entry in enumerate(item["register"]):
        r = f"{p}.register[{j}]"
        if f.mapping(r, entry, ("name", "factory", "package"), required=("name", "factory")) is None:
            continue
        name = _name(f, f"{r}.name", entry.get("name"), seen)
        factory = None
        if entry.get("factory") is not None:
            factory = f.string(f"{r}.factory", entry["factory"], GO_IDENT,
                               "an exported Go identifier (the constructor, e.g. NewAllocatable)")
        pkg = package
        if entry.get("package") is not None:
            pkg = import_path(f, f"{r}.package", entry["package"], module)
        elif not package:
            f.err(f"{r}.package", "is required when the entry has no package")
        if name and factory and pkg:
            out.append(Registration(name=name, factory=factory, package=pkg, field=r))
    return out


def check_imports(f: Fields, p: str, item: dict, module: str) -> list[str]:
    """`imports: [path]`: packages of the module imported for their side effects only."""
    out: list[str] = []
    if item.get("imports") is None or f.seq(f"{p}.imports", item["imports"]) is None:
        return out
    for k, raw in enumerate(item["imports"]):
        package = import_path(f, f"{p}.imports[{k}]", raw, module)
        if package in out:
            f.err(f"{p}.imports[{k}]", f"{package!r} is listed twice")
        elif package:
            out.append(package)
    return out


def check_names(f: Fields, p: str, item: dict, seen: dict[str, str]) -> list[str]:
    """The short form's plugin name (`names`, one entry: `<package>.Name`)."""
    names: list[str] = []
    if item.get("names") is None or f.seq(f"{p}.names", item["names"]) is None:
        return names
    if not item["names"]:
        f.err(f"{p}.names", "must list at least one plugin name")
    if len(item["names"]) > 1:
        f.err(f"{p}.names", "the short form registers one plugin (<package>.Name, <package>.New); "
                            "list several under register: [{name, factory, package}]")
    for j, n in enumerate(item["names"]):
        got = _name(f, f"{p}.names[{j}]", n, seen)
        if got:
            names.append(got)
    return names


def _name(f: Fields, path: str, value: Any, seen: dict[str, str]) -> str:
    """A plugin name; one registered twice is an error at the second, naming the first."""
    got = f.string(path, value, GO_IDENT, "a plugin name such as UnderlayIPLimit (an exported Go identifier)")
    if got is None:
        return ""
    if got in seen:
        f.err(path, f"{got!r} is already registered by {seen[got]}")
        return ""
    seen[got] = path
    return got


CLASH_HINT = "register it under another name (profiles refer to that name)"


def in_tree_clashes(plugins: tuple[PluginSource, ...] | list[PluginSource], in_tree: frozenset[str] | set[str],
                    version: str) -> list[tuple[str, str]]:
    """(field, problem) for each registered name that is an in-tree plugin of `version`: the binary would
    refuse to start. The one clash check: the build raises the first (check_in_tree), config.validate lists all."""
    clashes = []
    for plugin in plugins:
        for reg in plugin.registrations:
            if reg.name in in_tree:
                field = f"{reg.field}.name" if reg.name_ident == "" else f"{plugin.field}.names[0]"
                clashes.append((field, f"plugin name {reg.name!r} clashes with the in-tree plugin {reg.name!r} of Kubernetes {version}"))
    return clashes


def check_in_tree(plugins: tuple[PluginSource, ...] | list[PluginSource], in_tree: frozenset[str] | set[str],
                  version: str) -> None:
    """The build's form: the first clash as one UserError naming its field."""
    clashes = in_tree_clashes(plugins, in_tree, version)
    if clashes:
        field, problem = clashes[0]
        raise UserError(f"{field}: {problem}", CLASH_HINT)

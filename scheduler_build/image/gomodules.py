"""What a Go binary was linked from, as both SBOM formats describe it (pure, but for `read_build_info`).

The module list comes from the binary itself (`go version -m`, which reads the
build info the Go linker embeds, also in stripped and cross-compiled binaries).
A `replace` directive changes what was compiled: `dep k8s.io/api v0.0.0` then
`=> k8s.io/api v0.36.3` means v0.36.3 is in the binary, so a component carries the
replacement's path and version (what scanners key on) and remembers the original.
A directory replacement (a local plugin's snapshot, a patched Kubernetes copy) keeps
the module's own path and version: the directory is a build-machine detail.

`SbomInputs` carries what the binary cannot tell: the spec's supplier and author,
and the patch series (its diffs, when the spec's files are at hand).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from scheduler_build.golang import gotool
from scheduler_build.errors import UserError
from scheduler_build.spec.model import Party

# Code-hosting hosts, where the supplier is the account (github.com/spf13), not the host.
FORGES = ("github.com", "gitlab.com", "bitbucket.org")
STDLIB_SUPPLIER = "golang.org"


@dataclass(frozen=True)
class Module:
    path: str
    version: str
    sum: str = ""  # go.sum "h1:" hash when the binary records one (not in vendor builds)
    replace: Module | None = None  # the `=>` line under it

    @property
    def local(self) -> bool:
        """Replaced by a directory (`=> ../dir (devel)`): a local plugin's snapshot or a patched copy."""
        return self.replace is not None and (self.replace.path.startswith((".", "/")) or self.replace.version in ("", "(devel)"))

    @property
    def compiled(self) -> Module:
        """The module as linked: the replacement when it is a module version, else this one."""
        return self.replace if self.replace is not None and not self.local else self

    @property
    def original(self) -> str:
        """`path@version` as required, when a module replacement changed it; "" otherwise."""
        if self.replace is None or self.local or (self.replace.path, self.replace.version) == (self.path, self.version):
            return ""
        return f"{self.path}@{self.version}"


@dataclass
class GoBuildInfo:
    go_version: str  # e.g. go1.26.8
    main_path: str = ""
    main_module: Module | None = None
    deps: list[Module] = field(default_factory=list)
    settings: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Patch:
    """One patch of the series: its file name, where it came from and its diff (when at hand)."""

    file: str
    sha256: str
    uri: str = ""  # relative to the spec, e.g. ../patches/0001-x.patch
    text: str = ""
    modules: tuple[str, ...] = ()  # the modules it changes, e.g. k8s.io/kubernetes


@dataclass(frozen=True)
class SbomInputs:
    supplier: Party | None = None  # of our own modules and the binary; None: each module path's host
    author: Party | None = None
    patches: tuple[Patch, ...] = ()

    def patches_of(self, module_path: str) -> list[Patch]:
        return [p for p in self.patches if module_path in p.modules]


def parse_version_m(text: str) -> GoBuildInfo:
    """Parse `go version -m` output (tab-separated lines after a `<file>: goX.Y.Z` header)."""
    lines = text.splitlines()
    if not lines or ":" not in lines[0]:
        raise ValueError("not `go version -m` output")
    info = GoBuildInfo(go_version=lines[0].rsplit(":", 1)[1].strip())
    for raw in lines[1:]:
        parts = raw.strip().split("\t")
        kind, rest = parts[0], parts[1:] + ["", "", ""]
        if kind == "path" and rest[0]:
            info.main_path = rest[0]
        elif kind == "mod" and rest[0]:
            info.main_module = Module(rest[0], rest[1] or "(devel)", rest[2])
        elif kind == "dep" and rest[0]:
            info.deps.append(Module(rest[0], rest[1], rest[2]))
        elif kind == "=>" and rest[0] and info.deps:
            # A replace directive applies to the dep line just above it.
            dep = info.deps[-1]
            info.deps[-1] = Module(dep.path, dep.version, dep.sum, Module(rest[0], rest[1], rest[2]))
        elif kind == "build" and rest[0]:
            key, _, value = rest[0].partition("=")
            info.settings[key] = value
    return info


def read_build_info(binary: Path) -> GoBuildInfo:
    proc = subprocess.run([gotool.binary(), "version", "-m", str(binary)], capture_output=True, text=True)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise UserError(f"`go version -m {binary}` failed: {(proc.stderr or proc.stdout).strip()[:200]}", "is it a Go binary built with module support?")
    return parse_version_m(proc.stdout)


def purl(path: str, version: str) -> str:
    """The one purl spelling of both SBOM formats (the Go module's, no qualifiers)."""
    return f"pkg:golang/{path}@{version}" if version and version != "(devel)" else f"pkg:golang/{path}"


def host_supplier(module_path: str) -> str:
    """The supplier a module path names: its host, or host/account on a code-hosting host."""
    if module_path == "stdlib":
        return STDLIB_SUPPLIER
    parts = module_path.split("/")
    return "/".join(parts[:2]) if parts[0] in FORGES and len(parts) > 1 else parts[0]


@dataclass(frozen=True)
class Component:
    """One module as both formats list it."""

    module: Module
    role: str  # "main module", "stdlib", "" for a dependency
    own: bool  # built from a directory (main module, local plugins, patched copies)

    @property
    def name(self) -> str:
        return self.module.compiled.path

    @property
    def version(self) -> str:
        return self.module.compiled.version

    @property
    def purl(self) -> str:
        return purl(self.name, self.version)

    def original_properties(self) -> list[tuple[str, str]]:
        """What the module was before a `replace` changed its version (and path): (name, value) pairs."""
        if not self.module.original:
            return []
        path, version = self.module.path, self.module.version
        return [("go:originalVersion", version)] + ([("go:originalPath", path)] if path != self.name else [])

    def supplier(self, inputs: SbomInputs) -> Party:
        if self.own and inputs.supplier is not None and not inputs.patches_of(self.name):
            return inputs.supplier  # ours; a patched upstream module stays its upstream's
        host = host_supplier(self.name)
        return Party(name=host, url=f"https://{host}")


def components(info: GoBuildInfo) -> list[Component]:
    """stdlib, the main module, then every dependency by path: each distinct purl once."""
    out = [Component(Module("stdlib", info.go_version), "stdlib", False)]
    if info.main_module is not None:
        out.append(Component(info.main_module, "main module", True))
    out += [Component(m, "", m.local) for m in sorted(info.deps, key=lambda m: (m.path, m.version))]
    seen: set[str] = set()
    unique = []
    for component in out:
        if component.purl not in seen:
            seen.add(component.purl)
            unique.append(component)
    return unique


def binary_supplier(listed: list[Component], inputs: SbomInputs) -> Party:
    """The binary's supplier: the spec's, else its main module's (the toolkit's generated wrapper)."""
    main = next((c for c in listed if c.role == "main module"), None)
    return inputs.supplier or (main.supplier(inputs) if main else Party(host_supplier("k8s.io/kubernetes")))

"""What a Kubernetes release's scheduling framework offers plugins, read from that release's own source.

The framework's Go package (k8s.io/kube-scheduler `framework/` at the staging version, plus
k8s.io/kubernetes `pkg/scheduler/framework/` while it still held the interfaces, up to 1.34)
is parsed for:

- its exported interfaces (`FilterPlugin`, `SignPlugin`, `PlacementScorePlugin`, ...);
- the interfaces whose documentation asks their implementers to also implement another one
  ("Plugins that implement FilterPlugin should also implement SignPlugin"): that is how the
  framework says which points batching needs signed, so no list of them is kept here;
- its exported constants (`MaxScore` where it exists, `MaxNodeScore` before);
- every identifier documented `Deprecated:`, with the advice that follows;
- each interface's exact method signatures and the interfaces it embeds (so `Handle`'s whole method
  set), and which package declares each exported type (`homes`): what the scaffold renders its
  signatures from and what retarget compares.

Pure parsing plus a cache per version (`<cache>/vocabulary/framework/`), like vocabulary.py.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from scheduler_build.golang import toolchain
from scheduler_build.atomic import write_atomic
from scheduler_build.errors import UserError
from scheduler_build.resolve import gomod, versions

SCHEDULER_MODULE = "k8s.io/kube-scheduler"
STAGING_DIR = "framework"
KUBERNETES_DIR = "pkg/scheduler/framework"
CACHE_FORMAT = 8
STAGING_PACKAGE = "k8s.io/kube-scheduler/framework"
KUBERNETES_PACKAGE = "k8s.io/kubernetes/pkg/scheduler/framework"
SIGN_INTERFACE = "SignPlugin"

_TYPE = re.compile(r"^type\s+([A-Z]\w*)\s+(?:=\s*)?(interface|struct|func|\w|\[|\*)")
_CONST_LINE = re.compile(r"^\t([A-Z]\w*)\b[^=]*=")
_ALSO = re.compile(r"should\s+also\s+implement\s+([A-Z]\w*)(?:\s+to\s+([^.]*))?")
_METHOD = re.compile(r"^\t([A-Z]\w*)\(")
_IOTA_LINE = re.compile(r"^\t([A-Z]\w*)\s*(?://.*)?$")  # `\tError` after `Success Code = iota`
_FUNC = re.compile(r"^func ([A-Z]\w*)[\[(]")
_EMBED = re.compile(r"^\t((?:\w+\.)?[A-Z]\w*)\s*(?://.*)?$")


@dataclass(frozen=True)
class FrameworkSurface:
    """The plugin-facing framework of one release."""

    version: str
    interfaces: tuple[str, ...] = ()
    constants: tuple[str, ...] = ()
    also_implement: dict[str, tuple[str, ...]] = field(default_factory=dict)  # FilterPlugin -> (SignPlugin,)
    deprecated: dict[str, str] = field(default_factory=dict)  # MaxNodeScore -> "use MaxScore instead."
    methods: dict[str, tuple[str, ...]] = field(default_factory=dict)  # SignPlugin -> (SignPod,), own methods only
    purpose: dict[str, str] = field(default_factory=dict)  # SignPlugin -> "enable batching optimizations"
    signatures: dict[str, tuple[str, ...]] = field(default_factory=dict)  # SignPlugin -> ("SignPod(ctx ...) (...)",)
    embeds: dict[str, tuple[str, ...]] = field(default_factory=dict)  # Handle -> (PodNominator, PluginsRunner, ...)
    homes: dict[str, str] = field(default_factory=dict)  # exported type -> the import path declaring it
    imports: dict[str, str] = field(default_factory=dict)  # alias -> import path, as the framework's files import them

    def method_set(self, interface: str) -> tuple[str, ...]:
        """Every method signature of `interface`, its embedded interfaces' included (as declared, unqualified)."""
        seen: list[str] = []
        for embedded in self.embeds.get(interface, ()):
            if embedded in self.signatures and embedded != interface:
                seen.extend(s for s in self.method_set(embedded) if s not in seen)
        return tuple(seen) + tuple(s for s in self.signatures.get(interface, ()) if s not in seen)

    def signature(self, interface: str, method: str) -> str:
        """`interface`'s declaration of `method` (its method set's), or "" when it has none."""
        return next((s for s in self.method_set(interface) if s.startswith(method + "(")), "")

    def home_alias(self, name: str) -> str:
        """How plugins import the package declaring `name`: `fwk` (the staging module), `framework` (k8s.io/kubernetes)."""
        return "framework" if self.homes.get(name) == KUBERNETES_PACKAGE else "fwk"

    @property
    def can_sign(self) -> bool:
        """Whether plugins of this release can sign pods for opportunistic batching (KEP-5598)."""
        return SIGN_INTERFACE in self.interfaces

    def wanted_by(self, interface: str) -> tuple[str, ...]:
        """The optional interfaces the framework asks an implementer of `interface` to add."""
        return self.also_implement.get(interface, ())

    def sign_points(self) -> tuple[str, ...]:
        """The extension-point interfaces whose plugins must sign, or batching is off for the profile."""
        return tuple(i for i in self.interfaces if SIGN_INTERFACE in self.wanted_by(i))

    def score_bound(self, which: str = "Max") -> str:
        """`MaxScore` where the release has it (1.36 on), else the older `MaxNodeScore`."""
        return f"{which}Score" if f"{which}Score" in self.constants else f"{which}NodeScore"

    def to_dict(self) -> dict:
        return {"interfaces": list(self.interfaces), "constants": list(self.constants),
                "also_implement": {k: list(v) for k, v in self.also_implement.items()},
                "deprecated": dict(self.deprecated), "methods": {k: list(v) for k, v in self.methods.items()},
                "purpose": dict(self.purpose), "signatures": {k: list(v) for k, v in self.signatures.items()},
                "embeds": {k: list(v) for k, v in self.embeds.items()}, "homes": dict(self.homes),
                "imports": dict(self.imports)}

    @classmethod
    def from_dict(cls, version: str, data: dict) -> "FrameworkSurface":
        return cls(version=version, interfaces=tuple(data["interfaces"]), constants=tuple(data["constants"]),
                   also_implement={k: tuple(v) for k, v in data["also_implement"].items()},
                   deprecated=dict(data["deprecated"]),
                   methods={k: tuple(v) for k, v in data["methods"].items()}, purpose=dict(data["purpose"]),
                   signatures={k: tuple(v) for k, v in data["signatures"].items()},
                   embeds={k: tuple(v) for k, v in data.get("embeds", {}).items()}, homes=dict(data.get("homes", {})),
                   imports=dict(data.get("imports", {})))


def merged(first: FrameworkSurface, second: FrameworkSurface) -> FrameworkSurface:
    """Two packages' surfaces as one; a name both declare keeps the first's declaration."""
    def both(a: dict, b: dict) -> dict:
        return {**b, **a}
    return FrameworkSurface(
        version=first.version or second.version,
        interfaces=tuple(dict.fromkeys(first.interfaces + second.interfaces)),
        constants=tuple(dict.fromkeys(first.constants + second.constants)),
        also_implement=both(first.also_implement, second.also_implement),
        deprecated=both(first.deprecated, second.deprecated), methods=both(first.methods, second.methods),
        purpose=both(first.purpose, second.purpose), signatures=both(first.signatures, second.signatures),
        embeds=both(first.embeds, second.embeds), homes=both(first.homes, second.homes),
        imports=both(first.imports, second.imports))


def parse_go(text: str, version: str = "", package: str = STAGING_PACKAGE) -> FrameworkSurface:
    """One Go file (or several concatenated, of the Go package `package`) -> its surface (pure)."""
    interfaces: list[str] = []
    constants: list[str] = []
    also: dict[str, tuple[str, ...]] = {}
    deprecated: dict[str, str] = {}
    methods: dict[str, list[str]] = {}
    signatures: dict[str, list[str]] = {}
    embeds: dict[str, list[str]] = {}
    homes: dict[str, str] = {}
    purpose: dict[str, str] = {}
    comment: list[str] = []
    in_const, in_interface = False, None  # in a const block; the own methods of the interface being read
    for line in text.splitlines():
        stripped = line.strip()
        if in_interface is not None:
            if line.startswith("}"):
                in_interface = None
            else:
                _interface_line(line, interfaces[-1], in_interface, signatures, embeds)
            continue
        if stripped.startswith("//"):
            comment.append(stripped[2:].strip())
            continue
        name = ""
        if in_const:
            if stripped.startswith(")"):
                in_const = False
            match = _CONST_LINE.match(line) or _IOTA_LINE.match(line)
            if match:
                name = match.group(1)
                constants.append(name)
                homes.setdefault(name, package)
        elif stripped.startswith("const (") or stripped.startswith("var ("):
            in_const = stripped.startswith("const")
        elif stripped.startswith("const "):
            parts = stripped.split()
            if len(parts) > 1 and parts[1][:1].isupper():
                name = parts[1]
                constants.append(name)
        elif _FUNC.match(line):  # an exported function (NewStatus): where it lives, for imports that move
            homes.setdefault(_FUNC.match(line).group(1), package)
        else:
            match = _TYPE.match(line)
            if match:
                name = match.group(1)
                homes.setdefault(name, package)
                if match.group(2) == "interface":
                    interfaces.append(name)
                    _note_asks(name, comment, also, purpose)
                    in_interface = methods.setdefault(name, []) if line.rstrip().endswith("{") else None
                    signatures.setdefault(name, [])
        if name:
            _note_deprecated(name, comment, deprecated)
        comment = []
    return FrameworkSurface(version=version, interfaces=tuple(dict.fromkeys(interfaces)),
                            constants=tuple(dict.fromkeys(constants)), also_implement=also, deprecated=deprecated,
                            methods={k: tuple(v) for k, v in methods.items()}, purpose=purpose,
                            signatures={k: tuple(v) for k, v in signatures.items()},
                            embeds={k: tuple(v) for k, v in embeds.items()}, homes=homes, imports=parse_imports(text))


_IMPORT_BLOCK = re.compile(r"^import\s*\((.*?)^\)|^import[ \t]+([^\n]*)$", re.M | re.S)
_IMPORT = re.compile(r'^\s*(?:([\w.]+)\s+)?"([^"]+)"', re.M)


def parse_imports(text: str) -> dict[str, str]:
    """alias -> import path of the Go files' imports (`klog` for k8s.io/klog/v2): how the interfaces'
    qualified types (`types.UID`, `clientset.Interface`) are imported where a plugin spells them (pure)."""
    found: dict[str, str] = {}
    blocks = "\n".join(block or line for block, line in _IMPORT_BLOCK.findall(text))
    for alias, path in _IMPORT.findall(blocks):
        if alias in ("_", "."):
            continue
        parts = path.split("/")
        name = alias or (parts[-2] if re.fullmatch(r"v\d+", parts[-1]) and len(parts) > 1 else parts[-1])
        found.setdefault(name.replace("-", "_"), path)
    return found


def _note_asks(name: str, comment: list[str], also: dict[str, tuple[str, ...]], purpose: dict[str, str]) -> None:
    """An interface's documentation asking its implementers to implement others too, and why."""
    asks = _ALSO.findall(" ".join(comment))
    if asks:
        also[name] = tuple(dict.fromkeys(wanted for wanted, _ in asks))
        purpose.update({wanted: why.strip() for wanted, why in asks if why.strip()})


def _interface_line(line: str, interface: str, own: list[str], signatures: dict[str, list[str]],
                    embeds: dict[str, list[str]]) -> None:
    """One line inside `type X interface {`: a method (its name and declaration) or an embedded interface."""
    if _METHOD.match(line):
        own.append(_METHOD.match(line).group(1))
        signatures[interface].append(line.strip().split(" //")[0].strip())
    elif _EMBED.match(line):
        embeds.setdefault(interface, []).append(_EMBED.match(line).group(1))


def _note_deprecated(name: str, comment: list[str], deprecated: dict[str, str]) -> None:
    for i, line in enumerate(comment):
        if line.startswith("Deprecated:"):
            advice = " ".join([line[len("Deprecated:"):].strip(), *comment[i + 1:]]).strip()
            deprecated[name] = advice or "deprecated"
            return


def _package_text(directory: Path) -> str:
    if not directory.is_dir():
        return ""
    return "\n".join(p.read_text() for p in sorted(directory.glob("*.go")) if not p.name.endswith("_test.go"))


def _cache_file(cache_root: Path, version: str) -> Path:
    return Path(cache_root) / "vocabulary" / "framework" / f"{version}.json"


def framework_surface(version: str, cache_root: Path) -> FrameworkSurface:
    """The surface of an exact release (v1.37.2), from its module sources, cached."""
    path = _cache_file(cache_root, version)
    if path.is_file():
        data = json.loads(path.read_text())
        if data.get("format") == CACHE_FORMAT:
            return FrameworkSurface.from_dict(version, data)
    staging = Path(toolchain.mod_download(SCHEDULER_MODULE, gomod.staging_version(version), timeout=300)["Dir"])
    text = _package_text(staging / STAGING_DIR)
    surface = parse_go(text, version, STAGING_PACKAGE)
    if "PreFilterPlugin interface" not in text:  # the interfaces still lived in k8s.io/kubernetes (<= 1.34)
        older = _package_text(toolchain.module_dir(versions.KUBERNETES_MODULE, version) / KUBERNETES_DIR)
        # Its interfaces are the plugin API there; the staging package's names it shares are its types'.
        surface = merged(parse_go(older, version, KUBERNETES_PACKAGE), surface)
    if "FilterPlugin" not in surface.interfaces:
        raise UserError(f"found no FilterPlugin interface in the framework of Kubernetes {version}",
                        "the framework's layout changed: report this")
    write_atomic(path, json.dumps({"format": CACHE_FORMAT, **surface.to_dict()}, indent=1, sort_keys=True))
    return surface


def kubernetes_framework_names(version: str, cache_root: Path) -> frozenset[str]:
    """The exported names k8s.io/kubernetes/pkg/scheduler/framework still declares in a release (what an
    import of it may keep using once the rest moved to the staging module), cached."""
    path = Path(cache_root) / "vocabulary" / "framework-kubernetes" / f"{version}.json"
    if path.is_file():
        return frozenset(json.loads(path.read_text()))
    text = _package_text(toolchain.module_dir(versions.KUBERNETES_MODULE, version) / KUBERNETES_DIR)
    names = sorted(parse_go(text, version, KUBERNETES_PACKAGE).homes)
    write_atomic(path, json.dumps(names))
    return frozenset(names)

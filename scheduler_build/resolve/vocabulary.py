"""What a Kubernetes release's scheduler accepts, read from that release's own source.

- the configuration API: every struct of `kubescheduler.config.k8s.io/v1`
  (k8s.io/kube-scheduler `config/v1/types.go` at the staging version v0.N.P) with
  its JSON field names and Go types; the extension points are the `Plugins` fields;
- the feature gates: the keys of `defaultVersionedKubernetesFeatureGates` in
  k8s.io/kubernetes `pkg/features/kube_features.go`, each with its newest stage.

Pure parsing plus a cache per version (`<cache>/vocabulary/`); nothing here is a
hand-kept list, so a new minor needs no code change. `introduced_in` names the
first newer minor that has a field an older target lacks.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from scheduler_build.golang import toolchain
from scheduler_build.atomic import write_atomic
from scheduler_build.errors import UserError
from scheduler_build.progress import log
from scheduler_build.resolve import gomod, goproxy, versions

SCHEDULER_MODULE = "k8s.io/kube-scheduler"
TYPES_GO = "config/v1/types.go"
FEATURES_GO = "pkg/features/kube_features.go"
ROOT = "KubeSchedulerConfiguration"
CACHE_FORMAT = 1

_STRUCT = re.compile(r"^type\s+([A-Z]\w*)\s+struct\s*\{\s*$")
_FIELD = re.compile(r'^\s*([A-Z]\w*)\s+(\S+)\s+`[^`]*json:"([^",]*)[^"]*"')
_GATE = re.compile(r"^\t(?:\w+\.)?([A-Z]\w*):\s*\{\s*$")
_STAGE = re.compile(r"PreRelease:\s*featuregate\.(\w+)")
_LOCKED = re.compile(r"LockToDefault:\s*true")
_DEFAULT = re.compile(r"Default:\s*(true|false)")
_SINCE = re.compile(r'Version:\s*version\.MustParse\("([^"]+)"\)')


@dataclass(frozen=True)
class ConfigAPI:
    """kubescheduler.config.k8s.io/v1 of one release: struct -> JSON field -> Go type."""

    version: str  # the k8s.io/kubernetes release (v1.37.2)
    types: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def extension_points(self) -> tuple[str, ...]:
        """The `Plugins` fields that are plugin sets, in upstream's declaration order."""
        return tuple(name for name, go_type in self.types.get("Plugins", {}).items() if _base(go_type) == "PluginSet")

    def fields_of(self, struct: str) -> dict[str, str]:
        return self.types.get(struct, {})

    def struct_of(self, go_type: str) -> str | None:
        """The struct a field's type leads to (`[]KubeSchedulerProfile` -> KubeSchedulerProfile), or None
        for a type defined elsewhere (component-base, metav1, RawExtension: not walked)."""
        base = _base(go_type)
        return base if base in self.types else None

    def has_path(self, struct_chain: tuple[str, ...]) -> bool:
        """Whether the JSON keys (root first) lead through known fields."""
        struct: str | None = ROOT
        for key in struct_chain:
            if struct is None:
                return True
            go_type = self.fields_of(struct).get(key)
            if go_type is None:
                return False
            struct = self.struct_of(go_type)
        return True


def _base(go_type: str) -> str:
    """`[]*Plugin` -> `Plugin`; a qualified type (`metav1.Duration`) stays qualified."""
    return go_type.lstrip("[]*")


def parse_types_go(text: str) -> dict[str, dict[str, str]]:
    """Every struct of a Go file with its JSON-named fields in order (embedded/inline fields skipped)."""
    types: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for line in text.splitlines():
        if current is None:
            match = _STRUCT.match(line)
            if match:
                current = types.setdefault(match.group(1), {})
            continue
        if line.startswith("}"):
            current = None
            continue
        got = _FIELD.match(line)
        if got and got.group(3) and got.group(3) != "-":
            current[got.group(3)] = got.group(2)
    return types


def parse_feature_gates(text: str) -> dict[str, str]:
    """Gate name -> its newest stage (`Beta`, `GA`, `Deprecated`, ...; `GA-locked` when locked to its default)."""
    return {name: gate["stage"] + ("-locked" if gate["locked"] else "") for name, gate in parse_gate_specs(text).items()}


def parse_gate_specs(text: str) -> dict[str, dict]:
    """Gate name -> its newest versioned spec: {"stage", "default" (bool), "locked" (bool), "since" (1.NN)}."""
    start = text.find("defaultVersionedKubernetesFeatureGates = ")
    if start < 0:
        return {}
    gates: dict[str, dict] = {}
    name = ""
    for line in text[start:].splitlines()[1:]:
        if line.startswith("}"):
            break
        match = _GATE.match(line)
        if match:
            name = match.group(1)
            gates[name] = {"stage": "", "default": False, "locked": False, "since": ""}
            continue
        stage = _STAGE.search(line)
        if name and stage:
            default, since = _DEFAULT.search(line), _SINCE.search(line)
            gates[name] = {"stage": stage.group(1), "default": bool(default and default.group(1) == "true"),
                           "locked": bool(_LOCKED.search(line)), "since": since.group(1) if since else ""}
    return gates


def _cache_file(cache_root: Path, kind: str, version: str) -> Path:
    return Path(cache_root) / "vocabulary" / kind / f"{version}.json"


def cached_config_api(version: str, cache_root: Path) -> ConfigAPI | None:
    path = _cache_file(cache_root, "config-api", version)
    if not path.is_file():
        return None
    data = json.loads(path.read_text())
    if data.get("format") != CACHE_FORMAT:
        return None
    return ConfigAPI(version=version, types=data["types"])


def config_api(version: str, cache_root: Path) -> ConfigAPI:
    """The configuration API of an exact release, from k8s.io/kube-scheduler v0.N.P (a small download), cached."""
    known = cached_config_api(version, cache_root)
    if known is not None:
        return known
    staging = gomod.staging_version(version)
    source = Path(toolchain.mod_download(SCHEDULER_MODULE, staging, timeout=300)["Dir"]) / TYPES_GO
    if not source.is_file():
        raise UserError(f"{SCHEDULER_MODULE}@{staging} has no {TYPES_GO}",
                        "kubescheduler.config.k8s.io/v1 moved: report this")
    types = parse_types_go(source.read_text())
    if ROOT not in types or "Plugins" not in types:
        raise UserError(f"found no {ROOT} / Plugins struct in {source}", "the file layout changed: report this")
    write_atomic(_cache_file(cache_root, "config-api", version),
                 json.dumps({"format": CACHE_FORMAT, "types": types}, indent=1))
    return ConfigAPI(version=version, types=types)


def feature_gates(version: str, cache_root: Path) -> dict[str, str]:
    """The feature gates of an exact release with their newest stage (read from its k8s.io/kubernetes source)."""
    return {name: gate["stage"] + ("-locked" if gate["locked"] else "")
            for name, gate in feature_gate_specs(version, cache_root).items()}


def feature_gate_specs(version: str, cache_root: Path) -> dict[str, dict]:
    """The feature gates of an exact release, each with its stage, default and lock (parse_gate_specs), cached."""
    path = _cache_file(cache_root, "feature-gate-specs", version)
    if path.is_file():
        return json.loads(path.read_text())
    source = toolchain.module_dir(versions.KUBERNETES_MODULE, version) / FEATURES_GO
    gates = parse_gate_specs(source.read_text()) if source.is_file() else {}
    if not gates:
        raise UserError(f"found no feature gates in k8s.io/kubernetes@{version} {FEATURES_GO}",
                        "the file layout changed: report this")
    write_atomic(path, json.dumps(gates, indent=1, sort_keys=True))
    return gates


STAGING_GATE_MODULES = ("k8s.io/component-base", "k8s.io/client-go", "k8s.io/apiserver")
_STAGING_GATE = re.compile(r'^\s*[A-Z]\w*\s+(?:\w+\.)?Feature\s*=\s*"([A-Za-z0-9]+)"', re.M)


def staging_gate_names(version: str, cache_root: Path) -> list[str]:
    """The gates kube-scheduler also registers from staging modules (component-base's logging and metrics
    gates, client-go's), which kube_features.go does not list: their `Feature = "Name"` constants, cached."""
    path = _cache_file(cache_root, "staging-gates", version)
    if path.is_file():
        return json.loads(path.read_text())
    names: set[str] = set()
    for module in STAGING_GATE_MODULES:
        root = Path(toolchain.mod_download(module, gomod.staging_version(version), timeout=300)["Dir"])
        for source in root.rglob("*.go"):
            if not source.name.endswith("_test.go"):
                names.update(_STAGING_GATE.findall(source.read_text(errors="replace")))
    found = sorted(names)
    write_atomic(path, json.dumps(found))
    return found


def config_api_or_fallback(version: str, cache_root: Path) -> ConfigAPI | None:
    """The release's API; offline and not cached, the nearest cached release of the same or an older minor
    (said on stderr); None when nothing at all is cached (the caller skips the check and says so)."""
    try:
        return config_api(version, cache_root)
    except UserError as exc:
        reason = exc.message
    older = [v for v in cached_versions(cache_root) if versions.semver_key(v)[:2] <= versions.semver_key(version)[:2]]
    if not older:
        log(f"warning: cannot read the configuration API of Kubernetes {version} ({reason}) and none is cached")
        return None
    log(f"warning: cannot read the configuration API of Kubernetes {version} ({reason}); "
        f"checking against the cached {older[-1]}: fields newer than that are refused")
    return cached_config_api(older[-1], cache_root)


def cached_versions(cache_root: Path) -> list[str]:
    """Releases whose configuration API is cached, oldest first."""
    folder = Path(cache_root) / "vocabulary" / "config-api"
    found = [p.stem for p in folder.glob("v*.json")] if folder.is_dir() else []
    return sorted(found, key=versions.semver_key)


def newer_releases(version: str, cache_root: Path) -> list[str]:
    """The newest patch of every minor after `version`'s that the proxy lists for k8s.io/kube-scheduler,
    oldest first, as k8s.io/kubernetes versions; offline: the cached ones."""
    try:
        listed = [f"v1.{v[len('v0.'):]}" for v in goproxy.list_versions(SCHEDULER_MODULE) if v.startswith("v0.")]
    except UserError:
        listed = cached_versions(cache_root)
    minor = versions.semver_key(version)[:2]
    newest = versions.newest_patches(listed)
    return [newest[m] for m in sorted(newest, key=lambda m: int(m.split(".")[1]))
            if versions.semver_key(newest[m])[:2] > minor]


def introduced_in(keys: tuple[str, ...], version: str, cache_root: Path) -> str | None:
    """The first minor after `version` whose configuration API has these JSON keys (root first), or None."""
    for release in newer_releases(version, cache_root):
        try:
            api = config_api(release, cache_root)
        except UserError:
            continue
        if api.has_path(keys):
            return versions.minor_of(release)
    return None

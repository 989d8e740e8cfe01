"""The build spec: one YAML file that describes a custom scheduler end to end.

`load(path)` parses and validates the whole file and returns a `Spec`; on bad
input it raises `SpecError` listing *every* problem at once, each naming the
field path (``profiles[1].plugins.score.enabled[0].weight``) and the bad value,
so a release engineer fixes the file in one pass instead of one error per run.

Who reads what (keep these fields stable, they are the contract between issues):
- `inv build --spec` (issue 3): ``plugins``, ``patches``, ``platforms``,
  ``version_suffix``, ``kubernetes_version``, ``name``.
- `inv image.*` (issue 5): ``image``, ``platforms``, ``version``, ``name``.
- `inv config.*` / `inv deploy` (issue 4): everything else.

Keys are camelCase in YAML (like KubeSchedulerConfiguration) and snake_case on
the dataclasses. ``profiles`` and ``extenders`` are kept as plain dicts in the
exact ``kubescheduler.config.k8s.io/v1`` form (already validated and defaulted)
because the renderer copies them into the configuration verbatim.

Checks that need the target Kubernetes source (plugin names known to that
version) are not done here: see `check_plugin_names`, called by
`inv config.validate` with the in-tree names derived from the source.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml

from scheduler_build.errors import UserError

# --- formats ---------------------------------------------------------------

DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
GO_IDENT = re.compile(r"^[A-Z][A-Za-z0-9_]*$")  # exported Go identifier
GO_IMPORT_PATH = re.compile(r"^[a-zA-Z0-9][-a-zA-Z0-9_.~]*(\.[a-zA-Z]{2,})?(/[-a-zA-Z0-9_.~+]+)*$")
GO_MODULE_VERSION = re.compile(r"^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+incompatible)?$")
K8S_VERSION = re.compile(r"^(latest|v?\d+\.\d+(\.\d+)?)$")
SEMVERISH = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.-]*$")  # no '+': it is not allowed in image tags
SUFFIX = re.compile(r"^[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*$")
PLATFORM = re.compile(r"^linux/(amd64|arm64|arm|ppc64le|s390x)$")
# Go's time.ParseDuration units; a bare "0" is also valid Go.
DURATION = re.compile(r"^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$")
IMAGE_REPO = re.compile(r"^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*$")
IMAGE_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(m|k|Ki|Mi|Gi|Ti|M|G|T)?$")

# Extension points of the v1 Plugins struct, in the order upstream declares them.
EXTENSION_POINTS = (
    "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
    "reserve", "permit", "preBind", "bind", "postBind", "multiPoint",
)
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
DEFAULT_NAMESPACE = "kube-system"
SPEC_HINT = "see the build spec section of README.md (example: examples/underlay/scheduler.yaml)"


class SpecError(UserError):
    """The spec file is unreadable or has one or more invalid fields (all listed)."""

    def __init__(self, source: str, errors: list[tuple[str, str]], hint: str | None = SPEC_HINT):
        self.source = source
        self.errors = list(errors)
        if len(self.errors) == 1:
            where, what = self.errors[0]
            message = f"{source}: {where + ': ' if where else ''}{what}"
        else:
            lines = [f"{source}: {len(self.errors)} errors in the build spec:"]
            lines += [f"  {where + ': ' if where else ''}{what}" for where, what in self.errors]
            message = "\n".join(lines)
        super().__init__(message, hint)

    @property
    def paths(self) -> list[str]:
        """The field paths at fault, in report order (tests key on these)."""
        return [where for where, _ in self.errors]

    def __str__(self) -> str:
        # The hint goes on its own line: the message may already span several.
        return f"{self.message}\n  hint: {self.hint}" if self.hint and "\n" in self.message else super().__str__()


# --- the dataclasses -------------------------------------------------------


@dataclass(frozen=True)
class PluginSource:
    """One out-of-tree plugin package compiled into the scheduler.

    Exactly one of ``path`` (a local Go module directory, absolute) or
    ``module`` + ``version`` (fetched through the Go module proxy) is the source.
    ``package`` is the import path of the package exporting ``Name`` and ``New``;
    ``names`` are the plugin names it registers (what profiles may enable).
    For a local path, ``module`` is read from its go.mod.
    """

    package: str
    names: tuple[str, ...]
    path: Path | None = None
    module: str = ""
    version: str = ""

    @property
    def local(self) -> bool:
        return self.path is not None


@dataclass(frozen=True)
class Image:
    """Where the scheduler image lives. ``tag`` empty: `default_image_tag()`."""

    repository: str
    tag: str = ""
    pull_policy: str = "IfNotPresent"


@dataclass(frozen=True)
class Deployment:
    """How the scheduler Deployment runs. ``resources`` is a core/v1 ResourceRequirements dict."""

    replicas: int = 1
    resources: dict = field(default_factory=lambda: {"requests": {"cpu": "100m", "memory": "128Mi"}})
    verbosity: int = 2
    priority_class_name: str = ""
    node_selector: dict = field(default_factory=dict)


@dataclass(frozen=True)
class ReferenceExtender:
    """The bundled Python extender (issue 6), deployed beside the scheduler when enabled.

    Its `extenders` entry is added to the configuration by the renderer
    (`Spec.all_extenders()`), pointing at its Service.
    """

    enabled: bool = False
    image: str = ""
    port: int = 8888
    replicas: int = 1
    node_cache_capable: bool = False
    weight: int = 1
    ignorable: bool = False
    filter: bool = True
    prioritize: bool = True
    preempt: bool = False
    bind: bool = False
    http_timeout: str = "5s"
    managed_resources: tuple = ()


@dataclass
class Spec:
    """A loaded, validated build spec. Paths are absolute."""

    path: Path  # the spec file itself
    name: str  # DNS-1123 label; default schedulerName, lock name, object names
    version: str  # the spec's own version (image tags)
    kubernetes_version: str  # as written: "1.36", "v1.36.2" or "latest"
    version_suffix: str = ""  # appended to the stamped version: v1.36.2-<suffix>
    plugins: tuple[PluginSource, ...] = ()
    patches: tuple[Path, ...] = ()  # applied in this order
    platforms: tuple[str, ...] = ()  # "linux/amd64", ...; empty: the host's only
    image: Image = field(default_factory=lambda: Image(repository=""))
    namespace: str = DEFAULT_NAMESPACE
    profiles: list[dict] = field(default_factory=list)  # v1 KubeSchedulerProfile dicts
    extenders: list[dict] = field(default_factory=list)  # v1 Extender dicts (without the reference one)
    leader_election: dict = field(default_factory=dict)  # v1 LeaderElectionConfiguration, defaulted
    client_connection: dict = field(default_factory=dict)
    parallelism: int | None = None  # None: leave the scheduler's default
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_seconds: int | None = None
    pod_max_backoff_seconds: int | None = None
    deployment: Deployment = field(default_factory=Deployment)
    reference_extender: ReferenceExtender = field(default_factory=ReferenceExtender)

    @property
    def base_dir(self) -> Path:
        return self.path.parent

    @property
    def plugin_names(self) -> tuple[str, ...]:
        """Every plugin name the spec's own out-of-tree plugins register."""
        return tuple(name for plugin in self.plugins for name in plugin.names)

    def all_extenders(self) -> list[dict]:
        """The configuration's extenders: the spec's own plus the reference extender's."""
        out = [dict(e) for e in self.extenders]
        ext = self.reference_extender
        if ext.enabled:
            entry: dict[str, Any] = {"urlPrefix": reference_extender_url(self)}
            if ext.filter:
                entry["filterVerb"] = "filter"
            if ext.prioritize:
                entry["prioritizeVerb"] = "prioritize"
                entry["weight"] = ext.weight
            if ext.preempt:
                entry["preemptVerb"] = "preempt"
            if ext.bind:
                entry["bindVerb"] = "bind"
            entry["enableHTTPS"] = False
            entry["httpTimeout"] = ext.http_timeout
            entry["nodeCacheCapable"] = ext.node_cache_capable
            entry["ignorable"] = ext.ignorable
            if ext.managed_resources:
                entry["managedResources"] = [dict(m) for m in ext.managed_resources]
            out.append(entry)
        return out


def reference_extender_name(spec: Spec) -> str:
    return f"{spec.name}-extender"


def reference_extender_url(spec: Spec) -> str:
    return f"http://{reference_extender_name(spec)}.{spec.namespace}.svc:{spec.reference_extender.port}"


def default_image_tag(spec: Spec, k8s_version: str) -> str:
    """`<k8s-version>-<spec-version>`, e.g. v1.36.2-0.3.0 (SemVer-safe: no '+')."""
    version = k8s_version if k8s_version.startswith("v") else f"v{k8s_version}"
    return f"{version}-{spec.version}"


# --- loading ---------------------------------------------------------------


class _UniqueKeyLoader(yaml.SafeLoader):
    """safe_load that refuses duplicate keys instead of silently keeping the last one."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if isinstance(key, (str, int, float, bool)) and key in seen:
            mark = key_node.start_mark
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (first at line {seen[key] + 1})", mark)
        if isinstance(key, (str, int, float, bool)):
            seen[key] = key_node.start_mark.line
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load(path: str | Path, check_files: bool = True) -> Spec:
    """Read and validate a build spec; raise SpecError listing every problem.

    ``check_files``: also require local plugin directories (with a go.mod) and
    patch files to exist. Turn off only to inspect a spec away from its tree.
    """
    path = Path(path)
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError(source, [("", "no such file")], "pass --spec PATH to an existing build spec; " + SPEC_HINT) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(source, [("", f"cannot read: {exc}")]) from None
    return loads(text, path.resolve(), source=source, check_files=check_files)


def loads(text: str, path: Path, source: str | None = None, check_files: bool = True) -> Spec:
    """Validate spec text as if it were the file at ``path`` (relative paths resolve against it)."""
    source = source or str(path)
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise SpecError(source, [(where, f"not valid YAML: {exc.problem or exc}")]) from None
    except yaml.YAMLError as exc:
        raise SpecError(source, [("", f"not valid YAML: {exc}")]) from None
    if data is None:
        raise SpecError(source, [("", "the file is empty")])
    checker = _Checker(Path(path).resolve().parent, check_files)
    spec = checker.spec(data, Path(path).resolve())
    if checker.errors:
        raise SpecError(source, checker.errors)
    assert spec is not None
    return spec


def check_plugin_names(spec: Spec, in_tree: set[str] | frozenset[str], k8s_version: str) -> None:
    """Every plugin a profile names must be in-tree in ``k8s_version`` or one of the spec's own.

    Raises SpecError listing every unknown name with its field path.
    """
    known = set(in_tree) | set(spec.plugin_names)
    errors: list[tuple[str, str]] = []
    for i, profile in enumerate(spec.profiles):
        base = f"profiles[{i}]"
        for point, plugin_set in (profile.get("plugins") or {}).items():
            for kind in ("enabled", "disabled"):
                for j, entry in enumerate(plugin_set.get(kind) or []):
                    name = entry.get("name")
                    if name == "*" and kind == "disabled":
                        continue
                    if name not in known:
                        errors.append((f"{base}.plugins.{point}.{kind}[{j}].name",
                                       f"unknown plugin {name!r}: not in-tree in Kubernetes {k8s_version} "
                                       f"and not registered by the spec's plugins or patches{_suggest(name, known)}"))
        for j, entry in enumerate(profile.get("pluginConfig") or []):
            if entry.get("name") not in known:
                errors.append((f"{base}.pluginConfig[{j}].name",
                               f"unknown plugin {entry.get('name')!r}: not in-tree in Kubernetes {k8s_version} "
                               f"and not registered by the spec's plugins or patches{_suggest(entry.get('name'), known)}"))
    if errors:
        raise SpecError(str(spec.path), errors)


def _suggest(name: Any, known: set[str]) -> str:
    import difflib

    close = difflib.get_close_matches(str(name), sorted(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


# --- the checker -----------------------------------------------------------

_MISSING = object()


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean",
            int: "an integer", float: "a number"}.get(type(value), type(value).__name__)


class _Checker:
    """Walks the raw YAML, collecting (path, message) errors; never stops at the first."""

    def __init__(self, base_dir: Path, check_files: bool):
        self.base_dir = base_dir
        self.check_files = check_files
        self.errors: list[tuple[str, str]] = []

    # generic helpers -- each returns the value if valid, else None (after recording)

    def err(self, path: str, message: str) -> None:
        self.errors.append((path, message))

    def mapping(self, path: str, value: Any, allowed: tuple[str, ...], required: tuple[str, ...] = ()) -> dict | None:
        if not isinstance(value, dict):
            self.err(path, f"must be a mapping, got {_type_name(value)} {_show(value)}")
            return None
        for key in value:
            if key not in allowed:
                self.err(f"{path}.{key}" if path else str(key),
                         f"unknown field{_suggest(key, set(allowed))}; allowed: {', '.join(allowed)}")
        for key in required:
            if key not in value or value[key] is None:
                self.err(f"{path}.{key}" if path else key, "is required")
        return value

    def string(self, path: str, value: Any, pattern: re.Pattern | None = None, what: str = "",
               choices: tuple[str, ...] = ()) -> str | None:
        if not isinstance(value, str):
            self.err(path, f"must be a string, got {_type_name(value)} {_show(value)}")
            return None
        if choices and value not in choices:
            self.err(path, f"must be one of {', '.join(choices)}, got {_show(value)}")
            return None
        if pattern is not None and not pattern.match(value):
            self.err(path, f"must be {what}, got {_show(value)}")
            return None
        return value

    def integer(self, path: str, value: Any, lo: int | None = None, hi: int | None = None) -> int | None:
        # bool is an int subclass in Python; YAML `true` is not a number here.
        if not isinstance(value, int) or isinstance(value, bool):
            self.err(path, f"must be an integer, got {_type_name(value)} {_show(value)}")
            return None
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            bounds = f"between {lo} and {hi}" if lo is not None and hi is not None else (
                f">= {lo}" if lo is not None else f"<= {hi}")
            self.err(path, f"must be {bounds}, got {value}")
            return None
        return value

    def number(self, path: str, value: Any, lo: float | None = None) -> float | None:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            self.err(path, f"must be a number, got {_type_name(value)} {_show(value)}")
            return None
        if lo is not None and value < lo:
            self.err(path, f"must be >= {lo}, got {value}")
            return None
        return value

    def boolean(self, path: str, value: Any) -> bool | None:
        if not isinstance(value, bool):
            self.err(path, f"must be true or false, got {_type_name(value)} {_show(value)}")
            return None
        return value

    def dns_label(self, path: str, value: Any) -> str | None:
        if isinstance(value, str) and len(value) > 63:
            self.err(path, f"must be at most 63 characters (a DNS-1123 label), got {len(value)}")
            return None
        return self.string(path, value, DNS1123_LABEL,
                           "a DNS-1123 label (lower-case letters, digits and '-', starting and ending alphanumeric)")

    def seq(self, path: str, value: Any) -> list | None:
        if not isinstance(value, list):
            self.err(path, f"must be a list, got {_type_name(value)} {_show(value)}")
            return None
        return value

    def optional(self, data: dict, key: str, path: str, check: Callable[[str, Any], Any], default: Any = None) -> Any:
        if key not in data or data[key] is None:
            return default
        result = check(path, data[key])
        return default if result is None else result

    # the spec

    def spec(self, data: Any, spec_path: Path) -> Spec | None:
        top = self.mapping("", data, (
            "name", "version", "versionSuffix", "kubernetes", "plugins", "patches", "platforms", "image",
            "namespace", "profiles", "extenders", "leaderElection", "clientConnection", "parallelism",
            "percentageOfNodesToScore", "podInitialBackoffSeconds", "podMaxBackoffSeconds", "deployment",
            "referenceExtender"), required=("name", "version", "kubernetes"))
        if top is None:
            return None
        name = self.optional(top, "name", "name", self.dns_label, default="scheduler")
        version = self.optional(top, "version", "version", lambda p, v: self.string(
            p, str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v, SEMVERISH,
            "a version such as 0.3.0 (letters, digits, '.', '-'; no '+')"), default="0.0.0")
        suffix = self.optional(top, "versionSuffix", "versionSuffix", lambda p, v: self.string(
            p, v, SUFFIX, "dot-separated letters/digits/'-' such as acme.1"), default="")
        k8s_version = "latest"
        kube = top.get("kubernetes")
        if kube is not None and self.mapping("kubernetes", kube, ("version",), required=("version",)) is not None:
            raw = kube.get("version")
            if isinstance(raw, float):
                # YAML reads 1.30 as the float 1.3: refuse rather than guess the minor.
                self.err("kubernetes.version", f"must be a quoted string such as \"1.36\", got the number {raw}")
            elif raw is not None:
                k8s_version = self.string("kubernetes.version", raw, K8S_VERSION,
                                          "a Kubernetes version such as \"1.36\", \"v1.36.2\" or \"latest\"") or k8s_version
        namespace = self.optional(top, "namespace", "namespace", self.dns_label, default=DEFAULT_NAMESPACE)
        plugins = self.plugins(top.get("plugins"))
        patches = self.patches(top.get("patches"))
        platforms = self.platforms(top.get("platforms"))
        image = self.image(top.get("image"), name)
        profiles = self.profiles(top.get("profiles"), name)
        extenders = self.extenders(top.get("extenders"))
        leader = self.leader_election(top.get("leaderElection"), name, namespace)
        client = self.client_connection(top.get("clientConnection"))
        parallelism = self.optional(top, "parallelism", "parallelism", lambda p, v: self.integer(p, v, lo=1))
        pct = self.optional(top, "percentageOfNodesToScore", "percentageOfNodesToScore",
                            lambda p, v: self.integer(p, v, lo=0, hi=100))
        initial = self.optional(top, "podInitialBackoffSeconds", "podInitialBackoffSeconds",
                                lambda p, v: self.integer(p, v, lo=1))
        maximum = self.optional(top, "podMaxBackoffSeconds", "podMaxBackoffSeconds",
                                lambda p, v: self.integer(p, v, lo=1))
        # The scheduler's defaults are 1s and 10s; check the order as it will run.
        if (initial or maximum) and (maximum if maximum is not None else 10) < (initial if initial is not None else 1):
            self.err("podMaxBackoffSeconds",
                     f"must be >= podInitialBackoffSeconds ({initial if initial is not None else 1}), "
                     f"got {maximum if maximum is not None else 10}")
        deployment = self.deployment(top.get("deployment"))
        ref = self.reference_extender(top.get("referenceExtender"))
        self.binding_extenders(extenders, ref)
        if deployment.replicas > 1 and not leader.get("leaderElect", True):
            # Two active replicas of one scheduler would bind the same pods twice.
            self.err("deployment.replicas", f"{deployment.replicas} replicas need leaderElection.leaderElect: true")
        return Spec(
            path=spec_path, name=name, version=version, kubernetes_version=k8s_version, version_suffix=suffix,
            plugins=tuple(plugins), patches=tuple(patches), platforms=tuple(platforms), image=image,
            namespace=namespace, profiles=profiles, extenders=extenders, leader_election=leader,
            client_connection=client, parallelism=parallelism, percentage_of_nodes_to_score=pct,
            pod_initial_backoff_seconds=initial, pod_max_backoff_seconds=maximum, deployment=deployment,
            reference_extender=ref,
        )

    def plugins(self, value: Any) -> list[PluginSource]:
        out: list[PluginSource] = []
        if value is None or self.seq("plugins", value) is None:
            return out
        seen_names: dict[str, str] = {}
        for i, item in enumerate(value):
            p = f"plugins[{i}]"
            if self.mapping(p, item, ("path", "module", "version", "package", "names"),
                            required=("package", "names")) is None:
                continue
            has_path, has_module = item.get("path") is not None, item.get("module") is not None
            if has_path and has_module and item.get("version") is not None:
                self.err(f"{p}.module", "give either path (a local module) or module + version, not both")
            elif not has_path and not has_module:
                self.err(p, "needs a source: path (a local Go module directory) or module + version")
            local: Path | None = None
            module = ""
            version = ""
            if has_path:
                raw = self.string(f"{p}.path", item["path"])
                if raw:
                    local = (self.base_dir / raw).resolve()
                    module = self.local_module(f"{p}.path", raw, local)
                if has_module:
                    # A path may also state its module; it must agree with go.mod.
                    stated = self.string(f"{p}.module", item["module"], GO_IMPORT_PATH, "a Go module path")
                    if stated and module and stated != module:
                        self.err(f"{p}.module", f"{stated!r} differs from the module {module!r} in {raw}/go.mod")
                    module = module or stated or ""
                if item.get("version") is not None and not has_module:
                    self.err(f"{p}.version", "only applies to module plugins; a local path is used as it is")
            elif has_module:
                module = self.string(f"{p}.module", item["module"], GO_IMPORT_PATH,
                                     "a Go module path such as example.com/acme/underlay") or ""
                if item.get("version") is None:
                    self.err(f"{p}.version", "is required with module (a module version such as v1.2.3)")
                else:
                    version = self.string(f"{p}.version", item["version"], GO_MODULE_VERSION,
                                          "a Go module version such as v1.2.3") or ""
            package = ""
            if item.get("package") is not None:
                package = self.string(f"{p}.package", item["package"], GO_IMPORT_PATH,
                                      "a Go import path such as example.com/acme/underlay/pkg/plugin") or ""
                if package and module and not (package == module or package.startswith(module + "/")):
                    self.err(f"{p}.package", f"{package!r} is not inside module {module!r}")
            names: list[str] = []
            if item.get("names") is not None and self.seq(f"{p}.names", item["names"]) is not None:
                if not item["names"]:
                    self.err(f"{p}.names", "must list at least one plugin name")
                for j, n in enumerate(item["names"]):
                    got = self.string(f"{p}.names[{j}]", n, GO_IDENT,
                                      "an exported Go identifier such as UnderlayIPLimit")
                    if got is None:
                        continue
                    if got in seen_names:
                        self.err(f"{p}.names[{j}]", f"{got!r} is already registered by {seen_names[got]}")
                    seen_names[got] = p
                    names.append(got)
            out.append(PluginSource(package=package, names=tuple(names), path=local, module=module, version=version))
        return out

    def local_module(self, path: str, raw: str, directory: Path) -> str:
        gomod = directory / "go.mod"
        if not directory.is_dir():
            if self.check_files:
                self.err(path, f"{raw!r} is not a directory (resolved to {directory})")
            return ""
        if not gomod.is_file():
            if self.check_files:
                self.err(path, f"{raw!r} has no go.mod; a local plugin must be a Go module")
            return ""
        match = re.search(r"(?m)^module\s+(\S+)", gomod.read_text(encoding="utf-8", errors="replace"))
        return match.group(1).strip('"') if match else ""

    def patches(self, value: Any) -> list[Path]:
        out: list[Path] = []
        if value is None or self.seq("patches", value) is None:
            return out
        seen: set[Path] = set()
        for i, item in enumerate(value):
            raw = self.string(f"patches[{i}]", item)
            if raw is None:
                continue
            resolved = (self.base_dir / raw).resolve()
            if resolved in seen:
                self.err(f"patches[{i}]", f"{raw!r} is listed twice")
                continue
            seen.add(resolved)
            if self.check_files and not resolved.is_file():
                self.err(f"patches[{i}]", f"no such patch file {raw!r} (resolved to {resolved})")
            out.append(resolved)
        return out

    def platforms(self, value: Any) -> list[str]:
        out: list[str] = []
        if value is None or self.seq("platforms", value) is None:
            return out
        for i, item in enumerate(value):
            got = self.string(f"platforms[{i}]", item, PLATFORM, "os/arch such as linux/amd64 or linux/arm64")
            if got is None:
                continue
            if got in out:
                self.err(f"platforms[{i}]", f"{got!r} is listed twice")
                continue
            out.append(got)
        return out

    def image(self, value: Any, name: str) -> Image:
        default = Image(repository=f"scheduler-build/{name}")
        if value is None or self.mapping("image", value, ("repository", "tag", "pullPolicy")) is None:
            return default
        repo = self.optional(value, "repository", "image.repository", lambda p, v: self.string(
            p, v, IMAGE_REPO, "an image repository such as registry.example.com/acme/kube-scheduler (no tag)"),
            default=default.repository)
        tag = self.optional(value, "tag", "image.tag", lambda p, v: self.string(
            p, str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v, IMAGE_TAG, "an image tag"),
            default="")
        policy = self.optional(value, "pullPolicy", "image.pullPolicy",
                               lambda p, v: self.string(p, v, choices=PULL_POLICIES), default="IfNotPresent")
        return Image(repository=repo, tag=tag, pull_policy=policy)

    # profiles / extenders, in the v1 form

    def profiles(self, value: Any, name: str) -> list[dict]:
        if value is None:
            return [{"schedulerName": name}]
        if self.seq("profiles", value) is None:
            return []
        if not value:
            self.err("profiles", "must list at least one profile (or be left out for one named after the scheduler)")
            return []
        out: list[dict] = []
        seen: dict[str, int] = {}
        queue_sorts: list[tuple[int, Any]] = []
        for i, item in enumerate(value):
            p = f"profiles[{i}]"
            if self.mapping(p, item, ("schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"),
                            required=("schedulerName",)) is None:
                continue
            profile: dict[str, Any] = {}
            sched = item.get("schedulerName")
            if sched is not None:
                got = self.string(f"{p}.schedulerName", sched, DNS1123_SUBDOMAIN, "a DNS-1123 subdomain")
                if got is not None:
                    if got in seen:
                        self.err(f"{p}.schedulerName", f"duplicate schedulerName {got!r} (also profiles[{seen[got]}])")
                    seen[got] = i
                    profile["schedulerName"] = got
            if item.get("percentageOfNodesToScore") is not None:
                pct = self.integer(f"{p}.percentageOfNodesToScore", item["percentageOfNodesToScore"], lo=0, hi=100)
                if pct is not None:
                    profile["percentageOfNodesToScore"] = pct
            if item.get("plugins") is not None:
                plugins = self.plugin_sets(f"{p}.plugins", item["plugins"])
                if plugins:
                    profile["plugins"] = plugins
                queue_sorts.append((i, plugins.get("queueSort")))
            else:
                queue_sorts.append((i, None))
            if item.get("pluginConfig") is not None:
                configs = self.plugin_config(f"{p}.pluginConfig", item["pluginConfig"])
                if configs:
                    profile["pluginConfig"] = configs
            out.append(profile)
        # Upstream requires one queue sort for all profiles (they share one queue).
        if queue_sorts:
            first_index, first = queue_sorts[0]
            for index, qs in queue_sorts[1:]:
                if _canon(qs) != _canon(first):
                    self.err(f"profiles[{index}].plugins.queueSort",
                             f"queue sort {_show(qs) if qs else 'default (PrioritySort)'} differs from profiles[{first_index}] "
                             f"({_show(first) if first else 'default (PrioritySort)'}); "
                             "every profile must use the same queue sort")
        return out

    def plugin_sets(self, path: str, value: Any) -> dict:
        if self.mapping(path, value, EXTENSION_POINTS) is None:
            return {}
        out: dict[str, Any] = {}
        for point in EXTENSION_POINTS:
            if value.get(point) is None:
                continue
            pp = f"{path}.{point}"
            if self.mapping(pp, value[point], ("enabled", "disabled")) is None:
                continue
            plugin_set: dict[str, Any] = {}
            for kind in ("enabled", "disabled"):
                entries = value[point].get(kind)
                if entries is None or self.seq(f"{pp}.{kind}", entries) is None:
                    continue
                got_list = []
                names_seen: set[str] = set()
                for j, entry in enumerate(entries):
                    ep = f"{pp}.{kind}[{j}]"
                    allowed = ("name", "weight") if kind == "enabled" else ("name",)
                    if self.mapping(ep, entry, allowed, required=("name",)) is None:
                        continue
                    got: dict[str, Any] = {}
                    if entry.get("name") is not None:
                        n = self.string(f"{ep}.name", entry["name"])
                        if n is not None:
                            if n == "*" and kind == "enabled":
                                self.err(f"{ep}.name", "'*' is only valid in disabled")
                            elif not n:
                                self.err(f"{ep}.name", "must not be empty")
                            elif n in names_seen:
                                self.err(f"{ep}.name", f"{n!r} is listed twice in {point}.{kind}")
                            names_seen.add(n)
                            got["name"] = n
                    if entry.get("weight") is not None:
                        # 0 means "the plugin's default weight" in v1; the field is an int32 upstream.
                        w = self.integer(f"{ep}.weight", entry["weight"], lo=0, hi=2**31 - 1)
                        if w is not None:
                            if point not in ("score", "multiPoint"):
                                self.err(f"{ep}.weight", f"weight only applies to score and multiPoint, got {w} in {point}")
                            else:
                                got["weight"] = w
                    got_list.append(got)
                plugin_set[kind] = got_list
            out[point] = plugin_set
        return out

    def plugin_config(self, path: str, value: Any) -> list[dict]:
        if self.seq(path, value) is None:
            return []
        out: list[dict] = []
        seen: dict[str, int] = {}
        for j, entry in enumerate(value):
            ep = f"{path}[{j}]"
            if self.mapping(ep, entry, ("name", "args"), required=("name",)) is None:
                continue
            got: dict[str, Any] = {}
            if entry.get("name") is not None:
                n = self.string(f"{ep}.name", entry["name"])
                if n is not None:
                    if n in seen:
                        self.err(f"{ep}.name", f"duplicate pluginConfig for {n!r} (also {path}[{seen[n]}])")
                    seen[n] = j
                    got["name"] = n
            if entry.get("args") is not None:
                if not isinstance(entry["args"], dict):
                    self.err(f"{ep}.args", f"must be a mapping of the plugin's args, got {_type_name(entry['args'])}")
                else:
                    got["args"] = entry["args"]
            out.append(got)
        return out

    def extenders(self, value: Any) -> list[dict]:
        out: list[dict] = []
        if value is None or self.seq("extenders", value) is None:
            return out
        for i, item in enumerate(value):
            p = f"extenders[{i}]"
            if self.mapping(p, item, ("urlPrefix", "filterVerb", "prioritizeVerb", "preemptVerb", "bindVerb",
                                      "weight", "enableHTTPS", "tlsConfig", "httpTimeout", "nodeCacheCapable",
                                      "managedResources", "ignorable"), required=("urlPrefix",)) is None:
                continue
            out.append(self.extender(p, item))
        return out

    def extender(self, p: str, item: dict) -> dict:
        got: dict[str, Any] = {}
        url = self.optional(item, "urlPrefix", f"{p}.urlPrefix", lambda q, v: self.string(
            q, v, re.compile(r"^https?://[^\s/]+"), "an http:// or https:// URL"))
        if url:
            got["urlPrefix"] = url
        for verb in ("filterVerb", "prioritizeVerb", "preemptVerb", "bindVerb"):
            v = self.optional(item, verb, f"{p}.{verb}", lambda q, x: self.string(
                q, x, re.compile(r"^[A-Za-z0-9._~/-]+$"), "a URL path segment such as filter"))
            if v:
                got[verb] = v
        if item.get("weight") is not None:
            w = self.integer(f"{p}.weight", item["weight"])
            if w is not None:
                got["weight"] = w
        if "prioritizeVerb" in got:
            weight = item.get("weight")
            if weight is None:
                self.err(f"{p}.weight", "must be > 0 when prioritizeVerb is set, got nothing")
            elif self.integer_or_none(weight) and weight <= 0:
                self.err(f"{p}.weight", f"must be > 0 when prioritizeVerb is set, got {weight}")
        for flag in ("enableHTTPS", "nodeCacheCapable", "ignorable"):
            b = self.optional(item, flag, f"{p}.{flag}", self.boolean)
            if b is not None:
                got[flag] = b
        if item.get("tlsConfig") is not None:
            tls = self.mapping(f"{p}.tlsConfig", item["tlsConfig"], (
                "insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData"))
            if tls is not None:
                tls_got: dict[str, Any] = {}
                for key, val in tls.items():
                    if key == "insecure":
                        if self.boolean(f"{p}.tlsConfig.insecure", val) is not None:
                            tls_got[key] = val
                    elif key in ("serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData"):
                        if self.string(f"{p}.tlsConfig.{key}", val) is not None:
                            tls_got[key] = val
                got["tlsConfig"] = tls_got
                if not got.get("enableHTTPS"):
                    self.err(f"{p}.tlsConfig", "is only used with enableHTTPS: true")
        if item.get("httpTimeout") is not None:
            t = self.string(f"{p}.httpTimeout", item["httpTimeout"], DURATION,
                            "a duration such as 5s or 1m30s") if not isinstance(item["httpTimeout"], (int, float)) else \
                self.err(f"{p}.httpTimeout", f"must be a duration string such as 5s, got the number {item['httpTimeout']} "
                         "(Policy files gave nanoseconds: use inv config.migrate-policy)")
            if t:
                got["httpTimeout"] = t
        if item.get("managedResources") is not None and self.seq(f"{p}.managedResources", item["managedResources"]) is not None:
            resources = []
            for j, res in enumerate(item["managedResources"]):
                rp = f"{p}.managedResources[{j}]"
                if self.mapping(rp, res, ("name", "ignoredByScheduler"), required=("name",)) is None:
                    continue
                entry: dict[str, Any] = {}
                if res.get("name") is not None and self.string(f"{rp}.name", res["name"]) is not None:
                    entry["name"] = res["name"]
                if res.get("ignoredByScheduler") is not None and self.boolean(f"{rp}.ignoredByScheduler", res["ignoredByScheduler"]) is not None:
                    entry["ignoredByScheduler"] = res["ignoredByScheduler"]
                resources.append(entry)
            got["managedResources"] = resources
        if not any(v in got for v in ("filterVerb", "prioritizeVerb", "preemptVerb", "bindVerb")) and url:
            self.err(p, "sets no verb: give at least one of filterVerb, prioritizeVerb, preemptVerb, bindVerb")
        return got

    @staticmethod
    def integer_or_none(value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    def binding_extenders(self, extenders: list[dict], ref: ReferenceExtender) -> None:
        binders = [i for i, e in enumerate(extenders) if e.get("bindVerb")]
        if ref.enabled and ref.bind:
            binders.append(-1)
        if len(binders) > 1:
            first = "referenceExtender.bind" if binders[0] == -1 else f"extenders[{binders[0]}].bindVerb"
            for i in binders[1:]:
                where = "referenceExtender.bind" if i == -1 else f"extenders[{i}].bindVerb"
                self.err(where, f"only one extender may bind; {first} already does")

    def leader_election(self, value: Any, name: str, namespace: str) -> dict:
        out: dict[str, Any] = {"leaderElect": True, "resourceLock": "leases", "resourceName": name,
                               "resourceNamespace": namespace}
        if value is None or self.mapping("leaderElection", value, (
                "leaderElect", "leaseDuration", "renewDeadline", "retryPeriod", "resourceLock", "resourceName",
                "resourceNamespace")) is None:
            return out
        p = "leaderElection"
        if value.get("leaderElect") is not None and self.boolean(f"{p}.leaderElect", value["leaderElect"]) is not None:
            out["leaderElect"] = value["leaderElect"]
        for key in ("leaseDuration", "renewDeadline", "retryPeriod"):
            if value.get(key) is not None and self.string(f"{p}.{key}", value[key], DURATION,
                                                          "a duration such as 15s") is not None:
                out[key] = value[key]
        if value.get("resourceLock") is not None:
            if self.string(f"{p}.resourceLock", value["resourceLock"], choices=("leases",)) is not None:
                out["resourceLock"] = "leases"
        for key in ("resourceName", "resourceNamespace"):
            if value.get(key) is not None and self.string(f"{p}.{key}", value[key], DNS1123_SUBDOMAIN,
                                                          "a DNS-1123 name") is not None:
                out[key] = value[key]
        if out.get("leaderElect") and out.get("resourceName") == "kube-scheduler" and out.get("resourceNamespace") == "kube-system":
            self.err(f"{p}.resourceName", "'kube-scheduler' in kube-system is the default scheduler's lock; "
                     "a second scheduler needs a lock of its own")
        lease, renew, retry = (_seconds(out.get(k)) for k in ("leaseDuration", "renewDeadline", "retryPeriod"))
        lease = 15.0 if lease is None else lease
        renew = 10.0 if renew is None else renew
        retry = 2.0 if retry is None else retry
        if renew >= lease:
            self.err(f"{p}.renewDeadline", f"must be shorter than leaseDuration ({lease:g}s), got {renew:g}s")
        if retry >= renew:
            self.err(f"{p}.retryPeriod", f"must be shorter than renewDeadline ({renew:g}s), got {retry:g}s")
        return out

    def client_connection(self, value: Any) -> dict:
        out: dict[str, Any] = {}
        if value is None or self.mapping("clientConnection", value, (
                "kubeconfig", "acceptContentTypes", "contentType", "qps", "burst")) is None:
            return out
        p = "clientConnection"
        for key in ("kubeconfig", "acceptContentTypes", "contentType"):
            if value.get(key) is not None and self.string(f"{p}.{key}", value[key]) is not None:
                out[key] = value[key]
        if value.get("qps") is not None and self.number(f"{p}.qps", value["qps"], lo=0) is not None:
            out["qps"] = value["qps"]
        if value.get("burst") is not None and self.integer(f"{p}.burst", value["burst"], lo=0) is not None:
            out["burst"] = value["burst"]
        return out

    def deployment(self, value: Any) -> Deployment:
        default = Deployment()
        if value is None or self.mapping("deployment", value, (
                "replicas", "resources", "verbosity", "priorityClassName", "nodeSelector")) is None:
            return default
        p = "deployment"
        replicas = self.optional(value, "replicas", f"{p}.replicas", lambda q, v: self.integer(q, v, lo=1),
                                 default=default.replicas)
        verbosity = self.optional(value, "verbosity", f"{p}.verbosity", lambda q, v: self.integer(q, v, lo=0, hi=10),
                                  default=default.verbosity)
        prio = self.optional(value, "priorityClassName", f"{p}.priorityClassName",
                             lambda q, v: self.string(q, v, DNS1123_SUBDOMAIN, "a PriorityClass name"), default="")
        selector: dict = {}
        if value.get("nodeSelector") is not None and self.mapping(f"{p}.nodeSelector", value["nodeSelector"],
                                                                  tuple(value["nodeSelector"]) if isinstance(value["nodeSelector"], dict) else ()) is not None:
            for k, v in value["nodeSelector"].items():
                if self.string(f"{p}.nodeSelector.{k}", v) is not None:
                    selector[str(k)] = v
        resources = default.resources
        if value.get("resources") is not None:
            resources = self.resources(f"{p}.resources", value["resources"])
        return Deployment(replicas=replicas, resources=resources, verbosity=verbosity, priority_class_name=prio,
                          node_selector=selector)

    def resources(self, p: str, value: Any) -> dict:
        out: dict[str, Any] = {}
        if self.mapping(p, value, ("requests", "limits")) is None:
            return out
        for kind in ("requests", "limits"):
            if value.get(kind) is None:
                continue
            if self.mapping(f"{p}.{kind}", value[kind], ("cpu", "memory", "ephemeral-storage")) is None:
                continue
            got = {}
            for res, qty in value[kind].items():
                text = str(qty) if isinstance(qty, (int, float)) and not isinstance(qty, bool) else qty
                if self.string(f"{p}.{kind}.{res}", text, QUANTITY, "a quantity such as 100m, 0.5 or 128Mi") is not None:
                    got[res] = text
            out[kind] = got
        return out

    def reference_extender(self, value: Any) -> ReferenceExtender:
        default = ReferenceExtender()
        if value is None or self.mapping("referenceExtender", value, (
                "enabled", "image", "port", "replicas", "nodeCacheCapable", "weight", "ignorable", "filter",
                "prioritize", "preempt", "bind", "httpTimeout", "managedResources")) is None:
            return default
        p = "referenceExtender"
        fields: dict[str, Any] = {}
        for key, attr in (("enabled", "enabled"), ("nodeCacheCapable", "node_cache_capable"), ("ignorable", "ignorable"),
                          ("filter", "filter"), ("prioritize", "prioritize"), ("preempt", "preempt"), ("bind", "bind")):
            b = self.optional(value, key, f"{p}.{key}", self.boolean)
            if b is not None:
                fields[attr] = b
        img = self.optional(value, "image", f"{p}.image", lambda q, v: self.string(
            q, v, re.compile(r"^[a-z0-9][a-z0-9._/:-]*(@sha256:[0-9a-f]{64})?$"), "an image reference such as acme/extender:1.0"))
        if img:
            fields["image"] = img
        port = self.optional(value, "port", f"{p}.port", lambda q, v: self.integer(q, v, lo=1, hi=65535))
        if port is not None:
            fields["port"] = port
        replicas = self.optional(value, "replicas", f"{p}.replicas", lambda q, v: self.integer(q, v, lo=1))
        if replicas is not None:
            fields["replicas"] = replicas
        weight = self.optional(value, "weight", f"{p}.weight", lambda q, v: self.integer(q, v, lo=1))
        if weight is not None:
            fields["weight"] = weight
        timeout = self.optional(value, "httpTimeout", f"{p}.httpTimeout", lambda q, v: self.string(
            q, v, DURATION, "a duration such as 5s"))
        if timeout:
            fields["http_timeout"] = timeout
        if value.get("managedResources") is not None:
            probe = self.extender(f"{p}", {"urlPrefix": "http://x", "filterVerb": "f",
                                           "managedResources": value["managedResources"]})
            # Re-key errors reported under the probe: they already carry "referenceExtender.managedResources".
            fields["managed_resources"] = tuple(probe.get("managedResources", ()))
        ref = ReferenceExtender(**{**default.__dict__, **fields})
        if ref.enabled and not ref.image:
            self.err(f"{p}.image", "is required when the reference extender is enabled")
        if ref.enabled and not (ref.filter or ref.prioritize or ref.preempt or ref.bind):
            self.err(p, "enables no verb: set at least one of filter, prioritize, preempt, bind")
        return ref


def _canon(value: Any) -> Any:
    """Order-insensitive form of a plugin set for comparing queue sorts."""
    if not value:
        return None
    return {k: sorted((e.get("name", ""), e.get("weight", 0)) for e in v) for k, v in sorted(value.items()) if v}


_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def _seconds(duration: Any) -> float | None:
    """A Go duration string in seconds (None when absent or not parseable)."""
    if not isinstance(duration, str) or not DURATION.match(duration):
        return None
    if duration == "0":
        return 0.0
    return sum(float(n) * _UNIT_SECONDS[u] for n, u in _DURATION_PART.findall(duration))


def duration_seconds(duration: str) -> float | None:
    """Public helper: Go duration string -> seconds, None when invalid."""
    return _seconds(duration)

"""The loaded build spec: plain dataclasses, and the names derived from them (pure).

Who reads what (keep these fields stable, they are the contract between stages):
- `inv build --spec`: ``plugins``, ``patches``, ``platforms``, ``version_suffix``,
  ``kubernetes_version``, ``name``.
- `inv image.*`: ``image``, ``platforms``, ``version``, ``name``.
- `inv config.*` / `inv deploy`: everything else.

Keys are camelCase in YAML (like KubeSchedulerConfiguration) and snake_case on
the dataclasses. ``profiles`` and ``extenders`` are kept as plain dicts in the
exact ``kubescheduler.config.k8s.io/v1`` form (already validated and defaulted)
because the renderer copies them into the configuration verbatim.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from scheduler_build.extender.config import PORT

DEFAULT_NAMESPACE = "kube-system"
DEFAULT_REPOSITORY_PREFIX = "scheduler-build"  # an image without image.repository: scheduler-build/<name>


def default_repository(name: str) -> str:
    """The local image repository of a build without image.repository (the spec's default and the flags')."""
    return f"{DEFAULT_REPOSITORY_PREFIX}/{name}"


@dataclass(frozen=True)
class Registration:
    """One `app.WithPlugin(<name>, <package>.<factory>)` line of the wrapper's main.go.

    ``field`` is the spec path that produced it (``plugins[0].register[1]``), so
    an error the compiler reports on that line names the field at fault.
    ``name_ident`` is set by the short form (``package`` + ``names``): the plugin
    name is then the package's exported ``Name`` constant, not a string literal.
    """

    name: str  # the plugin name profiles use
    factory: str  # exported constructor identifier in ``package``
    package: str  # Go import path
    field: str = ""
    name_ident: str = ""


@dataclass(frozen=True)
class PluginSource:
    """One out-of-tree plugin Go module compiled into the scheduler.

    Exactly one of ``path`` (a local Go module directory, absolute) or
    ``module`` + ``version`` (fetched through the Go module proxy) is the source.
    Short form: ``package`` exports ``Name`` and ``New`` and ``names`` holds the
    one plugin name it registers. ``register`` lists any number of explicit
    registrations (any package of the module, any exported factory); ``imports``
    are packages imported only for their side effects (an args scheme).
    For a local path, ``module`` is read from its go.mod.
    """

    package: str
    names: tuple[str, ...]
    path: Path | None = None
    module: str = ""
    version: str = ""
    register: tuple[Registration, ...] = ()
    imports: tuple[str, ...] = ()
    field: str = ""  # plugins[i]

    @property
    def local(self) -> bool:
        return self.path is not None

    @property
    def registrations(self) -> tuple[Registration, ...]:
        """Every WithPlugin line this entry produces: the short form's, then ``register``'s."""
        short = tuple(
            Registration(name=n, factory="New", package=self.package, field=f"{self.field or 'plugins[?]'}.package",
                         name_ident="Name")
            for n in self.names[:1] if self.package
        )
        return short + self.register

    @property
    def plugin_names(self) -> tuple[str, ...]:
        return tuple(self.names) + tuple(r.name for r in self.register)


@dataclass(frozen=True)
class Debuggable:
    """`debuggable`: what the recorder of a debuggable build records (build/debuggable.py); `enabled` False is a
    release build."""

    enabled: bool = False
    pod_label: str = ""  # record only pods with this label key; empty: every pod the scheduler schedules
    top_nodes: int = 10  # nodes named with their scores
    rejected_nodes: int = 50  # rejected nodes named with plugin and reason; the rest are counted only

    def to_dict(self) -> dict:
        return {"enabled": self.enabled, "podLabel": self.pod_label, "topNodes": self.top_nodes,
                "rejectedNodes": self.rejected_nodes}


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
    resources: dict = field(default_factory=lambda: {"requests": {"cpu": "100m", "memory": "128Mi"},
                                                     "limits": {"memory": "512Mi"}})
    verbosity: int = 2
    priority_class_name: str = ""
    node_selector: dict = field(default_factory=dict)


@dataclass(frozen=True)
class ReferenceExtender:
    """The bundled Python extender (issue 6), deployed beside the scheduler when enabled.

    Its `extenders` entry is added to the configuration by the renderer
    (`config.schedulerconfig.extenders`), pointing at its Service.
    """

    enabled: bool = False
    image: str = ""
    port: int = PORT
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
    tls: bool = True  # mutual TLS between the scheduler and the extender; False: plain HTTP (opt-out)


@dataclass(frozen=True)
class Party:
    """A supplier or author named in the SBOMs: SPDX `Organization: name (email)`, CycloneDX `{name, email, url}`."""

    name: str
    email: str = ""  # the contact
    url: str = ""


@dataclass(frozen=True)
class SbomInfo:
    """`sbom`: who supplies the scheduler (its own modules and image) and who authored its SBOMs.

    Unset, the supplier of every module comes from its module path's host (sbom.py's `host_supplier`)
    and the SBOMs name only the tool as their creator."""

    supplier: Party | None = None
    author: Party | None = None


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
    sbom: SbomInfo = field(default_factory=SbomInfo)
    debuggable: Debuggable = field(default_factory=Debuggable)  # the recorder (docs/explain.md)
    pgo: Path | None = None  # a CPU profile for a profile-guided build (docs/build.md), absolute
    feature_gates: dict[str, bool] = field(default_factory=dict)  # `featureGates`: name -> on, sorted by name

    @property
    def plugin_names(self) -> tuple[str, ...]:
        """Every plugin name the spec's own out-of-tree plugins register."""
        return tuple(name for plugin in self.plugins for name in plugin.plugin_names)


def feature_gates_flag(gates: dict[str, bool]) -> list[str]:
    """The kube-scheduler flag for `gates` (`--feature-gates=A=true,B=false`, sorted), or [] for none."""
    if not gates:
        return []
    return ["--feature-gates=" + ",".join(f"{name}={'true' if on else 'false'}" for name, on in sorted(gates.items()))]


def scheduler_flags(spec: Spec) -> list[str]:
    """The flags the spec adds to every kube-scheduler it runs: the Deployment, the chart, `dev.run`,
    `bench.perf`'s harness (as its workloads' featureGates) and a comparison's sides call this."""
    return feature_gates_flag(spec.feature_gates)


def reference_extender_name(spec: Spec) -> str:
    """The reference extender's Deployment and Service name."""
    return f"{spec.name}-extender"


def reference_extender_url(spec: Spec) -> str:
    """Where the scheduler reaches the reference extender: its Service, in-cluster (https unless tls: false)."""
    scheme = "https" if spec.reference_extender.tls else "http"
    return f"{scheme}://{reference_extender_service_host(spec)}:{spec.reference_extender.port}"


def reference_extender_service_host(spec: Spec) -> str:
    """The Service DNS name the urlPrefix uses (the serving certificate's main SAN)."""
    return f"{reference_extender_name(spec)}.{spec.namespace}.svc"


def default_image_tag(spec: Spec, k8s_version: str) -> str:
    """`<k8s-version>-<spec-version>`, e.g. v1.36.2-0.3.0 (SemVer-safe: no '+')."""
    version = k8s_version if k8s_version.startswith("v") else f"v{k8s_version}"
    return f"{version}-{spec.version}"

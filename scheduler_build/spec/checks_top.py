"""The spec's top level: identity fields, every section in report order, cross-section rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scheduler_build.spec.fields import Fields
from scheduler_build.spec.formats import K8S_VERSION, SEMVERISH, SUFFIX
from scheduler_build.spec.model import DEFAULT_NAMESPACE, Spec
from scheduler_build.spec.checks_debuggable import check_debuggable
from scheduler_build.spec.checks_deployment import check_deployment
from scheduler_build.spec.checks_feature_gates import check_feature_gates
from scheduler_build.spec.checks_extenders import check_binding_extenders, check_extenders
from scheduler_build.spec.checks_image import check_image
from scheduler_build.spec.checks_profiles import check_profiles
from scheduler_build.spec.checks_reference_extender import check_reference_extender
from scheduler_build.spec.checks_sbom import check_sbom
from scheduler_build.spec.checks_runtime import check_client_connection, check_leader_election
from scheduler_build.spec.checks_sources import check_patches, check_platforms, check_plugins

TOP_KEYS = (
    "name", "version", "versionSuffix", "kubernetes", "plugins", "patches", "platforms", "image",
    "namespace", "profiles", "extenders", "leaderElection", "clientConnection", "parallelism",
    "percentageOfNodesToScore", "podInitialBackoffSeconds", "podMaxBackoffSeconds", "deployment",
    "referenceExtender", "sbom", "debuggable", "pgo", "featureGates",
)


def check_spec(f: Fields, data: Any, spec_path: Path, check_files: bool) -> Spec | None:
    """The whole spec; None only when the top level is not a mapping (errors are in `f`)."""
    top = f.mapping("", data, TOP_KEYS, required=("name", "version", "kubernetes"))
    if top is None:
        return None
    name, version, suffix, k8s_version, namespace = _identity(f, top)
    base_dir = spec_path.parent
    plugins = check_plugins(f, top.get("plugins"), base_dir, check_files)
    patches = check_patches(f, top.get("patches"), base_dir, check_files)
    platforms = check_platforms(f, top.get("platforms"))
    image = check_image(f, top.get("image"), name)
    profiles = check_profiles(f, top.get("profiles"), name)
    extenders = check_extenders(f, top.get("extenders"))
    leader = check_leader_election(f, top.get("leaderElection"), name, namespace)
    client = check_client_connection(f, top.get("clientConnection"))
    parallelism, pct, initial, maximum = _tuning(f, top)
    deployment = check_deployment(f, top.get("deployment"))
    ref = check_reference_extender(f, top.get("referenceExtender"))
    check_binding_extenders(f, extenders, ref)
    sbom = check_sbom(f, top.get("sbom"))
    debuggable = check_debuggable(f, top.get("debuggable"))
    pgo = f.optional(top, "pgo", "pgo", lambda p, v: _profile(f, p, v, base_dir, check_files))
    feature_gates = check_feature_gates(f, top.get("featureGates"))
    if deployment.replicas > 1 and not leader.get("leaderElect", True):
        # Two active replicas of one scheduler would bind the same pods twice.
        f.err("deployment.replicas", f"{deployment.replicas} replicas need leaderElection.leaderElect: true")
    return Spec(
        path=spec_path, name=name, version=version, kubernetes_version=k8s_version, version_suffix=suffix,
        plugins=tuple(plugins), patches=tuple(patches), platforms=tuple(platforms), image=image,
        namespace=namespace, profiles=profiles, extenders=extenders, leader_election=leader,
        client_connection=client, parallelism=parallelism, percentage_of_nodes_to_score=pct,
        pod_initial_backoff_seconds=initial, pod_max_backoff_seconds=maximum, deployment=deployment,
        reference_extender=ref, sbom=sbom, debuggable=debuggable, pgo=pgo, feature_gates=feature_gates,
    )


def _profile(f: Fields, path: str, value: Any, base_dir: Path, check_files: bool) -> Path | None:
    """The PGO profile, resolved against the spec's directory (its content is checked when a build is decided)."""
    raw = f.string(path, value)
    if raw is None:
        return None
    resolved = (base_dir / raw).resolve()
    if check_files and not resolved.is_file():
        f.err(path, f"no such profile {raw!r} (resolved to {resolved})")
    return resolved


def _identity(f: Fields, top: dict) -> tuple[str, str, str, str, str]:
    """name, version, versionSuffix, kubernetes.version and namespace, defaulted."""
    name = f.optional(top, "name", "name", f.dns_label, default="scheduler")
    version = f.optional(top, "version", "version", lambda p, v: None if _number(f, p, v) else f.string(
        p, v, SEMVERISH, "a version such as 0.3.0 (letters, digits, '.', '-'; no '+')"), default="0.0.0")
    suffix = f.optional(top, "versionSuffix", "versionSuffix", lambda p, v: f.string(
        p, v, SUFFIX, "dot-separated letters/digits/'-' such as acme.1"), default="")
    k8s_version = _kubernetes_version(f, top.get("kubernetes"))
    namespace = f.optional(top, "namespace", "namespace", f.dns_label, default=DEFAULT_NAMESPACE)
    return name, version, suffix, k8s_version, namespace


def _kubernetes_version(f: Fields, kube: Any) -> str:
    k8s_version = "latest"
    if kube is None or f.mapping("kubernetes", kube, ("version",), required=("version",)) is None:
        return k8s_version
    raw = kube.get("version")
    if raw is not None and not _number(f, "kubernetes.version", raw):
        k8s_version = f.string("kubernetes.version", raw, K8S_VERSION,
                               "a Kubernetes version such as \"1.36\", \"v1.36.2\" or \"latest\"") or k8s_version
    return k8s_version


def _number(f: Fields, path: str, value: Any) -> bool:
    """Report (and say so) a version written as a number: YAML reads `1.10` as 1.1, `1` as an int."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        f.err(path, f"must be a quoted string, got the number {value} "
                    "(YAML reads an unquoted 1.10 as 1.1): quote it, e.g. \"1.10\"")
        return True
    return False


def _tuning(f: Fields, top: dict) -> tuple[int | None, int | None, int | None, int | None]:
    """parallelism, percentageOfNodesToScore and the pod backoffs (None: the scheduler's default)."""
    parallelism = f.optional(top, "parallelism", "parallelism", lambda p, v: f.integer(p, v, lo=1))
    pct = f.optional(top, "percentageOfNodesToScore", "percentageOfNodesToScore",
                     lambda p, v: f.integer(p, v, lo=0, hi=100))
    initial = f.optional(top, "podInitialBackoffSeconds", "podInitialBackoffSeconds",
                         lambda p, v: f.integer(p, v, lo=1))
    maximum = f.optional(top, "podMaxBackoffSeconds", "podMaxBackoffSeconds",
                         lambda p, v: f.integer(p, v, lo=1))
    # The scheduler's defaults are 1s and 10s; check the order as it will run.
    if (initial or maximum) and (maximum if maximum is not None else 10) < (initial if initial is not None else 1):
        f.err("podMaxBackoffSeconds",
              f"must be >= podInitialBackoffSeconds ({initial if initial is not None else 1}), "
              f"got {maximum if maximum is not None else 10}")
    return parallelism, pct, initial, maximum

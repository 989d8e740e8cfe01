"""The KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) as a plain dict: its one builder.

Pure: `for_spec(spec)` is what `inv config.render` writes (through the YAML
serializer of config.render); the e2e harness builds its configurations with
`scheduler_configuration` and `extender_entry` too, so both speak the same v1.
"""

from __future__ import annotations

from typing import Any, Iterable

from scheduler_build.config import extender_tls
from scheduler_build import spec as spec_mod
from scheduler_build.spec import Spec

CONFIG_API = "kubescheduler.config.k8s.io/v1"
CONFIG_KIND = "KubeSchedulerConfiguration"


def extender_entry(url: str, *, filter_verb: str = "filter", prioritize_verb: str = "prioritize",
                   preempt_verb: str = "", bind_verb: str = "", weight: int = 1, node_cache_capable: bool = False,
                   ignorable: bool = False, http_timeout: str = "5s", managed_resources: Iterable[dict] = ()) -> dict:
    """One plain-HTTP `extenders` entry. An empty verb is left out; `weight` goes with prioritize only."""
    entry: dict[str, Any] = {"urlPrefix": url}
    if filter_verb:
        entry["filterVerb"] = filter_verb
    if prioritize_verb:
        entry["prioritizeVerb"] = prioritize_verb
        entry["weight"] = weight
    if preempt_verb:
        entry["preemptVerb"] = preempt_verb
    if bind_verb:
        entry["bindVerb"] = bind_verb
    entry["enableHTTPS"] = False
    entry["httpTimeout"] = http_timeout
    entry["nodeCacheCapable"] = node_cache_capable
    entry["ignorable"] = ignorable
    managed = [dict(m) for m in managed_resources]
    if managed:
        entry["managedResources"] = managed
    return entry


def reference_extender_entry(spec: Spec) -> dict:
    """The bundled reference extender's entry, pointing at its Service: mutual TLS with the
    scheduler pod's mounted client certificate unless the spec opts out (tls: false)."""
    ext = spec.reference_extender
    entry = extender_entry(
        spec_mod.reference_extender_url(spec),
        filter_verb="filter" if ext.filter else "",
        prioritize_verb="prioritize" if ext.prioritize else "",
        preempt_verb="preempt" if ext.preempt else "",
        bind_verb="bind" if ext.bind else "",
        weight=ext.weight, node_cache_capable=ext.node_cache_capable, ignorable=ext.ignorable,
        http_timeout=ext.http_timeout, managed_resources=ext.managed_resources,
    )
    if ext.tls:
        entry["enableHTTPS"] = True
        entry["tlsConfig"] = extender_tls.client_tls_config()
    return entry


def extenders(spec: Spec) -> list[dict]:
    """The configuration's extenders: the spec's own, then the reference extender's when enabled."""
    out = [dict(e) for e in spec.extenders]
    if spec.reference_extender.enabled:
        out.append(reference_extender_entry(spec))
    return out


def scheduler_configuration(*, profiles: Iterable[dict], leader_election: dict, client_connection: dict | None = None,
                            extenders: Iterable[dict] = (), parallelism: int | None = None,
                            percentage_of_nodes_to_score: int | None = None,
                            pod_initial_backoff_seconds: int | None = None,
                            pod_max_backoff_seconds: int | None = None) -> dict:
    """A v1 KubeSchedulerConfiguration; optional fields left out leave the scheduler's defaults."""
    config: dict[str, Any] = {"apiVersion": CONFIG_API, "kind": CONFIG_KIND, "leaderElection": leader_election}
    if client_connection:
        config["clientConnection"] = client_connection
    optional = {"parallelism": parallelism, "percentageOfNodesToScore": percentage_of_nodes_to_score,
                "podInitialBackoffSeconds": pod_initial_backoff_seconds,
                "podMaxBackoffSeconds": pod_max_backoff_seconds}
    config.update({key: value for key, value in optional.items() if value is not None})
    config["profiles"] = list(profiles)
    extenders = list(extenders)
    if extenders:
        config["extenders"] = extenders
    return config


def for_spec(spec: Spec) -> dict:
    """The configuration the spec describes (extenders include the reference one)."""
    return scheduler_configuration(
        profiles=spec.profiles, leader_election=spec.leader_election, client_connection=spec.client_connection,
        extenders=extenders(spec), parallelism=spec.parallelism,
        percentage_of_nodes_to_score=spec.percentage_of_nodes_to_score,
        pod_initial_backoff_seconds=spec.pod_initial_backoff_seconds,
        pod_max_backoff_seconds=spec.pod_max_backoff_seconds,
    )

"""Translate a legacy scheduler Policy (removed in Kubernetes 1.23) into a v1 configuration.

Input: a Policy as JSON or YAML, or a ConfigMap holding one (the old
`--policy-configmap`, key `policy.cfg`). Output: a KubeSchedulerConfiguration of
`kubescheduler.config.k8s.io/v1` with one profile that runs what the Policy ran:

- predicates -> the filter plugins that replaced them, priorities -> score
  plugins with their weights, expressed as `multiPoint` with `"*"` disabled
  (a Policy listed everything that ran) plus per-point disables where a plugin
  was named only as a predicate or only as a priority;
- hardPodAffinitySymmetricWeight -> InterPodAffinity args hardPodAffinityWeight;
- extenders field by field (`enableHttps` -> `enableHTTPS`, integer-nanosecond
  `httpTimeout` -> a duration string).

Anything with no equivalent becomes a warning, never a silent drop. The mapping
follows the upstream legacy registry (pkg/scheduler/framework/plugins/legacy_registry.go
of 1.22, the last release that had it) and the plugins removed since (NodeLabel,
ServiceAffinity, NodePreferAvoidPods, SelectorSpread).
"""

from __future__ import annotations

from scheduler_build.config.legacy_policy.extenders import duration
from scheduler_build.config.legacy_policy.load import load, parse_text
from scheduler_build.config.legacy_policy.migrate import Migration, migrate
from scheduler_build.config.legacy_policy.tables import Note

__all__ = ["Migration", "Note", "duration", "load", "migrate", "parse_text"]

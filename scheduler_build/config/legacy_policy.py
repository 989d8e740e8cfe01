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

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from scheduler_build.errors import UserError

POLICY_HINT = "a Policy is {\"kind\": \"Policy\", \"apiVersion\": \"v1\", \"predicates\": [...], \"priorities\": [...], \"extenders\": [...]}"

# Plugins every profile keeps although a Policy never named them (queue sort, binding, preemption, gates).
ALWAYS_ON = ("PrioritySort", "SchedulingGates", "DefaultBinder", "DefaultPreemption")

# predicate -> plugins (filter side). Upstream treated these two as mandatory in every Policy.
PREDICATES: dict[str, tuple[str, ...]] = {
    "PodFitsResources": ("NodeResourcesFit",),
    "PodFitsHostPorts": ("NodePorts",),
    "PodFitsPorts": ("NodePorts",),
    "HostName": ("NodeName",),
    "MatchNodeSelector": ("NodeAffinity",),
    "GeneralPredicates": ("NodeResourcesFit", "NodeName", "NodePorts", "NodeAffinity"),
    "CheckNodeUnschedulable": ("NodeUnschedulable",),
    "PodToleratesNodeTaints": ("TaintToleration",),
    "NoDiskConflict": ("VolumeRestrictions",),
    "NoVolumeZoneConflict": ("VolumeZone",),
    "MaxCSIVolumeCountPred": ("NodeVolumeLimits",),
    "CheckVolumeBinding": ("VolumeBinding",),
    "MatchInterPodAffinity": ("InterPodAffinity",),
    "EvenPodsSpread": ("PodTopologySpread",),
}
# In-tree volume limits per cloud became CSI limits (CSI migration): same plugin, new name.
PREDICATES_RENAMED: dict[str, tuple[str, str]] = {
    "MaxEBSVolumeCount": ("NodeVolumeLimits", "the AWS EBS limit is enforced through CSI migration by NodeVolumeLimits"),
    "MaxGCEPDVolumeCount": ("NodeVolumeLimits", "the GCE PD limit is enforced through CSI migration by NodeVolumeLimits"),
    "MaxAzureDiskVolumeCount": ("NodeVolumeLimits", "the Azure Disk limit is enforced through CSI migration by NodeVolumeLimits"),
    "MaxCinderVolumeCount": ("NodeVolumeLimits", "the Cinder limit is enforced through CSI migration by NodeVolumeLimits"),
}
PREDICATES_GONE: dict[str, str] = {
    "CheckNodeCondition": "node conditions are taints now (node.kubernetes.io/not-ready, ...), checked by TaintToleration",
    "CheckNodeMemoryPressure": "memory pressure is the node.kubernetes.io/memory-pressure taint, checked by TaintToleration",
    "CheckNodeDiskPressure": "disk pressure is the node.kubernetes.io/disk-pressure taint, checked by TaintToleration",
    "CheckNodePIDPressure": "PID pressure is the node.kubernetes.io/pid-pressure taint, checked by TaintToleration",
    "CheckNodeLabelPresence": "the NodeLabel plugin was removed in 1.24; require the labels with nodeAffinity in the pods instead",
    "CheckServiceAffinity": "the ServiceAffinity plugin was removed in 1.24; use pod affinity instead",
}
MANDATORY_FILTERS = ("NodeUnschedulable", "TaintToleration")

# priority -> (plugin, NodeResourcesFit scoring strategy or None)
PRIORITIES: dict[str, tuple[str, str | None]] = {
    "LeastRequestedPriority": ("NodeResourcesFit", "LeastAllocated"),
    "MostRequestedPriority": ("NodeResourcesFit", "MostAllocated"),
    "RequestedToCapacityRatioPriority": ("NodeResourcesFit", "RequestedToCapacityRatio"),
    "BalancedResourceAllocation": ("NodeResourcesBalancedAllocation", None),
    "InterPodAffinityPriority": ("InterPodAffinity", None),
    "NodeAffinityPriority": ("NodeAffinity", None),
    "TaintTolerationPriority": ("TaintToleration", None),
    "ImageLocalityPriority": ("ImageLocality", None),
    "EvenPodsSpreadPriority": ("PodTopologySpread", None),
}
PRIORITIES_GONE: dict[str, str] = {
    "SelectorSpreadPriority": "SelectorSpread was removed in 1.27; PodTopologySpread's default constraints spread pods of a Service/ReplicaSet instead",
    "ServiceSpreadingPriority": "SelectorSpread was removed in 1.27; PodTopologySpread's default constraints spread pods of a Service instead",
    "NodePreferAvoidPodsPriority": "NodePreferAvoidPods was removed in 1.25 together with the preferAvoidPods annotation",
    "EqualPriority": "it gave every node the same score, which changes nothing",
    "NodeLabelPriority": "the NodeLabel plugin was removed in 1.24; express the preference with preferred nodeAffinity in the pods",
    "ServiceAntiAffinity": "the ServiceAffinity plugin was removed in 1.24; use pod anti-affinity or topology spread constraints",
    "ResourceLimitsPriority": "ResourceLimits was an alpha priority that never became a plugin",
}

POINTS_WITH_FILTER = {  # which points each mapped plugin has besides score, for per-point disables
    "NodeResourcesFit": ("preFilter", "filter", "preScore", "score"),
    "NodePorts": ("preFilter", "filter"),
    "NodeName": ("filter",),
    "NodeAffinity": ("preFilter", "filter", "preScore", "score"),
    "NodeUnschedulable": ("filter",),
    "TaintToleration": ("filter", "preScore", "score"),
    "VolumeRestrictions": ("preFilter", "filter"),
    "VolumeZone": ("preFilter", "filter"),
    "NodeVolumeLimits": ("preFilter", "filter"),
    "VolumeBinding": ("preFilter", "filter", "reserve", "preBind", "preScore", "score"),
    "InterPodAffinity": ("preFilter", "filter", "preScore", "score"),
    "PodTopologySpread": ("preFilter", "filter", "preScore", "score"),
    "NodeResourcesBalancedAllocation": ("preScore", "score"),
    "ImageLocality": ("score",),
}
FILTER_POINTS = ("preFilter", "filter")
SCORE_POINTS = ("preScore", "score")

EXTENDER_FIELDS = {  # lower-case legacy key -> v1 key (Go's JSON decoding ignored case)
    "urlprefix": "urlPrefix", "filterverb": "filterVerb", "preemptverb": "preemptVerb",
    "prioritizeverb": "prioritizeVerb", "bindverb": "bindVerb", "weight": "weight",
    "enablehttps": "enableHTTPS", "tlsconfig": "tlsConfig", "httptimeout": "httpTimeout",
    "nodecachecapable": "nodeCacheCapable", "managedresources": "managedResources", "ignorable": "ignorable",
}
TLS_FIELDS = {k.lower(): k for k in ("insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData")}


@dataclass
class Migration:
    config: dict
    warnings: list[str] = field(default_factory=list)
    source_kind: str = "Policy"  # or "ConfigMap"

    def text(self) -> str:
        """The configuration as YAML, with every warning recorded as a comment at the top."""
        from scheduler_build.config.render import dump

        header = ["# Migrated from a legacy scheduler Policy by `inv config.migrate-policy`."]
        header += [f"# WARNING: {w}" for w in self.warnings] or ["# Every field had an equivalent."]
        return "\n".join(header) + "\n" + dump(self.config)


# --- parsing ---------------------------------------------------------------


def parse_text(text: str, source: str) -> Any:
    """JSON when it looks like JSON (errors with line and column), else YAML (same)."""
    stripped = text.lstrip()
    if not stripped:
        raise UserError(f"{source}: the file is empty", POLICY_HINT)
    if stripped[0] in "{[":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise UserError(f"{source}: line {exc.lineno}, column {exc.colno}: invalid JSON: {exc.msg}",
                            "fix the JSON syntax (a trailing comma or a missing quote is typical)") from None
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise UserError(f"{source}: {where}invalid YAML: {exc.problem or exc}", POLICY_HINT) from None
    except yaml.YAMLError as exc:
        raise UserError(f"{source}: invalid YAML: {exc}", POLICY_HINT) from None


def load(path: Path, configmap_key: str = "") -> tuple[dict, str]:
    """Read a Policy file or a ConfigMap holding one; return (policy, kind of source)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path}: no such file", "pass the Policy file (JSON or YAML) or its ConfigMap") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read: {exc}") from None
    doc = parse_text(text, str(path))
    if isinstance(doc, dict) and doc.get("kind") == "ConfigMap":
        data = doc.get("data") or {}
        if not isinstance(data, dict) or not data:
            raise UserError(f"{path}: the ConfigMap has no data", "the Policy lives under data, usually as policy.cfg")
        if configmap_key:
            if configmap_key not in data:
                raise UserError(f"{path}: the ConfigMap has no key {configmap_key!r}", f"keys: {', '.join(sorted(data))}")
            key = configmap_key
        elif "policy.cfg" in data:
            key = "policy.cfg"
        elif len(data) == 1:
            key = next(iter(data))
        else:
            raise UserError(f"{path}: the ConfigMap has several keys ({', '.join(sorted(data))}) and none is policy.cfg",
                            "pass --configmap-key KEY")
        if not isinstance(data[key], str):
            raise UserError(f"{path}: data[{key!r}] is not a string", "ConfigMap data values are strings")
        policy = parse_text(data[key], f"{path}: data[{key!r}]")
        kind = "ConfigMap"
    else:
        policy, kind = doc, "Policy"
    if not isinstance(policy, dict):
        raise UserError(f"{path}: a Policy must be a mapping, got {type(policy).__name__}", POLICY_HINT)
    if policy.get("kind") not in (None, "Policy"):
        raise UserError(f"{path}: kind is {policy.get('kind')!r}, not Policy", POLICY_HINT)
    return policy, kind


# --- conversion ------------------------------------------------------------


def duration(nanoseconds: int) -> str:
    """Integer nanoseconds -> a Go duration string (30000000000 -> 30s, 1500000000 -> 1.5s)."""
    for unit, size in (("h", 3600 * 10**9), ("m", 60 * 10**9), ("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if nanoseconds % size == 0:
            return f"{nanoseconds // size}{unit}"
    if nanoseconds >= 10**9:
        return f"{nanoseconds / 10**9:g}s"
    return f"{nanoseconds}ns"


def convert_extender(index: int, legacy: Any, warnings: list[str]) -> dict | None:
    where = f"extenders[{index}]"
    if not isinstance(legacy, dict):
        raise UserError(f"{where}: must be a mapping, got {type(legacy).__name__}", POLICY_HINT)
    out: dict[str, Any] = {}
    for key, value in legacy.items():
        target = EXTENDER_FIELDS.get(str(key).lower())
        if target is None:
            warnings.append(f"{where}.{key}: no such field in v1 extenders; dropped (value {value!r})")
            continue
        if target.endswith("Verb") or target == "urlPrefix":
            if value in ("", None):
                continue  # the legacy API wrote unused verbs as "": v1 omits them
            if not isinstance(value, str):
                raise UserError(f"{where}.{key}: must be a string, got {value!r}", POLICY_HINT)
            out[target] = value
        elif target == "httpTimeout":
            if isinstance(value, bool) or not isinstance(value, (int, str)):
                raise UserError(f"{where}.{key}: must be integer nanoseconds, got {value!r}", "e.g. 30000000000 for 30s")
            if isinstance(value, int):
                if value < 0:
                    raise UserError(f"{where}.{key}: must not be negative, got {value}")
                if value:
                    out[target] = duration(value)
            else:
                from scheduler_build.spec import DURATION

                if not DURATION.match(value):
                    raise UserError(f"{where}.{key}: {value!r} is neither nanoseconds nor a duration", "e.g. 30000000000 or 30s")
                out[target] = value
        elif target == "weight":
            if isinstance(value, bool) or not isinstance(value, int):
                raise UserError(f"{where}.{key}: must be an integer, got {value!r}")
            out[target] = value
        elif target in ("enableHTTPS", "nodeCacheCapable", "ignorable"):
            if not isinstance(value, bool):
                raise UserError(f"{where}.{key}: must be true or false, got {value!r}")
            out[target] = value
        elif target == "tlsConfig":
            if value is None:
                continue
            if not isinstance(value, dict):
                raise UserError(f"{where}.{key}: must be a mapping, got {value!r}")
            tls: dict[str, Any] = {}
            for tkey, tval in value.items():
                tt = TLS_FIELDS.get(str(tkey).lower())
                if tt is None:
                    warnings.append(f"{where}.tlsConfig.{tkey}: no such TLS field in v1; dropped")
                elif tval not in ("", None):
                    tls[tt] = tval
            if tls:
                out[target] = tls
        elif target == "managedResources":
            if value is None:
                continue
            if not isinstance(value, list):
                raise UserError(f"{where}.{key}: must be a list, got {value!r}")
            resources = []
            for j, res in enumerate(value):
                if not isinstance(res, dict):
                    raise UserError(f"{where}.{key}[{j}]: must be a mapping, got {res!r}")
                entry: dict[str, Any] = {}
                for rkey, rval in res.items():
                    lowered = str(rkey).lower()
                    if lowered == "name":
                        entry["name"] = rval
                    elif lowered == "ignoredbyscheduler":
                        entry["ignoredByScheduler"] = bool(rval)
                    else:
                        warnings.append(f"{where}.{key}[{j}].{rkey}: no such field in v1; dropped")
                resources.append(entry)
            if resources:
                out[target] = resources
    if "urlPrefix" not in out:
        raise UserError(f"{where}: has no urlPrefix", "every extender needs the base URL it is reached at")
    if out.get("prioritizeVerb") and out.get("weight", 0) <= 0:
        warnings.append(f"{where}.weight: {out.get('weight', 0)} with a prioritizeVerb is invalid in v1 "
                        "(the legacy validation refused it as well); set to 1, the smallest valid weight")
        out["weight"] = 1
    if out.get("tlsConfig") and not out.get("enableHTTPS"):
        warnings.append(f"{where}.tlsConfig: set without enableHttps, so it was never used; kept as is")
    return out


def _named(kind: str, index: int, item: Any) -> tuple[str, Any]:
    if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item.get("name"):
        raise UserError(f"{kind}[{index}]: must be a mapping with a name, got {item!r}", POLICY_HINT)
    return item["name"], item


def migrate(policy: dict, scheduler_name: str = "default-scheduler") -> Migration:
    """A Policy mapping -> Migration(config, warnings)."""
    warnings: list[str] = []
    known_top = {"kind", "apiversion", "predicates", "priorities", "extenders", "hardpodaffinitysymmetricweight",
                 "alwayscheckallpredicates"}
    for key in policy:
        if str(key).lower() not in known_top:
            warnings.append(f"{key}: not a Policy field; ignored")
    fields = {str(k).lower(): v for k, v in policy.items()}

    filters: list[str] = []  # plugins from predicates, in order
    scores: dict[str, int] = {}  # plugin -> weight, in order
    plugin_args: dict[str, dict] = {}
    predicates = fields.get("predicates")
    if predicates is None:
        # No predicates key: the legacy scheduler ran its default set, as v1 does by default.
        filters = None  # type: ignore[assignment]
    else:
        if not isinstance(predicates, list):
            raise UserError(f"predicates: must be a list, got {predicates!r}", POLICY_HINT)
        for i, item in enumerate(predicates):
            name, entry = _named("predicates", i, item)
            if name in PREDICATES_GONE:
                extra = f" (its argument {entry['argument']!r} too)" if entry.get("argument") else ""
                warnings.append(f"predicates[{i}] {name}: no equivalent plugin{extra}: {PREDICATES_GONE[name]}")
                continue
            if entry.get("argument"):
                warnings.append(f"predicates[{i}] {name}: custom argument {entry['argument']!r} has no v1 equivalent "
                                "(custom predicates were removed); dropped")
                continue
            if name in PREDICATES:
                plugins = PREDICATES[name]
            elif name in PREDICATES_RENAMED:
                plugin, why = PREDICATES_RENAMED[name]
                warnings.append(f"predicates[{i}] {name}: mapped to {plugin}: {why}")
                plugins = (plugin,)
            else:
                warnings.append(f"predicates[{i}] {name}: unknown predicate (a custom one registered in a patched "
                                "scheduler?); write it as a plugin and enable it by name; dropped")
                continue
            for plugin in plugins:
                if plugin not in filters:
                    filters.append(plugin)
        for plugin in MANDATORY_FILTERS:
            if plugin not in filters:
                warnings.append(f"{plugin}: added as a filter; the legacy scheduler always ran it too")
                filters.append(plugin)
    priorities = fields.get("priorities")
    strategy: str | None = None
    if priorities is not None:
        if not isinstance(priorities, list):
            raise UserError(f"priorities: must be a list, got {priorities!r}", POLICY_HINT)
        for i, item in enumerate(priorities):
            name, entry = _named("priorities", i, item)
            weight = entry.get("weight", 1)
            if isinstance(weight, bool) or not isinstance(weight, int) or weight < 0:
                raise UserError(f"priorities[{i}].weight: must be a non-negative integer, got {weight!r}", POLICY_HINT)
            argument = entry.get("argument") or {}
            if name in PRIORITIES_GONE:
                warnings.append(f"priorities[{i}] {name} (weight {weight}): no equivalent plugin: {PRIORITIES_GONE[name]}")
                continue
            if name not in PRIORITIES:
                if argument:
                    warnings.append(f"priorities[{i}] {name}: custom priority with argument {argument!r} has no v1 "
                                    "equivalent; dropped")
                else:
                    warnings.append(f"priorities[{i}] {name}: unknown priority; write it as a score plugin; dropped")
                continue
            if weight == 0:
                warnings.append(f"priorities[{i}] {name}: weight 0 disabled it; left out")
                continue
            plugin, wanted = PRIORITIES[name]
            if plugin in scores:
                warnings.append(f"priorities[{i}] {name}: {plugin} already scores for "
                                f"{'its ' + strategy + ' strategy' if strategy else 'an earlier priority'}; "
                                "v1 runs a plugin once per profile, so this one was dropped")
                continue
            scores[plugin] = weight
            if wanted:
                strategy = wanted
                scoring: dict[str, Any] = {"type": wanted}
                if wanted == "RequestedToCapacityRatio":
                    scoring.update(_requested_to_capacity(i, argument, warnings))
                elif argument:
                    warnings.append(f"priorities[{i}] {name}: argument {argument!r} ignored")
                if wanted != "LeastAllocated" or scoring.get("resources"):
                    plugin_args["NodeResourcesFit"] = {"scoringStrategy": scoring}
    hard = fields.get("hardpodaffinitysymmetricweight")
    if hard is not None:
        if isinstance(hard, bool) or not isinstance(hard, int) or not 0 <= hard <= 100:
            raise UserError(f"hardPodAffinitySymmetricWeight: must be an integer 0..100, got {hard!r}", POLICY_HINT)
        plugin_args.setdefault("InterPodAffinity", {})["hardPodAffinityWeight"] = hard
    if fields.get("alwayscheckallpredicates"):
        warnings.append("alwaysCheckAllPredicates: removed; filters always stop at the first failure now")

    profile: dict[str, Any] = {"schedulerName": scheduler_name}
    plugins = _plugins(filters, scores if priorities is not None else None)
    if plugins:
        profile["plugins"] = plugins
    if plugin_args:
        profile["pluginConfig"] = [{"name": n, "args": a} for n, a in sorted(plugin_args.items())]
    config: dict[str, Any] = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                              "profiles": [profile]}
    extenders = fields.get("extenders")
    if extenders is not None:
        if not isinstance(extenders, list):
            raise UserError(f"extenders: must be a list, got {extenders!r}", POLICY_HINT)
        converted = [convert_extender(i, e, warnings) for i, e in enumerate(extenders)]
        binders = [i for i, e in enumerate(converted) if e and e.get("bindVerb")]
        if len(binders) > 1:
            raise UserError(f"extenders[{binders[1]}].bindVerb: only one extender may bind (extenders[{binders[0]}] does too)",
                            "remove the bindVerb of all but one")
        if converted:
            config["extenders"] = converted
    return Migration(config=config, warnings=warnings)


def _requested_to_capacity(index: int, argument: dict, warnings: list[str]) -> dict:
    args = {str(k).lower(): v for k, v in (argument or {}).items()}
    rtc = args.get("requestedtocapacityratioarguments") or args.get("requestedtocapacityratio") or {}
    if not isinstance(rtc, dict):
        raise UserError(f"priorities[{index}].argument: requestedToCapacityRatioArguments must be a mapping")
    rtc = {str(k).lower(): v for k, v in rtc.items()}
    out: dict[str, Any] = {}
    shape = rtc.get("shape") or rtc.get("utilizationshape")
    if shape:
        points = []
        for j, point in enumerate(shape):
            p = {str(k).lower(): v for k, v in point.items()} if isinstance(point, dict) else {}
            if "utilization" not in p or "score" not in p:
                raise UserError(f"priorities[{index}].argument.shape[{j}]: needs utilization and score, got {point!r}")
            points.append({"utilization": p["utilization"], "score": p["score"]})
        out["requestedToCapacityRatio"] = {"shape": points}
    else:
        warnings.append(f"priorities[{index}] RequestedToCapacityRatioPriority: no shape given; v1 requires one, "
                        "used 0->0, 100->10 (favour full nodes)")
        out["requestedToCapacityRatio"] = {"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}
    resources = rtc.get("resources")
    if resources:
        out["resources"] = [{"name": r.get("name"), "weight": r.get("weight", 1)} for r in resources if isinstance(r, dict)]
    return out


def _plugins(filters: list[str] | None, scores: dict[str, int] | None) -> dict:
    """The profile's plugins: multiPoint with everything named, '*' disabled, per-point trims."""
    if filters is None and scores is None:
        return {}  # neither list given: the legacy defaults, which are v1's defaults
    if filters is None:
        # Priorities only: keep the default filters, replace the scoring.
        enabled = [{"name": n, "weight": w} for n, w in scores.items()]  # type: ignore[union-attr]
        return {"score": {"disabled": [{"name": "*"}], "enabled": enabled}} if enabled else {
            "score": {"disabled": [{"name": "*"}]}}
    scores = scores if scores is not None else {}
    named = list(dict.fromkeys([*ALWAYS_ON, *filters, *scores]))
    multi = []
    for name in named:
        entry: dict[str, Any] = {"name": name}
        if name in scores:
            entry["weight"] = scores[name]
        multi.append(entry)
    plugins: dict[str, Any] = {"multiPoint": {"enabled": multi, "disabled": [{"name": "*"}]}}
    # A plugin named only as a priority must not filter, and one named only as a predicate must not score.
    trims: dict[str, list[str]] = {}
    for name in named:
        points = POINTS_WITH_FILTER.get(name, ())
        if name in scores and name not in filters:
            for point in FILTER_POINTS:
                if point in points:
                    trims.setdefault(point, []).append(name)
        if name in filters and name not in scores:
            for point in SCORE_POINTS:
                if point in points:
                    trims.setdefault(point, []).append(name)
    for point in ("preFilter", "filter", "preScore", "score"):
        if point in trims:
            plugins[point] = {"disabled": [{"name": n} for n in trims[point]]}
    return plugins

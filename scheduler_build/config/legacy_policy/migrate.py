"""A legacy Policy mapping -> a v1 KubeSchedulerConfiguration with one profile, plus warnings.

Predicates become the filter plugins that replaced them, priorities score
plugins with their weights, written as `multiPoint` with `"*"` disabled (a
Policy listed everything that ran) plus per-point disables where a plugin was
named only as a predicate or only as a priority.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scheduler_build.config.legacy_policy.extenders import convert_extender
from scheduler_build.config.legacy_policy.tables import (
    ALWAYS_ON, FILTER_POINTS, MANDATORY_FILTERS, POINTS_WITH_FILTER, POLICY_HINT, PREDICATES, PREDICATES_GONE,
    PREDICATES_RENAMED, PRIORITIES, PRIORITIES_GONE, SCORE_POINTS, Note,
)
from scheduler_build.config.render import dump
from scheduler_build.config.schedulerconfig import CONFIG_API, CONFIG_KIND
from scheduler_build.errors import UserError, for_program
from scheduler_build.spec.formats import DNS1123_SUBDOMAIN

KNOWN_FIELDS = {"kind", "apiversion", "predicates", "priorities", "extenders", "hardpodaffinitysymmetricweight",
                "alwayscheckallpredicates"}


@dataclass
class Migration:
    config: dict
    warnings: list[str] = field(default_factory=list)
    source_kind: str = "Policy"  # or "ConfigMap"
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        findings = self.warnings
        self.notes = [*self.notes, *(str(f) for f in findings if isinstance(f, Note))]
        self.warnings = [str(f) for f in findings if not isinstance(f, Note)]

    def text(self) -> str:
        """The configuration as YAML, with every warning and note recorded as a comment at the top."""
        header = [for_program("# Migrated from a legacy scheduler Policy by `inv config.migrate-policy`.")]  # as run
        header += [f"# WARNING: {w}" for w in self.warnings] or ["# Every field had an equivalent."]
        header += [f"# NOTE: {n}" for n in self.notes]
        return "\n".join(header) + "\n" + dump(self.config)

    def to_dict(self) -> dict:
        return {"source_kind": self.source_kind, "warnings": self.warnings, "notes": self.notes}


def _named(kind: str, index: int, item: Any) -> tuple[str, Any]:
    if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item.get("name"):
        raise UserError(f"{kind}[{index}]: must be a mapping with a name, got {item!r}", POLICY_HINT)
    return item["name"], item


def migrate(policy: dict, scheduler_name: str = "default-scheduler") -> Migration:
    """A Policy mapping -> Migration(config, warnings, notes)."""
    if not DNS1123_SUBDOMAIN.match(scheduler_name or "") or len(scheduler_name) > 253:
        raise UserError(f"scheduler name {scheduler_name!r} (--scheduler-name, config.scheduler_name): "
                        "not a DNS-1123 subdomain",
                        "use lower-case letters, digits, '-' and '.', starting and ending alphanumeric, "
                        "e.g. default-scheduler")
    warnings = [f"{key}: not a Policy field; ignored" for key in policy if str(key).lower() not in KNOWN_FIELDS]
    fields = {str(k).lower(): v for k, v in policy.items()}
    plugin_args: dict[str, dict] = {}
    # No predicates key: the legacy scheduler ran its default set, as v1 does by default.
    filters = None if fields.get("predicates") is None else _filters(fields["predicates"], warnings)
    priorities = fields.get("priorities")
    scores = None if priorities is None else _scores(priorities, plugin_args, warnings)
    hard = fields.get("hardpodaffinitysymmetricweight")
    if hard is not None:
        if isinstance(hard, bool) or not isinstance(hard, int) or not 0 <= hard <= 100:
            raise UserError(f"hardPodAffinitySymmetricWeight: must be an integer 0..100, got {hard!r}", POLICY_HINT)
        plugin_args.setdefault("InterPodAffinity", {})["hardPodAffinityWeight"] = hard
    if fields.get("alwayscheckallpredicates"):
        warnings.append("alwaysCheckAllPredicates: removed; filters always stop at the first failure now")

    profile: dict[str, Any] = {"schedulerName": scheduler_name}
    plugins = _plugins(filters, scores)
    if plugins:
        profile["plugins"] = plugins
    if plugin_args:
        profile["pluginConfig"] = [{"name": n, "args": a} for n, a in sorted(plugin_args.items())]
    config: dict[str, Any] = {"apiVersion": CONFIG_API, "kind": CONFIG_KIND, "profiles": [profile]}
    extenders = fields.get("extenders")
    if extenders is not None:
        converted = _extenders(extenders, warnings)
        if converted:
            config["extenders"] = converted
    return Migration(config=config, warnings=warnings)


def _filters(predicates: Any, warnings: list[str]) -> list[str]:
    """Predicates -> filter plugins, in order, plus the ones the legacy scheduler always ran."""
    if not isinstance(predicates, list):
        raise UserError(f"predicates: must be a list, got {predicates!r}", POLICY_HINT)
    filters: list[str] = []
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
        filters += [plugin for plugin in plugins if plugin not in filters]
    for plugin in MANDATORY_FILTERS:
        if plugin not in filters:
            warnings.append(Note(f"{plugin}: added as a filter; the legacy scheduler always ran it too"))
            filters.append(plugin)
    return filters


def _scores(priorities: Any, plugin_args: dict[str, dict], warnings: list[str]) -> dict[str, int]:
    """Priorities -> score plugin -> weight, in order; NodeResourcesFit's strategy into plugin_args."""
    if not isinstance(priorities, list):
        raise UserError(f"priorities: must be a list, got {priorities!r}", POLICY_HINT)
    scores: dict[str, int] = {}
    strategy: str | None = None
    for i, item in enumerate(priorities):
        name, entry = _named("priorities", i, item)
        weight = entry.get("weight", 1)
        if isinstance(weight, bool) or not isinstance(weight, int) or weight < 0:
            raise UserError(f"priorities[{i}].weight: must be a non-negative integer, got {weight!r}", POLICY_HINT)
        argument = entry.get("argument") or {}
        if not _maps_to_a_plugin(i, name, weight, argument, warnings):
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
    return scores


def _maps_to_a_plugin(i: int, name: str, weight: int, argument: Any, warnings: list[str]) -> bool:
    """Whether a priority becomes a score plugin; a warning says why not."""
    if name in PRIORITIES_GONE:
        warnings.append(f"priorities[{i}] {name} (weight {weight}): no equivalent plugin: {PRIORITIES_GONE[name]}")
        return False
    if name not in PRIORITIES:
        if argument:
            warnings.append(f"priorities[{i}] {name}: custom priority with argument {argument!r} has no v1 "
                            "equivalent; dropped")
        else:
            warnings.append(f"priorities[{i}] {name}: unknown priority; write it as a score plugin; dropped")
        return False
    if weight == 0:
        warnings.append(Note(f"priorities[{i}] {name}: weight 0 disabled it; left out"))
        return False
    return True


def _extenders(extenders: Any, warnings: list[str]) -> list[dict | None]:
    if not isinstance(extenders, list):
        raise UserError(f"extenders: must be a list, got {extenders!r}", POLICY_HINT)
    converted = [convert_extender(i, e, warnings) for i, e in enumerate(extenders)]
    binders = [i for i, e in enumerate(converted) if e and e.get("bindVerb")]
    if len(binders) > 1:
        raise UserError(f"extenders[{binders[1]}].bindVerb: only one extender may bind (extenders[{binders[0]}] does too)",
                        "remove the bindVerb of all but one")
    return converted


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

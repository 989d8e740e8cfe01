"""`profiles`: KubeSchedulerProfiles in the v1 form (plugin sets per extension point, pluginConfig)."""

from __future__ import annotations

from typing import Any

from scheduler_build.spec.fields import Fields, show, type_name
from scheduler_build.spec.formats import DNS1123_SUBDOMAIN, EXTENSION_POINT

_DEFAULT_QUEUE_SORT = "default (PrioritySort)"


def check_profiles(f: Fields, value: Any, name: str) -> list[dict]:
    """The profiles; left out, one profile named after the scheduler."""
    if value is None:
        return [{"schedulerName": name}]
    if f.seq("profiles", value) is None:
        return []
    if not value:
        f.err("profiles", "must list at least one profile (or be left out for one named after the scheduler)")
        return []
    out: list[dict] = []
    seen: dict[str, int] = {}  # schedulerName -> the first profile using it
    queue_sorts: list[tuple[int, Any]] = []
    for i, item in enumerate(value):
        p = f"profiles[{i}]"
        if f.mapping(p, item, ("schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"),
                     required=("schedulerName",)) is None:
            continue
        profile, queue_sort = _profile(f, p, i, item, seen)
        queue_sorts.append((i, queue_sort))
        out.append(profile)
    _same_queue_sort(f, queue_sorts)
    return out


def _profile(f: Fields, p: str, i: int, item: dict, seen: dict[str, int]) -> tuple[dict, Any]:
    """One profile in the v1 form, and its queueSort set (None: the default)."""
    profile: dict[str, Any] = {}
    sched = item.get("schedulerName")
    if sched is not None:
        got = f.string(f"{p}.schedulerName", sched, DNS1123_SUBDOMAIN, "a DNS-1123 subdomain")
        if got is not None:
            if got in seen:
                f.err(f"{p}.schedulerName", f"duplicate schedulerName {got!r} (also profiles[{seen[got]}])")
            seen[got] = i
            profile["schedulerName"] = got
    if item.get("percentageOfNodesToScore") is not None:
        pct = f.integer(f"{p}.percentageOfNodesToScore", item["percentageOfNodesToScore"], lo=0, hi=100)
        if pct is not None:
            profile["percentageOfNodesToScore"] = pct
    queue_sort = None
    if item.get("plugins") is not None:
        plugins = check_plugin_sets(f, f"{p}.plugins", item["plugins"])
        if plugins:
            profile["plugins"] = plugins
        queue_sort = plugins.get("queueSort")
    if item.get("pluginConfig") is not None:
        configs = check_plugin_config(f, f"{p}.pluginConfig", item["pluginConfig"])
        if configs:
            profile["pluginConfig"] = configs
    return profile, queue_sort


def _same_queue_sort(f: Fields, queue_sorts: list[tuple[int, Any]]) -> None:
    """Upstream requires one queue sort for all profiles (they share one queue)."""
    if not queue_sorts:
        return
    first_index, first = queue_sorts[0]
    for index, qs in queue_sorts[1:]:
        if _canon(qs) != _canon(first):
            f.err(f"profiles[{index}].plugins.queueSort",
                  f"queue sort {show(qs) if qs else _DEFAULT_QUEUE_SORT} differs from profiles[{first_index}] "
                  f"({show(first) if first else _DEFAULT_QUEUE_SORT}); "
                  "every profile must use the same queue sort")


def _canon(value: Any) -> Any:
    """Order-insensitive form of a plugin set for comparing queue sorts."""
    if not value:
        return None
    return {k: sorted((e.get("name", ""), e.get("weight", 0)) for e in v) for k, v in sorted(value.items()) if v}


def check_plugin_sets(f: Fields, path: str, value: Any) -> dict:
    """A v1 Plugins struct: per extension point, enabled and disabled plugin lists.

    Which points exist depends on the target release (config.api_fields checks them against its
    source); here a point only has to look like one."""
    if not isinstance(value, dict):
        f.err(path, f"must be a mapping, got {type_name(value)} {show(value)}")
        return {}
    out: dict[str, Any] = {}
    for point in value:
        if not isinstance(point, str) or not EXTENSION_POINT.match(point):
            f.err(f"{path}.{point}", "must be an extension point such as filter or score (a lowerCamelCase name)")
            continue
        if value.get(point) is None:
            continue
        pp = f"{path}.{point}"
        if f.mapping(pp, value[point], ("enabled", "disabled")) is None:
            continue
        plugin_set: dict[str, Any] = {}
        for kind in ("enabled", "disabled"):
            entries = value[point].get(kind)
            if entries is None or f.seq(f"{pp}.{kind}", entries) is None:
                continue
            names_seen: set[str] = set()
            got_list = []
            for j, entry in enumerate(entries):
                got = _plugin(f, f"{pp}.{kind}[{j}]", point, kind, entry, names_seen)
                if got is not None:
                    got_list.append(got)
            plugin_set[kind] = got_list
        out[point] = plugin_set
    return out


def _plugin(f: Fields, ep: str, point: str, kind: str, entry: Any, names_seen: set[str]) -> dict | None:
    """One enabled/disabled entry: a name ('*' disables all) and, for score and multiPoint, a weight."""
    allowed = ("name", "weight") if kind == "enabled" else ("name",)
    if f.mapping(ep, entry, allowed, required=("name",)) is None:
        return None
    got: dict[str, Any] = {}
    if entry.get("name") is not None:
        n = f.string(f"{ep}.name", entry["name"])
        if n is not None:
            if n == "*" and kind == "enabled":
                f.err(f"{ep}.name", "'*' is only valid in disabled")
            elif not n:
                f.err(f"{ep}.name", "must not be empty")
            elif n in names_seen:
                f.err(f"{ep}.name", f"{n!r} is listed twice in {point}.{kind}")
            names_seen.add(n)
            got["name"] = n
    if entry.get("weight") is not None:
        # 0 means "the plugin's default weight" in v1; the field is an int32 upstream.
        w = f.integer(f"{ep}.weight", entry["weight"], lo=0, hi=2**31 - 1)
        if w is not None:
            if point not in ("score", "multiPoint"):
                f.err(f"{ep}.weight", f"weight only applies to score and multiPoint, got {w} in {point}")
            else:
                got["weight"] = w
    return got


def check_plugin_config(f: Fields, path: str, value: Any) -> list[dict]:
    """pluginConfig: at most one entry per plugin; args stay as written (the plugin decodes them)."""
    if f.seq(path, value) is None:
        return []
    out: list[dict] = []
    seen: dict[str, int] = {}
    for j, entry in enumerate(value):
        ep = f"{path}[{j}]"
        if f.mapping(ep, entry, ("name", "args"), required=("name",)) is None:
            continue
        got: dict[str, Any] = {}
        if entry.get("name") is not None:
            n = f.string(f"{ep}.name", entry["name"])
            if n is not None:
                if n in seen:
                    f.err(f"{ep}.name", f"duplicate pluginConfig for {n!r} (also {path}[{seen[n]}])")
                seen[n] = j
                got["name"] = n
        if entry.get("args") is not None:
            if not isinstance(entry["args"], dict):
                f.err(f"{ep}.args", f"must be a mapping of the plugin's args, got {type_name(entry['args'])}")
            else:
                got["args"] = entry["args"]
        out.append(got)
    return out

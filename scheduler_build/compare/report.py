"""The comparison report (pure): moves, newly unschedulable and newly scheduled pods, per-resource node
utilisation of each side, pods/s; as a JSON document (docs/compare.schema.json) and as text."""

from __future__ import annotations

import math
import re
from typing import Any

from scheduler_build.compare import snapshot as snapshot_mod
from scheduler_build.compare.tiebreak import PLUGINS_MARK

SCHEMA_VERSION = 1
RESOURCES = ("cpu", "memory")
_PLUGINS = re.compile(re.escape(PLUGINS_MARK) + r"([^\]]*)\]")
REASON_CHARS = 300  # a FitError lists every distinct per-node reason: the text report cuts it


def plugins_of(reason: str) -> list[str]:
    """The plugins that rejected the pod, as the compare build's FitError names them."""
    match = _PLUGINS.search(reason or "")
    return [p.strip() for p in match[1].split(",") if p.strip()] if match else []


def utilisation(shot: snapshot_mod.Snapshot, placement: dict[str, str]) -> dict[str, dict[str, float]]:
    """Per resource: the mean, population standard deviation and max of requested/allocatable over all
    nodes, and how many nodes hold at least one pod."""
    requested: dict[str, dict[str, float]] = {n["metadata"]["name"]: {} for n in shot.nodes}
    pods = {snapshot_mod.pod_key(p): p for p in shot.pods}
    for key, node in placement.items():
        if node in requested and key in pods:
            for resource, value in snapshot_mod.requests(pods[key]).items():
                requested[node][resource] = requested[node].get(resource, 0.0) + value
    out: dict[str, dict[str, float]] = {}
    for resource in RESOURCES:
        shares = []
        for node in shot.nodes:
            have = snapshot_mod.allocatable(node).get(resource, 0.0)
            shares.append(requested[node["metadata"]["name"]].get(resource, 0.0) / have if have else 0.0)
        mean = sum(shares) / len(shares) if shares else 0.0
        std = math.sqrt(sum((s - mean) ** 2 for s in shares) / len(shares)) if shares else 0.0
        out[resource] = {"mean": mean, "stddev": std, "max": max(shares, default=0.0)}
    used = len({node for node in placement.values() if node in requested})
    return {**out, "nodes_used": {"count": used, "of": len(shot.nodes)}}  # type: ignore[dict-item]


def _side_doc(side: Any, shot: snapshot_mod.Snapshot, source: str) -> dict:
    # Every bound pod counts, the ones --pending-only kept on their nodes too: they use the nodes as well.
    placement = {k: o.node for k, o in side.outcomes.items() if o.node}
    scheduled = [k for k in side.scheduled if side.outcomes.get(k) and side.outcomes[k].node]
    return {"source": source, "scheduler_version": side.version, "apiserver_version": side.apiserver_version,
            "pods": len(side.scheduled), "bound": len(scheduled),
            "unschedulable": sum(1 for k in side.scheduled if side.outcomes.get(k) and side.outcomes[k].unschedulable),
            "seconds": round(side.seconds, 3),
            "pods_per_second": round(len(side.scheduled) / side.seconds, 1) if side.seconds > 0 else None,
            "peak_rss_mib": round(side.peak_rss_kib / 1024, 1),
            "apiserver_peak_rss_mib": round(side.apiserver_peak_rss_kib / 1024, 1),
            "utilisation": utilisation(shot, placement)}


def build(shot: snapshot_mod.Snapshot, a: Any, b: Any, *, snapshot_path: str, sources: tuple[str, str],
          pending_only: bool, tie_breaking: str) -> dict:
    """The report document: `moved`, `newly_unschedulable`, `newly_scheduled`, `sides`, `pods`."""
    moved, newly_unschedulable, newly_scheduled, pods = [], [], [], []
    for key in a.scheduled:
        pa, pb = a.outcomes.get(key), b.outcomes.get(key)
        na, nb = (pa.node if pa else ""), (pb.node if pb else "")
        pods.append({"pod": key, "a": na or None, "b": nb or None})
        if na and nb and na != nb:
            moved.append({"pod": key, "a": na, "b": nb})
        elif na and not nb:
            reason = pb.reason if pb else ""
            newly_unschedulable.append({"pod": key, "a": na, "reason": reason, "plugins": plugins_of(reason)})
        elif nb and not na:
            reason = pa.reason if pa else ""
            newly_scheduled.append({"pod": key, "b": nb, "a_reason": reason, "a_plugins": plugins_of(reason)})
    return {"schemaVersion": SCHEMA_VERSION, "snapshot": snapshot_path,
            "mode": "pending-only" if pending_only else "replay", "tieBreaking": tie_breaking,
            "summary": {"pods": len(a.scheduled), "moved": len(moved), "newly_unschedulable": len(newly_unschedulable),
                        "newly_scheduled": len(newly_scheduled)},
            "moved": moved, "newly_unschedulable": newly_unschedulable, "newly_scheduled": newly_scheduled,
            "sides": {"a": _side_doc(a, shot, sources[0]), "b": _side_doc(b, shot, sources[1])},
            "pods": pods}


def _cut(text: str) -> str:
    return text if len(text) <= REASON_CHARS else text[:REASON_CHARS] + "..."


def text(doc: dict, limit: int = 20) -> str:
    """The report as an operator reads it: the summary, each side's figures, then up to `limit` pods of each list."""
    s = doc["summary"]
    lines = [f"compare {doc['snapshot']} ({doc['mode']}, {s['pods']} pods; ties: {doc['tieBreaking']})",
             f"  moved: {s['moved']}   newly unschedulable: {s['newly_unschedulable']}   "
             f"newly scheduled: {s['newly_scheduled']}", ""]
    lines.append(f"  {'':18} {'a':>28} {'b':>28}")
    sa, sb = doc["sides"]["a"], doc["sides"]["b"]
    rows = [("scheduler", sa["scheduler_version"], sb["scheduler_version"]),
            ("apiserver", sa["apiserver_version"], sb["apiserver_version"]),
            ("bound", sa["bound"], sb["bound"]), ("unschedulable", sa["unschedulable"], sb["unschedulable"]),
            ("seconds", sa["seconds"], sb["seconds"]), ("pods/s", sa["pods_per_second"], sb["pods_per_second"]),
            ("scheduler peak MiB", sa["peak_rss_mib"], sb["peak_rss_mib"]),
            ("apiserver peak MiB", sa["apiserver_peak_rss_mib"], sb["apiserver_peak_rss_mib"])]
    for resource in RESOURCES:
        ua, ub = sa["utilisation"][resource], sb["utilisation"][resource]
        rows.append((f"{resource} mean/sd/max", "/".join(f"{ua[k]:.1%}" for k in ("mean", "stddev", "max")),
                     "/".join(f"{ub[k]:.1%}" for k in ("mean", "stddev", "max"))))
    na, nb = sa["utilisation"]["nodes_used"], sb["utilisation"]["nodes_used"]
    rows.append(("nodes used", f"{na['count']}/{na['of']}", f"{nb['count']}/{nb['of']}"))
    lines += [f"  {name:18} {str(x):>28} {str(y):>28}" for name, x, y in rows]
    for title, items, show in (
            ("moved", doc["moved"], lambda m: f"{m['pod']}: {m['a']} -> {m['b']}"),
            ("newly unschedulable", doc["newly_unschedulable"],
             lambda m: f"{m['pod']} (was on {m['a']}): {', '.join(m['plugins']) or '-'}: {_cut(m['reason'])}"),
            ("newly scheduled", doc["newly_scheduled"],
             lambda m: f"{m['pod']} -> {m['b']} (a: {', '.join(m['a_plugins']) or '-'}: {_cut(m['a_reason'])})")):
        if items:
            lines += ["", f"{title} ({len(items)}):"] + [f"  {show(m)}" for m in items[:limit]]
            if len(items) > limit:
                lines.append(f"  ... {len(items) - limit} more (--json has them all)")
    return "\n".join(lines) + "\n"

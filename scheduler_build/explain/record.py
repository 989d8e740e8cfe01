"""A pod's recorded scheduling decision -> the stable `explain --json` document (pure; docs/explain.md).

Input is a pod as the API returns it (a dict). Everything read from its annotations is
untrusted: anyone who can edit the pod can write them. Each key is parsed on its own, checked
for the shape the recorder writes, bounded, and dropped with a warning when it is not; the
result is always a document that validates against docs/explain.schema.json.
"""

from __future__ import annotations

import json
import re
from typing import Any

from scheduler_build.errors import for_program

SIMULATOR = "kube-scheduler-simulator.sigs.k8s.io/"
RECORD = "scheduler-build.io/debug-record"
FORMAT = 1
MAX_NODES = 5000  # per map: more than any record the recorder writes (its own bounds are far lower)
MAX_TEXT = 1024  # characters kept of any reason or name
HINT = ("no scheduling record on this pod: it was scheduled by a build without the recorder; "
        "build and deploy the debuggable one (`inv build --debuggable`, then `inv image.build` and `inv deploy`) "
        "and recreate the pod")
# Told the spec's debuggable.podLabel (explain --spec), a pod without that label did not opt in: a
# debuggable scheduler saw it and recorded nothing, by design.
NOT_OPTED_IN = ("no scheduling record on this pod: it does not carry the label {label} (the spec's debuggable.podLabel), "
                "so the recorder skips it; add the label to the pod's template and recreate the pod")
# Neither told (no --spec) nor the label missing: both causes stay possible, and a recorder's failed write too.
UNKNOWN = ("no scheduling record on this pod: it was scheduled by a build without the recorder (`inv build "
           "--debuggable`, then `inv image.build` and `inv deploy`), or it did not carry "
           "the label the spec's debuggable.podLabel names (pass --spec to tell which), or the recorder could not "
           "write (the scheduler's log says so)")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")

_STATUS_KEYS = {"prefilter-result-status": "preFilter", "prescore-result": "preScore", "reserve-result": "reserve",
                "permit-result": "permit", "prebind-result": "preBind", "bind-result": "bind"}


def _text(value: Any) -> str:
    """A string from the annotations, bounded, its control characters (a terminal's escapes) shown as `?`."""
    return _CONTROL.sub("?", str(value)[:MAX_TEXT])


def _int(value: Any) -> int | None:
    """An integer from a JSON number or a decimal string (the simulator writes scores as strings)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit() and len(value) < 20:
        return int(value)
    return None


class _Reader:
    """The pod's annotations, one key at a time, with a warning for each one that is not what the recorder writes."""

    def __init__(self, annotations: dict) -> None:
        self.annotations = annotations if isinstance(annotations, dict) else {}
        self.warnings: list[str] = []

    def json(self, key: str, want: type) -> Any:
        raw = self.annotations.get(key)
        if raw is None:
            return want()
        try:
            value = json.loads(raw) if isinstance(raw, str) else None
        except (ValueError, RecursionError):
            value = None
        if not isinstance(value, want):
            self.warnings.append(f"annotation {key} is not a JSON {want.__name__}: ignored")
            return want()
        return value

    def flat(self, key: str) -> dict[str, str]:
        """plugin -> status text."""
        value = self.json(key, dict)
        return {_text(k): _text(v) for k, v in list(value.items())[:MAX_NODES]}

    def nested(self, key: str) -> dict[str, dict[str, str]]:
        """node -> plugin -> text; entries of the wrong shape dropped."""
        value = self.json(key, dict)
        out: dict[str, dict[str, str]] = {}
        for node, plugins in list(value.items())[:MAX_NODES]:
            if isinstance(plugins, dict):
                out[_text(node)] = {_text(p): _text(v) for p, v in list(plugins.items())[:MAX_NODES]}
        if len(out) < min(len(value), MAX_NODES):
            self.warnings.append(f"annotation {key}: {len(value) - len(out)} entries are not mappings: ignored")
        return out


def _pod_identity(pod: dict) -> dict:
    meta = pod.get("metadata") if isinstance(pod.get("metadata"), dict) else {}
    spec = pod.get("spec") if isinstance(pod.get("spec"), dict) else {}
    status = pod.get("status") if isinstance(pod.get("status"), dict) else {}
    return {"namespace": _text(meta.get("namespace") or ""), "name": _text(meta.get("name") or ""),
            "schedulerName": _text(spec.get("schedulerName") or "default-scheduler"),
            "nodeName": _text(spec.get("nodeName") or ""), "phase": _text(status.get("phase") or "")}


def _scores(reader: _Reader, weights: dict[str, int], chosen: str) -> list[dict]:
    """Top nodes, best first: each plugin's raw, normalized and weighted score, and the total."""
    raw, final = reader.nested(SIMULATOR + "score-result"), reader.nested(SIMULATOR + "finalscore-result")
    nodes = []
    for node in sorted(set(raw) | set(final)):
        plugins = []
        for plugin in sorted(set(raw.get(node, {})) | set(final.get(node, {}))):
            weight = weights.get(plugin)
            weighted = _int(final.get(node, {}).get(plugin))
            normalized = weighted // weight if weighted is not None and weight else None
            plugins.append({"plugin": plugin, "raw": _int(raw.get(node, {}).get(plugin)), "normalized": normalized,
                            "weight": weight, "weighted": weighted})
        total = sum(p["weighted"] or 0 for p in plugins)
        nodes.append({"node": node, "total": total, "chosen": node == chosen, "plugins": plugins})
    nodes.sort(key=lambda n: (-n["total"], n["node"]))
    return nodes


def _filtered(filter_result: dict[str, dict[str, str]]) -> list[dict]:
    """Every named node a filter removed: the plugin and its reason (the recorder keeps the rejecting one)."""
    out = []
    for node in sorted(filter_result):
        for plugin, reason in sorted(filter_result[node].items()):
            if reason != "passed":
                out.append({"node": node, "plugin": plugin, "reason": reason})
    return out


def _rejections(record: dict, filtered: list[dict]) -> list[dict]:
    """Rejections grouped by plugin and reason, with every count (named nodes listed)."""
    groups: dict[tuple[str, str], dict] = {}
    for entry in record.get("rejections") if isinstance(record.get("rejections"), list) else []:
        if isinstance(entry, dict) and _int(entry.get("nodes")) is not None:
            key = (_text(entry.get("plugin", "")), _text(entry.get("reason", "")))
            groups[key] = {"plugin": key[0], "reason": key[1], "count": _int(entry["nodes"]), "nodes": []}
    for f in filtered:
        group = groups.setdefault((f["plugin"], f["reason"]), {"plugin": f["plugin"], "reason": f["reason"], "count": 0, "nodes": []})
        group["nodes"].append(f["node"])
        group["count"] = max(group["count"], len(group["nodes"]))
    return sorted(groups.values(), key=lambda g: (-g["count"], g["plugin"], g["reason"]))


EXTENDER = "extender "  # the recorder's name for an extender among the plugins


def _extenders(record: dict) -> list[dict]:
    """Each extender the attempt called: filter counts, scored nodes, weight, error (the record's `extenders`)."""
    found = record.get("extenders")
    out = []
    for key, value in list(found.items())[:MAX_NODES] if isinstance(found, dict) else []:
        if isinstance(value, dict):
            name = _text(key)
            out.append({"extender": name[len(EXTENDER):] if name.startswith(EXTENDER) else name,
                        "passed": _int(value.get("passed")), "failed": _int(value.get("failed")),
                        "scored": _int(value.get("scored")), "weight": _int(value.get("weight")),
                        "error": _text(value.get("error") or "")})
    return sorted(out, key=lambda e: e["extender"])


def explain(pod: Any, top: int = 3, pod_label: str | None = None) -> dict:
    """The explain document for one pod (docs/explain.schema.json). `pod_label`: the spec's
    debuggable.podLabel when the caller knows it ("" records every pod), None when not."""
    pod = pod if isinstance(pod, dict) else {}
    identity = _pod_identity(pod)
    meta = pod.get("metadata") if isinstance(pod.get("metadata"), dict) else {}
    reader = _Reader(meta.get("annotations") or {})
    doc: dict[str, Any] = {"format": FORMAT, "pod": identity, "recorded": False}
    if RECORD not in reader.annotations:
        labels = meta.get("labels") if isinstance(meta.get("labels"), dict) else {}
        doc["hint"] = for_program(UNKNOWN if pod_label is None else  # the hints name the command the user ran
                                  NOT_OPTED_IN.format(label=_text(pod_label)) if pod_label and pod_label not in labels
                                  else HINT)
        return doc
    record = reader.json(RECORD, dict)
    weights = {_text(k): v for k, v in (record.get("weights") or {}).items() if _int(v) is not None} \
        if isinstance(record.get("weights"), dict) else {}
    selected = reader.annotations.get(SIMULATOR + "selected-node")
    chosen = _text(selected) if isinstance(selected, str) else ""
    outcome = _text(record.get("outcome") or "")
    filtered = _filtered(reader.nested(SIMULATOR + "filter-result"))
    doc.update({
        "recorded": True,
        "scheduler": _text(record.get("scheduler") or ""),
        "profile": _text(record.get("profile") or ""),
        "recordedAt": _text(record.get("time") or ""),
        "outcome": outcome if outcome in ("bound", "unschedulable") else "unknown",
        "chosenNode": chosen or None,
        "stale": bool(identity["nodeName"]) and (outcome != "bound" or chosen != identity["nodeName"]),
        "feasibleNodes": _int(record.get("feasibleNodes")) or 0,
        "rejectedNodes": _int(record.get("rejectedNodes")) or 0,
        "topNodes": _scores(reader, weights, chosen)[:max(top, 0)],
        "filteredNodes": filtered,
        "rejections": _rejections(record, filtered),
        "postFilter": {_text(k): _text(v) for k, v in (record.get("postFilter") or {}).items()}
        if isinstance(record.get("postFilter"), dict) else {},
        "nominatedNode": _text(record.get("nominatedNode")) if record.get("nominatedNode") else None,
        "extenders": _extenders(record),
    })
    for key, name in _STATUS_KEYS.items():
        doc[name] = reader.flat(SIMULATOR + key)
    doc["warnings"] = reader.warnings
    return doc

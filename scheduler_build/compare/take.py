"""`snapshot.take`: read what scheduling reads from a cluster, trimmed (trim.py), optionally anonymized."""

from __future__ import annotations

import datetime as dt
from typing import Any

from scheduler_build.compare import snapshot as snapshot_mod
from scheduler_build.compare import trim
from scheduler_build.compare.replay import PATHS, ApiError, _call
from scheduler_build.errors import UserError
from scheduler_build.progress import log

OPTIONAL = ("deviceClasses", "resourceSlices", "resourceClaims")  # DRA: where the server serves it


def _list(api: Any, kind: str) -> list[dict]:
    path = PATHS[kind].replace("/namespaces/{ns}", "")
    try:
        return _call(api, "GET", path).get("items", [])
    except ApiError as exc:
        if exc.status == 404 and kind in OPTIONAL:
            return []
        raise UserError(f"cannot list {kind} ({path}): {exc}",
                        "the kubeconfig needs list on nodes, pods and the scheduling objects") from None


def _creation_order(pods: list[dict]) -> list[dict]:
    return sorted(pods, key=lambda p: (p["metadata"].get("creationTimestamp") or "", p["metadata"].get("namespace", ""),
                                       p["metadata"]["name"]))


def take(api: Any, anonymize: bool) -> snapshot_mod.Snapshot:
    objects: dict[str, list[dict]] = {}
    for kind in snapshot_mod.LISTS:
        items = _list(api, kind)
        if kind == "pods":
            items = [p for p in _creation_order(items)
                     if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
            objects[kind] = [trim.pod(p) for p in items]
        elif kind == "nodes":
            objects[kind] = [trim.node(n) for n in items]
        elif kind == "namespaces":
            objects[kind] = [trim.generic(n, False) for n in items if trim.user_namespace(n["metadata"]["name"])]
        elif kind == "priorityClasses":
            objects[kind] = [trim.generic(p, False) for p in items if not p["metadata"]["name"].startswith("system-")]
        else:
            objects[kind] = [trim.generic(o, kind in snapshot_mod.NAMESPACED) for o in items]
    if anonymize:
        objects = trim.anonymize(objects)
    log(f"    {len(objects['nodes'])} nodes, {len(objects['pods'])} pods")
    source = {"taken": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "anonymized": anonymize}
    # Read back through the strict parser: what take writes, compare reads.
    doc = snapshot_mod.Snapshot(source=source, objects={k: tuple(v) for k, v in objects.items()})
    return snapshot_mod.parse(__import__("json").loads(doc.to_json()), "the snapshot taken")

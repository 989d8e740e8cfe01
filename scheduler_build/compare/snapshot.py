"""The snapshot format (docs/compare.md): what scheduling reads of a cluster, versioned, read back strictly.

A snapshot is one JSON document:

    {"apiVersion": "scheduler-build.io/v1", "kind": "Snapshot", "source": {...},
     "namespaces": [...], "priorityClasses": [...], "storageClasses": [...], "persistentVolumes": [...],
     "persistentVolumeClaims": [...], "deviceClasses": [...], "resourceSlices": [...],
     "resourceClaims": [...], "nodes": [...], "pods": [...]}

Each list holds Kubernetes API objects as the API serves them, trimmed to what scheduling reads (trim.py).
Pods are in creation order. kube-scheduler-simulator's export (`pods`, `nodes`, `pvs`, `pvcs`,
`storageClasses`, `priorityClasses`, `namespaces`, `schedulerConfig`) is read too. A fault is one line
naming the file, the object (list, index, name) and the field.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scheduler_build.compare import quantity
from scheduler_build.errors import UserError

API_VERSION = "scheduler-build.io/v1"
KIND = "Snapshot"
# Creation order on replay: what pods refer to comes first.
LISTS = ("namespaces", "priorityClasses", "storageClasses", "persistentVolumes", "persistentVolumeClaims",
         "deviceClasses", "resourceSlices", "resourceClaims", "nodes", "pods")
NAMESPACED = ("persistentVolumeClaims", "resourceClaims", "pods")
SIMULATOR_LISTS = {"pods": "pods", "nodes": "nodes", "pvs": "persistentVolumes", "pvcs": "persistentVolumeClaims",
                   "storageClasses": "storageClasses", "priorityClasses": "priorityClasses",
                   "namespaces": "namespaces"}
SIMULATOR_IGNORED = ("schedulerConfig",)  # the sides bring their own configuration
MAX_BYTES = 512 * 1024 * 1024
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
FIX = "fix the snapshot, or take it again with `snapshot.take`"


@dataclass(frozen=True)
class Snapshot:
    source: dict[str, Any]
    objects: dict[str, tuple[dict, ...]] = field(default_factory=dict)

    @property
    def nodes(self) -> tuple[dict, ...]:
        return self.objects.get("nodes", ())

    @property
    def pods(self) -> tuple[dict, ...]:
        return self.objects.get("pods", ())

    def to_json(self) -> str:
        doc: dict[str, Any] = {"apiVersion": API_VERSION, "kind": KIND, "source": self.source}
        doc.update({name: list(self.objects.get(name, ())) for name in LISTS})
        return json.dumps(doc, indent=1, sort_keys=False) + "\n"


def pod_key(pod: dict) -> str:
    meta = pod["metadata"]
    return f"{meta.get('namespace') or 'default'}/{meta['name']}"


class _Faults:
    def __init__(self, where: str):
        self.where = where

    def fail(self, what: str, problem: str) -> None:
        raise UserError(f"{self.where}: {what}: {problem}", FIX)


def load(path: Path) -> Snapshot:
    """Read a snapshot (ours or kube-scheduler-simulator's), strictly."""
    where = str(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise UserError(f"snapshot {path}: {exc.strerror}", "pass a file written by `snapshot.take` or `snapshot.generate`") from None
    if size > MAX_BYTES:
        raise UserError(f"snapshot {path}: {size} bytes is over the {MAX_BYTES} byte limit", "trim the snapshot")
    try:
        doc = json.loads(path.read_bytes())
    except (ValueError, RecursionError) as exc:
        raise UserError(f"snapshot {path}: not JSON ({exc})", FIX) from None
    return parse(doc, where)


def parse(doc: Any, where: str = "snapshot") -> Snapshot:
    f = _Faults(where)
    if not isinstance(doc, dict):
        f.fail("the document", f"must be an object, got {type(doc).__name__}")
    if "apiVersion" not in doc and set(doc) & set(SIMULATOR_LISTS):
        return _from_simulator(doc, f)
    if doc.get("apiVersion") != API_VERSION or doc.get("kind") != KIND:
        f.fail("apiVersion/kind", f"must be {API_VERSION}/{KIND}, got {doc.get('apiVersion')!r}/{doc.get('kind')!r}")
    unknown = sorted(set(doc) - {"apiVersion", "kind", "source", *LISTS})
    if unknown:
        f.fail(f"key {unknown[0]!r}", f"is not a snapshot field (fields: source, {', '.join(LISTS)})")
    source = doc.get("source", {})
    if not isinstance(source, dict):
        f.fail("source", "must be an object")
    return Snapshot(source=source, objects=_objects({name: doc.get(name, []) for name in LISTS}, f))


def _from_simulator(doc: dict, f: _Faults) -> Snapshot:
    unknown = sorted(set(doc) - set(SIMULATOR_LISTS) - set(SIMULATOR_IGNORED))
    if unknown:
        f.fail(f"key {unknown[0]!r}", "is not a field of kube-scheduler-simulator's export either")
    lists = {ours: doc.get(theirs) or [] for theirs, ours in SIMULATOR_LISTS.items()}
    return Snapshot(source={"format": "kube-scheduler-simulator"}, objects=_objects(lists, f))


def _objects(lists: dict[str, Any], f: _Faults) -> dict[str, tuple[dict, ...]]:
    out: dict[str, tuple[dict, ...]] = {}
    for name in LISTS:
        items = lists.get(name, [])
        if not isinstance(items, list):
            f.fail(name, f"must be a list, got {type(items).__name__}")
        seen: set[str] = set()
        for index, obj in enumerate(items):
            key = _check_object(name, index, obj, f)
            if key in seen:
                f.fail(f"{name}[{index}] ({key})", "appears twice")
            seen.add(key)
        out[name] = tuple(items)
    _check_references(out, f)
    return out


def _check_object(kind: str, index: int, obj: Any, f: _Faults) -> str:
    at = f"{kind}[{index}]"
    if not isinstance(obj, dict):
        f.fail(at, f"must be an object, got {type(obj).__name__}")
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        f.fail(at, "metadata: must be an object")
    name = meta.get("name")
    if not isinstance(name, str) or not _NAME.match(name) or len(name) > 253:
        f.fail(at, f"metadata.name: {name!r} is not a DNS-1123 subdomain")
    key = name
    if kind in NAMESPACED:
        ns = meta.get("namespace", "default")
        if not isinstance(ns, str) or not _NAME.match(ns) or len(ns) > 63:
            f.fail(f"{at} ({name})", f"metadata.namespace: {ns!r} is not a DNS-1123 label")
        key = f"{ns}/{name}"
    for mapping in ("labels", "annotations"):
        values = meta.get(mapping, {})
        if not isinstance(values, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in values.items()):
            f.fail(f"{at} ({key})", f"metadata.{mapping}: must map strings to strings")
    if kind == "nodes":
        _check_node(obj, f"{at} ({key})", f)
    elif kind == "pods":
        _check_pod(obj, f"{at} ({key})", f)
    return key


def _check_quantities(values: Any, path: str, at: str, f: _Faults) -> None:
    if values is None:
        return
    if not isinstance(values, dict):
        f.fail(at, f"{path}: must be an object of resource quantities")
    for resource, value in values.items():
        if quantity.parse(value) is None:
            f.fail(at, f"{path}.{resource}: {value!r} is not a quantity such as 500m or 2Gi")


def _check_node(node: dict, at: str, f: _Faults) -> None:
    status = node.get("status", {})
    if not isinstance(status, dict):
        f.fail(at, "status: must be an object")
    _check_quantities(status.get("allocatable"), "status.allocatable", at, f)
    _check_quantities(status.get("capacity"), "status.capacity", at, f)
    if not status.get("allocatable"):
        f.fail(at, "status.allocatable: missing (a node without allocatable resources fits no pod)")
    taints = (node.get("spec") or {}).get("taints", [])
    if not isinstance(taints, list):
        f.fail(at, "spec.taints: must be a list")
    for i, taint in enumerate(taints):
        if not isinstance(taint, dict) or not isinstance(taint.get("key"), str) or taint.get("effect") not in (
                "NoSchedule", "PreferNoSchedule", "NoExecute"):
            f.fail(at, f"spec.taints[{i}]: needs a key and an effect of NoSchedule, PreferNoSchedule or NoExecute")


def _check_pod(pod: dict, at: str, f: _Faults) -> None:
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        f.fail(at, "spec: must be an object")
    for field_name in ("containers", "initContainers"):
        containers = spec.get(field_name, [])
        if not isinstance(containers, list) or (field_name == "containers" and not containers):
            f.fail(at, f"spec.{field_name}: must be a non-empty list" if field_name == "containers"
                   else f"spec.{field_name}: must be a list")
        for i, container in enumerate(containers):
            if not isinstance(container, dict) or not isinstance(container.get("name"), str):
                f.fail(at, f"spec.{field_name}[{i}].name: missing")
            resources = container.get("resources", {})
            if not isinstance(resources, dict):
                f.fail(at, f"spec.{field_name}[{i}].resources: must be an object")
            for part in ("requests", "limits"):
                _check_quantities(resources.get(part), f"spec.{field_name}[{i}].resources.{part}", at, f)
    node_name = spec.get("nodeName", "")
    if not isinstance(node_name, str):
        f.fail(at, "spec.nodeName: must be a string")


def _check_references(objects: dict[str, tuple[dict, ...]], f: _Faults) -> None:
    """A bound pod names a node of the snapshot."""
    nodes = {n["metadata"]["name"] for n in objects["nodes"]}
    for index, pod in enumerate(objects["pods"]):
        node = (pod.get("spec") or {}).get("nodeName")
        if node and node not in nodes:
            f.fail(f"pods[{index}] ({pod_key(pod)})", f"spec.nodeName: {node!r} is not a node of the snapshot")


def requests(pod: dict) -> dict[str, float]:
    """The pod's effective requests as the scheduler counts them: the sum of its containers, at least each
    init container's, plus its overhead."""
    spec = pod.get("spec") or {}
    total: dict[str, float] = {}
    for container in spec.get("containers") or []:
        for resource, value in ((container.get("resources") or {}).get("requests") or {}).items():
            total[resource] = total.get(resource, 0.0) + (quantity.parse(value) or 0.0)
    for container in spec.get("initContainers") or []:
        for resource, value in ((container.get("resources") or {}).get("requests") or {}).items():
            total[resource] = max(total.get(resource, 0.0), quantity.parse(value) or 0.0)
    for resource, value in (spec.get("overhead") or {}).items():
        total[resource] = total.get(resource, 0.0) + (quantity.parse(value) or 0.0)
    return total


def allocatable(node: dict) -> dict[str, float]:
    return {r: quantity.parse(v) or 0.0 for r, v in ((node.get("status") or {}).get("allocatable") or {}).items()}

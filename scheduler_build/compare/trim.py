"""What `snapshot.take` keeps of each object (pure): what scheduling reads, nothing else.

Dropped: container env, command and args, Secret and ConfigMap volumes, annotations other than
scheduling ones, status other than a node's resources and conditions, and server-set metadata.
`anonymize` replaces names (objects, namespaces, node names in pods, label values) with stable hashes.
"""

from __future__ import annotations

import hashlib
from typing import Any

OWNER_KIND = "snapshot.scheduler-build.io/owner-kind"
SCHEDULING_ANNOTATIONS = ("scheduler.alpha.kubernetes.io/", "scheduling.k8s.io/", "snapshot.scheduler-build.io/")
_CONTAINER_KEYS = ("name", "image", "resources", "ports", "resizePolicy", "restartPolicy")
_POD_SPEC_KEYS = ("containers", "initContainers", "nodeSelector", "affinity", "tolerations",
                  "topologySpreadConstraints", "priorityClassName", "priority", "preemptionPolicy", "schedulerName",
                  "nodeName", "overhead", "runtimeClassName", "resourceClaims", "schedulingGates", "hostNetwork",
                  "os", "resources")
HOSTNAME = "kubernetes.io/hostname"
_SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def _metadata(meta: dict, namespaced: bool) -> dict:
    out: dict[str, Any] = {"name": meta["name"]}
    if namespaced:
        out["namespace"] = meta.get("namespace") or "default"
    if meta.get("labels"):
        out["labels"] = dict(meta["labels"])
    kept = {k: v for k, v in (meta.get("annotations") or {}).items() if k.startswith(SCHEDULING_ANNOTATIONS)}
    owners = meta.get("ownerReferences") or []
    if owners:
        kept[OWNER_KIND] = str(owners[0].get("kind", ""))
    if kept:
        out["annotations"] = kept
    return out


def _container(container: dict) -> dict:
    return {k: container[k] for k in _CONTAINER_KEYS if k in container}


def pod(obj: dict) -> dict:
    spec = obj.get("spec") or {}
    kept = {k: spec[k] for k in _POD_SPEC_KEYS if k in spec}
    kept["containers"] = [_container(c) for c in spec.get("containers") or []]
    if spec.get("initContainers"):
        kept["initContainers"] = [_container(c) for c in spec["initContainers"]]
    volumes = [v for v in spec.get("volumes") or [] if "persistentVolumeClaim" in v or "ephemeral" in v]
    if volumes:
        kept["volumes"] = volumes
    return {"apiVersion": "v1", "kind": "Pod", "metadata": _metadata(obj["metadata"], True), "spec": kept}


def node(obj: dict) -> dict:
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    kept_spec = {k: spec[k] for k in ("taints", "unschedulable") if k in spec}
    kept_status = {k: status[k] for k in ("capacity", "allocatable", "images") if k in status}
    kept_status["conditions"] = [{"type": c.get("type"), "status": c.get("status")} for c in status.get("conditions") or []]
    return {"apiVersion": "v1", "kind": "Node", "metadata": _metadata(obj["metadata"], False), "spec": kept_spec,
            "status": kept_status}


def generic(obj: dict, namespaced: bool) -> dict:
    """Other kinds: metadata trimmed, every other top-level field but status kept."""
    out = {k: v for k, v in obj.items() if k not in ("metadata", "status")}
    out["metadata"] = _metadata(obj["metadata"], namespaced)
    return out


def user_namespace(name: str) -> bool:
    return name not in _SYSTEM_NAMESPACES


def _hash(text: str, prefix: str) -> str:
    return f"{prefix}-{hashlib.sha256(text.encode()).hexdigest()[:12]}"


def anonymize(objects: dict[str, list[dict]]) -> dict[str, list[dict]]:
    """Names and label values replaced by stable hashes; label keys, resources and structure stay (selectors
    and affinities keep matching because the same value hashes the same everywhere)."""
    def value(text: str) -> str:
        return _hash(text, "v") if text else text

    def label(key: str, text: str) -> str:
        return _hash(text, "node") if key == HOSTNAME else value(text)

    def selectors(obj: Any) -> Any:
        """Label values inside selectors and affinities hashed as the labels are, so they still match."""
        if isinstance(obj, list):
            return [selectors(x) for x in obj]
        if not isinstance(obj, dict):
            return obj
        out = {k: selectors(v) for k, v in obj.items()}
        if isinstance(obj.get("matchLabels"), dict):
            out["matchLabels"] = {k: label(k, v) for k, v in obj["matchLabels"].items()}
        if isinstance(obj.get("key"), str) and isinstance(obj.get("values"), list):
            out["values"] = [label(obj["key"], v) for v in obj["values"]]
        return out

    def meta(m: dict, kind: str) -> dict:
        out = dict(m, name=_hash(m["name"], kind))
        if "namespace" in m:
            out["namespace"] = m["namespace"] if not user_namespace(m["namespace"]) else _hash(m["namespace"], "ns")
        if "labels" in m:
            out["labels"] = {k: label(k, v) for k, v in m["labels"].items()}
        return out

    result: dict[str, list[dict]] = {}
    for kind, items in objects.items():
        short = {"nodes": "node", "pods": "pod", "namespaces": "ns"}.get(kind, kind.lower()[:8])
        converted = []
        for obj in items:
            new = dict(obj, metadata=meta(obj["metadata"], short))
            if kind == "namespaces" and not user_namespace(obj["metadata"]["name"]):
                new["metadata"] = dict(obj["metadata"])
            if kind == "pods":
                spec = dict(new.get("spec") or {})
                if spec.get("nodeName"):
                    spec["nodeName"] = _hash(spec["nodeName"], "node")
                for key in ("affinity", "topologySpreadConstraints"):
                    if key in spec:
                        spec[key] = selectors(spec[key])
                if "nodeSelector" in spec:
                    spec["nodeSelector"] = {k: label(k, v) for k, v in spec["nodeSelector"].items()}
                spec["containers"] = [dict(c, name=f"c{i}", image="anonymized") for i, c in enumerate(spec["containers"])]
                new["spec"] = spec
            converted.append(new)
        result[kind] = converted
    return result

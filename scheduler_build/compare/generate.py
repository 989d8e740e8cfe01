"""`snapshot.generate`: a synthetic snapshot (pure, seeded: the same request writes the same bytes)."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

from scheduler_build.compare import snapshot as snapshot_mod
from scheduler_build.errors import UserError

# name -> (cpu, memory, pods): allocatable of a node of that shape.
NODE_SHAPES = {"small": ("8", "32Gi", "110"), "medium": ("16", "64Gi", "110"), "large": ("32", "128Gi", "110")}
NODE_MIXES = {"small": ("small",), "medium": ("medium",), "large": ("large",), "mixed": ("small", "medium", "large")}
# name -> (cpu choices, memory choices, owner kind): requests of one container.
POD_KINDS = {
    "web": (("100m", "250m", "500m"), ("128Mi", "256Mi", "512Mi"), "ReplicaSet"),
    "batch": (("1", "2"), ("2Gi", "4Gi"), "Job"),
    "db": (("2", "4"), ("8Gi", "16Gi"), "StatefulSet"),
}
POD_MIXES = {"web": ("web",), "batch": ("batch",), "db": ("db",), "mixed": ("web", "web", "web", "batch", "db")}
ZONES = ("zone-a", "zone-b", "zone-c")
NAMESPACE = "snapshot"
MAX_OBJECTS = 200_000
_LABEL_KEY = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")


@dataclass(frozen=True)
class PodLabel:
    key: str
    value: str
    fraction: float


def parse_pod_label(text: str) -> PodLabel:
    """KEY=VALUE[:FRACTION], FRACTION in (0, 1] (default 1)."""
    hint = "e.g. --pod-label underlay.acme.example.com/needs-ip=true:0.33"
    pair, _, share = text.rpartition(":") if ":" in text.split("=", 1)[-1] else (text, "", "")
    key, sep, value = pair.partition("=")
    if not sep or not key:
        raise UserError(f"--pod-label {text!r}: not KEY=VALUE[:FRACTION]", hint)
    if len(key) > 316 or not _LABEL_KEY.match(key) or len(value) > 63 or not _LABEL_VALUE.match(value):
        raise UserError(f"--pod-label {text!r}: {key}={value} is not a valid label", hint)
    try:
        fraction = float(share) if share else 1.0
    except ValueError:
        raise UserError(f"--pod-label {text!r}: fraction {share!r} is not a number", hint) from None
    if not 0.0 < fraction <= 1.0:
        raise UserError(f"--pod-label {text!r}: fraction {share} is not in (0, 1]", hint)
    return PodLabel(key, value, fraction)


def _count(value: Any, flag: str, lo: int) -> int:
    try:
        number = int(str(value))
    except ValueError:
        raise UserError(f"{flag} {value!r} is not a whole number", f"e.g. {flag} 200") from None
    if not lo <= number <= MAX_OBJECTS:
        raise UserError(f"{flag} {number} is out of range", f"between {lo} and {MAX_OBJECTS}")
    return number


@dataclass(frozen=True)
class GenerateRequest:
    nodes: int
    pods: int
    labels: tuple[PodLabel, ...]
    node_shapes: str
    pod_mix: str
    seed: int

    @classmethod
    def checked(cls, *, nodes: Any, pods: Any, labels: tuple[PodLabel, ...] = (), node_shapes: str = "mixed",
                pod_mix: str = "mixed", seed: Any = 1) -> "GenerateRequest":
        if node_shapes not in NODE_MIXES:
            raise UserError(f"--node-shapes {node_shapes!r} is not a node shape", f"one of {', '.join(NODE_MIXES)}")
        if pod_mix not in POD_MIXES:
            raise UserError(f"--pod-mix {pod_mix!r} is not a pod mix", f"one of {', '.join(POD_MIXES)}")
        return cls(_count(nodes, "--nodes", 1), _count(pods, "--pods", 0), labels, node_shapes, pod_mix,
                   _count(seed, "--seed", 0))


def _node(index: int, shape: str) -> dict:
    cpu, memory, pods = NODE_SHAPES[shape]
    name = f"node-{index:05d}"
    resources = {"cpu": cpu, "memory": memory, "pods": pods}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                                                  "topology.kubernetes.io/zone": ZONES[index % len(ZONES)],
                                                  "node.kubernetes.io/instance-type": shape}},
            "spec": {},
            "status": {"capacity": resources, "allocatable": resources,
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}


def _pod(index: int, kind: str, rng: random.Random, labels: dict[str, str]) -> dict:
    cpus, memories, owner = POD_KINDS[kind]
    app = f"{kind}-{index % 10}"
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"pod-{index:06d}", "namespace": NAMESPACE, "labels": {"app": app, **labels},
                         "annotations": {"snapshot.scheduler-build.io/owner-kind": owner}},
            "spec": {"containers": [{"name": "main", "image": "registry.example.com/app:1",
                                     "resources": {"requests": {"cpu": rng.choice(cpus), "memory": rng.choice(memories)}}}]}}


def generate(request: GenerateRequest) -> snapshot_mod.Snapshot:
    rng = random.Random(request.seed)
    shapes = NODE_MIXES[request.node_shapes]
    nodes = [_node(i, shapes[i % len(shapes)]) for i in range(request.nodes)]
    chosen = [set(rng.sample(range(request.pods), round(label.fraction * request.pods))) for label in request.labels]
    kinds = POD_MIXES[request.pod_mix]
    pods = []
    for i in range(request.pods):
        extra = {label.key: label.value for label, picked in zip(request.labels, chosen) if i in picked}
        pods.append(_pod(i, kinds[i % len(kinds)], rng, extra))
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    source = {"generated": {"nodes": request.nodes, "pods": request.pods, "nodeShapes": request.node_shapes,
                            "podMix": request.pod_mix, "seed": request.seed,
                            "podLabels": [f"{x.key}={x.value}:{x.fraction}" for x in request.labels]}}
    objects = {name: () for name in snapshot_mod.LISTS}
    objects.update(namespaces=(namespace,), nodes=tuple(nodes), pods=tuple(pods))
    return snapshot_mod.Snapshot(source=source, objects=objects)

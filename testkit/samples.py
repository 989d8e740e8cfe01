"""Requests and objects shaped exactly as kube-scheduler and the API server send them.

kube-scheduler encodes extender/v1 structs with Go's encoding/json: every field
is present (nil pointers as null), a NodeList carries `"metadata": {}`, and the
objects are complete v1.Node / v1.Pod values. Tests, the benchmark and smoke
checks share these builders so they all exercise the same wire shapes.
"""

from __future__ import annotations

import hashlib
from typing import Any, Iterable

CAPACITY_LABEL = "underlay.example.com/capacity"
POD_LABEL = "underlay.example.com/ip"


def _uid(seed: str) -> str:
    h = hashlib.sha1(seed.encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def node(name: str, capacity: int | str | None = None, images: int = 20, rv: str = "1000") -> dict[str, Any]:
    """A v1.Node as the scheduler's informer holds it (managedFields trimmed)."""
    labels = {
        "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": "m5.2xlarge", "topology.kubernetes.io/region": "eu-west-1",
        "topology.kubernetes.io/zone": "eu-west-1a",
    }
    if capacity is not None:
        labels[CAPACITY_LABEL] = str(capacity)
    conditions = [
        {"type": t, "status": s, "lastHeartbeatTime": "2026-11-23T10:00:00Z",
         "lastTransitionTime": "2026-11-01T08:00:00Z", "reason": r, "message": m}
        for t, s, r, m in (
            ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
            ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
            ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
        )
    ]
    return {
        "metadata": {
            "name": name, "uid": _uid("node/" + name), "resourceVersion": rv,
            "creationTimestamp": "2026-11-01T08:00:00Z", "labels": labels,
            "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                            "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
        },
        "spec": {"podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24"],
                 "providerID": f"aws:///eu-west-1a/i-{hashlib.sha1(name.encode()).hexdigest()[:17]}"},
        "status": {
            "capacity": {"cpu": "8", "ephemeral-storage": "101430960Ki", "hugepages-1Gi": "0",
                         "hugepages-2Mi": "0", "memory": "32386512Ki", "pods": "110"},
            "allocatable": {"cpu": "7910m", "ephemeral-storage": "93478772582", "hugepages-1Gi": "0",
                            "hugepages-2Mi": "0", "memory": "31235536Ki", "pods": "110"},
            "conditions": conditions,
            "addresses": [{"type": "InternalIP", "address": "10.0.12.34"},
                          {"type": "Hostname", "address": name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"machineID": "ec2b3c1d", "systemUUID": "ec2b3c1d-0000", "bootID": "5f0c",
                         "kernelVersion": "6.1.0-27-cloud-amd64", "osImage": "Debian GNU/Linux 12 (bookworm)",
                         "containerRuntimeVersion": "containerd://1.7.24", "kubeletVersion": "v1.36.3",
                         "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64"},
            "images": [{"names": [f"registry.example.com/team/app-{i}@sha256:{hashlib.sha256(str(i).encode()).hexdigest()}",
                                  f"registry.example.com/team/app-{i}:v1.{i}.0"],
                        "sizeBytes": 50_000_000 + i * 1_000_003} for i in range(images)],
        },
    }


def pod(name: str, namespace: str = "default", opt_in: bool = True, node_name: str = "",
        phase: str = "Pending", uid: str | None = None, rv: str = "1000") -> dict[str, Any]:
    """A v1.Pod as the scheduler encodes it (defaulted spec, status)."""
    labels = {"app": name.rsplit("-", 1)[0]}
    if opt_in:
        labels[POD_LABEL] = "true"
    spec: dict[str, Any] = {
        "containers": [{"name": "app", "image": "registry.example.com/team/app:v1",
                        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                        "terminationMessagePath": "/dev/termination-log",
                        "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}],
        "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default", "serviceAccount": "default", "securityContext": {},
        "schedulerName": "default-scheduler", "priority": 0, "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                         "effect": "NoExecute", "tolerationSeconds": 300}],
    }
    if node_name:
        spec["nodeName"] = node_name
    return {
        "metadata": {"name": name, "namespace": namespace, "uid": uid or _uid(f"pod/{namespace}/{name}"),
                     "resourceVersion": rv, "creationTimestamp": "2026-11-23T10:00:00Z", "labels": labels},
        "spec": spec,
        "status": {"phase": phase, "qosClass": "Burstable"},
    }


def filter_args(pod_obj: dict, nodes: Iterable[dict], node_cache_capable: bool) -> dict[str, Any]:
    """extenderv1.ExtenderArgs as sent to filter and prioritize."""
    nodes = list(nodes)
    if node_cache_capable:
        return {"Pod": pod_obj, "Nodes": None, "NodeNames": [n["metadata"]["name"] for n in nodes]}
    return {"Pod": pod_obj, "Nodes": {"metadata": {}, "items": nodes}, "NodeNames": None}


def preempt_args(pod_obj: dict, victims: dict[str, list[dict]], node_cache_capable: bool,
                 pdb_violations: int = 0) -> dict[str, Any]:
    """extenderv1.ExtenderPreemptionArgs: full victims, or UIDs only when nodeCacheCapable."""
    if node_cache_capable:
        meta = {n: {"Pods": [{"UID": p["metadata"]["uid"]} for p in pods], "NumPDBViolations": pdb_violations}
                for n, pods in victims.items()}
        return {"Pod": pod_obj, "NodeNameToVictims": None, "NodeNameToMetaVictims": meta}
    full = {n: {"Pods": pods, "NumPDBViolations": pdb_violations} for n, pods in victims.items()}
    return {"Pod": pod_obj, "NodeNameToVictims": full, "NodeNameToMetaVictims": None}


def bind_args(pod_obj: dict, node_name: str) -> dict[str, Any]:
    meta = pod_obj["metadata"]
    return {"PodName": meta["name"], "PodNamespace": meta["namespace"], "PodUID": meta["uid"], "Node": node_name}


def cluster(nodes: int, pods_per_node: int = 5, capacity: int | None = None, images: int = 20,
            prefix: str = "node") -> tuple[list[dict], list[dict]]:
    """A cluster of `nodes` nodes; node i holds (i % (pods_per_node + 1)) opted-in pods,
    so usage varies and some nodes are full when capacity is small."""
    node_objs = [node(f"{prefix}-{i:05d}", capacity=capacity, images=images) for i in range(nodes)]
    pod_objs = []
    for i, n in enumerate(node_objs):
        for j in range(i % (pods_per_node + 1)):
            pod_objs.append(pod(f"app-{i:05d}-{j}", node_name=n["metadata"]["name"], phase="Running"))
    return node_objs, pod_objs

"""Kubernetes objects for the e2e runs: Nodes and Pods as plain bodies, bulk create/delete, waits.

Nodes are plain API objects (no kubelet runs): pods get bound and nothing starts.
The client is the product's (scheduler_build.kubeclient).
"""

from __future__ import annotations

import concurrent.futures
import time
from typing import Any, Callable, Iterable

from scheduler_build import kubeclient


def api_client(kubeconfig: str) -> Any:
    """The product's client (scheduler_build.kubeclient); many threads share it in the bulk helpers below."""
    return kubeclient.from_kubeconfig(kubeconfig, pool_size=32)


def node_body(name: str, *, cpu: str = "32", memory: str = "128Gi", pods: int = 110,
              labels: dict[str, str] | None = None) -> dict:
    """A Node as a kubelet would register it: capacity, allocatable, Ready."""
    resources = {"cpu": cpu, "memory": memory, "pods": str(pods)}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {},
        "status": {
            "capacity": resources,
            "allocatable": resources,
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "message": "no kubelet: an API object for scheduling tests"}],
        },
    }


def pod_body(name: str, scheduler_name: str, *, labels: dict[str, str] | None = None, cpu: str = "10m",
             memory: str = "16Mi") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {
            "schedulerName": scheduler_name,
            "automountServiceAccountToken": False,
            "terminationGracePeriodSeconds": 0,
            "containers": [{
                "name": "c",
                "image": "scheduler-build.local/never-pulled:0",
                "resources": {"requests": {"cpu": cpu, "memory": memory}},
            }],
        },
    }


def parallel(fn: Callable[[Any], Any], items: Iterable[Any], workers: int = 8) -> list[Any]:
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, items))


def create_nodes(api: Any, bodies: list[dict], workers: int = 8) -> list[str]:
    from kubernetes import client as k  # heavy: only when a cluster is driven

    core = k.CoreV1Api(api)

    def one(body: dict) -> str:
        created = core.create_node(body)
        # Nodes keep their status on create in current versions; write it through the
        # status subresource when a version drops it, so capacity is always there.
        if not (created.status and created.status.allocatable):
            core.patch_node_status(body["metadata"]["name"], {"status": body["status"]})
        return body["metadata"]["name"]

    return parallel(one, bodies, workers)


def delete_nodes(api: Any, names: Iterable[str], workers: int = 8) -> None:
    from kubernetes import client as k  # heavy: only when a cluster is driven
    from kubernetes.client.exceptions import ApiException

    core = k.CoreV1Api(api)

    def one(name: str) -> None:
        try:
            core.delete_node(name)
        except ApiException as exc:
            if exc.status != 404:
                raise

    parallel(one, list(names), workers)


def ensure_namespace(api: Any, name: str) -> None:
    from kubernetes import client as k  # heavy: only when a cluster is driven
    from kubernetes.client.exceptions import ApiException

    try:
        k.CoreV1Api(api).create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    except ApiException as exc:
        if exc.status != 409:
            raise


def create_pods(api: Any, namespace: str, bodies: list[dict], workers: int = 8) -> list[str]:
    from kubernetes import client as k  # heavy: only when a cluster is driven

    core = k.CoreV1Api(api)
    return parallel(lambda body: core.create_namespaced_pod(namespace, body).metadata.name, bodies, workers)


def force_delete_pods(api: Any, namespace: str, names: Iterable[str] | None = None, workers: int = 8) -> None:
    """Delete pods at once (grace 0): with no kubelet, a graceful delete of a bound pod never ends."""
    from kubernetes import client as k  # heavy: only when a cluster is driven
    from kubernetes.client.exceptions import ApiException

    core = k.CoreV1Api(api)
    if names is None:
        names = [p.metadata.name for p in core.list_namespaced_pod(namespace).items]

    def one(name: str) -> None:
        try:
            core.delete_namespaced_pod(name, namespace, grace_period_seconds=0)
        except ApiException as exc:
            if exc.status != 404:
                raise

    parallel(one, list(names), workers)


def pods_by_name(api: Any, namespace: str) -> dict[str, Any]:
    from kubernetes import client as k  # heavy: only when a cluster is driven

    return {p.metadata.name: p for p in k.CoreV1Api(api).list_namespaced_pod(namespace).items}


def wait_until(predicate: Callable[[], Any], timeout: float, interval: float = 0.5, what: str = "condition") -> Any:
    """Poll until predicate() is truthy; return its value. Generous timeouts: the machine is shared."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise TimeoutError(f"{what} not reached after {timeout:.0f}s (last: {last!r})")


def wait_bound(api: Any, namespace: str, count: int, timeout: float) -> dict[str, str]:
    """Wait until `count` pods of the namespace have a node; return pod -> node."""
    def bound() -> dict[str, str] | None:
        placed = {n: p.spec.node_name for n, p in pods_by_name(api, namespace).items() if p.spec.node_name}
        return placed if len(placed) >= count else None

    return wait_until(bound, timeout, interval=1.0, what=f"{count} pods bound in {namespace}")


def wait_events(api: Any, namespace: str, reason: str, names: Iterable[str], timeout: float) -> dict[str, str]:
    """Wait until each named object has an event of `reason`; return name -> reporting component.

    A scheduler sends its events after the binding, through a buffered broadcaster, so a pod can
    be bound seconds before its Scheduled event exists (a loaded CI run saw 3 of 7 events).
    """
    wanted = set(names)

    def reported() -> dict[str, str] | None:
        seen = {ev.involved_object.name: ev.reporting_component or (ev.source.component if ev.source else "")
                for ev in events_for(api, namespace, reason)}
        return seen if wanted <= set(seen) else None

    return wait_until(reported, timeout, interval=1.0, what=f"{reason} events of {sorted(wanted)} in {namespace}")


def events_for(api: Any, namespace: str, reason: str | None = None) -> list[Any]:
    from kubernetes import client as k  # heavy: only when a cluster is driven

    items = k.CoreV1Api(api).list_namespaced_event(namespace).items
    return [e for e in items if reason is None or e.reason == reason]

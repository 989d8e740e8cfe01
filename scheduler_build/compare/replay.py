"""A snapshot replayed into a fresh API server, and the pods' outcomes read back (the only API traffic of
`compare`). Nodes first, then what pods refer to, then the pods, unbound, in creation order."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from scheduler_build.compare import snapshot as snapshot_mod
from scheduler_build.compare import trim
from scheduler_build.errors import UserError
from scheduler_build.progress import log

PATHS = {
    "namespaces": "/api/v1/namespaces",
    "priorityClasses": "/apis/scheduling.k8s.io/v1/priorityclasses",
    "storageClasses": "/apis/storage.k8s.io/v1/storageclasses",
    "persistentVolumes": "/api/v1/persistentvolumes",
    "persistentVolumeClaims": "/api/v1/namespaces/{ns}/persistentvolumeclaims",
    "deviceClasses": "/apis/resource.k8s.io/v1/deviceclasses",
    "resourceSlices": "/apis/resource.k8s.io/v1/resourceslices",
    "resourceClaims": "/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims",
    "nodes": "/api/v1/nodes",
    "pods": "/api/v1/namespaces/{ns}/pods",
}
# Objects every API server has already (a 409 on these is expected).
EXISTING_OK = ("namespaces", "priorityClasses")
# A gated pod is never tried: it settles at once, the same on both sides.
UNSCHEDULABLE_REASONS = ("Unschedulable", "SchedulerError", "SchedulingGated")


@dataclass
class Outcome:
    node: str = ""  # bound to
    reason: str = ""  # the PodScheduled=False message when unschedulable
    unschedulable: bool = False


@dataclass
class Replay:
    created_at: float = 0.0  # monotonic: the first pod created
    settled_at: float = 0.0  # monotonic: every pod bound or settled unschedulable
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    scheduled: list[str] = field(default_factory=list)  # the pods the scheduler was asked to place


class ApiError(Exception):
    """A request the API server refused: its HTTP status and message."""

    def __init__(self, status: int, message: str):
        super().__init__(f"HTTP {status}: {message}")
        self.status, self.message = status, message


def _call(api: Any, method: str, path: str, body: Any = None) -> dict:
    """One raw JSON request. The dynamic client's `request` is the one raw call whose signature is the same
    across the kubernetes client's generations (ApiClient.call_api changed with the pydantic one)."""
    from kubernetes.dynamic import DynamicClient
    from kubernetes.dynamic.exceptions import DynamicApiError

    dynamic = DynamicClient.__new__(DynamicClient)  # no discovery: only raw requests are made
    dynamic.client = api
    try:
        response = dynamic.request(method, path, body=body, serialize=False)
    except DynamicApiError as exc:
        raise ApiError(int(exc.status or 0), _message(exc)) from None
    return json.loads(response.data or b"{}")


TYPES = {"namespaces": ("v1", "Namespace"), "priorityClasses": ("scheduling.k8s.io/v1", "PriorityClass"),
         "storageClasses": ("storage.k8s.io/v1", "StorageClass"), "persistentVolumes": ("v1", "PersistentVolume"),
         "persistentVolumeClaims": ("v1", "PersistentVolumeClaim"), "deviceClasses": ("resource.k8s.io/v1", "DeviceClass"),
         "resourceSlices": ("resource.k8s.io/v1", "ResourceSlice"), "resourceClaims": ("resource.k8s.io/v1", "ResourceClaim"),
         "nodes": ("v1", "Node"), "pods": ("v1", "Pod")}


def _body(kind: str, obj: dict) -> dict:
    """What is created: the object's own fields but server-set metadata; a node keeps its status (there is no
    kubelet to report it); the type from the list it came in (a list's items carry none)."""
    body = {k: v for k, v in obj.items() if k != "status" or kind == "nodes"}
    meta = {k: v for k, v in obj["metadata"].items() if k in ("name", "namespace", "labels", "annotations")}
    api_version, type_name = TYPES[kind]
    return dict(body, apiVersion=api_version, kind=type_name, metadata=meta)


def pod_body(pod: dict, scheduler_name: str, keep_binding: bool) -> dict:
    body = _body("pods", pod)
    spec = dict(body["spec"], schedulerName=scheduler_name, automountServiceAccountToken=False,
                terminationGracePeriodSeconds=0)
    if not keep_binding:
        spec.pop("nodeName", None)
    return dict(body, spec=spec)


def create(api: Any, kind: str, index: int, body: dict) -> None:
    ns = body["metadata"].get("namespace", "default")
    try:
        _call(api, "POST", PATHS[kind].format(ns=ns), body)
    except ApiError as exc:
        if exc.status == 409 and kind in EXISTING_OK:
            return
        if exc.status == 404 and kind in ("deviceClasses", "resourceSlices", "resourceClaims"):
            raise UserError(f"{kind}[{index}] ({body['metadata']['name']}): this API server does not serve "
                            "resource.k8s.io/v1", "compare on a Kubernetes minor with DRA, or drop the DRA objects") from None
        raise UserError(f"the API server refused {kind}[{index}] ({body['metadata']['name']}): {exc.message}",
                        "fix that object in the snapshot") from None


def _message(exc: Any) -> str:
    try:
        return str(json.loads(exc.body).get("message") or exc.reason)
    except (TypeError, ValueError, AttributeError):
        return str(getattr(exc, "reason", exc))


def load_cluster(api: Any, shot: snapshot_mod.Snapshot) -> None:
    """Everything but pods: namespaces the pods need (listed or not), then each list in order."""
    listed = {o["metadata"]["name"] for o in shot.objects.get("namespaces", ())}
    needed = sorted({snapshot_mod.pod_key(p).split("/")[0] for p in shot.pods} - listed)
    for name in needed:
        create(api, "namespaces", -1, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    for kind in snapshot_mod.LISTS[:-1]:
        for index, obj in enumerate(shot.objects.get(kind, ())):
            if kind == "namespaces" and not trim.user_namespace(obj["metadata"]["name"]):
                continue
            create(api, kind, index, _body(kind, obj))
    log(f"    {len(shot.nodes)} nodes and {sum(len(shot.objects.get(k, ())) for k in snapshot_mod.LISTS[:-2])} "
        "other objects created")


def create_pods(api: Any, shot: snapshot_mod.Snapshot, scheduler_name: str, pending_only: bool) -> Replay:
    """Bound pods first when they keep their nodes (--pending-only), then the others, in creation order."""
    replay = Replay()
    bound = [(i, p) for i, p in enumerate(shot.pods) if pending_only and (p.get("spec") or {}).get("nodeName")]
    for index, pod in bound:
        create(api, "pods", index, pod_body(pod, scheduler_name, keep_binding=True))
    kept = {i for i, _ in bound}
    replay.created_at = time.monotonic()
    for index, pod in enumerate(shot.pods):
        if index in kept:
            continue
        create(api, "pods", index, pod_body(pod, scheduler_name, keep_binding=False))
        replay.scheduled.append(snapshot_mod.pod_key(pod))
    return replay


def outcomes(api: Any) -> dict[str, Outcome]:
    """Every pod's binding or unschedulable condition, from one list."""
    items = _call(api, "GET", "/api/v1/pods").get("items", [])
    out: dict[str, Outcome] = {}
    for pod in items:
        key = f"{pod['metadata'].get('namespace', 'default')}/{pod['metadata']['name']}"
        outcome = Outcome(node=(pod.get("spec") or {}).get("nodeName") or "")
        for condition in (pod.get("status") or {}).get("conditions") or []:
            if (condition.get("type") == "PodScheduled" and condition.get("status") == "False"
                    and condition.get("reason") in UNSCHEDULABLE_REASONS):
                outcome.unschedulable, outcome.reason = True, condition.get("message") or condition["reason"]
        out[key] = outcome
    return out


def wait_settled(api: Any, replay: Replay, timeout: float, alive: Any) -> None:
    """Until every scheduled pod is bound or settled unschedulable (twice in a row: a pod retried after a
    failure is not yet settled until it stays so), or the scheduler exits, or the timeout."""
    deadline = time.monotonic() + timeout
    stable, last_report = 0, 0.0
    while True:
        current = outcomes(api)
        pending = [k for k in replay.scheduled if not (current.get(k) and (current[k].node or current[k].unschedulable))]
        if not pending:
            stable += 1
            if stable == 1:
                replay.settled_at = time.monotonic()
            if stable >= 2:
                replay.outcomes = current
                return
        else:
            stable = 0
        if not alive():
            raise UserError("kube-scheduler exited before every pod settled", "its log is named above")
        now = time.monotonic()
        if now > deadline:
            raise UserError(f"{len(pending)} of {len(replay.scheduled)} pods neither bound nor unschedulable "
                            f"after {timeout:.0f}s (first: {pending[0]})", "raise --timeout, or see the scheduler log")
        if now - last_report > 10:
            log(f"    {len(replay.scheduled) - len(pending)}/{len(replay.scheduled)} pods settled")
            last_report = now
        time.sleep(0.5)

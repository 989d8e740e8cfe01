"""Waiting for a Deployment after `inv deploy`, and saying why it is not available.

When the Deployment does not become available in time, `diagnose()` turns what
the API server knows (Deployment and ReplicaSet conditions, pod and container
states, events) into reasons a human can act on: image pulls, crash loops, RBAC
or admission denials, unschedulable pods. It works on plain dicts so it is
tested on recorded objects.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from scheduler_build.errors import for_program

LOG_LINES = 3  # a crashed container's last log lines, quoted in its reason


def wait_available(client: Any, deployments: list[tuple[str, str]], timeout: float,
                   sleep: Callable[[float], None] = time.sleep,
                   check: Callable[[dict], bool] | None = None) -> tuple[bool, list[str]]:
    """Poll until every (namespace, name) Deployment is available, or explain why not."""
    from kubernetes import client as k8s  # heavy optional: only when waiting on a cluster
    from kubernetes.client.rest import ApiException

    apps, core = k8s.AppsV1Api(client), k8s.CoreV1Api(client)
    deadline = time.monotonic() + timeout
    pending = list(deployments)
    while True:
        still = []
        for namespace, name in pending:
            try:
                dep = apps.read_namespaced_deployment(name, namespace)
            except ApiException as exc:
                return False, [f"Deployment {namespace}/{name}: cannot read it: {exc.status} {exc.reason}"]
            if not (check or is_available)(client.sanitize_for_serialization(dep)):
                still.append((namespace, name))
        if not still:
            return True, []
        if time.monotonic() >= deadline:
            reasons: list[str] = []
            for namespace, name in still:
                reasons += gather_and_diagnose(client, apps, core, namespace, name)
            return False, reasons
        pending = still
        sleep(2.0)


def is_available(dep: dict) -> bool:
    status, spec = dep.get("status") or {}, dep.get("spec") or {}
    meta = dep.get("metadata") or {}
    if (status.get("observedGeneration") or 0) < (meta.get("generation") or 0):
        return False
    want = spec.get("replicas", 1)
    conditions = {c.get("type"): c for c in status.get("conditions") or []}
    return (conditions.get("Available", {}).get("status") == "True"
            and (status.get("updatedReplicas") or 0) >= want and (status.get("availableReplicas") or 0) >= want)


def rolled_out(dep: dict) -> bool:
    """Available, and every pod runs the current template (no old pod left, none still terminating:
    a terminating pod runs until it exits)."""
    status = dep.get("status") or {}
    return (is_available(dep) and (status.get("replicas") or 0) == (status.get("updatedReplicas") or 0)
            and not status.get("terminatingReplicas"))


def gather_and_diagnose(client: Any, apps: Any, core: Any, namespace: str, name: str) -> list[str]:
    dep = client.sanitize_for_serialization(apps.read_namespaced_deployment(name, namespace))
    selector = ",".join(f"{k}={v}" for k, v in sorted(((dep.get("spec") or {}).get("selector") or {})
                                                       .get("matchLabels", {}).items()))
    pods = client.sanitize_for_serialization(core.list_namespaced_pod(namespace, label_selector=selector)).get("items", [])
    replica_sets = client.sanitize_for_serialization(
        apps.list_namespaced_replica_set(namespace, label_selector=selector)).get("items", [])
    events = client.sanitize_for_serialization(core.list_namespaced_event(namespace)).get("items", [])
    return diagnose(dep, pods, replica_sets, events, previous_logs(core, namespace, pods))


def previous_logs(core: Any, namespace: str, pods: list[dict], lines: int = LOG_LINES) -> dict[str, str]:
    """The last log lines of each container that has exited ("pod/container" -> text): the current
    instance when it is the one that exited, else the previous one (restarting or backing off)."""
    from kubernetes.client.rest import ApiException

    logs: dict[str, str] = {}
    for pod in pods:
        pname = (pod.get("metadata") or {}).get("name", "")
        for cs in (pod.get("status") or {}).get("containerStatuses") or []:
            exited_now = "terminated" in (cs.get("state") or {})
            if not exited_now and not (cs.get("lastState") or {}).get("terminated"):
                continue
            try:
                text = core.read_namespaced_pod_log(pname, namespace, container=cs.get("name"),
                                                    previous=not exited_now, tail_lines=lines)
            except ApiException:
                continue  # the kubelet no longer has it: the exit code and message still say something
            if text and not text.startswith("unable to retrieve container logs"):
                logs[f"{pname}/{cs.get('name')}"] = text
    return logs


def one_line(text: str, lines: int = LOG_LINES, width: int = 400) -> str:
    """The last non-empty lines of a log, each cut to `width`, joined into one line with ' | '."""
    kept = [line.strip() for line in (text or "").splitlines() if line.strip()][-lines:]
    return " | ".join(line if len(line) <= width else line[:width] + "…" for line in kept)


WAITING_HINTS = {
    "ErrImageNeverPull": "the image is not on the node and imagePullPolicy is Never: load it there "
                         "(inv cluster.load REF, or --spec S) or allow pulls from a registry that has it",
    "ErrImagePull": "the image cannot be pulled: check image.repository/tag and that it was pushed (inv image.push)",
    "ImagePullBackOff": "the image cannot be pulled: check image.repository/tag and that it was pushed (inv image.push)",
    "InvalidImageName": "the image reference is malformed: check image.repository/tag in the spec",
    "CrashLoopBackOff": "the container keeps exiting: its last log lines follow; for the scheduler often a "
                        "configuration the binary refuses (run inv config.validate)",
    "CreateContainerConfigError": "a referenced ConfigMap/Secret or security setting is wrong",
    "RunContainerError": "the runtime could not start the container (entrypoint, user, or mounts)",
}


def diagnose(dep: dict, pods: list[dict], replica_sets: list[dict], events: list[dict],
             logs: dict[str, str] | None = None) -> list[str]:
    """Why a Deployment is not available, from the objects the API server returned (plain dicts)
    and the last log lines of containers that exited (`logs`: "pod/container" -> text), one line per cause."""
    meta = dep.get("metadata") or {}
    ident = f"Deployment {meta.get('namespace')}/{meta.get('name')}"
    reasons: list[str] = []
    status = dep.get("status") or {}
    for cond in status.get("conditions") or []:
        if cond.get("type") == "ReplicaFailure" and cond.get("status") == "True":
            reasons.append(f"{ident}: {cond.get('reason')}: {cond.get('message')}")
        if cond.get("type") == "Progressing" and cond.get("status") == "False":
            reasons.append(f"{ident}: {cond.get('reason')}: {cond.get('message')}")
    for rs in replica_sets:
        for cond in (rs.get("status") or {}).get("conditions") or []:
            if cond.get("type") == "ReplicaFailure" and cond.get("status") == "True":
                msg = cond.get("message", "")
                hint = " (RBAC or admission denied creating pods)" if "forbidden" in msg else ""
                reasons.append(f"ReplicaSet {rs['metadata']['name']}: {cond.get('reason')}: {msg}{hint}")
    for pod in pods:
        pname = (pod.get("metadata") or {}).get("name", "?")
        pstatus = pod.get("status") or {}
        for cond in pstatus.get("conditions") or []:
            if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
                reasons.append(f"pod {pname}: not scheduled: {cond.get('reason')}: {cond.get('message')}")
        if not pstatus.get("conditions") and not (pod.get("spec") or {}).get("nodeName"):
            reasons.append(f"pod {pname}: not scheduled yet (no node assigned; is a scheduler running?)")
        for cs in pstatus.get("containerStatuses") or []:
            reasons += _container_reasons(pname, cs, (logs or {}).get(f"{pname}/{cs.get('name')}", ""))
    names = {meta.get("name")} | {(rs.get("metadata") or {}).get("name") for rs in replica_sets} | {
        (p.get("metadata") or {}).get("name") for p in pods}
    warnings = [e for e in events if e.get("type") == "Warning"
                and (e.get("involvedObject") or {}).get("name") in names]
    for event in sorted(warnings, key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "")[-5:]:
        obj = event.get("involvedObject") or {}
        reasons.append(f"event {obj.get('kind')} {obj.get('name')}: {event.get('reason')}: {event.get('message')}")
    if not reasons and not replica_sets and not pods:
        reasons.append(f"{ident}: no ReplicaSet or pod was created for it: is kube-controller-manager running "
                       "(and the Deployment controller enabled)?")
    if not reasons:
        reasons.append(f"{ident}: {status.get('availableReplicas') or 0}/{(dep.get('spec') or {}).get('replicas', 1)} "
                       "replicas available and no error reported yet; give it longer (--timeout)")
    return reasons


def _container_reasons(pname: str, cs: dict, log_text: str) -> list[str]:
    """One line for a container that keeps the pod from being ready, with its last log lines if it exited."""
    state, prefix = cs.get("state") or {}, f"pod {pname} container {cs.get('name')}"
    last = (cs.get("lastState") or {}).get("terminated")
    quoted = one_line(log_text)
    tail = f"; last log lines: {quoted}" if quoted else ""
    waiting = state.get("waiting")
    if waiting:
        reason = waiting.get("reason", "")
        text = f"{prefix}: {reason}" + (f": {waiting['message']}" if waiting.get("message") else "")
        if reason in WAITING_HINTS:
            text += f" -> {for_program(WAITING_HINTS[reason])}"
        if last:
            text += f" (last exit code {last.get('exitCode')}: {(last.get('message') or last.get('reason') or '').strip()})"
        return [text + tail]
    if "running" in state and not cs.get("ready"):
        return [f"{prefix}: running but not ready "
                "(readiness probe /readyz on 10259 failing; look at its log)"
                + (f"; restarted {cs.get('restartCount')} times" if last else "") + tail]
    if "terminated" in state:
        term = state["terminated"]
        return [f"{prefix}: exited {term.get('exitCode')}: {(term.get('message') or term.get('reason') or '').strip()}"
                + tail]
    return []


def settled(rotation: bool) -> Callable[[dict], bool]:
    """When deploy is done with a Deployment: Available; after a certificate rotation, rolled out
    (no pod of the previous step left, so none still trusts the old CA when deploy returns)."""
    return rolled_out if rotation else is_available

"""`inv deploy`: server-side apply of the rendered objects, then wait for the Deployment.

Objects come from a rendered directory (its kustomization.yaml lists them) or are
rendered in memory from a spec. Each is applied with the kubernetes client's
server-side apply under the field manager `scheduler-build` (conflicts forced:
this tool owns the fields it renders), in dependency order (Namespace first).
`dry_run` uses the API server's own dry run, so admission and validation still
run and nothing is persisted.

When the Deployment does not become available in time, `diagnose()` turns what
the API server knows (Deployment and ReplicaSet conditions, pod and container
states, events) into reasons a human can act on: image pulls, crash loops, RBAC
or admission denials, unschedulable pods. It works on plain dicts so it is
tested on recorded objects.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml

from scheduler_build import kubeclient
from scheduler_build.config import schemas
from scheduler_build.deploy import tls
from scheduler_build.errors import UserError, for_program
from scheduler_build.progress import log

FIELD_MANAGER = "scheduler-build"
KUSTOMIZATION = "kustomization.yaml"
LOG_LINES = 3  # a crashed container's last log lines, quoted in its reason
# Apply order: what others depend on first.
KIND_ORDER = ("Namespace", "ServiceAccount", "ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding",
              "ConfigMap", "Secret", "Service", "NetworkPolicy", "PodDisruptionBudget", "Deployment")


@dataclass
class Applied:
    kind: str
    name: str
    namespace: str
    result: str  # "applied", "dry-run ok", "skipped: ..."


@dataclass
class DeployReport:
    applied: list[Applied] = field(default_factory=list)
    available: bool | None = None  # None: not waited for
    reasons: list[str] = field(default_factory=list)
    deployments: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"applied": [a.__dict__ for a in self.applied], "available": self.available,
                "reasons": self.reasons, "deployments": self.deployments}


def load_dir(directory: Path) -> list[dict]:
    """The objects of a rendered directory, in the order its kustomization.yaml lists them."""
    directory = Path(directory)
    if not (directory / KUSTOMIZATION).is_file():
        raise UserError(f"{directory} has no {KUSTOMIZATION}", "render it first: inv config.render --spec S --out DIR")
    return kustomized(lambda name: (directory / name).read_text() if (directory / name).is_file() else None, str(directory))


def load_files(files: dict[str, str]) -> list[dict]:
    """The objects of a rendering held in memory (config.render.render_files), in its kustomization's order."""
    return kustomized(files.get, "the rendered objects")


def kustomized(read: Callable[[str], str | None], where: str) -> list[dict]:
    """The one kustomization reader: each resource it lists, read through `read(name)` (None: missing), in order."""
    kust = f"{where}/{KUSTOMIZATION}"
    try:
        resources = (yaml.safe_load(read(KUSTOMIZATION) or "") or {}).get("resources") or []
    except yaml.YAMLError as exc:
        raise UserError(f"{kust}: invalid YAML: {exc}") from None
    objects: list[dict] = []
    for name in resources:
        text = read(name)
        if text is None:
            raise UserError(f"{kust} lists {name}, which does not exist", "re-render the directory")
        try:
            objects += [d for d in yaml.safe_load_all(text) if d]
        except yaml.YAMLError as exc:
            raise UserError(f"{where}/{name}: invalid YAML: {exc}") from None
    return objects


def ordered(objects: list[dict]) -> list[dict]:
    def key(obj: dict) -> tuple:
        kind = obj.get("kind", "")
        return (KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER),)

    return sorted(objects, key=key)  # stable: same-kind objects keep the rendered order


def _api_error(exc: Exception) -> str:
    """The API server's own message from an ApiException/DynamicApiError."""
    body = getattr(exc, "body", None)
    if body:
        try:
            return json.loads(body).get("message") or str(body)
        except (ValueError, AttributeError):
            return str(body)
    return str(getattr(exc, "summary", lambda: exc)() if callable(getattr(exc, "summary", None)) else exc)


def apply(client: Any, objects: list[dict], dry_run: bool = False,
          offline_check: Callable[[list[dict]], list[str]] | None = None) -> list[Applied]:
    """Server-side apply each object; stop at the first refusal with the server's reason.

    In a dry run, an object in a namespace this apply creates cannot be checked by the server
    (the dry run persisted no namespace): `offline_check` judges those (one line per problem)."""
    from kubernetes.dynamic import DynamicClient  # heavy optional: only when applying
    from kubernetes.dynamic.exceptions import DynamicApiError, ResourceNotFoundError
    from urllib3.exceptions import HTTPError as Urllib3Error

    try:
        dynamic = DynamicClient(client)
    except (Urllib3Error, OSError) as exc:
        raise UserError(f"cannot reach the API server at {client.configuration.host}: {exc}",
                        "check the kubeconfig's server and that the cluster is up") from None
    except DynamicApiError as exc:
        raise UserError(f"the API server refused discovery: {_api_error(exc)}", "check the kubeconfig's credentials") from None
    results: list[Applied] = []
    new_namespaces: set[str] = set()
    deferred: list[dict] = []
    for obj in ordered(objects):
        kind, api_version = obj.get("kind", ""), obj.get("apiVersion", "")
        meta = obj.get("metadata") or {}
        name, namespace = meta.get("name", ""), meta.get("namespace", "")
        try:
            resource = dynamic.resources.get(api_version=api_version, kind=kind)
        except ResourceNotFoundError:
            raise UserError(f"the API server does not serve {api_version} {kind} ({name})",
                            "the cluster is too old or lacks that API") from None
        if dry_run and namespace and namespace in new_namespaces:
            # A server dry run persists nothing, so the namespace it "created" does not exist yet.
            deferred.append(obj)
            continue
        try:
            dynamic.server_side_apply(resource, body=obj, namespace=namespace or None, field_manager=FIELD_MANAGER,
                                      force_conflicts=True, dry_run="All" if dry_run else None)
        except DynamicApiError as exc:
            raise UserError(f"applying {kind} {namespace + '/' if namespace else ''}{name} failed: "
                            f"{getattr(exc, 'status', '')} {_api_error(exc)}".replace("  ", " "),
                            "RBAC: the kubeconfig's user needs rights to create these objects (and to bind the "
                            "system:kube-scheduler roles)" if getattr(exc, "status", 0) == 403 else
                            "the server's message says which field") from None
        if dry_run and kind == "Namespace":
            try:
                resource.get(name=name)
            except DynamicApiError:
                new_namespaces.add(name)
        results.append(Applied(kind, name, namespace, "dry-run ok" if dry_run else "applied"))
        log(f"    {kind} {namespace + '/' if namespace else ''}{name}: {results[-1].result}")
    return results + check_offline(deferred, offline_check)


def check_offline(deferred: list[dict], offline_check: Callable[[list[dict]], list[str]] | None) -> list[Applied]:
    """The dry run's objects in namespaces it creates, judged offline (or reported unchecked without a judge)."""
    if not deferred:
        return []
    problems = offline_check(deferred) if offline_check else []
    if problems:
        for problem in problems:
            log(f"    schema: {problem}")
        raise UserError(f"{len(problems)} of the objects in namespaces this apply creates fail the offline schema "
                        f"check: {problems[0]}", "fix the spec or the rendered file; every problem is listed above")
    out = []
    for obj in deferred:
        meta = obj.get("metadata") or {}
        result = (f"schema ok (offline: namespace {meta.get('namespace')} is created by this apply)" if offline_check
                  else f"not checked: namespace {meta.get('namespace')} is created by this apply")
        out.append(Applied(obj.get("kind", ""), meta.get("name", ""), meta.get("namespace", ""), result))
        log(f"    {out[-1].kind} {out[-1].namespace}/{out[-1].name}: {result}")
    return out


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


def server_version(client: Any) -> str:
    """The API server's release (v1.36.3), the schemas an offline check uses."""
    from kubernetes import client as k8s  # heavy optional: only when deploying

    return str(k8s.VersionApi(client).get_code().git_version).split("+", 1)[0]


def schema_check(client: Any, cache_dir: Path) -> Callable[[list[dict]], list[str]]:
    """kubeconform against the server's own release's OpenAPI, generated offline (config.schemas)."""
    return lambda objects: schemas.check(objects, server_version(client), cache_dir)


def deploy(objects: list[dict], kubeconfig: Path, context: str | None = None, dry_run: bool = False,
           wait: bool = True, timeout: float = 300.0, rotate_certs: bool = False,
           cache_dir: Path | None = None) -> DeployReport:
    client = kubeclient.from_kubeconfig(kubeconfig, context)
    report = DeployReport()
    report.deployments = [f"{o['metadata'].get('namespace', 'default')}/{o['metadata']['name']}"
                          for o in objects if o.get("kind") == "Deployment"]
    targets = [tuple(d.split("/", 1)) for d in report.deployments]
    rotating: list[bool] = []

    def apply_and_roll(step: list[dict]) -> None:
        rotating.append(True)
        apply(client, step)
        ok, reasons = wait_available(client, targets, timeout, check=rolled_out)  # type: ignore[arg-type]
        if not ok:
            for reason in reasons:
                log(f"    why: {reason}")
            raise UserError(f"certificate rotation stopped: {', '.join(report.deployments)} did not roll out "
                            f"in {timeout:g}s: {reasons[0] if reasons else 'no reason reported'}",
                            "fix the cause and run inv deploy --rotate-certs again (every step is safe to repeat)")

    objects = tls.prepare(client, objects, rotate_certs, dry_run, wait, apply_and_roll)
    report.applied = apply(client, objects, dry_run=dry_run,
                           offline_check=schema_check(client, cache_dir) if cache_dir else None)
    if dry_run or not wait:
        return report
    log(f"    waiting up to {timeout:g}s for {', '.join(report.deployments)} to become available")
    report.available, report.reasons = wait_available(client, targets, timeout,  # type: ignore[arg-type]
                                                      check=settled(bool(rotating)))
    return report


def settled(rotation: bool) -> Callable[[dict], bool]:
    """When deploy is done with a Deployment: Available; after a certificate rotation, rolled out
    (no pod of the previous step left, so none still trusts the old CA when deploy returns)."""
    return rolled_out if rotation else is_available

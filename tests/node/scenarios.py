"""Scenarios run on the real node after the example spec is deployed (tests/node/test_node.py).

Each takes the admin kubeconfig (and the state dir when it touches the node's processes) and
asserts on what the API server and the node report: diagnosis of Deployments that cannot become
Available, the scheduler pod deleted, the kubelet restarted.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import yaml

from scheduler_build.cluster import containerd
from scheduler_build.cluster import node as node_mod

ROOT = Path(__file__).resolve().parents[2]
NS = "underlay-system"
SCHEDULER = "underlay-scheduler"
SCHEDULER_PODS = "app.kubernetes.io/name=underlay-scheduler,app.kubernetes.io/component=scheduler"
FAULTS = "node-faults"


def inv(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "invoke", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def apis(kubeconfig: str):
    from kubernetes import client

    from scheduler_build import kubeclient

    api = kubeclient.from_kubeconfig(kubeconfig)
    return client.AppsV1Api(api), client.CoreV1Api(api), client.CoordinationV1Api(api)


def wait(pred, timeout=180, what=""):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if pred():
                return
        except Exception:  # the API server or the kubelet may be between answers (restart): poll again
            pass
        time.sleep(1)
    raise AssertionError(f"timed out waiting for {what}")


def write_spec(directory: Path, name: str) -> Path:
    """A minimal spec of its own (namespace and names apart from the example's), image never pulled."""
    spec = {"name": name, "version": "0.0.1", "kubernetes": {"version": "1.36"}, "namespace": name,
            "image": {"repository": "localhost/node-test/absent", "tag": "0", "pullPolicy": "Never"},
            "profiles": [{"schedulerName": name}]}
    path = directory / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def scheduler_image(kubeconfig: str) -> str:
    apps, _, _ = apis(kubeconfig)
    return apps.read_namespaced_deployment(SCHEDULER, NS).spec.template.spec.containers[0].image


def delete_namespace(kubeconfig: str, name: str) -> None:
    _, core, _ = apis(kubeconfig)
    core.delete_namespace(name)


def failed_deploy(out: subprocess.CompletedProcess, deployment: str) -> str:
    """The task failed as bad input does: exit 2, one error line naming the Deployment, no traceback."""
    assert out.returncode == 2, (out.returncode, out.stderr[-3000:])
    assert "Traceback" not in out.stderr, out.stderr[-3000:]
    errors = [line for line in out.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and deployment in errors[0] and "not available after" in errors[0], out.stderr[-3000:]
    return out.stderr


def image_missing(kubeconfig: str, directory: Path) -> None:
    """A Deployment whose image is not on the node (pull policy Never): ErrImageNeverPull, named with
    the image and the way to load it."""
    spec = write_spec(directory, "diag-image")
    try:
        out = inv("deploy", "--spec", str(spec), "--image", "localhost/node-test/absent:0", "--kubeconfig", kubeconfig,
                  "--timeout", "20")
        stderr = failed_deploy(out, "diag-image/diag-image")
        why = [line for line in stderr.splitlines() if "ErrImageNeverPull" in line and "container kube-scheduler" in line]
        assert why and "localhost/node-test/absent:0" in why[0] and "inv cluster.load" in why[0], stderr[-3000:]
        print(why[0])  # shown by pytest -rA: the diagnosis as the user sees it
    finally:
        delete_namespace(kubeconfig, "diag-image")


def crash_loop(kubeconfig: str, directory: Path) -> None:
    """The real scheduler image with a misspelled key in its ConfigMap: it exits at start, again and
    again; the diagnosis quotes the binary's own last log lines, which name the key."""
    spec = write_spec(directory, "diag-crash")
    rendered = directory / "diag-crash"
    out = inv("config.render", "--spec", str(spec), "--out", str(rendered), "--image", scheduler_image(kubeconfig))
    assert out.returncode == 0, out.stderr
    configmap = rendered / "configmap.yaml"
    assert "leaderElect: true" in configmap.read_text()
    configmap.write_text(configmap.read_text().replace("leaderElect: true", "leaderElekt: true"))
    try:
        out = inv("deploy", "--dir", str(rendered), "--kubeconfig", kubeconfig, "--timeout", "40")
        stderr = failed_deploy(out, "diag-crash/diag-crash")
        why = [line for line in stderr.splitlines() if "container kube-scheduler" in line and "last log lines:" in line]
        assert why and "leaderElekt" in why[0].split("last log lines:")[1], stderr[-3000:]
        assert "CrashLoopBackOff" in why[0] or "restarted" in why[0] or "exited" in why[0], why[0]
        print(why[0])
    finally:
        delete_namespace(kubeconfig, "diag-crash")


def pause_pod(name: str, scheduler: str = SCHEDULER, labels: dict | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {}},
            "spec": {"schedulerName": scheduler, "terminationGracePeriodSeconds": 0, "containers": [{
                "name": "c", "image": containerd.PAUSE_IMAGE, "imagePullPolicy": "Never"}]}}


def ensure_namespace(core, name: str) -> None:
    from kubernetes.client.rest import ApiException

    try:
        core.create_namespace({"metadata": {"name": name}})
    except ApiException as exc:
        if exc.status != 409:
            raise


def create_pods(core, names: list[str]) -> None:
    ensure_namespace(core, FAULTS)
    for name in names:
        core.create_namespaced_pod(FAULTS, pause_pod(name))


def all_bound(core, count: int) -> bool:
    pods = core.list_namespaced_pod(FAULTS).items
    return len(pods) == count and all(p.spec.node_name for p in pods)


def scheduler_pods(core) -> list:
    return [p for p in core.list_namespaced_pod(NS, label_selector=SCHEDULER_PODS).items
            if not p.metadata.deletion_timestamp]


def holder(coord) -> str:
    return coord.read_namespaced_lease(SCHEDULER, NS).spec.holder_identity or ""


def assert_each_pod_bound_once(core, pods_of_scheduler: list[str]) -> None:
    counts: dict[str, int] = {}
    for ev in core.list_namespaced_event(FAULTS).items:
        if ev.reason == "Scheduled":
            counts[ev.involved_object.name] = counts.get(ev.involved_object.name, 0) + (ev.count or 1)
    assert all(n == 1 for n in counts.values()), counts
    for name in pods_of_scheduler:
        text = core.read_namespaced_pod_log(name, NS)
        assert "already assigned to node" not in text and "Operation cannot be fulfilled on pods/binding" not in text


def scheduler_pod_deleted(kubeconfig: str) -> None:
    """Delete the scheduler pod: the Deployment replaces it, the new pod takes the Lease, pods created
    meanwhile are bound once each (the filter is not ignorable: through the extender)."""
    apps, core, coord = apis(kubeconfig)
    (old,) = scheduler_pods(core)
    assert holder(coord).startswith(old.metadata.name + "_"), holder(coord)
    create_pods(core, [f"before-{i}" for i in range(3)])
    wait(lambda: all_bound(core, 3), what="3 pods bound by the first scheduler pod")
    core.delete_namespaced_pod(old.metadata.name, NS)
    create_pods(core, [f"during-{i}" for i in range(3)])

    def replaced():
        pods = scheduler_pods(core)
        return len(pods) == 1 and pods[0].metadata.name != old.metadata.name and holder(coord).startswith(
            pods[0].metadata.name + "_")

    wait(replaced, timeout=240, what="a new scheduler pod holding the Lease")
    wait(lambda: all_bound(core, 6), timeout=240, what="6 pods bound")
    wait(lambda: apps.read_namespaced_deployment(SCHEDULER, NS).status.available_replicas == 1,
         what="the scheduler Deployment Available again")
    assert_each_pod_bound_once(core, [scheduler_pods(core)[0].metadata.name])


def _containers(core) -> dict[str, tuple]:
    """pod -> (container id, restart count) for every pod on the node."""
    return {f"{p.metadata.namespace}/{p.metadata.name}": tuple(
        (cs.container_id, cs.restart_count) for cs in p.status.container_statuses or [])
        for p in core.list_pod_for_all_namespaces().items
        if p.status.phase == "Running" and not p.metadata.namespace.startswith("diag-")}


def kubelet_restarted(kubeconfig: str, state_dir: Path) -> None:
    """Restart the kubelet: every running pod keeps its containers (same ids, no restart), the node
    is Ready again, and a pod created afterwards is scheduled by ours and runs."""
    apps, core, _ = apis(kubeconfig)
    before = _containers(core)
    assert any(name.startswith(NS + "/") for name in before), before
    old = node_mod.load(state_dir).processes["kubelet"]
    new = node_mod.restart(state_dir, "kubelet")
    assert new.pid != old.pid and node_mod.load(state_dir).processes["kubelet"].pid == new.pid

    restarted = time.time() - 1  # the same clock: the new kubelet posts its status after this

    def ready() -> bool:
        ready = {c.type: c for c in core.read_node("scheduler-build-node").status.conditions or []}["Ready"]
        return ready.status == "True" and ready.last_heartbeat_time.timestamp() >= restarted
    wait(ready, what="the node Ready after the kubelet restart")
    create_pods(core, ["after-kubelet-restart"])
    wait(lambda: core.read_namespaced_pod("after-kubelet-restart", FAULTS).status.phase == "Running",
         what="a pod created after the restart Running")
    after = _containers(core)
    assert {k: v for k, v in after.items() if k in before} == before
    assert apps.read_namespaced_deployment(SCHEDULER, NS).status.available_replicas == 1


EXTENDER = "underlay-scheduler-extender"


def extender_replica_killed(kubeconfig: str) -> None:
    """Two extender replicas behind the Service, one killed: pods created right then are all bound
    (the filter is not ignorable, so a pod the extender did not answer for would stay Pending)."""
    apps, core, _ = apis(kubeconfig)
    apps.patch_namespaced_deployment_scale(EXTENDER, NS, {"spec": {"replicas": 2}})
    wait(lambda: (apps.read_namespaced_deployment(EXTENDER, NS).status.available_replicas or 0) == 2,
         what="two extender replicas available")
    selector = f"app.kubernetes.io/name={EXTENDER}"
    victim = core.list_namespaced_pod(NS, label_selector=selector).items[0].metadata.name
    have = len(core.list_namespaced_pod(FAULTS).items)
    core.delete_namespaced_pod(victim, NS, grace_period_seconds=0)
    create_pods(core, [f"extender-down-{i}" for i in range(4)])
    wait(lambda: all_bound(core, have + 4), timeout=240, what="every pod bound while one extender replica was gone")
    wait(lambda: (apps.read_namespaced_deployment(EXTENDER, NS).status.available_replicas or 0) == 2,
         what="the killed extender replica replaced")
    apps.patch_namespaced_deployment_scale(EXTENDER, NS, {"spec": {"replicas": 1}})


QUOTA_NS = "node-quota"
CAPACITY_LABEL = "underlay.acme.example.com/capacity"  # the example spec's pluginConfig
NEEDS_IP = {"underlay.acme.example.com/needs-ip": "true"}


def _reporter(ev) -> str:
    return ev.reporting_component or (ev.source.component if ev.source else "") or ""


def _bound(core) -> list[str]:
    return sorted(p.metadata.name for p in core.list_namespaced_pod(QUOTA_NS).items
                  if p.spec.node_name and p.spec.scheduler_name == SCHEDULER)


def underlay_quota(kubeconfig: str) -> None:
    """The node's quota label says 2: of 4 pods needing an underlay IP, ours binds 2 and reports the
    others unschedulable with the plugin's reason; a pod of the default scheduler with the same label
    is bound by the default scheduler and never touched by ours."""
    _, core, _ = apis(kubeconfig)
    core.patch_node("scheduler-build-node", {"metadata": {"labels": {CAPACITY_LABEL: "2"}}})
    ensure_namespace(core, QUOTA_NS)
    try:
        for i in range(4):
            core.create_namespaced_pod(QUOTA_NS, pause_pod(f"q{i}", labels=NEEDS_IP))
        core.create_namespaced_pod(QUOTA_NS, pause_pod("default-sched", "default-scheduler", NEEDS_IP))
        wait(lambda: len(_bound(core)) == 2, what="2 pods bound on the node of quota 2")

        def reported():
            events = core.list_namespaced_event(QUOTA_NS).items
            return {ev.involved_object.name for ev in events if ev.reason == "FailedScheduling"
                    and _reporter(ev) == SCHEDULER and "no free underlay IP" in (ev.message or "")} >= (
                {f"q{i}" for i in range(4)} - set(_bound(core)))
        wait(reported, what="FailedScheduling with the plugin's reason for the 2 pods beyond the quota")
        assert len(_bound(core)) == 2
        wait(lambda: core.read_namespaced_pod("default-sched", QUOTA_NS).status.phase == "Running",
             what="the default scheduler's pod Running")
        by = {_reporter(ev) for ev in core.list_namespaced_event(QUOTA_NS).items
              if ev.involved_object.name == "default-sched"}
        assert "default-scheduler" in by and SCHEDULER not in by, by
    finally:
        core.delete_namespace(QUOTA_NS)
        core.patch_node("scheduler-build-node", {"metadata": {"labels": {CAPACITY_LABEL: None}}})

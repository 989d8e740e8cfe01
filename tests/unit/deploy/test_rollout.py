"""deploy: the parts that need no API server (object loading/order, diagnosis of recorded objects).

The apply and wait path runs against a real kube-apiserver in tests/integration/test_config.py
when a built kube-apiserver and etcd are available, and in the end-to-end suite.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from scheduler_build.deploy import apply, rollout
from scheduler_build.config import render
from scheduler_build import spec as spec_mod
from scheduler_build.errors import UserError

SPECS = Path(__file__).resolve().parents[2] / "data" / "config" / "specs"


def test_load_dir_reads_the_kustomization_and_orders_dependencies_first(tmp_path):
    spec = spec_mod.load(SPECS / "intree-full.yaml")
    render.render(spec, tmp_path / "out", "r/x:1")
    objects = apply.ordered(apply.load_dir(tmp_path / "out"))
    kinds = [o["kind"] for o in objects]
    assert kinds[0] == "Namespace"
    assert kinds.index("ServiceAccount") < kinds.index("ClusterRoleBinding") < kinds.index("Deployment")
    assert kinds.index("ConfigMap") < kinds.index("Deployment")
    assert sum(k == "Deployment" for k in kinds) == 2


def test_a_rendering_on_disk_and_in_memory_is_read_by_one_kustomization_reader(tmp_path):
    spec = spec_mod.load(SPECS / "intree-full.yaml")
    files = render.render_files(spec, "r/x:1")
    render.render(spec, tmp_path / "out", "r/x:1")
    assert apply.load_files(files) == apply.load_dir(tmp_path / "out")
    listed = dict(files)
    missing = yaml.safe_load(files["kustomization.yaml"])["resources"][-1]
    del listed[missing]
    with pytest.raises(UserError, match=f"lists {missing}, which does not exist"):
        apply.load_files(listed)


def test_load_dir_without_kustomization(tmp_path):
    with pytest.raises(UserError, match="no kustomization.yaml"):
        apply.load_dir(tmp_path)


DEP = {"metadata": {"name": "s", "namespace": "n", "generation": 2},
       "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}}},
       "status": {"observedGeneration": 2, "replicas": 1, "unavailableReplicas": 1,
                  "conditions": [{"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable"}]}}


def pod(name, **status):
    return {"metadata": {"name": name}, "spec": {"nodeName": "n1"}, "status": status}


def test_is_available():
    assert not rollout.is_available(DEP)
    ok = {**DEP, "status": {"observedGeneration": 2, "updatedReplicas": 1, "availableReplicas": 1,
                            "conditions": [{"type": "Available", "status": "True"}]}}
    assert rollout.is_available(ok)
    stale = {**ok, "metadata": {**ok["metadata"], "generation": 3}}
    assert not rollout.is_available(stale)


def test_after_a_rotation_deploy_waits_until_no_pod_of_the_previous_step_is_left():
    """The moment a rolling update's new pod is available and the old one not yet gone: enough for
    a plain deploy; not for a rotation, whose last step is done only when no pod trusts the old CA
    (found on the real node: deploy --rotate-certs returned with the old scheduler pod still there)."""
    mid_rollout = {**DEP, "status": {"observedGeneration": 2, "replicas": 2, "updatedReplicas": 1,
                                     "availableReplicas": 2, "conditions": [{"type": "Available", "status": "True"}]}}
    assert rollout.settled(rotation=False)(mid_rollout)
    assert not rollout.settled(rotation=True)(mid_rollout)
    terminating = {**mid_rollout, "status": {**mid_rollout["status"], "replicas": 1, "availableReplicas": 1,
                                             "terminatingReplicas": 1}}
    assert not rollout.settled(rotation=True)(terminating)
    done = {**terminating, "status": {**terminating["status"], "terminatingReplicas": 0}}
    assert rollout.settled(rotation=True)(done)


def test_diagnose_image_pull():
    p = pod("s-1", containerStatuses=[{"name": "kube-scheduler", "ready": False, "state": {"waiting": {
        "reason": "ImagePullBackOff", "message": "Back-off pulling image \"r/x:1\""}}}])
    reasons = rollout.diagnose(DEP, [p], [], [])
    assert any("ImagePullBackOff" in r and "image.repository" in r for r in reasons)


def test_diagnose_crash_loop_shows_last_exit():
    p = pod("s-1", containerStatuses=[{"name": "kube-scheduler", "ready": False,
                                       "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                                       "lastState": {"terminated": {"exitCode": 1, "message": "couldn't build extenders"}}}])
    (reason,) = [r for r in rollout.diagnose(DEP, [p], [], []) if "CrashLoopBackOff" in r]
    assert "exit code 1" in reason and "couldn't build extenders" in reason


def test_diagnose_image_not_on_the_node():
    p = pod("s-1", containerStatuses=[{"name": "kube-scheduler", "ready": False, "state": {"waiting": {
        "reason": "ErrImageNeverPull", "message": "Container image \"r/x:1\" is not present with pull policy of Never"}}}])
    (reason,) = rollout.diagnose(DEP, [p], [], [])
    assert "r/x:1" in reason and "inv cluster.load" in reason


def test_diagnose_crash_loop_quotes_the_last_log_lines_on_one_line():
    status = {"name": "kube-scheduler", "ready": False, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
              "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}}}
    log = "I0 starting\n\nE1 first\nE2 " + "x" * 400 + "\nE3 strict decoding error: unknown field \"foo\"\n"
    (reason,) = rollout.diagnose(DEP, [pod("s-1", containerStatuses=[status])], [], [], {"s-1/kube-scheduler": log})
    assert "\n" not in reason and "starting" not in reason
    assert reason.endswith('last log lines: E1 first | E2 ' + "x" * 397 + '… | E3 strict decoding error: unknown field "foo"')


def test_diagnose_rbac_denial_from_replicaset_and_events():
    rs = {"metadata": {"name": "s-abc"}, "status": {"conditions": [{"type": "ReplicaFailure", "status": "True",
          "reason": "FailedCreate", "message": "pods \"s-abc-\" is forbidden: error looking up service account n/s"}]}}
    ev = {"type": "Warning", "reason": "FailedCreate", "message": "Error creating: pods is forbidden",
          "involvedObject": {"kind": "ReplicaSet", "name": "s-abc"}, "lastTimestamp": "2026-01-01T00:00:00Z"}
    other = {**ev, "involvedObject": {"kind": "Pod", "name": "unrelated"}}
    reasons = rollout.diagnose(DEP, [], [rs], [ev, other])
    assert any("forbidden" in r and "RBAC" in r for r in reasons)
    assert any(r.startswith("event ReplicaSet s-abc") for r in reasons)
    assert not any("unrelated" in r for r in reasons)


def test_diagnose_unscheduled_and_not_ready():
    unscheduled = {"metadata": {"name": "s-1"}, "spec": {}, "status": {"conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/3 nodes are available"}]}}
    running = pod("s-2", conditions=[{"type": "Ready", "status": "False"}],
                  containerStatuses=[{"name": "kube-scheduler", "ready": False, "state": {"running": {}}}])
    reasons = rollout.diagnose(DEP, [unscheduled, running], [], [])
    assert any("not scheduled: Unschedulable: 0/3" in r for r in reasons)
    assert any("running but not ready" in r for r in reasons)


def test_diagnose_without_replicasets_points_at_the_controller_manager():
    (reason,) = rollout.diagnose(DEP, [], [], [])
    assert "kube-controller-manager" in reason


def test_diagnose_with_nothing_wrong_yet_says_so():
    rs = {"metadata": {"name": "s-abc"}, "status": {}}
    (reason,) = rollout.diagnose(DEP, [pod("s-1", containerStatuses=[])], [rs], [])
    assert "0/1 replicas available" in reason


def test_dry_run_judges_objects_of_a_new_namespace_offline():
    objs = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "new"}}]
    ok = apply.check_offline(objs, lambda o: [])
    assert [a.result for a in ok] == ["schema ok (offline: namespace new is created by this apply)"]
    assert apply.check_offline(objs, None)[0].result.startswith("not checked")
    with pytest.raises(UserError, match="offline schema check: ConfigMap c: bad"):
        apply.check_offline(objs, lambda o: ["ConfigMap c: bad"])
    assert apply.check_offline([], lambda o: ["never called"]) == []

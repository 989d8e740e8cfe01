"""`inv cluster.up` / `inv cluster.down` on real processes: certificates, RBAC, clean teardown."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from scheduler_build.cluster import controlplane as cluster
from testkit import kubeobjects as kobj

pytestmark = pytest.mark.timeout(900)


def _inv(repo, *args, timeout=600):
    return subprocess.run(["inv", *args], cwd=repo, capture_output=True, text=True, timeout=timeout)


def _pid_alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def test_cli_up_status_down_leaves_nothing(repo, built_apiserver, tmp_path):
    state_dir = tmp_path / "cp"
    up = _inv(repo, "cluster.up", "--apiserver", str(built_apiserver.binary), "--state-dir", str(state_dir),
              "--timeout", "300", "--json")
    assert up.returncode == 0, up.stderr
    state = json.loads(up.stdout)
    pids = {name: rec["pid"] for name, rec in state["processes"].items()}
    try:
        assert set(pids) == {"etcd", "kube-apiserver"}
        assert all(_pid_alive(pid) for pid in pids.values())
        assert state["server"].startswith("https://127.0.0.1:")
        assert state["version"] == built_apiserver.info.kubernetes.version

        status = _inv(repo, "cluster.status", "--state-dir", str(state_dir))
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["ready"] is True

        # The admin (system:masters) may do anything; the scheduler identity only what
        # the bootstrap role system:kube-scheduler grants: RBAC is really on.
        from kubernetes import client as k
        from kubernetes.client.exceptions import ApiException

        admin = k.CoreV1Api(kobj.api_client(state["admin_kubeconfig"]))
        assert {ns.metadata.name for ns in admin.list_namespace().items} >= {"default", "kube-system"}
        sched = k.CoreV1Api(kobj.api_client(state["scheduler_kubeconfig"]))
        sched.list_pod_for_all_namespaces(limit=1)
        sched.list_node(limit=1)
        with pytest.raises(ApiException) as denied:
            sched.create_namespace({"metadata": {"name": "not-allowed"}})
        assert denied.value.status == 403
        with pytest.raises(ApiException) as denied:
            sched.list_secret_for_all_namespaces(limit=1)
        assert denied.value.status == 403

        again = _inv(repo, "cluster.up", "--apiserver", str(built_apiserver.binary), "--state-dir", str(state_dir))
        assert again.returncode == 2 and "already runs" in again.stderr and "Traceback" not in again.stderr
    finally:
        down = _inv(repo, "cluster.down", "--state-dir", str(state_dir))
    assert down.returncode == 0, down.stderr
    assert sorted(json.loads(down.stdout)["stopped"]) == ["etcd", "kube-apiserver"]
    assert not any(_pid_alive(pid) for pid in pids.values())
    assert not state_dir.exists()
    # Down on nothing is a no-op, not an error.
    assert _inv(repo, "cluster.down", "--state-dir", str(state_dir)).returncode == 0


def test_apiserver_restart_keeps_data_and_port(control_plane, kube, unique):
    from kubernetes import client as k

    core = k.CoreV1Api(kube)
    core.create_namespace({"metadata": {"name": f"restart-{unique}"}})
    before = control_plane.processes["kube-apiserver"].pid
    state = cluster.restart_apiserver(Path(control_plane.state_dir), timeout=300)
    assert state.processes["kube-apiserver"].pid != before
    assert not _pid_alive(before)
    core.read_namespace(f"restart-{unique}")  # same etcd data, same port, same certificates

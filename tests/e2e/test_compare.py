"""e2e: `compare` of the example spec, each side on its own fresh kube-apiserver + etcd (docs/compare.md).

Real parts: Debian's etcd, our kube-apiserver build (built_apiserver), the example's compare build (the
spec's plugin and patch plus the tie-break patch, made once through the build cache by the first compare),
the reference extender the example's configuration calls. Sizes are small on purpose (CI budget); the
200-node / 1000-pod run of the issue is the report shown in docs/compare.md.

The check "0 moved" has its negative control in the second test: the same snapshot against a copy whose
UnderlayIPLimit capacity is 1 reports pods newly unschedulable, each naming the plugin.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO
from testkit.stopped import Run, one_line_end

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(3600)]

EXAMPLE = REPO / "examples/underlay/scheduler.yaml"
NEEDS_IP = "underlay.acme.example.com/needs-ip"


def _env(dist: Path) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(REPO), SCHEDULER_BUILD_PATHS_DIST_DIR=str(dist))


def _inv(env: dict[str, str], *argv: str, timeout: float = 3000) -> subprocess.CompletedProcess:
    """The command a user types, `scheduler-build ...`: it reads SCHEDULER_BUILD_* (under `inv` the prefix is
    INVOKE_, so the dist directory above was ignored and the compare build landed in the checkout's dist/)."""
    return subprocess.run([sys.executable, "-m", "scheduler_build", *argv], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("compare-dist")


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory, dist) -> Path:
    out = tmp_path_factory.mktemp("snapshot") / "s.json"
    done = _inv(_env(dist), "snapshot.generate", "--nodes", "40", "--pods", "200", "--pod-label", f"{NEEDS_IP}=true:0.33",
                "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out


def _compare(env: dict[str, str], apiserver: Path, shot: Path, a: Path, b: Path, out: Path) -> dict:
    done = _inv(env, "compare", str(shot), "-a", str(a), "-b", str(b), "--apiserver", str(apiserver),
                "--json", str(out), "--timeout", "300")
    assert done.returncode == 0, done.stderr[-5000:]
    doc = json.loads(out.read_text())
    assert f"moved: {doc['summary']['moved']}" in done.stdout
    return doc


def _side_dirs() -> set[Path]:
    from scheduler_build import settings

    root = settings.cache_dir({}) / "compare"
    return set(root.glob("side-*")) if root.is_dir() else set()


def _processes_under(dirs: set[Path]) -> list[str]:
    """Processes whose command line names one of `dirs`: a side's etcd and kube-apiserver run detached from the
    compare (cluster/processes.py supervises by PID), so they are found by their state directory, not as children."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(str(d) in cmdline for d in dirs):
            found.append(f"{proc.name}: {cmdline[:120]}")
    return found


def test_the_example_against_itself_moves_nothing(built_apiserver, snapshot, dist, tmp_path):
    before = _side_dirs()
    doc = _compare(_env(dist), built_apiserver.binary, snapshot, EXAMPLE, EXAMPLE, tmp_path / "r.json")
    assert doc["summary"] == {"pods": 200, "moved": 0, "newly_unschedulable": 0, "newly_scheduled": 0}, doc["summary"]
    for side in doc["sides"].values():
        assert side["bound"] == 200 and side["unschedulable"] == 0, side
        assert side["scheduler_version"].endswith(".compare") and side["apiserver_version"] == "v1.36.3", side
    assert doc["sides"]["a"]["utilisation"] == doc["sides"]["b"]["utilisation"]
    assert _side_dirs() == before  # each side's directory (certificates, etcd data, logs) is gone
    # The decided dist directory holds the compare build (with `-m invoke` it went to the checkout's dist/).
    assert list(dist.glob("underlay-scheduler-compare/v1.36.3/linux-*/kube-scheduler")), sorted(dist.rglob("*"))


def _capacity_one(tmp_path: Path) -> Path:
    spec = yaml.safe_load(EXAMPLE.read_text())
    spec["plugins"][0]["path"] = str(EXAMPLE.parent / "plugin")
    spec["patches"] = [str((EXAMPLE.parent / p).resolve()) for p in spec["patches"]]
    for entry in spec["profiles"][0]["pluginConfig"]:
        if entry["name"] == "UnderlayIPLimit":
            entry["args"]["defaultCapacity"] = 1
    out = tmp_path / "capacity-one.yaml"
    out.write_text(yaml.safe_dump(spec, sort_keys=False))
    return out


def test_a_capacity_of_one_makes_opted_in_pods_unschedulable_naming_the_plugin(built_apiserver, snapshot, dist, tmp_path):
    doc = _compare(_env(dist), built_apiserver.binary, snapshot, EXAMPLE, _capacity_one(tmp_path), tmp_path / "r.json")
    shot = json.loads(snapshot.read_text())
    opted_in = {f"snapshot/{p['metadata']['name']}" for p in shot["pods"] if NEEDS_IP in p["metadata"]["labels"]}
    unschedulable = doc["newly_unschedulable"]
    assert len(unschedulable) == len(opted_in) - 40, doc["summary"]  # one underlay IP per node, 40 nodes
    for pod in unschedulable:
        assert pod["pod"] in opted_in and "UnderlayIPLimit" in pod["plugins"], pod
    assert doc["newly_scheduled"] == [] and doc["sides"]["b"]["unschedulable"] == len(unschedulable)


def test_a_snapshot_taken_from_a_cluster_up_cluster_replays(built_apiserver, dist, tmp_path):
    from scheduler_build import settings
    from scheduler_build.cluster import controlplane
    from testkit import kubeobjects as kobj

    state = controlplane.up(built_apiserver.binary, tmp_path / "cluster", etcd=settings.default("cluster.etcd"),
                            timeout=300)
    try:
        kube = kobj.api_client(state.admin_kubeconfig)
        from kubernetes import client as k

        for i in range(3):
            k.CoreV1Api(kube).create_node(kobj.node_body(f"n{i}", cpu=str(4 + 4 * i), labels={"disk": "ssd"}))
        kobj.ensure_namespace(kube, "shop")
        for i in range(6):  # nobody schedules them here: pending, as a cluster's backlog would be
            body = kobj.pod_body(f"web-{i}", "no-such-scheduler", labels={"app": "web"}, cpu="1", memory="1Gi")
            body["spec"]["nodeSelector"] = {"disk": "ssd"}
            body["spec"]["containers"][0]["env"] = [{"name": "TOKEN", "value": "hunter2"}]
            kobj.create_pods(kube, "shop", [body], workers=1)
        out = tmp_path / "taken.json"
        done = _inv(_env(dist), "snapshot.take", "--kubeconfig", state.admin_kubeconfig, "--out", str(out))
        assert done.returncode == 0, done.stderr
    finally:
        controlplane.down(tmp_path / "cluster")
    taken = json.loads(out.read_text())
    assert [p["metadata"]["name"] for p in taken["pods"]] == [f"web-{i}" for i in range(6)]
    assert "hunter2" not in out.read_text() and len(taken["nodes"]) == 3
    doc = _compare(_env(dist), built_apiserver.binary, out, EXAMPLE, EXAMPLE, tmp_path / "r.json")
    assert doc["summary"] == {"pods": 6, "moved": 0, "newly_unschedulable": 0, "newly_scheduled": 0}
    assert doc["sides"]["a"]["bound"] == 6


def test_a_sigterm_mid_run_leaves_nothing(built_apiserver, snapshot, dist):
    before = _side_dirs()
    run = Run(["-m", "scheduler_build", "compare", str(snapshot), "-a", str(EXAMPLE), "-b", str(EXAMPLE), "--apiserver",
               str(built_apiserver.binary), "--timeout", "300"], REPO, env={"SCHEDULER_BUILD_PATHS_DIST_DIR": str(dist)})
    try:
        # Side a's etcd and kube-apiserver (found by their state directory) and its kube-scheduler (the build's
        # own probe of the binary runs before any side starts, so the scheduler alone does not say it).
        run.wait_until("side a's control plane and kube-scheduler running",
                       lambda: len(_processes_under(_side_dirs() - before)) >= 2 and run.running("kube-scheduler"),
                       timeout=1800)
        sides = _side_dirs() - before
        run.stop(signal.SIGTERM)
        assert run.proc.returncode == 143, run.stderr()[-3000:]
        one_line_end(run.stderr())
        assert run.leftovers() == []
        assert _processes_under(sides) == []
        assert _side_dirs() == before
    finally:
        run.close()

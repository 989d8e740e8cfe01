"""Faults around the reference extender: killed mid-run (ignorable false / true), API server restarted.

Real processes and SIGKILL; the extender comes back on the same port, as a restarted Pod
behind a Service would.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler_build.cluster import controlplane as cluster
from scheduler_build.cluster import processes
from scheduler_build.config import schedulerconfig
from testkit import extender_process
from testkit import e2e
from testkit import kubeobjects as kobj

from . import quota

pytestmark = pytest.mark.timeout(900)

CAPACITY_LABEL = "underlay.example.com/capacity"
POD_LABEL = {"underlay.example.com/ip": "true"}
TIMEOUT = 240


@pytest.fixture
def extender(control_plane, tmp_path, unique):
    run = extender_process.start_extender(tmp_path, control_plane.admin_kubeconfig, f"extender-{unique}")
    yield run
    run.stop()
    assert not processes.alive(run.record)


def _start(control_plane, schedulers, extender, name, ignorable):
    entry = schedulerconfig.extender_entry(extender.url, node_cache_capable=True, ignorable=ignorable)
    return schedulers(e2e.scheduler_config(name, control_plane.scheduler_kubeconfig, extenders=[entry]),
                      extra_args=e2e.EXTENDER_RETRY_ARGS)


def test_extender_killed_not_ignorable_pods_wait_then_all_schedule(control_plane, kube, namespace, nodes, schedulers,
                                                                   extender, unique):
    ours = f"sb-extkill-{unique}"
    quota.make_nodes(nodes, f"extkill-{unique}", CAPACITY_LABEL, capacities=(10, 10, 10))
    _start(control_plane, schedulers, extender, ours, ignorable=False)
    kobj.create_pods(kube, namespace, quota.pod_bodies(ours, POD_LABEL, 3, prefix="before"))
    kobj.wait_bound(kube, namespace, 3, TIMEOUT)

    extender.kill()
    during = [b["metadata"]["name"] for b in quota.pod_bodies(ours, POD_LABEL, 4, prefix="during")]
    kobj.create_pods(kube, namespace, quota.pod_bodies(ours, POD_LABEL, 4, prefix="during"))

    def failed_while_down():
        seen = {ev.involved_object.name for ev in kobj.events_for(kube, namespace, "FailedScheduling")
                if ev.reporting_component == ours and f"{extender.url}/filter" in (ev.message or "")}
        return set(during) <= seen

    kobj.wait_until(failed_while_down, TIMEOUT, interval=1.0, what="FailedScheduling naming the extender's filter URL")
    assert quota.pending(kube, namespace) == sorted(during), "a pod was bound while the extender was down"

    extender.restart()
    kobj.wait_bound(kube, namespace, 7, TIMEOUT)  # nothing lost


def test_extender_killed_ignorable_scheduling_goes_on(control_plane, kube, namespace, nodes, schedulers, extender,
                                                      unique):
    ours = f"sb-extign-{unique}"
    quota.make_nodes(nodes, f"extign-{unique}", CAPACITY_LABEL, capacities=(10, 10, 10))
    _start(control_plane, schedulers, extender, ours, ignorable=True)
    kobj.create_pods(kube, namespace, quota.pod_bodies(ours, POD_LABEL, 3, prefix="before"))
    kobj.wait_bound(kube, namespace, 3, TIMEOUT)
    extender.kill()
    kobj.create_pods(kube, namespace, quota.pod_bodies(ours, POD_LABEL, 4, prefix="during"))
    kobj.wait_bound(kube, namespace, 7, TIMEOUT)


def test_apiserver_restart_extender_cache_recovers(control_plane, kube, namespace, nodes, schedulers, extender, unique):
    ours = f"sb-extapi-{unique}"
    quotas = quota.make_nodes(nodes, f"extapi-{unique}", CAPACITY_LABEL, capacities=(1, 1))
    _start(control_plane, schedulers, extender, ours, ignorable=False)
    kobj.create_pods(kube, namespace, quota.pod_bodies(ours, POD_LABEL, 1, prefix="a"))
    kobj.wait_bound(kube, namespace, 1, TIMEOUT)

    cluster.restart_apiserver(Path(control_plane.state_dir), timeout=300, down_seconds=5)
    extender.wait_ready(TIMEOUT)
    # Placed one at a time: the second fills the cluster only if the extender's cache
    # (re-listed or re-watched after the restart) counts the pod bound before it.
    quota._create_one_by_one(kube, namespace, quota.pod_bodies(ours, POD_LABEL, 2, prefix="b"))
    left = quota.pending(kube, namespace)
    assert len(left) == 1, left
    quota.failed_scheduling_for(kube, namespace, left, "no free underlay IP", ours)
    quota.assert_within_quota(kube, namespace, quotas)

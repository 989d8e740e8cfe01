"""Faults with in-tree plugins: scheduler killed (lease takeover, no double binding), API server restarted.

Real processes, real signals: SIGKILL leaves the Lease unreleased, as a crash would.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler_build.cluster import controlplane as cluster
from testkit import e2e
from testkit import kubeobjects as kobj

pytestmark = pytest.mark.timeout(900)

TIMEOUT = 240


def _lease(kube, namespace, name="kube-scheduler"):
    from kubernetes import client as k
    from kubernetes.client.exceptions import ApiException

    try:
        return k.CoordinationV1Api(kube).read_namespaced_lease(name, namespace)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def _acquired(run) -> bool:
    return "successfully acquired lease" in run.log_text().lower()


def _leader(runs):
    """The instance whose log says it acquired the lease."""
    holders = [r for r in runs if r.alive() and _acquired(r)]
    return holders[0] if len(holders) == 1 else None


def _assert_each_pod_bound_once(kube, namespace, runs):
    scheduled = [ev.involved_object.name for ev in kobj.events_for(kube, namespace, "Scheduled")]
    counts = {}
    for ev in kobj.events_for(kube, namespace, "Scheduled"):
        counts[ev.involved_object.name] = counts.get(ev.involved_object.name, 0) + (ev.count or 1)
    assert all(n == 1 for n in counts.values()), {p: n for p, n in counts.items() if n != 1}
    # Every pod is bound. Events are best effort: a scheduler killed right after a binding
    # may never send that pod's Scheduled event, so a missing event is not a missing binding.
    pods = kobj.pods_by_name(kube, namespace)
    assert all(pod.spec.node_name for pod in pods.values()), sorted(n for n, p in pods.items() if not p.spec.node_name)
    assert set(scheduled) <= set(pods)
    for run in runs:
        text = run.log_text()
        # A second binding of a bound pod is refused by the API server with a conflict.
        assert "already assigned to node" not in text and "Operation cannot be fulfilled" not in text, run.name


def test_scheduler_killed_lease_taken_over_no_pod_bound_twice(control_plane, kube, namespace, nodes, schedulers,
                                                               unique):
    ours = f"sb-ha-{unique}"
    nodes([kobj.node_body(f"ha-{unique}-{i}") for i in range(3)])
    config = e2e.scheduler_config(ours, control_plane.scheduler_kubeconfig, leader_elect=True,
                                  lease_namespace=namespace)
    runs = [schedulers(config, name=f"ha{i}") for i in range(2)]
    first = kobj.wait_until(lambda: _leader(runs), TIMEOUT, what="one leader")
    before = kobj.wait_until(lambda: _lease(kube, namespace), TIMEOUT, what="the lease")
    kobj.create_pods(kube, namespace, [kobj.pod_body(f"a{i}", ours) for i in range(15)])
    kobj.wait_bound(kube, namespace, 15, TIMEOUT)

    first.kill()
    # Pods created while nobody leads wait; the standby takes the lease and binds them.
    kobj.create_pods(kube, namespace, [kobj.pod_body(f"b{i}", ours) for i in range(15)])
    standby = next(r for r in runs if r is not first)
    kobj.wait_until(lambda: _acquired(standby), TIMEOUT, what="takeover")
    after = _lease(kube, namespace)
    assert after.spec.holder_identity != before.spec.holder_identity
    assert (after.spec.lease_transitions or 0) > (before.spec.lease_transitions or 0)
    kobj.wait_bound(kube, namespace, 30, TIMEOUT)

    # The killed one restarts as a standby: it must not steal the lease from a live leader.
    restarted = schedulers(config, name="ha0-restarted")
    kobj.create_pods(kube, namespace, [kobj.pod_body(f"c{i}", ours) for i in range(10)])
    kobj.wait_bound(kube, namespace, 40, TIMEOUT)
    assert _lease(kube, namespace).spec.holder_identity == after.spec.holder_identity
    assert not _acquired(restarted)
    _assert_each_pod_bound_once(kube, namespace, runs + [restarted])


def test_apiserver_restart_scheduler_recovers(control_plane, kube, namespace, nodes, schedulers, unique):
    ours = f"sb-apirestart-{unique}"
    nodes([kobj.node_body(f"ar-{unique}-{i}") for i in range(3)])
    run = schedulers(e2e.scheduler_config(ours, control_plane.scheduler_kubeconfig))
    kobj.create_pods(kube, namespace, [kobj.pod_body(f"a{i}", ours) for i in range(5)])
    kobj.wait_bound(kube, namespace, 5, TIMEOUT)

    # The API server is away for a while (the scheduler's watches break and retry).
    cluster.restart_apiserver(Path(control_plane.state_dir), timeout=300, down_seconds=5)
    assert run.alive(), "the scheduler exited while the API server was down"
    kobj.create_pods(kube, namespace, [kobj.pod_body(f"b{i}", ours) for i in range(5)])
    kobj.wait_bound(kube, namespace, 10, TIMEOUT)
    _assert_each_pod_bound_once(kube, namespace, [run])

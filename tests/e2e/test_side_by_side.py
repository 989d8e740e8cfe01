"""Side by side: our scheduler binds only the pods that name it (in-tree plugins only).

Real etcd + kube-apiserver + our kube-scheduler build; Nodes are API objects (no kubelet).
"""

from __future__ import annotations

import pytest

from testkit import e2e
from testkit import kubeobjects as kobj

pytestmark = pytest.mark.timeout(900)

BIND_TIMEOUT = 180  # generous: the machine is shared and noisy


def test_pods_not_naming_our_scheduler_are_left_alone(control_plane, kube, namespace, nodes, schedulers, unique):
    ours = f"sb-side-{unique}"
    node_names = nodes([kobj.node_body(f"side-{unique}-{i}") for i in range(4)])
    schedulers(e2e.scheduler_config(ours, control_plane.scheduler_kubeconfig, leader_elect=True,
                                     lease_namespace=namespace))

    foreign = [kobj.pod_body(f"default-{i}", "default-scheduler") for i in range(3)]
    foreign += [kobj.pod_body(f"other-{i}", "some-other-scheduler") for i in range(3)]
    unnamed = kobj.pod_body("unnamed", "x")
    del unnamed["spec"]["schedulerName"]  # the API server defaults it to default-scheduler
    kobj.create_pods(kube, namespace, foreign + [unnamed])
    mine = [kobj.pod_body(f"mine-{i}", ours) for i in range(6)]
    kobj.create_pods(kube, namespace, mine)
    # A sentinel created after every foreign pod: once it is bound, the scheduler's pod
    # informer has delivered every earlier pod, so "left alone" is a decision, not a race.
    kobj.create_pods(kube, namespace, [kobj.pod_body("mine-sentinel", ours)])

    placed = kobj.wait_bound(kube, namespace, 7, BIND_TIMEOUT)
    pods = kobj.pods_by_name(kube, namespace)
    assert pods["unnamed"].spec.scheduler_name == "default-scheduler"
    assert sorted(placed) == sorted([p["metadata"]["name"] for p in mine] + ["mine-sentinel"])
    assert set(placed.values()) <= set(node_names)
    for name, pod in pods.items():
        if not name.startswith("mine-"):
            assert pod.spec.node_name is None, f"{name} ({pod.spec.scheduler_name}) was bound by someone"
    reported = kobj.wait_events(kube, namespace, "Scheduled", placed, BIND_TIMEOUT)
    assert set(reported) == set(placed)
    assert set(reported.values()) == {ours}
    # Nothing our scheduler emitted concerns the foreign pods (no FailedScheduling either).
    foreign_names = {p["metadata"]["name"] for p in foreign} | {"unnamed"}
    assert not [ev for ev in kobj.events_for(kube, namespace)
                if ev.involved_object.name in foreign_names and ev.reporting_component == ours]


def test_two_of_our_schedulers_split_the_pods_by_name(control_plane, kube, namespace, nodes, schedulers, unique):
    first, second = f"sb-a-{unique}", f"sb-b-{unique}"
    nodes([kobj.node_body(f"split-{unique}-{i}") for i in range(3)])
    for name in (first, second):
        schedulers(e2e.scheduler_config(name, control_plane.scheduler_kubeconfig), name=name)
    bodies = [kobj.pod_body(f"a-{i}", first) for i in range(5)] + [kobj.pod_body(f"b-{i}", second) for i in range(5)]
    kobj.create_pods(kube, namespace, bodies)
    kobj.wait_bound(kube, namespace, 10, BIND_TIMEOUT)
    reported = kobj.wait_events(kube, namespace, "Scheduled", [b["metadata"]["name"] for b in bodies], BIND_TIMEOUT)
    assert len(reported) == 10, reported
    for pod, component in reported.items():
        assert component == (first if pod.startswith("a-") else second), (pod, component)

"""The underlay-quota scenario shared by the plugin and extender e2e tests.

N pods that need an underlay IP on M nodes whose quotas (node labels) sum to less
than N: no node goes over its quota, the pods beyond capacity stay Pending with a
FailedScheduling event carrying the policy's reason, and deleting bound pods lets
Pending ones schedule.
"""

from __future__ import annotations

from collections import Counter

from testkit import kubeobjects as kobj

TIMEOUT = 240
CAPACITIES = (2, 3, 1)  # total 6


def make_nodes(nodes, prefix: str, capacity_label: str, capacities=CAPACITIES) -> dict[str, int]:
    bodies = [kobj.node_body(f"{prefix}-{i}", labels={capacity_label: str(cap)}) for i, cap in enumerate(capacities)]
    names = nodes(bodies)
    return dict(zip(names, capacities))


def pod_bodies(scheduler_name: str, pod_label: dict[str, str], count: int, prefix: str = "q") -> list[dict]:
    return [kobj.pod_body(f"{prefix}{i}", scheduler_name, labels=dict(pod_label)) for i in range(count)]


def usage(kube, namespace) -> Counter:
    return Counter(p.spec.node_name for p in kobj.pods_by_name(kube, namespace).values() if p.spec.node_name)


def assert_within_quota(kube, namespace, quotas: dict[str, int]) -> None:
    used = usage(kube, namespace)
    over = {node: (n, quotas.get(node)) for node, n in used.items() if n > quotas.get(node, 0)}
    assert not over, f"nodes over their underlay quota (used, quota): {over}"


def pending(kube, namespace) -> list[str]:
    return sorted(n for n, p in kobj.pods_by_name(kube, namespace).items() if not p.spec.node_name)


def failed_scheduling_for(kube, namespace, pods: list[str], reason: str, reporter: str):
    """Every given pod has a FailedScheduling event from `reporter` whose message carries `reason`."""
    def check():
        events = [ev for ev in kobj.events_for(kube, namespace, "FailedScheduling")
                  if ev.reporting_component == reporter and reason in (ev.message or "")]
        seen = {ev.involved_object.name for ev in events}
        return events if set(pods) <= seen else None

    return kobj.wait_until(check, TIMEOUT, interval=1.0, what=f"FailedScheduling with {reason!r} for {pods}")


def _create_one_by_one(kube, namespace, bodies):
    """Create pods one at a time, each only once the previous one is bound or reported unschedulable."""
    for body in bodies:
        name = body["metadata"]["name"]
        kobj.create_pods(kube, namespace, [body])

        def settled():
            pod = kobj.pods_by_name(kube, namespace).get(name)
            if pod is not None and pod.spec.node_name:
                return True
            return any(ev.involved_object.name == name for ev in kobj.events_for(kube, namespace, "FailedScheduling"))

        kobj.wait_until(settled, TIMEOUT, interval=0.5, what=f"{name} bound or unschedulable")


def run(kube, namespace, quotas: dict[str, int], scheduler_name: str, pod_label: dict[str, str], reason: str,
        burst: bool = True) -> None:
    """The whole scenario against a scheduler that is already running.

    burst: all pods at once, 3 beyond capacity, then 2 deleted (a quota kept in the scheduler's own
    cycle: a plugin's Reserve, or an extender that binds). Otherwise one pod at a time, 1 beyond
    capacity, then 1 deleted: an extender that does not bind learns where a pod went only from its
    watch, so pods scheduled back to back can oversubscribe a node before it catches up (seen here:
    6 pods on a node of quota 3 from a burst of 9); the paced run checks its policy, not that race.
    """
    total = sum(quotas.values())
    extra = 3 if burst else 1
    count = total + extra
    bodies = pod_bodies(scheduler_name, pod_label, count)
    if burst:
        kobj.create_pods(kube, namespace, bodies)
    else:
        _create_one_by_one(kube, namespace, bodies)
    kobj.wait_bound(kube, namespace, total, TIMEOUT)
    left = pending(kube, namespace)
    assert len(left) == extra, left
    failed_scheduling_for(kube, namespace, left, reason, scheduler_name)
    # Still exactly full after the failures were reported: nothing squeezed in.
    assert len(pending(kube, namespace)) == extra
    assert_within_quota(kube, namespace, quotas)
    assert sum(usage(kube, namespace).values()) == total

    # Free slots on the biggest node: as many Pending pods take them, the rest stay Pending.
    freed = 2 if burst else 1
    biggest = max(quotas, key=quotas.get)
    victims = sorted(n for n, p in kobj.pods_by_name(kube, namespace).items() if p.spec.node_name == biggest)[:freed]
    kobj.force_delete_pods(kube, namespace, victims)
    kobj.wait_until(lambda: len(kobj.pods_by_name(kube, namespace)) == count - freed
                   and len(pending(kube, namespace)) == extra - freed,
                   TIMEOUT, interval=1.0, what=f"{freed} Pending pods scheduled after the deletions")
    assert_within_quota(kube, namespace, quotas)
    assert usage(kube, namespace)[biggest] == quotas[biggest]

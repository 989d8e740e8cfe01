"""Placement policies behind a small interface, and the bundled underlay-IP quota.

A policy decides with three inputs: the pod, the candidate nodes (their labels)
and a per-node usage figure that the cache maintains by summing `pod_usage()`
over the pods bound to each node (plus the pods this extender has just bound and
the watch has not confirmed yet). Everything else (decoding, the cache, HTTP,
metrics) is shared, so a new policy is one class registered in POLICIES.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Mapping, Sequence

from scheduler_build.extender.protocol import NodeView, PodView

class Unresolvable(str):
    """A filter reason preemption cannot fix: reported in FailedAndUnresolvableNodes."""


MAX_SCORE = 10  # extender/v1 MaxExtenderPriority; kube-scheduler does not clamp


class Policy(ABC):
    """One placement rule. Implementations must be cheap per node: they run on
    every filter and prioritize call, over up to thousands of nodes.

    `usage.get(node_name, 0)` is the summed pod_usage() of the pods on that node (0 for
    a node without any), assumed pods included."""

    name: str = ""

    def pod_usage(self, pod: PodView) -> int:
        """How much of the policy's per-node resource this pod holds once bound.

        Called for every pod the watch sees (and for pods the extender binds);
        the cache sums it per node for bound, non-terminated pods.
        """
        return 0

    def wants(self, pod: PodView) -> bool:
        """Whether the policy has an opinion on this pod; others pass every node."""
        return True

    def decision_key(self, pod: PodView) -> object | None:
        """A hashable such that pods with equal keys get the same filter and
        prioritize answers on the same cluster state, or None (the default) if
        there is none. With a key, NodeNames-mode answers are computed once per
        key for every cached node and reused until the cache changes."""
        return None

    @abstractmethod
    def filter(self, pod: PodView, nodes: Sequence[NodeView], usage: Mapping[str, int]) -> dict[str, str]:
        """Return {node name: reason} for the nodes the pod must not go to."""

    @abstractmethod
    def prioritize(self, pod: PodView, nodes: Sequence[NodeView], usage: Mapping[str, int]) -> list[tuple[str, int]]:
        """Return (node name, score 0..10) for every node, in the given order."""

    def preempt(self, pod: PodView, node: NodeView | None, usage_after: int) -> bool:
        """Whether the node fits the pod once the proposed victims are gone."""
        return True

    def refuses_bind(self, node: NodeView | None, used: int, usage: int) -> str | None:
        """Why a pod of `usage` may no longer go to `node` (None: it may), checked at bind.

        kube-scheduler filters the next pod while the previous one is still binding,
        so two pods can pass Filter for the last slot of a node; the bind verb is
        the one place where the extender sees decisions in order."""
        return None


class UnderlayIPPolicy(Policy):
    """Per-node quota of underlay IPs (the example plugin's semantics, kept identical).

    - A node's capacity is the integer in its label `underlay.example.com/capacity`,
      10 when the label is absent. A label that is not a non-negative integer makes
      the node fail Filter (with the bad value in the reason) and score 0.
    - A pod opts in with the label `underlay.example.com/ip` = "true" (exactly).
    - Usage of a node = opted-in pods with spec.nodeName = that node whose phase is
      not Succeeded or Failed, plus pods this extender bound and the watch has not
      yet confirmed.
    - Filter: an opted-in pod fails nodes with used >= capacity, reason
      "node N has no free underlay IP (U/C used)". Pods that do not opt in pass.
    - Prioritize: score = floor(10 * free / capacity) with free = max(capacity - used, 0);
      0 when capacity is 0. Pods that do not opt in get 0 everywhere (no preference).
    - Preempt: a node stays a candidate when, after its victims are gone, the
      opted-in preemptor would find a free IP.
    """

    name = "underlay-ip"
    CAPACITY_LABEL = "underlay.example.com/capacity"
    POD_LABEL = "underlay.example.com/ip"
    DEFAULT_CAPACITY = 10

    def pod_usage(self, pod: PodView) -> int:
        return 1 if pod.labels.get(self.POD_LABEL) == "true" else 0

    def wants(self, pod: PodView) -> bool:
        return pod.labels.get(self.POD_LABEL) == "true"

    def decision_key(self, pod: PodView) -> object | None:
        return self.wants(pod)  # nothing else about the pod matters

    def capacity(self, labels: Mapping[str, str]) -> int | None:
        """The node's quota, or None when the label is not a non-negative integer."""
        raw = labels.get(self.CAPACITY_LABEL)
        if raw is None:
            return self.DEFAULT_CAPACITY
        # int() would accept " 7", "+7" and "7_0"; Go's strconv.Atoi does not.
        if not raw.isascii() or not raw.isdigit():
            return None
        value = int(raw)
        return value if value < 2**63 else None  # strconv.ParseInt(raw, 10, 64) overflows

    def _capacities(self) -> dict[str | None, int | None]:
        # Memo of label value -> capacity for one call: clusters use few distinct values.
        return {None: self.DEFAULT_CAPACITY}

    def filter(self, pod, nodes, usage):
        failed: dict[str, str] = {}
        if not self.wants(pod):
            return failed
        label = self.CAPACITY_LABEL
        caps = self._capacities()
        used_of = usage.get
        for node in nodes:
            raw = node.labels.get(label)
            try:
                cap = caps[raw]
            except KeyError:
                cap = caps[raw] = self.capacity(node.labels)
            name = node.name
            if cap is None:
                failed[name] = Unresolvable(f"node {name} has an invalid {label} label {raw!r}")
                continue
            used = used_of(name, 0)
            if used >= cap:
                failed[name] = f"node {name} has no free underlay IP ({used}/{cap} used)"
        return failed

    def prioritize(self, pod, nodes, usage):
        if not self.wants(pod):
            return [(node.name, 0) for node in nodes]
        label = self.CAPACITY_LABEL
        caps = self._capacities()
        used_of = usage.get
        out = []
        append = out.append
        for node in nodes:
            raw = node.labels.get(label)
            try:
                cap = caps[raw]
            except KeyError:
                cap = caps[raw] = self.capacity(node.labels)
            name = node.name
            if not cap:
                append((name, 0))
                continue
            free = cap - used_of(name, 0)
            append((name, MAX_SCORE * free // cap if free > 0 else 0))
        return out

    def preempt(self, pod, node, usage_after):
        if not self.wants(pod):
            return True
        if node is None:
            return False
        cap = self.capacity(node.labels)
        return cap is not None and usage_after < cap

    def refuses_bind(self, node, used, usage):
        if usage <= 0 or node is None:
            return None  # a node the cache has not seen yet: Filter already judged it
        cap = self.capacity(node.labels)
        if cap is None:
            return f"node {node.name} has an invalid {self.CAPACITY_LABEL} label {node.labels.get(self.CAPACITY_LABEL)!r}"
        if used + usage > cap:
            return f"node {node.name} has no free underlay IP ({used}/{cap} used)"
        return None


POLICIES: dict[str, type[Policy]] = {UnderlayIPPolicy.name: UnderlayIPPolicy}


def get_policy(name: str) -> Policy:
    """Instantiate a registered policy, or raise KeyError naming the known ones."""
    try:
        return POLICIES[name]()
    except KeyError:
        raise KeyError(f"unknown policy {name!r}; known: {', '.join(sorted(POLICIES))}") from None

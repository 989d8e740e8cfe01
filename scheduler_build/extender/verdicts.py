"""NodeNames answers from the policy's cluster-wide verdicts, in C-speed passes.

With `nodeCacheCapable` kube-scheduler sends only node names, up to every node
of the cluster (5000 in bench.extender). The policy's verdict for every cached
node is computed once per cache generation (Extender._cluster_wide); what is
left per request is matching the request's names against it. Done name by name
in Python that was ~3 ms of a 5000-name filter (three comprehensions and an
isinstance per rejected node), the largest part of the request and so of its
exposure to GC pauses and preemption on a busy machine. Here the per-name work
runs in C: set operations, `map` over dict methods, `itertools.filterfalse`,
and Python code only touches the (few) rejected or unknown names.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import filterfalse, repeat
from typing import Collection, Mapping

from scheduler_build.extender import protocol
from scheduler_build.extender.policy import Unresolvable


@dataclass(frozen=True)
class FilterVerdicts:
    """The policy's filter verdicts for every cached node, split as the reply needs them."""

    failed: dict[str, str]
    unresolvable: dict[str, str]

    @classmethod
    def of(cls, verdicts: Mapping[str, str]) -> "FilterVerdicts":
        failed: dict[str, str] = {}
        unresolvable: dict[str, str] = {}
        for name, reason in verdicts.items():
            (unresolvable if isinstance(reason, Unresolvable) else failed)[name] = str(reason)
        return cls(failed, unresolvable)


@dataclass
class FilterAnswer:
    passed: list[str]
    failed: dict[str, str]
    unresolvable: dict[str, str]


def _restrict(verdicts: dict[str, str], names: set[str]) -> dict[str, str]:
    """The verdicts for the requested names only; the shared dict itself when all are requested."""
    if verdicts.keys() <= names:
        return verdicts
    return {name: reason for name, reason in verdicts.items() if name in names}


def filter_answer(verdicts: FilterVerdicts, names: list[str], known: Collection[str]) -> FilterAnswer:
    """Passed names (request order, as before), failed and unresolvable ones (unknown names included)."""
    requested = set(names)
    failed = _restrict(verdicts.failed, requested)
    unresolvable = _restrict(verdicts.unresolvable, requested)
    unknown = requested.difference(known)  # a dict: set.difference looks names up, never copies it
    if unknown:
        unresolvable = dict(unresolvable)
        for name in names:
            if name in unknown and name not in unresolvable:
                unresolvable[name] = f"node {name} is not in the extender's node cache"
    if not failed and not unresolvable:
        return FilterAnswer(names, failed, unresolvable)
    rejected = failed.keys() | unresolvable.keys()
    return FilterAnswer(list(filterfalse(rejected.__contains__, names)), failed, unresolvable)


def scores_answer(scores: Mapping[str, int], names: list[str]) -> list[protocol.HostPriority]:
    """HostPriority for every requested name in order (already clamped); unknown names score 0."""
    return list(map(protocol.HostPriority, names, map(scores.get, names, repeat(0))))

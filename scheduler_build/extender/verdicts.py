"""NodeNames answers from the policy's cluster-wide verdicts, in C-speed passes.

With `nodeCacheCapable` kube-scheduler sends only node names, up to every node
of the cluster (5000 in bench.extender). The policy's verdict for every cached
node is kept by VerdictMemo (below); what is left per request is matching the
request's names against it. Done name by name
in Python that was ~3 ms of a 5000-name filter (three comprehensions and an
isinstance per rejected node), the largest part of the request and so of its
exposure to GC pauses and preemption on a busy machine. Here the per-name work
runs in C: set operations, `map` over dict methods, `itertools.filterfalse`,
and Python code only touches the (few) rejected or unknown names.

VerdictMemo keeps those verdicts current. Every bind is a pod event that moves
one node's usage; at 5000 nodes recomputing all of them per change cost 15 to
20 ms, and judging each request's ~500 names afresh ~0.5 ms per request, the
largest part of the extender's handling time (`inv bench.e2e --trace`,
BENCHMARKS.md issue 15). Instead the cache journals which nodes each change
touched (ClusterCache.changed_since) and only those are judged again.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import filterfalse, repeat
from typing import Any, Collection, Mapping

from scheduler_build.extender import protocol
from scheduler_build.extender.cache import ClusterCache, Usage
from scheduler_build.extender.policy import Policy, Unresolvable

MEMO_KEYS = 64  # (verb, decision key) pairs kept; all are dropped past this


@dataclass(frozen=True)
class FilterVerdicts:
    """The policy's filter verdicts for every cached node, split as the reply needs them.

    Frozen, but the two dicts are patched in place by VerdictMemo under the cache lock;
    an answer sharing them (filter_answer) is encoded before the lock is released."""

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


def clamp_score(score: float) -> int:
    """A policy's score clamped to 0..10: kube-scheduler does not clamp, and 0..10 is the contract."""
    return 0 if score < 0 else 10 if score > 10 else int(score)


def clamp(scored) -> dict[str, int]:
    """{name: score} with every score clamped (clamp_score)."""
    return {name: clamp_score(score) for name, score in scored}


class VerdictMemo:
    """The policy's verdict for every cached node, per (verb, decision key), kept current.

    A node's verdict depends only on the pod's decision key, the node and its
    usage (the same premise that lets a cluster-wide verdict answer a request
    for some of the nodes), so after a cache change only the nodes it touched
    are judged again. Callers hold the cache lock, and encode answers that share the
    verdicts' dicts before releasing it.
    """

    def __init__(self, policy: Policy, cache: ClusterCache):
        self.policy, self.cache = policy, cache
        self._memo: dict[tuple[str, object], tuple[int, Any]] = {}
        self._asked: set[tuple[str, object]] = set()

    def get(self, verb: str, pod: protocol.PodView, requested: int) -> Any:
        """FilterVerdicts (filter) or clamped scores (prioritize) for every cached node, or
        None: the policy has no key, or building them once would cost more than judging
        the request's own nodes (a small request for a key asked about only once)."""
        key = self.policy.decision_key(pod)
        if key is None:
            return None
        generation = self.cache.generation
        hit = self._memo.get((verb, key))
        if hit is not None:
            if hit[0] == generation:
                return hit[1]
            changed = self.cache.changed_since(hit[0])
            if changed is not None and len(changed) <= max(requested, 16):
                self._patch(verb, pod, hit[1], changed)
                self._memo[(verb, key)] = (generation, hit[1])
                return hit[1]
        if 2 * requested < len(self.cache.nodes) and (verb, key) not in self._asked:
            self._asked.add((verb, key))  # a second request with this key builds them
            return None
        return self._build(verb, key, pod, generation)

    def _build(self, verb: str, key: object, pod: protocol.PodView, generation: int) -> Any:
        nodes = list(self.cache.nodes.values())
        usage = self.cache.usage_map()
        if verb == "filter":
            result: Any = FilterVerdicts.of(self.policy.filter(pod, nodes, usage))
        else:
            result = clamp(self.policy.prioritize(pod, nodes, usage))
        if len(self._memo) >= MEMO_KEYS:
            self._memo.clear()
            self._asked.clear()
        self._memo[(verb, key)] = (generation, result)
        return result

    def _patch(self, verb: str, pod: protocol.PodView, result: Any, changed: set[str]) -> None:
        """Judge the changed nodes again, in place (a node no longer cached is dropped)."""
        known = self.cache.nodes
        nodes = [known[name] for name in changed if name in known]
        usage = Usage({node.name: self.cache.usage(node.name) for node in nodes})
        if verb == "filter":
            for name in changed:
                result.failed.pop(name, None)
                result.unresolvable.pop(name, None)
            fresh = FilterVerdicts.of(self.policy.filter(pod, nodes, usage))
            result.failed.update(fresh.failed)
            result.unresolvable.update(fresh.unresolvable)
        else:
            for name in changed:
                result.pop(name, None)
            result.update(clamp(self.policy.prioritize(pod, nodes, usage)))

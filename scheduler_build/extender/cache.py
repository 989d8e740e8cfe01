"""In-memory node and pod state: ClusterCache, with no I/O.

Nodes by name, bound pods by UID with the policy's usage figure, per-node usage
sums, and "assumed" pods the extender bound itself that the watch has not
confirmed yet. Reflector threads (reflector.py) fill it from list + watch;
kube.py loads the API client they use.

The extender's request handlers read the state under the same lock the
reflectors write under; a filter call over 5000 nodes holds it for about a
millisecond, and watch events are rare by comparison.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from scheduler_build.extender.protocol import NodeView, PodView, ProtocolError, node_view, pod_view

log = logging.getLogger("scheduler_build.extender.cache")

TERMINATED = frozenset(("Succeeded", "Failed"))
JOURNAL = 4096  # node changes kept for changed_since (twice this before trimming)


class Usage(dict):
    """Per-node usage; a node nobody uses reads as 0."""

    def __missing__(self, key: str) -> int:
        return 0


@dataclass
class _Pod:
    node: str  # "" while pending
    usage: int  # the policy's figure, counted only while bound and not terminated
    counted: bool


class ClusterCache:
    """Nodes and pods as the extender needs them. Thread-safe."""

    def __init__(self, pod_usage: Callable[[PodView], int], assume_ttl: float = 30.0,
                 clock: Callable[[], float] = time.monotonic):
        self.lock = threading.RLock()
        self._pod_usage = pod_usage
        self.assume_ttl = assume_ttl
        self._clock = clock
        self.nodes: dict[str, NodeView] = {}
        self.pods: dict[str, _Pod] = {}
        self.used: Usage = Usage()
        self.assumed: dict[str, tuple[str, int, float]] = {}  # uid -> (node, usage, expiry)
        self._assumed_used: dict[str, int] = {}
        self._synced = {"nodes": threading.Event(), "pods": threading.Event()}
        self.resource_versions: dict[str, str] = {}
        # Bumped on every change a decision could depend on (nodes, pods, assumed
        # pods): lets the extender reuse a cluster-wide verdict until it moves.
        self.generation = 0
        # (generation, node name) for every change to a node or its usage, oldest first;
        # changed_since() can answer for any generation >= _journal_floor.
        self._journal: list[tuple[int, str]] = []
        self._journal_floor = 0

    # -- readiness -------------------------------------------------------
    @property
    def synced(self) -> bool:
        return all(event.is_set() for event in self._synced.values())

    def wait_synced(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        for event in self._synced.values():
            if not event.wait(max(0.0, deadline - time.monotonic())):
                return False
        return True

    def mark_synced(self, kind: str) -> None:
        self._synced[kind].set()

    # -- reads (callers hold self.lock for a consistent decision) ------
    def usage(self, node: str) -> int:
        return self.used.get(node, 0) + self._assumed_used.get(node, 0)

    def usage_map(self) -> Usage:
        """Usage of every node (bound + assumed pods) as a mapping, for one decision.

        Without assumed pods this is the live dict (read under the lock); with
        some, a merged copy, which costs ~0.1 ms for thousands of nodes."""
        if not self._assumed_used:
            return self.used
        merged = Usage(self.used)
        for node, count in self._assumed_used.items():
            merged[node] = merged.get(node, 0) + count
        return merged

    def usage_after_evicting(self, node: str, uids: Iterable[str]) -> int:
        freed = 0
        for uid in uids:
            pod = self.pods.get(uid)
            if pod is not None and pod.counted and pod.node == node:
                freed += pod.usage
            else:
                entry = self.assumed.get(uid)
                if entry is not None and entry[0] == node:
                    freed += entry[1]
        return self.usage(node) - freed

    def changed_since(self, generation: int) -> set[str] | None:
        """Names of the nodes whose labels or usage changed after `generation`
        (None: unknown, e.g. after a full list; treat every node as changed)."""
        if generation < self._journal_floor:
            return None
        journal = self._journal
        out = set()
        for i in range(len(journal) - 1, -1, -1):
            gen, name = journal[i]
            if gen <= generation:
                break
            out.add(name)
        return out

    def _touch(self, node: str) -> None:
        journal = self._journal
        journal.append((self.generation, node))
        if len(journal) > 2 * JOURNAL:
            del journal[:JOURNAL]
            self._journal_floor = journal[0][0]

    def pod_node(self, uid: str) -> str | None:
        pod = self.pods.get(uid)
        if pod is not None and pod.node:
            return pod.node
        entry = self.assumed.get(uid)
        return entry[0] if entry else None

    def pod_usage_of(self, uid: str) -> int | None:
        pod = self.pods.get(uid)
        return pod.usage if pod is not None else None

    def expire_assumed(self) -> None:
        """Forget assumed pods whose time is up (the bind may have failed later)."""
        if not self.assumed:
            return
        now = self._clock()
        with self.lock:
            for uid, (node, usage, expiry) in list(self.assumed.items()):
                if expiry <= now:
                    log.info("assumed pod %s on %s expired unconfirmed", uid, node)
                    self._drop_assumed(uid)

    # -- assumed pods ----------------------------------------------------
    def assume(self, uid: str, node: str, usage: int) -> None:
        with self.lock:
            self._drop_assumed(uid)
            pod = self.pods.get(uid)
            if pod is not None and pod.counted:
                return  # the watch was faster: already counted
            self.assumed[uid] = (node, usage, self._clock() + self.assume_ttl)
            self.generation += 1
            self._touch(node)
            self._assumed_used[node] = self._assumed_used.get(node, 0) + usage

    def assume_unless(self, uid: str, node: str, usage: int,
                      refuses: Callable[[NodeView | None, int], str | None]) -> str | None:
        """assume(), unless `refuses(node view, usage of the node)` gives a reason, returned.

        Check and count under one lock, so two binds racing for a node's last
        slot cannot both pass."""
        with self.lock:
            self._drop_assumed(uid)
            pod = self.pods.get(uid)
            if pod is not None and pod.counted:
                return None  # the watch was faster: already counted, nothing to decide
            reason = refuses(self.nodes.get(node), self.usage(node))
            if reason is None:
                self.assume(uid, node, usage)
            return reason

    def forget(self, uid: str) -> None:
        with self.lock:
            self._drop_assumed(uid)

    def _drop_assumed(self, uid: str) -> None:
        entry = self.assumed.pop(uid, None)
        if entry is not None:
            self.generation += 1
            node, usage, _ = entry
            self._touch(node)
            left = self._assumed_used.get(node, 0) - usage
            if left:
                self._assumed_used[node] = left
            else:
                self._assumed_used.pop(node, None)

    # -- writes from the reflectors --------------------------------------
    def replace(self, kind: str, items: list[Any], resource_version: str) -> None:
        with self.lock:
            self.generation += 1
            if kind == "nodes":
                self.nodes = {}
                for raw in items:
                    self._set_node(raw)
            else:
                for uid in list(self.pods):
                    self._remove_pod(uid)
                self.pods, self.used = {}, Usage()
                for raw in items:
                    self._set_pod(raw)
            self.resource_versions[kind] = resource_version
            self._journal, self._journal_floor = [], self.generation  # everything may have changed

    def apply(self, kind: str, event_type: str, raw: Any) -> None:
        with self.lock:
            self.generation += 1
            if kind == "nodes":
                if event_type == "DELETED":
                    name = _name(raw)
                    self.nodes.pop(name, None)
                    self._touch(name)
                else:
                    self._set_node(raw)
            elif event_type == "DELETED":
                uid = _uid(raw)
                self._remove_pod(uid)
                self._drop_assumed(uid)
            else:
                self._set_pod(raw)

    def _set_node(self, raw: Any) -> None:
        try:
            view = node_view(raw, "node")
        except ProtocolError as exc:
            log.warning("ignoring a node the API sent: %s", exc)
            return
        if view.name:
            self.nodes[view.name] = view
            self._touch(view.name)

    def _set_pod(self, raw: Any) -> None:
        try:
            view = pod_view(raw, "pod")
        except ProtocolError as exc:
            log.warning("ignoring a pod the API sent: %s", exc)
            return
        if not view.uid:
            return
        self._remove_pod(view.uid)
        usage = self._pod_usage(view)
        counted = bool(view.node_name) and view.phase not in TERMINATED
        self.pods[view.uid] = _Pod(node=view.node_name, usage=usage, counted=counted)
        if counted:
            if usage:
                self.used[view.node_name] = self.used.get(view.node_name, 0) + usage
                self._touch(view.node_name)
            # The watch confirms the bind: the real count replaces the assumption.
            self._drop_assumed(view.uid)

    def _remove_pod(self, uid: str) -> None:
        pod = self.pods.pop(uid, None)
        if pod is not None and pod.counted and pod.usage:
            self._touch(pod.node)
            left = self.used.get(pod.node, 0) - pod.usage
            if left:
                self.used[pod.node] = left
            else:
                self.used.pop(pod.node, None)


def object_meta(raw: Any) -> dict:
    """metadata of a raw API object, {} when missing or malformed."""
    meta = raw.get("metadata") if isinstance(raw, dict) else None
    return meta if isinstance(meta, dict) else {}


def _name(raw: Any) -> str:
    return str(object_meta(raw).get("name") or "")


def _uid(raw: Any) -> str:
    return str(object_meta(raw).get("uid") or "")

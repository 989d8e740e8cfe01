"""In-memory node and pod state fed by list + watch through the kubernetes client.

ClusterCache is the state (no I/O): nodes by name, bound pods by UID with the
policy's usage figure, per-node usage sums, and "assumed" pods the extender bound
itself that the watch has not confirmed yet. Reflector threads fill it: list (and
remember the list's resourceVersion), then watch from there; a 410 Gone (as an
HTTP status or an ERROR event) triggers a fresh list, other failures reconnect
with capped exponential backoff from the last resourceVersion seen.

The extender's request handlers read the state under the same lock the
reflectors write under; a filter call over 5000 nodes holds it for about a
millisecond, and watch events are rare by comparison.
"""

from __future__ import annotations

import logging
import random
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import msgspec

from scheduler_build.extender.protocol import NodeView, PodView, ProtocolError, node_view, pod_view

log = logging.getLogger("scheduler_build.extender.cache")

TERMINATED = frozenset(("Succeeded", "Failed"))


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
            self._assumed_used[node] = self._assumed_used.get(node, 0) + usage

    def forget(self, uid: str) -> None:
        with self.lock:
            self._drop_assumed(uid)

    def _drop_assumed(self, uid: str) -> None:
        entry = self.assumed.pop(uid, None)
        if entry is not None:
            self.generation += 1
            node, usage, _ = entry
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

    def apply(self, kind: str, event_type: str, raw: Any) -> None:
        with self.lock:
            self.generation += 1
            if kind == "nodes":
                if event_type == "DELETED":
                    name = _name(raw)
                    self.nodes.pop(name, None)
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
            # The watch confirms the bind: the real count replaces the assumption.
            self._drop_assumed(view.uid)

    def _remove_pod(self, uid: str) -> None:
        pod = self.pods.pop(uid, None)
        if pod is not None and pod.counted and pod.usage:
            left = self.used.get(pod.node, 0) - pod.usage
            if left:
                self.used[pod.node] = left
            else:
                self.used.pop(pod.node, None)


def _meta(raw: Any) -> dict:
    meta = raw.get("metadata") if isinstance(raw, dict) else None
    return meta if isinstance(meta, dict) else {}


def _name(raw: Any) -> str:
    return str(_meta(raw).get("name") or "")


def _uid(raw: Any) -> str:
    return str(_meta(raw).get("uid") or "")


class Gone(Exception):
    """The resourceVersion is too old: list again."""


class Backoff:
    """Capped exponential backoff with jitter, reset after a healthy watch."""

    def __init__(self, base: float = 0.2, cap: float = 30.0):
        self.base, self.cap, self.attempt = base, cap, 0

    def next(self) -> float:
        delay = min(self.cap, self.base * (2 ** self.attempt))
        self.attempt += 1
        return delay * (0.5 + random.random() / 2)

    def reset(self) -> None:
        self.attempt = 0


class Reflector:
    """List + watch one resource kind into the cache, in a daemon thread.

    It calls the kubernetes client's generated list functions
    (CoreV1Api.list_node / list_pod_for_all_namespaces) with
    `_preload_content=False` and decodes the bytes with msgspec: the client's own
    model deserialisation costs seconds for thousands of objects, and its
    `Watch.stream(deserialize=False)` cannot report a 410 ERROR event (it looks
    up a key only the deserialising path sets), so the watch lines are read here.
    """

    def __init__(self, cache: ClusterCache, kind: str, list_func: Callable[..., Any],
                 watch_timeout: int = 300, request_timeout: float = 10.0,
                 backoff: Backoff | None = None):
        self.cache, self.kind, self.list_func = cache, kind, list_func
        self.watch_timeout = watch_timeout
        self.request_timeout = request_timeout
        self.backoff = backoff or Backoff()
        self._stop = threading.Event()
        self._resp: Any = None
        self.lists = 0  # how many full lists ran (a re-list after 410 adds one)
        self.thread = threading.Thread(target=self._run, name=f"reflector-{kind}", daemon=True)

    def start(self) -> "Reflector":
        self.thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        resp = self._resp
        if resp is not None:
            # Unblock a read in progress: closing the socket ends the stream loop.
            try:
                sock = getattr(getattr(resp, "connection", None), "sock", None)
                if sock is not None:
                    sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def join(self, timeout: float | None = None) -> None:
        self.thread.join(timeout)

    def _run(self) -> None:
        rv: str | None = None
        while not self._stop.is_set():
            try:
                if rv is None:
                    rv = self._list()
                    self.cache.mark_synced(self.kind)
                rv = self._watch(rv)
                self.backoff.reset()
            except Gone:
                log.info("%s: resourceVersion %s is gone, listing again", self.kind, rv)
                rv = None
            except Exception as exc:  # network, API errors: keep the state, retry
                if self._stop.is_set():
                    break
                delay = self.backoff.next()
                log.warning("%s: list/watch failed (%s); retrying in %.1fs", self.kind, _brief(exc), delay)
                self._stop.wait(delay)

    def _list(self) -> str:
        resp = self.list_func(_preload_content=False, _request_timeout=self.request_timeout * 6)
        try:
            body = msgspec.json.decode(resp.data)
        finally:
            resp.release_conn()
        items = body.get("items") or []
        rv = str((body.get("metadata") or {}).get("resourceVersion") or "")
        self.cache.replace(self.kind, items, rv)
        self.lists += 1
        log.info("%s: listed %d at resourceVersion %s", self.kind, len(items), rv)
        return rv

    def _watch(self, rv: str) -> str:
        from kubernetes.client.rest import ApiException
        from kubernetes.watch.watch import iter_resp_lines

        try:
            resp = self.list_func(
                watch=True, resource_version=rv, allow_watch_bookmarks=True,
                timeout_seconds=self.watch_timeout, _preload_content=False,
                # A read timeout past the server's own watch timeout catches a dead peer.
                _request_timeout=(self.request_timeout, self.watch_timeout + 30),
            )
        except ApiException as exc:
            if exc.status == 410:
                raise Gone() from None
            raise
        self._resp = resp
        try:
            if self._stop.is_set():  # stop() ran while we were connecting
                return rv
            for line in iter_resp_lines(resp):
                if self._stop.is_set():
                    break
                if not line:
                    continue
                event = msgspec.json.decode(line)
                etype = event.get("type")
                obj = event.get("object") or {}
                if etype == "ERROR":
                    if obj.get("code") == 410:
                        raise Gone()
                    raise RuntimeError(f"watch error {obj.get('code')}: {obj.get('message')}")
                new_rv = str(_meta(obj).get("resourceVersion") or "")
                if etype in ("ADDED", "MODIFIED", "DELETED"):
                    self.cache.apply(self.kind, etype, obj)
                if new_rv:
                    rv = new_rv
                    self.cache.resource_versions[self.kind] = rv
        finally:
            self._resp = None
            resp.close()
            resp.release_conn()
        return rv


def _brief(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]


def kube_client(kubeconfig: str | None) -> Any:
    """An ApiClient from a kubeconfig, $KUBECONFIG/~/.kube/config, or in-cluster config.

    Returns None when no configuration is found, so the extender still serves
    (not ready) without an API server.
    """
    import os

    from kubernetes import client, config

    if kubeconfig:
        return config.new_client_from_config(config_file=kubeconfig)
    default = os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
    if os.path.exists(default.split(os.pathsep)[0]):
        return config.new_client_from_config(config_file=default.split(os.pathsep)[0])
    try:
        config.load_incluster_config()
    except config.ConfigException:
        return None
    return client.ApiClient()


def start_reflectors(cache: ClusterCache, api_client: Any, **kwargs: Any) -> list[Reflector]:
    from kubernetes import client

    core = client.CoreV1Api(api_client)
    return [
        Reflector(cache, "nodes", core.list_node, **kwargs).start(),
        Reflector(cache, "pods", core.list_pod_for_all_namespaces, **kwargs).start(),
    ]

"""Reflector: list + watch one resource kind into a ClusterCache, in a daemon thread.

List (and remember the list's resourceVersion), then watch from there; a 410
Gone (as an HTTP status or an ERROR event) triggers a fresh list, other failures
reconnect with capped exponential backoff from the last resourceVersion seen.
"""

from __future__ import annotations

import gc
import logging
import random
import socket
import threading
from typing import Any, Callable

import msgspec

from scheduler_build.extender.cache import ClusterCache, object_meta

log = logging.getLogger("scheduler_build.extender.cache")


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
                 backoff: Backoff | None = None, after_list: Callable[[], None] | None = None):
        self.cache, self.kind, self.list_func = cache, kind, list_func
        self.after_list = after_list  # e.g. settle_heap: once the cache holds a full list
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
                    if self.after_list is not None:
                        self.after_list()
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
        from kubernetes.client.rest import ApiException  # heavy (~0.4 s): imported by the thread, not at startup
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
                new_rv = str(object_meta(obj).get("resourceVersion") or "")
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


def settle_heap() -> None:
    """Collect once, then move every surviving object to the GC's permanent generation.

    After a list the cache is most of the heap (about 300,000 tracked objects at
    5000 nodes and 17,500 pods). Left in generation 2, every full collection walks
    all of them: measured in-process, up to 260 ms on the shared machine, a pause
    that lands on whichever request is in flight. Frozen, they are still freed by
    reference counting when the watch replaces them; only cycles among them would
    stay, and the cache's views hold none. Runs in the reflector's thread, once
    per list (start-up, or a relist after 410 Gone), not per request.
    """
    gc.collect()
    gc.freeze()


def start_reflectors(cache: ClusterCache, api_client: Any, **kwargs: Any) -> list[Reflector]:
    from kubernetes import client  # heavy (~0.4 s): only once an API client exists

    core = client.CoreV1Api(api_client)
    return [
        Reflector(cache, "nodes", core.list_node, **kwargs).start(),
        Reflector(cache, "pods", core.list_pod_for_all_namespaces, **kwargs).start(),
    ]

"""The extender's request handling, independent of the HTTP server library.

`Extender.handle(method, path, body)` returns a Response; the server module only
moves bytes. Error answers follow the protocol:

| verb       | bad input / body too large        | cache not synced | API failure     |
|------------|-----------------------------------|------------------|-----------------|
| filter     | 200, reply `Error` set            | 200, `Error` set | -               |
| bind       | 200, reply `Error` set            | (not needed)     | 200, `Error`    |
| prioritize | 400 / 413, text body              | 503              | -               |
| preempt    | 400 / 413, text body              | 503              | -               |

prioritize (HostPriorityList) and preempt (ExtenderPreemptionResult) have no
Error field, so an HTTP status is their only way to say no; kube-scheduler treats
any status but 200 as an error. Unknown paths get 404, wrong methods 405.
"""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from scheduler_build.extender import protocol
from scheduler_build.extender.cache import ClusterCache
from scheduler_build.extender.policy import Policy, Unresolvable
from scheduler_build.extender.protocol import NodeView, ProtocolError
from scheduler_build.extender.verdicts import VerdictMemo, clamp_score, filter_answer, scores_answer
from scheduler_build.extender.config import MAX_BODY_BYTES, VERBS

log = logging.getLogger("scheduler_build.extender")

JSON = "application/json"
TEXT = "text/plain; charset=utf-8"
RECENT_PODS = 10000  # pods seen in filter/prioritize, so bind knows their usage before the watch does


@dataclass
class Response:
    status: int
    body: bytes
    content_type: str = JSON
    headers: dict[str, str] = field(default_factory=dict)
    close: bool = False  # ask the server to drop the connection (unread body left behind)


@dataclass
class Options:
    url_prefix: str = "/"
    verbs: dict[str, str] = field(default_factory=lambda: {v: v for v in VERBS})
    max_body_bytes: int = MAX_BODY_BYTES


class Extender:
    def __init__(self, policy: Policy, cache: ClusterCache, api_client: Any = None,
                 options: Options | None = None):
        self.policy = policy
        self.cache = cache
        self.api_client = api_client
        self.options = options or Options()
        prefix = self.options.url_prefix.rstrip("/")
        self.routes: dict[str, str] = {}
        for kind, verb in self.options.verbs.items():
            if verb:
                self.routes[f"{prefix}/{verb.lstrip('/')}"] = kind
        self._recent: dict[str, int] = {}
        self.verdicts = VerdictMemo(policy, self.cache)
        self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="bind")
        self.registry = CollectorRegistry()
        self.m_requests = Counter("extender_requests", "HTTP requests by verb and status code",
                                  ["verb", "code"], registry=self.registry)
        self.m_latency = Histogram("extender_request_duration_seconds", "Request handling time by verb",
                                   ["verb"], registry=self.registry,
                                   buckets=(.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5))
        self.m_decisions = Counter("extender_decisions", "Per-node or per-pod outcomes by verb",
                                   ["verb", "outcome"], registry=self.registry)
        self.m_ready = Gauge("extender_cache_synced", "1 once nodes and pods are listed",
                             registry=self.registry)
        self.m_ready.set_function(lambda: 1.0 if self.cache.synced else 0.0)

    # -- entry point ------------------------------------------------------
    async def handle(self, method: str, path: str, body: bytes | None, too_large: bool = False) -> Response:
        kind = self.routes.get(path)
        if kind is None:
            return self._plain_get(method, path)
        if method != "POST":
            return self._count(kind, Response(405, b"use POST\n", TEXT, {"Allow": "POST"}))
        start = time.perf_counter()
        try:
            if too_large:
                resp = self._too_large(kind)
            elif kind == "filter":
                resp = self.filter(body or b"")
            elif kind == "prioritize":
                resp = self.prioritize(body or b"")
            elif kind == "preempt":
                resp = self.preempt(body or b"")
            else:
                resp = await self.bind(body or b"")
        except Exception:  # a bug must not kill the connection loop; say so and carry on
            log.exception("internal error handling %s", kind)
            resp = self._error(kind, "internal error in the extender (see its log)", 500)
        self.m_latency.labels(kind).observe(time.perf_counter() - start)
        return self._count(kind, resp)

    def _count(self, kind: str, resp: Response) -> Response:
        self.m_requests.labels(kind, str(resp.status)).inc()
        return resp

    def _plain_get(self, method: str, path: str) -> Response:
        if path in ("/healthz", "/readyz", "/metrics"):
            if method not in ("GET", "HEAD"):
                return Response(405, b"use GET\n", TEXT, {"Allow": "GET, HEAD"})
            if path in ("/healthz", "/readyz"):
                return self.probe(path)
            return Response(200, generate_latest(self.registry), CONTENT_TYPE_LATEST)
        return Response(404, f"no such endpoint {path[:200]}\n".encode(), TEXT)

    def probe(self, path: str) -> Response:
        """/healthz (alive) or /readyz (caches synced): the same answer on the API port and the health port."""
        if path == "/healthz" or self.cache.synced:
            return Response(200, b"ok\n", TEXT)
        return Response(503, b"not ready: node and pod caches not synced yet\n", TEXT)

    def _error(self, kind: str, message: str, status: int) -> Response:
        """The protocol-correct error answer for a verb (see the module docstring)."""
        self.m_decisions.labels(kind, "error").inc()
        if kind == "filter":
            return Response(200, protocol.dumps({"Nodes": None, "NodeNames": None, "FailedNodes": None,
                                                 "FailedAndUnresolvableNodes": None, "Error": message}))
        if kind == "bind":
            return Response(200, protocol.dumps({"Error": message}))
        return Response(status, (message + "\n").encode(), TEXT)

    def _too_large(self, kind: str) -> Response:
        resp = self._error(kind, f"request body exceeds the extender's limit of "
                                 f"{self.options.max_body_bytes} bytes (extender.max_body_bytes)", 413)
        resp.close = True
        return resp

    def _remember(self, pod: protocol.PodView) -> None:
        if pod.uid:
            recent = self._recent
            recent.pop(pod.uid, None)
            recent[pod.uid] = self.policy.pod_usage(pod)
            if len(recent) > RECENT_PODS:
                del recent[next(iter(recent))]

    def _nodes(self, args: protocol.ExtenderArgs) -> tuple[list[NodeView], list[str]]:
        """Candidate nodes with labels: from the request (NodeList) or the cache (NodeNames)."""
        if args.nodes is not None:
            return args.nodes, []
        known = self.cache.nodes
        nodes, unknown = [], []
        for name in args.node_names or ():
            view = known.get(name)
            if view is None:
                unknown.append(name)
            else:
                nodes.append(view)
        return nodes, unknown

    # -- verbs --------------------------------------------------------------
    def filter(self, body: bytes) -> Response:
        try:
            args = protocol.decode_extender_args(body)
        except ProtocolError as exc:
            return self._error("filter", f"bad filter request: {exc}", 400)
        if not self.cache.synced:
            return self._error("filter", "extender not ready: its node and pod caches have not synced "
                                         "with the API server yet; retry", 503)
        self._remember(args.pod)
        self.cache.expire_assumed()
        with self.cache.lock:
            memo = self.verdicts.get("filter", args.pod, len(args.node_names)) if args.node_names is not None else None
            if memo is not None:  # NodeNames with a cluster-wide verdict: the common, hot case
                # Encoded under the lock: the answer may share the memo's dicts, which the
                # next request patches in place (VerdictMemo).
                return self._names_reply(filter_answer(memo, args.node_names, self.cache.nodes))
            nodes, unknown = self._nodes(args)
            failed_all = self.policy.filter(args.pod, nodes, self.cache.usage_map())
        failed: dict[str, str] = {}
        unresolvable: dict[str, str] = {}
        for name, reason in failed_all.items():
            (unresolvable if isinstance(reason, Unresolvable) else failed)[name] = str(reason)
        for name in unknown:
            unresolvable[name] = f"node {name} is not in the extender's node cache"
        rejected = len(failed) + len(unresolvable)
        if rejected:
            self.m_decisions.labels("filter", "node_failed").inc(rejected)
        if args.nodes is not None:
            passed = [n.raw for n in args.nodes if n.name not in failed_all]
            self.m_decisions.labels("filter", "node_passed").inc(len(passed))
            reply = {"Nodes": {"metadata": {}, "items": passed}, "NodeNames": None,
                     "FailedNodes": failed, "FailedAndUnresolvableNodes": unresolvable, "Error": ""}
        else:
            names = [n for n in args.node_names or () if n not in failed_all and n not in unresolvable]
            self.m_decisions.labels("filter", "node_passed").inc(len(names))
            reply = {"Nodes": None, "NodeNames": names,
                     "FailedNodes": failed, "FailedAndUnresolvableNodes": unresolvable, "Error": ""}
        return Response(200, protocol.dumps(reply))

    def _names_reply(self, answer) -> Response:
        rejected = len(answer.failed) + len(answer.unresolvable)
        if rejected:
            self.m_decisions.labels("filter", "node_failed").inc(rejected)
        self.m_decisions.labels("filter", "node_passed").inc(len(answer.passed))
        return Response(200, protocol.dumps({"Nodes": None, "NodeNames": answer.passed, "FailedNodes": answer.failed,
                                             "FailedAndUnresolvableNodes": answer.unresolvable, "Error": ""}))

    def prioritize(self, body: bytes) -> Response:
        try:
            args = protocol.decode_extender_args(body)
        except ProtocolError as exc:
            return self._error("prioritize", f"bad prioritize request: {exc}", 400)
        if not self.cache.synced:
            return self._error("prioritize", "extender not ready: caches not synced", 503)
        self._remember(args.pod)
        self.cache.expire_assumed()
        host = protocol.HostPriority
        with self.cache.lock:
            memo = self.verdicts.get("prioritize", args.pod, len(args.node_names)) if args.node_names is not None else None
            if memo is not None:
                out = scores_answer(memo, args.node_names)  # already clamped; unknown nodes score 0
            else:
                nodes, unknown = self._nodes(args)
                scored = self.policy.prioritize(args.pod, nodes, self.cache.usage_map())
        if memo is None:
            # Clamp whatever a policy returns: kube-scheduler does not, and 0..10 is the contract.
            out = [host(name, clamp_score(score)) for name, score in scored]
            out.extend(host(name, 0) for name in unknown)
        self.m_decisions.labels("prioritize", "scored").inc(len(out))
        return Response(200, protocol.dumps(out))

    def preempt(self, body: bytes) -> Response:
        try:
            args = protocol.decode_preemption_args(body)
        except ProtocolError as exc:
            return self._error("preempt", f"bad preempt request: {exc}", 400)
        if not self.cache.synced:
            return self._error("preempt", "extender not ready: caches not synced", 503)
        result: dict[str, Any] = {}
        with self.cache.lock:
            for node_name, (victims, pdb) in args.victims.items():
                kept = []
                for victim in victims:
                    on = self.cache.pod_node(victim.uid)
                    if on is None and victim.pod is not None:
                        on = victim.pod.node_name
                    if victim.uid and on == node_name:
                        kept.append(victim.uid)
                dropped = len(victims) - len(kept)
                if dropped:
                    self.m_decisions.labels("preempt", "victim_not_on_node").inc(dropped)
                after = self.cache.usage_after_evicting(node_name, kept)
                if self.policy.preempt(args.pod, self.cache.nodes.get(node_name), after):
                    result[node_name] = {"Pods": [{"UID": uid} for uid in kept], "NumPDBViolations": pdb}
                    self.m_decisions.labels("preempt", "node_kept").inc()
                else:
                    self.m_decisions.labels("preempt", "node_dropped").inc()
        return Response(200, protocol.dumps({"NodeNameToMetaVictims": result}))

    async def bind(self, body: bytes) -> Response:
        try:
            args = protocol.decode_binding_args(body)
        except ProtocolError as exc:
            return self._error("bind", f"bad bind request: {exc}", 400)
        if self.api_client is None:
            return self._error("bind", "extender has no Kubernetes API configured (--kubeconfig); "
                                       "cannot create the Binding", 503)
        loop = asyncio.get_running_loop()
        try:
            usage = self.cache.pod_usage_of(args.pod_uid) if args.pod_uid else None
            if usage is None:
                usage = self._recent.get(args.pod_uid)
            if usage is None:
                usage = await loop.run_in_executor(self._pool, self._read_pod_usage, args)
            if usage:
                # Count the pod on its node now, so the next decision sees it before the watch does;
                # refuse when a pod bound since this one passed Filter took the node's last slot.
                refused = self.cache.assume_unless(
                    args.pod_uid or f"{args.pod_namespace}/{args.pod_name}", args.node, usage,
                    lambda node, used: self.policy.refuses_bind(node, used, usage))
                if refused:
                    log.info("bind %s/%s to %s refused: %s", args.pod_namespace, args.pod_name, args.node, refused)
                    self.m_decisions.labels("bind", "refused").inc()
                    return Response(200, protocol.dumps({"Error": refused}))
            await loop.run_in_executor(self._pool, self._create_binding, args)
        except Exception as exc:
            if args.pod_uid:
                self.cache.forget(args.pod_uid)
            message = _api_error(exc)
            log.warning("bind %s/%s to %s failed: %s", args.pod_namespace, args.pod_name, args.node, message)
            self.m_decisions.labels("bind", "error").inc()
            return Response(200, protocol.dumps({"Error": f"binding {args.pod_namespace}/{args.pod_name} "
                                                          f"to {args.node} failed: {message}"}))
        log.info("bound %s/%s to %s", args.pod_namespace, args.pod_name, args.node)
        self.m_decisions.labels("bind", "bound").inc()
        return Response(200, protocol.dumps({"Error": ""}))

    def _read_pod_usage(self, args: protocol.BindingArgs) -> int:
        from kubernetes import client  # heavy (~0.4 s): only on the first bind

        resp = client.CoreV1Api(self.api_client).read_namespaced_pod(
            args.pod_name, args.pod_namespace, _preload_content=False, _request_timeout=5)
        return self.policy.pod_usage(protocol.pod_view(protocol.loads(resp.data)))

    def _create_binding(self, args: protocol.BindingArgs) -> None:
        from kubernetes import client  # heavy (~0.4 s): only on the first bind

        binding = client.V1Binding(
            # The UID makes the API server refuse a pod recreated under the same name.
            metadata=client.V1ObjectMeta(name=args.pod_name, namespace=args.pod_namespace,
                                         uid=args.pod_uid or None),
            target=client.V1ObjectReference(api_version="v1", kind="Node", name=args.node),
        )
        # _preload_content=False: the API answers with a Status, which the generated
        # V1Binding deserialiser rejects ("target must not be None").
        # POST pods/NAME/binding, the subresource kube-scheduler's DefaultBinder uses.
        client.CoreV1Api(self.api_client).create_namespaced_pod_binding(
            args.pod_name, args.pod_namespace, binding, _preload_content=False, _request_timeout=10)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def _api_error(exc: BaseException) -> str:
    status = getattr(exc, "status", None)
    body = getattr(exc, "body", None)
    if status is not None:
        message = ""
        if body:
            try:
                message = protocol.loads(body if isinstance(body, bytes) else body.encode()).get("message", "")
            except Exception:
                message = ""
        return f"API server answered {status}{': ' + message if message else ''}"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]

"""A tiny stand-in for the Kubernetes API's list and watch of nodes and pods.

It exists because the cache must be tested against exact watch event streams
(bookmarks, 410 Gone, dropped connections) in unit tests, and the benchmark
needs a cluster of thousands of nodes without a control plane. It speaks the
real wire format on 127.0.0.1 so the kubernetes client's own HTTP, URL and
query handling runs unchanged; the end-to-end issue runs the extender against a
real kube-apiserver. Not for production use.

- GET /api/v1/nodes, /api/v1/pods: a List with metadata.resourceVersion.
- ...?watch=true&resourceVersion=RV: the events after RV, one JSON per line,
  then more as they are added, until timeoutSeconds or `drop_watches()`.
  An RV older than `compacted_rv` gets a 410: as an ERROR event (what a real
  API server sends mid-stream) or, with `gone_as_status`, as the HTTP status.
- Bookmarks are sent when the client asks (allowWatchBookmarks) and `bookmark()` is called.
- GET /api/v1/namespaces/NS/pods/NAME reads a pod; POST .../NAME/binding binds it
  like the real registry (404 unknown pod, 409 already bound or UID mismatch),
  setting spec.nodeName and streaming the MODIFIED event; `bind_delay` holds
  the event back to imitate a watch that lags behind.
"""

from __future__ import annotations

import copy
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import msgspec
import yaml

KINDS = {"nodes": "Node", "pods": "Pod"}


def _key(kind: str, obj: dict) -> str:
    meta = obj.get("metadata") or {}
    return meta.get("name", "") if kind == "nodes" else f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def _status(code: int, reason: str, message: str) -> dict:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}


class ApiStub:
    def __init__(self, start_rv: int = 1000):
        self.lock = threading.Condition()
        self.rv = start_rv
        self.objects: dict[str, dict[str, dict]] = {"nodes": {}, "pods": {}}
        self.events: dict[str, list[tuple[int, bytes]]] = {"nodes": [], "pods": []}
        self.compacted_rv = 0
        self.gone_as_status = False
        self.requests: list[str] = []  # "GET /api/v1/pods?watch=true&..." as received
        self._generation = 0  # bumped by drop_watches()
        self.bindings: list[tuple[str, str, str]] = []  # (namespace, name, node)
        self.bind_delay = 0.0  # seconds before the bound pod's MODIFIED event is streamed
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- state changes ---------------------------------------------------
    def _next_rv(self) -> int:
        self.rv += 1
        return self.rv

    def load(self, kind: str, objs: list[dict]) -> None:
        """Initial objects, without events (what a list sees)."""
        with self.lock:
            for obj in objs:
                obj = copy.deepcopy(obj)
                obj["metadata"]["resourceVersion"] = str(self._next_rv())
                self.objects[kind][_key(kind, obj)] = obj

    def emit(self, kind: str, etype: str, obj: dict) -> int:
        """Apply one ADDED/MODIFIED/DELETED change and stream it; returns its RV."""
        with self.lock:
            obj = copy.deepcopy(obj)
            rv = self._next_rv()
            obj.setdefault("metadata", {})["resourceVersion"] = str(rv)
            if etype == "DELETED":
                self.objects[kind].pop(_key(kind, obj), None)
            else:
                self.objects[kind][_key(kind, obj)] = obj
            self.events[kind].append((rv, msgspec.json.encode({"type": etype, "object": obj}) + b"\n"))
            self.lock.notify_all()
            return rv

    def bookmark(self, kind: str) -> int:
        with self.lock:
            rv = self._next_rv()
            obj = {"kind": KINDS[kind], "apiVersion": "v1", "metadata": {"resourceVersion": str(rv)}}
            self.events[kind].append((rv, msgspec.json.encode({"type": "BOOKMARK", "object": obj}) + b"\n"))
            self.lock.notify_all()
            return rv

    def compact(self) -> None:
        """Forget every event so far: a watch from an older RV gets 410 Gone."""
        with self.lock:
            self.compacted_rv = self.rv
            for kind in self.events:
                self.events[kind] = []

    def drop_watches(self) -> None:
        """End every open watch stream (the client must reconnect from its RV)."""
        with self.lock:
            self._generation += 1
            self.lock.notify_all()

    def replay(self, path: Path | str) -> None:
        """Feed a recorded stream: JSON lines {"kind": ..., "type": ..., "object": ...};
        type LIST loads the object without an event, GONE compacts, DROP drops watches."""
        for line in Path(path).read_text().splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            rec = msgspec.json.decode(line)
            if rec["type"] == "LIST":
                self.load(rec["kind"], [rec["object"]])
            elif rec["type"] == "GONE":
                self.compact()
            elif rec["type"] == "DROP":
                self.drop_watches()
            elif rec["type"] == "BOOKMARK":
                self.bookmark(rec["kind"])
            else:
                self.emit(rec["kind"], rec["type"], rec["object"])

    def bind(self, namespace: str, name: str, binding: dict) -> tuple[int, dict]:
        """Bind like the pod registry does; returns (HTTP status, Status object)."""
        with self.lock:
            pod = self.objects["pods"].get(f"{namespace}/{name}")
            if pod is None:
                return 404, _status(404, "NotFound", f'pods "{name}" not found')
            uid = ((binding.get("metadata") or {}).get("uid")) or ""
            if uid and uid != pod["metadata"].get("uid"):
                return 409, _status(409, "Conflict", f"Precondition failed: UID in precondition: {uid}, "
                                                     f"UID in object meta: {pod['metadata'].get('uid')}")
            if (pod.get("spec") or {}).get("nodeName"):
                return 409, _status(409, "Conflict", f"pod {name} is already assigned to node "
                                                     f"\"{pod['spec']['nodeName']}\"")
            node = ((binding.get("target") or {}).get("name")) or ""
            bound = copy.deepcopy(pod)
            bound.setdefault("spec", {})["nodeName"] = node
            self.objects["pods"][f"{namespace}/{name}"] = bound
            self.bindings.append((namespace, name, node))
        if self.bind_delay:
            threading.Timer(self.bind_delay, self.emit, ("pods", "MODIFIED", bound)).start()
        else:
            self.emit("pods", "MODIFIED", bound)
        return 201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}

    # -- serving -----------------------------------------------------------
    def start(self, port: int = 0) -> "ApiStub":
        self._server = _Server(("127.0.0.1", port), _Handler)
        self._server.stub = self
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="apistub", daemon=True)
        self._thread.start()
        return self

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def kubeconfig(self, path: Path | str) -> Path:
        """A kubeconfig pointing the kubernetes client at this stub (no auth)."""
        doc = {
            "apiVersion": "v1", "kind": "Config", "current-context": "stub",
            "clusters": [{"name": "stub", "cluster": {"server": self.url}}],
            "users": [{"name": "stub", "user": {}}],
            "contexts": [{"name": "stub", "context": {"cluster": "stub", "user": "stub"}}],
        }
        path = Path(path)
        path.write_text(yaml.safe_dump(doc, sort_keys=True))
        return path

    def stop(self) -> None:
        self.drop_watches()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


class _Server(ThreadingHTTPServer):
    stub: ApiStub


class _Handler(BaseHTTPRequestHandler):
    """The stub's HTTP face: list, watch, get pod, bind (the server carries the stub)."""

    server: "_Server"

    @property
    def stub(self) -> ApiStub:
        return self.server.stub
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.stub.requests.append(f"GET {self.path}")
        url = urlsplit(self.path)
        parts = url.path.strip("/").split("/")
        if len(parts) == 6 and parts[2] == "namespaces" and parts[4] == "pods":
            with self.stub.lock:
                obj = self.stub.objects["pods"].get(f"{parts[3]}/{parts[5]}")
            if obj is None:
                self._send(404, _status(404, "NotFound", f'pods "{parts[5]}" not found'))
            else:
                self._send(200, obj)
            return
        kind = url.path.rstrip("/").rsplit("/", 1)[-1]
        if not url.path.startswith("/api/v1/") or kind not in KINDS:
            self._send(404, {"kind": "Status", "code": 404, "reason": "NotFound", "message": "not found"})
            return
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        if query.get("watch") in ("true", "1"):
            self._watch(kind, query)
        else:
            with self.stub.lock:
                items = list(self.stub.objects[kind].values())
                rv = self.stub.rv
            self._send(200, {"kind": KINDS[kind] + "List", "apiVersion": "v1",
                             "metadata": {"resourceVersion": str(rv)}, "items": items})

    def do_POST(self) -> None:
        self.stub.requests.append(f"POST {self.path}")
        length = int(self.headers.get("Content-Length") or 0)
        body = msgspec.json.decode(self.rfile.read(length)) if length else {}
        parts = urlsplit(self.path).path.strip("/").split("/")
        # api/v1/namespaces/NS/pods/NAME/binding (what kube-scheduler uses) or
        # api/v1/namespaces/NS/bindings with the pod's name in the body
        if len(parts) == 7 and parts[:3] == ["api", "v1", "namespaces"] and parts[4] == "pods" \
                and parts[6] == "binding":
            namespace, name = parts[3], parts[5]
        elif len(parts) == 5 and parts[:3] == ["api", "v1", "namespaces"] and parts[4] == "bindings":
            namespace, name = parts[3], (body.get("metadata") or {}).get("name", "")
        else:
            self._send(404, _status(404, "NotFound", f"no route for POST {self.path}"))
            return
        code, status = self.stub.bind(namespace, name, body)
        self._send(code, status)

    def _send(self, code: int, body: Any) -> None:
        data = msgspec.json.encode(body)
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _watch(self, kind: str, query: dict) -> None:
        since = int(query.get("resourceVersion") or 0)
        timeout = float(query.get("timeoutSeconds") or 300)
        gone = {"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                            "message": f"too old resource version: {since} ({self.stub.compacted_rv})",
                                            "reason": "Expired", "code": 410}}
        with self.stub.lock:
            too_old = since < self.stub.compacted_rv
            generation = self.stub._generation
        if too_old and self.stub.gone_as_status:
            self._send(410, gone["object"])
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            if too_old:
                self._chunk(msgspec.json.encode(gone) + b"\n")
                return
            bookmarks = query.get("allowWatchBookmarks") in ("true", "1")
            deadline = time.monotonic() + timeout
            sent = since
            while True:
                with self.stub.lock:
                    if generation != self.stub._generation:
                        break  # dropped: events after this point go to the next watch
                    pending = [(rv, line) for rv, line in self.stub.events[kind] if rv > sent]
                    if not pending:
                        if time.monotonic() >= deadline:
                            break
                        self.stub.lock.wait(min(0.2, max(0.0, deadline - time.monotonic())))
                        continue
                for rv, line in pending:
                    if bookmarks or b'"BOOKMARK"' not in line[:20]:
                        self._chunk(line)
                    sent = rv
        finally:
            try:
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except OSError:
                pass

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

"""The extender's cache: ClusterCache rules, and the reflectors driven through the
real kubernetes client (its ApiClient, CoreV1Api, URL/query building and urllib3
streaming) against testkit.apistub on 127.0.0.1.

Mocked, and why: the API server itself. A real kube-apiserver cannot produce a
410 Gone, a bookmark or a dropped watch on demand, and it needs a control plane
the unit tests must not depend on; the stub replays recorded event streams
(tests/data/extender/*.jsonl, in the API's wire format) exactly. The end-to-end
tests (issue #7) run the extender against a real kube-apiserver.
"""

from __future__ import annotations

import time
from pathlib import Path

import msgspec
import pytest
from testkit.extender_fixtures import call

from testkit import apistub
from testkit import samples
from scheduler_build.extender.app import Extender
from scheduler_build.extender.cache import ClusterCache
from scheduler_build.extender.reflector import Backoff, Reflector
from scheduler_build.extender.policy import UnderlayIPPolicy

DATA = Path(__file__).resolve().parents[2] / "data" / "extender"
POLICY = UnderlayIPPolicy()


def eventually(check, timeout=10.0, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def stub():
    s = apistub.ApiStub()
    s.replay(DATA / "initial.jsonl")
    s.start()
    yield s
    s.stop()


def api_client(stub: apistub.ApiStub, tmp_path: Path):
    from kubernetes import config

    return config.new_client_from_config(config_file=str(stub.kubeconfig(tmp_path / "kubeconfig")))


@pytest.fixture
def running(stub, tmp_path):
    from kubernetes import client

    cache = ClusterCache(POLICY.pod_usage)
    core = client.CoreV1Api(api_client(stub, tmp_path))
    reflectors = {
        "nodes": Reflector(cache, "nodes", core.list_node, watch_timeout=30, backoff=Backoff(0.02, 0.2)),
        "pods": Reflector(cache, "pods", core.list_pod_for_all_namespaces, watch_timeout=30,
                          backoff=Backoff(0.02, 0.2)),
    }
    for r in reflectors.values():
        r.start()
    assert cache.wait_synced(10)
    yield cache, reflectors
    for r in reflectors.values():
        r.stop()
    stub.drop_watches()
    for r in reflectors.values():
        r.join(5)
        assert not r.thread.is_alive()


def caught_up(stub, cache, kind="pods"):
    return lambda: cache.resource_versions.get(kind) == str(max(rv for rv, _ in stub.events[kind]))


# -- ClusterCache rules, no I/O -------------------------------------------------

def test_usage_counts_bound_opted_in_non_terminated_pods():
    cache = ClusterCache(POLICY.pod_usage)
    cache.replace("pods", [
        samples.pod("a", node_name="n1", phase="Running"),
        samples.pod("b", node_name="n1", phase="Pending"),  # bound, not started yet: counts
        samples.pod("c", node_name="n1", phase="Succeeded"),
        samples.pod("d", node_name="n1", phase="Failed"),
        samples.pod("e", node_name="n1", opt_in=False),
        samples.pod("f"),  # not bound
    ], "5")
    assert cache.usage("n1") == 2 and cache.usage("n2") == 0
    cache.apply("pods", "MODIFIED", samples.pod("a", node_name="n1", phase="Succeeded"))
    assert cache.usage("n1") == 1
    cache.apply("pods", "DELETED", samples.pod("b", node_name="n1"))
    assert cache.usage("n1") == 0 and cache.used == {}


def test_assumed_pods_count_until_confirmed_or_expired():
    now = [100.0]
    cache = ClusterCache(POLICY.pod_usage, assume_ttl=30, clock=lambda: now[0])
    pod = samples.pod("x")
    uid = pod["metadata"]["uid"]
    cache.replace("pods", [pod], "1")
    cache.assume(uid, "n1", 1)
    assert cache.usage("n1") == 1 and cache.usage_map()["n1"] == 1
    # The watch confirms the bind: counted once, no longer assumed.
    cache.apply("pods", "MODIFIED", samples.pod("x", node_name="n1", phase="Pending"))
    assert cache.usage("n1") == 1 and cache.assumed == {}
    # Expiry: a bind the watch never confirms stops counting after the TTL.
    cache.assume("other-uid", "n2", 1)
    now[0] += 29
    cache.expire_assumed()
    assert cache.usage("n2") == 1
    now[0] += 2
    cache.expire_assumed()
    assert cache.usage("n2") == 0
    # forget() (the bind failed) and a deleted pod drop the assumption too.
    cache.assume("u3", "n3", 1)
    cache.forget("u3")
    cache.assume("u4", "n3", 1)
    cache.apply("pods", "DELETED", {"metadata": {"uid": "u4"}})
    assert cache.usage("n3") == 0


def test_preempt_accounting_frees_only_victims_on_that_node():
    cache = ClusterCache(POLICY.pod_usage)
    a, b = samples.pod("a", node_name="n1", phase="Running"), samples.pod("b", node_name="n2", phase="Running")
    cache.replace("pods", [a, b], "1")
    assert cache.usage_after_evicting("n1", [a["metadata"]["uid"], b["metadata"]["uid"], "ghost"]) == 0
    assert cache.pod_node(b["metadata"]["uid"]) == "n2" and cache.pod_node("ghost") is None


# -- reflectors through the kubernetes client ---------------------------------

def test_list_then_replayed_events(stub, running):
    cache, reflectors = running
    assert set(cache.nodes) == {"w-1", "w-2"}
    assert cache.usage("w-1") == 2
    assert cache.nodes["w-1"].labels["underlay.example.com/capacity"] == "3"
    stub.replay(DATA / "events.jsonl")
    eventually(caught_up(stub, cache, "pods"), what="pod events")
    eventually(caught_up(stub, cache, "nodes"), what="node events")
    assert cache.usage("w-1") == 1  # web-3 bound, web-2 finished, web-1 deleted
    assert cache.nodes["w-1"].labels["underlay.example.com/capacity"] == "5"
    assert set(cache.nodes) == {"w-1"}
    assert reflectors["pods"].lists == 1  # no re-list needed
    # The watch asked for bookmarks and resumed from the list's resourceVersion.
    assert any("watch=True" in r and "allowWatchBookmarks=True" in r for r in stub.requests) or \
        any("watch=true" in r and "allowWatchBookmarks=true" in r for r in stub.requests)


def test_dropped_watch_resumes_from_last_resource_version(stub, running):
    cache, reflectors = running
    stub.emit("pods", "ADDED", samples.pod("late-1", node_name="w-2", phase="Running"))
    eventually(caught_up(stub, cache), what="first event")
    rv = cache.resource_versions["pods"]
    stub.drop_watches()
    stub.emit("pods", "ADDED", samples.pod("late-2", node_name="w-2", phase="Running"))
    eventually(lambda: cache.usage("w-2") == 2, what="event after reconnect")
    assert reflectors["pods"].lists == 1
    assert any(f"resourceVersion={rv}" in r and "watch=" in r and "/pods" in r for r in stub.requests)


@pytest.mark.parametrize("as_status", [False, True], ids=["410-error-event", "410-http-status"])
def test_gone_triggers_a_relist(stub, running, as_status):
    cache, reflectors = running
    stub.gone_as_status = as_status
    # A change the watch never streams (it happened while we were away), then compaction.
    stub.load("pods", [samples.pod("missed", node_name="w-2", phase="Running")])
    stub.compact()
    stub.drop_watches()
    eventually(lambda: reflectors["pods"].lists == 2, what="re-list after 410")
    eventually(lambda: cache.usage("w-2") == 1, what="state from the re-list")
    assert cache.usage("w-1") == 2  # the rest of the state survived the re-list


@pytest.fixture
def bench_free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_api_down_at_start_then_up(tmp_path, bench_free_port):
    from kubernetes import client

    stub = apistub.ApiStub()
    stub.replay(DATA / "initial.jsonl")
    # The kubeconfig points at a port nobody listens on yet.
    stub._server = type("S", (), {"server_address": ("127.0.0.1", bench_free_port)})()
    kubeconfig = stub.kubeconfig(tmp_path / "kubeconfig")
    stub._server = None
    from kubernetes import config

    core = client.CoreV1Api(config.new_client_from_config(config_file=str(kubeconfig)))
    cache = ClusterCache(POLICY.pod_usage)
    reflector = Reflector(cache, "nodes", core.list_node, request_timeout=1, backoff=Backoff(0.05, 0.3)).start()
    try:
        time.sleep(0.5)
        assert not cache.synced and reflector.lists == 0
        assert reflector.backoff.attempt >= 2  # it kept retrying, with growing delays
        stub.start(port=bench_free_port)
        eventually(lambda: reflector.lists == 1, timeout=10, what="list once the API is up")
        assert set(cache.nodes) == {"w-1", "w-2"}
    finally:
        reflector.stop()
        stub.stop()
        reflector.join(5)


def test_bind_creates_binding_and_assumes_until_the_watch_confirms(stub, running, tmp_path):
    cache, _ = running
    ext = Extender(POLICY, cache, api_client(stub, tmp_path))
    # w-1 has capacity 3 and 2 used. Two pending pods exist; the watch will lag 1.5 s behind binds.
    p1, p2 = samples.pod("new-1"), samples.pod("new-2")
    stub.emit("pods", "ADDED", p1)
    stub.emit("pods", "ADDED", p2)
    eventually(caught_up(stub, cache), what="pending pods")
    stub.bind_delay = 1.5
    status, reply = call(ext, "/bind", samples.bind_args(p1, "w-1"))
    assert (status, reply) == (200, {"Error": ""})
    assert stub.bindings == [("default", "new-1", "w-1")]
    # Before the watch reports the bind, the next decision already sees w-1 full.
    _, reply = call(ext, "/filter", samples.filter_args(p2, [samples.node("w-1")], True))
    assert reply["FailedNodes"] == {"w-1": "node w-1 has no free underlay IP (3/3 used)"}
    eventually(lambda: not cache.assumed, timeout=10, what="watch confirmation")
    assert cache.usage("w-1") == 3  # counted once, not twice
    # A failed bind (already bound) is an in-band error and leaves no assumption.
    status, reply = call(ext, "/bind", samples.bind_args(p1, "w-2"))
    assert status == 200 and "409" in reply["Error"] and "already assigned" in reply["Error"]
    assert not cache.assumed and cache.usage("w-2") == 0


def test_bind_refuses_a_node_whose_last_slot_went_to_a_pod_bound_since_filter(stub, running, tmp_path):
    # kube-scheduler filters the next pod while the previous one binds: both passed Filter
    # for w-1's last slot (capacity 3, 2 used). The first bind takes it; the second is refused
    # in-band (the scheduler retries that pod) and creates no Binding.
    cache, _ = running
    ext = Extender(POLICY, cache, api_client(stub, tmp_path))
    p1, p2 = samples.pod("race-1"), samples.pod("race-2")
    stub.emit("pods", "ADDED", p1)
    stub.emit("pods", "ADDED", p2)
    eventually(caught_up(stub, cache), what="pending pods")
    for pod in (p1, p2):
        _, reply = call(ext, "/filter", samples.filter_args(pod, [samples.node("w-1")], True))
        assert reply["NodeNames"] == ["w-1"]
    stub.bind_delay = 1.5
    assert call(ext, "/bind", samples.bind_args(p1, "w-1")) == (200, {"Error": ""})
    status, reply = call(ext, "/bind", samples.bind_args(p2, "w-1"))
    assert (status, reply) == (200, {"Error": "node w-1 has no free underlay IP (3/3 used)"})
    assert stub.bindings == [("default", "race-1", "w-1")]
    assert list(cache.assumed) == [p1["metadata"]["uid"]]
    # A node with room still takes the refused pod.
    assert call(ext, "/bind", samples.bind_args(p2, "w-2")) == (200, {"Error": ""})


def test_bind_reads_unknown_pod_and_reports_404(stub, running, tmp_path):
    cache, _ = running
    ext = Extender(POLICY, cache, api_client(stub, tmp_path))
    status, reply = call(ext, "/bind", {"PodName": "nope", "PodNamespace": "default", "PodUID": "u-nope",
                                        "Node": "w-1"})
    assert status == 200 and "404" in reply["Error"]
    assert not cache.assumed


def test_recorded_streams_are_valid_json_lines():
    for path in DATA.glob("*.jsonl"):
        for line in path.read_text().splitlines():
            if line and not line.startswith("#"):
                rec = msgspec.json.decode(line)
                assert rec["type"] in {"LIST", "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "GONE", "DROP"}

"""Each verb through Extender.handle with the request shapes kube-scheduler sends
(testkit.samples mirrors Go's encoding of extender/v1), in both
NodeList (nodeCacheCapable: false) and NodeNames (true) modes, plus the error
table of app.py. No HTTP here; test_server.py covers the wire."""

from __future__ import annotations

import msgspec
import pytest
from testkit.extender_fixtures import call, small_cluster, synced_extender

from scheduler_build.extender import protocol
from testkit import samples
from scheduler_build.extender.app import Extender
from scheduler_build.extender.cache import ClusterCache
from scheduler_build.extender.policy import UnderlayIPPolicy

NODES, PODS = small_cluster()
WANTS = samples.pod("new-1")
PLAIN = samples.pod("plain-1", opt_in=False)


@pytest.fixture
def ext() -> Extender:
    return synced_extender(NODES, PODS)


FULL_REASON = "node n-full has no free underlay IP (2/2 used)"
BAD_REASON = "node n-bad has an invalid underlay.example.com/capacity label 'ten'"


def test_filter_nodelist_mode_echoes_full_node_objects(ext):
    status, reply = call(ext, "/filter", samples.filter_args(WANTS, NODES, node_cache_capable=False))
    assert status == 200
    assert reply["Error"] == ""
    assert reply["NodeNames"] is None
    # kube-scheduler builds NodeInfos from the returned items: they must be the whole objects.
    assert reply["Nodes"]["items"] == [NODES[1], NODES[2]]
    assert reply["FailedNodes"] == {"n-full": FULL_REASON}
    assert reply["FailedAndUnresolvableNodes"] == {"n-bad": BAD_REASON}


def test_filter_nodenames_mode_replies_with_names(ext):
    status, reply = call(ext, "/filter", samples.filter_args(WANTS, NODES, node_cache_capable=True))
    assert status == 200
    assert reply == {"Nodes": None, "NodeNames": ["n-free", "n-default"], "FailedNodes": {"n-full": FULL_REASON},
                     "FailedAndUnresolvableNodes": {"n-bad": BAD_REASON}, "Error": ""}


def test_filter_nodenames_unknown_node_is_unresolvable(ext):
    args = {"Pod": WANTS, "Nodes": None, "NodeNames": ["n-free", "ghost"]}
    _, reply = call(ext, "/filter", args)
    assert reply["NodeNames"] == ["n-free"]
    assert reply["FailedAndUnresolvableNodes"] == {"ghost": "node ghost is not in the extender's node cache"}


def test_filter_pod_without_opt_in_passes_all(ext):
    _, reply = call(ext, "/filter", samples.filter_args(PLAIN, NODES, True))
    assert reply["NodeNames"] == ["n-full", "n-free", "n-default", "n-bad"]
    assert reply["FailedNodes"] == {} and reply["Error"] == ""


@pytest.mark.parametrize("mode", [False, True])
def test_prioritize_both_modes(ext, mode):
    status, reply = call(ext, "/prioritize", samples.filter_args(WANTS, NODES, mode))
    assert status == 200
    # n-full 0 free; n-free 3/4 free -> 7; n-default 10/10 -> 10; n-bad invalid -> 0
    assert reply == [{"Host": "n-full", "Score": 0}, {"Host": "n-free", "Score": 7},
                     {"Host": "n-default", "Score": 10}, {"Host": "n-bad", "Score": 0}]


def test_prioritize_scores_always_in_range_even_for_a_bad_policy():
    class Wild(UnderlayIPPolicy):
        def prioritize(self, pod, nodes, usage):
            return [(n.name, s) for n, s in zip(nodes, (-5, 99, 7, 10**20))]

    policy = Wild()
    cache = ClusterCache(policy.pod_usage)
    for kind, items in (("nodes", NODES), ("pods", PODS)):
        cache.replace(kind, items, "1")
        cache.mark_synced(kind)
    _, reply = call(Extender(policy, cache), "/prioritize", samples.filter_args(WANTS, NODES, True))
    assert [h["Score"] for h in reply] == [0, 10, 7, 10]


def test_lowercase_keys_as_very_old_schedulers_sent(ext):
    body = {"pod": WANTS, "nodes": None, "nodenames": ["n-full", "n-free"]}
    _, reply = call(ext, "/filter", body)
    assert reply["NodeNames"] == ["n-free"] and reply["Error"] == ""
    body = {"POD": WANTS, "NODES": {"ITEMS": NODES[:2]}}
    _, reply = call(ext, "/filter", body)
    assert [n["metadata"]["name"] for n in reply["Nodes"]["items"]] == ["n-free"]
    # Folded json tags inside Kubernetes objects too, as Go's decoder accepts them.
    odd_pod = {"Metadata": {"Name": "x", "UID": "u-x", "Labels": {"underlay.example.com/ip": "true"}}}
    _, reply = call(ext, "/filter", {"Pod": odd_pod, "NodeNames": ["n-full"]})
    assert reply["FailedNodes"] == {"n-full": FULL_REASON}


def test_last_duplicate_key_wins_like_go(ext):
    body = b'{"Pod": null, "NodeNames": ["n-full"], "pod": ' + msgspec.json.encode(PLAIN) + b"}"
    _, reply = call(ext, "/filter", body)
    assert reply["NodeNames"] == ["n-full"]  # PLAIN (the later key) was used: no opt-in


def test_fast_and_generic_decoders_agree_on_real_shapes():
    for mode in (False, True):
        body = msgspec.json.encode(samples.filter_args(WANTS, NODES, mode))
        fast, generic = protocol.decode_extender_args(body), protocol.decode_extender_args_generic(body)
        assert fast.pod.labels == generic.pod.labels and fast.pod.uid == generic.pod.uid
        assert fast.names == generic.names
        assert [n.labels for n in fast.nodes or []] == [n.labels for n in generic.nodes or []]


def test_preempt_meta_victims_keeps_only_pods_on_that_node(ext):
    victims = {"n-full": [PODS[0], PODS[2]],  # PODS[2] is on n-free: must be dropped
               "n-free": [PODS[2]]}
    status, reply = call(ext, "/preempt", samples.preempt_args(WANTS, victims, node_cache_capable=True))
    assert status == 200
    assert reply == {"NodeNameToMetaVictims": {
        "n-full": {"Pods": [{"UID": PODS[0]["metadata"]["uid"]}], "NumPDBViolations": 0},
        "n-free": {"Pods": [{"UID": PODS[2]["metadata"]["uid"]}], "NumPDBViolations": 0}}}


def test_preempt_full_victims_mode_and_dropping_nodes_that_stay_full(ext):
    unknown_victim = samples.pod("ghost", node_name="n-full", phase="Running")  # not in the cache: trust spec.nodeName
    wrong_node = samples.pod("liar", node_name="n-free", phase="Running")
    victims = {"n-full": [unknown_victim, wrong_node]}
    _, reply = call(ext, "/preempt", samples.preempt_args(WANTS, victims, node_cache_capable=False, pdb_violations=1))
    # Evicting "ghost" frees nothing the cache counts (2/2 stays), so n-full cannot host the preemptor.
    assert reply == {"NodeNameToMetaVictims": {}}
    victims = {"n-full": [PODS[0]]}
    _, reply = call(ext, "/preempt", samples.preempt_args(WANTS, victims, False, pdb_violations=1))
    assert reply == {"NodeNameToMetaVictims": {"n-full": {"Pods": [{"UID": PODS[0]["metadata"]["uid"]}],
                                                          "NumPDBViolations": 1}}}


def test_bind_without_api_is_an_in_band_error(ext):
    status, reply = call(ext, "/bind", samples.bind_args(WANTS, "n-free"))
    assert status == 200
    assert "no Kubernetes API configured" in reply["Error"]


# -- the error table -----------------------------------------------------------

BAD_BODIES = [
    (b"", "malformed JSON"),
    (b"{", "malformed JSON"),
    (b"[]", "request: expected a JSON object, got array"),
    (b"{}", "Pod: missing"),
    (b'{"Pod": 5, "NodeNames": []}', "Pod: expected a JSON object, got number"),
    (b'{"Pod": {}, "NodeNames": "n1"}', "NodeNames: expected an array of strings, got string"),
    (b'{"Pod": {}, "NodeNames": [1]}', "NodeNames[0]: expected a string, got number"),
    (b'{"Pod": {}, "Nodes": {"items": {}}}', "Nodes.items: expected an array, got object"),
    (b'{"Pod": {}, "Nodes": {"items": [3]}}', "Nodes.items[0]: expected a JSON object, got number"),
    (b'{"Pod": {"metadata": {"labels": {"a": 1}}}, "NodeNames": []}',
     "Pod.metadata.labels['a']: expected a string, got number"),
    (b'{"Pod": {}}', "Nodes and NodeNames are both missing"),
    (b'\xff\xfe', "malformed JSON"),
]


@pytest.mark.parametrize("body,message", BAD_BODIES)
def test_bad_filter_input_is_an_in_band_error(ext, body, message):
    status, reply = call(ext, "/filter", body)
    assert status == 200
    assert message in reply["Error"]
    assert reply["NodeNames"] is None and reply["Nodes"] is None


@pytest.mark.parametrize("body,message", BAD_BODIES)
def test_bad_prioritize_input_is_http_400(ext, body, message):
    status, text = call(ext, "/prioritize", body)
    assert status == 400
    assert message in text.decode()


def test_bad_preempt_and_bind_input(ext):
    status, text = call(ext, "/preempt", b'{"Pod": {}, "NodeNameToMetaVictims": {"n": {"Pods": [{"UID": 7}]}}}')
    assert status == 400 and "NodeNameToMetaVictims['n'].Pods[0].UID: expected a string" in text.decode()
    status, reply = call(ext, "/bind", b'{"PodName": "p", "PodNamespace": "ns"}')
    assert status == 200 and reply["Error"] == "bad bind request: Node: missing or empty"


def test_not_synced_filter_error_prioritize_503():
    policy = UnderlayIPPolicy()
    ext = Extender(policy, ClusterCache(policy.pod_usage))
    status, reply = call(ext, "/filter", samples.filter_args(WANTS, NODES, True))
    assert status == 200 and "not ready" in reply["Error"]
    assert call(ext, "/prioritize", samples.filter_args(WANTS, NODES, True))[0] == 503
    assert call(ext, "/preempt", samples.preempt_args(WANTS, {}, True))[0] == 503
    assert call(ext, "/readyz", b"", method="GET")[0] == 503
    assert call(ext, "/healthz", b"", method="GET")[0] == 200


def test_too_large_body_answers(ext):
    status, reply = call(ext, "/filter", b"", too_large=True)
    assert status == 200 and "exceeds the extender's limit" in reply["Error"]
    assert call(ext, "/prioritize", b"", too_large=True)[0] == 413


def test_routing_methods_prefix_and_custom_verbs():
    ext = synced_extender(NODES, PODS, url_prefix="/scheduler/", verbs={"filter": "v1/filter", "prioritize": "",
                                                                       "preempt": "preempt", "bind": "bind"})
    assert call(ext, "/scheduler/v1/filter", samples.filter_args(WANTS, NODES, True))[0] == 200
    assert call(ext, "/scheduler/prioritize", samples.filter_args(WANTS, NODES, True))[0] == 404  # disabled
    assert call(ext, "/filter", b"{}")[0] == 404
    status, _ = call(ext, "/scheduler/v1/filter", b"", method="GET")
    assert status == 405
    assert call(ext, "/healthz", b"", method="POST")[0] == 405


def test_metrics_count_requests_and_decisions(ext):
    call(ext, "/filter", samples.filter_args(WANTS, NODES, True))
    call(ext, "/prioritize", b"{")
    _, text = call(ext, "/metrics", b"", method="GET")
    text = text.decode()
    assert 'extender_requests_total{code="200",verb="filter"} 1.0' in text
    assert 'extender_requests_total{code="400",verb="prioritize"} 1.0' in text
    assert 'extender_decisions_total{outcome="node_passed",verb="filter"} 2.0' in text
    assert 'extender_decisions_total{outcome="node_failed",verb="filter"} 2.0' in text
    assert 'extender_request_duration_seconds_count{verb="filter"} 1.0' in text
    assert "extender_cache_synced 1.0" in text


def test_nodenames_answers_follow_every_cache_change(ext):
    """NodeNames answers are reused per (verb, opt-in) until the cache changes: each
    kind of change must show up in the next answer."""
    args = samples.filter_args(WANTS, NODES, True)
    assert call(ext, "/filter", args)[1]["NodeNames"] == ["n-free", "n-default"]
    for i in range(3):  # fill n-free (capacity 4, 1 used) through watch events
        ext.cache.apply("pods", "ADDED", samples.pod(f"fill-{i}", node_name="n-free", phase="Running"))
    _, reply = call(ext, "/filter", args)
    assert reply["NodeNames"] == ["n-default"]
    assert reply["FailedNodes"]["n-free"] == "node n-free has no free underlay IP (4/4 used)"
    assert [h["Score"] for h in call(ext, "/prioritize", args)[1]] == [0, 0, 10, 0]
    ext.cache.apply("pods", "DELETED", samples.pod("fill-0", node_name="n-free"))
    assert call(ext, "/filter", args)[1]["NodeNames"] == ["n-free", "n-default"]
    ext.cache.assume("uid-assumed", "n-free", 1)  # a bind of ours, not yet seen by the watch
    assert call(ext, "/filter", args)[1]["NodeNames"] == ["n-default"]
    ext.cache.forget("uid-assumed")
    relabelled = samples.node("n-default", capacity=0, images=2)
    ext.cache.apply("nodes", "MODIFIED", relabelled)
    assert call(ext, "/filter", args)[1]["NodeNames"] == ["n-free"]
    assert call(ext, "/filter", samples.filter_args(PLAIN, NODES, True))[1]["NodeNames"] == \
        ["n-full", "n-free", "n-default", "n-bad"]

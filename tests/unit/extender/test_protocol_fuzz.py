"""Malformed and adversarial input never crashes the extender (hypothesis).

Every verb gets random bytes, random JSON values and mutated real requests
(fields replaced by values of other types, keys re-cased, nodes truncated). The
properties: handle() always returns, never a 500 (which would mean an exception
escaped a verb), with the protocol's status (filter/bind 200 + Error,
prioritize/preempt 200 or 400), and a 200 body always decodes as that verb's
reply type with scores in 0..10.
"""

from __future__ import annotations

import copy

import msgspec
import pytest
from testkit.extender_fixtures import call, small_cluster, synced_extender
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler_build.extender import protocol
from testkit import samples

NODES, PODS = small_cluster()
EXT = synced_extender(NODES, PODS)
VERBS = ["/filter", "/prioritize", "/preempt", "/bind"]

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                         st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20))
json_values = st.recursive(json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)), max_leaves=20)

FIELD_NAMES = list(protocol.FIELDS) + ["metadata", "labels", "items", "name", "uid", "spec", "nodeName"]


def recase(key: str, flips: list[bool]) -> str:
    return "".join(c.swapcase() if flips[i % len(flips)] else c for i, c in enumerate(key)) if flips else key


@st.composite
def mutated_requests(draw):
    """A real request with random damage at a random path."""
    kind = draw(st.sampled_from(["filter-list", "filter-names", "preempt-meta", "preempt-full", "bind"]))
    pod = samples.pod("fz", opt_in=draw(st.booleans()))
    if kind.startswith("filter"):
        req = samples.filter_args(pod, NODES, kind == "filter-names")
    elif kind.startswith("preempt"):
        req = samples.preempt_args(pod, {"n-full": PODS[:2], "n-free": PODS[2:3]}, kind == "preempt-meta")
    else:
        req = samples.bind_args(pod, "n-free")
    req = copy.deepcopy(req)  # the shared NODES/PODS must stay intact
    for _ in range(draw(st.integers(0, 4))):
        node = req
        # Walk down a random path, then replace, delete or re-case a key there.
        for _ in range(draw(st.integers(0, 4))):
            if isinstance(node, dict) and node:
                child = node[draw(st.sampled_from(sorted(node)))]
            elif isinstance(node, list) and node:
                child = node[draw(st.integers(0, len(node) - 1))]
            else:
                break
            if not isinstance(child, (dict, list)):
                break
            node = child
        if isinstance(node, dict) and node:
            key = draw(st.sampled_from(sorted(node)))
            action = draw(st.sampled_from(["replace", "delete", "recase", "add"]))
            if action == "replace":
                node[key] = draw(json_values)
            elif action == "delete":
                del node[key]
            elif action == "recase":
                node[recase(key, draw(st.lists(st.booleans(), min_size=1, max_size=4)))] = node.pop(key)
            else:
                node[draw(st.sampled_from(FIELD_NAMES))] = draw(json_values)
        elif isinstance(node, list) and node:
            node[draw(st.integers(0, len(node) - 1))] = draw(json_values)
    return msgspec.json.encode(req)


def check(path: str, body: bytes) -> None:
    status, reply = call(EXT, path, body)
    assert status != 500, (path, body[:300], reply)
    if path in ("/filter", "/bind"):
        assert status == 200
        assert isinstance(reply, dict) and isinstance(reply["Error"], str)
        if path == "/filter" and not reply["Error"]:
            if reply["NodeNames"] is not None:
                assert all(isinstance(n, str) for n in reply["NodeNames"])
            else:  # the request's node objects, echoed (whatever their keys' case)
                assert all(isinstance(n, dict) for n in reply["Nodes"]["items"])
    elif status == 200 and path == "/prioritize":
        assert all(0 <= h["Score"] <= 10 and isinstance(h["Host"], str) for h in reply)
    elif status == 200:
        for victims in reply["NodeNameToMetaVictims"].values():
            assert all(isinstance(p["UID"], str) for p in victims["Pods"])
    else:
        assert status == 400, (path, status, reply)


FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(path=st.sampled_from(VERBS), body=st.binary(max_size=200))
def test_random_bytes(path, body):
    check(path, body)


@FUZZ
@given(path=st.sampled_from(VERBS), value=json_values)
def test_random_json(path, value):
    check(path, msgspec.json.encode(value))


@FUZZ
@given(path=st.sampled_from(VERBS), body=mutated_requests())
def test_mutated_real_requests(path, body):
    check(path, body)


def agree(body: bytes) -> None:
    """Where the msgspec fast path accepts a request, the generic decoder reads the same. Only the
    fast path's own way of declining (protocol._Fallback) skips the comparison: any other exception
    is a bug of the fast path and fails."""
    try:
        fast = protocol._fast_extender_args(body)
    except protocol._Fallback:
        return  # the fast path declined; the reference decoder handles it
    generic = protocol.decode_extender_args_generic(body)
    assert (fast.pod.labels, fast.pod.uid, fast.names) == (generic.pod.labels, generic.pod.uid, generic.names)
    assert [n.labels for n in fast.nodes or []] == [n.labels for n in generic.nodes or []]


@FUZZ
@given(body=mutated_requests())
def test_fast_path_agrees_with_the_reference_decoder(body):
    agree(body)


def test_agree_fails_on_a_crash_or_a_disagreement_of_the_fast_path(monkeypatch):
    # Negative control: a fast path that raises anything but _Fallback, or reads other labels, fails.
    body = msgspec.json.encode(samples.filter_args(samples.pod("p"), NODES[:2], False))
    agree(body)
    real = protocol._fast_extender_args

    def crash(raw: bytes):
        raise TypeError("planted")

    monkeypatch.setattr(protocol, "_fast_extender_args", crash)
    with pytest.raises(TypeError, match="planted"):
        agree(body)

    def wrong_labels(raw: bytes):
        args = real(raw)
        args.pod.labels["app"] = "other"
        return args

    monkeypatch.setattr(protocol, "_fast_extender_args", wrong_labels)
    with pytest.raises(AssertionError):
        agree(body)

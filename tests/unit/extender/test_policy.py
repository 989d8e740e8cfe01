"""The underlay-IP policy, one rule per test (no server, no cache I/O)."""

from __future__ import annotations

import pytest

from scheduler_build.extender.policy import POLICIES, Unresolvable, UnderlayIPPolicy, get_policy
from scheduler_build.extender.protocol import NodeView, PodView

P = UnderlayIPPolicy()


def pod(labels=None, node="", phase="Running"):
    return PodView(name="p", namespace="ns", uid="u", labels=labels or {}, node_name=node, phase=phase)


WANTS = pod({"underlay.example.com/ip": "true"})


def node(name, capacity=None):
    labels = {} if capacity is None else {"underlay.example.com/capacity": str(capacity)}
    return NodeView(name, labels, None)


@pytest.mark.parametrize("value,counts", [("true", 1), ("True", 0), ("1", 0), ("yes", 0), ("", 0), (None, 0)])
def test_pod_opts_in_only_with_label_value_true(value, counts):
    labels = {} if value is None else {"underlay.example.com/ip": value}
    assert P.pod_usage(pod(labels)) == counts
    assert P.wants(pod(labels)) is bool(counts)


@pytest.mark.parametrize("label,capacity", [(None, 10), ("0", 0), ("4", 4), ("007", 7), ("12", 12),
                                            ("-1", None), ("+3", None), (" 3", None), ("3.0", None),
                                            ("ten", None), ("", None), ("٣", None), ("9" * 20, None)])
def test_capacity_label_parsing_matches_strconv(label, capacity):
    labels = {} if label is None else {"underlay.example.com/capacity": label}
    assert P.capacity(labels) == capacity


def test_filter_fails_full_nodes_with_readable_reason():
    failed = P.filter(WANTS, [node("n1", 10), node("n2", 10), node("n3")], {"n1": 10, "n2": 9, "n3": 11})
    assert failed == {"n1": "node n1 has no free underlay IP (10/10 used)",
                      "n3": "node n3 has no free underlay IP (11/10 used)"}
    assert not isinstance(failed["n1"], Unresolvable)  # preemption may free an IP


def test_filter_zero_capacity_node_never_fits():
    assert P.filter(WANTS, [node("z", 0)], {}) == {"z": "node z has no free underlay IP (0/0 used)"}


def test_filter_invalid_label_is_unresolvable():
    failed = P.filter(WANTS, [node("bad", "lots")], {})
    assert failed == {"bad": "node bad has an invalid underlay.example.com/capacity label 'lots'"}
    assert isinstance(failed["bad"], Unresolvable)


def test_filter_passes_everything_for_pods_that_do_not_opt_in():
    assert P.filter(pod(), [node("n1", 0), node("bad", "x")], {"n1": 5}) == {}


@pytest.mark.parametrize("capacity,used,score", [(10, 0, 10), (10, 1, 9), (10, 5, 5), (10, 9, 1), (10, 10, 0),
                                                 (10, 12, 0), (3, 1, 6), (3, 2, 3), (4, 3, 2), (0, 0, 0),
                                                 (1, 0, 10), (7, 0, 10)])
def test_prioritize_scales_free_ips_to_0_10(capacity, used, score):
    assert P.prioritize(WANTS, [node("n", capacity)], {"n": used}) == [("n", score)]


def test_prioritize_more_free_is_higher_and_keeps_order():
    nodes = [node("a", 10), node("b", 10), node("c", 10)]
    assert P.prioritize(WANTS, nodes, {"a": 8, "b": 2, "c": 5}) == [("a", 2), ("b", 8), ("c", 5)]


def test_prioritize_neutral_for_pods_that_do_not_opt_in_and_invalid_labels():
    assert P.prioritize(pod(), [node("a", 10)], {}) == [("a", 0)]
    assert P.prioritize(WANTS, [node("bad", "x")], {}) == [("bad", 0)]


def test_preempt_keeps_node_only_if_victims_free_an_ip():
    n = node("n", 2)
    assert P.preempt(WANTS, n, usage_after=1) is True
    assert P.preempt(WANTS, n, usage_after=2) is False
    assert P.preempt(WANTS, None, usage_after=0) is False  # unknown node
    assert P.preempt(pod(), None, usage_after=99) is True  # no opinion


def test_registry():
    assert isinstance(get_policy("underlay-ip"), UnderlayIPPolicy)
    assert set(POLICIES) == {"underlay-ip"}
    with pytest.raises(KeyError, match="unknown policy 'nope'; known: underlay-ip"):
        get_policy("nope")

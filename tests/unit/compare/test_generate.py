"""snapshot.generate (compare/generate.py): seeded, the requested share labelled, bad flags one line."""

from __future__ import annotations

import pytest

from scheduler_build.compare import generate, snapshot
from scheduler_build.errors import UserError

LABEL = "underlay.acme.example.com/needs-ip"


def test_the_same_request_writes_the_same_bytes_and_another_seed_does_not():
    one = generate.GenerateRequest.checked(nodes=20, pods=100, labels=(generate.parse_pod_label(f"{LABEL}=true:0.33"),))
    assert generate.generate(one).to_json() == generate.generate(one).to_json()
    other = generate.GenerateRequest.checked(nodes=20, pods=100, seed=2,
                                             labels=(generate.parse_pod_label(f"{LABEL}=true:0.33"),))
    assert generate.generate(other).to_json() != generate.generate(one).to_json()


def test_the_label_goes_to_its_share_of_the_pods_and_the_snapshot_reads_back():
    request = generate.GenerateRequest.checked(nodes=200, pods=1000,
                                               labels=(generate.parse_pod_label(f"{LABEL}=true:0.33"),
                                                       generate.parse_pod_label("team=a")))
    shot = generate.generate(request)
    labelled = [p for p in shot.pods if p["metadata"]["labels"].get(LABEL) == "true"]
    assert len(labelled) == 330 and all(p["metadata"]["labels"]["team"] == "a" for p in shot.pods)
    assert len(shot.nodes) == 200 and {n["metadata"]["labels"]["node.kubernetes.io/instance-type"] for n in shot.nodes} == {
        "small", "medium", "large"}
    assert snapshot.parse(__import__("json").loads(shot.to_json())).pods == shot.pods


@pytest.mark.parametrize("text, expected", [
    ("novalue", "not KEY=VALUE"), ("=v", "not KEY=VALUE"), ("k=v:1.5", r"not in \(0, 1\]"), ("k=v:0", r"not in \(0, 1\]"),
    ("k=v:half", "'half' is not a number"), ("bad key=v", "is not a valid label"), ("k=" + "v" * 64, "is not a valid label"),
])
def test_a_bad_pod_label_is_one_line(text, expected):
    with pytest.raises(UserError, match=expected):
        generate.parse_pod_label(text)


def test_a_label_with_a_colon_free_value_and_no_fraction_is_everyone():
    assert generate.parse_pod_label("a.example.com/x=y") == generate.PodLabel("a.example.com/x", "y", 1.0)


@pytest.mark.parametrize("given, expected", [
    (dict(nodes="ten", pods=1), "--nodes 'ten' is not a whole number"), (dict(nodes=0, pods=1), "--nodes 0 is out of range"),
    (dict(nodes=1, pods=-1), "--pods -1 is out of range"), (dict(nodes=1, pods=1, node_shapes="huge"), "--node-shapes 'huge'"),
    (dict(nodes=1, pods=1, pod_mix="gpu"), "--pod-mix 'gpu'"), (dict(nodes=1, pods=10 ** 9), "out of range"),
])
def test_bad_counts_and_mixes_are_refused(given, expected):
    with pytest.raises(UserError, match=expected):
        generate.GenerateRequest.checked(**given)

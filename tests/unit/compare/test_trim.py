"""What snapshot.take keeps (compare/trim.py): scheduling fields only; anonymize hashes names stably."""

from __future__ import annotations

import json

from scheduler_build.compare import snapshot, trim

POD = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web-1", "namespace": "shop", "uid": "u", "resourceVersion": "7", "labels": {"app": "web"},
                 "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{secret stuff}",
                                 "scheduler.alpha.kubernetes.io/critical-pod": ""},
                 "ownerReferences": [{"kind": "ReplicaSet", "name": "web", "uid": "x", "apiVersion": "apps/v1"}]},
    "spec": {"nodeName": "n1", "nodeSelector": {"disk": "ssd"}, "serviceAccountName": "sa",
             "containers": [{"name": "c", "image": "shop/web:1", "command": ["run"], "args": ["--password=hunter2"],
                             "env": [{"name": "TOKEN", "value": "hunter2"}], "envFrom": [{"secretRef": {"name": "s"}}],
                             "resources": {"requests": {"cpu": "1"}}}],
             "volumes": [{"name": "cfg", "configMap": {"name": "cfg"}}, {"name": "sec", "secret": {"secretName": "s"}},
                         {"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]},
    "status": {"phase": "Running", "podIP": "10.0.0.1"},
}
NODE = {"metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1", "disk": "ssd"},
                     "annotations": {"node.alpha.kubernetes.io/ttl": "0"}},
        "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}], "podCIDR": "10.0.0.0/24"},
        "status": {"allocatable": {"cpu": "4"}, "capacity": {"cpu": "4"}, "addresses": [{"address": "192.0.2.1"}],
                   "conditions": [{"type": "Ready", "status": "True", "message": "kubelet is posting"}]}}


def test_a_pod_keeps_what_scheduling_reads_and_nothing_secret():
    kept = trim.pod(POD)
    text = json.dumps(kept)
    for gone in ("hunter2", "TOKEN", "secretRef", "last-applied", "configMap", "podIP", "uid", "serviceAccountName"):
        assert gone not in text, gone
    assert kept["metadata"]["annotations"] == {"scheduler.alpha.kubernetes.io/critical-pod": "",
                                               trim.OWNER_KIND: "ReplicaSet"}
    assert kept["spec"]["nodeSelector"] == {"disk": "ssd"} and kept["spec"]["nodeName"] == "n1"
    assert kept["spec"]["volumes"] == [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    assert kept["spec"]["containers"] == [{"name": "c", "image": "shop/web:1", "resources": {"requests": {"cpu": "1"}}}]


def test_a_node_keeps_resources_taints_and_condition_states():
    kept = trim.node(NODE)
    assert kept["spec"] == {"taints": [{"key": "k", "effect": "NoSchedule"}]}
    assert kept["status"] == {"allocatable": {"cpu": "4"}, "capacity": {"cpu": "4"},
                              "conditions": [{"type": "Ready", "status": "True"}]}
    assert "annotations" not in kept["metadata"]


def test_anonymize_hashes_names_stably_and_keeps_the_pod_on_its_node():
    objects = {"nodes": [trim.node(NODE)], "pods": [trim.pod(POD)],
               "namespaces": [{"metadata": {"name": "shop"}}, {"metadata": {"name": "default"}}]}
    one, two = trim.anonymize(objects), trim.anonymize(objects)
    assert one == two
    text = json.dumps(one)
    for gone in ("web-1", "shop", "\"n1\"", "ssd"):
        assert gone not in text, gone
    node, pod = one["nodes"][0], one["pods"][0]
    assert pod["spec"]["nodeName"] == node["metadata"]["name"] == node["metadata"]["labels"]["kubernetes.io/hostname"]
    assert pod["spec"]["nodeSelector"]["disk"] == node["metadata"]["labels"]["disk"]  # the selector still matches
    assert pod["metadata"]["namespace"] == one["namespaces"][0]["metadata"]["name"]
    assert one["namespaces"][1]["metadata"]["name"] == "default"
    doc = {"apiVersion": snapshot.API_VERSION, "kind": snapshot.KIND, **one}
    assert len(snapshot.parse(doc).pods) == 1  # an anonymized snapshot is a valid one

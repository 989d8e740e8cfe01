"""The snapshot format read back strictly (compare/snapshot.py): every fault is one line naming the object
and the field; kube-scheduler-simulator's export is read too."""

from __future__ import annotations

import copy
import json

import pytest

from scheduler_build.compare import generate, snapshot
from scheduler_build.errors import UserError


def _doc(nodes: int = 2, pods: int = 3) -> dict:
    shot = generate.generate(generate.GenerateRequest.checked(nodes=nodes, pods=pods))
    return json.loads(shot.to_json())


def test_a_generated_snapshot_reads_back_the_same(tmp_path):
    doc = _doc()
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    shot = snapshot.load(path)
    assert [n["metadata"]["name"] for n in shot.nodes] == ["node-00000", "node-00001"]
    assert [snapshot.pod_key(p) for p in shot.pods] == ["snapshot/pod-000000", "snapshot/pod-000001", "snapshot/pod-000002"]
    assert json.loads(shot.to_json()) == doc


def _fault(doc: object) -> str:
    with pytest.raises(UserError) as caught:
        snapshot.parse(doc, "s.json")
    message = str(caught.value)
    assert "\n" not in message and message.startswith("s.json: ")
    return message


@pytest.mark.parametrize("edit, expected", [
    (lambda d: d.update(apiVersion="scheduler-build.io/v9"), "apiVersion/kind: must be scheduler-build.io/v1/Snapshot"),
    (lambda d: d.update(extra=1), "key 'extra': is not a snapshot field"),
    (lambda d: d.update(nodes={}), "nodes: must be a list, got dict"),
    (lambda d: d["nodes"].append(7), "nodes[2]: must be an object, got int"),
    (lambda d: d["nodes"][1]["metadata"].update(name="Node_1"), "nodes[1]: metadata.name: 'Node_1' is not a DNS-1123"),
    (lambda d: d["nodes"][0]["status"]["allocatable"].update(cpu="lots"),
     "nodes[0] (node-00000): status.allocatable.cpu: 'lots' is not a quantity"),
    (lambda d: d["nodes"][0]["status"].pop("allocatable"), "nodes[0] (node-00000): status.allocatable: missing"),
    (lambda d: d["nodes"][0]["spec"].update(taints=[{"key": "k", "effect": "Sometimes"}]),
     "nodes[0] (node-00000): spec.taints[0]: needs a key and an effect"),
    (lambda d: d["nodes"].append(copy.deepcopy(d["nodes"][0])), "nodes[2] (node-00000): appears twice"),
    (lambda d: d["pods"][1]["spec"].update(containers=[]),
     "pods[1] (snapshot/pod-000001): spec.containers: must be a non-empty list"),
    (lambda d: d["pods"][2]["spec"]["containers"][0]["resources"]["requests"].update(memory="1 GB"),
     "pods[2] (snapshot/pod-000002): spec.containers[0].resources.requests.memory: '1 GB' is not a quantity"),
    (lambda d: d["pods"][0]["spec"].update(nodeName="elsewhere"),
     "pods[0] (snapshot/pod-000000): spec.nodeName: 'elsewhere' is not a node of the snapshot"),
    (lambda d: d["pods"][0]["metadata"].update(namespace="Bad NS"), "metadata.namespace: 'Bad NS' is not a DNS-1123 label"),
    (lambda d: d["pods"][0]["metadata"].update(labels={"a": 1}), "metadata.labels: must map strings to strings"),
    (lambda d: d["pods"][0].update(spec="x"), "pods[0] (snapshot/pod-000000): spec: must be an object"),
])
def test_each_malformed_snapshot_is_one_line_naming_object_and_field(edit, expected):
    doc = _doc()
    edit(doc)
    assert expected in _fault(doc)


def test_hostile_documents_are_refused_without_a_traceback(tmp_path):
    assert "must be an object, got list" in _fault([1, 2])
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(UserError, match="not JSON"):
        snapshot.load(deep)
    garbage = tmp_path / "garbage.json"
    garbage.write_bytes(b"\xff\xfe{")
    with pytest.raises(UserError, match="not JSON"):
        snapshot.load(garbage)
    with pytest.raises(UserError, match="No such file"):
        snapshot.load(tmp_path / "missing.json")


def test_kube_scheduler_simulators_export_is_read():
    doc = _doc()
    export = {"pods": doc["pods"], "nodes": doc["nodes"], "pvs": [], "pvcs": [], "storageClasses": [],
              "priorityClasses": [], "namespaces": doc["namespaces"], "schedulerConfig": {"profiles": []}}
    shot = snapshot.parse(export, "export.json")
    assert shot.source == {"format": "kube-scheduler-simulator"} and len(shot.pods) == 3 and len(shot.nodes) == 2
    export["extra"] = []
    assert "key 'extra': is not a field of kube-scheduler-simulator's export" in _fault(export)


def test_requests_count_init_containers_and_overhead_as_the_scheduler_does():
    pod = {"spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": "250m", "memory": "1Gi"}}},
                                   {"name": "b", "resources": {"requests": {"cpu": "250m"}}}],
                    "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "2", "memory": "1Mi"}}}],
                    "overhead": {"cpu": "100m"}}}
    assert snapshot.requests(pod) == {"cpu": pytest.approx(2.1), "memory": pytest.approx(2 ** 30)}

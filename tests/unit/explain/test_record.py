"""explain's document from recorded annotations: fixtures a real debuggable scheduler wrote, and hostile ones."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import jsonschema
import pytest

from scheduler_build.explain import record, text

HERE = Path(__file__).resolve().parent
SCHEMA = json.loads((HERE.parents[2] / "docs" / "explain.schema.json").read_text())
FIXTURES = sorted((HERE / "fixtures").glob("*.json"))


def load(name: str) -> dict:
    return json.loads((HERE / "fixtures" / name).read_text())


def valid(doc: dict) -> dict:
    jsonschema.validate(doc, SCHEMA)
    return doc


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.stem)
def test_every_fixture_validates_against_the_documented_schema(fixture):
    for top in (0, 1, 3, 100):
        valid(record.explain(json.loads(fixture.read_text()), top))


def test_the_schema_rejects_a_document_it_does_not_describe():
    doc = record.explain(load("bound.json"))
    doc["topNodes"][0]["total"] = "high"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, SCHEMA)
    doc = record.explain(load("bound.json"))
    doc["surprise"] = 1
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, SCHEMA)


def test_bound_pod_names_the_chosen_node_its_scores_and_every_filtered_node():
    pod = load("bound.json")
    doc = valid(record.explain(pod, top=3))
    assert doc["outcome"] == "bound" and not doc["stale"]
    assert doc["chosenNode"] == pod["spec"]["nodeName"]
    best = doc["topNodes"][0]
    assert best["chosen"] and best["node"] == doc["chosenNode"]
    assert best["total"] == sum(p["weighted"] for p in best["plugins"])
    for p in best["plugins"]:
        assert p["weighted"] == p["normalized"] * p["weight"]
    assert [n["total"] for n in doc["topNodes"]] == sorted((n["total"] for n in doc["topNodes"]), reverse=True)
    assert {f["plugin"] for f in doc["filteredNodes"]} >= {"UnderlayIPLimit"}
    out = text.render(doc)
    assert f"bound to {doc['chosenNode']}" in out and "<- chosen" in out
    for f in doc["filteredNodes"]:
        assert f["node"] in out and f["reason"] in out


def test_pending_pod_groups_rejections_by_plugin_and_reason():
    doc = valid(record.explain(load("pending.json")))
    assert doc["outcome"] == "unschedulable" and doc["chosenNode"] is None and not doc["topNodes"]
    assert sum(g["count"] for g in doc["rejections"]) == doc["rejectedNodes"]
    out = text.render(doc)
    rejecting = {f["node"]: f["plugin"] for f in doc["filteredNodes"]}
    assert sorted(rejecting.values()) == ["NodeResourcesFit", "UnderlayIPLimit", "UnderlayIPLimit"]
    assert "2 nodes: UnderlayIPLimit:" in out and "1 node: NodeResourcesFit: Insufficient cpu" in out
    for f in doc["filteredNodes"]:
        assert f["node"] in out and f["reason"] in out
    assert "postfilter: DefaultPreemption" in out


def test_nodes_sharing_a_reason_read_as_one_line():
    pod = load("pending.json")
    ann = pod["metadata"]["annotations"]
    ann[record.SIMULATOR + "filter-result"] = json.dumps({n: {"UnderlayIPLimit": "node full (10/10 IPs)"} for n in "abc"})
    rec = json.loads(ann[record.RECORD])
    rec["rejections"] = [{"plugin": "UnderlayIPLimit", "reason": "node full (10/10 IPs)", "nodes": 5}]
    rec["rejectedNodes"] = 5
    ann[record.RECORD] = json.dumps(rec)
    out = text.render(valid(record.explain(pod)))
    assert "5 nodes: UnderlayIPLimit: node full (10/10 IPs) (a, b, c)" in out
    assert "(2 rejected node(s) not named" in out


def test_a_pod_without_a_record_gets_one_line_saying_what_to_deploy():
    pod = load("bound.json")
    pod["metadata"]["annotations"] = {"unrelated": "x"}
    doc = valid(record.explain(pod))
    assert doc["recorded"] is False and set(doc) == {"format", "pod", "recorded", "hint"}
    out = text.render(doc)
    assert len(out.splitlines()) == 1 and "--debuggable" in out


def test_stale_record_is_flagged_when_the_pod_is_bound_elsewhere():
    pod = load("bound.json")
    pod["spec"]["nodeName"] = "somewhere-else"
    doc = valid(record.explain(pod))
    assert doc["stale"] and "earlier attempt" in text.render(doc)


HOSTILE = [
    "not json", "[1, 2]", "null", "123", '{"a": "b"}', '{"n": {"p": ["x"]}}', "{" * 5000 + "}" * 5000,
    json.dumps({f"n{i}": {"p": "9" * 30} for i in range(6000)}),
]


@pytest.mark.parametrize("raw", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_annotations_are_dropped_with_a_warning_never_a_traceback(raw):
    pod = load("bound.json")
    for key in list(pod["metadata"]["annotations"]):
        pod["metadata"]["annotations"][key] = raw
    doc = valid(record.explain(pod, top=5))
    assert doc["recorded"] is True
    text.render(doc)


@pytest.mark.parametrize("pod", [None, [], "x", {"metadata": "x"}, {"metadata": {"annotations": ["x"]}},
                                 {"metadata": {"annotations": {record.RECORD: "{}"}}, "spec": 3}])
def test_malformed_pods_still_give_a_valid_document(pod):
    valid(record.explain(copy.deepcopy(pod)))


def _with_extender(pod: dict, name: str = "https://ext.example:8888") -> dict:
    """bound.json plus what the recorder writes for one filter+prioritize extender of weight 2 (scores x 10,
    recorded_plugins.go extenderResults): its score of the top nodes, one node it removed, its counts.
    Synthesized in the recorder's shape; the real recorder writes it on the node test's extender."""
    pod = copy.deepcopy(pod)
    ann = pod["metadata"]["annotations"]
    key = f"extender {name}"
    rec = json.loads(ann[record.RECORD])
    scores, finals = json.loads(ann[record.SIMULATOR + "score-result"]), json.loads(ann[record.SIMULATOR + "finalscore-result"])
    for i, node in enumerate(sorted(scores)):
        scores[node][key], finals[node][key] = str(i + 3), str((i + 3) * 20)
    filters = json.loads(ann[record.SIMULATOR + "filter-result"])
    filters["gone-node"] = {key: "no underlay IP left"}
    rec["weights"][key] = 20
    rec["rejections"].append({"plugin": key, "reason": "no underlay IP left", "nodes": 1})
    rec["rejectedNodes"] += 1
    rec["extenders"] = {key: {"passed": 2, "failed": 1, "error": "", "scored": 2, "weight": 20}}
    ann[record.SIMULATOR + "score-result"], ann[record.SIMULATOR + "finalscore-result"] = json.dumps(scores), json.dumps(finals)
    ann[record.SIMULATOR + "filter-result"], ann[record.RECORD] = json.dumps(filters), json.dumps(rec)
    return pod


def test_extender_verdicts_and_scores_are_shown_beside_the_plugins():
    doc = valid(record.explain(_with_extender(load("bound.json")), top=3))
    assert doc["extenders"] == [{"extender": "https://ext.example:8888", "passed": 2, "failed": 1, "scored": 2,
                                 "weight": 20, "error": ""}]
    for node in doc["topNodes"]:
        (ext,) = [p for p in node["plugins"] if p["plugin"] == "extender https://ext.example:8888"]
        assert ext["weighted"] == ext["raw"] * 20 and ext["normalized"] == ext["raw"] and ext["weight"] == 20
        assert node["total"] == sum(p["weighted"] for p in node["plugins"])  # the extender's part of the total
    assert {"node": "gone-node", "plugin": "extender https://ext.example:8888", "reason": "no underlay IP left"} \
        in doc["filteredNodes"]
    out = text.render(doc)
    assert "extender https://ext.example:8888: filter kept 2, removed 1; scored 2 (weight 20)" in out
    assert "1 node: extender https://ext.example:8888: no underlay IP left (gone-node)" in out
    assert valid(record.explain(load("bound.json")))["extenders"] == []  # negative control: none called, none shown


def test_a_malformed_extender_entry_is_dropped_not_trusted():
    pod = _with_extender(load("bound.json"))
    rec = json.loads(pod["metadata"]["annotations"][record.RECORD])
    rec["extenders"] = {"extender x": "not a mapping", "extender y": {"passed": "many", "error": 5}}
    pod["metadata"]["annotations"][record.RECORD] = json.dumps(rec)
    doc = valid(record.explain(pod))
    assert doc["extenders"] == [{"extender": "y", "passed": None, "failed": None, "scored": None, "weight": None,
                                 "error": "5"}]


def test_a_pod_that_did_not_opt_in_is_told_apart_from_one_without_the_recorder():
    """Told the spec's debuggable.podLabel: no label -> not opted in (the recorder skipped it by design); the
    label there -> a build without the recorder; not told -> both causes named."""
    pod = load("bound.json")
    pod["metadata"]["annotations"] = {}
    pod["metadata"]["labels"] = {"app": "x"}
    not_opted = valid(record.explain(pod, pod_label="example.com/explain"))["hint"]
    assert "does not carry the label example.com/explain" in not_opted and "without the recorder" not in not_opted
    pod["metadata"]["labels"]["example.com/explain"] = ""
    assert "without the recorder" in valid(record.explain(pod, pod_label="example.com/explain"))["hint"]
    assert "without the recorder" in valid(record.explain(pod, pod_label=""))["hint"]  # every pod is recorded
    unknown = valid(record.explain(pod))["hint"]
    assert "without the recorder" in unknown and "debuggable.podLabel" in unknown


def test_control_characters_in_names_and_reasons_never_reach_the_terminal(monkeypatch):
    pod = load("bound.json")
    pod["metadata"]["name"] = "p\x1b]0;owned\x07"
    ann = pod["metadata"]["annotations"]
    rec = json.loads(ann[record.RECORD])
    rec["rejections"] = [{"plugin": "Evil\x1b[2J", "reason": "line\nbreak\r", "nodes": 1}]
    rec["rejectedNodes"] = 1
    ann[record.RECORD] = json.dumps(rec)
    out = text.render(valid(record.explain(pod)))
    assert not any(ord(ch) < 32 and ch != "\n" or 0x7f <= ord(ch) <= 0x9f for ch in out)
    assert "p?]0;owned?" in out and "Evil?[2J" in out and "line?break?" in out
    # The negative control: with the filter planted away, the escape reaches the output (and this check sees it).
    monkeypatch.setattr(record, "_CONTROL", re.compile(r"(?!)"))
    assert "\x1b" in text.render(record.explain(pod))

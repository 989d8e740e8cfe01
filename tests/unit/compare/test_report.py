"""The report (compare/report.py): which pods moved or changed fit, utilisation maths, the plugin names."""

from __future__ import annotations

import math

import pytest

from scheduler_build.compare import generate, report
from scheduler_build.compare.replay import Outcome
from scheduler_build.compare.side import SideResult

SHOT = generate.generate(generate.GenerateRequest.checked(nodes=3, pods=4, node_shapes="small", pod_mix="batch", seed=3))
KEYS = [f"snapshot/pod-00000{i}" for i in range(4)]
REASON = ("0/3 nodes are available: 3 node(s) had no free underlay IP. "
          "[unschedulable plugins: NodeResourcesFit, UnderlayIPLimit]")


def _side(label: str, placement: dict[str, str], reasons: dict[str, str] | None = None, seconds: float = 2.0) -> SideResult:
    outcomes = {k: Outcome(node=placement.get(k, "")) for k in KEYS}
    for k, reason in (reasons or {}).items():
        outcomes[k] = Outcome(reason=reason, unschedulable=True)
    return SideResult(label, "v1.36.3", "v1.36.3", outcomes, list(KEYS), seconds, 2048, 3 * 1024 * 1024)


def _build(a, b) -> dict:
    return report.build(SHOT, a, b, snapshot_path="s.json", sources=("x.yaml", "y.yaml"), pending_only=False,
                        tie_breaking="by node name")


def test_the_same_placement_reports_nothing():
    placement = dict(zip(KEYS, ["node-00000", "node-00001", "node-00000", "node-00002"]))
    doc = _build(_side("a", placement), _side("b", placement))
    assert doc["summary"] == {"pods": 4, "moved": 0, "newly_unschedulable": 0, "newly_scheduled": 0}
    assert {"moved", "newly_unschedulable", "newly_scheduled", "sides", "pods"} <= set(doc)
    assert doc["sides"]["a"]["peak_rss_mib"] == 2.0 and doc["sides"]["a"]["apiserver_peak_rss_mib"] == 3072.0
    assert [line.split() for line in report.text(doc).splitlines() if "peak MiB" in line] == [
        ["scheduler", "peak", "MiB", "2.0", "2.0"], ["apiserver", "peak", "MiB", "3072.0", "3072.0"]]


def test_moves_and_changes_of_fit_are_told_apart_with_the_plugins():
    a = _side("a", dict(zip(KEYS, ["node-00000", "node-00001", "node-00000", ""])), {KEYS[3]: "0/3 nodes are available"})
    b = _side("b", {KEYS[0]: "node-00002", KEYS[1]: "node-00001", KEYS[3]: "node-00000"}, {KEYS[2]: REASON})
    doc = _build(a, b)
    assert doc["moved"] == [{"pod": KEYS[0], "a": "node-00000", "b": "node-00002"}]
    assert doc["newly_unschedulable"] == [{"pod": KEYS[2], "a": "node-00000", "reason": REASON,
                                           "plugins": ["NodeResourcesFit", "UnderlayIPLimit"]}]
    assert doc["newly_scheduled"][0]["pod"] == KEYS[3] and doc["newly_scheduled"][0]["a_plugins"] == []
    text = report.text(doc)
    assert "moved: 1   newly unschedulable: 1   newly scheduled: 1" in text
    assert f"{KEYS[2]} (was on node-00000): NodeResourcesFit, UnderlayIPLimit:" in text


def test_utilisation_mean_stddev_max_and_nodes_used():
    # batch pods on small nodes (8 CPU): cpu requests of the generated pods
    placement = {KEYS[0]: "node-00000", KEYS[1]: "node-00000"}
    cpu = [sum(float(p["spec"]["containers"][0]["resources"]["requests"]["cpu"]) for p in SHOT.pods[:2]) / 8, 0.0, 0.0]
    got = report.utilisation(SHOT, placement)
    mean = sum(cpu) / 3
    assert got["cpu"]["mean"] == pytest.approx(mean) and got["cpu"]["max"] == pytest.approx(cpu[0])
    assert got["cpu"]["stddev"] == pytest.approx(math.sqrt(sum((c - mean) ** 2 for c in cpu) / 3))
    assert got["nodes_used"] == {"count": 1, "of": 3}
    assert report.utilisation(SHOT, {})["cpu"] == {"mean": 0.0, "stddev": 0.0, "max": 0.0}


def test_pods_per_second_and_a_reason_without_the_mark():
    doc = _build(_side("a", {}, seconds=2.0), _side("b", {}, seconds=0.0))
    assert doc["sides"]["a"]["pods_per_second"] == 2.0 and doc["sides"]["b"]["pods_per_second"] is None
    assert report.plugins_of("0/3 nodes are available: 3 Insufficient cpu.") == []
    assert report.plugins_of("x [unschedulable plugins: A]") == ["A"]


def test_the_json_follows_its_documented_schema_and_a_planted_fault_does_not():
    import json
    from pathlib import Path

    import jsonschema

    schema = json.loads((Path(__file__).resolve().parents[3] / "docs/compare.schema.json").read_text())
    a = _side("a", dict(zip(KEYS, ["node-00000", "node-00001", "node-00000", ""])), {KEYS[3]: "x"})
    b = _side("b", {KEYS[0]: "node-00002", KEYS[1]: "node-00001", KEYS[3]: "node-00000"}, {KEYS[2]: REASON})
    doc = json.loads(json.dumps(_build(a, b)))
    jsonschema.validate(doc, schema)
    doc["moved"][0]["extra"] = 1
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema)

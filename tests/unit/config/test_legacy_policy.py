"""config.migrate-policy: legacy Policy -> v1 configuration (unit; the binary check is integration)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from scheduler_build import safeyaml
from scheduler_build.config import legacy_policy as policy
from scheduler_build.errors import UserError

POLICIES = Path(__file__).resolve().parents[2] / "data" / "config" / "policies"


def migrate_file(name: str, **kw):
    raw, kind = policy.load(POLICIES / name)
    return policy.migrate(raw, **kw), kind


def plugin_set(profile, point, kind="enabled"):
    return [e["name"] for e in profile["plugins"].get(point, {}).get(kind, [])]


def test_full_policy_predicates_priorities_extenders():
    m, kind = migrate_file("full.json")
    assert kind == "Policy"
    cfg = m.config
    assert cfg["apiVersion"] == "kubescheduler.config.k8s.io/v1" and cfg["kind"] == "KubeSchedulerConfiguration"
    (profile,) = cfg["profiles"]
    assert profile["schedulerName"] == "default-scheduler"
    multi = {e["name"]: e.get("weight") for e in profile["plugins"]["multiPoint"]["enabled"]}
    # predicates -> filters
    for plugin in ("NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeAffinity", "NodeName", "NodeVolumeLimits"):
        assert plugin in multi
    # mandatory filters the legacy scheduler always ran
    assert "NodeUnschedulable" in multi and "TaintToleration" in multi
    # priorities -> weights
    assert multi["NodeResourcesFit"] == 1 and multi["NodeResourcesBalancedAllocation"] == 1 and multi["InterPodAffinity"] == 2
    assert profile["plugins"]["multiPoint"]["disabled"] == [{"name": "*"}]
    # InterPodAffinity was a priority only: it must not filter; NodeAffinity a predicate only: no score
    assert "InterPodAffinity" in plugin_set(profile, "filter", "disabled")
    assert "NodeAffinity" in plugin_set(profile, "score", "disabled")
    assert {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 10}} in profile["pluginConfig"]
    (ext,) = cfg["extenders"]
    assert ext == {"urlPrefix": "http://127.0.0.1:8888/scheduler", "filterVerb": "filter",
                   "prioritizeVerb": "prioritize", "bindVerb": "bind", "weight": 5, "enableHTTPS": False,
                   "httpTimeout": "30s", "nodeCacheCapable": True,
                   "managedResources": [{"name": "acme.com/underlay-ip", "ignoredByScheduler": True}],
                   "ignorable": True}
    text = "\n".join(m.warnings)
    for gone in ("CheckNodeMemoryPressure", "CheckNodeLabelPresence", "ServiceSpreadingPriority", "EqualPriority",
                 "MostRequestedPriority", "MaxEBSVolumeCount"):
        assert gone in text, gone
    # the warnings are kept in the output file too
    out = m.text()
    assert out.count("# WARNING:") == len(m.warnings)
    assert yaml.safe_load(out) == cfg


def test_configmap_with_go_field_names_and_nanosecond_timeout():
    m, kind = migrate_file("underlay-configmap.yaml")
    assert kind == "ConfigMap"
    (ext,) = m.config["extenders"]
    assert ext["urlPrefix"] == "https://underlay-extender.kube-system.svc:8443/"
    assert ext["enableHTTPS"] is True and "enableHttps" not in ext
    assert ext["httpTimeout"] == "1500ms"
    assert ext["tlsConfig"] == {"insecure": False, "caFile": "/etc/extender/ca.crt", "serverName": "underlay-extender"}
    assert ext["weight"] == 1 and any("extenders[0].weight" in w for w in m.warnings)
    assert any("UnderlayIPPredicate" in w for w in m.warnings)  # a custom predicate is never silently dropped
    assert any("SelectorSpreadPriority" in w for w in m.warnings)


def test_priorities_only_keeps_default_filters_and_maps_requested_to_capacity():
    m, _ = migrate_file("priorities.yaml")
    (profile,) = m.config["profiles"]
    assert "multiPoint" not in profile["plugins"]
    assert profile["plugins"]["score"] == {"disabled": [{"name": "*"}], "enabled": [
        {"name": "NodeResourcesFit", "weight": 2}, {"name": "ImageLocality", "weight": 1}]}
    fit = [c for c in profile["pluginConfig"] if c["name"] == "NodeResourcesFit"][0]["args"]["scoringStrategy"]
    assert fit["type"] == "RequestedToCapacityRatio"
    assert fit["requestedToCapacityRatio"]["shape"] == [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
    assert fit["resources"] == [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}]
    assert m.warnings == []


def test_empty_policy_means_the_defaults():
    m = policy.migrate({"kind": "Policy", "apiVersion": "v1"})
    assert m.config["profiles"] == [{"schedulerName": "default-scheduler"}]


@pytest.mark.parametrize("ns,expected", [
    (30 * 10**9, "30s"), (1500 * 10**6, "1500ms"), (90 * 10**9, "90s"), (2 * 3600 * 10**9, "2h"),
    (5 * 60 * 10**9, "5m"), (250 * 10**3, "250us"), (7, "7ns")])
def test_duration(ns, expected):
    assert policy.duration(ns) == expected


def test_malformed_json_names_line_and_column():
    """The trailing comma named at the comma, on every Python (3.13's position and words)."""
    with pytest.raises(UserError) as info:
        policy.load(POLICIES / "malformed.json")
    assert "line 4, column 25: invalid JSON: Illegal trailing comma before end of array" in str(info.value)
    assert "malformed.json" in str(info.value)


@pytest.mark.parametrize("text, message, pos", [
    ('[1, 2,]', "Illegal trailing comma before end of array", 5),
    ('{"a": 1 ,\n }', "Illegal trailing comma before end of object", 8),
    ('[1, 2', "Expecting ',' delimiter", 5),  # other errors as json reports them
    ('[,]', "Expecting value", 1),
])
def test_json_errors_are_the_same_on_every_python(text, message, pos):
    with pytest.raises(json.JSONDecodeError) as info:
        safeyaml.load_json(text)
    assert (info.value.msg, info.value.pos) == (message, pos)


def test_malformed_json_inside_a_configmap(tmp_path):
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "p"},
          "data": {"policy.cfg": '{"kind": "Policy",\n "predicates": [{"name": "HostName"}}'}}
    path = tmp_path / "cm.yaml"
    path.write_text(yaml.safe_dump(cm))
    with pytest.raises(UserError) as info:
        policy.load(path)
    assert "data['policy.cfg']: line 2, column" in str(info.value)


def test_malformed_yaml_names_line_and_column(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("kind: Policy\npredicates:\n  - name: [HostName\n")
    with pytest.raises(UserError, match=r"line \d+, column \d+"):
        policy.load(path)


@pytest.mark.parametrize("doc,match", [
    ({"kind": "Policy", "predicates": "HostName"}, "predicates: must be a list"),
    ({"kind": "Policy", "predicates": [{"nam": "HostName"}]}, r"predicates\[0\]: must be a mapping with a name"),
    ({"kind": "Policy", "priorities": [{"name": "ImageLocalityPriority", "weight": -1}]}, r"priorities\[0\].weight"),
    ({"kind": "Policy", "extenders": [{"filterVerb": "f"}]}, r"extenders\[0\]: has no urlPrefix"),
    ({"kind": "Policy", "extenders": [{"urlPrefix": "http://a", "httpTimeout": "soon"}]}, r"extenders\[0\].httpTimeout"),
    ({"kind": "Policy", "extenders": [{"urlPrefix": "http://a", "bindVerb": "b"}, {"urlPrefix": "http://b", "bindVerb": "b"}]},
     r"extenders\[1\].bindVerb: only one extender may bind"),
    ({"kind": "Policy", "hardPodAffinitySymmetricWeight": 101}, "hardPodAffinitySymmetricWeight"),
    ({"kind": "Deployment"}, "not Policy"),
])
def test_invalid_policies(tmp_path, doc, match):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UserError, match=match):
        raw, _ = policy.load(path)
        policy.migrate(raw)


def test_configmap_key_choice(tmp_path):
    cm = {"kind": "ConfigMap", "data": {"a": "{}", "b": "{}"}}
    path = tmp_path / "cm.json"
    path.write_text(json.dumps(cm))
    with pytest.raises(UserError, match="several keys"):
        policy.load(path)
    assert policy.load(path, "b")[1] == "ConfigMap"


def test_unknown_fields_are_warnings_not_silent():
    m = policy.migrate({"kind": "Policy", "extenders": [{"urlPrefix": "http://a", "filterVerb": "f", "apiVersion": "x"}],
                        "algorithmSource": {}})
    assert any("algorithmSource" in w for w in m.warnings)
    assert any("extenders[0].apiVersion" in w for w in m.warnings)

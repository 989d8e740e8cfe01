"""config.schedulerconfig: the one builder of the v1 configuration and extender entries (pure, unit)."""

from __future__ import annotations

from pathlib import Path

import yaml

from scheduler_build import spec as spec_mod
from scheduler_build.config import render, schedulerconfig

SPECS = Path(__file__).resolve().parents[2] / "data" / "config" / "specs"


def test_extender_entry_defaults_filter_and_prioritize_over_plain_http():
    entry = schedulerconfig.extender_entry("http://127.0.0.1:1", node_cache_capable=True)
    assert entry == {"urlPrefix": "http://127.0.0.1:1", "filterVerb": "filter", "prioritizeVerb": "prioritize",
                     "weight": 1, "enableHTTPS": False, "httpTimeout": "5s", "nodeCacheCapable": True,
                     "ignorable": False}


def test_extender_entry_leaves_out_empty_verbs_and_weight_without_prioritize():
    entry = schedulerconfig.extender_entry("http://x", prioritize_verb="", bind_verb="bind", weight=5,
                                           managed_resources=({"name": "a/b", "ignoredByScheduler": True},))
    assert "prioritizeVerb" not in entry and "weight" not in entry
    assert entry["bindVerb"] == "bind" and entry["managedResources"] == [{"name": "a/b", "ignoredByScheduler": True}]


def test_optional_fields_are_left_out_when_unset():
    config = schedulerconfig.scheduler_configuration(profiles=[{"schedulerName": "s"}], leader_election={})
    assert config == {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                      "leaderElection": {}, "profiles": [{"schedulerName": "s"}]}


def test_rendered_config_is_the_builders_dict():
    for path in sorted(SPECS.glob("*.yaml")):
        try:
            spec = spec_mod.load(path)
        except Exception:  # noqa: BLE001 - invalid specs are other tests' business
            continue
        assert yaml.safe_load(render.config_text(spec)) == schedulerconfig.for_spec(spec), path
        if spec.reference_extender.enabled:
            assert schedulerconfig.extenders(spec)[-1]["urlPrefix"] == spec_mod.reference_extender_url(spec)

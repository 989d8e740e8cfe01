"""featureGates: the spec field, its rendering everywhere the scheduler runs, and the verdicts read from the
binary's own output. The binary's words below are component-base's (featuregate/feature_gate.go, the text
v1.36.3 and v1.37.2 print; tests/integration/test_feature_gates.py runs the real binaries)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bench.perf import variants
from scheduler_build import spec as spec_mod
from scheduler_build.config import chart, feature_gates, render
from scheduler_build.errors import UserError
from scheduler_build.resolve import vocabulary

SPEC = """name: gates
version: 0.1.0
kubernetes: {{version: "{version}"}}
featureGates: {gates}
"""
# What the binaries print (klog's structured form for the warning; the error as cobra shows a flag's).
UNKNOWN_137 = ('Error: invalid argument "SchedulerQueueingHints=true" for "--feature-gates" flag: '
               'unrecognized feature gate: SchedulerQueueingHints')
LOCKED_136 = ('Error: invalid argument "SchedulerQueueingHints=false" for "--feature-gates" flag: '
              'cannot set feature gate SchedulerQueueingHints to false, feature is locked to true')
GA_136 = ('I1128 06:10:00.000000       1 feature_gate.go:444] "Warning: setting GA feature gate. It will be '
          'removed in a future release." featureGate="SchedulerQueueingHints" value=true')


def _load(tmp_path: Path, gates: str, version: str = "v1.36.3") -> spec_mod.Spec:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC.format(version=version, gates=gates))
    return spec_mod.load(path)


def test_the_spec_field_is_read_sorted_and_rendered_into_the_deployment_and_chart(tmp_path):
    spec = _load(tmp_path, "{SchedulerQueueingHints: true, GenericWorkload: false}")
    assert spec.feature_gates == {"GenericWorkload": False, "SchedulerQueueingHints": True}
    flag = "--feature-gates=GenericWorkload=false,SchedulerQueueingHints=true"
    assert spec_mod.scheduler_flags(spec) == [flag]
    deployment = yaml.safe_load(render.render_files(spec, "example/gates:1")["deployment.yaml"])
    assert deployment["spec"]["template"]["spec"]["containers"][0]["args"][-1] == flag
    assert f"- {flag}" in chart.chart_files(spec, "example/gates:1")["templates/deployment.yaml"]


def test_no_gates_renders_no_flag(tmp_path):
    spec = _load(tmp_path, "{}")
    args = yaml.safe_load(render.render_files(spec, "example/gates:1")["deployment.yaml"])["spec"]["template"]["spec"]["containers"][0]["args"]
    assert spec_mod.scheduler_flags(spec) == [] and not any("feature-gates" in a for a in args)


@pytest.mark.parametrize("gates, path, words", [
    ("{bad-name: true}", "featureGates.bad-name", "must be a feature gate name"),
    ("{GenericWorkload: 1}", "featureGates.GenericWorkload", "must be true or false"),
    ("[GenericWorkload]", "featureGates", "must be a mapping of feature gate name to true or false"),
])
def test_a_malformed_gate_is_refused_with_its_field_path(tmp_path, gates, path, words):
    with pytest.raises(spec_mod.SpecError) as caught:
        _load(tmp_path, gates)
    assert caught.value.paths == [path] and words in str(caught.value)


def test_the_benchmark_harness_workload_carries_the_spec_gates_and_the_variant_batching_gate():
    text = yaml.safe_dump([{"name": "SchedulingBasic", "workloads": [{"name": "500Nodes"}, {"name": "5000Nodes"}]}])
    w = variants.Workload("SchedulingBasic", "500Nodes")
    cases = variants.gated_cases(text, w, False, {"GenericWorkload": True})
    assert cases[0]["workloads"][0]["featureGates"] == {"GenericWorkload": True, "OpportunisticBatching": False}
    assert "featureGates" not in cases[0]["workloads"][1]
    assert variants.gated_cases(text, w, None, {"GenericWorkload": True})[0]["workloads"][0]["featureGates"] == {
        "GenericWorkload": True}


def test_the_removed_gate_is_refused_in_one_line_naming_the_gate_the_minor_and_the_fix():
    verdicts = feature_gates.judge_output(UNKNOWN_137, {"SchedulerQueueingHints": True})
    with pytest.raises(UserError) as caught:
        feature_gates.check(verdicts, "v1.37.2", "spec.yaml")
    text = str(caught.value)
    assert "\n" not in text and "featureGates.SchedulerQueueingHints" in text and "Kubernetes 1.37" in text
    assert "unrecognized feature gate: SchedulerQueueingHints" in text and "remove featureGates.SchedulerQueueingHints" in text


def test_the_locked_value_is_refused_and_the_ga_warning_passed_on():
    with pytest.raises(UserError, match=r"Kubernetes 1\.36 .*feature is locked to true"):
        feature_gates.check(feature_gates.judge_output(LOCKED_136, {"SchedulerQueueingHints": False}), "v1.36.3", "s")
    warned = feature_gates.check(feature_gates.judge_output(GA_136, {"SchedulerQueueingHints": True}), "v1.36.3", "s")
    assert len(warned) == 1 and warned[0].startswith("warning: featureGates.SchedulerQueueingHints: true: the gate is GA")
    # Negative control: a gate the binary said nothing about is accepted without a line.
    assert feature_gates.check(feature_gates.judge_output(GA_136, {"GenericWorkload": True}), "v1.36.3", "s") == []


FEATURES_GO = """var defaultVersionedKubernetesFeatureGates = map[featuregate.Feature]featuregate.VersionedSpecs{
\tGenericWorkload: {
\t\t{Version: version.MustParse("1.35"), Default: false, PreRelease: featuregate.Alpha},
\t},
\tSchedulerQueueingHints: {
\t\t{Version: version.MustParse("1.28"), Default: false, PreRelease: featuregate.Beta},
\t\t{Version: version.MustParse("1.34"), Default: true, PreRelease: featuregate.GA, LockToDefault: true},
\t},
}
"""


def test_without_a_binary_the_release_source_gives_the_same_verdicts():
    specs = vocabulary.parse_gate_specs(FEATURES_GO)
    assert specs["SchedulerQueueingHints"] == {"stage": "GA", "default": True, "locked": True, "since": "1.34"}
    on = feature_gates.judge_source(specs, {"SchedulerQueueingHints": True, "Gone": True})
    assert [(v.gate, bool(v.refused), v.warning) for v in on] == [("Gone", True, ""), ("SchedulerQueueingHints", False, "GA")]
    off = feature_gates.judge_source(specs, {"SchedulerQueueingHints": False})
    assert off[0].refused == "cannot set feature gate SchedulerQueueingHints to false, feature is locked to true"
    # --list-gates: only the gates that can still change, with stage and default.
    assert feature_gates.changeable(specs) == ["GenericWorkload  Alpha since 1.35      default=false"]


def test_without_a_binary_the_gates_staging_modules_register_are_not_refused():
    specs = vocabulary.parse_gate_specs(FEATURES_GO)
    (accepted,) = feature_gates.judge_source(specs, {"ContextualLogging": True}, frozenset({"ContextualLogging"}))
    assert not accepted.refused and not accepted.warning
    # Negative control: kube_features.go alone does not list it.
    assert feature_gates.judge_source(specs, {"ContextualLogging": True})[0].refused


def test_the_staging_gate_constants_are_read_from_source():
    text = 'const (\n\tContextualLogging featuregate.Feature = "ContextualLogging"\n\tWatchListClient Feature = "WatchListClient"\n)\n'
    assert vocabulary._STAGING_GATE.findall(text) == ["ContextualLogging", "WatchListClient"]

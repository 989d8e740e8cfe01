"""`inv bench.perf`'s fast parts: the harness wrapper it generates, the configurations of its
variants, the command line of a run, and the parsing and comparison of scheduler_perf's JSON."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from bench.perf import harness, report, results, run, variants
from testkit import etcd
from scheduler_build import spec as spec_mod
from scheduler_build.build import plugins as plugins_stage
from scheduler_build.errors import UserError
from scheduler_build.resolve import versions

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "examples/underlay/scheduler.yaml"


def resolution() -> versions.Resolution:
    return versions.Resolution(requested="1.36", version="v1.36.3", minor="1.36", go_version="1.26.0",
                          staging_version="v0.36.3", replaces={"k8s.io/api": "v0.36.3", "k8s.io/kube-scheduler": "v0.36.3"})


def example_workspace(tmp_path: Path, debuggable: bool = False):
    spec = spec_mod.load(EXAMPLE)
    custom = plugins_stage.prepare(resolution(), spec.plugins, (), tmp_path, in_tree=frozenset())
    recorder = dataclasses.replace(spec.debuggable, enabled=True) if debuggable else None
    return harness.render_workspace(resolution(), custom, recorder)


def test_wrapper_is_a_go_test_module_on_the_exact_version_with_staging_replaces_and_the_spec_plugin(tmp_path):
    ws = example_workspace(tmp_path)
    go_mod, test_go = ws.files["go.mod"], ws.files["perf_test.go"]
    assert "require k8s.io/kubernetes v1.36.3" in go_mod
    assert "k8s.io/kube-scheduler => k8s.io/kube-scheduler v0.36.3" in go_mod
    assert "example.com/acme/underlay =>" in go_mod  # the plugin's content snapshot, as inv build wires it
    assert 'perf "k8s.io/kubernetes/test/integration/scheduler_perf"' in test_go
    assert "underlayiplimit.Name: underlayiplimit.New, // plugins[0]" in test_go
    assert "perf.RunBenchmarkPerfScheduling(b, config, \"misc\", registry(), options...)" in test_go
    assert "TLSServerName: cfg.ServerName" in test_go  # the Python client needs it for the loopback cert


@pytest.mark.skipif(not (shutil.which("gofmt") or Path("/usr/local/go/bin/gofmt").exists()), reason="needs gofmt")
@pytest.mark.parametrize("debuggable", [False, True])
def test_generated_test_file_parses_as_go(tmp_path, debuggable):
    gofmt = shutil.which("gofmt") or "/usr/local/go/bin/gofmt"
    good = tmp_path / "perf_test.go"
    good.write_text(example_workspace(tmp_path, debuggable).files["perf_test.go"])
    assert subprocess.run([gofmt, "-e", str(good)], capture_output=True).returncode == 0
    bad = tmp_path / "bad_test.go"  # negative control: gofmt does reject a broken file
    bad.write_text(good.read_text().replace("func registry()", "func registry("))
    assert subprocess.run([gofmt, "-e", str(bad)], capture_output=True).returncode != 0


def test_etcd_version_is_read_from_hack_lib_etcd_sh():
    assert etcd.pinned_version('readonly x\nETCD_VERSION=${ETCD_VERSION:-3.6.8}\nETCD_HOST=1\n') == "3.6.8"
    assert etcd.pinned_version("ETCD_VERSION=${ETCD_VERSION:-v3.7.0}\n") == "3.7.0"
    with pytest.raises(UserError, match="hack/lib/etcd.sh: no ETCD_VERSION"):
        etcd.pinned_version("ETCD_VERSION=3.6.8\n")


UPSTREAM = """
- name: SchedulingBasic
  workloads:
  - name: 500Nodes
    params: {initNodes: 500}
  - name: 5000Nodes_10000Pods
    labels: [performance]
    threshold: 270
- name: Other
  workloads: [{name: 5Nodes}]
"""


def test_workloads_default_to_schedulingbasic_and_carry_upstream_thresholds():
    chosen = variants.parse_workloads("500Nodes, SchedulingBasic/5000Nodes_10000Pods,Other/5Nodes")
    assert [w.label for w in chosen] == ["SchedulingBasic/500Nodes", "SchedulingBasic/5000Nodes_10000Pods", "Other/5Nodes"]
    assert variants.check_known(chosen, UPSTREAM, "perf.yaml") == {
        "SchedulingBasic/500Nodes": None, "SchedulingBasic/5000Nodes_10000Pods": 270.0, "Other/5Nodes": None}
    assert chosen[0].bench_pattern() == "^BenchmarkPerfScheduling$/^SchedulingBasic$/^500Nodes$"


def test_the_opt_in_copy_of_a_case_is_known_only_when_the_spec_labels_pods():
    chosen = variants.parse_workloads("SchedulingBasicLabelled/5000Nodes_10000Pods")
    assert variants.check_known(chosen, UPSTREAM, "perf.yaml", labelled_ok=True) == {
        "SchedulingBasicLabelled/5000Nodes_10000Pods": None}  # the copy has no upstream threshold
    with pytest.raises(UserError, match="SchedulingBasicLabelled/5000Nodes_10000Pods: not in perf.yaml"):
        variants.check_known(chosen, UPSTREAM, "perf.yaml")  # negative control: no labels, no copy
    with pytest.raises(UserError, match="9Nodes: not in perf.yaml; known workloads of SchedulingBasic.*: 5000Nodes_10000Pods, 500Nodes"):
        variants.check_known(variants.parse_workloads("SchedulingBasicLabelled/9Nodes"), UPSTREAM, "perf.yaml",
                             labelled_ok=True)


def test_unknown_workload_names_the_known_ones():
    with pytest.raises(UserError, match="--workloads SchedulingBasic/500nodes: not in perf.yaml; known workloads of SchedulingBasic: 5000Nodes_10000Pods, 500Nodes"):
        variants.check_known(variants.parse_workloads("500nodes"), UPSTREAM, "perf.yaml")
    with pytest.raises(UserError, match="not a workload name"):
        variants.parse_workloads("500Nodes;rm")
    with pytest.raises(UserError, match="unknown fast"):
        variants.parse_variants("vanilla,fast")
    assert variants.parse_variants("extender,vanilla") == ["vanilla", "extender"]


def test_spec_variant_runs_the_spec_profile_as_the_harness_scheduler_without_extenders():
    spec = spec_mod.load(EXAMPLE)
    config = variants.spec_config(spec)
    (profile,) = config["profiles"]  # vanilla's profile plus the spec's plugins: the spread profile is left out
    assert profile["schedulerName"] == "default-scheduler"
    assert profile["plugins"] == {"multiPoint": {"enabled": [{"name": "UnderlayIPLimit", "weight": 3}]}}
    assert [e["name"] for e in profile["pluginConfig"]] == ["UnderlayIPLimit"]
    assert "percentageOfNodesToScore" not in profile and "parallelism" not in config
    assert "extenders" not in config and config["leaderElection"] == {"leaderElect": False}


def test_extender_variant_is_the_default_profile_plus_the_spec_extender_in_plain_http():
    spec = spec_mod.load(EXAMPLE)
    config = variants.extender_config(spec, "http://127.0.0.1:5555")
    assert config["profiles"] == [{"schedulerName": "default-scheduler"}]
    (entry,) = config["extenders"]
    assert entry["urlPrefix"] == "http://127.0.0.1:5555" and entry["enableHTTPS"] is False and "tlsConfig" not in entry
    assert entry["nodeCacheCapable"] is True and entry["filterVerb"] == "filter" and entry["prioritizeVerb"] == "prioritize"


def test_run_command_line_selects_one_workload_with_an_empty_label_filter(tmp_path):
    h = harness.Harness(tmp_path / "perf.test", "v1.36.3", tmp_path, ("UnderlayIPLimit",), False, 0.0)
    w = variants.parse_workloads("500Nodes")[0]
    argv = run.harness_argv(h, w, tmp_path / "w", tmp_path / "perf.yaml", tmp_path / "s.yaml", ("UnderlayIPLimit",),
                            ["python", "-m", "x"], "http://127.0.0.1:1/readyz")
    assert "-perf-scheduling-label-filter=" in argv and "-test.benchtime=1ns" in argv
    assert f"-sb-scheduler-config={tmp_path / 's.yaml'}" in argv
    assert '-sb-plugin-names=["UnderlayIPLimit"]' in argv and '-sb-prepare=["python", "-m", "x"]' in argv
    plain = run.harness_argv(h, w, tmp_path, tmp_path / "perf.yaml", None, (), None, "")
    assert not [a for a in plain if a.startswith(("-sb-scheduler-config", "-sb-plugin-names", "-sb-prepare"))]


def data_items(pods_per_second: float, plugin_p50_ms: float = 0.02) -> dict:
    """The shape scheduler_perf writes (labels as it fills them, "not applicable" where absent)."""
    na = "not applicable"
    return {"version": "v1", "dataItems": [
        {"data": {"Average": pods_per_second, "Perc50": pods_per_second - 5, "Perc90": pods_per_second + 20,
                  "Perc95": pods_per_second + 25, "Perc99": pods_per_second + 30},
         "unit": "pods/s", "labels": {"Metric": "SchedulingThroughput", "Name": "SchedulingBasic/500Nodes", "result": na}},
        {"data": {"Average": 3.1, "Perc50": 2.5, "Perc90": 5.0, "Perc99": 9.0}, "unit": "ms",
         "labels": {"Metric": results.ATTEMPT, "Name": "SchedulingBasic/500Nodes", "result": "scheduled"}},
        {"data": {"Average": 0.3, "Perc50": 0.2, "Perc90": 0.5, "Perc99": 0.9}, "unit": "ms",
         "labels": {"Metric": results.ATTEMPT, "Name": "SchedulingBasic/500Nodes", "result": "unschedulable"}},
        {"data": {"Average": plugin_p50_ms, "Perc50": plugin_p50_ms, "Perc90": 0.05, "Perc99": 0.1}, "unit": "ms",
         "labels": {"Metric": results.PLUGIN, "plugin": "UnderlayIPLimit", "extension_point": "Filter"}},
        {"data": {"Duration": 12.0}, "unit": "s", "labels": {"Metric": "SchedulingDuration", "Name": "SchedulingBasic/500Nodes"}},
        {"data": {"Average": 0.5, "Perc50": 0.4, "Perc99": 1.0}, "unit": "ms",
         "labels": {"Metric": results.EXTENSION_POINT, "extension_point": "Filter"}},
    ]}


def test_harness_json_is_parsed_into_throughput_attempts_and_plugin_durations(tmp_path):
    path = tmp_path / "BenchmarkPerfScheduling_benchmark_misc_2026.json"
    path.write_text(json.dumps(data_items(300.0)))
    figures = results.parse_file(path)
    assert figures.throughput["Average"] == 300.0 and figures.throughput["Perc99"] == 330.0
    assert figures.attempt_ms == {"Average": 3.1, "Perc50": 2.5, "Perc90": 5.0, "Perc99": 9.0}  # scheduled only
    assert figures.plugins_ms["UnderlayIPLimit/Filter"]["Perc50"] == 0.02
    assert figures.extension_points_ms["Filter"]["Perc99"] == 1.0


def test_json_without_throughput_is_one_clear_error(tmp_path):
    items = data_items(1.0)
    items["dataItems"] = items["dataItems"][1:]  # under a second: no throughput sample, the duration remains
    assert results.parse_items(items).duration_s == 12.0 and results.parse_items(items).throughput == {}
    items["dataItems"] = [i for i in items["dataItems"] if i["labels"]["Metric"] != "SchedulingDuration"]
    with pytest.raises(UserError, match="no SchedulingThroughput or SchedulingDuration item"):
        results.parse_items(items, "x.json")
    with pytest.raises(UserError, match="no dataItems list"):
        results.parse_items([], "x.json")


def summary(vanilla: list[float], spec: list[float]) -> dict:
    runs = {"SchedulingBasic/500Nodes": {
        "vanilla": [results.parse_items(data_items(v)) for v in vanilla],
        "spec": [results.parse_items(data_items(v)) for v in spec]}}
    return {"summary": results.summarize(runs, ("UnderlayIPLimit",))}


def test_summary_reports_medians_spread_and_ratio_to_vanilla():
    rows = summary([300, 400, 350], [330, 280, 340])["summary"]["SchedulingBasic/500Nodes"]
    assert rows["vanilla"]["pods_per_second"] == {"median": 350, "min": 300, "max": 400}
    assert rows["spec"]["pods_per_second"]["median"] == 330 and rows["spec"]["ratio_to_vanilla"] == 0.943
    assert rows["spec"]["plugins_ms"] == {"UnderlayIPLimit/Filter": {"Perc50": 0.02, "Perc99": 0.1}}


def test_compare_flags_a_ratio_that_fell_beyond_the_threshold_only():
    reference = summary([350, 350, 350], [340, 340, 340])  # ratio 0.971
    same = summary([300, 300, 300], [290, 290, 290])  # slower machine, same ratio 0.967: not a regression
    assert results.regressions(same, reference, 0.1) == []
    slower = summary([350, 350, 350], [280, 280, 280])  # planted: ratio 0.8, -17.6%
    (found,) = results.regressions(slower, reference, 0.1)
    assert found.startswith("SchedulingBasic/500Nodes spec: ratio to vanilla 0.800, was 0.971")


def test_table_names_variants_ratios_threshold_and_plugin_cost():
    res = summary([300, 400, 350], [330, 280, 340])
    res.update(kubernetes="v1.36.3", spec="s.yaml", repeats=3, variants=["vanilla", "spec"],
               thresholds={"SchedulingBasic/500Nodes": 270.0}, notes=["n"])
    res["summary"]["SchedulingBasic/500Nodes"]["spec"]["batching"] = "off (plugins without SignPod: UnderlayIPLimit)"
    text = report.markdown(res)
    assert ("| SchedulingBasic/500Nodes | spec | off (plugins without SignPod: UnderlayIPLimit) | 330.0 | 280.0 | 340.0 "
            "| 0.94 | 2.50 | 9.00 | 12.00 |") in text
    assert "upstream's threshold at v1.36.3 is 270 pods/s" in text
    # upstream's sampled per-call histogram says nothing (its lowest bucket): not shown; --profile is named
    assert "p50 0.020 ms" not in text and "(sampled)" not in text
    assert "where the spec's plugins spend scheduling CPU: run with --profile" in report.markdown(
        dict(res, plugin_names=["UnderlayIPLimit"]))
    shares = {"file": "p/x-spec-2.pprof", "total_s": 90.0, "scheduling_s": 30.0, "scheduling_percent_of_process": 33.3,
              "framework_percent": 69.0, "plugins": {"UnderlayIPLimit": {"percent": 31.0, "points": {
                  "Filter": {"percent": 18.0, "leaves": {"sync.(*RWMutex).RLock": 9.0, "map lookups": 4.0}},
                  "Score": {"percent": 13.0, "leaves": {}}}}}}
    res["summary"]["SchedulingBasic/500Nodes"]["spec"]["profile"] = shares
    res["profiles"] = {"merged": {"spec": "p/merged-spec.pprof"}}
    text = report.markdown(res)
    assert ("- SchedulingBasic/500Nodes spec profile (p/x-spec-2.pprof): scheduling 30.0 s CPU, 33% of the process; "
            "UnderlayIPLimit 31.0% of scheduling CPU: Filter 18% (sync.(*RWMutex).RLock 9%, map lookups 4%), Score 13% (); "
            "framework and in-tree plugins 69.0%") in text
    assert "merged profiles (`build --pgo` input): spec p/merged-spec.pprof" in text


def test_labelled_workload_is_upstreams_case_with_pods_that_opt_in(tmp_path):
    spec = spec_mod.load(EXAMPLE)
    labels = variants.pod_labels(spec)
    assert labels == {"underlay.acme.example.com/needs-ip": "true", "underlay.example.com/ip": "true"}
    upstream = "- name: SchedulingBasic\n  defaultPodTemplatePath: ../templates/pod-default.yaml\n" \
               "  workloadTemplate: [{opcode: createNodes, countParam: $initNodes}]\n  workloads: [{name: 500Nodes}]\n"
    pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  generateName: pod-\nspec: {}\n"
    cases, labelled_pod = variants.labelled_files(upstream, pod, "SchedulingBasic", labels, tmp_path / "pod.yaml")
    assert cases[0]["name"] == "SchedulingBasicLabelled" and cases[0]["workloads"] == [{"name": "500Nodes"}]
    assert cases[0]["defaultPodTemplatePath"] == str(tmp_path / "pod.yaml")
    assert labelled_pod["metadata"] == {"generateName": "pod-", "labels": labels}
    assert variants.labelled(variants.parse_workloads("500Nodes")[0]).label == "SchedulingBasicLabelled/500Nodes"
    plain = spec_mod.load(EXAMPLE)
    plain.profiles = [{"schedulerName": "x"}]
    assert variants.pod_labels(plain) == {}  # no plugin takes a podLabel: no labelled workload


def test_ratio_falls_back_to_durations_when_pods_schedule_within_a_second():
    def quick(duration: float) -> results.RunFigures:
        items = data_items(1.0)
        items["dataItems"] = [dict(i, data={"Duration": duration}) if i["labels"]["Metric"] == "SchedulingDuration" else i
                              for i in items["dataItems"][1:]]
        return results.parse_items(items)

    rows = results.summarize({"w": {"vanilla": [quick(0.4)], "extender": [quick(0.8)]}})["w"]
    assert rows["extender"]["pods_per_second"] == {} and rows["extender"]["ratio_to_vanilla"] == 0.5
    assert rows["extender"]["ratio_basis"] == "duration"


def test_a_run_below_upstreams_threshold_keeps_its_figures_but_any_other_failure_fails():
    miss = ('    op 2: BenchmarkPerfScheduling/SchedulingBasic/5000Nodes_10000Pods/namespace-2: expected '
            '"SchedulingThroughput" "Average" to be higher: got 90.5, want 270.000000\n--- FAIL: BenchmarkPerfScheduling\n')
    assert run.below_threshold(miss)
    assert not run.below_threshold(miss + "    util.go:117: FATAL ERROR:\n        start apiserver: x\n")  # planted
    assert not run.below_threshold("--- FAIL: BenchmarkPerfScheduling\n")


def test_every_variant_names_the_batching_gate_only_for_its_workload():
    text = yaml.safe_dump([{"name": "SchedulingBasic", "workloads": [{"name": "500Nodes"}, {"name": "5000Nodes"}]},
                           {"name": "Other", "workloads": [{"name": "500Nodes"}]}])
    w = variants.Workload("SchedulingBasic", "500Nodes")
    basic, other = variants.gated_cases(text, w, False)
    assert basic["workloads"][0]["featureGates"] == {"OpportunisticBatching": False}
    assert "featureGates" not in basic["workloads"][1] and "featureGates" not in other["workloads"][0]
    assert variants.gated_cases(text, w, True)[0]["workloads"][0]["featureGates"] == {"OpportunisticBatching": True}
    assert variants.parse_variants("spec,vanilla-nobatch,vanilla") == ["vanilla", "vanilla-nobatch", "spec"]


def test_batching_state_from_the_gate_and_the_schedulers_own_log():
    line = ('I1126 01:00:00.000000 1 framework.go:873] "Disabling signatures for profile because plugins do not '
            'support it." profile="default-scheduler" plugins=["UnderlayIPLimit"]')
    assert run.batching_state("", True) == "on"
    assert run.batching_state(line, True) == "off (plugins without SignPod: UnderlayIPLimit)"
    assert run.batching_state(line.replace("default-scheduler", "other"), True) == "on"
    assert run.batching_state("", False) == "off (OpportunisticBatching gate off)"
    assert run.batching_state(line, None, "the workload emulates a release without the gate") == (
        "off (the workload emulates a release without the gate)")


def test_a_workload_that_cannot_have_the_gate_runs_again_as_written(tmp_path, monkeypatch):
    from scheduler_build.errors import UserError

    calls = []

    def fake_run(h, etcd_bin, spec, w, variant, work, config, gate, why_none="", cpuprofile=None):
        calls.append((work.name, config.name, gate, why_none))
        if gate is not None:
            (work / "harness.log").write_text(f"Failed to set feature gates: {run.UNSETTABLE} to true, feature is PreAlpha")
            raise UserError("scheduler_perf failed")
        return "figures", run.batching_state("", gate, why_none), {}

    monkeypatch.setattr(run, "_run", fake_run)
    upstream = tmp_path / "performance-config.yaml"
    upstream.write_text("- name: SchedulingBasic\n  workloads:\n  - name: 5000Nodes\n")
    w = variants.Workload("SchedulingBasic", "5000Nodes")
    spec = spec_mod.load(EXAMPLE)
    figures, state, _ = run._one(None, None, spec, w, "vanilla", tmp_path / "cell", upstream, True)
    assert state == "off (the workload emulates a release without the gate)"
    assert calls[0][1:3] == ("workloads.yaml", True) and calls[1][:3] == ("cell-ungated", "performance-config.yaml", None)
    # Any other failure is the run's own: raised, not retried.
    monkeypatch.setattr(run, "_run", lambda *a, **k: (_ for _ in ()).throw(UserError("other")))
    with pytest.raises(UserError, match="other"):
        run._one(None, None, spec, w, "vanilla", tmp_path / "cell2", upstream, True)


def test_debuggable_harness_switches_the_recorder_on_with_the_spec_settings_and_measures_the_record(tmp_path):
    spec = spec_mod.load(EXAMPLE)
    test_go = example_workspace(tmp_path, debuggable=True).files["perf_test.go"]
    assert "frameworkruntime.DebugRecorder = frameworkruntime.RecorderConfig{" in test_go
    assert f'PodLabel:      "{spec.debuggable.pod_label}", // debuggable.podLabel' in test_go
    assert f"TopNodes:      {spec.debuggable.top_nodes}, // debuggable.topNodes" in test_go
    assert "writeRecordSizes(tCtx, *recordSizes)" in test_go and "sb-record-sizes" in test_go
    plain = example_workspace(tmp_path / "plain").files["perf_test.go"]  # negative control: the spec harness
    assert "DebugRecorder" not in plain and "sb-record-sizes" not in plain


def test_debuggable_harness_applies_the_recorder_patch_after_the_specs_own(tmp_path):
    from scheduler_build.build import debuggable

    spec = spec_mod.load(EXAMPLE)
    assert harness.harness_patches(spec, tmp_path, False) == tuple(spec.patches)
    patches = harness.harness_patches(spec, tmp_path, True)
    assert patches[:-1] == tuple(spec.patches) and patches[-1] == debuggable.recorder_patch(tmp_path)
    assert patches[-1].read_text() == debuggable.patch_text()  # the very patch `build --debuggable` applies


def test_only_the_debuggable_harness_is_asked_for_the_record_sizes(tmp_path):
    w = variants.parse_workloads("500Nodes")[0]
    plain = harness.Harness(tmp_path / "perf.test", "v1.36.3", tmp_path, (), False, 0.0)
    recorder = dataclasses.replace(plain, debuggable=True)
    argv = run.harness_argv(recorder, w, tmp_path / "w", tmp_path / "p.yaml", tmp_path / "s.yaml", (), None, "")
    assert f"-sb-record-sizes={tmp_path / 'w' / run.RECORD_SIZES}" in argv
    assert not [a for a in run.harness_argv(plain, w, tmp_path, tmp_path / "p.yaml", None, (), None, "")
                if a.startswith("-sb-record-sizes")]


def test_record_sizes_are_counted_per_recorded_pod(tmp_path):
    path = tmp_path / run.RECORD_SIZES
    assert run.record_sizes(path) == {}  # the spec harness writes none
    path.write_text(json.dumps({"pods": 11000, "recorded_bytes": [4100, 4150, 4120]}))
    assert run.record_sizes(path) == {"pods": 11000, "recorded_pods": 3, "annotation_bytes_median": 4120,
                                      "annotation_bytes_max": 4150}
    path.write_text(json.dumps({"pods": 10, "recorded_bytes": []}))
    assert run.record_sizes(path)["recorded_pods"] == 0


def test_debuggable_is_chosen_only_by_name_and_its_pods_opt_in_to_recording():
    assert variants.parse_variants("debuggable,spec") == ["spec", "debuggable"]
    assert "debuggable" in variants.BY_NAME and not variants.BY_NAME["debuggable"].default
    spec = spec_mod.load(EXAMPLE)
    assert variants.pod_labels(spec, recorded=True) == {**variants.pod_labels(spec), spec.debuggable.pod_label: "true"}
    assert spec.debuggable.pod_label not in variants.pod_labels(spec)  # negative control: not without the variant


def test_debuggable_is_judged_against_spec_and_its_bytes_are_reported():
    runs = {"SchedulingBasicLabelled/5000Nodes": {
        "spec": [results.parse_items(data_items(v)) for v in (100, 110, 90)],
        "debuggable": [results.parse_items(data_items(v)) for v in (80, 95, 85)]}}
    res = {"summary": results.summarize(runs, ()), "kubernetes": "v1.36.3", "spec": "s.yaml", "repeats": 3,
           "variants": ["spec", "debuggable"], "thresholds": {}, "notes": []}
    row = res["summary"]["SchedulingBasicLabelled/5000Nodes"]["debuggable"]
    assert row["ratio_to_base"] == 0.85 and row["base"] == "spec" and row["ratio_to_vanilla"] is None
    assert "ratio_to_base" not in res["summary"]["SchedulingBasicLabelled/5000Nodes"]["spec"]
    row["annotation_bytes"] = {"median": 4120, "max": 4151, "recorded_pods": [10000, 10000, 10000], "pods": [11000] * 3}
    assert ("- SchedulingBasicLabelled/5000Nodes debuggable / spec: 0.85 (pods/s medians); 4120 bytes of annotations "
            "per recorded pod (median, max 4151), 10000, 10000, 10000 pods recorded per run") in report.markdown(res)


def variants_missing_from_docs(text: str, rows) -> list[str]:
    """The rows that docs/bench-perf.md's variants table has no line for."""
    return [v.name for v in rows if f"| `{v.name}` |" not in text]


def test_every_variant_row_is_in_the_docs_table_and_the_help():
    text = (Path(__file__).parents[3] / "docs" / "bench-perf.md").read_text()
    assert variants_missing_from_docs(text, variants.VARIANTS) == []
    planted = variants.Variant("planted", variants.SPEC, variants.PLAIN, True, (), "spec", "#000000", "a planted row")
    assert variants_missing_from_docs(text, (*variants.VARIANTS, planted)) == ["planted"]  # negative control
    assert f"(default `{variants.DEFAULT_VARIANTS}`" in text
    assert all(v.name in variants.help_text() for v in variants.VARIANTS)
    assert len({v.name for v in variants.VARIANTS}) == len(variants.VARIANTS)
    assert len({v.colour for v in variants.VARIANTS}) == len(variants.VARIANTS)


def test_the_variants_are_what_their_rows_say():
    rows = variants.BY_NAME
    assert [r.name for r in variants.VARIANTS if r.default] == ["vanilla", "vanilla-nobatch", "spec", "extender"]
    assert rows["spec"].config == rows["debuggable"].config == rows["spec-pgo"].config == variants.SPEC
    assert {rows[v].harness_key for v in ("vanilla", "spec", "extender", "vanilla-nobatch")} == {(variants.PLAIN, False)}
    assert rows["spec-pgo"].harness_key == rows["vanilla-pgo"].harness_key != rows["spec"].harness_key
    assert not rows["vanilla"].plugins and not rows["vanilla-pgo"].plugins and rows["spec-pgo"].plugins
    assert dict(rows["vanilla-nobatch"].gates) == {variants.GATE: False}
    assert {r.baseline for r in variants.VARIANTS if r.pgo} == {"spec", "vanilla"}
    # bench.e2e's letters: rows of the same kind
    e2e = variants.E2E_BY_NAME
    assert variants.E2E_DEFAULT == "abcd"
    assert e2e["f"].harness == variants.DEBUGGABLE and e2e["b"].plugins and not e2e["a"].plugins
    assert e2e["d"].extender == variants.NODE_LIST and e2e["e"].extender == variants.TWO_WRITES


def test_pgo_variants_need_a_profile_and_a_profile_needs_them():
    variants.check_pgo(["vanilla", "spec"], None)
    variants.check_pgo(["spec", "spec-pgo"], object())
    with pytest.raises(UserError, match="spec-pgo.*no --pgo-profile"):
        variants.check_pgo(["spec", "spec-pgo"], None)
    with pytest.raises(UserError, match="no \\*-pgo variant"):
        variants.check_pgo(["spec"], object())


def test_a_pgo_variant_is_measured_against_its_own_baseline():
    def run(pods: float) -> results.RunFigures:
        return results.RunFigures(throughput={"Average": pods}, duration_s=10.0)

    summary = results.summarize({"w": {"vanilla": [run(100.0)], "spec": [run(50.0)], "spec-pgo": [run(55.0)],
                                       "vanilla-pgo": [run(104.0)]}})["w"]
    assert summary["spec-pgo"]["ratio_to_base"] == 1.1 and summary["spec-pgo"]["base"] == "spec"
    assert summary["spec-pgo"]["ratio_to_vanilla"] == 0.55
    assert "ratio_to_base" not in summary["vanilla-pgo"]  # vanilla is its baseline: ratio_to_vanilla says it
    assert summary["vanilla-pgo"]["ratio_to_vanilla"] == 1.04

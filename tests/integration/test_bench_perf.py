"""`inv bench.perf` end to end at upstream's smallest size: the real harness (compiled from the
spec's vendored build in the builder container), etcd at the pinned version, the real Python
extender, upstream's SchedulingBasic/5Nodes in the four variants.

One run only (the compile is cached by its inputs; cold it is the suite's longest step). The
`--compare` gate is checked in the same run against a planted reference whose ratios no run can
reach: the table and --json are still written, and the task exits non-zero naming each regression.
"""

from __future__ import annotations

import json
import subprocess
import sys


def test_bench_perf_runs_four_variants_and_its_compare_gate_fails_on_a_planted_regression(repo, tmp_path):
    planted = {"summary": {"SchedulingBasic/5Nodes": {"spec": {"ratio_to_vanilla": 100.0},
                                                       "extender": {"ratio_to_vanilla": 100.0}}}}
    reference = tmp_path / "reference.json"
    reference.write_text(json.dumps(planted))
    out, chart = tmp_path / "perf.json", tmp_path / "perf.png"
    proc = subprocess.run(
        [sys.executable, "-m", "invoke", "bench.perf", "--spec", "examples/underlay/scheduler.yaml",
         "--workloads", "5Nodes", "--repeats", "1", "--json", str(out), "--chart", str(chart),
         "--compare", str(reference), "--profile"],
        cwd=repo, capture_output=True, text=True, timeout=3 * 3600)
    assert proc.returncode != 0, proc.stdout + proc.stderr[-3000:]
    assert "error: 2 regression(s) against" in proc.stderr, proc.stderr[-3000:]
    assert "REGRESSION SchedulingBasic/5Nodes spec" in proc.stdout and "REGRESSION SchedulingBasic/5Nodes extender" in proc.stdout
    raw = json.loads(out.read_text())  # the raw file: what ran, where, under what load, every run
    assert raw["command"].startswith("inv bench.perf") and raw["commit"] and raw["load_before"] and "partial" not in raw
    assert len(raw["runs"]) == 2 * 4 and {r["measure"] for r in raw["runs"]} == {"SchedulingBasic/5Nodes",
                                                                               "SchedulingBasicLabelled/5Nodes"}
    res = raw["results"]
    rows = res["summary"]["SchedulingBasic/5Nodes"]
    assert set(rows) == {"vanilla", "vanilla-nobatch", "spec", "extender"}
    # v1.36's 5Nodes sets SchedulerQueueingHints: false, so the harness emulates 1.33, which has no batching:
    # the gate is refused, the run is made again as written, and each variant says so.
    assert {row["batching"] for row in rows.values()} == {"off (the workload emulates a release without the gate)"}
    for variant, row in rows.items():  # 10 pods: often under a second, so no throughput sample; the duration is there
        assert row["duration_s"]["median"] > 0 and row["attempt_ms"]["Perc50"] > 0, variant
        assert row["ratio_to_vanilla"] is not None, variant
    assert rows["vanilla"]["ratio_to_vanilla"] == 1.0
    # The example's plugin acts on labelled pods only: the opt-in copy of the workload ran too.
    assert set(res["summary"]["SchedulingBasicLabelled/5Nodes"]) == {"vanilla", "vanilla-nobatch", "spec", "extender"}
    assert res["kubernetes"].startswith("v1.36.")
    assert "| SchedulingBasic/5Nodes | extender |" in proc.stdout
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    _check_profiles(raw, tmp_path / "perf.profiles", proc.stdout)


def _check_profiles(raw: dict, profiles, stdout: str) -> None:
    """--profile: one pprof per cell beside the raw file, merged per variant, the spec's plugin named in the
    attribution; vanilla and the extender, which compile the plugin in but do not enable it, give it 0%."""
    res = raw["results"]
    cells = [(w, v) for w in res["workloads"] for v in res["variants"]]
    files = sorted(p.name for p in profiles.glob("*-1.pprof"))
    assert len(files) == len(cells) == 8, files
    assert res["profiles"]["merged"].keys() == set(res["variants"])
    for variant in res["variants"]:
        assert (profiles / f"merged-{variant}.pprof").stat().st_size > 0
    for workload, variant in cells:
        shares = res["summary"][workload][variant]["profile"]
        assert shares["file"].endswith(f"-{variant}-1.pprof") and "UnderlayIPLimit" in shares["plugins"], shares
        assert shares["total_s"] > 0, shares  # a real profile (5Nodes: too short for scheduling samples to count on)
        if variant != "spec":  # negative control: the plugin is not enabled there
            assert shares["plugins"]["UnderlayIPLimit"]["percent"] == 0.0, (workload, variant, shares)
        assert not shares["svg"] or (profiles / shares["svg"].rsplit("/", 1)[-1]).read_bytes().lstrip()[:5] in (b"<?xml", b"<svg ")
    assert "UnderlayIPLimit" in stdout and "of scheduling CPU" in stdout and "(sampled)" not in stdout


def test_bench_perf_debuggable_variant_records_the_opted_in_pods_only(repo, tmp_path):
    """The debuggable harness (the recorder patch after the spec's, the recorder on with the spec's settings)
    beside spec: the labelled copy's pods carry debuggable.podLabel and are recorded, upstream's are not."""
    out = tmp_path / "perf.json"
    proc = subprocess.run(
        [sys.executable, "-m", "invoke", "bench.perf", "--spec", "examples/underlay/scheduler.yaml",
         "--workloads", "5Nodes", "--variants", "spec,debuggable", "--repeats", "1", "--json", str(out)],
        cwd=repo, capture_output=True, text=True, timeout=3 * 3600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    raw = json.loads(out.read_text())
    res = raw["results"]
    assert res["harnesses"]["debuggable"]["binary"] != res["harnesses"]["spec"]["binary"]
    labelled = res["summary"]["SchedulingBasicLabelled/5Nodes"]
    sizes = labelled["debuggable"]["annotation_bytes"]
    # 5Nodes: 5 + 10 pods, all from the labelled template, so all opted in and recorded
    assert sizes["recorded_pods"] == sizes["pods"] and sizes["pods"][0] >= 10 and sizes["median"] > 500, sizes
    assert "annotation_bytes" not in labelled["spec"]  # the spec harness has no recorder
    plain = res["summary"]["SchedulingBasic/5Nodes"]["debuggable"]  # negative control: upstream's pods did not opt in
    assert plain["annotation_bytes"]["recorded_pods"] == [0], plain
    assert labelled["debuggable"]["batching"] == labelled["spec"]["batching"]  # the recorder leaves batching alone
    assert "debuggable / spec:" in proc.stdout
    runs = [r for r in raw["runs"] if r["side"] == "debuggable" and r["measure"] == "SchedulingBasicLabelled/5Nodes"]
    assert runs[0]["recorded_pods"] == runs[0]["pods"] and runs[0]["annotation_bytes_median"] == sizes["median"]


def test_two_shards_merged_hold_every_cell_of_the_unsharded_run(repo, tmp_path):
    """`--shard 1/2` and `--shard 2/2` (5Nodes and its labelled copy: two groups, one each), then bench.merge:
    the merged file holds every (workload, variant, repeat) cell a local run makes, and renders its table."""
    parts = []
    for index in (1, 2):
        out = tmp_path / f"shard-{index}.json"
        proc = subprocess.run(
            [sys.executable, "-m", "invoke", "bench.perf", "--spec", "examples/underlay/scheduler.yaml",
             "--workloads", "5Nodes", "--variants", "vanilla,spec", "--repeats", "1", "--shard", f"{index}/2",
             "--json", str(out)], cwd=repo, capture_output=True, text=True, timeout=3 * 3600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        raw = json.loads(out.read_text())
        assert raw["partial"] is True and raw["shard"] == {"index": index, "count": 2} and len(raw["runs"]) == 2
        parts.append(out)
    merged = tmp_path / "merged.json"
    proc = subprocess.run([sys.executable, "-m", "invoke", "bench.merge", ",".join(map(str, parts)), "--out", str(merged)],
                          cwd=repo, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    raw = json.loads(merged.read_text())
    cells = {(r["measure"], r["side"], r["repeat"]) for r in raw["runs"]}
    assert cells == {(w, v, 1) for w in ("SchedulingBasic/5Nodes", "SchedulingBasicLabelled/5Nodes")
                     for v in ("vanilla", "spec")}
    assert set(raw["results"]["summary"]) == {"SchedulingBasic/5Nodes", "SchedulingBasicLabelled/5Nodes"}
    assert "partial" not in raw and "| SchedulingBasicLabelled/5Nodes | spec |" in proc.stdout

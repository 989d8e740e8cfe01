"""`inv bench.e2e --node`'s pure parts: the pods it creates, its input check, its table."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench import node_bench

REPO = Path(__file__).resolve().parents[3]


def test_bench_pods_name_our_scheduler_select_the_fake_nodes_and_tolerate_their_taints():
    body = node_bench.pod_body("p0")
    assert body["spec"]["schedulerName"] == "underlay-scheduler"
    assert body["spec"]["nodeSelector"] == node_bench.FAKE_LABEL
    assert body["spec"]["tolerations"] == [{"operator": "Exists"}]
    assert body["metadata"]["labels"] == node_bench.POD_LABEL  # the plugin and the extender do their work


def test_more_pods_than_the_fake_nodes_hold_is_one_line_before_anything_runs():
    out = subprocess.run([sys.executable, "-m", "invoke", "bench.e2e", "--node", "--pods", "50", "--nodes", "4"],
                         cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert "--pods 50" in out.stderr and "--nodes 5" in out.stderr
    assert "cluster.up" not in out.stderr  # refused before building or starting anything


def test_markdown_names_both_variants_the_ratio_and_the_load():
    results = {"pods": 300, "nodes": 100, "repeats": 1, "cpus": 2, "load_average_before": [1.0, 0.9, 0.8],
               "load_average_after": [1.5, 1.0, 0.9], "client_qps_burst": [50, 100],
               "runs": {"pod": [{"pods_per_second": 40.0}], "host": [{"pods_per_second": 50.0}]},
               "median_pods_per_second": {"pod": 40.0, "host": 50.0}, "ratio_pod_to_host": 0.8}
    text = node_bench.markdown(results)
    assert "| deployed scheduler pod | 40 | 40 |" in text and "| host process, same binary and config | 50 | 50 |" in text
    assert "ratio pod / host: 0.8" in text and "load average [1.0, 0.9, 0.8]" in text and "[50, 100]" in text


def test_qps_without_node_is_one_line():
    out = subprocess.run([sys.executable, "-m", "invoke", "bench.e2e", "--qps", "100"],
                         cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines()[-1].startswith("error: --qps applies to --node only")


def test_each_round_runs_pod_then_host_and_logs_both_to_the_raw_file(monkeypatch, tmp_path):
    """measure() with the cluster faked: the variants alternate round by round, each run in the raw file."""
    from kubernetes import client as k

    from bench import record, report
    from testkit import kubeobjects as kobj

    for name in ("create_nodes", "ensure_namespace", "create_pods", "force_delete_pods"):
        monkeypatch.setattr(kobj, name, lambda *a, **kw: [])
    monkeypatch.setattr(k, "CoreV1Api", lambda api: type("Core", (), {"delete_namespace": lambda self, n: None})())
    monkeypatch.setattr(node_bench, "_settle", lambda api, names: None)
    monkeypatch.setattr(node_bench, "_scale", lambda api, n: None)
    monkeypatch.setattr(node_bench, "deployed_config", lambda api, qps: {"clientConnection": {"qps": 50, "burst": 100}})
    monkeypatch.setattr(node_bench, "host_config", lambda *a: ({}, None))
    binds = [float(i) / 10 for i in range(11)]  # 10 intervals over 1 s: 10 pods/s
    monkeypatch.setattr(node_bench, "run_pod", lambda api, name, pods: (binds, 2.0))
    monkeypatch.setattr(node_bench, "run_host", lambda api, name, pods, *a: (binds[:6], 1.0))  # 5 over 0.5 s: 10

    results, raw = record.measure("bench.e2e.node", lambda: node_bench.measure(None, "", Path("x"), tmp_path, 11, 2, 3, 0),
                                  argv=["inv", "bench.e2e", "--node"])
    assert [(r["measure"], r["side"]) for r in raw["runs"]] == [("throughput", "pod"), ("throughput", "host")] * 3
    assert [r["pods_per_second"] for r in raw["runs"]] == [10.0] * 6 and raw["runs"][1]["seconds"] == 0.5
    assert [r["pods_per_second"] for r in results["runs"]["pod"]] == [10.0] * 3
    (tmp_path / "bench/results").mkdir(parents=True)
    (tmp_path / "bench/results/n.json").write_text(json.dumps(raw))
    spec = {"raw": "n.json", "measure": "throughput", "ours": "pod", "baseline_side": "host", "field": "pods_per_second",
            "label": "pod vs host", "baseline": "host process"}
    assert "| 10.0 pods/s | host process, 10.0 pods/s | 1.00 (per run 1.00–1.00) | n=3 |" in report.row(tmp_path, spec)

"""Issue 43 on the real node: `inv bench.perf --on KUBECONFIG --parallel 2` (tests/node/test_node.py).

What the e2e tier's control plane cannot show (it has no kubelet): the harness image pushed to a registry
on 127.0.0.1 and pulled by the node, two pods of one Indexed Job running the shards, their logs collected
and merged into the raw file of the whole run, the Job removed after. Then the caller is stopped by SIGTERM
while its Job runs: the real `inv` process deletes the Job, its NetworkPolicy and its pods.

Kept short for CI: upstream's smallest workload (5Nodes, plus the example's labelled copy: two groups, one
per shard), one variant, one repeat, one CPU per shard so both pods fit the node at once. The harness is the
one the integration tier compiled (cached by its inputs); the image is pushed once and reused by the second run.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from bench.perf import job
from tests.node.scenarios import ROOT, inv, wait

WORKLOAD = "5Nodes"
CELLS = {("SchedulingBasic/5Nodes", "vanilla", 1, 1), ("SchedulingBasicLabelled/5Nodes", "vanilla", 1, 2)}


def _argv(kubeconfig: str, registry: str, out: Path) -> list[str]:
    return ["bench.perf", "--on", kubeconfig, "--parallel", "2", "--workloads", WORKLOAD, "--variants", "vanilla",
            "--repeats", "1", "--registry", f"{registry}/acme", "--cpus", "1", "--memory", "2Gi", "--json", str(out)]


def _left(kubeconfig: str) -> list[str]:
    """The bench's Jobs, NetworkPolicies and pods still in the namespace."""
    from kubernetes import client

    from scheduler_build import kubeclient

    api = kubeclient.from_kubeconfig(kubeconfig)
    found = client.BatchV1Api(api).list_namespaced_job("default", label_selector=job.LABEL).items
    found += client.NetworkingV1Api(api).list_namespaced_network_policy("default", label_selector=job.LABEL).items
    found += client.CoreV1Api(api).list_namespaced_pod("default", label_selector=job.LABEL).items
    return [f"{type(o).__name__.removeprefix('V1')} {o.metadata.name}" for o in found]  # "Job x", "Pod y"


def runs_as_one_indexed_job_and_merges(kubeconfig: str, registry: str, tmp_path: Path) -> None:
    out = tmp_path / "on.json"
    done = inv(*_argv(kubeconfig, registry, out), timeout=1800)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "created job default/bench-perf-" in done.stderr and "2/2 shards done" in done.stderr, done.stderr[-3000:]
    raw = json.loads(out.read_text())
    assert "partial" not in raw and [s["shard"] for s in raw["shards"]] == ["1/2", "2/2"], raw.get("shards")
    assert {(r["measure"], r["side"], r["repeat"], r["shard"]) for r in raw["runs"]} == CELLS
    assert set(raw["results"]["summary"]) == {m for m, *_ in CELLS}
    assert sorted(p.name for p in out.with_suffix(".shards").iterdir()) == ["shard-1-of-2.json", "shard-2-of-2.json"]
    assert _left(kubeconfig) == []  # deleted at the end (no --keep)


def sigterm_of_the_caller_deletes_its_job(kubeconfig: str, registry: str, tmp_path: Path) -> None:
    caller = subprocess.Popen([sys.executable, "-m", "invoke", *_argv(kubeconfig, registry, tmp_path / "stopped.json")],
                              cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        wait(lambda: caller.poll() is not None or any(n.startswith("Pod ") for n in _left(kubeconfig)), 600,
             "the caller's Job to have a pod")
        assert caller.poll() is None, caller.stderr.read()[-3000:]
        time.sleep(2)  # the pod started: the run is under way
        caller.send_signal(signal.SIGTERM)
        _, err = caller.communicate(timeout=120)
    finally:
        if caller.poll() is None:
            caller.kill()
    assert caller.returncode == 143 and "terminated (SIGTERM)" in err, err[-3000:]
    assert "deleted job default/bench-perf-" in err, err[-3000:]
    assert not [n for n in _left(kubeconfig) if not n.startswith("Pod ")]  # the Job and its NetworkPolicy at once
    wait(lambda: _left(kubeconfig) == [], 120, "the stopped Job's pods to be gone")

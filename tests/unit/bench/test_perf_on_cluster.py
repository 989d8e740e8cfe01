"""bench.perf --on's pure parts: the plan and the shard raw files made from the pods' log blocks (merged by
bench.merge's code, a missing shard refused by name), following the Job on real-shaped Job and Pod objects
(the API's JSON, as `kubectl get -o json` prints it), and the harness image's layout. The cluster itself is
tests/e2e/test_bench_perf_job.py (real kube-apiserver) and the real-node run (docs/bench-perf.md)."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest

from bench.perf import cells, follow, harness, harness_image, job, merge, on_cluster, shard_plan, variants
from scheduler_build.errors import UserError
from scheduler_build.image import oci
from scheduler_build.inputs.common import spec_at

REPO = Path(__file__).resolve().parents[3]
CONFIG = """
- name: SchedulingBasic
  defaultPodTemplatePath: ../templates/pod-default.yaml
  workloadTemplate:
  - opcode: createNodes
    countParam: $initNodes
  workloads:
  - name: 500Nodes
    params: {initNodes: 500, initPods: 500, measurePods: 1000}
  - name: 5Nodes
    params: {initNodes: 5, initPods: 5, measurePods: 10}
"""
IMAGE_CONFIG = "/k8s/ws/k8s.io/kubernetes@v1.36.3/test/integration/scheduler_perf/misc/performance-config.yaml"
WORKLOADS = variants.parse_workloads("500Nodes,5Nodes")
CHOSEN = ["vanilla", "spec"]


@pytest.fixture(scope="module")
def planned():
    spec = spec_at(REPO / "examples/underlay/scheduler.yaml")
    h = harness.Harness(Path("/cache/perf-harness/0123abcd/perf.test"), "v1.36.3", Path("/nonexistent"),
                        ("UnderlayIPLimit",), False, 0.0)
    configs = {w.label: (CONFIG, IMAGE_CONFIG) for w in WORKLOADS}
    args = {"workloads": "SchedulingBasic/500Nodes,SchedulingBasic/5Nodes", "variants": "vanilla,spec", "repeats": 1}
    body, files = shard_plan.plan(h, spec, WORKLOADS, configs, CHOSEN, 1, 2, True, args)
    meta = {"spec": str(spec.path), "spec_sha256": "s" * 64, "kubernetes": "v1.36.3", "variants": CHOSEN,
            "repeats": 1, "workloads": [w.label for w in WORKLOADS], "thresholds": {}, "plugin_names": ["UnderlayIPLimit"],
            "harness": {"key": "0123abcd"}, "harnesses": {v: {"key": "0123abcd"} for v in CHOSEN}}
    return body, files, meta


def items(pods_per_second: float) -> dict:
    return {"version": "v1", "dataItems": [
        {"data": {"Average": pods_per_second, "Perc50": pods_per_second, "Perc90": pods_per_second * 1.1,
                  "Perc95": pods_per_second * 1.2, "Perc99": pods_per_second * 1.3}, "unit": "pods/s",
         "labels": {"Metric": "SchedulingThroughput", "Name": "SchedulingBasic/500Nodes"}},
        {"data": {"Duration": 1000 / pods_per_second}, "unit": "s", "labels": {"Metric": "SchedulingDuration"}}]}


def block(body: dict, index: int, exit_code: int = 0) -> str:
    """A pod's log as the runner prints it: progress lines, then the block."""
    runs = [{"repeat": c["repeat"], "workload": c["workload"], "variant": c["variant"], "exit": exit_code,
             "ungated": False, "seconds": 30.0, "items": items(200.0 + k) if exit_code == 0 else None,
             "log": ["I1128 scheduler.go] started"] if exit_code == 0 else ["FATAL ERROR: etcd did not start"]}
            for k, c in enumerate(body["shards"][str(index)])]
    payload = {"shard": f"{index}/2", "runs": runs, "load_before": [1.0, 1.0, 1.0], "load_after": [1.5, 1.2, 1.0]}
    return f"perf-shard {index}/2: run 1/2 ...\n" + printed(json.dumps(payload).encode())


def printed(data: bytes, width: int = 300, stderr_after: int = 1) -> str:
    """The block as runner/main.go prints it (numbered base64 chunks, the digest on END), with a stderr
    line between two chunks as the kubelet interleaves the pod's two streams."""
    text = base64.b64encode(data).decode()
    pieces = [text[k:k + width] for k in range(0, len(text), width)]
    lines = [f"{shard_plan.CHUNK} {k + 1}/{len(pieces)} {piece}" for k, piece in enumerate(pieces)]
    lines.insert(stderr_after, "perf-shard 1/2: SchedulingBasic/500Nodes spec exit 0 in 30.0s")
    return "\n".join([shard_plan.BEGIN, *lines, f"{shard_plan.END} sha256={hashlib.sha256(data).hexdigest()}", ""])


HEAD = {"schema": 1, "task": "bench.perf", "command": "inv bench.perf --on k --parallel 2", "commit": "abc",
        "started": "2026-11-28T10:00:00Z", "machine": {"cpus": 2}}


def test_the_plan_deals_the_cells_as_shard_numbers_do_and_names_the_image_paths(planned):
    body, files, _ = planned
    assert [(c["repeat"], c["workload"], c["variant"]) for c in body["shards"]["1"]] == [
        (1, "SchedulingBasic/500Nodes", "vanilla"), (1, "SchedulingBasic/500Nodes", "spec")]
    assert {c["workload"] for c in body["shards"]["2"]} == {"SchedulingBasic/5Nodes"}
    first = body["shards"]["1"][1]
    assert first["argv"][0] == shard_plan.BINARY and first["gate"] is True
    assert f"-sb-scheduler-config={shard_plan.CELLS}/{first['name']}/scheduler-config.yaml" in first["argv"]
    assert any(a.startswith(f"-data-items-dir={shard_plan.RUNS}/") for a in first["argv"])
    assert first["fallback"] and any(IMAGE_CONFIG in a for a in first["fallback"])  # run._one's ungated retry
    assert f"{shard_plan.CELLS}/{first['name']}/workloads.yaml" in files
    assert body["cwd"].endswith("test/integration/scheduler_perf/misc")


def test_two_pods_blocks_make_shards_that_merge_into_every_cell(planned):
    body, _, meta = planned
    shard_files = [(f"shard-{i}", shard_plan.shard_raw(shard_plan.parse_block(block(body, i), f"pod p{i}"), body,
                                                      HEAD, meta, ("UnderlayIPLimit",), f"pod p{i}")) for i in (1, 2)]
    merged = merge.merge(shard_files, "inv bench.perf --on k --parallel 2")
    runs = merged["results"]["runs"]
    assert {lb: sorted(row) for lb, row in runs.items()} == {w.label: sorted(CHOSEN) for w in WORKLOADS}
    assert all(len(figs) == 1 for row in runs.values() for figs in row.values())
    assert merged["load_after"] == [1.5, 1.2, 1.0] and sorted(r["shard"] for r in merged["runs"]) == [1, 1, 2, 2]
    assert cells.from_raw(merged, "merged")  # the merged file reads back as a local run's


def test_a_shard_missing_from_the_job_is_named_and_nothing_partial_is_merged(planned):
    body, _, meta = planned
    one = shard_plan.shard_raw(shard_plan.parse_block(block(body, 1), "pod p1"), body, HEAD, meta, (), "pod p1")
    with pytest.raises(UserError, match=r"shard 2/2 missing \(have 1/2\)"):
        merge.merge([("shard-1", one)], "inv bench.perf --on k")


def test_a_failed_run_or_a_cut_log_is_one_line_naming_the_pod(planned):
    body, _, meta = planned
    with pytest.raises(UserError, match=r"pod p1: scheduler_perf SchedulingBasic/500Nodes \(vanilla\) failed "
                                        r"\(exit 1\): FATAL ERROR: etcd did not start"):
        shard_plan.shard_raw(shard_plan.parse_block(block(body, 1, exit_code=1), "pod p1"), body, HEAD, meta, (), "pod p1")
    cut = block(body, 1).split(shard_plan.END)[0]
    with pytest.raises(UserError, match="pod p1: its log has no shard block"):
        shard_plan.parse_block(cut, "pod p1")
    short = shard_plan.parse_block(block(body, 1), "pod p1")
    short["runs"] = short["runs"][:1]
    with pytest.raises(UserError, match="ran 1 of its 2 planned cells"):
        shard_plan.shard_raw(short, body, HEAD, meta, (), "pod p1")


def test_a_block_with_a_chunk_lost_or_changed_is_refused_and_one_with_stderr_between_chunks_is_read():
    data = json.dumps({"shard": "1/2", "runs": [{"log": ["x" * 2000]}]}).encode()
    assert shard_plan.parse_block(printed(data, stderr_after=2), "pod p1")["runs"][0]["log"] == ["x" * 2000]
    lines = printed(data).split("\n")
    lost = "\n".join(lines[:3] + lines[4:])
    with pytest.raises(UserError, match=r"pod p1: the shard block is cut \(chunk 2 of \d+ missing\)"):
        shard_plan.parse_block(lost, "pod p1")
    changed = printed(data).replace("eHh4", "eHh5", 1)
    with pytest.raises(UserError, match=r"pod p1: the shard block is cut \(its digest does not match\)"):
        shard_plan.parse_block(changed, "pod p1")
    cut_short = "\n".join(lines[:3] + [lines[3][:-1]] + lines[4:])  # a chunk line that lost its last character
    with pytest.raises(UserError, match=r"pod p1: the shard block is cut \(its digest does not match\)"):
        shard_plan.parse_block(cut_short, "pod p1")
    old_image = f"{shard_plan.BEGIN}\n{data.decode()}\n{shard_plan.END}\n"  # a block printed whole on one line
    with pytest.raises(UserError, match="no numbered chunks and digest"):
        shard_plan.parse_block(old_image, "pod p1")


def test_variants_the_image_cannot_run_are_refused():
    shard_plan.on_cluster_variants(["vanilla", "vanilla-nobatch", "spec"])
    with pytest.raises(UserError, match="--variants extender: not with --on"):
        shard_plan.on_cluster_variants(["vanilla", "extender"])


def pod(name: str, index: int, phase: str, waiting: str = "") -> dict:
    status: dict = {"phase": phase, "startTime": "2026-11-28T10:00:0%dZ" % index}
    if waiting:
        status["containerStatuses"] = [{"name": "shard", "image": "reg.example/acme/perf-harness@sha256:ab",
                                        "ready": False, "restartCount": 0, "state": {"waiting": {
                                            "reason": waiting, "message": "Back-off pulling image \"reg.example/...\""}}}]
    return {"apiVersion": "v1", "kind": "Pod", "status": status,
            "metadata": {"name": name, "namespace": "bench", "labels": {job.LABEL: "bench-perf-x"},
                         "annotations": {follow.INDEX: str(index)}}, "spec": {"nodeName": "node-1"}}


def job_object(completed: str = "", failed: str = "", conditions: list | None = None) -> dict:
    status = {"active": 1, "completedIndexes": completed, "failedIndexes": failed, "conditions": conditions or []}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "bench-perf-x"}, "status": status}


def test_observe_reads_indexes_conditions_and_pull_failures():
    state = follow.observe(job_object("0"), [pod("a", 0, "Succeeded"), pod("b", 1, "Running")], 2)
    assert (state.completed, state.running, state.over) == ({0}, 1, False)
    assert state.line("bench-perf-x", 2, 12) == "job bench-perf-x: 1/2 shards done, 1 running, 0 pending, failed: none (12s)"
    failed = follow.observe(job_object("0", "1", [{"type": "Failed", "status": "True", "reason": "FailedIndexes",
                                                   "message": "Job has failed indexes"}]), [], 2)
    assert failed.over and failed.failed == {1} and failed.condition == "FailedIndexes: Job has failed indexes"
    assert follow.indexes("0,2-4") == {0, 2, 3, 4}
    pulling = follow.observe(job_object(), [pod("a", 0, "Pending", "ImagePullBackOff")], 2)
    assert pulling.pull_error.startswith("pod a cannot pull reg.example/acme/perf-harness@sha256:ab: ImagePullBackOff")
    assert follow.observe(job_object(), [pod("a", 0, "Pending", "ContainerCreating")], 2).pull_error == ""
    assert follow.succeeded_pod([pod("a", 0, "Failed"), pod("b", 0, "Succeeded")], 0)["metadata"]["name"] == "b"


def scripted(*looks):
    seq = list(looks)

    def look(kube, name, namespace):
        return seq.pop(0) if len(seq) > 1 else seq[0]
    return look


def test_watch_says_progress_at_least_every_10s_and_stops_when_the_job_is_over(capsys):
    now = [0.0]
    look = scripted(*[(job_object(), [pod("a", 0, "Running"), pod("b", 1, "Running")])] * 6,
                    (job_object("0-1", conditions=[{"type": "Complete", "status": "True"}]), []))
    state, _ = on_cluster.watch(None, "bench-perf-x", "bench", 2, 600, look=look,
                                sleep=lambda s: now.__setitem__(0, now[0] + s), clock=lambda: now[0])
    assert state.completed == {0, 1}
    said = [ln for ln in capsys.readouterr().err.splitlines() if "job bench-perf-x" in ln]
    seconds = [int(ln.rsplit("(", 1)[1].rstrip("s)")) for ln in said]
    assert seconds[0] == 0 and all(b - a <= 10 for a, b in zip(seconds, seconds[1:])) and "2/2 shards done" in said[-1]


def test_watch_fails_fast_in_one_line_when_the_image_cannot_be_pulled():
    look = scripted((job_object(), [pod("a", 0, "Pending", "ErrImagePull")]))
    with pytest.raises(UserError, match="pod a cannot pull .*: ErrImagePull") as found:
        on_cluster.watch(None, "bench-perf-x", "bench", 2, 600, look=look, sleep=lambda s: None)
    assert "\n" not in str(found.value.args[0])
    stuck = scripted((job_object(), [pod("a", 0, "Running")]))
    now = [0.0]
    with pytest.raises(UserError, match="ran over 20s"):  # negative control: no pull error, a timeout instead
        on_cluster.watch(None, "bench-perf-x", "bench", 2, 20, look=stuck,
                         sleep=lambda s: now.__setitem__(0, now[0] + s), clock=lambda: now[0])


def test_the_image_is_deterministic_non_root_and_runs_the_runner(tmp_path: Path):
    binary, etcd_bin, runner = (tmp_path / n for n in ("perf.test", "etcd", "perf-shard"))
    for f in (binary, etcd_bin, runner):
        f.write_bytes(b"\x7fELF " + f.name.encode())
    module = tmp_path / "k8s"
    (module / "test/integration/scheduler_perf/misc").mkdir(parents=True)
    (module / "test/integration/scheduler_perf/misc/performance-config.yaml").write_text(CONFIG)
    h = harness.Harness(binary, "v1.36.3", module, (), False, 0.0)
    body = {"count": 1, "shards": {"1": []}}
    found = harness_image.entries(h, etcd_bin, runner, body, {"/perf/cells/a/workloads.yaml": b"[]"})
    paths = {e[0] for e in found}
    assert {"perf-shard", "usr/local/bin/etcd", "usr/local/bin/perf.test", "perf/plan.json", "perf/cells/a/workloads.yaml",
            "k8s/ws/k8s.io/kubernetes@v1.36.3/test/integration/scheduler_perf/misc/performance-config.yaml"} <= paths
    first = harness_image.build(found, "amd64", tmp_path / "cache")
    again = harness_image.build(harness_image.entries(h, etcd_bin, runner, body, {"/perf/cells/a/workloads.yaml": b"[]"}),
                                "amd64", tmp_path / "cache")
    assert (first.manifest_digest, first.layout) == (again.manifest_digest, again.layout)
    lay = oci.Layout(first.layout)
    manifest = lay.json_blob(first.manifest_digest)
    config = lay.json_blob(manifest["config"]["digest"])["config"]
    assert config["User"] == "65532:65532" and config["Entrypoint"] == [job.RUNNER]
    changed = harness_image.build(harness_image.entries(h, etcd_bin, runner, {"count": 2}, {}), "amd64", tmp_path / "cache")
    assert changed.manifest_digest != first.manifest_digest  # negative control: another plan, another image


@pytest.mark.parametrize("args,words", [
    (["--parallel", "2"], "--parallel needs --on KUBECONFIG"),
    (["--on", "/nonexistent/kubeconfig", "--parallel", "2"], "--on /nonexistent/kubeconfig: no such file"),
    (["--on", "KUBECONFIG", "--parallel", "2", "--variants", "vanilla,extender"], "--variants extender: not with --on"),
    (["--on", "KUBECONFIG", "--parallel", "0"], "--parallel 0: must be at least 1"),
    (["--on", "KUBECONFIG", "--parallel", "2", "--shard", "1/2"], "take no --shard"),
])
def test_bench_perf_on_is_decided_before_anything_is_built(args, words, tmp_path):
    """Each refusal is one line and comes before the compile (it would take minutes; these take a second)."""
    import subprocess
    import sys

    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
                          "contexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {}}]\n"
                          "current-context: c\n")
    args = [str(kubeconfig) if a == "KUBECONFIG" else a for a in args]
    proc = subprocess.run([sys.executable, "-m", "invoke", "bench.perf", "--registry", "127.0.0.1:5000/acme/s", *args],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and words in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and "compile" not in proc.stderr

"""The harness image's runner (bench/perf/runner/main.go), compiled with the host's Go and run as the Job's
pod runs it (JOB_COMPLETION_INDEX set, the Job's flags), on a plan made by shard_plan.plan. The one stand-in:
the harness is a shell script that writes scheduler_perf's JSON where the argv says (the real harness needs
its hour-long compile; the real-node run in docs/bench-perf.md runs it). What the runner prints is read back
by the caller's code (parse_block, shard_raw) and merged."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from bench.perf import harness, harness_image, merge, run, shard_plan, variants
from scheduler_build.errors import UserError
from scheduler_build.inputs.common import spec_at
from tests.unit.bench.test_perf_on_cluster import CONFIG, HEAD, IMAGE_CONFIG, items

REPO = Path(__file__).resolve().parents[2]
GO = shutil.which("go") or "/usr/local/go/bin/go"
pytestmark = pytest.mark.skipif(not Path(GO).exists(), reason="needs Go to compile the runner")

FAKE = """#!/bin/sh
# scheduler_perf's stand-in: $REFUSE in the argv's config path -> the gate refusal run._one retries ungated
for a in "$@"; do case "$a" in -data-items-dir=*) dir="${a#-data-items-dir=}";; -sb-config=*) cfg="${a#-sb-config=}";; esac; done
# etcd's unix socket goes under TMPDIR and its path must fit 108 bytes (sun_path), as the real harness's does
sock="$TMPDIR/integration_test_etcd_data1211820425/etcd.sock"
[ ${#sock} -le 107 ] || { echo "listen unix $sock: bind: invalid argument"; echo FAIL; exit 1; }
case "$cfg" in *"$REFUSE"*) echo "E1128 cannot set feature gate OpportunisticBatching to true"; exit 1;; esac
echo 'I1128 "Disabling signatures for profile because plugins do not sign." profile="default-scheduler" plugins=["X"]'
printf '%s' "$ITEMS" > "$dir/BenchmarkPerfScheduling_x.json"
echo PASS
"""


def _plan(tmp_path: Path, chosen: list[str]) -> tuple[dict, dict]:
    spec = spec_at(REPO / "examples/underlay/scheduler.yaml")
    h = harness.Harness(Path("/cache/k/perf.test"), "v1.36.3", Path("/nonexistent"), ("UnderlayIPLimit",), False, 0.0)
    workloads = variants.parse_workloads("500Nodes,5Nodes")
    args = {"workloads": "SchedulingBasic/500Nodes,SchedulingBasic/5Nodes", "variants": ",".join(chosen), "repeats": 1}
    body, _ = shard_plan.plan(h, spec, workloads, {w.label: (CONFIG, IMAGE_CONFIG) for w in workloads}, chosen, 1, 2,
                              True, args)
    script = tmp_path / "perf.test"
    script.write_text(FAKE)
    script.chmod(0o755)
    runs = tmp_path / "runs"
    text = json.dumps(body).replace(shard_plan.BINARY, str(script)).replace(shard_plan.RUNS, str(runs))
    body = json.loads(text)
    body["cwd"] = str(tmp_path)
    body["env"].update(PATH="/usr/bin:/bin", ITEMS=json.dumps(items(250.0)), REFUSE="workloads.yaml-nothing")
    meta = {"spec": str(spec.path), "spec_sha256": "s", "kubernetes": "v1.36.3", "variants": chosen, "repeats": 1,
            "workloads": [w.label for w in workloads], "thresholds": {}, "plugin_names": ["UnderlayIPLimit"],
            "harness": {"key": "k"}, "harnesses": {v: {"key": "k"} for v in chosen}}
    return body, meta


def _pod(runner: Path, body: dict, tmp_path: Path, index: int, **flags) -> subprocess.CompletedProcess:
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(body))
    args = {"count": body["count"], "workloads": body["workloads"], "variants": body["variants"],
            "repeats": body["repeats"], **flags}
    argv = [str(runner)] + [x for k, v in args.items() for x in (f"--{k}", str(v))]
    env = dict(os.environ, JOB_COMPLETION_INDEX=str(index), PERF_SHARD_PLAN=str(plan_file))
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def runner(tmp_path_factory) -> Path:
    return harness_image.runner_binary(tmp_path_factory.mktemp("cache"), GO)


def test_two_pods_of_the_runner_give_shards_that_merge_into_every_cell(runner, tmp_path):
    body, meta = _plan(tmp_path, ["vanilla", "spec"])
    collected = []
    for index in (0, 1):
        done = _pod(runner, body, tmp_path, index)
        assert done.returncode == 0, done.stderr
        assert f"perf-shard {index + 1}/2: run 1/2" in done.stderr  # progress on the pod's log
        # The runtime splits log lines over 16 KiB, and the kubelet interleaves stderr between the pieces.
        assert max(len(line) for line in done.stdout.splitlines()) < 16384
        interleaved = "\n".join(f"{line}\n{done.stderr.splitlines()[0]}" for line in done.stdout.splitlines())
        raw = shard_plan.shard_raw(shard_plan.parse_block(interleaved, f"pod {index}"), body, HEAD, meta, (), f"pod {index}")
        collected.append((f"pod {index}", raw))
    merged = merge.merge(collected, "inv bench.perf --on k --parallel 2")
    assert {lb: sorted(row) for lb, row in merged["results"]["runs"].items()} == {
        "SchedulingBasic/500Nodes": ["spec", "vanilla"], "SchedulingBasic/5Nodes": ["spec", "vanilla"]}
    assert merged["results"]["summary"]["SchedulingBasic/500Nodes"]["vanilla"]["batching"].startswith("off (")
    with pytest.raises(UserError, match=r"shard 2/2 missing \(have 1/2\)"):  # one pod failed past its retries
        merge.merge(collected[:1], "inv bench.perf --on k --parallel 2")


def test_a_refused_gate_is_run_again_ungated_as_a_local_run_does(runner, tmp_path):
    body, meta = _plan(tmp_path, ["vanilla"])
    body["env"]["REFUSE"] = "workloads.yaml"  # the gated copy is refused, upstream's file is not
    done = _pod(runner, body, tmp_path, 0)
    found = shard_plan.parse_block(done.stdout, "pod 0")
    assert [r["ungated"] for r in found["runs"]] == [True]
    raw = shard_plan.shard_raw(found, body, HEAD, meta, (), "pod 0")
    assert raw["runs"][0]["batching"] == "off (the workload emulates a release without the gate)"
    assert run.UNSETTABLE in body["unsettable"]


def test_a_pod_whose_flags_or_index_do_not_fit_the_image_says_so_in_one_line(runner, tmp_path):
    body, _ = _plan(tmp_path, ["vanilla"])
    wrong = _pod(runner, body, tmp_path, 0, count=3)
    assert wrong.returncode == 2 and "are not the image's plan" in wrong.stderr and shard_plan.BEGIN not in wrong.stdout
    body["env"]["REFUSE"] = "/"  # every config refused, the ungated retry too: no JSON at all
    failed = _pod(runner, body, tmp_path, 0)
    assert failed.returncode == 1 and "failed (exit 1)" in failed.stderr  # the pod fails: its index is retried
    assert shard_plan.BEGIN in failed.stdout  # and still says what it ran
    outside = _pod(runner, body, tmp_path, 2)
    assert outside.returncode == 2 and 'JOB_COMPLETION_INDEX "2": not an index in 0..1' in outside.stderr

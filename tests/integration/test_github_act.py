"""The GitHub workflows of ci/github/ run by a real runner: act (github.com/nektos/act v0.2.89).

act, built from the Go module proxy once and cached, plans and runs the jobs on this
host (`-P ubuntu-24.04=-self-hosted`): matrix (from `inv release.matrix --json` through
fromJSON), `needs`, job outputs, env, secrets (masked), artifact hand-off through act's
artifact server, a fresh workspace per job. Stood in (nothing reaches github.com here;
see testkit/act_runner.py and testkit/actions/README.md): the marketplace
actions (through act's --local-repository), the runner image's sudo, and github.com
itself (a clone of this checkout's committed tree).

Kept cheap: the cache stand-in restores an entry whose directories link to this machine's
warm caches (the builds are no-change rebuilds), and the pull-request job's `inv test`
runs a few unit tests (PYTEST_ADDOPTS in the job environment, which pytest reads itself).
Negative control: the same pull-request workflow with a broken step fails the run.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import zipfile
from pathlib import Path

import pytest
import yaml

from scheduler_build import settings
from scheduler_build.golang import gotool
from testkit.act_runner import Act, seed_warm_cache
from testkit.registry_server import Registry

pytestmark = pytest.mark.pipelines  # inv test runs these last (tasks.py TIERS)

REPO = Path(__file__).resolve().parents[2]
PASSWORD = "act-pipeline-pw-7e1d"
UNIT_TESTS = "-m 'not integration and not e2e and not node' -k 'test_matrix'"  # tests/unit/build/test_matrix.py


@pytest.fixture(scope="module")
def act(tmp_path_factory) -> Act:
    work = tmp_path_factory.mktemp("act")
    origin = work / "origin"
    subprocess.run(["git", "clone", "-q", str(REPO), str(origin)], check=True)
    seed_warm_cache(work / "cache-store", "scheduler-build-Linux-warm", {
        "scheduler-build": settings.cache_dir(),
        "go-mod": Path(gotool.env_value("GOMODCACHE")),
        "go-build": Path(gotool.env_value("GOCACHE")),
    })
    # The workflows bind the builder's Go cache volume into the workspace only when it is missing;
    # have it exist (as `inv build` creates it) so no volume points into a workspace act removes.
    volume = settings.gocache_volume(None)
    if subprocess.run(["docker", "volume", "inspect", volume], capture_output=True).returncode != 0:
        subprocess.run(["docker", "volume", "create", volume], check=True, capture_output=True)
    return Act(origin=origin, work=work, env={"PYTEST_ADDOPTS": UNIT_TESTS})


def succeeded_jobs(output: str) -> list[str]:
    # act pads the names in its prefix to the longest job name's width: "[perf/merge  ]" beside "[perf/shard-1]"
    return sorted(line.split("]")[0].lstrip("[").strip() for line in output.splitlines() if line.endswith("Job succeeded"))


PR_EVENT = {"number": 7, "pull_request": {"number": 7, "head": {"ref": "feature"}, "base": {"ref": "main"}}}


def test_pull_request_workflow_runs_under_act(act):
    proc = act.run("pull_request", REPO / "ci/github/pull-request.yml", PR_EVENT)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert succeeded_jobs(proc.stdout) == ["pull-request/test"], proc.stdout[-3000:]
    assert "passed" in proc.stdout and "tests/unit/build/test_matrix.py" in proc.stdout


def test_negative_control_a_broken_step_fails_the_run(act, tmp_path):
    broken = tmp_path / "pull-request.yml"
    text = (REPO / "ci/github/pull-request.yml").read_text()
    broken.write_text(text.replace('inv test', 'inv test --no-such-flag'))
    assert broken.read_text() != text
    proc = act.run("pull_request", broken, PR_EVENT)
    assert proc.returncode != 0
    assert "Job failed" in proc.stdout and "no-such-flag" in proc.stdout


@pytest.fixture(scope="module")
def release_secrets(act, tmp_path_factory):
    keys = tmp_path_factory.mktemp("act-keys")
    env = dict(os.environ, COSIGN_PASSWORD=PASSWORD)
    done = subprocess.run(["inv", "image.keygen", "--out", str(keys)], cwd=REPO, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    registry = Registry(tmp_path_factory.mktemp("act-registry")).start()
    yield registry.host, keys
    registry.stop()


@pytest.mark.timeout(3600)  # two builds, images, push: generous on a loaded 2-core machine
def test_release_workflow_fans_out_from_the_spec_and_pushes_signed(act, release_secrets):
    host, keys = release_secrets
    act.secrets = {"COSIGN_KEY": (keys / "cosign.key").read_text(), "COSIGN_PASSWORD": PASSWORD,
                   "REGISTRY_USERNAME": "", "REGISTRY_PASSWORD": ""}
    act.variables = {"REGISTRY_REPOSITORY": f"{host}/acme/act-release", "COSIGN_PUB": (keys / "cosign.pub").read_text()}
    # `-j release`: the release job and what it needs (matrix, build), which is every job of the workflow:
    # a job `-j release` leaves out (as the perf gate was) would never run here.
    workflow = yaml.safe_load((REPO / "ci/github/release.yml").read_text())
    assert sorted(workflow["jobs"]) == ["build", "matrix", "release"], sorted(workflow["jobs"])
    proc = act.run("push", REPO / "ci/github/release.yml", {"ref": "refs/tags/v0.0.0-act"}, job="release")
    assert proc.returncode == 0, proc.stdout[-8000:] + proc.stderr[-2000:]
    # One build job per platform of the example spec (its one Kubernetes version), then the index job.
    assert succeeded_jobs(proc.stdout) == ["release/build-1", "release/build-2", "release/matrix", "release/release"]
    artifacts = act.work / "artifacts" / "1"
    assert sorted(p.name for p in artifacts.iterdir()) == ["dist-1.36-amd64", "dist-1.36-arm64", "release-v0.0.0-act-1.36"]
    with zipfile.ZipFile(io.BytesIO((artifacts / "release-v0.0.0-act-1.36" / "release-v0.0.0-act-1.36.zip").read_bytes())) as z:
        pushed = z.read("pushed.txt").decode()
    assert pushed.startswith(f"{host}/acme/act-release@sha256:")
    assert "ok provenance" in proc.stdout and PASSWORD not in proc.stdout  # act masks the secret


@pytest.mark.timeout(3600)  # two shard jobs of 5Nodes (harness compiled once, cached in the warm cache)
def test_perf_workflow_runs_two_shards_as_a_matrix_and_merges(act):
    """ci/github/perf.yml: a two-shard matrix of `inv bench.perf --shard I/2` (the smallest workload, two
    variants, one repeat: two (repeat, workload) groups, one per shard), artifacts handed to the merge job."""
    inputs = {"workloads": "5Nodes", "variants": "vanilla,spec", "repeats": "1"}
    proc = act.run("workflow_dispatch", REPO / "ci/github/perf.yml", {"inputs": inputs})
    assert proc.returncode == 0, proc.stdout[-8000:] + proc.stderr[-2000:]
    assert succeeded_jobs(proc.stdout) == ["perf/merge", "perf/shard-1", "perf/shard-2"], proc.stdout[-3000:]
    artifacts = act.work / "artifacts" / "1"
    names = sorted(p.name for p in artifacts.iterdir() if p.name.startswith(("bench-perf", "perf-shard")))
    assert names == ["bench-perf", "perf-shard-1-of-2", "perf-shard-2-of-2"]
    with zipfile.ZipFile(io.BytesIO((artifacts / "bench-perf" / "bench-perf.zip").read_bytes())) as z:
        raw = json.loads(z.read("bench-perf.json"))
    assert [s["shard"] for s in raw["shards"]] == ["1/2", "2/2"] and "partial" not in raw
    assert {(r["measure"], r["side"], r["shard"]) for r in raw["runs"]} == {
        ("SchedulingBasic/5Nodes", "vanilla", 1), ("SchedulingBasic/5Nodes", "spec", 1),
        ("SchedulingBasicLabelled/5Nodes", "vanilla", 2), ("SchedulingBasicLabelled/5Nodes", "spec", 2)}

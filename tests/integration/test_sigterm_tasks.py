"""Integration: image.push and bench.perf stopped by SIGTERM (a CI cancel, `timeout`, a terminated pod)
at several moments leave nothing behind (no container, no process at any depth, no mount, nothing in
their TMPDIR), end with one line and 143, and the next run succeeds. Real parts: the engine, Debian's
docker-registry on 127.0.0.1 (testkit.registry_server), the scheduler_perf harness compiled from the
example's build (cached under <cache>/perf-harness) with the etcd it pins. build and image.build are
covered in test_sigterm.py, cluster.up in tests/e2e/test_cluster_sigterm.py.

Negative control, run by hand: with the harness's session not ended (`_end_session` skipped) the `run`
case fails (its perf.test left running). Stopped at `run`, the harness's own API server handles SIGTERM
and removes its temporary files within the grace period, so the scratch TMPDIR bench.perf now gives it
is not what this case shows (it covers a harness that must be SIGKILLed after the grace). testkit's
detection itself (an orphan in a session of its own, a temporary directory) was checked with a small
script that leaves both."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, TEST_K8S_MINOR
from testkit.registry_server import Registry
from testkit.stopped import Run, one_line_end
from scheduler_build.atomic import STAGING

IMAGE_ARGS = ["--no-spec", "--k8s-version", TEST_K8S_MINOR]
REPOSITORY = "acme/kube-scheduler"


@pytest.fixture(scope="module")
def image_dist(built_scheduler, tmp_path_factory) -> dict[str, Path]:
    """A dist holding the suite's build and its image layout, and the same image as an OCI archive."""
    root = tmp_path_factory.mktemp("sigterm-push")
    dist, archive = root / "dist", root / "image.oci.tar"
    shutil.copytree(built_scheduler.binary.parents[3], dist, symlinks=True)
    done = subprocess.run([sys.executable, "-m", "scheduler_build", "image.build", *IMAGE_ARGS, "--dist", str(dist),
                           "--force", "--oci-archive", str(archive)], cwd=root, capture_output=True, text=True,
                          timeout=900, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert done.returncode == 0, done.stderr[-3000:]
    return {"dist": dist, "archive": archive, "binary_dist": built_scheduler.binary.parents[3]}


def _tags(registry: Registry) -> list[str]:
    answer = registry.get(f"/v2/{REPOSITORY}/tags/list")
    return (answer.json().get("tags") or []) if answer.status_code == 200 else []


@pytest.mark.parametrize("moment", ["upload", "archive", "assemble"])
def test_a_stopped_push_leaves_nothing_tags_nothing_and_the_next_one_succeeds(image_dist, tmp_path, moment):
    """upload: --no-build, stopped once it starts on a platform's blobs; archive: --from-archive, stopped
    while the archive is unpacked and checked in a temporary directory; assemble: a dist with the binary
    only, stopped while the image layout is staged beside it."""
    registry = Registry(tmp_path / "registry").start()
    dist = tmp_path / "dist"
    target = ["--registry", f"{registry.host}/{REPOSITORY}"]
    if moment == "archive":
        argv = ["-m", "scheduler_build", "image.push", "--from-archive", str(image_dist["archive"]), *target]
    else:
        shutil.copytree(image_dist["dist"] if moment == "upload" else image_dist["binary_dist"], dist, symlinks=True)
        # assemble: the suite's shared dist may hold an image of the same inputs by now (an earlier test's), which
        # image.build would find up to date, staging nothing to stop in: a date stamp of this run's own
        argv = ["-m", "scheduler_build", "image.push", *IMAGE_ARGS, "--dist", str(dist), *target,
                *(["--no-build"] if moment == "upload" else ["--source-date-epoch", str(int(time.time()))])]
    run = Run(argv, tmp_path)
    try:
        if moment == "upload":
            run.wait_line("    linux/")  # the platform's line, printed as its blobs start to go
        elif moment == "archive":
            run.wait_until("the unpacked archive", lambda: any(run.tmpdir.glob("scheduler-build-archive-*")))
        else:
            run.wait_until("the staged layout", lambda: any(dist.rglob(f"{STAGING}image-*")))
        seconds = run.stop(signal.SIGTERM)
        assert run.proc.returncode == 143, run.stderr()[-3000:]
        one_line_end(run.stderr())
        assert run.leftovers(tmp_path) == []
        assert not list(dist.rglob(f"{STAGING}*")) if dist.exists() else True, "a staging directory was left"
        assert _tags(registry) == [], "a stopped push tagged something"
        print(f"image.push stopped at {moment}: exited {seconds:.1f}s after SIGTERM")
        again = Run(argv, tmp_path)
        try:
            assert again.finish() == 0, again.stderr()[-3000:]
            assert again.leftovers(tmp_path) == []
        finally:
            again.close()
        assert _tags(registry), "the next push tagged nothing"
    finally:
        run.close()
        registry.stop()


def _raw_file(stderr: str) -> Path | None:
    """The raw file a finished bench run wrote into bench/results/ (the test removes it: not a figure)."""
    line = next((l for l in stderr.splitlines() if l.startswith("raw file: ")), "")
    return REPO / line.removeprefix("raw file: ").strip() if line else None


PERF = ["-m", "invoke", "bench.perf", "--spec", "examples/underlay/scheduler.yaml", "--workloads", "5Nodes",
        "--variants", "vanilla", "--repeats", "1"]


@pytest.mark.parametrize("moment", ["harness", "etcd", "run"])
def test_a_stopped_bench_perf_leaves_nothing_and_the_next_one_succeeds(tmp_path, moment):
    """harness: at its preparation (the vendored test module, the compile cached by its inputs); etcd: at
    the pinned etcd (built once, cached); run: once the harness runs with its etcd, each in the harness's
    own session."""
    run = Run(PERF, REPO)
    try:
        if moment == "harness":
            run.wait_line("==> vendor")
        elif moment == "etcd":
            run.wait_line("==> etcd")
        else:
            run.wait_line("==> run")
            run.wait_until("the harness's etcd", lambda: run.running("etcd"), timeout=300)
        seconds = run.stop(signal.SIGTERM)
        stderr = run.stderr()
        assert run.proc.returncode == 143, stderr[-3000:]
        one_line_end(stderr)
        assert _raw_file(stderr) is None, "a stopped bench wrote a raw file"
        assert run.leftovers() == []
        print(f"bench.perf stopped at {moment}: exited {seconds:.1f}s after SIGTERM")
    finally:
        run.close()
    again = Run(PERF, REPO)
    try:
        code = again.finish(timeout=3600)
        raw = _raw_file(again.stderr())
        if raw is not None:
            raw.unlink(missing_ok=True)
        assert code == 0, again.stderr()[-3000:]
        assert again.leftovers() == []
    finally:
        again.close()

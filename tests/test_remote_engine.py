"""The remote-engine tier (issue 19): everything through a Docker engine that cannot see the
caller's files. A second dockerd of the tests' own (tests/support/remote_engine.py: own data
root, private mount namespace where the checkout, the cache directory and /tmp are empty,
tcp://127.0.0.1 only) is the engine of every `inv` run here, through DOCKER_HOST. It holds no
image but the builder, copied in from the machine's engine through the API (no pull).

Cost (cold): one kube-scheduler compile of the example spec in the test engine (its Go build
cache volume starts empty), a partial one for the plain build (the unpatched packages are in
that volume by then), one image layer; the fault test starts a second engine and kills it
during the compile.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, TEST_K8S_MINOR
from scheduler_build import platforms, settings
from tests.support import remote_engine
from tests.support.registry_server import Registry

pytestmark = [pytest.mark.integration, pytest.mark.remote_engine]

SPEC = REPO / "examples/underlay/scheduler.yaml"


def inv(engine: remote_engine.RemoteEngine, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "invoke", "-r", str(REPO), *args], capture_output=True, text=True,
                          env=engine.env(), cwd=REPO, stdin=subprocess.DEVNULL)
    if check and proc.returncode != 0:
        raise AssertionError(f"inv {' '.join(args)} through {engine.host} failed ({proc.returncode}):\n"
                             f"{proc.stderr[-4000:]}\n--- engine log:\n{engine.log()}")
    return proc


def _start_with_builder(builder: str) -> remote_engine.RemoteEngine:
    engine = remote_engine.start([REPO, settings.cache_dir()])
    try:
        remote_engine.load_image(engine, builder)
    except BaseException:
        remote_engine.stop(engine)
        raise
    return engine


@pytest.fixture(scope="module")
def remote(built_example_scheduler):
    """The test engine, with the builder image the local example build used."""
    engine = _start_with_builder(built_example_scheduler.info["builder"]["image"])
    yield engine
    remote_engine.stop(engine)


@pytest.fixture(scope="module")
def remote_spec_build(remote, tmp_path_factory):
    dist = tmp_path_factory.mktemp("remote-dist")
    done = inv(remote, "build", "--spec", str(SPEC), "--dist", str(dist), "--no-pull", "--json")
    return dist, json.loads(done.stdout)


def test_the_test_engine_cannot_see_the_callers_files(remote):
    client = remote.client()
    listing = client.containers.run(
        next(iter(client.images.list()[0].tags)), ["sh", "-c", f"ls -A {REPO} {settings.cache_dir()} /tmp | wc -l"],
        network_mode="none", remove=True)
    assert listing.strip() == b"0"
    # Negative control: what the toolkit did before issue 19, a bind mount of a cache entry, fails there.
    entry = next(p for p in (settings.cache_dir() / "src").iterdir() if p.is_dir())
    with pytest.raises(Exception, match="bind source path does not exist"):
        client.containers.run(next(iter(client.images.list()[0].tags)), ["true"],
                              volumes={str(entry): {"bind": "/src", "mode": "ro"}}, remove=True)


def test_build_spec_through_the_remote_engine_is_byte_identical(remote_spec_build, built_example_scheduler):
    """Local plugin and a patch, vendored tree as a workspace image, compiled in the remote engine."""
    _, info = remote_spec_build
    local = built_example_scheduler.info
    assert info["patches"] and info["plugins"]
    assert info["binary"]["sha256"] == local["binary"]["sha256"]
    assert Path(info["binary"]["path"]).is_file()


def test_plain_build_through_the_remote_engine_is_byte_identical(remote, remote_spec_build, built_scheduler, tmp_path):
    done = inv(remote, "build", "--k8s-version", TEST_K8S_MINOR, "--dist", str(tmp_path), "--no-pull", "--json")
    assert json.loads(done.stdout)["binary"]["sha256"] == built_scheduler.info["binary"]["sha256"]


def test_validate_and_image_build_and_push_through_the_remote_engine(remote, remote_spec_build, tmp_path):
    dist, info = remote_spec_build
    binary = info["binary"]["path"]
    checked = inv(remote, "config.validate", "--spec", str(SPEC), "--binary", binary, "--json")
    assert json.loads(checked.stdout)["ok"] is True
    host = f"linux/{platforms.host_arch()}"
    built = inv(remote, "image.build", "--spec", str(SPEC), "--dist", str(dist), "--platforms", host, "--json")
    assert json.loads(built.stdout)
    # The image.build loaded the image into the remote engine, not the local one.
    assert any("underlay-scheduler" in tag for image in remote.client().images.list() for tag in image.tags)
    registry = Registry(tmp_path / "registry").start()
    try:
        pushed = inv(remote, "image.push", "--registry", f"{registry.host}/acme/underlay-scheduler", "--spec", str(SPEC),
                     "--dist", str(dist), "--platforms", host, "--no-build")
        refs = pushed.stdout.split()
        assert refs and all("@sha256:" in ref for ref in refs)
    finally:
        registry.stop()


def test_engine_killed_mid_build_is_one_clear_error_and_leaves_nothing(built_example_scheduler, tmp_path):
    engine = _start_with_builder(built_example_scheduler.info["builder"]["image"])
    records = settings.cache_dir() / "builds"
    before = {p.name: p.stat().st_mtime_ns for p in records.glob("*.json")} if records.is_dir() else {}
    try:
        proc = subprocess.Popen([sys.executable, "-m", "invoke", "-r", str(REPO), "build", "--spec", str(SPEC),
                                 "--dist", str(tmp_path / "dist"), "--no-pull"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=engine.env(), cwd=REPO)
        seen = []
        for line in proc.stderr:
            seen.append(line)
            if line.startswith("+ go build"):
                time.sleep(2)  # the compile is running in the engine
                remote_engine.kill(engine)
                break
        rest = proc.communicate(timeout=600)[1]
    finally:
        remote_engine.stop(engine)
    stderr = "".join(seen) + rest
    assert any(line.startswith("+ go build") for line in seen), stderr[-3000:]
    assert proc.returncode != 0
    assert "Traceback" not in stderr
    last = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert last and "Docker engine" in last[-1], stderr[-3000:]
    # Nothing half-made: no published binary, no staging directory, no new compile record.
    assert not [p for p in (tmp_path / "dist").rglob("*") if p.is_file()]
    after = {p.name: p.stat().st_mtime_ns for p in records.glob("*.json")} if records.is_dir() else {}
    assert after == before
    assert remote_engine.leftovers(engine) == []


def test_teardown_leaves_no_process_mount_interface_or_file(built_example_scheduler):
    engine = _start_with_builder(built_example_scheduler.info["builder"]["image"])
    assert remote_engine.leftovers(engine)  # negative control: a running engine is seen
    remote_engine.stop(engine)
    assert remote_engine.leftovers(engine) == []
    assert not os.path.exists(engine.root)

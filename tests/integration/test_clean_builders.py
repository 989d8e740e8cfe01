"""Integration tests beside tests/unit/clean/test_clean.py (they start containers, compile, or run the real tools);
moved out of the unit tier. That file: `inv clean`: planning (unit, real directories written by the real publish step) and real removal
"""

from __future__ import annotations
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
import pytest
from scheduler_build import owned
from scheduler_build.clean import plan as clean
from scheduler_build import spec as spec_mod
from scheduler_build.config import chart, output
from scheduler_build.atomic import publish_dir, write_atomic
from tests.unit.clean.test_clean import (  # noqa: F401  shared with the unit tests: helpers and fixtures
    _inv, make_dist, suite_builder,
)


def test_inv_clean_dry_run_then_real_removal(tmp_path):
    """Real dist and cache directories and a real Docker volume: --dry-run lists them with sizes and removes
    nothing; the real run removes exactly those; the user's files and the shared builder images stay."""
    docker = pytest.importorskip("docker")
    client = docker.from_env()
    volume = f"scheduler-build-clean-test-{uuid.uuid4().hex[:8]}"
    client.volumes.create(volume)
    builder = suite_builder()
    client.containers.run(builder, ["sh", "-c", "head -c 65536 /dev/zero > /v/blob"],
                          volumes={volume: {"bind": "/v", "mode": "rw"}}, network_mode="none", remove=True)
    dist, cache = tmp_path / "dist", tmp_path / "cache"
    ours = make_dist(dist)
    (cache / "vendor").mkdir(parents=True)
    (cache / "vendor" / "f").write_bytes(b"x" * 10)
    (cache / "photos").mkdir()
    env = {"INVOKE_PATHS_DIST_DIR": str(dist), "INVOKE_PATHS_CACHE_DIR": str(cache),
           "INVOKE_BUILD_GOCACHE_VOLUME": volume}
    try:
        dry = _inv(["clean", "--dist", "--cache", "--volume", "--dry-run", "--json"], env)
        assert dry.returncode == 0, dry.stderr[-2000:]
        planned = {(i["kind"], i["name"]): i["size"] for i in json.loads(dry.stdout)["items"]}
        assert set(planned) == {("dist", str(p)) for p in ours.values()} | {
            ("cache", str(cache / "vendor")), ("volume", volume)}
        assert planned[("volume", volume)] >= 65536 and planned[("cache", str(cache / "vendor"))] == 10
        assert all(os.path.lexists(p) for p in ours.values()) and client.volumes.get(volume)

        real = _inv(["clean", "--dist", "--cache", "--volume"], env)
        assert real.returncode == 0, real.stderr[-2000:]
        lines = real.stdout.strip().splitlines()
        assert len(lines) == len(planned) + 1 and lines[-1].startswith(f"{len(planned)} items, ")
        assert not any(os.path.lexists(p) for p in ours.values()) and not (cache / "vendor").exists()
        assert (dist / "notes.txt").is_file() and (cache / "photos").is_dir()
        with pytest.raises(docker.errors.NotFound):
            client.volumes.get(volume)

        images = _inv(["clean", "--images", "--dry-run"], env)  # the shared builder: listed, kept
        assert images.returncode == 0 and builder in images.stdout
        assert client.images.get(builder)
    finally:
        try:
            client.volumes.get(volume).remove(force=True)
        except docker.errors.NotFound:
            pass


def test_only_bootstrapped_builder_images_are_planned_and_removed(tmp_path):
    """A labelled image under scheduler-build/golang is ours; the same name without the label is not."""
    from scheduler_build.engine import connect  # docker SDK: integration only

    engine = connect()
    tag = uuid.uuid4().hex[:8]
    ours, foreign = f"scheduler-build/golang:0.0.0-{tag}", f"scheduler-build/golang:foreign-{tag}"
    (tmp_path / "Dockerfile").write_text(f"FROM scratch\nLABEL org.scheduler-build.go-version=0.0.0-{tag}\n")
    engine.build(tmp_path, ours)
    (tmp_path / "Dockerfile").write_text(f"FROM scratch\nLABEL test.other={tag}\n")
    engine.build(tmp_path, foreign)
    try:
        planned = {item.name: item for item in clean.plan_images(engine)}
        assert ours in planned and foreign not in planned
        clean.remove(planned[ours], engine)
        assert engine.inspect_image(ours) is None and engine.inspect_image(foreign) is not None
    finally:
        for ref in (ours, foreign):
            engine.remove_image(ref)

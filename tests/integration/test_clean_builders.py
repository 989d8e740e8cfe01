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


def _labelled_image(engine, tmp_path: Path, ref: str, labels: dict[str, str], base: str = "scratch") -> str:
    """A tiny image under `ref` carrying `labels` (FROM scratch: nothing to pull; or FROM a builder, whose labels
    it inherits as a real workspace image does); its ID."""
    text = "".join(f'LABEL {key}="{value}"\n' for key, value in labels.items())
    (tmp_path / "Dockerfile").write_text(f"FROM {base}\n{text}")
    return engine.build(tmp_path, ref, on_line=lambda line: None)


def test_replaced_builder_and_workspace_images_are_ours_by_label_and_state(tmp_path):
    """An untagged image of ours whose tag a newer one of the same kind took is planned (by ID) and removed,
    not while a container uses it; an untagged look-alike of another cache is not planned. A replaced builder
    that a replaced workspace image was built on goes with it (the engine prunes an untagged parent)."""
    from scheduler_build.build import builder_image, workspace_image
    from scheduler_build.engine import connect  # docker SDK: integration only

    engine, tag = connect(), uuid.uuid4().hex[:8]
    cache, other_cache = tmp_path / "cache", tmp_path / "other-cache"
    boot_ref, lone_ref = (f"{builder_image.BOOTSTRAP_REPO}:0.0.0-{tag}", f"{builder_image.BOOTSTRAP_REPO}:0.0.1-{tag}")
    boot, lone = ({builder_image.GO_VERSION_LABEL: f"0.0.0-{tag}"}, {builder_image.GO_VERSION_LABEL: f"0.0.1-{tag}"})
    key, foreign_key = uuid.uuid4().hex * 2, uuid.uuid4().hex * 2
    work_ref, foreign_ref = workspace_image.tag_for(key), workspace_image.tag_for(foreign_key)
    work = {workspace_image.KEY_LABEL: key, workspace_image.VENDOR_DIR_LABEL: str(cache / "vendor" / tag)}
    foreign = {workspace_image.KEY_LABEL: foreign_key, workspace_image.VENDOR_DIR_LABEL: str(other_cache / "v")}
    made: list[str] = []
    client = engine._client
    try:
        # As it happens: a builder, a workspace image on it (it carries the builder's labels too), the builder
        # bootstrapped again, the workspace rebuilt on the new one; another cache's workspace rebuilt; and a
        # builder of another Go version bootstrapped twice, nothing built on it.
        for ref, labels, base in ((boot_ref, boot, "scratch"), (work_ref, work, boot_ref), (boot_ref, boot, "scratch"),
                                  (work_ref, work, boot_ref), (foreign_ref, foreign, boot_ref),
                                  (foreign_ref, foreign, boot_ref), (lone_ref, lone, "scratch"), (lone_ref, lone, "scratch")):
            made.append(_labelled_image(engine, tmp_path, ref, {**labels, "test.round": str(len(made))}, base))
        old_boot, old_work, new_boot, new_work, old_foreign, _, old_lone, new_lone = made
        assert engine.inspect_image(old_lone).tags == () and engine.inspect_image(old_work).tags == ()  # replaced
        planned = {item.name: item for item in clean.plan_images(engine, cache)}
        assert old_lone in planned and old_work in planned, sorted(planned)
        assert old_foreign not in planned  # another cache's: not ours to remove (the negative control)
        assert not {new_boot, new_work, new_lone} & set(planned)  # the newer ones hold the tags
        assert old_boot not in planned  # the engine lists no parent of another image: it goes with its child
        assert f"replaced by a newer one under {lone_ref}" in planned[old_lone].what
        assert f"replaced by a newer one under {work_ref}" in planned[old_work].what
        # A container still uses the replaced builder image: left, and said why.
        user = client.containers.create(old_lone, command=["none"], name=f"sb-t-uses-{tag}")
        assert clean.remove(planned[old_lone], engine) is False
        assert engine.inspect_image(old_lone) is not None and "container" in clean.left_reason(planned[old_lone])
        user.remove(force=True)
        for image_id in (old_work, old_lone):
            assert clean.remove(planned[image_id], engine) is True
            assert engine.inspect_image(image_id) is None
        assert engine.inspect_image(old_boot) is None  # pruned with the workspace image built on it
        assert [engine.inspect_image(ref).id for ref in (boot_ref, work_ref, lone_ref)] == [new_boot, new_work, new_lone]
    finally:
        for ref in [work_ref, foreign_ref, *reversed(made), boot_ref, lone_ref]:  # an image built on another first
            try:
                client.images.remove(ref, force=True)
            except docker_errors().NotFound:
                pass
        for leftover in client.containers.list(all=True, filters={"name": f"sb-t-uses-{tag}"}):
            leftover.remove(force=True)


def docker_errors():
    import docker.errors

    return docker.errors


def test_an_orphaned_builder_out_is_listed_and_removed_and_a_live_ones_is_not(tmp_path):
    """A builder /out directory in our state whose container is gone is planned by `clean --volume` (named,
    with its size) and removed, not while its builder's lock is held; the /out of a running builder, and a
    directory of the user's beside them, are not planned. `clean --volume` skips a busy builder and names it."""
    from scheduler_build.build import warm
    from scheduler_build.engine import connect
    from scheduler_build.filelock import turn

    engine, tag = connect(), uuid.uuid4().hex[:8]
    state, volume = tmp_path / "cache" / "builds", f"sb-t-gocache-{tag}"
    image = suite_builder()
    live = warm.container_name(engine.inspect_image(image).id, volume, state)
    gone = warm.container_name("sha256:gone", volume, state)
    orphan = state / "builders" / f"{gone}-0123abcd"
    try:
        warm._idle_builder(engine, live, image, volume, state)
        (live_out,) = (state / "builders").glob(f"{live}-*")
        orphan.mkdir(parents=True)
        (orphan / "kube-scheduler").write_bytes(b"x" * 4096)
        (state / "builders" / "notes").mkdir()  # the user's: not a name warm.py gives
        env = {"INVOKE_PATHS_CACHE_DIR": str(tmp_path / "cache"), "INVOKE_BUILD_GOCACHE_VOLUME": volume}
        dry = _inv(["clean", "--volume", "--dry-run", "--json"], env)
        assert dry.returncode == 0, dry.stderr[-2000:]
        planned = {i["name"]: i for i in json.loads(dry.stdout)["items"]}
        assert planned[str(orphan)]["size"] == 4096 and "builder that is gone" in planned[str(orphan)]["what"]
        assert str(live_out) not in planned and str(state / "builders" / "notes") not in planned
        assert planned[live]["what"] == "long-lived builder container" and orphan.is_dir()
        item = next(i for i in clean.plan_volume(engine, volume, state) if i.name == str(orphan))
        with turn(state / f"{gone}.lock", "starting that builder"):
            assert clean.remove(item, engine) is False and orphan.is_dir()  # a build is starting it: left
        assert clean.remove(item, engine) is True and not orphan.exists()  # the negative control
        assert live_out.is_dir() and (state / "builders" / "notes").is_dir()
        # `clean --volume` while a build holds the live builder's lock: the builder and its volume are left and
        # named; once free, both go (and the builder's /out with it).
        with turn(state / f"{live}.lock", "compiling"):
            busy = _inv(["clean", "--volume"], env)
        assert busy.returncode == 0, busy.stderr[-2000:]
        assert f"left volume {live}: in use by a build" in busy.stderr and f"left volume {volume}:" in busy.stderr
        assert engine._client.containers.list(filters={"name": live}) and live_out.is_dir()
        free = _inv(["clean", "--volume"], env)
        assert free.returncode == 0 and "left volume" not in free.stderr, free.stderr[-2000:]
        assert "removed" in free.stdout and live in free.stdout and not live_out.exists()
        assert not engine._client.containers.list(all=True, filters={"name": live})
    finally:
        engine.remove_container(live)
        try:
            engine._client.volumes.get(volume).remove(force=True)
        except docker_errors().NotFound:
            pass

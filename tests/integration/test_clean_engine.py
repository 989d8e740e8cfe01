"""Integration: on a shared engine, `clean` removes the containers of our runs that are gone (never a
running run's, never a container without our label) and, with --images, only the workspace images of
its own cache directory. Real engine; FROM-scratch images and created (never started) containers: ~2 s."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid

import pytest

from scheduler_build.clean import plan as clean
from scheduler_build.build.workspace_image import KEY_LABEL, REPO as WORKSPACE_REPO, VENDOR_DIR_LABEL
from scheduler_build.engine import RUN_LABEL, connect


def _dead_pid() -> int:
    return int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True).stdout)


def _remove_left(removals) -> None:
    """Run each removal of the test's own objects; what the test removed already is gone, so its error is not one."""
    for remove in removals:
        try:
            remove()
        except Exception:  # noqa: BLE001 - removed by the test already
            pass


def test_only_containers_of_stopped_runs_and_images_of_this_cache_are_ours(tmp_path):
    engine, client, tag = connect(), connect()._client, uuid.uuid4().hex[:8]
    mine, others = tmp_path / "cache", tmp_path / "another-checkout-cache"
    refs = {}
    for who, cache in (("mine", mine), ("others", others)):
        (tmp_path / "Dockerfile").write_text(f"FROM scratch\nLABEL {KEY_LABEL}={tag}{who} "
                                             f"{VENDOR_DIR_LABEL}={cache}/vendor/{tag}\n")
        refs[who] = f"{WORKSPACE_REPO}:test-{tag}-{who}"
        engine.build(tmp_path, refs[who])
    host = socket.gethostname()
    owners = {"stopped": f"{host}/{_dead_pid()}", "running": f"{host}/{os.getpid()}", "elsewhere": f"other-host/1"}
    created = {what: client.containers.create(refs["mine"], ["x"], labels={RUN_LABEL: owner}, name=f"sb-t-{what}-{tag}")
               for what, owner in owners.items()}
    created["unlabelled"] = client.containers.create(refs["mine"], ["x"], name=f"sb-t-unlabelled-{tag}")
    try:
        planned = clean.plan_containers(engine)
        assert [c.name for c in planned if tag in c.name] == [f"sb-t-stopped-{tag}"]
        for item in planned:
            if tag in item.name:
                clean.remove(item, engine)
        left = {c.name for c in client.containers.list(all=True) if tag in c.name}
        assert left == {f"sb-t-{what}-{tag}" for what in ("running", "elsewhere", "unlabelled")}
        images = {item.name for item in clean.plan_images(engine, mine)}
        assert refs["mine"] in images and refs["others"] not in images
    finally:
        _remove_left(lambda c=c: c.remove(force=True) for c in created.values())
        for ref in refs.values():
            engine.remove_image(ref)


def test_clean_volume_removes_the_long_lived_builders_using_it_first(tmp_path):
    """A builder (build/warm.py) keeps its Go cache volume in use, and the engine refuses to remove a
    volume in use: `clean --volume` plans the builders of that volume first, and only theirs."""
    import docker.types

    from scheduler_build.build import warm

    engine, client, tag = connect(), connect()._client, uuid.uuid4().hex[:8]
    volume, other = f"sb-t-gocache-{tag}", f"sb-t-other-{tag}"
    (tmp_path / "Dockerfile").write_text("FROM scratch\nLABEL io.scheduler-build.test=1\n")
    ref = f"sb-t-scratch:{tag}"
    engine.build(tmp_path, ref)
    uid = str(os.getuid())
    builders = {vol: client.containers.create(ref, ["x"], name=f"sb-t-builder-{vol}",
                                              labels={warm.LABEL: "1", warm.VOLUME_LABEL: vol, warm.OWNER_LABEL: uid},
                                              mounts=[docker.types.Mount("/gocache", vol, type="volume")])
                for vol in (volume, other)}
    # Another user's builder of the same volume name (a volume configured by name for both): theirs.
    builders["theirs"] = client.containers.create(ref, ["x"], name=f"sb-t-builder-theirs-{tag}",
                                                  labels={warm.LABEL: "1", warm.VOLUME_LABEL: volume,
                                                          warm.OWNER_LABEL: str(os.getuid() + 4242)})
    try:
        planned = clean.plan_volume(engine, volume, tmp_path)
        assert [(item.name, item.what) for item in planned] == [
            (f"sb-t-builder-{volume}", "long-lived builder container"), (volume, "Go build cache volume")]
        for item in planned[:1]:
            assert clean.remove(item, engine)
        names = {c.name for c in client.containers.list(all=True) if tag in c.name}
        assert names == {f"sb-t-builder-{other}", f"sb-t-builder-theirs-{tag}"}  # another volume's, another user's
        builders["theirs"].remove(force=True)  # (the engine refuses to remove a volume in use)
        for item in planned[1:]:
            clean.remove(item, engine)
        assert volume not in {v.name for v in client.volumes.list()}
    finally:
        _remove_left(lambda c=c: c.remove(force=True) for c in builders.values())
        _remove_left(lambda v=v: client.volumes.get(v).remove(force=True) for v in (volume, other))
        engine.remove_image(ref)

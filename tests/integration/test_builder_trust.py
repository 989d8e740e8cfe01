"""Long-lived builders on a shared engine (build/warm.py) with the real engine, under this test's own names
and volume (other sessions' builders are never touched): a container under a builder's name that is not
what we would create is refused; a second uid gets its own builder and volume; an idle builder exits and
is gone; `clean --volume`'s removal skips a builder whose lock a build holds. ~20 s."""

from __future__ import annotations

import io
import os
import time
import uuid
from pathlib import Path

import pytest

from scheduler_build import settings
from scheduler_build.build import builder_image, warm
from scheduler_build.engine import connect
from scheduler_build.errors import UserError
from scheduler_build.filelock import turn


@pytest.fixture
def names(tmp_path):
    """A builder name and volume of this test's own; removed afterwards with the look-alike image."""
    engine = connect()
    tag = uuid.uuid4().hex[:8]
    made = {"name": f"scheduler-build-builder-test-{tag}", "volume": f"sb-t-gocache-{tag}",
            "image": builder_image.select(engine, "1.22", pull=False).image, "other": f"sb-t-lookalike:{tag}"}
    yield made
    engine.remove_container(made["name"])  # (an idle one the engine is removing already: waited for)
    client = engine._client
    for ref in (made["other"],):
        try:
            client.images.remove(ref, force=True)
        except Exception:  # noqa: BLE001 - never built
            pass
    try:
        client.volumes.get(made["volume"]).remove(force=True)
    except Exception:  # noqa: BLE001 - never created
        pass


def _lookalike_image(engine, base: str, ref: str) -> str:
    """Another image that runs the same way (its own ID): a label on the builder image."""
    dockerfile = f"FROM {base}\nLABEL io.scheduler-build.test=lookalike\n".encode()
    import tarfile

    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as tar:
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(dockerfile)
        tar.addfile(info, io.BytesIO(dockerfile))
    data.seek(0)
    return engine.build(data, ref, on_line=lambda line: None)


def test_a_lookalike_under_the_builders_name_is_refused(tmp_path, names):
    engine, client = connect(), connect()._client
    name, volume, image = names["name"], names["volume"], names["image"]
    _lookalike_image(engine, image, names["other"])
    # Same name and command, our volume, network none: another image.
    client.containers.create(names["other"], command=warm.idle_command(1800), name=name, network_mode="none",
                             mounts=[], labels={warm.LABEL: "1"}, detach=True)
    with pytest.raises(UserError, match=f"container named {name}, and it is not a builder .*another image"):
        warm._idle_builder(engine, name, image, volume, tmp_path)
    client.containers.get(name).remove(force=True)
    # Same image, a network: refused too.
    client.containers.create(image, command=warm.idle_command(1800), name=name, network_mode="bridge", detach=True)
    with pytest.raises(UserError, match="network 'bridge', not 'none'"):
        warm._idle_builder(engine, name, image, volume, tmp_path)
    client.containers.get(name).remove(force=True)
    # A bind of /out to a directory our state does not list (the label says it is ours): refused.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    import docker.types

    client.containers.create(image, command=warm.idle_command(1800), name=name, network_mode="none", detach=True,
                             mounts=[docker.types.Mount("/gocache", volume, type="volume"),
                                     docker.types.Mount("/out", str(elsewhere), type="bind")],
                             labels={warm.SHARED_LABEL: str(elsewhere)})
    with pytest.raises(UserError, match="a mount scheduler-build did not make"):
        warm._idle_builder(engine, name, image, volume, tmp_path)
    client.containers.get(name).remove(force=True)
    # Same image, network and volume, another main process: refused.
    client.containers.create(image, command=["sleep", "infinity"], name=name, network_mode="none", detach=True,
                             mounts=[docker.types.Mount("/gocache", volume, type="volume")])
    with pytest.raises(UserError, match="another command"):
        warm._idle_builder(engine, name, image, volume, tmp_path)
    client.containers.get(name).remove(force=True)
    # The negative control: the builder we create is accepted, and accepted again when reused (also once
    # build.builder_idle_timeout changed: the running one keeps its own).
    box = warm._idle_builder(engine, name, image, volume, tmp_path)
    assert warm._idle_builder(engine, name, image, volume, tmp_path, idle_seconds=60).id == box.id
    assert warm.shared_out(box, tmp_path, name) is not None  # from our state


def test_a_second_uid_gets_its_own_builder_and_volume(tmp_path, monkeypatch):
    """Decided as another uid (this machine has no second user to run as): no name or volume in common."""
    mine = (warm.container_name("sha256:a", settings.gocache_volume(""), tmp_path), settings.gocache_volume(""))
    other = os.getuid() + 4242
    monkeypatch.setattr(os, "getuid", lambda: other)
    theirs = (warm.container_name("sha256:a", settings.gocache_volume(""), tmp_path), settings.gocache_volume(""))
    assert mine[0] != theirs[0] and mine[1] != theirs[1]
    assert theirs[1] == f"scheduler-build-gocache-u{other}" and f"-u{other}-" in theirs[0]
    assert settings.gocache_volume("team-cache") == "team-cache"  # a volume configured by name is shared on purpose


def test_an_idle_builder_exits_and_is_gone(tmp_path, names):
    engine, client = connect(), connect()._client
    name, volume, image = names["name"], names["volume"], names["image"]
    box = warm._idle_builder(engine, name, image, volume, tmp_path, idle_seconds=2)
    assert box.exec(["sh", "-c", "sleep 4"], environment={}, workdir="/") == 0  # in use: it stays meanwhile
    assert client.containers.list(all=True, filters={"name": name})
    deadline = time.monotonic() + 60
    while client.containers.list(all=True, filters={"name": name}) and time.monotonic() < deadline:
        time.sleep(1)
    assert not client.containers.list(all=True, filters={"name": name}), "the idle builder is still there"
    # The next build starts a new one (the old /out directory in our state is replaced).
    again = warm._idle_builder(engine, name, image, volume, tmp_path)
    assert again.id != box.id and warm.shared_out(again, tmp_path, name) is not None


def test_removal_skips_a_builder_a_build_holds(tmp_path, names):
    engine, client = connect(), connect()._client
    name, volume, image = names["name"], names["volume"], names["image"]
    warm._idle_builder(engine, name, image, volume, tmp_path)
    with turn(tmp_path / f"{name}.lock", "compiling"):
        assert warm.stop_one(engine, name, tmp_path) is False
        assert client.containers.list(filters={"name": name})
    assert warm.stop_one(engine, name, tmp_path) is True  # the negative control: free, it goes
    assert not client.containers.list(all=True, filters={"name": name}) and list((tmp_path / "builders").iterdir()) == []

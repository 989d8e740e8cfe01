"""The long-lived builder (build/warm.py) with the real engine: a builder in which a compile still runs
when a build takes its lock (the build that started it was killed outright, and the engine does not
stop an exec whose client is gone) is replaced, never shared; an idle one is reused. A new builder's
/out is the caller's directory only when the probe proved it. The "compile" is a `sleep` exec'd into
the builder image (busybox or the official golang). ~3 s."""

from __future__ import annotations

import uuid
from pathlib import Path

from scheduler_build.build import builder_image, warm
from scheduler_build.engine import connect


def test_a_builder_running_a_dead_builds_compile_is_replaced_and_an_idle_one_reused(tmp_path: Path):
    engine = connect()
    client = engine._client
    image = builder_image.select(engine, "1.22", pull=False).image
    tag = uuid.uuid4().hex[:8]
    name, volume = f"scheduler-build-builder-test-{tag}", f"sb-t-gocache-{tag}"
    try:
        box = warm._idle_builder(engine, name, image, volume, tmp_path)
        assert box.processes() == 1
        shared = warm.shared_out(box, tmp_path, name)  # this engine sees this machine's files: the probe proved /out is ours
        assert shared is not None and shared.parent == tmp_path / "builders" and shared.name.startswith(name)
        box.exec(["sh", "-c", "echo built > /out/probe-output"], environment={}, workdir="/")
        assert (shared / "probe-output").read_text() == "built\n"
        other = tmp_path / "not-its-out"
        other.mkdir()
        assert not warm._probe(box, other)  # negative control: a directory the builder does not see
        assert warm._idle_builder(engine, name, image, volume, tmp_path).id == box.id  # idle: the same builder
        orphan = client.api.exec_create(box.id, ["sleep", "120"])
        client.api.exec_start(orphan["Id"], detach=True)  # its client is gone: nobody waits for it
        replaced = warm._idle_builder(engine, name, image, volume, tmp_path)
        assert replaced.id != box.id and replaced.processes() == 1
        assert {c.id for c in client.containers.list(all=True, filters={"name": name})} == {replaced.id}
        assert not shared.exists() and warm.shared_out(replaced, tmp_path, name) not in (None, shared)  # the old /out went with it
        assert warm.stop(engine, volume, tmp_path) == ([name], []) and not warm.shared_out(replaced, tmp_path, name)
        assert list((tmp_path / "builders").iterdir()) == []
    finally:
        engine.remove_container(name)  # (waits for a removal the engine has in progress)
        try:
            client.volumes.get(volume).remove(force=True)
        except Exception:  # noqa: BLE001 - never created
            pass

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

from scheduler_build import clean
from scheduler_build.build.workspace_image import KEY_LABEL, REPO as WORKSPACE_REPO, VENDOR_DIR_LABEL
from scheduler_build.engine import RUN_LABEL, connect


def _dead_pid() -> int:
    return int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True).stdout)


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
        for container in created.values():
            try:
                container.remove(force=True)
            except Exception:  # noqa: BLE001 - removed by the test already
                pass
        for ref in refs.values():
            engine.remove_image(ref)

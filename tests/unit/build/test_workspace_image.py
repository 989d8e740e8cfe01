"""Unit tests for the archives a compile puts into its container (build/workspace_image.py)
and the long-lived builder's names and clean-up command (build/warm.py)."""

from __future__ import annotations

import io
import tarfile

from scheduler_build.build import warm, workspace_image
from scheduler_build.engine.streams import ChunkReader


def _tree(root, files):
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_context_leaves_out_the_local_modules_and_is_deterministic(tmp_path):
    vendor = tmp_path / "vendor"
    _tree(vendor, {"modules.txt": "m", "k8s.io/api/core/v1/types.go": "t", "example.com/acme/underlay/pkg/old.go": "o",
                   "example.com/acme/other/x.go": "x"})
    first, second = io.BytesIO(), io.BytesIO()
    workspace_image.context_tar(vendor, ["example.com/acme/underlay"], first)
    (vendor / "modules.txt").touch()  # a new mtime changes nothing
    workspace_image.context_tar(vendor, ["example.com/acme/underlay"], second)
    assert first.getvalue() == second.getvalue()
    names = tarfile.open(fileobj=io.BytesIO(first.getvalue())).getnames()
    assert names[0] == "Dockerfile" and "vendor/k8s.io/api/core/v1/types.go" in names
    assert "vendor/example.com/acme/other/x.go" in names
    assert not [n for n in names if n.startswith("vendor/example.com/acme/underlay")]


def test_inputs_put_the_workspace_and_the_snapshot_in_place_of_the_module(tmp_path):
    workspace, snapshot = tmp_path / "ws", tmp_path / "snap"
    _tree(workspace, {"go.mod": "module w", "main.go": "package main"})
    (workspace / "vendor").mkdir()  # the old mount point: not sent
    _tree(snapshot, {"pkg/new.go": "edited"})
    archive = tarfile.open(fileobj=io.BytesIO(workspace_image.inputs_tar(
        workspace, {"example.com/acme/underlay": snapshot}, dirs=["out/k"])))
    names = archive.getnames()
    assert names[0] == "out/k" and archive.getmember("out/k").isdir()
    assert {"src/go.mod", "src/main.go", "src/vendor/example.com/acme/underlay/pkg/new.go"} <= set(names)
    assert "src/vendor" not in names
    assert archive.extractfile("src/vendor/example.com/acme/underlay/pkg/new.go").read() == b"edited"


def test_image_key_covers_its_inputs():
    base = ("scheduler-build/golang:1.26.8", "1.26.8", "v" * 64, ["example.com/a"])
    key = workspace_image.image_key(*base)
    changed = {workspace_image.image_key("golang:1.26", *base[1:]),
               workspace_image.image_key(base[0], "1.26.9", *base[2:]),
               workspace_image.image_key(*base[:2], "w" * 64, base[3]),
               workspace_image.image_key(*base[:3], [])}
    assert key not in changed and len(changed) == 4
    assert workspace_image.tag_for(key) == f"scheduler-build/workspace:{key[:32]}"


def test_container_name_depends_on_image_volume_and_cache_directory(tmp_path):
    """Builds of one builder take turns by a lock file in the cache directory: two cache directories
    (two users, a test's own cache) must never share a builder they do not share a lock for."""
    name = warm.container_name("sha256:a", "vol", tmp_path / "a")
    assert name.startswith("scheduler-build-builder-")
    others = {warm.container_name("sha256:b", "vol", tmp_path / "a"), warm.container_name("sha256:a", "v2", tmp_path / "a"),
              warm.container_name("sha256:a", "vol", tmp_path / "b")}
    assert len({name, *others}) == 4
    assert warm.container_name("sha256:a", "vol", tmp_path / "a") == name


def test_clear_command_removes_only_the_workspace_files_and_local_modules(tmp_path):
    argv = warm.clear_command({"example.com/acme/underlay": tmp_path})
    assert argv[:2] == ["sh", "-c"]
    assert "find /src -maxdepth 1 -type f -exec rm -f {} +" in argv[2] and "rm -rf /src/vendor/example.com/acme/underlay" in argv[2]
    assert warm.clear_command({})[2] == f": > {warm.USED}; find /src -maxdepth 1 -type f -exec rm -f {{}} +"  # use: idle clock


def test_cache_repository_is_checked_before_anything_runs():
    import pytest

    from scheduler_build.build import shared_cache
    from scheduler_build.errors import UserError

    assert shared_cache.check_repo("127.0.0.1:5000/acme/sb-cache", "--cache-to") == "127.0.0.1:5000/acme/sb-cache"
    assert shared_cache.check_repo("", "--cache-from") == ""
    for bad in ("registry:5000/acme/cache:tag", "Registry/Upper", "no-path", "reg/a b"):
        with pytest.raises(UserError, match="--cache-from"):
            shared_cache.check_repo(bad, "--cache-from")
    assert shared_cache.ref("r:1/a", "ws", "k" * 64) == f"r:1/a:ws-{'k' * 32}"


def test_chunk_reader_feeds_a_streamed_tar(tmp_path):
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as archive:
        payload = bytes(range(256)) * 5000
        info = tarfile.TarInfo("kube-scheduler")
        info.size, info.mode = len(payload), 0o755
        archive.addfile(info, io.BytesIO(payload))
    raw = data.getvalue()
    chunks = [raw[i:i + 7777] for i in range(0, len(raw), 7777)]
    with tarfile.open(fileobj=io.BufferedReader(ChunkReader(iter(chunks)), 1 << 16), mode="r|") as archive:
        member = next(iter(archive))
        assert archive.extractfile(member).read() == payload and member.mode == 0o755

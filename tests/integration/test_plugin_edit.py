"""The plugin developer's loop with the real builder: an edit to a local plugin that keeps
its go.mod, go.sum and imports re-runs neither tidy nor vendor, the compile sees the edit
(the content snapshot put in place of vendor/<module>), and the result is bit-identical to a
build that vendored the edited plugin from scratch.

Cost: three kube-scheduler links (the Go build cache volume is warm for everything but the
plugin package) and one tidy + vendor into an empty cache directory.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

import pytest

from conftest import REPO, build_request
from scheduler_build import settings


@pytest.fixture(autouse=True, scope="module")
def remove_the_builders_these_tests_start(tmp_path_factory):
    """The long-lived builders (reuse_builder) these tests start in their own cache directories are theirs
    to remove; others (another session's on the same engine, the shared cache's) stay: they exit when idle."""
    import docker

    from scheduler_build.build import warm

    client = docker.from_env(version="auto")
    theirs = {c.id for c in client.containers.list(all=True, filters={"label": f"{warm.LABEL}=1"})}
    mine = str(tmp_path_factory.getbasetemp().resolve()) + os.sep
    yield
    for container in client.containers.list(all=True, filters={"label": f"{warm.LABEL}=1"}):
        if container.id not in theirs and (container.labels or {}).get(warm.SHARED_LABEL, "").startswith(mine):
            container.remove(force=True)

EXAMPLE_PLUGIN = REPO / "examples/underlay/plugin"
PACKAGE = "example.com/acme/underlay/pkg/underlayiplimit"
LABEL = 'DefaultCapacityLabel = "underlay.example.com/capacity"'


def _set_label(plugin: Path, value: str) -> None:
    args = plugin / "pkg/underlayiplimit/args.go"
    text = args.read_text()
    start = text.index("DefaultCapacityLabel = ")
    end = text.index("\n", start)
    args.write_text(text[:start] + f'DefaultCapacityLabel = "{value}"' + text[end:])


def test_plugin_edit_skips_tidy_and_vendor_and_matches_a_from_scratch_build(tmp_path):
    from scheduler_build.build import pipeline
    from scheduler_build.spec import PluginSource

    assert LABEL in (EXAMPLE_PLUGIN / "pkg/underlayiplimit/args.go").read_text()
    plugin = tmp_path / "plugin"
    shutil.copytree(EXAMPLE_PLUGIN, plugin)
    source = PluginSource(package=PACKAGE, names=("UnderlayIPLimit",), path=plugin)
    request = build_request(tmp_path / "dist", plugin_sources=(source,), name="edit-loop", reuse_builder=True)
    before, after = f"before.test/{uuid.uuid4().hex}", f"after.test/{uuid.uuid4().hex}"

    _set_label(plugin, before)
    first = pipeline.run(request)
    assert before.encode() in first.binary.read_bytes()
    first_key = first.info.vendor.key

    _set_label(plugin, after)
    edited = pipeline.run(request)
    data = edited.binary.read_bytes()
    assert after.encode() in data and before.encode() not in data  # the compile saw the edit
    assert edited.info.vendor.cached and edited.info.vendor.key == first_key  # no tidy, no vendor
    assert edited.info.plugins[0].sha256 != first.info.plugins[0].sha256

    # Hermetic and reproducible: the same inputs vendored from scratch and compiled in a
    # one-shot container (not the long-lived builder) give the same bytes.
    scratch = pipeline.run(build_request(tmp_path / "dist-scratch", plugin_sources=(source,), name="edit-loop",
                                         cache_dir=tmp_path / "cache", reuse_builder=False))
    assert not scratch.info.vendor.cached
    assert scratch.info.binary.sha256 == edited.info.binary.sha256


def test_long_lived_builder_has_no_network_and_no_host_path_but_its_out(tmp_path):
    import docker

    from scheduler_build.build import pipeline
    from scheduler_build.build import warm

    pipeline.run(build_request(tmp_path / "dist", reuse_builder=True))  # starts (or reuses) the builder
    client = docker.from_env(version="auto")
    labelled = client.containers.list(filters={"label": [f"{warm.LABEL}=1", f"{warm.VOLUME_LABEL}={settings.gocache_volume('')}"]})
    # Ours run the workspace image (a builder of an older toolkit on a shared engine may be there too).
    builders = [b for b in labelled if any(t.startswith("scheduler-build/workspace:") for t in b.image.tags)]
    assert builders
    for builder in builders:
        assert builder.attrs["HostConfig"]["NetworkMode"] == "none"
        assert builder.attrs["HostConfig"].get("Binds") in (None, [])
        # The one host path: its own /out, a directory of the cache's builds/builders/ (build/warm.py)
        binds = [m for m in builder.attrs["Mounts"] if m["Type"] == "bind"]
        assert all(m["Destination"] == "/out" and Path(m["Source"]).parent.name == "builders"
                   and Path(m["Source"]).name.startswith(builder.name + "-") for m in binds), binds
        assert {m["Type"] for m in builder.attrs["Mounts"]} - {"bind"} == {"volume"}
    env = ["GOPROXY=https://proxy.golang.org", "GOFLAGS=-mod=mod", "HOME=/tmp", "GOMODCACHE=/tmp/m", "GOCACHE=/tmp/c"]
    code, output = builders[0].exec_run(["go", "mod", "download", "-json", "github.com/google/uuid@v1.6.0"],
                                        environment=env, workdir="/tmp")
    text = output.decode(errors="replace")
    assert code != 0 and ("dial tcp" in text or "lookup" in text or "network is unreachable" in text), text


@pytest.mark.parametrize("reuse_builder", [False, True], ids=["one-shot", "long-lived"])
def test_a_no_change_rebuild_starts_no_container_and_an_edit_compiles(tmp_path, capfd, reuse_builder):
    """A container per compile (a remote engine's default) and the long-lived builder (a local one's):
    the second, unchanged build is served by the action record (build/uptodate.py) with the same bytes,
    no container started nor exec'd; an edit compiles and the binary sees it."""
    from scheduler_build.build import pipeline
    from scheduler_build.spec import PluginSource

    plugin = tmp_path / "plugin"
    shutil.copytree(EXAMPLE_PLUGIN, plugin)
    source = PluginSource(package=PACKAGE, names=("UnderlayIPLimit",), path=plugin)
    request = build_request(tmp_path / "dist", plugin_sources=(source,), name="no-change", reuse_builder=reuse_builder)
    marker = f"nochange.test/{uuid.uuid4().hex}"
    _set_label(plugin, marker)
    first = pipeline.run(request)
    capfd.readouterr()
    again = pipeline.run(request)
    assert "up to date: the last compile of these inputs made this binary" in capfd.readouterr().err
    assert again.info.binary.sha256 == first.info.binary.sha256
    assert "compile.go" not in again.info.phases_seconds  # nothing ran in any container
    _set_label(plugin, marker + "x")
    edited = pipeline.run(request)
    assert "up to date" not in capfd.readouterr().err  # negative control: an edit is compiled
    assert (marker + "x").encode() in edited.binary.read_bytes()

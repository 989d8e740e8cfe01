"""`inv clean`: planning (unit, real directories written by the real publish step) and real removal
through `inv` in a subprocess with a temporary dist dir, cache dir and Docker volume (integration)."""

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
from scheduler_build.atomic import STAGING, publish_dir, write_atomic

REPO = Path(__file__).resolve().parents[3]


BLOB = "blobs/sha256/" + owned.digest("x" * 1000)
# Each kind of output with the files its record names (a build's: the binary its build-info.json names)
OUTPUTS = {
    "build-info.json": {"build-info.json": '{"scheduler_build": "0.1.0", "component": "kube-scheduler"}',
                        "kube-scheduler": "x" * 1000},
    "image-info.json": {"image-info.json": '{"inputs_key": "k1"}', "index.json": "{}", "oci-layout": "{}",
                        BLOB: "x" * 1000},
    "kustomization.yaml": {"kustomization.yaml": "resources: [payload]\n", "payload": "x" * 1000},
}


def publish(parent: Path, name: str, marker: str, key: str = "k1") -> Path:
    """An output as the publish step leaves it: a real directory holding our record (a rendering: the
    digests of its files, owned.py)."""
    staging = parent / f".tmp-{name}-x"
    staging.mkdir(parents=True)
    files = OUTPUTS[marker]
    for file, text in files.items():
        write_atomic(staging / file, text)
    if marker == "kustomization.yaml":
        write_atomic(staging / owned.RECORD, owned.record_text(files))
    return publish_dir(staging, parent / name, key)


def make_dist(dist: Path) -> dict[str, Path]:
    """A dist tree with a build, a rendering and an image layout of ours, and things of the user's."""
    ours = {
        "build": publish(dist / "sched" / "v1.36.3", "linux-amd64", "build-info.json"),
        "config": publish(dist / "config", "sched", "kustomization.yaml"),
        "image": publish(dist / "sched" / "v1.36.3", "image", "image-info.json"),
    }
    (dist / "notes.txt").write_text("mine")  # a user's file
    (dist / "sched" / "v1.36.3" / "mine").mkdir()  # a user's directory
    (dist / "mine-link").symlink_to("/etc")  # a user's symlink to a foreign place
    (dist / "other").mkdir()
    (dist / "other" / ".other.x").mkdir()  # looks published, but carries no record of ours
    (dist / "other" / "out").symlink_to(".out.x")
    (dist / "other" / ".out.x").mkdir()
    return ours


def test_plan_dist_finds_only_published_outputs_with_our_records(tmp_path):
    ours = make_dist(tmp_path / "dist")
    items = clean.plan_dist(tmp_path / "dist")
    assert sorted(item.name for item in items) == sorted(str(p) for p in ours.values())
    build = next(item for item in items if item.name == str(ours["build"]))
    assert build.size >= 1000 and "build-info.json" in build.what
    assert build.paths == (str(ours["build"]),) and build.left == ()


def test_remove_dist_keeps_what_the_user_owns_and_prunes_emptied_parents(tmp_path):
    dist = tmp_path / "dist"
    ours = make_dist(dist)
    (dist / "sched" / "v1.36.3" / "mine").rmdir()  # so sched/v1.36.3 empties once our outputs go
    for item in clean.plan_dist(dist):
        clean.remove(item, dist_dir=dist)
    assert not any(os.path.lexists(p) for p in ours.values())
    assert not (dist / "sched").exists() and not (dist / "config").exists()  # emptied by us: pruned
    left = sorted(str(p.relative_to(dist)) for p in dist.rglob("*"))
    assert left == ["mine-link", "notes.txt", "other", "other/.other.x", "other/.out.x", "other/out"]
    assert clean.plan_dist(dist) == []


def test_plan_cache_lists_only_our_sub_directories(tmp_path):
    (tmp_path / "vendor" / "a").mkdir(parents=True)
    (tmp_path / "vendor" / "a" / "f").write_bytes(b"x" * 4096)
    (tmp_path / "goproxy").mkdir()
    (tmp_path / "cluster").mkdir()  # a running control plane's state: cluster.down's business
    (tmp_path / "photos").mkdir()  # cache_dir may be configured to a shared place
    (tmp_path / "tools").symlink_to(tmp_path / "photos")  # never followed
    items = clean.plan_cache(tmp_path)
    assert [Path(item.name).name for item in items] == ["goproxy", "vendor"]
    assert next(i for i in items if i.name.endswith("vendor")).size == 4096


def test_plan_cache_knows_the_batching_summaries_and_the_recorder_patch(tmp_path):
    """Both are written where the stages themselves put them (their own path functions), so a stage that
    moves its folder fails this test instead of leaving a folder `clean` never removes."""
    from scheduler_build.build import debuggable
    from scheduler_build.config import validate

    summary = validate.batching_summary_path(tmp_path, "ab" * 32, "profiles: []\n")
    summary.parent.mkdir(parents=True)
    summary.write_text("batching: profile default-scheduler keeps opportunistic batching\n")
    patch = debuggable.recorder_patch(tmp_path)
    (tmp_path / "photos").mkdir()  # not ours: stays
    items = clean.plan_cache(tmp_path)
    written = {tmp_path / summary.relative_to(tmp_path).parts[0], tmp_path / patch.relative_to(tmp_path).parts[0]}
    assert {Path(item.name) for item in items} == written
    for item in items:
        clean.remove(item)
    assert not summary.exists() and not patch.exists() and sorted(os.listdir(tmp_path)) == ["photos"]


def test_table_and_sizes():
    assert clean.human(512) == "512 B" and clean.human(3 * 2**30) == "3.0 GiB"
    assert clean.table([], "removed") == "nothing to remove"
    text = clean.table([clean.Item("cache", "/c/vendor", 2048, "vendored")], "would remove")
    assert text.splitlines() == ["would remove    2.0 KiB  cache   /c/vendor  (vendored)", "1 item, 2.0 KiB"]


def _inv(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "invoke", "-r", str(REPO), *args], cwd=REPO, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO), **env})


def suite_builder() -> str:
    """The builder image the suite's default build compiles in (a shared one `clean --images` lists and keeps),
    as the build stage selects it for the pinned release's Go."""
    from conftest import TEST_K8S_VERSION
    from scheduler_build import settings
    from scheduler_build.build import builder_image
    from scheduler_build.engine import connect
    from scheduler_build.resolve import versions

    go = versions.resolve(TEST_K8S_VERSION, settings.cache_dir()).go_version
    return builder_image.select(connect(), go, pull=False).image


# --- leftovers: staging of stopped builds, directories whose every file is as our record says

FULL = REPO / "tests" / "data" / "config" / "specs" / "intree-full.yaml"  # leftovers: a chart of ours


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(proc.stdout)


def test_staging_of_a_stopped_build_is_ours_and_a_running_ones_is_not(tmp_path):
    platform_dir = tmp_path / "dist" / "kube-scheduler" / "v1.36.3"
    stopped = platform_dir / f"{STAGING}linux-amd64-p{_dead_pid()}-abcd_123"
    running = platform_dir / f"{STAGING}linux-amd64-p{os.getpid()}-efgh_456"
    earlier = platform_dir / f".tmp-linux-amd64-p{_dead_pid()}-abcd_123"  # the earlier name, with the pid
    older = platform_dir / ".tmp-linux-amd64-ijkl_789"  # before staging names carried the pid: files not ours
    users = platform_dir / ".tmp-notes"
    for directory in (stopped, running, earlier, older, users):
        directory.mkdir(parents=True)
        (directory / "kube-scheduler").write_bytes(b"x" * 10)
    planned = {item.name for item in clean.plan_dist(tmp_path / "dist")}
    assert planned == {str(stopped), str(earlier)}
    for item in clean.plan_dist(tmp_path / "dist"):
        clean.remove(item, dist_dir=tmp_path / "dist")
    assert running.is_dir() and users.is_dir() and older.is_dir() and not stopped.exists() and not earlier.exists()


def test_a_chart_of_ours_is_cleaned_and_of_one_the_user_changed_only_the_changed_file_stays(tmp_path):
    dist = tmp_path / "dist"
    files = chart.chart_files(spec_mod.load(FULL), "r/x:1")
    output.write(files, dist / "chart" / "a", chart.CHART_NAMES, plain=True)
    output.write(files, dist / "chart" / "b", chart.CHART_NAMES, plain=True)
    (dist / "chart" / "b" / "values.yaml").write_text("mine: true\n")
    (dist / "chart" / "c").mkdir()
    (dist / "chart" / "c" / "values.yaml").write_text(files["values.yaml"])  # same bytes, no record: not ours
    planned = clean.plan_dist(dist)
    assert [item.name for item in planned] == [str(dist / "chart" / "a"), str(dist / "chart" / "b")]
    assert planned[0].left == () and planned[1].left == (str(dist / "chart" / "b" / "values.yaml"),)
    for item in planned:
        clean.remove(item, dist_dir=dist)
    assert not (dist / "chart" / "a").exists() and (dist / "chart" / "b" / "values.yaml").read_text() == "mine: true\n"
    assert sorted(p.name for p in (dist / "chart" / "b").iterdir()) == ["values.yaml"]  # the rest was ours
    assert (dist / "chart" / "c" / "values.yaml").is_file()

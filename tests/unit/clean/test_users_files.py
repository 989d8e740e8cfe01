"""A user's file beside an output of ours: `clean` removes our files, names the user's and leaves them; the
next publish carries them into the new tree. Real directories written by the real publish step
(atomic.publish_dir) and the real `clean` command in a subprocess; negative controls plant the old faults
(a whole directory taken as ours because one record parses; a publish that drops the old tree)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scheduler_build import atomic, owned
from scheduler_build.atomic import write_atomic
from scheduler_build.owned import publish_dir
from scheduler_build.clean import plan as clean
from scheduler_build.errors import UserError

REPO = Path(__file__).resolve().parents[3]
BUILD_INFO = json.dumps({"scheduler_build": "0.1.0", "component": "kube-scheduler",
                         "binary": {"path": "/x/kube-scheduler"}})


def publish_build(final: Path, binary: bytes = b"\x7fELF one") -> Path:
    """A build's directory as pipeline.run publishes it: the binary and its record, swapped in."""
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(os.path.join(final.parent, atomic.staging_prefix(final.name) + "abcd1234"))
    staging.mkdir()
    (staging / "kube-scheduler").write_bytes(binary)
    write_atomic(staging / "build-info.json", BUILD_INFO)
    return publish_dir(staging, final)


def users_files(directory: Path) -> None:
    """What a user keeps beside a build: a file, a file in a directory of theirs, a symlink."""
    (directory / "NOTES.md").write_text("my notes\n")
    (directory / "mine").mkdir()
    (directory / "mine" / "log.txt").write_text("run 1\n")
    (directory / "latest").symlink_to("kube-scheduler")


def check_users_files_kept(directory: Path) -> None:
    assert (directory / "NOTES.md").read_text() == "my notes\n"
    assert (directory / "mine" / "log.txt").read_text() == "run 1\n"
    assert os.readlink(directory / "latest") == "kube-scheduler"


def test_clean_removes_our_files_names_the_users_and_leaves_them(tmp_path):
    dist = tmp_path / "dist"
    final = publish_build(dist / "sched" / "v1.36.3" / "linux-amd64")
    users_files(final)
    items = clean.plan_dist(dist)
    assert [item.name for item in items] == [str(final)]
    assert sorted(Path(p).name for p in items[0].paths) == ["build-info.json", "kube-scheduler"]
    assert sorted(Path(p).relative_to(final).as_posix() for p in items[0].left) == ["NOTES.md", "latest", "mine/log.txt"]
    text = clean.table(items, "removed")
    assert f"left  dist    {final / 'NOTES.md'}  (not written by scheduler-build)" in text, text
    clean.remove(items[0], dist_dir=dist)
    check_users_files_kept(final)
    assert not (final / "kube-scheduler").exists() and not (final / "build-info.json").exists()
    assert clean.plan_dist(dist) == []  # nothing of ours is left to find


def test_the_next_publish_keeps_the_users_files(tmp_path):
    final = publish_build(tmp_path / "dist" / "linux-amd64")
    users_files(final)
    publish_build(final, b"\x7fELF two")
    assert (final / "kube-scheduler").read_bytes() == b"\x7fELF two"
    check_users_files_kept(final)
    assert sorted(p.name for p in final.parent.iterdir()) == ["linux-amd64"]  # no staging or old tree left


def test_a_user_file_where_the_new_output_writes_is_refused_and_nothing_changes(tmp_path):
    final = tmp_path / "dist" / "linux-amd64"
    final.mkdir(parents=True)
    write_atomic(final / "build-info.json", BUILD_INFO)
    (final / "extra.json").write_text("the user's")  # not named by build-info.json: theirs
    staging = tmp_path / "dist" / (atomic.staging_prefix("linux-amd64") + "abcd1234")
    staging.mkdir()
    (staging / "extra.json").write_text("ours now")
    with pytest.raises(UserError, match="extra.json is not scheduler-build's"):
        publish_dir(staging, final)
    assert (final / "extra.json").read_text() == "the user's"


def test_an_image_layouts_blobs_are_ours_and_a_users_file_in_it_is_not(tmp_path):
    layout = tmp_path / "dist" / "image"
    blob = "blobs/sha256/" + owned.digest("layer")
    for name, text in {"image-info.json": '{"inputs_key": "k"}', "index.json": "{}", "oci-layout": "{}",
                       blob: "layer", "README": "mine"}.items():
        (layout / name).parent.mkdir(parents=True, exist_ok=True)
        (layout / name).write_text(text)
    (item,) = clean.plan_dist(tmp_path / "dist")
    assert [Path(p).name for p in item.left] == ["README"]
    clean.remove(item, dist_dir=tmp_path / "dist")
    assert sorted(p.relative_to(layout).as_posix() for p in layout.rglob("*")) == ["README"]  # blobs/ pruned


def test_a_pidless_hidden_directory_is_ours_only_when_its_files_are(tmp_path):
    """`.tmp-<word>-<8>` is anyone's name: before, any such directory was removed as a stopped build's."""
    parent = tmp_path / "dist" / "sched"
    users = parent / ".tmp-drafts-20260101"
    users.mkdir(parents=True)
    (users / "draft.md").write_text("mine")
    older = parent / ".tmp-linux-amd64-ab_cd123"  # an older build's staging: our record, our files
    older.mkdir()
    write_atomic(older / "build-info.json", BUILD_INFO)
    (older / "kube-scheduler").write_bytes(b"x")
    assert [item.name for item in clean.plan_dist(tmp_path / "dist")] == [str(older)]


def test_the_negative_controls_the_old_faults_are_caught(tmp_path, monkeypatch):
    """Planted: a directory whose record parses is ours as a whole (the old `_ours`); a publish that removes
    the old tree without carrying the user's files (the old publish_dir). The checks above catch both."""
    dist = tmp_path / "dist"
    final = publish_build(dist / "linux-amd64")
    users_files(final)
    monkeypatch.setattr(owned, "files_under", lambda directory: ["build-info.json", "kube-scheduler"])
    for item in clean.plan_dist(dist):
        clean.remove(item, dist_dir=dist)
    with pytest.raises((AssertionError, FileNotFoundError)):
        check_users_files_kept(final)
    monkeypatch.undo()

    final = publish_build(tmp_path / "again" / "linux-amd64")
    users_files(final)
    monkeypatch.setattr(atomic, "_carry_theirs", lambda *args, **kwargs: [])
    publish_build(final, b"\x7fELF two")
    with pytest.raises((AssertionError, FileNotFoundError)):
        check_users_files_kept(final)


def test_clean_says_what_it_left(tmp_path):
    """The command a user runs, as a whole process: the user's file is named and stays."""
    dist = tmp_path / "dist"
    final = publish_build(dist / "underlay-scheduler" / "v1.36.3" / "linux-amd64")
    (final / "NOTES.md").write_text("my notes\n")
    env = {**os.environ, "PYTHONPATH": str(REPO), "SCHEDULER_BUILD_PATHS_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "scheduler_build", "clean", "--dist"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env={**env, "SCHEDULER_BUILD_PATHS_DIST_DIR": str(dist)})
    assert done.returncode == 0, done.stderr
    assert f"{final / 'NOTES.md'}  (not written by scheduler-build)" in done.stdout, done.stdout
    assert (final / "NOTES.md").read_text() == "my notes\n" and not (final / "kube-scheduler").exists()
    shutil.rmtree(dist)

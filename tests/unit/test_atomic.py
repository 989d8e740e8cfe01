"""Outputs people can copy (atomic.publish_dir): the documented path is a real directory, so `tar` of it
holds the files, and a reader of the path never sees a half-written output (bench/publish_atomicity.py,
a shorter run). Unit: the file system only."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from scheduler_build.atomic import publish_dir

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench import publish_atomicity  # noqa: E402


def test_tar_of_the_documented_path_holds_the_files(tmp_path):
    staging = tmp_path / ".tmp-linux-amd64-x"
    staging.mkdir()
    (staging / "kube-scheduler").write_bytes(b"\x7fELF")
    (staging / "build-info.json").write_text("{}")
    publish_dir(staging, tmp_path / "dist" / "linux-amd64")
    listing = subprocess.run(["tar", "-cf", "-", "-C", str(tmp_path / "dist"), "linux-amd64"], capture_output=True,
                             check=True).stdout
    names = subprocess.run(["tar", "-tf", "-"], input=listing, capture_output=True, check=True).stdout.decode()
    assert sorted(names.split()) == ["linux-amd64/", "linux-amd64/build-info.json", "linux-amd64/kube-scheduler"]


def test_a_reader_never_sees_a_half_written_output():
    seen = publish_atomicity.measure(1.5)
    assert seen["publishes"] > 5 and seen["reads"] > 5, seen
    assert seen["absent"] == seen["half_written"] == seen["mixed_versions"] == 0, seen
    assert seen["leftovers"] == ["linux-amd64"]


def _replace_in_place(staging: Path, final: Path) -> None:
    """The negative control: what a copy over the old tree does (remove it, copy the new one in)."""
    shutil.rmtree(final, ignore_errors=True)
    shutil.copytree(staging, final, dirs_exist_ok=True)
    shutil.rmtree(staging)


def test_the_negative_control_a_non_atomic_publish_is_caught():
    seen = publish_atomicity.measure(1.5, publish=_replace_in_place)
    assert seen["absent"] + seen["half_written"] > 0, seen

"""build/uptodate.py: a no-change rebuild skips the container only when the whole compile action
(workspace image ID, environment, command, inputs archive) is the one that made the seed, and the
seed still carries that compile's Go build ID and size.

Seeds are real Go binaries of this host's toolchain (gofmt, go), whose build IDs Go wrote. Negative
controls: each part of the action changed, another binary as the seed, a seed grown by a byte, a
garbled or missing record, and a binary with no Go build ID (never recorded) each mean "compile"."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from scheduler_build.build import uptodate

GOROOT_BIN = Path(shutil.which("go") or "/usr/local/go/bin/go").resolve().parent
ACTION = dict(image_id="sha256:abc", environment={"GOOS": "linux", "CGO_ENABLED": "0"},
              argv=["go", "build", "-o", "/out/k/kube-scheduler", "."], inputs=b"tar bytes")


def _seed(tmp_path: Path, program: str = "gofmt") -> Path:
    seed = tmp_path / "kube-scheduler"
    shutil.copyfile(GOROOT_BIN / program, seed)
    return seed


def test_the_same_action_and_seed_are_up_to_date(tmp_path):
    seed, record = _seed(tmp_path), tmp_path / "k.action.json"
    action = uptodate.action_key(**ACTION)
    assert not uptodate.up_to_date(record, action, seed)  # no record yet
    uptodate.remember(record, action, seed)
    assert uptodate.up_to_date(record, action, seed)


@pytest.mark.parametrize("field, value", [
    ("image_id", "sha256:abd"),
    ("environment", {"GOOS": "linux", "CGO_ENABLED": "1"}),
    ("argv", ["go", "build", "-o", "/out/k/kube-scheduler", "./cmd"]),
    ("inputs", b"tar bytez"),
])
def test_any_part_of_the_action_changed_means_compile(tmp_path, field, value):
    seed, record = _seed(tmp_path), tmp_path / "k.action.json"
    uptodate.remember(record, uptodate.action_key(**ACTION), seed)
    assert not uptodate.up_to_date(record, uptodate.action_key(**{**ACTION, field: value}), seed)


def test_another_seed_or_a_grown_one_means_compile(tmp_path):
    seed, record = _seed(tmp_path), tmp_path / "k.action.json"
    action = uptodate.action_key(**ACTION)
    uptodate.remember(record, action, seed)
    (tmp_path / "other").mkdir()
    other = _seed(tmp_path / "other", "go")
    assert not uptodate.up_to_date(record, action, other)
    with open(seed, "ab") as grown:
        grown.write(b"\0")
    assert not uptodate.up_to_date(record, action, seed)
    seed.unlink()
    assert not uptodate.up_to_date(record, action, seed)


@pytest.mark.parametrize("text", ["", "{", "[]", '{"action": 1}', "null"])
def test_a_garbled_record_means_compile(tmp_path, text):
    seed, record = _seed(tmp_path), tmp_path / "k.action.json"
    record.write_text(text)
    assert not uptodate.up_to_date(record, uptodate.action_key(**ACTION), seed)


def test_a_binary_without_a_go_build_id_is_never_recorded(tmp_path):
    seed, record = tmp_path / "true", tmp_path / "k.action.json"
    shutil.copyfile(shutil.which("true"), seed)
    uptodate.remember(record, uptodate.action_key(**ACTION), seed)
    assert not record.exists()

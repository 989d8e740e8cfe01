"""Integration: a profile-guided compile in the real builder container (network none), by the compile
stage `build --pgo` uses, of a small Go program rather than kube-scheduler: the first compile with a
profile rebuilds every package (the profile is in each package's cache key), minutes for kube-scheduler
and seconds here, while the flag, the inputs and the action record are the same code. The profile is the
program's own CPU profile, written by runtime/pprof on the host."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from scheduler_build import platforms, settings
from scheduler_build.build import builder_image as builder
from scheduler_build.build import compile as compile_stage
from scheduler_build.build import pgo, workspace_image
from scheduler_build.build.info import sha256_file
from scheduler_build.engine import connect
from scheduler_build.golang import toolchain
from tests.unit.build.test_pgo import GO, PROGRAM

GO_LINE = "1.21"


def _workspace(root: Path, name: str) -> Path:
    """The program as a workspace (go.mod, main.go); no dependency, so its vendor tree is empty."""
    work = root / name
    work.mkdir()
    (work / "go.mod").write_text(f"module example.com/spin\n\ngo {GO_LINE}\n")
    (work / "main.go").write_text(PROGRAM)
    return work


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    if GO is None:
        pytest.skip("needs the go command")
    root = tmp_path_factory.mktemp("pgo-build")
    profile = root / "cpu.pprof"
    first = _workspace(root, "host")
    subprocess.run([GO, "run", ".", str(profile)], cwd=first, check=True, timeout=300,
                   env={**__import__("os").environ, "GOTOOLCHAIN": "local"})
    vendor = root / "vendor"
    vendor.mkdir()
    (vendor / "modules.txt").write_text("")
    engine = connect()
    chosen = builder.select(engine, GO_LINE, pull=False, go=toolchain.choose(GO_LINE))
    image = workspace_image.ensure(engine, chosen.image, chosen.go_version, vendor, "pgo-test-empty-vendor", [],
                                   chosen.identity)
    return root, profile, engine, image


def _compile(setup, name: str, profile: Path | None) -> Path:
    root, _, engine, image = setup
    out = root / f"out-{name}"
    out.mkdir()
    job = compile_stage.Job(
        workspace=_workspace(root, name), vendor=root / "vendor", out_dir=out,
        gocache_volume=settings.gocache_volume(None), package=".", binary_name="spin", flags="-s -w",
        environment=compile_stage.build_environment("linux", platforms.host_arch(), False, 0), overlays={},
        test=False, state_dir=root / f"state-{name}", pgo=profile)
    code, argv = compile_stage.run(engine, image.tag, job, image_id=image.image_id)
    assert code == 0, argv
    return out / "spin"


def _build_settings(binary: Path) -> str:
    """`go version -m` without its first line (the path of the file it read)."""
    shown = subprocess.run([GO, "version", "-m", str(binary)], capture_output=True, text=True, check=True).stdout
    return shown.partition("\n")[2]


def test_a_profile_guided_compile_is_recorded_by_base_name_and_reproducible(setup):
    _, profile, _, _ = setup
    checked = pgo.load(profile, "--pgo")
    guided = _compile(setup, "first", checked.path)
    shown = _build_settings(guided)
    assert "\tbuild\t-pgo=default.pgo\n" in shown  # the fixed name, not the host's path
    assert str(profile.parent) not in shown and "cpu.pprof" not in shown
    # the same profile again, from another host path and another output: the same bytes
    elsewhere = profile.parent / "copies" / "other-name.pprof"
    elsewhere.parent.mkdir()
    shutil.copyfile(profile, elsewhere)
    again = _compile(setup, "second", elsewhere)
    assert sha256_file(again) == sha256_file(guided)
    # negative control: without the profile there is no -pgo setting
    plain = _compile(setup, "plain", None)
    assert "-pgo=" not in _build_settings(plain)

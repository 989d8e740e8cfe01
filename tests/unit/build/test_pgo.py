"""Profile-guided builds (build/pgo.py): the profile checked when the build is decided, put into the compile's
inputs at one fixed path, hashed into its action record, and named in build-info and the provenance.
The profile is a real one: a small Go program's CPU profile written by runtime/pprof."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from scheduler_build.build import compile as compile_stage
from scheduler_build.build import pgo, uptodate
from scheduler_build.build.info import BuildInfo, PgoInfo
from scheduler_build.build.workspace_image import inputs_tar
from scheduler_build.errors import UserError
from scheduler_build.image import provenance
from scheduler_build.inputs.build import pgo_decided

GO = shutil.which("go")
PROGRAM = """package main

import (
	"os"
	"runtime/pprof"
	"time"
)

func spin(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i % 7
	}
	return s
}

func main() {
	f, _ := os.Create(os.Args[1])
	pprof.StartCPUProfile(f)
	deadline := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(deadline) {
		spin(1 << 16)
	}
	pprof.StopCPUProfile()
	f.Close()
}
"""


@pytest.fixture(scope="module")
def profile(tmp_path_factory) -> Path:
    """A CPU profile as Go's runtime writes it (gzip-compressed pprof)."""
    if GO is None:
        pytest.skip("needs the go command")
    work = tmp_path_factory.mktemp("pprof")
    (work / "go.mod").write_text("module example.com/spin\n\ngo 1.21\n")
    (work / "main.go").write_text(PROGRAM)
    out = work / "cpu.pprof"
    subprocess.run([GO, "run", ".", str(out)], cwd=work, check=True, timeout=300,
                   env={**__import__("os").environ, "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local"})
    return out


def test_a_real_cpu_profile_is_taken_and_hashed(profile):
    assert profile.read_bytes()[:2] == b"\x1f\x8b"
    loaded = pgo.load(profile, "--pgo")
    assert loaded.path == profile.resolve() and len(loaded.sha256) == 64
    assert loaded.to_dict()["flag"] == "-pgo=default.pgo"
    # the same bytes unzipped (pprof's plain protocol buffer) and a preprocessed profile are taken too
    plain = profile.with_name("plain.pprof")
    plain.write_bytes(gzip.decompress(profile.read_bytes()))
    assert pgo.looks_like_pprof(plain.read_bytes()) == ""
    assert pgo.looks_like_pprof(pgo.PREPROFILE + b"GO PREPROFILE V1\n") == ""


@pytest.mark.parametrize("content, why", [
    (b"", "it is empty"),
    (b"hello, not a profile\n", "neither gzip-compressed pprof nor a pprof protocol buffer"),
    (b"\x1f\x8b\x08\x00garbage", "does not decompress"),
    (gzip.compress(b"#!/bin/sh\n"), "neither gzip-compressed pprof"),
])
def test_a_file_that_is_no_profile_is_one_line_naming_it_and_the_fix(tmp_path, content, why):
    bad = tmp_path / "cpu.pprof"
    bad.write_bytes(content)
    with pytest.raises(UserError) as err:
        pgo.load(bad, "--pgo")
    assert str(bad) in err.value.message and why in err.value.message and err.value.message.startswith("--pgo: ")
    assert "\n" not in err.value.message and "pprof" in err.value.hint


def test_a_missing_or_unreadable_profile_names_the_file(tmp_path):
    with pytest.raises(UserError, match="no such profile .*nothing.pprof"):
        pgo.load(tmp_path / "nothing.pprof", "build.pgo")
    with pytest.raises(UserError, match="is a directory"):
        pgo.load(tmp_path, "build.pgo")


def test_the_compile_command_takes_the_profile_at_one_fixed_path_and_is_unchanged_without_it():
    plain = compile_stage.go_build_command(".", "/out/x", "-s")
    guided = compile_stage.go_build_command(".", "/out/x", "-s", pgo=True)
    assert "-pgo=/src/default.pgo" in guided and not any(a.startswith("-pgo") for a in plain)
    assert [a for a in guided if a != pgo.FLAG] == plain
    assert compile_stage.go_build_command(".", "/o", "", test=True, pgo=True)[:4] == ["go", "test", "-c", "-vet=off"]


def _job(workspace: Path, profile: Path | None) -> compile_stage.Job:
    return compile_stage.Job(workspace=workspace, vendor=Path("v"), out_dir=Path("o"), gocache_volume="v", package=".",
                             binary_name="kube-scheduler", flags="", environment={}, overlays={}, test=False,
                             state_dir=Path("s"), pgo=profile)


def test_the_profile_is_hashed_into_the_action_and_its_host_path_is_not(tmp_path, profile):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "main.go").write_text("package main\n")
    copy = tmp_path / "elsewhere" / "another-name.pprof"
    copy.parent.mkdir()
    copy.write_bytes(profile.read_bytes())
    changed = tmp_path / "changed.pprof"
    changed.write_bytes(gzip.compress(gzip.decompress(profile.read_bytes()) + b"\x0a\x00"))

    def action(p: Path | None) -> str:
        job = _job(workspace, p)
        argv = compile_stage.go_build_command(".", "/out/k/kube-scheduler", "", pgo=p is not None)
        return uptodate.action_key("sha256:img", {}, argv, inputs_tar(workspace, {}, files=compile_stage.profile_file(job)))

    assert action(profile) == action(copy)  # the same profile from another path: the same action, no rebuild
    assert action(profile) != action(changed)  # a changed profile rebuilds
    assert action(None) != action(profile)  # negative control: with and without a profile differ
    archive = inputs_tar(workspace, {}, files=compile_stage.profile_file(_job(workspace, profile)))
    assert b"src/default.pgo" in archive and b"another-name" not in inputs_tar(
        workspace, {}, files=compile_stage.profile_file(_job(workspace, copy)))
    # its own output directory: a plain and a profile-guided build of the same sources stay apart
    assert _job(workspace, profile).out_key("img") != _job(workspace, None).out_key("img")
    assert _job(workspace, profile).out_key("img") == _job(workspace, copy).out_key("img")


def test_the_decide_step_takes_the_flag_then_the_spec_then_the_setting(tmp_path, profile):
    from scheduler_build.spec.model import Spec

    spec_dir = tmp_path / "spec"
    spec_dir.mkdir()
    (spec_dir / "spec.pprof").write_bytes(profile.read_bytes())
    spec = Spec(path=spec_dir / "scheduler.yaml", name="s", version="0.1.0", kubernetes_version="1.36",
                pgo=spec_dir / "spec.pprof")
    setting = tmp_path / "setting.pprof"
    setting.write_bytes(profile.read_bytes())
    config = {"build": {"pgo": str(setting)}}
    assert pgo_decided(config, str(profile), spec).path == profile.resolve()
    assert pgo_decided(config, None, spec).path == spec_dir / "spec.pprof"
    assert pgo_decided(config, None, None).path == setting
    assert pgo_decided({}, None, None) is None
    with pytest.raises(UserError, match=r"^scheduler.yaml|.*scheduler.yaml: pgo: no such profile"):
        pgo_decided({}, None, Spec(path=spec_dir / "scheduler.yaml", name="s", version="0.1.0",
                                   kubernetes_version="1.36", pgo=spec_dir / "gone.pprof"))


def test_the_spec_field_is_relative_to_the_specs_directory(tmp_path, profile):
    from scheduler_build import spec as spec_mod

    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "cpu.pprof").write_bytes(profile.read_bytes())
    path = tmp_path / "scheduler.yaml"
    path.write_text("name: s\nversion: 0.1.0\nkubernetes: {version: '1.36'}\npgo: profiles/cpu.pprof\n")
    assert spec_mod.load(path).pgo == tmp_path / "profiles" / "cpu.pprof"
    path.write_text("name: s\nversion: 0.1.0\nkubernetes: {version: '1.36'}\npgo: profiles/none.pprof\n")
    with pytest.raises(UserError, match="pgo"):
        spec_mod.load(path)


def test_build_info_and_provenance_name_the_profile(tmp_path):
    from tests.unit.image.test_oci import record as sample_record

    record = sample_record()
    assert record.pgo is None and "pgo-profile" not in json.dumps(provenance.resolved_dependencies(record))
    record.pgo = PgoInfo(path=str(tmp_path / "profiles" / "cpu.pprof"), sha256="ab" * 32, flag="-pgo=default.pgo")
    again = BuildInfo.from_dict(json.loads(record.to_json()))
    assert again.pgo == record.pgo
    deps = provenance.resolved_dependencies(again, spec_dir=tmp_path)
    found = [d for d in deps if d["name"] == "pgo-profile"]
    assert found == [{"uri": "file:profiles/cpu.pprof", "name": "pgo-profile", "digest": {"sha256": "ab" * 32},
                      "annotations": {"flag": "-pgo=default.pgo"}}]
    assert [d for d in provenance.resolved_dependencies(again) if d["name"] == "pgo-profile"][0]["uri"] == "file:cpu.pprof"


def test_the_setting_profiles_kube_scheduler_only_and_the_flag_any_component(tmp_path, profile):
    from scheduler_build.inputs.build import build_request

    config = {"build": {"pgo": str(profile)}}
    assert build_request(config).pgo.path == profile.resolve()
    assert build_request(config, component="kube-apiserver").pgo is None  # a scheduler's profile stays its own
    assert build_request({}, component="kube-apiserver", pgo_profile=str(profile)).pgo.sha256 == pgo.load(profile, "x").sha256
    assert build_request({}).pgo is None

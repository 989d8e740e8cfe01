"""compare's inputs (inputs/compare.py): a bad flag or a malformed snapshot is one line before any build."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from scheduler_build.compare import generate
from scheduler_build.errors import UserError
from scheduler_build.inputs.compare import compare_inputs, generate_inputs, take_inputs

EXAMPLE = Path(__file__).resolve().parents[3] / "examples/underlay/scheduler.yaml"


@pytest.fixture
def shot(tmp_path) -> Path:
    path = tmp_path / "s.json"
    path.write_text(generate.generate(generate.GenerateRequest.checked(nodes=2, pods=2)).to_json())
    return path


@pytest.fixture
def binary(tmp_path) -> Path:
    path = tmp_path / "kube-scheduler"
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _refused(**given) -> str:
    with pytest.raises(UserError) as caught:
        compare_inputs({}, **given)
    assert "\n" not in str(caught.value)
    return str(caught.value)


def test_the_snapshot_is_read_first(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"apiVersion": "scheduler-build.io/v1", "kind": "Snapshot", "nodes": [{}]}))
    assert "nodes[0]: metadata: must be an object" in _refused(snapshot=str(bad), a=str(EXAMPLE), b=str(EXAMPLE))


def test_each_side_must_be_a_spec_or_a_binary_with_its_configuration(shot, binary, tmp_path):
    assert "compare needs -a" in _refused(snapshot=str(shot), a=None, b=str(EXAMPLE))
    assert "-b /nope.yaml: no such file" in _refused(snapshot=str(shot), a=str(binary), a_config=str(EXAMPLE), b="/nope.yaml",
                                                      apiserver=str(binary))
    assert f"-a {binary} is a binary and has no configuration" in _refused(snapshot=str(shot), a=str(binary), b=str(EXAMPLE))
    assert "--a-config /missing.yaml: no such file" in _refused(snapshot=str(shot), a=str(binary), a_config="/missing.yaml",
                                                                 b=str(EXAMPLE))
    assert "--b-config is for a built binary" in _refused(snapshot=str(shot), a=str(binary), a_config=str(EXAMPLE),
                                                          b=str(EXAMPLE), b_config=str(EXAMPLE), apiserver=str(binary))


def test_a_binary_side_reads_its_version_from_the_build_info_beside_it(shot, binary, tmp_path):
    (binary.parent / "build-info.json").write_text("{not json")
    assert "build-info.json is not a build-info.json" in _refused(snapshot=str(shot), a=str(binary), a_config=str(EXAMPLE),
                                                                  b=str(binary), b_config=str(EXAMPLE))


def test_outputs_need_an_existing_directory(shot, binary):
    config = str(EXAMPLE)
    assert "no build-info.json beside it" in _refused(snapshot=str(shot), a=str(binary), a_config=config, b=str(binary),
                                                      b_config=config)
    assert "--json /no/such/dir/r.json: its directory does not exist" in _refused(
        snapshot=str(shot), a=str(binary), a_config=config, b=str(binary), b_config=config, json_out="/no/such/dir/r.json",
        apiserver=str(binary))
    with pytest.raises(UserError, match="snapshot.take needs --out"):
        take_inputs({}, kubeconfig=None, out=None)
    with pytest.raises(UserError, match="snapshot.generate needs --out"):
        generate_inputs(nodes=1, pods=1, out=None)


def test_both_builds_of_a_side_go_to_the_decided_dist_dir(shot, tmp_path):
    """The decided paths.dist_dir reaches the compare build and the kube-apiserver build (a setting, here as the
    caller's settings; the e2e test passes it by environment and checks the build lands there)."""
    dist = tmp_path / "elsewhere"
    inputs = compare_inputs({"paths": {"dist_dir": str(dist)}}, snapshot=str(shot), a=str(EXAMPLE), b=str(EXAMPLE))
    for side in (inputs.a, inputs.b):
        assert side.request is not None and side.apiserver is not None
        assert Path(side.request.dist_dir) == dist and Path(side.apiserver.dist_dir) == dist


def test_dist_flag_wins_over_the_setting_for_both_builds_of_each_side(shot, tmp_path):
    flag, setting = tmp_path / "flag", tmp_path / "setting"
    inputs = compare_inputs({"paths": {"dist_dir": str(setting)}}, snapshot=str(shot), a=str(EXAMPLE), b=str(EXAMPLE),
                            dist=str(flag))
    for side in (inputs.a, inputs.b):
        assert Path(side.request.dist_dir) == flag and Path(side.apiserver.dist_dir) == flag
    unflagged = compare_inputs({"paths": {"dist_dir": str(setting)}}, snapshot=str(shot), a=str(EXAMPLE), b=str(EXAMPLE))
    assert Path(unflagged.a.request.dist_dir) == setting  # negative control: without the flag, the setting

"""`inv release.matrix`: a spec's platforms × Kubernetes versions, for the CI system's own matrix."""

from __future__ import annotations

import copy
import json
import os
import subprocess

import pytest

from scheduler_build import platforms
from scheduler_build import spec as spec_mod
from scheduler_build.build.matrix import release_matrix, table
from scheduler_build.errors import UserError
from tests.unit.spec.test_load import BASE, REPO, write_tree


def load(tmp_path, **changes):
    data = copy.deepcopy(BASE)
    data.update(changes)
    return spec_mod.load(write_tree(tmp_path, data))


def test_matrix_is_the_specs_platforms_and_version(tmp_path):
    assert release_matrix(load(tmp_path)) == {"arch": ["amd64", "arm64"], "kubernetes": ["1.36"]}


def test_versions_flag_replaces_the_specs_version_in_order_without_duplicates(tmp_path):
    matrix = release_matrix(load(tmp_path), " 1.37, v1.35.2 ,1.37,")
    assert matrix["kubernetes"] == ["1.37", "v1.35.2"]
    assert table(matrix).splitlines() == ["linux/amd64  1.37", "linux/arm64  1.37", "linux/amd64  v1.35.2", "linux/arm64  v1.35.2"]


def test_spec_without_platforms_builds_for_the_host(tmp_path):
    data = copy.deepcopy(BASE)
    del data["platforms"]
    assert release_matrix(spec_mod.load(write_tree(tmp_path, data)))["arch"] == [platforms.host_arch()]


@pytest.mark.parametrize("versions, words", [("1.36,v1.x", "'v1.x'"), ("2.1", "'2.1'"), (" , ", "empty")])
def test_bad_versions_are_one_clear_error(tmp_path, versions, words):
    with pytest.raises(UserError) as info:
        release_matrix(load(tmp_path), versions)
    assert str(info.value).startswith("--k8s-versions") and words in str(info.value)


def _inv(*args, cwd=REPO):
    return subprocess.run(["inv", "release.matrix", *args], capture_output=True, text=True, cwd=cwd, timeout=120,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))))


def test_json_is_one_line_for_github_output(tmp_path):
    proc = _inv("--json", "--spec", str(write_tree(tmp_path, BASE)), "--k8s-versions", "1.35,1.36")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("\n") == 1  # `echo "matrix=$(inv release.matrix --json)" >> "$GITHUB_OUTPUT"`
    assert json.loads(proc.stdout) == {"arch": ["amd64", "arm64"], "kubernetes": ["1.35", "1.36"]}


def test_the_example_spec_is_the_default_and_a_missing_spec_is_one_line(tmp_path):
    proc = _inv("--json")
    assert proc.returncode == 0 and json.loads(proc.stdout) == {"arch": ["amd64", "arm64"], "kubernetes": ["1.36"]}
    proc = _inv("--spec", str(tmp_path / "nope.yaml"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and proc.stderr.strip().count("\n") == 0
    assert "nope.yaml not found" in proc.stderr

"""Integration tests beside tests/unit/golang/test_gotool.py (they start containers, compile, or run the real tools);
moved out of the unit tier. That file: Go is found where ci/setup.sh puts it without PATH; with no Go at all, doctor fails with the exact fix
"""

from __future__ import annotations
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
import pytest
from scheduler_build.golang import gotool
from scheduler_build.errors import UserError
from tests.unit.golang.test_gotool import (  # noqa: F401  shared with the unit tests: helpers and fixtures
    inv,
)


def test_doctor_finds_go_off_path_and_fails_without_go():
    found = inv(["doctor", "--json"])
    check = next(c for c in json.loads(found.stdout) if c["name"] == "go toolchain")
    assert check["ok"] and "not on PATH; using /usr/local/go/bin/go" in check["detail"], found.stdout
    missing = inv(["doctor", "--json"], go_anywhere=False)
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    check = next(c for c in json.loads(missing.stdout) if c["name"] == "go toolchain")
    assert not check["ok"] and check["required"] and "go.dev/dl" in check["fix"]


@pytest.mark.parametrize("version", [[], ["--k8s-version", "v1.36.3"]], ids=["minor over the proxy", "exact, cached"])
def test_render_needs_no_go(tmp_path, version):
    proc = inv(["config.render", "--out", str(tmp_path / "out"), *version], go_anywhere=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "v1.36.3" in (tmp_path / "out" / "deployment.yaml").read_text()


def test_a_go_task_without_go_is_one_line_with_the_fix(tmp_path):
    proc = inv(["scaffold.plugin", "--name", "Foo", "--points", "filter", "--module", "example.com/acme/foo", "--out", str(tmp_path / "p")],
               go_anywhere=False)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert len(errors) == 1 and "no Go toolchain" in errors[0] and "go.dev/dl" in errors[0]
    assert not (tmp_path / "p").exists()

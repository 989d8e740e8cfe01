"""Integration tests beside tests/unit/retarget/test_explain.py (they start containers, compile, or run the real tools);
moved out of the unit tier. That file: `inv plugin.retarget`: the go.mod rewrite, apidiff's report read as moves and signature changes, and
"""

from __future__ import annotations
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
import pytest
from scheduler_build.build import workspace_image
from conftest import DATA, REPO
from scheduler_build.resolve import gomod
from scheduler_build.resolve.versions import Resolution
from scheduler_build.retarget import apidiff, explain, gomod_edit, in_builder
from tests.unit.retarget.test_explain import (  # noqa: F401  shared with the unit tests: helpers and fixtures
    FIXTURE, inv,
)


def test_an_old_style_plugin_gets_a_report_naming_each_api_move(tmp_path):
    module = tmp_path / "oldscore"
    shutil.copytree(FIXTURE, module)
    before = (module / "go.mod").read_text()
    got = inv("plugin.retarget", "--path", str(module), "--k8s-version", "1.36", "--json")
    assert got.returncode == 1, got.stderr[-3000:]  # it does not compile: the exit status says so
    assert (module / "go.mod").read_text() == before  # without --write nothing changes
    result = json.loads(got.stdout)
    assert result["from"] == "v1.27.10" and result["compiles"] is False
    assert any("component-helpers" in note and "outside the module" in note for note in result["notes"])
    assert "+\tk8s.io/kubernetes v1.36.3" in result["diff"]
    assert result["errors"], got.stderr[-3000:]
    changes = "\n".join(result["changes"])
    for name in ("Handle", "Plugin", "ScorePlugin", "Status"):
        assert f"framework.{name} -> k8s.io/kube-scheduler/framework.{name}" in changes, changes
    assert "ScorePlugin.Score: changed from" in changes and "NodeInfo" in changes, changes
    assert "PluginFactory: changed from" in changes and "context.Context" in changes, changes

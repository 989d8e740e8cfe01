"""Integration tests beside tests/unit/project/test_pipelines.py (they start containers, compile, or run the real tools);
moved out of the unit tier. That file: The release pipelines in ci/: linted by real linters and real schemas.
"""

from __future__ import annotations
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
import pytest
import yaml
from tests.unit.project.test_pipelines import (  # noqa: F401  shared with the unit tests: helpers and fixtures
    WORKFLOWS, actionlint_binary,
)


def test_actionlint_passes_the_workflows_and_catches_a_broken_one(tmp_path):
    binary = actionlint_binary()
    proc = subprocess.run([binary, "-no-color", *map(str, WORKFLOWS)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    broken = tmp_path / "broken.yml"
    broken.write_text(WORKFLOWS[0].read_text().replace("runs-on: ubuntu-24.04", "runs-on: ubuntu-24.04\n    timeout-minutes: ${{ secrets.NOPE.x }}\n    stepz: []"))
    proc = subprocess.run([binary, "-no-color", str(broken)], capture_output=True, text=True)
    assert proc.returncode != 0 and "stepz" in proc.stdout

"""Integration tests beside tests/unit/build/test_elf.py (they start containers, compile, or run the real tools);
moved out of the unit tier. That file: The Go build ID read from a binary's first page (elf.go_build_id), which `compile.collect`
"""

from __future__ import annotations
import shutil
import subprocess
from pathlib import Path
import pytest
from scheduler_build.build import elf
from tests.unit.build.test_elf import (  # noqa: F401  shared with the unit tests: helpers and fixtures
    GO, _head,
)


@pytest.mark.parametrize("program", ["go", "gofmt"])
def test_the_id_is_the_one_go_tool_buildid_prints(program):
    path = Path(GO).resolve().parent / program
    printed = subprocess.run([GO, "tool", "buildid", str(path)], capture_output=True, text=True, check=True).stdout.strip()
    assert printed.count("/") >= 1
    assert elf.go_build_id(_head(path)) == printed

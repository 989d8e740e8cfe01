"""A test's tier is its directory: tests/conftest.py marks tests/integration/ integration,
tests/e2e/ e2e and tests/node/ node and e2e; tests/unit/ and anything else stay unmarked."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import REPO, tier_marks

TESTS = REPO / "tests"


def test_the_directory_decides_the_marks():
    assert tier_marks(TESTS / "integration" / "test_wheel.py") == ("integration",)
    assert tier_marks(TESTS / "e2e" / "test_deploy.py") == ("e2e",)
    assert tier_marks(TESTS / "node" / "test_node.py") == ("node", "e2e")
    # Negative controls: unit tests, files directly under tests/, files outside tests/, and a
    # tier's name deeper in the tree or in a file name give no mark.
    assert tier_marks(TESTS / "unit" / "build" / "test_compile.py") == ()
    assert tier_marks(TESTS / "unit" / "integration" / "test_x.py") == ()
    assert tier_marks(TESTS / "unit" / "test_integration.py") == ()
    assert tier_marks(TESTS / "conftest.py") == ()
    assert tier_marks(REPO / "bench" / "integration" / "test_x.py") == ()
    assert tier_marks(Path("/elsewhere/tests/integration/test_x.py")) == ()


def test_the_unit_selection_leaves_out_every_tier_directory():
    """Through real collection: files with no marker of their own are selected or not by their directory."""
    files = ["tests/integration/test_wheel.py", "tests/node/test_node.py", "tests/unit/test_pki.py"]

    def collected(expression: str) -> set[str]:
        out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                              "-m", expression, *files], cwd=REPO, capture_output=True, text=True)
        assert out.returncode in (0, 5), out.stdout[-3000:] + out.stderr[-3000:]
        return {line.split("::")[0] for line in out.stdout.splitlines() if "::" in line}

    assert collected("not integration and not e2e and not node") == {"tests/unit/test_pki.py"}
    assert collected("integration or node") == {"tests/integration/test_wheel.py", "tests/node/test_node.py"}

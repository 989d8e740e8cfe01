"""The version line of both console scripts: `scheduler-build 0.1.0 (commit abc1234, Python 3.11.7)`.

The commit comes from `_commit.txt`, written into the package when a wheel is built (setup.py),
else from git when the package runs from a checkout; "unknown" when neither says.
Standard library only: `--version` and the extender image import nothing else.
"""

from __future__ import annotations

import platform
import subprocess
from pathlib import Path

from scheduler_build import __version__

COMMIT_FILE = "_commit.txt"
_PACKAGE = Path(__file__).resolve().parent.parent  # setup.py stamps the commit at the package root


def commit() -> str:
    """The commit this package was built from (12 hex digits, `-dirty` when the checkout had changes)."""
    stamped = _PACKAGE / COMMIT_FILE
    if stamped.is_file():
        return stamped.read_text().strip() or "unknown"
    return git_commit(_PACKAGE) or "unknown"


def git_commit(where: Path) -> str:
    """`git describe`-like: HEAD's short hash, `-dirty` with uncommitted changes; "" outside a checkout."""
    try:
        head = subprocess.run(["git", "-C", str(where), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                              text=True, timeout=10)
        if head.returncode != 0:
            return ""
        dirty = subprocess.run(["git", "-C", str(where), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return head.stdout.strip() + ("-dirty" if dirty else "")


def version_line(program: str) -> str:
    return f"{program} {__version__} (commit {commit()}, Python {platform.python_version()})"

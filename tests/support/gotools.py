"""Third-party Go tools the tests run, built from the Go module proxy once per version and cached.

Like cosign (scheduler_build/publish/cosign.py): `go install` into a staging
directory beside the target, then one rename, so a killed build leaves no binary
that looks finished. The cache key is the module version, in the directory name.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from scheduler_build import gotool, settings


def go_tool(module: str, version: str, command: str, timeout: float = 3600) -> Path:
    """<cache>/tools/<command>-<version>/<command>, built from `module` at `version` on first use."""
    target = settings.cache_dir() / "tools" / f"{command}-{version}" / command
    if target.is_file() and os.access(target, os.X_OK):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".gobin-", dir=target.parent))
    try:
        proc = subprocess.run([gotool.binary(), "install", "-trimpath", f"{module}@{version}"],
                              env=gotool.environment(GOBIN=str(staging), CGO_ENABLED="0"), cwd=tempfile.gettempdir(),
                              capture_output=True, text=True, timeout=timeout)
        assert proc.returncode == 0, f"go install {module}@{version} failed:\n{proc.stderr[-3000:]}"
        os.replace(staging / command, target)
    finally:
        for leftover in staging.glob("*"):
            leftover.unlink()
        staging.rmdir()
    return target

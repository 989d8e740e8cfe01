"""The independent judges of the SBOMs and the provenance, built once per cache key and cached.

- cyclonedx-gomod (the CycloneDX Go generator), `go install`ed from the Go module
  proxy at a pinned version: the key is the version.
- intoto-validate (tests/judges/intoto: a dozen lines around the in-toto attestation
  framework's own Go bindings, `Statement.Validate` and `Provenance.Validate`), built
  from its go.mod/go.sum with dependencies from the proxy: the key is the hash of its
  sources.

Both land in <cache>/tools/<name>-<key>/ like cosign: built into a staging directory
beside the target, then one rename, so a killed build leaves nothing that looks
finished and concurrent sessions at worst build twice.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from scheduler_build import gotool, settings

CYCLONEDX_GOMOD = "github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod"
CYCLONEDX_GOMOD_VERSION = "v1.10.0"
INTOTO_DIR = Path(__file__).resolve().parent.parent / "judges" / "intoto"


def _cached(name: str, key: str, args: list[str], cwd: Path) -> Path:
    """<cache>/tools/<name>-<key>/<name>: `go ARGS` writes it once (into $GOBIN, or `{out}` in ARGS)."""
    target = settings.cache_dir() / "tools" / f"{name}-{key}" / name
    if target.is_file() and os.access(target, os.X_OK):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".gobin-", dir=target.parent))
    try:
        env = gotool.environment(GOBIN=str(staging), CGO_ENABLED="0")
        proc = subprocess.run([gotool.binary(), *(a.replace("{out}", str(staging / name)) for a in args)],
                              env=env, cwd=cwd, capture_output=True, text=True, timeout=3600)
        assert proc.returncode == 0, f"go {' '.join(args)} failed:\n{proc.stderr[-3000:]}"
        os.replace(staging / name, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def go_environment() -> dict[str, str]:
    """For tools that run `go` themselves (cyclonedx-gomod runs `go version -m`): the toolkit's Go first on PATH."""
    env = gotool.environment()
    env["PATH"] = os.pathsep.join([os.path.dirname(gotool.binary()), env.get("PATH", "")])
    return env


def cyclonedx_gomod() -> Path:
    return _cached("cyclonedx-gomod", CYCLONEDX_GOMOD_VERSION,
                   ["install", "-trimpath", f"{CYCLONEDX_GOMOD}@{CYCLONEDX_GOMOD_VERSION}"], Path(tempfile.gettempdir()))


def intoto_validate() -> Path:
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum", "main.go"):
        digest.update(name.encode() + b"\0" + (INTOTO_DIR / name).read_bytes())
    return _cached("intoto-validate", digest.hexdigest()[:16], ["build", "-trimpath", "-o", "{out}", "."], INTOTO_DIR)

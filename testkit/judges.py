"""The independent judges of the SBOMs and the provenance, built once per cache key and cached.

- cyclonedx-gomod (the CycloneDX Go generator), `go install`ed from the Go module
  proxy at a pinned version: the key is the version.
- intoto-validate (testkit/judges/intoto: a dozen lines around the in-toto attestation
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
import subprocess
from pathlib import Path

from scheduler_build import settings
from scheduler_build.golang import gotool
from scheduler_build.filelock import turn

CYCLONEDX_GOMOD = "github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod"
CYCLONEDX_GOMOD_VERSION = "v1.10.0"
INTOTO_DIR = Path(__file__).resolve().parent / "judges" / "intoto"


def go_environment() -> dict[str, str]:
    """For tools that run `go` themselves (cyclonedx-gomod runs `go version -m`): the toolkit's Go first on PATH."""
    env = gotool.environment()
    env["PATH"] = os.pathsep.join([os.path.dirname(gotool.binary()), env.get("PATH", "")])
    return env


def cyclonedx_gomod() -> Path:
    return gotool.installed_tool(settings.cache_dir(), "cyclonedx-gomod", CYCLONEDX_GOMOD, CYCLONEDX_GOMOD_VERSION)


def intoto_validate() -> Path:
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum", "main.go"):
        digest.update(name.encode() + b"\0" + (INTOTO_DIR / name).read_bytes())
    return built_tool(settings.cache_dir(), "intoto-validate", digest.hexdigest()[:16], INTOTO_DIR)


def built_tool(cache_dir: Path, name: str, key: str, source_dir: Path) -> Path:
    """A Go main package in a local directory (a test's judge), built once into <cache>/tools/<name>-<key>/<name>;
    `key` must change whenever its sources do. Written beside the target, then renamed: a killed build leaves
    nothing that looks finished. (Only tests build local tools, so this lives here, not in the product.)"""
    target = Path(cache_dir) / "tools" / f"{name}-{key}" / name
    if target.is_file() and os.access(target, os.X_OK):
        return target
    with turn(target.parent / ".lock", f"building {name}"):  # a concurrent build of it goes first
        if target.is_file() and os.access(target, os.X_OK):
            return target
        staging = target.with_name(f".{name}.{os.getpid()}.tmp")
        try:
            subprocess.run([gotool.binary(), "build", "-trimpath", "-o", str(staging), "."], cwd=source_dir,
                           check=True, env=gotool.environment(CGO_ENABLED="0"))
            os.replace(staging, target)
        finally:
            staging.unlink(missing_ok=True)
    return target

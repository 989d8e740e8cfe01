"""cosign, the one signing tool: built from the Go module proxy (pinned), cached, run offline.

The binary is `go install`ed once into <cache>/tools/cosign-<version>/ with the
host's Go (gotool.py), like the project's other Go tools. Every run is offline but
for the target registry: no transparency log upload, no TUF signing config, and
verification ignores the tlog (a key pair, no certificate authority).

Secrets: the key's password goes to cosign as COSIGN_PASSWORD in its environment
only; cosign's output is captured, and any occurrence of the password or of a
key's PEM text is redacted before a line reaches the log or an error message.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from scheduler_build.golang import gotool
from scheduler_build.errors import UserError

MODULE = "github.com/sigstore/cosign/v3"
VERSION = "v3.1.3"
PASSWORD_ENV = "COSIGN_PASSWORD"
# Sign and attest without any Sigstore service: no Rekor upload, no TUF-provided signing config.
OFFLINE_SIGN = ["--tlog-upload=false", "--use-signing-config=false", "--yes"]
OFFLINE_VERIFY = ["--insecure-ignore-tlog=true"]
_NOISE = ("WARNING: Skipping tlog verification", "Flag --tlog-upload has been deprecated")


def tool_dir(cache_dir: Path) -> Path:
    return Path(cache_dir) / "tools" / f"cosign-{VERSION}"


def binary(cache_dir: Path) -> Path:
    """The pinned cosign, built on first use (a few minutes cold) and cached by version."""
    return gotool.installed_tool(cache_dir, "cosign", f"{MODULE}/cmd/cosign", VERSION)


@dataclass
class Cosign:
    """Runs the cached cosign with the password in its environment and secrets redacted from its output."""

    path: Path
    password: str
    inherited: dict[str, str]  # the environment cosign starts from (decided with the password: inputs/publish)
    registry_env: dict[str, str] | None = None  # e.g. DOCKER_CONFIG for registry credentials

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in self.inherited.items() if k != PASSWORD_ENV}
        env.update(self.registry_env or {})
        env[PASSWORD_ENV] = self.password
        env.setdefault("SIGSTORE_NO_CACHE", "true")
        return env

    def redact(self, text: str) -> str:
        secrets = [self.password] if len(self.password) >= 4 else []
        secrets += [v for k, v in self.inherited.items() if k.startswith("COSIGN_KEY") and v]
        for secret in secrets:
            text = text.replace(secret, "<redacted>")
        return text

    def run(self, args: list[str], what: str, check: bool = True) -> subprocess.CompletedProcess:
        """`cosign ARGS`; a failure is one UserError naming `what` with cosign's last meaningful line."""
        proc = subprocess.run([str(self.path), *args], env=self.environment(), capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=900)
        proc = subprocess.CompletedProcess(proc.args, proc.returncode, self.redact(proc.stdout), self.redact(proc.stderr))
        if check and proc.returncode != 0:
            raise UserError(f"{what} failed: {self.last_line(proc)}", "cosign's message is above")
        return proc

    @staticmethod
    def last_line(proc: subprocess.CompletedProcess) -> str:
        lines = [line.strip() for line in proc.stderr.splitlines() if line.strip() and not line.startswith(_NOISE)]
        return lines[-1] if lines else f"exit code {proc.returncode}"

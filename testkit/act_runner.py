"""Run a GitHub workflow of ci/github/ under act (github.com/nektos/act), jobs on this host.

act is the runner: it plans the jobs, expands the matrix (fromJSON included), orders
`needs`, passes job outputs, evaluates expressions, masks secrets, serves artifacts
(its own artifact server) and runs each job in a fresh workspace. Stood in, because
nothing here reaches github.com, and said where:

- the marketplace actions: testkit/actions/ through `--local-repository`
  (see the README there);
- the runner image's `sudo`: testkit/runner-bin/sudo (the tests run as root);
- the repository on github.com: a local clone (`origin`), which the checkout stand-in
  fetches from.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from scheduler_build import settings
from scheduler_build.golang import gotool


ACT_MODULE, ACT_VERSION = "github.com/nektos/act", "v0.2.89"
SUPPORT = Path(__file__).resolve().parent
ACTIONS = SUPPORT / "actions"
STAND_INS = {"actions/checkout@v4": "checkout", "actions/setup-python@v5": "setup-python",
             "actions/setup-go@v5": "setup-go", "actions/cache@v4": "cache",
             "actions/upload-artifact@v4": "upload-artifact", "actions/download-artifact@v4": "download-artifact"}
# The test process's own settings must not leak into the jobs (act hands its environment to host jobs).
PRIVATE_ENV = ("PYTHONPATH", "PYTEST_ADDOPTS", "XDG_CACHE_HOME", "GOCACHE", "GOMODCACHE", "SCHEDULER_BUILD_", "INVOKE_",
               "COSIGN_", "DOCKER_CONFIG")


def act_binary() -> Path:
    """act, built from the Go module proxy once per version into the toolkit's tool cache."""
    return gotool.installed_tool(settings.cache_dir(), "act", ACT_MODULE, ACT_VERSION)


def free_port() -> int:
    # act takes a port number, not a listening socket: the port is free when chosen (a small window).
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Act:
    origin: Path  # the clone act runs in and the checkout stand-in fetches from
    work: Path  # act's action cache, host workspaces, artifacts and the cache stand-in's store
    env: dict[str, str] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)
    variables: dict[str, str] = field(default_factory=dict)

    def argv(self, event: str, workflow: Path, event_file: Path, job: str | None) -> list[str]:
        argv = [str(act_binary()), event, "-C", str(self.origin), "-W", str(workflow), "-e", str(event_file),
                "-P", "ubuntu-24.04=-self-hosted", "--no-skip-checkout", "--no-cache-server", "--action-offline-mode",
                "--action-cache-path", str(self.work / "act-cache"),
                "--artifact-server-path", str(self.work / "artifacts"), "--artifact-server-addr", "127.0.0.1",
                "--artifact-server-port", str(free_port())]
        argv += [a for ref, name in STAND_INS.items() for a in ("--local-repository", f"{ref}={ACTIONS / name}")]
        env = {"STANDIN_ACTIONS": str(ACTIONS), "STANDIN_ORIGIN": str(self.origin),
               "STANDIN_CACHE_STORE": str(self.work / "cache-store"), **self.env}
        argv += [a for k, v in env.items() for a in ("--env", f"{k}={v}")]
        argv += [a for k, v in self.secrets.items() for a in ("--secret", f"{k}={v}")]
        argv += [a for k, v in self.variables.items() for a in ("--var", f"{k}={v}")]
        return argv + (["-j", job] if job else [])

    def run(self, event: str, workflow: Path, payload: dict, job: str | None = None,
            timeout: float = 3600) -> subprocess.CompletedProcess:
        """Run the workflow's jobs for `event` (only `job` and the jobs it needs, when given)."""
        event_file = self.work / f"{event}.json"
        event_file.write_text(json.dumps(payload))
        env = {k: v for k, v in os.environ.items() if not k.startswith(PRIVATE_ENV)}
        env["PATH"] = f"{SUPPORT / 'runner-bin'}:{env['PATH']}"
        return subprocess.run(self.argv(event, workflow, event_file, job), cwd=self.origin, env=env, capture_output=True,
                              text=True, timeout=timeout)


def seed_warm_cache(store: Path, key: str, links: dict[str, Path]) -> None:
    """A cache entry whose directories are links to this machine's warm caches (what a runner's
    restored cache would hold, without copying gigabytes)."""
    entry = store / key
    entry.mkdir(parents=True, exist_ok=True)
    for name, target in links.items():
        if not (entry / name).is_symlink():
            (entry / name).symlink_to(target)

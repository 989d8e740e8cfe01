"""The Drone exec release pipeline's step commands, run in order the way its runner would.

(The GitHub workflows run under a real runner, act: tests/integration/test_github_act.py; the
Drone docker pipelines under a docker-runner stand-in: tests/integration/test_drone_docker.py.)

A fresh clone of this checkout (the committed tree, as a runner checks out), a
real registry on 127.0.0.1 in place of the production one, a throwaway cosign key
pair in the secrets, the real cosign. What the runner provides is stood in for:

- Drone (exec runner): each step's `commands` run as one `sh -e` script with the
  step's `environment` (`from_secret` filled from the test's secrets), steps in
  file order (which honours `depends_on`).

Skipped as well, and why: `bash ci/setup.sh` (this machine is set up; in a clone it
would reinstall the package from the clone), the cache wiring steps, and the cache
locations in the environment (the runner host's /var/cache; the test keeps this
machine's warm caches).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from testkit.registry_server import Registry

pytestmark = pytest.mark.pipelines  # inv test runs these last (tasks.py TIERS)

REPO = Path(__file__).resolve().parents[2]
PASSWORD = "pipeline-pw-2c9f41aa"
CACHE_VARS = {"XDG_CACHE_HOME", "GOMODCACHE", "GOCACHE", "GOCACHE_VOLUME_DIR"}


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    path = tmp_path_factory.mktemp("release-checkout") / "src"
    subprocess.run(["git", "clone", "-q", str(REPO), str(path)], check=True)
    return path


@pytest.fixture(scope="module")
def secrets(checkout, tmp_path_factory):
    keys = tmp_path_factory.mktemp("pipeline-keys")
    env = dict(os.environ, COSIGN_PASSWORD=PASSWORD)
    done = subprocess.run(["inv", "image.keygen", "--out", str(keys)], cwd=checkout, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    reg = Registry(tmp_path_factory.mktemp("pipeline-registry")).start()
    yield {"host": reg.host, "cosign_key": (keys / "cosign.key").read_text(), "cosign_pub": (keys / "cosign.pub").read_text(),
           "cosign_password": PASSWORD, "registry_username": "", "registry_password": ""}
    reg.stop()


def run_script(script: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SCHEDULER_BUILD_REGISTRY_", "COSIGN_"))}
    script = re.sub(r'sudo -E env "PATH=\$PATH" ', "", script)  # root already; sudo may be absent
    proc = subprocess.run(["sh", "-ec", script], cwd=cwd, env={**base, **env}, capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, f"step failed ({proc.returncode}):\n{script}\n{proc.stderr[-4000:]}"
    return proc


def test_drone_release_pipeline_steps_in_order(checkout, secrets):
    secrets = {**secrets, "registry_repository": f"{secrets['host']}/acme/drone-release"}
    release = [d for d in yaml.safe_load_all((checkout / "ci/drone.yml").read_text()) if d and d["name"] == "release"][0]
    ran = []
    for step in release["steps"]:
        commands = [c for c in step["commands"] if c != "bash ci/setup.sh"]
        if not commands:
            continue
        env = {k: (secrets[v["from_secret"]] if isinstance(v, dict) else str(v))
               for k, v in (step.get("environment") or {}).items() if k not in CACHE_VARS}
        proc = run_script("\n".join(commands), env, checkout)
        ran.append(step["name"])
    assert ran == ["build-amd64", "build-arm64", "image", "push", "verify"]
    assert (checkout / "pushed.txt").read_text().startswith(secrets["registry_repository"] + "@sha256:")
    assert "FAIL" not in proc.stdout and "ok provenance" in proc.stdout
